//! Crash and interrupt safety: SIGKILL mid-run then `--resume`, and Ctrl-C (SIGINT).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use turnbench::exit::Exit;
use turnbench::mock::Profile;

const TARGETS: i64 = 2;
const SCENARIOS: i64 = 3;
const REPEATS: i64 = 6;

fn setup(pause: u64) -> (Mock, Project, std::path::PathBuf) {
    let mock = Mock::start(
        profiles(vec![
            Profile::quick("m1", 20.0, 2.0),
            Profile::quick("m2", 25.0, 2.0),
        ]),
        None,
    );
    let project = Project::new(&[
        ("a", &two_turn_scenario("a", pause)),
        ("b", &two_turn_scenario("b", pause)),
        ("c", &two_turn_scenario("c", pause)),
    ]);
    let bench = format!(
        "name = \"crash\"\nseed = 5\nrepeats = {REPEATS}\nconcurrency = 2\nper_target_concurrency = 1\n{}{}",
        target("acme", "m1", &mock.url(), ""),
        target("zeta", "m2", &mock.url(), "")
    );
    let bench_path = project.write("bench.toml", &bench);
    (mock, project, bench_path)
}

fn spawn_collect(project: &Project, bench: &std::path::Path, resume: bool) -> Child {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("turnbench"));
    cmd.current_dir(project.dir.path())
        .arg("--db")
        .arg(project.db())
        .args(["collect", "-q", "--config"])
        .arg(bench)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if resume {
        cmd.arg("--resume");
    }
    cmd.spawn().unwrap()
}

/// Waits until at least `n` conversations are stored (or the child ends).
fn wait_for_conversations(project: &Project, child: &mut Child, n: i64) -> i64 {
    let start = Instant::now();
    loop {
        if project.db().exists() {
            let stored = project
                .conn()
                .query_row("SELECT COUNT(*) FROM conversations", [], |r| r.get(0))
                .unwrap_or(0);
            if stored >= n {
                return stored;
            }
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "collector ended too early"
        );
        assert!(start.elapsed() < Duration::from_secs(60), "no progress");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn uids(project: &Project) -> Vec<String> {
    rows(
        &project.conn(),
        "SELECT uid FROM conversations WHERE outcome <> 'interrupted' ORDER BY uid",
        [],
        |r| r.get(0),
    )
}

fn assert_complete_and_sound(project: &Project, before: &[String]) {
    let conn = project.conn();
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM conversations WHERE outcome <> 'interrupted'"
        ),
        TARGETS * SCENARIOS * REPEATS
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM (SELECT 1 FROM conversations WHERE outcome <> 'interrupted'
             GROUP BY target_id, scenario, repeat HAVING COUNT(*) > 1)"
        ),
        0,
        "no slot holds two results"
    );
    assert_eq!(
        count(&conn, "SELECT COUNT(*) FROM runs"),
        1,
        "resume reuses the run"
    );
    // Every stored conversation has all its turns.
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM conversations c
             WHERE turn_count <> (SELECT COUNT(*) FROM turns t WHERE t.conversation_id = c.id)"
        ),
        0
    );
    let after = uids(project);
    for uid in before {
        assert!(
            after.contains(uid),
            "conversation {uid} stored before the crash was lost"
        );
    }
}

#[test]
fn sigkill_then_resume_loses_nothing_and_duplicates_nothing() {
    let (_mock, project, bench) = setup(0);
    let mut child = spawn_collect(&project, &bench, false);
    wait_for_conversations(&project, &mut child, 5);
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let before = uids(&project);
    assert!(
        (before.len() as i64) < TARGETS * SCENARIOS * REPEATS,
        "the kill landed mid-run"
    );

    let out = spawn_collect(&project, &bench, true)
        .wait_with_output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_complete_and_sound(&project, &before);

    // A second resume has nothing left to do.
    let out = spawn_collect(&project, &bench, true)
        .wait_with_output()
        .unwrap();
    assert!(out.status.success());
    assert_complete_and_sound(&project, &before);
}

#[test]
fn ctrl_c_drains_flushes_and_resume_finishes() {
    // A 150 ms pause before each second turn: an interrupt finds conversations mid-way.
    let (_mock, project, bench) = setup(150);
    let mut child = spawn_collect(&project, &bench, false);
    wait_for_conversations(&project, &mut child, 2);
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = child.wait().unwrap().code();
    assert_eq!(
        code,
        Some(Exit::Interrupted.code()),
        "an interrupted collect exits with 130"
    );
    let conn = project.conn();
    let interrupted = count(
        &conn,
        "SELECT COUNT(*) FROM conversations WHERE outcome = 'interrupted'",
    );
    assert!(
        interrupted >= 1,
        "conversations in flight are stored as interrupted"
    );
    let ended: Option<String> = conn
        .query_row("SELECT ended_at FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ended, None, "an interrupted run is not marked finished");
    let before = uids(&project);

    let out = spawn_collect(&project, &bench, true)
        .wait_with_output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_complete_and_sound(&project, &before);
    // The interrupted attempts stay as history.
    assert_eq!(
        count(
            &project.conn(),
            "SELECT COUNT(*) FROM conversations WHERE outcome = 'interrupted'"
        ),
        interrupted
    );
    // ... each superseded by the conversation that redid its slot: one counts per slot.
    let conn = project.conn();
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM conversations o JOIN conversations n ON n.id = o.superseded_by
             WHERE o.outcome = 'interrupted' AND n.outcome <> 'interrupted'
               AND (n.run_id, n.target_id, n.scenario, n.repeat)
                 = (o.run_id, o.target_id, o.scenario, o.repeat)"
        ),
        interrupted
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM conversation_facts WHERE counts AND outcome = 'interrupted'"
        ),
        0
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM (SELECT 1 FROM conversation_facts WHERE counts
             GROUP BY run_id, target_id, scenario, repeat HAVING COUNT(*) > 1)"
        ),
        0,
        "every slot counts once"
    );
}

#[test]
fn resume_refuses_changed_settings() {
    let (_mock, project, bench) = setup(0);
    let out = spawn_collect(&project, &bench, false)
        .wait_with_output()
        .unwrap();
    assert!(out.status.success());
    let text = std::fs::read_to_string(&bench)
        .unwrap()
        .replace("seed = 5", "seed = 6");
    std::fs::write(&bench, text).unwrap();
    let out = spawn_collect(&project, &bench, true)
        .wait_with_output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("other settings"), "{err}");
}
