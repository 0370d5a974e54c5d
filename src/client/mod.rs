//! The OpenAI-compatible chat-completions client: one request per turn, the full history
//! each time, streamed by default, timed with a monotonic clock started just before send.
//!
//! Every fault is returned as data (a classified [`TurnOutcome`]), never as an error.

pub mod answer;
mod retry_after;
pub mod sse;

use std::sync::Once;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::time::timeout_at;

use crate::config::{RequestParams, RetryPolicy, TargetConfig};
use crate::outcome::TurnOutcome;
use crate::store::records::{AttemptRecord, Message, TurnRecord};
use answer::{AnswerAccumulator, clip};
use sse::{SseEvent, SseParser};

/// Where and how to send a turn; the key is held in memory only.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub headers: Vec<(String, String)>,
    pub params: RequestParams,
}

impl Endpoint {
    pub fn for_target(target: &TargetConfig) -> Self {
        Endpoint {
            url: format!("{}/chat/completions", target.base_url),
            model: target.model.clone(),
            api_key: target.api_key(),
            headers: target
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            params: target.request.clone(),
        }
    }

    /// The JSON body for a request with these messages.
    pub fn body(&self, messages: &[Message]) -> Value {
        let p = &self.params;
        let mut body = json!({ "model": self.model, "messages": messages });
        let obj = body.as_object_mut().expect("object literal");
        let mut set = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                obj.insert(k.to_string(), v);
            }
        };
        set("temperature", p.temperature.map(Value::from));
        set("top_p", p.top_p.map(Value::from));
        set("max_tokens", p.max_tokens.map(Value::from));
        set(
            "max_completion_tokens",
            p.max_completion_tokens.map(Value::from),
        );
        set(
            "reasoning_effort",
            p.reasoning_effort.clone().map(Value::from),
        );
        set("response_format", p.response_format.clone());
        set("stream", Some(Value::Bool(p.stream())));
        if p.stream() && p.include_usage() {
            set("stream_options", Some(json!({ "include_usage": true })));
        }
        for (k, v) in &p.extra {
            obj.insert(k.clone(), v.clone());
        }
        body
    }
}

/// One HTTP client for the whole run: building one costs tens of milliseconds, which must
/// never fall inside a timer.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
}

static CRYPTO: Once = Once::new();

impl Client {
    pub fn new() -> Result<Self, reqwest::Error> {
        CRYPTO.call_once(|| {
            // Another part of the process may have installed one already; either is fine.
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
        let http = reqwest::Client::builder()
            .tcp_nodelay(true)
            .pool_max_idle_per_host(1024)
            .connect_timeout(Duration::from_secs(30))
            .build()?;
        Ok(Client { http })
    }

    /// Sends one turn under a retry policy; every attempt is returned, the last is the turn.
    pub async fn send_with_retries(
        &self,
        endpoint: &Endpoint,
        messages: &[Message],
        timeout: Duration,
        retry: &RetryPolicy,
        turn_idx: u32,
    ) -> (TurnRecord, Vec<AttemptRecord>) {
        let mut attempts = Vec::new();
        let mut waited = 0.0;
        loop {
            let attempt = attempts.len() as u32 + 1;
            let (mut turn, retry_after) = self.send(endpoint, messages, timeout).await;
            let outcome = turn.outcome();
            if retry.attempts > 1 {
                attempts.push(AttemptRecord {
                    turn_idx,
                    attempt,
                    outcome,
                    http_status: turn.http_status,
                    error: turn.error.clone(),
                    e2e_ms: turn.e2e_ms,
                    waited_ms: waited,
                });
            }
            let retryable = matches!(
                outcome,
                TurnOutcome::RateLimited | TurnOutcome::Http5xx | TurnOutcome::ConnectError
            );
            if !retryable || attempt >= retry.attempts {
                turn.attempts = attempt;
                return (turn, attempts);
            }
            let backoff = retry.backoff_ms as f64 * 2f64.powi(attempt as i32 - 1);
            let wait = match retry_after {
                Some(d) if retry.honour_retry_after => d.as_secs_f64() * 1000.0,
                _ => backoff,
            }
            .min(retry.max_wait_ms as f64);
            tokio::time::sleep(Duration::from_secs_f64(wait / 1000.0)).await;
            waited = wait;
        }
    }

    /// Sends one request and reads the whole answer. Returns the turn (without prompt,
    /// pause or visible tokens, which the caller knows) and any `Retry-After`.
    pub async fn send(
        &self,
        endpoint: &Endpoint,
        messages: &[Message],
        timeout: Duration,
    ) -> (TurnRecord, Option<Duration>) {
        let body = serde_json::to_vec(&endpoint.body(messages)).expect("body serialises");
        let mut req = self
            .http
            .post(&endpoint.url)
            .header("content-type", "application/json")
            .body(body);
        if let Some(key) = &endpoint.api_key {
            req = req.bearer_auth(key);
        }
        for (k, v) in &endpoint.headers {
            req = req.header(k, v);
        }
        let stream = endpoint.params.stream();

        let t0 = Instant::now(); // the clock starts just before the request is sent
        let deadline = tokio::time::Instant::from_std(t0 + timeout);
        let ms = |t: Instant| t.duration_since(t0).as_secs_f64() * 1000.0;
        let mut turn = TurnRecord::default();

        let response = match timeout_at(deadline, req.send()).await {
            Err(_) => return (timed_out(turn, timeout, "before response headers"), None),
            Ok(Err(e)) => {
                turn.outcome = Some(if e.is_timeout() {
                    TurnOutcome::Timeout
                } else {
                    TurnOutcome::ConnectError
                });
                turn.error = Some(error_chain(&e));
                return (turn, None);
            }
            Ok(Ok(r)) => r,
        };
        let status = response.status();
        turn.http_status = Some(status.as_u16());
        turn.request_id = ["x-request-id", "request-id", "x-amzn-requestid"]
            .iter()
            .find_map(|h| response.headers().get(*h)?.to_str().ok())
            .map(str::to_string);
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| retry_after::parse(v.to_str().ok()?, std::time::SystemTime::now()));
            let text = timeout_at(deadline, response.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            turn.e2e_ms = Some(ms(Instant::now()));
            turn.outcome = Some(TurnOutcome::from_status(status.as_u16()));
            turn.error = Some(format!("HTTP {}: {}", status.as_u16(), clip(&text)));
            return (turn, retry_after);
        }
        let is_sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"));

        let mut acc = AnswerAccumulator::default();
        let mut transport_error = None;
        if stream && is_sse {
            let mut parser = SseParser::new();
            let mut events = Vec::new();
            let mut body = response.bytes_stream();
            'read: loop {
                let next = match timeout_at(deadline, body.next()).await {
                    Err(_) => {
                        let mut turn = finish(turn, &acc, stream);
                        turn = timed_out(turn, timeout, "while streaming");
                        return (turn, None);
                    }
                    Ok(next) => next,
                };
                let now = Instant::now();
                let at = ms(now);
                let ended = next.is_none();
                match next {
                    None => {
                        parser.finish(&mut events);
                    }
                    Some(Err(e)) => {
                        transport_error = Some(error_chain(&e));
                        parser.finish(&mut events);
                    }
                    Some(Ok(bytes)) => parser.feed(&bytes, &mut events),
                }
                for event in events.drain(..) {
                    turn.chunk_offsets_us
                        .push((now.duration_since(t0).as_micros()).min(u32::MAX as u128) as u32);
                    let go_on = match event {
                        SseEvent::ErrorField(v) => {
                            acc.on_error_field(&v);
                            false
                        }
                        SseEvent::Data { event, data } => {
                            let more = acc.on_data(&data, at);
                            if event.as_deref() == Some("error") && acc.fault.is_none() {
                                acc.on_error_field(&data);
                                false
                            } else {
                                more
                            }
                        }
                    };
                    if !go_on {
                        break 'read;
                    }
                }
                if transport_error.is_some() || ended {
                    break;
                }
            }
        } else {
            // Not streamed, or a server that answered a streaming request with plain JSON.
            match timeout_at(deadline, response.text()).await {
                Err(_) => return (timed_out(turn, timeout, "reading the body"), None),
                Ok(Err(e)) => transport_error = Some(error_chain(&e)),
                Ok(Ok(text)) => acc.on_body(&text, ms(Instant::now())),
            }
        }

        let mut turn = finish(turn, &acc, stream);
        if let Some((outcome, detail)) = &acc.fault {
            turn.outcome = Some(*outcome);
            turn.error = Some(detail.clone());
        } else if !acc.saw_finish() {
            turn.outcome = Some(TurnOutcome::StreamCut);
            turn.error = Some(match transport_error {
                Some(e) => format!("stream closed before a finish: {e}"),
                None => "stream closed before a finish reason or [DONE]".to_string(),
            });
        } else {
            turn.outcome = Some(classify_finished(&turn));
            if turn.outcome == Some(TurnOutcome::EmptyAnswer) {
                turn.error = Some("no visible answer text".into());
            }
        }
        (turn, None)
    }
}

/// Fills answer, reasoning, timings and usage from what was read.
fn finish(mut turn: TurnRecord, acc: &AnswerAccumulator, stream: bool) -> TurnRecord {
    let split = acc.split();
    turn.answer = (!split.answer.is_empty()).then_some(split.answer);
    turn.reasoning = split.reasoning;
    turn.finish_reason = acc.finish_reason.clone();
    turn.usage = acc.usage;
    if stream {
        turn.ttft_ms = acc.ttft_ms;
        turn.ttfa_ms = split.ttfa_ms;
    }
    turn.e2e_ms = acc.done_ms.or(acc.last_event_ms);
    if turn.request_id.is_none() {
        turn.request_id = acc.response_id.clone();
    }
    turn
}

fn classify_finished(turn: &TurnRecord) -> TurnOutcome {
    match turn.finish_reason.as_deref() {
        Some("length") => TurnOutcome::Truncated,
        _ if !turn.has_visible_text() => TurnOutcome::EmptyAnswer,
        // The server reports that generation failed, after a successful start.
        Some("error" | "abort") => TurnOutcome::Http5xx,
        _ => TurnOutcome::Ok,
    }
}

fn timed_out(mut turn: TurnRecord, timeout: Duration, when: &str) -> TurnRecord {
    turn.outcome = Some(TurnOutcome::Timeout);
    turn.e2e_ms = None;
    turn.error = Some(format!(
        "client timeout of {:.1} s passed {when}",
        timeout.as_secs_f64()
    ));
    turn
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}
