//! Reading one chat completion, streamed or whole, into answer, reasoning, usage and timings.
//!
//! Content arrival times are kept with their byte positions, and the split between
//! reasoning and answer is made when the stream ends: a DeepSeek-R1-style `</think>` can
//! arrive long after the text it turns into reasoning, so TTFA can only be known then.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::sse::SseEvent;
use super::surrogates;
use super::{ToolCall, Usage};
use crate::outcome::TurnOutcome;

/// What a response said, independent of transport.
#[derive(Debug, Default)]
pub struct AnswerAccumulator {
    /// Every `content` delta, concatenated; may hold `<think>` tags.
    raw: String,
    /// (byte end in `raw`, ms since request start) per content delta.
    marks: Vec<(usize, f64)>,
    reasoning_field: String,
    /// Tool calls as their deltas arrived, in order of first appearance.
    pub tool_calls: Vec<ToolCall>,
    pub ttft_ms: Option<f64>,
    pub last_event_ms: Option<f64>,
    pub done_ms: Option<f64>,
    pub finish_reason: Option<String>,
    pub usage: Usage,
    pub response_id: Option<String>,
    /// A fault found in the stream itself: class and detail.
    pub fault: Option<(TurnOutcome, String)>,
    /// For a `context_overflow` fault: the sizes the server stated.
    pub context: Option<super::ContextSizes>,
    /// Top-level string fields to keep from the response (e.g. the `provider` a gateway
    /// names), each with the first value seen.
    pub fields: Vec<(String, Option<String>)>,
    /// The high half of a character the previous chunk's text was cut in (UTF-16 units,
    /// by a JavaScript server), waiting for the next chunk's low half (`surrogates.rs`).
    surrogate: Option<u16>,
}

/// Answer and reasoning after `<think>` handling.
#[derive(Debug, PartialEq)]
pub struct SplitAnswer {
    pub answer: String,
    pub reasoning: Option<String>,
    pub ttfa_ms: Option<f64>,
}

impl AnswerAccumulator {
    /// An accumulator that also keeps these top-level string fields of the response.
    pub fn capturing(fields: &[String]) -> Self {
        AnswerAccumulator {
            fields: fields.iter().map(|f| (f.clone(), None)).collect(),
            ..AnswerAccumulator::default()
        }
    }

    /// Fills wanted fields not seen yet from one chunk or body; the text is parsed again
    /// only when it names a wanted field, and only until every one is found.
    fn capture_fields(&mut self, data: &str) {
        if self.fields.iter().all(|(_, v)| v.is_some()) {
            return;
        }
        if !self
            .fields
            .iter()
            .any(|(k, v)| v.is_none() && data.contains(&format!("\"{k}\"")))
        {
            return;
        }
        let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(data) else {
            return;
        };
        for (k, v) in &mut self.fields {
            if v.is_none()
                && let Some(found) = obj.get(k.as_str()).and_then(Value::as_str)
            {
                *v = Some(found.to_string());
            }
        }
    }

    /// One SSE event that arrived at `at_ms`. Returns false when reading should stop: a
    /// `[DONE]`, or an error (llama.cpp's `error:` field, an `event: error`, an error object).
    pub fn on_event(&mut self, event: SseEvent, at_ms: f64) -> bool {
        match event {
            SseEvent::ErrorField(v) => {
                self.on_error_field(&v);
                false
            }
            // An `event: error` fails the turn whatever its data holds (even nothing).
            SseEvent::Data { event, data } if event.as_deref() == Some("error") => {
                self.last_event_ms = Some(at_ms);
                self.on_error_field(&data);
                false
            }
            SseEvent::Data { data, .. } => self.on_data(&data, at_ms),
        }
    }

    /// One SSE `data` payload that arrived at `at_ms`. Returns false when reading should stop.
    pub fn on_data(&mut self, data: &str, at_ms: f64) -> bool {
        self.last_event_ms = Some(at_ms);
        if data.trim() == "[DONE]" {
            self.done_ms = Some(at_ms);
            return false;
        }
        // A cut-off half character waits one chunk, no longer.
        let carried = self.surrogate.take();
        self.capture_fields(data);
        // Fast path: the usual chunk shape, borrowed, without building a JSON tree. Anything
        // else (error objects, content as parts, odd types) takes the general path.
        match serde_json::from_str::<ChunkDoc>(data) {
            Ok(doc) if doc.error.is_none() && doc.object.as_deref() != Some("error") => {
                self.apply_chunk(doc, at_ms);
                true
            }
            Ok(_) => self.on_value(data, at_ms),
            // Lone surrogate escapes (a character cut by UTF-16 unit) fail to parse: mended
            // first, and only then, so well-formed chunks pay nothing.
            Err(_) => match surrogates::mend(data, carried, &mut self.surrogate) {
                Some(mended) => {
                    self.capture_fields(&mended);
                    self.on_value(&mended, at_ms)
                }
                None => self.on_value(data, at_ms),
            },
        }
    }

    fn apply_chunk(&mut self, doc: ChunkDoc, at_ms: f64) {
        if self.response_id.is_none()
            && let Some(id) = doc.id
        {
            self.response_id = Some(id.into_owned());
        }
        if let Some(usage) = doc.usage.filter(|u| u.is_object()) {
            self.usage = read_usage(&usage);
        }
        if let Some(choice) = doc.choices.into_iter().next() {
            if let Some(delta) = choice.delta {
                for text in [delta.reasoning_content, delta.reasoning]
                    .into_iter()
                    .flatten()
                {
                    if !text.is_empty() {
                        self.reasoning_field.push_str(&text);
                        self.ttft_ms.get_or_insert(at_ms);
                    }
                }
                if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                    self.raw.push_str(&text);
                    self.marks.push((self.raw.len(), at_ms));
                    self.ttft_ms.get_or_insert(at_ms);
                }
                for call in delta.tool_calls.into_iter().flatten() {
                    let (name, arguments) = match call.function {
                        Some(f) => (f.name, f.arguments),
                        None => (None, None),
                    };
                    self.on_tool_delta(
                        call.index,
                        call.id.as_deref(),
                        name.as_deref(),
                        arguments.as_deref(),
                        at_ms,
                    );
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason.into_owned());
            }
        }
    }

    fn on_value(&mut self, data: &str, at_ms: f64) -> bool {
        let value: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => {
                self.fault = Some((
                    TurnOutcome::Malformed,
                    format!("unparseable chunk ({e}): {}", clip(data)),
                ));
                return false;
            }
        };
        if let Some(fault) = error_object(&value) {
            self.set_fault(fault, &value);
            return false;
        }
        self.read_common(&value);
        if let Some(choice) = value.pointer("/choices/0") {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            self.on_text(delta, at_ms);
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_string());
            }
        }
        true
    }

    /// A non-streamed body.
    pub fn on_body(&mut self, body: &str, at_ms: f64) {
        self.capture_fields(body);
        self.last_event_ms = Some(at_ms);
        self.done_ms = Some(at_ms);
        let value: Value = match serde_json::from_str(body) {
            Ok(v) => v,
            Err(e) => {
                self.fault = Some((
                    TurnOutcome::Malformed,
                    format!("unparseable body ({e}): {}", clip(body)),
                ));
                return;
            }
        };
        if let Some(fault) = error_object(&value) {
            self.set_fault(fault, &value);
            return;
        }
        self.read_common(&value);
        match value.pointer("/choices/0") {
            Some(choice) => {
                self.on_text(choice.get("message").unwrap_or(&Value::Null), at_ms);
                // A whole body has no first token: TTFT is not observable.
                self.ttft_ms = None;
                if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                    self.finish_reason = Some(reason.to_string());
                }
            }
            None => {
                self.fault = Some((
                    TurnOutcome::Malformed,
                    format!("body has no choices: {}", clip(body)),
                ))
            }
        }
    }

    /// A llama.cpp `error:` SSE field, or the data of an `event: error`. Whatever it holds
    /// (an object, a string, `null`, nothing) the turn fails: the server said so.
    pub fn on_error_field(&mut self, value: &str) {
        let parsed: Value =
            serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()));
        let fault = match &parsed {
            Value::Null => (
                TurnOutcome::Http5xx,
                "error event after HTTP 200 with no detail".to_string(),
            ),
            // Already shaped as an error object (`{"error": …}`), or its inside.
            Value::Object(_) => error_object(&parsed)
                .or_else(|| error_object(&serde_json::json!({ "error": parsed.clone() })))
                .unwrap_or_else(|| {
                    (
                        TurnOutcome::Http5xx,
                        format!("error event after HTTP 200: {}", clip(value)),
                    )
                }),
            other => classify_error(other, "error event after HTTP 200"),
        };
        self.set_fault(fault, &parsed);
    }

    /// Keeps a fault, and for a context overflow the sizes the error stated.
    fn set_fault(&mut self, fault: (TurnOutcome, String), error: &Value) {
        if fault.0 == TurnOutcome::ContextOverflow {
            self.context = super::overflow::recognise_value(error);
        }
        self.fault = Some(fault);
    }

    fn read_common(&mut self, value: &Value) {
        if self.response_id.is_none()
            && let Some(id) = value.get("id").and_then(Value::as_str)
        {
            self.response_id = Some(id.to_string());
        }
        if let Some(usage) = value.get("usage").filter(|u| u.is_object()) {
            self.usage = read_usage(usage);
        }
    }

    /// One tool-call delta (OpenAI format): the first for an index carries its id and name,
    /// later ones carry pieces of the arguments. A delta without an index opens a new call
    /// when it has an id, else continues the last one. The first delta that names a tool
    /// or carries arguments is output, so it starts TTFT (never TTFA: it is not text).
    fn on_tool_delta(
        &mut self,
        index: Option<u32>,
        id: Option<&str>,
        name: Option<&str>,
        arguments: Option<&str>,
        at_ms: f64,
    ) {
        let found = match index {
            Some(i) => self.tool_calls.iter().position(|c| c.index == i),
            None if id.is_some() => None,
            None => self.tool_calls.len().checked_sub(1),
        };
        let slot = match found {
            Some(k) => k,
            None => {
                let index = index.unwrap_or(self.tool_calls.len() as u32);
                self.tool_calls.push(ToolCall {
                    index,
                    ..ToolCall::default()
                });
                self.tool_calls.len() - 1
            }
        };
        let call = &mut self.tool_calls[slot];
        if let Some(id) = id.filter(|i| !i.is_empty()) {
            call.id.get_or_insert_with(|| id.to_string());
        }
        let mut output = false;
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            // Sent whole by most servers; appended in case one streams it in pieces.
            call.name.push_str(name);
            output = true;
        }
        if let Some(arguments) = arguments.filter(|a| !a.is_empty()) {
            call.arguments.push_str(arguments);
            output = true;
        }
        if output {
            self.ttft_ms.get_or_insert(at_ms);
        }
    }

    /// Tool calls in the general path: a delta's or a whole message's `tool_calls`.
    fn on_tool_values(&mut self, holder: &Value, at_ms: f64) {
        let Some(calls) = holder.get("tool_calls").and_then(Value::as_array) else {
            return;
        };
        for call in calls {
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .and_then(|i| u32::try_from(i).ok());
            let function = call.get("function");
            fn text<'v>(v: Option<&'v Value>, k: &str) -> Option<&'v str> {
                v.and_then(|v| v.get(k)).and_then(Value::as_str)
            }
            // A whole message may give arguments as an object: kept as its JSON text.
            let object_args = function
                .and_then(|f| f.get("arguments"))
                .filter(|a| a.is_object())
                .map(Value::to_string);
            self.on_tool_delta(
                index,
                text(Some(call), "id"),
                text(function, "name"),
                object_args.as_deref().or(text(function, "arguments")),
                at_ms,
            );
        }
    }

    fn on_text(&mut self, delta: &Value, at_ms: f64) {
        self.on_tool_values(delta, at_ms);
        for field in ["reasoning_content", "reasoning"] {
            if let Some(text) = delta.get(field).and_then(Value::as_str)
                && !text.is_empty()
            {
                self.reasoning_field.push_str(text);
                self.ttft_ms.get_or_insert(at_ms);
            }
        }
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            self.raw.push_str(text);
            self.marks.push((self.raw.len(), at_ms));
            self.ttft_ms.get_or_insert(at_ms);
        }
    }

    /// Separates reasoning from the visible answer and finds the first visible answer time.
    pub fn split(&self) -> SplitAnswer {
        let (think, answer_start) = split_think(&self.raw);
        let visible_from = self.raw[answer_start..]
            .find(|c: char| !c.is_whitespace())
            .map(|i| answer_start + i);
        let ttfa_ms = visible_from.and_then(|pos| {
            self.marks
                .iter()
                .find(|(end, _)| *end > pos)
                .map(|(_, t)| *t)
        });
        let answer = match visible_from {
            Some(pos) if think.is_some() => self.raw[pos..].to_string(),
            Some(_) => self.raw.clone(),
            None => String::new(),
        };
        let mut reasoning = self.reasoning_field.clone();
        if let Some(t) = think {
            if !reasoning.is_empty() {
                reasoning.push('\n');
            }
            reasoning.push_str(t);
        }
        SplitAnswer {
            answer,
            reasoning: (!reasoning.is_empty()).then_some(reasoning),
            ttfa_ms,
        }
    }

    /// How much output has been read so far: answer bytes, reasoning bytes, tool-call
    /// bytes. Compared before and after an event, it says what the event carried.
    pub fn output_size(&self) -> (usize, usize, usize) {
        let tools = self
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.len())
            .sum();
        (self.raw.len(), self.reasoning_field.len(), tools)
    }

    /// What an event carried, from [`Self::output_size`] before and after it.
    pub fn kind_between(
        before: (usize, usize, usize),
        after: (usize, usize, usize),
    ) -> super::ChunkKind {
        use super::ChunkKind;
        if after.0 > before.0 {
            ChunkKind::Answer
        } else if after.1 > before.1 {
            ChunkKind::Reasoning
        } else if after.2 > before.2 {
            ChunkKind::Tool
        } else {
            ChunkKind::Other
        }
    }

    /// Whether the response said it was done: a finish reason, or `[DONE]`.
    pub fn saw_finish(&self) -> bool {
        self.finish_reason.is_some() || self.done_ms.is_some()
    }
}

/// The usual streamed chunk, borrowed where the text has no escapes.
#[derive(Deserialize)]
struct ChunkDoc<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    object: Option<Cow<'a, str>>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    #[serde(default, borrow)]
    choices: Vec<ChoiceDoc<'a>>,
    usage: Option<Value>,
}

#[derive(Deserialize)]
struct ChoiceDoc<'a> {
    #[serde(borrow)]
    delta: Option<DeltaDoc<'a>>,
    #[serde(borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct DeltaDoc<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tool_calls: Option<Vec<ToolDelta<'a>>>,
}

#[derive(Deserialize)]
struct ToolDelta<'a> {
    index: Option<u32>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
}

/// (reasoning inside think tags, byte where the answer starts).
///
/// Only a leading think block is reasoning: `<think>…</think>` at the start (after
/// whitespace), or, for DeepSeek-R1-style output that omits the opening tag, text before
/// a lone `</think>` that no `<think>` precedes and that is not quoted (inside backticks
/// or right after a quote mark). An answer that mentions or quotes the tag keeps its text.
fn split_think(raw: &str) -> (Option<&str>, usize) {
    const OPEN: &str = "<think>";
    const CLOSE: &str = "</think>";
    let lead = raw.len() - raw.trim_start().len();
    if raw[lead..].starts_with(OPEN) {
        let body = lead + OPEN.len();
        return match raw[body..].find(CLOSE) {
            Some(end) => (Some(raw[body..body + end].trim()), body + end + CLOSE.len()),
            // Still thinking when the stream ended: everything is reasoning.
            None => (Some(raw[body..].trim()), raw.len()),
        };
    }
    let Some(end) = raw.find(CLOSE) else {
        return (None, 0);
    };
    let before = &raw[..end];
    let quoted = before.matches('`').count() % 2 == 1
        || before.ends_with(['"', '\'', '`', '\u{201c}', '\u{2018}'])
        || before.contains(OPEN);
    if quoted {
        return (None, 0);
    }
    (Some(before.trim()), end + CLOSE.len())
}

/// An error object sent as a chunk or body: `{"error": …}` or `{"object": "error", …}`.
fn error_object(value: &Value) -> Option<(TurnOutcome, String)> {
    error_object_as(value, "error object after HTTP 200")
}

/// The error object a gateway log recorded as a call's response, classified as a body
/// is: the class of the failed turn and what went wrong. `None` when it holds no error.
pub fn logged_error(response: &Value) -> Option<(TurnOutcome, String)> {
    error_object_as(response, "the logged call failed")
}

fn error_object_as(value: &Value, what: &str) -> Option<(TurnOutcome, String)> {
    let err = match value.get("error") {
        Some(e) if !e.is_null() => e,
        _ if value.get("object").and_then(Value::as_str) == Some("error") => value,
        _ => return None,
    };
    Some(classify_error(err, what))
}

/// Classifies an error sent after HTTP 200 as the HTTP status path would: by a numeric
/// code or status first (`"code": 429`, `"code": "503"`), else by a string code or type
/// (`"rate_limit_exceeded"`, `"server_error"`), else as the server's fault (`http_5xx`).
fn classify_error(err: &Value, what: &str) -> (TurnOutcome, String) {
    let message = match err {
        Value::String(s) => clip(s),
        _ => err
            .get("message")
            .and_then(Value::as_str)
            .map(clip)
            .unwrap_or_else(|| clip(&err.to_string())),
    };
    // An error that says the request outgrew the context is that, whatever its code says
    // (llama.cpp sends "Context size has been exceeded." with code 500).
    if let Some(sizes) = super::overflow::recognise_value(err) {
        return (
            TurnOutcome::ContextOverflow,
            format!(
                "{what} (context_overflow): {message}{}",
                super::overflow::sizes_text(&sizes)
            ),
        );
    }
    let status = ["code", "status", "status_code"]
        .iter()
        .find_map(|k| {
            err.get(k).and_then(|c| {
                c.as_u64()
                    .or_else(|| c.as_str().and_then(|s| s.trim().parse().ok()))
            })
        })
        .filter(|c| (400..600).contains(c));
    let named = ["code", "type", "status"]
        .iter()
        .filter_map(|k| err.get(k).and_then(Value::as_str))
        .find_map(|name| status_of_error_name(name).map(|s| (s, name)));
    match (status, named) {
        (Some(c), _) => (
            TurnOutcome::from_status(c as u16),
            format!("{what} (code {c}): {message}"),
        ),
        (None, Some((s, name))) => (
            TurnOutcome::from_status(s),
            format!("{what} ({name}): {message}"),
        ),
        // Without a status or a known name, an in-stream error is the server's fault.
        (None, None) => (TurnOutcome::Http5xx, format!("{what}: {message}")),
    }
}

/// The HTTP status that usually comes with an error code or type name, as OpenAI,
/// Anthropic-style gateways, vLLM and others spell them; `None` for a name not known.
fn status_of_error_name(name: &str) -> Option<u16> {
    let n = name.trim().to_ascii_lowercase().replace([' ', '-'], "_");
    let has = |part: &str| n.contains(part);
    if has("rate_limit") || has("too_many_requests") || has("insufficient_quota") {
        Some(429)
    } else if has("overloaded") || has("unavailable") {
        Some(503)
    } else if has("server_error")
        || has("internal")
        || n == "api_error"
        || has("timeout")
        || has("bad_gateway")
    {
        Some(500)
    } else if [
        "invalid_request",
        "context_length",
        "authentication",
        "invalid_api_key",
        "permission",
        "not_found",
        "bad_request",
        "too_large",
        "unprocessable",
    ]
    .iter()
    .any(|p| has(p))
    {
        Some(400)
    } else {
        None
    }
}

fn read_usage(u: &Value) -> Usage {
    let int = |p: &str| u.pointer(p).and_then(Value::as_i64);
    Usage {
        prompt_tokens: int("/prompt_tokens"),
        completion_tokens: int("/completion_tokens"),
        // OpenAI shape first; DeepSeek reports prompt_cache_hit_tokens instead; Moonshot
        // and some gateways put cached_tokens at the top level of usage.
        cached_tokens: int("/prompt_tokens_details/cached_tokens")
            .or_else(|| int("/prompt_cache_hit_tokens"))
            .or_else(|| int("/cached_tokens")),
        reasoning_tokens: int("/completion_tokens_details/reasoning_tokens"),
    }
}

/// At most 300 characters of provider text, for error details.
pub fn clip(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(chunks: &[(&str, f64)]) -> AnswerAccumulator {
        let mut acc = AnswerAccumulator::default();
        for (data, t) in chunks {
            if !acc.on_data(data, *t) {
                break;
            }
        }
        acc
    }

    #[test]
    fn role_only_chunk_does_not_start_ttft() {
        let acc = feed(&[
            (
                r#"{"id":"r1","choices":[{"delta":{"role":"assistant","content":null}}]}"#,
                5.0,
            ),
            (r#"{"choices":[{"delta":{"content":""}}]}"#, 6.0),
            (r#"{"choices":[{"delta":{"content":"Hi"}}]}"#, 9.0),
            (r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#, 10.0),
            (
                r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":8}}}"#,
                11.0,
            ),
            ("[DONE]", 12.0),
        ]);
        assert_eq!(acc.ttft_ms, Some(9.0));
        assert_eq!(acc.split().ttfa_ms, Some(9.0));
        assert_eq!(acc.done_ms, Some(12.0));
        assert_eq!(acc.response_id.as_deref(), Some("r1"));
        assert_eq!(acc.usage.cached_tokens, Some(8));
        assert_eq!(acc.usage.reasoning_tokens, None);
        assert_eq!(acc.finish_reason.as_deref(), Some("stop"));
    }

    #[test]
    fn a_character_cut_between_chunks_by_utf16_unit_is_joined() {
        // @dwmkerr/mock-llm (JavaScript) slices answers by UTF-16 unit: an emoji arrives as
        // a lone high surrogate escape ending one chunk and a lone low one starting the next.
        let acc = feed(&[
            (
                r#"{"choices":[{"index":0,"delta":{"content":"ok \ud83d","role":"assistant"},"finish_reason":null}]}"#,
                1.0,
            ),
            (
                r#"{"id":"x","choices":[{"index":0,"delta":{"content":"\ude00 done"},"finish_reason":"stop"}]}"#,
                2.0,
            ),
            ("[DONE]", 3.0),
        ]);
        assert_eq!(acc.fault, None);
        assert_eq!(acc.split().answer, "ok 😀 done");
        assert_eq!(acc.finish_reason.as_deref(), Some("stop"));
        assert_eq!((acc.ttft_ms, acc.done_ms), (Some(1.0), Some(3.0)));
        assert_eq!(acc.response_id.as_deref(), Some("x"));
        // A half that the next chunk does not complete is dropped; a stray one is U+FFFD.
        let acc = feed(&[
            (r#"{"choices":[{"delta":{"content":"a\ud83d"}}]}"#, 1.0),
            (r#"{"choices":[{"delta":{"content":"b\ude00"}}]}"#, 2.0),
        ]);
        assert_eq!(acc.fault, None);
        assert_eq!(acc.split().answer, "ab\u{FFFD}");
    }

    #[test]
    fn reasoning_fields_start_ttft_but_not_ttfa() {
        let acc = feed(&[
            (
                r#"{"choices":[{"delta":{"reasoning_content":"let me"}}]}"#,
                3.0,
            ),
            (r#"{"choices":[{"delta":{"reasoning":" think"}}]}"#, 4.0),
            (r#"{"choices":[{"delta":{"content":"\n\n"}}]}"#, 5.0),
            (r#"{"choices":[{"delta":{"content":"Answer"}}]}"#, 7.0),
        ]);
        let s = acc.split();
        assert_eq!(acc.ttft_ms, Some(3.0));
        assert_eq!(s.ttfa_ms, Some(7.0));
        assert_eq!(s.reasoning.as_deref(), Some("let me think"));
        assert_eq!(s.answer, "\n\nAnswer");
    }

    #[test]
    fn inline_think_tags_split_and_time_the_answer() {
        let acc = feed(&[
            (r#"{"choices":[{"delta":{"content":"<thi"}}]}"#, 1.0),
            (r#"{"choices":[{"delta":{"content":"nk>plan</th"}}]}"#, 2.0),
            (r#"{"choices":[{"delta":{"content":"ink>\n"}}]}"#, 3.0),
            (r#"{"choices":[{"delta":{"content":"Done."}}]}"#, 4.0),
        ]);
        let s = acc.split();
        assert_eq!(acc.ttft_ms, Some(1.0));
        assert_eq!(s.ttfa_ms, Some(4.0));
        assert_eq!(s.answer, "Done.");
        assert_eq!(s.reasoning.as_deref(), Some("plan"));
    }

    #[test]
    fn lone_closing_think_makes_earlier_text_reasoning() {
        let acc = feed(&[
            (r#"{"choices":[{"delta":{"content":"hmm"}}]}"#, 1.0),
            (r#"{"choices":[{"delta":{"content":"</think>Yes"}}]}"#, 2.0),
        ]);
        let s = acc.split();
        assert_eq!(s.answer, "Yes");
        assert_eq!(s.reasoning.as_deref(), Some("hmm"));
        assert_eq!(s.ttfa_ms, Some(2.0));
    }

    #[test]
    fn unclosed_think_leaves_no_answer() {
        let acc = feed(&[(r#"{"choices":[{"delta":{"content":"<think>still"}}]}"#, 1.0)]);
        let s = acc.split();
        assert_eq!(s.answer, "");
        assert_eq!(s.ttfa_ms, None);
    }

    #[test]
    fn error_objects_after_200_are_faults() {
        let acc = feed(&[(r#"{"error":{"message":"overloaded","code":503}}"#, 1.0)]);
        assert_eq!(acc.fault.as_ref().unwrap().0, TurnOutcome::Http5xx);
        let acc = feed(&[(r#"{"object":"error","message":"bad","code":400}"#, 1.0)]);
        assert_eq!(acc.fault.as_ref().unwrap().0, TurnOutcome::Http4xx);
        let acc = feed(&[(r#"{"error":{"message":"slow down","code":"429"}}"#, 1.0)]);
        assert_eq!(acc.fault.as_ref().unwrap().0, TurnOutcome::RateLimited);
        let mut acc = AnswerAccumulator::default();
        acc.on_error_field(r#"{"code":500,"message":"boom"}"#);
        assert!(acc.fault.as_ref().unwrap().1.contains("boom"));
    }

    #[test]
    fn null_or_empty_error_events_fail_the_turn_without_a_panic() {
        for value in [
            "null",
            "",
            "  ",
            "\"boom\"",
            "42",
            "[1]",
            "{}",
            "{\"error\":null}",
        ] {
            let mut acc = AnswerAccumulator::default();
            acc.on_error_field(value);
            let (outcome, _) = acc.fault.as_ref().unwrap();
            assert_eq!(*outcome, TurnOutcome::Http5xx, "{value:?}");
        }
        // `event: error` with `data: null` reaches on_data first: no fault, no panic.
        let mut acc = AnswerAccumulator::default();
        assert!(acc.on_data("null", 1.0));
    }

    #[test]
    fn string_codes_and_types_classify_like_statuses() {
        let class = |body: &str| feed(&[(body, 1.0)]).fault.unwrap().0;
        let r = TurnOutcome::RateLimited;
        assert_eq!(
            class(r#"{"error":{"message":"x","code":"rate_limit_exceeded"}}"#),
            r
        );
        assert_eq!(
            class(r#"{"error":{"type":"rate_limit_error","code":"rate_limit_exceeded"}}"#),
            r
        );
        let c5 = TurnOutcome::Http5xx;
        assert_eq!(
            class(r#"{"error":{"message":"x","type":"server_error"}}"#),
            c5
        );
        assert_eq!(class(r#"{"error":{"type":"overloaded_error"}}"#), c5);
        let c4 = TurnOutcome::Http4xx;
        // A request that outgrew the context is its own class (`client::overflow`).
        assert_eq!(
            class(r#"{"error":{"code":"context_length_exceeded"}}"#),
            TurnOutcome::ContextOverflow
        );
        assert_eq!(class(r#"{"error":{"type":"invalid_request_error"}}"#), c4);
        // A numeric code wins over a name; an unknown name is the server's fault.
        assert_eq!(class(r#"{"error":{"type":"server_error","code":429}}"#), r);
        assert_eq!(class(r#"{"error":{"code":"weird_thing"}}"#), c5);
        let acc = feed(&[(
            r#"{"error":{"message":"slow","code":"rate_limit_exceeded"}}"#,
            1.0,
        )]);
        let detail = acc.fault.unwrap().1;
        assert!(
            detail.contains("rate_limit_exceeded") && detail.contains("slow"),
            "{detail}"
        );
    }

    #[test]
    fn top_level_cached_tokens_are_read() {
        let acc = feed(&[(
            r#"{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":5,"cached_tokens":64}}"#,
            1.0,
        )]);
        assert_eq!(acc.usage.cached_tokens, Some(64));
    }

    #[test]
    fn a_quoted_or_mentioned_close_tag_keeps_the_answer() {
        for text in [
            "Close the block with `</think>` before answering.",
            "Wrap it as <think>plan</think> and then answer.",
            "The tag \"</think>\" ends reasoning.",
            "```\n<think>x\n</think>\n```",
        ] {
            let chunk = serde_json::json!({"choices":[{"delta":{"content":text}}]}).to_string();
            let s = feed(&[(&chunk, 1.0)]).split();
            assert_eq!(s.answer, text);
            assert_eq!(s.reasoning, None, "{text}");
        }
        // A lone leading close (R1 without the opening tag) still marks reasoning.
        let acc = feed(&[(
            r#"{"choices":[{"delta":{"content":"plan\n</think>\n\nAnswer"}}]}"#,
            1.0,
        )]);
        assert_eq!(acc.split().answer, "Answer");
        assert_eq!(acc.split().reasoning.as_deref(), Some("plan"));
    }

    #[test]
    fn malformed_chunk_is_a_fault() {
        let acc = feed(&[(r#"{"choices":[{"delta":{"content":"a"}}"#, 1.0)]);
        assert_eq!(acc.fault.as_ref().unwrap().0, TurnOutcome::Malformed);
    }

    #[test]
    fn deepseek_cache_fields_are_read() {
        let acc = feed(&[(
            r#"{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":5,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}}"#,
            1.0,
        )]);
        assert_eq!(acc.usage.cached_tokens, Some(64));
    }

    #[test]
    fn whole_body_has_no_ttft() {
        let mut acc = AnswerAccumulator::default();
        acc.on_body(
            r#"{"choices":[{"message":{"role":"assistant","content":"ok","reasoning_content":"r"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#,
            50.0,
        );
        let s = acc.split();
        assert_eq!(s.answer, "ok");
        assert_eq!(acc.ttft_ms, None);
        assert_eq!(acc.done_ms, Some(50.0));
        assert_eq!(acc.usage.completion_tokens, Some(1));
    }

    #[test]
    fn streamed_tool_call_deltas_assemble_into_calls() {
        // Two calls in one answer, arguments split mid-token and interleaved, the second
        // call's arguments escaped, the way OpenAI and vLLM stream them.
        let acc = feed(&[
            (
                r#"{"choices":[{"delta":{"role":"assistant","content":null}}]}"#,
                1.0,
            ),
            (
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#,
                4.0,
            ),
            (
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}"#,
                5.0,
            ),
            (
                r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"search","arguments":"{\"pattern\":"}}]}}]}"#,
                6.0,
            ),
            (
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a.py\"}"}}]}}]}"#,
                7.0,
            ),
            (
                r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"x\\\"y\"}"}}]}}]}"#,
                8.0,
            ),
            (
                r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
                9.0,
            ),
            ("[DONE]", 10.0),
        ]);
        assert_eq!(acc.tool_calls.len(), 2);
        let (a, b) = (&acc.tool_calls[0], &acc.tool_calls[1]);
        assert_eq!(
            (a.index, a.id.as_deref(), a.name.as_str()),
            (0, Some("call_a"), "read_file")
        );
        assert_eq!(a.arguments, r#"{"path":"a.py"}"#);
        assert!(a.arguments_parse());
        assert_eq!(
            (b.index, b.id.as_deref(), b.name.as_str()),
            (1, Some("call_b"), "search")
        );
        assert_eq!(b.arguments, r#"{"pattern":"x\"y"}"#);
        assert!(b.arguments_parse());
        // The first call's name is the first output; no text, so no TTFA.
        assert_eq!(acc.ttft_ms, Some(4.0));
        assert_eq!(acc.split().ttfa_ms, None);
        assert_eq!(acc.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn broken_tool_arguments_are_kept_as_sent_and_do_not_parse() {
        let acc = feed(&[(
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"edit","arguments":"{\"path\": \"a"}}]}}]}"#,
            1.0,
        )]);
        assert_eq!(acc.tool_calls[0].arguments, r#"{"path": "a"#);
        assert!(!acc.tool_calls[0].arguments_parse());
        let array = ToolCall {
            arguments: "[1]".into(),
            ..ToolCall::default()
        };
        assert!(!array.arguments_parse(), "arguments are an object");
    }

    #[test]
    fn whole_body_tool_calls_are_read() {
        let mut acc = AnswerAccumulator::default();
        acc.on_body(
            r#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"x","type":"function","function":{"name":"ls","arguments":"{}"}},{"id":"y","type":"function","function":{"name":"cat","arguments":{"p":1}}}]},"finish_reason":"tool_calls"}]}"#,
            3.0,
        );
        let names: Vec<_> = acc
            .tool_calls
            .iter()
            .map(|c| (c.index, c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(names, [(0, "ls", "{}"), (1, "cat", r#"{"p":1}"#)]);
        assert_eq!(acc.ttft_ms, None);
    }

    #[test]
    fn wanted_top_level_fields_are_kept_from_the_first_chunk_naming_them() {
        let mut acc = AnswerAccumulator::capturing(&["provider".to_string()]);
        for (data, t) in [
            (r#"{"choices":[{"delta":{"content":"a"}}]}"#, 1.0),
            (
                r#"{"provider":"DeepInfra","choices":[{"delta":{"content":"b"}}]}"#,
                2.0,
            ),
            (
                r#"{"provider":"Other","choices":[{"delta":{"content":"c"}}]}"#,
                3.0,
            ),
        ] {
            acc.on_data(data, t);
        }
        assert_eq!(
            acc.fields,
            vec![("provider".to_string(), Some("DeepInfra".to_string()))]
        );
        assert_eq!(acc.split().answer, "abc");
        // A field named only inside the text is not the field.
        let mut acc = AnswerAccumulator::capturing(&["provider".to_string()]);
        acc.on_data(r#"{"choices":[{"delta":{"content":"\"provider\""}}]}"#, 1.0);
        assert_eq!(acc.fields[0].1, None);
    }
}
