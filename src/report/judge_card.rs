//! The judge card: per (judge, rubric) whose scores the report shows, what says whether
//! those scores can count — its reference anchors and controls, length bias, position bias
//! (pairwise), its own model family among the cells it scored, agreement with human labels —
//! and one verdict: `failed` (an anchor or control rule fails), `flagged` (length bias
//! established, position consistency below [`POSITION_MIN`], or a cell of its own family),
//! else `trusted`, with the reasons in sentences. Pure: built from the report's facts and
//! sections, never from the store. Rules and references: docs/judge.md, "The judge card".

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::cells::wilson_rate;
use super::load::{Facts, NO_COUNT};
use super::model::{AnchorSection, JudgeSection, PairwiseSection};
pub use super::model::{
    ChecksBesideLength, Control, HumanAgreement, JudgeCard, LengthBias, Position, SelfFamilyCell,
    Verdict,
};
use crate::figure::Figure;
use crate::stats::{self, Interval};
use crate::store::anchor_judgments::{AnchorRow, ControlKind};

/// The share of a control's pairs that must hold, at the lower end of its Wilson 95 %
/// interval, for it to pass (as for the anchors: at least 4 scenarios are needed).
pub const CONTROL_PASS_ABOVE: f64 = 0.5;

/// The lowest band of a scale: its bottom quarter (1–2 on 1–5).
fn lowest_band(min: i64, max: i64) -> f64 {
    min as f64 + (max - min) as f64 / 4.0
}

/// Position consistency (share of pairs whose verdict survived swapping) below which a
/// judge is flagged: GPT-4 held 65 % in the MT-Bench paper (Zheng et al. 2023).
pub const POSITION_MIN: f64 = 0.8;

/// What the cards are built from, beside the facts.
pub(super) struct CardInputs<'a> {
    /// Each judge section with its conversations' overall scores (by conversation index).
    pub scored: &'a [(JudgeSection, HashMap<usize, f64>)],
    pub pairwise: &'a [PairwiseSection],
    pub anchors: &'a [AnchorSection],
    /// Every current anchor judgment: the controls are read from them.
    pub anchor_rows: &'a [AnchorRow],
    /// (judge id, judge model, simulated) → the family its settings wrote.
    pub families: &'a [crate::store::judgments::JudgeFamily],
    /// Each judge's agreement with the human labels (`super::human_agreement`); `None`
    /// without labels.
    pub human: Option<&'a [super::model::HumanAgreementSection]>,
}

type Key = (String, String, bool, String);

/// The judge's agreement with the people who labelled the rubric's conversations, per
/// criterion and `completed`; `None` when no one labelled them.
fn human_agreement(
    human: Option<&[super::model::HumanAgreementSection]>,
    rubric: &str,
    judge: &str,
    judge_model: &str,
) -> Option<Vec<HumanAgreement>> {
    let section = human?
        .iter()
        .find(|h| h.rubric == rubric && h.judge == judge && h.judge_model == judge_model)?;
    Some(
        section
            .agreement
            .iter()
            .map(|a| HumanAgreement {
                criterion: a.criterion.clone(),
                n: a.n,
                weighted_kappa: a.weighted_kappa,
                interval: a.interval,
            })
            .collect(),
    )
}

/// One card per (rubric, judge, simulated, judge model) with scores or pairwise verdicts
/// in the report, ordered by rubric, judge.
pub(super) fn cards(facts: &Facts, inputs: &CardInputs) -> Vec<JudgeCard> {
    let mut keys: BTreeSet<Key> = BTreeSet::new();
    for (s, _) in inputs.scored {
        keys.insert((
            s.rubric.clone(),
            s.judge.clone(),
            s.simulated,
            s.judge_model.clone(),
        ));
    }
    for p in inputs.pairwise {
        keys.insert((
            p.rubric.clone(),
            p.judge.clone(),
            p.simulated,
            p.judge_model.clone(),
        ));
    }
    keys.into_iter()
        .map(|(rubric, judge, simulated, judge_model)| {
            let scored = inputs.scored.iter().find(|(s, _)| {
                s.rubric == rubric
                    && s.judge == judge
                    && s.simulated == simulated
                    && s.judge_model == judge_model
            });
            let pairwise = inputs.pairwise.iter().find(|p| {
                p.rubric == rubric
                    && p.judge == judge
                    && p.simulated == simulated
                    && p.judge_model == judge_model
            });
            let anchors = inputs
                .anchors
                .iter()
                .find(|a| a.rubric == rubric && a.judge == judge && a.simulated == simulated)
                .cloned();
            let family = inputs
                .families
                .iter()
                .find(|f| f.judge_id == judge && f.model == judge_model && f.simulated == simulated)
                .and_then(|f| f.family.clone())
                .or_else(|| crate::config::judge::family_of(&judge_model).map(String::from));
            let cells = scored_cells(facts, scored.map(|(s, _)| s), pairwise);
            let self_family = family.as_ref().map(|f| self_family(facts, &cells, f));
            let length_bias = scored.and_then(|(_, scores)| length_bias(facts, scores));
            let position = pairwise.map(position);
            let controls = controls(inputs.anchor_rows, &rubric, &judge, simulated);
            let human_agreement = human_agreement(inputs.human, &rubric, &judge, &judge_model);
            let mut card = JudgeCard {
                judge,
                rubric,
                judge_model,
                simulated,
                family,
                anchors,
                controls,
                length_bias,
                position,
                human_agreement,
                self_family,
                verdict: Verdict::Trusted,
                reasons: Vec::new(),
            };
            let (verdict, reasons) = verdict(&card);
            card.verdict = verdict;
            card.reasons = reasons;
            card
        })
        .collect()
}

/// The controls' pairs and rules of one rubric × judge from its anchor judgments; `None`
/// when it judged no control.
fn controls(
    rows: &[AnchorRow],
    rubric: &str,
    judge: &str,
    simulated: bool,
) -> Option<Vec<Control>> {
    let mine: Vec<&AnchorRow> = rows
        .iter()
        .filter(|r| r.rubric == rubric && r.judge_id == judge && r.simulated == simulated)
        .collect();
    if !mine
        .iter()
        .any(|r| ControlKind::of(r.defect.as_deref()).is_some())
    {
        return None;
    }
    let mut by_scenario: BTreeMap<&str, Vec<&AnchorRow>> = BTreeMap::new();
    for r in &mine {
        by_scenario.entry(&r.scenario).or_default().push(r);
    }
    let score = |rows: &[&AnchorRow], kind: Option<ControlKind>| {
        rows.iter()
            .find(|r| match kind {
                None => r.defect.is_none(),
                Some(k) => ControlKind::of(r.defect.as_deref()) == Some(k),
            })
            .and_then(|r| r.mean_score)
    };
    let scale = mine.iter().find_map(|r| r.scale);
    let out = ControlKind::ALL
        .into_iter()
        .map(|kind| {
            let (mut pairs, mut held) = (0u64, 0u64);
            for rows in by_scenario.values() {
                let Some(control) = score(rows, Some(kind)) else {
                    continue;
                };
                let ok = match kind {
                    ControlKind::Padding => score(rows, None).map(|reference| control <= reference),
                    ControlKind::Null => scale.map(|(lo, hi)| control <= lowest_band(lo, hi)),
                };
                if let Some(ok) = ok {
                    pairs += 1;
                    held += u64::from(ok);
                }
            }
            let rate = wilson_rate(held, pairs);
            let rule = match kind {
                ControlKind::Padding => {
                    "the reference with irrelevant filler after its final answer scored no higher than the plain reference".to_string()
                }
                ControlKind::Null => match scale {
                    Some((lo, hi)) => format!(
                        "a polite non-answer scored in the rubric's lowest band (mean ≤ {} on {lo}–{hi})",
                        lowest_band(lo, hi)
                    ),
                    None => "a polite non-answer scored in the rubric's lowest band".to_string(),
                },
            };
            Control {
                name: kind.name().to_string(),
                pairs,
                held,
                rate: rate.value,
                interval: rate.interval,
                rule,
                passed: rate.interval.is_some_and(|i| i.lo > CONTROL_PASS_ABOVE),
            }
        })
        .collect();
    Some(out)
}

/// The cells (indices into `facts.cells`) the judge scored or compared.
fn scored_cells(
    facts: &Facts,
    section: Option<&JudgeSection>,
    pairwise: Option<&PairwiseSection>,
) -> BTreeSet<usize> {
    let mut out: BTreeSet<usize> = section
        .iter()
        .flat_map(|s| s.cells.iter().enumerate())
        .filter(|(_, c)| c.n > 0)
        .map(|(i, _)| i)
        .collect();
    if let Some(p) = pairwise {
        let names: BTreeSet<String> = p
            .cells
            .iter()
            .map(|c| format!("{} / {}", c.provider, c.model))
            .chain(p.baseline.iter().cloned())
            .collect();
        out.extend((0..facts.cells.len()).filter(|&i| names.contains(&facts.cell_name(i))));
    }
    out
}

/// The scored cells whose label or any model id is of `family`.
fn self_family(facts: &Facts, cells: &BTreeSet<usize>, family: &str) -> Vec<SelfFamilyCell> {
    cells
        .iter()
        .filter_map(|&i| {
            let key = facts.cells.get(i)?;
            let of_family = |m: &str| crate::config::judge::family_of(m) == Some(family);
            (of_family(&key.label) || key.model_ids.iter().any(|m| of_family(m))).then(|| {
                SelfFamilyCell {
                    cell: facts.cell_name(i),
                    family: family.to_string(),
                }
            })
        })
        .collect()
}

/// Each scored conversation's final answer length (visible tokens of its last turn) against
/// its mean score, ranked within strata of conversations equally good by the rules: the
/// same scenario and the same checks failed (a judge that prefers the complete answers the
/// checks also prefer is not length-biased for it). Conversations without a counted last
/// answer or a scenario are left out. Beside it, the checks' pass rate against length
/// within scenarios alone.
fn length_bias(facts: &Facts, scores: &HashMap<usize, f64>) -> Option<LengthBias> {
    let mut convs: Vec<usize> = scores.keys().copied().collect();
    convs.sort_unstable();
    let (mut len, mut score, mut group) = (Vec::new(), Vec::new(), Vec::new());
    let (mut c_len, mut c_rate, mut c_group) = (Vec::new(), Vec::new(), Vec::new());
    let mut used = Vec::new();
    let mut strata: HashMap<(usize, Option<Vec<i64>>), u32> = HashMap::new();
    for conv in convs {
        let Some(c) = facts.convs.get(conv) else {
            continue;
        };
        let (Some(scenario), Some(&s)) = (c.scenario, scores.get(&conv)) else {
            continue;
        };
        let last = (c.first_turn + c.n_turns).checked_sub(1);
        let Some(turn) = last
            .filter(|_| c.n_turns > 0)
            .and_then(|i| facts.turns.get(i))
        else {
            continue;
        };
        if turn.visible_tokens == NO_COUNT {
            continue;
        }
        let tokens = f64::from(turn.visible_tokens);
        // Equally good by the rules: the same scenario and the same checks failed (or no
        // check result).
        let failed = match facts.checks.per_conv.get(conv) {
            Some(Some(checks)) => {
                let mut f = checks.failed_defs.clone();
                f.sort_unstable();
                Some(f)
            }
            _ => None,
        };
        let next = u32::try_from(strata.len()).unwrap_or(u32::MAX);
        let stratum = *strata.entry((scenario, failed)).or_insert(next);
        let scenario = u32::try_from(scenario).unwrap_or(u32::MAX);
        len.push(tokens);
        score.push(s);
        group.push(stratum);
        used.push(conv);
        if let Some(Some(checks)) = facts.checks.per_conv.get(conv) {
            let scored = checks.passed + checks.failed;
            if scored > 0 {
                c_len.push(tokens);
                c_rate.push(f64::from(checks.passed) / f64::from(scored));
                c_group.push(scenario);
            }
        }
    }
    let w = stats::spearman_within_groups(&len, &score, &group)?;
    if w.n == 0 {
        return None;
    }
    Some(LengthBias {
        n: w.n,
        strata: w.groups,
        rho: w.rho,
        interval: w.interval,
        established: w.interval.is_some_and(|i| i.excludes_zero()),
        checks: checks_beside(facts, &used, &c_len, &c_rate, &c_group),
    })
}

/// The checks over the conversations the length bias used.
fn checks_beside(
    facts: &Facts,
    used: &[usize],
    len: &[f64],
    rate: &[f64],
    group: &[u32],
) -> Option<ChecksBesideLength> {
    let (mut passed, mut scored) = (0u64, 0u64);
    for conv in used {
        if let Some(Some(c)) = facts.checks.per_conv.get(*conv) {
            passed += u64::from(c.passed);
            scored += u64::from(c.passed + c.failed);
        }
    }
    if scored == 0 {
        return None;
    }
    let w = stats::spearman_within_groups(len, rate, group)?;
    let pass = wilson_rate(passed, scored);
    Some(ChecksBesideLength {
        passed,
        scored,
        pass_rate: pass.value,
        pass_interval: pass.interval,
        n: w.n,
        rho: w.rho,
        interval: w.interval,
        established: w.interval.is_some_and(|i| i.excludes_zero()),
    })
}

fn position(p: &PairwiseSection) -> Position {
    Position {
        n: p.consistency.n,
        consistent: p.consistency.k,
        rate: p.consistency.value,
        interval: p.consistency.interval,
        first_position_wins: p.first_position_wins,
    }
}

/// A correlation with its interval and n: `ρ +0.45 [+0.20, +0.64] (n 30)`.
fn rho_text(rho: Option<f64>, interval: Option<Interval>, n: usize) -> String {
    match rho {
        Some(r) => format!(
            "ρ {}",
            Figure::new(r, crate::figure::Unit::Signed)
                .within(interval)
                .n(n)
        ),
        None => format!("ρ undefined (no variation within scenarios, n {n})"),
    }
}

/// The verdict and its reasons: failures first, then flags, then what held and what was
/// not checked.
/// The card's reasons, by what they do to the verdict.
#[derive(Default)]
struct Reasons {
    /// Each makes the card `failed`.
    failed: Vec<String>,
    /// Each makes it `flagged`.
    flagged: Vec<String>,
    /// Said, changing nothing.
    held: Vec<String>,
}

fn verdict(card: &JudgeCard) -> (Verdict, Vec<String>) {
    let mut r = Reasons::default();
    anchors_reason(card, &mut r);
    controls_reason(card, &mut r);
    length_reason(card, &mut r);
    position_reason(card, &mut r);
    family_reason(card, &mut r);
    people_reason(card, &mut r);
    let Reasons {
        mut failed,
        mut flagged,
        mut held,
    } = r;
    let verdict = if !failed.is_empty() {
        Verdict::Failed
    } else if !flagged.is_empty() {
        Verdict::Flagged
    } else {
        Verdict::Trusted
    };
    failed.append(&mut flagged);
    failed.append(&mut held);
    (verdict, failed)
}

/// The reference anchors: failed when the judge cannot tell references from spoiled answers.
fn anchors_reason(card: &JudgeCard, r: &mut Reasons) {
    match &card.anchors {
        Some(a) if !a.passed => r.failed.push(format!(
            "anchors failed: the reference scored above its spoiled variant in {} of {} pairs, not clearly more than half: the judge cannot tell references from spoiled answers",
            a.above.k, a.pairs
        )),
        Some(a) => r.held.push(format!(
            "anchors passed: the reference scored above its spoiled variant in {} of {} pairs",
            a.above.k, a.pairs
        )),
        None => r.held.push(
            "anchors not checked: run `turnbench judge --anchors` with this judge and rubric"
                .into(),
        ),
    }
}

/// The padding and null controls: each failed one fails the card.
fn controls_reason(card: &JudgeCard, r: &mut Reasons) {
    match &card.controls {
        Some(controls) => {
            for c in controls {
                let text = format!(
                    "control {} {}: {} held in {} of {} pairs",
                    c.name,
                    if c.passed { "passed" } else { "failed" },
                    c.rule,
                    c.held,
                    c.pairs
                );
                if c.passed {
                    r.held.push(text);
                } else {
                    r.failed.push(text);
                }
            }
        }
        None => r.held.push(
            "controls not checked: run `turnbench judge --anchors` (it judges the padding and null controls too)".into(),
        ),
    }
}

/// Length bias: flagged when established.
fn length_reason(card: &JudgeCard, r: &mut Reasons) {
    if let Some(l) = &card.length_bias {
        let checks = l.checks.as_ref().map_or(String::new(), |c| {
            format!(
                "; the checks' pass rate over these conversations is {}, and against length within scenarios {}",
                crate::figure::rate(c.pass_rate, c.pass_interval),
                rho_text(c.rho, c.interval, c.n)
            )
        });
        let rho = rho_text(l.rho, l.interval, l.n);
        if l.established {
            let way = if l.rho.unwrap_or(0.0) > 0.0 {
                "longer"
            } else {
                "shorter"
            };
            r.flagged.push(format!(
                "length bias established: among answers equally good by the checks, {way} final answers scored higher ({rho}, {} strata of scenario × checks failed){checks}",
                l.strata
            ));
        } else if l.rho.is_none() {
            r.held.push(format!(
                "length bias not measurable: answer length or score is constant within every stratum of scenario × checks failed (n {}, {} strata)",
                l.n, l.strata
            ));
        } else {
            let why = if l.interval.is_none() {
                "too few conversations per scenario for an interval"
            } else {
                "the interval includes 0"
            };
            r.held.push(format!(
                "no length bias established ({rho}, {} strata of scenario × checks failed: {why}){checks}",
                l.strata
            ));
        }
    }
}

/// Position (pairwise): flagged below [`POSITION_MIN`].
fn position_reason(card: &JudgeCard, r: &mut Reasons) {
    if let Some(p) = &card.position {
        let share = p.rate.map_or("-".into(), |rate| {
            Figure::percent(rate).within(p.interval).to_string()
        });
        let text = format!(
            "position: the verdict held after swapping the transcripts in {} of {} pairs ({share}); the transcript shown first won in both orders in {}",
            p.consistent, p.n, p.first_position_wins
        );
        match p.rate {
            Some(rate) if rate < POSITION_MIN => r
                .flagged
                .push(format!("{text}: below {:.0} %", POSITION_MIN * 100.0)),
            _ => r.held.push(text),
        }
    }
}

/// Its own family among the cells it scored: flagged.
fn family_reason(card: &JudgeCard, r: &mut Reasons) {
    match (&card.self_family, &card.family) {
        (Some(cells), Some(f)) if !cells.is_empty() => {
            let names: Vec<&str> = cells.iter().map(|c| c.cell.as_str()).collect();
            r.flagged.push(format!(
                "self-family: the judge ({f}) scored cells of its own family, whose style it may prefer: {}",
                names.join(", ")
            ));
        }
        (Some(_), Some(f)) => r.held.push(format!(
            "no cell of the judge's own family ({f}) among those it scored"
        )),
        _ => r.held.push(format!(
            "the family of judge model {} is unknown: set `family` in its settings to check self-preference",
            card.judge_model
        )),
    }
}

/// Agreement with the human labels: said, changing nothing.
fn people_reason(card: &JudgeCard, r: &mut Reasons) {
    match &card.human_agreement {
        None => r
            .held
            .push("no human labels for this rubric: agreement with people not checked".into()),
        Some(agreement) => {
            let low: Vec<String> = agreement
                .iter()
                .filter(|a| a.weighted_kappa.is_some_and(|k| k < 0.6))
                .map(|a| a.criterion.clone())
                .collect();
            if low.is_empty() {
                r.held.push("agrees with the human labels (weighted κ ≥ 0.6 on every criterion it shares with them)".into());
            } else {
                r.held.push(format!(
                    "agrees poorly with the human labels (weighted κ < 0.6) on: {}",
                    low.join(", ")
                ));
            }
        }
    }
}

/// The one line `turnbench run`, `judge` and `report` print per card.
pub fn line(c: &JudgeCard) -> String {
    let first = c.reasons.first().filter(|_| c.verdict != Verdict::Trusted);
    format!(
        "judge card: {} ({}{}) on {}: {}{}",
        c.judge,
        c.judge_model,
        if c.simulated { ", simulated" } else { "" },
        c.rubric,
        c.verdict.as_str(),
        first.map_or(String::new(), |r| format!(" ({r})"))
    )
}

/// Every card whose judge is not trusted, by judge: what `--require-trusted-judge` refuses.
pub fn untrusted(cards: &[JudgeCard]) -> BTreeMap<&str, Verdict> {
    let mut out = BTreeMap::new();
    for c in cards.iter().filter(|c| c.verdict != Verdict::Trusted) {
        let v = out.entry(c.judge.as_str()).or_insert(c.verdict);
        *v = (*v).max(c.verdict);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card() -> JudgeCard {
        JudgeCard {
            judge: "j".into(),
            rubric: "r@1".into(),
            judge_model: "gpt-4.1-mini".into(),
            simulated: false,
            family: Some("gpt".into()),
            anchors: None,
            controls: None,
            length_bias: Some(LengthBias {
                n: 30,
                strata: 6,
                rho: Some(0.1),
                interval: Some(Interval { lo: -0.2, hi: 0.4 }),
                established: false,
                checks: None,
            }),
            position: None,
            human_agreement: None,
            self_family: Some(Vec::new()),
            verdict: Verdict::Trusted,
            reasons: Vec::new(),
        }
    }

    fn control(passed: bool) -> Control {
        Control {
            name: "padding".into(),
            pairs: 6,
            held: if passed { 6 } else { 1 },
            rate: Some(if passed { 1.0 } else { 1.0 / 6.0 }),
            interval: None,
            rule: "not above the plain reference".into(),
            passed,
        }
    }

    #[test]
    fn the_verdict_follows_the_rules_in_order() {
        let (v, reasons) = verdict(&card());
        assert_eq!(v, Verdict::Trusted, "{reasons:?}");
        assert!(reasons.iter().any(|r| r.contains("anchors not checked")));
        // A self-family cell flags.
        let mut c = card();
        c.self_family = Some(vec![SelfFamilyCell {
            cell: "openai / gpt-4o".into(),
            family: "gpt".into(),
        }]);
        let (v, reasons) = verdict(&c);
        assert_eq!(v, Verdict::Flagged);
        assert!(reasons[0].contains("openai / gpt-4o"), "{reasons:?}");
        // Position consistency below 0.8 flags; at 0.8 it does not.
        let mut c = card();
        let pos = |consistent: u64| Position {
            n: 10,
            consistent,
            rate: Some(consistent as f64 / 10.0),
            interval: None,
            first_position_wins: 10 - consistent,
        };
        c.position = Some(pos(7));
        assert_eq!(verdict(&c).0, Verdict::Flagged);
        c.position = Some(pos(8));
        assert_eq!(verdict(&c).0, Verdict::Trusted);
        // Length bias established flags, either way round.
        let mut c = card();
        if let Some(l) = c.length_bias.as_mut() {
            l.rho = Some(-0.5);
            l.interval = Some(Interval { lo: -0.7, hi: -0.2 });
            l.established = true;
        }
        let (v, reasons) = verdict(&c);
        assert_eq!(v, Verdict::Flagged);
        assert!(reasons[0].contains("shorter"), "{reasons:?}");
        // A failed control fails, whatever else flags; a passed one does not.
        c.controls = Some(vec![control(true)]);
        assert_eq!(verdict(&c).0, Verdict::Flagged);
        c.controls = Some(vec![control(true), control(false)]);
        let (v, reasons) = verdict(&c);
        assert_eq!(v, Verdict::Failed);
        assert!(
            reasons[0].starts_with("control padding failed"),
            "{reasons:?}"
        );
    }

    fn anchor(scenario: &str, defect: Option<&str>, mean: Option<f64>) -> AnchorRow {
        AnchorRow::sample(scenario, defect, mean)
    }

    #[test]
    fn controls_count_their_pairs_by_their_own_rules() {
        let mut rows = Vec::new();
        for k in 0..6 {
            let s = format!("s{k}");
            rows.push(anchor(&s, None, Some(4.0)));
            rows.push(anchor(&s, Some("wrong_total"), Some(2.0)));
            // Padding: tied in s0, above the reference in s1, below elsewhere.
            let padded = match k {
                0 => 4.0,
                1 => 4.4,
                _ => 3.6,
            };
            rows.push(anchor(&s, Some("control:padding"), Some(padded)));
            // Null: 2.0 is the top of the lowest band on 1–5; s5 unscored.
            let null = match k {
                5 => None,
                4 => Some(2.2),
                _ => Some(2.0),
            };
            rows.push(anchor(&s, Some("control:null"), null));
        }
        let c = controls(&rows, "r@1", "j", false).unwrap();
        let (padding, null) = (&c[0], &c[1]);
        assert_eq!(
            (padding.name.as_str(), padding.pairs, padding.held),
            ("padding", 6, 5)
        );
        assert_eq!((null.name.as_str(), null.pairs, null.held), ("null", 5, 4));
        // Wilson 5 of 6: [0.4365, 0.9699] (by hand in Python, Wilson's formula at z 1.96), not
        // above 50 % at its lower end: not passed; nor 4 of 5.
        let i = padding.interval.unwrap();
        assert!((i.lo - 0.4365).abs() < 1e-3, "{i:?}");
        assert!(!padding.passed && !null.passed);
        // Another judge, or one without controls: none.
        assert!(controls(&rows, "r@1", "other", false).is_none());
        let plain: Vec<AnchorRow> = rows
            .iter()
            .filter(|r| ControlKind::of(r.defect.as_deref()).is_none())
            .cloned()
            .collect();
        assert!(controls(&plain, "r@1", "j", false).is_none());
    }

    #[test]
    fn the_worst_verdict_per_judge_is_what_a_gate_refuses() {
        let mut a = card();
        a.verdict = Verdict::Flagged;
        let mut b = card();
        b.rubric = "other@1".into();
        b.verdict = Verdict::Failed;
        let mut c = card();
        c.judge = "k".into();
        let cards = [a, b, c];
        let u = untrusted(&cards);
        assert_eq!(
            u.into_iter().collect::<Vec<_>>(),
            vec![("j", Verdict::Failed)]
        );
        assert!(line(&cards[1]).contains(": failed"));
    }
}
