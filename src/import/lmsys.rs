//! Rows of the public chat datasets: LMSYS-Chat-1M (`conversation_id`, `model`,
//! `conversation`: [{role, content}], `turn`, `language`, `openai_moderation`, `redacted`)
//! and WildChat (`conversation_hash`, `model`, `timestamp`, `conversation` whose messages
//! also carry `timestamp`, `language`, `toxic`, `country`, `header`, ...).
//!
//! `conversation` is the messages, `model` the model, `conversation_id` (else
//! `conversation_hash`) the identity: two rows with the same text and different ids stay
//! two conversations. Message timestamps say when a person wrote, not how long a request
//! took: timings stay empty. The per-message metadata the datasets add (language, toxicity,
//! moderation, location, headers) is not conversation content; any other field of a
//! message that carries something refuses the row naming it, or with `--lossy` is dropped
//! and counted.

use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::shape::{Dropped, MessagePaths, NamedPaths, Normalised, RawLine, Shape, parse_field};
use crate::exchange::{MessageLine, Role};
use crate::jsonl::LineProblem;

/// Message fields the datasets add beside `role` and `content`: metadata, not content.
const METADATA: [&str; 10] = [
    "timestamp",
    "language",
    "toxic",
    "redacted",
    "country",
    "state",
    "hashed_ip",
    "header",
    "turn_identifier",
    "openai_moderation",
];

pub(super) fn normalise(mut raw: RawLine, lossy: bool) -> Result<Normalised, LineProblem> {
    let mut line = raw.take_common();
    let Some(conversation) = raw.conversation else {
        return Err(LineProblem::new("conversation", "missing"));
    };
    if line.id.is_none() {
        line.id = identity(raw.conversation_id, "conversation_id")?
            .or(identity(raw.conversation_hash, "conversation_hash")?);
    }
    let rows: Vec<Value> = parse_field("conversation", conversation)?;
    let mut dropped = Dropped::default();
    let mut names = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let at = format!("conversation[{i}]");
        line.messages.push(message(row, &at, lossy, &mut dropped)?);
        names.push(at);
    }
    Ok(Normalised {
        shape: Shape::Lmsys,
        line,
        paths: MessagePaths::Named(Arc::new(NamedPaths {
            list: "conversation",
            messages: names,
            renamed: &[],
        })),
        dropped,
    })
}

/// `conversation_id` or `conversation_hash`: a non-blank string (a number is its text).
fn identity(v: Option<&RawValue>, name: &str) -> Result<Option<String>, LineProblem> {
    let Some(v) = v else { return Ok(None) };
    match parse_field::<Value>(name, v)? {
        Value::Null => Ok(None),
        Value::String(s) if !s.trim().is_empty() => Ok(Some(s)),
        Value::Number(n) => Ok(Some(n.to_string())),
        _ => Err(LineProblem::new(
            name,
            "expected a non-blank string: the row's identity",
        )),
    }
}

fn message(
    row: &Value,
    at: &str,
    lossy: bool,
    dropped: &mut Dropped,
) -> Result<MessageLine, LineProblem> {
    let Some(row) = row.as_object() else {
        return Err(LineProblem::new(at, "wrong type: expected an object"));
    };
    let role = match row.get("role").and_then(Value::as_str) {
        Some("user" | "human") => Role::User,
        Some("assistant" | "gpt" | "bot") => Role::Assistant,
        Some("system") => Role::System,
        Some(other) => {
            return Err(LineProblem::new(
                format!("{at}.role"),
                format!(
                    "unknown role {other:?}; expected user (or human), assistant (or gpt, \
                     bot) or system"
                ),
            ));
        }
        None => return Err(LineProblem::new(format!("{at}.role"), "missing")),
    };
    let content = match row.get("content") {
        Some(Value::String(s)) => Some(s.clone()),
        None | Some(Value::Null) => None,
        Some(_) => {
            return Err(LineProblem::new(
                format!("{at}.content"),
                "wrong type: expected a string",
            ));
        }
    };
    for (key, value) in row {
        let carries = !(value.is_null() || value.as_str() == Some(""));
        if !["role", "content"].contains(&key.as_str())
            && !METADATA.contains(&key.as_str())
            && carries
        {
            dropped.drop_or_refuse(
                lossy,
                format!("{at}.{key}"),
                key,
                &format!("a {key:?} field"),
            )?;
        }
    }
    let mut m = MessageLine::text(role, "");
    m.content = content;
    Ok(m)
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
    fn lmsys_and_wildchat_rows_read_with_their_identity() {
        let n = read(
            r#"{"conversation_id":"33f0","model":"vicuna-13b","conversation":[{"content":"Hi","role":"user"},{"content":"Hello!","role":"assistant"}],"turn":1,"language":"English","redacted":false}"#,
            false,
        )
        .unwrap();
        assert_eq!(n.shape, Shape::Lmsys);
        assert_eq!(n.line.id.as_deref(), Some("33f0"));
        assert_eq!(n.line.model.as_deref(), Some("vicuna-13b"));
        assert_eq!(n.line.messages[1].content.as_deref(), Some("Hello!"));
        assert_eq!(n.line.messages[1].timing, None);
        let n = read(
            r#"{"conversation_hash":"ab12","model":"gpt-4-0314","timestamp":"2023-04-09 00:02:53+00:00","conversation":[{"content":"Hi","role":"user","timestamp":null,"language":"English","toxic":false,"country":"FR","header":{"accept-language":"fr"}},{"content":"Bonjour","role":"assistant","timestamp":"2023-04-09 00:02:55+00:00","turn_identifier":1}],"turn":1}"#,
            false,
        )
        .unwrap();
        assert_eq!(n.line.id.as_deref(), Some("ab12"));
        let p = read(
            r#"{"conversation_id":"x","conversation":[{"content":"Hi","role":"user","attachments":["a.pdf"]},{"content":"A","role":"assistant"}]}"#,
            false,
        )
        .unwrap_err();
        assert_eq!(p.field, "conversation[0].attachments");
        let p = read(
            r#"{"conversation_id":"x","conversation":[{"content":"Hi","role":"robot"}]}"#,
            false,
        )
        .unwrap_err();
        assert_eq!(p.field, "conversation[0].role");
    }
}
