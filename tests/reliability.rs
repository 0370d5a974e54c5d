//! The tests that go looking (issue 10): the fault matrix, SIGKILL at seeded moments then
//! resume, and a full disk. Their figures are in docs/reliability.md.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use turnbench::exit::Exit;
use turnbench::mock::Profile;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A fault the matrix tries: the target's model, where the fault comes from, and the
/// class its conversation must be stored with.
struct Fault {
    model: &'static str,
    source: &'static str,
    expected: &'static str,
}

const MOCK_FAULTS: [(&str, &str); 10] = [
    ("ok", "completed"),
    ("rate-limited", "rate_limited"),
    ("http-500", "http_5xx"),
    ("http-503", "http_5xx"),
    ("stall", "timeout"),
    ("stream-cut", "stream_cut"),
    ("malformed", "malformed"),
    ("error-after-200", "http_5xx"),
    ("empty", "empty_answer"),
    ("length", "completed"),
];

const SCRIPTED_FAULTS: [(&str, &str); 24] = [
    ("retry-after-1e20", "rate_limited"),
    ("retry-after-nan", "rate_limited"),
    ("error-field-null", "http_5xx"),
    ("event-error-null", "http_5xx"),
    ("code-rate-limit-exceeded", "rate_limited"),
    ("gateway-rate-limit-error", "rate_limited"),
    ("type-server-error", "http_5xx"),
    ("context-length-exceeded", "context_overflow"),
    ("http-401", "http_4xx"),
    ("http-404-html", "http_4xx"),
    ("http-502-html", "http_5xx"),
    ("content-filter", "completed"),
    ("quoted-think-tag", "completed"),
    ("json-to-stream", "completed"),
    ("empty-200-stream", "stream_cut"),
    ("no-done", "completed"),
    ("bom-crlf-comments", "completed"),
    ("invalid-utf8", "completed"),
    ("not-sse-garbage", "stream_cut"),
    ("huge-unparseable-line", "malformed"),
    ("hangup", "connect_error"),
    ("cut-mid-answer", "stream_cut"),
    ("stale-keepalive", "completed"),
    ("choices-not-array", "empty_answer"),
];

fn scripted_reply(req: &ScriptedRequest) -> Reply {
    let text = |t: &str| serde_json::json!({"choices":[{"delta":{"content":t}}]}).to_string();
    let finish = |r: &str| format!(r#"{{"choices":[{{"delta":{{}},"finish_reason":"{r}"}}]}}"#);
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    let raw = |body: &[u8]| {
        let mut v = head.as_bytes().to_vec();
        v.extend_from_slice(body);
        Reply::Close(v)
    };
    let err_sse = |e: &str| Reply::Close(sse(&[&text("partial "), e, "[DONE]"]));
    match req.model.as_str() {
        "retry-after-1e20" => Reply::Close(http("429 Too Many Requests", "retry-after: 1e20\r\n", "{}")),
        "retry-after-nan" => Reply::Close(http("429 Too Many Requests", "retry-after: NaN\r\n", "{}")),
        "error-field-null" => raw(b"error: null\n\n"),
        "event-error-null" => raw(b"event: error\ndata: null\n\n"),
        "code-rate-limit-exceeded" => err_sse(r#"{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}"#),
        "gateway-rate-limit-error" => err_sse(r#"{"error":{"type":"rate_limit_error","code":"rate_limit_exceeded"}}"#),
        "type-server-error" => err_sse(r#"{"error":{"message":"boom","type":"server_error"}}"#),
        "context-length-exceeded" => err_sse(
            r#"{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
        ),
        "http-401" => Reply::Close(http("401 Unauthorized", "", r#"{"error":{"message":"bad key"}}"#)),
        "http-404-html" => Reply::Close(
            b"HTTP/1.1 404 Not Found\r\ncontent-type: text/html\r\ncontent-length: 20\r\n\r\n<html>nope</html>\n\n\n"
                .to_vec(),
        ),
        "http-502-html" => Reply::Close(
            b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\nconnection: close\r\n\r\n<html>bad gateway</html>"
                .to_vec(),
        ),
        "content-filter" => Reply::Close(sse(&[&text("Part of it"), &finish("content_filter"), "[DONE]"])),
        "quoted-think-tag" => Reply::Close(answer_sse("Close it with `</think>` first.", "stop")),
        "json-to-stream" => Reply::Close(http(
            "200 OK",
            "connection: close\r\n",
            r#"{"choices":[{"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}"#,
        )),
        "empty-200-stream" => raw(b""),
        "no-done" => raw(format!("data: {}\n\ndata: {}", text("fine"), finish("stop")).as_bytes()),
        "bom-crlf-comments" => raw(
            format!("\u{feff}: keep-alive\r\n\r\ndata: {}\r\n\r\ndata: {}\r\n\r\ndata: [DONE]\r\n\r\n", text("fine"), finish("stop"))
                .as_bytes(),
        ),
        "invalid-utf8" => {
            let mut body = b"data: {\"choices\":[{\"delta\":{\"content\":\"caf\xc3 \xff ok\"}}]}\n\n".to_vec();
            body.extend_from_slice(format!("data: {}\n\ndata: [DONE]\n\n", finish("stop")).as_bytes());
            raw(&body)
        }
        "not-sse-garbage" => raw(b"\x00\x01garbage without any field\n\xfe\xfd\n"),
        "huge-unparseable-line" => {
            let mut body = b"data: ".to_vec();
            body.extend(std::iter::repeat_n(b'a', 1 << 20));
            body.extend_from_slice(b"\n\n");
            raw(&body)
        }
        "hangup" => Reply::Hangup,
        "cut-mid-answer" => raw(format!("data: {}\n\n", text("half an ans")).as_bytes()),
        "stale-keepalive" if req.on_connection == 0 => {
            let body = format!("data: {}\n\ndata: {}\n\ndata: [DONE]\n\n", text("fine"), finish("stop"));
            Reply::KeepAlive(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                )
                .into_bytes(),
            )
        }
        "stale-keepalive" => Reply::Hangup,
        "choices-not-array" => Reply::Close(sse(&[r#"{"choices":5}"#, "[DONE]"])),
        other => Reply::Close(http("404 Not Found", "", &format!("{{\"error\":\"no script for {other}\"}}"))),
    }
}

fn mock_profile(model: &str) -> Profile {
    let mut p = Profile::quick(model, 2.0, 0.5);
    let f = &mut p.faults;
    match model {
        "rate-limited" => f.rate_limited = 1.0,
        "http-500" => f.http_500 = 1.0,
        "http-503" => f.http_503 = 1.0,
        "stall" => f.stall = 1.0,
        "stream-cut" => f.stream_cut = 1.0,
        "malformed" => f.malformed = 1.0,
        "error-after-200" => f.error_after_200 = 1.0,
        "empty" => f.empty = 1.0,
        "length" => f.length = 1.0,
        _ => {}
    }
    p
}

/// Every outcome class, from the mock and from a scripted loopback server, through the
/// binary: each stored with the expected class, no panic, no conversation lost. Prints
/// the table that docs/reliability.md shows, and checks that the docs hold it.
#[test]
fn fault_matrix() {
    let mock = Mock::start(
        profiles(MOCK_FAULTS.iter().map(|(m, _)| mock_profile(m)).collect()),
        None,
    );
    let server = Scripted::start(scripted_reply);
    let project = Project::new(&[("alpha", &two_turn_scenario("alpha", 0))]);
    let mut faults = Vec::new();
    let mut bench = String::from(
        "name = \"matrix\"\nrepeats = 1\nturn_timeout_s = 2\nconcurrency = 8\nper_target_concurrency = 1\n[retry]\nattempts = 2\nbackoff_ms = 1\nmax_wait_ms = 10\n",
    );
    for (model, expected) in MOCK_FAULTS {
        bench.push_str(&target("mock", model, &mock.url(), ""));
        faults.push(Fault {
            model,
            source: "mock",
            expected,
        });
    }
    for (model, expected) in SCRIPTED_FAULTS {
        bench.push_str(&target("scripted", model, &server.url(), ""));
        faults.push(Fault {
            model,
            source: "scripted",
            expected,
        });
    }
    let bench_path = project.write("bench.toml", &bench);
    let out = project
        .cmd(&["collect", "--config", bench_path.to_str().unwrap()])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(Exit::SomeFailed.code()),
        "{}",
        stderr(&out)
    );
    let panics = stderr(&out).matches("panicked").count() as i64;
    let conn = project.conn();
    let mut table = String::from(
        "| fault | source | expected class | stored class | panics | conversations lost |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    let (mut right, mut lost_total) = (0, 0);
    let mut wrong = Vec::new();
    for f in &faults {
        let stored: Vec<String> = rows(
            &conn,
            "SELECT c.outcome FROM conversations c JOIN targets t ON t.id = c.target_id WHERE t.model = ?1",
            [f.model],
            |r| r.get(0),
        );
        let internal = count_where(&conn, f.model);
        let lost = 1 - stored.len() as i64;
        let class = stored.first().cloned().unwrap_or_else(|| "-".into());
        if class == f.expected && lost == 0 && internal == 0 {
            right += 1;
        } else {
            wrong.push(f.model);
        }
        lost_total += lost;
        table.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            f.model, f.source, f.expected, class, internal, lost
        ));
    }
    let figures = format!(
        "faults tried: {}; classified right: {right}; panics: {panics}; conversations lost: {lost_total}",
        faults.len()
    );
    println!("{table}\n{figures}");
    assert!(wrong.is_empty(), "misclassified: {wrong:?}\n{table}");
    assert_eq!(panics, 0, "{}", stderr(&out));
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reliability.md"))
        .unwrap();
    assert!(
        docs.contains(&table),
        "docs/reliability.md must show this table:\n{table}"
    );
    assert!(
        docs.contains(&figures),
        "docs/reliability.md must show: {figures}"
    );
}

fn count_where(conn: &rusqlite::Connection, model: &str) -> i64 {
    conn.query_row(
        "SELECT COUNT(*) FROM turns u JOIN conversations c ON c.id = u.conversation_id
         JOIN targets t ON t.id = c.target_id WHERE t.model = ?1 AND u.outcome = 'internal_error'",
        [model],
        |r| r.get(0),
    )
    .unwrap()
}

const TARGETS: i64 = 2;
const SCENARIOS: i64 = 3;
const REPEATS: i64 = 40;

fn spawn_collect(
    project: &Project,
    bench: &std::path::Path,
    resume: bool,
    env: Option<(&str, String)>,
) -> std::process::Child {
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
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

fn has_run(project: &Project) -> bool {
    project.db().exists()
        && rusqlite::Connection::open(project.db())
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get::<_, i64>(0)))
            .is_ok_and(|n| n > 0)
}

fn stored_uids(project: &Project) -> Vec<String> {
    if !project.db().exists() {
        return Vec::new();
    }
    let conn = project.conn();
    let mut stmt =
        match conn.prepare("SELECT uid FROM conversations WHERE outcome <> 'interrupted'") {
            Ok(s) => s,
            Err(_) => return Vec::new(), // killed before the schema existed
        };
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// SIGKILL at 20 seeded moments of a run, `--resume` after each: the store stays sound,
/// every slot is held exactly once, and no stored conversation is ever lost.
#[test]
fn sigkill_at_twenty_seeded_moments_then_resume_loses_nothing() {
    let mock = Mock::start(
        profiles(vec![
            Profile::quick("m1", 4.0, 0.5),
            Profile::quick("m2", 6.0, 0.5),
        ]),
        None,
    );
    let project = Project::new(&[
        ("a", &two_turn_scenario("a", 0)),
        ("b", &two_turn_scenario("b", 0)),
        ("c", &two_turn_scenario("c", 0)),
    ]);
    let bench = format!(
        "name = \"kill\"\nseed = 5\nrepeats = {REPEATS}\nconcurrency = 4\nper_target_concurrency = 2\n{}{}",
        target("acme", "m1", &mock.url(), ""),
        target("zeta", "m2", &mock.url(), "")
    );
    let bench = project.write("bench.toml", &bench);
    let mut draw = turnbench::draw::Draw::from_seed([20; 32]);
    let mut seen: Vec<String> = Vec::new();
    let mut kills_mid_run = 0;
    for _ in 0..20 {
        let mut child = spawn_collect(&project, &bench, has_run(&project), None);
        let wait = Duration::from_millis(draw.int(30, 699) as u64);
        let start = Instant::now();
        while start.elapsed() < wait && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(5));
        }
        if child.try_wait().unwrap().is_none() {
            kills_mid_run += 1;
        }
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        let now = stored_uids(&project);
        for uid in &seen {
            assert!(now.contains(uid), "conversation {uid} was lost by a kill");
        }
        seen = now;
    }
    assert!(
        kills_mid_run >= 10,
        "most kills must land mid-run ({kills_mid_run})"
    );
    assert!(
        (seen.len() as i64) < TARGETS * SCENARIOS * REPEATS,
        "the kills left work to do"
    );
    let out = spawn_collect(&project, &bench, has_run(&project), None)
        .wait_with_output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let conn = project.conn();
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    assert_eq!(count(&conn, "SELECT COUNT(*) FROM runs"), 1);
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM conversation_facts WHERE counts"
        ),
        TARGETS * SCENARIOS * REPEATS
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM (SELECT 1 FROM conversation_facts WHERE counts
             GROUP BY run_id, target_id, scenario, repeat HAVING COUNT(*) > 1)"
        ),
        0
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM conversations c
             WHERE turn_count <> (SELECT COUNT(*) FROM turns t WHERE t.conversation_id = c.id)"
        ),
        0,
        "every stored conversation has all its turns"
    );
    let after = stored_uids(&project);
    for uid in &seen {
        assert!(
            after.contains(uid),
            "conversation {uid} was lost by the resume"
        );
    }
}

/// A scenario whose reference answers are long, so a few conversations fill pages.
fn long_scenario() -> String {
    let long = "The answer covers every constraint in detail. ".repeat(60);
    format!(
        "id = \"long\"\ncategory = \"developer\"\n[[turn]]\nuser = \"First, in detail.\"\nreference = \"{long}\"\n[[turn]]\nuser = \"Again, in detail.\"\nreference = \"{long}\"\n"
    )
}

fn page_count(project: &Project) -> i64 {
    project
        .conn()
        .pragma_query_value(None, "page_count", |r| r.get(0))
        .unwrap()
}

/// A full disk (SQLite's max_page_count): collect stops with a clear message naming the
/// conversation, keeps everything stored, and a resume after freeing space completes it;
/// the judge stops paying for calls when its writer can write no more.
#[test]
fn a_full_disk_stops_the_run_cleanly_and_resume_completes_it() {
    let project = Project::new(&[("long", &long_scenario())]);
    let mut judge = Profile::quick("mock-judge", 1.0, 0.0);
    judge.judge = Some(Default::default());
    let mock = Mock::start(
        profiles(vec![Profile::quick("m", 1.0, 0.1), judge]),
        Some(&project.path("scenarios")),
    );
    let repeats = 30;
    let bench = format!(
        "name = \"full\"\nrepeats = {repeats}\nconcurrency = 2\n{}",
        target("acme", "m", &mock.url(), "")
    );
    let bench = project.write("bench.toml", &bench);
    drop(turnbench::store::open(&project.db()).unwrap());
    let cap = page_count(&project) + 12;
    let out = spawn_collect(
        &project,
        &bench,
        false,
        Some((turnbench::store::MAX_PAGES_ENV, cap.to_string())),
    )
    .wait_with_output()
    .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(Exit::StoreRefused.code()), "{err}");
    assert!(err.contains("database or disk is full"), "{err}");
    assert!(
        err.contains("acme / m · long · repeat"),
        "the conversation is named: {err}"
    );
    assert!(err.contains("--resume"), "{err}");
    let conn = project.conn();
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    let before = stored_uids(&project);
    assert!(
        !before.is_empty() && (before.len() as i64) < repeats,
        "{}",
        before.len()
    );
    drop(conn);

    let out = spawn_collect(&project, &bench, true, None)
        .wait_with_output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let conn = project.conn();
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM conversation_facts WHERE counts"
        ),
        repeats
    );
    let after = stored_uids(&project);
    for uid in &before {
        assert!(after.contains(uid), "{uid} was lost");
    }

    // The judge: its definitions stored, then the disk is full again.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let judge_path = project.write(
        "judge.toml",
        &format!(
            "base_url = \"{}\"\nmodel = \"mock-judge\"\ntemplate = \"{}\"\nsample = \"all\"\nconcurrency = 1\n[retry]\nattempts = 1\n",
            mock.url(),
            root.join("judges/prompt.md").display()
        ),
    );
    let settings = turnbench::config::JudgeSettings::load(&judge_path).unwrap();
    let rubric = turnbench::config::Rubric::load(&root.join("rubrics/support-tone.toml")).unwrap();
    turnbench::judge::record_definitions(&conn, &settings, &rubric).unwrap();
    let cap = page_count(&project) + 1;
    drop(conn);
    let judged_before = mock
        .server
        .served()
        .iter()
        .filter(|s| s.nominal_ttft_ms.is_none())
        .count();
    let out = project
        .cmd(&[
            "judge",
            "-q",
            "--judge",
            judge_path.to_str().unwrap(),
            "--rubric",
        ])
        .arg(root.join("rubrics/support-tone.toml"))
        .env(turnbench::store::MAX_PAGES_ENV, cap.to_string())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(Exit::StoreRefused.code()),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("not stored"), "{}", stderr(&out));
    let sent = mock
        .server
        .served()
        .iter()
        .filter(|s| s.nominal_ttft_ms.is_none())
        .count()
        - judged_before;
    assert!(
        sent < repeats as usize,
        "the judge stopped paying: {sent} of {repeats} sent"
    );
}
