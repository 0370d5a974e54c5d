//! The efficient frontier (issue 39): per model label, the cells no other cell beats on
//! both task success and conversation p50 by established claims — through the CLI, on an
//! imported store of the 15 shipped scenarios checked with the shipped checks, in every
//! format; and a store too small to establish anything keeps every cell on it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use turnbench::config::Scenario;

use crate::common::*;
use crate::paired::{self, Provider};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// quick is fastest; careful 30 % slower and as good; sloppy slowest and answers every
/// second turn stale (a shipped check catches it, so none of its conversations meets the
/// task).
fn lines(scenarios: &[Scenario], repeats: u32) -> String {
    let (fresh, stale) = (|_: usize, _: u32| false, |_: usize, _: u32| true);
    let providers = [
        Provider {
            name: "quick",
            speed: 1.0,
            stale: &fresh,
            ttft_per_1k: 0.0,
        },
        Provider {
            name: "careful",
            speed: 1.3,
            stale: &fresh,
            ttft_per_1k: 0.0,
        },
        Provider {
            name: "sloppy",
            speed: 1.6,
            stale: &stale,
            ttft_per_1k: 0.0,
        },
    ];
    paired::lines(scenarios, &providers, repeats, 39)
}

fn store(scenarios: usize, repeats: u32) -> Project {
    let all = Scenario::load_dir(&repo("scenarios")).unwrap();
    let project = Project::new(&[]);
    let file = project.write("t.jsonl", &lines(&all[..scenarios.min(all.len())], repeats));
    import_and_check(&project, &file);
    project
}

fn report(project: &Project, format: &str) -> String {
    project.run_ok(&["report", "--format", format]).0
}

#[test]
fn a_cell_beaten_on_both_is_off_the_frontier_in_every_format() {
    let project = store(15, 4);
    let r: Value = serde_json::from_str(&report(&project, "json")).unwrap();
    let errors = schema_violations(&r);
    assert!(errors.is_empty(), "{errors:#?}");
    let f = r["frontier"].as_array().unwrap();
    assert_eq!(f.len(), 1, "{f:#?}");
    let f = &f[0];
    assert_eq!(f["model"], "glm-5.3-flash");
    assert_eq!(f["quality"], "task_success_difference");
    let on: Vec<(&str, &str)> = f["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["provider"].as_str().unwrap(), c["why"].as_str().unwrap()))
        .collect();
    // quick leads on speed; it and careful tie at the best task success (a tie is not a
    // ranking: both lead); careful is slower but not worse, so nobody beats it on both.
    assert_eq!(
        on,
        [("quick", "fastest_and_best"), ("careful", "best_quality")]
    );
    let off = f["off"].as_array().unwrap();
    assert_eq!(off.len(), 1, "{off:#?}");
    assert_eq!(off[0]["provider"], "sloppy");
    assert_eq!(off[0]["beaten_by"], json!(["quick", "careful"]));
    // Each claim it rests on is established in the families the headlines print.
    let family = |kind: &str| {
        r["headlines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["kind"] == kind)
            .map(|h| h["family"].clone())
            .unwrap()
    };
    for kind in ["latency_p50", "quality_checks"] {
        let fam = family(kind);
        let all: Vec<&Value> = fam["claims"]
            .as_array()
            .unwrap()
            .iter()
            .chain(fam["others"].as_array().unwrap())
            .collect();
        for winner in ["quick", "careful"] {
            let c = all
                .iter()
                .find(|c| {
                    c["a"] == format!("{winner} / glm-5.3-flash")
                        && c["b"] == "sloppy / glm-5.3-flash"
                })
                .unwrap_or_else(|| panic!("{kind}: no {winner} vs sloppy claim"));
            assert_eq!(c["established"], true, "{kind}: {c}");
        }
    }
    let text = f["text"].as_str().unwrap();
    assert_eq!(
        text,
        "frontier on glm-5.3-flash (task success × conversation p50): fastest quick, best \
         quality quick and careful; off it: sloppy (beaten on both by quick and careful)"
    );
    let head = r["headlines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "frontier")
        .unwrap();
    assert_eq!(head["text"], text);

    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat(&report(&project, "terminal")).contains(text));
    assert!(report(&project, "md").contains(text));
    let csv = report(&project, "csv");
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let header = rows.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let marks: Vec<(String, String)> = rows
        .records()
        .map(|row| {
            let row = row.unwrap();
            (
                row[at("provider")].to_string(),
                row[at("frontier")].to_string(),
            )
        })
        .collect();
    for (provider, mark) in [
        ("quick", "fastest_and_best"),
        ("careful", "best_quality"),
        ("sloppy", "off"),
    ] {
        assert!(
            marks.iter().any(|(p, m)| p == provider && m == mark),
            "{provider}: {marks:?}"
        );
    }
    // The chart rings the frontier and fades the rest.
    let html = report(&project, "html");
    assert_eq!(html.matches("data-frontier=\"on\"").count(), 2);
    assert_eq!(html.matches("data-frontier=\"off\"").count(), 1);
    assert!(html.contains("Ringed: the efficient frontier by task success"));
}

#[test]
fn where_nothing_is_established_every_cell_stays_on() {
    let project = store(3, 1);
    let r: Value = serde_json::from_str(&report(&project, "json")).unwrap();
    let f = &r["frontier"][0];
    assert_eq!(f["off"], json!([]), "{f:#}");
    assert_eq!(f["cells"].as_array().unwrap().len(), 3);
    assert!(
        f["text"]
            .as_str()
            .unwrap()
            .contains(": all 3 cells, none established both faster and better; fastest "),
        "{f:#}"
    );
}
