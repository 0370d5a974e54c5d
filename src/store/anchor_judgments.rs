//! Reference-anchor judgments (`db/005_judge_trust.sql`): a judge's scores of each
//! scenario's reference conversation and of the variants its `[[defect]]` tables spoil.
//! Written by the judge stage's sanity run; read through `current_anchor_judgments`.

use std::collections::{BTreeMap, HashSet};

use rusqlite::{Connection, Transaction};

use super::StoreError;
use super::judgments::{JudgeCall, insert_sql, scores_json};
use super::writer_task::Storable;

/// One anchor ask, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct AnchorRecord {
    pub key: String,
    pub scenario: String,
    /// `None`: the reference conversation; else the defect that spoiled it.
    pub defect: Option<String>,
    pub scores: Option<BTreeMap<String, i64>>,
    pub completed: Option<bool>,
    pub call: JudgeCall,
}

/// Writes an ask; an `ok` one already stored for the same key wins (returns false).
pub fn insert_anchor(conn: &Connection, j: &AnchorRecord) -> Result<bool, StoreError> {
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        insert_sql(
            "anchor_judgments",
            "scenario, defect, scores, completed",
            ":scenario, :defect, :scores, :completed",
            "NOT EXISTS (SELECT 1 FROM anchor_judgments WHERE key = :key AND status = 'ok')",
        )
    });
    let mut stmt = conn.prepare_cached(&SQL)?;
    let scores = scores_json(&j.scores);
    let now = super::now_rfc3339();
    let own: [(&str, &dyn rusqlite::ToSql); 6] = [
        (":key", &j.key),
        (":scenario", &j.scenario),
        (":defect", &j.defect),
        (":scores", &scores),
        (":completed", &j.completed),
        (":now", &now),
    ];
    let params: Vec<_> = own.into_iter().chain(j.call.params()).collect();
    Ok(stmt.execute(&*params)? == 1)
}

impl Storable for AnchorRecord {
    const THREAD: &'static str = "turnbench-anchors";

    fn insert(&self, tx: &Transaction) -> Result<bool, StoreError> {
        insert_anchor(tx, self)
    }
}

/// Keys of every scored anchor ask: a re-run does not ask them again.
pub fn final_anchor_keys(conn: &Connection) -> Result<HashSet<String>, StoreError> {
    super::all(
        conn,
        "SELECT key FROM anchor_judgments WHERE status = 'ok'",
        [],
        |r| r.get(0),
    )
}

/// The controls of the anchor suite, stored as anchor judgments whose `defect` is
/// `control:<name>` (a defect name from a checks file is a slug and has no colon).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ControlKind {
    /// The reference with irrelevant, fluent filler after its final answer: must not score
    /// above the plain reference.
    Padding,
    /// A generic, polite non-answer to every turn: must land in the rubric's lowest band.
    Null,
}

impl ControlKind {
    pub const ALL: [ControlKind; 2] = [ControlKind::Padding, ControlKind::Null];

    pub fn name(self) -> &'static str {
        match self {
            ControlKind::Padding => "padding",
            ControlKind::Null => "null",
        }
    }

    /// The `defect` column of its anchor judgments.
    pub fn defect(self) -> String {
        format!("control:{}", self.name())
    }

    /// The control a stored `defect` names, if any.
    pub fn of(defect: Option<&str>) -> Option<ControlKind> {
        let name = defect?.strip_prefix("control:")?;
        ControlKind::ALL.into_iter().find(|c| c.name() == name)
    }
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
    /// The rubric's scale (min, max), from the `rubric_scales` view.
    pub scale: Option<(i64, i64)>,
}

#[cfg(test)]
impl AnchorRow {
    /// A test row of rubric `r@1` on a 1–5 scale, judge `j` (model `m`), real.
    pub fn sample(scenario: &str, defect: Option<&str>, mean: Option<f64>) -> AnchorRow {
        AnchorRow {
            rubric: "r@1".into(),
            judge_id: "j".into(),
            judge_model: "m".into(),
            simulated: false,
            scenario: scenario.into(),
            defect: defect.map(String::from),
            mean_score: mean,
            scale: Some((1, 5)),
        }
    }
}

/// Every current anchor judgment, by rubric, judge, scenario.
pub fn current_anchor_judgments(conn: &Connection) -> Result<Vec<AnchorRow>, StoreError> {
    super::all(
        conn,
        "SELECT c.rubric_id, c.rubric_version, c.judge_id, c.judge_model, c.simulated,
                c.scenario, c.defect, c.status, c.scores,
                r.scale_min, r.scale_max
         FROM current_anchor_judgments c
         LEFT JOIN rubric_scales r
           ON r.rubric_id = c.rubric_id AND r.rubric_version = c.rubric_version
         ORDER BY c.rubric_id, c.rubric_version, c.judge_id, c.simulated, c.scenario, c.defect",
        [],
        |r| {
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
                scale: match (r.get::<_, Option<i64>>(9), r.get::<_, Option<i64>>(10)) {
                    (Ok(Some(lo)), Ok(Some(hi))) => Some((lo, hi)),
                    _ => None,
                },
            })
        },
    )
}
