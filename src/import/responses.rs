//! OpenAI Responses API logs: one call a record, `{"request": {"model", "instructions",
//! "input", "previous_response_id"}, "response": {"object": "response", "id", "output",
//! "usage", "status"}}` (or the request's fields at the top level beside `response`).
//!
//! A call is one turn: `instructions` is the system message, `input` items the messages
//! before it (a string is one user message), the `output` items its answer: `message`
//! text, `reasoning` summaries, `function_call`s. Input items that a model call made
//! (`reasoning`, an assistant `message`, `function_call`) are earlier turns, one per run of
//! such items; a `function_call_output` is a tool message.
//!
//! Calls chained by `previous_response_id` are one conversation: the reader holds this
//! shape's calls until the end of the file ([`Chains`]), then joins each chain from its
//! first call to every call no other call continues (a branch is a conversation of its
//! own), named by the last call's line.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::{Map, Value};

use super::openai_log::record_timing;
use super::shape::{
    Dropped, MessagePaths, NamedPaths, Normalised, Shape, check_usage, parse_record,
};
use crate::client::completion::logged_error;
use crate::exchange::{ConversationLine, MessageLine, Object, Role, ToolCallLine, UsageLine};
use crate::jsonl::LineProblem;

#[derive(Deserialize)]
struct Record {
    id: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    label: Option<String>,
    scenario: Option<String>,
    repeat: Option<u32>,
    outcome: Option<String>,
    instructions: Option<Value>,
    input: Option<Value>,
    previous_response_id: Option<String>,
    request: Option<Object<Request>>,
    response: Option<Value>,
}

#[derive(Deserialize)]
struct Request {
    model: Option<String>,
    instructions: Option<Value>,
    input: Option<Value>,
    previous_response_id: Option<String>,
}

/// One call read: the messages it adds (its input, then its answer) and its place in a chain.
#[derive(Debug)]
pub(super) struct Call {
    pub normalised: Normalised,
    /// `response.id`.
    pub id: Option<String>,
    /// `previous_response_id`: the call this one continues.
    pub previous: Option<String>,
}

/// Reads one call.
pub(super) fn read(text: &[u8], lossy: bool) -> Result<Call, LineProblem> {
    let r: Record = parse_record(text)?;
    let request = r.request.map(|o| o.0);
    let (at, q) = match request {
        Some(q) => ("request.", q),
        None => (
            "",
            Request {
                model: None,
                instructions: r.instructions,
                input: r.input,
                previous_response_id: r.previous_response_id,
            },
        ),
    };
    let Some(response) = &r.response else {
        return Err(LineProblem::new(
            "response",
            "missing; a Responses log needs the response whose output is the answer",
        ));
    };
    let mut b = Items {
        lossy,
        ..Items::default()
    };
    if let Some(instructions) = q.instructions.as_ref().and_then(Value::as_str)
        && !instructions.trim().is_empty()
    {
        b.push(
            MessageLine::text(Role::System, instructions),
            format!("{at}instructions"),
        );
    }
    match &q.input {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => b.push(
            MessageLine::text(Role::User, s.clone()),
            format!("{at}input"),
        ),
        Some(Value::Array(items)) => b.items(items, &format!("{at}input"))?,
        Some(_) => {
            return Err(LineProblem::new(
                format!("{at}input"),
                "wrong type: expected a string or an array of items",
            ));
        }
    }
    b.close();
    let mut answer = read_response(response, &mut b)?;
    answer.timing = record_timing(text)?;
    b.push(answer, "response".into());
    let id = response.get("id").and_then(Value::as_str).map(String::from);
    let model = response
        .get("model")
        .and_then(Value::as_str)
        .map(String::from)
        .filter(|m| !m.trim().is_empty())
        .or(q.model)
        .or(r.model);
    let line = ConversationLine {
        id: r.id,
        provider: r.provider,
        model,
        label: r.label,
        scenario: r.scenario,
        repeat: r.repeat,
        outcome: r.outcome,
        messages: b.messages,
        ..ConversationLine::default()
    };
    Ok(Call {
        normalised: Normalised {
            shape: Shape::Responses,
            line,
            paths: MessagePaths::Named(std::sync::Arc::new(NamedPaths {
                list: if at.is_empty() {
                    "input"
                } else {
                    "request.input"
                },
                messages: b.names,
                renamed: &[("finish_reason", "status"), ("outcome", "error")],
            })),
            dropped: b.dropped,
        },
        id,
        previous: q.previous_response_id,
    })
}

/// Items read into messages; a run of items one model call made is one assistant message.
#[derive(Default)]
struct Items {
    lossy: bool,
    messages: Vec<MessageLine>,
    names: Vec<String>,
    dropped: Dropped,
    /// The assistant message being built from a run of output items, and its path.
    open: Option<(MessageLine, String)>,
}

impl Items {
    fn push(&mut self, m: MessageLine, name: String) {
        self.close();
        self.messages.push(m);
        self.names.push(name);
    }

    /// Ends the run of output items.
    fn close(&mut self) {
        if let Some((m, name)) = self.open.take() {
            self.messages.push(m);
            self.names.push(name);
        }
    }

    fn assistant(&mut self, at: &str) -> &mut MessageLine {
        &mut self
            .open
            .get_or_insert_with(|| (no_answer(), at.to_string()))
            .0
    }

    fn items(&mut self, items: &[Value], at: &str) -> Result<(), LineProblem> {
        for (i, item) in items.iter().enumerate() {
            let at = format!("{at}[{i}]");
            let Some(item) = item.as_object() else {
                return Err(LineProblem::new(at, "wrong type: expected an object"));
            };
            self.item(item, &at)?;
        }
        Ok(())
    }

    fn item(&mut self, item: &Map<String, Value>, at: &str) -> Result<(), LineProblem> {
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        match kind {
            "message" => self.message(item, at),
            "reasoning" => {
                let summary: Vec<&str> = item
                    .get("summary")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s.get("text").and_then(Value::as_str))
                    .collect();
                if item.get("encrypted_content").is_some_and(|e| !e.is_null()) {
                    self.dropped.add("encrypted_reasoning");
                }
                if !summary.is_empty() {
                    let m = self.assistant(at);
                    let text = summary.join("\n");
                    m.reasoning = Some(match m.reasoning.take() {
                        Some(r) => format!("{r}\n{text}"),
                        None => text,
                    });
                }
                Ok(())
            }
            "function_call" => {
                let name = str_field(item, "name", at)?;
                let arguments = item
                    .get("arguments")
                    .map(|a| a.as_str().map_or_else(|| a.to_string(), String::from))
                    .unwrap_or_default();
                let id = item
                    .get("call_id")
                    .and_then(Value::as_str)
                    .map(String::from);
                let call = ToolCallLine::function(id, name, arguments);
                self.assistant(at)
                    .tool_calls
                    .get_or_insert_with(Vec::new)
                    .push(call);
                Ok(())
            }
            "function_call_output" => {
                let output = match item.get("output") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                let mut m = MessageLine::text(Role::Tool, output);
                m.tool_call_id = item
                    .get("call_id")
                    .and_then(Value::as_str)
                    .map(String::from);
                self.push(m, at.to_string());
                Ok(())
            }
            other => self.dropped.drop_or_refuse(
                self.lossy,
                format!("{at}.type"),
                other,
                &format!("a {other:?} item"),
            ),
        }
    }

    /// A message item: text parts (`input_text`, `output_text`); anything else that
    /// carries content (an image, a file, a refusal, annotations) is refused or dropped.
    fn message(&mut self, item: &Map<String, Value>, at: &str) -> Result<(), LineProblem> {
        let role = match item.get("role").and_then(Value::as_str) {
            Some("user") => Role::User,
            Some("system" | "developer") => Role::System,
            Some("assistant") => Role::Assistant,
            Some(other) => {
                return Err(LineProblem::new(
                    format!("{at}.role"),
                    format!(
                        "unknown role {other:?}; expected user, system, developer or assistant"
                    ),
                ));
            }
            None => return Err(LineProblem::new(format!("{at}.role"), "missing")),
        };
        let text = match item.get("content") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(parts)) => self.parts(parts, &format!("{at}.content"))?,
            None | Some(Value::Null) => None,
            Some(_) => {
                return Err(LineProblem::new(
                    format!("{at}.content"),
                    "wrong type: expected a string or an array of parts",
                ));
            }
        };
        if role == Role::Assistant {
            if let Some(text) = text {
                let m = self.assistant(at);
                m.content = Some(match m.content.take() {
                    Some(t) => format!("{t}\n{text}"),
                    None => text,
                });
            }
            return Ok(());
        }
        let Some(text) = text else {
            return Err(LineProblem::new(format!("{at}.content"), "missing"));
        };
        self.push(MessageLine::text(role, text), at.to_string());
        Ok(())
    }

    fn parts(&mut self, parts: &[Value], at: &str) -> Result<Option<String>, LineProblem> {
        let mut texts = Vec::new();
        for (k, part) in parts.iter().enumerate() {
            let at = format!("{at}[{k}]");
            let Some(part) = part.as_object() else {
                return Err(LineProblem::new(at, "wrong type: expected an object"));
            };
            let kind = part.get("type").and_then(Value::as_str).unwrap_or_default();
            match kind {
                "input_text" | "output_text" | "text" => {
                    if part
                        .get("annotations")
                        .and_then(Value::as_array)
                        .is_some_and(|a| !a.is_empty())
                    {
                        self.dropped.drop_or_refuse(
                            self.lossy,
                            format!("{at}.annotations"),
                            "annotations",
                            "an \"annotations\" field",
                        )?;
                    }
                    texts.push(str_field(part, "text", &at)?);
                }
                other => self.dropped.drop_or_refuse(
                    self.lossy,
                    format!("{at}.type"),
                    other,
                    &format!("a {other:?} part"),
                )?,
            }
        }
        Ok((!texts.is_empty()).then(|| texts.join("\n")))
    }
}

/// An assistant message with no text yet.
fn no_answer() -> MessageLine {
    let mut m = MessageLine::text(Role::Assistant, "");
    m.content = None;
    m
}

fn str_field(item: &Map<String, Value>, key: &str, at: &str) -> Result<String, LineProblem> {
    match item.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(LineProblem::new(
            format!("{at}.{key}"),
            "wrong type: expected a string",
        )),
        None => Err(LineProblem::new(format!("{at}.{key}"), "missing")),
    }
}

/// The response: its output items as the answer, with status, usage, or the failed turn
/// of a `failed` response or an error body.
fn read_response(response: &Value, b: &mut Items) -> Result<MessageLine, LineProblem> {
    let failed = response.get("status").and_then(Value::as_str) == Some("failed")
        || response.get("output").is_none();
    if failed && let Some((outcome, error)) = logged_error(response) {
        let mut m = no_answer();
        m.outcome = Some(outcome.as_str().to_string());
        m.error = Some(error);
        return Ok(m);
    }
    let Some(Value::Array(output)) = response.get("output") else {
        return Err(LineProblem::new(
            "response.output",
            "missing; expected an OpenAI Responses response (\"output\" items), or an \
             \"error\" for a call that failed",
        ));
    };
    b.items(output, "response.output")?;
    let mut m = b.open.take().map_or_else(no_answer, |(m, _)| m);
    let incomplete = response
        .get("incomplete_details")
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str);
    m.finish_reason = Some(
        match (incomplete, m.tool_calls.is_some()) {
            (Some("max_output_tokens"), _) => "length",
            (Some("content_filter"), _) => "content_filter",
            (Some(other), _) => other,
            (None, true) => "tool_calls",
            (None, false) => "stop",
        }
        .to_string(),
    );
    m.usage = usage(response.get("usage"))?;
    Ok(m)
}

fn usage(u: Option<&Value>) -> Result<Option<UsageLine>, LineProblem> {
    let Some(u) = u.filter(|u| u.is_object()) else {
        return Ok(None);
    };
    let count = |path: &[&str]| -> Result<Option<i64>, LineProblem> {
        let v = path.iter().try_fold(u, |v, k| v.get(k));
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| {
                LineProblem::new(
                    format!("response.usage.{}", path.join(".")),
                    "wrong type: expected a whole number",
                )
            }),
        }
    };
    let usage = UsageLine {
        prompt_tokens: count(&["input_tokens"])?,
        completion_tokens: count(&["output_tokens"])?,
        cached_tokens: count(&["input_tokens_details", "cached_tokens"])?,
        reasoning_tokens: count(&["output_tokens_details", "reasoning_tokens"])?,
    };
    check_usage(&usage, &|field| format!("response.{field}"))?;
    Ok(Some(usage).filter(|u| !u.is_empty()))
}

/// Calls of one file held until its end, then joined along `previous_response_id`.
pub(crate) struct Chains<P> {
    calls: Vec<(P, Call)>,
}

impl<P> Default for Chains<P> {
    fn default() -> Self {
        Chains { calls: Vec::new() }
    }
}

impl<P: Clone> Chains<P> {
    pub fn add(&mut self, place: P, call: Call) {
        self.calls.push((place, call));
    }

    /// One conversation per call that no other call continues, from the first call of its
    /// chain; a call whose previous call is not in the file is refused, naming the field.
    pub fn join(self) -> Vec<(P, Result<Normalised, LineProblem>)> {
        let by_id: HashMap<&str, usize> = self
            .calls
            .iter()
            .enumerate()
            .filter_map(|(i, (_, c))| c.id.as_deref().map(|id| (id, i)))
            .collect();
        let continued: HashSet<&str> = self
            .calls
            .iter()
            .filter_map(|(_, c)| c.previous.as_deref())
            .collect();
        let mut out = Vec::new();
        for (place, call) in &self.calls {
            if call.id.as_deref().is_some_and(|id| continued.contains(id)) {
                continue; // not a last call: part of a longer conversation
            }
            out.push((place.clone(), chain(&self.calls, &by_id, call)));
        }
        out
    }
}

/// The conversation ending with `last`: its chain's calls, first to last, joined.
fn chain<P>(
    calls: &[(P, Call)],
    by_id: &HashMap<&str, usize>,
    last: &Call,
) -> Result<Normalised, LineProblem> {
    let mut order = vec![last];
    let mut seen = HashSet::new();
    while let Some(previous) = order.last().and_then(|c| c.previous.as_deref()) {
        let Some(&i) = by_id.get(previous) else {
            return Err(LineProblem::new(
                "previous_response_id",
                format!(
                    "{previous:?} is not the response id of a call in this file; the calls of \
                     a conversation are imported together (put them in one file)"
                ),
            ));
        };
        if !seen.insert(i) {
            return Err(LineProblem::new(
                "previous_response_id",
                "the calls' previous_response_id form a loop",
            ));
        }
        order.push(&calls[i].1);
    }
    order.reverse();
    let mut line = last.normalised.line.clone();
    line.messages.clear();
    let mut names = Vec::new();
    let mut dropped = Dropped::default();
    let mut instructions: Option<&str> = None;
    for call in order {
        let MessagePaths::Named(paths) = &call.normalised.paths else {
            continue;
        };
        for (m, name) in call.normalised.line.messages.iter().zip(&paths.messages) {
            // Instructions apply to each call; repeated unchanged, they are said once.
            if m.role == Role::System && name.ends_with("instructions") {
                if instructions == m.content.as_deref() {
                    continue;
                }
                instructions = m.content.as_deref();
            }
            line.messages.push(m.clone());
            names.push(name.clone());
        }
        dropped.merge(&call.normalised.dropped);
    }
    let MessagePaths::Named(paths) = &last.normalised.paths else {
        return Err(LineProblem::new(
            "",
            "unexpected paths (a bug: please report it)",
        ));
    };
    if line.id.is_none() {
        line.id = last.id.clone();
    }
    Ok(Normalised {
        shape: Shape::Responses,
        line,
        paths: MessagePaths::Named(std::sync::Arc::new(NamedPaths {
            list: paths.list,
            messages: names,
            renamed: paths.renamed,
        })),
        dropped,
    })
}
