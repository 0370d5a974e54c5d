//! A wrong value in any definition file names the file, the line, the key, what the key is
//! for and what it takes (`src/config/keys.rs`), through `turnbench lint`; and that table
//! knows every key each kind of file accepts (read from the parser's own list of accepted
//! keys, so a key added to a file without its entry fails here).

use std::path::Path;

use crate::common::Project;
use turnbench::checks::CheckSet;
use turnbench::config::keys::{self, FileKind};
use turnbench::config::{BenchConfig, JudgeSettings, Rubric, Scenario, SourceText};

/// Replaces `from` (which must be there) by `to` in the project's file `rel`.
fn edit(p: &Project, rel: &str, from: &str, to: &str) {
    let text = std::fs::read_to_string(p.path(rel)).unwrap();
    assert!(text.contains(from), "{rel} has no {from:?}");
    p.write(rel, &text.replacen(from, to, 1));
}

/// The 1-based line of `needle` in the project's file `rel`.
fn line_of(p: &Project, rel: &str, needle: &str) -> usize {
    let text = std::fs::read_to_string(p.path(rel)).unwrap();
    let at = text.find(needle).unwrap();
    text[..at].lines().count() + usize::from(at == 0 || text[..at].ends_with('\n'))
}

#[test]
fn lint_names_the_key_its_meaning_and_its_range_in_every_kind_of_file() {
    let p = Project::new(&[]);
    p.run_ok(&["init", "."]);
    // One wrong value per file, in each kind of definition file: a type the parser
    // refuses, or a value out of the key's range.
    let cases: [(&str, &str, &str, &[&str]); 10] = [
        (
            "bench.toml",
            "repeats = 2",
            "repeats = -1",
            &[
                "`repeats`: the number of conversations per target × scenario",
                "a whole number, 1 or more",
            ],
        ),
        (
            "rubrics/multiturn-quality.toml",
            "version = 1",
            "version = \"one\"",
            &[
                "`version`: the rubric's version",
                "a whole number, 1 or more",
            ],
        ),
        (
            "rubrics/support-tone.toml",
            "scale = { min = 1, max = 5 }",
            "scale = { min = 1, max = 4.5 }",
            &["`max`: the highest score", "a whole number above min"],
        ),
        (
            "judges/default.toml",
            "replicates = 1",
            "replicates = 0",
            &[
                "`replicates`: the number of judgments per conversation",
                "a whole number, 1 or more",
            ],
        ),
        (
            "judges/mock.toml",
            "builtin_mock = true",
            "builtin_mock = \"yes\"",
            &[
                "`builtin_mock`: whether the built-in mock judge answers",
                "true or false",
            ],
        ),
        (
            "checks/biz-account-planning.toml",
            "max = 5",
            "max = -5",
            &[
                "`max`: the longest answer allowed",
                "a whole number, 0 or more",
            ],
        ),
        (
            "checks/biz-incident-communications.toml",
            "from_turn = 2",
            "from_turn = \"second\"",
            &[
                "`from_turn`: the first turn of the turns the check applies to",
                "a turn number, 1 or more",
            ],
        ),
        (
            "bench.toml",
            "price = { input = 0.20, output = 0.80 }",
            "price = { input = \"cheap\", output = 0.80 }",
            &[
                "`input`: the price in USD per million input tokens",
                "a number of USD, 0 or more",
            ],
        ),
        (
            "scenarios/dev-cursor-pagination.toml",
            "pause_ms = [1500, 6000]",
            "pause_ms = \"soon\"",
            &[
                "`pause_ms`: the simulated user pause",
                "[min, max], whole numbers with min ≤ max",
            ],
        ),
        (
            "bench.toml",
            "[[target]]",
            "[replay]\nsessions_in_flight = 0\n\n[[target]]",
            &[
                "`sessions_in_flight`: the number of sessions in flight per target",
                "a whole number, 1 or more",
            ],
        ),
    ];
    // A file reports its first problem, and a broken scenario hides the checks: three
    // rounds, each file edited once per round and restored after it.
    let rounds = [(&cases[..7], 7), (&cases[7..9], 2), (&cases[9..], 1)];
    for (round, expect_n) in rounds {
        let mut expected = Vec::new();
        let mut originals = Vec::new();
        for (rel, from, to, says) in round {
            originals.push((*rel, std::fs::read_to_string(p.path(rel)).unwrap()));
            edit(&p, rel, from, to);
            // The line of the wrong value: the one of `to`'s lines that sets a key.
            let needle = to.lines().find(|l| l.contains(" = ")).unwrap_or(to);
            let needle = if to.contains("cheap") {
                "\"cheap\""
            } else {
                needle
            };
            expected.push((*rel, line_of(&p, rel, needle), *says));
        }
        let out = p.cmd(&["lint", "."]).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        let stdout = String::from_utf8_lossy(&out.stdout);
        for (rel, line, says) in expected {
            let head = format!("./{rel}:{line}: ");
            let at = stdout
                .find(&head)
                .unwrap_or_else(|| panic!("no error at {head}:\n{stdout}"));
            // The error's own two lines: the problem, then the fix.
            let error: Vec<&str> = stdout[at..].lines().take(2).collect();
            assert!(error[1].starts_with("  fix: "), "{error:?}");
            for s in says {
                assert!(error[1].contains(s), "{rel}: {s:?} not in {error:?}");
            }
        }
        assert!(
            stdout.contains(&format!("lint: {expect_n} problems")),
            "{stdout}"
        );
        for (rel, text) in originals {
            p.write(rel, &text);
        }
    }
}

/// The keys a file's parser accepts at one table, from its "unknown field" error.
fn accepted_keys(error: &str) -> Vec<String> {
    let first = error.lines().next().unwrap_or_default();
    assert!(first.contains("unknown field `zzz`"), "{error}");
    let listed = first.split_once("expected").map_or("", |(_, l)| l);
    listed
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Loads `text` as a file of `kind` (in `dir`, for the kinds read from disk) and returns
/// its error.
fn load_error(kind: FileKind, dir: &Path, text: &str) -> String {
    let src = |name: &str| SourceText {
        path: dir.join(name),
        text: text.to_string(),
    };
    let err = match kind {
        FileKind::Bench => BenchConfig::from_source_without_keys(&src("bench.toml")).err(),
        FileKind::Scenario => Scenario::from_source(&src("s.toml")).err(),
        FileKind::Rubric => Rubric::from_source(&src("r.toml")).err(),
        FileKind::Checks => CheckSet::from_source(&src("s.toml")).err(),
        FileKind::Mock => unreachable!("mock profiles are not listed"),
        FileKind::Judge => {
            std::fs::write(dir.join("j.toml"), text).unwrap();
            JudgeSettings::load_without_keys(&dir.join("j.toml")).err()
        }
    };
    err.map(|e| e.to_string()).unwrap_or_default()
}

#[test]
fn every_key_a_definition_file_accepts_is_in_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let check = |kind: &str| {
        format!(
            "scenario = \"s\"\n[[check]]\nid = \"c\"\nkind = \"{kind}\"\ntag = \"format\"\nzzz = 1\n"
        )
    };
    let mut tables: Vec<(FileKind, Vec<&str>, String)> = vec![
        (FileKind::Bench, vec![], "zzz = 1".into()),
        (
            FileKind::Bench,
            vec!["request"],
            "[request]\nzzz = 1".into(),
        ),
        (FileKind::Bench, vec!["retry"], "[retry]\nzzz = 1".into()),
        (FileKind::Bench, vec!["replay"], "[replay]\nzzz = 1".into()),
        (
            FileKind::Bench,
            vec!["target"],
            "[[target]]\nzzz = 1".into(),
        ),
        (
            FileKind::Bench,
            vec!["target", "price"],
            "[[target]]\n[target.price]\nzzz = 1".into(),
        ),
        (
            FileKind::Bench,
            vec!["target", "request"],
            "[[target]]\n[target.request]\nzzz = 1".into(),
        ),
        (
            FileKind::Bench,
            vec!["target", "replay"],
            "[[target]]\n[target.replay]\nzzz = 1".into(),
        ),
        (FileKind::Scenario, vec![], "zzz = 1".into()),
        (FileKind::Scenario, vec!["turn"], "[[turn]]\nzzz = 1".into()),
        (FileKind::Rubric, vec![], "zzz = 1".into()),
        (FileKind::Rubric, vec!["scale"], "[scale]\nzzz = 1".into()),
        (
            FileKind::Rubric,
            vec!["criterion"],
            "[[criterion]]\nzzz = 1".into(),
        ),
        (
            FileKind::Rubric,
            vec!["completed"],
            "[completed]\nzzz = 1".into(),
        ),
        (FileKind::Judge, vec![], "zzz = 1".into()),
        (
            FileKind::Judge,
            vec!["request"],
            "[request]\nzzz = 1".into(),
        ),
        (FileKind::Judge, vec!["retry"], "[retry]\nzzz = 1".into()),
        (FileKind::Checks, vec![], "zzz = 1".into()),
        (
            FileKind::Checks,
            vec!["defect"],
            "scenario = \"s\"\n[[defect]]\nzzz = 1".into(),
        ),
    ];
    for kind in turnbench::checks::kind_names() {
        tables.push((FileKind::Checks, vec!["check"], check(kind)));
    }
    let mut missing = Vec::new();
    let mut seen = 0;
    for (kind, table, text) in &tables {
        let error = load_error(*kind, dir.path(), text);
        for key in accepted_keys(&error) {
            seen += 1;
            let mut path = table.clone();
            path.push(&key);
            if keys::find(*kind, &path).is_none() {
                missing.push(format!("{kind:?} {}", path.join(".")));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "keys without an entry in src/config/keys.rs: {missing:?}"
    );
    // Every table listed its keys (not "there are no fields").
    assert!(seen > 100, "{seen}");
    // The check heads' keys, taken out before a kind's own keys are read.
    for key in ["id", "kind", "tag", "description", "turn", "from_turn"] {
        assert!(
            keys::find(FileKind::Checks, &["check", key]).is_some(),
            "{key}"
        );
    }
}
