//! Seeded draws that stay the same across dependency upgrades: the simulated user's pauses
//! (collect), replay's idle breaks and every seeded choice of the mock come from here, so a
//! run compared with a baseline months later received the same pauses and the same mock.
//!
//! The generator is `rand_chacha::ChaCha8Rng`, used directly: its output for a seed is
//! documented as value-stable (a change is a breaking release of that crate), unlike
//! `rand::rngs::StdRng`, whose algorithm rand may change in any release. The ranges are
//! drawn by our own rules, not `random_range` (whose sampling rand may also change):
//! - [`Draw::unit`]: the top 53 bits of one `u64`, times 2⁻⁵³, a float in [0, 1);
//! - [`Draw::below`]: one `u64` taken modulo `n`, redrawn while it falls in the incomplete
//!   last block (at or above the largest multiple of `n`), so every value is equally likely;
//! - the other ranges are those two, shifted and scaled.
//!
//! `tests` pins drawn values: if they ever change, seeded schedules changed with them.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A seeded stream of draws.
#[derive(Debug, Clone)]
pub struct Draw(ChaCha8Rng);

impl Draw {
    pub fn from_seed(seed: [u8; 32]) -> Draw {
        Draw(ChaCha8Rng::from_seed(seed))
    }

    /// A float in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// An integer in `0..n`, uniformly; 0 when `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let limit = u64::MAX - u64::MAX % n; // the largest multiple of n that fits
        loop {
            let x = self.0.next_u64();
            if x < limit {
                return x % n;
            }
        }
    }

    /// An index into a slice of `len` elements (0 when empty).
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// An integer in `lo..=hi`, uniformly (`lo` when `hi < lo`).
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = hi.abs_diff(lo);
        if span == u64::MAX {
            return self.0.next_u64() as i64;
        }
        lo.wrapping_add(self.below(span + 1) as i64)
    }

    /// A float in [`lo`, `hi`) (`lo` when `hi <= lo`).
    pub fn float(&mut self, lo: f64, hi: f64) -> f64 {
        if hi <= lo {
            return lo;
        }
        lo + self.unit() * (hi - lo)
    }

    /// `true` with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A raw `u64`.
    pub fn u64(&mut self) -> u64 {
        self.0.next_u64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values a fixed seed draws. These pin the schedule: a dependency upgrade that
    /// changes them changes every seeded pause, break and mock choice.
    #[test]
    fn drawn_values_are_pinned() {
        let mut d = Draw::from_seed([7; 32]);
        let ints: Vec<i64> = (0..6).map(|_| d.int(1, 100)).collect();
        let units: Vec<f64> = (0..3).map(|_| d.unit()).collect();
        let raw = d.u64();
        assert_eq!(ints, PINNED_INTS, "{ints:?} {units:?} {raw}");
        assert_eq!(units, PINNED_UNITS, "{ints:?} {units:?} {raw}");
        assert_eq!(raw, PINNED_RAW);
    }

    const PINNED_INTS: [i64; 6] = [77, 91, 28, 74, 2, 67];
    const PINNED_UNITS: [f64; 3] = [0.6490601525528181, 0.587026901420714, 0.5853996501768381];
    const PINNED_RAW: u64 = 17_083_755_709_354_885_102;

    #[test]
    fn ranges_hold_their_bounds_and_reach_both_ends() {
        let mut d = Draw::from_seed([1; 32]);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let x = d.int(-2, 2);
            assert!((-2..=2).contains(&x), "{x}");
            seen[(x + 2) as usize] = true;
            let u = d.unit();
            assert!((0.0..1.0).contains(&u), "{u}");
            let f = d.float(0.5, 2.5);
            assert!((0.5..2.5).contains(&f), "{f}");
            assert!(d.index(3) < 3);
        }
        assert_eq!(seen, [true; 5]);
        assert_eq!(d.int(5, 5), 5);
        assert_eq!(d.int(5, 1), 5);
        assert_eq!(d.index(0), 0);
        assert!(!d.chance(0.0));
        assert!(d.chance(1.0));
        let _ = d.int(i64::MIN, i64::MAX);
    }

    #[test]
    fn below_is_uniform_over_a_span_that_does_not_divide_2_64() {
        let mut d = Draw::from_seed([3; 32]);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            counts[d.below(3) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }
}
