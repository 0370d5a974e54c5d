//! A simulated OpenAI-compatible provider (streaming and not) for tests, demos and trying
//! turnbench with no keys. It answers scenario turns with their reference answers, follows
//! per-model timing profiles, and injects faults and defects from a seed.

pub mod cache;
pub mod defect;
pub mod forget;
pub mod grade;
pub mod judge;
pub mod plan;
pub mod profile;
mod stream;
pub mod tools;

use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::serve::ListenerExt;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::chat::Message;
use crate::config::Scenario;
use plan::{Fault, PieceKind, Plan, ScenarioIndex, make_plan, request_key};
pub use profile::{MockConfig, Profile};

/// What one request was served with, for the timing benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct Served {
    pub id: String,
    pub fault: Option<Fault>,
    pub nominal_ttft_ms: Option<f64>,
    pub nominal_e2e_ms: f64,
    /// When the first text chunk and `[DONE]` were handed to the connection.
    pub sent_ttft_ms: Option<f64>,
    pub sent_e2e_ms: Option<f64>,
    /// The Authorization header received (tests check that keys are sent, never stored).
    pub auth: Option<String>,
    /// Every request header received, name and value (tests check that header secrets
    /// reach the provider and nothing else).
    pub headers: Vec<(String, String)>,
    /// The request's query string, if any (tests check that URL secrets reach the
    /// provider and nothing else).
    pub query: Option<String>,
}

pub(crate) struct MockState {
    config: MockConfig,
    index: ScenarioIndex,
    /// How often each exact request was seen: a repeat gets a fresh, still seeded, draw.
    seen: Mutex<HashMap<[u8; 32], u32>>,
    served: Mutex<Vec<Served>>,
    log: Option<Mutex<std::fs::File>>,
    next_id: AtomicU64,
    cache: cache::PrefixCache,
    routes: cache::Routes,
}

/// A running mock; dropped or stopped, it stops serving.
pub struct MockServer {
    addr: SocketAddr,
    state: Arc<MockState>,
    task: tokio::task::JoinHandle<()>,
}

impl MockServer {
    /// Binds `addr` (port 0 for any) and serves in the background.
    pub async fn start(
        config: MockConfig,
        scenarios: &[Scenario],
        addr: SocketAddr,
        log: Option<&Path>,
    ) -> std::io::Result<MockServer> {
        let log = match log {
            Some(p) => Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)?,
            )),
            None => None,
        };
        let state = Arc::new(MockState {
            config,
            index: ScenarioIndex::new(scenarios),
            seen: Mutex::new(HashMap::new()),
            served: Mutex::new(Vec::new()),
            log,
            next_id: AtomicU64::new(1),
            cache: cache::PrefixCache::default(),
            routes: cache::Routes::default(),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/chat/completions", post(chat))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let listener = listener.tap_io(|tcp| {
            // Every chunk must leave at once: timing fidelity depends on it.
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(MockServer { addr, state, task })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL to put in a target (`…/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn served(&self) -> Vec<Served> {
        // Poisoned only if a holder panicked, and none can (push and clone only).
        self.state.served.lock().expect("served lock").clone()
    }

    pub fn stop(self) {
        self.task.abort();
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Deserialize)]
struct ChatRequest {
    model: String,
    /// As received: OpenAI chat messages, with tool calls and tool messages.
    messages: Vec<Value>,
    #[serde(default)]
    stream: bool,
    stream_options: Option<StreamOptions>,
    #[serde(default)]
    tools: Option<Vec<Value>>,
    /// A conversation hint (OpenAI's `user` field), for the gateway's stickiness.
    #[serde(default)]
    user: Option<String>,
    /// A judge honours a `json_schema` format (see [`judge`]).
    #[serde(default)]
    response_format: Option<Value>,
}

/// Each message's role and text, for planning the answer: `content` as a string, the text
/// parts of an array, or empty (an assistant message that only called tools).
fn visible(messages: &[Value]) -> Result<Vec<Message>, String> {
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("messages[{i}]: no role"))?;
            let content = match m.get("content") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(parts)) => parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n"),
                Some(_) => return Err(format!("messages[{i}]: content of an unknown type")),
            };
            Ok(Message::new(role, content))
        })
        .collect()
}

#[derive(Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: bool,
}

async fn chat(
    State(st): State<Arc<MockState>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (mut resp, served_by) = answer(st, query, headers, body).await;
    // A gateway names the provider that served, on every response (errors included).
    if let Some((name, provider)) = served_by
        && let (Ok(name), Ok(value)) = (
            axum::http::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&provider),
        )
    {
        resp.headers_mut().insert(name, value);
    }
    resp
}

/// The conversation a request belongs to, for a gateway's stickiness: the `user` field,
/// else a session-affinity header, else the first message (a conversation's opening).
fn conversation_hint(req: &ChatRequest, headers: &HeaderMap) -> String {
    if let Some(user) = &req.user {
        return format!("user:{user}");
    }
    for name in ["x-session-affinity", "x-session-id"] {
        if let Some(v) = headers.get(name).and_then(|v| v.to_str().ok()) {
            return format!("header:{v}");
        }
    }
    let first = req
        .messages
        .first()
        .map(Value::to_string)
        .unwrap_or_default();
    format!("opening:{}", blake3::hash(first.as_bytes()).to_hex())
}

/// The response, and the (header, provider) a gateway reports.
async fn answer(
    st: Arc<MockState>,
    query: Option<String>,
    headers: HeaderMap,
    body: Bytes,
) -> (Response, Option<(String, String)>) {
    let arrived = Instant::now();
    let (auth, received) = received_headers(&headers);
    st.log_body(&body);
    let (req, messages) = match parse_request(&body) {
        Ok(parsed) => parsed,
        Err(refusal) => return (refusal.response(), None),
    };
    let profile = match st.profile_for(&req.model) {
        Ok(profile) => profile,
        Err(refusal) => return (refusal.response(), None),
    };
    let key = st.request_key(&req.model, &messages);
    let mut plan = match plan_answer(&st, &req, &profile, key, &messages) {
        Ok(plan) => plan,
        Err(refusal) => return (refusal.response(), None),
    };
    let served_by = profile.gateway.as_ref().map(|g| {
        let conversation = conversation_hint(&req, &headers);
        (g.header.clone(), st.routes.route(g, &conversation, key))
    });
    let served_field = profile
        .gateway
        .as_ref()
        .and_then(|g| g.field.clone())
        .zip(served_by.as_ref().map(|(_, p)| p.clone()));
    if let Some(retention) = profile.cache_retention_s {
        st.serve_from_cache(&req, served_by.as_ref(), retention, arrived, &mut plan);
    }
    // Prefill of the prompt the cache did not hold delays the first token.
    let uncached = (plan.prompt_tokens - plan.cached_tokens).max(0) as f64;
    plan.delay_first_token(profile.prefill_ms_per_1k_tokens * uncached / 1000.0);
    if let Some(offered) = req.tools.as_deref().map(tools::offered) {
        tools::apply(&mut plan, &profile.tools, key, &offered);
    }

    let id = format!("mock-{}", st.next_id.fetch_add(1, Ordering::Relaxed));
    let served = Served {
        id: id.clone(),
        fault: plan.fault,
        nominal_ttft_ms: plan.nominal_ttft_ms,
        nominal_e2e_ms: plan.end_ms,
        sent_ttft_ms: None,
        sent_e2e_ms: None,
        auth,
        headers: received,
        query,
    };
    if let Some(resp) = status_fault(plan.fault) {
        st.record(served);
        return (resp, served_by);
    }

    let include_usage = req.stream_options.is_some_and(|o| o.include_usage);
    if req.stream {
        let sse = stream::SseStream {
            id: &id,
            model: &req.model,
            include_usage,
            stall_ms: profile.stall_ms,
            served_field: served_field.as_ref().map(|(f, p)| (f.as_str(), p.as_str())),
        };
        (sse.respond(plan, arrived, st.clone(), served), served_by)
    } else {
        // A body cut short stays cut: it is not parsed to add the field.
        let cut = plan.fault == Some(Fault::StreamCut);
        let mut resp = whole_response(&st, plan, &profile, served, &req.model, arrived).await;
        if let Some(field) = served_field.filter(|_| !cut) {
            resp = with_field(resp, field).await;
        }
        (resp, served_by)
    }
}

/// The Authorization header, and every header as (name, value), as the request brought them.
fn received_headers(headers: &HeaderMap) -> (Option<String>, Vec<(String, String)>) {
    let auth = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let received = headers
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    (auth, received)
}

/// An error status and its message, sent before any answer is planned.
struct Refusal(StatusCode, String);

impl Refusal {
    fn response(&self) -> Response {
        error_response(self.0, &self.1)
    }
}

/// The request and its messages' text, or the 400 that says what is wrong with it.
fn parse_request(body: &[u8]) -> Result<(ChatRequest, Vec<Message>), Refusal> {
    let bad =
        |e: &dyn std::fmt::Display| Refusal(StatusCode::BAD_REQUEST, format!("bad request: {e}"));
    let req: ChatRequest = serde_json::from_slice(body).map_err(|e| bad(&e))?;
    let messages = visible(&req.messages).map_err(|e| bad(&e))?;
    Ok((req, messages))
}

/// The plan of the answer: the scenario's, or a judge's verdict when the model judges (a
/// judge that rejects the requested format answers with its 500 instead).
fn plan_answer(
    st: &MockState,
    req: &ChatRequest,
    profile: &Profile,
    key: [u8; 32],
    messages: &[Message],
) -> Result<Plan, Refusal> {
    let mut plan = make_plan(profile, key, messages, &st.index);
    if judge::is_judge(profile) {
        let format = req.response_format.as_ref();
        if judge::rejects_schema(profile, key, format) {
            let msg = "Unrecognized response_format type: json_schema is not supported";
            return Err(Refusal(StatusCode::INTERNAL_SERVER_ERROR, msg.into()));
        }
        judge::answer_as_judge(&mut plan, profile, key, messages, &st.index, format);
    }
    Ok(plan)
}

/// The error response a planned status fault sends (a retry hint on all but a 500), or
/// `None` when the plan answers.
fn status_fault(fault: Option<Fault>) -> Option<Response> {
    let (status, msg) = match fault {
        Some(Fault::RateLimited) => (StatusCode::TOO_MANY_REQUESTS, "rate limit reached"),
        Some(Fault::Http500) => (StatusCode::INTERNAL_SERVER_ERROR, "internal error"),
        Some(Fault::Http503) => (StatusCode::SERVICE_UNAVAILABLE, "overloaded"),
        _ => return None,
    };
    let mut resp = error_response(status, msg);
    if status != StatusCode::INTERNAL_SERVER_ERROR {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    Some(resp)
}

/// A whole JSON body with a gateway's (field, provider) added at its top level.
async fn with_field(resp: Response, (field, provider): (String, String)) -> Response {
    let (parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let body = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(mut obj)) => {
            obj.insert(field, Value::String(provider));
            Value::Object(obj).to_string().into()
        }
        // Not an object (a planned malformed body): sent as planned.
        _ => bytes,
    };
    Response::from_parts(parts, Body::from(body))
}

impl MockState {
    pub(crate) fn record(&self, served: Served) {
        // Poisoned only if a holder panicked, and none can (push and clone only).
        self.served.lock().expect("served lock").push(served);
    }

    /// Appends the raw request body to the request log, if one was asked for.
    fn log_body(&self, body: &[u8]) {
        if let Some(log) = &self.log {
            // Poisoned only if a holder panicked, and none can (two writes only).
            let mut f = log.lock().expect("log lock");
            let _ = f.write_all(body);
            let _ = f.write_all(b"\n");
        }
    }

    /// The model's profile, every delay scaled once here; or the 404 that lists the models
    /// this mock serves.
    fn profile_for(&self, model: &str) -> Result<Profile, Refusal> {
        if let Some(profile) = self.config.profile_for(model) {
            return Ok(profile.scaled(self.config.time_scale));
        }
        let known: Vec<_> = self
            .config
            .profiles
            .iter()
            .map(|p| p.model.as_str())
            .collect();
        let msg = format!(
            "model {model:?} not found; this mock serves: {}",
            known.join(", ")
        );
        Err(Refusal(StatusCode::NOT_FOUND, msg))
    }

    /// The seeded key of this request: a repeat of an exact request gets a fresh draw.
    fn request_key(&self, model: &str, messages: &[Message]) -> [u8; 32] {
        let occurrence = {
            let key = request_key(self.config.seed, model, messages, 0);
            // Poisoned only if a holder panicked, and none can (a map update only).
            let mut seen = self.seen.lock().expect("seen lock");
            let n = seen.entry(key).or_insert(0);
            *n += 1;
            *n - 1
        };
        request_key(self.config.seed, model, messages, occurrence)
    }

    /// Sets the plan's prompt and cached tokens from the prefix cache, scoped by model and,
    /// behind a gateway, by the provider that serves.
    fn serve_from_cache(
        &self,
        req: &ChatRequest,
        served_by: Option<&(String, String)>,
        retention_s: f64,
        arrived: Instant,
        plan: &mut Plan,
    ) {
        let raw: Vec<Vec<u8>> = req
            .messages
            .iter()
            .map(|m| m.to_string().into_bytes())
            .collect();
        let raw: Vec<&[u8]> = raw.iter().map(Vec::as_slice).collect();
        let tools = req
            .tools
            .as_ref()
            .map(|t| Value::from(t.clone()).to_string());
        let scope = match served_by {
            Some((_, provider)) => format!("{}@{provider}", req.model),
            None => req.model.clone(),
        };
        let used = self.cache.serve(
            &scope,
            tools.as_deref().map(str::as_bytes),
            &raw,
            Duration::from_secs_f64(retention_s),
            arrived,
        );
        plan.prompt_tokens = used.prompt_tokens;
        plan.cached_tokens = used.cached_tokens;
    }
}

fn error_response(status: StatusCode, message: &str) -> Response {
    let body =
        json!({"error": {"message": message, "type": "mock_error", "code": status.as_u16()}});
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

pub(crate) fn usage_json(plan: &Plan) -> Value {
    let mut u = json!({
        "prompt_tokens": plan.prompt_tokens,
        "completion_tokens": plan.completion_tokens,
        "total_tokens": plan.prompt_tokens + plan.completion_tokens,
    });
    match plan.cache {
        profile::CacheReport::Openai => {
            u["prompt_tokens_details"] = json!({"cached_tokens": plan.cached_tokens});
        }
        profile::CacheReport::Deepseek => {
            u["prompt_cache_hit_tokens"] = json!(plan.cached_tokens);
            u["prompt_cache_miss_tokens"] = json!(plan.prompt_tokens - plan.cached_tokens);
        }
        profile::CacheReport::None => {}
    }
    if plan.reasoning_tokens > 0 {
        u["completion_tokens_details"] = json!({"reasoning_tokens": plan.reasoning_tokens});
    }
    u
}

pub(crate) async fn sleep_to(arrived: Instant, at_ms: f64) {
    let when = arrived + Duration::from_secs_f64(at_ms.max(0.0) / 1000.0);
    tokio::time::sleep_until(tokio::time::Instant::from_std(when)).await;
}

async fn whole_response(
    st: &MockState,
    plan: Plan,
    profile: &Profile,
    mut served: Served,
    model: &str,
    arrived: Instant,
) -> Response {
    // A whole body has no first token to time.
    served.nominal_ttft_ms = None;
    let id = served.id.clone();
    if plan.fault == Some(Fault::Stall) {
        tokio::time::sleep(Duration::from_secs_f64(profile.stall_ms / 1000.0)).await;
    }
    sleep_to(arrived, plan.end_ms).await;
    let mut content = String::new();
    let mut reasoning = String::new();
    for p in &plan.pieces {
        match &p.kind {
            PieceKind::Content(t) => content.push_str(t),
            PieceKind::Reasoning(t) => reasoning.push_str(t),
            PieceKind::Role | PieceKind::ToolStart { .. } | PieceKind::ToolArguments { .. } => {}
        }
    }
    let body = match plan.fault {
        Some(Fault::Malformed) => "{\"choices\": [".to_string(),
        Some(Fault::ErrorAfter200) => {
            json!({"error": {"message": "mock: generation failed", "code": 500}}).to_string()
        }
        _ => {
            let calls = tools::whole_calls(&plan.pieces);
            let mut message = json!({"role": "assistant", "content": content});
            if let Some(calls) = calls {
                message["tool_calls"] = calls;
                message["content"] = Value::Null;
            }
            if !reasoning.is_empty() {
                message[plan.reasoning_field] = json!(reasoning);
            }
            json!({
                "id": id, "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": plan.finish_reason}],
                "usage": usage_json(&plan)
            })
            .to_string()
        }
    };
    served.sent_e2e_ms = Some(arrived.elapsed().as_secs_f64() * 1000.0);
    st.record(served);
    if plan.fault == Some(Fault::StreamCut) {
        // Promise a longer body than is sent: the client sees the connection close mid-body.
        let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(2);
        let half = first_half(body);
        tokio::spawn(async move {
            let _ = tx.send(Ok(half)).await;
            let _ = tx.send(Err(std::io::Error::other("mock: cut"))).await;
        });
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        });
        return (
            [(header::CONTENT_TYPE, "application/json")],
            Body::from_stream(stream),
        )
            .into_response();
    }
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The first half of a body, cut at a byte, not a character: a cut body need not be valid
/// UTF-8, and an answer with non-ASCII text must not panic the mock.
fn first_half(body: String) -> Bytes {
    let mut half = Bytes::from(body);
    half.truncate(half.len() / 2);
    half
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Client, Endpoint};
    use crate::config::RequestParams;
    use crate::outcome::TurnOutcome;
    use profile::ReasoningStyle;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn a_body_is_cut_in_half_at_a_byte_even_inside_a_character() {
        // Three bytes a character: half of nine bytes falls inside the second.
        assert_eq!(
            first_half("€€€".to_string()).as_ref(),
            &"€€€".as_bytes()[..4]
        );
        assert!(first_half(String::new()).is_empty());
    }

    async fn start(profiles: Vec<Profile>, time_scale: f64) -> MockServer {
        let config = MockConfig {
            seed: 3,
            profiles,
            time_scale,
        };
        MockServer::start(config, &[], "127.0.0.1:0".parse().unwrap(), None)
            .await
            .unwrap()
    }

    fn hello() -> Vec<Message> {
        vec![Message::new("user", "Plan the release.")]
    }

    /// The JSON of every `data:` event of one streamed request, read over a plain TCP
    /// connection (each event is one HTTP chunk, so its line arrives whole).
    async fn raw_events(addr: SocketAddr, model: &str) -> Vec<Value> {
        let body = json!({"model": model, "messages": hello(), "stream": true,
            "stream_options": {"include_usage": true}})
        .to_string();
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        tcp.write_all(body.as_bytes()).await.unwrap();
        let mut raw = String::new();
        tcp.read_to_string(&mut raw).await.unwrap();
        assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
        assert!(raw.contains("data: [DONE]"), "{raw}");
        raw.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn reasoning_budget_streams_reasoning_only_and_ends_with_length() {
        let budget = |model: &str, style: ReasoningStyle| {
            let mut p = Profile::quick(model, 1.0, 0.0);
            p.reasoning_words = 20;
            p.reasoning_style = style;
            p.faults.reasoning_budget = 1.0;
            p
        };
        let server = start(
            vec![
                budget("thinker", ReasoningStyle::ReasoningContent),
                budget("tagged", ReasoningStyle::Think),
            ],
            1.0,
        )
        .await;

        let events = raw_events(server.addr(), "thinker").await;
        let deltas: Vec<&Value> = events
            .iter()
            .filter_map(|e| e["choices"].get(0))
            .map(|c| &c["delta"])
            .collect();
        let reasoning: String = deltas
            .iter()
            .filter_map(|d| d["reasoning_content"].as_str())
            .collect();
        // Three times the usual reasoning, then the budget is gone.
        assert_eq!(reasoning.split_whitespace().count(), 60, "{reasoning}");
        assert!(
            deltas
                .iter()
                .all(|d| d["content"].as_str().is_none_or(str::is_empty)),
            "no answer text: {events:?}"
        );
        let finishes: Vec<&str> = events
            .iter()
            .filter_map(|e| e["choices"].get(0)?["finish_reason"].as_str())
            .collect();
        assert_eq!(finishes, ["length"]);
        let usage = &events.last().unwrap()["usage"];
        assert_eq!(usage["completion_tokens"], 60);
        assert_eq!(usage["completion_tokens_details"]["reasoning_tokens"], 60);

        // The collector's view: a truncated turn with reasoning and no visible answer, for
        // reasoning in its own field and for a <think> block that never closes.
        let client = Client::new().unwrap();
        for model in ["thinker", "tagged"] {
            let endpoint = Endpoint {
                url: format!("{}/chat/completions", server.base_url()).into(),
                model: model.into(),
                api_key: None,
                headers: vec![],
                params: RequestParams::default(),
            };
            let (turn, _) = client
                .send(&endpoint, &hello(), Duration::from_secs(10))
                .await;
            assert_eq!(turn.outcome(), TurnOutcome::Truncated, "{model}: {turn:?}");
            assert_eq!(turn.finish_reason.as_deref(), Some("length"));
            assert!(!turn.has_visible_text(), "{model}: {:?}", turn.answer);
            let reasoning = turn.result.reasoning.unwrap_or_default();
            assert_eq!(reasoning.split_whitespace().count(), 60, "{model}");
        }
        assert!(
            server
                .served()
                .iter()
                .all(|s| s.fault == Some(Fault::ReasoningBudget))
        );
    }

    #[tokio::test]
    async fn reasoning_style_reasoning_uses_the_reasoning_field() {
        let mut p = Profile::quick("r", 1.0, 0.0);
        p.reasoning_words = 4;
        p.reasoning_style = ReasoningStyle::Reasoning;
        let server = start(vec![p], 1.0).await;
        let events = raw_events(server.addr(), "r").await;
        let fields: Vec<&str> = events
            .iter()
            .filter_map(|e| e["choices"].get(0)?["delta"].as_object())
            .flat_map(|d| d.keys().map(String::as_str))
            .collect();
        assert_eq!(fields.iter().filter(|f| **f == "reasoning").count(), 4);
        assert!(!fields.contains(&"reasoning_content"), "{fields:?}");
    }

    #[tokio::test]
    async fn time_scale_multiplies_the_delays_a_response_is_planned_with() {
        let mut p = Profile::quick("m", 0.0, 0.0);
        p.ttft_ms = profile::Delay::Lognormal {
            median: 400.0,
            sigma: 0.3,
        };
        p.gap_ms = profile::Delay::Uniform {
            min: 10.0,
            max: 30.0,
        };
        p.slowdown = Some(profile::Delay::Lognormal {
            median: 1.0,
            sigma: 0.5,
        });
        let server = start(vec![p.clone()], 0.02).await;
        let events = raw_events(server.addr(), "m").await;
        assert!(!events.is_empty());
        // What the server planned (and slept) is the unscaled plan for the same key, times
        // the scale: the same draws, shorter delays.
        let key = request_key(3, "m", &hello(), 0);
        let unscaled = make_plan(&p, key, &hello(), &ScenarioIndex::default());
        let served = server.served();
        assert_eq!(served.len(), 1);
        let ttft = served[0].nominal_ttft_ms.unwrap();
        assert!(
            (ttft - 0.02 * unscaled.nominal_ttft_ms.unwrap()).abs() < 1e-9,
            "{ttft}"
        );
        assert!((served[0].nominal_e2e_ms - 0.02 * unscaled.end_ms).abs() < 1e-9);
    }

    fn tool_endpoint(server: &MockServer, model: &str, stream: bool) -> Endpoint {
        let mut params = RequestParams {
            stream: Some(stream),
            ..RequestParams::default()
        };
        params.extra.insert(
            "tools".into(),
            json!([
                {"type":"function","function":{"name":"read_file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}},
                {"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{"pattern":{"type":"string"},"glob":{"type":"string"}}}}}
            ]),
        );
        Endpoint {
            url: format!("{}/chat/completions", server.base_url()).into(),
            model: model.into(),
            api_key: None,
            headers: vec![],
            params,
        }
    }

    #[tokio::test]
    async fn streamed_tool_calls_reach_the_client_as_the_whole_body_would_give_them() {
        let mut p = Profile::quick("tooly", 1.0, 0.5);
        p.tools.call_rate = 1.0;
        p.tools.max_calls = 3;
        p.tools.chars_per_delta = 5;
        let client = Client::new().unwrap();
        let mut several = false;
        for i in 0..6 {
            let ask = vec![Message::new("user", format!("task {i}"))];
            // Two fresh servers with one seed plan the same answer for the same request.
            let (a, b) = (
                start(vec![p.clone()], 1.0).await,
                start(vec![p.clone()], 1.0).await,
            );
            let (streamed, _) = client
                .send(
                    &tool_endpoint(&a, "tooly", true),
                    &ask,
                    Duration::from_secs(10),
                )
                .await;
            let (whole, _) = client
                .send(
                    &tool_endpoint(&b, "tooly", false),
                    &ask,
                    Duration::from_secs(10),
                )
                .await;
            assert_eq!(streamed.outcome(), TurnOutcome::Ok, "{:?}", streamed.error);
            assert_eq!(streamed.finish_reason.as_deref(), Some("tool_calls"));
            assert!(!streamed.tool_calls.is_empty());
            assert_eq!(streamed.tool_calls, whole.tool_calls);
            for (k, c) in streamed.tool_calls.iter().enumerate() {
                assert_eq!(c.index, k as u32);
                assert!(c.arguments_parse(), "{c:?}");
                assert!(["read_file", "search"].contains(&c.name.as_str()));
                // Five characters per delta: arguments arrive split across chunks.
                assert!(c.arguments.len() > 5);
            }
            several |= streamed.tool_calls.len() > 1;
            // A tool-only answer has a first token (the first call) and no visible text.
            assert!(streamed.ttft_ms.is_some() && streamed.ttfa_ms.is_none());
        }
        assert!(several, "some answers make several calls");
    }

    #[tokio::test]
    async fn the_prefix_cache_survives_short_pauses_and_expires_after_retention() {
        let mut keeps = Profile::quick("keeps", 0.0, 0.0);
        keeps.cache_retention_s = Some(30.0);
        let mut drops = Profile::quick("drops", 0.0, 0.0);
        drops.cache_retention_s = Some(0.15);
        let server = start(vec![keeps, drops], 1.0).await;
        let client = Client::new().unwrap();
        let system = Message::new("system", "Rules. ".repeat(200));
        for (model, expect_after_break) in [("keeps", true), ("drops", false)] {
            let mut endpoint = tool_endpoint(&server, model, true);
            endpoint.params.extra.clear();
            let mut history = vec![system.clone(), Message::new("user", "first")];
            let (t1, _) = client
                .send(&endpoint, &history, Duration::from_secs(5))
                .await;
            assert_eq!(t1.usage.cached_tokens, Some(0), "{model}: cold start");
            history.push(Message::new("assistant", "one"));
            history.push(Message::new("user", "second"));
            let (t2, _) = client
                .send(&endpoint, &history, Duration::from_secs(5))
                .await;
            let (cached, prompt) = (
                t2.usage.cached_tokens.unwrap(),
                t2.usage.prompt_tokens.unwrap(),
            );
            assert!(cached > prompt * 8 / 10, "{model}: {cached} of {prompt}");
            tokio::time::sleep(Duration::from_millis(300)).await;
            history.push(Message::new("assistant", "two"));
            history.push(Message::new("user", "third"));
            let (t3, _) = client
                .send(&endpoint, &history, Duration::from_secs(5))
                .await;
            let cached = t3.usage.cached_tokens.unwrap();
            assert_eq!(
                cached > 0,
                expect_after_break,
                "{model}: {cached} after the break"
            );
        }
    }
}
