//! Tool calls where people read conversations: `turnbench show` (text and JSON) and the
//! HTML report's conversation view name each call, its id and its arguments, and the call
//! a tool result answers; every piece of it escaped in HTML.

use crate::import::{run, turnbench, write};

/// A turn that only calls a tool (its arguments carrying markup), the tool's result
/// naming the call, and the answer.
const LINE: &str = r#"{"id":"tc-1","provider":"acme","model":"m1","messages":[{"role":"user","content":"Weather in Oslo?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_<7>","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"<Oslo> & co\"}"}}],"finish_reason":"tool_calls"},{"role":"tool","content":"4 C, rain","tool_call_id":"call_<7>"},{"role":"assistant","content":"Cold and wet."}]}
"#;

#[test]
fn show_and_the_html_view_name_tool_calls_and_what_answers_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let file = write(dir.path(), "tools.jsonl", LINE);
    let (code, out, err) = run(turnbench(&db).arg("import").arg(&file));
    assert_eq!(code, 0, "{out}{err}");

    let (code, text, err) = run(turnbench(&db).args(["show", "tc-1"]));
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("    (no text: tool calls only)\n"), "{text}");
    assert!(
        text.contains("  tool call get_weather (call_<7>):\n    {\"city\":\"<Oslo> & co\"}\n"),
        "{text}"
    );
    assert!(
        text.contains("  tool (call_<7>):\n    4 C, rain\n"),
        "{text}"
    );

    let (code, json, err) = run(turnbench(&db).args(["show", "tc-1", "--format", "json"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let call = &v["turns"][0]["tool_calls"][0];
    assert_eq!(call["id"], "call_<7>");
    assert_eq!(call["function"]["name"], "get_weather");
    assert_eq!(call["function"]["arguments"], r#"{"city":"<Oslo> & co"}"#);
    assert_eq!(
        v["turns"][1]["sent"][0],
        serde_json::json!(["tool", "4 C, rain", "call_<7>"])
    );
    assert_eq!(
        v["turns"][0]["sent"][0],
        serde_json::json!(["user", "Weather in Oslo?"])
    );
    assert!(
        v["turns"][1].get("tool_calls").is_none(),
        "no calls, no key"
    );

    let page = dir.path().join("r.html");
    let (code, _, err) = run(turnbench(&db)
        .args([
            "report",
            "--format",
            "html",
            "--conversations",
            "all",
            "--out",
        ])
        .arg(&page));
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("tool call get_weather (call_&lt;7&gt;)"),
        "no tool call in the view"
    );
    assert!(
        html.contains("&lt;Oslo&gt; &amp; co"),
        "no escaped arguments"
    );
    assert!(
        html.contains("tool (call_&lt;7&gt;)"),
        "no call named by the result"
    );
    assert!(
        !html.contains("<Oslo>") && !html.contains("call_<7>"),
        "unescaped"
    );
}
