//! Collect as a user runs it: pauses and latency, keys, bad definition files.

use crate::common::*;
use turnbench::mock::Profile;

#[test]
fn pauses_never_enter_latency_and_latency_is_the_sum_of_e2e() {
    // TTFT 40 ms, ten-ish chunks 1 ms apart; the second turn waits 400 ms first.
    let mock = Mock::start(
        profiles(vec![
            Profile::quick("m1", 40.0, 1.0),
            Profile::quick("m2", 40.0, 1.0),
        ]),
        None,
    );
    let project = Project::new(&[("alpha", &two_turn_scenario("alpha", 400))]);
    let bench = format!(
        "name = \"pauses\"\nseed = 9\nrepeats = 2\n{}{}",
        target("acme", "m1", &mock.url(), ""),
        target("zeta", "m2", &mock.url(), "")
    );
    let bench_path = project.write("bench.toml", &bench);
    project
        .cmd(&["collect", "-q", "--config", bench_path.to_str().unwrap()])
        .assert()
        .success();
    let conn = project.conn();
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM conversations WHERE outcome = 'completed'"
        ),
        4
    );
    // Latency is exactly the sum of the turns' E2E.
    let mismatched = count(
        &conn,
        "SELECT COUNT(*) FROM conversations c WHERE abs(c.latency_ms -
           (SELECT SUM(e2e_ms) FROM turns t WHERE t.conversation_id = c.id)) > 1e-9",
    );
    assert_eq!(mismatched, 0);
    // The 400 ms pause is recorded on the turn, and the same for every target.
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(DISTINCT pause_ms) FROM turns WHERE idx = 1"
        ),
        1
    );
    assert_eq!(
        count(
            &conn,
            "SELECT CAST(MIN(pause_ms) AS INTEGER) FROM turns WHERE idx = 1"
        ),
        400
    );
    // The second turn started after the pause, yet latency excludes it: the first turn's
    // E2E plus the second's is less than the pause itself here (two ~50 ms turns).
    let (start, latency): (f64, f64) = conn
        .query_row(
            "SELECT t.start_ms, c.latency_ms FROM turns t JOIN conversations c ON c.id = t.conversation_id
             WHERE t.idx = 1 LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(start >= 400.0, "turn 2 started after the pause: {start}");
    assert!(
        latency < 400.0,
        "latency {latency} must not contain the 400 ms pause"
    );
    // TTFT counts from the first text, not the role-only chunk sent at once.
    assert_eq!(
        count(&conn, "SELECT COUNT(*) FROM turns WHERE ttft_ms < 40"),
        0
    );
    // Each turn sent the full history: the second request held the first answer.
    let prompt: String = conn
        .query_row("SELECT prompt FROM turns WHERE idx = 1 LIMIT 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(prompt.contains("Correction for alpha"), "{prompt}");
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM turns WHERE visible_tokens IS NULL"
        ),
        0
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM turns WHERE length(chunk_offsets) < 8"
        ),
        0
    );
}

#[test]
fn the_api_key_is_sent_but_never_stored_or_printed() {
    let secret = "sk-test-7f3a9c1e5b2d4f6a8c0e";
    let mock = Mock::start(profiles(vec![Profile::quick("m", 2.0, 0.5)]), None);
    let project = Project::new(&[("alpha", &two_turn_scenario("alpha", 0))]);
    let bench = format!(
        "name = \"keys\"\nrepeats = 2\n{}",
        target(
            "acme",
            "m",
            &mock.url(),
            "api_key_env = \"TURNBENCH_TEST_SECRET\""
        )
    );
    let bench_path = project.write("bench.toml", &bench);
    let out = project
        .cmd(&["collect", "--config", bench_path.to_str().unwrap()])
        .env("TURNBENCH_TEST_SECRET", secret)
        .output()
        .unwrap();
    assert!(out.status.success());
    let served = mock.server.served();
    assert!(!served.is_empty());
    assert!(
        served
            .iter()
            .all(|s| s.auth.as_deref() == Some(&format!("Bearer {secret}"))),
        "the key reaches the provider: {:?}",
        served.iter().map(|s| s.auth.clone()).collect::<Vec<_>>()
    );
    drop(project.conn()); // make sure the WAL is checkpointed into the file as well
    for entry in std::fs::read_dir(project.dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap_or_default();
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "key found in a project file"
        );
    }
    for stream in [&out.stdout, &out.stderr] {
        assert!(!String::from_utf8_lossy(stream).contains(secret));
    }
    // The variable's name is kept, so the run says where its key came from.
    let settings: String = project
        .conn()
        .query_row("SELECT settings FROM runs", [], |r| r.get(0))
        .unwrap();
    assert!(settings.contains("TURNBENCH_TEST_SECRET"));
}

#[test]
fn bad_definition_files_fail_with_file_and_line_before_any_request() {
    let mock = Mock::start(profiles(vec![Profile::quick("m", 1.0, 0.5)]), None);
    let project = Project::new(&[("alpha", &two_turn_scenario("alpha", 0))]);
    let good = format!("name = \"x\"\n{}", target("acme", "m", &mock.url(), ""));
    let run = |bench: &str| {
        let path = project.write("bench.toml", bench);
        let out = project
            .cmd(&["collect", "-q", "--config", path.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let err = run(&good.replace("provider", "provder"));
    assert!(err.contains("bench.toml:4"), "{err}");
    assert!(err.contains("provder"), "{err}");
    let err = run(&good.replace("name = \"x\"", "name = \"x\"\nrepeats = \"three\""));
    assert!(err.contains("bench.toml:2"), "{err}");
    let err = run(&format!(
        "{good}api_key_env = \"TURNBENCH_SURELY_UNSET_VAR\"\n"
    ));
    assert!(err.contains("TURNBENCH_SURELY_UNSET_VAR"), "{err}");
    assert!(err.contains("export TURNBENCH_SURELY_UNSET_VAR"), "{err}");
    let err = run(&good.replace("name = \"x\"", "name = \"x\"\nonly = [\"gamma\"]"));
    assert!(err.contains("unknown scenario \"gamma\""), "{err}");
    assert!(err.contains("bench.toml:2"), "{err}");
    assert!(
        err.contains("alpha"),
        "the fix lists known scenarios: {err}"
    );

    project.write(
        "scenarios/broken.toml",
        "id = \"broken\"\ncategory = \"x\"\n[[turn]]\nuser = \"hi\"\npause_ms = [5]\n",
    );
    let err = run(&good);
    assert!(err.contains("broken.toml:5"), "{err}");
    assert!(mock.server.served().is_empty(), "nothing was sent");
    assert!(
        !project.db().exists() || count(&project.conn(), "SELECT COUNT(*) FROM conversations") == 0
    );
}

#[test]
fn launch_order_rotates_across_targets() {
    let mock = Mock::start(
        profiles(vec![
            Profile::quick("m1", 1.0, 0.2),
            Profile::quick("m2", 1.0, 0.2),
            Profile::quick("m3", 1.0, 0.2),
        ]),
        None,
    );
    let project = Project::new(&[
        ("alpha", &two_turn_scenario("alpha", 0)),
        ("beta", &two_turn_scenario("beta", 0)),
    ]);
    let bench = format!(
        "name = \"order\"\nrepeats = 2\nconcurrency = 1\n{}{}{}",
        target("p1", "m1", &mock.url(), ""),
        target("p2", "m2", &mock.url(), ""),
        target("p3", "m3", &mock.url(), "")
    );
    let bench_path = project.write("bench.toml", &bench);
    project
        .cmd(&["collect", "-q", "--config", bench_path.to_str().unwrap()])
        .assert()
        .success();
    let order: Vec<(String, String, i64)> = rows(
        &project.conn(),
        "SELECT t.provider, c.scenario, c.repeat FROM conversations c
         JOIN targets t ON t.id = c.target_id ORDER BY c.started_at, c.id",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    );
    assert_eq!(order.len(), 12);
    // One conversation at a time: targets take turns, each working through (repeat, scenario).
    for (i, (provider, _, _)) in order.iter().enumerate() {
        assert_eq!(provider, &format!("p{}", i % 3 + 1), "{order:?}");
    }
    let p1: Vec<_> = order
        .iter()
        .filter(|o| o.0 == "p1")
        .map(|o| (o.1.as_str(), o.2))
        .collect();
    assert_eq!(
        p1,
        vec![("alpha", 1), ("beta", 1), ("alpha", 2), ("beta", 2)]
    );
}

#[test]
fn dry_run_shows_each_request_and_sends_nothing() {
    let mock = Mock::start(profiles(vec![Profile::quick("m", 1.0, 0.2)]), None);
    let project = Project::new(&[("alpha", &two_turn_scenario("alpha", 0))]);
    let bench = format!(
        "name = \"dry\"\nrepeats = 3\n[request]\nmax_tokens = 300\n{}",
        target(
            "acme",
            "m",
            &mock.url(),
            "api_key_env = \"TURNBENCH_DRY_RUN_UNSET_KEY\"\nrequest = { max_completion_tokens = 77, extra = { top_k = 5 } }"
        )
    );
    let bench_path = project.write("bench.toml", &bench);
    let (text, _) = project.run_ok(&[
        "collect",
        "--dry-run",
        "--config",
        bench_path.to_str().unwrap(),
    ]);
    assert!(
        text.contains("1 targets × 1 scenarios × 3 repeats = 3 conversations, 6 requests"),
        "{text}"
    );
    assert!(
        text.contains(&format!("POST {}/chat/completions", mock.url())),
        "{text}"
    );
    assert!(text.contains("\"max_completion_tokens\": 77"), "{text}");
    assert!(
        !text.contains("\"max_tokens\""),
        "the target's limit replaces the default: {text}"
    );
    assert!(
        text.contains("\"top_k\": 5") && text.contains("\"include_usage\": true"),
        "{text}"
    );
    assert!(text.contains("First task for alpha"), "{text}");
    assert!(
        text.contains("TURNBENCH_DRY_RUN_UNSET_KEY (NOT SET"),
        "{text}"
    );
    assert!(mock.server.served().is_empty(), "nothing was sent");
    assert!(!project.db().exists(), "no store was made");
}
