//! CONSTRAINTS ACROSS TURNS: at which turn a provider lets a requirement go and whether it
//! comes back, per provider × model label × check tag, from the checks' turn verdicts
//! (`current_check_turn_results`, read by `load`, which tallies them here; `build` names the entries).
//!
//! A unit is one (conversation, check) pair; its verdicts at the turns its check scopes
//! (`from_turn = N`: every answered turn from N on; `turn = N`: that one; unscoped: the
//! final answer). Each check has exactly one tag (`check_definitions.tag` is required), so a
//! pair counts under its check's tag and nowhere else. Per tag:
//!
//! - per turn t: `scored` pairs with a verdict at t, `held` those that passed, the rate and
//!   its 95 % Wilson interval;
//! - survival at t: `at_risk` = pairs scored at t, `still_held` = those that passed at every
//!   scored turn up to and including t;
//! - forgetting: over consecutive scored turns (t, t′) of one pair, lost at t′ ÷ held at t;
//! - recovery: regained at t′ ÷ failing at t.
//!
//! A ratio with denominator 0 is `None` with no interval (never 0). Definitions are in
//! `docs/metrics.md`; the figures are computed here, in pure functions.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::stats::{self, Interval};

/// One provider × model label × check tag.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConstraintSurvival {
    /// The model label.
    pub label: String,
    pub provider: String,
    pub tag: String,
    /// Whether the cell's figures are simulated (the cell says so in the JSON; the tables
    /// mark the row).
    #[serde(skip)]
    pub simulated: bool,
    /// The turns with a verdict, ascending.
    pub turns: Vec<TurnRate>,
    pub forgetting: Forgetting,
    pub recovery: Recovery,
    /// Same turns as `turns`.
    pub survival: Vec<SurvivalPoint>,
}

/// The pass rate of the pairs scored at one turn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TurnRate {
    /// The scenario turn, 1-based.
    pub turn: u32,
    pub scored: u64,
    pub held: u64,
    pub rate: Option<f64>,
    #[serde(serialize_with = "Interval::pair")]
    pub interval: Option<Interval>,
}

/// Pairs that held at a scored turn and failed at their next scored turn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Forgetting {
    pub at_risk: u64,
    pub lost: u64,
    pub ratio: Option<f64>,
    #[serde(serialize_with = "Interval::pair")]
    pub interval: Option<Interval>,
}

/// Pairs that failed at a scored turn and passed at their next scored turn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Recovery {
    pub failing: u64,
    pub recovered: u64,
    pub ratio: Option<f64>,
    #[serde(serialize_with = "Interval::pair")]
    pub interval: Option<Interval>,
}

/// The pairs scored at a turn and those that held at every scored turn up to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SurvivalPoint {
    pub turn: u32,
    pub at_risk: u64,
    pub still_held: u64,
}

/// `k / n` with its 95 % Wilson interval; both `None` when `n == 0`.
fn ratio(k: u64, n: u64) -> (Option<f64>, Option<Interval>) {
    ((n > 0).then(|| k as f64 / n as f64), stats::wilson(k, n))
}

/// The pairs counted at one turn. The pairs at risk for survival are the pairs scored.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct TurnCounts {
    scored: u64,
    held: u64,
    /// Passed at every scored turn up to and including this one.
    still_held: u64,
}

/// The tallies of one provider × label × tag.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Tally {
    by_turn: BTreeMap<u32, TurnCounts>,
    held_before: u64,
    lost: u64,
    failing_before: u64,
    recovered: u64,
}

impl Tally {
    /// Adds one (conversation, check) pair: its verdicts `(turn, passed)`, in turn order
    /// (sorted here when they are not).
    pub(super) fn add_pair(&mut self, verdicts: &mut [(u32, bool)]) {
        if !verdicts.is_sorted_by_key(|&(t, _)| t) {
            verdicts.sort_unstable_by_key(|&(t, _)| t);
        }
        let mut held_so_far = true;
        let mut previous: Option<bool> = None;
        for &(turn, passed) in verdicts.iter() {
            held_so_far &= passed;
            let t = self.by_turn.entry(turn).or_default();
            t.scored += 1;
            t.held += u64::from(passed);
            t.still_held += u64::from(held_so_far);
            match previous {
                Some(true) => {
                    self.held_before += 1;
                    self.lost += u64::from(!passed);
                }
                Some(false) => {
                    self.failing_before += 1;
                    self.recovered += u64::from(passed);
                }
                None => {}
            }
            previous = Some(passed);
        }
    }

    /// Adds another tally of the same cell × tag (pairs read apart).
    pub(super) fn merge(&mut self, other: &Tally) {
        for (&turn, c) in &other.by_turn {
            let t = self.by_turn.entry(turn).or_default();
            t.scored += c.scored;
            t.held += c.held;
            t.still_held += c.still_held;
        }
        self.held_before += other.held_before;
        self.lost += other.lost;
        self.failing_before += other.failing_before;
        self.recovered += other.recovered;
    }

    pub(super) fn turns(&self) -> Vec<TurnRate> {
        self.by_turn
            .iter()
            .map(|(&turn, &TurnCounts { scored, held, .. })| {
                let (rate, interval) = ratio(held, scored);
                TurnRate {
                    turn,
                    scored,
                    held,
                    rate,
                    interval,
                }
            })
            .collect()
    }

    pub(super) fn forgetting(&self) -> Forgetting {
        let (ratio, interval) = ratio(self.lost, self.held_before);
        Forgetting {
            at_risk: self.held_before,
            lost: self.lost,
            ratio,
            interval,
        }
    }

    pub(super) fn recovery(&self) -> Recovery {
        let (ratio, interval) = ratio(self.recovered, self.failing_before);
        Recovery {
            failing: self.failing_before,
            recovered: self.recovered,
            ratio,
            interval,
        }
    }

    pub(super) fn survival(&self) -> Vec<SurvivalPoint> {
        self.by_turn
            .iter()
            .map(|(&turn, c)| SurvivalPoint {
                turn,
                at_risk: c.scored,
                still_held: c.still_held,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(pairs: &[&[(u32, bool)]]) -> Tally {
        let mut t = Tally::default();
        for p in pairs {
            t.add_pair(&mut p.to_vec());
        }
        t
    }

    const H: bool = true;
    const F: bool = false;

    #[test]
    fn counts_match_a_hand_count() {
        // Four pairs over turns 2..4 of a `from_turn = 2` check:
        //   a: held, held, held      b: held, lost, lost
        //   c: held, lost, regained  d: failed at 2, regained at 3, held at 4
        let t = tally(&[
            &[(2, H), (3, H), (4, H)],
            &[(2, H), (3, F), (4, F)],
            &[(2, H), (3, F), (4, H)],
            &[(2, F), (3, H), (4, H)],
        ]);
        let turns = t.turns();
        let counts: Vec<(u32, u64, u64)> =
            turns.iter().map(|r| (r.turn, r.scored, r.held)).collect();
        assert_eq!(counts, [(2, 4, 3), (3, 4, 2), (4, 4, 3)]);
        assert_eq!(turns[0].rate, Some(0.75));
        let survival: Vec<(u32, u64, u64)> = t
            .survival()
            .iter()
            .map(|s| (s.turn, s.at_risk, s.still_held))
            .collect();
        // Still held: a, b, c at 2; a at 3 and 4 (d failed at 2, never "still").
        assert_eq!(survival, [(2, 4, 3), (3, 4, 1), (4, 4, 1)]);
        // Transitions 2→3: a H→H, b H→F, c H→F, d F→H; 3→4: a H→H, b F→F, c F→H, d H→H.
        // Held before: a, b, c, a, d = 5, lost 2. Failing before: d, b, c = 3, recovered 2.
        let f = t.forgetting();
        assert_eq!((f.at_risk, f.lost), (5, 2));
        assert_eq!(f.ratio, Some(0.4));
        let r = t.recovery();
        assert_eq!((r.failing, r.recovered), (3, 2));
        assert_eq!(r.ratio, Some(2.0 / 3.0));
    }

    #[test]
    fn a_ratio_without_a_denominator_is_null_never_zero() {
        // Single-turn checks (unscoped, `turn = N`) have no consecutive turns.
        let t = tally(&[&[(5, H)], &[(5, F)]]);
        let f = t.forgetting();
        assert_eq!((f.at_risk, f.lost, f.ratio, f.interval), (0, 0, None, None));
        let r = t.recovery();
        assert_eq!(
            (r.failing, r.recovered, r.ratio, r.interval),
            (0, 0, None, None)
        );
        let json = serde_json::to_value(f).unwrap();
        assert_eq!(json["ratio"], serde_json::Value::Null);
        assert_eq!(json["interval"], serde_json::Value::Null);
        // Everything held: nothing to recover, forgetting 0 of 2 with an interval.
        let t = tally(&[&[(1, H), (2, H), (3, H)]]);
        assert_eq!(t.forgetting().ratio, Some(0.0));
        assert_eq!(t.recovery().ratio, None);
    }

    #[test]
    fn intervals_contain_the_rate_and_have_width_when_it_is_not_certain() {
        let t = tally(&[
            &[(1, H), (2, H)],
            &[(1, H), (2, F)],
            &[(1, H), (2, F)],
            &[(1, F), (2, H)],
        ]);
        let mut rates: Vec<(Option<f64>, Option<Interval>, u64, u64)> = t
            .turns()
            .iter()
            .map(|r| (r.rate, r.interval, r.held, r.scored))
            .collect();
        let f = t.forgetting();
        rates.push((f.ratio, f.interval, f.lost, f.at_risk));
        let r = t.recovery();
        rates.push((r.ratio, r.interval, r.recovered, r.failing));
        for (rate, interval, k, n) in rates {
            let (rate, i) = (rate.unwrap(), interval.unwrap());
            assert!(i.contains(rate), "{rate} in {i:?}");
            if 0 < k && k < n {
                assert!(i.lo < rate && rate < i.hi, "{k}/{n}: {i:?}");
            }
        }
        let json = serde_json::to_value(t.turns()[0]).unwrap();
        assert_eq!(json["interval"].as_array().map(Vec::len), Some(2), "{json}");
    }

    #[test]
    fn tallies_read_apart_merge_into_the_tally_read_together() {
        let pairs: [&[(u32, bool)]; 4] = [
            &[(2, H), (3, F), (4, H)],
            &[(2, F), (3, F)],
            &[(5, H)],
            &[(2, H), (3, H), (4, F)],
        ];
        let mut apart = tally(&pairs[..2]);
        apart.merge(&tally(&pairs[2..]));
        assert_eq!(apart, tally(&pairs));
        // Verdicts out of turn order are put in order first.
        assert_eq!(
            tally(&[&[(4, H), (2, H), (3, F)]]),
            tally(&[&[(2, H), (3, F), (4, H)]])
        );
    }

    #[test]
    fn gaps_between_scored_turns_are_consecutive() {
        // A pair scored at turns 2 and 5 only (the answers between were not answered):
        // (2, 5) is one transition.
        let t = tally(&[&[(2, H), (5, F)]]);
        assert_eq!((t.forgetting().at_risk, t.forgetting().lost), (1, 1));
        assert_eq!(
            t.survival()
                .iter()
                .map(|s| s.still_held)
                .collect::<Vec<_>>(),
            [1, 0]
        );
    }
}
