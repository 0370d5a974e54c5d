//! The shapes a transcript record takes, what any shape's record holds ([`RawLine`]) and
//! how a record becomes the exchange format's [`ConversationLine`] (the normalised
//! conversation that validation, hashing and the store see); [`super::format`] dispatches a
//! record to its shape's reader.
//!
//! One parse per record: [`RawLine`] holds every top-level field any shape reads. The
//! turnbench shape's `messages` are typed, so its records are parsed once, as before this
//! module; the fields only the other shapes read are kept as raw JSON and parsed once the
//! shape is known (so a field of that name on a record of another shape stays ignored).
//! The shape is recognised from which keys a record has, never by trying each one.
//!
//! A problem names the field as a JSON path in the record's own shape
//! (`conversations[2].from`, `request.messages[0].role`) and says what is wrong.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::exchange::{ContextLine, ConversationLine, MessageLine, Object, UsageLine};
use crate::jsonl::LineProblem;

/// `--format`: which shapes a file's records may take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ShapeFilter {
    /// Each record's own shape, recognised by its keys.
    #[default]
    Auto,
    /// Only this shape; a record of another one is refused.
    Only(Shape),
}

impl ShapeFilter {
    pub const NAMES: &'static str =
        "auto, turnbench, sharegpt, openai-log, anthropic, lmsys, responses, langfuse, otel";
}

impl FromStr for ShapeFilter {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s == "auto" {
            return Ok(ShapeFilter::Auto);
        }
        Shape::ALL
            .into_iter()
            .find(|shape| shape.as_str() == s)
            .map(ShapeFilter::Only)
            .ok_or_else(|| format!("unknown format {s:?}; expected one of {}", Self::NAMES))
    }
}

impl fmt::Display for ShapeFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeFilter::Auto => f.write_str("auto"),
            ShapeFilter::Only(shape) => f.write_str(shape.as_str()),
        }
    }
}

/// The shape of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// The exchange format, or a plain OpenAI chat line: a `messages` array.
    Turnbench,
    /// A `conversations` array of `{"from", "value"}` (FastChat, Axolotl, most datasets).
    ShareGpt,
    /// One logged call: `request` (with its `messages`) and `response` (a chat completion).
    OpenAiLog,
    /// An Anthropic Messages record (`system`, `messages` of content blocks) or logged call
    /// (`request` and a `response` with `content` blocks, `stop_reason`).
    Anthropic,
    /// A row of LMSYS-Chat-1M (`conversation_id`) or WildChat (`conversation_hash`): a
    /// `conversation` array of `{role, content}`.
    Lmsys,
    /// One logged OpenAI Responses call: `request` (`input`, `instructions`,
    /// `previous_response_id`) and a `response` with `output` items.
    Responses,
    /// Langfuse observations: one (`traceId`, `type`), or an API page of them (`data`).
    Langfuse,
    /// An OpenTelemetry OTLP/JSON export batch (`resourceSpans`) of GenAI spans.
    Otel,
}

impl Shape {
    pub const ALL: [Shape; 8] = [
        Shape::Turnbench,
        Shape::ShareGpt,
        Shape::OpenAiLog,
        Shape::Anthropic,
        Shape::Lmsys,
        Shape::Responses,
        Shape::Langfuse,
        Shape::Otel,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Turnbench => "turnbench",
            Shape::ShareGpt => "sharegpt",
            Shape::OpenAiLog => "openai-log",
            Shape::Anthropic => "anthropic",
            Shape::Lmsys => "lmsys",
            Shape::Responses => "responses",
            Shape::Langfuse => "langfuse",
            Shape::Otel => "otel",
        }
    }

    /// The keys that mark the shape, in a message's words.
    fn keys(self) -> &'static str {
        match self {
            Shape::Turnbench => "a \"messages\" array",
            Shape::ShareGpt => "a \"conversations\" array",
            Shape::OpenAiLog => "a \"response\" object (with the \"request\")",
            Shape::Anthropic => {
                "\"messages\" of content blocks (with \"system\"), or a \"response\" with \
                 \"content\" blocks"
            }
            Shape::Lmsys => "a \"conversation\" array",
            Shape::Responses => "a \"response\" with \"output\" items",
            Shape::Langfuse => {
                "\"traceId\" and \"type\" (an observation), or \"data\" (a page of them)"
            }
            Shape::Otel => "a \"resourceSpans\" array",
        }
    }

    /// The field that must be there, named in the error when nothing marks the shape.
    fn key(self) -> &'static str {
        match self {
            Shape::Turnbench => "messages",
            Shape::ShareGpt => "conversations",
            Shape::OpenAiLog => "response",
            Shape::Anthropic => "messages",
            Shape::Lmsys => "conversation",
            Shape::Responses => "response",
            Shape::Langfuse => "traceId",
            Shape::Otel => "resourceSpans",
        }
    }
}

/// Records read per shape in one file (imported or already present).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShapeCounts([u64; Shape::ALL.len()]);

impl ShapeCounts {
    pub fn add(&mut self, shape: Shape) {
        self.0[shape as usize] += 1;
    }

    pub fn get(&self, shape: Shape) -> u64 {
        self.0[shape as usize]
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|n| *n == 0)
    }
}

/// `sharegpt 3, openai-log 2`: the shapes read, in a fixed order.
impl fmt::Display for ShapeCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for shape in Shape::ALL {
            let n = self.get(shape);
            if n > 0 {
                write!(f, "{}{} {n}", if first { "" } else { ", " }, shape.as_str())?;
                first = false;
            }
        }
        Ok(())
    }
}

/// Content a record carried that turnbench does not store, counted by kind (a block type,
/// a field): never dropped without a word. `redacted_thinking` is always counted (it is
/// reasoning nobody can read); anything else only with `--lossy`, else the record is
/// refused naming the field.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct Dropped(std::collections::BTreeMap<String, u64>);

impl Dropped {
    pub fn add(&mut self, kind: &str) {
        *self.0.entry(kind.to_string()).or_default() += 1;
    }

    pub fn merge(&mut self, other: &Dropped) {
        for (kind, n) in &other.0 {
            *self.0.entry(kind.clone()).or_default() += n;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, kind: &str) -> u64 {
        self.0.get(kind).copied().unwrap_or(0)
    }

    /// Content that is not stored: refused naming `field` (the record's own path) unless
    /// `lossy`, when it is counted as `kind` instead.
    pub fn drop_or_refuse(
        &mut self,
        lossy: bool,
        field: impl Into<String>,
        kind: &str,
        what: &str,
    ) -> Result<(), LineProblem> {
        if !lossy {
            return Err(LineProblem::new(
                field,
                format!(
                    "{what}, which turnbench does not store (it keeps text, reasoning, tool \
                     calls and tool results); import with --lossy to drop it, counted in the \
                     summary"
                ),
            ));
        }
        self.add(kind);
        Ok(())
    }
}

/// The content-bearing fields of normalised messages that turnbench does not store
/// (OpenAI's `refusal`, `function_call`, `audio`): refused naming the field, or dropped and
/// counted with `--lossy`.
pub(super) fn unstored_fields(
    messages: &[MessageLine],
    paths: &MessagePaths,
    lossy: bool,
    dropped: &mut Dropped,
) -> Result<(), LineProblem> {
    for (i, m) in messages.iter().enumerate() {
        for name in m.unstored() {
            dropped.drop_or_refuse(
                lossy,
                paths.field(i, name),
                name,
                &format!("a {name:?} field"),
            )?;
        }
    }
    Ok(())
}

/// `image 2, redacted_thinking 1`: kinds in name order.
impl fmt::Display for Dropped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (kind, n)) in self.0.iter().enumerate() {
            write!(f, "{}{kind} {n}", if i == 0 { "" } else { ", " })?;
        }
        Ok(())
    }
}

/// Each normalised message's path in the record, for shapes where one source message may
/// become several (an Anthropic user message of tool results and text) or none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedPaths {
    /// The list as a whole (`messages`, `conversation`).
    pub list: &'static str,
    /// Message `i`'s path (`messages[2].content[1]`, `system`, `response`).
    pub messages: Vec<String>,
    /// Turnbench field names as the record names them (`finish_reason` → `stop_reason`).
    pub renamed: &'static [(&'static str, &'static str)],
}

/// How to name message `i` of a normalised conversation in the record's own shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessagePaths {
    /// `messages[i]`.
    Messages,
    /// `conversations[i]`, after the `system` field when it gave the first message.
    ShareGpt { system_field: bool },
    /// The history (`request.messages[i]`, or top-level `messages[i]`), then the answer.
    Log { top_level: bool, answer: usize },
    /// Each message's path given.
    Named(std::sync::Arc<NamedPaths>),
}

impl MessagePaths {
    /// The list as a whole.
    pub fn list(&self) -> &'static str {
        match self {
            MessagePaths::Named(named) => named.list,
            MessagePaths::Messages
            | MessagePaths::Log {
                top_level: true, ..
            } => "messages",
            MessagePaths::ShareGpt { .. } => "conversations",
            MessagePaths::Log { .. } => "request.messages",
        }
    }

    pub fn message(&self, i: usize) -> String {
        match self {
            MessagePaths::Named(named) => named
                .messages
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("{}[{i}]", named.list)),
            MessagePaths::ShareGpt { system_field: true } if i == 0 => "system".into(),
            MessagePaths::ShareGpt { system_field } => {
                format!("conversations[{}]", i - usize::from(*system_field))
            }
            MessagePaths::Log { answer, .. } if i == *answer => {
                "response.choices[0].message".into()
            }
            MessagePaths::Messages | MessagePaths::Log { .. } => format!("{}[{i}]", self.list()),
        }
    }

    /// A field of message `i`, named as the exchange format names it (`content`,
    /// `finish_reason`, `timing.e2e_ms`, ...), in the record's own words.
    pub fn field(&self, i: usize, name: &str) -> String {
        match (self, name) {
            (MessagePaths::Named(named), _) => {
                let name = named
                    .renamed
                    .iter()
                    .find_map(|(ours, theirs)| (*ours == name).then_some(*theirs))
                    .unwrap_or(name);
                format!("{}.{name}", self.message(i))
            }
            (MessagePaths::ShareGpt { system_field: true }, _) if i == 0 => "system".into(),
            (MessagePaths::ShareGpt { .. }, "content") => format!("{}.value", self.message(i)),
            (MessagePaths::Log { answer, .. }, "finish_reason") if i == *answer => {
                "response.choices[0].finish_reason".into()
            }
            (MessagePaths::Log { answer, .. }, "outcome" | "error") if i == *answer => {
                "response.error".into()
            }
            _ => format!("{}.{name}", self.message(i)),
        }
    }
}

/// A record read and normalised.
#[derive(Debug)]
pub struct Normalised {
    pub shape: Shape,
    pub line: ConversationLine,
    pub paths: MessagePaths,
    /// What the record carried that is not stored (counted in the summary).
    pub dropped: Dropped,
}

/// Every top-level field any shape reads. The common fields mean the same in every shape.
#[derive(Deserialize)]
pub(super) struct RawLine<'a> {
    id: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    label: Option<String>,
    scenario: Option<String>,
    repeat: Option<u32>,
    outcome: Option<String>,
    /// Turnbench; also a log's history when it has no `request.messages`.
    #[serde(default, deserialize_with = "optional_objects")]
    pub messages: Option<Vec<MessageLine>>,
    // ShareGPT.
    #[serde(borrow)]
    pub conversations: Option<&'a RawValue>,
    #[serde(borrow)]
    pub system: Option<&'a RawValue>,
    // Request/response logs.
    #[serde(borrow)]
    pub request: Option<&'a RawValue>,
    #[serde(borrow)]
    pub response: Option<&'a RawValue>,
    #[serde(borrow)]
    pub metadata: Option<&'a RawValue>,
    #[serde(borrow)]
    pub ttft_ms: Option<&'a RawValue>,
    #[serde(borrow)]
    pub latency_ms: Option<&'a RawValue>,
    #[serde(borrow)]
    pub duration_ms: Option<&'a RawValue>,
    #[serde(borrow, rename = "startTime")]
    pub start_time: Option<&'a RawValue>,
    #[serde(borrow, rename = "endTime")]
    pub end_time: Option<&'a RawValue>,
    #[serde(borrow, rename = "completionStartTime")]
    pub completion_start_time: Option<&'a RawValue>,
    // LMSYS-Chat-1M and WildChat rows.
    #[serde(borrow)]
    pub conversation: Option<&'a RawValue>,
    #[serde(borrow)]
    pub conversation_id: Option<&'a RawValue>,
    #[serde(borrow)]
    pub conversation_hash: Option<&'a RawValue>,
    // Langfuse observations.
    #[serde(borrow)]
    pub data: Option<&'a RawValue>,
    #[serde(borrow, rename = "traceId", alias = "trace_id")]
    pub trace_id: Option<&'a RawValue>,
    #[serde(borrow, rename = "type")]
    pub kind: Option<&'a RawValue>,
    // OpenTelemetry OTLP/JSON.
    #[serde(borrow, rename = "resourceSpans")]
    pub resource_spans: Option<&'a RawValue>,
}

/// The keys of a logged call's `response` that tell an Anthropic Messages response from
/// an OpenAI chat completion.
#[derive(Deserialize)]
struct ResponseKeys<'a> {
    choices: Option<serde::de::IgnoredAny>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    output: Option<&'a RawValue>,
    #[serde(rename = "type")]
    kind: Option<String>,
    object: Option<String>,
}

/// Which kind of logged response a record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoggedResponse {
    /// An OpenAI chat completion (or an OpenAI error object).
    Chat,
    Anthropic,
    Responses,
}

impl RawLine<'_> {
    /// The fields every shape shares, as a conversation without messages yet.
    pub(super) fn take_common(&mut self) -> ConversationLine {
        ConversationLine {
            id: self.id.take(),
            provider: self.provider.take(),
            model: self.model.take(),
            label: self.label.take(),
            scenario: self.scenario.take(),
            repeat: self.repeat.take(),
            outcome: self.outcome.take(),
            ..ConversationLine::default()
        }
    }

    /// The shape its keys mark: OpenTelemetry's `resourceSpans`, then a log's `response`
    /// (or a `request` without `messages`; Anthropic's when the response has `content`
    /// blocks or is an Anthropic error, else OpenAI's), then LMSYS's `conversation`,
    /// Langfuse's `traceId` and `type` or `data`, ShareGPT's `conversations`, `messages`
    /// with a top-level `system` (Anthropic's), then `messages`.
    fn marked(&self) -> Option<Shape> {
        if self.resource_spans.is_some() {
            return Some(Shape::Otel);
        }
        if self.is_log() {
            return Some(match self.logged_response() {
                LoggedResponse::Chat => Shape::OpenAiLog,
                LoggedResponse::Anthropic => Shape::Anthropic,
                LoggedResponse::Responses => Shape::Responses,
            });
        }
        if self.conversation.is_some() {
            Some(Shape::Lmsys)
        } else if self.is_langfuse() {
            Some(Shape::Langfuse)
        } else if self.conversations.is_some() {
            Some(Shape::ShareGpt)
        } else if self.messages.is_some() && self.system.is_some() {
            Some(Shape::Anthropic)
        } else if self.messages.is_some() {
            Some(Shape::Turnbench)
        } else {
            None
        }
    }

    /// A `response`, or a `request` without `messages`. A `request` alone does not make a
    /// turnbench line a log (a field of that name on it was ignored before logs were read).
    fn is_log(&self) -> bool {
        self.response.is_some() || (self.request.is_some() && self.messages.is_none())
    }

    /// An Anthropic Messages response (`content` blocks, `type` `message`) or error
    /// (`type` `error`); an OpenAI Responses one (`output` items, `object` `response`);
    /// else a chat completion.
    fn logged_response(&self) -> LoggedResponse {
        let Some(Ok(keys)) = self
            .response
            .map(|r| serde_json::from_str::<ResponseKeys>(r.get()))
        else {
            return LoggedResponse::Chat;
        };
        let array = |v: Option<&RawValue>| v.is_some_and(|v| v.get().starts_with('['));
        if keys.choices.is_some() {
            LoggedResponse::Chat
        } else if array(keys.output) || keys.object.as_deref() == Some("response") {
            LoggedResponse::Responses
        } else if array(keys.content) || matches!(keys.kind.as_deref(), Some("message" | "error")) {
            LoggedResponse::Anthropic
        } else {
            LoggedResponse::Chat
        }
    }

    /// An observation (`traceId` and `type`), or a page of them (`data` an array) that
    /// no other shape's keys mark.
    fn is_langfuse(&self) -> bool {
        (self.trace_id.is_some() && self.kind.is_some())
            || (self.data.is_some_and(|d| d.get().starts_with('['))
                && self.messages.is_none()
                && self.conversations.is_none())
    }

    fn anthropic_response(&self) -> bool {
        self.logged_response() == LoggedResponse::Anthropic
    }

    fn has(&self, shape: Shape) -> bool {
        match shape {
            Shape::Turnbench => self.messages.is_some(),
            Shape::ShareGpt => self.conversations.is_some(),
            Shape::OpenAiLog => self.is_log() && self.logged_response() == LoggedResponse::Chat,
            // Asked for by name, any `messages` are Anthropic's.
            Shape::Anthropic => {
                self.anthropic_response() || self.messages.is_some() || self.request.is_some()
            }
            Shape::Lmsys => self.conversation.is_some(),
            Shape::Responses => self.logged_response() == LoggedResponse::Responses,
            Shape::Langfuse => self.trace_id.is_some() || self.data.is_some(),
            Shape::Otel => self.resource_spans.is_some(),
        }
    }

    /// The shape to read the record as under `format`, or why it is refused.
    pub(super) fn shape(&self, format: ShapeFilter) -> Result<Shape, LineProblem> {
        match (format, self.marked()) {
            (ShapeFilter::Auto, Some(shape)) => Ok(shape),
            (ShapeFilter::Auto, None) => Err(LineProblem::new(
                "messages",
                "missing; every line needs a \"messages\" array (turnbench, OpenAI chat or \
                 Anthropic Messages), a \"conversations\" array (ShareGPT), a \
                 \"conversation\" array (LMSYS-Chat-1M, WildChat), \"request\" and \
                 \"response\" (a logged call), \"traceId\" and \"type\" or \"data\" \
                 (Langfuse observations), or \"resourceSpans\" (OpenTelemetry)",
            )),
            (ShapeFilter::Only(wanted), _) if self.has(wanted) => Ok(wanted),
            (ShapeFilter::Only(wanted), Some(found)) => Err(LineProblem::new(
                "",
                format!(
                    "not a {wanted} record: it has {}, the {found} shape, where {wanted} needs {}; \
                     import with --format {found} (or --format auto)",
                    found.keys(),
                    wanted.keys(),
                    wanted = wanted.as_str(),
                    found = found.as_str(),
                ),
            )),
            (ShapeFilter::Only(wanted), None) => Err(LineProblem::new(
                wanted.key(),
                format!(
                    "missing; every {} record needs {}",
                    wanted.as_str(),
                    wanted.keys()
                ),
            )),
        }
    }
}

/// Deserializes a whole record as `T`; a failure names the field and the problem.
pub(super) fn parse_record<'a, T: Deserialize<'a>>(text: &'a [u8]) -> Result<T, LineProblem> {
    let mut de = serde_json::Deserializer::from_slice(text);
    match serde_path_to_error::deserialize::<_, Object<T>>(&mut de) {
        Ok(Object(t)) => Ok(t),
        Err(e) if e.inner().is_syntax() || e.inner().is_eof() => Err(LineProblem::new(
            "",
            format!("not JSON: {}", without_position(e.inner())),
        )),
        Err(e) => Err(describe(&e.path().to_string(), e.inner(), None)),
    }
}

/// Deserializes a record; a failure names the field and the problem.
pub(super) fn parse_raw(text: &[u8]) -> Result<RawLine<'_>, LineProblem> {
    match serde_json::from_slice::<Object<RawLine>>(text) {
        Ok(Object(raw)) => Ok(raw),
        Err(e) if e.is_syntax() || e.is_eof() => Err(LineProblem::new(
            "",
            format!("not JSON: {}", without_position(&e)),
        )),
        Err(_) => Err(explain_type_error(text)),
    }
}

/// The slow path: parse again with path tracking to name the field that failed.
fn explain_type_error(text: &[u8]) -> LineProblem {
    let mut de = serde_json::Deserializer::from_slice(text);
    match serde_path_to_error::deserialize::<_, Object<RawLine>>(&mut de) {
        Ok(_) => LineProblem::new(
            "",
            "could not be read (unexpected; please report this line)",
        ),
        Err(e) => describe(&e.path().to_string(), e.inner(), None),
    }
}

/// Parses a field kept raw, naming its inner fields from `name` on when it fails.
pub(super) fn parse_field<'a, T: Deserialize<'a>>(
    name: &str,
    raw: &'a RawValue,
) -> Result<T, LineProblem> {
    let mut de = serde_json::Deserializer::from_str(raw.get());
    serde_path_to_error::deserialize(&mut de)
        .map_err(|e| describe(&e.path().to_string(), e.inner(), Some(name)))
}

/// A deserialization error as a problem: `path` from serde_path_to_error (`.` for the
/// top), under the field `within` when the text parsed was that field's value.
fn describe(path: &str, error: &serde_json::Error, within: Option<&str>) -> LineProblem {
    let path = match (within, path) {
        (None, ".") => String::new(),
        (None, path) => path.to_string(),
        (Some(name), ".") => name.to_string(),
        (Some(name), path) if path.starts_with('[') => format!("{name}{path}"),
        (Some(name), path) => format!("{name}.{path}"),
    };
    // The path names the place, so serde's "at line 1 column N" is left out.
    let message = message_only(error);
    if let Some(rest) = message.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or_default();
        let field = if path.is_empty() {
            name.to_string()
        } else {
            format!("{path}.{name}")
        };
        return LineProblem::new(field, "missing");
    }
    if let Some(rest) = message.strip_prefix("invalid type: ") {
        if path.is_empty() {
            let found = match rest.split(", expected").next().unwrap_or(rest) {
                "sequence" => "an array",
                "map" => "an object",
                other => other,
            };
            return LineProblem::new(
                "",
                format!(
                    "expected a JSON object (one conversation per line or array element), \
                     found {found}"
                ),
            );
        }
        return LineProblem::new(path, format!("wrong type: {}", plain_expectation(rest)));
    }
    LineProblem::new(path, plain_expectation(&message))
}

/// Serde's Rust names in "expected ..." put in the format's words.
fn plain_expectation(message: &str) -> String {
    const WORDS: [(&str, &str); 6] = [
        ("a sequence", "an array"),
        ("sequence,", "array,"),
        ("map,", "object,"),
        ("expected u32", "expected a whole number"),
        ("expected i64", "expected a whole number"),
        ("expected u16", "expected an HTTP status"),
    ];
    let mut out = message.to_string();
    for (rust, words) in WORDS {
        out = out.replace(rust, words);
    }
    out.replace("expected f64", "expected a number (milliseconds)")
}

/// serde_json's message without " at line 1 column 17" (a record is one unit), but keeping
/// the column, which helps find a syntax error in a long line.
fn without_position(e: &serde_json::Error) -> String {
    format!("{} (column {})", message_only(e), e.column())
}

fn message_only(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

pub(super) fn optional_objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Vec<T>>, D::Error> {
    // Same layout, so this collect reuses the vector in place.
    Ok(Option::<Vec<Object<T>>>::deserialize(d)?
        .map(|v| v.into_iter().map(|Object(t)| t).collect()))
}

/// Usage counts as a record states them: none negative, cached within the prompt.
/// A turn's stated context sizes: none negative, and only on a turn that outgrew the
/// context (the store keeps them for those turns alone).
pub(super) fn check_context(
    c: &ContextLine,
    overflowed: bool,
    at: &dyn Fn(&str) -> String,
) -> Result<(), LineProblem> {
    if !overflowed {
        return Err(LineProblem::new(
            at("context"),
            "given, but the turn's outcome is not context_overflow; the sizes a server \
             states belong to a turn that outgrew the context (leave `context` out, or give \
             \"outcome\": \"context_overflow\")",
        ));
    }
    for (name, v) in [
        ("prompt_tokens", c.prompt_tokens),
        ("window_tokens", c.window_tokens),
        ("completion_tokens", c.completion_tokens),
    ] {
        if let Some(v) = v
            && v < 0
        {
            return Err(LineProblem::new(
                at(&format!("context.{name}")),
                format!("{v} is negative; leave sizes the server did not state out"),
            ));
        }
    }
    Ok(())
}

pub(super) fn check_usage(u: &UsageLine, at: &dyn Fn(&str) -> String) -> Result<(), LineProblem> {
    for (name, v) in [
        ("prompt_tokens", u.prompt_tokens),
        ("completion_tokens", u.completion_tokens),
        ("cached_tokens", u.cached_tokens),
        ("reasoning_tokens", u.reasoning_tokens),
    ] {
        if let Some(v) = v
            && v < 0
        {
            return Err(LineProblem::new(
                at(&format!("usage.{name}")),
                format!("{v} is negative; leave unknown counts out (never 0 or -1)"),
            ));
        }
    }
    if let (Some(cached), Some(prompt)) = (u.cached_tokens, u.prompt_tokens)
        && cached > prompt
    {
        return Err(LineProblem::new(
            at("usage.cached_tokens"),
            format!(
                "{cached} is more than prompt_tokens {prompt}; cached tokens are part of the prompt"
            ),
        ));
    }
    Ok(())
}
