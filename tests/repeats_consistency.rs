//! CONSISTENCY ACROSS REPEATS end to end (issue 34, item 3): transcripts with planted
//! identical and differing repeats are imported, checked and reported through the CLI, and
//! every format carries the counts the plant implies.
//!
//! Two three-turn scenarios: `s1` with a `from_turn = 1` check that `ZX-42` is in every
//! answer and an unscoped one that the final answer ends with `done`; `s2` without checks.
//! - `steady`: five repeats of each scenario, all answers identical.
//! - `drifty`: five repeats of `s1`: 1–3 identical; 4 and 5 differ from them (and from each
//!   other) at turn 2 and then give the same turn-3 answer, which is no pair (their requests
//!   differed); 4 drops the code at turn 2. Two repeats of `s2` that differ at turn 1 and
//!   then answer identically: those later turns are no pairs either.

use crate::common::*;
use serde_json::{Value, json};

const S1: &str = r#"id = "s1"
category = "developer"
system = "Keep the ticket code in every answer."

[[turn]]
user = "Open ticket ZX-42 for the outage."
reference = "ZX-42 opened."

[[turn]]
user = "Who owns it?"
reference = "ZX-42 is owned by the platform team."

[[turn]]
user = "Summarise it, and end with done."
reference = "ZX-42: P1, platform team. done"
"#;

const S2: &str = r#"id = "s2"
category = "developer"

[[turn]]
user = "Say one."
reference = "One."

[[turn]]
user = "Say two."
reference = "Two."

[[turn]]
user = "Say three."
reference = "Three."
"#;

const CHECKS: &str = r#"scenario = "s1"

[[check]]
id = "code-kept"
kind = "contains"
tag = "retained_constraint"
from_turn = 1
text = "ZX-42"

[[check]]
id = "ends-done"
kind = "ends_with"
tag = "custom"
text = "done"
"#;

const KEEPS: [&str; 3] = [
    "ZX-42 opened.",
    "ZX-42 is owned by the platform team.",
    "ZX-42: P1, platform team. done",
];
const COUNTS: [&str; 3] = ["One.", "Two.", "Three."];

fn transcript(provider: &str, scenario: &str, repeat: u32, answers: [&str; 3]) -> String {
    let (system, users): (Option<&str>, [&str; 3]) = if scenario == "s1" {
        (
            Some("Keep the ticket code in every answer."),
            [
                "Open ticket ZX-42 for the outage.",
                "Who owns it?",
                "Summarise it, and end with done.",
            ],
        )
    } else {
        (None, ["Say one.", "Say two.", "Say three."])
    };
    let mut messages: Vec<Value> = system
        .map(|s| json!({"role": "system", "content": s}))
        .into_iter()
        .collect();
    for (user, answer) in users.iter().zip(answers) {
        messages.push(json!({"role": "user", "content": user}));
        messages.push(json!({"role": "assistant", "content": answer, "finish_reason": "stop"}));
    }
    json!({
        "id": format!("{provider}-{scenario}-{repeat}"),
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
    let project = Project::new(&[("s1", S1), ("s2", S2)]);
    std::fs::create_dir(project.path("checks")).unwrap();
    project.write("checks/s1.toml", CHECKS);
    let mut lines = Vec::new();
    for repeat in 1..=5 {
        lines.push(transcript("steady", "s1", repeat, KEEPS));
        lines.push(transcript("steady", "s2", repeat, COUNTS));
        let drifty = match repeat {
            1..=3 => KEEPS,
            4 => [
                KEEPS[0],
                "That ticket is owned by the platform team.",
                "ZX-42: P1, platform team.",
            ],
            _ => [
                KEEPS[0],
                "ZX-42 belongs to the platform team.",
                "ZX-42: P1, platform team.",
            ],
        };
        lines.push(transcript("drifty", "s1", repeat, drifty));
    }
    lines.push(transcript("drifty", "s2", 1, COUNTS));
    lines.push(transcript(
        "drifty",
        "s2",
        2,
        ["Uno.", COUNTS[1], COUNTS[2]],
    ));
    let file = project.write("planted.jsonl", &(lines.join("\n") + "\n"));
    project.run_ok(&["import", file.to_str().unwrap()]);
    project.run_ok(&["check"]);
    project
}

fn entry<'a>(report: &'a Value, provider: &str) -> &'a Value {
    report["consistency"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["provider"] == provider)
        .unwrap_or_else(|| panic!("no {provider} in {:#}", report["consistency"]))
}

/// (pairs, matching, scenarios) of a share.
fn counts(s: &Value) -> (u64, u64, u64) {
    (
        s["pairs"].as_u64().unwrap(),
        s["matching"].as_u64().unwrap(),
        s["scenarios"].as_u64().unwrap(),
    )
}

/// (turn, answer pairs, identical, verdict pairs, agreeing) of every turn.
fn turns(e: &Value) -> Vec<(u64, u64, u64, u64, u64)> {
    e["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let (a, v) = (counts(&t["answers"]), counts(&t["verdicts"]));
            (t["turn"].as_u64().unwrap(), a.0, a.1, v.0, v.1)
        })
        .collect()
}

fn close(v: &Value, x: f64) -> bool {
    v.as_f64().is_some_and(|v| (v - x).abs() < 1e-12)
}

#[test]
fn planted_repeats_come_out_exactly_in_every_format() {
    let project = planted();
    let (out, _) = project.run_ok(&["report", "--format", "json"]);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["consistency"].as_array().unwrap().len(), 2);

    // steady: C(5, 2) = 10 pairs per turn and scenario, all identical: 60 of 60 from two
    // scenarios; verdicts only in s1: code-kept at 3 turns and ends-done at turn 3, 40.
    let steady = entry(&report, "steady");
    assert_eq!(steady["label"], "m1");
    assert_eq!(steady["simulated"], false);
    assert_eq!(steady["scenarios"], 2);
    assert_eq!(counts(&steady["answers"]), (60, 60, 2));
    assert!(close(&steady["answers"]["share"], 1.0));
    // Every pair identical: the clustered interval is Wilson(60, 60) (Python, score formula).
    assert!(close(&steady["answers"]["interval"][0], 0.93982814785791));
    assert!(close(&steady["answers"]["interval"][1], 1.0));
    assert_eq!(counts(&steady["verdicts"]), (40, 40, 1));
    assert_eq!(steady["verdicts"]["interval"], Value::Null, "one scenario");
    assert_eq!(
        turns(steady),
        [
            (1, 20, 20, 10, 10),
            (2, 20, 20, 10, 10),
            (3, 20, 20, 20, 20)
        ]
    );

    // drifty, s1: turn 1, 10 pairs, all identical; turn 2, 10 pairs (every turn-1 answer was
    // the same), identical the 3 among repeats 1–3; turn 3, only those 3 pairs (4 and 5
    // answered alike, but after different answers). s2: 1 pair at turn 1, differing; its
    // identical later answers are no pairs. 24 pairs, 16 identical.
    let drifty = entry(&report, "drifty");
    assert_eq!(counts(&drifty["answers"]), (24, 16, 2));
    assert!(close(&drifty["answers"]["share"], 16.0 / 24.0));
    // Clusters (16 of 23) and (0 of 1): the design effect is below 1, so Wilson(16, 24).
    assert!(close(&drifty["answers"]["interval"][0], 0.4670631683813174));
    assert!(close(&drifty["answers"]["interval"][1], 0.8202780967270225));
    // Verdicts: turn 1, 10 agreeing; turn 2, repeat 4 failed code-kept: 6 of 10 agree;
    // turn 3, 3 pairs × 2 checks, all agree. 22 of 26.
    assert_eq!(counts(&drifty["verdicts"]), (26, 22, 1));
    assert_eq!(
        turns(drifty),
        [(1, 11, 10, 10, 10), (2, 10, 3, 10, 6), (3, 3, 3, 6, 6)]
    );

    // Spread: s1 only (s2 has no checks). steady: every repeat passes both checks. drifty:
    // task success 1, 1, 1, 0 (repeat 4 failed both), 0.5 (repeat 5 failed ends-done);
    // sorted 0, 0.5, 1, 1, 1: P10 at rank 0.4 = 0.2, P90 at rank 3.6 = 1.
    let s = &steady["spread"];
    assert_eq!(
        (s["scenarios"].as_u64(), s["repeats"].as_u64()),
        (Some(1), Some(5))
    );
    assert!(
        close(&s["aptitude"], 1.0) && close(&s["unreliability"], 0.0),
        "{s}"
    );
    let d = &drifty["spread"];
    assert_eq!(
        (d["scenarios"].as_u64(), d["repeats"].as_u64()),
        (Some(1), Some(5))
    );
    assert!(close(&d["aptitude"], 1.0), "{d}");
    assert!(close(&d["unreliability"], 0.8), "{d}");
    assert_eq!(d["by_scenario"][0]["scenario"], "s1");
    assert!(close(&d["by_scenario"][0]["p10"], 0.2));
    assert!(close(&d["by_scenario"][0]["p90"], 1.0));

    // The shape other tools read, and the schema that documents it.
    let errors = crate::common::schema_violations(&report);
    assert!(errors.is_empty(), "{errors:#?}");
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(drifty),
        [
            "answers",
            "label",
            "provider",
            "scenarios",
            "simulated",
            "spread",
            "turns",
            "verdicts"
        ]
    );
    assert_eq!(
        keys(&drifty["answers"]),
        ["interval", "matching", "pairs", "scenarios", "share"]
    );
    assert_eq!(keys(&drifty["turns"][0]), ["answers", "turn", "verdicts"]);
    assert_eq!(
        keys(d),
        [
            "aptitude",
            "by_scenario",
            "min_repeats",
            "repeats",
            "scenarios",
            "unreliability"
        ]
    );
    assert_eq!(d["min_repeats"], 5);

    // Terminal, Markdown and HTML: the section with each figure's counts and n.
    let wanted = [
        "CONSISTENCY ACROSS REPEATS · m1",
        "66.7 % [46.7, 82.0] (16/24)",
        "84.6 % (22/26)",
        "30.0 % (3/10)",
        "100 % (n 1)",
        "80.0 % (n 1)",
    ];
    let (terminal, _) = project.run_ok(&["report"]);
    let (markdown, _) = project.run_ok(&["report", "--format", "md"]);
    let (html, _) = project.run_ok(&["report", "--format", "html"]);
    for text in [&terminal, &html] {
        for w in wanted {
            assert!(text.contains(w), "{w:?} missing from:\n{text}");
        }
    }
    // Markdown escapes brackets.
    for w in wanted {
        let w = w.replace('[', "\\[").replace(']', "\\]");
        assert!(markdown.contains(&w), "{w:?} missing from:\n{markdown}");
    }
    let row = markdown
        .lines()
        .find(|l| l.starts_with("| drifty |") && l.contains("(16/24)"))
        .unwrap_or_else(|| panic!("no drifty row in:\n{markdown}"));
    assert_eq!(
        row,
        "| drifty | 2 | 66.7 % \\[46.7, 82.0\\] (16/24) | 84.6 % (22/26) | 90.9 % (10/11) | 30.0 % (3/10) | 100 % (3/3) | 100 % (n 1) | 80.0 % (n 1) |"
    );

    // CSV: the cell rows end with the same counts.
    let (csv, _) = project.run_ok(&["report", "--format", "csv"]);
    let mut reader = ::csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    let drifty_row = rows
        .iter()
        .find(|r| r[col("provider")] == "drifty")
        .unwrap();
    let got: Vec<&str> = [
        "repeat_scenarios",
        "answer_pairs",
        "answers_identical",
        "verdict_pairs",
        "verdicts_agree",
        "verdicts_agree_lo",
        "spread_scenarios",
        "spread_repeats",
        "aptitude_p90",
        "unreliability_p90_p10",
    ]
    .iter()
    .map(|n| drifty_row[col(n)].as_str())
    .collect();
    assert_eq!(got, ["2", "24", "16", "26", "22", "", "1", "5", "1", "0.8"]);
}

#[test]
fn without_repeats_the_section_is_empty_not_zero() {
    let project = Project::new(&[("s1", S1)]);
    let file = project.write(
        "one.jsonl",
        &(transcript("solo", "s1", 1, KEEPS) + "\n" + &transcript("other", "s1", 1, KEEPS)),
    );
    project.run_ok(&["import", file.to_str().unwrap()]);
    let (out, _) = project.run_ok(&["report", "--format", "json"]);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["consistency"], json!([]));
    let (terminal, _) = project.run_ok(&["report"]);
    assert!(
        !terminal.contains("CONSISTENCY ACROSS REPEATS"),
        "{terminal}"
    );
}
