//! Replay's own cost, apart from the network:
//!
//! 1. Bookkeeping CPU per turn with a 40k-token history: salting and hashing the recorded
//!    history with its tools, building the request body the client sends, and reading a
//!    streamed answer (SSE reader, answer and tool-call reader, the turn's outcome).
//!    Goal: ≤ 2 ms of CPU per turn.
//! 2. Peak memory of a whole replay (the stage in this process, the mock in a child
//!    process, a real SQLite store) as the number of sessions grows. Goal: flat.
//!
//!     cargo bench --bench replay
//!
//! `REPLAY_BENCH_SESSIONS=25,400` picks other session counts.
//!
//! Prints figures; asserts nothing (these machines are shared and noisy).

#[path = "support/memory.rs"]
mod memory;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

use turnbench::client::completion::AnswerAccumulator;
use turnbench::client::sse::SseParser;
use turnbench::client::{Endpoint, Reply, conclude};
use turnbench::config::{BenchConfig, CacheHint, SourceText};
use turnbench::launcher::Resume;
use turnbench::replay::pass::{pass_endpoint, prompt_hash, salted};
use turnbench::replay::session::{SessionIndex, parse_session};
use turnbench::replay::{ReplayOptions, replay};

fn main() {
    bookkeeping();
    memory_by_sessions();
}

/// A session whose history grows to about `tokens` (bytes / 4), by tool results.
fn session_line(id: &str, turns: usize, tokens: usize) -> String {
    let per_result = tokens * 4 / turns;
    let mut messages = vec![
        serde_json::json!({"role": "system", "content": "You are a coding agent. ".repeat(40)}),
        serde_json::json!({"role": "user", "content": "Fix the failing test in the repository."}),
    ];
    for t in 0..turns {
        let call = format!("call_{t}");
        messages.push(
            serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": call, "type": "function", "function": {"name": "read_file",
             "arguments": format!("{{\"path\":\"src/module_{t}.py\"}}")}}]}),
        );
        let body: String = (0..per_result / 40)
            .map(|i| format!("    value_{i} = compute({i}, \"x\")  # line {i}\n"))
            .collect::<String>();
        messages.push(serde_json::json!({"role": "tool", "tool_call_id": call, "content": body}));
    }
    messages.push(serde_json::json!({"role": "assistant", "content": "Done: the test passes."}));
    serde_json::json!({
        "id": id,
        "tools": [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}],
        "messages": messages,
    })
    .to_string()
}

/// A streamed answer as a provider sends it: a role chunk, 200 text chunks, two tool calls
/// with arguments in 12-character pieces, the finish, usage and `[DONE]`.
fn stream_bytes() -> Vec<u8> {
    let mut out = String::new();
    let prefix = r#"data: {"id":"r","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":"#;
    out.push_str(&format!(
        "{prefix}{{\"role\":\"assistant\",\"content\":null}},\"finish_reason\":null}}]}}\n\n"
    ));
    for i in 0..200 {
        out.push_str(&format!(
            "{prefix}{{\"content\":\"word{i} \"}},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    for (k, name) in ["read_file", "run_tests"].iter().enumerate() {
        out.push_str(&format!("{prefix}{{\"tool_calls\":[{{\"index\":{k},\"id\":\"c{k}\",\"type\":\"function\",\"function\":{{\"name\":\"{name}\",\"arguments\":\"\"}}}}]}},\"finish_reason\":null}}]}}\n\n"));
        let args = r#"{"path":"src/inventory/stock.py","target":"tests/test_stock.py"}"#;
        let chars: Vec<char> = args.chars().collect();
        for piece in chars.chunks(12) {
            let piece: String = piece.iter().collect();
            let piece = serde_json::to_string(&piece).unwrap();
            out.push_str(&format!("{prefix}{{\"tool_calls\":[{{\"index\":{k},\"function\":{{\"arguments\":{piece}}}}}]}},\"finish_reason\":null}}]}}\n\n"));
        }
    }
    out.push_str(&format!(
        "{prefix}{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\n"
    ));
    out.push_str("data: {\"id\":\"r\",\"choices\":[],\"usage\":{\"prompt_tokens\":40000,\"completion_tokens\":260,\"prompt_tokens_details\":{\"cached_tokens\":38000}}}\n\n");
    out.push_str("data: [DONE]\n\n");
    out.into_bytes()
}

/// CPU seconds (user + system) of this process.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of stat; 12 and 13 after the ")".
    (ticks(11) + ticks(12)) / 100.0
}

fn bookkeeping() {
    let line = session_line("bench", 30, 40_000);
    let session = parse_session(line.as_bytes(), 1).unwrap();
    let turns: Vec<usize> = session.turn_indices().collect();
    let last = *turns.last().unwrap();
    let base = Endpoint {
        url: "http://127.0.0.1:9/v1/chat/completions".into(),
        model: "m".into(),
        api_key: None,
        headers: vec![],
        params: Default::default(),
    };
    let endpoint = pass_endpoint(&base, &CacheHint::User, session.tools.as_ref(), "bench#1-x");
    let stream = stream_bytes();
    let (messages, offset) = salted(&session, "0badcafe");
    let history = &messages[..last + offset];
    let body_len = serde_json::to_vec(&endpoint.body(history)).unwrap().len();
    println!(
        "replay bookkeeping per turn: history of {} messages, request body {} bytes (~{} tokens at 4 bytes each), streamed answer {} bytes ({} events)",
        history.len(),
        body_len,
        body_len / 4,
        stream.len(),
        stream.windows(6).filter(|w| w == b"data: ").count()
    );
    let rounds = 400;
    let mut phases = [0.0f64; 3];
    let cpu0 = cpu_seconds();
    let wall0 = Instant::now();
    for _ in 0..rounds {
        // Salting the session's messages once per pass, spread over its turns.
        let t = Instant::now();
        let (messages, offset) = salted(&session, "0badcafe");
        let history = &messages[..last + offset];
        let hash = prompt_hash(history, session.tools.as_ref());
        phases[0] += t.elapsed().as_secs_f64() / turns.len() as f64 + {
            // Hashing is per turn: measure it alone too.
            let t = Instant::now();
            std::hint::black_box(prompt_hash(history, session.tools.as_ref()));
            t.elapsed().as_secs_f64()
        };
        std::hint::black_box(hash);
        let t = Instant::now();
        let body = serde_json::to_vec(&endpoint.body(history)).unwrap();
        std::hint::black_box(body);
        phases[1] += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        let mut acc = AnswerAccumulator::default();
        for (i, chunk) in stream.chunks(1400).enumerate() {
            parser.feed(chunk, &mut events);
            for e in events.drain(..) {
                acc.on_event(e, i as f64);
            }
        }
        parser.finish(&mut events);
        for e in events.drain(..) {
            acc.on_event(e, 0.0);
        }
        let reply = conclude(Reply::default(), &acc, None);
        std::hint::black_box(reply);
        phases[2] += t.elapsed().as_secs_f64();
    }
    let wall = wall0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let ms = |s: f64| s / rounds as f64 * 1000.0;
    println!(
        "  salt + hash {:.3} ms · request body {:.3} ms · stream read {:.3} ms · total {:.3} ms per turn (wall, one thread)",
        ms(phases[0]),
        ms(phases[1]),
        ms(phases[2]),
        ms(phases.iter().sum())
    );
    println!(
        "  process CPU over the loop: {:.3} ms per turn ({} turns, {:.2} s wall; goal ≤ 2 ms)",
        cpu / rounds as f64 * 1000.0,
        rounds,
        wall
    );
}

/// The mock in a child process (`turnbench mock`), so its memory is not this process's.
struct ChildMock {
    child: std::process::Child,
    url: String,
}

impl ChildMock {
    fn start(dir: &std::path::Path) -> ChildMock {
        let profiles = dir.join("profiles.toml");
        std::fs::write(
            &profiles,
            "seed = 1\n[[profile]]\nmodel = \"m\"\nttft_ms = { dist = \"fixed\", ms = 0 }\ngap_ms = { dist = \"fixed\", ms = 0 }\ncache_retention_s = 600\n",
        )
        .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_turnbench"))
            .args(["mock", "--port", "0", "--profiles"])
            .arg(&profiles)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("mock said: {first}"))
            .to_string();
        ChildMock { child, url }
    }
}

impl Drop for ChildMock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn memory_by_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let mock = ChildMock::start(dir.path());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "replay peak memory (this process: the stage, its client and store writer; the mock runs apart), sessions of 12 turns growing to ~8k tokens, 2 targets, pauses 0"
    );
    println!(
        "{:>9} {:>7} {:>10} {:>12} {:>14}",
        "sessions", "turns", "wall s", "peak MB", "file MB"
    );
    let sizes: Vec<usize> = std::env::var("REPLAY_BENCH_SESSIONS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![25, 100, 400, 1600]);
    for n in sizes {
        let path = dir.path().join(format!("s{n}.jsonl"));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for i in 0..n {
            writeln!(f, "{}", session_line(&format!("s{i}"), 12, 8_000)).unwrap();
        }
        drop(f);
        let bench = format!(
            "name = \"mem{n}\"\nconcurrency = 8\n[replay]\npause_scale = 0\nsessions_in_flight = 4\n\n[[target]]\nprovider = \"a\"\nmodel = \"m\"\nbase_url = \"{url}\"\n\n[[target]]\nprovider = \"b\"\nmodel = \"m\"\nlabel = \"m2\"\nbase_url = \"{url}\"\n",
            url = mock.url
        );
        let cfg = BenchConfig::from_source(&SourceText {
            path: "bench.toml".into(),
            text: bench,
        })
        .unwrap();
        let index = SessionIndex::build(&path).unwrap();
        let opts = ReplayOptions {
            db: dir.path().join(format!("s{n}.db")),
            sessions_path: path.clone(),
            resume: Resume::No,
            quiet: true,
            clock_scale: 1.0,
        };
        memory::reset_peak();
        let t = Instant::now();
        let (_tx, rx) = tokio::sync::mpsc::channel(1);
        let report = rt.block_on(replay(&cfg, index, &opts, rx)).unwrap();
        let wall = t.elapsed().as_secs_f64();
        let turns: u64 = report.summary.iter().map(|s| s.attempted()).sum::<u64>() * 12;
        println!(
            "{:>9} {:>7} {:>10.1} {:>12.1} {:>14.1}",
            n,
            turns,
            wall,
            memory::peak_kb() as f64 / 1024.0,
            std::fs::metadata(&path).unwrap().len() as f64 / 1e6
        );
    }
}
