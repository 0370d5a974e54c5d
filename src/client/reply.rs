//! What the client hands back for one request: the answer as read ([`Reply`]), each attempt
//! under a retry policy ([`Attempt`]) and the token counts a provider reported ([`Usage`]).
//!
//! These are the client's own types: the stages decide what to keep, and the store maps
//! them to its rows (`store::records`), so the client knows nothing of the store.

use serde::{Deserialize, Serialize};

use crate::outcome::TurnOutcome;

/// Token counts; `None` = the provider did not report it (never 0 in its place).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub cached_tokens: Option<i64>,
    pub reasoning_tokens: Option<i64>,
}

/// What a server said about sizes when it refused a request that outgrew the model's
/// context (`context_overflow`); `None` = it did not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextSizes {
    /// The prompt's tokens as the server counted them.
    pub prompt_tokens: Option<i64>,
    /// The context window the server serves the model with.
    pub window_tokens: Option<i64>,
    /// The completion tokens the request asked room for (`max_tokens`).
    pub completion_tokens: Option<i64>,
}

/// One tool call an answer made, assembled from its streamed deltas (or read whole).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCall {
    /// The call's position in the answer (`index` in the OpenAI delta format).
    pub index: u32,
    pub id: Option<String>,
    /// Empty when the provider never sent one.
    pub name: String,
    /// The arguments exactly as sent (a JSON text when the provider behaves).
    pub arguments: String,
}

impl ToolCall {
    /// Whether the arguments parse as one JSON object (what a function call takes; an
    /// empty text does not).
    pub fn arguments_parse(&self) -> bool {
        matches!(
            serde_json::from_str::<serde_json::Value>(&self.arguments),
            Ok(serde_json::Value::Object(_))
        )
    }
}

/// What one request produced, as the client read it and the store keeps it: the answer,
/// its class, timing and usage. [`Reply`] carries it with what only the client sees, and
/// the store's turn row (`store::records::TurnRecord`) with what only the stage knows; both
/// reach these fields through `Deref`, so they are written once.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnResult {
    pub answer: Option<String>,
    pub reasoning: Option<String>,
    pub finish_reason: Option<String>,
    pub http_status: Option<u16>,
    pub outcome: Option<TurnOutcome>,
    pub error: Option<String>,
    /// How many attempts the retry policy made (1 without retries; 0 before it set it).
    pub attempts: u32,
    pub ttft_ms: Option<f64>,
    pub ttfa_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    /// From the first attempt's send to the final answer: retries, backoff waits and a
    /// stale keep-alive connection included. `None` when not measured (imports) or when
    /// the final attempt has no E2E; equal to `e2e_ms` for one attempt.
    pub wall_ms: Option<f64>,
    pub usage: Usage,
    /// For a `context_overflow`: the sizes the server stated, if it stated any.
    pub context: Option<ContextSizes>,
    pub request_id: Option<String>,
    /// Microseconds from request start, one per SSE event.
    pub chunk_offsets_us: Vec<u32>,
    /// What each of those events carried, one per offset (same order): the events that
    /// bear answer or reasoning text are the ones inter-token latency is measured on.
    pub chunk_kinds: Vec<ChunkKind>,
}

/// What one SSE event carried, as stored beside its offset (`turns.chunk_kinds`, one byte
/// per event: the discriminant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ChunkKind {
    /// Nothing measured as output: a role-only delta, a finish, usage, `[DONE]`, an error.
    Other = 0,
    /// Answer text (`content`, `<think>` tags included).
    Answer = 1,
    /// Reasoning text (`reasoning_content`, `reasoning`).
    Reasoning = 2,
    /// A tool call's name or arguments, and no text.
    Tool = 3,
}

impl ChunkKind {
    /// The stored byte.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The kind a stored byte names; `None` for a byte no build wrote.
    pub fn from_code(b: u8) -> Option<ChunkKind> {
        Some(match b {
            0 => ChunkKind::Other,
            1 => ChunkKind::Answer,
            2 => ChunkKind::Reasoning,
            3 => ChunkKind::Tool,
            _ => return None,
        })
    }

    /// Whether an event of this kind bears answer or reasoning text (a token, for
    /// inter-token latency).
    pub fn bears_text(self) -> bool {
        matches!(self, ChunkKind::Answer | ChunkKind::Reasoning)
    }
}

/// One request's answer, or how it failed; every fault is data here, never an error.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    /// The answer, its class, timing and usage (what a stored turn keeps).
    pub result: TurnResult,
    /// Tool calls, in the order of their index.
    pub tool_calls: Vec<ToolCall>,
    /// The response headers the client was asked to capture ([`super::Client::capturing`]),
    /// when present.
    pub headers: Vec<(String, String)>,
    /// The top-level response fields the client was asked to capture
    /// ([`super::Client::capturing_fields`]), when present.
    pub fields: Vec<(String, String)>,
}

impl std::ops::Deref for Reply {
    type Target = TurnResult;
    fn deref(&self) -> &TurnResult {
        &self.result
    }
}

impl std::ops::DerefMut for Reply {
    fn deref_mut(&mut self) -> &mut TurnResult {
        &mut self.result
    }
}

impl TurnResult {
    pub fn outcome(&self) -> TurnOutcome {
        self.outcome.unwrap_or(TurnOutcome::Ok)
    }

    pub fn has_visible_text(&self) -> bool {
        self.answer.as_deref().is_some_and(|a| !a.trim().is_empty())
    }
}

impl Reply {
    /// Whether the answer said anything: visible text or a tool call.
    pub fn has_output(&self) -> bool {
        self.has_visible_text() || !self.tool_calls.is_empty()
    }
}

/// One attempt of a request under a retry policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// The caller's index of the request (a conversation's turn).
    pub turn_idx: u32,
    pub attempt: u32,
    pub outcome: TurnOutcome,
    pub http_status: Option<u16>,
    pub error: Option<String>,
    pub e2e_ms: Option<f64>,
    /// The wait before this attempt.
    pub waited_ms: f64,
}
