//! Judge orchestration overhead: how close `turnbench judge` comes to the ideal rate
//! against a judge whose every answer takes a fixed time.
//!
//! A store is filled with synthetic three-turn conversations, the mock judge answers each
//! request after exactly 200 ms, and the run judges them all at concurrency 32. The ideal
//! is 32 / 0.2 s = 160 judgments/s; the figure is the share of it reached, planning
//! (sampling, blinding, keys, order) excluded and reported apart.
//!
//! Run: `cargo bench --bench judge_throughput` (env: `JUDGMENTS` = 960, `LATENCY_MS` = 200,
//! `CONCURRENCY` = 32).

use std::time::Instant;

use turnbench::chat::Message;
use turnbench::config::{JudgeSettings, Rubric};
use turnbench::judge::{self, JudgeOptions, Mode};
use turnbench::mock::{MockConfig, MockServer, Profile};
use turnbench::store::inserts::{
    NewRun, NewTarget, insert_conversation, insert_run, upsert_target,
};
use turnbench::store::records::{ConversationRecord, TurnRecord, TurnResult};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn fill_store(path: &std::path::Path, conversations: usize) {
    let mut conn = turnbench::store::open(path).unwrap();
    let tx = conn.transaction().unwrap();
    let run = insert_run(
        &tx,
        &NewRun {
            name: "bench",
            source: "collect",
            seed: Some(1),
            settings_json: "{}",
            tokenizer: None,
        },
    )
    .unwrap();
    let targets: Vec<i64> = (0..4)
        .map(|i| {
            upsert_target(
                &tx,
                &NewTarget {
                    provider: &format!("provider-{i}"),
                    model: &format!("model-{i}"),
                    label: &format!("model-{i}"),
                    host: Some("127.0.0.1:9"),
                    params_json: "{}",
                    prices_json: None,
                },
            )
            .unwrap()
        })
        .collect();
    for n in 0..conversations {
        let turn = |i: usize| TurnRecord {
            result: TurnResult {
                answer: Some(format!(
                    "{{\"task\": {n}, \"step\": {i}, \"plan\": \"keep every constraint so far\"}}"
                )),
                e2e_ms: Some(120.0),
                ..Default::default()
            },
            prompt: vec![Message::new(
                "user",
                format!("Step {i} of task {n}: refine the plan, keep the budget, answer in JSON."),
            )],
            ..Default::default()
        };
        insert_conversation(
            &tx,
            &ConversationRecord {
                uid: format!("bench-{n}"),
                run_id: run,
                target_id: targets[n % targets.len()],
                scenario: Some(format!("scenario-{}", n / targets.len())),
                scenario_ref: None,
                repeat: 1,
                outcome: turnbench::outcome::ConversationOutcome::Completed,
                started_at: None,
                ended_at: None,
                turns: (0..3).map(turn).collect(),
                attempts: vec![],
                trailing: vec![],
            },
        )
        .unwrap();
    }
    tx.commit().unwrap();
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = p * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

#[tokio::main]
async fn main() {
    // `cargo bench` passes --bench; `cargo test --all-targets` does not: then a quick smoke
    // run checks that the benchmark works, and its figures mean nothing.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let judgments: usize = env_or("JUDGMENTS", if smoke { 64 } else { 960 });
    let latency_ms: f64 = env_or("LATENCY_MS", if smoke { 20.0 } else { 200.0 });
    let concurrency: usize = env_or("CONCURRENCY", 32);

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bench.db");
    fill_store(&db, judgments);

    let mut profile = Profile::quick("mock-judge", latency_ms, 0.0);
    profile.judge = Some(Default::default());
    let mock = MockServer::start(
        MockConfig {
            seed: 1,
            profiles: vec![profile],
            time_scale: 1.0,
        },
        &[],
        "127.0.0.1:0".parse().unwrap(),
        None,
    )
    .await
    .unwrap();

    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let settings_path = dir.path().join("judge.toml");
    std::fs::write(
        &settings_path,
        format!(
            "base_url = \"{}\"\nmodel = \"mock-judge\"\ntemplate = \"{}\"\nsample = \"all\"\nconcurrency = {concurrency}\n[retry]\nattempts = 1\n",
            mock.base_url(),
            root.join("judges/prompt.md").display()
        ),
    )
    .unwrap();
    let settings = JudgeSettings::load(&settings_path).unwrap();
    let rubric = Rubric::load(&root.join("rubrics/multiturn-quality.toml")).unwrap();

    let plan_started = Instant::now();
    {
        let conn = turnbench::store::open(&db).unwrap();
        let plan = judge::plan(&conn, &settings, &rubric, &[], &Default::default()).unwrap();
        assert_eq!(plan.items.len(), judgments);
    }
    let planning = plan_started.elapsed();

    let opts = JudgeOptions {
        db: db.clone(),
        settings,
        rubric,
        bench_targets: Vec::new(),
        mode: Mode::Judge,
        quiet: true,
        selection: Default::default(),
        mock_url: None,
        stage: None,
    };
    let (_tx, rx) = tokio::sync::mpsc::channel(1);
    let (report, _) = judge::judge(&opts, rx).await.unwrap();
    assert_eq!(report.launched, judgments);
    assert_eq!(
        report.count(turnbench::store::judgments::JudgmentStatus::Ok) as usize,
        judgments
    );

    let conn = turnbench::store::open(&db).unwrap();
    let mut latencies: Vec<f64> = conn
        .prepare("SELECT latency_ms FROM judgments")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    latencies.sort_by(f64::total_cmp);

    let secs = report.elapsed.as_secs_f64();
    let rate = judgments as f64 / secs;
    let ideal = concurrency as f64 / (latency_ms / 1000.0);
    if smoke {
        println!("judge_throughput smoke run (use `cargo bench` for figures)");
    }
    println!(
        "judge orchestration: {judgments} judgments, mock judge latency {latency_ms} ms, concurrency {concurrency}"
    );
    println!("  calls wall time        {secs:.3} s (store writes included)");
    println!("  judgments per second   {rate:.1}");
    println!(
        "  ideal {concurrency} / {:.3} s       {ideal:.1}",
        latency_ms / 1000.0
    );
    println!(
        "  share of ideal         {:.1} %  (goal >= 95 %)",
        100.0 * rate / ideal
    );
    println!(
        "  per-judgment latency   p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies[latencies.len() - 1]
    );
    println!(
        "  planning               {:.3} s (sample, blind, key, order {judgments} conversations; not in the rate)",
        planning.as_secs_f64()
    );
}
