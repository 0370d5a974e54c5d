//! Pairwise comparisons against a baseline, from the `pairwise_verdicts` view: per rubric ×
//! judge, the position-consistency rate and, per candidate cell, win / tie / loss rates
//! with bootstrap intervals over pairs (an inconsistent verdict is a tie), and whether the
//! candidate is established better or worse than the baseline.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::cells::cluster_of;
use super::cells::wilson_rate;
use super::headlines::claim_of;
use super::load::Facts;
use super::model::{ClaimStatistic, Estimate, Family, PairwiseCell, PairwiseSection};
use crate::stats;
use crate::stats::inference::{self, PairedSample, Statistic};
use crate::store::StoreError;
use crate::store::facts::JudgmentFilter;
use crate::store::pairwise::{
    PairKey, PairwiseVerdict, Preferred, one_position_pairs, pairwise_verdicts,
};

/// The pairwise verdicts as the store holds them: every scored or unscored pair, and the
/// pairs judged in one position only (read once by [`super::load`]).
#[derive(Debug, Default)]
pub(super) struct PairwiseRead {
    pub verdicts: Vec<PairwiseVerdict>,
    pub one_position: Vec<PairKey>,
}

impl PairwiseRead {
    pub(super) fn read(conn: &rusqlite::Connection) -> Result<PairwiseRead, StoreError> {
        Ok(PairwiseRead {
            verdicts: pairwise_verdicts(conn)?,
            one_position: one_position_pairs(conn)?,
        })
    }
}

pub(super) fn sections(
    read: &PairwiseRead,
    facts: &Facts,
    filter: &JudgmentFilter,
    seed: u64,
) -> Vec<PairwiseSection> {
    // Sections come from verdicts only: none, and the lookups over every conversation
    // below are not built.
    if read.verdicts.is_empty() {
        return Vec::new();
    }
    let cell_of: HashMap<i64, usize> = facts.convs.iter().map(|c| (c.id, c.cell)).collect();
    let rubric_matches = |rubric: &str| {
        filter
            .rubric
            .as_deref()
            .is_none_or(|r| rubric == r || rubric.rsplit_once('@').is_some_and(|(id, _)| id == r))
    };
    type Key = (String, String, bool, String);
    // The pair's two cells and its section, when both sides are selected and its rubric and
    // judge pass the filters.
    let place = |p: &PairKey| -> Option<(usize, usize, Key)> {
        if !rubric_matches(&p.rubric) || filter.judge.as_deref().is_some_and(|j| j != p.judge_id) {
            return None;
        }
        let key = (
            p.rubric.clone(),
            p.judge_id.clone(),
            p.simulated,
            p.judge_model.clone(),
        );
        Some((
            *cell_of.get(&p.baseline_id)?,
            *cell_of.get(&p.candidate_id)?,
            key,
        ))
    };
    let mut groups: BTreeMap<Key, Vec<(usize, usize, &PairwiseVerdict)>> = BTreeMap::new();
    for v in &read.verdicts {
        if let Some((base, cand, key)) = place(&v.pair) {
            groups.entry(key).or_default().push((base, cand, v));
        }
    }
    // Pairs with one position judged, both sides selected, per section.
    let mut one_position: BTreeMap<Key, u64> = BTreeMap::new();
    for p in &read.one_position {
        if let Some((_, _, key)) = place(p) {
            *one_position.entry(key).or_default() += 1;
        }
    }
    let index_of: HashMap<i64, usize> = facts
        .convs
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id, i))
        .collect();
    groups
        .into_iter()
        .map(|(key, rows)| {
            let one_position = one_position.get(&key).copied().unwrap_or(0);
            section(facts, &index_of, key, &rows, one_position, seed)
        })
        .collect()
}

/// One section: the pairs of one (rubric, judge, simulated, judge model), each as its
/// (baseline cell, candidate cell, verdict); `one_position` pairs were judged in one
/// position only.
fn section(
    facts: &Facts,
    index_of: &HashMap<i64, usize>,
    (rubric, judge, simulated, judge_model): (String, String, bool, String),
    rows: &[(usize, usize, &PairwiseVerdict)],
    one_position: u64,
    seed: u64,
) -> PairwiseSection {
    let baseline: BTreeSet<usize> = rows.iter().map(|(b, _, _)| *b).collect();
    let scored: Vec<&PairwiseVerdict> = rows
        .iter()
        .map(|(_, _, v)| *v)
        .filter(|v| v.scored)
        .collect();
    let consistent = scored.iter().filter(|v| v.consistent == Some(true)).count();
    let first_position_wins = scored
        .iter()
        .filter(|v| v.first_position_won_both())
        .count() as u64;
    let mut by_cell: BTreeMap<usize, Vec<&PairwiseVerdict>> = BTreeMap::new();
    for &(_, cand, v) in rows {
        by_cell.entry(cand).or_default().push(v);
    }
    let built: Vec<(PairwiseCell, PairedSample)> = by_cell
        .into_iter()
        .map(|(cell, verdicts)| pairwise_cell(facts, index_of, cell, &verdicts))
        .collect();
    let (mut cells, samples): (Vec<PairwiseCell>, Vec<PairedSample>) = built.into_iter().unzip();
    let baseline: Vec<String> = baseline.iter().map(|&c| facts.cell_name(c)).collect();
    let family = net_family(&mut cells, &samples, &baseline, &rubric, &judge, seed);
    PairwiseSection {
        family,
        one_position,
        rubric,
        judge,
        judge_model,
        simulated,
        baseline,
        pairs: rows.len() as u64,
        unscored: (rows.len() - scored.len()) as u64,
        consistency: wilson_rate(consistent as u64, scored.len() as u64),
        first_position_wins,
        cells,
    }
}

/// Every candidate's net verdict against the baseline, tested together: each candidate's
/// pairs (clustered by the candidate conversation's scenario) against 0 by the cluster
/// sign-flip test, Holm across the section's candidates. Fills each cell's net interval
/// (at its adjusted level) and verdict.
fn net_family(
    cells: &mut [PairwiseCell],
    samples: &[PairedSample],
    baseline: &[String],
    rubric: &str,
    judge: &str,
    seed: u64,
) -> Option<Family> {
    if cells.is_empty() {
        return None;
    }
    let seeded: Vec<(&PairedSample, u64)> = samples
        .iter()
        .zip(cells.iter())
        .map(|(s, c)| {
            let key = format!("pairwise|{rubric}|{judge}|{} / {}", c.provider, c.model);
            (s, inference::seed_for(seed, &key))
        })
        .collect();
    let judged = inference::judge_family(&seeded, Statistic::Mean);
    let base = baseline.join(", ");
    let mut claims = Vec::new();
    for (cell, j) in cells.iter_mut().zip(&judged) {
        let name = format!("{} / {}", cell.provider, cell.model);
        let claim = claim_of(j, true, ClaimStatistic::PairwiseNet, name, base.clone());
        if let Some(net) = cell.net.as_mut() {
            net.interval = claim.interval;
        }
        cell.verdict = match (claim.established, claim.estimate) {
            (true, Some(x)) if x > 0.0 => "better",
            (true, Some(x)) if x < 0.0 => "worse",
            _ => "not established",
        }
        .to_string();
        claims.push(claim);
    }
    Some(Family {
        statistic: ClaimStatistic::PairwiseNet,
        comparisons: judged.len(),
        cells: judged.len() + 1,
        method: "holm",
        alpha: inference::FAMILY_ALPHA,
        leader: None,
        claims,
        members: Vec::new(),
        others: Vec::new(),
    })
}

/// One candidate cell's rates (Wilson: each is a share of scored pairs) and its pairs for
/// the section's test: the net value of each scored pair against 0.
fn pairwise_cell(
    facts: &Facts,
    index_of: &HashMap<i64, usize>,
    cell: usize,
    verdicts: &[&PairwiseVerdict],
) -> (PairwiseCell, PairedSample) {
    let scored: Vec<&&PairwiseVerdict> = verdicts.iter().filter(|v| v.scored).collect();
    let n = scored.len() as u64;
    let rate = |p: Preferred| {
        let k = scored.iter().filter(|v| v.verdict == Some(p)).count() as u64;
        wilson_rate(k, n)
    };
    let mut sample = PairedSample::default();
    for v in &scored {
        sample.a.push(match v.verdict {
            Some(Preferred::Candidate) => 1.0,
            Some(Preferred::Baseline) => -1.0,
            _ => 0.0,
        });
        sample.b.push(0.0);
        let cluster = index_of
            .get(&v.pair.candidate_id)
            .map_or(u32::MAX, |&i| cluster_of(facts, i));
        sample.cluster.push(cluster);
    }
    let net = stats::mean(&sample.a).map(|value| Estimate {
        value,
        interval: None,
        too_few: false,
    });
    let consistent = scored.iter().filter(|v| v.consistent == Some(true)).count() as u64;
    let c = &facts.cells[cell];
    let out = PairwiseCell {
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
        verdict: "not established".to_string(),
    };
    (out, sample)
}
