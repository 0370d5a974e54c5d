//! `turnbench label import` through the binary: human labels stored as judgments of
//! `human:<rater>`, checked against the rubric, refused by file:line, idempotent, never
//! shown to a judge; and the report's agreement of a judge (the mock judge, graded against
//! the scenario's references, on 127.0.0.1) with them.

use std::path::{Path, PathBuf};
use std::process::Output;

use rusqlite::Connection;
use serde_json::{Value, json};
use turnbench::config::Scenario;
use turnbench::mock::{MockConfig, MockServer};

use crate::common::{judge_toml, turnbench_quiet};

const SCENARIO: &str = r#"
id = "plan-trip"
category = "business"
[[turn]]
user = "Plan a two-day trip to Lisbon for two adults on a 600 EUR budget."
reference = "Day 1: Alfama and the castle. Day 2: Belem. Budget: 540 EUR."
[[turn]]
user = "Correction: the budget is 450 EUR, and we arrive on day 1 at noon. Reply in JSON."
reference = "{\"day1\": \"Alfama (afternoon)\", \"day2\": \"Belem\", \"budget_eur\": 440}"
"#;

const PROFILES: &str = r#"
seed = 11

[[profile]]
model = "mock-judge"
ttft_ms = { dist = "fixed", ms = 1 }
gap_ms = { dist = "fixed", ms = 0 }
"#;

/// A rater name and a note that must never reach a judge.
const RATER: &str = "rater-zq7";
const NOTE: &str = "HUMAN-NOTE-zq7: the budget is off";

const RUBRIC: &str = "multiturn-quality@1";

/// Answers of four qualities to the scenario's two turns: the references, the first right
/// and the second stale, both vague, both wrong.
const ANSWERS: [(&str, &str); 4] = [
    (
        "Day 1: Alfama and the castle. Day 2: Belem. Budget: 540 EUR.",
        "{\"day1\": \"Alfama (afternoon)\", \"day2\": \"Belem\", \"budget_eur\": 440}",
    ),
    (
        "Day 1: Alfama and the castle. Day 2: Belem. Budget: 540 EUR.",
        "Day 1: Alfama. Day 2: Belem. Budget: 540 EUR.",
    ),
    (
        "Lisbon is nice, see some sights.",
        "Some places, some budget.",
    ),
    ("I cannot help with travel.", "No."),
];

struct Fixture {
    dir: tempfile::TempDir,
    db: PathBuf,
    log: PathBuf,
    mock: Option<MockServer>,
}

impl Fixture {
    /// A store with 16 imported conversations of the scenario (ids c1..c16, four of each
    /// quality over two providers); with `judge`, a mock judge server logging its requests.
    async fn new(judge: bool) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let scenarios = dir.path().join("scenarios");
        std::fs::create_dir(&scenarios).unwrap();
        std::fs::write(scenarios.join("plan-trip.toml"), SCENARIO).unwrap();
        let log = dir.path().join("requests.jsonl");
        let mock = if judge {
            let profiles = dir.path().join("profiles.toml");
            std::fs::write(&profiles, PROFILES).unwrap();
            Some(
                MockServer::start(
                    MockConfig::load(&profiles).unwrap(),
                    &Scenario::load_dir(&scenarios).unwrap(),
                    "127.0.0.1:0".parse().unwrap(),
                    Some(&log),
                )
                .await
                .unwrap(),
            )
        } else {
            None
        };
        let lines: Vec<String> = (1..=16)
            .map(|i| {
                let (a1, a2) = ANSWERS[i % 4];
                json!({
                    "id": format!("c{i}"),
                    "provider": if i % 2 == 0 { "acme" } else { "zeta" },
                    "model": "m",
                    "scenario": "plan-trip",
                    "repeat": i,
                    "outcome": "completed",
                    "messages": [
                        {"role": "user", "content": "Plan a two-day trip to Lisbon for two adults on a 600 EUR budget."},
                        {"role": "assistant", "content": a1},
                        {"role": "user", "content": "Correction: the budget is 450 EUR, and we arrive on day 1 at noon. Reply in JSON."},
                        {"role": "assistant", "content": a2},
                    ]
                })
                .to_string()
            })
            .collect();
        std::fs::write(dir.path().join("t.jsonl"), lines.join("\n")).unwrap();
        let fx = Fixture {
            db: dir.path().join("t.db"),
            dir,
            log,
            mock,
        };
        let out = fx.run(&["import", "t.jsonl"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        fx
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    async fn run(&self, args: &[&str]) -> Output {
        turnbench_quiet(self.dir.path(), &self.db, args).await
    }

    /// `turnbench label import NAME` after writing `lines` to NAME.
    async fn label(&self, name: &str, lines: &[String]) -> Output {
        std::fs::write(self.path(name), lines.join("\n") + "\n").unwrap();
        self.run(&["label", "import", name]).await
    }

    async fn judge(&self, more: &[&str]) -> Output {
        let mock = self.mock.as_ref().unwrap();
        let body = "system = \"You are an impartial evaluator.\"\nconcurrency = 4\ntimeout_s = 10\nreasks = 2\n[retry]\nattempts = 3\nbackoff_ms = 1\nmax_wait_ms = 20\n";
        let judge = self.path("mock-judge.toml");
        std::fs::write(&judge, judge_toml(&mock.base_url(), "mock-judge", body)).unwrap();
        let rubric = Path::new(env!("CARGO_MANIFEST_DIR")).join("rubrics/multiturn-quality.toml");
        let mut args = vec![
            "judge",
            "--judge",
            judge.to_str().unwrap(),
            "--rubric",
            rubric.to_str().unwrap(),
            "--sample",
            "all",
        ];
        args.extend_from_slice(more);
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        self.run(&refs).await
    }

    async fn report(&self) -> Value {
        let out = self.run(&["report", "--format", "json"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn conn(&self) -> Connection {
        Connection::open(&self.db).unwrap()
    }

    fn count(&self, sql: &str) -> i64 {
        self.conn().query_row(sql, [], |r| r.get(0)).unwrap()
    }

    /// The current labels (or scores) of a judge id: uid → (scores, completed).
    fn current(&self, judge_id: &str) -> Vec<(String, Value, bool)> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT c.uid, j.scores, j.completed FROM current_judgments j
                 JOIN conversations c ON c.id = j.conversation_id
                 WHERE j.judge_id = ?1 AND j.status = 'ok' ORDER BY c.id, j.replicate",
            )
            .unwrap();
        stmt.query_map([judge_id], |r| {
            let scores: String = r.get(1)?;
            Ok((r.get(0)?, serde_json::from_str(&scores).unwrap(), r.get(2)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn label(conversation: &str, scores: Value, completed: bool) -> String {
    json!({"conversation": conversation, "rater": RATER, "rubric": RUBRIC,
           "scores": scores, "completed": completed})
    .to_string()
}

fn scores(a: i64, b: i64) -> Value {
    json!({"task_completion": a, "correctness": b, "state_tracking": a,
           "correction_handling": b, "final_answer_usability": a})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_round_trip_refuse_bad_lines_by_file_and_line_and_import_once() {
    let fx = Fixture::new(false).await;
    let mut with_note: Value = serde_json::from_str(&label("c1", scores(5, 4), true)).unwrap();
    with_note["rationale"] = json!(NOTE);
    let lines = vec![
        with_note.to_string(),
        label(
            "c2",
            json!({"task_completion": 1, "correctness": 1, "state_tracking": 1,
                   "correction_handling": 1, "final_answer_usability": 1, "bogus": 3}),
            false,
        ),
        label("c3", scores(5, 7), true),
        label("nope", scores(3, 3), true),
        r#"{"conversation": "c4", "rater": "#.to_string(),
        label("c5", scores(3, 3), true).replace(RUBRIC, "multiturn-quality"),
        // By numeric id: conversation 6 is c6 (imported in order into an empty store).
        json!({"conversation": 6, "rater": RATER, "rubric": RUBRIC,
               "scores": scores(2, 1), "completed": false})
        .to_string(),
        label("c1", scores(1, 1), false),
        label("c7", scores(3, 3), true).replace("\"completed\":true", "\"completed\":\"yes\""),
    ];
    let out = fx.label("labels.jsonl", &lines).await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "a refused line is exit 2: {}",
        stderr(&out)
    );
    let err = stderr(&out);
    let refused: Vec<&str> = err.lines().filter(|l| l.starts_with("rejected ")).collect();
    let expected = [
        "rejected labels.jsonl:2: scores: `scores` has `bogus`, which is not a criterion of this rubric; fix:",
        "rejected labels.jsonl:3: scores: score for `correctness` is 7, outside 1..5; fix:",
        "rejected labels.jsonl:4: conversation: \"nope\" is not in this store; fix:",
        "rejected labels.jsonl:5: not JSON (",
        "rejected labels.jsonl:6: rubric: \"multiturn-quality\" names no version; fix: write multiturn-quality@<version>",
        "rejected labels.jsonl:8: conversation: line 1 already labels this conversation",
        "rejected labels.jsonl:9: completed: missing or not true/false; fix:",
    ];
    assert_eq!(refused.len(), expected.len(), "{err}");
    for (line, want) in refused.iter().zip(expected) {
        assert!(line.starts_with(want), "{line}\n  expected: {want}…");
    }
    assert!(
        stdout(&out).contains("labels.jsonl: 2 labels added, 0 replaced, 0 unchanged, 7 rejected"),
        "{}",
        stdout(&out)
    );
    // What is stored is what was given, as judgments of human:<rater>.
    let stored = fx.current(&format!("human:{RATER}"));
    assert_eq!(
        stored,
        vec![
            ("c1".to_string(), scores(5, 4), true),
            ("c6".to_string(), scores(2, 1), false),
        ]
    );
    assert_eq!(
        fx.count(&format!(
            "SELECT COUNT(*) FROM current_judgments WHERE judge_id = 'human:{RATER}'
             AND rationale = '{NOTE}' AND simulated = 0 AND rubric_version = 1"
        )),
        1
    );
    // Again: nothing added.
    let before = fx.count("SELECT COUNT(*) FROM judgments");
    let out = fx.run(&["label", "import", "labels.jsonl"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).contains("0 labels added, 0 replaced, 2 unchanged, 7 rejected"),
        "{}",
        stdout(&out)
    );
    assert_eq!(fx.count("SELECT COUNT(*) FROM judgments"), before);
    // A clean file imported twice: the second time says nothing new and exits 0.
    let good = vec![label("c1", scores(5, 4), true)];
    let out = fx.label("good.jsonl", &good).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("(nothing new)"), "{}", stdout(&out));
    // A changed label replaces the current one; the old one stays as history.
    let out = fx
        .label("changed.jsonl", &[label("c1", scores(2, 2), false)])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("0 labels added, 1 replaced"),
        "{}",
        stdout(&out)
    );
    assert_eq!(fx.count("SELECT COUNT(*) FROM judgments"), before + 1);
    assert_eq!(fx.current(&format!("human:{RATER}"))[0].1, scores(2, 2));
    // And back: the first label is current again (a new row; it was history).
    let out = fx.run(&["label", "import", "good.jsonl"]).await;
    assert!(
        stdout(&out).contains("0 labels added, 1 replaced"),
        "{}",
        stdout(&out)
    );
    assert_eq!(fx.current(&format!("human:{RATER}"))[0].1, scores(5, 4));
    assert_eq!(fx.count("SELECT COUNT(*) FROM judgments"), before + 2);
    // A missing file is an error (exit 1) naming it.
    let out = fx.run(&["label", "import", "missing.jsonl"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("missing.jsonl: cannot read"),
        "{}",
        stderr(&out)
    );
    // Labels without a judge: no agreement with a judge to show, but not a null field
    // either (there are labels); no judge section is made of people.
    let report = fx.report().await;
    assert_eq!(report["human_agreement"], json!([]));
    assert!(
        report["judges"].as_array().unwrap().is_empty(),
        "{}",
        report["judges"]
    );
}

/// κ of each entry of the one judge's agreement with the human labels.
fn kappas(report: &Value) -> Vec<(String, Option<f64>, i64)> {
    let sections = report["human_agreement"]
        .as_array()
        .expect("human_agreement");
    assert_eq!(sections.len(), 1, "{sections:?}");
    assert_eq!(sections[0]["judge"], "mock-judge");
    assert_eq!(sections[0]["raters"], json!([format!("human:{RATER}")]));
    sections[0]["agreement"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["criterion"].as_str().unwrap().to_string(),
                a["weighted_kappa"].as_f64(),
                a["n"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_agrees_with_matching_labels_not_contrary_ones_and_never_sees_them() {
    let fx = Fixture::new(true).await;
    let report = fx.report().await;
    assert_eq!(report["human_agreement"], Value::Null, "no labels: null");
    let out = fx.judge(&[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let judged = fx.current("mock-judge");
    assert_eq!(judged.len(), 16);
    // Matching labels: the judge's own scores, one step off on one conversation per
    // criterion (as two careful people differ now and then).
    let matching: Vec<String> = judged
        .iter()
        .enumerate()
        .map(|(i, (uid, s, done))| {
            let mut s = s.clone();
            if i == 3 {
                for v in s.as_object_mut().unwrap().values_mut() {
                    let x = v.as_i64().unwrap();
                    *v = json!(if x < 5 { x + 1 } else { x - 1 });
                }
            }
            let mut line: Value = serde_json::from_str(&label(uid, s, *done)).unwrap();
            line["rationale"] = json!(NOTE);
            line.to_string()
        })
        .collect();
    let out = fx.label("matching.jsonl", &matching).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = fx.report().await;
    let agreement = kappas(&report);
    assert_eq!(
        agreement.len(),
        6,
        "five criteria and completed: {agreement:?}"
    );
    assert_eq!(agreement[5].0, "completed");
    for (criterion, kappa, n) in &agreement {
        assert_eq!(*n, 16, "{criterion}");
        let k = kappa.unwrap_or_else(|| panic!("{criterion}: κ undefined"));
        assert!(k >= 0.8, "{criterion}: κ {k} with matching labels");
    }
    // The judge card carries the same agreement, per criterion, in the issue's shape.
    let cards = report["judge_card"].as_array().unwrap();
    let card = cards
        .iter()
        .find(|c| c["judge"] == "mock-judge")
        .unwrap_or_else(|| panic!("{cards:?}"));
    let on_card = card["human_agreement"]
        .as_array()
        .expect("human_agreement on the card");
    assert_eq!(on_card.len(), 6, "{card}");
    for (entry, (criterion, kappa, n)) in on_card.iter().zip(&agreement) {
        assert_eq!(entry["criterion"], criterion.as_str(), "{entry}");
        assert_eq!(entry["n"], *n, "{entry}");
        assert_eq!(entry["weighted_kappa"].as_f64(), *kappa, "{entry}");
        let i = entry["interval"].as_array().expect("[lo, hi]");
        assert!(i[0].as_f64().unwrap() <= i[1].as_f64().unwrap(), "{entry}");
    }
    assert!(
        card["reasons"].as_array().unwrap().iter().any(|r| r
            .as_str()
            .unwrap()
            .starts_with("agrees with the human labels")),
        "{card}"
    );
    // (Its verdict here is `flagged`: this store has no checks, so the card cannot tell
    // longer answers from better ones; tests/judge_card.rs shows a judge trusted with
    // labels, where checks separate the two.)
    // The rater joins the judge in α as a rater of their own, named human:<rater>.
    let panel = report["agreement"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "judges")
        .expect("an agreement section between the judge and the rater");
    let names: Vec<&str> = panel["judges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j.as_str().unwrap())
        .collect();
    assert!(
        names.contains(&format!("human:{RATER}").as_str()),
        "{names:?}"
    );
    // People are not a judge of the JUDGE tables.
    let judges: Vec<&str> = report["judges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["judge"].as_str().unwrap())
        .collect();
    assert_eq!(judges, ["mock-judge"]);
    // The terminal and Markdown reports show the table.
    for format in ["terminal", "md"] {
        let out = fx.run(&["report", "--format", format]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("JUDGE × HUMAN LABELS"), "{format}: {text}");
        assert!(text.contains(&format!("human:{RATER}")), "{format}");
    }

    // Contrary labels from the same rater replace the matching ones: κ falls.
    let contrary: Vec<String> = judged
        .iter()
        .map(|(uid, s, done)| {
            let mut s = s.clone();
            for v in s.as_object_mut().unwrap().values_mut() {
                *v = json!(6 - v.as_i64().unwrap());
            }
            label(uid, s, !done)
        })
        .collect();
    let out = fx.label("contrary.jsonl", &contrary).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("0 labels added, 16 replaced"),
        "{}",
        stdout(&out)
    );
    let report = fx.report().await;
    for (criterion, kappa, n) in kappas(&report) {
        assert_eq!(n, 16);
        let k = kappa.unwrap();
        assert!(k < 0.2, "{criterion}: κ {k} with contrary labels");
    }
    let card = &report["judge_card"][0];
    assert!(
        card["reasons"].as_array().unwrap().iter().any(|r| r
            .as_str()
            .unwrap()
            .starts_with("agrees poorly with the human labels")),
        "{card}"
    );

    // Judging again after the labels: no judge request carries anything of them.
    let before = std::fs::read_to_string(&fx.log).unwrap().lines().count();
    let out = fx.judge(&["--rejudge"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let log = std::fs::read_to_string(&fx.log).unwrap();
    let asked: Vec<&str> = log.lines().skip(before).collect();
    assert_eq!(asked.len(), 16, "one ask per conversation");
    for request in &asked {
        assert!(request.contains("mock-judge"), "{request}");
        for secret in ["zq7", "human:", "HUMAN-NOTE"] {
            assert!(
                !request.contains(secret),
                "{secret} reached a judge: {request}"
            );
        }
    }
}
