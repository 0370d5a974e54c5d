//! Recorded agent sessions (JSON Lines, one session per line) read into one internal form.
//!
//! Two shapes are accepted, and both become the same [`Session`]:
//! - the OpenAI chat format: `tools` (function tools), assistant `tool_calls`, `tool`
//!   messages with `tool_call_id`;
//! - content blocks, as coding-agent logs store them: `content` is an array of `text`,
//!   `tool_use` (`id`, `name`, `input`) and `tool_result` (`tool_use_id`, `content`) blocks,
//!   and tools may be given as `{name, description, input_schema}`.
//!
//! Conversion: text blocks are joined with a newline; a `tool_use` becomes a tool call whose
//! arguments are the compact JSON of its `input`; the `tool_result` blocks of a user message
//! become `tool` messages, in order, before the rest of that message's text; `thinking`
//! blocks are left out (recorded reasoning is never replayed). Every message may carry an
//! RFC 3339 `timestamp`. Bad lines are reported as `file:line: field: problem`.

use std::collections::HashSet;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Map, Value};

use crate::jsonl::{LineProblem, Lines, Place, Rejection};
use crate::timestamp::parse_rfc3339_ms;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionRole {
    System,
    User,
    Assistant,
    Tool,
}

impl SessionRole {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionRole::System => "system",
            SessionRole::User => "user",
            SessionRole::Assistant => "assistant",
            SessionRole::Tool => "tool",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "system" | "developer" => SessionRole::System,
            "user" => SessionRole::User,
            "assistant" => SessionRole::Assistant,
            "tool" => SessionRole::Tool,
            _ => return None,
        })
    }
}

/// A tool call as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedCall {
    pub id: String,
    pub name: String,
    /// The arguments as a JSON text, as the OpenAI format carries them.
    pub arguments: String,
}

/// One recorded message, in the OpenAI chat format's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionMessage {
    pub role: SessionRole,
    /// `None` for an assistant message that only called tools.
    pub content: Option<String>,
    pub tool_calls: Vec<RecordedCall>,
    /// For a `tool` message: the call it answers.
    pub tool_call_id: Option<String>,
    /// Milliseconds since the Unix epoch, when the recording had a timestamp.
    pub at_ms: Option<i64>,
}

impl SessionMessage {
    fn new(role: SessionRole, content: Option<String>, at_ms: Option<i64>) -> Self {
        SessionMessage {
            role,
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
            at_ms,
        }
    }
}

/// Sent as an OpenAI chat message; the timestamp is never sent.
impl Serialize for SessionMessage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Calls<'a>(&'a [RecordedCall]);
        impl Serialize for Calls<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeSeq;
                let mut seq = s.serialize_seq(Some(self.0.len()))?;
                for c in self.0 {
                    seq.serialize_element(&serde_json::json!({
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }))?;
                }
                seq.end()
            }
        }
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("role", self.role.as_str())?;
        map.serialize_entry("content", &self.content)?;
        if !self.tool_calls.is_empty() {
            map.serialize_entry("tool_calls", &Calls(&self.tool_calls))?;
        }
        if let Some(id) = &self.tool_call_id {
            map.serialize_entry("tool_call_id", id)?;
        }
        map.end()
    }
}

/// One recorded session, validated: every assistant message has a history before it, every
/// tool message answers a recorded call.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub id: String,
    /// The line of the sessions file it came from.
    pub line: u64,
    /// The OpenAI function-tool list (converted from content-block tools), or `None`.
    pub tools: Option<Value>,
    /// The names `tools` declares.
    pub tool_names: Vec<String>,
    pub messages: Vec<SessionMessage>,
}

impl Session {
    /// Indices in `messages` of the recorded assistant turns, in order: each becomes one
    /// request whose history is `messages[..index]`.
    pub fn turn_indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role == SessionRole::Assistant)
            .map(|(i, _)| i)
    }

    /// The recorded idle time before the turn at `index` in ms: from the previous
    /// assistant message to the last message before this turn (the user's or the tool's),
    /// when both carry timestamps; never negative. `None` for the first turn or without
    /// timestamps.
    pub fn recorded_pause_ms(&self, index: usize) -> Option<f64> {
        let before = self.messages.get(..index)?;
        let last = before.last()?.at_ms?;
        let previous = before
            .iter()
            .rev()
            .find(|m| m.role == SessionRole::Assistant)?
            .at_ms?;
        Some((last - previous).max(0) as f64)
    }
}

/// Why sessions could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{path}: cannot read: {error}\n  fix: check the path", path = .path.display())]
    Open {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}:{line}: read failed: {error}", path = .path.display())]
    Read {
        path: PathBuf,
        line: u64,
        error: std::io::Error,
    },
    /// Every bad line (up to [`MAX_REPORTED`]), so that one pass fixes them all.
    #[error("{}", bad_lines_message(.0, *.1))]
    BadLines(Vec<Rejection>, usize),
    #[error("{path}: no sessions\n  fix: one session per line: {{\"id\": …, \"messages\": […]}}", path = .0.display())]
    Empty(PathBuf),
}

/// Bad lines listed at most; the count says how many more.
pub const MAX_REPORTED: usize = 20;

fn bad_lines_message(lines: &[Rejection], total: usize) -> String {
    let mut out: Vec<String> = lines.iter().map(ToString::to_string).collect();
    if total > lines.len() {
        out.push(format!("… and {} more", total - lines.len()));
    }
    out.push(format!(
        "  fix: correct the line{} above (docs/replay.md describes the session format); nothing was sent",
        if total == 1 { "" } else { "s" }
    ));
    out.join("\n")
}

/// Reads every session of a file. Any bad line is an error (listing every bad line): a
/// replay with a silently skipped session would compare less than the user asked for.
pub fn read_sessions(path: &Path) -> Result<Vec<Session>, SessionError> {
    read_sessions_from(open(path)?, path)
}

/// [`read_sessions`] from any reader; `path` names it in messages.
pub fn read_sessions_from(input: impl BufRead, path: &Path) -> Result<Vec<Session>, SessionError> {
    let mut sessions = Vec::new();
    scan(input, path, |s, _| sessions.push(s))?;
    Ok(sessions)
}

/// A sessions file on disk, or the built-in one (`<built-in>/sessions/…`).
fn open(path: &Path) -> Result<Box<dyn BufRead>, SessionError> {
    if let Some(text) = crate::config::embedded::read(path) {
        return Ok(Box::new(text.as_bytes()));
    }
    let file = std::fs::File::open(path).map_err(|error| SessionError::Open {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(Box::new(std::io::BufReader::new(file)))
}

/// The bytes of one line, as validated: read again from the file (or the built-in text).
fn line_bytes(path: &Path, offset: u64, len: u64) -> Result<Vec<u8>, std::io::Error> {
    use std::io::{Read, Seek, SeekFrom};
    if let Some(text) = crate::config::embedded::read(path) {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let end = start.saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
        return text
            .as_bytes()
            .get(start..end)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
    }
    let mut file = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut text = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(len).read_to_end(&mut text)?;
    Ok(text)
}

/// Where a session's line is, so that it can be read again when its pass starts: a
/// replay holds the index of every session and the sessions of passes in flight only, so
/// its memory does not grow with the number of sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEntry {
    pub id: String,
    pub line: u64,
    pub offset: u64,
    pub len: u64,
    /// blake3 of the line: a session read again must be the one validated.
    pub hash: [u8; 32],
    /// Recorded assistant turns.
    pub turns: usize,
}

/// Every session of a file, validated once, as positions in it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionIndex {
    pub path: PathBuf,
    pub entries: Vec<SessionEntry>,
}

impl SessionIndex {
    /// Validates every line of the file (errors as [`read_sessions`]) and keeps where each
    /// session is.
    pub fn build(path: &Path) -> Result<SessionIndex, SessionError> {
        let mut entries = Vec::new();
        scan(open(path)?, path, |s, at| {
            entries.push(SessionEntry {
                turns: s.turn_indices().count(),
                id: s.id,
                line: s.line,
                offset: at.offset,
                len: at.len,
                hash: at.hash,
            })
        })?;
        Ok(SessionIndex {
            path: path.to_path_buf(),
            entries,
        })
    }

    /// Reads session `i` again; an error if the file changed since it was validated.
    pub fn load(&self, i: usize) -> Result<Session, String> {
        let e = self
            .entries
            .get(i)
            .ok_or_else(|| format!("no session {i} in the index"))?;
        let changed = || {
            format!(
                "{}:{}: the sessions file changed during the replay; replay it again (or --resume) with the file left as it is",
                self.path.display(),
                e.line
            )
        };
        let text = line_bytes(&self.path, e.offset, e.len).map_err(|_| changed())?;
        if *blake3::hash(&text).as_bytes() != e.hash {
            return Err(changed());
        }
        parse_session(&text, e.line).map_err(|p| format!("{}:{}: {p}", self.path.display(), e.line))
    }

    /// A hash of every session as read: a resumed run must replay the same sessions.
    pub fn hash(&self) -> String {
        let mut h = blake3::Hasher::new();
        for e in &self.entries {
            h.update(&e.hash);
        }
        h.finalize().to_hex()[..16].to_string()
    }
}

/// Where a valid line was.
struct LineAt {
    offset: u64,
    len: u64,
    hash: [u8; 32],
}

/// Validates every line, handing each valid session to `keep`; any bad line makes the
/// whole file an error listing the bad lines.
fn scan(
    input: impl BufRead,
    path: &Path,
    mut keep: impl FnMut(Session, LineAt),
) -> Result<(), SessionError> {
    let mut lines = Lines::new(input);
    let mut bad = Vec::new();
    let mut total_bad = 0;
    let mut kept = 0;
    let mut ids = HashSet::new();
    loop {
        let number = lines.number;
        let (line, offset, text) = match lines.next_line_at() {
            Ok(Some(next)) => next,
            Ok(None) => break,
            Err(error) => {
                return Err(SessionError::Read {
                    path: path.to_path_buf(),
                    line: number + 1,
                    error,
                });
            }
        };
        let at = LineAt {
            offset,
            len: text.len() as u64,
            hash: *blake3::hash(text).as_bytes(),
        };
        let parsed = parse_session(text, line).and_then(|s| {
            if ids.insert(s.id.clone()) {
                Ok(s)
            } else {
                Err(LineProblem::new(
                    "id",
                    format!(
                        "{:?} is used by an earlier line; session ids must be unique",
                        s.id
                    ),
                ))
            }
        });
        match parsed {
            Ok(s) => {
                kept += 1;
                // Once a line is bad the run will not start: keep nothing more.
                if total_bad == 0 {
                    keep(s, at);
                }
            }
            Err(problem) => {
                total_bad += 1;
                if bad.len() < MAX_REPORTED {
                    bad.push(Rejection {
                        path: path.to_path_buf(),
                        place: Place::line(line),
                        problem,
                    });
                }
            }
        }
    }
    if total_bad > 0 {
        return Err(SessionError::BadLines(bad, total_bad));
    }
    if kept == 0 {
        return Err(SessionError::Empty(path.to_path_buf()));
    }
    Ok(())
}

/// Parses and validates one line (without its newline).
pub fn parse_session(text: &[u8], line: u64) -> Result<Session, LineProblem> {
    let value: Value = serde_json::from_slice(text)
        .map_err(|e| LineProblem::new("", format!("not JSON: {e}").replace(" at line 1", " at")))?;
    let Value::Object(obj) = value else {
        return Err(LineProblem::new(
            "",
            "expected a JSON object (one session per line)",
        ));
    };
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err(LineProblem::new("id", "expected a non-empty string")),
        None => return Err(LineProblem::new("id", "missing; every session needs an id")),
    };
    let (tools, tool_names) = match obj.get("tools") {
        None | Some(Value::Null) => (None, Vec::new()),
        Some(Value::Array(list)) => {
            let (tools, names) = read_tools(list)?;
            (Some(Value::Array(tools)), names)
        }
        Some(_) => return Err(LineProblem::new("tools", "expected an array of tools")),
    };
    let list = match obj.get("messages") {
        Some(Value::Array(list)) => list,
        Some(_) => return Err(LineProblem::new("messages", "expected an array")),
        None => {
            return Err(LineProblem::new(
                "messages",
                "missing; every session needs a \"messages\" array",
            ));
        }
    };
    let mut messages = Vec::with_capacity(list.len());
    // The recorded message each converted one came from, to name it in a problem.
    let mut origin = Vec::with_capacity(list.len());
    for (i, m) in list.iter().enumerate() {
        read_message(m, &format!("messages[{i}]"), &mut messages)?;
        origin.resize(messages.len(), i);
    }
    check_history(&messages, &origin)?;
    Ok(Session {
        id,
        line,
        tools,
        tool_names,
        messages,
    })
}

/// The tools in the OpenAI form, and their names.
fn read_tools(list: &[Value]) -> Result<(Vec<Value>, Vec<String>), LineProblem> {
    let mut tools = Vec::with_capacity(list.len());
    let mut names = Vec::with_capacity(list.len());
    for (i, t) in list.iter().enumerate() {
        let at = format!("tools[{i}]");
        let name_of = |v: Option<&Value>, field: &str| match v {
            Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
            _ => Err(LineProblem::new(
                format!("{at}.{field}"),
                "missing or not a non-empty string",
            )),
        };
        if let Some(function) = t.get("function") {
            if t.get("type").and_then(Value::as_str) != Some("function") {
                return Err(LineProblem::new(
                    format!("{at}.type"),
                    "expected \"function\" (only function tools are replayed)",
                ));
            }
            names.push(name_of(function.get("name"), "function.name")?);
            tools.push(t.clone());
        } else if t.get("input_schema").is_some() || t.get("name").is_some() {
            let name = name_of(t.get("name"), "name")?;
            let mut function = Map::new();
            function.insert("name".into(), Value::String(name.clone()));
            if let Some(d) = t.get("description") {
                function.insert("description".into(), d.clone());
            }
            if let Some(schema) = t.get("input_schema") {
                function.insert("parameters".into(), schema.clone());
            }
            tools.push(serde_json::json!({"type": "function", "function": function}));
            names.push(name);
        } else {
            return Err(LineProblem::new(
                at,
                "expected {\"type\": \"function\", \"function\": {\"name\": …}} or {\"name\": …, \"input_schema\": …}",
            ));
        }
    }
    Ok((tools, names))
}

/// One recorded message → one or more messages (a user message with tool results
/// becomes its `tool` messages, then its text).
fn read_message(m: &Value, at: &str, out: &mut Vec<SessionMessage>) -> Result<(), LineProblem> {
    let Value::Object(m) = m else {
        return Err(LineProblem::new(at, "expected an object"));
    };
    let role = match m.get("role") {
        Some(Value::String(r)) => SessionRole::parse(r).ok_or_else(|| {
            LineProblem::new(
                format!("{at}.role"),
                format!("unknown role {r:?}; expected system, user, assistant or tool"),
            )
        })?,
        _ => {
            return Err(LineProblem::new(
                format!("{at}.role"),
                "missing or not a string",
            ));
        }
    };
    let at_ms = match m.get("timestamp") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(parse_rfc3339_ms(t).ok_or_else(|| {
            LineProblem::new(
                format!("{at}.timestamp"),
                format!("{t:?} is not an RFC 3339 time (e.g. 2025-01-31T09:15:02.250Z)"),
            )
        })?),
        Some(_) => {
            return Err(LineProblem::new(
                format!("{at}.timestamp"),
                "expected an RFC 3339 string",
            ));
        }
    };
    match m.get("content") {
        Some(Value::Array(blocks)) => {
            return read_blocks(role, blocks, at, at_ms, out);
        }
        None | Some(Value::Null | Value::String(_)) => {}
        Some(_) => {
            return Err(LineProblem::new(
                format!("{at}.content"),
                "expected a string, null or an array of content blocks",
            ));
        }
    }
    let content = m.get("content").and_then(Value::as_str).map(str::to_string);
    let mut msg = SessionMessage::new(role, content, at_ms);
    match (role, m.get("tool_calls")) {
        (_, None | Some(Value::Null)) => {}
        (SessionRole::Assistant, Some(Value::Array(calls))) => {
            for (k, c) in calls.iter().enumerate() {
                msg.tool_calls
                    .push(read_openai_call(c, &format!("{at}.tool_calls[{k}]"))?);
            }
        }
        (SessionRole::Assistant, Some(_)) => {
            return Err(LineProblem::new(
                format!("{at}.tool_calls"),
                "expected an array",
            ));
        }
        (_, Some(_)) => {
            return Err(LineProblem::new(
                format!("{at}.tool_calls"),
                "only an assistant message calls tools",
            ));
        }
    }
    if role == SessionRole::Tool {
        match m.get("tool_call_id") {
            Some(Value::String(id)) if !id.is_empty() => msg.tool_call_id = Some(id.clone()),
            _ => {
                return Err(LineProblem::new(
                    format!("{at}.tool_call_id"),
                    "missing; a tool message names the call it answers",
                ));
            }
        }
        if msg.content.is_none() {
            msg.content = Some(String::new());
        }
    } else if role != SessionRole::Assistant && msg.content.is_none() {
        return Err(LineProblem::new(
            format!("{at}.content"),
            "missing; only an assistant message may go without content",
        ));
    }
    out.push(msg);
    Ok(())
}

fn read_openai_call(c: &Value, at: &str) -> Result<RecordedCall, LineProblem> {
    let text = |v: Option<&Value>, field: &str| non_empty_string(v, || format!("{at}.{field}"));
    let function = c.get("function");
    let arguments = match function.and_then(|f| f.get("arguments")) {
        Some(Value::String(s)) => s.clone(),
        // Some logs store the arguments as an object; sent as the JSON text they are.
        Some(v @ Value::Object(_)) => v.to_string(),
        _ => {
            return Err(LineProblem::new(
                format!("{at}.function.arguments"),
                "missing; expected the arguments as a JSON string",
            ));
        }
    };
    Ok(RecordedCall {
        id: text(c.get("id"), "id")?,
        name: text(function.and_then(|f| f.get("name")), "function.name")?,
        arguments,
    })
}

fn read_blocks(
    role: SessionRole,
    blocks: &[Value],
    at: &str,
    at_ms: Option<i64>,
    out: &mut Vec<SessionMessage>,
) -> Result<(), LineProblem> {
    let mut texts: Vec<&str> = Vec::new();
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for (k, b) in blocks.iter().enumerate() {
        let here = format!("{at}.content[{k}]");
        let field = |name: &str| b.get(name);
        let string = |name: &str| non_empty_string(field(name), || format!("{here}.{name}"));
        match field("type").and_then(Value::as_str) {
            Some("text") => match field("text") {
                Some(Value::String(s)) => texts.push(s),
                _ => {
                    return Err(LineProblem::new(
                        format!("{here}.text"),
                        "missing or not a string",
                    ));
                }
            },
            Some("thinking" | "redacted_thinking") => {}
            Some("tool_use") if role == SessionRole::Assistant => calls.push(RecordedCall {
                id: string("id")?,
                name: string("name")?,
                arguments: match field("input") {
                    None | Some(Value::Null) => "{}".to_string(),
                    Some(v) => v.to_string(),
                },
            }),
            Some("tool_result") if role == SessionRole::User || role == SessionRole::Tool => {
                let id = string("tool_use_id")?;
                results.push((id, tool_result_content(field("content"), &here)?));
            }
            Some(kind @ ("tool_use" | "tool_result")) => {
                return Err(LineProblem::new(
                    format!("{here}.type"),
                    format!(
                        "a {kind} block does not belong in a {} message",
                        role.as_str()
                    ),
                ));
            }
            Some(other) => {
                return Err(LineProblem::new(
                    format!("{here}.type"),
                    format!("unknown block type {other:?}; expected text, tool_use or tool_result"),
                ));
            }
            None => {
                return Err(LineProblem::new(
                    format!("{here}.type"),
                    "missing or not a string",
                ));
            }
        }
    }
    push_blocks(role, &texts, calls, results, at_ms, out);
    Ok(())
}

/// A string field that must be there and not empty; `at` names it in the problem.
fn non_empty_string(v: Option<&Value>, at: impl FnOnce() -> String) -> Result<String, LineProblem> {
    match v {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(LineProblem::new(at(), "missing or not a non-empty string")),
    }
}

/// A tool result's text: none, a string, or text parts joined by lines.
fn tool_result_content(content: Option<&Value>, here: &str) -> Result<String, LineProblem> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut joined = Vec::new();
            for (p, part) in parts.iter().enumerate() {
                match part.get("text").and_then(Value::as_str) {
                    Some(t) if part.get("type").and_then(Value::as_str) == Some("text") => {
                        joined.push(t)
                    }
                    _ => {
                        return Err(LineProblem::new(
                            format!("{here}.content[{p}]"),
                            "only text parts are replayed in a tool result",
                        ));
                    }
                }
            }
            Ok(joined.join("\n"))
        }
        Some(_) => Err(LineProblem::new(
            format!("{here}.content"),
            "expected a string or an array of text parts",
        )),
    }
}

/// The messages a message of blocks becomes: a tool message per result, then the message
/// itself (its texts joined, an assistant's with its calls).
fn push_blocks(
    role: SessionRole,
    texts: &[&str],
    calls: Vec<RecordedCall>,
    results: Vec<(String, String)>,
    at_ms: Option<i64>,
    out: &mut Vec<SessionMessage>,
) {
    for (id, content) in results {
        let mut m = SessionMessage::new(SessionRole::Tool, Some(content), at_ms);
        m.tool_call_id = Some(id);
        out.push(m);
    }
    let text = (!texts.is_empty()).then(|| texts.join("\n"));
    match role {
        SessionRole::Assistant => {
            let mut m = SessionMessage::new(role, text, at_ms);
            m.tool_calls = calls;
            out.push(m);
        }
        // A user message that held only tool results adds no user message.
        _ => {
            if let Some(text) = text {
                out.push(SessionMessage::new(role, Some(text), at_ms));
            }
        }
    }
}

/// A session the replay can send: at least one assistant turn, each with history before
/// it; every tool message answers a call recorded earlier.
fn check_history(messages: &[SessionMessage], origin: &[usize]) -> Result<(), LineProblem> {
    let at = |i: usize| format!("messages[{}]", origin.get(i).copied().unwrap_or(i));
    let mut calls = HashSet::new();
    let mut turns = 0;
    for (i, m) in messages.iter().enumerate() {
        match m.role {
            SessionRole::Assistant => {
                if i == 0 || messages[..i].iter().all(|m| m.role == SessionRole::System) {
                    return Err(LineProblem::new(
                        at(i),
                        "this assistant message has nothing before it to answer; a session starts with a user message",
                    ));
                }
                turns += 1;
                calls.extend(m.tool_calls.iter().map(|c| c.id.as_str()));
            }
            SessionRole::Tool => {
                let id = m.tool_call_id.as_deref().unwrap_or_default();
                if !calls.contains(id) {
                    return Err(LineProblem::new(
                        at(i),
                        format!(
                            "this tool result answers {id:?}, which no earlier assistant message called"
                        ),
                    ));
                }
            }
            SessionRole::System | SessionRole::User => {}
        }
    }
    if turns == 0 {
        return Err(LineProblem::new(
            "messages",
            "no assistant message: nothing to replay",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(path: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
    }

    fn problem(line: &str) -> LineProblem {
        parse_session(line.as_bytes(), 1).unwrap_err()
    }

    #[test]
    fn shipped_sessions_read_and_their_content_block_twins_send_the_same_requests() {
        let openai = read_sessions(&repo("sessions/agent-sessions.jsonl")).unwrap();
        let blocks = read_sessions(&repo("tests/fixtures/sessions-blocks.jsonl")).unwrap();
        assert_eq!(openai.len(), 4);
        assert_eq!(openai.len(), blocks.len());
        let mut turns = 0;
        for (a, b) in openai.iter().zip(&blocks) {
            assert_eq!(a.id, b.id);
            assert_eq!(
                a.tool_names,
                ["read_file", "search", "edit_file", "run_tests"]
            );
            assert_eq!(
                serde_json::to_string(&a.tools).unwrap(),
                serde_json::to_string(&b.tools).unwrap()
            );
            let (ta, tb): (Vec<_>, Vec<_>) =
                (a.turn_indices().collect(), b.turn_indices().collect());
            assert_eq!(ta, tb, "{}", a.id);
            for &i in &ta {
                // What each turn sends, byte for byte, and the pause before it.
                assert_eq!(
                    serde_json::to_string(&a.messages[..i]).unwrap(),
                    serde_json::to_string(&b.messages[..i]).unwrap(),
                    "{} turn at {i}",
                    a.id
                );
                assert_eq!(a.recorded_pause_ms(i), b.recorded_pause_ms(i));
                turns += 1;
            }
        }
        assert_eq!(turns, 8 + 8 + 6 + 3);
    }

    #[test]
    fn a_message_is_sent_in_the_openai_shape_without_its_timestamp() {
        let s = parse_session(
            br#"{"id":"s","messages":[
                {"role":"user","content":"go","timestamp":"2025-01-01T00:00:00Z"},
                {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{\"p\":1}"}}],"timestamp":"2025-01-01T00:00:02Z"},
                {"role":"tool","tool_call_id":"c1","content":"a b","timestamp":"2025-01-01T00:00:03Z"},
                {"role":"user","content":"next","timestamp":"2025-01-01T00:01:03.5Z"},
                {"role":"assistant","content":"done","timestamp":"2025-01-01T00:01:09Z"}]}"#,
            7,
        )
        .unwrap();
        assert_eq!(s.line, 7);
        assert_eq!(s.turn_indices().collect::<Vec<_>>(), [1, 4]);
        assert_eq!(
            serde_json::to_string(&s.messages[..4]).unwrap(),
            r#"[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"function":{"arguments":"{\"p\":1}","name":"ls"},"id":"c1","type":"function"}]},{"role":"tool","content":"a b","tool_call_id":"c1"},{"role":"user","content":"next"}]"#
        );
        assert_eq!(s.recorded_pause_ms(1), None, "the first turn has no pause");
        // From the previous answer (00:00:02) to the user's message (00:01:03.5).
        assert_eq!(s.recorded_pause_ms(4), Some(61_500.0));
    }

    #[test]
    fn blocks_split_tool_results_from_text_and_drop_thinking() {
        let s = parse_session(
            br#"{"id":"b","messages":[
                {"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":"there"}]},
                {"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"tool_use","id":"t1","name":"grep","input":{"b":2,"a":"x"}},{"type":"tool_use","id":"t2","name":"ls"}]},
                {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"found"},{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]},{"type":"text","text":"thanks"}]},
                {"role":"assistant","content":[{"type":"text","text":"ok"}]}]}"#,
            1,
        )
        .unwrap();
        let m = &s.messages;
        assert_eq!(m.len(), 6);
        assert_eq!(m[0].content.as_deref(), Some("hi\nthere"));
        assert_eq!(m[1].content, None);
        assert_eq!(
            m[1].tool_calls,
            [
                RecordedCall {
                    id: "t1".into(),
                    name: "grep".into(),
                    arguments: r#"{"a":"x","b":2}"#.into()
                },
                RecordedCall {
                    id: "t2".into(),
                    name: "ls".into(),
                    arguments: "{}".into()
                }
            ]
        );
        assert_eq!(
            (
                m[2].role,
                m[2].tool_call_id.as_deref(),
                m[2].content.as_deref()
            ),
            (SessionRole::Tool, Some("t1"), Some("found"))
        );
        assert_eq!(m[3].content.as_deref(), Some("x\ny"));
        assert_eq!(
            (m[4].role, m[4].content.as_deref()),
            (SessionRole::User, Some("thanks"))
        );
        assert_eq!(m[5].content.as_deref(), Some("ok"));
    }

    #[test]
    fn bad_lines_name_the_field_and_what_to_fix() {
        let cases = [
            ("[1]", "", "expected a JSON object"),
            ("{\"id\":\"x\"", "", "not JSON"),
            (r#"{"messages":[]}"#, "id", "missing"),
            (r#"{"id":"x"}"#, "messages", "missing"),
            (
                r#"{"id":"x","messages":[{"role":"user","content":"q"}]}"#,
                "messages",
                "no assistant message",
            ),
            (
                r#"{"id":"x","messages":[{"role":"assistant","content":"a"}]}"#,
                "messages[0]",
                "nothing before it",
            ),
            (
                r#"{"id":"x","messages":[{"role":"robot","content":"q"}]}"#,
                "messages[0].role",
                "unknown role",
            ),
            (
                r#"{"id":"x","messages":[{"role":"user","content":"q","timestamp":"yesterday"}]}"#,
                "messages[0].timestamp",
                "RFC 3339",
            ),
            (
                r#"{"id":"x","messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"c","function":{"arguments":"{}"}}]}]}"#,
                "messages[1].tool_calls[0].function.name",
                "missing",
            ),
            (
                r#"{"id":"x","messages":[{"role":"user","content":"q"},{"role":"tool","tool_call_id":"nope","content":"r"},{"role":"assistant","content":"a"}]}"#,
                "messages[1]",
                "no earlier assistant message called",
            ),
            (
                r#"{"id":"x","messages":[{"role":"user","content":[{"type":"image"}]},{"role":"assistant","content":"a"}]}"#,
                "messages[0].content[0].type",
                "unknown block type",
            ),
            (
                r#"{"id":"x","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"zz","content":"r"}]},{"role":"assistant","content":"a"}]}"#,
                "messages[0]",
                "no earlier assistant message called",
            ),
            (
                r#"{"id":"x","tools":[{"type":"function","function":{}}],"messages":[]}"#,
                "tools[0].function.name",
                "missing",
            ),
            (
                r#"{"id":"x","messages":[{"role":"user"},{"role":"assistant","content":"a"}]}"#,
                "messages[0].content",
                "missing",
            ),
        ];
        for (line, field, words) in cases {
            let p = problem(line);
            assert_eq!(p.field, field, "{line}: {p}");
            assert!(p.problem.contains(words), "{line}: {p}");
        }
    }

    #[test]
    fn an_index_reads_each_session_again_and_notices_a_changed_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let original = std::fs::read_to_string(repo("sessions/agent-sessions.jsonl")).unwrap();
        std::fs::write(&path, format!("\u{feff}\n{original}")).unwrap();
        let index = SessionIndex::build(&path).unwrap();
        let whole = read_sessions(&repo("sessions/agent-sessions.jsonl")).unwrap();
        assert_eq!(index.entries.len(), whole.len());
        for (i, s) in whole.iter().enumerate() {
            let again = index.load(i).unwrap();
            assert_eq!(
                (&again.id, &again.messages, &again.tools),
                (&s.id, &s.messages, &s.tools)
            );
            assert_eq!(index.entries[i].turns, s.turn_indices().count());
            assert_eq!(again.line, i as u64 + 2, "after the BOM line");
        }
        std::fs::write(&path, original.replace("negative stock", "positive stock")).unwrap();
        let err = index.load(0).unwrap_err();
        assert!(err.contains("changed during the replay"), "{err}");
    }

    #[test]
    fn a_file_with_bad_lines_lists_each_with_its_line_and_sends_nothing() {
        let text = "\n{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"assistant\",\"content\":\"a\"}]}\nnot json\n{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"assistant\",\"content\":\"a\"}]}\n";
        let err = read_sessions_from(text.as_bytes(), Path::new("s.jsonl")).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("s.jsonl:3: not JSON"), "{message}");
        assert!(
            message.contains("s.jsonl:4: id: \"a\" is used by an earlier line"),
            "{message}"
        );
        assert!(message.contains("nothing was sent"), "{message}");
        let err = read_sessions_from(&b"\n\n"[..], Path::new("e.jsonl")).unwrap_err();
        assert!(matches!(err, SessionError::Empty(_)), "{err}");
    }
}
