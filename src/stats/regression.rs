//! Least squares of y on x with one regressor and an intercept, and its cluster-robust
//! interval: the slope of a figure on a size (TTFT on prompt tokens, per cell) when the
//! observations come in clusters that are not independent (the turns of one conversation).
//!
//! The variance is the CR1 sandwich, as Stata's `regress …, vce(cluster g)` and
//! statsmodels' `OLS(...).fit(cov_type="cluster", cov_kwds={"groups": g})`:
//! V = c · (X′X)⁻¹ (Σ_g X_g′ e_g e_g′ X_g) (X′X)⁻¹ with c = G/(G − 1) · (N − 1)/(N − 2),
//! and the interval slope ± t_{G−1} · √V₁₁ (Cameron & Miller, "A Practitioner's Guide to
//! Cluster-Robust Inference", J. Human Resources 50(2), 2015, §II.C and §VI).

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

/// The least-squares line of `y` on `x` as (slope, intercept). `None` when the slices
/// differ in length, hold fewer than two points, a NaN or an infinity, or `x` does not
/// vary.
pub fn least_squares(x: &[f64], y: &[f64]) -> Option<(f64, f64)> {
    if y.len() != x.len() {
        return None;
    }
    least_squares_of(x.iter().copied().zip(y.iter().copied()))
}

/// [`least_squares`] of (x, y) pairs walked where they lie, a pass per sum (no copy into
/// slices): the same sums in the same order, so the same line to the bit.
pub fn least_squares_of(pairs: impl Iterator<Item = (f64, f64)> + Clone) -> Option<(f64, f64)> {
    let n = pairs.clone().count();
    if n < 2 || !pairs.clone().all(|(a, b)| a.is_finite() && b.is_finite()) {
        return None;
    }
    let nf = n as f64;
    let mx = pairs.clone().map(|(a, _)| a).sum::<f64>() / nf;
    let my = pairs.clone().map(|(_, b)| b).sum::<f64>() / nf;
    let sxx: f64 = pairs.clone().map(|(a, _)| (a - mx) * (a - mx)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = pairs.map(|(a, b)| (a - mx) * (b - my)).sum();
    let slope = sxy / sxx;
    Some((slope, my - slope * mx))
}

/// The slope of `y` on `x` within clusters (each cluster its own intercept: the fixed-effects
/// or "within" estimator), with its interval cluster-robust by the same clusters: what a
/// figure grows by per unit of size inside one conversation, untouched by how conversations
/// differ in level. Computed as [`least_squares_clustered`] of the values centred on their
/// cluster's means (the intercept is then 0), which gives the CR1 correction Stata's
/// `xtreg, fe vce(cluster)` uses when the effects are nested in the clusters. `None` as
/// there, or when no cluster's `x` varies.
pub fn within_clusters(x: &[f64], y: &[f64], cluster: &[u32], level: f64) -> Option<Line> {
    if y.len() != x.len() || cluster.len() != x.len() {
        return None;
    }
    let order = cluster_order(cluster);
    let (mut cx, mut cy) = (vec![f64::NAN; x.len()], vec![f64::NAN; y.len()]);
    for members in order.chunk_by(|&i, &j| cluster[i] == cluster[j]) {
        let (mut sx, mut sy, mut k) = (0.0, 0.0, 0.0);
        for &i in members {
            (sx, sy, k) = (sx + x[i], sy + y[i], k + 1.0);
        }
        for &i in members {
            (cx[i], cy[i]) = (x[i] - sx / k, y[i] - sy / k);
        }
    }
    clustered_in_order(&cx, &cy, cluster, &order, level)
}

/// Positions `0..n` grouped by cluster, the clusters ascending and each one's positions in
/// their own order: the order a map from cluster to positions walks them in, without the
/// map (a stable sort only when the clusters are not already in order; a conversation's
/// turns come together).
fn cluster_order(cluster: &[u32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..cluster.len()).collect();
    if !cluster.is_sorted() {
        order.sort_by_key(|&i| cluster[i]);
    }
    order
}

/// The least-squares line of `y` on `x` with the slope's cluster-robust interval at
/// `level`. `None` when the slices differ in length, hold a NaN or an infinity, have fewer
/// than three points, or `x` does not vary.
pub fn least_squares_clustered(x: &[f64], y: &[f64], cluster: &[u32], level: f64) -> Option<Line> {
    if cluster.len() != x.len() {
        return None;
    }
    clustered_in_order(x, y, cluster, &cluster_order(cluster), level)
}

/// [`least_squares_clustered`] with the positions already grouped ([`cluster_order`]).
fn clustered_in_order(
    x: &[f64],
    y: &[f64],
    cluster: &[u32],
    order: &[usize],
    level: f64,
) -> Option<Line> {
    let n = x.len();
    if n < 3 || cluster.len() != n || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let nf = n as f64;
    let (slope, intercept) = least_squares(x, y)?;
    let mx = x.iter().sum::<f64>() / nf;
    let sxx: f64 = x.iter().map(|v| (v - mx) * (v - mx)).sum();
    // Per cluster, the score X_g′ e_g of the centred regressor: with x centred the slope's
    // row of (X′X)⁻¹ is (0, 1/Sxx), so V₁₁ = c · Σ_g (Σ_i (x_i − x̄) e_i)² / Sxx².
    // Summed cluster by cluster, ascending, each in its positions' order.
    let (mut meat, mut g) = (0.0, 0);
    for members in order.chunk_by(|&i, &j| cluster[i] == cluster[j]) {
        let mut score = 0.0;
        for &i in members {
            let e = y[i] - intercept - slope * x[i];
            score += (x[i] - mx) * e;
        }
        meat += score * score;
        g += 1;
    }
    let interval = (g >= 2).then(|| {
        let gf = g as f64;
        let c = gf / (gf - 1.0) * (nf - 1.0) / (nf - 2.0);
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

    /// Conversations of different levels (each its own intercept), numpy and statsmodels
    /// 0.15: the slope of the regression with one dummy per cluster (LSDV), and the
    /// cluster-robust interval of the within-centred regression:
    /// ```text
    /// x = [500, 1500, 2500, 3500, 2000, 2800, 3600, 800, 1900, 3000, 4100, 5200, 1200, 2200, 3200]
    /// y = [180, 231, 268, 330, 95, 140, 171, 420, 455, 530, 562, 610, 260, 330, 355]
    /// g = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3]
    /// D = column_stack([x] + [(g == k) for k in range(4)]); lstsq(D, y)[0][0]
    /// # 0.04587831207065751
    /// (xd, yd: x and y minus their cluster's mean)
    /// sm.OLS(yd, sm.add_constant(xd)).fit(cov_type="cluster", cov_kwds={"groups": g},
    ///                                     use_t=True).conf_int(0.05)[1]
    /// # [0.041328168045662236, 0.050428456095652746]
    /// ```
    #[test]
    fn within_cluster_slope_matches_dummies_and_statsmodels() {
        let x = [
            500.0, 1500.0, 2500.0, 3500.0, 2000.0, 2800.0, 3600.0, 800.0, 1900.0, 3000.0, 4100.0,
            5200.0, 1200.0, 2200.0, 3200.0,
        ];
        let y = [
            180.0, 231.0, 268.0, 330.0, 95.0, 140.0, 171.0, 420.0, 455.0, 530.0, 562.0, 610.0,
            260.0, 330.0, 355.0,
        ];
        let g = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3];
        let line = within_clusters(&x, &y, &g, 0.95).unwrap();
        let i = line.interval.unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b.abs().max(1.0);
        assert!(close(line.slope, 0.04587831207065751), "{line:?}");
        assert!(
            close(i.lo, 0.041328168045662236) && close(i.hi, 0.050428456095652746),
            "{i:?}"
        );
        assert_eq!((line.n, line.clusters), (15, 4));
        // The pooled line differs: conversation 2 sits higher at middling sizes.
        let pooled = least_squares_clustered(&x, &y, &g, 0.95).unwrap();
        assert!((pooled.slope - line.slope).abs() > 0.01, "{pooled:?}");
        // No cluster whose size varies: nothing to fit.
        assert!(within_clusters(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0], &[0, 1, 2], 0.95).is_none());
        // The same observations with the clusters interleaved (not in order): the same line,
        // the same clusters (the sums differ only in their order).
        let order = [7, 0, 12, 4, 8, 1, 13, 5, 9, 2, 14, 6, 10, 3, 11];
        let pick = |v: &[f64]| order.iter().map(|&i| v[i]).collect::<Vec<f64>>();
        let g_mixed: Vec<u32> = order.iter().map(|&i| g[i]).collect();
        let mixed = within_clusters(&pick(&x), &pick(&y), &g_mixed, 0.95).unwrap();
        let j = mixed.interval.unwrap();
        assert!(close(mixed.slope, line.slope), "{mixed:?}");
        assert!(close(j.lo, i.lo) && close(j.hi, i.hi), "{j:?}");
        assert_eq!((mixed.n, mixed.clusters), (15, 4));
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

    #[test]
    fn least_squares_needs_two_points_that_vary() {
        let (slope, intercept) = least_squares(&[1.0, 3.0], &[5.0, 9.0]).unwrap();
        assert!((slope - 2.0).abs() < 1e-12 && (intercept - 3.0).abs() < 1e-12);
        assert!(least_squares(&[1.0], &[5.0]).is_none());
        assert!(least_squares(&[2.0, 2.0], &[5.0, 9.0]).is_none());
        assert!(least_squares(&[1.0, 2.0], &[5.0]).is_none());
        assert!(least_squares(&[1.0, f64::INFINITY], &[5.0, 6.0]).is_none());
    }
}
