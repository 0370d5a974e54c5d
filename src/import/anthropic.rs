//! Anthropic Messages records and logged calls.
//!
//! A record is a Messages request as people keep it: `{"model", "system", "messages": [{role,
//! content}]}`, content a string or content blocks. A logged call is `{"request": {...},
//! "response": {...}}` (or the request's fields at the top level beside `response`), the
//! response a Messages response (`content` blocks, `stop_reason`, `usage`) or an error body
//! (`{"type": "error", "error": {"type": "overloaded_error", ...}}`).
//!
//! Blocks: `text` is the answer (or prompt text); `thinking` the reasoning (never the
//! answer); `redacted_thinking` is counted, not shown; `tool_use` a tool call; a
//! `tool_result` a `tool` message answering its call. A block or field that carries content
//! turnbench does not store (`image`, `document`, citations, server tools, ...) refuses the
//! record naming it, or with `--lossy` is dropped and counted.
//!
//! Usage: `input_tokens` excludes cached input, so the prompt is `input_tokens` +
//! `cache_read_input_tokens` + `cache_creation_input_tokens`, the cached tokens
//! `cache_read_input_tokens`, the completion `output_tokens`. Timings as for OpenAI logs
//! ([`super::openai_log::record_timing`]); without them they stay empty.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::openai_log::record_timing;
use super::shape::{
    Dropped, MessagePaths, NamedPaths, Normalised, Shape, check_usage, parse_record,
};
use crate::client::completion::logged_error;
use crate::exchange::{ConversationLine, MessageLine, Object, Role, ToolCallLine, UsageLine};
use crate::jsonl::LineProblem;

/// The block types only Anthropic's format has: a turnbench record that fails on one of
/// them is read as Anthropic's.
const BLOCK_TYPES: [&str; 6] = [
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "image",
    "document",
];

/// Whether a problem reading a record as turnbench's is an Anthropic content block.
pub(super) fn is_block_problem(p: &LineProblem) -> bool {
    p.field.starts_with("messages[")
        && BLOCK_TYPES
            .iter()
            .any(|t| p.problem.starts_with(&format!("a \"{t}\" part")))
}

#[derive(Deserialize)]
struct Record {
    id: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    label: Option<String>,
    scenario: Option<String>,
    repeat: Option<u32>,
    outcome: Option<String>,
    system: Option<Value>,
    messages: Option<Vec<Value>>,
    request: Option<Object<Request>>,
    response: Option<Value>,
}

#[derive(Deserialize)]
struct Request {
    model: Option<String>,
    system: Option<Value>,
    messages: Option<Vec<Value>>,
}

/// Reads one record or logged call.
pub(super) fn read(text: &[u8], lossy: bool) -> Result<Normalised, LineProblem> {
    let r: Record = parse_record(text)?;
    let mut line = ConversationLine {
        id: r.id,
        provider: r.provider,
        model: r.model,
        label: r.label,
        scenario: r.scenario,
        repeat: r.repeat,
        outcome: r.outcome,
        ..ConversationLine::default()
    };
    let request = r.request.map(|o| o.0);
    let (request_model, request_system, request_messages) = match request {
        Some(q) => (q.model, q.system, q.messages),
        None => (None, None, None),
    };
    let (list, system_at, system, messages) = match (request_messages, r.messages) {
        (Some(m), _) => ("request.messages", "request.system", request_system, m),
        (None, Some(m)) => ("messages", "system", r.system, m),
        (None, None) => {
            return Err(LineProblem::new(
                "messages",
                "missing; an Anthropic record needs \"messages\" (or \"request\" with its \
                 \"messages\")",
            ));
        }
    };
    let mut b = Builder {
        lossy,
        ..Builder::default()
    };
    if let Some(system) = &system {
        b.system(system, system_at)?;
    }
    for (i, m) in messages.iter().enumerate() {
        b.message(m, &format!("{list}[{i}]"))?;
    }
    let mut response_model = None;
    if let Some(response) = &r.response {
        let mut answer = read_response(response, &mut b)?;
        answer.timing = record_timing(text)?;
        b.push(answer, "response".into());
        response_model = response
            .get("model")
            .and_then(Value::as_str)
            .map(String::from);
    }
    let named = |m: Option<String>| m.filter(|m| !m.trim().is_empty());
    line.model = named(response_model)
        .or(named(request_model))
        .or(line.model);
    line.messages = b.messages;
    Ok(Normalised {
        shape: Shape::Anthropic,
        line,
        paths: MessagePaths::Named(Arc::new(NamedPaths {
            list,
            messages: b.names,
            renamed: &[("finish_reason", "stop_reason"), ("outcome", "error")],
        })),
        dropped: b.dropped,
    })
}

/// The normalised messages as they are read, each with its path in the record.
#[derive(Default)]
struct Builder {
    lossy: bool,
    messages: Vec<MessageLine>,
    names: Vec<String>,
    dropped: Dropped,
}

/// An assistant message's blocks, read.
#[derive(Default)]
struct AssistantBlocks {
    text: Option<String>,
    reasoning: Option<String>,
    calls: Vec<ToolCallLine>,
}

fn append(to: &mut Option<String>, text: &str) {
    match to {
        Some(t) => {
            t.push('\n');
            t.push_str(text);
        }
        None => *to = Some(text.to_string()),
    }
}

fn string_at<'v>(
    block: &'v Map<String, Value>,
    key: &str,
    at: &str,
) -> Result<&'v str, LineProblem> {
    match block.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(LineProblem::new(
            format!("{at}.{key}"),
            format!("wrong type: {}, expected a string", kind_of(other)),
        )),
        None => Err(LineProblem::new(format!("{at}.{key}"), "missing")),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn object_at<'v>(v: &'v Value, at: &str) -> Result<&'v Map<String, Value>, LineProblem> {
    v.as_object().ok_or_else(|| {
        LineProblem::new(
            at,
            format!("wrong type: {}, expected an object", kind_of(v)),
        )
    })
}

impl Builder {
    fn push(&mut self, m: MessageLine, name: String) {
        self.messages.push(m);
        self.names.push(name);
    }

    /// Fields of `block` beyond `known` that carry something: refused, or dropped and
    /// counted with `--lossy`. An empty value (null, "", [], {}) carries nothing.
    fn unknown_fields(
        &mut self,
        block: &Map<String, Value>,
        known: &[&str],
        at: &str,
    ) -> Result<(), LineProblem> {
        for (key, value) in block {
            let empty = match value {
                Value::Null => true,
                Value::String(s) => s.is_empty(),
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
                _ => false,
            };
            if !known.contains(&key.as_str()) && !empty {
                self.dropped.drop_or_refuse(
                    self.lossy,
                    format!("{at}.{key}"),
                    key,
                    &format!("a {key:?} field"),
                )?;
            }
        }
        Ok(())
    }

    /// A block of a type turnbench does not store: refused, or dropped with `--lossy`.
    fn unknown_block(&mut self, kind: &str, at: &str) -> Result<(), LineProblem> {
        self.dropped.drop_or_refuse(
            self.lossy,
            format!("{at}.type"),
            kind,
            &format!("a {kind:?} block"),
        )
    }

    /// Text blocks (`at[j]`) joined as `append` joins them; any other block type is
    /// refused or dropped (`--lossy`).
    fn text_blocks(&mut self, blocks: &[Value], at: &str) -> Result<Option<String>, LineProblem> {
        let mut text = None;
        for (j, block) in blocks.iter().enumerate() {
            let at = format!("{at}[{j}]");
            let block = object_at(block, &at)?;
            match string_at(block, "type", &at)? {
                "text" => {
                    self.unknown_fields(block, &["type", "text", "cache_control"], &at)?;
                    append(&mut text, string_at(block, "text", &at)?);
                }
                other => self.unknown_block(other, &at)?,
            }
        }
        Ok(text)
    }

    /// The top-level `system`: a string or text blocks; blank is none.
    fn system(&mut self, system: &Value, at: &str) -> Result<(), LineProblem> {
        let text = match system {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            Value::Array(blocks) => self.text_blocks(blocks, at)?,
            other => {
                return Err(LineProblem::new(
                    at,
                    format!(
                        "wrong type: {}, expected a string or text blocks",
                        kind_of(other)
                    ),
                ));
            }
        };
        if let Some(text) = text.filter(|t| !t.trim().is_empty()) {
            self.push(MessageLine::text(Role::System, text), at.to_string());
        }
        Ok(())
    }

    /// One message of `messages`: a user message (text and tool results, in order) or an
    /// assistant one (one turn).
    fn message(&mut self, m: &Value, at: &str) -> Result<(), LineProblem> {
        let m = object_at(m, at)?;
        self.unknown_fields(m, &["role", "content"], at)?;
        let role = string_at(m, "role", at)?;
        let content = m
            .get("content")
            .ok_or_else(|| LineProblem::new(format!("{at}.content"), "missing"))?;
        let at_content = format!("{at}.content");
        match (role, content) {
            ("user", Value::String(s)) => {
                self.push(MessageLine::text(Role::User, s.clone()), at.to_string());
            }
            ("user", Value::Array(blocks)) => self.user_blocks(blocks, &at_content)?,
            ("assistant", Value::String(s)) => {
                self.push(
                    MessageLine::text(Role::Assistant, s.clone()),
                    at.to_string(),
                );
            }
            ("assistant", Value::Array(blocks)) => {
                let read = self.assistant_blocks(blocks, &at_content)?;
                self.push(assistant_message(read), at.to_string());
            }
            ("user" | "assistant", other) => {
                return Err(LineProblem::new(
                    at_content,
                    format!(
                        "wrong type: {}, expected a string or content blocks",
                        kind_of(other)
                    ),
                ));
            }
            (other, _) => {
                return Err(LineProblem::new(
                    format!("{at}.role"),
                    format!(
                        "unknown role {other:?}; an Anthropic message is \"user\" or \
                         \"assistant\" (the system prompt is the top-level \"system\")"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A user message's blocks: text becomes a user message, each `tool_result` a tool
    /// message, in the order given.
    fn user_blocks(&mut self, blocks: &[Value], at: &str) -> Result<(), LineProblem> {
        let mut text: Option<(String, String)> = None;
        for (j, block) in blocks.iter().enumerate() {
            let at = format!("{at}[{j}]");
            let block = object_at(block, &at)?;
            match string_at(block, "type", &at)? {
                "text" => {
                    self.unknown_fields(block, &["type", "text", "cache_control"], &at)?;
                    let t = string_at(block, "text", &at)?;
                    match &mut text {
                        Some((so_far, _)) => {
                            so_far.push('\n');
                            so_far.push_str(t);
                        }
                        None => text = Some((t.to_string(), at.clone())),
                    }
                }
                "tool_result" => {
                    if let Some((t, name)) = text.take() {
                        self.push(MessageLine::text(Role::User, t), name);
                    }
                    let result = self.tool_result(block, &at)?;
                    self.push(result, at);
                }
                other => self.unknown_block(other, &at)?,
            }
        }
        if let Some((t, name)) = text {
            self.push(MessageLine::text(Role::User, t), name);
        }
        Ok(())
    }

    /// A `tool_result` block as a tool message; an error result's text is marked
    /// `[tool error]`.
    fn tool_result(
        &mut self,
        block: &Map<String, Value>,
        at: &str,
    ) -> Result<MessageLine, LineProblem> {
        self.unknown_fields(
            block,
            &[
                "type",
                "tool_use_id",
                "content",
                "is_error",
                "cache_control",
            ],
            at,
        )?;
        let id = string_at(block, "tool_use_id", at)?.to_string();
        let mut text = String::new();
        match block.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => text.push_str(s),
            Some(Value::Array(parts)) => {
                text = self
                    .text_blocks(parts, &format!("{at}.content"))?
                    .unwrap_or_default();
            }
            Some(other) => {
                return Err(LineProblem::new(
                    format!("{at}.content"),
                    format!(
                        "wrong type: {}, expected a string or text blocks",
                        kind_of(other)
                    ),
                ));
            }
        }
        if block.get("is_error").and_then(Value::as_bool) == Some(true) {
            text = format!("[tool error] {text}");
        }
        let mut m = MessageLine::text(Role::Tool, text);
        m.tool_call_id = Some(id);
        Ok(m)
    }

    /// An assistant message's blocks: text, thinking, tool calls.
    fn assistant_blocks(
        &mut self,
        blocks: &[Value],
        at: &str,
    ) -> Result<AssistantBlocks, LineProblem> {
        let mut read = AssistantBlocks::default();
        for (j, block) in blocks.iter().enumerate() {
            let at = format!("{at}[{j}]");
            let block = object_at(block, &at)?;
            match string_at(block, "type", &at)? {
                "text" => {
                    self.unknown_fields(block, &["type", "text", "cache_control"], &at)?;
                    append(&mut read.text, string_at(block, "text", &at)?);
                }
                "thinking" => {
                    self.unknown_fields(block, &["type", "thinking", "signature"], &at)?;
                    append(&mut read.reasoning, string_at(block, "thinking", &at)?);
                }
                // Reasoning nobody can read: counted, never shown.
                "redacted_thinking" => self.dropped.add("redacted_thinking"),
                "tool_use" => {
                    self.unknown_fields(
                        block,
                        &["type", "id", "name", "input", "cache_control"],
                        &at,
                    )?;
                    let id = string_at(block, "id", &at)?.to_string();
                    let name = string_at(block, "name", &at)?;
                    let input = block
                        .get("input")
                        .map_or_else(String::new, Value::to_string);
                    read.calls
                        .push(ToolCallLine::function(Some(id), name, input));
                }
                other => self.unknown_block(other, &at)?,
            }
        }
        Ok(read)
    }
}

fn assistant_message(read: AssistantBlocks) -> MessageLine {
    let mut m = MessageLine::text(Role::Assistant, "");
    m.content = read.text;
    m.reasoning = read.reasoning;
    m.tool_calls = Some(read.calls).filter(|c| !c.is_empty());
    m
}

/// A logged response: the final answer with its stop reason and usage, or the failed turn
/// an error body makes (classified as `collect` classifies one).
fn read_response(response: &Value, b: &mut Builder) -> Result<MessageLine, LineProblem> {
    if let Some((outcome, error)) = logged_error(response) {
        let mut m = MessageLine::text(Role::Assistant, "");
        m.content = None;
        m.outcome = Some(outcome.as_str().to_string());
        m.error = Some(error);
        return Ok(m);
    }
    let body = object_at(response, "response")?;
    let Some(Value::Array(blocks)) = body.get("content") else {
        return Err(LineProblem::new(
            "response.content",
            "missing; expected an Anthropic Messages response (\"content\" blocks), or an \
             error body for a call that failed",
        ));
    };
    let read = b.assistant_blocks(blocks, "response.content")?;
    let mut m = assistant_message(read);
    m.finish_reason = body
        .get("stop_reason")
        .and_then(Value::as_str)
        .map(finish_reason);
    m.usage = usage(body.get("usage"))?;
    Ok(m)
}

/// `stop_reason` as a finish reason: `end_turn` and `stop_sequence` → `stop`, `max_tokens`
/// → `length`, `tool_use` → `tool_calls`, `refusal` → `content_filter`; any other as given.
fn finish_reason(stop: &str) -> String {
    match stop {
        "end_turn" | "stop_sequence" => "stop",
        "max_tokens" => "length",
        "tool_use" => "tool_calls",
        "refusal" => "content_filter",
        other => other,
    }
    .to_string()
}

fn usage(u: Option<&Value>) -> Result<Option<UsageLine>, LineProblem> {
    let Some(u) = u.filter(|u| !u.is_null()) else {
        return Ok(None);
    };
    let u = object_at(u, "response.usage")?;
    let count = |key: &str| -> Result<Option<i64>, LineProblem> {
        match u.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| {
                LineProblem::new(
                    format!("response.usage.{key}"),
                    format!("wrong type: {v}, expected a whole number"),
                )
            }),
        }
    };
    let input = count("input_tokens")?;
    let read = count("cache_read_input_tokens")?;
    let created = count("cache_creation_input_tokens")?;
    let usage = UsageLine {
        prompt_tokens: input.map(|i| i + read.unwrap_or(0) + created.unwrap_or(0)),
        completion_tokens: count("output_tokens")?,
        cached_tokens: read,
        reasoning_tokens: None,
    };
    check_usage(&usage, &|field| format!("response.{field}"))?;
    Ok(Some(usage).filter(|u| !u.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::super::format::read_record_as;
    use super::super::shape::ShapeFilter;
    use super::*;

    fn read(text: &str, lossy: bool) -> Result<Normalised, LineProblem> {
        read_record_as(text.as_bytes(), ShapeFilter::Auto, lossy)
    }

    #[test]
    fn a_record_keeps_its_system_prompt_thinking_and_tool_calls() {
        let n = read(
            r#"{"model":"claude-x","system":[{"type":"text","text":"Be terse.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"Files?"},{"role":"assistant","content":[{"type":"thinking","thinking":"List them.","signature":"sig"},{"type":"redacted_thinking","data":"xx"},{"type":"tool_use","id":"tu1","name":"ls","input":{"path":"."}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":[{"type":"text","text":"a.py"}]},{"type":"text","text":"And?"}]},{"role":"assistant","content":"One file."}]}"#,
            false,
        )
        .unwrap();
        assert_eq!(n.shape, Shape::Anthropic);
        let m = &n.line.messages;
        assert_eq!(m.len(), 6);
        assert_eq!(
            (m[0].role, m[0].content.as_deref()),
            (Role::System, Some("Be terse."))
        );
        assert_eq!(m[2].content, None);
        assert_eq!(m[2].reasoning.as_deref(), Some("List them."));
        let call = &m[2].tool_calls.as_ref().unwrap()[0];
        assert_eq!(
            (
                call.function.name.as_str(),
                call.function.arguments.as_str()
            ),
            ("ls", r#"{"path":"."}"#)
        );
        assert_eq!(
            (m[3].role, m[3].tool_call_id.as_deref()),
            (Role::Tool, Some("tu1"))
        );
        assert_eq!(
            (m[4].role, m[4].content.as_deref()),
            (Role::User, Some("And?"))
        );
        assert_eq!(n.dropped.get("redacted_thinking"), 1);
        assert_eq!(n.paths.message(3), "messages[2].content[0]");
        assert_eq!(n.paths.message(4), "messages[2].content[1]");
    }

    #[test]
    fn a_logged_call_maps_stop_reason_usage_and_errors() {
        let n = read(
            r#"{"request":{"model":"claude-x","system":"S","messages":[{"role":"user","content":"Q"}]},"response":{"type":"message","role":"assistant","model":"claude-x-2025","content":[{"type":"text","text":"A"}],"stop_reason":"max_tokens","usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":5}},"latency_ms":1200}"#,
            false,
        )
        .unwrap();
        let a = n.line.messages.last().unwrap();
        assert_eq!(a.finish_reason.as_deref(), Some("length"));
        let u = a.usage.unwrap();
        assert_eq!(
            (u.prompt_tokens, u.cached_tokens, u.completion_tokens),
            (Some(100), Some(90), Some(5))
        );
        assert_eq!(a.timing.unwrap().e2e_ms, Some(1200.0));
        assert_eq!(n.line.model.as_deref(), Some("claude-x-2025"));
        let n = read(
            r#"{"request":{"messages":[{"role":"user","content":"Q"}]},"response":{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}}"#,
            false,
        )
        .unwrap();
        let a = n.line.messages.last().unwrap();
        assert_eq!(a.outcome.as_deref(), Some("http_5xx"));
        let n = read(
            r#"{"request":{"messages":[{"role":"user","content":"Q"}]},"response":{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}}"#,
            false,
        )
        .unwrap();
        assert_eq!(
            n.line.messages.last().unwrap().outcome.as_deref(),
            Some("rate_limited")
        );
    }

    #[test]
    fn content_turnbench_cannot_store_is_refused_by_field_unless_lossy() {
        let line = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]},{"role":"assistant","content":"A cat."}]}"#;
        let p = read(line, false).unwrap_err();
        assert_eq!(p.field, "messages[0].content[1].type");
        assert!(p.problem.contains("--lossy"), "{p}");
        let n = read(line, true).unwrap();
        assert_eq!(n.dropped.get("image"), 1);
        assert_eq!(n.line.messages[0].content.as_deref(), Some("What is this?"));
        let p = read(
            r#"{"system":"S","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":[{"type":"text","text":"A","citations":[{"cited_text":"x"}]}]}]}"#,
            false,
        )
        .unwrap_err();
        assert_eq!(p.field, "messages[1].content[0].citations");
    }
}
