//! Equivalence claims (`turnbench report --margin`, issue 33): a cheaper provider shown
//! equivalent to the current one on conversation p50 and task success, a slower one not,
//! and a malformed margin refused naming the part — through the CLI, on an imported store
//! of the 15 shipped scenarios × 6 repeats, checked with the shipped checks.

use std::path::{Path, PathBuf};

use serde_json::Value;
use turnbench::config::Scenario;

use crate::common::*;
use crate::paired::{self, Provider};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

const REPEATS: u32 = 6;

/// Slots (scenario index, repeat) whose second turn repeats the first answer (a check
/// catches it): `current` and `cheap` share two, and each has one of its own.
fn stale(provider: &str, s: usize, r: u32) -> bool {
    match provider {
        "current" => matches!((s, r), (2, 1) | (7, 3) | (11, 5)),
        "cheap" => matches!((s, r), (2, 1) | (7, 3) | (9, 2)),
        _ => matches!((s, r), (2, 1) | (7, 3)),
    }
}

/// `cheap` is 2 % slower than `current` on the median, `slow` 40 %; each conversation has
/// its own noise (±10 %).
fn lines(scenarios: &[Scenario]) -> String {
    let stale = |provider: &'static str| move |s: usize, r: u32| stale(provider, s, r);
    let (current, cheap, slow) = (stale("current"), stale("cheap"), stale("slow"));
    let providers = [
        Provider {
            name: "current",
            speed: 1.0,
            stale: &current,
            ttft_per_1k: 0.0,
        },
        Provider {
            name: "cheap",
            speed: 1.02,
            stale: &cheap,
            ttft_per_1k: 0.0,
        },
        Provider {
            name: "slow",
            speed: 1.4,
            stale: &slow,
            ttft_per_1k: 0.0,
        },
    ];
    paired::lines(scenarios, &providers, REPEATS, 33)
}

fn store() -> Project {
    let scenarios = Scenario::load_dir(&repo("scenarios")).unwrap();
    let project = Project::new(&[]);
    let text = lines(&scenarios);
    // The worked example of docs/metrics.md ("Equivalence") is this file imported and
    // checked: `TURNBENCH_EQUIVALENCE_JSONL=/tmp/eq.jsonl cargo test --test integration
    // equivalence::` keeps it.
    if let Ok(keep) = std::env::var("TURNBENCH_EQUIVALENCE_JSONL") {
        std::fs::write(keep, &text).unwrap();
    }
    let file = project.write("t.jsonl", &text);
    import_and_check(&project, &file);
    project
}

fn headline<'a>(r: &'a Value, kind: &str) -> &'a Value {
    r["headlines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} headline in {}", r["headlines"]))
}

fn claim<'a>(h: &'a Value, b: &str) -> &'a Value {
    h["family"]["claims"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["b"] == format!("{b} / glm-5.3-flash"))
        .unwrap_or_else(|| panic!("no claim against {b} in {h}"))
}

#[test]
fn a_cheaper_provider_is_shown_equivalent_and_a_slower_one_is_not() {
    let project = store();
    let margin = ["report", "--margin", "p50=10%,success=5"];
    let mut args = margin.to_vec();
    args.extend(["--format", "json"]);
    let r: Value = serde_json::from_str(&project.run_ok(&args).0).unwrap();

    let p50 = headline(&r, "latency_p50");
    assert_eq!(p50["family"]["leader"], "current / glm-5.3-flash", "{p50}");
    let cheap = claim(p50, "cheap");
    let e = &cheap["equivalence"];
    assert_eq!(e["margin"], 0.1, "{cheap}");
    assert_eq!(e["established"], true, "{cheap}");
    let (lo, hi) = (
        e["interval"]["lo"].as_f64().unwrap(),
        e["interval"]["hi"].as_f64().unwrap(),
    );
    assert!(1.0 / 1.1 < lo && hi < 1.1 && lo < 1.0, "{e}");
    // 40 % slower is neither equivalent nor within the margin; that difference is
    // established.
    let slow = claim(p50, "slow");
    assert_eq!(slow["equivalence"]["established"], false, "{slow}");
    assert_eq!(slow["established"], true, "{slow}");
    // No margin given for p95: no equivalence there.
    let p95 = headline(&r, "latency_p95");
    assert!(claim(p95, "cheap").get("equivalence").is_none(), "{p95}");

    let success = headline(&r, "quality_checks");
    for c in success["family"]["claims"].as_array().unwrap() {
        let e = &c["equivalence"];
        assert_eq!(e["margin"], 0.05, "{c}");
        assert_eq!(e["established"], true, "{c}");
        let (lo, hi) = (
            e["interval"]["lo"].as_f64().unwrap(),
            e["interval"]["hi"].as_f64().unwrap(),
        );
        assert!(-0.05 < lo && hi < 0.05 && lo <= 0.0 && 0.0 <= hi, "{c}");
        assert_eq!(c["established"], false, "{c}");
    }

    // The sentence and the family table say it, in every text format.
    let text = p50["text"].as_str().unwrap();
    assert!(
        text.contains("vs next cheap") && text.contains(", equivalent within ±10 %"),
        "{text}"
    );
    assert!(
        text.ends_with("; 1 of 2 leads established, equivalent to 1 (family of 3)"),
        "{text}"
    );
    let md = project
        .run_ok(&[&margin[..], &["--format", "md"]].concat())
        .0;
    assert!(md.contains("| equivalence |"), "{md}");
    assert!(md.contains("equivalent within ±10 % \\[−"), "{md}");
    assert!(md.contains("not shown equivalent within ±10 %"), "{md}");
    let terminal = project.run_ok(&[&margin[..], &["--verbose"]].concat()).0;
    assert!(
        terminal.contains("equivalent within ±5 points ["),
        "{terminal}"
    );

    // Without --margin, no claim carries an equivalence.
    let plain: Value =
        serde_json::from_str(&project.run_ok(&["report", "--format", "json"]).0).unwrap();
    assert!(!plain.to_string().contains("\"equivalence\""));
}

#[test]
fn a_malformed_margin_is_refused_naming_the_part() {
    let project = store();
    for (margin, says) in [
        (
            "success=5%",
            "`success=5%`: `success` takes points of a share, not a percentage",
        ),
        (
            "p50=10",
            "`p50=10`: `p50` takes a percentage of the latency: write p50=10%",
        ),
        ("p50=10%,speed=3", "`speed=3`: no statistic `speed`"),
        ("judge=-0.5", "`judge=-0.5`: a margin must be above 0"),
        ("kept=0", "`kept=0`: a margin must be above 0"),
    ] {
        let out = project
            .cmd(&["report", "--margin", margin])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{margin}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{margin}: {stderr}");
        assert!(
            stderr.contains("fix:") && stderr.contains("p50=10%"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty(), "{margin}: nothing is written");
    }
}
