//! Gateway and proxy logs, one call per line (LiteLLM-style proxies, observability
//! exports): `{"request": {"model", "messages": […]}, "response": {"choices": [{"message",
//! "finish_reason"}], "usage"}}`. A line is a whole conversation: the request's messages are
//! its history, the response's first choice its final answer.
//!
//! The response is read as `collect` reads a whole body ([`AnswerAccumulator`]): reasoning
//! from `reasoning_content`, `reasoning` or a leading `<think>` block, usage in its gateway
//! variants. A response that is an error object is the failed final turn, classified as
//! `collect` classifies one.
//!
//! Timings, at the top level or in `metadata` (the top level wins): `ttft_ms`, and
//! `latency_ms` or `duration_ms`, in milliseconds; else LiteLLM's `startTime`, `endTime` and
//! `completionStartTime` (Unix seconds, or RFC 3339 times). Without them timings stay
//! empty, never 0.

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_json::value::RawValue;

use super::shape::{
    Dropped, MessagePaths, Normalised, RawLine, Shape, check_usage, optional_objects, parse_field,
    parse_record,
};
use crate::client::completion::{AnswerAccumulator, logged_error};
use crate::exchange::{MessageLine, Object, Role, TimingLine, ToolCallLine, UsageLine};
use crate::jsonl::LineProblem;
use crate::outcome::TurnOutcome;

#[derive(Deserialize)]
struct Request {
    model: Option<String>,
    #[serde(default, deserialize_with = "optional_objects")]
    messages: Option<Vec<MessageLine>>,
}

/// The response's fields read here; the rest is the answer reader's.
#[derive(Deserialize)]
struct ResponseHead {
    model: Option<String>,
}

/// Timing fields as a line gives them; instants in milliseconds since the epoch.
#[derive(Debug, Default, Deserialize)]
struct Times {
    ttft_ms: Option<f64>,
    latency_ms: Option<f64>,
    duration_ms: Option<f64>,
    #[serde(rename = "startTime")]
    start: Option<Instant>,
    #[serde(rename = "endTime")]
    end: Option<Instant>,
    #[serde(rename = "completionStartTime")]
    completion_start: Option<Instant>,
}

/// Milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Instant(f64);

impl<'de> Deserialize<'de> for Instant {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct InstantVisitor;
        impl Visitor<'_> for InstantVisitor {
            type Value = Instant;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("Unix seconds or an RFC 3339 time")
            }
            fn visit_f64<E: de::Error>(self, secs: f64) -> Result<Instant, E> {
                // 1e11 s is the year 5138: a larger number is milliseconds, not seconds.
                if !(0.0..1e11).contains(&secs) {
                    return Err(E::custom(format_args!(
                        "{secs} is not Unix seconds (milliseconds?); give seconds, as \
                         LiteLLM writes them, or an RFC 3339 time"
                    )));
                }
                Ok(Instant(secs * 1000.0))
            }
            fn visit_u64<E: de::Error>(self, secs: u64) -> Result<Instant, E> {
                self.visit_f64(secs as f64)
            }
            fn visit_i64<E: de::Error>(self, secs: i64) -> Result<Instant, E> {
                self.visit_f64(secs as f64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Instant, E> {
                // Without an offset (Python's isoformat of a naive time) it is read as UTC:
                // only differences between the line's own times are used.
                crate::timestamp::parse_rfc3339_ms(v)
                    .or_else(|| crate::timestamp::parse_rfc3339_ms(&format!("{v}Z")))
                    .map(|ms| Instant(ms as f64))
                    .ok_or_else(|| {
                        E::custom(format_args!(
                            "{v:?} is not a time; expected Unix seconds or an RFC 3339 time \
                             such as 2025-05-01T12:00:00.250Z"
                        ))
                    })
            }
        }
        d.deserialize_any(InstantVisitor)
    }
}

/// A record's timing fields, at its top level or in `metadata` (the top level wins), for
/// shapes read whole rather than through [`RawLine`].
pub(super) fn record_timing(text: &[u8]) -> Result<Option<TimingLine>, LineProblem> {
    #[derive(Deserialize)]
    struct Metadata {
        metadata: Option<Object<Times>>,
    }
    let top: Times = parse_record(text)?;
    let meta: Metadata = parse_record(text)?;
    let times = top.or(meta.metadata.map(|o| o.0).unwrap_or_default());
    Ok(Some(times.timing()?).filter(|t| !t.is_empty()))
}

impl Times {
    /// The top-level timing fields.
    fn top_level(raw: &RawLine) -> Result<Times, LineProblem> {
        fn field<'a, T: Deserialize<'a>>(
            name: &str,
            v: Option<&'a RawValue>,
        ) -> Result<Option<T>, LineProblem> {
            Ok(v.map(|v| parse_field::<Option<T>>(name, v))
                .transpose()?
                .flatten())
        }
        Ok(Times {
            ttft_ms: field("ttft_ms", raw.ttft_ms)?,
            latency_ms: field("latency_ms", raw.latency_ms)?,
            duration_ms: field("duration_ms", raw.duration_ms)?,
            start: field("startTime", raw.start_time)?,
            end: field("endTime", raw.end_time)?,
            completion_start: field("completionStartTime", raw.completion_start_time)?,
        })
    }

    /// Each field from `self`, else from `other`.
    fn or(self, other: Times) -> Times {
        Times {
            ttft_ms: self.ttft_ms.or(other.ttft_ms),
            latency_ms: self.latency_ms.or(other.latency_ms),
            duration_ms: self.duration_ms.or(other.duration_ms),
            start: self.start.or(other.start),
            end: self.end.or(other.end),
            completion_start: self.completion_start.or(other.completion_start),
        }
    }

    /// TTFT and E2E, given or from the instants; checked, so that a problem names the
    /// fields the line has. A first token at the very end (LiteLLM's `completionStartTime`
    /// of a call that was not streamed) is not a measured TTFT: left empty.
    fn timing(&self) -> Result<TimingLine, LineProblem> {
        for (name, v) in [
            ("ttft_ms", self.ttft_ms),
            ("latency_ms", self.latency_ms),
            ("duration_ms", self.duration_ms),
        ] {
            if let Some(v) = v.filter(|v| *v < 0.0) {
                return Err(LineProblem::new(
                    name,
                    format!("{v} is negative; timings are milliseconds from the request start"),
                ));
            }
        }
        let since_start = |name: &str, at: Option<Instant>| -> Result<Option<f64>, LineProblem> {
            match (self.start, at) {
                (Some(start), Some(at)) if at.0 < start.0 => Err(LineProblem::new(
                    name,
                    format!(
                        "{} ms before startTime; a call cannot end or answer before it starts",
                        start.0 - at.0
                    ),
                )),
                // Microseconds: epoch milliseconds in an f64 carry float noise below that.
                (Some(start), Some(at)) => Ok(Some(((at.0 - start.0) * 1000.0).round() / 1000.0)),
                _ => Ok(None),
            }
        };
        let end = since_start("endTime", self.end)?;
        let first = since_start("completionStartTime", self.completion_start)?
            .filter(|first| end.is_none_or(|end| *first < end));
        let e2e_ms = self.latency_ms.or(self.duration_ms).or(end);
        let ttft_ms = self.ttft_ms.or(first);
        if let (Some(ttft), Some(e2e)) = (ttft_ms, e2e_ms)
            && ttft > e2e
        {
            return Err(LineProblem::new(
                "ttft_ms",
                format!(
                    "the first token ({ttft} ms) comes after the end of the call ({e2e} ms); \
                     check ttft_ms or completionStartTime against latency_ms, duration_ms or endTime"
                ),
            ));
        }
        Ok(TimingLine {
            ttft_ms,
            ttfa_ms: None,
            e2e_ms,
        })
    }
}

/// The request's messages, then the response's answer with its timing and usage.
pub(super) fn normalise(mut raw: RawLine) -> Result<Normalised, LineProblem> {
    let mut line = raw.take_common();
    let request = match raw.request {
        Some(r) => Some(parse_field::<Object<Request>>("request", r)?.0),
        None => None,
    };
    let (request_model, request_messages) = match request {
        Some(r) => (r.model, r.messages),
        None => (None, None),
    };
    let (history, top_level) = match (request_messages, raw.messages.take()) {
        (Some(m), _) => (m, false),
        (None, Some(m)) => (m, true),
        (None, None) => {
            return Err(LineProblem::new(
                "request.messages",
                "missing; the request's messages are the conversation's history",
            ));
        }
    };
    let Some(response) = raw.response else {
        return Err(LineProblem::new(
            "response",
            "missing; a log line needs the response whose answer is scored",
        ));
    };
    let times = Times::top_level(&raw)?;
    let times = match raw.metadata {
        Some(m) => times.or(parse_field::<Option<Object<Times>>>("metadata", m)?
            .map(|o| o.0)
            .unwrap_or_default()),
        None => times,
    };
    let paths = MessagePaths::Log {
        top_level,
        answer: history.len(),
    };
    let head: Object<ResponseHead> = parse_field("response", response)?;
    let mut answer = read_answer(response)?;
    answer.timing = Some(times.timing()?).filter(|t| !t.is_empty());
    let named = |m: Option<String>| m.filter(|m| !m.trim().is_empty());
    line.model = named(head.0.model).or(named(request_model)).or(line.model);
    line.messages = history;
    line.messages.push(answer);
    Ok(Normalised {
        shape: Shape::OpenAiLog,
        line,
        paths,
        dropped: Dropped::default(),
    })
}

/// The response's first choice as the final assistant message (no timing yet).
fn read_answer(response: &RawValue) -> Result<MessageLine, LineProblem> {
    let body = response.get();
    let mut reader = AnswerAccumulator::default();
    reader.on_body(body, 0.0);
    let mut message = MessageLine::text(Role::Assistant, "");
    match reader.fault.take() {
        None => {}
        Some((TurnOutcome::Malformed, _)) => {
            return Err(LineProblem::new(
                "response",
                "no \"choices\"; expected an OpenAI chat completion, or an \"error\" object \
                 for a call that failed",
            ));
        }
        Some((outcome, detail)) => {
            let logged = serde_json::from_str(body)
                .ok()
                .as_ref()
                .and_then(logged_error);
            let (outcome, error) = logged.unwrap_or((outcome, detail));
            message.content = None;
            message.outcome = Some(outcome.as_str().to_string());
            message.error = Some(error);
            return Ok(message);
        }
    }
    // Content-bearing fields the answer reader does not keep; looked for only in a body
    // that names one, so a plain log line is not parsed twice.
    if ["\"refusal\"", "\"function_call\"", "\"audio\""]
        .iter()
        .any(|k| body.contains(k))
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(body)
    {
        let m = &v["choices"][0]["message"];
        let carries =
            |k: &str| !matches!(&m[k], serde_json::Value::Null) && m[k] != serde_json::json!("");
        message.refusal = carries("refusal");
        message.function_call = carries("function_call");
        message.audio = carries("audio");
    }
    let split = reader.split();
    let calls: Vec<ToolCallLine> = std::mem::take(&mut reader.tool_calls)
        .into_iter()
        .map(|c| ToolCallLine::function(c.id, c.name, c.arguments))
        .collect();
    let u = reader.usage;
    let usage = UsageLine {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
        cached_tokens: u.cached_tokens,
        reasoning_tokens: u.reasoning_tokens,
    };
    check_usage(&usage, &|field| format!("response.{field}"))?;
    // An answer that only called tools has no text: null, as OpenAI writes it.
    message.content = Some(split.answer).filter(|a| !a.is_empty() || calls.is_empty());
    message.tool_calls = Some(calls).filter(|c| !c.is_empty());
    message.reasoning = split.reasoning;
    message.finish_reason = reader.finish_reason;
    message.usage = Some(usage).filter(|u| !u.is_empty());
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::super::format::read_record;
    use super::super::shape::ShapeFilter;
    use super::*;

    fn read(text: &str) -> Result<Normalised, LineProblem> {
        read_record(text.as_bytes(), ShapeFilter::Auto)
    }

    /// A log line: `extra` top-level fields, the response's message and its other fields.
    fn log(extra: &str, message: &str, response_extra: &str) -> String {
        format!(
            r#"{{{extra}"request":{{"model":"gpt-4o","messages":[{{"role":"system","content":"S"}},{{"role":"user","content":"Q1"}},{{"role":"assistant","content":"A1"}},{{"role":"user","content":"Q2"}}]}},"response":{{"choices":[{{"index":0,"message":{message},"finish_reason":"stop"}}]{response_extra}}}}}"#
        )
    }

    fn answer(n: &Normalised) -> &MessageLine {
        n.line.messages.last().unwrap()
    }

    #[test]
    fn history_then_the_answer_with_finish_reason_and_usage() {
        let n = read(&log(
            "",
            r#"{"role":"assistant","content":"A2"}"#,
            r#","model":"gpt-4o-2024-08-06","usage":{"prompt_tokens":30,"completion_tokens":4,"total_tokens":34,"prompt_tokens_details":{"cached_tokens":16}}"#,
        ))
        .unwrap();
        assert_eq!(n.shape, Shape::OpenAiLog);
        assert_eq!(
            n.paths,
            MessagePaths::Log {
                top_level: false,
                answer: 4
            }
        );
        let roles: Vec<_> = n.line.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "user", "assistant"]);
        assert_eq!(n.line.model.as_deref(), Some("gpt-4o-2024-08-06"));
        let a = answer(&n);
        assert_eq!(a.content.as_deref(), Some("A2"));
        assert_eq!(a.finish_reason.as_deref(), Some("stop"));
        let u = a.usage.unwrap();
        assert_eq!(
            (
                u.prompt_tokens,
                u.completion_tokens,
                u.cached_tokens,
                u.reasoning_tokens
            ),
            (Some(30), Some(4), Some(16), None)
        );
        assert_eq!(a.timing, None, "no timing fields: none made up");
    }

    #[test]
    fn the_model_comes_from_the_response_else_the_request() {
        let n = read(&log(r#""model":"top","#, r#"{"content":"A2"}"#, "")).unwrap();
        assert_eq!(n.line.model.as_deref(), Some("gpt-4o"));
        let n = read(&log("", r#"{"content":"A2"}"#, r#","model":"  ""#)).unwrap();
        assert_eq!(n.line.model.as_deref(), Some("gpt-4o"));
    }

    #[test]
    fn reasoning_is_read_as_collect_reads_it() {
        let n = read(&log("", r#"{"content":"<think>plan</think>\n\nA2"}"#, "")).unwrap();
        assert_eq!(answer(&n).content.as_deref(), Some("A2"));
        assert_eq!(answer(&n).reasoning.as_deref(), Some("plan"));
        let n = read(&log("", r#"{"content":"A2","reasoning_content":"r"}"#, "")).unwrap();
        assert_eq!(answer(&n).reasoning.as_deref(), Some("r"));
    }

    #[test]
    fn timings_given_in_milliseconds() {
        let n = read(&log(
            r#""ttft_ms":120.5,"latency_ms":900,"#,
            r#"{"content":"A"}"#,
            "",
        ))
        .unwrap();
        let t = answer(&n).timing.unwrap();
        assert_eq!(
            (t.ttft_ms, t.ttfa_ms, t.e2e_ms),
            (Some(120.5), None, Some(900.0))
        );
        // In metadata; the top level wins where both give one.
        let n = read(&log(
            r#""duration_ms":800,"metadata":{"ttft_ms":100,"duration_ms":700,"user":"x"},"#,
            r#"{"content":"A"}"#,
            "",
        ))
        .unwrap();
        let t = answer(&n).timing.unwrap();
        assert_eq!((t.ttft_ms, t.e2e_ms), (Some(100.0), Some(800.0)));
    }

    #[test]
    fn timings_from_litellm_start_and_end_times() {
        let n = read(&log(
            r#""startTime":1714564800.25,"completionStartTime":1714564800.5,"endTime":1714564802.0,"#,
            r#"{"content":"A"}"#,
            "",
        ))
        .unwrap();
        let t = answer(&n).timing.unwrap();
        assert_eq!((t.ttft_ms, t.e2e_ms), (Some(250.0), Some(1750.0)));
        let n = read(&log(
            r#""metadata":{"startTime":"2024-05-01T12:00:00.000Z","endTime":"2024-05-01T12:00:01.500Z"},"#,
            r#"{"content":"A"}"#,
            "",
        ))
        .unwrap();
        let t = answer(&n).timing.unwrap();
        assert_eq!((t.ttft_ms, t.e2e_ms), (None, Some(1500.0)));
        // Naive times (no offset) and a first token at the very end: not streamed.
        let n = read(&log(
            r#""startTime":"2024-05-01T12:00:00","completionStartTime":"2024-05-01T12:00:02","endTime":"2024-05-01T12:00:02","#,
            r#"{"content":"A"}"#,
            "",
        ))
        .unwrap();
        let t = answer(&n).timing.unwrap();
        assert_eq!((t.ttft_ms, t.e2e_ms), (None, Some(2000.0)));
    }

    #[test]
    fn bad_timings_are_named() {
        let problem = |extra: &str| read(&log(extra, r#"{"content":"A"}"#, "")).unwrap_err();
        let p = problem(r#""startTime":100,"endTime":99,"#);
        assert_eq!(p.field, "endTime");
        assert!(p.problem.starts_with("1000 ms before startTime"), "{p}");
        let p = problem(r#""startTime":1714564800000,"#);
        assert_eq!(p.field, "startTime");
        assert!(
            p.problem.contains("not Unix seconds (milliseconds?)"),
            "{p}"
        );
        let p = problem(r#""metadata":{"endTime":"yesterday"},"#);
        assert_eq!(p.field, "metadata.endTime");
        assert!(p.problem.starts_with("\"yesterday\" is not a time"), "{p}");
        let p = problem(r#""latency_ms":-3,"#);
        assert_eq!(p.field, "latency_ms");
        let p = problem(r#""ttft_ms":50,"latency_ms":30,"#);
        assert_eq!(p.field, "ttft_ms");
        assert!(p.problem.contains("after the end of the call"), "{p}");
        let p = problem(r#""latency_ms":"slow","#);
        assert_eq!(p.field, "latency_ms");
        assert!(p.problem.starts_with("wrong type"), "{p}");
    }

    #[test]
    fn an_error_response_is_the_failed_final_turn() {
        let n = read(
            r#"{"request":{"messages":[{"role":"user","content":"Q"}]},"response":{"error":{"message":"Rate limit reached","type":"rate_limit_exceeded","code":429}}}"#,
        )
        .unwrap();
        let a = answer(&n);
        assert_eq!(a.content, None);
        assert_eq!(a.outcome.as_deref(), Some("rate_limited"));
        assert_eq!(
            a.error.as_deref(),
            Some("the logged call failed (code 429): Rate limit reached")
        );
    }

    #[test]
    fn unreadable_responses_are_named() {
        let p = read(r#"{"request":{"messages":[]},"response":{"object":"chat.completion"}}"#)
            .unwrap_err();
        assert_eq!(p.field, "response");
        assert!(p.problem.starts_with("no \"choices\""), "{p}");
        let p = read(&log(
            "",
            r#"{"content":"A"}"#,
            r#","usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":9}}"#,
        ))
        .unwrap_err();
        assert_eq!(p.field, "response.usage.cached_tokens");
        let p = read(r#"{"response":{"choices":[]}}"#).unwrap_err();
        assert_eq!(p.field, "request.messages");
        let p =
            read(r#"{"request":{"messages":[{"role":"developer","content":"x"}]},"response":{}}"#)
                .unwrap_err();
        assert_eq!(p.field, "request.messages[0].role");
        assert!(p.problem.starts_with("unknown role \"developer\""), "{p}");
    }

    #[test]
    fn an_answer_that_only_calls_tools_is_a_turn_with_its_calls() {
        let n = read(&log(
            "",
            r#"{"content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]}"#,
            "",
        ))
        .unwrap();
        let a = answer(&n);
        assert_eq!(a.content, None);
        let calls = a.tool_calls.as_ref().unwrap();
        assert_eq!(
            (calls[0].id.as_deref(), calls[0].function.name.as_str()),
            (Some("c1"), "f")
        );
        assert_eq!(calls[0].function.arguments, r#"{"x":1}"#);
    }

    #[test]
    fn content_the_store_does_not_keep_is_refused_by_field_unless_lossy() {
        use super::super::format::read_record_as;
        let refusal = log(
            "",
            r#"{"content":null,"refusal":"I can't help with that."}"#,
            "",
        );
        let p = read(&refusal).unwrap_err();
        assert_eq!(p.field, "response.choices[0].message.refusal");
        let n = read_record_as(refusal.as_bytes(), ShapeFilter::Auto, true).unwrap();
        assert_eq!(n.dropped.get("refusal"), 1);
        // OpenAI's `"refusal": null` on every message carries nothing.
        assert!(read(&log("", r#"{"content":"A","refusal":null}"#, "")).is_ok());
        let p = read(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":null,"function_call":{"name":"f","arguments":"{}"}}]}"#,
        )
        .unwrap_err();
        assert_eq!(p.field, "messages[1].function_call");
    }

    #[test]
    fn litellm_payload_with_top_level_messages() {
        let n = read(
            r#"{"id":"call-1","model":"gpt-4o","messages":[{"role":"user","content":"Q"}],"response":{"choices":[{"message":{"content":"A"},"finish_reason":"length"}]},"startTime":10,"endTime":12}"#,
        )
        .unwrap();
        assert_eq!(n.shape, Shape::OpenAiLog);
        assert_eq!(
            n.paths,
            MessagePaths::Log {
                top_level: true,
                answer: 1
            }
        );
        assert_eq!(n.line.id.as_deref(), Some("call-1"));
        assert_eq!(n.line.model.as_deref(), Some("gpt-4o"));
        assert_eq!(answer(&n).finish_reason.as_deref(), Some("length"));
        assert_eq!(answer(&n).timing.unwrap().e2e_ms, Some(2000.0));
    }
}
