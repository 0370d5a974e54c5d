//! How far each judge agrees with the people who labelled the same conversations (`turnbench
//! label import`): per judge × rubric, per criterion and for `completed`, the quadratic-
//! weighted Cohen's κ (`crate::stats::kappa`) with a bootstrap interval over conversations.
//! The judge card reads it too ([`sections`]).
//!
//! What is compared, per conversation: the judge's score is its mean over its scored
//! replicates (the same per-conversation figure its JUDGE table averages); the people's is
//! the mean over the raters who labelled it (one rater: their label). `completed` is the
//! share of replicates (of raters) that said yes: 0 or 1 with one replicate and one rater,
//! where κ_w is the unweighted κ. Only conversations both scored count (their number is
//! n); unparseable and failed judgments are not scores. κ answers "does the judge score as
//! people do", which α between judges cannot: judges can agree with each other and all be
//! wrong.

use std::collections::{BTreeMap, BTreeSet};

use super::load::{Facts, Judgment, JudgmentStatus};
use super::model::{HumanAgreementSection, HumanCriterionAgreement};
use crate::stats::Bootstrap;
use crate::stats::kappa::weighted_kappa_bootstrap;

/// The criterion name `completed` is reported under.
pub const COMPLETED: &str = "completed";

/// One rater's (or one judge's) scores by conversation: criterion → values (replicates or
/// raters), and the yes/no decisions.
#[derive(Default)]
struct ByConversation {
    scores: BTreeMap<usize, BTreeMap<usize, Vec<f64>>>,
    completed: BTreeMap<usize, Vec<bool>>,
}

impl ByConversation {
    fn add(&mut self, j: &Judgment) {
        if j.status != JudgmentStatus::Ok {
            return;
        }
        let conv = self.scores.entry(j.conv).or_default();
        for &(c, v) in &j.scores {
            conv.entry(c).or_default().push(v as f64);
        }
        if let Some(done) = j.completed {
            self.completed.entry(j.conv).or_default().push(done);
        }
    }

    fn score(&self, conv: usize, criterion: usize) -> Option<f64> {
        mean(self.scores.get(&conv)?.get(&criterion)?)
    }

    fn completed(&self, conv: usize) -> Option<f64> {
        let said = self.completed.get(&conv)?;
        mean(
            &said
                .iter()
                .map(|&d| f64::from(u8::from(d)))
                .collect::<Vec<_>>(),
        )
    }
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Every judge × rubric with human labels for that rubric, judges in key order. `None`
/// when the selection holds no scored human label at all.
pub(super) fn sections(facts: &Facts, boot: &Bootstrap) -> Option<Vec<HumanAgreementSection>> {
    let j = &facts.judges;
    // rubric → (raters, their labels by conversation).
    let mut people: BTreeMap<&str, (BTreeSet<&str>, ByConversation)> = BTreeMap::new();
    for label in j
        .human_judgments
        .iter()
        .filter(|x| x.status == JudgmentStatus::Ok)
    {
        let Some(key) = j.human_sections.get(label.section) else {
            continue;
        };
        let (raters, by) = people.entry(&key.rubric).or_default();
        raters.insert(&key.judge);
        by.add(label);
    }
    if people.is_empty() {
        return None;
    }
    let mut judges: Vec<ByConversation> = (0..j.sections.len())
        .map(|_| ByConversation::default())
        .collect();
    for judgment in &j.judgments {
        if let Some(by) = judges.get_mut(judgment.section) {
            by.add(judgment);
        }
    }
    let mut order: Vec<usize> = (0..j.sections.len()).collect();
    order.sort_by(|&a, &b| j.sections[a].cmp(&j.sections[b]));
    Some(
        order
            .into_iter()
            .filter_map(|s| {
                let key = &j.sections[s];
                let (raters, labels) = people.get(key.rubric.as_str())?;
                let judge = &judges[s];
                let mut criteria: Vec<usize> = labels
                    .scores
                    .values()
                    .flat_map(|c| c.keys().copied())
                    .collect();
                criteria.sort_by(|&a, &b| j.criteria[a].cmp(&j.criteria[b]));
                criteria.dedup();
                let convs: Vec<usize> = labels.scores.keys().copied().collect();
                let mut agreement: Vec<HumanCriterionAgreement> = criteria
                    .iter()
                    .map(|&c| {
                        let pairs: Vec<(f64, f64)> = convs
                            .iter()
                            .filter_map(|&conv| {
                                Some((judge.score(conv, c)?, labels.score(conv, c)?))
                            })
                            .collect();
                        kappa(&j.criteria[c], &pairs, boot)
                    })
                    .collect();
                let done: Vec<(f64, f64)> = convs
                    .iter()
                    .filter_map(|&conv| Some((judge.completed(conv)?, labels.completed(conv)?)))
                    .collect();
                agreement.push(kappa(COMPLETED, &done, boot));
                Some(HumanAgreementSection {
                    judge: key.judge.clone(),
                    judge_model: key.judge_model.clone(),
                    rubric: key.rubric.clone(),
                    simulated: key.simulated,
                    raters: raters.iter().map(|r| r.to_string()).collect(),
                    agreement,
                })
            })
            .collect(),
    )
}

fn kappa(criterion: &str, pairs: &[(f64, f64)], boot: &Bootstrap) -> HumanCriterionAgreement {
    let estimate = weighted_kappa_bootstrap(pairs, boot);
    HumanCriterionAgreement {
        criterion: criterion.to_string(),
        n: pairs.len(),
        weighted_kappa: estimate.map(|e| e.kappa),
        interval: estimate.and_then(|e| e.interval),
    }
}

#[cfg(test)]
mod tests {
    use super::super::load::{JudgeFacts, SectionKey};
    use super::*;

    fn key(judge: &str, model: &str) -> SectionKey {
        SectionKey {
            rubric: "q@1".into(),
            judge: judge.into(),
            simulated: false,
            judge_model: model.into(),
        }
    }

    fn ok(conv: usize, section: usize, replicate: i64, score: i64, done: bool) -> Judgment {
        Judgment {
            conv,
            section,
            replicate,
            status: JudgmentStatus::Ok,
            scores: vec![(0, score)],
            completed: Some(done),
        }
    }

    fn facts(judges: JudgeFacts) -> Facts {
        Facts {
            judges,
            ..Facts::default()
        }
    }

    #[test]
    fn no_labels_is_none_not_zero() {
        let j = JudgeFacts {
            sections: vec![key("mock", "m")],
            criteria: vec!["accuracy".into()],
            judgments: vec![ok(0, 0, 1, 3, true)],
            ..JudgeFacts::default()
        };
        assert!(sections(&facts(j), &Bootstrap::default()).is_none());
    }

    #[test]
    fn judge_means_over_replicates_meet_the_raters_mean() {
        // Six conversations. The judge scores each twice; the rater once.
        // Judge means: 1.5, 2, 3, 4, 4.5, 5; rater: 1, 2, 3, 4, 5, 5.
        // By hand: O = (0.25 + 0 + 0 + 0 + 0.25 + 0)/6 = 1/12;
        // E = mean x² + mean y² − 2·mean x·mean y with x̄ = 20/6, ȳ = 20/6,
        // mean x² = (2.25 + 4 + 9 + 16 + 20.25 + 25)/6 = 76.5/6, mean y² = 80/6:
        // E = 156.5/6 − 2·400/36 = 26.0833… − 22.2222… = 3.86111…; κ = 1 − (1/12)/3.86111
        // = 0.978417…
        let judge = [(1, 2), (2, 2), (3, 3), (4, 4), (4, 5), (5, 5)];
        let rater = [1, 2, 3, 4, 5, 5];
        let mut judgments = Vec::new();
        for (conv, (a, b)) in judge.iter().enumerate() {
            judgments.push(ok(conv, 0, 1, *a, true));
            judgments.push(ok(conv, 0, 2, *b, conv % 2 == 0));
        }
        // A conversation the judge failed on: not a pair.
        judgments.push(Judgment {
            status: JudgmentStatus::Unparseable,
            scores: vec![],
            completed: None,
            ..ok(6, 0, 1, 0, false)
        });
        let human_judgments: Vec<Judgment> = rater
            .iter()
            .enumerate()
            .map(|(conv, s)| ok(conv, 0, 1, *s, conv % 2 == 0))
            .chain([ok(6, 0, 1, 2, false)])
            .collect();
        let j = JudgeFacts {
            sections: vec![key("mock", "m")],
            criteria: vec!["accuracy".into()],
            judgments,
            human_sections: vec![key("human:ana", "human")],
            human_judgments,
            ..JudgeFacts::default()
        };
        let out = sections(&facts(j), &Bootstrap::default()).unwrap();
        assert_eq!(out.len(), 1);
        let s = &out[0];
        assert_eq!(s.raters, ["human:ana"]);
        assert_eq!(s.agreement[0].criterion, "accuracy");
        assert_eq!(s.agreement[0].n, 6);
        let k = s.agreement[0].weighted_kappa.unwrap();
        assert!((k - (1.0 - (1.0 / 12.0) / (156.5 / 6.0 - 800.0 / 36.0))).abs() < 1e-12);
        assert!((k - 0.978417).abs() < 1e-6, "{k}");
        assert!(s.agreement[0].interval.is_some());
        // completed: the judge said yes on both replicates of conversations 0, 2, 4 (1.0) and
        // on one of two of 1, 3, 5 (0.5); the rater yes on 0, 2, 4 (1) and no on the others.
        // O = 3·0.25/6 = 0.125; x̄ = 0.75, ȳ = 0.5, mean x² = 0.625, mean y² = 0.5;
        // E = 0.625 + 0.5 − 0.75 = 0.375; κ = 1 − 0.125/0.375 = 2/3.
        let done = &s.agreement[1];
        assert_eq!((done.criterion.as_str(), done.n), ("completed", 6));
        assert!((done.weighted_kappa.unwrap() - 2.0 / 3.0).abs() < 1e-12);
    }
}
