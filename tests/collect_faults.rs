//! Every fault class the mock injects ends with the right outcome, the run goes on, and
//! the counts add up to targets × scenarios × repeats.

use crate::common::*;
use turnbench::mock::Profile;

fn faulty(model: &str, set: impl Fn(&mut Profile)) -> Profile {
    let mut p = Profile::quick(model, 5.0, 1.0);
    set(&mut p);
    p
}

#[test]
fn each_fault_class_is_recorded_and_the_run_continues() {
    let cases: Vec<(&str, Profile, &str)> = vec![
        ("ok", faulty("ok", |_| {}), "completed"),
        (
            "r429",
            faulty("r429", |p| p.faults.rate_limited = 1.0),
            "rate_limited",
        ),
        (
            "r500",
            faulty("r500", |p| p.faults.http_500 = 1.0),
            "http_5xx",
        ),
        (
            "r503",
            faulty("r503", |p| p.faults.http_503 = 1.0),
            "http_5xx",
        ),
        (
            "stall",
            faulty("stall", |p| p.faults.stall = 1.0),
            "timeout",
        ),
        (
            "cut",
            faulty("cut", |p| p.faults.stream_cut = 1.0),
            "stream_cut",
        ),
        (
            "bad",
            faulty("bad", |p| p.faults.malformed = 1.0),
            "malformed",
        ),
        (
            "err200",
            faulty("err200", |p| p.faults.error_after_200 = 1.0),
            "http_5xx",
        ),
        (
            "empty",
            faulty("empty", |p| p.faults.empty = 1.0),
            "empty_answer",
        ),
        // Truncated turns keep their text: the conversation completes.
        ("len", faulty("len", |p| p.faults.length = 1.0), "completed"),
    ];
    let mock = Mock::start(
        profiles(cases.iter().map(|(_, p, _)| p.clone()).collect()),
        None,
    );
    let project = Project::new(&[
        ("alpha", &two_turn_scenario("alpha", 0)),
        ("beta", &two_turn_scenario("beta", 0)),
    ]);
    let mut bench = String::from(
        "name = \"faults\"\nseed = 3\nrepeats = 2\nturn_timeout_s = 1.5\nconcurrency = 6\nper_target_concurrency = 2\n",
    );
    for (model, _, _) in &cases {
        bench.push_str(&target("acme", model, &mock.url(), ""));
    }
    // The same faults through a non-streaming request.
    for model in ["ok", "cut", "bad", "err200", "r500"] {
        bench.push_str(&target(
            "acme",
            model,
            &mock.url(),
            &format!("label = \"{model}-whole\"\nrequest = {{ stream = false }}"),
        ));
    }
    let bench_path = project.write("bench.toml", &bench);

    let out = project
        .cmd(&["collect", "-q", "--config", bench_path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "a run with failed conversations exits 2: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("acme / stall"),
        "summary lists every target: {stdout}"
    );
    // Truncated answers are completions, but not clean ones: the summary says so.
    let len_row = stdout
        .lines()
        .find(|l| l.starts_with("acme / len "))
        .unwrap();
    let cols: Vec<&str> = len_row.split_whitespace().collect();
    assert_eq!(&cols[3..9], ["4", "4", "0", "4", "0", "0"], "{stdout}");

    let conn = project.conn();
    let targets = cases.len() as i64 + 5;
    assert_eq!(
        count(&conn, "SELECT COUNT(*) FROM conversations"),
        targets * 2 * 2,
        "every target × scenario × repeat is stored once"
    );
    let outcome_of = |label: &str| -> Vec<String> {
        rows(
            &conn,
            "SELECT DISTINCT c.outcome FROM conversations c JOIN targets t ON t.id = c.target_id
             WHERE t.label = ?1",
            [label],
            |r| r.get(0),
        )
    };
    for (model, _, expected) in &cases {
        assert_eq!(
            outcome_of(model),
            vec![expected.to_string()],
            "target {model}"
        );
    }
    assert_eq!(outcome_of("ok-whole"), vec!["completed"]);
    assert_eq!(outcome_of("cut-whole"), vec!["stream_cut"]);
    assert_eq!(outcome_of("bad-whole"), vec!["malformed"]);
    assert_eq!(outcome_of("err200-whole"), vec!["http_5xx"]);
    assert_eq!(outcome_of("r500-whole"), vec!["http_5xx"]);

    // A failed first turn ends the conversation: no second turn was sent.
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM conversations WHERE outcome NOT IN ('completed') AND turn_count <> 1"
        ),
        0
    );
    // Detail and status are kept with each failure.
    let (status, error): (Option<i64>, String) = conn
        .query_row(
            "SELECT tu.http_status, tu.error FROM turns tu JOIN conversations c ON c.id = tu.conversation_id
             JOIN targets t ON t.id = c.target_id WHERE t.label = 'r429' LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(status, Some(429));
    assert!(error.contains("429"), "{error}");
    let err200: String = conn
        .query_row(
            "SELECT tu.error FROM turns tu JOIN conversations c ON c.id = tu.conversation_id
             JOIN targets t ON t.id = c.target_id WHERE t.label = 'err200' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(err200.contains("after HTTP 200"), "{err200}");
    // Truncated turns are kept with their text and finish reason.
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM turns tu JOIN conversations c ON c.id = tu.conversation_id
             JOIN targets t ON t.id = c.target_id
             WHERE t.label = 'len' AND tu.outcome = 'truncated' AND tu.finish_reason = 'length'
               AND length(tu.answer) > 0"
        ),
        2 * 2 * 2
    );
    // Streamed successes carry TTFT and TTFA; whole responses have neither but keep E2E.
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM turns tu JOIN conversations c ON c.id = tu.conversation_id
             JOIN targets t ON t.id = c.target_id
             WHERE t.label = 'ok' AND (tu.ttft_ms IS NULL OR tu.ttfa_ms IS NULL OR tu.ttft_ms > tu.e2e_ms)"
        ),
        0
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM turns tu JOIN conversations c ON c.id = tu.conversation_id
             JOIN targets t ON t.id = c.target_id
             WHERE t.label = 'ok-whole' AND tu.ttft_ms IS NULL AND tu.e2e_ms > 0"
        ),
        2 * 2 * 2
    );
}

#[test]
fn retries_record_every_attempt_and_honour_retry_after() {
    // Half the requests are refused with 429 + Retry-After: 1; three attempts per turn.
    let mut p = Profile::quick("flaky", 2.0, 0.5);
    p.faults.rate_limited = 0.5;
    let mock = Mock::start(profiles(vec![p]), None);
    let project = Project::new(&[("alpha", &two_turn_scenario("alpha", 0))]);
    let bench = format!(
        "name = \"retry\"\nrepeats = 6\nconcurrency = 6\nper_target_concurrency = 6\n[retry]\nattempts = 3\nbackoff_ms = 10\nmax_wait_ms = 50\n{}",
        target("acme", "flaky", &mock.url(), "")
    );
    let bench_path = project.write("bench.toml", &bench);
    let out = project
        .cmd(&["collect", "-q", "--config", bench_path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 2)), "{out:?}");
    let conn = project.conn();
    let turns = count(&conn, "SELECT COUNT(*) FROM turns");
    // Wall time: from the first attempt's send to the final answer, waits included; the
    // same as E2E for a turn answered at the first attempt.
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM turns WHERE attempts = 1 AND e2e_ms IS NOT NULL AND wall_ms IS NOT e2e_ms"
        ),
        0
    );
    assert!(
        count(
            &conn,
            "SELECT COUNT(*) FROM turns WHERE attempts > 1 AND wall_ms IS NOT NULL"
        ) > 0
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM turns t WHERE t.attempts > 1 AND t.wall_ms IS NOT NULL AND t.wall_ms <
               t.e2e_ms + (SELECT SUM(a.waited_ms) + SUM(COALESCE(a.e2e_ms, 0)) FROM attempts a
                  WHERE a.conversation_id = t.conversation_id AND a.turn_idx = t.idx AND a.attempt < t.attempts) - 1e-6"
        ),
        0,
        "wall time holds the failed attempts and the waits"
    );
    let attempts = count(&conn, "SELECT COUNT(*) FROM attempts");
    let retried = count(&conn, "SELECT COUNT(*) FROM turns WHERE attempts > 1");
    assert!(
        retried > 0,
        "with p = 0.5 over {turns} turns some turn was retried"
    );
    assert_eq!(
        attempts,
        count(&conn, "SELECT SUM(attempts) FROM turns"),
        "one attempts row per attempt"
    );
    // Retry-After (1 s) was capped at max_wait_ms (50) and recorded as the wait.
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM attempts WHERE attempt > 1 AND waited_ms <> 50"
        ),
        0
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM attempts WHERE attempt < 3 AND outcome = 'ok' AND attempt <> (SELECT attempts FROM turns t WHERE t.conversation_id = attempts.conversation_id AND t.idx = attempts.turn_idx)"
        ),
        0,
        "an ok attempt is always the turn's last"
    );
}
