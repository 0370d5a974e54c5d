//! Human labels as the store keeps them: judgments of the judge `human:<rater>` in the
//! `judgments` table, read through `current_judgments` like every judge's. What `label
//! import` writes and what every reader needs to tell a person from a judge.
//!
//! A rater is one `judges` row (model and host `human`, not simulated, no settings or
//! template), so `current_judgments` takes each rater's newest label per conversation and
//! rubric (replicate 1), and older labels stay as history.

use rusqlite::{Connection, OptionalExtension};

use super::StoreError;
use super::judgments::{JudgeCall, JudgmentRecord, JudgmentStatus, NewJudge, upsert_judge};

/// The judge id of a rater's labels: `human:` then the rater's name.
pub const HUMAN_PREFIX: &str = "human:";

/// The model and host a rater's judges row names.
pub const HUMAN_MODEL: &str = "human";

/// Is this judge id a person's (a human label), not a model's?
pub fn is_human(judge_id: &str) -> bool {
    judge_id.starts_with(HUMAN_PREFIX)
}

/// The judge id of a rater.
pub fn human_judge_id(rater: &str) -> String {
    format!("{HUMAN_PREFIX}{rater}")
}

/// The `judges` row of a rater (created on first use).
pub fn rater_ref(conn: &Connection, rater: &str) -> Result<i64, StoreError> {
    let judge_id = human_judge_id(rater);
    upsert_judge(
        conn,
        &NewJudge {
            judge_id: &judge_id,
            model: HUMAN_MODEL,
            host: HUMAN_MODEL,
            simulated: false,
            settings_json: "{}",
            template: "",
        },
    )
}

/// A stored rubric version: its row id and content JSON.
pub fn stored_rubric(
    conn: &Connection,
    rubric_id: &str,
    version: u32,
) -> Result<Option<(i64, String)>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT id, content FROM rubrics WHERE rubric_id = ?1 AND version = ?2",
            rusqlite::params![rubric_id, version],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

/// One human label, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelRecord {
    pub conversation_id: i64,
    pub rater: String,
    pub rater_ref: i64,
    pub rubric_ref: i64,
    pub rubric_id: String,
    pub rubric_version: u32,
    pub scores: std::collections::BTreeMap<String, i64>,
    pub completed: bool,
    /// The rater's own words, when the file gives them.
    pub rationale: Option<String>,
    /// The file and line it came from (kept as the row's `raw_output`, for `show`).
    pub source: String,
    /// When the import started (the row's `invocation`).
    pub invocation: String,
    /// Its line number (the row's `seq`).
    pub line: u32,
}

impl LabelRecord {
    /// The row's key: the rater, conversation, rubric version and the label's content, so
    /// the same label gives the same key wherever it comes from.
    fn key(&self) -> String {
        let scores = serde_json::to_string(&self.scores).unwrap_or_default();
        super::content_key(&[
            "human-label",
            &self.rater,
            &self.conversation_id.to_string(),
            &self.rubric_id,
            &self.rubric_version.to_string(),
            &scores,
            if self.completed { "1" } else { "0" },
        ])
    }
}

/// How writing a label went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelWrite {
    /// A first label for this conversation, rater and rubric version.
    Added,
    /// A different label than the current one: it is current now, the old one history.
    Replaced,
    /// The same label is current already: nothing written.
    Unchanged,
}

/// Writes a label unless the same one is current for its conversation, rater and rubric
/// version; a changed label is stored beside the old one and becomes current (the newest
/// scored row is the one `current_judgments` reads), so nothing is ever deleted.
pub fn write_label(conn: &Connection, l: &LabelRecord) -> Result<LabelWrite, StoreError> {
    let key = l.key();
    let current: Option<String> = conn
        .query_row(
            "SELECT key FROM judgments
             WHERE conversation_id = ?1 AND rubric_ref = ?2 AND judge_ref = ?3
               AND replicate = 1 AND status = 'ok'
             ORDER BY id DESC LIMIT 1",
            rusqlite::params![l.conversation_id, l.rubric_ref, l.rater_ref],
            |r| r.get(0),
        )
        .optional()?;
    let write = match &current {
        Some(k) if *k == key => return Ok(LabelWrite::Unchanged),
        Some(_) => LabelWrite::Replaced,
        None => LabelWrite::Added,
    };
    let record = JudgmentRecord {
        key,
        conversation_id: l.conversation_id,
        replicate: 1,
        label: "human".to_string(),
        scores: Some(l.scores.clone()),
        completed: Some(l.completed),
        call: JudgeCall {
            rubric_ref: l.rubric_ref,
            judge_ref: l.rater_ref,
            rubric_id: l.rubric_id.clone(),
            rubric_version: l.rubric_version,
            judge_id: human_judge_id(&l.rater),
            status: JudgmentStatus::Ok,
            rationale: l.rationale.clone(),
            raw_output: Some(l.source.clone()),
            error: None,
            asks: 0,
            attempts: 0,
            http_status: None,
            latency_ms: None,
            prompt_tokens: None,
            completion_tokens: None,
            simulated: false,
            invocation: l.invocation.clone(),
            seq: l.line,
        },
        // Stored beside an older scored row of the same key (A, then B, then A again).
        rejudge: true,
    };
    super::judgments::insert_judgment(conn, &record)?;
    Ok(write)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raters_are_told_from_judges_by_their_prefix() {
        assert!(is_human(&human_judge_id("ana")));
        assert_eq!(human_judge_id("ana"), "human:ana");
        assert!(!is_human("default"));
        assert!(!is_human("humane-judge"));
    }
}
