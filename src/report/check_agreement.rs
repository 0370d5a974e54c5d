//! Check–judge agreement: for rubric criteria that speak to what rule-based checks test,
//! Spearman's rank correlation, over conversations, between the judge's score of that
//! criterion (replicates averaged) and the pass rate of the checks with those tags, with n
//! and a bootstrap interval over conversations. A judge and the checks that measure the
//! same thing should rank conversations alike.

use std::collections::BTreeMap;

use super::load::{Facts, JudgmentStatus};
use super::model::CheckAgreement;
use crate::stats::{self, Bootstrap};

/// Which check tags a criterion speaks to, by criterion id. Criteria not listed are not
/// compared. (docs/metrics.md)
pub const CRITERION_TAGS: &[(&str, &[&str])] = &[
    ("correction_handling", &["superseded_instruction"]),
    ("state_tracking", &["retained_constraint"]),
    (
        "instruction_following",
        &["superseded_instruction", "retained_constraint"],
    ),
    (
        "final_answer_usability",
        &["json_validity", "required_fields", "format"],
    ),
];

pub(super) fn sections(facts: &Facts, boot: &Bootstrap) -> Vec<CheckAgreement> {
    let j = &facts.judges;
    // (section, criterion) → conversation → scores.
    let mut scores: BTreeMap<(usize, usize), BTreeMap<usize, Vec<f64>>> = BTreeMap::new();
    for judgment in j
        .judgments
        .iter()
        .filter(|x| x.status == JudgmentStatus::Ok)
    {
        for &(c, v) in &judgment.scores {
            scores
                .entry((judgment.section, c))
                .or_default()
                .entry(judgment.conv)
                .or_default()
                .push(v as f64);
        }
    }
    let mut out = Vec::new();
    for ((section, criterion), by_conv) in scores {
        let name = &j.criteria[criterion];
        let Some((_, tags)) = CRITERION_TAGS.iter().find(|(c, _)| c == name) else {
            continue;
        };
        let tag_ids: Vec<usize> = tags
            .iter()
            .filter_map(|t| facts.checks.tags.iter().position(|x| x == t))
            .collect();
        if tag_ids.is_empty() {
            continue;
        }
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for (conv, values) in &by_conv {
            let Some(Some(checks)) = facts.checks.per_conv.get(*conv) else {
                continue;
            };
            let (passed, scored) = tag_ids
                .iter()
                .filter_map(|&t| checks.by_tag.get(t))
                .fold((0u32, 0u32), |(p, n), c| (p + c[0], n + c[0] + c[1]));
            if scored == 0 {
                continue;
            }
            if let Some(mean) = stats::mean(values) {
                x.push(mean);
                y.push(f64::from(passed) / f64::from(scored));
            }
        }
        let rho = stats::spearman(&x, &y);
        let interval = stats::bootstrap_spearman(&x, &y, boot);
        let verdict = match (rho, interval) {
            (None, _) => "undefined (no variation)",
            (Some(_), Some(i)) if i.lo > 0.0 => "agree (positive, established)",
            (Some(_), Some(i)) if i.hi < 0.0 => "disagree (negative, established)",
            (Some(_), _) => "not established",
        };
        let key = &j.sections[section];
        out.push(CheckAgreement {
            rubric: key.rubric.clone(),
            judge: key.judge.clone(),
            judge_model: key.judge_model.clone(),
            simulated: key.simulated,
            criterion: name.clone(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            n: x.len(),
            rho,
            interval,
            verdict: verdict.to_string(),
        });
    }
    out.sort_by(|a, b| {
        (&a.rubric, &a.judge, a.simulated, &a.criterion).cmp(&(
            &b.rubric,
            &b.judge,
            b.simulated,
            &b.criterion,
        ))
    });
    out
}
