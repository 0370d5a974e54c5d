//! Cohen's κ between two raters of the same units (a judge and the human labels): the
//! quadratic-weighted κ for scores on an ordinal scale, the plain κ for a yes/no decision,
//! and a bootstrap interval over units.
//!
//! Quadratic weights on an equally spaced scale: the disagreement of scores x and y is
//! (x − y)², so κ_w = 1 − O / E with O the mean of (x_k − y_k)² over the n pairs and E the
//! mean of (x_k − y_l)² over all n² pairings (the disagreement expected if the two raters
//! were independent with the same marginals). This is Cohen's (1968) weighted κ with
//! weights (i − j)², as `sklearn.metrics.cohen_kappa_score(x, y, weights="quadratic",
//! labels=scale)`: the scale's points are the labels, so a point nobody used still counts
//! as a step (without `labels=`, sklearn spaces only the values seen). The scale's ends do
//! not change κ_w (the weights' normalisation cancels), and the same formula takes a
//! judge's mean over replicates (a fractional score) as it is. On two values {0, 1} it is
//! the unweighted κ.

use super::{Bootstrap, Interval, Rng, bump, percentile_interval};

/// Quadratic-weighted κ of paired scores (rater A, rater B). `None` with fewer than 2
/// pairs, a value that is not finite, or when E is 0 (both raters gave one and the same
/// score to every unit: agreement is then perfect but κ is undefined, 0/0).
pub fn quadratic_weighted_kappa(pairs: &[(f64, f64)]) -> Option<f64> {
    let counts = vec![1u32; pairs.len()];
    if pairs.len() < 2 || pairs.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return None;
    }
    weighted_kappa_of(pairs, &counts)
}

/// κ_w of the pairs drawn `counts[k]` times each: O and E from running sums, O(n).
/// E = mean x² + mean y² − 2 · mean x · mean y over the drawn pairs.
fn weighted_kappa_of(pairs: &[(f64, f64)], counts: &[u32]) -> Option<f64> {
    let (mut n, mut sx, mut sy, mut sxx, mut syy, mut sd) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for (&(x, y), &c) in pairs.iter().zip(counts) {
        let c = f64::from(c);
        n += c;
        sx += c * x;
        sy += c * y;
        sxx += c * x * x;
        syy += c * y * y;
        sd += c * (x - y) * (x - y);
    }
    if n < 2.0 {
        return None;
    }
    let observed = sd / n;
    let expected = sxx / n + syy / n - 2.0 * (sx / n) * (sy / n);
    // E is a sum of squares in exact arithmetic; rounding can leave a tiny residue.
    (expected > 1e-12 * (1.0 + sxx / n + syy / n)).then(|| 1.0 - observed / expected)
}

/// Cohen's (1960) unweighted κ of paired yes/no decisions, (p_o − p_e)/(1 − p_e), as
/// `sklearn.metrics.cohen_kappa_score(a, b)`. `None` with fewer than 2 pairs or p_e = 1
/// (both raters said the same one thing every time).
pub fn cohen_kappa_binary(pairs: &[(bool, bool)]) -> Option<f64> {
    if pairs.len() < 2 {
        return None;
    }
    let n = pairs.len() as f64;
    let agree = pairs.iter().filter(|(a, b)| a == b).count() as f64;
    let a_yes = pairs.iter().filter(|(a, _)| *a).count() as f64 / n;
    let b_yes = pairs.iter().filter(|(_, b)| *b).count() as f64 / n;
    let p_o = agree / n;
    let p_e = a_yes * b_yes + (1.0 - a_yes) * (1.0 - b_yes);
    (p_e < 1.0).then(|| (p_o - p_e) / (1.0 - p_e))
}

/// A κ with what it rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KappaEstimate {
    pub kappa: f64,
    /// Units (conversations) both raters scored.
    pub n: usize,
    /// Percentile bootstrap over units; `None` with fewer than 5 units, or when more than
    /// 10 % of resamples leave κ undefined (no variation in them).
    pub interval: Option<Interval>,
}

/// [`quadratic_weighted_kappa`] with a percentile bootstrap interval that resamples units
/// (pairs) with replacement, seeded by `boot` like every interval of the report. Why a
/// bootstrap and not the analytic standard error of Fleiss, Cohen & Everitt (1969): that
/// variance is derived for a fixed table of categories, not for fractional scores (a
/// judge's mean over replicates), and is known to cover poorly at the few dozen units
/// human labels usually cover; the bootstrap needs neither, and units are what was sampled.
/// Yes/no decisions go in as 0 and 1 (κ_w is then the unweighted κ).
pub fn weighted_kappa_bootstrap(pairs: &[(f64, f64)], boot: &Bootstrap) -> Option<KappaEstimate> {
    let kappa = quadratic_weighted_kappa(pairs)?;
    let n = pairs.len();
    let interval = (|| {
        let tails = boot.tails()?;
        let n32 = u32::try_from(n).ok().filter(|&n| n >= 5)?;
        let mut counts = vec![0u32; n];
        let mut stats = Vec::with_capacity(boot.resamples);
        for r in 0..boot.resamples {
            counts.fill(0);
            Rng::stream(boot.seed, r).indices(n32, n, |i| bump(&mut counts, i));
            if let Some(k) = weighted_kappa_of(pairs, &counts) {
                stats.push(k);
            }
        }
        if (stats.len() as f64) < 0.9 * boot.resamples as f64 {
            return None;
        }
        percentile_interval(stats, tails)
    })();
    Some(KappaEstimate { kappa, n, interval })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values: scikit-learn 1.9.1 and NumPy, the script in
    // tests/support/stats_reference.py ("Cohen's kappa"), e.g.
    //   cohen_kappa_score([1,2,3,4,5], [1,2,3,4,4], weights="quadratic", labels=[1,2,3,4,5])
    //   = 0.9411764705882353
    // By hand: O = 1/5; E = mean over the 25 pairings of (x_k − y_l)² = 85/25 = 3.4;
    // 1 − 0.2/3.4 = 0.941176…

    const PHI: f64 = 0.6180339887498949;
    const R2: f64 = 0.7548776662466927;

    fn frac(x: f64) -> f64 {
        x - x.floor()
    }

    /// 40 pairs on 1..5: the second rater moves the first's score by −1, 0, 0 or +1.
    fn case_b() -> Vec<(f64, f64)> {
        (0..40)
            .map(|i| {
                let x = 1 + (5.0 * frac(i as f64 * PHI)) as i64;
                let d = [-1, 0, 0, 1][(4.0 * frac(i as f64 * R2)) as usize];
                (x as f64, (x + d).clamp(1, 5) as f64)
            })
            .collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn weighted_kappa_matches_sklearn_quadratic() {
        let hand: Vec<(f64, f64)> = [(1, 1), (2, 2), (3, 3), (4, 4), (5, 4)]
            .iter()
            .map(|&(a, b)| (a as f64, b as f64))
            .collect();
        let k = quadratic_weighted_kappa(&hand).unwrap();
        assert!(close(k, 0.9411764705882353), "{k}");
        let b = case_b();
        // The same 40 values as the Python script prints.
        let xs: Vec<i64> = b.iter().map(|p| p.0 as i64).collect();
        assert_eq!(&xs[..8], &[1, 4, 2, 5, 3, 1, 4, 2]);
        let k = quadratic_weighted_kappa(&b).unwrap();
        assert!(close(k, 0.8992443324937027), "{k}");
        let reversed: Vec<(f64, f64)> = b.iter().map(|&(x, y)| (x, 6.0 - y)).collect();
        let k = quadratic_weighted_kappa(&reversed).unwrap();
        assert!(close(k, -0.8858560794044665), "{k}");
    }

    #[test]
    fn the_scale_spaces_scores_not_the_values_seen() {
        // Only 1, 2 and 5 used: sklearn with labels=[1..5] gives 0.5670103092783505; without
        // labels (1, 2, 5 one step apart each) it would give 0.5454545454545454.
        let g: Vec<(f64, f64)> = [
            (1, 2),
            (2, 1),
            (5, 5),
            (5, 2),
            (1, 1),
            (2, 5),
            (5, 5),
            (1, 2),
        ]
        .iter()
        .map(|&(a, b)| (a as f64, b as f64))
        .collect();
        let k = quadratic_weighted_kappa(&g).unwrap();
        assert!(close(k, 0.5670103092783505), "{k}");
    }

    #[test]
    fn fractional_scores_follow_the_same_formula() {
        // NumPy: 1 − mean((x − y)²) / mean((x[:, None] − y[None, :])²) = 0.9156626506024097.
        let x = [1.5, 2.0, 3.5, 4.0, 5.0, 2.5, 3.0];
        let y = [1.0, 2.0, 4.0, 4.0, 5.0, 3.0, 2.0];
        let pairs: Vec<(f64, f64)> = x.into_iter().zip(y).collect();
        let k = quadratic_weighted_kappa(&pairs).unwrap();
        assert!(close(k, 0.9156626506024097), "{k}");
    }

    /// 30 yes/no pairs: a = frac(i·φ) < 0.6; b = a, flipped where frac(i·R2) < 0.2.
    fn binary() -> Vec<(bool, bool)> {
        (0..30)
            .map(|i| {
                let a = frac(i as f64 * PHI) < 0.6;
                (a, a != (frac(i as f64 * R2) < 0.2))
            })
            .collect()
    }

    #[test]
    fn binary_kappa_matches_sklearn_and_the_weighted_one_on_0_1() {
        // cohen_kappa_score(a, b) = 0.45945945945945954.
        let pairs = binary();
        let k = cohen_kappa_binary(&pairs).unwrap();
        assert!(close(k, 0.45945945945945954), "{k}");
        let as_numbers: Vec<(f64, f64)> = pairs
            .iter()
            .map(|&(a, b)| (f64::from(u8::from(a)), f64::from(u8::from(b))))
            .collect();
        let w = quadratic_weighted_kappa(&as_numbers).unwrap();
        assert!(close(w, k), "{w} vs {k}");
    }

    #[test]
    fn undefined_cases_are_none_never_zero() {
        assert_eq!(quadratic_weighted_kappa(&[]), None);
        assert_eq!(quadratic_weighted_kappa(&[(3.0, 3.0)]), None);
        assert_eq!(quadratic_weighted_kappa(&[(3.0, 3.0), (3.0, 3.0)]), None);
        assert_eq!(
            quadratic_weighted_kappa(&[(f64::NAN, 3.0), (1.0, 3.0)]),
            None
        );
        assert_eq!(cohen_kappa_binary(&[(true, true), (true, true)]), None);
        // One rater constant, the other not: defined (E > 0), and no better than chance.
        let k = quadratic_weighted_kappa(&[(3.0, 1.0), (3.0, 5.0)]).unwrap();
        assert!(k <= 0.0, "{k}");
    }

    #[test]
    fn bootstrap_interval_agrees_with_numpy_within_monte_carlo_error() {
        // NumPy percentile bootstrap over pairs, 20,000 resamples: [0.83858538, 0.94052067].
        // Different generators: agreement only up to Monte-Carlo error (≈ 0.01 here).
        let e = weighted_kappa_bootstrap(&case_b(), &Bootstrap::default()).unwrap();
        assert!(close(e.kappa, 0.8992443324937027));
        assert_eq!(e.n, 40);
        let i = e.interval.unwrap();
        assert!((i.lo - 0.83858538).abs() < 0.015, "{i:?}");
        assert!((i.hi - 0.94052067).abs() < 0.015, "{i:?}");
        // Seeded: the same data give the same interval.
        let again = weighted_kappa_bootstrap(&case_b(), &Bootstrap::default()).unwrap();
        assert_eq!(e, again);
        // Too few units for an interval, but κ is still given.
        let few = weighted_kappa_bootstrap(&case_b()[..4], &Bootstrap::default()).unwrap();
        assert_eq!(few.interval, None);
    }
}
