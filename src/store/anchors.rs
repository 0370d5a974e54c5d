//! Reference-anchor judgments (`db/005_judge_trust.sql`): a judge's scores of each
//! scenario's reference conversation and of the variants its `[[defect]]` tables spoil.
//! Written by the judge stage's sanity run; read through `current_anchor_judgments`.

use std::collections::{BTreeMap, HashSet};

use rusqlite::{Connection, Transaction, named_params};

use super::StoreError;
use super::judgments::JudgmentStatus;
use super::writer::Storable;

/// One anchor ask, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct AnchorRecord {
    pub key: String,
    pub scenario: String,
    /// `None`: the reference conversation; else the defect that spoiled it.
    pub defect: Option<String>,
    pub rubric_ref: i64,
    pub judge_ref: i64,
    pub rubric_id: String,
    pub rubric_version: u32,
    pub judge_id: String,
    pub status: JudgmentStatus,
    pub scores: Option<BTreeMap<String, i64>>,
    pub completed: Option<bool>,
    pub rationale: Option<String>,
    pub raw_output: Option<String>,
    pub error: Option<String>,
    pub asks: u32,
    pub attempts: u32,
    pub http_status: Option<u16>,
    pub latency_ms: Option<f64>,
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub simulated: bool,
    pub invocation: String,
    pub seq: u32,
}

/// Writes an ask; an `ok` one already stored for the same key wins (returns false).
pub fn insert_anchor(conn: &Connection, j: &AnchorRecord) -> Result<bool, StoreError> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO anchor_judgments (key, scenario, defect, rubric_ref, judge_ref, rubric_id,
            rubric_version, judge_id, status, scores, completed, rationale, raw_output, error,
            asks, attempts, http_status, latency_ms, prompt_tokens, completion_tokens,
            simulated, invocation, seq, created_at)
         SELECT :key, :scenario, :defect, :rubric_ref, :judge_ref, :rubric_id,
            :rubric_version, :judge_id, :status, :scores, :completed, :rationale, :raw,
            :error, :asks, :attempts, :http_status, :latency, :prompt_tokens,
            :completion_tokens, :simulated, :invocation, :seq, :now
         WHERE NOT EXISTS (SELECT 1 FROM anchor_judgments WHERE key = :key AND status = 'ok')",
    )?;
    // A map of strings to integers: serialising it cannot fail.
    let scores = j
        .scores
        .as_ref()
        .map(|s| serde_json::to_string(s).expect("scores serialise"));
    let n = stmt.execute(named_params! {
        ":key": j.key,
        ":scenario": j.scenario,
        ":defect": j.defect,
        ":rubric_ref": j.rubric_ref,
        ":judge_ref": j.judge_ref,
        ":rubric_id": j.rubric_id,
        ":rubric_version": j.rubric_version,
        ":judge_id": j.judge_id,
        ":status": j.status.as_str(),
        ":scores": scores,
        ":completed": j.completed,
        ":rationale": j.rationale,
        ":raw": j.raw_output,
        ":error": j.error,
        ":asks": j.asks,
        ":attempts": j.attempts,
        ":http_status": j.http_status,
        ":latency": j.latency_ms,
        ":prompt_tokens": j.prompt_tokens,
        ":completion_tokens": j.completion_tokens,
        ":simulated": j.simulated,
        ":invocation": j.invocation,
        ":seq": j.seq,
        ":now": super::now_rfc3339(),
    })?;
    Ok(n == 1)
}

impl Storable for AnchorRecord {
    const THREAD: &'static str = "turnbench-anchors";

    fn insert(&self, tx: &Transaction) -> Result<bool, StoreError> {
        insert_anchor(tx, self)
    }
}

/// Keys of every scored anchor ask: a re-run does not ask them again.
pub fn final_anchor_keys(conn: &Connection) -> Result<HashSet<String>, StoreError> {
    let mut stmt = conn.prepare("SELECT key FROM anchor_judgments WHERE status = 'ok'")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One row of `current_anchor_judgments`.
#[derive(Debug, Clone, PartialEq)]
pub struct AnchorRow {
    /// `id@version`.
    pub rubric: String,
    pub judge_id: String,
    pub judge_model: String,
    pub simulated: bool,
    pub scenario: String,
    pub defect: Option<String>,
    /// The mean of the criterion scores; `None` unless `ok` with scores.
    pub mean_score: Option<f64>,
}

/// Every current anchor judgment, by rubric, judge, scenario.
pub fn current_anchor_judgments(conn: &Connection) -> Result<Vec<AnchorRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT rubric_id, rubric_version, judge_id, judge_model, simulated, scenario, defect,
                status, scores
         FROM current_anchor_judgments
         ORDER BY rubric_id, rubric_version, judge_id, simulated, scenario, defect",
    )?;
    let rows = stmt.query_map([], |r| {
        let status: String = r.get(7)?;
        let scores: Option<String> = r.get(8)?;
        let mean_score = scores
            .filter(|_| status == "ok")
            .and_then(|s| serde_json::from_str::<BTreeMap<String, i64>>(&s).ok())
            .filter(|m| !m.is_empty())
            .map(|m| m.values().map(|&v| v as f64).sum::<f64>() / m.len() as f64);
        Ok(AnchorRow {
            rubric: format!("{}@{}", r.get::<_, String>(0)?, r.get::<_, i64>(1)?),
            judge_id: r.get(2)?,
            judge_model: r.get(3)?,
            simulated: r.get(4)?,
            scenario: r.get(5)?,
            defect: r.get(6)?,
            mean_score,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
