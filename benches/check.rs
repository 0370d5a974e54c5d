//! Check throughput and memory: a generated store of N conversations of the real suite
//! (answers taken from the scenarios' references, some with defects), then
//! - evaluation alone: every check of every completed conversation, answers in memory, on
//!   one thread and on one thread per core;
//! - end to end: `run_checks` on the store (stream conversations, evaluate, store results in
//!   batched transactions), then again with nothing left to do.
//!
//! Each size runs in its own process, so its peak memory (VmHWM, reset before each phase
//! through /proc/self/clear_refs) is its own. Run:
//!
//!     cargo bench --bench check                       # 25,000 and 100,000 conversations
//!     CHECK_BENCH_SIZES=10000 cargo bench --bench check
//!
//! Prints figures; asserts nothing (these machines are shared and noisy).

#[path = "support/memory.rs"]
mod memory;

use std::path::Path;
use std::time::Instant;

use memory::{peak_kb, reset_peak};

use turnbench::checks::{Answers, CheckOptions, CheckSet, run_checks};
use turnbench::config::Scenario;
use turnbench::store::inserts::{
    NewRun, NewTarget, insert_conversation, insert_run, upsert_scenario, upsert_target,
};
use turnbench::store::records::{ConversationRecord, TurnRecord, TurnResult};

/// Out of every 50 conversations: 40 answer with the references, 4 are stale (each turn
/// repeats the previous reference), 2 have a fenced final answer, 3 carry one of the
/// checks file's own defects, 1 fails at its third turn (not scored).
const MIX: u64 = 50;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Variant {
    Reference,
    Stale,
    Fenced,
    Defect(usize),
    Failed,
}

fn variant(i: u64) -> Variant {
    match i % MIX {
        0..40 => Variant::Reference,
        40..44 => Variant::Stale,
        44..46 => Variant::Fenced,
        46..49 => Variant::Defect((i / MIX) as usize),
        _ => Variant::Failed,
    }
}

struct Suite {
    scenarios: Vec<Scenario>,
    sets: Vec<CheckSet>,
}

impl Suite {
    fn load() -> Suite {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let scenarios = Scenario::load_dir(&root.join("scenarios")).unwrap();
        let sets = CheckSet::load_dir(&root.join("checks")).unwrap();
        assert_eq!(scenarios.len(), sets.len());
        Suite { scenarios, sets }
    }

    /// The answers of conversation `i`: its scenario and variant.
    fn answers(&self, i: u64) -> (usize, Vec<String>, bool) {
        let s = (i % self.scenarios.len() as u64) as usize;
        let references: Vec<String> = self.scenarios[s]
            .turns
            .iter()
            .map(|t| t.reference.clone().unwrap())
            .collect();
        let mut answers = references.clone();
        let mut completed = true;
        match variant(i / self.scenarios.len() as u64) {
            Variant::Reference => {}
            Variant::Stale => {
                let turns = answers.len();
                answers[1..].clone_from_slice(&references[..turns - 1]);
            }
            Variant::Fenced => {
                let last = answers.last_mut().unwrap();
                *last = format!("```json\n{last}\n```");
            }
            Variant::Defect(k) => {
                let defects = &self.sets[s].defects;
                if !defects.is_empty() {
                    defects[k % defects.len()].apply(&mut answers).unwrap();
                }
            }
            Variant::Failed => {
                answers.truncate(3);
                completed = false;
            }
        }
        (s, answers, completed)
    }
}

fn main() {
    match std::env::var("CHECK_BENCH_CHILD") {
        Ok(n) => child(n.parse().expect("a conversation count")),
        Err(_) => parent(),
    }
}

fn parent() {
    let sizes: Vec<u64> = std::env::var("CHECK_BENCH_SIZES")
        .unwrap_or_else(|_| "25000,100000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("sizes like 25000,100000"))
        .collect();
    let suite = Suite::load();
    let checks: usize = suite.sets.iter().map(|s| s.checks.len()).sum();
    println!(
        "check throughput: {} scenarios, {checks} checks; of every {MIX} conversations 40 reference, 4 stale, 2 fenced, 3 with a [[defect]], 1 failed",
        suite.scenarios.len()
    );
    println!(
        "{:>8}  {:<26} {:>9} {:>12} {:>14} {:>10}",
        "convs", "phase", "seconds", "results", "per second", "VmHWM MB"
    );
    let exe = std::env::current_exe().unwrap();
    for n in sizes {
        let status = std::process::Command::new(&exe)
            .env("CHECK_BENCH_CHILD", n.to_string())
            .status()
            .unwrap();
        assert!(status.success(), "child for {n} failed");
    }
}

fn child(n: u64) {
    let suite = Suite::load();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bench.db");

    let t = Instant::now();
    generate(&suite, &db, n);
    let size_mb = std::fs::metadata(&db).map_or(0, |m| m.len()) / 1_000_000;
    row(
        n,
        &format!("generate store ({size_mb} MB)"),
        t.elapsed().as_secs_f64(),
        n,
    );

    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    for threads in [1, cores] {
        reset_peak();
        let t = Instant::now();
        let evaluations = evaluate_in_memory(&suite, n, threads);
        row(
            n,
            &format!("evaluation alone, {threads} thr"),
            t.elapsed().as_secs_f64(),
            evaluations,
        );
    }

    reset_peak();
    let opts = CheckOptions::new(
        db.clone(),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("checks"),
    );
    let t = Instant::now();
    let report = run_checks(&opts).unwrap();
    let written = report.evaluated.total();
    row(n, "end to end: check", t.elapsed().as_secs_f64(), written);
    assert_eq!(report.conversations, n);

    reset_peak();
    let t = Instant::now();
    let again = run_checks(&opts).unwrap();
    assert_eq!(again.evaluated.total(), 0);
    row(
        n,
        "end to end: check again",
        t.elapsed().as_secs_f64(),
        again.already_current,
    );
}

fn row(n: u64, phase: &str, seconds: f64, results: u64) {
    println!(
        "{n:>8}  {phase:<26} {seconds:>9.2} {results:>12} {:>14.0} {:>10.1}",
        results as f64 / seconds,
        peak_kb() as f64 / 1000.0
    );
}

/// Writes `n` conversations in transactions of 1,000: conversation i is scenario i % 15,
/// target i / 15 % 3, repeat i / 45 + 1, so every collect slot is used once.
fn generate(suite: &Suite, db: &Path, n: u64) {
    let mut conn = turnbench::store::open(db).unwrap();
    let run = insert_run(
        &conn,
        &NewRun {
            name: "bench",
            source: "import",
            seed: None,
            settings_json: "{}",
            tokenizer: None,
        },
    )
    .unwrap();
    let targets: Vec<i64> = ["alpha", "beta", "gamma"]
        .iter()
        .map(|name| {
            upsert_target(
                &conn,
                &NewTarget {
                    provider: name,
                    model: "m",
                    label: "m",
                    host: None,
                    params_json: "{}",
                    prices_json: None,
                },
            )
            .unwrap()
        })
        .collect();
    let scenario_refs: Vec<i64> = suite
        .scenarios
        .iter()
        .map(|s| upsert_scenario(&conn, s).unwrap())
        .collect();
    let mut i = 0;
    while i < n {
        let tx = conn.transaction().unwrap();
        for _ in 0..1000.min(n - i) {
            let (s, answers, completed) = suite.answers(i);
            let turns = answers
                .into_iter()
                .enumerate()
                .map(|(t, answer)| {
                    let failed = !completed && t == 2;
                    TurnRecord {
                        result: TurnResult {
                            answer: (!failed).then_some(answer),
                            outcome: Some(if failed {
                                turnbench::outcome::TurnOutcome::Http5xx
                            } else {
                                turnbench::outcome::TurnOutcome::Ok
                            }),
                            e2e_ms: Some(100.0),
                            ..Default::default()
                        },
                        ..Default::default()
                    }
                })
                .collect();
            let record = ConversationRecord {
                uid: format!("bench-{i}"),
                run_id: run,
                target_id: targets[(i / 15 % 3) as usize],
                scenario: Some(suite.scenarios[s].id.clone()),
                scenario_ref: Some(scenario_refs[s]),
                repeat: (i / 45) as u32 + 1,
                outcome: if completed { "completed" } else { "http_5xx" }
                    .parse()
                    .expect("known outcome"),
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

/// Every check of every completed conversation, conversations split across `threads`.
/// Each distinct conversation's answers are built once up front, so this times the
/// checks, not the building.
fn evaluate_in_memory(suite: &Suite, n: u64, threads: usize) -> u64 {
    let period = suite.scenarios.len() as u64 * MIX * 8;
    let corpus: Vec<(usize, Vec<String>, bool)> =
        (0..period.min(n)).map(|i| suite.answers(i)).collect();
    let per_thread = n.div_ceil(threads as u64);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads as u64)
            .map(|t| {
                let corpus = &corpus;
                scope.spawn(move || {
                    let mut evaluations = 0u64;
                    let mut failures = 0u64;
                    for i in t * per_thread..((t + 1) * per_thread).min(n) {
                        let (s, answers, completed) = &corpus[(i % corpus.len() as u64) as usize];
                        if !completed {
                            continue;
                        }
                        let answers = Answers::new(answers.iter().map(|a| Some(a.as_str())));
                        for check in &suite.sets[*s].checks {
                            let (passed, _detail) = check.judge(&answers);
                            evaluations += 1;
                            failures += u64::from(passed != Some(true));
                        }
                    }
                    std::hint::black_box(failures);
                    evaluations
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}
