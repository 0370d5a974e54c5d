//! The scenario × cell matrix: for each model label, per scenario and provider, how many
//! attempted conversations completed, the share of scored checks that passed, and the
//! primary judge's mean score, each with its n. Denominators as in the cells
//! (`docs/metrics.md`): interrupted conversations and turnbench's own failures are in none.

use serde::Serialize;

use super::load::{Facts, JudgmentStatus};
use crate::outcome::{ConversationOutcome, TurnOutcome};

/// One scenario × cell square.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct MatrixRow {
    /// The model label (one matrix each).
    pub model: String,
    pub provider: String,
    pub scenario: String,
    pub simulated: bool,
    /// Conversations attempted (the completion rate's n).
    pub attempted: u64,
    pub completed: u64,
    /// Current check results scored (the pass rate's n), and how many passed.
    pub checks_scored: u64,
    pub checks_passed: u64,
    /// `checks_passed / checks_scored`; `None` when nothing was scored.
    pub check_pass_rate: Option<f64>,
    /// The primary judge (the first rubric × judge of the report) as `rubric / judge`.
    pub judge: Option<String>,
    /// Conversations with a scored judgment (the mean's n).
    pub judge_n: u64,
    /// Mean over those conversations of their mean criterion score (replicates averaged).
    pub judge_mean: Option<f64>,
}

pub(super) fn rows(facts: &Facts) -> Vec<MatrixRow> {
    let n_scen = facts.scenarios.len();
    let n = facts.cells.len() * n_scen;
    let mut out: Vec<MatrixRow> = Vec::with_capacity(n);
    for cell in &facts.cells {
        for s in &facts.scenarios {
            out.push(MatrixRow {
                model: cell.label.clone(),
                provider: cell.provider.clone(),
                scenario: s.clone(),
                simulated: cell.simulated,
                ..MatrixRow::default()
            });
        }
    }
    let square = |i: usize| -> Option<usize> {
        let c = facts.convs.get(i)?;
        Some(c.cell * n_scen + c.scenario?)
    };
    for (i, c) in facts.convs.iter().enumerate() {
        let Some(row) = square(i).and_then(|k| out.get_mut(k)) else {
            continue;
        };
        if c.outcome == ConversationOutcome::Interrupted
            || c.outcome.failure() == Some(TurnOutcome::InternalError)
        {
            continue;
        }
        row.attempted += 1;
        if c.outcome.is_completed() {
            row.completed += 1;
        }
        if let Some(Some(k)) = facts.checks.per_conv.get(i) {
            row.checks_scored += u64::from(k.passed + k.failed);
            row.checks_passed += u64::from(k.passed);
        }
    }
    // The primary judge: section 0. Per conversation: mean over its scored replicates of
    // the mean criterion score.
    let judge = facts
        .judges
        .sections
        .first()
        .map(|s| format!("{} / {}", s.rubric, s.judge));
    let mut per_conv: Vec<(f64, u32)> = vec![(0.0, 0); facts.convs.len()];
    for j in &facts.judges.judgments {
        if j.section != 0 || j.status != JudgmentStatus::Ok || j.scores.is_empty() {
            continue;
        }
        let mean = j.scores.iter().map(|(_, s)| *s as f64).sum::<f64>() / j.scores.len() as f64;
        if let Some(p) = per_conv.get_mut(j.conv) {
            p.0 += mean;
            p.1 += 1;
        }
    }
    let mut sums = vec![0.0; out.len()];
    for (i, (sum, k)) in per_conv.iter().enumerate() {
        if *k == 0 {
            continue;
        }
        if let Some(q) = square(i)
            && let (Some(row), Some(total)) = (out.get_mut(q), sums.get_mut(q))
        {
            row.judge_n += 1;
            *total += sum / f64::from(*k);
        }
    }
    for (row, total) in out.iter_mut().zip(sums) {
        row.check_pass_rate =
            (row.checks_scored > 0).then(|| row.checks_passed as f64 / row.checks_scored as f64);
        if row.judge_n > 0 {
            row.judge_mean = Some(total / row.judge_n as f64);
            row.judge.clone_from(&judge);
        }
    }
    out.retain(|r| r.attempted > 0);
    out.sort_by(|a, b| {
        (&a.model, &a.scenario, &a.provider).cmp(&(&b.model, &b.scenario, &b.provider))
    });
    out
}
