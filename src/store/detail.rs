//! One conversation in full, for the report's drill-down views and `turnbench show`: its
//! identity and outcome, every turn (messages sent, answer, reasoning, timings, tokens,
//! finish reason, error), its current check results with their explanations and its
//! current judgments with their rationales. Read through the read model's views
//! (`conversation_facts`, `turn_facts`, `current_check_results`,
//! `current_check_definitions`, `current_judgments`) and nothing else.
//!
//! Every string here may come from a user's transcript: formats escape it.

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use super::StoreError;
use super::records::Message;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ConversationDetail {
    pub id: i64,
    pub uid: String,
    pub run_id: i64,
    pub run_name: String,
    pub provider: String,
    pub model: String,
    pub label: String,
    pub simulated: bool,
    pub scenario: Option<String>,
    pub repeat: i64,
    pub outcome: String,
    /// 0 for an interrupted attempt that a later conversation redid.
    pub counts: bool,
    pub turns: Vec<TurnDetail>,
    pub checks: Vec<CheckDetail>,
    pub judgments: Vec<JudgmentDetail>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TurnDetail {
    /// 1-based, as checks and `--explain` count turns.
    pub turn: i64,
    /// The messages sent this turn: (role, content).
    pub sent: Vec<(String, String)>,
    pub answer: Option<String>,
    pub reasoning: Option<String>,
    pub outcome: String,
    pub finish_reason: Option<String>,
    pub error: Option<String>,
    pub http_status: Option<i64>,
    pub attempts: Option<i64>,
    pub pause_ms: Option<f64>,
    pub ttft_ms: Option<f64>,
    pub ttfa_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub reasoning_tokens: Option<i64>,
    pub cached_tokens: Option<i64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CheckDetail {
    pub check_id: String,
    pub kind: String,
    pub tag: String,
    /// `None`: not scored (the conversation did not complete).
    pub passed: Option<bool>,
    /// Why: what `turnbench check --explain` prints under the verdict.
    pub detail: Option<String>,
    /// What the check expects (its `description`), when it has one.
    pub description: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct JudgmentDetail {
    pub rubric: String,
    pub rubric_version: i64,
    pub judge: String,
    pub judge_model: String,
    pub simulated: bool,
    pub replicate: i64,
    pub status: String,
    /// Criterion → score (empty unless `ok`).
    pub scores: Vec<(String, i64)>,
    pub rationale: Option<String>,
    pub error: Option<String>,
}

/// The conversation with this numeric id or uid, in full; `None` when the store has none.
pub fn find(conn: &Connection, key: &str) -> Result<Option<ConversationDetail>, StoreError> {
    let by_uid: Option<i64> = conn
        .query_row(
            "SELECT conversation_id FROM conversation_facts WHERE uid = ?1",
            [key],
            |r| r.get(0),
        )
        .optional()?;
    let id = match (by_uid, key.parse::<i64>()) {
        (Some(id), _) => id,
        (None, Ok(id)) => id,
        (None, Err(_)) => return Ok(None),
    };
    conversation(conn, id)
}

/// Conversation `id` in full; `None` when the store has none.
pub fn conversation(conn: &Connection, id: i64) -> Result<Option<ConversationDetail>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT conversation_id, uid, run_id, run_name, provider, model, label, simulated,
                scenario, repeat, outcome, counts
         FROM conversation_facts WHERE conversation_id = ?1",
    )?;
    let head = stmt
        .query_row([id], |r| {
            Ok(ConversationDetail {
                id: r.get(0)?,
                uid: r.get(1)?,
                run_id: r.get(2)?,
                run_name: r.get(3)?,
                provider: r.get(4)?,
                model: r.get(5)?,
                label: r.get(6)?,
                simulated: r.get(7)?,
                scenario: r.get(8)?,
                repeat: r.get(9)?,
                outcome: r.get(10)?,
                counts: r.get(11)?,
                turns: Vec::new(),
                checks: Vec::new(),
                judgments: Vec::new(),
            })
        })
        .optional()?;
    let Some(mut c) = head else {
        return Ok(None);
    };
    c.turns = turns(conn, id, &c.uid)?;
    c.checks = checks(conn, id)?;
    c.judgments = judgments(conn, id)?;
    Ok(Some(c))
}

fn turns(conn: &Connection, id: i64, uid: &str) -> Result<Vec<TurnDetail>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT idx, prompt, answer, reasoning, outcome, finish_reason, error, http_status,
                attempts, pause_ms, ttft_ms, ttfa_ms, e2e_ms, prompt_tokens, completion_tokens,
                reasoning_tokens, cached_tokens
         FROM turn_facts WHERE conversation_id = ?1 ORDER BY idx",
    )?;
    let mut rows = stmt.query([id])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let prompt: String = r.get(1)?;
        let sent: Vec<Message> =
            serde_json::from_str(&prompt).map_err(|e| StoreError::Corrupt {
                uid: uid.to_string(),
                column: "turns.prompt",
                problem: e.to_string(),
            })?;
        let idx: i64 = r.get(0)?;
        out.push(TurnDetail {
            turn: idx + 1,
            sent: sent.into_iter().map(|m| (m.role, m.content)).collect(),
            answer: r.get(2)?,
            reasoning: r.get(3)?,
            outcome: r.get(4)?,
            finish_reason: r.get(5)?,
            error: r.get(6)?,
            http_status: r.get(7)?,
            attempts: r.get(8)?,
            pause_ms: r.get(9)?,
            ttft_ms: r.get(10)?,
            ttfa_ms: r.get(11)?,
            e2e_ms: r.get(12)?,
            prompt_tokens: r.get(13)?,
            completion_tokens: r.get(14)?,
            reasoning_tokens: r.get(15)?,
            cached_tokens: r.get(16)?,
        });
    }
    Ok(out)
}

fn checks(conn: &Connection, id: i64) -> Result<Vec<CheckDetail>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.check_id, r.kind, r.tag, r.passed, r.detail,
                json_extract(d.definition, '$.description')
         FROM current_check_results r
         JOIN current_check_definitions d ON d.definition_id = r.definition_id
         WHERE r.conversation_id = ?1
         ORDER BY (r.passed IS NULL), r.passed, r.check_id",
    )?;
    let rows = stmt.query_map([id], |r| {
        Ok(CheckDetail {
            check_id: r.get(0)?,
            kind: r.get(1)?,
            tag: r.get(2)?,
            passed: r.get(3)?,
            detail: r.get(4)?,
            description: r.get::<_, Option<String>>(5).unwrap_or(None),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn judgments(conn: &Connection, id: i64) -> Result<Vec<JudgmentDetail>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT rubric_id, rubric_version, judge_id, judge_model, simulated, replicate, status,
                scores, rationale, error
         FROM current_judgments WHERE conversation_id = ?1
         ORDER BY rubric_id, judge_id, simulated, replicate",
    )?;
    let mut rows = stmt.query([id])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let scores: Option<String> = r.get(7)?;
        let scores = match scores {
            None => Vec::new(),
            Some(text) => serde_json::from_str::<std::collections::BTreeMap<String, i64>>(&text)
                .map_err(|e| StoreError::Corrupt {
                    uid: id.to_string(),
                    column: "judgments.scores",
                    problem: e.to_string(),
                })?
                .into_iter()
                .collect(),
        };
        out.push(JudgmentDetail {
            rubric: r.get(0)?,
            rubric_version: r.get(1)?,
            judge: r.get(2)?,
            judge_model: r.get(3)?,
            simulated: r.get(4)?,
            replicate: r.get(5)?,
            status: r.get(6)?,
            scores,
            rationale: r.get(8)?,
            error: r.get(9)?,
        });
    }
    Ok(out)
}
