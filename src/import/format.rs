//! One record read as the format allows: its shape recognised by [`super::shape`], then
//! read by that shape's reader (turnbench's own here, [`super::sharegpt`],
//! [`super::openai_log`], [`super::anthropic`], [`super::lmsys`]) into the normalised
//! conversation.

use super::grouped::{Groups, Pieces};
use super::responses::{self, Call};
use super::shape::{
    Dropped, MessagePaths, Normalised, Shape, ShapeFilter, parse_raw, unstored_fields,
};
use super::{anthropic, langfuse, lmsys, openai_log, otel, sharegpt};
use crate::exchange::ConversationLine;
use crate::jsonl::LineProblem;

/// Reads one record (a line, or an element of a JSON array) as `format` allows; content
/// turnbench does not store refuses it.
pub fn read_record(text: &[u8], format: ShapeFilter) -> Result<Normalised, LineProblem> {
    read_record_as(text, format, false)
}

/// Reads one record as `format` allows; with `lossy`, content turnbench does not store is
/// dropped and counted instead of refusing the record. An OpenAI Responses call is read
/// as the conversation of that call alone (the reader joins chained calls); the model
/// calls of a trace record (Langfuse, OpenTelemetry) as the first conversation they make
/// alone.
pub fn read_record_as(
    text: &[u8],
    format: ShapeFilter,
    lossy: bool,
) -> Result<Normalised, LineProblem> {
    match read_any(text, format, lossy)? {
        Record::Whole(n) => Ok(n),
        Record::Call(call) => Ok(call.normalised),
        Record::Pieces(pieces) => {
            let mut groups = Groups::default();
            for piece in pieces {
                groups.add((), piece?);
            }
            match groups.join().into_iter().next() {
                Some((_, n)) => n,
                None => Err(LineProblem::new(
                    "",
                    "no model call in this record (no GENERATION observation, no GenAI chat \
                     span)",
                )),
            }
        }
    }
}

/// A record read: a whole conversation, or one call of a chain.
pub(super) enum Record {
    Whole(Normalised),
    /// An OpenAI Responses call, which `previous_response_id` may chain to others.
    Call(Call),
    /// Model calls of traces (Langfuse observations, OpenTelemetry spans), joined by trace
    /// at the end of the file; each one read, or refused naming its field.
    Pieces(Pieces),
}

pub(super) fn read_any(
    text: &[u8],
    format: ShapeFilter,
    lossy: bool,
) -> Result<Record, LineProblem> {
    let whole = |n: Result<Normalised, LineProblem>| n.map(Record::Whole);
    let mut raw = match parse_raw(text) {
        Ok(raw) => raw,
        // `messages` holding Anthropic content blocks (no `system` marked them).
        Err(p)
            if matches!(
                format,
                ShapeFilter::Auto | ShapeFilter::Only(Shape::Anthropic)
            ) && anthropic::is_block_problem(&p) =>
        {
            return whole(anthropic::read(text, lossy));
        }
        // `--lossy`: a turnbench record read again without its non-text content parts.
        Err(p) if lossy && p.problem.contains("only text parts can be imported") => {
            return without_other_parts(text, format);
        }
        Err(p) => return Err(p),
    };
    let mut normalised = match raw.shape(format)? {
        Shape::Turnbench => {
            let messages = raw.messages.take().unwrap_or_default();
            Normalised {
                shape: Shape::Turnbench,
                line: ConversationLine {
                    messages,
                    ..raw.take_common()
                },
                paths: MessagePaths::Messages,
                dropped: Dropped::default(),
            }
        }
        Shape::ShareGpt => sharegpt::normalise(raw)?,
        Shape::OpenAiLog => openai_log::normalise(raw)?,
        // Content blocks and items are read from the record's text, whole.
        Shape::Anthropic => return whole(anthropic::read(text, lossy)),
        Shape::Lmsys => return whole(lmsys::normalise(raw, lossy)),
        Shape::Responses => return Ok(Record::Call(responses::read(text, lossy)?)),
        Shape::Langfuse => return Ok(Record::Pieces(langfuse::read(text, lossy)?)),
        Shape::Otel => return Ok(Record::Pieces(otel::read(text, lossy)?)),
    };
    unstored_fields(
        &normalised.line.messages,
        &normalised.paths,
        lossy,
        &mut normalised.dropped,
    )?;
    Ok(Record::Whole(normalised))
}

/// A record whose `messages` hold content parts other than text (`image_url`,
/// `input_audio`, `file`, ...), read with them dropped and counted by type. The slow path:
/// only a record `--lossy` would otherwise refuse is parsed twice.
fn without_other_parts(text: &[u8], format: ShapeFilter) -> Result<Record, LineProblem> {
    let mut value: serde_json::Value =
        serde_json::from_slice(text).map_err(|e| LineProblem::new("", format!("not JSON: {e}")))?;
    let mut dropped = Dropped::default();
    for message in value
        .get_mut("messages")
        .and_then(serde_json::Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(parts) = message
            .get_mut("content")
            .and_then(serde_json::Value::as_array_mut)
        {
            parts.retain(
                |part| match part.get("type").and_then(serde_json::Value::as_str) {
                    Some("text") => true,
                    other => {
                        dropped.add(other.unwrap_or("untyped part"));
                        false
                    }
                },
            );
        }
    }
    let stripped = value.to_string();
    match read_any(stripped.as_bytes(), format, true)? {
        Record::Whole(mut n) => {
            n.dropped.merge(&dropped);
            Ok(Record::Whole(n))
        }
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::super::shape::*;
    use super::*;

    #[test]
    fn formats_parse_by_name() {
        assert_eq!("auto".parse(), Ok(ShapeFilter::Auto));
        assert_eq!("sharegpt".parse(), Ok(ShapeFilter::Only(Shape::ShareGpt)));
        assert_eq!(
            "openai-log".parse(),
            Ok(ShapeFilter::Only(Shape::OpenAiLog))
        );
        let err = "jsonl".parse::<ShapeFilter>().unwrap_err();
        assert_eq!(
            err,
            "unknown format \"jsonl\"; expected one of auto, turnbench, sharegpt, openai-log, \
             anthropic, lmsys, responses, langfuse, otel"
        );
        for shape in Shape::ALL {
            assert_eq!(
                ShapeFilter::Only(shape).to_string().parse(),
                Ok(ShapeFilter::Only(shape))
            );
        }
    }

    #[test]
    fn shapes_are_recognised_by_their_keys() {
        let shape = |text: &str| read_record(text.as_bytes(), ShapeFilter::Auto).map(|n| n.shape);
        let chat =
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#;
        assert_eq!(shape(chat), Ok(Shape::Turnbench));
        let share =
            r#"{"conversations":[{"from":"human","value":"Q"},{"from":"gpt","value":"A"}]}"#;
        assert_eq!(shape(share), Ok(Shape::ShareGpt));
        let log = r#"{"request":{"messages":[{"role":"user","content":"Q"}]},"response":{"choices":[{"message":{"content":"A"}}]}}"#;
        assert_eq!(shape(log), Ok(Shape::OpenAiLog));
        let log_request_only = r#"{"request":{"messages":[{"role":"user","content":"Q"}]}}"#;
        assert_eq!(
            read_record(log_request_only.as_bytes(), ShapeFilter::Auto)
                .unwrap_err()
                .field,
            "response"
        );
        // A field only another shape reads is ignored, whatever it holds.
        let odd = r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}],"metadata":"x","conversations_total":[1],"startTime":"soon","request":"GET /"}"#;
        assert_eq!(shape(odd), Ok(Shape::Turnbench));
        // A top-level `system` beside `messages` is Anthropic's (turnbench has none: it
        // was dropped without a word before).
        let anthropic = r#"{"system":"Be terse.","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#;
        assert_eq!(shape(anthropic), Ok(Shape::Anthropic));
        let lmsys = r#"{"conversation_id":"c","conversation":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#;
        assert_eq!(shape(lmsys), Ok(Shape::Lmsys));
        let claude_log = r#"{"request":{"messages":[{"role":"user","content":"Q"}]},"response":{"content":[{"type":"text","text":"A"}],"stop_reason":"end_turn"}}"#;
        assert_eq!(shape(claude_log), Ok(Shape::Anthropic));
        let responses_log = r#"{"request":{"input":"Q"},"response":{"object":"response","output":[{"type":"message","role":"assistant","content":"A"}]}}"#;
        assert_eq!(shape(responses_log), Ok(Shape::Responses));
        // An OpenAI error object is still a chat log's failed call.
        let chat_error = r#"{"request":{"messages":[{"role":"user","content":"Q"}]},"response":{"error":{"message":"x"}}}"#;
        assert_eq!(shape(chat_error), Ok(Shape::OpenAiLog));
        let p = shape("{\"id\":\"x\"}").unwrap_err();
        assert_eq!(p.field, "messages");
        assert!(
            p.problem.contains("\"conversations\" array (ShareGPT)"),
            "{p}"
        );
    }

    #[test]
    fn lossy_drops_and_counts_content_parts_other_than_text() {
        let line = br#"{"messages":[{"role":"user","content":[{"type":"text","text":"What is it?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}}]},{"role":"assistant","content":"A cat."}]}"#;
        let p = read_record(line, ShapeFilter::Auto).unwrap_err();
        assert_eq!(p.field, "messages[0].content");
        assert!(p.problem.contains("--lossy"), "{p}");
        let n = read_record_as(line, ShapeFilter::Auto, true).unwrap();
        assert_eq!(n.shape, Shape::Turnbench);
        assert_eq!(n.line.messages[0].content.as_deref(), Some("What is it?"));
        assert_eq!(n.dropped.get("image_url"), 1);
    }

    #[test]
    fn an_explicit_format_refuses_other_shapes() {
        let share =
            br#"{"conversations":[{"from":"human","value":"Q"},{"from":"gpt","value":"A"}]}"#;
        let p = read_record(share, ShapeFilter::Only(Shape::Turnbench)).unwrap_err();
        assert_eq!(
            p.to_string(),
            "not a turnbench record: it has a \"conversations\" array, the sharegpt shape, \
             where turnbench needs a \"messages\" array; import with --format sharegpt (or \
             --format auto)"
        );
        let p = read_record(br#"{"id":"x"}"#, ShapeFilter::Only(Shape::OpenAiLog)).unwrap_err();
        assert_eq!(p.field, "response");
        assert!(
            p.problem
                .starts_with("missing; every openai-log record needs"),
            "{p}"
        );
        // A record with the keys of two shapes is read as the one asked for.
        let both = br#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}],"response":{"x":1}}"#;
        let n = read_record(both, ShapeFilter::Only(Shape::Turnbench)).unwrap();
        assert_eq!((n.shape, n.line.messages.len()), (Shape::Turnbench, 2));
    }

    #[test]
    fn raw_fields_are_named_from_their_key() {
        let p = read_record(
            br#"{"conversations":[{"from":"human","value":"Q"},{"from":"gpt"}]}"#,
            ShapeFilter::Auto,
        )
        .unwrap_err();
        assert_eq!(
            (p.field.as_str(), p.problem.as_str()),
            ("conversations[1].value", "missing")
        );
        let p =
            read_record(br#"{"conversations":{"from":"human"}}"#, ShapeFilter::Auto).unwrap_err();
        assert_eq!(p.field, "conversations");
        assert_eq!(p.problem, "wrong type: object, expected an array");
    }

    #[test]
    fn message_paths_follow_the_shape() {
        assert_eq!(MessagePaths::Messages.message(3), "messages[3]");
        let share = MessagePaths::ShareGpt { system_field: true };
        assert_eq!(
            (share.message(0), share.message(3)),
            ("system".into(), "conversations[2]".into())
        );
        let log = MessagePaths::Log {
            top_level: false,
            answer: 2,
        };
        assert_eq!(log.message(1), "request.messages[1]");
        assert_eq!(log.message(2), "response.choices[0].message");
        assert_eq!(
            MessagePaths::Log {
                top_level: true,
                answer: 2
            }
            .list(),
            "messages"
        );
        assert_eq!(share.field(2, "content"), "conversations[1].value");
        assert_eq!(
            log.field(2, "finish_reason"),
            "response.choices[0].finish_reason"
        );
        assert_eq!(log.field(1, "content"), "request.messages[1].content");
    }

    #[test]
    fn counts_list_the_shapes_read() {
        let mut counts = ShapeCounts::default();
        assert!(counts.is_empty());
        for shape in [Shape::OpenAiLog, Shape::ShareGpt, Shape::OpenAiLog] {
            counts.add(shape);
        }
        assert_eq!(counts.to_string(), "sharegpt 1, openai-log 2");
    }
}
