//! The report at the width users have (issue 25): 10 providers × 3 model labels, 15
//! scenarios × 2 repeats, imported and checked (`support/width.rs` generates it, seeded).
//! Each label gets its own latency and quality chart, every provider keeps one style across
//! charts, nothing is drawn outside its chart, the cell tables sort by `--sort` and show
//! Δ vs fastest with a paired interval only where the calibration allows one.
//!
//! `TURNBENCH_WIDTH_HTML=/tmp/width.html cargo test --test integration report_width::` keeps the HTML to
//! look at (`../shared/tools/render-html /tmp/width.html /tmp/width.png`), and the
//! transcripts beside it (`/tmp/width.jsonl`) to import into a store of your own.

use crate::legibility;
use crate::width;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::common::*;
use serde_json::Value;
use turnbench::config::Scenario;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The 10 × 3 store, built once for every test here.
fn store() -> &'static Project {
    static STORE: OnceLock<Project> = OnceLock::new();
    STORE.get_or_init(|| {
        let scenarios = Scenario::load_dir(&repo("scenarios")).unwrap();
        assert_eq!(scenarios.len(), 15);
        let project = Project::new(&[]);
        let file = project.write("width.jsonl", &width::lines(&scenarios, 25));
        import_and_check(&project, &file);
        project
    })
}

fn report(args: &[&str]) -> String {
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    store().run_ok(&all).0
}

fn json(args: &[&str]) -> Value {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    serde_json::from_str(&report(&all)).unwrap()
}

/// Each `<svg …>…</svg>` of the page with its id.
fn svgs(html: &str) -> Vec<(String, &str)> {
    let re = regex::Regex::new(r#"(?s)<svg id="([^"]+)".*?</svg>"#).unwrap();
    re.captures_iter(html)
        .map(|c| (c[1].to_string(), c.get(0).unwrap().as_str()))
        .collect()
}

/// Provider → two style attributes.
type StyleMap = BTreeMap<String, (String, String)>;

/// provider → (colour, dash) of every latency curve, and (colour, marker) of every quality
/// point, over the given charts.
fn styles_in(svg: &str) -> (StyleMap, StyleMap) {
    let line = regex::Regex::new(
        r#"<polyline fill="none" stroke-width="2.2" stroke="([^"]+)"(?: stroke-dasharray="([^"]*)")? points="[^"]*"><title>([^<]*)</title>"#,
    )
    .unwrap();
    let point = regex::Regex::new(
        r#"<(?:circle|polygon) [^>]*fill="([^"]+)"[^>]*data-m="(\d)"><title>([^<]*)</title>"#,
    )
    .unwrap();
    let lines = line
        .captures_iter(svg)
        .map(|c| {
            let dash = c.get(2).map_or("", |m| m.as_str()).to_string();
            (c[3].to_string(), (c[1].to_string(), dash))
        })
        .collect();
    let points = point
        .captures_iter(svg)
        .map(|c| (c[3].to_string(), (c[1].to_string(), c[2].to_string())))
        .collect();
    (lines, points)
}

#[test]
fn each_label_gets_its_own_charts_and_each_provider_one_style_across_them() {
    let html = report(&["--format", "html"]);
    if let Some(path) = std::env::var_os("TURNBENCH_WIDTH_HTML") {
        // The transcripts beside it, to import, judge or re-report by hand.
        let jsonl = std::path::PathBuf::from(&path).with_extension("jsonl");
        std::fs::copy(store().path("width.jsonl"), jsonl).unwrap();
        std::fs::write(path, &html).unwrap();
    }
    // No chart text leaves its chart or covers another (estimated; render-html measures).
    assert_eq!(legibility::problems(&html), Vec::<String>::new());
    let charts = svgs(&html);
    let mut colour: BTreeMap<String, String> = BTreeMap::new();
    let mut dash: BTreeMap<String, String> = BTreeMap::new();
    let mut shape: BTreeMap<String, String> = BTreeMap::new();
    for (k, label) in width::LABELS.iter().enumerate() {
        let id = |kind: &str| format!("chart-{kind}-{}", k + 1);
        let ecdf = charts.iter().find(|(i, _)| *i == id("ecdf")).unwrap().1;
        let quality = charts.iter().find(|(i, _)| *i == id("quality")).unwrap().1;
        for svg in [ecdf, quality] {
            assert!(
                svg.contains(&format!(" on {label}")),
                "{label} not in its chart"
            );
        }
        let (lines, _) = styles_in(ecdf);
        let (_, points) = styles_in(quality);
        assert_eq!(lines.len(), 10, "{label}: one curve per provider");
        assert_eq!(points.len(), 10, "{label}: one point per provider");
        for (p, (c, d)) in &lines {
            assert_eq!(
                colour.entry(p.clone()).or_insert(c.clone()),
                c,
                "{p} colour"
            );
            assert_eq!(dash.entry(p.clone()).or_insert(d.clone()), d, "{p} dash");
        }
        for (p, (c, m)) in &points {
            assert_eq!(
                colour.entry(p.clone()).or_insert(c.clone()),
                c,
                "{p} colour"
            );
            assert_eq!(shape.entry(p.clone()).or_insert(m.clone()), m, "{p} marker");
        }
    }
    assert_eq!(colour.len(), 10);
    // Within the report, no two providers share a colour with a marker or a dash.
    let providers: Vec<&String> = colour.keys().collect();
    for (i, a) in providers.iter().enumerate() {
        for b in &providers[i + 1..] {
            assert!(
                colour[*a] != colour[*b] || shape[*a] != shape[*b],
                "{a} and {b} look alike"
            );
            assert!(
                colour[*a] != colour[*b] || dash[*a] != dash[*b],
                "{a} and {b} look alike"
            );
        }
    }
    // One outcome chart, its rows grouped under each label.
    let outcomes = charts
        .iter()
        .find(|(i, _)| i == "chart-outcomes")
        .unwrap()
        .1;
    for label in width::LABELS {
        assert!(
            outcomes.contains(&format!("class=\"gh\">{label}<")),
            "{label} heading"
        );
    }
    // Nothing is placed outside its chart: every text and legend box within the viewBox.
    let view = regex::Regex::new(r#"viewBox="0 0 ([\d.]+) ([\d.]+)""#).unwrap();
    let text = regex::Regex::new(r#"<text x="([\d.-]+)" y="([\d.-]+)""#).unwrap();
    let lg = regex::Regex::new(
        r#"<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" class="lg"/>"#,
    )
    .unwrap();
    for (id, svg) in &charts {
        let v = view.captures(svg).unwrap();
        let (w, h): (f64, f64) = (v[1].parse().unwrap(), v[2].parse().unwrap());
        for t in text.captures_iter(svg) {
            let (x, y): (f64, f64) = (t[1].parse().unwrap(), t[2].parse().unwrap());
            assert!(
                (0.0..=w).contains(&x) && (10.0..=h - 2.0).contains(&y),
                "{id}: text at {x},{y}"
            );
        }
        for r in lg.captures_iter(svg) {
            let f = |i: usize| r[i].parse::<f64>().unwrap();
            assert!(
                f(1) + f(3) <= w && f(2) + f(4) <= h,
                "{id}: legend leaves the chart"
            );
        }
    }
}

/// The cells of `label` in the report's table order.
fn ordered<'a>(r: &'a Value, label: &str) -> Vec<&'a Value> {
    r["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &r["cells"][i.as_u64().unwrap() as usize])
        .filter(|c| c["model"] == label)
        .collect()
}

fn figure(c: &Value, q: &str) -> f64 {
    c["conversation_latency"][q]["value"].as_f64().unwrap()
}

#[test]
fn sort_orders_each_label_and_the_tables_follow_it() {
    let r = json(&["--sort", "p95"]);
    assert_eq!(r["sort"], "p95");
    let md = report(&["--format", "md", "--sort", "p95"]);
    for label in width::LABELS {
        let cells = ordered(&r, label);
        assert_eq!(cells.len(), 10);
        let p95: Vec<f64> = cells.iter().map(|c| figure(c, "p95")).collect();
        assert!(p95.windows(2).all(|w| w[0] <= w[1]), "{label}: {p95:?}");
        // The Markdown table lists the providers in that order.
        let at = md.find(&format!("## CELLS · {label} · by p95")).unwrap();
        let table = &md[at..];
        let mut last = 0;
        for c in &cells {
            let row = format!("| {} |", c["provider"].as_str().unwrap());
            let pos = table.find(&row).unwrap();
            assert!(pos >= last, "{label}: rows out of --sort p95 order");
            last = pos;
        }
    }
    // The default is p50; success sorts highest first.
    let r = json(&[]);
    assert_eq!(r["sort"], "p50");
    let p50: Vec<f64> = ordered(&r, width::LABELS[0])
        .iter()
        .map(|c| figure(c, "p50"))
        .collect();
    assert!(p50.windows(2).all(|w| w[0] <= w[1]), "{p50:?}");
    let r = json(&["--sort", "success"]);
    let s: Vec<f64> = ordered(&r, width::LABELS[1])
        .iter()
        .map(|c| c["reliability"]["success"]["value"].as_f64().unwrap())
        .collect();
    assert!(s.windows(2).all(|w| w[0] >= w[1]), "{s:?}");
}

#[test]
fn delta_vs_fastest_is_zero_for_the_fastest_and_bounded_only_where_calibrated() {
    let r = json(&[]);
    let cells = r["cells"].as_array().unwrap();
    let deltas = r["vs_fastest"].as_array().unwrap();
    assert_eq!(cells.len(), 30);
    let mut bounded = 0;
    for label in width::LABELS {
        let of_label: Vec<usize> = (0..30).filter(|&i| cells[i]["model"] == label).collect();
        for q in ["p50", "p95", "p99"] {
            let fastest = *of_label
                .iter()
                .min_by(|&&a, &&b| figure(&cells[a], q).total_cmp(&figure(&cells[b], q)))
                .unwrap();
            for &i in &of_label {
                let d = &deltas[i][q];
                if i == fastest {
                    assert_eq!(d["difference_ms"], 0.0);
                    assert_eq!(d["is_fastest"], true);
                    assert!(d["interval"].is_null());
                    continue;
                }
                let diff = d["difference_ms"].as_f64().unwrap();
                let expected = figure(&cells[i], q) - figure(&cells[fastest], q);
                assert!(
                    (diff - expected).abs() < 1e-6 && diff >= 0.0,
                    "{diff} vs {expected}"
                );
                assert_eq!(d["fastest"], cells[fastest]["provider"]);
                let iv = &d["interval"];
                if q == "p99" {
                    assert!(iv.is_null(), "p99 has no calibrated paired interval");
                    continue;
                }
                let (pairs, needed) = (d["pairs"].as_u64().unwrap(), d["needed"].as_u64().unwrap());
                assert_eq!(needed, if q == "p50" { 10 } else { 40 });
                if pairs < needed {
                    assert!(
                        iv.is_null(),
                        "{q}: an interval from {pairs} of {needed} pairs"
                    );
                } else if !iv.is_null() {
                    bounded += 1;
                    assert!(iv["lo"].as_f64().unwrap() < iv["hi"].as_f64().unwrap());
                }
            }
        }
    }
    // 15 scenarios × 2 repeats: p50's 10 pairs are there, p95's 40 are not.
    assert!(bounded > 0, "no p50 interval at all");
    // CSV: the ratio appended per percentile, 1 for the fastest, the interval only with it.
    let csv = report(&["--format", "csv"]);
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut ones = 0;
    for row in rows.records() {
        let row = row.unwrap();
        let ratio: f64 = row[col("conversation_p50_vs_fastest_ratio")]
            .parse()
            .unwrap();
        assert!(ratio >= 1.0);
        ones += usize::from(ratio == 1.0);
        assert_eq!(&row[col("conversation_p99_vs_fastest_lo")], "");
    }
    assert_eq!(ones, 3, "one fastest per label");
    let md = report(&["--format", "md"]);
    assert!(
        md.contains("| Δ p50 % |") && md.contains("\\[—\\]"),
        "Δ columns in the tables"
    );
}

#[test]
fn the_legibility_check_sees_text_outside_and_text_on_text() {
    // The corner the issue found in the built-in report: "1" on the y axis, "0.5" on the x.
    let svg = r#"<svg id="c" viewBox="0 0 760 380">
        <text x="58" y="328" class="tk" text-anchor="end">1</text>
        <text x="64" y="340" class="tk" text-anchor="middle">0.5</text>
        <text x="740" y="100" class="lt">a legend label running past the right edge</text>
        </svg>"#;
    let found = legibility::problems(svg);
    assert!(
        found.iter().any(|p| p.contains("\"1\" covers \"0.5\"")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|p| p.contains("leaves the chart")),
        "{found:?}"
    );
    assert_eq!(found.len(), 2, "{found:?}");
}

#[test]
fn long_names_stay_inside_their_charts() {
    let project = Project::new(&[]);
    let mut lines = String::new();
    let providers = [
        "a-provider-with-a-very-long-name-indeed-0123456789",
        "another-provider-whose-name-goes-on-and-on-and-on",
        "short",
    ];
    let labels = [
        "an-organisation/a-model-label-far-longer-than-any-chart-title-can-hold-v1.2.3",
        "m",
    ];
    for (p, provider) in providers.iter().enumerate() {
        for label in labels {
            for s in 0..6 {
                for repeat in 1..=2u32 {
                    let e2e = 400.0 * (1.0 + p as f64 * 0.3) * (1.0 + 0.1 * f64::from(repeat + s));
                    let line = serde_json::json!({
                        "provider": provider, "model": label, "scenario": format!("s-{s}"), "repeat": repeat,
                        "messages": [
                            {"role": "user", "content": "hi"},
                            {"role": "assistant", "content": "hello", "finish_reason": "stop",
                             "timing": {"ttft_ms": e2e / 5.0, "e2e_ms": e2e}}
                        ]
                    });
                    lines.push_str(&line.to_string());
                    lines.push('\n');
                }
            }
        }
    }
    let file = project.write("long.jsonl", &lines);
    project.run_ok(&["import", file.to_str().unwrap()]);
    let html = project.run_ok(&["report", "--format", "html"]).0;
    if let Some(path) = std::env::var_os("TURNBENCH_LONG_HTML") {
        std::fs::write(path, &html).unwrap();
    }
    assert!(html.contains("id=\"chart-ecdf-2\""));
    // A shortened legend name keeps its n: 3 providers × 2 labels.
    assert_eq!(html.matches(" (n 12)</text>").count(), 6);
    assert_eq!(legibility::problems(&html), Vec::<String>::new());
}

#[test]
fn constraints_across_turns_stay_legible_at_ten_providers() {
    let r = json(&["--sort", "p95"]);
    let terminal = report(&["--sort", "p95"]);
    let md = report(&["--format", "md", "--sort", "p95"]);
    let html = report(&["--format", "html", "--sort", "p95"]);
    // One chart of pass rate by turn per label, under its table: a line (or a lone point)
    // per provider, each with its n in the legend, and no text that leaves it or covers
    // other text.
    let charts: Vec<(String, &str)> = svgs(&html)
        .into_iter()
        .filter(|(id, _)| id.starts_with("chart-turns-"))
        .collect();
    assert_eq!(charts.len(), width::LABELS.len());
    for (id, svg) in &charts {
        assert_eq!(svg.matches("class=\"lt\"").count(), 10, "{id}: legend rows");
        assert_eq!(
            svg.matches("class=\"lt\">").count(),
            svg.matches(" (n ").count(),
            "{id}"
        );
        assert!(svg.contains("class=\"gh\">custom</text>"), "{id}");
        let problems = legibility::problems(svg);
        assert!(problems.is_empty(), "{id}: {problems:?}");
    }
    let survival = r["constraint_survival"].as_array().unwrap();
    for label in width::LABELS {
        let providers: Vec<&str> = ordered(&r, label)
            .iter()
            .map(|c| c["provider"].as_str().unwrap())
            .collect();
        assert_eq!(providers.len(), 10);
        let tags: Vec<&str> = survival
            .iter()
            .filter(|e| e["label"] == label)
            .map(|e| e["tag"].as_str().unwrap())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert!(!tags.is_empty(), "{label}: no turn verdicts");
        // The terminal section fits 100 columns, and every row of every column group
        // starts with its provider and tag.
        let at = terminal
            .find(&format!("CONSTRAINTS ACROSS TURNS · {label}"))
            .unwrap();
        let section = &terminal[at..];
        let section = &section[..section.find("\n\n").unwrap_or(section.len())];
        let mut rows = 0;
        for line in section.lines() {
            assert!(line.chars().count() <= 100, "{line:?}");
            if providers.iter().any(|p| line.starts_with(&format!("{p} "))) {
                rows += 1;
                assert!(
                    tags.iter().any(|t| line.contains(&format!(" {t} "))),
                    "a row without its tag: {line:?}"
                );
            }
        }
        assert!(rows >= 10 * tags.len(), "{label}: {rows} rows\n{section}");
        // The Markdown table lists the providers in the cell tables' order.
        let at = md
            .find(&format!("## CONSTRAINTS ACROSS TURNS · {label}"))
            .unwrap();
        let table = &md[at..];
        let mut last = 0;
        for p in &providers {
            let pos = table.find(&format!("| {p} |")).unwrap();
            assert!(pos >= last, "{label}: rows out of --sort p95 order");
            last = pos;
        }
    }
}

/// Issue 33: at ten providers × three labels every headline is one line of claims that
/// fits two terminal lines, every family is a table (Markdown section, HTML `<details>`,
/// terminal `--verbose`), no family mixes model labels unless `--across-models` asks, and
/// no claim's interval says otherwise than its verdict.
#[test]
fn headlines_are_one_line_each_and_families_are_tables_within_a_label() {
    let terminal = report(&[]);
    let heads: Vec<&str> = terminal
        .split("\nHEADLINES\n")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap()
        .lines()
        .collect();
    // Each headline: a `  · ` line and its continuation lines.
    let mut lines_per_headline: Vec<usize> = Vec::new();
    for l in &heads {
        assert!(l.chars().count() <= 100, "{l}");
        if l.starts_with("  · ") {
            lines_per_headline.push(1);
        } else if l.starts_with("    ") {
            *lines_per_headline.last_mut().unwrap() += 1;
        }
    }
    let r = json(&[]);
    let headlines = r["headlines"].as_array().unwrap();
    assert_eq!(lines_per_headline.len(), headlines.len(), "{terminal}");
    for (n, h) in lines_per_headline.iter().zip(headlines) {
        assert!(*n <= 2, "{n} lines: {}", h["text"]);
    }
    let families: Vec<&Value> = headlines
        .iter()
        .filter(|h| h["family"]["members"].is_array())
        .collect();
    // Latency p50 and p95, reliability, task success per label at least.
    assert!(families.len() >= 12, "{}", families.len());
    for h in &families {
        let label = h["model"].as_str().expect("a family within one label");
        let f = &h["family"];
        for m in f["members"].as_array().unwrap() {
            assert!(
                m["cell"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!(" / {label}")),
                "{m}"
            );
        }
        let k = f["members"].as_array().unwrap().len();
        let claims =
            f["claims"].as_array().unwrap().len() + f["others"].as_array().map_or(0, Vec::len);
        assert_eq!(claims, k * (k - 1) / 2, "every pair is listed: {h}");
        assert_eq!(f["comparisons"], claims);
        let ratio = f["statistic"].as_str().unwrap().starts_with("latency");
        let none = if ratio { 1.0 } else { 0.0 };
        let all = f["claims"]
            .as_array()
            .unwrap()
            .iter()
            .chain(f["others"].as_array().into_iter().flatten());
        for c in all {
            if let Some(i) = c["interval"].as_object() {
                let (lo, hi) = (i["lo"].as_f64().unwrap(), i["hi"].as_f64().unwrap());
                let holds = lo <= none && none <= hi;
                assert_eq!(holds, c["established"] == false, "{c}");
            }
        }
    }
    // The terminal points at the families; --verbose prints one table each.
    assert!(terminal.contains("turnbench report --verbose"));
    let verbose = report(&["--verbose"]);
    assert_eq!(verbose.matches("\nFAMILY · ").count(), families.len());
    let md = report(&["--format", "md"]);
    let (before, after) = md.split_once("## Families").unwrap();
    assert_eq!(after.matches("\n### FAMILY · ").count(), families.len());
    let items = before
        .split("## Headlines")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>();
    assert_eq!(items.len(), headlines.len());
    assert!(items.iter().all(|l| l.starts_with("- **")), "{items:?}");
    let html = report(&["--format", "html", "--conversations", "none"]);
    let details = html.split("<details class=\"families\">").nth(1).unwrap();
    let details = details.split("</details>").next().unwrap();
    assert_eq!(details.matches("<table>").count(), families.len());
    // Across labels only when asked: then a family without a label joins them.
    let across = json(&["--across-models"]);
    assert!(
        across["headlines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["family"].is_object() && h["model"].is_null()),
        "--across-models adds a family across labels"
    );
}
