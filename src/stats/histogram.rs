//! Percentiles of samples too many to keep: a cell's inter-token gaps, one per SSE event,
//! are counted into an HdrHistogram (the `hdrhistogram` crate) of 3 significant digits, so
//! memory follows the range of the values, not their number. A value is held as the middle
//! of its bucket (within 0.05 % of itself; exactly below 2,048); the percentiles follow the
//! rule of [`super::percentiles`] (NumPy's linear interpolation) over the values so held.

/// Counts of non-negative integers (a gap in microseconds), mergeable.
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: hdrhistogram::Histogram<u64>,
}

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram::new()
    }
}

impl Histogram {
    /// An empty histogram that grows its range as values arrive.
    pub fn new() -> Histogram {
        // The crate refuses only a precision outside 0..=5 digits.
        let counts = hdrhistogram::Histogram::new(3)
            .unwrap_or_else(|e| unreachable!("3 significant digits refused: {e}"));
        Histogram { counts }
    }

    /// Counts `value` once.
    pub fn record(&mut self, value: u64) {
        // The range grows to hold it; past what the crate can grow to (2⁶² or so, far
        // beyond any gap in µs) it is counted as the highest value held.
        if self.counts.record(value).is_err() {
            self.counts.saturating_record(value);
        }
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Histogram) {
        // Both grow on demand: the crate refuses an addition only to a fixed range.
        let added = self.counts.add(&other.counts);
        debug_assert!(added.is_ok(), "{added:?}");
    }

    /// How many values were counted.
    pub fn len(&self) -> u64 {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The percentiles `qs` (each in [0, 100]) of the values counted, as
    /// [`super::percentiles`] computes them over the values as held. `None` when nothing was
    /// counted or a q is outside [0, 100].
    pub fn percentiles(&self, qs: &[f64]) -> Option<Vec<f64>> {
        let n = usize::try_from(self.len()).ok().filter(|&n| n > 0)?;
        if !qs.iter().all(|&q| super::valid_q(q)) {
            return None;
        }
        Some(
            qs.iter()
                .map(|&q| {
                    let (lower, upper, t) = super::rank_position(n, q / 100.0);
                    super::lerp(self.at_rank(lower), self.at_rank(upper), t)
                })
                .collect(),
        )
    }

    /// The value of 0-based rank `rank` among the values counted, in ascending order.
    fn at_rank(&self, rank: usize) -> f64 {
        let mut below = 0u64;
        for v in self.counts.iter_recorded() {
            below += v.count_at_value();
            if below > rank as u64 {
                return self.counts.median_equivalent(v.value_iterated_to()) as f64;
            }
        }
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(values: &[u64]) -> Histogram {
        let mut h = Histogram::new();
        for &v in values {
            h.record(v);
        }
        h
    }

    #[test]
    fn small_values_are_exact_and_follow_numpys_rule() {
        // numpy.percentile([5, 5, 45, 5, 5, 45, 7], [0, 50, 95, 100]) = [5, 5, 45, 45];
        // numpy.percentile([1, 2, 3, 4], [10, 50, 90]) = [1.3, 2.5, 3.7].
        let h = of(&[5, 5, 45, 5, 5, 45, 7]);
        assert_eq!(
            h.percentiles(&[0.0, 50.0, 95.0, 100.0]).unwrap(),
            [5.0, 5.0, 45.0, 45.0]
        );
        let h = of(&[4, 3, 2, 1]);
        let got = h.percentiles(&[10.0, 50.0, 90.0]).unwrap();
        for (g, want) in got.iter().zip([1.3, 2.5, 3.7]) {
            assert!((g - want).abs() < 1e-12, "{got:?}");
        }
        assert_eq!(h.len(), 4);
    }

    #[test]
    fn large_values_are_held_within_half_a_thousandth() {
        // Gaps in µs from 1 ms to over a day: every percentile within 0.05 % of the exact one.
        let values: Vec<u64> = (0..5000u64).map(|i| 1000 + i * i * 4000 + i * 7).collect();
        let h = of(&values);
        let exact: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        let qs = [0.0, 1.0, 50.0, 95.0, 99.0, 99.9, 100.0];
        let want = crate::stats::percentiles(&exact, &qs).unwrap();
        for (g, w) in h.percentiles(&qs).unwrap().iter().zip(&want) {
            assert!((g / w - 1.0).abs() <= 5e-4, "{g} vs {w}");
        }
    }

    #[test]
    fn merged_counts_equal_one_histogram_of_all() {
        let (a, b) = (
            (0..300).map(|i| i * 97).collect::<Vec<u64>>(),
            vec![3, 200_000, 17],
        );
        let mut merged = of(&a);
        merged.add(&of(&b));
        merged.add(&Histogram::new());
        let all = of(&[a, b].concat());
        let qs = [5.0, 50.0, 99.0];
        assert_eq!(merged.percentiles(&qs), all.percentiles(&qs));
        assert_eq!(merged.len(), 303);
    }

    #[test]
    fn nothing_counted_or_a_bad_q_gives_none() {
        assert_eq!(Histogram::new().percentiles(&[50.0]), None);
        assert!(Histogram::new().is_empty());
        assert_eq!(of(&[1]).percentiles(&[101.0]), None);
        assert_eq!(of(&[1]).percentiles(&[-1.0]), None);
        assert_eq!(of(&[9]).percentiles(&[50.0]), Some(vec![9.0]));
    }
}
