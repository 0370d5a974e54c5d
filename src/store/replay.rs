//! Replay's rows (`db/006_replay.sql`): a replayed pass is written as a conversation (the
//! one conversation writer) plus what only a replay knows — its session, round, salt and
//! cache hint; each turn's recorded pause and break, prompt hash, serving provider and
//! recorded calls; every tool call the answer made.

use rusqlite::{Connection, Transaction, params};

use super::StoreError;
use super::inserts::insert_conversation;
use super::records::ConversationRecord;
use super::writer_task::Storable;

/// A tool call an answer made, with what the replay judged of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallRecord {
    pub call_idx: u32,
    pub name: String,
    pub arguments: String,
    /// The arguments parse as a JSON object.
    pub arguments_parse: bool,
    /// The name is one of the session's tools.
    pub name_offered: bool,
}

/// What a replayed turn adds to its row in `turns`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayTurnRecord {
    /// The recorded assistant message this turn replays (index into the session's
    /// messages after conversion).
    pub message_idx: u32,
    /// blake3 of the messages and tools sent (the salt included: one per pass, the same
    /// for every target).
    pub prompt_hash: String,
    /// Recorded pause before the turn, capped; not scaled.
    pub pause_ms: f64,
    /// Seeded idle break before the turn, 0 if none; not scaled.
    pub break_ms: f64,
    pub served_by: Option<String>,
    /// The recorded answer's tool call names, in order (empty: it called none).
    pub recorded_tools: Vec<String>,
    pub tool_calls: Vec<ToolCallRecord>,
}

/// One replayed pass: a session, a round, a target.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayRecord {
    pub conversation: ConversationRecord,
    pub session_id: String,
    pub round: u32,
    pub salt: String,
    /// `none`, `user` or `header:NAME`.
    pub cache_hint: String,
    /// One per stored turn, in order.
    pub turns: Vec<ReplayTurnRecord>,
}

/// What a replay run was given, stored with it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewReplayRun<'a> {
    pub run_id: i64,
    pub sessions: &'a str,
    pub sessions_hash: &'a str,
    pub pause_cap_ms: f64,
    pub pause_scale: f64,
    pub break_share: f64,
    pub break_min_ms: f64,
    pub break_max_ms: f64,
    /// The providers' clock ÷ real time: 1, or the built-in mock's time scale.
    pub clock_scale: f64,
}

/// Marks a run as a replay (once; a resumed run keeps its row).
pub fn insert_replay_run(conn: &Connection, r: &NewReplayRun) -> Result<(), StoreError> {
    conn.execute(
        "INSERT OR IGNORE INTO replay_runs (run_id, sessions, sessions_hash, pause_cap_ms,
             pause_scale, break_share, break_min_ms, break_max_ms, clock_scale)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            r.run_id,
            r.sessions,
            r.sessions_hash,
            r.pause_cap_ms,
            r.pause_scale,
            r.break_share,
            r.break_min_ms,
            r.break_max_ms,
            r.clock_scale
        ],
    )?;
    Ok(())
}

/// Writes a pass: its conversation, then its replay rows; the caller owns the transaction.
pub fn insert_replay(conn: &Connection, r: &ReplayRecord) -> Result<i64, StoreError> {
    let id = insert_conversation(conn, &r.conversation)?;
    conn.prepare_cached(
        "INSERT INTO replay_passes (conversation_id, session_id, round, salt, cache_hint)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![id, r.session_id, r.round, r.salt, r.cache_hint])?;
    let mut turn = conn.prepare_cached(
        "INSERT INTO replay_turns (conversation_id, idx, message_idx, prompt_hash, pause_ms,
             break_ms, served_by, recorded_tools)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    let mut call = conn.prepare_cached(
        "INSERT INTO replay_tool_calls (conversation_id, turn_idx, call_idx, name, arguments,
             arguments_parse, name_offered)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for (idx, t) in r.turns.iter().enumerate() {
        let recorded = (!t.recorded_tools.is_empty()).then(|| {
            // A list of strings: serialising it cannot fail.
            serde_json::to_string(&t.recorded_tools).expect("names serialise")
        });
        turn.execute(params![
            id,
            idx as i64,
            t.message_idx,
            t.prompt_hash,
            t.pause_ms,
            t.break_ms,
            t.served_by,
            recorded
        ])?;
        for c in &t.tool_calls {
            call.execute(params![
                id,
                idx as i64,
                c.call_idx,
                c.name,
                c.arguments,
                c.arguments_parse,
                c.name_offered
            ])?;
        }
    }
    Ok(id)
}

impl Storable for ReplayRecord {
    const THREAD: &'static str = "turnbench-store";

    fn insert(&self, tx: &Transaction) -> Result<bool, StoreError> {
        insert_replay(tx, self).map(|_| true)
    }
}

/// One replayed turn as the report reads it (`replay_turn_facts` with its target's prices
/// and whether it was simulated); only conversations that count for their slot.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayTurnFact {
    pub provider: String,
    pub label: String,
    pub simulated: bool,
    /// The target's prices as stored (JSON), if any.
    pub prices: Option<String>,
    pub conversation_id: i64,
    pub idx: i64,
    pub session_id: String,
    pub outcome: String,
    pub conversation_outcome: String,
    pub ttft_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub reasoning_tokens: Option<i64>,
    pub cached_tokens: Option<i64>,
    /// The break as the provider's clock saw it (`break_seen_ms`).
    pub break_ms: f64,
    pub served_by: Option<String>,
    pub previous_served_by: Option<String>,
    /// JSON names of the recorded calls, if the recorded answer called tools.
    pub recorded_tools: Option<String>,
    pub tool_calls: i64,
    pub tool_calls_valid: Option<bool>,
    pub first_tool: Option<String>,
}

/// The SQL of [`replay_turn_facts`]: driven by `replay_turns` (its plan: `store::plans`).
pub(crate) fn replay_turn_facts_sql() -> String {
    format!(
        "SELECT f.provider, f.label, IFNULL(t.host, '') = 'builtin-mock', t.prices,
                f.conversation_id, f.idx, f.session_id, f.outcome, f.conversation_outcome,
                f.ttft_ms, f.e2e_ms, f.prompt_tokens, f.completion_tokens, f.reasoning_tokens,
                f.cached_tokens, IFNULL(f.break_seen_ms, 0), f.served_by, f.previous_served_by,
                f.recorded_tools, f.tool_calls, f.tool_calls_valid, f.first_tool
         FROM (SELECT * FROM replay_turn_facts WHERE counts AND {}) f
         JOIN targets t ON t.id = f.target_id
         ORDER BY f.label, f.provider, f.conversation_id, f.idx",
        super::facts::SELECTED
    )
}

/// Every selected replayed turn, by provider, label, conversation and turn.
pub fn replay_turn_facts(
    conn: &Connection,
    sel: &super::facts::Selection,
) -> Result<Vec<ReplayTurnFact>, StoreError> {
    super::all(conn, &replay_turn_facts_sql(), &sel.params()[..], |r| {
        Ok(row!(r => ReplayTurnFact {
            provider, label, simulated, prices, conversation_id, idx, session_id, outcome,
            conversation_outcome, ttft_ms, e2e_ms, prompt_tokens, completion_tokens,
            reasoning_tokens, cached_tokens, break_ms, served_by, previous_served_by,
            recorded_tools, tool_calls, tool_calls_valid, first_tool,
        }))
    })
}
