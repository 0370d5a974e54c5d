//! The reference-anchor check of each judge (`turnbench judge --anchors`): from
//! `current_anchor_judgments`, every (reference, spoiled variant) pair of a scenario
//! compared by the mean criterion score the judge gave each. A judge passes when the
//! reference scores strictly higher in more than half of the pairs with 95 % confidence
//! (the Wilson interval of that share lies above 50 %; ties count against it); one that
//! cannot tell them apart is flagged in every report that shows its scores.

use std::collections::BTreeMap;

use super::cells::wilson_rate;
use super::model::AnchorSection;
use crate::store::anchor_judgments::{AnchorRow, ControlKind};

/// Share of pairs the reference must win, at the lower end of its interval, to pass.
pub const PASS_ABOVE: f64 = 0.5;

/// One section per (rubric, judge, simulated or real) with anchor judgments.
pub fn sections(rows: &[AnchorRow]) -> Vec<AnchorSection> {
    type Key<'a> = (&'a str, &'a str, bool, &'a str);
    let mut groups: BTreeMap<Key, Vec<&AnchorRow>> = BTreeMap::new();
    // The controls (`control:padding`, `control:null`) have rules of their own: the judge
    // card's (`super::judge_card`).
    for r in rows
        .iter()
        .filter(|r| ControlKind::of(r.defect.as_deref()).is_none())
    {
        groups
            .entry((&r.rubric, &r.judge_id, r.simulated, &r.judge_model))
            .or_default()
            .push(r);
    }
    groups
        .into_iter()
        .map(|((rubric, judge, simulated, judge_model), rows)| {
            let (mut above, mut ties, mut below, mut unscored) = (0u64, 0u64, 0u64, 0u64);
            let mut scenarios = 0usize;
            let mut by_scenario: BTreeMap<&str, Vec<&AnchorRow>> = BTreeMap::new();
            for r in rows {
                by_scenario.entry(&r.scenario).or_default().push(r);
            }
            for variants in by_scenario.values() {
                let reference = variants
                    .iter()
                    .find(|v| v.defect.is_none())
                    .and_then(|v| v.mean_score);
                let spoiled: Vec<&&AnchorRow> =
                    variants.iter().filter(|v| v.defect.is_some()).collect();
                let Some(reference) = reference else {
                    unscored += spoiled.len() as u64;
                    continue;
                };
                scenarios += 1;
                for v in spoiled {
                    match v.mean_score {
                        None => unscored += 1,
                        Some(s) if reference > s => above += 1,
                        Some(s) if reference < s => below += 1,
                        Some(_) => ties += 1,
                    }
                }
            }
            let pairs = above + ties + below;
            let rate = wilson_rate(above, pairs);
            let passed = rate.interval.is_some_and(|i| i.lo > PASS_ABOVE);
            AnchorSection {
                rubric: rubric.to_string(),
                judge: judge.to_string(),
                judge_model: judge_model.to_string(),
                simulated,
                scenarios,
                pairs,
                above: rate,
                ties,
                below,
                unscored,
                passed,
            }
        })
        .collect()
}

/// The sentence a report and the sanity run print.
pub fn sentence(a: &AnchorSection) -> String {
    let share = a
        .above
        .figure()
        .filter(|_| a.above.interval.is_some())
        .map_or(String::new(), |f| format!(" ({f})"));
    format!(
        "judge {} ({}{}) on {}: the reference scored above its spoiled variant in {} of {} pairs{share}, tied {}, below {} ({} scenarios{}): {}",
        a.judge,
        a.judge_model,
        if a.simulated { ", simulated" } else { "" },
        a.rubric,
        a.above.k,
        a.pairs,
        a.ties,
        a.below,
        a.scenarios,
        if a.unscored > 0 {
            format!(", {} unscored", a.unscored)
        } else {
            String::new()
        },
        if a.passed {
            "it tells references from spoiled answers"
        } else {
            "it cannot tell references from spoiled answers; its scores are not evidence"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(scenario: &str, defect: Option<&str>, mean: Option<f64>) -> AnchorRow {
        AnchorRow::sample(scenario, defect, mean)
    }

    #[test]
    fn a_judge_passes_only_when_references_win_clearly() {
        // 20 scenarios × 1 defect: the reference above in 18, tied in 1, below in 1.
        let mut rows = Vec::new();
        for s in 0..20 {
            let name = format!("s{s}");
            rows.push(row(&name, None, Some(4.0)));
            let spoiled = match s {
                0 => 4.0,
                1 => 4.6,
                _ => 3.2,
            };
            rows.push(row(&name, Some("d"), Some(spoiled)));
        }
        let a = &sections(&rows)[0];
        assert_eq!((a.above.k, a.ties, a.below, a.pairs), (18, 1, 1, 20));
        assert_eq!(a.scenarios, 20);
        assert!(a.passed, "{a:?}");
        // Half above, half not: no better than a coin.
        for (i, r) in rows.iter_mut().enumerate() {
            if r.defect.is_some() && i % 4 == 1 {
                r.mean_score = Some(4.5);
            }
        }
        let a = &sections(&rows)[0];
        assert!(!a.passed, "{a:?}");
        assert!(sentence(a).contains("cannot tell"));
        // A missing reference score leaves its variants unscored, in no pair.
        let rows = vec![row("s", None, None), row("s", Some("d"), Some(1.0))];
        let a = &sections(&rows)[0];
        assert_eq!((a.pairs, a.unscored, a.passed), (0, 1, false));
    }
}
