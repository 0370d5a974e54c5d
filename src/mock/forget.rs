//! Forgetting across turns: a simulated provider that lets go of what it was told more
//! often the longer the conversation runs, and once it has let go, tends not to pick it up
//! again. The per-answer defects (`super::defect`) are drawn independently for every
//! answer, so they fall on early and late turns alike; this one does not.
//!
//! What forgetting looks like: the provider *slips back* to its first answer, answering a
//! later turn with the reference of the scenario's first turn, as if what was said since
//! had not been heard (the anchoring on an early answer that Laban et al., "LLMs Get Lost
//! in Multi-Turn Conversation", arXiv 2505.06120, describe). The details, corrections and
//! constraints stated after that turn are gone from the answer, so the checks that keep
//! them (`from_turn = N`) fail there.
//!
//! At user turn t (1-based; the first turn has nothing to slip back to):
//! - if the previous answer in the request's history had slipped back (it holds an earlier
//!   turn's reference and not its own turn's), the answer slips back again, to the same
//!   turn, with probability `persist`;
//! - otherwise it slips back with probability min(1, `per_turn` × (t − 1)), which grows
//!   with the turn, to the first turn (the first with a reference).
//!
//! When the turn's own reference is JSON (a final format) and the earlier one is not, the
//! slip keeps the format asked for and loses a detail instead: one top-level key of the
//! turn's reference is dropped (as `missing_field` does; `super::plan`).
//!
//! The mock keeps no state between requests: it reads the previous answer from the
//! history every request carries and draws from the request's key like every other defect,
//! so the same seed gives the same slips on the same requests. A stale answer (the
//! previous turn's reference) from turn 3 on reads as a slip too (to that earlier turn),
//! as it is one.

use serde::{Deserialize, Serialize};

use crate::chat::Message;

/// How a profile forgets across turns; both 0 (the default): never.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Forgetting {
    /// The chance of slipping back grows by this much per turn after the first:
    /// min(1, per_turn × (t − 1)) at user turn t, unless the previous answer slipped.
    pub per_turn: f64,
    /// The chance of slipping back again when the previous answer had slipped back.
    pub persist: f64,
}

impl Forgetting {
    /// `Err` naming the first rate that is not a probability.
    pub fn check(&self) -> Result<(), String> {
        for (name, p) in [("per_turn", self.per_turn), ("persist", self.persist)] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("forgetting.{name} {p} is not a probability"));
            }
        }
        Ok(())
    }

    /// The chance that the answer to turn `turn` (0-based) slips back, given whether the
    /// previous answer had.
    pub fn chance(&self, turn: usize, previous_slipped: bool) -> f64 {
        if turn == 0 {
            0.0
        } else if previous_slipped {
            self.persist
        } else {
            (self.per_turn * turn as f64).min(1.0)
        }
    }

    /// The earlier turn (0-based) whose reference the answer to turn `turn` slips back to,
    /// if it does, for a scenario whose references are `references`, given the request's
    /// `messages` and a draw `u` uniform in [0, 1). A fresh slip goes back to the first
    /// turn with a reference; a slip after a slip to the same turn as the one before.
    pub fn slip(
        &self,
        turn: usize,
        references: &[Option<String>],
        messages: &[Message],
        u: f64,
    ) -> Option<usize> {
        let first =
            (0..turn.min(references.len())).find(|&j| reference(references, j).is_some())?;
        let previous = previous_slip(turn, references, messages);
        (u < self.chance(turn, previous.is_some())).then(|| previous.unwrap_or(first))
    }
}

/// Turn `j`'s reference, trimmed, unless it is missing or empty.
fn reference(references: &[Option<String>], j: usize) -> Option<&str> {
    references
        .get(j)?
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty())
}

/// The earlier turn the last assistant answer in `messages` (that of turn `turn − 1`) had
/// slipped back to: the latest turn before it whose reference it holds, unless it holds
/// its own turn's reference. None after the first turn's answer, which has nothing to slip
/// back to.
fn previous_slip(
    turn: usize,
    references: &[Option<String>],
    messages: &[Message],
) -> Option<usize> {
    let own = turn.checked_sub(1)?;
    if own == 0 {
        return None;
    }
    let previous = messages.iter().rev().find(|m| m.role == "assistant")?;
    if reference(references, own).is_some_and(|r| previous.content.contains(r)) {
        return None;
    }
    (0..own)
        .rev()
        .find(|&j| reference(references, j).is_some_and(|r| previous.content.contains(r)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs() -> Vec<Option<String>> {
        [
            "Ticket opened.",
            "Noted, ZX-42.",
            "ZX-42 is P1.",
            "ZX-42: done",
        ]
        .iter()
        .map(|r| Some(r.to_string()))
        .collect()
    }

    /// A request for the turn after `answers` (0-based: `answers.len()`).
    fn request(answers: &[&str]) -> Vec<Message> {
        let mut m = vec![Message::new("user", "u0")];
        for (i, a) in answers.iter().enumerate() {
            m.push(Message::new("assistant", *a));
            m.push(Message::new("user", format!("u{}", i + 1)));
        }
        m
    }

    #[test]
    fn the_chance_grows_with_the_turn_and_persists_once_slipped() {
        let f = Forgetting {
            per_turn: 0.1,
            persist: 0.8,
        };
        assert_eq!(f.chance(0, false), 0.0);
        assert_eq!(f.chance(1, false), 0.1);
        assert!((f.chance(3, false) - 0.3).abs() < 1e-12);
        assert_eq!(f.chance(3, true), 0.8);
        let steep = Forgetting {
            per_turn: 0.4,
            persist: 0.0,
        };
        assert_eq!(steep.chance(4, false), 1.0);
    }

    #[test]
    fn a_slip_is_read_from_the_previous_answer_and_goes_back_to_the_same_turn() {
        let r = refs();
        // The answer to turn 3 (0-based 2) repeated turn 1's reference, inside prose.
        let slipped = request(&[
            "Ticket opened.",
            "Noted, ZX-42.",
            "Sure:\n\nTicket opened.\n\nBye.",
        ]);
        assert_eq!(previous_slip(3, &r, &slipped), Some(0));
        let kept = request(&["Ticket opened.", "Noted, ZX-42.", "ZX-42 is P1."]);
        assert_eq!(previous_slip(3, &r, &kept), None);
        // The answer to the first turn is the first reference, and no slip.
        assert_eq!(previous_slip(1, &r, &request(&["Ticket opened."])), None);
        let always = Forgetting {
            per_turn: 0.0,
            persist: 1.0,
        };
        assert_eq!(always.slip(3, &r, &slipped, 0.99), Some(0));
        // A stale answer at turn 3 (turn 2's reference again) slipped back to turn 2.
        let stale = request(&["Ticket opened.", "Noted, ZX-42.", "Noted, ZX-42."]);
        assert_eq!(always.slip(3, &r, &stale, 0.5), Some(1));
        // Not slipped before, and no chance of a fresh slip.
        assert_eq!(always.slip(3, &r, &kept, 0.0), None);
        // The first turn never slips.
        let certain = Forgetting {
            per_turn: 1.0,
            persist: 1.0,
        };
        assert_eq!(certain.slip(0, &r, &request(&[]), 0.0), None);
    }

    #[test]
    fn a_fresh_slip_goes_back_to_the_first_turn_with_a_reference() {
        let mut r = refs();
        let f = Forgetting {
            per_turn: 1.0,
            persist: 0.0,
        };
        let kept = request(&["Ticket opened.", "Noted, ZX-42.", "ZX-42 is P1."]);
        assert_eq!(f.slip(3, &r, &kept, 0.5), Some(0));
        r[0] = None;
        assert_eq!(f.slip(3, &r, &kept, 0.5), Some(1));
        // No earlier reference, nothing to slip back to.
        let none = vec![None, Some("b".to_string())];
        assert_eq!(f.slip(1, &none, &request(&["x"]), 0.0), None);
    }

    #[test]
    fn rates_outside_zero_to_one_are_refused() {
        assert!(Forgetting::default().check().is_ok());
        let bad = Forgetting {
            per_turn: 1.5,
            persist: 0.5,
        };
        assert!(bad.check().unwrap_err().contains("per_turn"));
    }
}
