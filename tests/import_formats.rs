//! `turnbench import` of transcripts kept elsewhere, through the built binary: tool calls
//! and tool results (one model call is one turn), Anthropic Messages records and logged
//! calls, LMSYS-Chat-1M and WildChat rows, and what happens to content turnbench cannot
//! store (refused by file:line and field, or dropped and counted with `--lossy`).

use std::path::Path;

use rusqlite::Connection;
use serde_json::{Value, json};

use crate::import::{count, export, import, run, turnbench, write};

/// `(outcome, answer, tool_calls)` of every stored turn of `uid`, in order.
fn turns(db: &Path, uid: &str) -> Vec<(String, Option<String>, Option<String>)> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT t.outcome, t.answer, t.tool_calls FROM turns t
             JOIN conversations c ON c.id = t.conversation_id WHERE c.uid = ?1 ORDER BY t.idx",
        )
        .unwrap();
    stmt.query_map([uid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The exported conversation `uid`, as JSON.
pub(crate) fn exported(db: &Path, uid: &str) -> Value {
    export(db, &[])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["id"] == uid)
        .unwrap_or_else(|| panic!("{uid} not exported"))
}

/// Each message of `got` has what `want` has, field by field (`got` may add fields such
/// as a derived `outcome`).
pub(crate) fn assert_messages(got: &Value, want: &Value) {
    let (got, want) = (got.as_array().unwrap(), want.as_array().unwrap());
    assert_eq!(got.len(), want.len(), "{got:#?}\nwant {want:#?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        for (key, value) in w.as_object().unwrap() {
            assert_eq!(&g[key], value, "message {i}, field {key}: {g}");
        }
        for (key, value) in g.as_object().unwrap() {
            if !w.as_object().unwrap().contains_key(key) {
                assert!(
                    matches!(key.as_str(), "outcome" | "content") || value.is_null(),
                    "message {i}: {key} = {value} was not in the source"
                );
            }
        }
    }
}

const TOOL_LINE: &str = r#"{"id":"tools-1","provider":"acme","model":"m1","messages":[{"role":"system","content":"You can list files."},{"role":"user","content":"What is here?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"ls","arguments":"{\"path\":\".\"}"}},{"id":"call_2","type":"function","function":{"name":"pwd","arguments":"{}"}}]},{"role":"tool","content":"a.py\nb.py","tool_call_id":"call_1"},{"role":"tool","content":"/src","tool_call_id":"call_2"},{"role":"assistant","content":"Two files in /src: a.py and b.py.","finish_reason":"stop"}]}"#;

#[test]
fn an_answer_that_only_calls_tools_is_a_turn_and_the_transcript_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first.db"), dir.path().join("second.db"));
    let file = write(dir.path(), "tools.jsonl", &format!("{TOOL_LINE}\n"));
    let (code, out, err) = import(&first, &[&file]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 imported (2 turns)"), "{out}");
    let stored = turns(&first, "tools-1");
    assert_eq!(stored.len(), 2, "one model call is one turn");
    assert_eq!(stored[0].0, "ok");
    assert_eq!(stored[0].1, None);
    let calls: Value = serde_json::from_str(stored[0].2.as_deref().unwrap()).unwrap();
    assert_eq!(calls[1]["function"]["name"], "pwd");
    assert_eq!(stored[1].2, None);
    let prompt: String = Connection::open(&first)
        .unwrap()
        .query_row("SELECT prompt FROM turns WHERE idx = 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        prompt,
        r#"[{"role":"tool","content":"a.py\nb.py","tool_call_id":"call_1"},{"role":"tool","content":"/src","tool_call_id":"call_2"}]"#
    );

    // Exported, every message is the source's, field by field.
    let line = exported(&first, "tools-1");
    let source: Value = serde_json::from_str(TOOL_LINE).unwrap();
    assert_messages(&line["messages"], &source["messages"]);
    assert_eq!(line["outcome"], "completed");

    // Export → import → export is the same text; importing again adds nothing.
    let text = export(&first, &[]);
    let again = write(dir.path(), "exported.jsonl", &text);
    let (code, _, err) = import(&second, &[&again]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(export(&second, &[]), text);
    let (code, out, _) = import(&first, &[&file]);
    assert_eq!(code, 0);
    assert!(
        out.contains("0 imported (0 turns), 1 already present"),
        "{out}"
    );
    assert_eq!(count(&first, "SELECT COUNT(*) FROM turns"), 2);
}

#[test]
fn a_logged_call_that_only_calls_tools_is_imported_with_its_calls() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let line = json!({
        "id": "log-tools",
        "request": {"model": "m1", "messages": [{"role": "user", "content": "Weather?"}]},
        "response": {"choices": [{"message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "c9", "type": "function",
                "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}}]},
            "finish_reason": "tool_calls"}]}
    });
    let file = write(dir.path(), "log.jsonl", &format!("{line}\n"));
    let (code, out, err) = import(&db, &[&file]);
    assert_eq!(code, 0, "{err}{out}");
    let stored = turns(&db, "log-tools");
    assert_eq!((stored[0].0.as_str(), stored[0].1.as_deref()), ("ok", None));
    let exported = exported(&db, "log-tools");
    let answer = &exported["messages"][1];
    assert_eq!(answer["finish_reason"], "tool_calls");
    assert_eq!(
        answer["tool_calls"][0]["function"]["arguments"],
        "{\"city\":\"Oslo\"}"
    );
}

#[test]
fn import_help_names_every_format_and_lossy() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run(turnbench(&dir.path().join("t.db")).args(["import", "--help"]));
    assert_eq!(code, 0, "{err}");
    for name in [
        "turnbench",
        "sharegpt",
        "openai-log",
        "anthropic",
        "lmsys",
        "WildChat",
        "responses",
        "langfuse",
        "otel",
        "--lossy",
    ] {
        assert!(out.contains(name), "--help does not name {name}:\n{out}");
    }
}

const ANTHROPIC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/anthropic.jsonl");
const LMSYS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/lmsys.jsonl");
const TOOL_CALLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/tool-calls.jsonl");

/// Held-out Anthropic records (not the example's): a record with a system prompt in
/// blocks, a logged call with tool use and cache reads, a rate-limited call, and a
/// malformed record (a tool_use without its name) on line 4.
const ANTHROPIC_HELD_OUT: &str = r#"{"id":"h-a1","model":"claude-haiku-4-5","system":[{"type":"text","text":"Reply in French."},{"type":"text","text":"Be brief."}],"messages":[{"role":"user","content":"Hello"},{"role":"assistant","content":[{"type":"text","text":"Bonjour."}]}]}
{"id":"h-a2","request":{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"Weather in Oslo?"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_9","name":"weather","input":{"city":"Oslo"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"4 °C, rain"}]}]},"response":{"type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"4 °C and rain."}],"stop_reason":"end_turn","usage":{"input_tokens":30,"cache_read_input_tokens":200,"cache_creation_input_tokens":0,"output_tokens":9}},"ttft_ms":350.0,"latency_ms":900.0}
{"id":"h-a3","request":{"model":"claude-sonnet-4-5","system":"S","messages":[{"role":"user","content":"Q"}]},"response":{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}}
{"id":"h-a4","system":"S","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","input":{}}]}]}
"#;

#[test]
fn anthropic_records_and_logged_calls_import_with_system_tools_usage_and_failures() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let file = write(dir.path(), "claude.jsonl", ANTHROPIC_HELD_OUT);
    let (code, out, err) = run(turnbench(&db)
        .args(["import", "--format", "anthropic"])
        .arg(&file));
    assert_eq!(code, 2, "one record is malformed: {out}{err}");
    assert!(
        out.contains("3 imported (4 turns), 0 already present, 1 rejected"),
        "{out}"
    );
    assert!(out.contains("read as anthropic 3"), "{out}");
    assert!(
        err.contains("claude.jsonl:4: messages[1].content[0].name: missing"),
        "{err}"
    );
    // The system prompt is kept, its blocks joined.
    let first = exported(&db, "h-a1");
    assert_eq!(
        first["messages"][0],
        json!({"role": "system", "content": "Reply in French.\nBe brief."})
    );
    // The logged call: history turn with its call, the tool result, the answer with usage
    // (cached reads are part of the prompt) and timings.
    let call = exported(&db, "h-a2");
    let m = &call["messages"];
    assert_eq!(m[1]["tool_calls"][0]["function"]["name"], "weather");
    assert_eq!(
        m[1]["tool_calls"][0]["function"]["arguments"],
        r#"{"city":"Oslo"}"#
    );
    assert_eq!(m[1]["outcome"], "ok");
    assert_eq!(
        m[2],
        json!({"role": "tool", "content": "4 °C, rain", "tool_call_id": "toolu_9"})
    );
    assert_eq!(m[3]["finish_reason"], "stop");
    assert_eq!(
        m[3]["usage"],
        json!({"prompt_tokens": 230, "completion_tokens": 9, "cached_tokens": 200})
    );
    assert_eq!(m[3]["timing"], json!({"ttft_ms": 350.0, "e2e_ms": 900.0}));
    assert_eq!(
        m[1].get("timing"),
        None,
        "a history turn has no timings, never 0"
    );
    let failed = exported(&db, "h-a3");
    assert_eq!(failed["outcome"], "rate_limited");
    assert_eq!(failed["messages"][0]["role"], "system");
    // Importing again adds nothing.
    let (_, out, _) = run(turnbench(&db).arg("import").arg(&file));
    assert!(
        out.contains("0 imported (0 turns), 3 already present, 1 rejected"),
        "{out}"
    );
}

/// Held-out rows: two LMSYS rows with the same text and different ids, a WildChat row, and
/// a malformed row (a message without a role) on line 4.
const LMSYS_HELD_OUT: &str = r#"{"conversation_id":"l-1","model":"vicuna-7b","conversation":[{"content":"Hi","role":"user"},{"content":"Hello! How can I help?","role":"assistant"}],"turn":1,"language":"English","redacted":false}
{"conversation_id":"l-2","model":"vicuna-7b","conversation":[{"content":"Hi","role":"user"},{"content":"Hello! How can I help?","role":"assistant"}],"turn":1,"language":"English","redacted":false}
{"conversation_hash":"w-1","model":"gpt-3.5-turbo-0301","timestamp":"2023-05-01 10:00:00+00:00","conversation":[{"content":"2+2?","role":"user","timestamp":"2023-05-01 10:00:00+00:00","language":"English","toxic":false},{"content":"4","role":"assistant","timestamp":"2023-05-01 10:00:02+00:00","language":"English","toxic":false},{"content":"thanks","role":"user","language":"English"}],"turn":1}
{"conversation_id":"l-3","model":"vicuna-7b","conversation":[{"content":"Hi"},{"content":"Hello","role":"assistant"}]}
"#;

#[test]
fn lmsys_and_wildchat_rows_keep_their_identity_and_no_timings() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let file = write(dir.path(), "rows.jsonl", LMSYS_HELD_OUT);
    let (code, out, err) = import(&db, &[&file]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("3 imported (3 turns), 0 already present, 1 rejected"),
        "{out}"
    );
    assert!(out.contains("read as lmsys 3"), "{out}");
    assert!(
        err.contains("rows.jsonl:4: conversation[0].role: missing"),
        "{err}"
    );
    // Same text, two ids: two conversations.
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM conversations WHERE uid IN ('l-1', 'l-2')"
        ),
        2
    );
    let (model, timed): (String, i64) = Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT t.model, (SELECT COUNT(*) FROM turns u WHERE u.ttft_ms IS NOT NULL
                 OR u.e2e_ms IS NOT NULL OR u.ttfa_ms IS NOT NULL)
             FROM conversations c JOIN targets t ON t.id = c.target_id WHERE c.uid = 'w-1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (model.as_str(), timed),
        ("gpt-3.5-turbo-0301", 0),
        "timestamps are not timings"
    );
    let wild = exported(&db, "w-1");
    assert_eq!(
        wild["messages"][2],
        json!({"role": "user", "content": "thanks"})
    );
    let (code, out, _) = run(turnbench(&db)
        .args(["import", "--format", "lmsys"])
        .arg(&file));
    assert_eq!(code, 2);
    assert!(
        out.contains("0 imported (0 turns), 3 already present, 1 rejected"),
        "{out}"
    );
}

#[test]
fn content_turnbench_does_not_store_is_refused_by_field_or_dropped_and_counted_with_lossy() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let text = r#"{"id":"img-1","messages":[{"role":"user","content":[{"type":"text","text":"What is in this picture?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},{"role":"assistant","content":[{"type":"redacted_thinking","data":"xyz"},{"type":"text","text":"A cat."}]}]}
{"conversation_id":"att-1","conversation":[{"content":"Read this","role":"user","attachments":[{"name":"a.pdf"}]},{"content":"Done.","role":"assistant"}]}
{"id":"url-1","messages":[{"role":"user","content":[{"type":"text","text":"Describe it."},{"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}]},{"role":"assistant","content":"A cat.","refusal":null}]}
"#;
    let file = write(dir.path(), "lossy.jsonl", text);
    let (code, out, err) = import(&db, &[&file]);
    assert_eq!(code, 2);
    assert!(out.contains("0 imported"), "{out}");
    assert!(
        err.contains("lossy.jsonl:1: messages[0].content[1].type: a \"image\" block, which turnbench does not store"),
        "{err}"
    );
    assert!(
        err.contains("lossy.jsonl:2: conversation[0].attachments:"),
        "{err}"
    );
    assert!(err.contains("lossy.jsonl:3: messages[0].content:"), "{err}");
    assert!(err.contains("--lossy"), "{err}");
    let (code, out, err) = run(turnbench(&db).args(["import", "--lossy"]).arg(&file));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("3 imported (3 turns)"), "{out}");
    assert!(
        out.contains("not stored: attachments 1, image 1, image_url 1, redacted_thinking 1"),
        "{out}"
    );
    assert_eq!(
        exported(&db, "url-1")["messages"][0]["content"],
        "Describe it."
    );
    let stored = exported(&db, "img-1");
    assert_eq!(stored["messages"][0]["content"], "What is in this picture?");
    assert_eq!(stored["messages"][1]["content"], "A cat.");
}

/// What the docs' mapping tables say a record becomes, written out independently of the
/// importer: the oracle of the field-by-field test.
fn expected_anthropic(record: &Value) -> Vec<Value> {
    fn text_of(blocks: &Value) -> Option<String> {
        match blocks {
            Value::String(s) => Some(s.clone()),
            Value::Array(b) => {
                let texts: Vec<&str> = b
                    .iter()
                    .filter(|x| x["type"] == "text")
                    .map(|x| x["text"].as_str().unwrap())
                    .collect();
                (!texts.is_empty()).then(|| texts.join("\n"))
            }
            _ => None,
        }
    }
    fn assistant(content: &Value) -> Value {
        let mut m = json!({"role": "assistant", "content": text_of(content)});
        if let Value::Array(blocks) = content {
            let thinking: Vec<&str> = blocks
                .iter()
                .filter(|b| b["type"] == "thinking")
                .map(|b| b["thinking"].as_str().unwrap())
                .collect();
            if !thinking.is_empty() {
                m["reasoning"] = json!(thinking.join("\n"));
            }
            let calls: Vec<Value> = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| {
                    json!({"id": b["id"], "type": "function",
                    "function": {"name": b["name"], "arguments": b["input"].to_string()}})
                })
                .collect();
            if !calls.is_empty() {
                m["tool_calls"] = json!(calls);
            }
        }
        m
    }
    let source = if record.get("request").is_some() {
        &record["request"]
    } else {
        record
    };
    let mut out = Vec::new();
    if let Some(system) = source.get("system").and_then(text_of) {
        out.push(json!({"role": "system", "content": system}));
    }
    for m in source["messages"].as_array().unwrap() {
        match (m["role"].as_str().unwrap(), &m["content"]) {
            ("user", Value::Array(blocks)) => {
                for b in blocks {
                    match b["type"].as_str().unwrap() {
                        "tool_result" => out.push(json!({"role": "tool",
                            "content": text_of(&b["content"]).unwrap_or_default(),
                            "tool_call_id": b["tool_use_id"]})),
                        _ => out.push(json!({"role": "user", "content": b["text"]})),
                    }
                }
            }
            ("user", content) => out.push(json!({"role": "user", "content": content})),
            (_, content) => out.push(assistant(content)),
        }
    }
    if let Some(response) = record.get("response") {
        let n = |key: &str| record.get(key).and_then(Value::as_f64);
        let since_start = |key: &str| {
            n(key)
                .zip(n("startTime"))
                .map(|(at, start)| ((at - start) * 1e6).round() / 1e3)
        };
        let mut timing = json!({});
        if let Some(e2e) = n("latency_ms").or(since_start("endTime")) {
            timing["e2e_ms"] = json!(e2e);
        }
        if let Some(ttft) = n("ttft_ms").or(since_start("completionStartTime")) {
            timing["ttft_ms"] = json!(ttft);
        }
        if response["type"] == "error" {
            let (kind, message) = (&response["error"]["type"], &response["error"]["message"]);
            let outcome = match kind.as_str().unwrap() {
                "rate_limit_error" => "rate_limited",
                "overloaded_error" | "api_error" => "http_5xx",
                _ => "http_4xx",
            };
            let error = format!(
                "the logged call failed ({}): {}",
                kind.as_str().unwrap(),
                message.as_str().unwrap()
            );
            let mut m = json!({"role": "assistant", "content": null, "outcome": outcome,
                "error": error});
            m["timing"] = timing;
            out.push(m);
        } else {
            let mut m = assistant(&response["content"]);
            let finish = match response["stop_reason"].as_str().unwrap() {
                "end_turn" | "stop_sequence" => "stop",
                "max_tokens" => "length",
                "tool_use" => "tool_calls",
                other => other,
            };
            m["finish_reason"] = json!(finish);
            let u = &response["usage"];
            let (input, read) = (
                u["input_tokens"].as_i64().unwrap(),
                u["cache_read_input_tokens"].as_i64().unwrap_or(0),
            );
            let created = u["cache_creation_input_tokens"].as_i64().unwrap_or(0);
            m["usage"] = json!({"prompt_tokens": input + read + created,
                "completion_tokens": u["output_tokens"], "cached_tokens": read});
            if timing != json!({}) {
                m["timing"] = timing;
            }
            out.push(m);
        }
    }
    out
}

fn expected_lmsys(row: &Value) -> Vec<Value> {
    row["conversation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| json!({"role": m["role"], "content": m["content"]}))
        .collect()
}

#[test]
fn every_sample_of_every_new_format_is_stored_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, out, err) = import(
        &db,
        &[
            Path::new(ANTHROPIC),
            Path::new(LMSYS),
            Path::new(TOOL_CALLS),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("read as anthropic 4"), "{out}");
    assert!(out.contains("read as lmsys 3"), "{out}");
    // The logged call's redacted thinking is counted, never shown.
    assert!(out.contains("not stored: redacted_thinking 1"), "{out}");
    let samples: Vec<(Value, Vec<Value>, Option<&str>)> = std::fs::read_to_string(ANTHROPIC)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| {
            let want = expected_anthropic(&r);
            (r, want, None)
        })
        .chain(
            std::fs::read_to_string(LMSYS)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .map(|r| {
                    let want = expected_lmsys(&r);
                    let id = if r.get("conversation_id").is_some() {
                        "conversation_id"
                    } else {
                        "conversation_hash"
                    };
                    (r, want, Some(id))
                }),
        )
        .chain(
            std::fs::read_to_string(TOOL_CALLS)
                .unwrap()
                .lines()
                .map(|l| {
                    let r: Value = serde_json::from_str(l).unwrap();
                    let want = r["messages"].as_array().unwrap().clone();
                    (r, want, None)
                }),
        )
        .collect();
    assert_eq!(samples.len(), 8);
    for (record, want, id_key) in &samples {
        let uid = record[id_key.unwrap_or("id")].as_str().unwrap();
        let got = exported(&db, uid);
        assert_messages(&got["messages"], &json!(want));
        let model = record
            .get("response")
            .and_then(|r| r.get("model"))
            .or_else(|| record.get("request").and_then(|r| r.get("model")))
            .or_else(|| record.get("model"));
        assert_eq!(got.get("model"), model.or(Some(&json!("unknown"))), "{uid}");
    }
}

const RESPONSES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/responses.jsonl");

/// Held-out Responses calls: a chain of two (the second continuing the first, given
/// before it), a lone call, a malformed call (a function call without a name, line 4)
/// and a call continuing a response that is not in the file (line 5).
const RESPONSES_HELD_OUT: &str = r#"{"request":{"model":"gpt-5","previous_response_id":"resp_a1","input":[{"type":"function_call_output","call_id":"c1","output":"42"}]},"response":{"id":"resp_a2","object":"response","status":"completed","model":"gpt-5","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"It is 42.","annotations":[]}]}],"usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":40},"output_tokens":5}},"latency_ms":300.0}
{"request":{"model":"gpt-5","instructions":"Use the calculator.","input":[{"role":"user","content":[{"type":"input_text","text":"6 × 7?"}]}]},"response":{"id":"resp_a1","object":"response","status":"completed","model":"gpt-5","output":[{"type":"function_call","call_id":"c1","name":"calc","arguments":"{\"expr\":\"6*7\"}"}]}}
{"request":{"model":"gpt-5-nano","input":"Hi"},"response":{"id":"resp_b1","object":"response","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello!"}]}]}}
{"request":{"input":"Q"},"response":{"id":"resp_c1","object":"response","output":[{"type":"function_call","call_id":"x","arguments":"{}"}]}}
{"request":{"previous_response_id":"resp_zz","input":"more"},"response":{"id":"resp_d2","object":"response","output":[{"type":"message","role":"assistant","content":"ok"}]}}
"#;

#[test]
fn responses_calls_chained_by_previous_response_id_are_one_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let file = write(dir.path(), "responses.jsonl", RESPONSES_HELD_OUT);
    let (code, out, err) = run(turnbench(&db)
        .args(["import", "--format", "responses"])
        .arg(&file));
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("2 imported (3 turns), 0 already present, 2 rejected"),
        "{out}"
    );
    assert!(out.contains("read as responses 2"), "{out}");
    assert!(
        err.contains("responses.jsonl:4: response.output[0].name: missing"),
        "{err}"
    );
    assert!(
        err.contains("responses.jsonl:5: previous_response_id: \"resp_zz\" is not the response id of a call in this file"),
        "{err}"
    );
    let chain = exported(&db, "resp_a2");
    assert_messages(
        &chain["messages"],
        &json!([
            {"role": "system", "content": "Use the calculator."},
            {"role": "user", "content": "6 × 7?"},
            {"role": "assistant", "content": null, "finish_reason": "tool_calls",
             "tool_calls": [{"id": "c1", "type": "function",
                             "function": {"name": "calc", "arguments": "{\"expr\":\"6*7\"}"}}]},
            {"role": "tool", "content": "42", "tool_call_id": "c1"},
            {"role": "assistant", "content": "It is 42.", "finish_reason": "stop",
             "usage": {"prompt_tokens": 50, "completion_tokens": 5, "cached_tokens": 40},
             "timing": {"e2e_ms": 300.0}},
        ]),
    );
    assert_eq!(chain["model"], "gpt-5");
    let lone = exported(&db, "resp_b1");
    assert_eq!(lone["model"], "gpt-5-nano");
    let (_, out, _) = run(turnbench(&db).arg("import").arg(&file));
    assert!(
        out.contains("0 imported (0 turns), 2 already present, 2 rejected"),
        "{out}"
    );
}

#[test]
fn the_responses_example_is_stored_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, out, err) = import(&db, &[Path::new(RESPONSES)]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 imported (4 turns)"), "{out}");
    let chain = exported(&db, "resp_03");
    assert_messages(
        &chain["messages"],
        &json!([
            {"role": "system", "content": "You are a weather assistant. Use the tool."},
            {"role": "user", "content": "Do I need an umbrella in Oslo today?"},
            {"role": "assistant", "content": null, "reasoning": "Need the forecast for Oslo.",
             "finish_reason": "tool_calls",
             "tool_calls": [{"id": "call_01", "type": "function",
                             "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}}],
             "usage": {"prompt_tokens": 85, "completion_tokens": 40, "cached_tokens": 0,
                       "reasoning_tokens": 22},
             "timing": {"e2e_ms": 1310.0}},
            {"role": "tool", "content": "4 °C, rain all day", "tool_call_id": "call_01"},
            {"role": "assistant", "content": "Yes: 4 °C and rain all day in Oslo.",
             "finish_reason": "stop",
             "usage": {"prompt_tokens": 140, "completion_tokens": 14, "cached_tokens": 128,
                       "reasoning_tokens": 0},
             "timing": {"ttft_ms": 420.0, "e2e_ms": 760.0}},
            {"role": "user", "content": "And tomorrow?"},
            {"role": "assistant", "content": "Tomorrow looks drier, with", "finish_reason": "length",
             "usage": {"prompt_tokens": 170, "completion_tokens": 16, "cached_tokens": 128}},
        ]),
    );
    assert_eq!(chain["messages"][6]["outcome"], "truncated");
    let failed = exported(&db, "resp_10");
    assert_eq!(failed["outcome"], "http_5xx");
    assert_eq!(
        failed["messages"][0],
        json!({"role": "user", "content": "Summarise RFC 9110 in one sentence."})
    );
}
