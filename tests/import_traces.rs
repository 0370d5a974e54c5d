//! `turnbench import` of traces, through the built binary: Langfuse observations (a
//! pretty-printed API page, v2 rows one a line) and OpenTelemetry GenAI spans (OTLP/JSON
//! export batches), the model calls of one trace or conversation id joined into one
//! conversation, one turn per call, with each call's own timings and usage.

use std::path::Path;

use rusqlite::Connection;
use serde_json::json;

use crate::import::{count, import, run, turnbench, write};
use crate::import_formats::{assert_messages, exported};

const LANGFUSE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/langfuse.json");

/// Turns of stored conversations with any timing.
fn timed_turns(db: &Path, uid: &str) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row(
            "SELECT COUNT(*) FROM turns t JOIN conversations c ON c.id = t.conversation_id
             WHERE c.uid = ?1 AND (t.ttft_ms IS NOT NULL OR t.e2e_ms IS NOT NULL
                 OR t.ttfa_ms IS NOT NULL)",
            [uid],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn the_langfuse_example_page_is_stored_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, out, err) = import(&db, &[Path::new(LANGFUSE)]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 imported (4 turns)"), "{out}");
    assert!(out.contains("read as langfuse 2"), "{out}");
    let capitals = exported(&db, "trace-capitals");
    assert_eq!(capitals["model"], "gpt-4o-mini");
    assert_messages(
        &capitals["messages"],
        &json!([
            {"role": "system", "content": "Answer in one sentence."},
            {"role": "user", "content": "What is the capital of Australia?"},
            {"role": "assistant", "content": "The capital of Australia is Canberra.",
             "timing": {"ttft_ms": 320.0, "e2e_ms": 1200.0},
             "usage": {"prompt_tokens": 24, "completion_tokens": 9}},
            {"role": "user", "content": "And of New Zealand?"},
            {"role": "assistant", "content": "The capital of New Zealand is Wellington.",
             "timing": {"ttft_ms": 280.0, "e2e_ms": 1100.0},
             "usage": {"prompt_tokens": 42, "completion_tokens": 10, "cached_tokens": 12}},
        ]),
    );
    let weather = exported(&db, "trace-weather");
    assert_messages(
        &weather["messages"],
        &json!([
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": null, "timing": {"e2e_ms": 900.0},
             "usage": {"prompt_tokens": 40, "completion_tokens": 12},
             "tool_calls": [{"id": "call_7", "type": "function",
                             "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}}]},
            {"role": "tool", "content": "4 °C, rain", "tool_call_id": "call_7"},
            {"role": "assistant", "content": "4 °C and rain in Oslo.", "timing": {"e2e_ms": 800.0},
             "usage": {"prompt_tokens": 70, "completion_tokens": 8}},
        ]),
    );
}

/// Held-out v2 rows: trace h-t1's second call first in the file (ordered by start time),
/// a call with no times (timings stay empty), a failed call, and a malformed row (a start
/// time that is not a time) on line 5.
const LANGFUSE_HELD_OUT: &str = r#"{"id":"g2","trace_id":"h-t1","type":"GENERATION","start_time":"2025-06-01 10:00:05.000","end_time":"2025-06-01 10:00:06.000","provided_model_name":"mistral-large","input":"[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi\"},{\"role\":\"assistant\",\"content\":\"Hello.\"},{\"role\":\"user\",\"content\":\"Bye\"}]","output":"Goodbye.","usage_details":{"input":20,"output":3}}
{"id":"g1","trace_id":"h-t1","type":"GENERATION","start_time":"2025-06-01 10:00:00.000","completion_start_time":"2025-06-01 10:00:00.150","end_time":"2025-06-01 10:00:00.400","provided_model_name":"mistral-large","input":"[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi\"}]","output":"Hello.","usage_details":{"input":12,"output":2}}
{"id":"s1","trace_id":"h-t1","type":"SPAN","start_time":"2025-06-01 10:00:00.000","input":"{\"route\":\"/chat\"}"}
{"id":"g3","trace_id":"h-t2","type":"GENERATION","provided_model_name":"mistral-small","input":"Q","level":"ERROR","status_message":"upstream returned 503 Service Unavailable"}
{"id":"g4","trace_id":"h-t3","type":"GENERATION","start_time":"yesterday","input":"Q","output":"A"}
"#;

#[test]
fn langfuse_rows_join_by_trace_with_their_own_timings() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let file = write(dir.path(), "rows.jsonl", LANGFUSE_HELD_OUT);
    let (code, out, err) = import(&db, &[&file]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("2 imported (3 turns), 0 already present, 1 rejected"),
        "{out}"
    );
    assert!(
        err.contains("rows.jsonl:5: start_time: \"yesterday\" is not a time"),
        "{err}"
    );
    let t1 = exported(&db, "h-t1");
    assert_eq!(t1["model"], "mistral-large");
    assert_messages(
        &t1["messages"],
        &json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello.",
             "timing": {"ttft_ms": 150.0, "e2e_ms": 400.0},
             "usage": {"prompt_tokens": 12, "completion_tokens": 2}},
            {"role": "user", "content": "Bye"},
            {"role": "assistant", "content": "Goodbye.", "timing": {"e2e_ms": 1000.0},
             "usage": {"prompt_tokens": 20, "completion_tokens": 3}},
        ]),
    );
    let t2 = exported(&db, "h-t2");
    assert_eq!(t2["outcome"], "http_5xx");
    assert_eq!(timed_turns(&db, "h-t2"), 0, "no times: no timings, never 0");
    let (code, out, _) = run(turnbench(&db)
        .args(["import", "--format", "langfuse"])
        .arg(&file));
    assert_eq!(code, 2);
    assert!(
        out.contains("0 imported (0 turns), 2 already present, 1 rejected"),
        "{out}"
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM conversations"), 2);
}

const OTEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/otel.jsonl");

#[test]
fn the_otel_example_is_stored_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, out, err) = import(&db, &[Path::new(OTEL)]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 imported (3 turns)"), "{out}");
    assert!(out.contains("read as otel 2"), "{out}");
    let conv = exported(&db, "conv-1042");
    assert_eq!(
        (&conv["provider"], &conv["model"]),
        (&json!("openai"), &json!("gpt-4o-mini-2024-07-18"))
    );
    assert_messages(
        &conv["messages"],
        &json!([
            {"role": "system", "content": "You are a support agent. Use the tools."},
            {"role": "user", "content": "Where is my order 1042?"},
            {"role": "assistant", "content": null, "finish_reason": "tool_calls",
             "timing": {"e2e_ms": 1310.0},
             "usage": {"prompt_tokens": 112, "completion_tokens": 18},
             "tool_calls": [{"id": "call_a1", "type": "function",
                             "function": {"name": "order_status", "arguments": "{\"order_id\":\"1042\"}"}}]},
            {"role": "tool", "content": "{\"eta\":\"2025-05-03\",\"status\":\"shipped\"}",
             "tool_call_id": "call_a1"},
            {"role": "assistant", "content": "Order 1042 has shipped and should arrive on 3 May.",
             "finish_reason": "stop", "timing": {"ttft_ms": 410.0, "e2e_ms": 760.0},
             "usage": {"prompt_tokens": 160, "completion_tokens": 15, "cached_tokens": 128}},
        ]),
    );
    let failed = exported(&db, "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(
        (&failed["provider"], &failed["outcome"]),
        (&json!("anthropic"), &json!("http_5xx"))
    );
}

/// An OTLP attribute.
fn attr(key: &str, value: serde_json::Value) -> serde_json::Value {
    let value = match value {
        serde_json::Value::String(s) => json!({"stringValue": s}),
        n => json!({"intValue": n.to_string()}),
    };
    json!({"key": key, "value": value})
}

/// A chat span of trace `trace`, its messages as JSON text.
fn chat_span(
    trace: &str,
    times: Option<(u64, u64)>,
    extra: Vec<serde_json::Value>,
    input: &str,
    output: &str,
) -> serde_json::Value {
    let mut attributes = vec![
        attr("gen_ai.operation.name", json!("chat")),
        attr("gen_ai.request.model", json!("llama-3.3-70b")),
        attr("gen_ai.input.messages", json!(input)),
        attr("gen_ai.output.messages", json!(output)),
    ];
    attributes.extend(extra);
    let mut span = json!({"traceId": trace, "spanId": "00f067aa0ba902b7", "name": "chat",
                          "attributes": attributes});
    if let Some((start, end)) = times {
        span["startTimeUnixNano"] = json!(start.to_string());
        span["endTimeUnixNano"] = json!(end.to_string());
    }
    span
}

fn otlp_line(spans: Vec<serde_json::Value>) -> String {
    json!({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}).to_string()
}

fn user(text: &str) -> String {
    json!([{"role": "user", "parts": [{"type": "text", "content": text}]}]).to_string()
}

fn answer(text: &str) -> String {
    json!([{"role": "assistant", "parts": [{"type": "text", "content": text}],
            "finish_reason": "length"}])
    .to_string()
}

#[test]
fn otel_batches_join_by_conversation_with_their_own_timings() {
    const S: u64 = 1_746_100_800_000_000_000;
    let history = json!([
        {"role": "user", "parts": [{"type": "text", "content": "Hi"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "Hello."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Bye"}]}
    ])
    .to_string();
    let conv = || attr("gen_ai.conversation.id", json!("h-c1"));
    let vllm = || attr("gen_ai.system", json!("vllm"));
    // Line 1: h-c1's second call before its first (ordered by start time); line 2: a
    // call with no times (timings stay empty); line 3: usage that is not a number.
    let text = [
        otlp_line(vec![
            chat_span(
                "t1",
                Some((S + 5_000_000_000, S + 5_900_000_000)),
                vec![conv(), vllm(), attr("gen_ai.usage.input_tokens", json!(30))],
                &history,
                &answer("Goodbye."),
            ),
            chat_span(
                "t1",
                Some((S, S + 400_000_000)),
                vec![conv(), vllm(), attr("gen_ai.usage.input_tokens", json!(12))],
                &user("Hi"),
                &answer("Hello."),
            ),
        ]),
        otlp_line(vec![chat_span(
            "t2",
            None,
            vec![vllm()],
            &user("Q"),
            &answer("A"),
        )]),
        otlp_line(vec![chat_span(
            "t3",
            None,
            vec![attr("gen_ai.usage.output_tokens", json!("many"))],
            &user("Q"),
            &answer("A"),
        )]),
    ]
    .join("\n");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let file = write(dir.path(), "spans.jsonl", &format!("{text}\n"));
    let (code, out, err) = import(&db, &[&file]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("2 imported (3 turns), 0 already present, 1 rejected"),
        "{out}"
    );
    assert!(
        err.contains(
            "spans.jsonl:3: resourceSpans[0].scopeSpans[0].spans[0].attributes[gen_ai.usage.output_tokens]: wrong type"
        ),
        "{err}"
    );
    let c1 = exported(&db, "h-c1");
    assert_eq!(c1["provider"], "vllm");
    assert_messages(
        &c1["messages"],
        &json!([
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello.", "finish_reason": "length",
             "timing": {"e2e_ms": 400.0}, "usage": {"prompt_tokens": 12}},
            {"role": "user", "content": "Bye"},
            {"role": "assistant", "content": "Goodbye.", "finish_reason": "length",
             "timing": {"e2e_ms": 900.0}, "usage": {"prompt_tokens": 30}},
        ]),
    );
    assert_eq!(timed_turns(&db, "t2"), 0, "no times: no timings, never 0");
    let (code, out, _) = run(turnbench(&db)
        .args(["import", "--format", "otel"])
        .arg(&file));
    assert_eq!(code, 2);
    assert!(
        out.contains("0 imported (0 turns), 2 already present, 1 rejected"),
        "{out}"
    );
}

/// The calls of a conversation spread across the file (each conversation's first call in
/// the first half, its second call in the second half, in reverse order): each is joined
/// whole, and conversations are stored in the order they first appear. More conversations
/// than one batch to the writer.
#[test]
fn otel_calls_spread_across_the_file_join_into_whole_conversations() {
    const S: u64 = 1_746_100_800_000_000_000;
    const N: u64 = 300;
    let conv = |c: u64| attr("gen_ai.conversation.id", json!(format!("s-{c}")));
    let first = |c: u64| {
        let at = S + c * 10_000_000_000;
        otlp_line(vec![chat_span(
            &format!("{c:032x}"),
            Some((at, at + 100_000_000)),
            vec![conv(c)],
            &user(&format!("Hi {c}")),
            &answer(&format!("Hello {c}.")),
        )])
    };
    let second = |c: u64| {
        let at = S + c * 10_000_000_000 + 1_000_000_000;
        let history = json!([
            {"role": "user", "parts": [{"type": "text", "content": format!("Hi {c}")}]},
            {"role": "assistant", "parts": [{"type": "text", "content": format!("Hello {c}.")}]},
            {"role": "user", "parts": [{"type": "text", "content": "More?"}]}
        ]);
        otlp_line(vec![chat_span(
            &format!("{c:032x}"),
            Some((at, at + 200_000_000)),
            vec![conv(c)],
            &history.to_string(),
            &answer(&format!("More {c}.")),
        )])
    };
    let lines: Vec<String> = (0..N).map(first).chain((0..N).rev().map(second)).collect();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let file = write(dir.path(), "spread.jsonl", &(lines.join("\n") + "\n"));
    let (code, out, err) = import(&db, &[&file]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("300 imported (600 turns), 0 already present, 0 rejected"),
        "{out}"
    );
    for c in [0, 137, N - 1] {
        assert_messages(
            &exported(&db, &format!("s-{c}"))["messages"],
            &json!([
                {"role": "user", "content": format!("Hi {c}")},
                {"role": "assistant", "content": format!("Hello {c}."), "finish_reason": "length",
                 "timing": {"e2e_ms": 100.0}},
                {"role": "user", "content": "More?"},
                {"role": "assistant", "content": format!("More {c}."), "finish_reason": "length",
                 "timing": {"e2e_ms": 200.0}},
            ]),
        );
    }
    let stored: Vec<String> = Connection::open(&db)
        .unwrap()
        .prepare("SELECT uid FROM conversations ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let want: Vec<String> = (0..N).map(|c| format!("s-{c}")).collect();
    assert_eq!(
        stored, want,
        "stored in the order conversations first appear"
    );
}

#[test]
fn otel_spans_of_the_older_event_form_import_too() {
    let event =
        |name: &str, attrs: Vec<serde_json::Value>| json!({"name": name, "attributes": attrs});
    let span = json!({"traceId": "ev-1", "startTimeUnixNano": "1746100800000000000",
    "endTimeUnixNano": "1746100800700000000",
    "attributes": [attr("gen_ai.operation.name", json!("chat")),
                   attr("gen_ai.system", json!("openai")),
                   attr("gen_ai.request.model", json!("gpt-4o")),
                   attr("gen_ai.usage.input_tokens", json!(9))],
    "events": [
        event("gen_ai.system.message", vec![attr("content", json!("Be brief."))]),
        event("gen_ai.user.message", vec![attr("content", json!("Hi"))]),
        event("gen_ai.choice", vec![attr("index", json!(0)),
            attr("finish_reason", json!("stop")),
            attr("message", json!(r#"{"role":"assistant","content":"Hello."}"#))]),
    ]});
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let file = write(
        dir.path(),
        "events.jsonl",
        &format!("{}\n", otlp_line(vec![span])),
    );
    let (code, out, err) = import(&db, &[&file]);
    assert_eq!(code, 0, "{out}{err}");
    let c = exported(&db, "ev-1");
    assert_eq!(c["provider"], "openai");
    assert_messages(
        &c["messages"],
        &json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello.", "finish_reason": "stop",
             "timing": {"e2e_ms": 700.0}, "usage": {"prompt_tokens": 9}},
        ]),
    );
}
