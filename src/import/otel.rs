//! OpenTelemetry GenAI spans as the OTLP/JSON file exporter writes them: one export batch
//! a line, `{"resourceSpans": [{"resource", "scopeSpans": [{"scope", "spans": [...]}]}]}`,
//! each span with `traceId`, `startTimeUnixNano`, `endTimeUnixNano`, `status` and
//! `attributes` as OTLP key-values (`{"key", "value": {"stringValue": ...}}`).
//!
//! A chat span (`gen_ai.operation.name` `chat`, `text_completion` or `generate_content`)
//! is one model call; other spans (tools, embeddings, HTTP) hold no turn and are passed
//! over. The calls of one `gen_ai.conversation.id` (else of one trace) are one
//! conversation ([`super::grouped`]), ordered by start time. `gen_ai.system_instructions`,
//! `gen_ai.input.messages` and `gen_ai.output.messages` are JSON (a string, or the
//! structured value) of parts-based messages: `text` parts the content, `reasoning` the
//! reasoning, `tool_call` a tool call, `tool_call_response` a tool result. The span's end −
//! start is the E2E, `gen_ai.response.time_to_first_chunk` (seconds) the TTFT where
//! present; provider from `gen_ai.provider.name` (older `gen_ai.system`), model from
//! `gen_ai.response.model` (else `gen_ai.request.model`), usage from `gen_ai.usage.*`, the
//! finish reason from the output message or `gen_ai.response.finish_reasons`. A span with
//! status ERROR and no output is a failed turn, classified from `error.type` and the
//! status message. A chat span without those attributes is read from the older form's
//! span events (`gen_ai.user.message`, ..., `gen_ai.choice`; or `gen_ai.content.prompt`
//! and `gen_ai.content.completion`).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::grouped::{Generation, Pieces};
use super::shape::{
    Dropped, MessagePaths, NamedPaths, Normalised, Shape, check_usage, parse_field, parse_record,
};
use crate::client::completion::logged_error;
use crate::exchange::{ConversationLine, MessageLine, Role, TimingLine, ToolCallLine, UsageLine};
use crate::jsonl::LineProblem;

/// The operations that are model calls with a turn.
const CHAT: [&str; 3] = ["chat", "text_completion", "generate_content"];

#[derive(Deserialize)]
struct Batch<'a> {
    #[serde(borrow, rename = "resourceSpans")]
    resource_spans: Vec<ResourceSpans<'a>>,
}

#[derive(Deserialize)]
struct ResourceSpans<'a> {
    #[serde(borrow, rename = "scopeSpans", default)]
    scope_spans: Vec<ScopeSpans<'a>>,
}

#[derive(Deserialize)]
struct ScopeSpans<'a> {
    #[serde(borrow, default)]
    spans: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct Span {
    #[serde(rename = "traceId")]
    trace_id: Option<String>,
    #[serde(rename = "startTimeUnixNano")]
    start: Option<Value>,
    #[serde(rename = "endTimeUnixNano")]
    end: Option<Value>,
    #[serde(default)]
    attributes: Vec<KeyValue>,
    status: Option<Status>,
    #[serde(default)]
    events: Vec<Event>,
}

/// A span event: the older form's messages (`gen_ai.user.message`, `gen_ai.choice`, ...).
#[derive(Deserialize)]
struct Event {
    name: Option<String>,
    #[serde(default)]
    attributes: Vec<KeyValue>,
}

#[derive(Deserialize)]
struct KeyValue {
    key: String,
    value: Option<Value>,
}

#[derive(Deserialize)]
struct Status {
    code: Option<Value>,
    message: Option<String>,
}

/// Reads one export batch: a call per chat span, or a span refused naming its field.
pub(super) fn read(text: &[u8], lossy: bool) -> Result<Pieces, LineProblem> {
    let batch: Batch = parse_record(text)?;
    let mut pieces = Vec::new();
    for (i, r) in batch.resource_spans.iter().enumerate() {
        for (j, s) in r.scope_spans.iter().enumerate() {
            for (k, span) in s.spans.iter().enumerate() {
                let at = format!("resourceSpans[{i}].scopeSpans[{j}].spans[{k}]");
                if let Some(piece) = read_span(span, &at, lossy).transpose() {
                    pieces.push(piece);
                }
            }
        }
    }
    Ok(pieces)
}

/// An OTLP AnyValue as plain JSON.
fn any_value(v: &Value) -> Value {
    let Some(o) = v.as_object() else {
        return v.clone();
    };
    if let Some(s) = o.get("stringValue") {
        return s.clone();
    }
    if let Some(i) = o.get("intValue") {
        return match i {
            Value::String(s) => s.parse::<i64>().map_or_else(|_| i.clone(), Value::from),
            other => other.clone(),
        };
    }
    if let Some(d) = o.get("doubleValue").or(o.get("boolValue")) {
        return d.clone();
    }
    if let Some(a) = o.get("arrayValue") {
        let values = a.get("values").and_then(Value::as_array);
        return Value::Array(values.into_iter().flatten().map(any_value).collect());
    }
    if let Some(kv) = o.get("kvlistValue") {
        let mut out = Map::new();
        for pair in kv
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(key) = pair.get("key").and_then(Value::as_str) {
                let value = pair.get("value").map_or(Value::Null, any_value);
                out.insert(key.to_string(), value);
            }
        }
        return Value::Object(out);
    }
    Value::Null
}

/// Nanoseconds since the epoch (a string, as OTLP/JSON writes 64-bit integers, or a number).
fn nanos(v: &Option<Value>, at: &str) -> Result<Option<u64>, LineProblem> {
    let n = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => s.parse::<u64>().ok(),
        Some(Value::Number(n)) => n.as_u64(),
        Some(_) => None,
    };
    match n {
        Some(0) => Ok(None),
        Some(n) => Ok(Some(n)),
        None => Err(LineProblem::new(
            at,
            format!(
                "{} is not a time; expected nanoseconds since the Unix epoch",
                v.as_ref().map_or_else(String::new, Value::to_string)
            ),
        )),
    }
}

fn read_span(raw: &RawValue, at: &str, lossy: bool) -> Result<Option<Generation>, LineProblem> {
    let span: Span = parse_field(at, raw)?;
    let attrs: HashMap<&str, Value> = span
        .attributes
        .iter()
        .map(|kv| {
            (
                kv.key.as_str(),
                kv.value.as_ref().map_or(Value::Null, any_value),
            )
        })
        .collect();
    let text = |key: &str| attrs.get(key).and_then(Value::as_str).map(String::from);
    let op = text("gen_ai.operation.name");
    if !op.as_deref().is_some_and(|op| CHAT.contains(&op)) {
        return Ok(None);
    }
    let attr_at = |key: &str| format!("{at}.attributes[{key}]");
    let Some(group) = text("gen_ai.conversation.id")
        .or(span.trace_id.clone())
        .filter(|g| !g.trim().is_empty())
    else {
        return Err(LineProblem::new(
            format!("{at}.traceId"),
            "missing, and no gen_ai.conversation.id: the spans of a conversation are joined by \
             one of them",
        ));
    };
    let start = nanos(&span.start, &format!("{at}.startTimeUnixNano"))?;
    let end = nanos(&span.end, &format!("{at}.endTimeUnixNano"))?;
    let mut b = Parts {
        lossy,
        ..Parts::default()
    };
    if let Some(v) = attrs.get("gen_ai.system_instructions") {
        let key = attr_at("gen_ai.system_instructions");
        let parts = json_of(v, &key)?;
        let parts = parts.as_array().cloned().unwrap_or_else(|| vec![parts]);
        let m = b.message("system", &parts, &key, &key)?;
        b.push(m, key);
    }
    let input = attrs.get("gen_ai.input.messages");
    if let Some(v) = input {
        let key = attr_at("gen_ai.input.messages");
        for (i, m) in list(v, &key)?.iter().enumerate() {
            b.input_message(m, &format!("{key}[{i}]"))?;
        }
    }
    let output = attrs.get("gen_ai.output.messages");
    let mut answer = match output {
        Some(v) => b.output(v, &attr_at("gen_ai.output.messages"))?,
        None => no_answer(),
    };
    if input.is_none() && output.is_none() {
        if let Some(choice) = b.events(&span.events, at)? {
            answer = choice;
        } else {
            return Err(LineProblem::new(
                attr_at("gen_ai.input.messages"),
                "missing, and no gen_ai.output.messages: the span was recorded without its \
             content (instrumentations capture it when asked, e.g. \
             OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)",
            ));
        }
    }
    if answer.finish_reason.is_none() {
        answer.finish_reason = attrs
            .get("gen_ai.response.finish_reasons")
            .and_then(|v| v.as_array().and_then(|a| a.first()).or(Some(v)))
            .and_then(Value::as_str)
            .map(finish_reason);
    }
    failure(&span, &attrs, output.is_none(), &mut answer);
    answer.timing = timing(start, end, &attrs, at)?;
    answer.usage = usage(&attrs, at)?;
    b.push(answer, attr_at("gen_ai.output.messages"));
    let model = text("gen_ai.response.model").or(text("gen_ai.request.model"));
    let provider = text("gen_ai.provider.name").or(text("gen_ai.system"));
    let named = |m: Option<String>| m.filter(|m| !m.trim().is_empty());
    Ok(Some(Generation {
        group,
        start_ms: start.map(|n| n as f64 / 1e6),
        normalised: Normalised {
            shape: Shape::Otel,
            line: ConversationLine {
                provider: named(provider),
                model: named(model),
                messages: b.messages,
                ..ConversationLine::default()
            },
            paths: MessagePaths::Named(Arc::new(NamedPaths {
                list: "gen_ai.input.messages",
                messages: b.names,
                renamed: &[("outcome", "status")],
            })),
            dropped: b.dropped,
        },
    }))
}

/// A span with status ERROR and no output: the failed turn.
fn failure(span: &Span, attrs: &HashMap<&str, Value>, no_output: bool, answer: &mut MessageLine) {
    let error = span.status.as_ref().is_some_and(|s| {
        matches!(&s.code, Some(Value::Number(n)) if n.as_u64() == Some(2))
            || matches!(&s.code, Some(Value::String(c)) if c == "STATUS_CODE_ERROR")
    });
    if !error || !no_output {
        return;
    }
    let message = span
        .status
        .as_ref()
        .and_then(|s| s.message.clone())
        .unwrap_or_else(|| "ERROR".into());
    let kind = attrs.get("error.type").cloned().unwrap_or(Value::Null);
    if let Some((outcome, error)) =
        logged_error(&json!({"error": {"message": message, "type": kind}}))
    {
        answer.outcome = Some(outcome.as_str().to_string());
        answer.error = Some(error);
    }
}

/// E2E from the span's times; TTFT from `gen_ai.response.time_to_first_chunk` (seconds).
fn timing(
    start: Option<u64>,
    end: Option<u64>,
    attrs: &HashMap<&str, Value>,
    at: &str,
) -> Result<Option<TimingLine>, LineProblem> {
    let e2e_ms = match (start, end) {
        (Some(s), Some(e)) if e < s => {
            return Err(LineProblem::new(
                format!("{at}.endTimeUnixNano"),
                "before startTimeUnixNano; a call cannot end before it starts",
            ));
        }
        (Some(s), Some(e)) => Some(((e - s) as f64 / 1000.0).round() / 1000.0),
        _ => None,
    };
    let key = "gen_ai.response.time_to_first_chunk";
    let ttft_ms = match attrs.get(key) {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64() {
            Some(secs) if secs >= 0.0 => Some((secs * 1e6).round() / 1000.0),
            _ => {
                return Err(LineProblem::new(
                    format!("{at}.attributes[{key}]"),
                    format!("{v} is not a duration; expected seconds (a number, not negative)"),
                ));
            }
        },
    };
    let t = TimingLine {
        ttft_ms,
        ttfa_ms: None,
        e2e_ms,
    };
    Ok(Some(t).filter(|t| !t.is_empty()))
}

fn usage(attrs: &HashMap<&str, Value>, at: &str) -> Result<Option<UsageLine>, LineProblem> {
    let count = |keys: &[&str]| -> Result<Option<i64>, LineProblem> {
        for key in keys {
            match attrs.get(key) {
                None | Some(Value::Null) => {}
                Some(v) => {
                    return v.as_i64().map(Some).ok_or_else(|| {
                        LineProblem::new(
                            format!("{at}.attributes[{key}]"),
                            format!("wrong type: {v}, expected a whole number"),
                        )
                    });
                }
            }
        }
        Ok(None)
    };
    let usage = UsageLine {
        prompt_tokens: count(&["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"])?,
        completion_tokens: count(&[
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
        ])?,
        cached_tokens: count(&["gen_ai.usage.cache_read.input_tokens"])?,
        reasoning_tokens: count(&["gen_ai.usage.reasoning.output_tokens"])?,
    };
    check_usage(&usage, &|field| format!("{at}.attributes[gen_ai.{field}]"))?;
    Ok(Some(usage).filter(|u| !u.is_empty()))
}

/// A provider's finish reason in turnbench's words (`tool_call` → `tool_calls`, Anthropic's
/// `end_turn` → `stop`, `max_tokens` → `length`); others as given.
fn finish_reason(r: &str) -> String {
    match r {
        "end_turn" | "stop_sequence" | "STOP" => "stop",
        "max_tokens" | "MAX_TOKENS" => "length",
        "tool_call" | "tool_use" => "tool_calls",
        other => other,
    }
    .to_string()
}

/// An attribute holding JSON: its text parsed, or the structured value as it is.
fn json_of(v: &Value, at: &str) -> Result<Value, LineProblem> {
    match v {
        Value::String(s) => {
            serde_json::from_str(s).map_err(|e| LineProblem::new(at, format!("not JSON: {e}")))
        }
        other => Ok(other.clone()),
    }
}

fn list(v: &Value, at: &str) -> Result<Vec<Value>, LineProblem> {
    match json_of(v, at)? {
        Value::Array(a) => Ok(a),
        _ => Err(LineProblem::new(
            at,
            "expected an array of messages ({\"role\", \"parts\"})",
        )),
    }
}

fn no_answer() -> MessageLine {
    let mut m = MessageLine::text(Role::Assistant, "");
    m.content = None;
    m
}

/// Messages read from parts, each with its path.
#[derive(Default)]
struct Parts {
    lossy: bool,
    messages: Vec<MessageLine>,
    names: Vec<String>,
    dropped: Dropped,
}

impl Parts {
    fn push(&mut self, m: MessageLine, name: String) {
        self.messages.push(m);
        self.names.push(name);
    }

    /// An input message: a tool message per `tool_call_response` part, else one message.
    fn input_message(&mut self, m: &Value, at: &str) -> Result<(), LineProblem> {
        let (role, parts) = self.role_and_parts(m, at)?;
        if role == "tool" {
            for (k, part) in parts.iter().enumerate() {
                let at = format!("{at}.parts[{k}]");
                match part.get("type").and_then(Value::as_str) {
                    Some("tool_call_response") => {
                        let response = match part.get("response") {
                            Some(Value::String(s)) => s.clone(),
                            Some(other) => other.to_string(),
                            None => String::new(),
                        };
                        let mut t = MessageLine::text(Role::Tool, response);
                        t.tool_call_id = part.get("id").and_then(Value::as_str).map(String::from);
                        self.push(t, at);
                    }
                    other => self.unknown_part(other, &at)?,
                }
            }
            return Ok(());
        }
        let message = self.message(&role, &parts, at, &format!("{at}.parts"))?;
        self.push(message, at.to_string());
        Ok(())
    }

    /// The answer: the first output message (another choice is not stored).
    fn output(&mut self, v: &Value, at: &str) -> Result<MessageLine, LineProblem> {
        let all = list(v, at)?;
        let Some(first) = all.first() else {
            return Ok(no_answer());
        };
        for k in 1..all.len() {
            self.dropped.drop_or_refuse(
                self.lossy,
                format!("{at}[{k}]"),
                "choices",
                "another choice",
            )?;
        }
        let at = format!("{at}[0]");
        let (role, parts) = self.role_and_parts(first, &at)?;
        if role != "assistant" {
            return Err(LineProblem::new(
                format!("{at}.role"),
                format!("{role:?}; the output is the model's answer, \"assistant\""),
            ));
        }
        let mut m = self.message(&role, &parts, &at, &format!("{at}.parts"))?;
        m.finish_reason = first
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(finish_reason);
        Ok(m)
    }

    fn role_and_parts(&mut self, m: &Value, at: &str) -> Result<(String, Vec<Value>), LineProblem> {
        let Some(o) = m.as_object() else {
            return Err(LineProblem::new(at, "wrong type: expected an object"));
        };
        for (key, value) in o {
            let known = ["role", "parts", "name", "finish_reason"].contains(&key.as_str());
            if !known && !value.is_null() {
                self.dropped.drop_or_refuse(
                    self.lossy,
                    format!("{at}.{key}"),
                    key,
                    &format!("a {key:?} field"),
                )?;
            }
        }
        let role = match o.get("role").and_then(Value::as_str) {
            Some(r) => r.to_string(),
            None => return Err(LineProblem::new(format!("{at}.role"), "missing")),
        };
        let parts = match o.get("parts") {
            Some(Value::Array(p)) => p.clone(),
            None | Some(Value::Null) => Vec::new(),
            Some(_) => {
                return Err(LineProblem::new(
                    format!("{at}.parts"),
                    "wrong type: expected an array of parts",
                ));
            }
        };
        Ok((role, parts))
    }

    /// One message of `role` (at `at`) from its parts (at `parts_at`): text, reasoning and
    /// tool calls.
    fn message(
        &mut self,
        role: &str,
        parts: &[Value],
        at: &str,
        parts_at: &str,
    ) -> Result<MessageLine, LineProblem> {
        let role = match role {
            "system" | "developer" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            other => {
                return Err(LineProblem::new(
                    format!("{at}.role"),
                    format!("unknown role {other:?}; expected system, user, assistant or tool"),
                ));
            }
        };
        let mut m = no_answer();
        m.role = role;
        let join = |to: &mut Option<String>, t: &str| match to {
            Some(s) => {
                s.push('\n');
                s.push_str(t);
            }
            None => *to = Some(t.to_string()),
        };
        for (k, part) in parts.iter().enumerate() {
            let at = format!("{parts_at}[{k}]");
            let content = part.get("content").and_then(Value::as_str);
            match part.get("type").and_then(Value::as_str) {
                Some("text") => join(&mut m.content, content.unwrap_or_default()),
                Some("reasoning") if role == Role::Assistant => {
                    join(&mut m.reasoning, content.unwrap_or_default());
                }
                Some("tool_call") if role == Role::Assistant => {
                    let Some(name) = part.get("name").and_then(Value::as_str) else {
                        return Err(LineProblem::new(format!("{at}.name"), "missing"));
                    };
                    let arguments = match part.get("arguments") {
                        None | Some(Value::Null) => String::new(),
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                    };
                    let id = part.get("id").and_then(Value::as_str).map(String::from);
                    m.tool_calls
                        .get_or_insert_with(Vec::new)
                        .push(ToolCallLine::function(id, name, arguments));
                }
                other => self.unknown_part(other, &at)?,
            }
        }
        if role != Role::Assistant && m.content.is_none() {
            m.content = Some(String::new());
        }
        Ok(m)
    }

    /// The older event form: a message per `gen_ai.{system,user,assistant,tool}.message`
    /// event (`content`, `tool_calls`, `id` attributes) and the answer from `gen_ai.choice`
    /// (`message`, `finish_reason`); or the oldest, `gen_ai.content.prompt` /
    /// `gen_ai.content.completion` events holding `gen_ai.prompt` / `gen_ai.completion`
    /// (JSON `[{role, content}]`). The answer, or `None` when the span has no such events.
    fn events(
        &mut self,
        events: &[Event],
        span_at: &str,
    ) -> Result<Option<MessageLine>, LineProblem> {
        let mut answer = None;
        for (e, event) in events.iter().enumerate() {
            let at = format!("{span_at}.events[{e}]");
            let attrs: Map<String, Value> = event
                .attributes
                .iter()
                .map(|kv| {
                    (
                        kv.key.clone(),
                        kv.value.as_ref().map_or(Value::Null, any_value),
                    )
                })
                .collect();
            let name = event.name.as_deref().unwrap_or_default();
            let role = match name {
                "gen_ai.system.message" => "system",
                "gen_ai.user.message" => "user",
                "gen_ai.assistant.message" => "assistant",
                "gen_ai.tool.message" => "tool",
                "gen_ai.choice" => {
                    let message = match attrs.get("message") {
                        Some(m) => json_of(m, &format!("{at}.attributes[message]"))?,
                        None => Value::Object(attrs.clone()),
                    };
                    let mut m = event_message("assistant", &message, &at)?;
                    m.finish_reason = attrs
                        .get("finish_reason")
                        .and_then(Value::as_str)
                        .map(finish_reason);
                    answer = Some(m);
                    continue;
                }
                "gen_ai.content.prompt" | "gen_ai.content.completion" => {
                    let key = if name.ends_with("prompt") {
                        "gen_ai.prompt"
                    } else {
                        "gen_ai.completion"
                    };
                    let key_at = format!("{at}.attributes[{key}]");
                    let list = attrs
                        .get(key)
                        .map_or(Ok(Vec::new()), |v| list(v, &key_at))?;
                    for (i, m) in list.iter().enumerate() {
                        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
                        let read = event_message(role, m, &format!("{key_at}[{i}]"))?;
                        if key == "gen_ai.completion" {
                            answer.get_or_insert(read);
                        } else {
                            self.push(read, format!("{key_at}[{i}]"));
                        }
                    }
                    continue;
                }
                _ => continue,
            };
            let m = event_message(role, &Value::Object(attrs), &at)?;
            self.push(m, at);
        }
        Ok(answer.or_else(|| (!self.messages.is_empty()).then(no_answer)))
    }

    fn unknown_part(&mut self, kind: Option<&str>, at: &str) -> Result<(), LineProblem> {
        let kind = kind.unwrap_or("untyped part");
        self.dropped.drop_or_refuse(
            self.lossy,
            format!("{at}.type"),
            kind,
            &format!("a {kind:?} part"),
        )
    }
}

/// A message of the event form: `content` (a string), OpenAI-shaped `tool_calls` (JSON
/// text or the structured value), and a tool message's `id`.
fn event_message(role: &str, m: &Value, at: &str) -> Result<MessageLine, LineProblem> {
    let role = match role {
        "system" | "developer" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => {
            return Err(LineProblem::new(
                format!("{at}.role"),
                format!("unknown role {other:?}; expected system, user, assistant or tool"),
            ));
        }
    };
    let mut out = no_answer();
    out.role = role;
    out.content = match m.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    if role != Role::Assistant && out.content.is_none() {
        out.content = Some(String::new());
    }
    if let Some(calls) = m.get("tool_calls").filter(|c| !c.is_null()) {
        let at = format!("{at}.tool_calls");
        let calls = json_of(calls, &at)?;
        let calls: Vec<ToolCallLine> = serde_json::from_value(calls)
            .map_err(|e| LineProblem::new(&at, format!("not OpenAI tool calls: {e}")))?;
        out.tool_calls = Some(calls).filter(|c| !c.is_empty());
    }
    if role == Role::Tool {
        out.tool_call_id = m.get("id").and_then(Value::as_str).map(String::from);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(key: &str, value: Value) -> Value {
        json!({"key": key, "value": value})
    }

    fn batch(spans: Vec<Value>) -> Vec<u8> {
        json!({"resourceSpans": [{"resource": {"attributes": []},
            "scopeSpans": [{"scope": {"name": "x"}, "spans": spans}]}]})
        .to_string()
        .into_bytes()
    }

    #[test]
    fn a_chat_span_is_a_call_with_parts_timings_and_usage() {
        let input = r#"[{"role":"user","parts":[{"type":"text","content":"Weather?"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"weather","arguments":{"city":"Oslo"}}]},{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"rain"}]}]"#;
        let output = r#"[{"role":"assistant","parts":[{"type":"reasoning","content":"It rains."},{"type":"text","content":"Take an umbrella."}],"finish_reason":"stop"}]"#;
        let span = json!({"traceId": "t", "spanId": "s", "name": "chat m",
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001250000000",
            "attributes": [attr("gen_ai.operation.name", json!({"stringValue": "chat"})),
                attr("gen_ai.provider.name", json!({"stringValue": "openai"})),
                attr("gen_ai.request.model", json!({"stringValue": "gpt-4o"})),
                attr("gen_ai.conversation.id", json!({"stringValue": "conv-1"})),
                attr("gen_ai.input.messages", json!({"stringValue": input})),
                attr("gen_ai.output.messages", json!({"stringValue": output})),
                attr("gen_ai.usage.input_tokens", json!({"intValue": "50"})),
                attr("gen_ai.usage.output_tokens", json!({"intValue": 7})),
                attr("gen_ai.response.time_to_first_chunk", json!({"doubleValue": 0.3}))]});
        let tool = json!({"traceId": "t", "attributes": [attr("gen_ai.operation.name", json!({"stringValue": "execute_tool"}))]});
        let mut pieces = read(&batch(vec![span, tool]), false).unwrap();
        assert_eq!(pieces.len(), 1);
        let g = pieces.remove(0).unwrap();
        assert_eq!(g.group, "conv-1");
        let m = &g.normalised.line.messages;
        assert_eq!(m.len(), 4);
        assert_eq!(
            m[1].tool_calls.as_ref().unwrap()[0].function.arguments,
            r#"{"city":"Oslo"}"#
        );
        assert_eq!(
            (m[2].role, m[2].tool_call_id.as_deref()),
            (Role::Tool, Some("c1"))
        );
        assert_eq!(m[3].reasoning.as_deref(), Some("It rains."));
        let t = m[3].timing.unwrap();
        assert_eq!((t.ttft_ms, t.e2e_ms), (Some(300.0), Some(1250.0)));
        let u = m[3].usage.unwrap();
        assert_eq!((u.prompt_tokens, u.completion_tokens), (Some(50), Some(7)));
        assert_eq!(g.normalised.line.provider.as_deref(), Some("openai"));
        let image =
            r#"[{"role":"user","parts":[{"type":"blob","modality":"image","content":"iVBO"}]}]"#;
        let span = json!({"traceId": "t", "attributes": [attr("gen_ai.operation.name", json!({"stringValue": "chat"})),
            attr("gen_ai.input.messages", json!({"stringValue": image}))]});
        let p = read(&batch(vec![span]), false)
            .unwrap()
            .remove(0)
            .unwrap_err();
        assert_eq!(
            p.field,
            "resourceSpans[0].scopeSpans[0].spans[0].attributes[gen_ai.input.messages][0].parts[0].type"
        );
    }
}
