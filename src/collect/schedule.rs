//! The order conversations are launched in and the simulated user pauses: pure functions
//! of the run's settings and seed, so every target meets the same conditions.

use crate::draw::Draw;

/// One conversation to run: indexes into the run's targets and scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Job {
    pub target: usize,
    pub scenario: usize,
    pub repeat: u32,
}

/// Jobs per target queue, each ordered by (repeat, scenario): the launcher takes from the
/// queues in rotation, so no target runs ahead or always goes first.
pub fn queues(targets: usize, scenarios: usize, repeats: u32) -> Vec<Vec<Job>> {
    (0..targets)
        .map(|target| {
            (1..=repeats)
                .flat_map(|repeat| {
                    (0..scenarios).map(move |scenario| Job {
                        target,
                        scenario,
                        repeat,
                    })
                })
                .collect()
        })
        .collect()
}

/// The pause before a turn, in ms: seeded by (run seed, scenario, repeat, turn) and not by
/// the target, so every target gets the same pause before the same turn.
pub fn pause_ms(
    seed: u64,
    scenario_id: &str,
    repeat: u32,
    turn: usize,
    range: Option<(u64, u64)>,
    scale: f64,
) -> f64 {
    let Some((lo, hi)) = range else { return 0.0 };
    let mut h = blake3::Hasher::new();
    h.update(&seed.to_le_bytes());
    h.update(scenario_id.as_bytes());
    h.update(&repeat.to_le_bytes());
    h.update(&(turn as u64).to_le_bytes());
    let mut draw = Draw::from_seed(*h.finalize().as_bytes());
    let span = hi.saturating_sub(lo).saturating_add(1);
    (lo + draw.below(span)) as f64 * scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_cover_every_slot_once() {
        let q = queues(3, 4, 2);
        assert_eq!(q.len(), 3);
        let mut all: Vec<_> = q.concat();
        assert_eq!(all.len(), 3 * 4 * 2);
        all.sort_by_key(|j| (j.target, j.scenario, j.repeat));
        all.dedup();
        assert_eq!(all.len(), 24);
        assert_eq!(
            q[1][0],
            Job {
                target: 1,
                scenario: 0,
                repeat: 1
            }
        );
        assert_eq!(
            q[1][4],
            Job {
                target: 1,
                scenario: 0,
                repeat: 2
            }
        );
    }

    #[test]
    fn pauses_are_seeded_and_in_range() {
        let a = pause_ms(7, "s", 1, 2, Some((100, 200)), 1.0);
        assert_eq!(a, pause_ms(7, "s", 1, 2, Some((100, 200)), 1.0));
        assert!((100.0..=200.0).contains(&a));
        assert_eq!(pause_ms(7, "s", 1, 2, Some((100, 200)), 0.5), a * 0.5);
        assert_eq!(pause_ms(7, "s", 1, 2, None, 1.0), 0.0);
        let differs = (0..20).any(|r| pause_ms(7, "s", r, 2, Some((0, 1000)), 1.0) != a);
        assert!(differs);
    }

    /// The pauses a run with seed 7 gives: pinned, so that a dependency upgrade cannot
    /// change them (a run compared with a baseline months later gets the same pauses).
    #[test]
    fn pauses_are_pinned() {
        let pauses: Vec<f64> = (1..=4)
            .map(|turn| {
                pause_ms(
                    7,
                    "dev-cursor-pagination",
                    1,
                    turn,
                    Some((2_000, 9_000)),
                    1.0,
                )
            })
            .collect();
        assert_eq!(pauses, [8088.0, 8044.0, 3699.0, 6731.0]);
    }
}
