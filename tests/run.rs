//! `turnbench run` through the binary: the built-in offline run end to end (the built-in
//! mock's four simulated providers, the checks, the simulated judge, the report), its
//! report checked against the store, and a re-run that does no work twice.

use crate::legibility;

use std::path::Path;

use crate::common::*;
use serde_json::Value;

fn repo(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A project folder laid out like the checkout: scenarios, checks, judges, rubrics.
fn checkout_like() -> Project {
    let project = Project::new(&[]);
    for dir in ["scenarios", "checks", "judges", "rubrics"] {
        let to = project.path(dir);
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(repo(dir)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
    project
}

fn counts(project: &Project) -> [i64; 4] {
    let conn = project.conn();
    [
        count(&conn, "SELECT COUNT(*) FROM conversations"),
        count(&conn, "SELECT COUNT(*) FROM check_results"),
        count(&conn, "SELECT COUNT(*) FROM judgments"),
        count(&conn, "SELECT COUNT(*) FROM anchor_judgments"),
    ]
}

#[test]
fn the_built_in_run_shows_real_differences_and_a_rerun_does_no_work_twice() {
    let project = checkout_like();
    let (stdout, stderr) = project.run_ok(&["run"]);

    // Every stage ran, said so, and the terminal report has every section.
    for stage in [
        "[1/4 collect]",
        "[2/4 check]",
        "[3/4 judge]",
        "[4/4 report]",
    ] {
        assert!(stderr.contains(stage), "{stage} missing from:\n{stderr}");
    }
    assert!(
        stderr.contains("scaled"),
        "the output says delays are scaled: {stderr}"
    );
    assert!(
        stderr.contains("turnbench init my-bench")
            && stderr.contains("turnbench run --judge judges/default.toml"),
        "what to run next: {stderr}"
    );
    for section in [
        "HEADLINES",
        "CELLS · glm-sim",
        "QUALITY",
        "PER TURN",
        "RELIABILITY",
        "CACHE AND COST",
        "QUALITY BY TAG",
        "JUDGE · multiturn-quality@1",
        "SIMULATED",
    ] {
        assert!(
            stdout.contains(section),
            "{section} missing from:\n{stdout}"
        );
    }
    // Each headline is a bullet of at most two 100-column lines (issue 33).
    let heads = stdout.split("HEADLINES\n").nth(1).unwrap();
    let heads = heads.split("\n\n").next().unwrap();
    let mut lines = 0;
    for l in heads.lines() {
        assert!(l.chars().count() <= 100, "{l}");
        if l.starts_with("  · ") {
            lines = 1;
        } else if l.starts_with("    ") {
            lines += 1;
            assert!(lines <= 2, "a headline of 3 lines:\n{heads}");
        }
    }
    let html = std::fs::read_to_string(project.path("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("SIMULATED"));
    // Its charts are legible: no text leaves its chart or covers another (issue 25).
    assert_eq!(legibility::problems(&html), Vec::<String>::new());
    // Anchors before trust: the simulated judge ran its reference anchors before judging,
    // passed, and the report says so beside its scores instead of asking for them.
    assert!(
        stderr.contains("anchors:") && stderr.contains("it tells references from spoiled answers"),
        "{stderr}"
    );
    assert!(stdout.contains("anchors passed"), "{stdout}");
    assert!(html.contains("anchors passed"));
    assert!(
        !stdout.contains("has no reference-anchor check"),
        "{stdout}"
    );

    // The report agrees with the store.
    let r: Value =
        serde_json::from_str(&project.run_ok(&["report", "--format", "json"]).0).unwrap();
    let cells = r["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4, "four simulated providers");
    let conn = project.conn();
    let stored = count(
        &conn,
        "SELECT COUNT(*) FROM conversation_facts WHERE counts",
    );
    let attempted: i64 = cells
        .iter()
        .map(|c| c["reliability"]["attempted"].as_i64().unwrap())
        .sum();
    assert_eq!(attempted, stored);
    let cell = |p: &str| {
        cells
            .iter()
            .find(|c| c["provider"] == p)
            .unwrap_or_else(|| panic!("no cell {p}"))
    };
    for c in cells {
        // No failed conversation in latency: its n is the completed count.
        assert_eq!(
            c["conversation_latency"]["n"].as_u64(),
            c["reliability"]["completed"].as_u64()
        );
        assert_eq!(c["simulated"], true);
    }
    // The injected faults appear as the right classes.
    let flaky = &cell("sim-flaky")["reliability"]["failures"];
    assert!(
        !flaky.as_object().unwrap().is_empty(),
        "sim-flaky fails now and then"
    );
    for class in flaky.as_object().unwrap().keys() {
        assert!(
            ["rate_limited", "http_5xx", "stream_cut"].contains(&class.as_str()),
            "unexpected failure class {class}"
        );
    }
    let rate = |p: &str| cell(p)["reliability"]["success"]["value"].as_f64().unwrap();
    assert!(rate("sim-flaky") < rate("sim-swift"));
    // sim-flaky's tokens come in bursts (a stall after every tenth): its ITL p95 stands
    // far above its p50, sim-swift's does not. sim-burst keeps no prefix cache: its TTFT
    // climbs with the prompt, sim-swift's does not.
    let itl = |p: &str, q: &str| cell(p)["turns"]["itl_ms"][q]["value"].as_f64().unwrap();
    assert!(itl("sim-flaky", "p95") > 5.0 * itl("sim-flaky", "p50"));
    assert!(itl("sim-swift", "p95") < 5.0 * itl("sim-swift", "p50"));
    let slope = |p: &str| {
        let row = r["ttft_by_turn"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["provider"] == p)
            .unwrap();
        (
            row["interval"]["lo"].as_f64().unwrap(),
            row["interval"]["hi"].as_f64().unwrap(),
        )
    };
    assert!(slope("sim-burst").0 > 0.0, "{:?}", slope("sim-burst"));
    let (lo, hi) = slope("sim-swift");
    assert!(lo < 0.0 && 0.0 < hi, "sim-swift: [{lo}, {hi}]");
    // The reasoning model's reasoning sometimes uses the whole budget.
    assert!(
        cell("sim-thinker")["flags"]["reasoning_used_budget"]
            .as_u64()
            .unwrap()
            > 0
    );
    // The defective providers pass fewer checks, and the judge that reads the answers
    // agrees in direction.
    let pass = |p: &str| cell(p)["checks"]["pass"]["value"].as_f64().unwrap();
    assert!(pass("sim-flaky") < pass("sim-swift"));
    let judge = &r["judges"][0];
    assert_eq!(judge["simulated"], true);
    let anchors = r["anchors"].as_array().unwrap();
    assert_eq!(anchors.len(), 1, "{anchors:?}");
    assert_eq!(anchors[0]["passed"], true, "{anchors:?}");
    assert!(anchors[0]["pairs"].as_u64().unwrap() > 100);
    let order: Vec<&str> = cells
        .iter()
        .map(|c| c["provider"].as_str().unwrap())
        .collect();
    let mean = |p: &str| {
        let i = order.iter().position(|x| *x == p).unwrap();
        judge["cells"][i]["overall"]["value"].as_f64().unwrap()
    };
    assert!(mean("sim-flaky") < mean("sim-swift"));
    // Judge means near the top of the 1–5 scale keep their intervals inside it (a symmetric
    // interval around sim-swift's ~4.9 crossed 5).
    let mut bounded = 0;
    for cell in judge["cells"].as_array().unwrap() {
        let overall = std::iter::once(&cell["overall"]);
        let criteria = cell["criteria"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.values());
        for e in overall.chain(criteria) {
            if let Some(i) = e["interval"].as_object() {
                let (lo, hi) = (i["lo"].as_f64().unwrap(), i["hi"].as_f64().unwrap());
                assert!(
                    (1.0..=5.0).contains(&lo) && (1.0..=5.0).contains(&hi),
                    "{e}"
                );
                assert!(lo <= e["value"].as_f64().unwrap() && hi >= e["value"].as_f64().unwrap());
                bounded += 1;
            }
        }
    }
    assert!(bounded > 10, "{judge}");
    // Every claim on a mean (task success, judge, reliability, retention) carries the
    // interval of its own test: it excludes 0 exactly when the claim is established.
    let mut claims = [0; 2];
    for h in r["headlines"].as_array().unwrap() {
        let stat = h["family"]["statistic"].as_str().unwrap_or("");
        if stat.is_empty() || stat.starts_with("latency") {
            continue;
        }
        for c in h["family"]["claims"].as_array().unwrap() {
            if let Some(i) = c["interval"].as_object() {
                let (lo, hi) = (i["lo"].as_f64().unwrap(), i["hi"].as_f64().unwrap());
                let holds_zero = lo <= 0.0 && 0.0 <= hi;
                assert_eq!(c["established"], !holds_zero, "{c}");
                claims[usize::from(holds_zero)] += 1;
            }
        }
    }
    assert!(
        claims[0] > 0 && claims[1] > 0,
        "{claims:?}: established and not"
    );
    // The headline compares the four providers of the one model.
    assert!(
        r["headlines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["kind"] == "latency_p50" && h["model"] == "glm-sim")
    );

    // A re-run resumes and does no new work at all.
    let before = counts(&project);
    let (_, stderr) = project.run_ok(&["run"]);
    assert_eq!(counts(&project), before, "{stderr}");
    assert!(
        stderr.contains("0 conversations run") && stderr.contains("0 sent"),
        "{stderr}"
    );
}
