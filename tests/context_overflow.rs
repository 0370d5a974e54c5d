//! Context overflow through the binary: a loopback server that refuses requests past a
//! fixed size in each dialect servers say it in (status, body, streamed or not) and one
//! roomy target; `turnbench collect`, then `turnbench report` (JSON and terminal), `show`,
//! `judge` with a judge whose context is too small, and `replay`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

/// The window every refusing dialect serves the model with, in the server's own "tokens"
/// (characters of the messages ÷ 4): turns 1 and 2 fit, turn 3 does not.
const WINDOW: usize = 250;

/// The prompt's size as the scripted server counts it.
fn prompt_tokens(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|m| m["content"].as_str().map_or(0, str::len))
                .sum::<usize>()
        })
        .unwrap_or(0)
        / 4
}

/// How each dialect refuses a prompt of `p` tokens (a window of `w`), by model name.
fn refusal(model: &str, p: usize, w: usize) -> Reply {
    let stream = |data: &str| {
        Reply::Close(
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{data}"
            )
            .into_bytes(),
        )
    };
    let body = match model {
        "openai" | "openai-whole" => {
            let msg = format!(
                "This model's maximum context length is {w} tokens. However, your messages resulted in {p} tokens. Please reduce the length of the messages."
            );
            serde_json::json!({"error": {"message": msg, "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
        }
        "openai-in-stream" => {
            let msg = format!(
                "This model's maximum context length is {w} tokens. However, your messages resulted in {p} tokens."
            );
            let data =
                serde_json::json!({"error": {"message": msg, "code": "context_length_exceeded"}});
            return stream(&format!("data: {data}\n\ndata: [DONE]\n\n"));
        }
        "vllm" | "vllm-200-body" => {
            let msg = format!(
                "This model's maximum context length is {w} tokens. However, you requested {} tokens ({p} in the messages, 20 in the completion). Please reduce the length of the messages or completion.",
                p + 20
            );
            let err = serde_json::json!({"object": "error", "message": msg, "type": "BadRequestError", "param": null, "code": 400});
            if model == "vllm-200-body" {
                return Reply::Close(http("200 OK", "", &err.to_string()));
            }
            err
        }
        "llamacpp" => {
            serde_json::json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": p, "n_ctx": w}})
        }
        "llamacpp-stream" => {
            return stream(
                "data: {\"choices\":[{\"delta\":{\"content\":\"par\"}}]}\n\nerror: {\"code\":500,\"message\":\"Context size has been exceeded.\",\"type\":\"server_error\"}\n\n",
            );
        }
        "sglang" => {
            let msg = format!(
                "The input ({p} tokens) is longer than the model's context length ({w} tokens)."
            );
            serde_json::json!({"object": "error", "message": msg, "type": "BadRequestError", "param": null, "code": 400})
        }
        "tgi" => {
            let msg = format!(
                "Input validation error: `inputs` tokens + `max_new_tokens` must be <= {w}. Given: {p} `inputs` tokens and 20 `max_new_tokens`"
            );
            let body = serde_json::json!({"error": msg, "error_type": "validation"});
            return Reply::Close(http("422 Unprocessable Entity", "", &body.to_string()));
        }
        "anthropic" => {
            let msg = format!("prompt is too long: {p} tokens > {w} maximum");
            serde_json::json!({"type": "error", "error": {"type": "invalid_request_error", "message": msg}})
        }
        other => panic!("no dialect {other}"),
    };
    Reply::Close(http("400 Bad Request", "", &body.to_string()))
}

/// A short answer, streamed or whole as asked.
fn answer(body: &Value) -> Reply {
    if body["stream"] == Value::Bool(false) {
        let whole = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": "noted"}, "finish_reason": "stop"}]});
        Reply::Close(http("200 OK", "", &whole.to_string()))
    } else {
        Reply::Close(answer_sse("noted", "stop"))
    }
}

/// Every dialect, the target's extra settings (non-streamed ones), and the sizes it states:
/// (prompt stated, window stated, completion stated).
const DIALECTS: [(&str, &str, bool, bool, bool); 10] = [
    ("openai", "", true, true, false),
    (
        "openai-whole",
        "request = { stream = false }",
        true,
        true,
        false,
    ),
    ("openai-in-stream", "", true, true, false),
    ("vllm", "", true, true, true),
    (
        "vllm-200-body",
        "request = { stream = false }",
        true,
        true,
        true,
    ),
    ("llamacpp", "", true, true, false),
    ("llamacpp-stream", "", false, false, false),
    ("sglang", "", true, true, false),
    ("tgi", "", true, true, true),
    ("anthropic", "", true, true, false),
];

/// A four-turn scenario whose every user turn is about 100 of the server's tokens.
fn growing_scenario(id: &str) -> String {
    let mut s = format!("id = \"{id}\"\ncategory = \"developer\"\nsystem = \"You are terse.\"\n");
    for t in 1..=4 {
        s.push_str(&format!(
            "\n[[turn]]\nuser = \"Step {t}: {}\"\nreference = \"noted\"\n",
            "keep this in mind ".repeat(22)
        ));
    }
    s
}

struct Collected {
    project: Project,
    /// Requests each model received.
    requests: Arc<Mutex<BTreeMap<String, usize>>>,
    _server: Scripted,
}

/// One collect run: every dialect (label `small`, provider = dialect) and a roomy target,
/// retries on.
fn collected() -> Collected {
    let requests = Arc::new(Mutex::new(BTreeMap::<String, usize>::new()));
    let seen = requests.clone();
    let server = Scripted::start(move |req| {
        *seen.lock().unwrap().entry(req.model.clone()).or_insert(0) += 1;
        let p = prompt_tokens(&req.body);
        if req.model == "roomy" || p <= WINDOW {
            answer(&req.body)
        } else {
            refusal(&req.model, p, WINDOW)
        }
    });
    let project = Project::new(&[("grow", &growing_scenario("grow"))]);
    let mut bench = String::from(
        "name = \"overflow\"\nrepeats = 1\nturn_timeout_s = 5\nconcurrency = 4\n[request]\nmax_tokens = 20\n[retry]\nattempts = 3\nbackoff_ms = 1\nmax_wait_ms = 10\n",
    );
    for (model, extra, ..) in DIALECTS {
        bench.push_str(&target(
            model,
            model,
            &server.url(),
            &format!("label = \"small\"\n{extra}"),
        ));
    }
    bench.push_str(&target(
        "roomy",
        "roomy",
        &server.url(),
        "label = \"small\"",
    ));
    let bench = project.write("bench.toml", &bench);
    let out = project
        .cmd(&["collect", "-q", "--config", bench.to_str().unwrap()])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    Collected {
        project,
        requests,
        _server: server,
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

type TurnRow = (
    String,
    i64,
    String,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    i64,
);

#[test]
fn every_dialect_is_a_context_overflow_at_the_turn_that_outgrew_the_window() {
    let c = collected();
    let conn = c.project.conn();
    let turns: Vec<TurnRow> = rows(
        &conn,
        "SELECT provider, idx, outcome, overflow_prompt_tokens, overflow_window_tokens,
                overflow_completion_tokens, attempts
         FROM turn_facts ORDER BY provider, idx",
        [],
        |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        },
    );
    for (dialect, _, prompt, window, completion) in DIALECTS {
        let mine: Vec<&TurnRow> = turns.iter().filter(|t| t.0 == dialect).collect();
        let classes: Vec<&str> = mine.iter().map(|t| t.2.as_str()).collect();
        assert_eq!(classes, ["ok", "ok", "context_overflow"], "{dialect}");
        let last = mine[2];
        assert_eq!(last.1, 2, "{dialect}: the third turn overflowed");
        // What the server said about sizes, when it said it: the prompt (over the window),
        // the window, the completion asked for.
        assert_eq!(last.3.is_some(), prompt, "{dialect}: {last:?}");
        assert!(
            last.3.is_none_or(|p| p > WINDOW as i64),
            "{dialect}: {last:?}"
        );
        assert_eq!(
            last.4,
            window.then_some(WINDOW as i64),
            "{dialect}: {last:?}"
        );
        assert_eq!(last.5, completion.then_some(20), "{dialect}: {last:?}");
        // Never retried: the same request overflows again.
        assert_eq!(last.6, 1, "{dialect}");
        assert_eq!(c.requests.lock().unwrap()[dialect], 3, "{dialect}");
        // Earlier turns stay clean.
        assert!(mine[..2].iter().all(|t| t.3.is_none() && t.4.is_none()));
    }
    let outcomes: Vec<(String, String)> = rows(
        &conn,
        "SELECT provider, outcome FROM conversation_facts ORDER BY provider",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    );
    for (provider, outcome) in &outcomes {
        let want = if provider == "roomy" {
            "completed"
        } else {
            "context_overflow"
        };
        assert_eq!(outcome, want, "{provider}");
    }
    assert_eq!(outcomes.len(), DIALECTS.len() + 1);
    // The error says what the server said, for a reader of the turn.
    let error: String = conn
        .query_row(
            "SELECT error FROM turn_facts WHERE provider = 'llamacpp' AND idx = 2",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(error.contains("window 250 tokens"), "{error}");
}

#[test]
fn the_report_flags_each_overflowing_cell_at_its_turn_and_the_provider_that_fits() {
    let c = collected();
    let (json, _) = c.project.run_ok(&["report", "--format", "json"]);
    let r: Value = serde_json::from_str(&json).unwrap();
    let errors = crate::common::schema_violations(&r);
    assert!(errors.is_empty(), "{errors:#?}");
    let section = &r["context_overflow"];
    let flags = section["cells"].as_array().unwrap();
    assert_eq!(flags.len(), DIALECTS.len(), "{section:#}");
    for f in flags {
        let provider = f["provider"].as_str().unwrap();
        assert_eq!(f["conversations"], 1);
        assert_eq!(f["attempted"], 1);
        assert_eq!(f["turns"], serde_json::json!({"3": 1}), "{provider}");
        let text = f["text"].as_str().unwrap();
        assert!(
            text.starts_with(&format!(
                "{provider} / small: 1 of 1 conversations outgrew the context at turn 3"
            )),
            "{text}"
        );
        if provider == "llamacpp-stream" {
            assert!(text.contains("the server stated no sizes"), "{text}");
        } else {
            assert!(text.contains("the server's window 250"), "{text}");
            assert_eq!(f["window_tokens"], 250);
        }
    }
    assert!(flags.iter().all(|f| f["provider"] != "roomy"));
    // The same label fits at `roomy`: one line says so.
    let contrasts = section["contrasts"].as_array().unwrap();
    assert_eq!(contrasts.len(), 1, "{section:#}");
    let line = contrasts[0]["text"].as_str().unwrap();
    assert!(line.starts_with("small outgrew the context at "), "{line}");
    assert!(
        line.contains("but not at roomy (0 of 1, answered up to turn 4)"),
        "{line}"
    );
    assert!(
        line.contains("anthropic (1 of 1 conversations, from turn 3; window 250)"),
        "{line}"
    );
    // The contrast is a headline too, with the same sentence, before the flags.
    let heads = r["headlines"].as_array().unwrap();
    let at = heads
        .iter()
        .position(|h| h["kind"] == "context_overflow")
        .unwrap_or_else(|| panic!("no context_overflow headline: {heads:#?}"));
    assert_eq!(heads[at]["text"].as_str(), Some(line));
    assert_eq!(heads[at]["model"], "small");
    assert!(heads[at]["established"].is_null());
    assert!(
        heads[..at].iter().all(|h| h["kind"] != "flag"),
        "a flag before the contrast: {heads:#?}"
    );
    // Every denominator holds them: RELIABILITY counts them under their class.
    let roomy = r["cells"].as_array().unwrap();
    let anthropic = roomy.iter().find(|c| c["provider"] == "anthropic").unwrap();
    assert_eq!(anthropic["reliability"]["attempted"], 1);
    assert_eq!(anthropic["reliability"]["failures"]["context_overflow"], 1);

    let (terminal, _) = c.project.run_ok(&["report"]);
    assert!(terminal.contains("CONTEXT OVERFLOW"), "{terminal}");
    assert!(terminal.contains("1 context_overflow"), "{terminal}");
    let row = terminal
        .lines()
        .find(|l| l.contains("sglang / small") && l.contains("1/1"))
        .unwrap_or_else(|| panic!("no CONTEXT OVERFLOW row for sglang:\n{terminal}"));
    assert!(row.split_whitespace().any(|w| w == "3"), "{row}");
    let flat = terminal.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("tgi / small: 1 of 1 conversations outgrew the context at turn 3"),
        "{terminal}"
    );
    assert!(flat.contains("but not at roomy"), "{terminal}");
    // Among the headlines, under their own group.
    let heads = terminal
        .split("CONTEXT OVERFLOW")
        .next()
        .unwrap_or_default();
    assert!(heads.contains("context overflow"), "{terminal}");
    assert!(
        heads
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains("small outgrew the context at "),
        "{terminal}"
    );
    let (md, _) = c.project.run_ok(&["report", "--format", "md"]);
    let md_heads = md.split("\n## ").nth(1).unwrap_or_default();
    assert!(md_heads.contains("small outgrew the context at "), "{md}");

    // The conversation view names the turn.
    let id: i64 = c
        .project
        .conn()
        .query_row(
            "SELECT conversation_id FROM conversation_facts WHERE provider = 'vllm'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let (view, _) = c.project.run_ok(&["show", &id.to_string()]);
    assert!(view.contains("context_overflow at turn 3"), "{view}");
}

#[test]
fn a_judge_whose_context_is_too_small_says_how_long_the_prompt_was() {
    let c = collected();
    let judge_server = Scripted::start(|req| {
        let p = prompt_tokens(&req.body);
        refusal("llamacpp", p, 64)
    });
    let judge = c.project.write(
        "small-judge.toml",
        &judge_toml(
            &judge_server.url(),
            "small-judge",
            "[retry]\nattempts = 3\nbackoff_ms = 1\nmax_wait_ms = 10\n",
        ),
    );
    let rubric = repo("rubrics/multiturn-quality.toml");
    let args = [
        "judge",
        "--judge",
        judge.to_str().unwrap(),
        "--rubric",
        rubric.to_str().unwrap(),
    ];
    // The dry run says each prompt's size before anything is sent.
    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let (prompts, _) = c.project.run_ok(&dry);
    let header = prompts
        .lines()
        .find(|l| l.starts_with("=== judge prompt 1/1"))
        .unwrap_or_else(|| panic!("{prompts}"));
    assert!(header.ends_with(" o200k tokens ==="), "{header}");

    let out = c.project.cmd(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        said.contains("context_overflow: 1 judge prompt outgrew judge small-judge's context"),
        "{said}"
    );
    assert!(
        said.contains("the judge's server said its window is 64 tokens"),
        "{said}"
    );
    assert!(
        said.contains("\n  fix: a judge served with a larger context window"),
        "{said}"
    );
    let (status, error): (String, String) = c
        .project
        .conn()
        .query_row("SELECT status, error FROM judgments", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(status, "judge_error");
    assert!(
        error.ends_with("o200k tokens (context_overflow)"),
        "{error}"
    );
    // The size the error gives is the one the dry run printed.
    let size: String = header
        .rsplit(" · ")
        .next()
        .unwrap()
        .trim_end_matches(" o200k tokens ===")
        .replace(',', "");
    assert!(
        error.contains(&format!("the judge prompt is {size} o200k tokens")),
        "{error}\n{header}"
    );
}

#[test]
fn a_replayed_session_that_outgrows_the_context_is_flagged_with_its_turn() {
    let server = Scripted::start(|req| {
        let p = prompt_tokens(&req.body);
        if req.model == "roomy" || p <= 600 {
            answer(&req.body)
        } else {
            refusal("openai", p, 600)
        }
    });
    let project = Project::new(&[]);
    let mut messages = vec![serde_json::json!({"role": "system", "content": "You fix code."})];
    for t in 0..5 {
        messages.push(serde_json::json!({"role": "user", "content": format!("step {t}: ") + &"context ".repeat(100)}));
        messages.push(serde_json::json!({"role": "assistant", "content": format!("done {t}")}));
    }
    let sessions = project.write(
        "sessions.jsonl",
        &format!(
            "{}\n",
            serde_json::json!({"id": "s0", "messages": messages})
        ),
    );
    let bench = project.write(
        "bench.toml",
        &format!(
            "name = \"replay-overflow\"\n[replay]\npause_scale = 0\n{}{}",
            target("tight", "tight", &server.url(), "label = \"small\""),
            target("roomy", "roomy", &server.url(), "label = \"small\"")
        ),
    );
    let out = project
        .cmd(&[
            "replay",
            "-q",
            "--config",
            bench.to_str().unwrap(),
            "--sessions",
            sessions.to_str().unwrap(),
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let classes: Vec<(i64, String)> = rows(
        &project.conn(),
        "SELECT idx, outcome FROM replay_turn_facts WHERE provider = 'tight' ORDER BY idx",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    );
    // About 810 characters a turn, a window of 600 "tokens" (2,400 characters): turn 3
    // overflows.
    assert_eq!(
        classes,
        [
            (0, "ok".into()),
            (1, "ok".into()),
            (2, "context_overflow".into())
        ]
    );
    let (json, _) = project.run_ok(&["report", "--format", "json"]);
    let r: Value = serde_json::from_str(&json).unwrap();
    let flags = r["context_overflow"]["cells"].as_array().unwrap();
    assert_eq!(flags.len(), 1, "{:#}", r["context_overflow"]);
    let f = &flags[0];
    assert_eq!(f["replay"], true);
    assert_eq!(
        f["sessions"],
        serde_json::json!([{"session": "s0", "round": 1, "turn": 3}])
    );
    let text = f["text"].as_str().unwrap();
    assert!(
        text.starts_with("tight / small (replayed sessions): 1 of 1 passes outgrew the context: session s0 (round 1) at turn 3"),
        "{text}"
    );
}

/// The sizes a server stated travel through the exchange format: `export conversations`
/// writes them on the overflowed turn (`context`), `import` stores them again, and the
/// report of the imported store flags the same cells with the same sizes. A `context` on a
/// turn that did not overflow is refused, naming the field.
#[test]
fn stated_sizes_survive_export_and_import() {
    let c = collected();
    let (jsonl, _) = c.project.run_ok(&["export", "conversations"]);
    type Stated = (String, Option<i64>, Option<i64>, Option<i64>);
    let sizes = |conn: &rusqlite::Connection| -> Vec<Stated> {
        let mut stmt = conn
            .prepare(
                "SELECT provider, overflow_prompt_tokens, overflow_window_tokens,
                        overflow_completion_tokens
                 FROM turn_facts WHERE outcome = 'context_overflow' ORDER BY provider",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let before = sizes(&c.project.conn());
    assert_eq!(before.len(), DIALECTS.len());
    assert!(
        before.iter().any(|s| s.1.is_some() && s.2.is_some()),
        "no dialect stated sizes: {before:?}"
    );
    // Written on the overflowed turn only, as the store holds them.
    let stated: usize = jsonl
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| !m["context"].is_null())
                .inspect(|m| assert_eq!(m["outcome"], "context_overflow", "{m}"))
                .count()
        })
        .sum();
    assert_eq!(
        stated,
        before
            .iter()
            .filter(|s| s.1.is_some() || s.2.is_some() || s.3.is_some())
            .count()
    );

    let fresh = Project::new(&[]);
    let file = fresh.write("all.jsonl", &jsonl);
    fresh.run_ok(&["import", file.to_str().unwrap()]);
    assert_eq!(sizes(&fresh.conn()), before);
    let flags = |p: &Project| -> Vec<String> {
        let (json, _) = p.run_ok(&["report", "--format", "json"]);
        let r: Value = serde_json::from_str(&json).unwrap();
        r["context_overflow"]["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["text"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(flags(&fresh), flags(&c.project));

    // A `context` on a turn that answered is refused, naming the field.
    let bad = r#"{"provider":"p","model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello","context":{"window_tokens":4096}}]}"#;
    let file = fresh.write("bad.jsonl", &format!("{bad}\n"));
    let out = fresh
        .cmd(&["import", file.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.jsonl:1")
            && err.contains("messages[1].context")
            && err.contains("context_overflow"),
        "{err}"
    );
}
