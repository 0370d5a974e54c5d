//! Langfuse observations: the objects of a `GET /api/public/observations` response (v1:
//! `{"data": [...], "meta": {...}}`, often saved pretty-printed as one JSON document), the
//! observations alone (a JSON array, or one a line), and v2 / export rows (the same fields
//! in snake_case: `trace_id`, `start_time`, `usage_details`, `provided_model_name`).
//!
//! Only GENERATION observations are model calls; the others (SPAN, EVENT, TOOL, ...) carry
//! no conversation turn and are passed over. The generations of one trace are one
//! conversation ([`super::grouped`]), ordered by `startTime`: `input` (chat messages, a
//! `{"messages": [...]}` object, or a prompt string) is what the call was sent, `output`
//! (an assistant message or a string) its answer. `completionStartTime − startTime` is the
//! TTFT, `endTime − startTime` the E2E; a time the observation lacks leaves its timing
//! empty. Usage by Langfuse's own rule: every usage type whose name contains `input` counts
//! toward the prompt, `output` toward the completion (`usageDetails`, else the older
//! `usage` with `input`/`output` or `promptTokens`/`completionTokens`). An observation of
//! level ERROR is a failed turn, classified from its `statusMessage`.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::grouped::{Generation, Pieces};
use super::shape::{
    Dropped, MessagePaths, NamedPaths, Normalised, Shape, check_usage, parse_field, parse_record,
    unstored_fields,
};
use crate::client::completion::logged_error;
use crate::exchange::{ConversationLine, MessageLine, Object, Role, TimingLine, UsageLine};
use crate::jsonl::LineProblem;

#[derive(Deserialize)]
struct Page<'a> {
    #[serde(borrow)]
    data: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct Observation<'a> {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(rename = "traceId", alias = "trace_id")]
    trace_id: Option<String>,
    #[serde(rename = "startTime", alias = "start_time")]
    start: Option<String>,
    #[serde(rename = "endTime", alias = "end_time")]
    end: Option<String>,
    #[serde(rename = "completionStartTime", alias = "completion_start_time")]
    completion_start: Option<String>,
    model: Option<String>,
    #[serde(rename = "providedModelName", alias = "provided_model_name")]
    provided_model: Option<String>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
    #[serde(borrow)]
    output: Option<&'a RawValue>,
    usage: Option<Map<String, Value>>,
    #[serde(rename = "usageDetails", alias = "usage_details")]
    usage_details: Option<Map<String, Value>>,
    level: Option<String>,
    #[serde(rename = "statusMessage", alias = "status_message")]
    status_message: Option<String>,
}

/// Reads a record: one observation, or a page of them (`data`). Observations other than
/// generations give nothing.
pub(super) fn read(text: &[u8], lossy: bool) -> Result<Pieces, LineProblem> {
    let page: Page = parse_record(text)?;
    if let Some(data) = page.data {
        return Ok(data
            .iter()
            .enumerate()
            .filter_map(|(i, o)| observation(o.get().as_bytes(), &format!("data[{i}]."), lossy))
            .collect());
    }
    Ok(observation(text, "", lossy).into_iter().collect())
}

/// One observation, its fields named under `at`; `None` when it is not a generation.
fn observation(text: &[u8], at: &str, lossy: bool) -> Option<Result<Generation, LineProblem>> {
    let o: Observation = match parse_record(text) {
        Ok(o) => o,
        Err(mut p) => {
            p.field = format!("{at}{}", p.field).trim_end_matches('.').to_string();
            return Some(Err(p));
        }
    };
    match o.kind.as_deref() {
        Some(k) if k.eq_ignore_ascii_case("generation") => {}
        Some(_) => return None,
        None => {
            return Some(Err(LineProblem::new(
                format!("{at}type"),
                "missing; a Langfuse observation says its type (GENERATION for a model call)",
            )));
        }
    }
    // Fields are named as the record names them: v2 and export rows in snake_case.
    let snake = memchr_str(text, b"\"trace_id\"");
    Some(generation(o, at, snake, lossy))
}

fn memchr_str(text: &[u8], needle: &[u8]) -> bool {
    text.windows(needle.len()).any(|w| w == needle)
}

fn generation(
    o: Observation,
    at: &str,
    snake: bool,
    lossy: bool,
) -> Result<Generation, LineProblem> {
    let name =
        |camel: &str, snake_name: &str| format!("{at}{}", if snake { snake_name } else { camel });
    let Some(group) = o.trace_id.filter(|t| !t.trim().is_empty()) else {
        return Err(LineProblem::new(
            name("traceId", "trace_id"),
            "missing; the generations of one trace are one conversation",
        ));
    };
    let start = instant(&o.start, &name("startTime", "start_time"))?;
    let timing = timing(
        start,
        (
            instant(&o.end, &name("endTime", "end_time"))?,
            name("endTime", "end_time"),
        ),
        (
            instant(
                &o.completion_start,
                &name("completionStartTime", "completion_start_time"),
            )?,
            name("completionStartTime", "completion_start_time"),
        ),
    )?;
    let mut names = Vec::new();
    let mut messages = match o.input {
        Some(input) => input_messages(input, &format!("{at}input"))?,
        None => Vec::new(),
    };
    for i in 0..messages.len() {
        names.push(format!("{at}input[{i}]"));
    }
    let mut answer = match o.output {
        Some(output) => output_message(output, &format!("{at}output"))?,
        None => MessageLine::text(Role::Assistant, ""),
    };
    if o.output.is_none_or(|v| v.get() == "null") {
        answer.content = None;
    }
    if o.level.as_deref() == Some("ERROR") {
        let message = o.status_message.unwrap_or_else(|| "ERROR".into());
        if let Some((outcome, error)) = logged_error(&json!({"error": {"message": message}})) {
            answer.outcome = Some(outcome.as_str().to_string());
            answer.error = Some(error);
        }
    }
    answer.timing = Some(timing).filter(|t| !t.is_empty());
    answer.usage = match o.usage_details.filter(|u| !u.is_empty()) {
        Some(details) => usage(&details, &name("usageDetails", "usage_details"))?,
        None => match &o.usage {
            Some(u) => usage(u, &format!("{at}usage"))?,
            None => None,
        },
    };
    messages.push(answer);
    names.push(format!("{at}output"));
    let paths = MessagePaths::Named(Arc::new(NamedPaths {
        list: "input",
        messages: names,
        renamed: &[("outcome", "level")],
    }));
    let mut dropped = Dropped::default();
    unstored_fields(&messages, &paths, lossy, &mut dropped)?;
    let named = |m: Option<String>| m.filter(|m| !m.trim().is_empty());
    Ok(Generation {
        group,
        start_ms: start,
        normalised: Normalised {
            shape: Shape::Langfuse,
            line: ConversationLine {
                model: named(o.model).or(named(o.provided_model)),
                messages,
                ..ConversationLine::default()
            },
            paths,
            dropped,
        },
    })
}

/// A Langfuse time (RFC 3339, or ClickHouse's `2025-05-01 12:00:00.250` read as UTC) as
/// Unix milliseconds.
fn instant(v: &Option<String>, at: &str) -> Result<Option<f64>, LineProblem> {
    let Some(v) = v.as_deref().filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let t = v.replacen(' ', "T", 1);
    crate::timestamp::parse_rfc3339_ms(&t)
        .or_else(|| crate::timestamp::parse_rfc3339_ms(&format!("{t}Z")))
        .map(|ms| Some(ms as f64))
        .ok_or_else(|| {
            LineProblem::new(
                at,
                format!("{v:?} is not a time; expected RFC 3339, such as 2025-05-01T12:00:00.250Z"),
            )
        })
}

/// E2E from `endTime`, TTFT from `completionStartTime`, both since `startTime`. A first
/// token at the very end (a call not streamed) is not a TTFT: left empty.
fn timing(
    start: Option<f64>,
    end: (Option<f64>, String),
    first: (Option<f64>, String),
) -> Result<TimingLine, LineProblem> {
    let since = |(t, name): (Option<f64>, String)| -> Result<Option<f64>, LineProblem> {
        match (start, t) {
            (Some(s), Some(t)) if t < s => Err(LineProblem::new(
                name,
                format!(
                    "{} ms before startTime; a call cannot end or answer before it starts",
                    s - t
                ),
            )),
            (Some(s), Some(t)) => Ok(Some(((t - s) * 1000.0).round() / 1000.0)),
            _ => Ok(None),
        }
    };
    let e2e_ms = since(end)?;
    let ttft_ms = since(first)?.filter(|f| e2e_ms.is_none_or(|e| *f < e));
    Ok(TimingLine {
        ttft_ms,
        ttfa_ms: None,
        e2e_ms,
    })
}

/// A field that may hold JSON as a string (export rows keep `input` and `output` so).
fn unwrap_json(raw: &RawValue) -> Option<Value> {
    let s: String = serde_json::from_str(raw.get()).ok()?;
    let t = s.trim_start();
    if t.starts_with('[') || t.starts_with('{') {
        serde_json::from_str(&s).ok()
    } else {
        None
    }
}

/// `input`: chat messages, `{"messages": [...]}`, or a prompt string.
fn input_messages(raw: &RawValue, at: &str) -> Result<Vec<MessageLine>, LineProblem> {
    let text = match unwrap_json(raw) {
        Some(v) => v.to_string(),
        None => raw.get().to_string(),
    };
    let value: Value =
        serde_json::from_str(&text).map_err(|e| LineProblem::new(at, format!("not JSON: {e}")))?;
    let (list, at) = match &value {
        Value::Null => return Ok(Vec::new()),
        Value::String(s) => return Ok(vec![MessageLine::text(Role::User, s.clone())]),
        Value::Array(_) => (value.to_string(), at.to_string()),
        Value::Object(o) if o.get("messages").is_some_and(Value::is_array) => (
            o.get("messages").map(Value::to_string).unwrap_or_default(),
            format!("{at}.messages"),
        ),
        _ => {
            return Err(LineProblem::new(
                at,
                "expected chat messages (an array of {role, content}), an object with \
                 \"messages\", or a prompt string",
            ));
        }
    };
    let list: Box<RawValue> =
        serde_json::from_str(&list).map_err(|e| LineProblem::new(&at, format!("not JSON: {e}")))?;
    let messages: Vec<Object<MessageLine>> = parse_field(&at, &list)?;
    Ok(messages.into_iter().map(|o| o.0).collect())
}

/// `output`: an assistant message, an object with `content`, or the answer's text.
fn output_message(raw: &RawValue, at: &str) -> Result<MessageLine, LineProblem> {
    let value = match unwrap_json(raw) {
        Some(v) => v,
        None => serde_json::from_str(raw.get())
            .map_err(|e| LineProblem::new(at, format!("not JSON: {e}")))?,
    };
    match value {
        Value::Null => Ok(MessageLine::text(Role::Assistant, "")),
        Value::String(s) => Ok(MessageLine::text(Role::Assistant, s)),
        Value::Object(mut o) => {
            o.entry("role").or_insert_with(|| json!("assistant"));
            let text = Value::Object(o).to_string();
            let raw: Box<RawValue> = serde_json::from_str(&text)
                .map_err(|e| LineProblem::new(at, format!("not JSON: {e}")))?;
            let Object(m): Object<MessageLine> = parse_field(at, &raw)?;
            if m.role != Role::Assistant {
                return Err(LineProblem::new(
                    format!("{at}.role"),
                    "expected \"assistant\": the output is the model's answer",
                ));
            }
            Ok(m)
        }
        _ => Err(LineProblem::new(
            at,
            "expected an assistant message, an object with \"content\", or the answer's text",
        )),
    }
}

/// Usage by Langfuse's rule: a type whose name contains `input` is prompt, `output`
/// completion; cached and reasoning types are the ones that also say so.
fn usage(u: &Map<String, Value>, at: &str) -> Result<Option<UsageLine>, LineProblem> {
    let mut prompt = None;
    let mut completion = None;
    let mut cached = None;
    let mut reasoning = None;
    let add = |to: &mut Option<i64>, n: i64| *to = Some(to.unwrap_or(0) + n);
    for (key, v) in u {
        if key == "unit" || key.starts_with("total") || v.is_null() {
            continue;
        }
        let Some(n) = v.as_i64() else {
            return Err(LineProblem::new(
                format!("{at}.{key}"),
                format!("wrong type: {v}, expected a whole number"),
            ));
        };
        let k = key.to_ascii_lowercase();
        if k.contains("input") || k == "prompttokens" {
            add(&mut prompt, n);
            if k.contains("cache_read") || k.contains("cached") {
                add(&mut cached, n);
            }
        } else if k.contains("output") || k == "completiontokens" {
            add(&mut completion, n);
            if k.contains("reasoning") {
                add(&mut reasoning, n);
            }
        }
    }
    let usage = UsageLine {
        prompt_tokens: prompt,
        completion_tokens: completion,
        cached_tokens: cached,
        reasoning_tokens: reasoning,
    };
    check_usage(&usage, &|field| format!("{at}.{field}"))?;
    Ok(Some(usage).filter(|u| !u.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Result<Generation, LineProblem> {
        let mut pieces = read(text.as_bytes(), false)?;
        assert_eq!(pieces.len(), 1);
        pieces.remove(0)
    }

    #[test]
    fn a_generation_keeps_messages_timings_and_usage() {
        let g = one(
            r#"{"id":"o1","traceId":"t1","type":"GENERATION","startTime":"2025-05-01T12:00:00.000Z","completionStartTime":"2025-05-01T12:00:00.250Z","endTime":"2025-05-01T12:00:01.500Z","model":"gpt-4o","input":[{"role":"system","content":"S"},{"role":"user","content":"Q"}],"output":{"role":"assistant","content":"A"},"usageDetails":{"input":80,"input_cached_tokens":20,"output":5,"output_reasoning_tokens":2,"total":107}}"#,
        )
        .unwrap();
        assert_eq!(g.group, "t1");
        let m = &g.normalised.line.messages;
        assert_eq!(m.len(), 3);
        let t = m[2].timing.unwrap();
        assert_eq!((t.ttft_ms, t.e2e_ms), (Some(250.0), Some(1500.0)));
        let u = m[2].usage.unwrap();
        assert_eq!(
            (
                u.prompt_tokens,
                u.cached_tokens,
                u.completion_tokens,
                u.reasoning_tokens
            ),
            (Some(100), Some(20), Some(7), Some(2))
        );
        assert_eq!(g.normalised.line.model.as_deref(), Some("gpt-4o"));
    }

    #[test]
    fn v2_rows_spans_and_bad_fields() {
        let g = one(
            r#"{"trace_id":"t2","type":"GENERATION","start_time":"2025-05-01 12:00:00.000","provided_model_name":"m","input":"[{\"role\":\"user\",\"content\":\"Q\"}]","output":"A","usage_details":{"input":3,"output":1}}"#,
        )
        .unwrap();
        let m = &g.normalised.line.messages;
        assert_eq!(m[1].content.as_deref(), Some("A"));
        assert_eq!(m[1].timing, None);
        assert_eq!(g.normalised.line.model.as_deref(), Some("m"));
        assert!(
            read(br#"{"traceId":"t","type":"SPAN","input":{"x":1}}"#, false)
                .unwrap()
                .is_empty()
        );
        let p = one(r#"{"traceId":"t","type":"GENERATION","startTime":"2025-05-01T12:00:01Z","endTime":"2025-05-01T12:00:00Z"}"#).unwrap_err();
        assert_eq!(p.field, "endTime");
        let pieces = read(
            br#"{"data":[{"traceId":"t","type":"GENERATION","input":"Q","output":"A"},{"traceId":"t","type":"GENERATION","input":[{"role":"robot","content":"Q"}],"output":"A"}],"meta":{"page":1}}"#,
            false,
        )
        .unwrap();
        assert!(pieces[0].is_ok());
        let p = pieces[1].as_ref().unwrap_err();
        assert!(p.field.starts_with("data[1].input[0]"), "{p}");
        // Something else under `data` is not passed over without a word.
        let pieces = read(br#"{"data":[{"name":"x"}]}"#, false).unwrap();
        assert_eq!(pieces[0].as_ref().unwrap_err().field, "data[0].type");
    }
}
