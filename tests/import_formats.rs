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
fn exported(db: &Path, uid: &str) -> Value {
    export(db, &[])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["id"] == uid)
        .unwrap_or_else(|| panic!("{uid} not exported"))
}

/// Each message of `got` has what `want` has, field by field (`got` may add fields such
/// as a derived `outcome`).
fn assert_messages(got: &Value, want: &Value) {
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
    // `run` and `turnbench` stay in use for the formats below.
    let (code, _, _) = run(turnbench(&db).args(["import", "--help"]));
    assert_eq!(code, 0);
}
