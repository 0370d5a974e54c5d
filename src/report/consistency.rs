//! CONSISTENCY ACROSS REPEATS, per provider × model label: how often repeats of one
//! scenario that were sent the same request got the same answer and the same check
//! verdicts, and (with at least [`MIN_SPREAD_REPEATS`] repeats) the spread of their task
//! success as Laban et al. (arXiv 2505.06120) measure aptitude and unreliability. Pure: the
//! repeats come from `crate::store::repeats` (read by `load`); definitions are in
//! `docs/metrics.md`.
//!
//! - Repeats: the conversations that count of one run, one target (provider, model id,
//!   label, request parameters), one scenario id and version, two or more of them.
//! - The request at scenario turn t is the scenario's messages up to turn t plus the
//!   earlier answers: two repeats were sent byte-identical requests at t when their stored
//!   prompts of turns 1..=t are byte-equal and their answers of turns 1..t are byte-equal
//!   (the target, hence the request parameters, is the same by the grouping). At turn 1
//!   that is the scenario's first messages; after a differing answer, never again.
//! - A pair is two repeats compared at one turn where both have an answer the next request
//!   would carry (`ok`, or `truncated` with visible text). Its answers are identical when
//!   the visible answer texts are byte-equal; each check with a verdict at t for both is one
//!   verdict pair, agreeing when both passed or both failed.
//! - Pairs of one scenario are not independent: shares pool every pair of a cell, and their
//!   intervals are `stats::wilson_clustered` with the scenario as the cluster.
//! - Spread: per scenario with ≥ 5 scored repeats, each repeat's task success (the share of
//!   the scenario's current checks it passed; a failed conversation scores 0), its P90
//!   (aptitude) and P90 − P10 (unreliability), averaged over the cell's scenarios.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::stats::{self, Interval};
use crate::store::repeats::{Repeat, RepeatGroup, RepeatTurn};

/// The fewest scored repeats of a scenario whose spread is reported (Laban et al. run 10).
pub const MIN_SPREAD_REPEATS: usize = 5;

/// One provider × model label with at least one scenario repeated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Consistency {
    /// The model label.
    pub label: String,
    pub provider: String,
    pub simulated: bool,
    /// Scenarios (per run and target) with two or more repeats.
    pub scenarios: u64,
    /// Answer pairs sent byte-identical requests, and those whose answers were identical.
    pub answers: Share,
    /// Check verdict pairs of those answer pairs, and those that agree.
    pub verdicts: Share,
    /// The same counts turn by turn (turns with at least one pair), ascending.
    pub turns: Vec<TurnConsistency>,
    pub spread: Spread,
}

/// `matching` of `pairs`, pooled over scenarios; the interval treats scenarios as the
/// independent units.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Share {
    pub pairs: u64,
    pub matching: u64,
    /// `matching / pairs`; `None` without pairs.
    pub share: Option<f64>,
    /// 95 %, clustered by scenario; `None` without pairs or with pairs from one scenario.
    #[serde(serialize_with = "Interval::pair")]
    pub interval: Option<Interval>,
    /// Scenarios the pairs come from (the clusters).
    pub scenarios: u64,
}

/// One scenario turn's pairs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TurnConsistency {
    /// The scenario turn, 1-based.
    pub turn: u32,
    pub answers: Share,
    pub verdicts: Share,
}

/// Aptitude and unreliability (Laban et al.) of the scenarios with enough repeats.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    /// The fewest scored repeats a scenario needs to count here.
    pub min_repeats: usize,
    /// Scenarios that count (the n of both means).
    pub scenarios: u64,
    /// Their scored repeats, together.
    pub repeats: u64,
    /// Mean over scenarios of the P90 of per-repeat task success (0–1); `None` without a
    /// scenario.
    pub aptitude: Option<f64>,
    /// Mean over scenarios of P90 − P10 of per-repeat task success; `None` without one.
    pub unreliability: Option<f64>,
    /// Each scenario's figures, in scenario order.
    pub by_scenario: Vec<ScenarioSpread>,
}

/// One scenario's per-repeat task success.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScenarioSpread {
    pub scenario: String,
    pub repeats: u64,
    pub p10: f64,
    pub p90: f64,
}

/// Per-scenario (matching, pairs) counts of one figure.
#[derive(Debug, Default, Clone)]
struct Counts {
    by_scenario: BTreeMap<String, (u64, u64)>,
}

impl Counts {
    /// Adds `pairs` pairs of one scenario, `matching` of them matching.
    fn add(&mut self, scenario: &str, matching: u64, pairs: u64) {
        if pairs == 0 {
            return;
        }
        if let Some(c) = self.by_scenario.get_mut(scenario) {
            c.0 += matching;
            c.1 += pairs;
        } else {
            self.by_scenario
                .insert(scenario.to_string(), (matching, pairs));
        }
    }

    fn merge(&mut self, other: Counts) {
        for (scenario, (matching, pairs)) in other.by_scenario {
            self.add(&scenario, matching, pairs);
        }
    }

    fn share(&self) -> Share {
        let clusters: Vec<(u64, u64)> = self.by_scenario.values().copied().collect();
        let matching = clusters.iter().map(|c| c.0).sum();
        let pairs = clusters.iter().map(|c| c.1).sum();
        Share {
            pairs,
            matching,
            share: (pairs > 0).then(|| matching as f64 / pairs as f64),
            interval: stats::wilson_clustered(&clusters),
            scenarios: clusters.iter().filter(|c| c.1 > 0).count() as u64,
        }
    }
}

/// Everything counted for one cell.
#[derive(Debug, Default)]
struct CellTally {
    simulated: bool,
    groups: u64,
    answers: Counts,
    verdicts: Counts,
    by_turn: BTreeMap<u32, (Counts, Counts)>,
    spreads: Vec<ScenarioSpread>,
}

impl CellTally {
    /// Adds the tally of later groups of the same cell.
    fn merge(&mut self, later: CellTally) {
        self.simulated = later.simulated;
        self.groups += later.groups;
        self.answers.merge(later.answers);
        self.verdicts.merge(later.verdicts);
        for (turn, (answers, verdicts)) in later.by_turn {
            let (a, v) = self.by_turn.entry(turn).or_default();
            a.merge(answers);
            v.merge(verdicts);
        }
        self.spreads.extend(later.spreads);
    }
}

/// The section's counts per provider × label, from every group of repeats
/// ([`Tallies::of`]); [`Tallies::section`] names the figures.
#[derive(Debug, Default)]
pub struct Tallies {
    cells: BTreeMap<(String, String, bool), CellTally>,
}

impl Tallies {
    /// Counts every group, the groups side by side: each counted on its own, then added in
    /// their order (counts are sums and spreads keep that order: the same tallies as
    /// counting them one after another, [`Tallies::add`]). Each group is dropped where it
    /// was counted: freeing a quarter-million members' turns is work too.
    pub fn of(groups: Vec<RepeatGroup>) -> Tallies {
        use rayon::prelude::*;
        let each: Vec<((String, String, bool), CellTally)> = groups
            .into_par_iter()
            .map(|g| {
                let mut cell = CellTally::default();
                count_group(&g, &mut cell);
                ((g.label, g.provider, g.simulated), cell)
            })
            .collect();
        let mut t = Tallies::default();
        for (key, cell) in each {
            t.cells.entry(key).or_default().merge(cell);
        }
        t
    }

    /// Counts one group of repeats into the tally of its provider × label.
    #[cfg(test)]
    fn add(&mut self, g: &RepeatGroup) {
        let cell = self
            .cells
            .entry((g.label.clone(), g.provider.clone(), g.simulated))
            .or_default();
        count_group(g, cell);
    }

    /// The section: one entry per provider × label with a repeated scenario, ordered by
    /// label, then provider.
    pub fn section(self) -> Vec<Consistency> {
        self.cells
            .into_iter()
            .map(|((label, provider, _), c)| {
                let mut by_scenario = c.spreads;
                by_scenario.sort_by(|a, b| a.scenario.cmp(&b.scenario));
                let p90: Vec<f64> = by_scenario.iter().map(|s| s.p90).collect();
                let gap: Vec<f64> = by_scenario.iter().map(|s| s.p90 - s.p10).collect();
                Consistency {
                    label,
                    provider,
                    simulated: c.simulated,
                    scenarios: c.groups,
                    answers: c.answers.share(),
                    verdicts: c.verdicts.share(),
                    turns: c
                        .by_turn
                        .iter()
                        .map(|(&turn, (a, v))| TurnConsistency {
                            turn,
                            answers: a.share(),
                            verdicts: v.share(),
                        })
                        .collect(),
                    spread: Spread {
                        min_repeats: MIN_SPREAD_REPEATS,
                        scenarios: by_scenario.len() as u64,
                        repeats: by_scenario.iter().map(|s| s.repeats).sum(),
                        aptitude: stats::mean(&p90),
                        unreliability: stats::mean(&gap),
                        by_scenario,
                    },
                }
            })
            .collect()
    }
}

/// Counts one group of repeats into its cell's tally.
fn count_group(g: &RepeatGroup, cell: &mut CellTally) {
    cell.simulated = g.simulated;
    cell.groups += 1;
    tally_pairs(g, cell);
    if let Some(s) = spread(g) {
        cell.spreads.push(s);
    }
}

/// Whether a turn has the answer the next request carries: its answer's number.
fn answered(t: &RepeatTurn) -> Option<u32> {
    t.answer
        .filter(|_| t.outcome.lets_conversation_continue(t.has_answer))
}

/// The pairs among `k` units.
fn pairs(k: u64) -> u64 {
    k * k.saturating_sub(1) / 2
}

/// Counts the group's pairs turn by turn without visiting each pair: at each turn the
/// members still comparable fall into classes of byte-identical requests (the class of the
/// request before, refined by this turn's prompt); a class of k members with an answer
/// holds C(k, 2) pairs, of which those with one answer text are identical (Σ C(s, 2)) and,
/// per check, those with one verdict agree (C(passed, 2) + C(failed, 2) of C(scored, 2)).
/// The next turn's class is the request's refined by the answer: a differing answer leaves
/// the members in different classes for good.
fn tally_pairs(g: &RepeatGroup, cell: &mut CellTally) {
    let n = g.members.len();
    // The class of the history each member has reached; `None`: no further request.
    let mut history: Vec<Option<usize>> = vec![Some(0); n];
    let turns = g.members.iter().map(|m| m.turns.len()).max().unwrap_or(0);
    for idx in 0..turns {
        let turn = u32::try_from(idx + 1).unwrap_or(u32::MAX);
        // The request of this turn: the history so far and this turn's prompt.
        let mut requests: HashMap<(usize, u32), Vec<usize>> = HashMap::new();
        for (i, m) in g.members.iter().enumerate() {
            if let (Some(Some(h)), Some(t)) = (history.get(i), m.turns.get(idx)) {
                requests.entry((*h, t.prompt)).or_default().push(i);
            }
        }
        let mut next: Vec<Option<usize>> = vec![None; n];
        let mut classes = 0;
        let (answers_t, verdicts_t) = cell.by_turn.entry(turn).or_default();
        // A member alone with its request has no pair, now or later (classes only split).
        for members in requests.values().filter(|m| m.len() >= 2) {
            let mut by_answer: HashMap<u32, Vec<usize>> = HashMap::new();
            for &i in members {
                if let Some(a) = g
                    .members
                    .get(i)
                    .and_then(|m| m.turns.get(idx))
                    .and_then(answered)
                {
                    by_answer.entry(a).or_default().push(i);
                }
            }
            let answering: u64 = by_answer.values().map(|v| v.len() as u64).sum();
            let identical: u64 = by_answer.values().map(|v| pairs(v.len() as u64)).sum();
            answers_t.add(&g.scenario, identical, pairs(answering));
            cell.answers.add(&g.scenario, identical, pairs(answering));
            // Each check's verdicts at this turn among the members with an answer.
            let mut by_check: BTreeMap<i64, (u64, u64)> = BTreeMap::new();
            for &i in by_answer.values().flatten() {
                let verdicts = g.members.get(i).map_or(&[][..], |m| &m.verdicts[..]);
                for &(_, def, passed) in verdicts.iter().filter(|v| v.0 == turn) {
                    let c = by_check.entry(def).or_default();
                    if passed {
                        c.0 += 1;
                    } else {
                        c.1 += 1;
                    }
                }
            }
            for &(p, f) in by_check.values() {
                let (agree, all) = (pairs(p) + pairs(f), pairs(p + f));
                verdicts_t.add(&g.scenario, agree, all);
                cell.verdicts.add(&g.scenario, agree, all);
            }
            for same in by_answer.values() {
                for &i in same {
                    if let Some(slot) = next.get_mut(i) {
                        *slot = Some(classes);
                    }
                }
                classes += 1;
            }
        }
        history = next;
    }
    cell.by_turn
        .retain(|_, (a, v)| !a.by_scenario.is_empty() || !v.by_scenario.is_empty());
}

/// A repeat's task success: the share of its scenario's current checks it passed; a
/// conversation that did not complete scores 0 when the scenario's checks scored another
/// repeat; `None` when nothing says (no check scored, or turnbench's own failure, or an
/// interrupted conversation).
fn task_success(m: &Repeat, scenario_scored: bool) -> Option<f64> {
    use crate::outcome::{ConversationOutcome, TurnOutcome};
    match m.outcome {
        ConversationOutcome::Completed => m
            .checks
            .filter(|&(_, scored)| scored > 0)
            .map(|(passed, scored)| f64::from(passed) / f64::from(scored)),
        ConversationOutcome::Failed(TurnOutcome::InternalError)
        | ConversationOutcome::Interrupted => None,
        ConversationOutcome::Failed(_) => scenario_scored.then_some(0.0),
    }
}

/// P10 and P90 of the group's per-repeat task success, with at least
/// [`MIN_SPREAD_REPEATS`] scored repeats.
fn spread(g: &RepeatGroup) -> Option<ScenarioSpread> {
    let scored = g
        .members
        .iter()
        .any(|m| m.checks.is_some_and(|(_, n)| n > 0));
    let scores: Vec<f64> = g
        .members
        .iter()
        .filter_map(|m| task_success(m, scored))
        .collect();
    if scores.len() < MIN_SPREAD_REPEATS {
        return None;
    }
    let q = stats::percentiles(&scores, &[10.0, 90.0])?;
    Some(ScenarioSpread {
        scenario: g.scenario.clone(),
        repeats: scores.len() as u64,
        p10: *q.first()?,
        p90: *q.get(1)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{ConversationOutcome, TurnOutcome};

    /// The section of these groups ([`Tallies`] over all of them).
    fn section(groups: Vec<RepeatGroup>) -> Vec<Consistency> {
        Tallies::of(groups).section()
    }

    /// A repeat whose turns have prompt 0, 1, 2, … and these answers.
    fn repeat(n: u32, answers: &[Option<u32>]) -> Repeat {
        Repeat {
            conversation_id: i64::from(n),
            repeat: n,
            outcome: ConversationOutcome::Completed,
            turns: answers
                .iter()
                .enumerate()
                .map(|(i, &answer)| RepeatTurn {
                    prompt: i as u32,
                    answer,
                    outcome: if answer.is_some() {
                        TurnOutcome::Ok
                    } else {
                        TurnOutcome::EmptyAnswer
                    },
                    has_answer: answer.is_some(),
                })
                .collect(),
            verdicts: Vec::new(),
            checks: None,
        }
    }

    fn group(provider: &str, scenario: &str, members: Vec<Repeat>) -> RepeatGroup {
        RepeatGroup {
            provider: provider.into(),
            label: "m".into(),
            simulated: false,
            scenario: scenario.into(),
            members,
        }
    }

    #[test]
    fn a_later_turn_counts_only_while_every_earlier_answer_was_identical() {
        // Repeats 1–3 agree everywhere; 4 differs at turn 2, 5 at turn 1; 4 and 5 then say
        // the same at turn 3 (not a pair: their requests differed).
        let a = Some(0);
        let g = group(
            "p",
            "s",
            vec![
                repeat(1, &[a, Some(1), Some(2)]),
                repeat(2, &[a, Some(1), Some(2)]),
                repeat(3, &[a, Some(1), Some(2)]),
                repeat(4, &[a, Some(7), Some(9)]),
                repeat(5, &[Some(8), Some(1), Some(9)]),
            ],
        );
        let c = &section(vec![g])[0];
        // Turn 1: C(5,2) = 10 pairs; identical: the 6 among 1–4.
        // Turn 2: pairs among 1–4 (6); identical: the 3 among 1–3.
        // Turn 3: pairs among 1–3 (3), all identical.
        let by_turn: Vec<(u32, u64, u64)> = c
            .turns
            .iter()
            .map(|t| (t.turn, t.answers.pairs, t.answers.matching))
            .collect();
        assert_eq!(by_turn, [(1, 10, 6), (2, 6, 3), (3, 3, 3)]);
        assert_eq!((c.answers.pairs, c.answers.matching), (19, 12));
        assert_eq!(c.answers.share, Some(12.0 / 19.0));
        // One scenario: no clustered interval, never a made-up one.
        assert_eq!((c.answers.scenarios, c.answers.interval), (1, None));
    }

    /// Every pair visited, as the definition reads: (turn, answer pairs, identical, verdict
    /// pairs, agreeing).
    fn brute_force(g: &RepeatGroup) -> BTreeMap<u32, (u64, u64, u64, u64)> {
        let mut out: BTreeMap<u32, (u64, u64, u64, u64)> = BTreeMap::new();
        for (i, a) in g.members.iter().enumerate() {
            for b in &g.members[i + 1..] {
                for (idx, (x, y)) in a.turns.iter().zip(&b.turns).enumerate() {
                    let same_request = (0..=idx).all(|u| a.turns[u].prompt == b.turns[u].prompt)
                        && (0..idx).all(|u| {
                            answered(&a.turns[u]).is_some()
                                && answered(&a.turns[u]) == answered(&b.turns[u])
                        });
                    let (Some(p), Some(q)) = (answered(x), answered(y)) else {
                        continue;
                    };
                    if !same_request {
                        continue;
                    }
                    let turn = idx as u32 + 1;
                    let e = out.entry(turn).or_default();
                    e.0 += 1;
                    e.1 += u64::from(p == q);
                    for &(t, d, pa) in a.verdicts.iter().filter(|v| v.0 == turn) {
                        if let Some(&(_, _, pb)) = b.verdicts.iter().find(|v| v.0 == t && v.1 == d)
                        {
                            e.2 += 1;
                            e.3 += u64::from(pa == pb);
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn class_counting_matches_visiting_every_pair() {
        // Seeded groups of 2–9 repeats over 4 turns, few distinct prompts and answers (so
        // classes split and merge), some unanswered turns, verdicts from two checks.
        // SplitMix64 (a seeded test stream; any fixed sequence will do).
        let mut state: u64 = 7;
        let mut next = move || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for round in 0..200 {
            let m = 2 + (next() % 8) as u32;
            let members: Vec<Repeat> = (1..=m)
                .map(|n| {
                    let len = 1 + (next() % 4) as usize;
                    let answers: Vec<Option<u32>> = (0..len)
                        .map(|_| {
                            let a = (next() % 3) as u32;
                            (next() % 10 != 0).then_some(a)
                        })
                        .collect();
                    let mut r = repeat(n, &answers);
                    for t in &mut r.turns {
                        t.prompt += u32::from(next() % 12 == 0);
                    }
                    for turn in 1..=len as u32 {
                        for def in [1, 2] {
                            if next() % 4 != 0 {
                                r.verdicts.push((turn, def, next() % 3 != 0));
                            }
                        }
                    }
                    r
                })
                .collect();
            let g = group("p", "s", members);
            let expected = brute_force(&g);
            let got: BTreeMap<u32, (u64, u64, u64, u64)> = section(vec![g.clone()])
                .first()
                .map(|c| {
                    c.turns
                        .iter()
                        .map(|t| {
                            (
                                t.turn,
                                (
                                    t.answers.pairs,
                                    t.answers.matching,
                                    t.verdicts.pairs,
                                    t.verdicts.matching,
                                ),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let expected: BTreeMap<u32, (u64, u64, u64, u64)> = expected
                .into_iter()
                .filter(|(_, c)| c.0 > 0 || c.2 > 0)
                .collect();
            assert_eq!(got, expected, "round {round}: {g:#?}");
        }
    }

    #[test]
    fn a_differing_prompt_or_a_failed_turn_ends_the_comparison() {
        let mut other = repeat(2, &[Some(0), Some(1)]);
        other.turns[1].prompt = 9;
        let g = group("p", "s", vec![repeat(1, &[Some(0), Some(1)]), other]);
        let c = &section(vec![g])[0];
        assert_eq!((c.answers.pairs, c.answers.matching), (1, 1));
        // A turn without an answer is no pair, and nothing after it is either.
        let g = group(
            "p",
            "s",
            vec![repeat(1, &[None, Some(1)]), repeat(2, &[None, Some(1)])],
        );
        let c = &section(vec![g])[0];
        assert_eq!(c.answers.pairs, 0);
        assert_eq!((c.answers.share, c.answers.interval), (None, None));
    }

    #[test]
    fn groups_counted_side_by_side_give_the_counts_of_one_after_another() {
        // Groups of two providers and three scenarios, each provider's groups spread over
        // the list, with differing answers, failed turns and verdicts.
        let mut groups = Vec::new();
        for k in 0..24u32 {
            let provider = if k % 3 == 0 { "q" } else { "p" };
            let scenario = ["s", "t", "u"][(k % 3) as usize];
            let members: Vec<Repeat> = (1..=(2 + k % 4))
                .map(|n| {
                    let answers: Vec<Option<u32>> = (0..3)
                        .map(|t| ((n + k + t) % 5 != 0).then_some((n * t + k) % 3))
                        .collect();
                    let mut r = repeat(n, &answers);
                    r.verdicts = (1..=3).map(|t| (t, 10, (n + t + k) % 2 == 0)).collect();
                    r
                })
                .collect();
            groups.push(group(provider, scenario, members));
        }
        let mut one_by_one = Tallies::default();
        for g in &groups {
            one_by_one.add(g);
        }
        let expected = one_by_one.section();
        assert_eq!(expected.len(), 2);
        assert!(expected.iter().all(|c| c.answers.pairs > 0));
        assert_eq!(Tallies::of(groups).section(), expected);
    }

    #[test]
    fn verdicts_pair_by_check_and_turn() {
        let mut r = [
            repeat(1, &[Some(0), Some(1)]),
            repeat(2, &[Some(0), Some(1)]),
            repeat(3, &[Some(0), Some(2)]),
        ];
        r[0].verdicts = vec![(1, 10, true), (2, 10, true), (2, 11, true)];
        r[1].verdicts = vec![(1, 10, true), (2, 10, true), (2, 11, false)];
        r[2].verdicts = vec![(1, 10, false), (2, 10, true)];
        let c = &section(vec![group("p", "s", r.to_vec())])[0];
        // Turn 1: pairs 12 agree, 13 and 23 disagree. Turn 2 (every turn-1 answer was the
        // same, so all three pairs were sent one request): check 10 agrees in 12, 13, 23;
        // check 11 is a pair only in 12 (3 has no verdict), disagreeing.
        let by_turn: Vec<(u32, u64, u64)> = c
            .turns
            .iter()
            .map(|t| (t.turn, t.verdicts.pairs, t.verdicts.matching))
            .collect();
        assert_eq!(by_turn, [(1, 3, 1), (2, 4, 3)]);
        assert_eq!((c.verdicts.pairs, c.verdicts.matching), (7, 4));
    }

    #[test]
    fn intervals_cluster_by_scenario() {
        // Scenario s: 3 repeats all identical at turn 1 (3 of 3 pairs); t: 2 repeats that
        // differ (0 of 1). Clusters (3, 3) and (0, 1): p = 3/4, residuals 0.75, −0.75,
        // v = 2 · 1.125 / 16 = 0.140625, p(1 − p)/N = 0.046875, design effect 3, effective
        // n 4/3; Wilson of 1 out of 4/3 (score formula in Python: 0.14772…, 0.98110…).
        let g1 = group("p", "s", (1..=3).map(|n| repeat(n, &[Some(0)])).collect());
        let g2 = group("p", "t", vec![repeat(1, &[Some(0)]), repeat(2, &[Some(1)])]);
        let c = &section(vec![g1, g2])[0];
        assert_eq!((c.answers.pairs, c.answers.matching), (4, 3));
        assert_eq!(c.answers.scenarios, 2);
        assert_eq!(c.scenarios, 2);
        let i = c.answers.interval.unwrap();
        let expected = (0.14772460726817466, 0.9811050436285886);
        assert!(
            (i.lo - expected.0).abs() < 1e-12 && (i.hi - expected.1).abs() < 1e-12,
            "{i:?}"
        );
    }

    #[test]
    fn spread_is_p90_and_p90_minus_p10_of_task_success_with_five_repeats() {
        let scored = |n: u32, passed: u32| {
            let mut r = repeat(n, &[Some(0)]);
            r.checks = Some((passed, 2));
            r
        };
        // Scores 1, 1, 1, 0.5 and a failed conversation (0): sorted 0, 0.5, 1, 1, 1.
        // Linear interpolation (NumPy's rule) by hand: P10 at rank h = 4 · 0.1 = 0.4, between
        // 0 and 0.5: 0.2; P90 at h = 3.6, between 1 and 1: 1.
        let mut failed = repeat(5, &[None]);
        failed.outcome = ConversationOutcome::Failed(TurnOutcome::Timeout);
        let five = vec![
            scored(1, 2),
            scored(2, 2),
            scored(3, 2),
            scored(4, 1),
            failed,
        ];
        // Four repeats: too few for a spread.
        let four: Vec<Repeat> = (1..=4).map(|n| scored(n, 2)).collect();
        // Five more, all perfect: P90 1, P10 1.
        let perfect: Vec<Repeat> = (1..=5).map(|n| scored(n, 2)).collect();
        let c = &section(vec![
            group("p", "a", five),
            group("p", "b", four),
            group("p", "c", perfect),
        ])[0];
        let s = &c.spread;
        assert_eq!((s.scenarios, s.repeats), (2, 10));
        let a = &s.by_scenario[0];
        assert_eq!(a.scenario, "a");
        assert!((a.p10 - 0.2).abs() < 1e-12 && (a.p90 - 1.0).abs() < 1e-12);
        // Means over the two scenarios: aptitude (1 + 1)/2, unreliability (0.8 + 0)/2.
        assert!((s.aptitude.unwrap() - 1.0).abs() < 1e-12);
        assert!((s.unreliability.unwrap() - 0.4).abs() < 1e-12);
        // Without a scenario of five: null, never 0.
        let c = &section(vec![group(
            "p",
            "b",
            (1..=4).map(|n| scored(n, 2)).collect(),
        )])[0];
        assert_eq!((c.spread.aptitude, c.spread.unreliability), (None, None));
        let json = serde_json::to_value(c).unwrap();
        assert_eq!(json["spread"]["aptitude"], serde_json::Value::Null);
    }
}
