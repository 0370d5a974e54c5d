//! `turnbench check`, `check --explain` and `lint` as a user runs them, on conversations
//! collected from the mock: three scenarios of the real suite (with their checks) against a
//! clean target, a target whose every answer is stale (it repeats the previous turn's
//! reference), and one whose every request fails.

use std::path::{Path, PathBuf};

use crate::common::*;
use turnbench::mock::Profile;

const SCENARIOS: [&str; 3] = [
    "dev-cursor-pagination",
    "biz-incident-communications",
    "struct-workshop-scheduling",
];

fn suite_file(rel: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn copy_checks(project: &Project, into: &str) {
    std::fs::create_dir_all(project.path(into)).unwrap();
    for id in SCENARIOS {
        project.write(
            &format!("{into}/{id}.toml"),
            &suite_file(&format!("checks/{id}.toml")),
        );
    }
}

fn quick(model: &str) -> Profile {
    let mut p = Profile::quick(model, 1.0, 0.0);
    p.words_per_chunk = 64;
    p
}

/// A project with the three scenarios and their checks, collected once per target.
fn collected() -> (Mock, Project) {
    let scenarios: Vec<(&str, String)> = SCENARIOS
        .iter()
        .map(|id| (*id, suite_file(&format!("scenarios/{id}.toml"))))
        .collect();
    let refs: Vec<(&str, &str)> = scenarios.iter().map(|(id, t)| (*id, t.as_str())).collect();
    let project = Project::new(&refs);
    copy_checks(&project, "checks");
    let mut stale = quick("stale");
    stale.defects.stale = 1.0;
    let mut broken = quick("broken");
    broken.faults.stream_cut = 1.0;
    // The mock answers each scenario turn with its reference (or, stale, the one before).
    let mock = Mock::start(
        profiles(vec![quick("clean"), stale, broken]),
        Some(&project.path("scenarios")),
    );
    let mut bench = String::from("name = \"check\"\nseed = 5\nrepeats = 1\npause_scale = 0\n");
    for model in ["clean", "stale", "broken"] {
        bench.push_str(&target("sim", model, &mock.url(), ""));
    }
    let bench_path = project.write("bench.toml", &bench);
    let out = project
        .cmd(&["collect", "-q", "--config", bench_path.to_str().unwrap()])
        .output()
        .unwrap();
    // The broken target's conversations fail by design: collect says so with exit 2.
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (mock, project)
}

fn run(project: &Project, args: &[&str]) -> String {
    let out = project.cmd(args).output().unwrap();
    assert!(
        out.status.success(),
        "turnbench {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The summary's count on the line starting with `what`.
fn summary_count(stdout: &str, what: &str) -> i64 {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with(what))
        .unwrap_or_else(|| panic!("no {what:?} line in:\n{stdout}"));
    line.trim_start()[what.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Results of one target's conversations: (tag, check id, passed, detail).
fn results_of(
    project: &Project,
    model: &str,
) -> Vec<(String, String, Option<bool>, Option<String>)> {
    let conn = project.conn();
    let mut stmt = conn
        .prepare(
            "SELECT d.tag, d.check_id, r.passed, r.detail FROM check_results r
             JOIN check_definitions d ON d.id = r.definition_id
             JOIN conversations c ON c.id = r.conversation_id
             JOIN targets t ON t.id = c.target_id
             WHERE t.model = ?1",
        )
        .unwrap();
    stmt.query_map([model], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

fn checks_in(project: &Project) -> i64 {
    let sets = turnbench::checks::CheckSet::load_dir(&project.path("checks")).unwrap();
    sets.iter().map(|s| s.checks.len() as i64).sum()
}

#[test]
fn check_scores_references_fails_stale_answers_and_skips_failed_conversations() {
    let (_mock, project) = collected();
    let checks = checks_in(&project);
    let stdout = run(&project, &["check"]);
    assert!(
        stdout.contains("checked 9 conversations against 3 checks files"),
        "{stdout}"
    );

    // The clean target answers with the references: every check passes.
    let clean = results_of(&project, "clean");
    assert_eq!(clean.len() as i64, checks);
    let failed: Vec<_> = clean.iter().filter(|r| r.2 != Some(true)).collect();
    assert!(failed.is_empty(), "references fail: {failed:#?}");
    assert!(clean.iter().all(|r| r.3.is_none()), "a pass has no detail");

    // Stale answers break superseded and retained constraints, with the reason stored.
    let stale = results_of(&project, "stale");
    assert_eq!(stale.len() as i64, checks);
    for tag in ["superseded_instruction", "retained_constraint"] {
        let failing: Vec<_> = stale
            .iter()
            .filter(|r| r.0 == tag && r.2 == Some(false))
            .collect();
        assert!(
            !failing.is_empty(),
            "no {tag} check failed on stale answers"
        );
        for (_, id, _, detail) in failing {
            let detail = detail.as_deref().unwrap_or("");
            assert!(detail.starts_with("turn "), "{id}: detail {detail:?}");
        }
    }

    // A conversation that did not complete is not scored, never passed or failed.
    let broken = results_of(&project, "broken");
    assert_eq!(broken.len() as i64, checks);
    for (_, id, passed, detail) in &broken {
        assert_eq!(*passed, None, "{id}");
        assert!(
            detail
                .as_deref()
                .unwrap_or("")
                .contains("did not complete (stream_cut"),
            "{id}: {detail:?}"
        );
    }
    assert_eq!(summary_count(&stdout, "not scored now"), checks);
    assert!(
        stdout.contains("3 of the 9 conversations did not complete"),
        "{stdout}"
    );
    let stale_failed = stale.iter().filter(|r| r.2 == Some(false)).count() as i64;
    assert_eq!(summary_count(&stdout, "evaluated now"), 2 * checks);
    assert!(
        stdout.contains(&format!(
            "{} passed, {stale_failed} failed",
            2 * checks - stale_failed
        )),
        "{stdout}"
    );
    assert!(stdout.contains("pass rate by tag"), "{stdout}");
    assert!(stdout.contains("sim / clean"), "{stdout}");
    assert!(stdout.contains("100 %"), "{stdout}");

    // A second run has nothing left to do.
    let conn = project.conn();
    let stored = count(&conn, "SELECT COUNT(*) FROM check_results");
    let again = run(&project, &["check"]);
    assert_eq!(summary_count(&again, "evaluated now"), 0, "{again}");
    assert_eq!(summary_count(&again, "not scored now"), 0, "{again}");
    assert_eq!(summary_count(&again, "already current"), stored, "{again}");
    assert_eq!(count(&conn, "SELECT COUNT(*) FROM check_results"), stored);
    // Pass rates cover stored results too, so they are the same as the first run's.
    let tables = |s: &str| s[s.find("pass rate by tag").unwrap()..].to_string();
    assert_eq!(tables(&again), tables(&stdout));
}

#[test]
fn explain_prints_each_check_with_its_verdict_and_why() {
    let (_mock, project) = collected();
    let conn = project.conn();
    let (id, uid): (i64, String) = conn
        .query_row(
            "SELECT c.id, c.uid FROM conversations c JOIN targets t ON t.id = c.target_id
             WHERE t.model = 'stale' AND c.scenario = 'dev-cursor-pagination'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    // Before `check`: judged on the spot, and said so.
    let before = run(&project, &["check", "--explain", &id.to_string()]);
    assert!(before.contains("(not stored yet)"), "{before}");
    run(&project, &["check", "-q"]);
    let after = run(&project, &["check", "--explain", &uid]);
    assert!(!after.contains("(not stored yet)"), "{after}");
    assert!(
        after.contains("scenario    dev-cursor-pagination"),
        "{after}"
    );
    assert!(after.contains("sim / stale"), "{after}");
    let fail = after
        .lines()
        .position(|l| l.trim_start().starts_with("FAIL"))
        .unwrap_or_else(|| panic!("no failed check:\n{after}"));
    let why = after.lines().nth(fail + 1).unwrap().trim_start();
    assert!(why.starts_with("turn "), "{after}");
    assert!(after.contains("  pass  "), "{after}");
    // The same verdicts as stored.
    assert_eq!(
        before.lines().filter(|l| l.contains("FAIL")).count(),
        after.lines().filter(|l| l.contains("FAIL")).count()
    );

    let broken: i64 = conn
        .query_row(
            "SELECT c.id FROM conversations c JOIN targets t ON t.id = c.target_id
             WHERE t.model = 'broken' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let text = run(&project, &["check", "--explain", &broken.to_string()]);
    assert!(text.contains("not scored"), "{text}");
    assert!(text.contains("did not complete"), "{text}");

    let out = project
        .cmd(&["check", "--explain", "no-such-uid"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("fix:"));
}

#[test]
fn an_edited_check_is_a_new_definition_and_old_results_stay() {
    let (_mock, project) = collected();
    run(&project, &["check"]);
    let conn = project.conn();
    let before = count(&conn, "SELECT COUNT(*) FROM check_results");

    copy_checks(&project, "checks-edited");
    let path = project.path("checks-edited/dev-cursor-pagination.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replacen("value = 200", "value = 200.0", 1);
    assert_ne!(edited, text);
    std::fs::write(&path, edited).unwrap();

    let stdout = run(&project, &["check", "--checks", "checks-edited"]);
    // One check changed, and three conversations (one per target) have its scenario.
    let matching = count(
        &conn,
        "SELECT COUNT(*) FROM conversations WHERE scenario = 'dev-cursor-pagination'",
    );
    assert_eq!(matching, 3);
    let after = count(&conn, "SELECT COUNT(*) FROM check_results");
    assert_eq!(after - before, matching, "{stdout}");
    assert_eq!(
        summary_count(&stdout, "evaluated now") + summary_count(&stdout, "not scored now"),
        matching
    );
    assert_eq!(
        summary_count(&stdout, "older definitions"),
        matching,
        "{stdout}"
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM check_definitions WHERE check_id = 'max-page-size-200'"
        ),
        2
    );
    // Numbers compare by value: the clean conversation passes under both definitions.
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM check_results r JOIN check_definitions d ON d.id = r.definition_id
             WHERE d.check_id = 'max-page-size-200' AND r.passed = 1"
        ),
        2
    );
    // Back to the original files: everything is current again, nothing evaluated.
    let again = run(&project, &["check"]);
    assert_eq!(summary_count(&again, "evaluated now"), 0, "{again}");
    assert_eq!(
        summary_count(&again, "older definitions"),
        matching,
        "{again}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
    }
}

#[test]
fn lint_names_file_and_line_and_check_refuses_unscorable_checks() {
    let project = Project::new(&[]);
    for id in SCENARIOS {
        project.write(
            &format!("scenarios/{id}.toml"),
            &suite_file(&format!("scenarios/{id}.toml")),
        );
    }
    copy_checks(&project, "checks");
    let bench = format!(
        "name = \"b\"\nonly = [\"dev-cursor-pagination\"]\n{}",
        target(
            "acme",
            "m",
            "https://api.example.com/v1",
            "api_key_env = \"TURNBENCH_UNSET_FOR_LINT\""
        )
    );
    project.write("bench.toml", &bench);
    let clean = run(&project, &["lint", ".", "--bench", "bench.toml"]);
    // Valid files, but nothing collected yet: `check` says so rather than make a store.
    let out = project.cmd(&["check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no store here"));
    assert!(!project.db().exists());
    assert!(
        clean.starts_with(
            "lint: no problems in 7 files (6 scenario and checks files, 1 bench file, 0 rubric files, 0 judge settings files)"
        ),
        "{clean}"
    );

    // A broken copy: a bad regex, a turn past the end, an unknown scenario in `only`.
    let broken = tempfile::tempdir().unwrap();
    copy_dir(&project.path("scenarios"), &broken.path().join("scenarios"));
    copy_dir(&project.path("checks"), &broken.path().join("checks"));
    let checks = broken.path().join("checks/dev-cursor-pagination.toml");
    let text = std::fs::read_to_string(&checks).unwrap();
    let at = text
        .find("pattern = '(page")
        .expect("the page-size pattern");
    let regex_line = text[..at].lines().count() + 1;
    std::fs::write(
        &checks,
        text.replacen("pattern = '(page", "pattern = '((page", 1),
    )
    .unwrap();
    let incident = broken
        .path()
        .join("checks/biz-incident-communications.toml");
    let text = std::fs::read_to_string(&incident).unwrap();
    let at = text.find("from_turn = 2").expect("a from_turn = 2 check");
    let turn_line = text[..at].lines().count() + 1;
    std::fs::write(
        &incident,
        text.replacen("from_turn = 2", "from_turn = 12", 1),
    )
    .unwrap();
    let bench_path = broken.path().join("bench.toml");
    std::fs::write(
        &bench_path,
        bench.replace("\"dev-cursor-pagination\"", "\"dev-cursor\""),
    )
    .unwrap();

    let out = project
        .cmd(&[
            "lint",
            broken.path().to_str().unwrap(),
            "--bench",
            bench_path.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "dev-cursor-pagination.toml:{regex_line}: bad regex"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "biz-incident-communications.toml:{turn_line}: check"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("bench.toml:2: `only` names scenario \"dev-cursor\""),
        "{stdout}"
    );
    assert!(stdout.contains("fix:"), "{stdout}");
    assert!(stdout.contains("lint: 3 problems"), "{stdout}");

    // `check` will not store results that could never be scored.
    std::fs::write(
        project.path("checks/biz-incident-communications.toml"),
        std::fs::read_to_string(&incident).unwrap(),
    )
    .unwrap();
    let out = project.cmd(&["check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "biz-incident-communications.toml:{turn_line}: check"
        )),
        "{stderr}"
    );
}

/// (conversation, check id, scope, stored conversation verdict, turn verdicts in turn
/// order) of every scored current result, read back through the documented views.
type Scored = (
    i64,
    String,
    Option<i64>,
    Option<i64>,
    bool,
    Vec<(i64, bool)>,
    i64,
);

fn scored_with_turns(conn: &rusqlite::Connection) -> Vec<Scored> {
    let mut stmt = conn
        .prepare(
            "SELECT r.conversation_id, r.check_id, d.definition ->> '$.from_turn',
                    d.definition ->> '$.turn', r.passed, c.turn_count,
                    (SELECT group_concat(t.turn || ':' || t.passed, ' ')
                       FROM (SELECT turn, passed FROM current_check_turn_results t
                             WHERE t.conversation_id = r.conversation_id
                               AND t.definition_id = r.definition_id ORDER BY turn) t)
             FROM current_check_results r
             JOIN current_check_definitions d ON d.definition_id = r.definition_id
             JOIN conversations c ON c.id = r.conversation_id
             WHERE r.passed IS NOT NULL",
        )
        .unwrap();
    stmt.query_map([], |r| {
        let turns: Option<String> = r.get(6)?;
        let turns = turns
            .unwrap_or_default()
            .split_whitespace()
            .map(|t| {
                let (turn, passed) = t.split_once(':').unwrap();
                (turn.parse().unwrap(), passed == "1")
            })
            .collect();
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            turns,
            r.get(5)?,
        ))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// Every scored result has a verdict for each answer in its scope and no other, and the
/// conversation verdict is exactly "every turn passed".
fn assert_turns_match_scopes(results: &[Scored]) {
    assert!(!results.is_empty());
    for (conversation, id, from_turn, turn, passed, turns, turn_count) in results {
        let expected: Vec<i64> = match (from_turn, turn) {
            (Some(n), _) => (*n..=*turn_count).collect(),
            (None, Some(n)) => vec![*n],
            (None, None) => vec![*turn_count],
        };
        let got: Vec<i64> = turns.iter().map(|t| t.0).collect();
        assert_eq!(got, expected, "conversation {conversation}, check {id}");
        assert_eq!(
            *passed,
            turns.iter().all(|t| t.1),
            "conversation {conversation}, check {id}: {turns:?}"
        );
    }
}

#[test]
fn each_answer_in_a_checks_scope_gets_its_own_verdict_and_explain_names_them() {
    let (_mock, project) = collected();
    let stdout = run(&project, &["check"]);
    let conn = project.conn();
    let results = scored_with_turns(&conn);
    assert_turns_match_scopes(&results);
    let rows = count(&conn, "SELECT COUNT(*) FROM check_turn_results");
    assert_eq!(
        summary_count(&stdout, "turn verdicts now"),
        rows,
        "{stdout}"
    );
    // Not-scored conversations (the broken target) have no turn verdicts.
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM check_turn_results t JOIN conversations c
               ON c.id = t.conversation_id WHERE c.outcome <> 'completed'"
        ),
        0
    );

    // Stale answers lose a `from_turn` requirement at some turns and keep it at others;
    // the failing turns are the ones the conversation verdict's detail names.
    let mixed = results
        .iter()
        .find(|r| r.2.is_some() && r.5.iter().any(|t| t.1) && r.5.iter().any(|t| !t.1))
        .unwrap_or_else(|| panic!("no from_turn check held at some turns and not others"));
    let detail: String = conn
        .query_row(
            "SELECT detail FROM current_check_results WHERE conversation_id = ?1 AND check_id = ?2",
            rusqlite::params![mixed.0, mixed.1],
            |r| r.get(0),
        )
        .unwrap();
    for (turn, passed) in &mixed.5 {
        assert_eq!(
            detail.contains(&format!("turn {turn}:")),
            !passed,
            "turn {turn} of {}: {detail}",
            mixed.1
        );
    }
    let explained = run(&project, &["check", "--explain", &mixed.0.to_string()]);
    let first_failed = mixed.5.iter().find(|t| !t.1).unwrap().0;
    assert!(
        explained.contains(&format!("first failed at turn {first_failed}")),
        "{explained}"
    );

    // Nothing new on a second run.
    let again = run(&project, &["check"]);
    assert_eq!(summary_count(&again, "turn verdicts now"), 0, "{again}");
    assert_eq!(
        count(&conn, "SELECT COUNT(*) FROM check_turn_results"),
        rows
    );
}

fn conversation_verdicts(conn: &rusqlite::Connection) -> Vec<(i64, i64, Option<i64>)> {
    let mut stmt = conn
        .prepare("SELECT conversation_id, definition_id, passed FROM check_results ORDER BY 1, 2")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// A store checked by turnbench before turn verdicts existed (a real one: the built-in run
/// collected and checked by the build before migration 009, cut to 7 conversations) gets
/// the turn verdicts of its stored results once, on the next `check`, and its conversation
/// verdicts are not touched.
#[test]
fn a_store_checked_before_turn_verdicts_gets_them_once_on_the_next_check() {
    let project = Project::new(&[]);
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/store-v8-checked-before-turn-verdicts.db"),
        project.db(),
    )
    .unwrap();
    let before = conversation_verdicts(&rusqlite::Connection::open(project.db()).unwrap());
    let scored = before.iter().filter(|r| r.2.is_some()).count() as i64;
    assert!(scored > 0 && before.iter().any(|r| r.2 == Some(0)));

    // The built-in checks are the ones this store was checked with.
    let stdout = run(&project, &["check"]);
    assert_eq!(summary_count(&stdout, "evaluated now"), 0, "{stdout}");
    assert_eq!(
        summary_count(&stdout, "older, turns added"),
        scored,
        "{stdout}"
    );
    assert!(!stdout.contains("older, no turns"), "{stdout}");
    let conn = project.conn();
    assert_turns_match_scopes(&scored_with_turns(&conn));
    assert_eq!(count(&conn, "SELECT COUNT(*) FROM store_backfills"), 0);
    let after = conversation_verdicts(&conn);
    assert_eq!(after, before, "conversation verdicts changed");

    // Once: turn rows removed by hand are not filled again.
    conn.execute_batch("DELETE FROM check_turn_results WHERE turn = 5")
        .unwrap();
    let left = count(&conn, "SELECT COUNT(*) FROM check_turn_results");
    let again = run(&project, &["check"]);
    assert!(!again.contains("older, turns added"), "{again}");
    assert_eq!(
        count(&conn, "SELECT COUNT(*) FROM check_turn_results"),
        left
    );
}
