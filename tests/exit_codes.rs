//! One exit vocabulary (`turnbench::exit::Exit`): its table in `--help` and in
//! docs/commands/exit-codes.md, and each command's codes through the binary. Codes other
//! tests already reach the hard way (leaks, anchors, a full store, a regression gate,
//! Ctrl-C) are asserted there by name; these are the ones every command shares.

use std::time::Duration;

use crate::common::{Project, target, two_turn_scenario};
use turnbench::exit::Exit;

/// Runs `turnbench ARGS` in the project (at most 120 s), asserts how it ended, and returns
/// its standard error.
fn ends(p: &Project, args: &[&str], exit: Exit) -> String {
    let out = p
        .cmd(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(
        out.status.code(),
        Some(exit.code()),
        "turnbench {args:?} should end {:?}: {stderr}",
        exit
    );
    stderr
}

fn project() -> Project {
    Project::new(&[("alpha", &two_turn_scenario("alpha", 0))])
}

/// A real bench (not the built-in mock) whose one target refuses every connection: each
/// conversation fails with `connect_error`.
fn refused_bench(project: &Project) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let bench = format!(
        "name = \"refused\"\nrepeats = 1\n[retry]\nattempts = 1\n{}",
        target("acme", "m", &url, "")
    );
    project
        .write("bench.toml", &bench)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn help_prints_the_vocabulary_and_the_docs_table_is_the_same() {
    let out = project().cmd(&["--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(Exit::Success.code()));
    // clap wraps the table to the width: compare with runs of whitespace as one space.
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let help = flat(&String::from_utf8_lossy(&out.stdout));
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands/exit-codes.md"),
    )
    .unwrap();
    for r in &Exit::ALL {
        let c = r.exit.code();
        assert!(
            help.contains(&flat(&format!(
                "{c} {} {} ({})",
                r.name, r.meaning, r.commands
            ))),
            "--help lacks {}: {help}",
            r.name
        );
        let row = format!("| {c} | {} | {} | {} |", r.name, r.commands, r.meaning);
        assert!(doc.contains(&row), "exit-codes.md lacks or differs: {row}");
    }
    let rows = doc
        .lines()
        .filter(|l| l.starts_with("| ") && l.as_bytes().get(2).is_some_and(u8::is_ascii_digit))
        .count();
    assert_eq!(
        rows,
        Exit::ALL.len(),
        "a code in the docs that the enum lacks"
    );
}

#[test]
fn a_usage_error_is_an_error_and_version_succeeds() {
    let p = project();
    ends(&p, &["collect", "--no-such-flag"], Exit::Error);
    ends(&p, &["--version"], Exit::Success);
}

#[test]
fn collect_dry_run_succeeds_failed_conversations_are_some_failed_a_bad_file_an_error() {
    let p = project();
    let bench = refused_bench(&p);
    ends(
        &p,
        &["collect", "--dry-run", "--config", &bench],
        Exit::Success,
    );
    ends(&p, &["collect", "-q", "--config", &bench], Exit::SomeFailed);
    let missing = p.path("missing.toml");
    ends(
        &p,
        &["collect", "--config", missing.to_str().unwrap()],
        Exit::Error,
    );
}

#[test]
fn replay_of_failed_passes_is_some_failed() {
    let p = project();
    let bench = refused_bench(&p);
    let args = ["--rounds", "1", "--pause-scale", "0", "--breaks", "none"];
    let mut replay = vec!["replay", "-q", "--config", &bench];
    replay.extend(args);
    ends(&p, &replay, Exit::SomeFailed);
}

#[test]
fn import_with_skipped_records_is_some_failed_an_unreadable_file_an_error() {
    let p = project();
    let good = r#"{"provider":"acme","model":"m","scenario":"alpha","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}"#;
    let file = p.write("t.jsonl", &format!("{good}\n{{\"messages\": 7}}\n"));
    let err = ends(&p, &["import", file.to_str().unwrap()], Exit::SomeFailed);
    assert!(err.contains("rejected "), "{err}");
    let clean = p.write("clean.jsonl", &format!("{good}\n"));
    let clean = clean.to_str().unwrap();
    ends(&p, &["import", clean], Exit::Success);
    let missing = p.path("missing.jsonl");
    ends(
        &p,
        &["import", clean, missing.to_str().unwrap()],
        Exit::Error,
    );
}

#[test]
fn check_without_checks_lint_problems_and_show_unknown_are_errors() {
    let p = project();
    let no_checks = p.path("no-checks");
    ends(
        &p,
        &["check", "--checks", no_checks.to_str().unwrap()],
        Exit::Error,
    );
    // A folder with nothing to lint (none of its folders holding a definition file), or
    // no folder at all: an error naming the folder, why and the fix, never a pass.
    let empty = tempfile::tempdir().unwrap();
    std::fs::create_dir(empty.path().join("scenarios")).unwrap();
    let gone = empty.path().join("gone");
    for (dir, why) in [
        (empty.path(), "no bench.toml, and no *.toml in scenarios/"),
        (gone.as_path(), "no such folder"),
    ] {
        let out = p.cmd(&["lint", dir.to_str().unwrap()]).output().unwrap();
        assert_eq!(out.status.code(), Some(Exit::Error.code()));
        let err = String::from_utf8_lossy(&out.stderr);
        let head = format!("lint: nothing to check in {}: {why}", dir.display());
        assert!(err.contains(&head) && err.contains("\n  fix: "), "{err}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("no problems"));
    }
    p.write("bench.toml", "name = \"x\"\n");
    ends(&p, &["lint", "."], Exit::Error);
    ends(&p, &["show", "nope"], Exit::Error);
}

#[test]
fn report_without_a_baseline_for_its_gate_is_an_error() {
    ends(&project(), &["report", "--fail-on-regression"], Exit::Error);
}
