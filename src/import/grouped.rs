//! Model calls that traces keep one by one (Langfuse GENERATION observations, OpenTelemetry
//! GenAI chat spans), held until the end of the file and then grouped into conversations:
//! the calls of one group (a trace, a `gen_ai.conversation.id`) ordered by their start
//! time, one turn each.
//!
//! Each call carries the messages it was sent and its answer. Joined, a call's messages
//! that repeat the conversation so far (the history an application sends again with every
//! call) are said once: when the conversation so far starts the call's messages, only the
//! rest is added; otherwise the call's messages are added after it, but for system
//! messages already said. The answer is always added, with its own timings and usage.

use std::collections::HashMap;
use std::sync::Arc;

use super::shape::{Dropped, MessagePaths, NamedPaths, Normalised};
use crate::exchange::{MessageLine, Role};
use crate::jsonl::LineProblem;

/// One model call of a group: its messages, the answer last, each named in its record.
#[derive(Debug)]
pub(crate) struct Generation {
    /// The conversation it belongs to (a trace id, a `gen_ai.conversation.id`).
    pub group: String,
    /// When it started (Unix milliseconds), to order the group's calls.
    pub start_ms: Option<f64>,
    pub normalised: Normalised,
}

/// What one record held: calls, or calls refused (each naming its field).
pub(crate) type Pieces = Vec<Result<Generation, LineProblem>>;

/// Calls of one file held until its end, then grouped.
pub(crate) struct Groups<P> {
    calls: Vec<(P, Generation)>,
}

impl<P> Default for Groups<P> {
    fn default() -> Self {
        Groups { calls: Vec::new() }
    }
}

impl<P: Clone> Groups<P> {
    pub fn add(&mut self, place: P, call: Generation) {
        self.calls.push((place, call));
    }

    /// One conversation per group, in the order groups first appear, named by the place
    /// of its last call in the file.
    pub fn join(self) -> Vec<(P, Result<Normalised, LineProblem>)> {
        let mut order: Vec<String> = Vec::new();
        let mut groups: HashMap<String, Vec<(P, Generation)>> = HashMap::new();
        for (place, call) in self.calls {
            let members = groups.entry(call.group.clone()).or_insert_with(|| {
                order.push(call.group.clone());
                Vec::new()
            });
            members.push((place, call));
        }
        let mut out = Vec::with_capacity(order.len());
        for key in order {
            let Some(mut members) = groups.remove(&key) else {
                continue;
            };
            // Stable: calls without a start time keep their order in the file.
            members.sort_by(|a, b| {
                let at = |g: &Generation| g.start_ms.unwrap_or(f64::NEG_INFINITY);
                at(&a.1).total_cmp(&at(&b.1))
            });
            let Some(place) = members.last().map(|(p, _)| p.clone()) else {
                continue;
            };
            out.push((place, Ok(conversation(key, members))));
        }
        out
    }
}

/// Whether two messages say the same (timings and usage aside).
fn same(a: &MessageLine, b: &MessageLine) -> bool {
    a.role == b.role
        && a.content == b.content
        && a.tool_call_id == b.tool_call_id
        && a.tool_calls == b.tool_calls
}

/// The group's calls, first to last, joined into one conversation.
fn conversation<P>(key: String, members: Vec<(P, Generation)>) -> Normalised {
    let mut messages: Vec<MessageLine> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut dropped = Dropped::default();
    let mut first = None;
    let mut line = None;
    for (_, call) in members {
        let n = call.normalised;
        dropped.merge(&n.dropped);
        first.get_or_insert(n.shape);
        let call_names = match &n.paths {
            MessagePaths::Named(named) => named.messages.clone(),
            _ => Vec::new(),
        };
        let mut call_line = n.line;
        let all = std::mem::take(&mut call_line.messages);
        let answer_at = all.len().saturating_sub(1);
        let repeats =
            all.len() > messages.len() && messages.iter().zip(&all).all(|(a, b)| same(a, b));
        let skip = if repeats { messages.len() } else { 0 };
        for (i, m) in all.into_iter().enumerate().skip(skip) {
            let said = m.role == Role::System && messages.iter().any(|s| same(s, &m));
            if said && i != answer_at {
                continue;
            }
            messages.push(m);
            names.push(
                call_names
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("call[{i}]")),
            );
        }
        // The last call's fields (model, provider) stand for the conversation.
        line = Some(call_line);
    }
    let mut line = line.unwrap_or_default();
    if line.id.is_none() {
        line.id = Some(key);
    }
    line.messages = messages;
    Normalised {
        shape: first.unwrap_or(super::shape::Shape::Langfuse),
        line,
        paths: MessagePaths::Named(Arc::new(NamedPaths {
            list: "input",
            messages: names,
            renamed: &[],
        })),
        dropped,
    }
}
