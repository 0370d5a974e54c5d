//! The one writer of a conversation's rows (conversation, turns, attempts). Import keeps an
//! inserter for a whole file, so its statements are prepared once, and hands it prompts
//! already serialised (it does that on its reader thread); [`insert_conversation`] makes
//! one per conversation for collect's writer. The caller owns the transactions.
//!
//! [`insert_conversation`]: super::inserts::insert_conversation

use std::collections::HashMap;

use rusqlite::{CachedStatement, Connection, OptionalExtension, params};

use super::StoreError;
use super::records::{ConversationRecord, encode_kinds, encode_offsets};
use crate::outcome::ConversationOutcome;

pub struct ConversationInserter<'c> {
    conversation: CachedStatement<'c>,
    turn: CachedStatement<'c>,
    attempt: CachedStatement<'c>,
    supersede_interrupted: CachedStatement<'c>,
    slot_result: CachedStatement<'c>,
    run_has_interrupted: CachedStatement<'c>,
    /// Per run: whether it holds an interrupted conversation. Only then can a new
    /// conversation supersede one, so a run without (every import, most collects) skips
    /// the per-slot statement: one probe per run instead of one per conversation.
    interrupted_runs: HashMap<i64, bool>,
}

impl<'c> ConversationInserter<'c> {
    /// Takes the statements from the connection's cache (preparing them the first time), so
    /// a short-lived inserter per conversation costs three cache lookups, not three prepares.
    pub fn new(conn: &'c Connection) -> Result<Self, StoreError> {
        Ok(ConversationInserter {
            conversation: conn.prepare_cached(
                "INSERT INTO conversations (uid, run_id, target_id, scenario, scenario_ref,
                     repeat, outcome, started_at, ended_at, latency_ms, turn_count, trailing)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )?,
            turn: conn.prepare_cached(
                "INSERT INTO turns (conversation_id, idx, prompt, answer, reasoning,
                     finish_reason, http_status, outcome, error, attempts, pause_ms, start_ms,
                     ttft_ms, ttfa_ms, e2e_ms, prompt_tokens, completion_tokens,
                     reasoning_tokens, cached_tokens, visible_tokens, request_id, chunk_offsets,
                     wall_ms, has_answer, has_reasoning, overflow_prompt_tokens,
                     overflow_window_tokens, overflow_completion_tokens, chunk_kinds, tool_calls)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                         ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29,
                         ?30)",
            )?,
            attempt: conn.prepare_cached(
                "INSERT INTO attempts (conversation_id, turn_idx, attempt, outcome, http_status,
                     error, e2e_ms, waited_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?,
            // Both probe small partial indexes (interrupted rows; non-interrupted rows), so
            // a slot without history costs one index probe, not a scan.
            supersede_interrupted: conn.prepare_cached(
                "UPDATE conversations SET superseded_by = ?1
                 WHERE outcome = 'interrupted' AND run_id = ?2 AND target_id = ?3
                   AND scenario = ?4 AND repeat = ?5 AND id <> ?1",
            )?,
            run_has_interrupted: conn.prepare_cached(
                "SELECT EXISTS(SELECT 1 FROM conversations
                               WHERE run_id = ?1 AND outcome = 'interrupted')",
            )?,
            interrupted_runs: HashMap::new(),
            slot_result: conn.prepare_cached(
                "SELECT id FROM conversations
                 WHERE outcome <> 'interrupted' AND run_id = ?1 AND target_id = ?2
                   AND scenario = ?3 AND repeat = ?4",
            )?,
        })
    }

    /// Writes a conversation, then its turns and attempts; `prompts` holds each turn's
    /// prompt as JSON (`[{role, content}]`), in turn order, and `c.turns[i].prompt` is not
    /// read. The conversation row goes first, so a constraint that refuses it (a known
    /// uid, a taken slot) leaves nothing behind.
    pub fn insert(
        &mut self,
        conn: &Connection,
        c: &ConversationRecord,
        prompts: &[String],
    ) -> Result<i64, StoreError> {
        // Both callers build `prompts` from `c.turns`, one per turn: a mismatch is a bug here.
        assert_eq!(prompts.len(), c.turns.len(), "one prompt per turn");
        let trailing = (!c.trailing.is_empty())
            .then(|| serde_json::to_string(&c.trailing).expect("messages serialise"));
        self.conversation.execute(params![
            c.uid,
            c.run_id,
            c.target_id,
            c.scenario,
            c.scenario_ref,
            c.repeat,
            c.outcome,
            c.started_at,
            c.ended_at,
            c.latency_ms(),
            c.turns.len() as i64,
            trailing,
        ])?;
        let id = conn.last_insert_rowid();
        for (idx, (t, prompt)) in c.turns.iter().zip(prompts).enumerate() {
            let offsets =
                (!t.chunk_offsets_us.is_empty()).then(|| encode_offsets(&t.chunk_offsets_us));
            // One kind per offset, or none at all: a reader never pairs a kind with the
            // wrong event.
            let kinds = (!t.chunk_offsets_us.is_empty()
                && t.chunk_kinds.len() == t.chunk_offsets_us.len())
            .then(|| encode_kinds(&t.chunk_kinds));
            // Strings only: serialising them cannot fail.
            let tool_calls = (!t.tool_calls.is_empty())
                .then(|| serde_json::to_string(&t.tool_calls).expect("tool calls serialise"));
            self.turn.execute(params![
                id,
                idx as i64,
                prompt,
                t.answer,
                t.reasoning,
                t.finish_reason,
                t.http_status,
                t.outcome().as_str(),
                t.error,
                t.attempts,
                t.pause_ms,
                t.start_ms,
                t.ttft_ms,
                t.ttfa_ms,
                t.e2e_ms,
                t.usage.prompt_tokens,
                t.usage.completion_tokens,
                t.usage.reasoning_tokens,
                t.usage.cached_tokens,
                t.visible_tokens,
                t.request_id,
                offsets,
                t.wall_ms,
                t.has_visible_text(),
                t.reasoning.as_deref().is_some_and(|r| !r.is_empty()),
                t.context.and_then(|c| c.prompt_tokens),
                t.context.and_then(|c| c.window_tokens),
                t.context.and_then(|c| c.completion_tokens),
                kinds,
                tool_calls,
            ])?;
        }
        for a in &c.attempts {
            self.attempt.execute(params![
                id,
                a.turn_idx,
                a.attempt,
                a.outcome.as_str(),
                a.http_status,
                a.error,
                a.e2e_ms,
                a.waited_ms
            ])?;
        }
        self.supersede(id, c)?;
        Ok(id)
    }

    /// One conversation counts per slot (run, target, scenario, repeat): the slot's
    /// non-interrupted result when it has one, else its newest interrupted attempt. Every
    /// other row of the slot is interrupted history and points at the one that counts.
    fn supersede(&mut self, id: i64, c: &ConversationRecord) -> Result<(), StoreError> {
        let Some(scenario) = &c.scenario else {
            return Ok(()); // a conversation without a scenario is a slot of its own
        };
        let interrupted = c.outcome == ConversationOutcome::Interrupted;
        let has = match self.interrupted_runs.get(&c.run_id) {
            Some(&has) => has,
            None => self
                .run_has_interrupted
                .query_row([c.run_id], |r| r.get::<_, bool>(0))?,
        };
        self.interrupted_runs.insert(c.run_id, has || interrupted);
        if !has && !interrupted {
            return Ok(());
        }
        let slot = params![c.run_id, c.target_id, scenario, c.repeat];
        let counted = if interrupted {
            self.slot_result
                .query_row(slot, |r| r.get::<_, i64>(0))
                .optional()?
                .unwrap_or(id)
        } else {
            id
        };
        self.supersede_interrupted.execute(params![
            counted,
            c.run_id,
            c.target_id,
            scenario,
            c.repeat
        ])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::Message;
    use crate::client::ChunkKind;
    use crate::outcome::TurnOutcome;
    use crate::store::inserts::{
        NewRun, NewTarget, insert_conversation, insert_run, upsert_target,
    };
    use crate::store::records::{AttemptRecord, TurnRecord, TurnResult, Usage};

    /// Every column of every table the two writers touch, ids aside.
    fn dump(conn: &Connection) -> Vec<String> {
        let mut out = Vec::new();
        for sql in [
            "SELECT json_array(uid, run_id, target_id, scenario, scenario_ref, repeat, outcome,
                 started_at, ended_at, latency_ms, turn_count, trailing)
             FROM conversations ORDER BY uid",
            "SELECT json_array(c.uid, t.idx, t.prompt, t.answer, t.reasoning, t.finish_reason,
                 t.http_status, t.outcome, t.error, t.attempts, t.pause_ms, t.start_ms, t.ttft_ms,
                 t.ttfa_ms, t.e2e_ms, t.prompt_tokens, t.completion_tokens, t.reasoning_tokens,
                 t.cached_tokens, t.visible_tokens, t.request_id, hex(t.chunk_offsets), t.wall_ms, hex(t.chunk_kinds),
                 t.tool_calls)
             FROM turns t JOIN conversations c ON c.id = t.conversation_id ORDER BY c.uid, t.idx",
            "SELECT json_array(c.uid, a.turn_idx, a.attempt, a.outcome, a.http_status, a.error,
                 a.e2e_ms, a.waited_ms)
             FROM attempts a JOIN conversations c ON c.id = a.conversation_id
             ORDER BY c.uid, a.turn_idx, a.attempt",
        ] {
            let mut stmt = conn.prepare(sql).unwrap();
            let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
            out.extend(rows.map(Result::unwrap));
        }
        out
    }

    fn record(run_id: i64, target_id: i64) -> ConversationRecord {
        let turn = TurnRecord {
            result: TurnResult {
                answer: Some("A".into()),
                reasoning: Some("R".into()),
                finish_reason: Some("stop".into()),
                http_status: Some(200),
                outcome: Some(TurnOutcome::Ok),
                error: None,
                attempts: 2,
                ttft_ms: Some(10.0),
                ttfa_ms: Some(11.0),
                e2e_ms: Some(20.0),
                wall_ms: Some(35.0),
                usage: Usage {
                    prompt_tokens: Some(5),
                    completion_tokens: Some(3),
                    cached_tokens: None,
                    reasoning_tokens: Some(1),
                },
                context: None,
                request_id: Some("req-1".into()),
                chunk_offsets_us: vec![1, 2, 3],
                chunk_kinds: vec![ChunkKind::Other, ChunkKind::Reasoning, ChunkKind::Answer],
            },
            prompt: vec![Message::new("system", "S"), Message::new("user", "Q \"1\"")],
            pause_ms: Some(12.5),
            start_ms: Some(1.0),
            visible_tokens: Some(1),
            tool_calls: vec![crate::exchange::ToolCallLine::function(
                Some("c1".into()),
                "ls",
                "{}".into(),
            )],
        };
        let failed = TurnRecord {
            result: TurnResult {
                outcome: Some(TurnOutcome::Timeout),
                error: Some("no answer".into()),
                attempts: 1,
                ..Default::default()
            },
            prompt: vec![Message::new("user", "Q2")],
            ..Default::default()
        };
        ConversationRecord {
            uid: "u1".into(),
            run_id,
            target_id,
            scenario: Some("s".into()),
            scenario_ref: None,
            repeat: 3,
            outcome: crate::outcome::ConversationOutcome::Failed(TurnOutcome::Timeout),
            started_at: Some("2025-12-01T00:00:00.000Z".into()),
            ended_at: None,
            turns: vec![turn, failed],
            attempts: vec![AttemptRecord {
                turn_idx: 1,
                attempt: 1,
                outcome: TurnOutcome::RateLimited,
                http_status: Some(429),
                error: Some("slow down".into()),
                e2e_ms: Some(3.0),
                waited_ms: 0.0,
            }],
            trailing: vec![Message::new("user", "bye")],
        }
    }

    fn store() -> (tempfile::TempDir, Connection, i64, i64) {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open(&dir.path().join("t.db")).unwrap();
        let run = insert_run(
            &conn,
            &NewRun {
                name: "r",
                source: "import",
                seed: None,
                settings_json: "{}",
                tokenizer: None,
            },
        )
        .unwrap();
        let target = upsert_target(
            &conn,
            &NewTarget {
                provider: "p",
                model: "m",
                label: "m",
                host: None,
                params_json: "{}",
                prices_json: None,
            },
        )
        .unwrap();
        (dir, conn, run, target)
    }

    #[test]
    fn writes_the_same_rows_as_insert_conversation() {
        let (_a, one, run, target) = store();
        insert_conversation(&one, &record(run, target)).unwrap();
        let (_b, two, run, target) = store();
        let c = record(run, target);
        let prompts: Vec<String> = c
            .turns
            .iter()
            .map(|t| serde_json::to_string(&t.prompt).unwrap())
            .collect();
        ConversationInserter::new(&two)
            .unwrap()
            .insert(&two, &c, &prompts)
            .unwrap();
        let rows = dump(&one);
        assert_eq!(rows.len(), 4);
        assert_eq!(dump(&two), rows);
    }

    #[test]
    fn one_conversation_counts_per_slot() {
        use crate::outcome::ConversationOutcome as C;
        let (_dir, conn, run, target) = store();
        let insert = |uid: &str, repeat: u32, outcome: C| {
            let mut c = record(run, target);
            c.uid = uid.into();
            c.repeat = repeat;
            c.outcome = outcome;
            insert_conversation(&conn, &c).unwrap()
        };
        let superseded_by = |id: i64| -> Option<i64> {
            conn.query_row(
                "SELECT superseded_by FROM conversations WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
        };
        // Interrupted twice, then redone: both interrupted rows point at the result.
        let a = insert("a", 1, C::Interrupted);
        let b = insert("b", 1, C::Interrupted);
        assert_eq!(
            superseded_by(a),
            Some(b),
            "the newer attempt counts meanwhile"
        );
        let c = insert("c", 1, C::Completed);
        assert_eq!((superseded_by(a), superseded_by(b)), (Some(c), Some(c)));
        assert_eq!(superseded_by(c), None);
        // An interrupted row stored after its slot's result never displaces it.
        let d = insert("d", 1, C::Interrupted);
        assert_eq!((superseded_by(d), superseded_by(c)), (Some(c), None));
        // Other slots are untouched.
        let e = insert("e", 2, C::Interrupted);
        assert_eq!(superseded_by(e), None);
        let counted: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM conversation_facts WHERE counts",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(counted, 2);
    }
}
