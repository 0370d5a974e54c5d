//! One conversation in full, for the report's drill-down views and `turnbench show`: its
//! identity and outcome, every turn (messages sent, answer, reasoning, timings, tokens,
//! finish reason, error), its current check results with their explanations and its
//! current judgments with their rationales, and the pairwise verdicts it took part in
//! (as baseline or candidate, both positions). Read through the read model's views
//! (`conversation_facts`, `turn_facts`, `current_check_results`,
//! `current_check_definitions`, `current_judgments`, `current_pairwise_judgments`,
//! `pairwise_verdicts`) and, for a failed ask's error text, its `pairwise_judgments` row.
//!
//! Every string here may come from a user's transcript: formats escape it.

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use super::StoreError;
use crate::chat::Message;
use crate::exchange::ToolCallLine;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
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
    /// The pairwise comparisons this conversation took part in, as baseline or candidate.
    pub pairwise: Vec<PairwiseDetail>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TurnDetail {
    /// 1-based, as checks and `--explain` count turns.
    pub turn: i64,
    /// The messages sent this turn.
    pub sent: Vec<Sent>,
    pub answer: Option<String>,
    /// The tools the answer called (`turns.tool_calls`), in OpenAI's chat shape; empty:
    /// none (or not kept).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallLine>,
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

/// One message sent: its role, its content and, for a tool result, the id of the call it
/// answers. Written as `[role, content]`, or `[role, content, tool_call_id]` for a tool
/// result that names its call.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    pub role: String,
    pub content: String,
    pub tool_call_id: Option<String>,
}

impl Serialize for Sent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(2 + usize::from(self.tool_call_id.is_some())))?;
        seq.serialize_element(&self.role)?;
        seq.serialize_element(&self.content)?;
        if let Some(id) = &self.tool_call_id {
            seq.serialize_element(id)?;
        }
        seq.end()
    }
}

impl From<Message> for Sent {
    fn from(m: Message) -> Self {
        Sent {
            role: m.role,
            content: m.content,
            tool_call_id: m.tool_call_id,
        }
    }
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
    /// The first turn (1-based) whose answer failed the check, from its turn verdicts
    /// (`current_check_turn_results`); `None` when no answer in its scope failed (or the
    /// store has no turn verdicts for it yet).
    pub first_failed_turn: Option<i64>,
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

/// One pairwise comparison (baseline × candidate × rubric × judge) seen from one of its
/// two conversations: the opponent, each ask (the two positions) and the verdict.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PairwiseDetail {
    /// `baseline` or `candidate`: this conversation's side.
    pub role: String,
    pub opponent_id: i64,
    pub opponent_uid: String,
    /// The opponent's cell, `provider / label`.
    pub opponent_cell: String,
    pub rubric: String,
    pub rubric_version: i64,
    pub judge: String,
    pub judge_model: String,
    pub simulated: bool,
    /// The two asks, this conversation shown first (A) then second (B), as far as asked.
    pub asks: Vec<PairwiseAsk>,
    /// Both asks ok and reading the same through the positions; `None` until both are ok.
    pub consistent: Option<bool>,
    /// The verdict from this conversation's side: `this`, `opponent` or `tie` (an
    /// inconsistent pair counts as a tie); `None` until both asks are ok.
    pub verdict: Option<String>,
}

/// One pairwise ask: where this conversation was shown, what the judge said.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PairwiseAsk {
    /// `A` (shown first) or `B`.
    pub position: String,
    pub status: String,
    /// The judge's answer by position: `A`, `B` or `tie`.
    pub winner: Option<String>,
    /// The same answer from this conversation's side: `this`, `opponent` or `tie`.
    pub preferred: Option<String>,
    pub rationale: Option<String>,
    pub error: Option<String>,
}

/// `baseline` / `candidate` / `tie`, read from `role`'s side.
fn side(preferred: Option<&str>, role: &str) -> Option<String> {
    preferred.map(|p| match p {
        "tie" => "tie".to_string(),
        p if p == role => "this".to_string(),
        _ => "opponent".to_string(),
    })
}

/// Every stored rubric's scale, by `id@version`: (min, max) from its content.
pub fn rubric_scales(
    conn: &Connection,
) -> Result<std::collections::HashMap<String, (i64, i64)>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT rubric_id || '@' || version, json_extract(content, '$.scale.min'),
                json_extract(content, '$.scale.max')
         FROM rubrics",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<i64>>(1)?,
            r.get::<_, Option<i64>>(2)?,
        ))
    })?;
    let mut out = std::collections::HashMap::new();
    for row in rows {
        if let (key, Some(min), Some(max)) = row? {
            out.insert(key, (min, max));
        }
    }
    Ok(out)
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
            Ok(row!(r => ConversationDetail {
                id, uid, run_id, run_name, provider, model, label, simulated, scenario, repeat,
                outcome, counts; ..Default::default()
            }))
        })
        .optional()?;
    let Some(mut c) = head else {
        return Ok(None);
    };
    c.turns = turns(conn, id, &c.uid)?;
    c.checks = checks(conn, id)?;
    c.judgments = judgments(conn, id)?;
    c.pairwise = pairwise(conn, id)?;
    Ok(Some(c))
}

fn turns(conn: &Connection, id: i64, uid: &str) -> Result<Vec<TurnDetail>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT idx, prompt, answer, reasoning, outcome, finish_reason, error, http_status,
                attempts, pause_ms, ttft_ms, ttfa_ms, e2e_ms, prompt_tokens, completion_tokens,
                reasoning_tokens, cached_tokens,
                (SELECT u.tool_calls FROM turns u
                  WHERE u.conversation_id = f.conversation_id AND u.idx = f.idx)
         FROM turn_facts f WHERE conversation_id = ?1 ORDER BY idx",
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
        let tool_calls = match r.get::<_, Option<String>>(17)? {
            Some(json) => serde_json::from_str(&json).map_err(|e| StoreError::Corrupt {
                uid: uid.to_string(),
                column: "turns.tool_calls",
                problem: e.to_string(),
            })?,
            None => Vec::new(),
        };
        let idx: i64 = r.get(0)?;
        out.push(TurnDetail {
            turn: idx + 1,
            sent: sent.into_iter().map(Sent::from).collect(),
            answer: r.get(2)?,
            tool_calls,
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
    super::all(
        conn,
        "SELECT r.check_id, r.kind, r.tag, r.passed, r.detail,
                json_extract(d.definition, '$.description'),
                (SELECT MIN(t.turn) FROM check_turn_results t
                 WHERE t.conversation_id = r.conversation_id
                   AND t.definition_id = r.definition_id AND t.passed = 0)
         FROM current_check_results r
         JOIN current_check_definitions d ON d.definition_id = r.definition_id
         WHERE r.conversation_id = ?1
         ORDER BY (r.passed IS NULL), r.passed, r.check_id",
        [id],
        |r| {
            Ok(CheckDetail {
                check_id: r.get(0)?,
                kind: r.get(1)?,
                tag: r.get(2)?,
                passed: r.get(3)?,
                detail: r.get(4)?,
                description: r.get::<_, Option<String>>(5).unwrap_or(None),
                first_failed_turn: r.get(6)?,
            })
        },
    )
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

fn pairwise(conn: &Connection, id: i64) -> Result<Vec<PairwiseDetail>, StoreError> {
    // Every current ask with this conversation on either side, with the opponent's
    // identity and the pair's verdict (NULL until both positions are current).
    let mut stmt = conn.prepare_cached(
        "SELECT CASE WHEN p.baseline_id = ?1 THEN 'baseline' ELSE 'candidate' END AS role,
                o.conversation_id, o.uid, o.provider || ' / ' || o.label,
                p.rubric_id, p.rubric_version, p.judge_id, p.judge_model, p.simulated,
                p.baseline_position, p.status, p.winner, p.preferred, p.rationale, j.error,
                v.consistent, v.verdict
         FROM current_pairwise_judgments p
         JOIN conversation_facts o ON o.conversation_id =
              CASE WHEN p.baseline_id = ?1 THEN p.candidate_id ELSE p.baseline_id END
         LEFT JOIN pairwise_judgments j ON j.id = p.pairwise_judgment_id
         LEFT JOIN pairwise_verdicts v ON v.baseline_id = p.baseline_id
              AND v.candidate_id = p.candidate_id AND v.rubric_id = p.rubric_id
              AND v.judge_id = p.judge_id AND v.simulated = p.simulated
         WHERE p.baseline_id = ?1 OR p.candidate_id = ?1
         ORDER BY p.rubric_id, p.judge_id, p.simulated, o.conversation_id, role",
    )?;
    let mut rows = stmt.query([id])?;
    let mut out: Vec<PairwiseDetail> = Vec::new();
    while let Some(r) = rows.next()? {
        let role: String = r.get(0)?;
        let baseline_position: String = r.get(9)?;
        // This conversation's position: the baseline's, or the other one.
        let position = match (role.as_str(), baseline_position.as_str()) {
            ("baseline", p) => p.to_string(),
            (_, "A") => "B".to_string(),
            _ => "A".to_string(),
        };
        let preferred: Option<String> = r.get(12)?;
        let verdict: Option<String> = r.get(16)?;
        let ask = PairwiseAsk {
            position,
            status: r.get(10)?,
            winner: r.get(11)?,
            preferred: side(preferred.as_deref(), &role),
            rationale: r.get(13)?,
            error: r.get(14)?,
        };
        let head = PairwiseDetail {
            role: role.clone(),
            opponent_id: r.get(1)?,
            opponent_uid: r.get(2)?,
            opponent_cell: r.get(3)?,
            rubric: r.get(4)?,
            rubric_version: r.get(5)?,
            judge: r.get(6)?,
            judge_model: r.get(7)?,
            simulated: r.get(8)?,
            asks: Vec::new(),
            consistent: r.get(15)?,
            verdict: side(verdict.as_deref(), &role),
        };
        match out.last_mut() {
            Some(last)
                if (
                    &last.role,
                    last.opponent_id,
                    &last.rubric,
                    &last.judge,
                    last.simulated,
                ) == (
                    &head.role,
                    head.opponent_id,
                    &head.rubric,
                    &head.judge,
                    head.simulated,
                ) =>
            {
                last.asks.push(ask);
            }
            _ => out.push(PairwiseDetail {
                asks: vec![ask],
                ..head
            }),
        }
    }
    for p in &mut out {
        p.asks.sort_by(|a, b| a.position.cmp(&b.position));
    }
    Ok(out)
}
