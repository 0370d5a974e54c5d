//! The HTML report finds its parts by typed keys, never by printed text: the tables of a
//! real store (the built-in run's simulated cells, imported real ones, the simulated judge)
//! are rendered once as built and once with every title, every detail and every row's name
//! replaced by opaque tokens. Put the words back into the second page and it must be the
//! first, byte for byte: every drill-down link under its table, every provider swatch and
//! every simulated badge landed where it did, although nothing on the page said where.

use std::path::Path;

use turnbench::export::html_page;
use turnbench::export::sections::{Table, tables};
use turnbench::report::drilldown::ConversationViews;
use turnbench::report::window::RunChoice;
use turnbench::report::{self, ReportOptions};

/// The HTML escaping of text content (`export::svg::esc`; the names here hold no control
/// characters).
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// A store of two runs: the built-in run (four simulated providers, the simulated judge)
/// and the shipped example transcripts imported (real cells), checked and judged.
fn mixed_store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("turnbench")
            .unwrap()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "turnbench {args:?}: {stderr}");
    };
    let transcripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/transcripts.jsonl");
    run(&["-q", "run"]);
    run(&["-q", "import", transcripts.to_str().unwrap()]);
    run(&["-q", "check"]);
    run(&[
        "-q",
        "judge",
        "--judge",
        "judges/mock.toml",
        "--rubric",
        "rubrics/multiturn-quality.toml",
        "--sample",
        "all",
    ]);
    dir
}

#[test]
fn links_swatches_and_simulated_marks_survive_renaming_every_title_and_name() {
    let dir = mixed_store();
    let opts = ReportOptions {
        runs: RunChoice {
            runs: Some(vec!["1".into(), "2".into()]),
            ..RunChoice::default()
        },
        views: ConversationViews::All,
        ..ReportOptions::default()
    };
    let r = report::build(
        report::load(&dir.path().join("turnbench.db"), &opts).unwrap(),
        &opts,
    );
    let original = tables(&r);
    let page = html_page(&r, &original);

    // What the renaming must keep, present in the first place.
    let reliability = original
        .iter()
        .find(|t| t.title.starts_with("RELIABILITY"))
        .expect("a reliability table");
    assert!(
        !reliability.simulated && reliability.rows.iter().any(|r| r.simulated),
        "real and simulated cells mix: the rows carry the marks"
    );
    assert!(
        reliability.rows.iter().any(|r| !r.simulated),
        "some rows are real"
    );
    assert!(
        original
            .iter()
            .any(|t| t.title.starts_with("JUDGE · ") && t.simulated),
        "the simulated judge's table is marked in its title"
    );
    let behind = page.matches("<details class=\"behind\"").count();
    assert!(
        page.contains("Conversations behind the failures")
            && page.contains("Conversations behind the lowest scores"),
        "links under RELIABILITY and under the JUDGE table"
    );
    let swatches = page.matches("<span class=\"sw\"").count();
    assert!(swatches >= 20, "{swatches} swatches");
    let badges = page.matches("<span class=\"sim\">simulated</span>").count();
    assert!(badges >= 5, "{badges} table badges");

    // Every title, detail and row name replaced by a token that says nothing.
    let mut renamed: Vec<Table> = original.clone();
    let mut back: Vec<(String, String)> = Vec::new();
    for (i, t) in renamed.iter_mut().enumerate() {
        let heading = t.heading();
        t.title = format!("⟦T{i:03}⟧");
        t.detail = None;
        back.push((esc(&t.heading()), esc(&heading)));
        for (j, row) in t.rows.iter_mut().enumerate() {
            if let Some(name) = row.cells.first_mut() {
                let token = format!("⟦R{i:03}-{j:04}⟧");
                back.push((token.clone(), esc(name)));
                *name = token;
            }
        }
    }
    let renamed_page = html_page(&r, &renamed);
    assert!(!renamed_page.contains("RELIABILITY ·"));
    assert!(!renamed_page.contains("<h2>JUDGE · "));
    assert_eq!(
        renamed_page.matches("<details class=\"behind\"").count(),
        behind
    );
    assert_eq!(renamed_page.matches("<span class=\"sw\"").count(), swatches);
    assert_eq!(
        renamed_page
            .matches("<span class=\"sim\">simulated</span>")
            .count(),
        badges
    );
    let mut restored = renamed_page;
    for (token, text) in &back {
        assert_eq!(restored.matches(token.as_str()).count(), 1, "{token}");
        restored = restored.replacen(token.as_str(), text, 1);
    }
    assert!(
        restored == page,
        "the renamed page differs from the original beyond its words"
    );
}
