//! What every target meets the same way in a replay: the pause and the idle break before
//! each turn, and the salt of each pass. Pure functions of the run's seed and identity and
//! the session (never of the target), so the same turn of the same pass waits the same
//! and sends the same bytes to every target.

use crate::config::Breaks;
use crate::draw::Draw;

fn rng(parts: &[&[u8]]) -> Draw {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
    }
    Draw::from_seed(*h.finalize().as_bytes())
}

/// The seeded idle break before turn `turn` (0-based) of a pass, in ms (not scaled); 0
/// for the first turn and for turns the draw skips.
pub fn break_ms(seed: u64, session: &str, round: u32, turn: usize, breaks: &Breaks) -> f64 {
    if turn == 0 || breaks.share <= 0.0 {
        return 0.0;
    }
    let mut r = rng(&[
        b"break",
        &seed.to_le_bytes(),
        session.as_bytes(),
        &round.to_le_bytes(),
        &(turn as u64).to_le_bytes(),
    ]);
    if !r.chance(breaks.share) {
        return 0.0;
    }
    let s = if breaks.max_s > breaks.min_s {
        r.float(breaks.min_s, breaks.max_s)
    } else {
        breaks.min_s
    };
    s * 1000.0
}

/// The recorded pause before a turn, capped (ms, not scaled); 0 when none was recorded.
pub fn capped_pause_ms(recorded_ms: Option<f64>, cap_s: f64) -> f64 {
    recorded_ms.unwrap_or(0.0).clamp(0.0, cap_s * 1000.0)
}

/// The pass's salt: eight hex digits from (seed, run, session, round), new for every run
/// and round, the same for every target.
pub fn salt(seed: u64, run_id: i64, session: &str, round: u32) -> String {
    let mut r = rng(&[
        b"salt",
        &seed.to_le_bytes(),
        &run_id.to_le_bytes(),
        session.as_bytes(),
        &round.to_le_bytes(),
    ]);
    format!("{:08x}", r.u64() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breaks_follow_the_share_and_range_and_never_come_first() {
        let b = Breaks {
            share: 0.2,
            min_s: 60.0,
            max_s: 1200.0,
        };
        let n = 5000;
        let drawn: Vec<f64> = (1..=n).map(|t| break_ms(7, "s", 1, t, &b)).collect();
        let taken: Vec<f64> = drawn.iter().copied().filter(|&ms| ms > 0.0).collect();
        let share = taken.len() as f64 / n as f64;
        assert!((0.18..0.22).contains(&share), "{share}");
        assert!(
            taken
                .iter()
                .all(|&ms| (60_000.0..=1_200_000.0).contains(&ms))
        );
        assert_eq!(break_ms(7, "s", 1, 0, &b), 0.0);
        assert_eq!(break_ms(7, "s", 1, 3, &Breaks::NONE), 0.0);
        // The same seed, session, round and turn: the same break (no target in the key).
        assert_eq!(break_ms(7, "s", 1, 9, &b), drawn[8]);
        assert!((1..200).any(|t| break_ms(7, "s", 2, t, &b) != break_ms(7, "s", 1, t, &b)));
    }

    #[test]
    fn pauses_are_capped_and_salts_differ_per_run_and_round() {
        assert_eq!(capped_pause_ms(Some(90_000.0), 60.0), 60_000.0);
        assert_eq!(capped_pause_ms(Some(1_500.0), 60.0), 1_500.0);
        assert_eq!(capped_pause_ms(None, 60.0), 0.0);
        let s = salt(1, 1, "a", 1);
        assert_eq!(s.len(), 8);
        assert_eq!(s, salt(1, 1, "a", 1));
        assert_ne!(s, salt(1, 2, "a", 1));
        assert_ne!(s, salt(1, 1, "a", 2));
        assert_ne!(s, salt(1, 1, "b", 1));
    }
}
