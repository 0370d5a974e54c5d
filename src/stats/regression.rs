//! Least squares of y on x with one regressor and an intercept, and its cluster-robust
//! interval: the slope of a figure on a size (TTFT on prompt tokens, per cell) when the
//! observations come in clusters that are not independent (the turns of one conversation).
//!
//! The variance is the CR1 sandwich, as Stata's `regress …, vce(cluster g)` and
//! statsmodels' `OLS(...).fit(cov_type="cluster", cov_kwds={"groups": g})`:
//! V = c · (X′X)⁻¹ (Σ_g X_g′ e_g e_g′ X_g) (X′X)⁻¹ with c = G/(G − 1) · (N − 1)/(N − 2),
//! and the interval slope ± t_{G−1} · √V₁₁ (Cameron & Miller, "A Practitioner's Guide to
//! Cluster-Robust Inference", J. Human Resources 50(2), 2015, §II.C and §VI).

use std::collections::BTreeMap;

use super::Interval;
use super::inference::student_t_quantile;

/// A fitted line: y ≈ intercept + slope · x.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    pub slope: f64,
    pub intercept: f64,
    /// The slope's cluster-robust interval at the level asked; `None` with fewer than two
    /// clusters (nothing to estimate its spread from).
    pub interval: Option<Interval>,
    /// Observations and clusters behind it.
    pub n: usize,
    pub clusters: usize,
}

/// The least-squares line of `y` on `x` with the slope's cluster-robust interval at
/// `level`. `None` when the slices differ in length, hold a NaN or an infinity, have fewer
/// than three points, or `x` does not vary.
pub fn least_squares_clustered(x: &[f64], y: &[f64], cluster: &[u32], level: f64) -> Option<Line> {
    let n = x.len();
    if n < 3 || y.len() != n || cluster.len() != n || !(level > 0.0 && level < 1.0) {
        return None;
    }
    if !x.iter().chain(y).all(|v| v.is_finite()) {
        return None;
    }
    let nf = n as f64;
    let (mx, my) = (x.iter().sum::<f64>() / nf, y.iter().sum::<f64>() / nf);
    let sxx: f64 = x.iter().map(|v| (v - mx) * (v - mx)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    // Per cluster, the score X_g′ e_g of the centred regressor: with x centred the slope's
    // row of (X′X)⁻¹ is (0, 1/Sxx), so V₁₁ = c · Σ_g (Σ_i (x_i − x̄) e_i)² / Sxx².
    let mut scores: BTreeMap<u32, f64> = BTreeMap::new();
    for ((&a, &b), &g) in x.iter().zip(y).zip(cluster) {
        let e = b - intercept - slope * a;
        *scores.entry(g).or_default() += (a - mx) * e;
    }
    let g = scores.len();
    let interval = (g >= 2).then(|| {
        let gf = g as f64;
        let c = gf / (gf - 1.0) * (nf - 1.0) / (nf - 2.0);
        let meat: f64 = scores.values().map(|s| s * s).sum();
        let se = (c * meat).sqrt() / sxx;
        student_t_quantile(0.5 + level / 2.0, gf - 1.0).map(|t| Interval {
            lo: slope - t * se,
            hi: slope + t * se,
        })
    });
    Some(Line {
        slope,
        intercept,
        interval: interval.flatten(),
        n,
        clusters: g,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checked against statsmodels 0.15 (Python, independent of this code):
    ///
    /// ```python
    /// import numpy as np, statsmodels.api as sm
    /// x = [1000, 2000, 3000, 1000, 2000, 3000, 1000, 2000, 3000, 1000, 2000, 3000]
    /// y = [71, 118, 172, 69, 125, 166, 80, 121, 169, 66, 119, 177]
    /// g = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    /// r = sm.OLS(y, sm.add_constant(x)).fit(cov_type="cluster", cov_kwds={"groups": g},
    ///                                       use_t=True)
    /// r.params, r.conf_int(0.05)[1]
    /// # (21.58333333333336, 0.049749999999999996), [0.04211737949845581, 0.05738262050154418]
    /// ```
    const INTERCEPT: f64 = 21.58333333333336;
    const SLOPE: f64 = 0.049749999999999996;
    const LO: f64 = 0.04211737949845581;
    const HI: f64 = 0.05738262050154418;

    #[test]
    fn slope_and_clustered_interval_match_statsmodels() {
        let x = [
            1000.0, 2000.0, 3000.0, 1000.0, 2000.0, 3000.0, 1000.0, 2000.0, 3000.0, 1000.0, 2000.0,
            3000.0,
        ];
        let y = [
            71.0, 118.0, 172.0, 69.0, 125.0, 166.0, 80.0, 121.0, 169.0, 66.0, 119.0, 177.0,
        ];
        let g = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3];
        let line = least_squares_clustered(&x, &y, &g, 0.95).unwrap();
        let i = line.interval.unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b.abs().max(1.0);
        assert!(close(line.slope, SLOPE), "{line:?}");
        assert!(close(line.intercept, INTERCEPT), "{line:?}");
        assert!(close(i.lo, LO) && close(i.hi, HI), "{i:?}");
        assert_eq!((line.n, line.clusters), (12, 4));
    }

    #[test]
    fn degenerate_input_gives_none_or_no_interval() {
        assert!(
            least_squares_clustered(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0], &[0, 1, 2], 0.95).is_none()
        );
        assert!(least_squares_clustered(&[1.0, 2.0], &[1.0, 2.0], &[0, 1], 0.95).is_none());
        assert!(
            least_squares_clustered(&[1.0, 2.0, f64::NAN], &[1.0, 2.0, 3.0], &[0, 1, 2], 0.95)
                .is_none()
        );
        let one =
            least_squares_clustered(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0], &[7, 7, 7], 0.95).unwrap();
        assert!((one.slope - 2.0).abs() < 1e-12 && one.interval.is_none());
    }
}
