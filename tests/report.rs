//! `turnbench report` through the binary, over stores built the way users build them:
//! transcripts imported from a file, then `check` and the mock `judge`.
//!
//! The fixture is generated here, deterministically: two real scenarios (so their checks
//! apply), three cells (`acme` and `nimbus` serving one model label, `acme` a second one),
//! twelve repeats each, timings that make `acme` consistently faster, and failures of
//! several classes. Its Markdown and JSON reports are compared with snapshots in
//! `tests/snapshots/` (`UPDATE_SNAPSHOTS=1 cargo test --test integration report::` rewrites them).

use std::path::{Path, PathBuf};

use crate::common::*;
use serde_json::{Value, json};
use turnbench::checks::JsonSchema;
use turnbench::config::Scenario;

const SCENARIOS: [&str; 2] = ["struct-invoice-extraction", "biz-policy-faq"];
const REPEATS: u32 = 6;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn scenario(id: &str) -> Scenario {
    Scenario::load(&repo(&format!("scenarios/{id}.toml"))).unwrap()
}

/// How a fixture conversation goes wrong, if it does.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// Turn 2 (0-based) is cut mid-stream.
    StreamCut,
    /// The first turn is rate limited.
    RateLimited,
    /// The last turn spends its budget on reasoning: no answer, finish_reason length.
    ReasoningBudget,
    /// Turn 1 answers with the old value (a stale answer the checks catch).
    Stale,
}

struct Cell {
    provider: &'static str,
    model: &'static str,
    /// Multiplies every time: 1.0 is the fastest.
    slowness: f64,
    cached: bool,
    fault: fn(usize, u32) -> Fault,
}

fn cells() -> Vec<Cell> {
    vec![
        Cell {
            provider: "acme",
            model: "m-x",
            slowness: 1.0,
            cached: true,
            fault: |s, r| {
                if s == 1 && r == 4 {
                    Fault::Stale
                } else {
                    Fault::None
                }
            },
        },
        Cell {
            provider: "nimbus",
            model: "m-x",
            slowness: 1.3,
            cached: false,
            fault: |s, r| match (s, r) {
                (0, 2) => Fault::StreamCut,
                (1, 5) => Fault::RateLimited,
                (0, 3) | (1, 1) => Fault::Stale,
                _ => Fault::None,
            },
        },
        Cell {
            provider: "acme",
            model: "m-y",
            slowness: 0.7,
            cached: true,
            fault: |s, r| {
                if s == 0 && r == 6 {
                    Fault::ReasoningBudget
                } else {
                    Fault::None
                }
            },
        },
    ]
}

/// One conversation in the exchange format.
fn conversation(cell: &Cell, s: usize, repeat: u32, sc: &Scenario) -> Value {
    let fault = (cell.fault)(s, repeat);
    let mut messages = vec![json!({"role": "system", "content": sc.system})];
    let mut prompt_tokens = 60;
    let last = sc.turns.len() - 1;
    for (t, turn) in sc.turns.iter().enumerate() {
        messages.push(json!({"role": "user", "content": turn.user}));
        // Scenario difficulty and repeat vary the time; the provider scales it.
        let base = 600.0 + 900.0 * s as f64 + 120.0 * t as f64 + 37.0 * f64::from(repeat % 5);
        let e2e = (base * cell.slowness * 100.0).round() / 100.0;
        let ttft = (e2e * 0.18 * 100.0).round() / 100.0;
        let reference = turn.reference.clone().unwrap_or_default();
        prompt_tokens += 180;
        let cached = if cell.cached && t > 0 {
            json!(prompt_tokens - 150)
        } else {
            Value::Null
        };
        let usage = json!({"prompt_tokens": prompt_tokens, "completion_tokens": 90, "cached_tokens": cached});
        let timing = json!({"ttft_ms": ttft, "ttfa_ms": ttft + 15.0, "e2e_ms": e2e});
        match fault {
            Fault::RateLimited if t == 0 => {
                messages.push(
                    json!({"role": "assistant", "content": null, "outcome": "rate_limited",
                    "http_status": 429, "error": "HTTP 429: slow down"}),
                );
                break;
            }
            Fault::StreamCut if t == 2 => {
                messages.push(
                    json!({"role": "assistant", "content": &reference[..reference.len() / 3],
                    "outcome": "stream_cut", "error": "stream closed before a finish reason",
                    "timing": timing}),
                );
                break;
            }
            Fault::ReasoningBudget if t == last => {
                messages.push(json!({"role": "assistant", "content": null, "reasoning": "Let me think at length...",
                    "finish_reason": "length", "timing": {"ttft_ms": ttft, "e2e_ms": e2e}, "usage": usage}));
                break;
            }
            Fault::Stale if t == 1 => {
                let stale = sc.turns[0].reference.clone().unwrap_or_default();
                messages.push(
                    json!({"role": "assistant", "content": stale, "finish_reason": "stop",
                    "timing": timing, "usage": usage}),
                );
            }
            _ => messages.push(
                json!({"role": "assistant", "content": reference, "finish_reason": "stop",
                "timing": timing, "usage": usage}),
            ),
        }
    }
    json!({
        "id": format!("{}-{}-{}-{repeat}", cell.provider, cell.model, sc.id),
        "provider": cell.provider, "model": cell.model, "scenario": sc.id, "repeat": repeat,
        "messages": messages,
    })
}

fn fixture_lines() -> String {
    let scenarios: Vec<Scenario> = SCENARIOS.iter().map(|id| scenario(id)).collect();
    let mut out = String::new();
    for cell in cells() {
        for (s, sc) in scenarios.iter().enumerate() {
            for repeat in 1..=REPEATS {
                out.push_str(&conversation(&cell, s, repeat, sc).to_string());
                out.push('\n');
            }
        }
    }
    out
}

/// A project holding the fixture store: imported, checked and (optionally) judged.
fn fixture(judged: bool) -> Project {
    let project = Project::new(&[]);
    let file = project.write("fixture.jsonl", &fixture_lines());
    import_and_check(&project, &file);
    if judged {
        project.run_ok(&[
            "judge",
            "--judge",
            repo("judges/mock.toml").to_str().unwrap(),
            "--rubric",
            repo("rubrics/multiturn-quality.toml").to_str().unwrap(),
            "--scenarios",
            repo("scenarios").to_str().unwrap(),
        ]);
    }
    project
}

fn report(project: &Project, args: &[&str]) -> String {
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    project.run_ok(&all).0
}

fn json_report(project: &Project, args: &[&str]) -> Value {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    serde_json::from_str(&report(project, &all)).unwrap()
}

/// What changes from run to run: the time, and where the store is.
fn normalise(text: &str, project: &Project) -> String {
    let mut out = text.replace(project.db().to_str().unwrap(), "STORE");
    for (start, len) in [("\"generated_at\": \"", 24), ("generated ", 24)] {
        while let Some(i) = out.find(start) {
            let at = i + start.len();
            if out.get(at..at + len).is_none_or(|s| s.starts_with("TIME")) {
                break;
            }
            out.replace_range(at..at + len, "TIME                    ");
        }
    }
    // Dates in the run card and import run start times.
    let date = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z").unwrap();
    let out = date.replace_all(&out, "TIME");
    let day = regex::Regex::new(r"· \d{4}-\d\d-\d\d ·").unwrap();
    let out = day.replace_all(&out, "· DAY ·");
    // An import run's settings name its file, whose temp path differs per run.
    let hash = regex::Regex::new(r#""settings_hash": "[0-9a-f]{16}""#).unwrap();
    hash.replace_all(&out, r#""settings_hash": "HASH""#)
        .into_owned()
}

fn snapshot(name: &str, actual: &str) {
    let path = repo(&format!("tests/snapshots/{name}"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected != actual {
        let new = repo(&format!("tests/snapshots/{name}.new"));
        std::fs::write(&new, actual).unwrap();
        panic!(
            "{name} differs from its snapshot; the new output is in {}\n  (UPDATE_SNAPSHOTS=1 cargo test --test integration report:: accepts it)",
            new.display()
        );
    }
}

#[test]
fn the_fixture_store_gives_its_known_report() {
    let project = fixture(true);
    let md = report(&project, &["--format", "md"]);
    snapshot("report.md", &normalise(&md, &project));
    let json = report(&project, &["--format", "json"]);
    snapshot("report.json", &normalise(&json, &project));
}

#[test]
fn the_terminal_report_fits_100_columns() {
    let project = fixture(true);
    let text = report(&project, &[]);
    for line in text.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    assert!(text.starts_with("turnbench report · store"), "{text}");
    // --quiet silences stderr, never the report.
    let quiet = project.run_ok(&["--quiet", "report"]);
    assert_eq!(quiet.0, text);
    assert_eq!(quiet.1, "");
    let md = project.run_ok(&["-q", "report", "--format", "md"]).0;
    assert!(md.starts_with("# turnbench report"), "{md}");
    assert!(md.contains("## Headlines"), "{md}");
    // No blank line inside a table: a row with nothing in a column group is left out.
    let blank_in_table = text
        .split("\n\n")
        .any(|block| block.lines().skip(1).any(|l| l.trim().is_empty()));
    assert!(!blank_in_table, "{text}");
}

#[test]
fn counts_add_up_to_the_store_and_failures_stay_out_of_latency() {
    let project = fixture(true);
    let text = report(&project, &["--format", "json"]);
    let r: Value = serde_json::from_str(&text).unwrap();
    let conn = project.conn();
    let cells = r["cells"].as_array().unwrap();
    let sum = |f: &dyn Fn(&Value) -> u64| cells.iter().map(f).sum::<u64>();
    let stored = count(
        &conn,
        "SELECT COUNT(*) FROM conversation_facts WHERE counts",
    ) as u64;
    assert_eq!(
        sum(&|c| c["reliability"]["attempted"].as_u64().unwrap()
            + c["reliability"]["interrupted"].as_u64().unwrap()),
        stored
    );
    let completed = count(
        &conn,
        "SELECT COUNT(*) FROM conversations WHERE outcome = 'completed'",
    );
    assert_eq!(
        sum(&|c| c["reliability"]["completed"].as_u64().unwrap()),
        completed as u64
    );
    let turns = count(&conn, "SELECT COUNT(*) FROM turns") as u64;
    assert_eq!(
        sum(&|c| c["reliability"]["turns_sent"].as_u64().unwrap()),
        turns
    );
    for c in cells {
        let rel = &c["reliability"];
        let failures: u64 = rel["failures"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(
            rel["completed"].as_u64().unwrap() + failures,
            rel["attempted"].as_u64().unwrap()
        );
        // Latency n is exactly the completed conversations: no failed one enters.
        assert_eq!(
            c["conversation_latency"]["n"].as_u64(),
            rel["completed"].as_u64(),
            "{}",
            c["provider"]
        );
    }
    // The expected failures, by class, where they were injected.
    let cell = |p: &str, m: &str| {
        cells
            .iter()
            .find(|c| c["provider"] == p && c["model"] == m)
            .unwrap()
    };
    assert_eq!(
        cell("nimbus", "m-x")["reliability"]["failures"],
        json!({"rate_limited": 1, "stream_cut": 1})
    );
    assert_eq!(
        cell("acme", "m-y")["reliability"]["failures"],
        json!({"truncated": 1})
    );
    assert_eq!(cell("acme", "m-y")["flags"]["reasoning_used_budget"], 1);
    // Cached tokens where reported; "not reported" (null), never 0 %, where not.
    assert!(cell("acme", "m-x")["cache"]["hit_rate"].as_f64().unwrap() > 0.5);
    assert_eq!(cell("nimbus", "m-x")["cache"]["hit_rate"], Value::Null);
    // Stale answers fail checks: the cell with more of them passes fewer.
    let pass = |p: &str| cell(p, "m-x")["checks"]["pass"]["value"].as_f64().unwrap();
    assert!(pass("acme") > pass("nimbus"));
    // The per-conversation rows agree with the cells.
    let rows = r["conversations"].as_array().unwrap();
    assert_eq!(rows.len() as u64, stored);
    let failed_in_latency = rows
        .iter()
        .filter(|row| row["outcome"] != "completed" && !row["latency_ms"].is_null())
        .count();
    assert_eq!(failed_in_latency, 0);
    // The rows come last, one a line (docs/report.md, "Formats"): each line is a row whole.
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("    {\"id\":"))
        .collect();
    assert_eq!(lines.len(), rows.len());
    for (line, row) in lines.iter().zip(rows) {
        let one: Value = serde_json::from_str(line.trim().trim_end_matches(',')).unwrap();
        assert_eq!(&one, row);
    }
    assert!(text.trim_end().ends_with("\n  ]\n}"), "{text}");
    // `--conversations none`: the summary without the rows, every other figure the same.
    let summary = json_report(&project, &["--conversations", "none"]);
    assert!(summary.get("conversations").is_none(), "{summary}");
    for key in ["headlines", "cells", "checks", "consistency", "notes"] {
        assert_eq!(summary[key], r[key], "{key}");
    }
}

/// Lines of `cells` over `scenarios` distinct scenario ids (no checks apply to them), with
/// the timings of scenario `s` scaled by `speed(provider, s, repeat)`.
fn many_scenarios(
    providers: &[&'static str],
    scenarios: usize,
    repeats: u32,
    speed: impl Fn(&str, usize, u32) -> f64,
) -> String {
    let sc = scenario(SCENARIOS[0]);
    let mut out = String::new();
    for &provider in providers {
        for s in 0..scenarios {
            for repeat in 1..=repeats {
                let cell = Cell {
                    provider,
                    model: "m-x",
                    slowness: 1.0,
                    cached: false,
                    fault: |_, _| Fault::None,
                };
                let mut line = conversation(&cell, 0, repeat, &sc);
                let factor = speed(provider, s, repeat);
                for m in line["messages"].as_array_mut().unwrap() {
                    if let Some(t) = m.get_mut("timing") {
                        for k in ["ttft_ms", "ttfa_ms", "e2e_ms"] {
                            let v = t[k].as_f64().unwrap();
                            t[k] = json!(v * factor);
                        }
                    }
                }
                line["scenario"] = json!(format!("s-{s}"));
                line["id"] = json!(format!("{provider}-s{s}-{repeat}"));
                out.push_str(&line.to_string());
                out.push('\n');
            }
        }
    }
    out
}

fn latency_headline(r: &Value, kind: &str) -> Value {
    r["headlines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == kind && h["model"] == "m-x")
        .cloned()
        .unwrap()
}

#[test]
fn a_consistent_speed_difference_over_many_scenarios_is_established() {
    // 12 scenarios × 2 repeats; nimbus 1.3× slower, scenarios differ by up to 3×.
    let project = Project::new(&[]);
    let lines = many_scenarios(&["acme", "nimbus"], 12, 2, |p, s, r| {
        let scenario = 1.0 + 0.18 * s as f64 + 0.03 * f64::from(r);
        // Noise of ±10 % that differs per provider, scenario and repeat.
        let k = if p == "nimbus" { 5 } else { 2 };
        let noise = 1.0 + 0.05 * (((s * 7 + r as usize * 3 + k) % 5) as f64 - 2.0);
        scenario * noise * if p == "nimbus" { 1.3 } else { 1.0 }
    });
    let file = project.write("t.jsonl", &lines);
    project.run_ok(&["import", file.to_str().unwrap()]);
    let r = json_report(&project, &[]);
    let p50 = latency_headline(&r, "latency_p50");
    assert_eq!(p50["established"], true, "{p50}");
    let f = &p50["family"];
    assert_eq!(f["leader"], "acme / m-x");
    assert_eq!(f["comparisons"], 1);
    let claim = &f["claims"][0];
    assert_eq!(claim["b"], "nimbus / m-x");
    assert_eq!(claim["n"], 24);
    assert_eq!(claim["scenarios"], 12);
    // The ratio of the p50s over the pairs, 1/1.3, and its interval below 1.
    assert!(
        (claim["estimate"].as_f64().unwrap() - 1.0 / 1.3).abs() < 0.05,
        "{claim}"
    );
    assert!(claim["interval"]["hi"].as_f64().unwrap() < 1.0);
    assert!(claim["adjusted_p"].as_f64().unwrap() <= 0.05);
    let text = p50["text"].as_str().unwrap();
    assert!(
        text.contains(" vs next nimbus ") && text.contains("], established"),
        "{text}"
    );
    assert!(text.contains("% lower ["), "{text}");
    // 24 pairs are too few for a p95 (40 needed): said, never established.
    let p95 = latency_headline(&r, "latency_p95");
    assert_eq!(p95["established"], false);
    assert!(
        p95["text"]
            .as_str()
            .unwrap()
            .contains("not established: too few pairs (24/40)"),
        "{p95}"
    );
}

#[test]
fn two_scenarios_do_not_establish_a_difference_however_many_repeats() {
    // The fixture: acme consistently faster, but its 10 pairs come from 2 scenarios, and a
    // scenario is the unit that varies: at best p = 0.5.
    let project = fixture(false);
    let r = json_report(&project, &[]);
    let p50 = latency_headline(&r, "latency_p50");
    assert_eq!(p50["established"], false, "{p50}");
    let claim = &p50["family"]["claims"][0];
    assert_eq!(claim["n"], 10);
    assert_eq!(claim["scenarios"], 2);
    assert!(claim["adjusted_p"].as_f64().unwrap() >= 0.5, "{claim}");
    // Only one provider serves m-y: nothing to compare there.
    let heads = r["headlines"].as_array().unwrap();
    assert!(
        !heads
            .iter()
            .any(|h| h["model"] == "m-y" && h["kind"] == "latency_p50")
    );
}

#[test]
fn one_or_two_conversations_per_cell_establish_nothing() {
    for per_cell in [1, 2] {
        let project = Project::new(&[]);
        // alpha is 3× slower than beta, and beta passes every check where alpha fails them.
        let lines = many_scenarios(&["alpha", "beta"], per_cell, 1, |p, _, _| {
            if p == "alpha" { 3.0 } else { 1.0 }
        });
        let file = project.write("t.jsonl", &lines);
        project.run_ok(&["import", file.to_str().unwrap()]);
        let r = json_report(&project, &[]);
        let mut claims = 0;
        for h in r["headlines"].as_array().unwrap() {
            assert_ne!(h["established"], true, "{h}");
            for c in h["family"]["claims"].as_array().into_iter().flatten() {
                claims += 1;
                assert_eq!(c["established"], false, "{c}");
                // Never a zero-width interval.
                if let Some(i) = c["interval"].as_object() {
                    assert!(i["lo"] != i["hi"], "{c}");
                }
            }
        }
        // The latency p50 and p95, reliability and TTFT-slope families each compare alpha
        // with beta.
        assert_eq!(claims, 4, "{per_cell} per cell: {}", r["headlines"]);
    }
}

#[test]
fn a_difference_the_pairs_do_not_support_is_not_established() {
    // Same medians apart, but nimbus is faster on half the pairs and slower on the rest.
    let project = Project::new(&[]);
    let sc = scenario(SCENARIOS[0]);
    let mut lines = String::new();
    for (provider, flip) in [("acme", false), ("nimbus", true)] {
        for repeat in 1..=8u32 {
            let mut line = conversation(
                &Cell {
                    provider,
                    model: "m-x",
                    slowness: 1.0,
                    cached: false,
                    fault: |_, _| Fault::None,
                },
                0,
                repeat,
                &sc,
            );
            // Scale each conversation: alternately faster and slower for nimbus.
            let factor = match (flip, repeat % 2) {
                (false, _) => 1.0,
                (true, 0) => 0.7,
                (true, _) => 1.35,
            };
            for m in line["messages"].as_array_mut().unwrap() {
                if let Some(t) = m.get_mut("timing") {
                    for k in ["ttft_ms", "ttfa_ms", "e2e_ms"] {
                        let v = t[k].as_f64().unwrap();
                        t[k] = json!(v * factor);
                    }
                }
            }
            lines.push_str(&line.to_string());
            lines.push('\n');
        }
    }
    let file = project.write("t.jsonl", &lines);
    project.run_ok(&["import", file.to_str().unwrap()]);
    let r = json_report(&project, &[]);
    let p50 = r["headlines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "latency_p50")
        .unwrap();
    assert_eq!(p50["established"], false, "{p50}");
    assert!(p50["text"].as_str().unwrap().contains("not established"));
}

#[test]
fn the_json_report_matches_its_schema() {
    let project = fixture(true);
    let r = json_report(&project, &[]);
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(repo("docs/report.schema.json")).unwrap())
            .unwrap();
    let validator = JsonSchema::compile(&schema).unwrap();
    let errors: Vec<String> = validator
        .violations(&r)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The schema is strict enough to catch a missing section.
    let mut broken = r.clone();
    broken.as_object_mut().unwrap().remove("cells");
    assert!(!validator.is_valid(&broken));
}

#[test]
fn hostile_names_and_answers_come_out_inert() {
    let project = Project::new(&[]);
    let evil_provider = "<script>alert(1)</script>";
    let evil_model = "\"><img src=x onerror=alert(2)>";
    let evil_scenario = "=HYPERLINK(\"http://evil.example\",\"x\")";
    let mut lines = String::new();
    for (provider, model) in [
        (evil_provider, evil_model),
        ("+cmd|' /C calc'!A0", "@SUM(1)"),
        ("\u{1b}[31mred", "-2+3"),
    ] {
        for repeat in 1..=3 {
            let line = json!({
                "provider": provider, "model": model, "scenario": evil_scenario, "repeat": repeat,
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "<script>alert(3)</script> =1+1",
                     "timing": {"ttft_ms": 10.0 * f64::from(repeat), "e2e_ms": 100.0 * f64::from(repeat)}}
                ]
            });
            lines.push_str(&line.to_string());
            lines.push('\n');
        }
    }
    let file = project.write("evil.jsonl", &lines);
    project.run_ok(&["import", file.to_str().unwrap()]);

    let html = report(&project, &["--format", "html"]);
    for raw in ["<script>alert", "<img src=x", "onerror=alert(2)>"] {
        assert!(!html.contains(raw), "{raw} reached the HTML unescaped");
    }
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(
        !html.contains("<script"),
        "no script of any kind in the page"
    );

    let csv_text = report(&project, &["--format", "csv"]);
    let mut rdr = csv::Reader::from_reader(csv_text.as_bytes());
    for row in rdr.records() {
        for cell in row.unwrap().iter() {
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "formula-like CSV cell {cell:?}"
            );
        }
    }
    assert!(csv_text.contains("'+cmd"));
    assert!(csv_text.contains("'@SUM(1)"));

    let md = report(&project, &["--format", "md"]);
    assert!(!md.contains("<script>") && !md.contains("<img"));

    let terminal = report(&project, &[]);
    assert!(
        !terminal.contains('\u{1b}'),
        "no raw escape reaches the terminal"
    );
    assert!(terminal.contains("\\u{1b}[31mred"));
}

#[test]
fn a_store_of_transcripts_without_timings_gives_a_report_that_says_so() {
    let project = Project::new(&[]);
    let file = project.write(
        "plain.jsonl",
        &[
            r#"{"provider":"acme","model":"m","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"An answer of several words."}]}"#,
            r#"{"provider":"acme","model":"m","messages":[{"role":"user","content":"Q2"},{"role":"assistant","content":"Another answer."}]}"#,
        ]
        .join("\n"),
    );
    project.run_ok(&["import", file.to_str().unwrap()]);
    let text = report(&project, &[]);
    assert!(text.contains("no timings stored"), "{text}");
    assert!(
        text.contains("no check results yet: run `turnbench check`"),
        "{text}"
    );
    assert!(text.contains("no judgments yet"), "{text}");
    let r = json_report(&project, &[]);
    let cell = &r["cells"][0];
    assert_eq!(cell["conversation_latency"]["n"], 0);
    assert_eq!(
        cell["conversation_latency"]["p50"],
        Value::Null,
        "empty, never 0"
    );
    // Visible tokens were counted by import; the report counts none itself.
    assert!(!text.contains("visible-token count"), "{text}");
    assert_eq!(cell["turns"]["visible_tokens"]["n"], 2);
    assert!(cell["turns"]["visible_tokens"]["value"].as_f64().unwrap() > 0.0);
    assert_eq!(cell["reliability"]["completed"], 2);
}

#[test]
fn a_store_with_checks_but_no_judgments_reports_checks_and_says_what_is_missing() {
    let project = fixture(false);
    let text = report(&project, &[]);
    assert!(text.contains("QUALITY BY TAG"), "{text}");
    assert!(text.contains("no judgments yet"), "{text}");
    let only_rubric = report(&project, &["--rubric", "style"]);
    assert!(
        only_rubric.contains("no judgments for rubric style yet"),
        "{only_rubric}"
    );
}

#[test]
fn an_empty_store_gives_a_clear_report_and_a_missing_one_an_error() {
    let project = Project::new(&[]);
    drop(turnbench::store::open(&project.db()).unwrap());
    let text = report(&project, &[]);
    assert!(
        text.contains("the store holds no conversations yet"),
        "{text}"
    );
    let r = json_report(&project, &[]);
    assert_eq!(r["cells"], json!([]));

    let missing = Project::new(&[]);
    let out = missing.cmd(&["report"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no store here"), "{err}");
    assert!(!missing.db().exists(), "a report never creates a store");
}

#[test]
fn filters_select_cells_and_an_unknown_run_is_an_error_that_lists_the_runs() {
    let project = fixture(false);
    let r = json_report(&project, &["--provider", "nimbus"]);
    let cells = r["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0]["provider"], "nimbus");
    let r = json_report(&project, &["--model", "m-y", "--scenario", SCENARIOS[0]]);
    assert_eq!(r["cells"][0]["reliability"]["attempted"], REPEATS);
    let out = project.cmd(&["report", "--run", "nope"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fixture.jsonl"), "{err}");
}

#[test]
fn an_sla_lowers_the_usable_rate_and_files_are_written_whole() {
    let project = fixture(false);
    let usable = |r: &Value| r["cells"][0]["usable"]["value"].as_f64().unwrap();
    let all = json_report(&project, &[]);
    let tight = json_report(&project, &["--sla-ms", "1000"]);
    assert!(usable(&tight) < usable(&all));
    assert_eq!(tight["meta"]["sla_ms"], 1000.0);
    for format in ["terminal", "md", "csv", "json", "html"] {
        let out = project.path(&format!("r.{format}"));
        project.run_ok(&["report", "--format", format, "--out", out.to_str().unwrap()]);
        assert!(std::fs::metadata(&out).unwrap().len() > 100, "{format}");
        assert!(!project.path(&format!("r.{format}.partial")).exists());
    }
    let out = project
        .cmd(&["report", "--format", "xlsx"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("terminal, md, csv, json, html"), "{err}");
}

/// Spearman's ρ the textbook way: Pearson's r of average ranks.
fn spearman_by_hand(x: &[f64], y: &[f64]) -> f64 {
    let ranks = |v: &[f64]| -> Vec<f64> {
        v.iter()
            .map(|a| {
                let below = v.iter().filter(|b| *b < a).count() as f64;
                let equal = v.iter().filter(|b| *b == a).count() as f64;
                below + (equal + 1.0) / 2.0
            })
            .collect()
    };
    let (rx, ry) = (ranks(x), ranks(y));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (mx, my) = (mean(&rx), mean(&ry));
    let cov: f64 = rx.iter().zip(&ry).map(|(a, b)| (a - mx) * (b - my)).sum();
    let var = |v: &[f64], m: f64| v.iter().map(|a| (a - m) * (a - m)).sum::<f64>();
    cov / (var(&rx, mx) * var(&ry, my)).sqrt()
}

#[test]
fn check_judge_agreement_is_the_rank_correlation_of_scores_and_pass_rates() {
    let project = fixture(true);
    // The fixture's stale answers fail only custom checks: add conversations that the
    // checks' own defects spoil (a superseded per-diem back, a constraint lost), one per
    // defect, with as many unspoiled ones, then check and judge every conversation.
    let sc = scenario("biz-policy-faq");
    let set = turnbench::checks::CheckSet::load(&repo("checks/biz-policy-faq.toml")).unwrap();
    let references: Vec<String> = sc
        .turns
        .iter()
        .map(|t| t.reference.clone().unwrap())
        .collect();
    let mut lines = String::new();
    let mut variants: Vec<Vec<String>> = Vec::new();
    for d in &set.defects {
        let mut answers = references.clone();
        d.apply(&mut answers).unwrap();
        variants.push(answers);
        variants.push(references.clone());
    }
    for (i, answers) in variants.iter().enumerate() {
        let mut messages = vec![json!({"role": "system", "content": sc.system})];
        for (turn, answer) in sc.turns.iter().zip(answers) {
            messages.push(json!({"role": "user", "content": turn.user}));
            messages.push(json!({"role": "assistant", "content": answer, "finish_reason": "stop"}));
        }
        let line = json!({"id": format!("spoiled-{i}"), "provider": "spoiler", "model": "m-z",
            "scenario": sc.id, "repeat": i + 1, "outcome": "completed", "messages": messages});
        lines.push_str(&format!("{line}\n"));
    }
    let file = project.write("spoiled.jsonl", &lines);
    import_and_check(&project, &file);
    project.run_ok(&[
        "judge",
        "--judge",
        repo("judges/mock.toml").to_str().unwrap(),
        "--rubric",
        repo("rubrics/multiturn-quality.toml").to_str().unwrap(),
        "--scenarios",
        repo("scenarios").to_str().unwrap(),
        "--sample",
        "all",
    ]);
    let r = json_report(&project, &[]);
    let rows = r["check_agreement"].as_array().unwrap();
    // The shipped rubric's criteria that speak to check tags.
    let criteria: Vec<&str> = rows
        .iter()
        .map(|c| c["criterion"].as_str().unwrap())
        .collect();
    assert_eq!(
        criteria,
        vec![
            "correction_handling",
            "final_answer_usability",
            "state_tracking"
        ]
    );
    let conn = project.conn();
    let mut defined = 0;
    for row in rows {
        let criterion = row["criterion"].as_str().unwrap();
        let tags: Vec<String> = row["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| format!("'{}'", t.as_str().unwrap()))
            .collect();
        // Independently of the report: from the read model's views, in SQL.
        let sql = format!(
            "WITH j AS (SELECT conversation_id, AVG(json_extract(scores, '$.{criterion}')) AS score
                        FROM current_judgments WHERE status = 'ok' GROUP BY conversation_id),
                  c AS (SELECT conversation_id, AVG(passed) AS rate FROM current_check_results
                        WHERE tag IN ({}) AND passed IS NOT NULL GROUP BY conversation_id)
             SELECT j.score, c.rate FROM j JOIN c USING (conversation_id)
             JOIN conversation_facts f USING (conversation_id) WHERE f.counts = 1",
            tags.join(", ")
        );
        let mut stmt = conn.prepare(&sql).unwrap();
        let pairs: Vec<(f64, f64)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(pairs.len() > 20, "{criterion}: {}", pairs.len());
        assert_eq!(
            row["n"].as_u64().unwrap() as usize,
            pairs.len(),
            "{criterion}"
        );
        let (x, y): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
        let expected = spearman_by_hand(&x, &y);
        let Some(rho) = row["rho"].as_f64() else {
            // Undefined only when one side does not vary.
            assert!(expected.is_nan(), "{row}");
            continue;
        };
        defined += 1;
        assert!(
            (rho - expected).abs() < 1e-9,
            "{criterion}: {rho} vs {expected}"
        );
        if let Some(i) = row["interval"].as_object() {
            let (lo, hi) = (i["lo"].as_f64().unwrap(), i["hi"].as_f64().unwrap());
            assert!(lo <= rho + 1e-12 && rho <= hi + 1e-12, "{row}");
        }
    }
    assert!(defined >= 2, "{rows:?}");
}

#[test]
fn a_provider_that_fails_half_its_conversations_never_leads_quality_on_its_survivors() {
    // flaky: every other conversation rate limited, the rest all correct (its survivors
    // pass 100 % of their checks); steady: completes all, a stale answer in 3 of 24.
    let cells = [
        Cell {
            provider: "flaky",
            model: "m-x",
            slowness: 1.0,
            cached: false,
            fault: |_, r| {
                if r.is_multiple_of(2) {
                    Fault::RateLimited
                } else {
                    Fault::None
                }
            },
        },
        Cell {
            provider: "steady",
            model: "m-x",
            slowness: 1.0,
            cached: false,
            fault: |s, r| {
                if (s as u32 + r).is_multiple_of(8) {
                    Fault::Stale
                } else {
                    Fault::None
                }
            },
        },
    ];
    let scenarios: Vec<Scenario> = SCENARIOS.iter().map(|id| scenario(id)).collect();
    let mut lines = String::new();
    for cell in &cells {
        for (s, sc) in scenarios.iter().enumerate() {
            for repeat in 1..=12 {
                lines.push_str(&conversation(cell, s, repeat, sc).to_string());
                lines.push('\n');
            }
        }
    }
    let project = Project::new(&[]);
    let file = project.write("t.jsonl", &lines);
    import_and_check(&project, &file);
    let r = json_report(&project, &[]);
    let cell = |p: &str| {
        r["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["provider"] == p)
            .unwrap()
            .clone()
    };
    // Survivors only, flaky looks perfect; per attempted conversation it is at most half.
    assert_eq!(cell("flaky")["checks"]["pass"]["value"], 1.0);
    let flaky = cell("flaky")["checks"]["task_success"].clone();
    assert_eq!(flaky["n"], 24, "{flaky}");
    assert!(flaky["value"].as_f64().unwrap() <= 0.5, "{flaky}");
    let steady = cell("steady")["checks"]["task_success"]["value"]
        .as_f64()
        .unwrap();
    assert!(steady > 0.8, "{steady}");
    let quality = r["headlines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "quality_checks")
        .unwrap();
    assert_eq!(quality["family"]["leader"], "steady / m-x", "{quality}");
    assert!(
        quality["text"]
            .as_str()
            .unwrap()
            .starts_with("task success on m-x: steady "),
        "{quality}"
    );
}

/// A store imported before import counted visible tokens (made by that build, schema 6:
/// `examples/transcripts.jsonl` imported, every count NULL) is counted once, when a
/// turnbench with migration 007 first opens it, as collect would have counted; the report
/// itself never counts: a count that stays NULL afterwards is said to be missing.
#[test]
fn an_old_import_is_counted_once_on_open_and_the_report_never_counts() {
    let project = Project::new(&[]);
    std::fs::copy(
        repo("tests/fixtures/store-v6-imported-without-visible-tokens.db"),
        project.db(),
    )
    .unwrap();
    let before = project.conn();
    assert!(
        count(
            &before,
            "SELECT COUNT(*) FROM turns WHERE answer IS NOT NULL"
        ) > 0
    );
    assert_eq!(
        count(
            &before,
            "SELECT COUNT(*) FROM turns WHERE visible_tokens IS NOT NULL"
        ),
        0
    );
    drop(before);

    let text = report(&project, &[]);
    assert!(!text.contains("visible-token count"), "{text}");
    let conn = project.conn();
    let turns = rows(
        &conn,
        "SELECT answer, visible_tokens FROM turns ORDER BY conversation_id, idx",
        [],
        |r| Ok((r.get::<_, Option<String>>(0)?, r.get::<_, Option<i64>>(1)?)),
    );
    for (answer, visible) in &turns {
        assert_eq!(*visible, answer.as_deref().map(turnbench::tokens::count));
    }
    assert_eq!(count(&conn, "SELECT COUNT(*) FROM store_backfills"), 0);
    assert_eq!(
        count(&conn, "SELECT COUNT(*) FROM runs WHERE tokenizer IS NULL"),
        0
    );

    // Done once: a count removed by hand stays missing, and the report says so.
    conn.execute_batch(
        "UPDATE turns SET visible_tokens = NULL WHERE (conversation_id, idx) =
           (SELECT conversation_id, idx FROM turns WHERE has_answer ORDER BY 1, 2 LIMIT 1)",
    )
    .unwrap();
    drop(conn);
    let text = report(&project, &[]);
    assert!(
        text.contains("answers without a stored visible-token count: 1 "),
        "{text}"
    );
    assert_eq!(
        count(
            &project.conn(),
            "SELECT COUNT(*) FROM turns WHERE visible_tokens IS NULL AND has_answer"
        ),
        1
    );
}

/// Quality claims compare the providers of one model label (as latency does): acme / m-y
/// has no other cell of its label, so no quality family holds it; `--across-models` adds
/// the family across labels, and only then do claims pair m-x with m-y.
#[test]
fn quality_families_stay_within_a_model_label_unless_asked() {
    let project = fixture(true);
    let quality = |r: &Value| -> Vec<Value> {
        r["headlines"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["kind"] == "quality_checks" || h["kind"] == "quality_judge")
            .cloned()
            .collect()
    };
    let label_of = |name: &str| name.rsplit(" / ").next().unwrap().to_string();
    let by_label = json_report(&project, &[]);
    let within = quality(&by_label);
    assert!(
        within.iter().any(|h| h["kind"] == "quality_checks")
            && within.iter().any(|h| h["kind"] == "quality_judge"),
        "{within:?}"
    );
    for h in &within {
        assert_eq!(h["model"], "m-x", "{h}");
        let family = &h["family"];
        assert_eq!(family["cells"], 2, "{family}");
        for c in family["claims"].as_array().unwrap() {
            let (a, b) = (c["a"].as_str().unwrap(), c["b"].as_str().unwrap());
            assert_eq!(label_of(a), label_of(b), "{c}");
        }
    }
    let across = json_report(&project, &["--across-models"]);
    let mixed: Vec<Value> = quality(&across)
        .into_iter()
        .filter(|h| h["model"].is_null())
        .collect();
    assert_eq!(mixed.len(), within.len(), "{mixed:?}");
    for h in &mixed {
        assert_eq!(h["family"]["cells"], 3, "{h}");
    }
    assert!(
        mixed
            .iter()
            .flat_map(|h| h["family"]["claims"].as_array().unwrap())
            .any(|c| { label_of(c["a"].as_str().unwrap()) != label_of(c["b"].as_str().unwrap()) }),
        "{mixed:?}"
    );
    // The terminal groups each label's quality headlines under its name.
    let text = report(&project, &[]);
    assert!(text.contains("quality · m-x"), "{text}");
    assert!(!text.contains("quality across models"), "{text}");
}

/// Reliability is a claim per model label like the others: a provider that fails half its
/// conversations in every scenario is established as less reliable than one that fails
/// none, in the family of its label; a cell alone in its label states its figure alone.
#[test]
fn reliability_is_compared_within_a_model_label() {
    let project = Project::new(&[]);
    let sc = scenario(SCENARIOS[0]);
    let mut lines = String::new();
    let cells = [
        ("steady", "m-x", false),
        ("shaky", "m-x", true),
        ("steady", "m-y", false),
    ];
    for (provider, model, shaky) in cells {
        for s in 0..12 {
            for repeat in 1..=2u32 {
                let cell = Cell {
                    provider,
                    model,
                    slowness: 1.0,
                    cached: false,
                    fault: if shaky {
                        |_, r| {
                            if r == 1 {
                                Fault::RateLimited
                            } else {
                                Fault::None
                            }
                        }
                    } else {
                        |_, _| Fault::None
                    },
                };
                let mut line = conversation(&cell, 0, repeat, &sc);
                line["scenario"] = json!(format!("s-{s}"));
                line["id"] = json!(format!("{provider}-{model}-s{s}-{repeat}"));
                lines.push_str(&line.to_string());
                lines.push('\n');
            }
        }
    }
    let file = project.write("t.jsonl", &lines);
    project.run_ok(&["import", file.to_str().unwrap()]);
    let r = json_report(&project, &[]);
    let reliability: Vec<&Value> = r["headlines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["kind"] == "reliability")
        .collect();
    assert_eq!(reliability.len(), 2, "{reliability:?}");
    let mx = reliability.iter().find(|h| h["model"] == "m-x").unwrap();
    let family = &mx["family"];
    assert_eq!(family["leader"], "steady / m-x", "{mx}");
    assert_eq!(family["statistic"], "success_difference", "{mx}");
    let claim = &family["claims"][0];
    assert_eq!(claim["b"], "shaky / m-x", "{claim}");
    assert_eq!(claim["n"], 24, "{claim}");
    assert_eq!(claim["scenarios"], 12, "{claim}");
    assert_eq!(claim["a_value"], 1.0, "{claim}");
    assert_eq!(claim["b_value"], 0.5, "{claim}");
    assert_eq!(claim["established"], true, "{claim}");
    assert_eq!(mx["established"], true, "{mx}");
    let my = reliability.iter().find(|h| h["model"] == "m-y").unwrap();
    assert!(my["family"].is_null(), "{my}");
    assert!(
        my["text"]
            .as_str()
            .unwrap()
            .starts_with("steady / m-y: 24/24 conversations completed"),
        "{my}"
    );
}
