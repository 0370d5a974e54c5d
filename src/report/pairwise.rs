//! Pairwise comparisons against a baseline, from the `pairwise_verdicts` view: per rubric ×
//! judge, the position-consistency rate and, per candidate cell, win / tie / loss rates
//! with bootstrap intervals over pairs (an inconsistent verdict is a tie), and whether the
//! candidate is established better or worse than the baseline.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::cells::wilson_rate;
use super::load::Facts;
use super::model::{Estimate, PairwiseCell, PairwiseSection, Rate};
use crate::stats::{self, Bootstrap};
use crate::store::StoreError;
use crate::store::facts::JudgmentFilter;
use crate::store::pairwise::{PairwiseVerdict, Preferred, one_position_pairs, pairwise_verdicts};

pub(super) fn sections(
    conn: &rusqlite::Connection,
    facts: &Facts,
    filter: &JudgmentFilter,
    boot: &Bootstrap,
) -> Result<Vec<PairwiseSection>, StoreError> {
    let cell_of: HashMap<i64, usize> = facts.convs.iter().map(|c| (c.id, c.cell)).collect();
    let rubric_matches = |rubric: &str| {
        filter
            .rubric
            .as_deref()
            .is_none_or(|r| rubric == r || rubric.rsplit_once('@').is_some_and(|(id, _)| id == r))
    };
    type Key = (String, String, bool, String);
    let mut groups: BTreeMap<Key, Vec<(usize, usize, PairwiseVerdict)>> = BTreeMap::new();
    for v in pairwise_verdicts(conn)? {
        if !rubric_matches(&v.rubric) || filter.judge.as_deref().is_some_and(|j| j != v.judge_id) {
            continue;
        }
        // Both sides among the selected conversations.
        let (Some(&base), Some(&cand)) =
            (cell_of.get(&v.baseline_id), cell_of.get(&v.candidate_id))
        else {
            continue;
        };
        groups
            .entry((
                v.rubric.clone(),
                v.judge_id.clone(),
                v.simulated,
                v.judge_model.clone(),
            ))
            .or_default()
            .push((base, cand, v));
    }
    // Pairs with one position judged, both sides selected, per section.
    let mut one_position: BTreeMap<Key, u64> = BTreeMap::new();
    for p in one_position_pairs(conn)? {
        let selected =
            cell_of.contains_key(&p.baseline_id) && cell_of.contains_key(&p.candidate_id);
        if selected
            && rubric_matches(&p.rubric)
            && filter.judge.as_deref().is_none_or(|j| j == p.judge_id)
        {
            *one_position
                .entry((p.rubric, p.judge_id, p.simulated, p.judge_model))
                .or_default() += 1;
        }
    }
    let name = |cell: usize| {
        let c = &facts.cells[cell];
        format!("{} / {}", c.provider, c.label)
    };
    Ok(groups
        .into_iter()
        .map(|((rubric, judge, simulated, judge_model), rows)| {
            let baseline: BTreeSet<usize> = rows.iter().map(|(b, _, _)| *b).collect();
            let scored: Vec<&PairwiseVerdict> = rows
                .iter()
                .map(|(_, _, v)| v)
                .filter(|v| v.scored)
                .collect();
            let consistent = scored.iter().filter(|v| v.consistent == Some(true)).count();
            let mut by_cell: BTreeMap<usize, Vec<&PairwiseVerdict>> = BTreeMap::new();
            for (_, cand, v) in &rows {
                by_cell.entry(*cand).or_default().push(v);
            }
            let key = (rubric, judge, simulated, judge_model);
            let one_position = one_position.get(&key).copied().unwrap_or(0);
            let (rubric, judge, simulated, judge_model) = key;
            PairwiseSection {
                one_position,
                rubric,
                judge,
                judge_model,
                simulated,
                baseline: baseline.iter().map(|&c| name(c)).collect(),
                pairs: rows.len() as u64,
                unscored: (rows.len() - scored.len()) as u64,
                consistency: wilson_rate(consistent as u64, scored.len() as u64),
                cells: by_cell
                    .into_iter()
                    .map(|(cell, verdicts)| pairwise_cell(facts, cell, &verdicts, boot))
                    .collect(),
            }
        })
        .collect())
}

fn pairwise_cell(
    facts: &Facts,
    cell: usize,
    verdicts: &[&PairwiseVerdict],
    boot: &Bootstrap,
) -> PairwiseCell {
    let scored: Vec<&&PairwiseVerdict> = verdicts.iter().filter(|v| v.scored).collect();
    let n = scored.len() as u64;
    let indicator = |p: Preferred| -> Vec<f64> {
        scored
            .iter()
            .map(|v| f64::from(u8::from(v.verdict == Some(p))))
            .collect()
    };
    let rate = |p: Preferred| {
        let values = indicator(p);
        let k = values.iter().filter(|&&x| x > 0.0).count() as u64;
        Rate {
            k,
            n,
            value: stats::mean(&values),
            interval: stats::bootstrap_mean(&values, boot).map(Into::into),
        }
    };
    let net_values: Vec<f64> = scored
        .iter()
        .map(|v| match v.verdict {
            Some(Preferred::Candidate) => 1.0,
            Some(Preferred::Baseline) => -1.0,
            _ => 0.0,
        })
        .collect();
    let net = stats::mean(&net_values).map(|value| Estimate {
        value,
        interval: stats::bootstrap_mean(&net_values, boot).map(Into::into),
    });
    let verdict = match net.and_then(|e| e.interval) {
        Some(i) if i.lo > 0.0 => "better",
        Some(i) if i.hi < 0.0 => "worse",
        _ => "not established",
    };
    let consistent = scored.iter().filter(|v| v.consistent == Some(true)).count() as u64;
    let c = &facts.cells[cell];
    PairwiseCell {
        provider: c.provider.clone(),
        model: c.label.clone(),
        simulated: c.simulated,
        n,
        win: rate(Preferred::Candidate),
        tie: rate(Preferred::Tie),
        loss: rate(Preferred::Baseline),
        inconsistent: scored
            .iter()
            .filter(|v| v.consistent == Some(false))
            .count() as u64,
        consistency: wilson_rate(consistent, n),
        net,
        verdict: verdict.to_string(),
    }
}
