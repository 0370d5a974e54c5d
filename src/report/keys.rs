//! What each part of the report *is*, as typed keys: a cell (provider × model label), a
//! judge section (rubric × judge × model, simulated or real), a table, a row. A renderer
//! finds "the reliability table", "the judge table of this section" or "the row of this
//! cell" by these keys and never by a printed title or the text of a cell: titles and
//! names are for people, and a reworded title must not detach a link, a swatch or a
//! simulated mark.

use serde::Serialize;

use super::drilldown::{Behind, BehindJudge};
use super::model::{
    AgreementKind, AnchorSection, Cell, Change, CheckAgreement, ClaimStatistic, JudgeSection,
    PairwiseCell, PairwiseSection, TrendPoint,
};
use super::replay::ReplayCell;

/// One cell of the report: a provider serving a model label.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct CellKey {
    pub provider: String,
    /// The model label cells group by.
    pub model: String,
}

impl CellKey {
    pub fn new(provider: &str, model: &str) -> CellKey {
        CellKey {
            provider: provider.to_string(),
            model: model.to_string(),
        }
    }
}

/// One judge section: a rubric scored by a judge (its model), real and simulated apart.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct JudgeKey {
    /// `id@version`.
    pub rubric: String,
    pub judge: String,
    pub judge_model: String,
    pub simulated: bool,
}

/// Which report table: one per kind, keyed further where the report has several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "table", rename_all = "snake_case")]
pub enum TableKey {
    /// The selected run(s) against the baseline.
    Comparison,
    /// Latency and success of one model label's cells.
    Cells {
        model: String,
    },
    Quality,
    PerTurn,
    /// GOODPUT under `--slo` (`crate::report::goodput`).
    Goodput,
    /// TTFT BY TURN (`crate::report::ttft_by_turn`).
    TtftByTurn,
    /// Conversations and turns, failures by class: the drill-down's failure links sit under it.
    Reliability,
    /// Cells whose conversations outgrew the context (`crate::report::overflow`).
    ContextOverflow,
    CacheAndCost,
    /// Each cell run by run.
    Trend,
    QualityByTag,
    /// CONSTRAINTS ACROSS TURNS of one model label's cells.
    ConstraintsAcrossTurns {
        model: String,
    },
    /// CONSISTENCY ACROSS REPEATS of one model label's cells.
    ConsistencyAcrossRepeats {
        model: String,
    },
    /// One judge section's means: the drill-down's lowest-band links sit under it.
    Judge(JudgeKey),
    /// Agreement of one rubric's replicates or judges.
    Agreement {
        rubric: String,
        kind: AgreementKind,
    },
    /// One judge section's pairwise verdicts against its baseline.
    Pairwise(JudgeKey),
    ReferenceAnchors,
    ChecksJudge,
    /// Each judge's weighted κ with the human labels.
    HumanAgreement,
    /// Each judge × rubric's card (`crate::report::judge_card`).
    JudgeCard,
    /// Every comparison of one headline's family: the headline's index in the report.
    Family {
        headline: usize,
    },
    ReplayCache,
    ReplayCacheAfterBreak,
    ReplaySpeed,
    ReplayCost,
    ReplayToolsAndReliability,
}

/// What one row of a table shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "row", rename_all = "snake_case")]
pub enum RowKey {
    /// A cell's row, the cell named in its first column.
    Cell(CellKey),
    /// A further row of a cell, under the row that names it: one criterion of a judge.
    CellCriterion { cell: CellKey, criterion: String },
    /// One statistic of a cell against the baseline (a judge mean names its judge).
    Change {
        cell: CellKey,
        statistic: ClaimStatistic,
        judge: Option<String>,
    },
    /// A cell in one run.
    CellRun { cell: CellKey, run: i64 },
    /// One check tag of a cell (CONSTRAINTS ACROSS TURNS).
    CellTag { cell: CellKey, tag: String },
    /// A judge's row (reference anchors).
    Judge(JudgeKey),
    /// A criterion's row: of a rubric's agreement, or of a judge (checks × judge).
    Criterion {
        judge: Option<JudgeKey>,
        criterion: String,
    },
    /// One comparison of a family: its two cells (`provider / model label`), `a` first.
    Comparison { a: String, b: String },
}

impl RowKey {
    /// The cell this row belongs to, if it belongs to one.
    pub fn cell(&self) -> Option<&CellKey> {
        match self {
            RowKey::Cell(c)
            | RowKey::CellCriterion { cell: c, .. }
            | RowKey::Change { cell: c, .. }
            | RowKey::CellRun { cell: c, .. }
            | RowKey::CellTag { cell: c, .. } => Some(c),
            RowKey::Judge(_) | RowKey::Criterion { .. } | RowKey::Comparison { .. } => None,
        }
    }

    /// The cell whose name the row's first column shows (a criterion row under its cell's
    /// row names none): where a provider's swatch goes.
    pub fn named_cell(&self) -> Option<&CellKey> {
        match self {
            RowKey::CellCriterion { .. } => None,
            other => other.cell(),
        }
    }
}

impl Cell {
    pub fn key(&self) -> CellKey {
        CellKey::new(&self.provider, &self.model)
    }
}

impl PairwiseCell {
    pub fn key(&self) -> CellKey {
        CellKey::new(&self.provider, &self.model)
    }
}

impl ReplayCell {
    pub fn key(&self) -> CellKey {
        CellKey::new(&self.provider, &self.model)
    }
}

impl TrendPoint {
    pub fn key(&self) -> RowKey {
        RowKey::CellRun {
            cell: CellKey::new(&self.provider, &self.model),
            run: self.run,
        }
    }
}

impl Change {
    pub fn key(&self) -> RowKey {
        RowKey::Change {
            cell: CellKey::new(&self.provider, &self.model),
            statistic: self.statistic,
            judge: self.judge.clone(),
        }
    }
}

/// A judge key from the four names every judge-scoped section carries.
fn judge_key(rubric: &str, judge: &str, judge_model: &str, simulated: bool) -> JudgeKey {
    JudgeKey {
        rubric: rubric.to_string(),
        judge: judge.to_string(),
        judge_model: judge_model.to_string(),
        simulated,
    }
}

impl JudgeSection {
    pub fn key(&self) -> JudgeKey {
        judge_key(&self.rubric, &self.judge, &self.judge_model, self.simulated)
    }
}

impl PairwiseSection {
    pub fn key(&self) -> JudgeKey {
        judge_key(&self.rubric, &self.judge, &self.judge_model, self.simulated)
    }
}

impl AnchorSection {
    pub fn key(&self) -> JudgeKey {
        judge_key(&self.rubric, &self.judge, &self.judge_model, self.simulated)
    }
}

impl CheckAgreement {
    pub fn key(&self) -> JudgeKey {
        judge_key(&self.rubric, &self.judge, &self.judge_model, self.simulated)
    }
}

impl BehindJudge {
    pub fn key(&self) -> JudgeKey {
        judge_key(&self.rubric, &self.judge, &self.judge_model, self.simulated)
    }
}

impl Behind {
    /// The table whose rows these conversations are behind: RELIABILITY for a failure
    /// class, the judge section's table for a criterion's lowest band.
    pub fn table(&self) -> TableKey {
        match &self.judge {
            None => TableKey::Reliability,
            Some(j) => TableKey::Judge(j.key()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_criterion_row_belongs_to_its_cell_but_does_not_name_it() {
        let cell = CellKey::new("acme", "m1");
        let row = RowKey::CellCriterion {
            cell: cell.clone(),
            criterion: "correctness".into(),
        };
        assert_eq!(row.cell(), Some(&cell));
        assert_eq!(row.named_cell(), None);
        assert_eq!(RowKey::Cell(cell.clone()).named_cell(), Some(&cell));
    }

    #[test]
    fn a_behind_row_names_its_table_by_key() {
        let mut b = Behind::default();
        assert_eq!(b.table(), TableKey::Reliability);
        b.judge = Some(BehindJudge {
            rubric: "r@1".into(),
            judge: "j".into(),
            judge_model: "m".into(),
            simulated: true,
        });
        let TableKey::Judge(k) = b.table() else {
            panic!("a judge table")
        };
        assert!(k.simulated);
        assert_eq!(k.rubric, "r@1");
    }
}
