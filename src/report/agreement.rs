//! How far the judges can be trusted: Krippendorff's α (ordinal) per rubric criterion,
//! with its n and a bootstrap interval over conversations, between the replicates of one
//! judge (self-agreement) and between the judges of a panel. People who labelled the same
//! conversations (`human:<rater>`) join a rubric's panel as raters of their own. Scored
//! judgments only; the statistics are `crate::stats`'.

use std::collections::BTreeMap;

use super::load::{Facts, JudgeFacts, JudgmentStatus, SectionKey};
use super::model::{AgreementKind, AgreementSection, CriterionAgreement};
use crate::stats::{self, Bootstrap};

/// conversation → replicate → (criterion → score), for one judge section.
type Scores = BTreeMap<usize, BTreeMap<i64, BTreeMap<usize, i64>>>;

/// `variation`: (judge id, simulated, what its replicates varied), from the store.
pub(super) fn sections(
    facts: &Facts,
    variation: &[(String, bool, String)],
    boot: &Bootstrap,
) -> Vec<AgreementSection> {
    let judged = Judged::of(facts);
    let machines = judged.j.sections.len();
    // Judges first (in key order), then people (in key order).
    let mut order: Vec<usize> = (0..judged.keys.len()).collect();
    order.sort_by(|&a, &b| (a >= machines, judged.keys[a]).cmp(&(b >= machines, judged.keys[b])));
    let mut out: Vec<AgreementSection> = order
        .iter()
        .filter(|&&s| s < machines)
        .filter_map(|&s| judged.replicates(s, variation, boot))
        .collect();
    let mut by_rubric: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for &s in &order {
        by_rubric.entry(&judged.keys[s].rubric).or_default().push(s);
    }
    out.extend(
        by_rubric
            .into_iter()
            .filter_map(|(rubric, panel)| judged.between_judges(rubric, &panel, boot)),
    );
    out
}

/// The scored judgments of every judge section, then of every rater (human labels), as
/// agreement reads them: section s < `j.sections.len()` is a judge's, the rest people's.
struct Judged<'f> {
    j: &'f JudgeFacts,
    keys: Vec<&'f SectionKey>,
    by_section: Vec<Scores>,
}

impl<'f> Judged<'f> {
    fn of(facts: &'f Facts) -> Judged<'f> {
        let j = &facts.judges;
        let machines = j.sections.len();
        let keys: Vec<&SectionKey> = j.sections.iter().chain(&j.human_sections).collect();
        let mut by_section: Vec<Scores> = vec![BTreeMap::new(); keys.len()];
        let judgments = j
            .judgments
            .iter()
            .map(|x| (x, 0))
            .chain(j.human_judgments.iter().map(|x| (x, machines)));
        for (judgment, offset) in judgments.filter(|(x, _)| x.status == JudgmentStatus::Ok) {
            if let Some(scores) = by_section.get_mut(judgment.section + offset) {
                scores.entry(judgment.conv).or_default().insert(
                    judgment.replicate,
                    judgment.scores.iter().copied().collect(),
                );
            }
        }
        Judged {
            j,
            keys,
            by_section,
        }
    }

    /// `judge (judge model)` of a section; a rater as `human:<rater>`.
    fn name(&self, s: usize) -> String {
        let section = self.keys[s];
        if crate::store::labels::is_human(&section.judge) {
            section.judge.clone()
        } else {
            format!("{} ({})", section.judge, section.judge_model)
        }
    }

    /// The criteria any of `sections` scored, in name order.
    fn criteria_of(&self, sections: &[usize]) -> Vec<usize> {
        let mut c: Vec<usize> = sections
            .iter()
            .flat_map(|&s| self.by_section[s].values())
            .flat_map(|reps| reps.values())
            .flat_map(|scores| scores.keys().copied())
            .collect();
        c.sort_by(|&a, &b| self.j.criteria[a].cmp(&self.j.criteria[b]));
        c.dedup();
        c
    }

    /// Self-agreement of one section: rows are replicate numbers, columns conversations;
    /// `None` without a conversation scored twice.
    fn replicates(
        &self,
        s: usize,
        variation: &[(String, bool, String)],
        boot: &Bootstrap,
    ) -> Option<AgreementSection> {
        let j = self.j;
        let scores = &self.by_section[s];
        if !scores.values().any(|reps| reps.len() >= 2) {
            return None;
        }
        let mut replicates: Vec<i64> = scores.values().flat_map(|r| r.keys().copied()).collect();
        replicates.sort_unstable();
        replicates.dedup();
        Some(AgreementSection {
            rubric: j.sections[s].rubric.clone(),
            kind: AgreementKind::Replicates,
            judges: vec![self.name(s)],
            simulated: j.sections[s].simulated,
            coders: replicates.len(),
            varied: variation
                .iter()
                .find(|(judge, sim, _)| {
                    *judge == j.sections[s].judge && *sim == j.sections[s].simulated
                })
                .map(|(_, _, what)| what.clone()),
            criteria: self
                .criteria_of(&[s])
                .iter()
                .map(|&c| {
                    let rows: Vec<Vec<Option<f64>>> = replicates
                        .iter()
                        .map(|r| {
                            scores
                                .values()
                                .map(|reps| reps.get(r).and_then(|x| x.get(&c)).map(|&v| v as f64))
                                .collect()
                        })
                        .collect();
                    criterion(&j.criteria[c], &rows, boot)
                })
                .collect(),
        })
    }

    /// Between the judges of one rubric: rows are judges, each by its first scored
    /// replicate; `None` with one judge, or without a conversation two of them scored.
    fn between_judges(
        &self,
        rubric: &str,
        panel: &[usize],
        boot: &Bootstrap,
    ) -> Option<AgreementSection> {
        if panel.len() < 2 {
            return None;
        }
        let by_section = &self.by_section;
        let mut convs: Vec<usize> = panel
            .iter()
            .flat_map(|&s| by_section[s].keys().copied())
            .collect();
        convs.sort_unstable();
        convs.dedup();
        let shared = convs.iter().any(|c| {
            panel
                .iter()
                .filter(|&&s| by_section[s].contains_key(c))
                .count()
                >= 2
        });
        if !shared {
            return None;
        }
        Some(AgreementSection {
            rubric: rubric.to_string(),
            kind: AgreementKind::Judges,
            judges: panel.iter().map(|&s| self.name(s)).collect(),
            simulated: panel.iter().any(|&s| self.keys[s].simulated),
            coders: panel.len(),
            varied: None,
            criteria: self
                .criteria_of(panel)
                .iter()
                .map(|&c| {
                    let rows: Vec<Vec<Option<f64>>> = panel
                        .iter()
                        .map(|&s| {
                            convs
                                .iter()
                                .map(|conv| {
                                    by_section[s]
                                        .get(conv)
                                        .and_then(|reps| reps.values().find_map(|x| x.get(&c)))
                                        .map(|&v| v as f64)
                                })
                                .collect()
                        })
                        .collect();
                    criterion(&self.j.criteria[c], &rows, boot)
                })
                .collect(),
        })
    }
}

fn criterion(name: &str, rows: &[Vec<Option<f64>>], boot: &Bootstrap) -> CriterionAgreement {
    let pairable = |rows: &[Vec<Option<f64>>]| {
        let width = rows.first().map_or(0, Vec::len);
        let per_unit: Vec<usize> = (0..width)
            .map(|u| {
                rows.iter()
                    .filter(|r| r.get(u).copied().flatten().is_some())
                    .count()
            })
            .collect();
        let units = per_unit.iter().filter(|&&k| k >= 2).count();
        let values = per_unit.iter().filter(|&&k| k >= 2).sum();
        (units, values)
    };
    match stats::krippendorff_alpha_ordinal_bootstrap(rows, boot) {
        Some(e) => CriterionAgreement {
            criterion: name.to_string(),
            alpha: Some(e.alpha),
            interval: e.interval,
            n: e.units,
            values: e.values,
        },
        None => {
            let (n, values) = pairable(rows);
            CriterionAgreement {
                criterion: name.to_string(),
                alpha: None,
                interval: None,
                n,
                values,
            }
        }
    }
}
