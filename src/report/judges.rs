//! Judge scores per rubric × judge × cell: means over conversations (replicates averaged
//! first) with cluster-robust t intervals over scenarios, bounded by the rubric's scale (formed
//! on the logit of the mean's place in it), failed judgments counted apart,
//! replicate spread, and how many attempted conversations the scores cover.

use std::collections::{BTreeMap, HashMap};

use super::cells::wilson_rate;
use super::load::{Facts, Judgment, JudgmentStatus};
use super::model::{Estimate, JudgeCell, JudgeSection};
use crate::stats::{self, inference};

/// The confidence level of every judge interval.
const LEVEL: f64 = 0.95;

/// Every rubric × judge section, each with its conversations' overall scores (replicates
/// averaged) by conversation index, for the headline's paired comparisons. `attempted`:
/// each cell's attempted conversations, what a judge's n is a share of.
pub(super) fn sections(
    facts: &Facts,
    attempted: &[u64],
) -> Vec<(JudgeSection, HashMap<usize, f64>)> {
    let j = &facts.judges;
    // (section, cell, conversation) → its judgments.
    let mut grouped: BTreeMap<(usize, usize, usize), Vec<&Judgment>> = BTreeMap::new();
    for judgment in &j.judgments {
        let cell = facts.convs[judgment.conv].cell;
        grouped
            .entry((judgment.section, cell, judgment.conv))
            .or_default()
            .push(judgment);
    }
    let mut order: Vec<usize> = (0..j.sections.len()).collect();
    order.sort_by(|&a, &b| j.sections[a].cmp(&j.sections[b]));
    order
        .into_iter()
        .map(|s| {
            let key = &j.sections[s];
            let mut criteria: Vec<usize> = grouped
                .range((s, 0, 0)..(s + 1, 0, 0))
                .flat_map(|(_, v)| v.iter().flat_map(|j| j.scores.iter().map(|(c, _)| *c)))
                .collect();
            criteria.sort_by(|&a, &b| j.criteria[a].cmp(&j.criteria[b]));
            criteria.dedup();
            let mut scores = HashMap::new();
            let cells = (0..facts.cells.len())
                .map(|cell| {
                    let convs: Vec<(usize, &Vec<&Judgment>)> = grouped
                        .range((s, cell, 0)..(s, cell + 1, 0))
                        .map(|(&(_, _, conv), v)| (conv, v))
                        .collect();
                    let attempted = attempted.get(cell).copied().unwrap_or(0);
                    judge_cell(
                        facts,
                        j.scales.get(&key.rubric).copied(),
                        &convs,
                        &criteria,
                        &j.criteria,
                        attempted,
                        &mut scores,
                    )
                })
                .collect();
            let section = JudgeSection {
                rubric: key.rubric.clone(),
                judge: key.judge.clone(),
                judge_model: key.judge_model.clone(),
                simulated: key.simulated,
                criteria: criteria.iter().map(|&c| j.criteria[c].clone()).collect(),
                cells,
            };
            (section, scores)
        })
        .collect()
}

fn mean_of(scores: &[(usize, i64)]) -> Option<f64> {
    (!scores.is_empty())
        .then(|| scores.iter().map(|(_, s)| *s as f64).sum::<f64>() / scores.len() as f64)
}

fn judge_cell(
    facts: &Facts,
    scale: Option<(i64, i64)>,
    convs: &[(usize, &Vec<&Judgment>)],
    criteria: &[usize],
    names: &[String],
    attempted: u64,
    scores: &mut HashMap<usize, f64>,
) -> JudgeCell {
    let mut out = JudgeCell {
        attempted,
        ..JudgeCell::default()
    };
    let mut overall = Vec::new();
    let mut overall_cluster = Vec::new();
    let mut per_criterion: Vec<Vec<(f64, u32)>> = vec![Vec::new(); criteria.len()];
    let mut spreads = Vec::new();
    let (mut completed_yes, mut completed_n) = (0, 0);
    for &(conv, judgments) in convs {
        let ok: Vec<&&Judgment> = judgments
            .iter()
            .filter(|j| j.status == JudgmentStatus::Ok)
            .collect();
        out.unparseable += judgments
            .iter()
            .filter(|j| j.status == JudgmentStatus::Unparseable)
            .count() as u64;
        out.judge_errors += judgments
            .iter()
            .filter(|j| j.status == JudgmentStatus::JudgeError)
            .count() as u64;
        out.judgments += ok.len() as u64;
        for j in &ok {
            if let Some(c) = j.completed {
                completed_n += 1;
                completed_yes += u64::from(c);
            }
        }
        let overalls: Vec<f64> = ok.iter().filter_map(|j| mean_of(&j.scores)).collect();
        let Some(conv_overall) = stats::mean(&overalls) else {
            continue;
        };
        let cluster = super::cells::cluster_of(facts, conv);
        scores.insert(conv, conv_overall);
        overall.push(conv_overall);
        overall_cluster.push(cluster);
        for (k, &c) in criteria.iter().enumerate() {
            let values: Vec<f64> = ok
                .iter()
                .filter_map(|j| j.scores.iter().find(|(x, _)| *x == c))
                .map(|(_, s)| *s as f64)
                .collect();
            if let Some(m) = stats::mean(&values) {
                per_criterion[k].push((m, cluster));
            }
        }
        if overalls.len() >= 2 {
            spreads.push(mean_pairwise_gap(&overalls));
        }
    }
    out.n = overall.len();
    let estimate = |values: &[f64], clusters: &[u32]| {
        match scale {
            // A score outside its rubric's scale cannot be stored (judge and label
            // validate it); were one there, the plain interval is shown rather than none.
            Some((lo, hi)) => {
                inference::clustered_mean_within(values, clusters, LEVEL, (lo as f64, hi as f64))
                    .or_else(|| inference::clustered_mean(values, clusters, LEVEL))
            }
            None => inference::clustered_mean(values, clusters, LEVEL),
        }
        .map(|m| {
            (
                Estimate {
                    value: m.value,
                    interval: m.interval,
                    too_few: false,
                },
                m.constant,
            )
        })
    };
    if let Some((e, constant)) = estimate(&overall, &overall_cluster) {
        out.overall = Some(e);
        out.all_equal = constant;
    }
    out.criteria = criteria
        .iter()
        .zip(&per_criterion)
        .filter_map(|(&c, v)| {
            let (values, clusters): (Vec<f64>, Vec<u32>) = v.iter().copied().unzip();
            estimate(&values, &clusters).map(|(e, _)| (names[c].clone(), e))
        })
        .collect();
    out.replicate_conversations = spreads.len();
    out.replicate_spread = stats::mean(&spreads);
    out.judged_completed = wilson_rate(completed_yes, completed_n);
    out
}

/// Mean |a − b| over the pairs of replicate scores of one conversation.
fn mean_pairwise_gap(values: &[f64]) -> f64 {
    let mut sum = 0.0;
    let mut pairs = 0;
    for (i, a) in values.iter().enumerate() {
        for b in &values[i + 1..] {
            sum += (a - b).abs();
            pairs += 1;
        }
    }
    if pairs == 0 { 0.0 } else { sum / pairs as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicate_gap_is_the_mean_over_pairs() {
        assert_eq!(mean_pairwise_gap(&[3.0, 3.0]), 0.0);
        assert_eq!(mean_pairwise_gap(&[2.0, 4.0]), 2.0);
        // |1−2| + |1−4| + |2−4| = 6 over 3 pairs.
        assert_eq!(mean_pairwise_gap(&[1.0, 2.0, 4.0]), 2.0);
    }
}
