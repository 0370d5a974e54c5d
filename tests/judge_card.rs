//! The judge card end to end, through the binary: conversations collected from mock
//! providers on 127.0.0.1 whose answers differ in length (each opens with its own preamble),
//! checked, then scored by three mock judge servers on loopback — one that grades the
//! answers against the references (true quality), one that scores by answer length, one
//! that always prefers the transcript shown first — and each judge's card read from
//! `report --format json`, `judge`'s closing lines and `report --require-trusted-judge`'s
//! exit status.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use turnbench::config::Scenario;
use turnbench::exit::Exit;
use turnbench::mock::{MockConfig, MockServer};

use crate::common::{judge_toml, turnbench_quiet};

const PROFILES: &str = r#"
seed = 7

[[profile]]
model = "m-short"
ttft_ms = { dist = "fixed", ms = 1 }
gap_ms = { dist = "fixed", ms = 0 }
identity = "Sure. "

[[profile]]
model = "qwen-mid"
ttft_ms = { dist = "fixed", ms = 1 }
gap_ms = { dist = "fixed", ms = 0 }
identity = "Here is what you asked for, worked through with care. "

[[profile]]
model = "m-long"
ttft_ms = { dist = "fixed", ms = 1 }
gap_ms = { dist = "fixed", ms = 0 }
identity = "Thank you for the detailed request; I have read every instruction again, checked each requirement against the earlier turns, and here is the answer, complete. "

[[profile]]
model = "mock-judge-reading"
ttft_ms = { dist = "fixed", ms = 1 }
gap_ms = { dist = "fixed", ms = 0 }

[[profile]]
model = "mock-judge-long"
ttft_ms = { dist = "fixed", ms = 1 }
gap_ms = { dist = "fixed", ms = 0 }
judge = { by_length = 1.0 }

[[profile]]
model = "mock-judge-first"
ttft_ms = { dist = "fixed", ms = 1 }
gap_ms = { dist = "fixed", ms = 0 }
judge = { prefer_a = 1.0 }
"#;

struct Fixture {
    dir: tempfile::TempDir,
    db: PathBuf,
    mock: MockServer,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

impl Fixture {
    /// 3 targets × the shipped scenarios, collected and checked.
    async fn collected() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let profiles = dir.path().join("profiles.toml");
        std::fs::write(&profiles, PROFILES).unwrap();
        let mock = MockServer::start(
            MockConfig::load(&profiles).unwrap(),
            &Scenario::load_dir(&root().join("scenarios")).unwrap(),
            "127.0.0.1:0".parse().unwrap(),
            None,
        )
        .await
        .unwrap();
        let bench = format!(
            r#"
name = "card-test"
seed = 3
repeats = 1
scenarios = "{scenarios}"
pause_scale = 0
# One conversation at a time: the card's verdicts rest on one draw of the collected
# answers, which must not depend on how concurrent requests interleave.
concurrency = 1
turn_timeout_s = 10

[[target]]
provider = "prov-a"
model = "m-short"
base_url = "{url}"

[[target]]
provider = "prov-b"
model = "qwen-mid"
base_url = "{url}"

[[target]]
provider = "prov-c"
model = "m-long"
base_url = "{url}"
"#,
            scenarios = root().join("scenarios").display(),
            url = mock.base_url()
        );
        std::fs::write(dir.path().join("bench.toml"), bench).unwrap();
        let fx = Fixture {
            db: dir.path().join("card.db"),
            dir,
            mock,
        };
        let bench = fx.dir.path().join("bench.toml");
        let out = fx
            .run(&["collect", "--config", bench.to_str().unwrap()])
            .await;
        assert!(out.status.success(), "{}", stderr(&out));
        // A collected conversation's uid ends with the nanosecond it was made, the judge
        // sees a label hashed from it, and the mock judge draws its noise from the request:
        // fixed uids make the judges' draws, like the answers, the same on every run (else
        // the honest judge's length ρ moved from run to run and crossed 0 about once in
        // three; CI on 5164493).
        rusqlite::Connection::open(&fx.db)
            .unwrap()
            .execute("UPDATE conversations SET uid = 'card-test-' || id", [])
            .unwrap();
        let checks = root().join("checks");
        let scenarios = root().join("scenarios");
        let out = fx
            .run(&[
                "check",
                "--checks",
                checks.to_str().unwrap(),
                "--scenarios",
                scenarios.to_str().unwrap(),
            ])
            .await;
        assert!(out.status.success(), "{}", stderr(&out));
        fx
    }

    fn judge_file(&self, model: &str) -> PathBuf {
        self.judge_file_as(model, model, "")
    }

    /// Settings for `model` under the id `id`, with `extra` lines.
    fn judge_file_as(&self, id: &str, model: &str, extra: &str) -> PathBuf {
        let path = self.dir.path().join(format!("{id}.toml"));
        let body = format!(
            "{extra}\nconcurrency = 8\ntimeout_s = 10\n[retry]\nattempts = 2\nbackoff_ms = 1\n"
        );
        let text = judge_toml(&self.mock.base_url(), model, &body)
            .replace(&format!("id = \"{model}\""), &format!("id = \"{id}\""));
        std::fs::write(&path, text).unwrap();
        path
    }

    async fn run(&self, args: &[&str]) -> Output {
        turnbench_quiet(self.dir.path(), &self.db, args).await
    }

    /// `turnbench judge` with the shipped rubric, scenarios and checks, and `more`.
    async fn judge(&self, model: &str, more: &[&str]) -> Output {
        let judge = self.judge_file(model);
        self.judge_with(&judge, more).await
    }

    async fn judge_with(&self, judge: &Path, more: &[&str]) -> Output {
        let rubric = root().join("rubrics/multiturn-quality.toml");
        let scenarios = root().join("scenarios");
        let checks = root().join("checks");
        let mut args = vec![
            "judge",
            "--judge",
            judge.to_str().unwrap(),
            "--rubric",
            rubric.to_str().unwrap(),
            "--scenarios",
            scenarios.to_str().unwrap(),
            "--checks",
            checks.to_str().unwrap(),
        ];
        args.extend_from_slice(more);
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        self.run(&refs).await
    }

    /// The card of judge `model` in a JSON report showing that judge only, and the exit
    /// status of the same report with `--require-trusted-judge`.
    async fn card(&self, model: &str) -> (Value, Option<i32>) {
        let out = self
            .run(&["report", "--format", "json", "--judge", model])
            .await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let cards = report["judge_card"].as_array().unwrap().clone();
        assert_eq!(cards.len(), 1, "{cards:?}");
        let gated = self
            .run(&[
                "report",
                "--format",
                "json",
                "--judge",
                model,
                "--require-trusted-judge",
            ])
            .await;
        assert!(!gated.stdout.is_empty(), "the report is written first");
        (cards[0].clone(), gated.status.code())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_trusts_a_reading_judge_and_flags_a_length_biased_and_a_position_biased_one() {
    let fx = Fixture::collected().await;
    let untrusted = Some(Exit::UntrustedJudge.code());

    // A judge that grades the answers against the references: anchors pass, no length
    // bias among answers the checks find equally good, trusted.
    let out = fx.judge("mock-judge-reading", &["--anchors"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = fx.judge("mock-judge-reading", &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(
            "judge card: mock-judge-reading (mock-judge-reading, simulated) on multiturn-quality@1: trusted"
        ),
        "{}",
        stdout(&out)
    );
    let (card, gate) = fx.card("mock-judge-reading").await;
    assert_eq!(card["verdict"], "trusted", "{card:#}");
    assert_eq!(gate, Some(0));
    assert_eq!(card["anchors"]["passed"], true);
    // Its controls: judged once per scenario each, both held throughout.
    let controls = card["controls"].as_array().unwrap();
    let names: Vec<&str> = controls
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["padding", "null"]);
    for c in controls {
        assert_eq!(c["passed"], true, "{card:#}");
        assert!(c["pairs"].as_u64().unwrap() >= 10, "{card:#}");
        assert!(c["interval"][0].as_f64().unwrap() > 0.5, "{card:#}");
    }
    let length = &card["length_bias"];
    assert_eq!(length["established"], false, "{card:#}");
    assert!(length["n"].as_u64().unwrap() >= 10, "{card:#}");
    // Beside it, the checks over the same conversations.
    assert!(length["checks"]["scored"].as_u64().unwrap() > 0, "{card:#}");
    // Not a pairwise judge, no labels, no family: null, never 0.
    assert_eq!(card["position"], Value::Null);
    assert_eq!(card["human_agreement"], Value::Null);
    assert_eq!(card["self_family"], Value::Null);
    assert_eq!(card["family"], Value::Null);

    // People who score as it does (their labels are its own scores): weighted κ ≥ 0.8 on
    // every criterion that varies, and still trusted. (Its scores are mostly 5s, so κ,
    // which corrects for agreement by chance, is unforgiving of any disagreement: one
    // step off on every fifth conversation gave κ 0.15–0.73, and on a single one 0.66 to
    // 0.96 depending on which; tests/labels.rs measures κ with imperfect labels.)
    let labels: Vec<String> = {
        let conn = rusqlite::Connection::open(&fx.db).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT c.uid, j.scores, j.completed FROM current_judgments j
                 JOIN conversations c ON c.id = j.conversation_id
                 WHERE j.judge_id = 'mock-judge-reading' AND j.status = 'ok'
                 ORDER BY c.id",
            )
            .unwrap();
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, bool>(2)?,
                ))
            })
            .unwrap();
        rows.map(Result::unwrap)
            .map(|(uid, scores, completed)| {
                let scores: Value = serde_json::from_str(&scores).unwrap();
                serde_json::json!({"conversation": uid, "rater": "ana",
                    "rubric": "multiturn-quality@1", "scores": scores, "completed": completed})
                .to_string()
            })
            .collect()
    };
    assert!(labels.len() >= 20, "{}", labels.len());
    let file = fx.dir.path().join("labels.jsonl");
    std::fs::write(&file, labels.join("\n") + "\n").unwrap();
    let out = fx.run(&["label", "import", file.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (card, gate) = fx.card("mock-judge-reading").await;
    let agreement = card["human_agreement"]
        .as_array()
        .expect("agreement with ana");
    assert_eq!(agreement.len(), 6, "five criteria and completed: {card:#}");
    let defined: Vec<f64> = agreement
        .iter()
        .filter_map(|a| a["weighted_kappa"].as_f64())
        .collect();
    assert!(defined.len() >= 3, "{card:#}");
    assert!(defined.iter().all(|&k| k >= 0.8), "{card:#}");
    assert_eq!(card["verdict"], "trusted", "{card:#}");
    assert_eq!(gate, Some(0));

    // The same judge said to be of the qwen family (with a system message of its own, so
    // that its asks are not the cached ones): the qwen cell it scored is flagged.
    let qwen = fx.judge_file_as(
        "reading-qwen",
        "mock-judge-reading",
        "family = \"qwen\"\nsystem = \"You are a fair evaluator.\"",
    );
    let out = fx.judge_with(&qwen, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (card, gate) = fx.card("reading-qwen").await;
    assert_eq!(gate, untrusted);
    assert_eq!(card["family"], "qwen");
    assert_eq!(
        card["self_family"],
        serde_json::json!([{"cell": "prov-b / qwen-mid", "family": "qwen"}])
    );
    assert_eq!(card["verdict"], "flagged", "{card:#}");
    assert!(
        card["reasons"][0]
            .as_str()
            .unwrap()
            .starts_with("self-family"),
        "{card:#}"
    );

    // A judge that scores by answer length: established, flagged (its anchors tie,
    // failed), and the gate refuses it.
    let out = fx.judge("mock-judge-long", &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("judge card: mock-judge-long (mock-judge-long, simulated) on multiturn-quality@1: flagged (length bias established"),
        "{}",
        stdout(&out)
    );
    let (card, gate) = fx.card("mock-judge-long").await;
    assert_eq!(gate, untrusted);
    let length = &card["length_bias"];
    assert_eq!(length["established"], true, "{card:#}");
    let rho = length["rho"].as_f64().unwrap();
    assert!(rho > 0.5, "{card:#}");
    let lo = length["interval"][0].as_f64().unwrap();
    assert!(lo > 0.0, "{card:#}");
    assert_eq!(card["verdict"], "flagged", "{card:#}");
    assert!(
        card["reasons"][0]
            .as_str()
            .unwrap()
            .starts_with("length bias established"),
        "{card:#}"
    );
    let out = fx.judge("mock-judge-long", &["--anchors"]).await;
    assert_eq!(
        out.status.code(),
        Some(Exit::AnchorsFailed.code()),
        "{}",
        stderr(&out)
    );
    let (card, gate) = fx.card("mock-judge-long").await;
    assert_eq!(card["verdict"], "failed", "{card:#}");
    assert_eq!(gate, untrusted);
    // The padding control fails: the padded reference scores above the plain one.
    let padding = &card["controls"][0];
    assert_eq!(padding["name"], "padding");
    assert_eq!(padding["passed"], false, "{card:#}");
    assert!(padding["interval"][1].as_f64().unwrap() < 0.5, "{card:#}");
    let reasons: Vec<&str> = card["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("control padding failed")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("length bias established")),
        "{reasons:?}"
    );

    // A judge that always prefers the transcript shown first: every verdict flips with the
    // order, the first position wins every pair in both orders, not trusted.
    let out = fx
        .judge("mock-judge-first", &["--pairwise", "--baseline", "prov-a"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("judge card: mock-judge-first"),
        "{}",
        stdout(&out)
    );
    let (card, gate) = fx.card("mock-judge-first").await;
    assert_eq!(gate, untrusted);
    assert_eq!(card["verdict"], "flagged", "{card:#}");
    let position = &card["position"];
    let n = position["n"].as_u64().unwrap();
    assert!(n >= 20, "{card:#}");
    assert_eq!(position["consistent"], 0, "{card:#}");
    assert_eq!(position["rate"], 0.0, "{card:#}");
    assert_eq!(position["first_position_wins"], n, "{card:#}");
    // A pairwise-only judge has no scores to correlate with length.
    assert_eq!(card["length_bias"], Value::Null);

    // The whole store: the gate names every untrusted judge, and the report shows them all.
    let out = fx.run(&["report", "--require-trusted-judge"]).await;
    assert_eq!(out.status.code(), untrusted, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("judge mock-judge-first (flagged)")
            && err.contains("judge mock-judge-long (failed)")
            && err.contains("judge reading-qwen (flagged)")
            && !err.contains("judge mock-judge-reading ("),
        "{err}"
    );
    assert!(stdout(&out).contains("JUDGE CARD"), "{}", stdout(&out));

    // Every card of the store, with controls, position and self-family filled, holds to
    // the report's schema.
    let out = fx.run(&["report", "--format", "json"]).await;
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["judge_card"].as_array().unwrap().len(), 4);
    let errors = crate::common::schema_violations(&report);
    assert!(errors.is_empty(), "{errors:#?}");
}
