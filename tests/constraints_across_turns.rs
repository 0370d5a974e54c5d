//! CONSTRAINTS ACROSS TURNS end to end (issue 34, item 2): transcripts with planted per-turn
//! patterns are imported, checked and reported through the CLI, and every format carries
//! the counts the plant implies.
//!
//! One five-turn scenario; a `from_turn = 2` check (`retained_constraint`) that the detail
//! `ZX-42` stays in every answer, and an unscoped one (`custom`) on the final answer. Four
//! conversations per provider:
//! - `steady` keeps the detail in every answer;
//! - `fading` drops it from turn 4 on in half its conversations;
//! - `wobbly` drops it at turn 3 in every conversation and brings it back from turn 4 on in
//!   half of those.

use crate::common::*;
use serde_json::{Value, json};

const SCENARIO: &str = r#"id = "planted"
category = "developer"
system = "Keep the ticket code in every answer."

[[turn]]
user = "Open a ticket for the outage."
reference = "Ticket opened."

[[turn]]
user = "Its code is ZX-42: mention it in every answer from now on."
reference = "Noted, ZX-42."

[[turn]]
user = "Who owns it?"
reference = "ZX-42 is owned by the platform team."

[[turn]]
user = "What is its priority?"
reference = "ZX-42 is P1."

[[turn]]
user = "Summarise it, and end with done."
reference = "ZX-42: P1, platform team. done"
"#;

const CHECKS: &str = r#"scenario = "planted"

[[check]]
id = "code-kept"
kind = "contains"
tag = "retained_constraint"
from_turn = 2
text = "ZX-42"

[[check]]
id = "ends-done"
kind = "ends_with"
tag = "custom"
text = "done"
"#;

/// One transcript: turn 1 has no code to keep; `kept[i]` says whether answer i + 2 keeps it.
fn transcript(provider: &str, repeat: u32, kept: [bool; 4]) -> String {
    transcript_in("planted", provider, repeat, kept)
}

/// [`transcript`] of a copy of the scenario named `scenario`.
fn transcript_in(scenario: &str, provider: &str, repeat: u32, kept: [bool; 4]) -> String {
    let users = [
        "Open a ticket for the outage.",
        "Its code is ZX-42: mention it in every answer from now on.",
        "Who owns it?",
        "What is its priority?",
        "Summarise it, and end with done.",
    ];
    let mut messages =
        vec![json!({"role": "system", "content": "Keep the ticket code in every answer."})];
    for (i, user) in users.iter().enumerate() {
        let code = if i == 0 {
            "the ticket"
        } else if kept[i - 1] {
            "ZX-42"
        } else {
            "that ticket"
        };
        let answer = match i {
            0 => "Ticket opened.".to_string(),
            1 => format!("Noted: {code}."),
            2 => format!("{code} is owned by the platform team."),
            3 => format!("{code} is P1."),
            _ => format!("{code}: P1, platform team. done"),
        };
        messages.push(json!({"role": "user", "content": user}));
        messages.push(json!({"role": "assistant", "content": answer, "finish_reason": "stop"}));
    }
    json!({
        "id": format!("{scenario}-{provider}-{repeat}"),
        "provider": provider,
        "model": "m1",
        "scenario": scenario,
        "repeat": repeat,
        "outcome": "completed",
        "messages": messages,
    })
    .to_string()
}

/// The planted store, imported and checked through the CLI.
fn planted() -> Project {
    let project = Project::new(&[("planted", SCENARIO)]);
    std::fs::create_dir(project.path("checks")).unwrap();
    project.write("checks/planted.toml", CHECKS);
    const ALL: [bool; 4] = [true; 4];
    let mut lines = Vec::new();
    for repeat in 1..=4 {
        lines.push(transcript("steady", repeat, ALL));
        let fades = repeat <= 2;
        lines.push(transcript("fading", repeat, [true, true, !fades, !fades]));
        let regains = repeat <= 2;
        lines.push(transcript(
            "wobbly",
            repeat,
            [true, false, regains, regains],
        ));
    }
    let file = project.write("planted.jsonl", &(lines.join("\n") + "\n"));
    project.run_ok(&["import", file.to_str().unwrap()]);
    project.run_ok(&["check"]);
    project
}

fn entry<'a>(report: &'a Value, provider: &str, tag: &str) -> &'a Value {
    report["constraint_survival"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["provider"] == provider && e["tag"] == tag)
        .unwrap_or_else(|| {
            panic!(
                "no {provider} × {tag} in {:#}",
                report["constraint_survival"]
            )
        })
}

/// (turn, scored, held) of every turn.
fn turns(e: &Value) -> Vec<(u64, u64, u64)> {
    e["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["turn"].as_u64().unwrap(),
                t["scored"].as_u64().unwrap(),
                t["held"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// (turn, at_risk, still_held) of the survival curve.
fn survival(e: &Value) -> Vec<(u64, u64, u64)> {
    e["survival"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["turn"].as_u64().unwrap(),
                t["at_risk"].as_u64().unwrap(),
                t["still_held"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn close(v: &Value, x: f64) -> bool {
    v.as_f64().is_some_and(|v| (v - x).abs() < 1e-12)
}

/// A ratio's interval holds it and has width when 0 < k < n.
fn interval_holds(v: &Value, k: u64, n: u64) {
    let lo = v["interval"][0].as_f64().unwrap();
    let hi = v["interval"][1].as_f64().unwrap();
    let x = k as f64 / n as f64;
    assert!(lo <= x && x <= hi, "{v}");
    if 0 < k && k < n {
        assert!(lo < x && x < hi, "{v}");
    }
}

#[test]
fn planted_forgetting_and_recovery_come_out_exactly_in_every_format() {
    let project = planted();

    // The conversation verdicts are what they always were: passed iff every turn passed.
    let passed = |provider: &str| {
        count(
            &project.conn(),
            &format!(
                "SELECT count(*) FROM current_check_results r JOIN conversations c ON c.id = r.conversation_id
                 JOIN targets t ON t.id = c.target_id
                 WHERE r.check_id = 'code-kept' AND r.passed = 1 AND t.provider = '{provider}'"
            ),
        )
    };
    assert_eq!(
        (passed("steady"), passed("fading"), passed("wobbly")),
        (4, 2, 0)
    );

    let (out, _) = project.run_ok(&["report", "--format", "json"]);
    let report: Value = serde_json::from_str(&out).unwrap();

    let steady = entry(&report, "steady", "retained_constraint");
    assert_eq!(steady["label"], "m1");
    assert_eq!(turns(steady), [(2, 4, 4), (3, 4, 4), (4, 4, 4), (5, 4, 4)]);
    assert_eq!(
        survival(steady),
        [(2, 4, 4), (3, 4, 4), (4, 4, 4), (5, 4, 4)]
    );
    // Three transitions × four conversations, none lost; nothing failed, nothing to recover.
    assert_eq!(
        steady["forgetting"],
        json!({"at_risk": 12, "lost": 0, "ratio": 0.0, "interval": steady["forgetting"]["interval"]})
    );
    interval_holds(&steady["forgetting"], 0, 12);
    assert_eq!(
        steady["recovery"],
        json!({"failing": 0, "recovered": 0, "ratio": null, "interval": null})
    );

    let fading = entry(&report, "fading", "retained_constraint");
    assert_eq!(turns(fading), [(2, 4, 4), (3, 4, 4), (4, 4, 2), (5, 4, 2)]);
    assert_eq!(
        survival(fading),
        [(2, 4, 4), (3, 4, 4), (4, 4, 2), (5, 4, 2)]
    );
    // Held before: 4 (2→3) + 4 (3→4) + 2 (4→5) = 10, lost 2 (at turn 4); failing 2 (at
    // turn 4), none back at 5.
    let f = &fading["forgetting"];
    assert_eq!(
        (f["at_risk"].as_u64(), f["lost"].as_u64()),
        (Some(10), Some(2))
    );
    assert!(close(&f["ratio"], 0.2), "{f}");
    interval_holds(f, 2, 10);
    let r = &fading["recovery"];
    assert_eq!(
        (r["failing"].as_u64(), r["recovered"].as_u64()),
        (Some(2), Some(0))
    );
    assert!(close(&r["ratio"], 0.0), "{r}");
    interval_holds(&fading["turns"][2], 2, 4);

    let wobbly = entry(&report, "wobbly", "retained_constraint");
    assert_eq!(turns(wobbly), [(2, 4, 4), (3, 4, 0), (4, 4, 2), (5, 4, 2)]);
    // Nobody held at every turn past turn 2: regaining does not restore survival.
    assert_eq!(
        survival(wobbly),
        [(2, 4, 4), (3, 4, 0), (4, 4, 0), (5, 4, 0)]
    );
    // Held before: 4 (2→3, all lost) + 2 (4→5) = 6, lost 4. Failing: 4 (3→4, 2 back) +
    // 2 (4→5, none back) = 6, recovered 2.
    let f = &wobbly["forgetting"];
    assert_eq!(
        (f["at_risk"].as_u64(), f["lost"].as_u64()),
        (Some(6), Some(4))
    );
    assert!(close(&f["ratio"], 4.0 / 6.0), "{f}");
    interval_holds(f, 4, 6);
    let r = &wobbly["recovery"];
    assert_eq!(
        (r["failing"].as_u64(), r["recovered"].as_u64()),
        (Some(6), Some(2))
    );
    assert!(close(&r["ratio"], 2.0 / 6.0), "{r}");
    interval_holds(r, 2, 6);

    // An unscoped check is scored on the final answer only: no transitions, so both ratios
    // are null, never 0.
    let done = entry(&report, "wobbly", "custom");
    assert_eq!(turns(done), [(5, 4, 4)]);
    assert_eq!(done["forgetting"]["ratio"], Value::Null);
    assert_eq!(done["forgetting"]["interval"], Value::Null);
    assert_eq!(done["recovery"]["ratio"], Value::Null);
    assert_eq!(
        report["constraint_survival"].as_array().unwrap().len(),
        6,
        "3 providers × 2 tags"
    );

    // The retention headline of the label: steady kept all 12 of its held transitions and
    // leads; fading (8 of 10 pooled) is named before wobbly (2 of 6). Four pairs of one
    // scenario establish nothing (the paired values are tested in the calibration bench
    // and by tests/report.rs's stores of many scenarios).
    let retention: Vec<&Value> = report["headlines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["kind"] == "constraint_retention")
        .collect();
    assert_eq!(retention.len(), 1, "{retention:?}");
    let h = retention[0];
    assert_eq!(h["model"], "m1");
    assert_eq!(h["established"], false);
    assert!(
        h["text"]
            .as_str()
            .unwrap()
            .starts_with(
                "constraints kept on m1: steady 100 % (n 4) vs next fading 80.0 % (n 4): not established: too few pairs (4/10); 0 of 2 leads established (family of 3)"
            ),
        "{h}"
    );
    let family = &h["family"];
    assert_eq!(family["leader"], "steady / m1");
    assert_eq!(family["statistic"], "retention_difference");
    let claim = |b: &str| {
        family["claims"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["b"] == b)
            .unwrap()
            .clone()
    };
    assert_eq!(family["claims"][0]["b"], "fading / m1", "{family}");
    for b in ["fading / m1", "wobbly / m1"] {
        let c = claim(b);
        assert_eq!(c["n"], 4, "{c}");
        assert_eq!(c["established"], false, "{c}");
        assert_eq!(c["reason"], "too few pairs: 4 of the 10 needed", "{c}");
    }

    // Terminal and Markdown: the section per label, each figure with its counts.
    let wanted = [
        "CONSTRAINTS ACROSS TURNS · m1",
        "20.0 % (2/10)",
        "66.7 % (4/6)",
        "33.3 % (2/6)",
        "0 % (0/12)",
        "0 % (0/4)",
        "50.0 % (2/4)",
    ];
    let (terminal, _) = project.run_ok(&["report"]);
    let (markdown, _) = project.run_ok(&["report", "--format", "md"]);
    for text in [&terminal, &markdown] {
        for w in wanted {
            assert!(text.contains(w), "{w:?} missing from:\n{text}");
        }
    }
    let row = markdown
        .lines()
        .find(|l| l.starts_with("| wobbly | retained_constraint |"))
        .unwrap_or_else(|| panic!("no wobbly row in:\n{markdown}"));
    assert_eq!(
        row,
        "| wobbly | retained_constraint | 100 % (4/4) | 0 % (0/4) | 50.0 % (2/4) | 50.0 % (2/4) | 66.7 % (4/6) | 33.3 % (2/6) |"
    );

    // CSV --turns: one row per cell × tag × turn, with the JSON's counts.
    let (csv, _) = project.run_ok(&["report", "--format", "csv", "--turns"]);
    let mut reader = ::csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    // steady, fading, wobbly: 4 turns of retained_constraint + 1 of custom each.
    assert_eq!(rows.len(), 15, "{csv}");
    let wobbly_rows: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[col("provider")] == "wobbly" && r[col("tag")] == "retained_constraint")
        .collect();
    let cells = |r: &Vec<String>, names: &[&str]| -> Vec<String> {
        names.iter().map(|n| r[col(n)].clone()).collect()
    };
    let got: Vec<Vec<String>> = wobbly_rows
        .iter()
        .map(|r| {
            cells(
                r,
                &["turn", "scored", "held", "survival_at_risk", "still_held"],
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ["2", "4", "4", "4", "4"],
            ["3", "4", "0", "4", "0"],
            ["4", "4", "2", "4", "0"],
            ["5", "4", "2", "4", "0"]
        ]
    );
    for r in &wobbly_rows {
        assert_eq!(
            cells(
                r,
                &[
                    "forgetting_at_risk",
                    "forgetting_lost",
                    "recovery_failing",
                    "recovery_recovered"
                ]
            ),
            ["6", "4", "6", "2"]
        );
        assert!(r[col("forgetting_lo")].parse::<f64>().unwrap() < 4.0 / 6.0);
    }
    let custom = rows
        .iter()
        .find(|r| r[col("provider")] == "steady" && r[col("tag")] == "custom")
        .unwrap();
    assert_eq!(
        cells(
            custom,
            &[
                "turn",
                "forgetting_ratio",
                "forgetting_lo",
                "recovery_ratio"
            ]
        ),
        ["5", "", "", ""],
        "no denominator: empty, never 0"
    );
}

/// The retention claim over many scenarios: `fading` loses the detail at turn 4 in every
/// conversation of ten copies of the scenario (each conversation keeps 1 of its 2 held
/// transitions), `steady` never; every scenario leans the same way, so the paired claim is
/// established: 1.0 against 0.5 over 20 pairs in 10 scenarios.
#[test]
fn a_provider_that_forgets_in_every_scenario_is_established_as_keeping_less() {
    let ids: Vec<String> = (0..10).map(|k| format!("planted-{k}")).collect();
    let scenarios: Vec<(String, String)> = ids
        .iter()
        .map(|id| {
            (
                id.clone(),
                SCENARIO.replace("id = \"planted\"", &format!("id = \"{id}\"")),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = scenarios
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let project = Project::new(&refs);
    std::fs::create_dir(project.path("checks")).unwrap();
    let mut lines = Vec::new();
    for id in &ids {
        project.write(
            &format!("checks/{id}.toml"),
            &CHECKS.replace("scenario = \"planted\"", &format!("scenario = \"{id}\"")),
        );
        for repeat in 1..=2 {
            lines.push(transcript_in(id, "steady", repeat, [true; 4]));
            lines.push(transcript_in(
                id,
                "fading",
                repeat,
                [true, true, false, false],
            ));
        }
    }
    let file = project.write("many.jsonl", &(lines.join("\n") + "\n"));
    project.run_ok(&["import", file.to_str().unwrap()]);
    project.run_ok(&["check"]);
    let (out, _) = project.run_ok(&["report", "--format", "json"]);
    let report: Value = serde_json::from_str(&out).unwrap();
    let h = report["headlines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "constraint_retention")
        .unwrap();
    let c = &h["family"]["claims"][0];
    assert_eq!(
        (c["a"].as_str(), c["b"].as_str()),
        (Some("steady / m1"), Some("fading / m1"))
    );
    assert_eq!(
        (c["n"].as_u64(), c["scenarios"].as_u64()),
        (Some(20), Some(10)),
        "{c}"
    );
    assert!(
        close(&c["a_value"], 1.0) && close(&c["b_value"], 0.5),
        "{c}"
    );
    assert!(close(&c["estimate"], 0.5), "{c}");
    assert_eq!(c["established"], true, "{c}");
    assert_eq!(h["established"], true, "{h}");
    assert!(
        h["text"].as_str().unwrap().starts_with(
            "constraints kept on m1: steady 100 % vs next fading 50.0 % over 20 pairs: +50.0 points"
        ) && h["text"].as_str().unwrap().ends_with(", established"),
        "{h}"
    );
}
