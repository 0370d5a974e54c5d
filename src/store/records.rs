//! Row types written to and read from the store; field meanings follow `db/001_init.sql`.

use crate::chat::Message;
use crate::client::{Attempt, Reply};
use crate::outcome::{ConversationOutcome, TurnOutcome};

/// Token counts as the client read them; `None` = not reported (never 0 in its place).
pub use crate::client::{ContextSizes, TurnResult, Usage};

/// One answered (or failed) turn: what the client read ([`TurnResult`], reached through
/// `Deref`: `turn.e2e_ms`) and what the stage adds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnRecord {
    /// Messages added to the history before this answer (usually the one user message).
    pub prompt: Vec<Message>,
    /// The answer, its class, timing and usage, as the client read them.
    pub result: TurnResult,
    pub pause_ms: Option<f64>,
    pub start_ms: Option<f64>,
    pub visible_tokens: Option<i64>,
    /// The tools the answer called (`turns.tool_calls`); empty: none.
    pub tool_calls: Vec<crate::exchange::ToolCallLine>,
}

impl std::ops::Deref for TurnRecord {
    type Target = TurnResult;
    fn deref(&self) -> &TurnResult {
        &self.result
    }
}

impl std::ops::DerefMut for TurnRecord {
    fn deref_mut(&mut self) -> &mut TurnResult {
        &mut self.result
    }
}

impl TurnRecord {
    /// The row of a turn the client answered: `prompt` is what the turn added to the
    /// history; pause, start and visible tokens are the caller's to fill. The answer's tool
    /// calls are kept (`turns.tool_calls`, in the order of their index), not captured
    /// headers and fields (read by the stage that asked).
    pub fn from_reply(reply: Reply, prompt: Vec<Message>) -> Self {
        let tool_calls = reply
            .tool_calls
            .into_iter()
            .map(|c| crate::exchange::ToolCallLine::function(c.id, c.name, c.arguments))
            .collect();
        TurnRecord {
            prompt,
            result: reply.result,
            tool_calls,
            ..Default::default()
        }
    }
}

/// One attempt of a turn under a retry policy.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptRecord {
    pub turn_idx: u32,
    pub attempt: u32,
    pub outcome: TurnOutcome,
    pub http_status: Option<u16>,
    pub error: Option<String>,
    pub e2e_ms: Option<f64>,
    pub waited_ms: f64,
}

impl From<Attempt> for AttemptRecord {
    fn from(a: Attempt) -> Self {
        let Attempt {
            turn_idx,
            attempt,
            outcome,
            http_status,
            error,
            e2e_ms,
            waited_ms,
        } = a;
        AttemptRecord {
            turn_idx,
            attempt,
            outcome,
            http_status,
            error,
            e2e_ms,
            waited_ms,
        }
    }
}

/// A whole conversation, written in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationRecord {
    pub uid: String,
    pub run_id: i64,
    pub target_id: i64,
    pub scenario: Option<String>,
    pub scenario_ref: Option<i64>,
    pub repeat: u32,
    pub outcome: ConversationOutcome,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub turns: Vec<TurnRecord>,
    pub attempts: Vec<AttemptRecord>,
    /// Messages after the last answer (imported transcripts only).
    pub trailing: Vec<Message>,
}

impl ConversationRecord {
    /// This slot's record after its task panicked (a bug), for collect and replay alike:
    /// failed with one `internal_error` turn that carries the message, so the slot is
    /// stored, counted and reported, never lost. `doing` says what the task was doing
    /// ("running this conversation").
    pub fn internal_error(self, doing: &str, message: &str) -> ConversationRecord {
        let turn = TurnRecord {
            result: TurnResult {
                outcome: Some(TurnOutcome::InternalError),
                error: Some(format!(
                    "turnbench failed while {doing} (a bug; please report it): {message}"
                )),
                attempts: 1,
                ..Default::default()
            },
            ..Default::default()
        };
        ConversationRecord {
            outcome: ConversationOutcome::Failed(TurnOutcome::InternalError),
            turns: vec![turn],
            ..self
        }
    }

    /// Sum of the turns' E2E; only for completed conversations with every E2E known.
    pub fn latency_ms(&self) -> Option<f64> {
        if !self.outcome.is_completed() {
            return None;
        }
        self.turns.iter().map(|t| t.e2e_ms).sum()
    }
}

/// Encodes chunk offsets compactly: u32 little-endian microseconds.
pub fn encode_offsets(offsets: &[u32]) -> Vec<u8> {
    offsets.iter().flat_map(|o| o.to_le_bytes()).collect()
}

/// Encodes what each event carried: one byte per offset (`ChunkKind::code`).
pub fn encode_kinds(kinds: &[crate::client::ChunkKind]) -> Vec<u8> {
    kinds.iter().map(|k| k.code()).collect()
}

/// The inverse of [`encode_offsets`]: a trailing partial offset (a damaged blob) is
/// dropped, never a panic.
pub fn decode_offsets(blob: &[u8]) -> impl Iterator<Item = u32> + '_ {
    blob.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// The offsets (µs) of the events that bore answer or reasoning text, into `out`
/// (cleared first): the token arrivals inter-token latency is measured on. False, with
/// `out` empty, when they cannot be known: no offsets stored (imported, non-streamed), no
/// kinds stored (collected before migration 012), or kinds that do not match the offsets
/// one for one (a damaged row).
pub fn text_offsets(offsets: Option<&[u8]>, kinds: Option<&[u8]>, out: &mut Vec<u32>) -> bool {
    out.clear();
    let (Some(offsets), Some(kinds)) = (offsets, kinds) else {
        return false;
    };
    if offsets.len() != kinds.len() * 4 {
        return false;
    }
    out.extend(
        decode_offsets(offsets)
            .zip(kinds)
            .filter(|(_, k)| {
                crate::client::ChunkKind::from_code(**k).is_some_and(|k| k.bears_text())
            })
            .map(|(o, _)| o),
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_s_tool_calls_are_kept_for_turns_tool_calls() {
        let call = |index, id: Option<&str>, name: &str| crate::client::ToolCall {
            index,
            id: id.map(String::from),
            name: name.into(),
            arguments: format!("{{\"n\":{index}}}"),
        };
        let reply = Reply {
            tool_calls: vec![call(0, Some("call_a"), "ls"), call(1, None, "cat")],
            ..Default::default()
        };
        let turn = TurnRecord::from_reply(reply, Vec::new());
        assert_eq!(
            serde_json::to_value(&turn.tool_calls).unwrap(),
            serde_json::json!([
                {"id": "call_a", "type": "function", "function": {"name": "ls", "arguments": "{\"n\":0}"}},
                {"type": "function", "function": {"name": "cat", "arguments": "{\"n\":1}"}}
            ])
        );
        assert!(
            TurnRecord::from_reply(Reply::default(), Vec::new())
                .tool_calls
                .is_empty()
        );
    }

    #[test]
    fn offsets_round_trip() {
        let v = vec![0, 1, 250_000, u32::MAX];
        assert_eq!(decode_offsets(&encode_offsets(&v)).collect::<Vec<_>>(), v);
    }

    #[test]
    fn text_offsets_keep_only_text_bearing_events() {
        use crate::client::ChunkKind::*;
        let offsets = encode_offsets(&[10, 20, 30, 40, 50, 60]);
        let kinds = encode_kinds(&[Other, Reasoning, Answer, Tool, Answer, Other]);
        let mut out = vec![7];
        assert!(text_offsets(Some(&offsets), Some(&kinds), &mut out));
        assert_eq!(out, vec![20, 30, 50]);
        // No kinds, no offsets, or kinds that do not pair one for one: not known, never
        // an empty measurement.
        assert!(!text_offsets(Some(&offsets), None, &mut out));
        assert!(out.is_empty());
        assert!(!text_offsets(None, Some(&kinds), &mut out));
        assert!(!text_offsets(Some(&offsets), Some(&kinds[1..]), &mut out));
    }

    #[test]
    fn latency_needs_completion_and_every_e2e() {
        let turn = |e2e| TurnRecord {
            result: TurnResult {
                e2e_ms: e2e,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut c = ConversationRecord {
            uid: "u".into(),
            run_id: 1,
            target_id: 1,
            scenario: None,
            scenario_ref: None,
            repeat: 1,
            outcome: ConversationOutcome::Completed,
            started_at: None,
            ended_at: None,
            turns: vec![turn(Some(10.0)), turn(Some(5.5))],
            attempts: vec![],
            trailing: vec![],
        };
        assert_eq!(c.latency_ms(), Some(15.5));
        c.turns.push(turn(None));
        assert_eq!(c.latency_ms(), None);
        c.turns.pop();
        c.outcome = ConversationOutcome::Failed(TurnOutcome::Timeout);
        assert_eq!(c.latency_ms(), None);
    }
}
