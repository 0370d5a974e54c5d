//! The OpenAI-compatible chat-completions client: one request per turn, the full history
//! each time, streamed by default, timed with a monotonic clock started just before send.
//!
//! Every fault is returned as data (a classified [`TurnOutcome`]), never as an error.

pub mod completion;
pub mod overflow;
mod reply;
mod retry_after;
pub mod sse;
mod surrogates;

use std::sync::Once;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::timeout_at;

use crate::config::url::SecretUrl;
use crate::config::{RequestParams, RetryPolicy, TargetConfig};
use crate::outcome::TurnOutcome;
use completion::{AnswerAccumulator, clip};
pub use reply::{Attempt, ChunkKind, ContextSizes, Reply, ToolCall, TurnResult, Usage};
use sse::SseParser;

/// Where and how to send a turn; the key, header values and URL credentials are held in
/// memory only (`Debug` shows header names and the URL masked, never a secret).
#[derive(Clone)]
pub struct Endpoint {
    pub url: SecretUrl,
    pub model: String,
    pub api_key: Option<String>,
    pub headers: Vec<(String, String)>,
    pub params: RequestParams,
}

impl Endpoint {
    pub fn for_target(target: &TargetConfig) -> Self {
        Endpoint {
            url: target.credentials.request_url(&target.base_url),
            model: target.model.clone(),
            api_key: target.credentials.api_key(),
            headers: target.credentials.header_values(),
            params: target.request.clone(),
        }
    }

    /// The JSON body for a request with these messages.
    pub fn body<M: Serialize>(&self, messages: &[M]) -> Value {
        let p = &self.params;
        let mut body = json!({ "model": self.model, "messages": messages });
        // `json!` with braces builds an object.
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

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<not shown>"))
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("params", &self.params)
            .finish()
    }
}

/// One HTTP client for the whole run: building one costs tens of milliseconds, which must
/// never fall inside a timer.
#[derive(Clone)]
pub struct Client {
    /// Pooled keep-alive connections: turns after the first reuse one, as an agent would.
    http: reqwest::Client,
    /// No pool: every request on a new connection. Used once for a request whose pooled
    /// connection turned out to be closed by the server before it answered.
    fresh: reqwest::Client,
    /// Response headers returned in [`Reply::headers`] (lower case), e.g. the one a
    /// gateway names the serving provider in.
    capture: std::sync::Arc<[String]>,
    /// Top-level response fields returned in [`Reply::fields`] (e.g. a gateway's
    /// `provider`).
    capture_fields: std::sync::Arc<[String]>,
}

static CRYPTO: Once = Once::new();

/// One request as sent and read: the turn, the server's `Retry-After`, and two instants:
/// when the first byte of this attempt was handed to a connection (`sent`) and when the
/// turn's clock started (`t0`; later than `sent` only when a stale pooled connection made
/// the client send again on a fresh one).
struct Sent {
    turn: Reply,
    retry_after: Option<Duration>,
    sent: Instant,
    t0: Instant,
}

impl Client {
    pub fn new() -> Result<Self, reqwest::Error> {
        CRYPTO.call_once(|| {
            // Another part of the process may have installed one already; either is fine.
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
        let build = |idle: usize| {
            reqwest::Client::builder()
                .tcp_nodelay(true)
                .pool_max_idle_per_host(idle)
                .connect_timeout(Duration::from_secs(30))
                .build()
        };
        Ok(Client {
            http: build(1024)?,
            fresh: build(0)?,
            capture: std::sync::Arc::new([]),
            capture_fields: std::sync::Arc::new([]),
        })
    }

    /// This client, returning these response headers with each reply (the same
    /// connection pools).
    pub fn capturing(mut self, names: impl IntoIterator<Item = String>) -> Self {
        let mut names: Vec<String> = names.into_iter().map(|n| n.to_ascii_lowercase()).collect();
        names.sort();
        names.dedup();
        self.capture = names.into();
        self
    }

    /// This client, returning these top-level string fields of each response (the first
    /// value a stream carries) with each reply.
    pub fn capturing_fields(mut self, names: impl IntoIterator<Item = String>) -> Self {
        let mut names: Vec<String> = names.into_iter().collect();
        names.sort();
        names.dedup();
        self.capture_fields = names.into();
        self
    }

    /// Sends one turn under a retry policy; every attempt is returned, the last is the turn.
    ///
    /// The turn's `wall_ms` is the time from the first attempt's send to the final answer:
    /// failed attempts and backoff waits included (equal to `e2e_ms` for one attempt;
    /// `None` when the final attempt has no E2E, as after a timeout). A panic while sending
    /// (a bug) becomes an `internal_error` turn with its message instead of ending the task.
    pub async fn send_with_retries<M: Serialize + Sync>(
        &self,
        endpoint: &Endpoint,
        messages: &[M],
        timeout: Duration,
        retry: &RetryPolicy,
        turn_idx: u32,
    ) -> (Reply, Vec<Attempt>) {
        let mut attempts = Vec::new();
        let mut waited = 0.0;
        let mut first_sent: Option<Instant> = None;
        loop {
            let attempt = attempts.len() as u32 + 1;
            let Sent {
                mut turn,
                retry_after,
                sent,
                t0,
            } = self.send_caught(endpoint, messages, timeout).await;
            let first = *first_sent.get_or_insert(sent);
            let outcome = turn.outcome();
            if retry.attempts > 1 {
                attempts.push(Attempt {
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
                let offset = t0.duration_since(first).as_secs_f64() * 1000.0;
                turn.wall_ms = turn.e2e_ms.map(|e2e| offset + e2e);
                return (turn, attempts);
            }
            let backoff = retry.backoff_ms as f64 * 2f64.powi(attempt as i32 - 1);
            let wait = match retry_after {
                Some(d) if retry.honour_retry_after => d.as_secs_f64() * 1000.0,
                _ => backoff,
            }
            .min(retry.max_wait_ms as f64);
            // Finite and non-negative by construction (max_wait_ms caps it); checked anyway,
            // since a provider's header fed it.
            let wait = if wait.is_finite() { wait.max(0.0) } else { 0.0 };
            tokio::time::sleep(Duration::from_secs_f64(wait / 1000.0)).await;
            waited = wait;
        }
    }

    /// Sends one request and reads the whole answer. Returns the turn (without prompt,
    /// pause or visible tokens, which the caller knows) and any `Retry-After`.
    pub async fn send<M: Serialize + Sync>(
        &self,
        endpoint: &Endpoint,
        messages: &[M],
        timeout: Duration,
    ) -> (Reply, Option<Duration>) {
        let sent = self.send_caught(endpoint, messages, timeout).await;
        (sent.turn, sent.retry_after)
    }

    /// [`Self::send_once`], with a panic turned into an `internal_error` turn: provider
    /// data must never end a run, even through a bug in reading it.
    async fn send_caught<M: Serialize + Sync>(
        &self,
        endpoint: &Endpoint,
        messages: &[M],
        timeout: Duration,
    ) -> Sent {
        use futures_util::FutureExt;
        let started = Instant::now();
        match std::panic::AssertUnwindSafe(self.send_once(endpoint, messages, timeout))
            .catch_unwind()
            .await
        {
            Ok(mut sent) => {
                // An error may quote the URL (a connection error does): never its secrets.
                sent.turn.error = sent.turn.error.take().map(|e| endpoint.url.scrub(&e));
                sent
            }
            Err(panic) => Sent {
                turn: Reply {
                    result: TurnResult {
                        outcome: Some(TurnOutcome::InternalError),
                        error: Some(format!(
                            "turnbench failed while sending or reading this turn (a bug; please report it): {}",
                            panic_message(panic.as_ref())
                        )),
                        ..Default::default()
                    },
                    ..Default::default()
                },
                retry_after: None,
                sent: started,
                t0: started,
            },
        }
    }

    /// One request. A request that fails with no response at all, on a connection that did
    /// connect (a pooled keep-alive connection the server had already closed), is sent once
    /// more on a fresh connection: that is not a provider failure, and the turn's clock
    /// restarts for the fresh request, so the stale attempt is in no timing but `wall_ms`.
    async fn send_once<M: Serialize + Sync>(
        &self,
        endpoint: &Endpoint,
        messages: &[M],
        timeout: Duration,
    ) -> Sent {
        // A JSON value always serialises (string keys, no non-finite numbers in a Value).
        let body = serde_json::to_vec(&endpoint.body(messages)).expect("a JSON value serialises");
        let (turn, retry_after, sent, t0) = match self
            .request(&self.http, endpoint, body.clone(), timeout)
            .await
        {
            Attempted::Done(turn, retry_after, t0) => (*turn, retry_after, t0, t0),
            Attempted::Stale(first_error, sent) => {
                match self.request(&self.fresh, endpoint, body, timeout).await {
                    Attempted::Done(turn, retry_after, t0) => (*turn, retry_after, sent, t0),
                    Attempted::Stale(e, _) => {
                        let turn = Reply {
                            result: TurnResult {
                                outcome: Some(TurnOutcome::ConnectError),
                                error: Some(format!(
                                    "connection closed before any response, twice (a reused connection: {first_error}; a fresh one: {e})"
                                )),
                                ..Default::default()
                            },
                            ..Default::default()
                        };
                        (turn, None, sent, sent)
                    }
                }
            }
        };
        Sent {
            turn,
            retry_after,
            sent,
            t0,
        }
    }

    async fn request(
        &self,
        http: &reqwest::Client,
        endpoint: &Endpoint,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Attempted {
        let req = post(http, endpoint, body);
        let t0 = Instant::now(); // the clock starts just before the request is sent
        let deadline = tokio::time::Instant::from_std(t0 + timeout);
        let mut turn = Reply::default();
        let done = |turn, retry_after| Attempted::Done(Box::new(turn), retry_after, t0);

        let response = match timeout_at(deadline, req.send()).await {
            Err(_) => return done(timed_out(turn, timeout, "before response headers"), None),
            Ok(Err(e)) if !e.is_timeout() && !e.is_connect() && !e.is_builder() => {
                return Attempted::Stale(error_chain(&e), t0);
            }
            Ok(Err(e)) => {
                turn.outcome = Some(if e.is_timeout() {
                    TurnOutcome::Timeout
                } else {
                    TurnOutcome::ConnectError
                });
                turn.error = Some(error_chain(&e));
                return done(turn, None);
            }
            Ok(Ok(r)) => r,
        };
        turn.http_status = Some(response.status().as_u16());
        self.note_headers(&mut turn, response.headers());
        if !response.status().is_success() {
            let (turn, retry_after) = refused(turn, response, deadline, t0).await;
            return done(turn, retry_after);
        }
        let is_sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"));

        let mut acc = AnswerAccumulator::capturing(&self.capture_fields);
        // Only an event stream has a first token to time.
        let streamed = endpoint.params.stream() && is_sse;
        let transport_error = if streamed {
            match read_events(response, deadline, t0, &mut turn, &mut acc).await {
                Ok(transport_error) => transport_error,
                Err(TimedOut) => {
                    let turn = finish(turn, &acc, streamed);
                    return done(timed_out(turn, timeout, "while streaming"), None);
                }
            }
        } else {
            // Not streamed, or a server that answered a streaming request with plain JSON:
            // a whole body has no first token, so TTFT and TTFA stay empty and E2E is the
            // moment the body was read.
            match timeout_at(deadline, response.text()).await {
                Err(_) => return done(timed_out(turn, timeout, "reading the body"), None),
                Ok(Err(e)) => Some(error_chain(&e)),
                Ok(Ok(text)) => {
                    acc.on_body(&text, ms_since(t0, Instant::now()));
                    None
                }
            }
        };
        done(
            conclude(finish(turn, &acc, streamed), &acc, transport_error),
            None,
        )
    }

    /// The provider's request id, and the headers this client was asked to keep.
    fn note_headers(&self, turn: &mut Reply, headers: &reqwest::header::HeaderMap) {
        turn.request_id = ["x-request-id", "request-id", "x-amzn-requestid"]
            .iter()
            .find_map(|h| headers.get(*h)?.to_str().ok())
            .map(str::to_string);
        for name in self.capture.iter() {
            if let Some(v) = headers.get(name.as_str())
                && let Ok(v) = v.to_str()
            {
                turn.headers.push((name.clone(), v.to_string()));
            }
        }
    }
}

/// The POST of one turn: JSON body, the key as a bearer token, the target's headers.
fn post(http: &reqwest::Client, endpoint: &Endpoint, body: Vec<u8>) -> reqwest::RequestBuilder {
    let mut req = http
        .post(endpoint.url.expose())
        .header("content-type", "application/json")
        .body(body);
    if let Some(key) = &endpoint.api_key {
        req = req.bearer_auth(key);
    }
    for (k, v) in &endpoint.headers {
        req = req.header(k, v);
    }
    req
}

/// Milliseconds from `t0` to `t`.
fn ms_since(t0: Instant, t: Instant) -> f64 {
    t.duration_since(t0).as_secs_f64() * 1000.0
}

/// A non-success status: the turn classed by it, with its body (clipped) and
/// `Retry-After` in the error, and the wait that header asks for.
async fn refused(
    mut turn: Reply,
    response: reqwest::Response,
    deadline: tokio::time::Instant,
    t0: Instant,
) -> (Reply, Option<Duration>) {
    let status = response.status();
    let header = response
        .headers()
        .get("retry-after")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let retry_after = header
        .as_deref()
        .and_then(|v| retry_after::parse(v, std::time::SystemTime::now()));
    let text = timeout_at(deadline, response.text())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    turn.e2e_ms = Some(ms_since(t0, Instant::now()));
    turn.outcome = Some(TurnOutcome::from_status(status.as_u16()));
    // A request that outgrew the context fails the same way however often it is sent: its
    // own class, whatever the status (a 429 stays a rate limit).
    let mut said = String::new();
    if status.as_u16() != 429
        && let Some(sizes) = overflow::recognise(&text)
    {
        turn.outcome = Some(TurnOutcome::ContextOverflow);
        said = overflow::sizes_text(&sizes);
        turn.context = Some(sizes);
    }
    turn.error = Some(match header {
        Some(h) => format!(
            "HTTP {} (Retry-After: {}): {}{said}",
            status.as_u16(),
            clip(&h),
            clip(&text)
        ),
        None => format!("HTTP {}: {}{said}", status.as_u16(), clip(&text)),
    });
    (turn, retry_after)
}

/// The deadline passed while the body was still coming.
struct TimedOut;

/// Reads an event stream into `acc`, each chunk's arrival noted on the turn, until it
/// ends, the answer is complete, or the connection fails (`Ok` with that failure).
async fn read_events(
    response: reqwest::Response,
    deadline: tokio::time::Instant,
    t0: Instant,
    turn: &mut Reply,
    acc: &mut AnswerAccumulator,
) -> Result<Option<String>, TimedOut> {
    let mut transport_error = None;
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    let mut body = response.bytes_stream();
    'read: loop {
        let next = timeout_at(deadline, body.next())
            .await
            .map_err(|_| TimedOut)?;
        let now = Instant::now();
        let at = ms_since(t0, now);
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
            let before = acc.output_size();
            let go_on = acc.on_event(event, at);
            turn.chunk_kinds
                .push(AnswerAccumulator::kind_between(before, acc.output_size()));
            if !go_on {
                break 'read;
            }
        }
        if transport_error.is_some() || ended {
            break;
        }
    }
    Ok(transport_error)
}

/// How one request went: read to its end (turn, `Retry-After`, clock start), or failed
/// with no response on a connection that did connect.
enum Attempted {
    Done(Box<Reply>, Option<Duration>, Instant),
    /// The error and when that request was sent.
    Stale(String, Instant),
}

/// The turn's one outcome, from what was read: a fault found in the stream, else a cut
/// before any finish, else the finish itself (`truncated`, `empty_answer`, a server-side
/// failure, or `ok`). A `content_filter` finish is kept as the turn's finish reason and
/// flagged in its error, whatever the class.
pub fn conclude(
    mut turn: Reply,
    acc: &AnswerAccumulator,
    transport_error: Option<String>,
) -> Reply {
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
        if turn.finish_reason.as_deref() == Some(CONTENT_FILTER) {
            let note = "finish_reason content_filter: the provider's content filter stopped or changed this answer";
            turn.error = Some(match turn.error.take() {
                Some(e) => format!("{e}; {note}"),
                None => note.to_string(),
            });
        }
    }
    turn
}

/// The finish reason of an answer a provider's content filter stopped or changed.
pub const CONTENT_FILTER: &str = "content_filter";

/// A panic's message, for an `internal_error` turn.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// Fills answer, reasoning, timings and usage from what was read.
fn finish(mut turn: Reply, acc: &AnswerAccumulator, streamed: bool) -> Reply {
    let split = acc.split();
    turn.answer = (!split.answer.is_empty()).then_some(split.answer);
    turn.reasoning = split.reasoning;
    turn.tool_calls = acc.tool_calls.clone();
    turn.fields = acc
        .fields
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
        .collect();
    turn.tool_calls.sort_by_key(|c| c.index);
    turn.finish_reason = acc.finish_reason.clone();
    turn.usage = acc.usage;
    turn.context = acc.context;
    if streamed {
        turn.ttft_ms = acc.ttft_ms;
        turn.ttfa_ms = split.ttfa_ms;
    }
    turn.e2e_ms = acc.done_ms.or(acc.last_event_ms);
    if turn.request_id.is_none() {
        turn.request_id = acc.response_id.clone();
    }
    turn
}

fn classify_finished(turn: &Reply) -> TurnOutcome {
    match turn.finish_reason.as_deref() {
        Some("length") => TurnOutcome::Truncated,
        // A turn that only called tools said something: it is not empty.
        _ if !turn.has_output() => TurnOutcome::EmptyAnswer,
        // The server reports that generation failed, after a successful start.
        Some("error" | "abort") => TurnOutcome::Http5xx,
        _ => TurnOutcome::Ok,
    }
}

fn timed_out(mut turn: Reply, timeout: Duration, when: &str) -> Reply {
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
