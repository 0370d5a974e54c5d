//! Report time and memory: a generated store of 250,000 conversations / 1,000,000 turns
//! (six provider × model cells, timings, usage, cached tokens, prices), checked with the
//! real suite (`run_checks`) and judged (one simulated judgment per tenth conversation),
//! then `report` built and written in every format, each in its own process so its peak
//! memory (VmHWM) is its own. Run:
//!
//!     cargo bench --bench report
//!     REPORT_BENCH_CONVERSATIONS=50000 cargo bench --bench report
//!     REPORT_BENCH_STORE=/tmp/report-bench.db cargo bench --bench report   # keep the store
//!
//! Goal (issue 9): ≤ 3 s and ≤ 300 MB per format on 2 cores. Prints figures; asserts
//! nothing (these machines are shared and noisy).

#[path = "support/memory.rs"]
mod memory;
#[path = "../tests/support/synthetic.rs"]
mod synthetic;

use std::path::{Path, PathBuf};
use std::time::Instant;

use memory::peak_kb;
use synthetic::Rng;

use turnbench::checks::{CheckOptions, run_checks};
use turnbench::config::Scenario;
use turnbench::export::{FormatOptions, REPORT_FORMATS, find};
use turnbench::outcome::{ConversationOutcome, TurnOutcome};
use turnbench::report::{ReportOptions, build, load};
use turnbench::store::inserts::{
    NewRun, NewTarget, insert_conversation, insert_run, upsert_scenario, upsert_target,
};
use turnbench::store::records::{ConversationRecord, TurnRecord, TurnResult, Usage};

const TURNS: usize = 4;
const CELLS: [(&str, &str, f64); 6] = [
    ("acme", "glm-5.3", 1.0),
    ("nimbus", "glm-5.3", 1.2),
    ("orbit", "glm-5.3", 1.45),
    ("acme", "qwen3-32b", 0.8),
    ("nimbus", "qwen3-32b", 0.9),
    ("orbit", "qwen3-32b", 1.1),
];

fn main() {
    match std::env::var("REPORT_BENCH_FORMAT") {
        Ok(format) => child(&format),
        Err(_) => parent(),
    }
}

fn store_path() -> (Option<tempfile::TempDir>, PathBuf) {
    match std::env::var("REPORT_BENCH_STORE") {
        Ok(p) => (None, PathBuf::from(p)),
        Err(_) => {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("report-bench.db");
            (Some(dir), p)
        }
    }
}

fn parent() {
    let n: u64 = std::env::var("REPORT_BENCH_CONVERSATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(250_000);
    let (_keep, db) = store_path();
    if !db.exists() {
        let t = Instant::now();
        generate(&db, n);
        println!(
            "generated {n} conversations / {} turns in {:.1} s",
            n * TURNS as u64,
            t.elapsed().as_secs_f64()
        );
        let t = Instant::now();
        let mut opts = CheckOptions::new(
            db.clone(),
            Path::new(env!("CARGO_MANIFEST_DIR")).join("checks"),
        );
        opts.scenarios_dir = None;
        let checked = run_checks(&opts).unwrap();
        println!(
            "checked: {} results in {:.1} s",
            checked.evaluated.total(),
            t.elapsed().as_secs_f64()
        );
        judge(&db, n);
    }
    let size_mb = std::fs::metadata(&db).map_or(0, |m| m.len()) / 1_000_000;
    println!("store {} ({size_mb} MB)", db.display());
    println!(
        "{:<9} {:>9} {:>9} {:>10} {:>12}",
        "format", "build s", "write s", "total s", "VmHWM MB"
    );
    let exe = std::env::current_exe().unwrap();
    for e in REPORT_FORMATS {
        let status = std::process::Command::new(&exe)
            .env("REPORT_BENCH_FORMAT", e.name)
            .env("REPORT_BENCH_STORE", &db)
            .status()
            .unwrap();
        assert!(status.success(), "{} failed", e.name);
    }
}

fn child(format: &str) {
    let db = PathBuf::from(std::env::var("REPORT_BENCH_STORE").unwrap());
    let exporter = find(REPORT_FORMATS, format).unwrap();
    let t = Instant::now();
    let opts = ReportOptions {
        with_conversations: format == "json",
        ..ReportOptions::default()
    };
    let report = build(load(&db, &opts).unwrap(), &opts);
    let built = t.elapsed().as_secs_f64();
    let out = tempfile::NamedTempFile::new().unwrap();
    let t2 = Instant::now();
    turnbench::export::write_file(exporter, &report, &FormatOptions::default(), out.path())
        .unwrap();
    let written = t2.elapsed().as_secs_f64();
    println!(
        "{format:<9} {built:>9.2} {written:>9.2} {:>10.2} {:>12.1}",
        t.elapsed().as_secs_f64(),
        peak_kb() as f64 / 1000.0
    );
}

/// Conversation i: cell i % 6, scenario i / 6 % 15, repeat i / 90 + 1; every 40th fails
/// at its third turn, every 200th is truncated; answers are the scenario's references.
fn generate(db: &Path, n: u64) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scenarios = Scenario::load_dir(&root.join("scenarios")).unwrap();
    let mut conn = turnbench::store::open(db).unwrap();
    let run = insert_run(
        &conn,
        &NewRun {
            name: "report-bench",
            source: "collect",
            seed: Some(1),
            settings_json: "{}",
            tokenizer: None,
        },
    )
    .unwrap();
    let targets: Vec<i64> = CELLS
        .iter()
        .map(|(provider, model, _)| {
            upsert_target(
                &conn,
                &NewTarget {
                    provider,
                    model,
                    label: model,
                    host: Some("bench.example"),
                    params_json: "{}",
                    prices_json: Some(r#"{"input":0.5,"cached":0.1,"output":2.0}"#),
                },
            )
            .unwrap()
        })
        .collect();
    let refs: Vec<i64> = scenarios
        .iter()
        .map(|s| upsert_scenario(&conn, s).unwrap())
        .collect();
    let mut rng = Rng::new(7);
    let mut i = 0;
    while i < n {
        let tx = conn.transaction().unwrap();
        for _ in 0..2000.min(n - i) {
            let cell = (i % CELLS.len() as u64) as usize;
            let s = (i / CELLS.len() as u64 % scenarios.len() as u64) as usize;
            let slow = CELLS[cell].2;
            let failed = i % 40 == 39;
            let truncated = i % 200 == 7;
            let mut turns = Vec::with_capacity(TURNS);
            for t in 0..TURNS {
                let ttft = slow * (150.0 + 250.0 * rng.unit().powi(3));
                let e2e = ttft + slow * (600.0 + 2500.0 * rng.unit().powi(2));
                let outcome = if failed && t == 2 {
                    TurnOutcome::StreamCut
                } else if truncated && t == TURNS - 1 {
                    TurnOutcome::Truncated
                } else {
                    TurnOutcome::Ok
                };
                let prompt = 400 + 350 * t as i64;
                turns.push(TurnRecord {
                    result: TurnResult {
                        answer: scenarios[s].turns[t].reference.clone(),
                        finish_reason: Some(
                            if outcome == TurnOutcome::Truncated {
                                "length"
                            } else {
                                "stop"
                            }
                            .into(),
                        ),
                        http_status: Some(200),
                        outcome: Some(outcome),
                        attempts: 1,
                        ttft_ms: Some(ttft),
                        ttfa_ms: Some(ttft + 20.0),
                        e2e_ms: Some(e2e),
                        usage: Usage {
                            prompt_tokens: Some(prompt),
                            completion_tokens: Some(180 + (rng.next() % 200) as i64),
                            cached_tokens: (t > 0).then_some(prompt - 300),
                            reasoning_tokens: None,
                        },
                        ..Default::default()
                    },
                    visible_tokens: Some(170),
                    ..Default::default()
                });
                if failed && t == 2 {
                    break;
                }
            }
            let outcome = ConversationOutcome::from_turns(
                &turns
                    .iter()
                    .map(|t| (t.outcome(), t.has_visible_text()))
                    .collect::<Vec<_>>(),
            );
            let record = ConversationRecord {
                uid: format!("rb-{i}"),
                run_id: run,
                target_id: targets[cell],
                scenario: Some(scenarios[s].id.clone()),
                scenario_ref: Some(refs[s]),
                repeat: (i / (CELLS.len() * scenarios.len()) as u64) as u32 + 1,
                outcome,
                started_at: None,
                ended_at: None,
                turns,
                attempts: vec![],
                trailing: vec![],
            };
            insert_conversation(&tx, &record).unwrap();
            i += 1;
        }
        tx.commit().unwrap();
    }
}

/// One simulated judgment per tenth completed conversation, written straight to the table.
fn judge(db: &Path, n: u64) {
    let mut conn = turnbench::store::open(db).unwrap();
    let tx = conn.transaction().unwrap();
    tx.execute_batch(
        "INSERT INTO rubrics (id, rubric_id, version, hash, title, content)
           VALUES (1, 'multiturn-quality', 1, 'h', 'q', '{}');
         INSERT INTO judges (id, judge_id, model, host, simulated, settings, template, hash)
           VALUES (1, 'mock', 'mock-judge', 'builtin-mock', 1, '{}', 't', 'jh');",
    )
    .unwrap();
    let mut rng = Rng::new(11);
    let mut stmt = tx
        .prepare(
            "INSERT INTO judgments (key, conversation_id, rubric_ref, judge_ref, rubric_id,
                 rubric_version, judge_id, replicate, label, status, scores, completed, asks,
                 attempts, simulated, invocation, seq, created_at)
             SELECT ?1, id, 1, 1, 'multiturn-quality', 1, 'mock', 1, 'A', 'ok', ?2, 1, 1, 1, 1,
                    'bench', 0, 'now'
             FROM conversations WHERE uid = ?3 AND outcome = 'completed'",
        )
        .unwrap();
    let mut written = 0;
    for i in (0..n).step_by(10) {
        let mut score = || 1 + rng.next() % 5;
        let scores = format!(
            r#"{{"correctness":{},"state_tracking":{},"correction_handling":{},"final_answer_usability":{},"task_completion":{}}}"#,
            score(),
            score(),
            score(),
            score(),
            score()
        );
        written += stmt
            .execute(rusqlite::params![
                format!("k{i}"),
                scores,
                format!("rb-{i}")
            ])
            .unwrap();
    }
    drop(stmt);
    tx.commit().unwrap();
    println!("judged: {written} simulated judgments");
}
