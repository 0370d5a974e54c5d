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
