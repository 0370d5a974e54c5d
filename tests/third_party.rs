//! `collect` against a third-party OpenAI-compatible server, not our own mock: a dialect we
//! misread fails here even when our mock agrees with us.
//!
//! The server is `@dwmkerr/mock-llm` (npm, pinned in `tests/third_party/package.json` and
//! its lock file), run with Node on a free loopback port. Its dialect, as read from its
//! code and checked on the wire by `its_wire_dialect_is_what_these_tests_rely_on`: no
//! `created`; role and the first text in one chunk; `finish_reason` on the last text
//! chunk, then `[DONE]`; no `usage` in a stream, even when asked; an error after
//! `200 OK` as one `data: {"error": …}` with no `[DONE]`, the configured status dropped;
//! text cut by UTF-16 unit, so an emoji can be split between two chunks. docs/reliability.md
//! "A third-party server".
//!
//! Without the package installed these tests say how to install it on one stderr line and
//! pass, unless `TURNBENCH_REQUIRE_THIRD_PARTY=1` (set by `.ci/run`), where a missing server
//! fails them.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::*;
use turnbench::outcome::TurnOutcome;

/// Where `npm ci --prefix tests/third_party` puts the server's entry point.
const DEFAULT_ENTRY: &str = "tests/third_party/node_modules/@dwmkerr/mock-llm/dist/main.js";
const INSTALL: &str =
    "npm ci --prefix tests/third_party && cargo test --test integration third_party::";

/// Characters per streamed chunk: small, so every answer arrives in several chunks.
const CHUNK: usize = 4;

/// The answer of the `emoji` model: "Ok!" is 3 UTF-16 units, so with 4 per chunk the
/// emoji's high surrogate ends the first chunk and its low one starts the second.
const EMOJI_ANSWER: &str = "Ok!😀 Primes: 2, 3, 5 ✓ naïve";

/// The server's rules (its YAML config): the last that matches wins, so the echo comes
/// first. `{{jmes request …}}` puts request values into the response; text with a quote
/// would break its JSON, so the scenario's messages have none. `@CHUNK@` and `@EMOJI@`
/// are filled in by [`rules`].
const RULES: &str = r#"streaming:
  chunkSize: @CHUNK@
  chunkIntervalMs: 2
rules:
  - path: "/v1/chat/completions"
    method: "POST"
    match: "@"
    response:
      status: 200
      content: |
        {"id": "chatcmpl-{{timestamp}}", "object": "chat.completion", "model": "{{jmes request body.model}}",
         "choices": [{"index": 0, "message": {"role": "assistant", "content": "{{jmes request body.messages[-1].content}}"}, "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}
  - path: "/v1/chat/completions"
    match: "body.model == 'history'"
    response:
      status: 200
      content: |
        {"choices": [{"message": {"role": "assistant", "content": "messages: {{jmes request length(body.messages)}}"}, "finish_reason": "stop"}]}
  - path: "/v1/chat/completions"
    match: "body.model == 'emoji'"
    response:
      status: 200
      content: |
        {"choices": [{"message": {"role": "assistant", "content": "@EMOJI@"}, "finish_reason": "stop"}]}
  - path: "/v1/chat/completions"
    match: "body.model == 'err200' && contains(body.messages[-1].content, 'Correction')"
    response:
      status: 503
      content: |
        {"error": {"message": "The server had an error while processing your request.", "type": "server_error", "param": null, "code": null}}
  - path: "/v1/chat/completions"
    match: "body.model == 'limited'"
    response:
      status: 429
      content: |
        {"error": {"message": "Rate limit reached for requests", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}
  - path: "/v1/chat/completions"
    match: "body.model == 'empty'"
    response:
      status: 200
      content: |
        {"choices": [{"message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}]}
  - path: "/v1/chat/completions"
    match: "body.model == 'crash'"
    response:
      status: 200
      content: |
        {"choices": [{"message": {"role": "assistant"}, "finish_reason": "stop"}]}
"#;

fn rules() -> String {
    RULES
        .replace("@CHUNK@", &CHUNK.to_string())
        .replace("@EMOJI@", EMOJI_ANSWER)
}

const USER: [&str; 3] = [
    "First task: list three prime numbers.",
    "Correction: give them as a JSON array.",
    "Final format: one line, no prose.",
];

fn scenario() -> String {
    let mut s =
        String::from("id = \"primes\"\ncategory = \"developer\"\nsystem = \"You are terse.\"\n");
    for u in USER {
        s.push_str(&format!(
            "\n[[turn]]\nuser = \"{u}\"\nreference = \"[2, 3, 5]\"\n"
        ));
    }
    s
}

/// Node and the server's entry point, or `None` (after the skip line) when they are not
/// installed and not required.
fn installed() -> Option<(PathBuf, PathBuf)> {
    let required = std::env::var("TURNBENCH_REQUIRE_THIRD_PARTY").is_ok_and(|v| v == "1");
    let entry = match std::env::var_os("TURNBENCH_MOCK_LLM") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_ENTRY),
    };
    let node = std::env::var_os("TURNBENCH_NODE")
        .map(PathBuf::from)
        .unwrap_or_else(|| "node".into());
    let node_runs = Command::new(&node)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let (missing, fix) = match (entry.is_file(), node_runs) {
        (true, true) => return Some((node, entry)),
        (false, _) => (
            format!("@dwmkerr/mock-llm is not installed ({})", entry.display()),
            INSTALL.to_string(),
        ),
        (true, false) => (
            format!("Node ({}) does not run", node.display()),
            format!("install Node.js (or set TURNBENCH_NODE), then {INSTALL}"),
        ),
    };
    assert!(
        !required,
        "TURNBENCH_REQUIRE_THIRD_PARTY=1 but {missing}; {fix}"
    );
    // Once per run, straight to stderr, past the test harness's capture, so that a passing
    // run shows it.
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        let _ = writeln!(
            std::io::stderr(),
            "third_party: skipped, {missing}; to run it: {fix}"
        );
    });
    None
}

/// The server, running; killed when dropped, a panicking test included.
struct MockLlm {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl MockLlm {
    /// Starts the server with these rules on a free loopback port and waits until it answers.
    fn start(node: &Path, entry: &Path, dir: &Path) -> MockLlm {
        let config = dir.join("mock-llm.yaml");
        std::fs::write(&config, rules()).unwrap();
        // A port found free can be taken before the server binds it: then the server
        // exits, and another port is tried.
        for attempt in 0..3 {
            let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let log = dir.join(format!("mock-llm-{attempt}.log"));
            let out = std::fs::File::create(&log).unwrap();
            let child = Command::new(node)
                .arg(entry)
                .arg("--config")
                .arg(&config)
                .current_dir(dir)
                .env("HOST", "127.0.0.1")
                .env("PORT", port.to_string())
                .stdin(Stdio::null())
                .stdout(out.try_clone().unwrap())
                .stderr(out)
                .spawn()
                .unwrap_or_else(|e| panic!("starting {} {}: {e}", node.display(), entry.display()));
            let mut server = MockLlm { child, port, log };
            if server.wait_ready() {
                return server;
            }
        }
        panic!("@dwmkerr/mock-llm did not start on 127.0.0.1 in 3 tries");
    }

    /// Polls `/health` until it answers (true), or the server exits or gives up (false).
    fn wait_ready(&mut self) -> bool {
        for _ in 0..600 {
            if let Ok(Some(status)) = self.child.try_wait() {
                eprintln!("mock-llm exited ({status}): {}", self.log_text());
                return false;
            }
            if let Ok((200, reply)) = http(self.port, "GET /health", "")
                && reply.contains("\"healthy\"")
            {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "mock-llm did not answer /health in 30 s: {}",
            self.log_text()
        );
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

/// One HTTP/1.0 exchange, so the server closes the connection after an unchunked body:
/// (status, body).
fn http(port: u16, request_line: &str, body: &str) -> std::io::Result<(u16, String)> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut sock = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    sock.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        sock,
        "{request_line} HTTP/1.0\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut reply = String::new();
    sock.read_to_string(&mut reply)?;
    let bad = || std::io::Error::other(format!("not an HTTP reply: {reply:?}"));
    let (head, body) = reply.split_once("\r\n\r\n").ok_or_else(bad)?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(bad)?;
    Ok((status, body.to_string()))
}

/// One streaming request as a plain HTTP client sends it: (status, `data:` payloads).
fn stream_raw(port: u16, model: &str) -> (u16, Vec<String>) {
    let body = serde_json::json!({
        "model": model,
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": USER[1]},
        ],
    });
    let (status, text) = http(port, "POST /v1/chat/completions", &body.to_string()).unwrap();
    let events = text
        .split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .map(str::to_string)
        .collect();
    (status, events)
}

#[test]
fn its_wire_dialect_is_what_these_tests_rely_on() {
    let Some((node, entry)) = installed() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = MockLlm::start(&node, &entry, dir.path());
    let json = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();

    let (status, events) = stream_raw(server.port, "echo");
    assert_eq!(status, 200);
    let chunks = USER[1].len().div_ceil(CHUNK);
    assert_eq!(events.len(), chunks + 1, "{events:?}");
    assert_eq!(events.last().unwrap(), "[DONE]");
    let first = json(&events[0]);
    assert_eq!(first["object"], "chat.completion.chunk");
    assert!(first.get("created").is_none(), "no `created`: {first}");
    assert_eq!(first["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(first["choices"][0]["delta"]["content"], &USER[1][..CHUNK]);
    let last = json(&events[chunks - 1]);
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert!(
        !last["choices"][0]["delta"]["content"]
            .as_str()
            .unwrap()
            .is_empty(),
        "finish_reason on a chunk that carries text: {last}"
    );
    for e in &events[..chunks] {
        assert!(json(e).get("usage").is_none(), "no usage in a stream: {e}");
    }

    let (status, events) = stream_raw(server.port, "err200");
    assert_eq!(status, 200, "the rule's 503 is dropped");
    assert_eq!(events.len(), 1, "one error event and no [DONE]: {events:?}");
    assert_eq!(json(&events[0])["error"]["type"], "server_error");

    let (_, events) = stream_raw(server.port, "emoji");
    assert!(
        events[0].ends_with(r#"\ud83d","role":"assistant"},"finish_reason":null}]}"#)
            && events[1].contains(r#""content":"\ude00"#),
        "the emoji is cut between the first two chunks: {events:?}"
    );
}

/// (label, model, request) of each target: the model picks the server's rule.
const TARGETS: [(&str, &str, &str); 8] = [
    ("echo", "echo", ""),
    ("echo-whole", "echo", "request = { stream = false }"),
    ("history", "history", ""),
    ("emoji", "emoji", ""),
    ("err200", "err200", ""),
    ("limited", "limited", ""),
    ("empty", "empty", ""),
    ("crash", "crash", ""),
];
const REPEATS: i64 = 2;

/// One stored turn, as the tests read it.
#[derive(Debug)]
struct Turn {
    label: String,
    idx: usize,
    outcome: String,
    http_status: Option<i64>,
    error: Option<String>,
    answer: Option<String>,
    finish_reason: Option<String>,
    ttft: Option<f64>,
    ttfa: Option<f64>,
    e2e: Option<f64>,
    prompt_tokens: Option<i64>,
    completion_tokens: Option<i64>,
    visible_tokens: Option<i64>,
    request_id: Option<String>,
    /// Microseconds from request start, one per SSE event.
    offsets: Vec<u32>,
}

#[test]
fn collect_against_it_classifies_every_turn_and_keeps_every_conversation() {
    let Some((node, entry)) = installed() else {
        return;
    };
    let project = Project::new(&[("primes", &scenario())]);
    let server = MockLlm::start(&node, &entry, project.dir.path());
    let mut bench = format!(
        "name = \"third-party\"\nseed = 5\nrepeats = {REPEATS}\nturn_timeout_s = 20\nconcurrency = 4\nper_target_concurrency = 2\n\
         [request]\nstream = true\ninclude_usage = true\n[retry]\nattempts = 1\n"
    );
    for (label, model, request) in TARGETS {
        let extra = format!("label = \"{label}\"\n{request}");
        bench.push_str(&target("mock-llm", model, &server.base_url(), &extra));
    }
    let bench_path = project.write("bench.toml", &bench);
    let out = project
        .cmd(&["collect", "-q", "--config", bench_path.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a run with failed conversations exits 2: {stderr}\nserver log: {}",
        server.log_text()
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    let conn = project.conn();
    assert_eq!(
        count(&conn, "SELECT COUNT(*) FROM conversations"),
        TARGETS.len() as i64 * REPEATS,
        "every target × repeat stored once"
    );
    let turns: Vec<Turn> = rows(
        &conn,
        "SELECT t.label, u.idx, u.outcome, u.http_status, u.error, u.answer, u.finish_reason,
                u.ttft_ms, u.ttfa_ms, u.e2e_ms, u.prompt_tokens, u.completion_tokens,
                u.visible_tokens, u.request_id, u.chunk_offsets
         FROM turns u JOIN conversations c ON c.id = u.conversation_id
         JOIN targets t ON t.id = c.target_id ORDER BY c.id, u.idx",
        [],
        |r| {
            let blob: Option<Vec<u8>> = r.get(14)?;
            Ok(Turn {
                label: r.get(0)?,
                idx: r.get::<_, i64>(1)? as usize,
                outcome: r.get(2)?,
                http_status: r.get(3)?,
                error: r.get(4)?,
                answer: r.get(5)?,
                finish_reason: r.get(6)?,
                ttft: r.get(7)?,
                ttfa: r.get(8)?,
                e2e: r.get(9)?,
                prompt_tokens: r.get(10)?,
                completion_tokens: r.get(11)?,
                visible_tokens: r.get(12)?,
                request_id: r.get(13)?,
                offsets: blob
                    .unwrap_or_default()
                    .chunks_exact(4)
                    .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
                    .collect(),
            })
        },
    );
    // Every turn has exactly one known class, and none is turnbench's own failure.
    for t in &turns {
        let class: TurnOutcome = t.outcome.parse().unwrap();
        assert!(
            !matches!(class, TurnOutcome::InternalError | TurnOutcome::Interrupted),
            "{t:?}"
        );
    }
    let of = |label: &str| -> Vec<&Turn> { turns.iter().filter(|t| t.label == label).collect() };
    let conversations = |label: &str| -> Vec<(String, i64, Option<f64>)> {
        rows(
            &conn,
            "SELECT c.outcome, c.turn_count, c.latency_ms FROM conversations c
             JOIN targets t ON t.id = c.target_id WHERE t.label = ?1",
            [label],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
    };

    // Streamed: each answer exactly as sent in pieces of 4 characters, the last piece in
    // the chunk that carries the finish reason; timings from the same clock readings as
    // the chunk offsets; no usage in the stream, so no token counts but our own.
    let echo = of("echo");
    assert_eq!(echo.len(), REPEATS as usize * USER.len());
    for t in &echo {
        assert_eq!(t.outcome, "ok", "{t:?}");
        assert_eq!(t.answer.as_deref(), Some(USER[t.idx]), "{t:?}");
        assert_eq!(t.finish_reason.as_deref(), Some("stop"));
        assert_eq!(t.http_status, Some(200));
        assert_eq!(
            t.offsets.len(),
            USER[t.idx].len().div_ceil(CHUNK) + 1,
            "{t:?}"
        );
        let (ttft, ttfa, e2e) = (t.ttft.unwrap(), t.ttfa.unwrap(), t.e2e.unwrap());
        assert!(0.0 < ttft && ttft <= ttfa && ttfa <= e2e, "{t:?}");
        // Role and first text share the first chunk: TTFT and TTFA are that chunk; E2E is
        // `[DONE]`, the last event.
        let at = |us: u32| f64::from(us) / 1000.0;
        assert!((ttft - at(t.offsets[0])).abs() <= 0.001, "{t:?}");
        assert_eq!(ttft, ttfa);
        assert!(
            (e2e - at(*t.offsets.last().unwrap())).abs() <= 0.001,
            "{t:?}"
        );
        assert!(t.offsets.windows(2).all(|w| w[0] <= w[1]), "{t:?}");
        assert_eq!(
            (t.prompt_tokens, t.completion_tokens),
            (None, None),
            "not 0"
        );
        assert!(t.visible_tokens.is_some_and(|n| n > 0), "{t:?}");
        assert!(
            t.request_id
                .as_deref()
                .is_some_and(|id| id.starts_with("chatcmpl-")),
            "{t:?}"
        );
    }
    for (outcome, turn_count, latency) in conversations("echo") {
        assert_eq!((outcome.as_str(), turn_count), ("completed", 3));
        assert!(latency.is_some_and(|l| l > 0.0));
    }

    // Whole bodies: the same answers, no first token to time, the body's usage kept.
    let whole = of("echo-whole");
    assert_eq!(whole.len(), REPEATS as usize * USER.len());
    for t in &whole {
        assert_eq!(t.outcome, "ok", "{t:?}");
        assert_eq!(t.answer.as_deref(), Some(USER[t.idx]));
        assert_eq!((t.ttft, t.ttfa), (None, None));
        assert!(t.e2e.is_some_and(|e| e > 0.0));
        assert_eq!((t.prompt_tokens, t.completion_tokens), (Some(11), Some(7)));
    }

    // Each request carries the whole conversation: system, users and answers so far.
    let history = of("history");
    assert_eq!(history.len(), REPEATS as usize * USER.len());
    for t in &history {
        let expected = format!("messages: {}", 2 * t.idx + 2);
        assert_eq!(t.answer.as_deref(), Some(expected.as_str()), "{t:?}");
    }

    // A character cut between two chunks by UTF-16 unit arrives whole.
    for t in of("emoji") {
        assert_eq!(t.outcome, "ok", "{t:?}");
        assert_eq!(t.answer.as_deref(), Some(EMOJI_ANSWER));
    }
    assert!(conversations("emoji").iter().all(|c| c.0 == "completed"));

    // The error after 200 on the second turn: a server error (its `type`), stored with the
    // status we saw and the server's message; the first turn kept; no third turn sent.
    for (outcome, turn_count, latency) in conversations("err200") {
        assert_eq!(
            (outcome.as_str(), turn_count, latency),
            ("http_5xx", 2, None)
        );
    }
    let err200 = of("err200");
    for t in &err200 {
        if t.idx == 0 {
            assert_eq!(t.outcome, "ok");
            assert_eq!(t.answer.as_deref(), Some(USER[0]));
            continue;
        }
        assert_eq!(t.outcome, "http_5xx", "{t:?}");
        assert_eq!(t.http_status, Some(200));
        let error = t.error.as_deref().unwrap();
        assert!(
            error.contains("after HTTP 200") && error.contains("The server had an error"),
            "{error}"
        );
        assert_eq!((t.answer.as_deref(), t.ttft), (None, None));
        assert!(t.e2e.is_some());
        assert_eq!(t.offsets.len(), 1, "one event, no [DONE]");
    }
    assert_eq!(err200.len(), REPEATS as usize * 2);

    // A rate-limit error after 200 (its 429 dropped by the server) is read from its code.
    let limited = of("limited");
    assert_eq!(limited.len(), REPEATS as usize);
    for t in &limited {
        assert_eq!(
            (t.outcome.as_str(), t.http_status),
            ("rate_limited", Some(200))
        );
        assert!(
            t.error.as_deref().unwrap().contains("rate_limit_exceeded"),
            "{t:?}"
        );
    }

    // An empty answer: one chunk with role, "" and the finish reason, then [DONE].
    for t in of("empty") {
        assert_eq!(t.outcome, "empty_answer", "{t:?}");
        assert_eq!(t.finish_reason.as_deref(), Some("stop"));
        assert_eq!(t.answer, None);
    }

    // A rule without content crashes the server's streamer: HTTP 500, its JSON error body
    // labelled text/event-stream.
    for t in of("crash") {
        assert_eq!(
            (t.outcome.as_str(), t.http_status),
            ("http_5xx", Some(500)),
            "{t:?}"
        );
        assert!(
            t.error
                .as_deref()
                .unwrap()
                .contains("Cannot read properties"),
            "{t:?}"
        );
    }
    for label in ["limited", "empty", "crash"] {
        for (_, turn_count, latency) in conversations(label) {
            assert_eq!((turn_count, latency), (1, None), "{label}");
        }
    }
}
