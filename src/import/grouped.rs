//! Model calls that traces keep one by one (Langfuse GENERATION observations, OpenTelemetry
//! GenAI chat spans), grouped into conversations: the calls of one group (a trace, a
//! `gen_ai.conversation.id`) ordered by their start time, one turn each. A group's calls
//! may sit anywhere in a file, so a file's calls are written as they are read to a private
//! temporary SQLite database ([`Spill`]) and joined there at the end of the file, one group
//! at a time: memory holds one conversation's calls, not the file's.
//!
//! Each call carries the messages it was sent and its answer. Joined, a call's messages
//! that repeat the conversation so far (the history an application sends again with every
//! call) are said once: when the conversation so far starts the call's messages, only the
//! rest is added; otherwise the call's messages are added after it, but for system
//! messages already said. The answer is always added, with its own timings and usage.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::shape::{Dropped, MessagePaths, NamedPaths, Normalised, Shape};
use crate::exchange::{ConversationLine, MessageLine, Role};
use crate::jsonl::LineProblem;
use crate::jsonl::Place;

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

/// Calls held in memory, then grouped (the calls of one record read alone).
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
            if let Some((place, n)) = groups.remove(&key).and_then(|m| joined(key, m)) {
                out.push((place, Ok(n)));
            }
        }
        out
    }
}

/// A group's calls (in the order they were read) as one conversation, named by the place
/// of its last call; none without calls.
fn joined<P: Clone>(key: String, mut members: Vec<(P, Generation)>) -> Option<(P, Normalised)> {
    // Stable: calls without a start time keep their order in the file.
    members.sort_by(|a, b| {
        let at = |g: &Generation| g.start_ms.unwrap_or(f64::NEG_INFINITY);
        at(&a.1).total_cmp(&at(&b.1))
    });
    let place = members.last().map(|(p, _)| p.clone())?;
    Some((place, conversation(key, members)))
}

/// The calls of one file, written as they are read to a private temporary SQLite database
/// (a file in the temporary directory, `TMPDIR`, deleted when closed; its page cache
/// bounded) and joined there at the end of the file, group by group, exactly as
/// [`Groups::join`] joins them. Nothing is created until the first call.
#[derive(Default)]
pub(crate) struct Spill {
    db: Option<Connection>,
    /// The last group written and its number: a group's calls often come together.
    last: Option<(String, i64)>,
}

/// What a spilled call keeps besides its group, place, start and shape.
#[derive(Serialize, Deserialize)]
struct Kept {
    line: ConversationLine,
    /// Each message's path in its record.
    names: Vec<String>,
    dropped: Dropped,
}

/// Groups numbered in the order they first appear; calls in the order they were read.
const SPILL_SCHEMA: &str = "
    PRAGMA journal_mode = OFF;
    PRAGMA synchronous = OFF;
    PRAGMA cache_size = -16384;
    CREATE TABLE groups (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
    CREATE TABLE calls (
        seq INTEGER PRIMARY KEY, grp INTEGER NOT NULL, line INTEGER NOT NULL,
        record INTEGER, start REAL, shape INTEGER NOT NULL, kept BLOB NOT NULL
    );
    BEGIN;";

/// Why the temporary database failed (a full disk, most likely).
#[derive(Debug, thiserror::Error)]
#[error(
    "joining the calls of traces in a temporary database (in TMPDIR): {0}; free space there, \
     or point TMPDIR at a disk with room"
)]
pub(crate) struct SpillError(String);

impl From<rusqlite::Error> for SpillError {
    fn from(e: rusqlite::Error) -> Self {
        SpillError(e.to_string())
    }
}

impl From<serde_json::Error> for SpillError {
    fn from(e: serde_json::Error) -> Self {
        SpillError(e.to_string())
    }
}

impl Spill {
    pub fn add(&mut self, place: Place, call: Generation) -> Result<(), SpillError> {
        let db = match self.db.take() {
            Some(db) => db,
            None => {
                // An empty name: SQLite's private temporary database on disk.
                let db = Connection::open("")?;
                db.execute_batch(SPILL_SCHEMA)?;
                db
            }
        };
        let grp = match self.last.take() {
            Some((key, id)) if key == call.group => (key, id),
            _ => {
                let id = group_id(&db, &call.group)?;
                (call.group, id)
            }
        };
        let n = call.normalised;
        let names = match n.paths {
            MessagePaths::Named(named) => {
                Arc::try_unwrap(named).map_or_else(|shared| shared.messages.clone(), |n| n.messages)
            }
            _ => Vec::new(),
        };
        let kept = serde_json::to_vec(&Kept {
            line: n.line,
            names,
            dropped: n.dropped,
        })?;
        db.prepare_cached(
            "INSERT INTO calls (grp, line, record, start, shape, kept) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(rusqlite::params![
            grp.1,
            // Bit for bit (read back `as u64`): line numbers never reach the sign bit.
            place.line as i64,
            place.record.map(|r| r as i64),
            call.start_ms,
            n.shape as i64,
            kept
        ])?;
        self.last = Some(grp);
        self.db = Some(db);
        Ok(())
    }

    /// One conversation per group, in the order groups first appear, named by the place
    /// of its last call in the file, handed to `each` one at a time; `each` answering
    /// false stops the join.
    pub fn join(
        self,
        mut each: impl FnMut(Place, Result<Normalised, LineProblem>) -> bool,
    ) -> Result<(), SpillError> {
        let Some(db) = self.db else {
            return Ok(());
        };
        db.execute_batch("CREATE INDEX calls_by_group ON calls (grp)")?;
        let mut query = db.prepare(
            "SELECT c.grp, g.key, c.line, c.record, c.start, c.shape, c.kept \
             FROM calls c JOIN groups g ON g.id = c.grp ORDER BY c.grp, c.seq",
        )?;
        let mut rows = query.query([])?;
        let mut group: Option<(i64, String)> = None;
        let mut members: Vec<(Place, Generation)> = Vec::new();
        while let Some(row) = rows.next()? {
            let grp: i64 = row.get(0)?;
            if group.as_ref().is_some_and(|(g, _)| *g != grp)
                && let Some((_, key)) = group.take()
                && let Some((place, n)) = joined(key, std::mem::take(&mut members))
                && !each(place, Ok(n))
            {
                return Ok(());
            }
            if group.is_none() {
                group = Some((grp, row.get(1)?));
            }
            members.push(spilled_call(row)?);
        }
        if let Some((_, key)) = group
            && let Some((place, n)) = joined(key, members)
        {
            each(place, Ok(n));
        }
        Ok(())
    }
}

/// The group's number, given it at its first call.
fn group_id(db: &Connection, key: &str) -> rusqlite::Result<i64> {
    let known = db
        .prepare_cached("SELECT id FROM groups WHERE key = ?1")?
        .query_row([key], |r| r.get(0))
        .optional()?;
    if let Some(id) = known {
        return Ok(id);
    }
    db.prepare_cached("INSERT INTO groups (key) VALUES (?1)")?
        .execute([key])?;
    Ok(db.last_insert_rowid())
}

/// A call read back from the spill: its place and the call as it was read (the group key
/// is the join's).
fn spilled_call(row: &rusqlite::Row) -> Result<(Place, Generation), SpillError> {
    let place = Place {
        line: row.get::<_, i64>(2)? as u64,
        record: row.get::<_, Option<i64>>(3)?.map(|r| r as u64),
    };
    let shape_at: i64 = row.get(5)?;
    let shape = usize::try_from(shape_at)
        .ok()
        .and_then(|i| Shape::ALL.get(i))
        .copied()
        .ok_or_else(|| SpillError(format!("a call of unknown shape {shape_at}")))?;
    let kept = row
        .get_ref(6)?
        .as_blob()
        .map_err(|e| SpillError(e.to_string()))?;
    let kept: Kept = serde_json::from_slice(kept)?;
    let call = Generation {
        group: String::new(),
        start_ms: row.get(4)?,
        normalised: Normalised {
            shape,
            line: kept.line,
            paths: MessagePaths::Named(Arc::new(NamedPaths {
                list: "input",
                messages: kept.names,
                renamed: &[],
            })),
            dropped: kept.dropped,
        },
    };
    Ok((place, call))
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

#[cfg(test)]
mod tests {
    use super::*;

    type Calls = Vec<(Place, Generation)>;

    /// The calls of the Langfuse and OpenTelemetry examples, in file order, each at its
    /// own place.
    fn example_calls() -> Calls {
        let dir = env!("CARGO_MANIFEST_DIR");
        let mut out = Vec::new();
        let page = std::fs::read(format!("{dir}/examples/langfuse.json")).unwrap();
        for (i, call) in super::super::langfuse::read(&page, true)
            .unwrap()
            .into_iter()
            .enumerate()
        {
            let place = Place {
                line: 1,
                record: Some(i as u64 + 1),
            };
            out.push((place, call.unwrap()));
        }
        let spans = std::fs::read_to_string(format!("{dir}/examples/otel.jsonl")).unwrap();
        for (i, line) in spans.lines().enumerate() {
            for call in super::super::otel::read(line.as_bytes(), true).unwrap() {
                out.push((Place::line(i as u64 + 2), call.unwrap()));
            }
        }
        out
    }

    fn spilled(calls: Calls) -> Vec<(Place, Result<Normalised, LineProblem>)> {
        let mut spill = Spill::default();
        for (place, call) in calls {
            spill.add(place, call).unwrap();
        }
        let mut out = Vec::new();
        spill
            .join(|place, n| {
                out.push((place, n));
                true
            })
            .unwrap();
        out
    }

    #[test]
    fn spilled_calls_join_exactly_as_held_ones_in_any_order() {
        let calls = example_calls();
        let groups: std::collections::HashSet<_> = calls.iter().map(|(_, c)| &c.group).collect();
        assert!(groups.len() >= 3 && calls.len() > groups.len(), "{calls:?}");
        // As read, reversed, and interleaved (every other call, then the rest): each
        // group's calls spread across the file, out of start-time order.
        let orders: [fn(Calls) -> Calls; 3] = [
            |c| c,
            |c| c.into_iter().rev().collect(),
            |c| {
                let (even, odd): (Vec<_>, Vec<_>) =
                    c.into_iter().enumerate().partition(|(i, _)| i % 2 == 0);
                even.into_iter().chain(odd).map(|(_, c)| c).collect()
            },
        ];
        for order in orders {
            let mut held = Groups::default();
            for (place, call) in order(example_calls()) {
                held.add(place, call);
            }
            let held = held.join();
            assert_eq!(held.len(), groups.len());
            assert_eq!(
                format!("{:?}", spilled(order(example_calls()))),
                format!("{held:?}")
            );
        }
    }

    #[test]
    fn the_join_stops_when_asked() {
        let mut seen = 0;
        let mut spill = Spill::default();
        for (place, call) in example_calls() {
            spill.add(place, call).unwrap();
        }
        spill
            .join(|_, _| {
                seen += 1;
                false
            })
            .unwrap();
        assert_eq!(seen, 1);
        assert!(spilled(Vec::new()).is_empty());
    }
}
