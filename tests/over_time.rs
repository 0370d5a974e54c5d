//! Runs over time: three collections of one bench into one store, the third with one
//! provider slowed (its mock profile twice as slow); the report compares a run with a
//! baseline, pools a window, and gates on regressions (issue 21).

use crate::common::*;
use serde_json::Value;
use turnbench::exit::Exit;
use turnbench::mock::Profile;
use turnbench::mock::profile::Delay;

/// A realistic-ish profile: lognormal first token and chunk gaps, no faults.
fn profile(model: &str, ttft: f64, gap: f64) -> Profile {
    let mut p = Profile::quick(model, ttft, gap);
    p.ttft_ms = Delay::Lognormal {
        median: ttft,
        sigma: 0.3,
    };
    p.gap_ms = Delay::Lognormal {
        median: gap,
        sigma: 0.3,
    };
    p
}

/// Twelve: a family of 9 comparisons needs 9 or more (an exact sign-flip test over C
/// scenarios gives p ≥ 2 / 2^C; with 8 and Holm over 9, a 1.8× slowdown stays "not
/// established", and says that more scenarios would).
const SCENARIOS: [&str; 12] = [
    "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12",
];

fn bench(url: &str, b_model: &str) -> String {
    format!(
        "name = \"hourly\"\nseed = 5\nrepeats = 3\nconcurrency = 24\nper_target_concurrency = 8\n{}{}{}",
        target("prov-a", "m-a", url, "label = \"lab\""),
        target("prov-b", b_model, url, "label = \"lab\""),
        target("prov-c", "m-c", url, "label = \"lab\""),
    )
}

fn json(project: &Project, args: &[&str]) -> Value {
    let mut all = vec!["report", "--format", "json"];
    all.extend_from_slice(args);
    let (out, _) = project.run_ok(&all);
    serde_json::from_str(&out).unwrap()
}

fn verdicts(r: &Value) -> Vec<(String, String, String)> {
    r["comparison"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["cell"].as_str().unwrap().to_string(),
                c["statistic"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_slowed_provider_is_flagged_against_the_baseline_and_nothing_else() {
    let mock = Mock::start(
        profiles(vec![
            profile("m-a", 60.0, 3.0),
            profile("m-b", 60.0, 3.0),
            profile("m-c", 90.0, 4.0),
            // The same provider after a change: twice as slow.
            profile("m-b-slow", 120.0, 6.0),
        ]),
        None,
    );
    let scenarios: Vec<(String, String)> = SCENARIOS
        .iter()
        .map(|s| (s.to_string(), two_turn_scenario(s, 0)))
        .collect();
    let refs: Vec<(&str, &str)> = scenarios
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let project = Project::new(&refs);
    for b_model in ["m-b", "m-b", "m-b-slow"] {
        let path = project.write("bench.toml", &bench(&mock.url(), b_model));
        project.run_ok(&["collect", "-q", "--config", path.to_str().unwrap()]);
    }

    // The newest run (3) against run 1: prov-b's p50 regressed, established; nothing else.
    let r = json(&project, &["--baseline-run", "1"]);
    let c = &r["comparison"];
    assert_eq!(c["runs"], serde_json::json!([3]));
    assert_eq!(c["baseline_runs"], serde_json::json!([1]));
    let v = verdicts(&r);
    let regressed: Vec<_> = v
        .iter()
        .filter(|x| x.2 != "no_established_change")
        .collect();
    assert_eq!(
        regressed,
        [&(
            "prov-b / lab".to_string(),
            "latency_p50_ratio".to_string(),
            "regressed".to_string()
        )],
        "{v:#?}"
    );
    // Every cell's success, p50 and p95 were compared (3 cells × 3; no checks, no judge),
    // each with both sides' n and a claim.
    let changes = c["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 9, "{changes:#?}");
    let slow = changes
        .iter()
        .find(|x| x["cell"] == "prov-b / lab" && x["statistic"] == "latency_p50_ratio")
        .unwrap();
    assert_eq!(slow["selected_n"], 36);
    assert_eq!(slow["baseline_n"], 36);
    assert_eq!(slow["claim"]["n"], 36);
    assert_eq!(slow["claim"]["scenarios"], 12);
    let ratio = slow["claim"]["estimate"].as_f64().unwrap();
    assert!((1.5..2.6).contains(&ratio), "{ratio}");
    let lo = slow["claim"]["interval"]["lo"].as_f64().unwrap();
    assert!(lo > 1.0, "{slow:#}");
    // p95 needs 40 pairs: 36 establish nothing, and say so.
    let p95 = changes
        .iter()
        .find(|x| x["cell"] == "prov-b / lab" && x["statistic"] == "latency_p95_ratio")
        .unwrap();
    assert_eq!(p95["verdict"], "no_established_change");
    assert!(
        p95["claim"]["reason"]
            .as_str()
            .unwrap()
            .contains("too few pairs: 36 of the 40 needed"),
        "{p95:#}"
    );
    // The settings changed (prov-b's model id): said, not hidden.
    let left_out = c["left_out"].as_array().unwrap();
    assert!(
        left_out.iter().any(|l| l
            .as_str()
            .unwrap()
            .contains("settings of run 3 and run 1 differ")),
        "{left_out:#?}"
    );
    // Headlines first: the regression as a sentence.
    let first = r["headlines"][0]["text"].as_str().unwrap();
    assert!(
        first.starts_with("prov-b / lab: conversation p50 regressed ")
            && first.contains("), established (run 3 vs run 1, 36 pairs in 12 scenarios)"),
        "{first}"
    );
    // The report JSON, comparison included, is what docs/report.schema.json says.
    let errors = crate::common::schema_violations(&r);
    assert!(errors.is_empty(), "{errors:#?}");

    // Run 2 against run 1: the same truth, no change established.
    let same = json(&project, &["--run", "2", "--baseline-run", "1"]);
    assert_eq!(
        same["comparison"]["regressions"],
        0,
        "{:#?}",
        verdicts(&same)
    );
    assert_eq!(
        same["comparison"]["improvements"],
        0,
        "{:#?}",
        verdicts(&same)
    );

    // A gate for CI: exit 6 on an established regression, 0 without one.
    let gate = project
        .cmd(&["report", "--baseline-run", "1", "--fail-on-regression"])
        .output()
        .unwrap();
    assert_eq!(gate.status.code(), Some(Exit::Regression.code()));
    let stderr = String::from_utf8_lossy(&gate.stderr);
    assert!(
        stderr.contains("1 established regression against the baseline: exit 6"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&gate.stdout);
    assert!(
        stdout.contains("AGAINST THE BASELINE · run 3 vs run 1"),
        "{stdout}"
    );
    project
        .cmd(&[
            "report",
            "--run",
            "2",
            "--baseline-run",
            "1",
            "--fail-on-regression",
        ])
        .assert()
        .success();
    // Without a baseline the gate is a usage error, not a silent pass.
    let lone = project
        .cmd(&["report", "--fail-on-regression"])
        .output()
        .unwrap();
    assert_eq!(lone.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&lone.stderr).contains("--fail-on-regression needs a baseline")
    );

    // A window baseline: the runs before the newest, pooled (runs 1 and 2 within 1 h).
    let w = json(&project, &["--baseline-window", "1h"]);
    assert_eq!(w["comparison"]["baseline_runs"], serde_json::json!([1, 2]));
    assert_eq!(
        w["comparison"]["baseline"],
        "runs 1, 2 (the 1h before run 3)"
    );
    let slow = verdicts(&w);
    assert!(
        slow.contains(&(
            "prov-b / lab".into(),
            "latency_p50_ratio".into(),
            "regressed".into()
        )),
        "{slow:#?}"
    );

    // Pooling: --since and --last read several runs and the run card counts them.
    let pooled = json(&project, &["--since", "1h"]);
    assert_eq!(pooled["meta"]["runs"].as_array().unwrap().len(), 3);
    let a = pooled["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["provider"] == "prov-a")
        .unwrap();
    assert_eq!(a["reliability"]["attempted"], 108);
    let last = json(&project, &["--last", "2"]);
    let ids: Vec<i64> = last["meta"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [2, 3]);
    // Pooled runs are a second cluster level: run 3 alone establishes prov-a over prov-c
    // on p50; the same claim over runs 2 and 3 pooled cannot bound how runs vary, and says
    // so.
    let p50_claims = |r: &Value| -> Vec<Value> {
        r["headlines"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["kind"] == "latency_p50")
            .flat_map(|h| {
                h["family"]["claims"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect()
    };
    let single = json(&project, &["--run", "3"]);
    assert!(
        p50_claims(&single).iter().any(|c| c["established"] == true),
        "{:#}",
        single["headlines"]
    );
    let pooled_claims = p50_claims(&last);
    assert!(!pooled_claims.is_empty());
    for c in &pooled_claims {
        assert_eq!(c["established"], false, "{c:#}");
        assert!(
            c["reason"].as_str().unwrap().contains("pool 2 runs"),
            "{c:#}"
        );
    }
    // Trends: every cell run by run, three points each, in every format.
    let t = &pooled["trend"];
    assert_eq!(t["runs"], 3);
    let points = t["points"].as_array().unwrap();
    assert_eq!(points.len(), 9);
    for cell in ["prov-a / lab", "prov-b / lab", "prov-c / lab"] {
        let runs: Vec<i64> = points
            .iter()
            .filter(|p| p["cell"] == cell)
            .map(|p| p["run"].as_i64().unwrap())
            .collect();
        assert_eq!(runs, [1, 2, 3], "{cell}");
    }
    // prov-b's third run is twice as slow: apart from the window it is pooled into.
    let b3 = points
        .iter()
        .find(|p| p["cell"] == "prov-b / lab" && p["run"] == 3)
        .unwrap();
    assert_eq!(b3["apart"], true, "{b3:#}");
    assert_eq!(b3["success"]["n"], 36);
    assert_eq!(b3["latency_n"], 36);
    let (out, _) = project.run_ok(&["report", "--since", "1h", "--trend", "--format", "csv"]);
    let mut lines = out.lines();
    assert_eq!(
        lines.next().unwrap(),
        "run,started_at,provider,model,simulated,attempted,completed,success_rate,success_lo,success_hi,conversation_n,conversation_p50_ms,conversation_p50_lo_ms,conversation_p50_hi_ms,apart,collector"
    );
    assert_eq!(lines.clone().count(), 9);
    assert!(
        lines.any(|l| l.starts_with("3,") && l.contains(",prov-b,lab,") && l.contains(",true,")),
        "{out}"
    );
    let (md, _) = project.run_ok(&["report", "--trend", "--format", "md"]);
    assert!(md.contains("TREND · 3 runs · each cell run by run"), "{md}");
    let html_path = project.path("trend.html");
    project.run_ok(&[
        "report",
        "--format",
        "html",
        "--out",
        html_path.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&html_path).unwrap();
    let chart = html
        .split("<svg id=\"chart-trend-1\"")
        .nth(1)
        .and_then(|s| s.split("</svg>").next())
        .expect("a trend chart for the label");
    // Three runs × three providers: nine points, each with its tooltip.
    assert_eq!(chart.matches(": p50 ").count(), 9, "{chart}");
    assert!(chart.contains("run started (UTC)") && chart.contains("conversation p50 (s)"));
    assert!(chart.contains("(apart from the window)"));

    // An unknown baseline names the runs there are.
    let bad = project
        .cmd(&["report", "--baseline-run", "9"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("--baseline-run 9: no such run") && err.contains("3 (hourly,"),
        "{err}"
    );
}

#[test]
fn a_collection_started_while_another_writes_is_refused_and_the_first_completes() {
    // Slow enough that the first collection is still sending when the second starts.
    let mock = Mock::start(profiles(vec![Profile::quick("m", 400.0, 5.0)]), None);
    let project = Project::new(&[("s1", &two_turn_scenario("s1", 0))]);
    let bench = format!(
        "name = \"hourly\"\nrepeats = 2\n{}",
        target("prov", "m", &mock.url(), "")
    );
    let path = project.write("bench.toml", &bench);
    let config = path.to_str().unwrap();
    let mut first = std::process::Command::new(assert_cmd::cargo::cargo_bin("turnbench"))
        .current_dir(project.dir.path())
        .arg("--db")
        .arg(project.db())
        .args(["collect", "-q", "--config", config])
        .spawn()
        .unwrap();
    // The lock file names its holder once the first run has it.
    let lock = project.path("turnbench.db.run-lock");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.contains("collect \"hourly\", pid")) {
        assert!(
            std::time::Instant::now() < deadline,
            "the first run never took the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let second = project
        .cmd(&["collect", "-q", "--config", config])
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(1));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.contains("another run is writing to this store (collect \"hourly\", pid ")
            && err.contains("fix: "),
        "{err}"
    );
    assert!(first.wait().unwrap().success());
    assert!(
        !lock.exists(),
        "a finished run leaves no lock file beside the store"
    );
    // Refused before it began: one run, both its conversations, and nothing of the second.
    let conn = project.conn();
    assert_eq!(count(&conn, "SELECT COUNT(*) FROM runs"), 1);
    assert_eq!(count(&conn, "SELECT COUNT(*) FROM conversations"), 2);
    // Once the first is done the next one runs.
    project.run_ok(&["collect", "-q", "--config", config]);
    assert_eq!(count(&project.conn(), "SELECT COUNT(*) FROM runs"), 2);
}
