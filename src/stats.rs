//! The statistics behind `turnbench report`, once: percentiles, means, success-rate intervals,
//! rank correlation, Krippendorff's α and Cohen's κ ([`kappa`]) with their bootstrap intervals, and the seeded
//! generator; the report's claims (paired, clustered comparisons and their families) are
//! [`inference`], calibrated by [`calibration`]; [`histogram`] pools samples too many to keep.
//! Pure functions over slices, std only (but the histogram's counts), no I/O.
//!
//! Conventions, fixed so tables compare with published benchmarks:
//! - Percentiles use linear interpolation between closest ranks, NumPy's default
//!   (`numpy.percentile(x, q)`, `method="linear"`, Hyndman & Fan type 7): with n sorted values
//!   and h = (n − 1)·q/100, the q-th percentile lies between the values of 0-based ranks ⌊h⌋
//!   and ⌊h⌋ + 1, at the fraction h − ⌊h⌋ of the way.
//! - Intervals are 95 % unless a function is asked for another level.
//! - Bootstrap intervals are the seeded percentile method: resample with replacement, compute
//!   the statistic on each resample, take the 2.5 % and 97.5 % percentiles of those values
//!   (`scipy.stats.bootstrap(..., method="percentile")`). The generator is defined in this file
//!   (SplitMix64 seeding xoshiro256**), so a seed gives the same interval on every machine and
//!   build, whatever happens to the `rand` crate.
//! - Bad input gives `None`, never a panic: an empty sample, a value that is NaN or infinite,
//!   q outside [0, 100], slices of different lengths. Non-finite values are rejected, not
//!   filtered: they mean a bug upstream, and dropping them would make the n printed beside a
//!   figure disagree with the data behind it.

pub mod calibration;
pub mod histogram;
pub mod inference;
pub mod kappa;
pub mod regression;

/// A two-sided interval, `lo <= hi`: the one interval type of every figure (the report
/// writes it as `{"lo": …, "hi": …}`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    /// Writes an optional interval as `[lo, hi]` or null: the shape the sections other
    /// tools read as arrays use (`constraint_survival`, `consistency`, `judge_card`), for
    /// `#[serde(serialize_with = "Interval::pair")]`.
    pub fn pair<S: serde::Serializer>(i: &Option<Interval>, s: S) -> Result<S::Ok, S::Error> {
        use serde::Serialize as _;
        i.map(|i| [i.lo, i.hi]).serialize(s)
    }

    /// Whether `lo <= x <= hi` (endpoints included).
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// Whether 0 lies outside the interval: the test for "established" on a difference.
    pub fn excludes_zero(&self) -> bool {
        self.lo > 0.0 || self.hi < 0.0
    }

    /// Whether the two intervals share at least one point (endpoints included).
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.lo <= other.hi && other.lo <= self.hi
    }
}

// ---------------------------------------------------------------------------------------------
// Percentiles and means

/// A sorted copy of `values`, ready for [`percentile_sorted`] and
/// [`inference::quantile_interval`] (sort once, ask many times). `None` when `values` is empty or holds a NaN or an infinity.
pub fn sort_sample(values: &[f64]) -> Option<Vec<f64>> {
    if values.is_empty() || !all_finite(values) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    Some(sorted)
}

/// The q-th percentile (q in [0, 100]) of an ascending, finite sample, by linear interpolation
/// between closest ranks as `numpy.percentile(sorted, q)`; q = 0 is the minimum, q = 100 the
/// maximum. `None` when the sample is empty, is not ascending, holds a NaN or an infinity, or
/// when q is outside [0, 100] or NaN. Checking the order costs one pass over the sample.
pub fn percentile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if !valid_q(q) || !is_sorted_finite(sorted) {
        return None;
    }
    Some(quantile_unchecked(sorted, q / 100.0))
}

/// The percentiles `qs` (each in [0, 100]) of `values` in any order, as [`percentile_sorted`] on
/// a sorted copy; one result per q, in the order of `qs`. `None` when `values` is empty or holds
/// a NaN or an infinity (rejected, not filtered), or when any q is outside [0, 100].
///
/// The copy is not sorted: only the ranks the percentiles interpolate between are put in
/// place ([`select_ranks`], O(n log k) for k ranks against a sort's O(n log n)). A rank's
/// value is the same whichever way it is found, so the results are a sort's to the bit.
pub fn percentiles(values: &[f64], qs: &[f64]) -> Option<Vec<f64>> {
    if values.is_empty() || !all_finite(values) || !qs.iter().all(|&q| valid_q(q)) {
        return None;
    }
    let mut copy = values.to_vec();
    let mut ranks: Vec<usize> = qs
        .iter()
        .flat_map(|&q| {
            let (lower, upper, _) = rank_position(copy.len(), q / 100.0);
            [lower, upper]
        })
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    select_ranks(&mut copy, &ranks);
    Some(
        qs.iter()
            .map(|&q| quantile_unchecked(&copy, q / 100.0))
            .collect(),
    )
}

/// Puts the value of each 0-based rank of `ranks` (ascending, distinct, each below
/// `values.len()`) where a sort would put it; the other places hold the rest in no given
/// order. Selects the middle rank, then the ranks on each side within that side.
fn select_ranks(values: &mut [f64], ranks: &[usize]) {
    select_ranks_from(values, ranks, 0);
}

/// [`select_ranks`] of `values`, the part of the whole sample that starts at rank `first`
/// (the ranks are the whole sample's).
fn select_ranks_from(values: &mut [f64], ranks: &[usize], first: usize) {
    let half = ranks.len() / 2;
    let Some(mid) = ranks.get(half).and_then(|r| r.checked_sub(first)) else {
        return;
    };
    if mid >= values.len() {
        return;
    }
    values.select_nth_unstable_by(mid, f64::total_cmp);
    let (below, rest) = values.split_at_mut(mid);
    select_ranks_from(below, ranks.get(..half).unwrap_or_default(), first);
    if let (Some(above), Some(ranks_above)) = (rest.get_mut(1..), ranks.get(half + 1..)) {
        select_ranks_from(above, ranks_above, first + mid + 1);
    }
}

/// The percentiles `qs` of single-precision `values` (as the report keeps millions of
/// inter-token gaps), as [`percentiles`] computes them, sorting `values` in place instead of
/// copying them. `None` as there.
pub fn percentiles_in_place_f32(values: &mut [f32], qs: &[f64]) -> Option<Vec<f64>> {
    if values.is_empty() || !qs.iter().all(|&q| valid_q(q)) {
        return None;
    }
    if !values.iter().all(|v| v.is_finite()) {
        return None;
    }
    values.sort_unstable_by(f32::total_cmp);
    Some(
        qs.iter()
            .map(|&q| {
                let (lower, upper, t) = rank_position(values.len(), q / 100.0);
                match (values.get(lower), values.get(upper)) {
                    (Some(&a), Some(&b)) => lerp(f64::from(a), f64::from(b), t),
                    _ => f64::NAN,
                }
            })
            .collect(),
    )
}

/// The median, the 50th percentile as defined by [`percentiles`]. `None` as there.
pub fn median(values: &[f64]) -> Option<f64> {
    percentiles(values, &[50.0])?.first().copied()
}

/// The arithmetic mean: the sum over `values.len()`. `None` when `values` is empty, holds a NaN
/// or an infinity, or when the sum overflows.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || !all_finite(values) {
        return None;
    }
    let m = values.iter().sum::<f64>() / values.len() as f64;
    m.is_finite().then_some(m)
}

fn valid_q(q: f64) -> bool {
    (0.0..=100.0).contains(&q)
}

fn all_finite(values: &[f64]) -> bool {
    values.iter().all(|x| x.is_finite())
}

fn is_sorted_finite(values: &[f64]) -> bool {
    !values.is_empty() && all_finite(values) && values.is_sorted()
}

/// Where the quantile p (a fraction in [0, 1]) falls among n >= 1 sorted values: the lower and
/// upper ranks and the weight of the upper one. As NumPy: h = (n − 1)·p, ranks ⌊h⌋ and ⌊h⌋ + 1,
/// the upper clamped to the last rank.
fn rank_position(n: usize, p: f64) -> (usize, usize, f64) {
    let last = n.saturating_sub(1);
    let h = last as f64 * p;
    let floor = h.floor();
    let lower = (floor as usize).min(last);
    (lower, (lower + 1).min(last), h - floor)
}

/// `a + (b − a)·t`, computed from the nearer end as NumPy's `_lerp` does, so results match
/// `numpy.percentile` to the last bit and q = 100 returns the maximum exactly.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let d = b - a;
    if t >= 0.5 {
        b - d * (1.0 - t)
    } else {
        a + d * t
    }
}

/// The quantile p in [0, 1] of a non-empty ascending slice (checked by callers).
fn quantile_unchecked(sorted: &[f64], p: f64) -> f64 {
    let (lower, upper, t) = rank_position(sorted.len(), p);
    match (sorted.get(lower), sorted.get(upper)) {
        (Some(&a), Some(&b)) => lerp(a, b, t),
        _ => f64::NAN,
    }
}

// ---------------------------------------------------------------------------------------------
// Success rates

/// The standard normal quantile for a two-sided 95 % interval, `scipy.stats.norm.ppf(0.975)`.
pub const Z_95: f64 = 1.959963984540054;

/// The 95 % Wilson score interval for `successes` out of `n` trials, as
/// `statsmodels.stats.proportion.proportion_confint(successes, n, method="wilson")`. The
/// denominator is every trial: for a success rate, every conversation that was attempted
/// (failures stay in it). Unlike the normal approximation it stays inside [0, 1] and is not
/// degenerate at 0 or n successes. `None` when `n == 0` or `successes > n`.
pub fn wilson(successes: u64, n: u64) -> Option<Interval> {
    wilson_z(successes, n, Z_95)
}

/// [`wilson`] with another two-sided critical value `z` (e.g. 1.6448536269514722 for 90 %).
/// `None` when `n == 0`, `successes > n`, or `z` is not a finite positive number.
pub fn wilson_z(successes: u64, n: u64, z: f64) -> Option<Interval> {
    if n == 0 || successes > n || !z.is_finite() || z <= 0.0 {
        return None;
    }
    Some(wilson_real(successes as f64, n as f64, z))
}

/// The Wilson interval of `successes` out of `n` (real numbers, 0 ≤ successes ≤ n, n > 0:
/// checked by callers), with the endpoints exact at 0 and n successes.
fn wilson_real(successes: f64, nf: f64, z: f64) -> Interval {
    let p = successes / nf;
    let z2 = z * z;
    let denom = 1.0 + z2 / nf;
    let center = (p + z2 / (2.0 * nf)) / denom;
    let half = z * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt() / denom;
    // At 0 and n successes the exact endpoint is 0 or 1; the formula only gets there to within
    // rounding.
    let lo = if successes <= 0.0 {
        0.0
    } else {
        (center - half).max(0.0)
    };
    let hi = if successes >= nf {
        1.0
    } else {
        (center + half).min(1.0)
    };
    Interval { lo, hi }
}

/// The 95 % interval of a share pooled over clusters whose units are not independent (the
/// pairs of repeats of one scenario): `clusters` holds each cluster's (successes, units).
/// The share is Σ successes ÷ Σ units; its interval is the Wilson interval at the effective
/// sample size (Korn & Graubard 1998, "Confidence intervals for proportions with small
/// expected number of positive counts estimated from survey data", with Wilson's score
/// interval in place of Clopper–Pearson):
///
/// - the variance of the ratio estimator with clusters as the independent units,
///   v = k/(k − 1) · Σᵢ (yᵢ − p·nᵢ)² / N², over the k clusters with units;
/// - the design effect d = v ÷ (p(1 − p)/N), taken as 1 when it is below 1 (a clustered
///   sample is never counted as more informative than independent units) or when p is 0
///   or 1 (no variance to compare);
/// - the Wilson interval of p·N/d successes out of N/d.
///
/// `None` when there are no units, a cluster has more successes than units, or fewer than
/// two clusters have units (nothing to estimate the between-cluster variance from).
pub fn wilson_clustered(clusters: &[(u64, u64)]) -> Option<Interval> {
    if clusters.iter().any(|&(y, n)| y > n) {
        return None;
    }
    let used: Vec<(f64, f64)> = clusters
        .iter()
        .filter(|&&(_, n)| n > 0)
        .map(|&(y, n)| (y as f64, n as f64))
        .collect();
    let k = used.len() as f64;
    if used.len() < 2 {
        return None;
    }
    let total: f64 = used.iter().map(|&(_, n)| n).sum();
    let successes: f64 = used.iter().map(|&(y, _)| y).sum();
    let p = successes / total;
    let deff = if successes <= 0.0 || successes >= total {
        1.0
    } else {
        let v = k / (k - 1.0) * used.iter().map(|&(y, n)| (y - p * n).powi(2)).sum::<f64>()
            / (total * total);
        (v / (p * (1.0 - p) / total)).max(1.0)
    };
    let n_eff = total / deff;
    Some(wilson_real(p * n_eff, n_eff, Z_95))
}

// ---------------------------------------------------------------------------------------------
// The generator

/// The SplitMix64 increment (Steele, Lea & Flood 2014): the golden ratio times 2^64, odd.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// One step of SplitMix64 as in Vigna's reference `splitmix64.c`: advance the state by the
/// golden gamma and mix it. Used only to seed xoshiro256**, as its authors recommend.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN_GAMMA);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256** 1.0 (Blackman & Vigna, "Scrambled linear pseudorandom number generators",
/// 2021; reference `xoshiro256starstar.c`): 256 bits of state, period 2^256 − 1, fast and
/// statistically sound for simulation. Written out here so a seed reproduces forever.
#[derive(Debug, Clone, PartialEq)]
struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The generator for resample `index` of a bootstrap with `seed`: xoshiro256** seeded with
    /// SplitMix64 outputs 4·index … 4·index + 3 of `seed`. A resample's draws depend only on
    /// (seed, index), so splitting resamples among threads cannot change any interval.
    fn stream(seed: u64, index: usize) -> Rng {
        let mut sm = seed.wrapping_add(GOLDEN_GAMMA.wrapping_mul(4u64.wrapping_mul(index as u64)));
        // SplitMix64 mixes four distinct states with a bijection, so at most one of the four
        // words is zero: never xoshiro's all-zero fixed point.
        Rng {
            s: [
                splitmix64(&mut sm),
                splitmix64(&mut sm),
                splitmix64(&mut sm),
                splitmix64(&mut sm),
            ],
        }
    }

    fn next_u64(&mut self) -> u64 {
        let [s0, s1, s2, s3] = &mut self.s;
        let result = s1.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = *s1 << 17;
        *s2 ^= *s0;
        *s3 ^= *s1;
        *s1 ^= *s2;
        *s0 ^= *s3;
        *s2 ^= t;
        *s3 = s3.rotate_left(45);
        result
    }

    /// Calls `f` with `count` independent uniform integers in [0, n), without bias, by Lemire's
    /// multiply-and-reject method ("Fast random integer generation in an interval", 2019): a
    /// 32-bit x maps to the high half of x·n, and x is redrawn in the rare case (probability
    /// (2^32 mod n)/2^32, about 10^-5 for 60,000 values) that the low half falls below
    /// 2^32 mod n, the remainder that would favour some results. Each 64-bit output gives two
    /// such x, low half first: drawing indices is most of a bootstrap's time, and this halves
    /// the generator's share of it. One division per call, none per draw. Nothing is drawn when
    /// `n == 0`.
    fn indices(&mut self, n: u32, count: usize, mut f: impl FnMut(usize)) {
        if n == 0 {
            return;
        }
        let threshold = n.wrapping_neg() % n;
        let mut left = count;
        while left > 0 {
            let word = self.next_u64();
            for x in [word as u32, (word >> 32) as u32] {
                let m = u64::from(x) * u64::from(n);
                if (m as u32) >= threshold && left > 0 {
                    f((m >> 32) as usize);
                    left -= 1;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Bootstrap

/// The default bootstrap seed: the bytes of "turnbenc". Any fixed value would do; it is fixed
/// so that a report printed twice from the same store prints the same intervals.
pub const DEFAULT_SEED: u64 = 0x7475_726E_6265_6E63;

/// How a percentile bootstrap is run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bootstrap {
    /// Resamples drawn, each as large as the sample. At least 1.
    pub resamples: usize,
    /// Seed of the generator: the same seed and data always give the same interval.
    pub seed: u64,
    /// Two-sided confidence level, strictly between 0 and 1 (0.95 for 95 %).
    pub level: f64,
}

impl Default for Bootstrap {
    /// 1,000 resamples, [`DEFAULT_SEED`], 95 %. 1,000 is what docs/metrics.md fixes for headline
    /// intervals: the Monte-Carlo error of a 2.5 % or 97.5 % endpoint is then about 0.085
    /// bootstrap standard deviations, about 2 % of the interval's width, below the digits a
    /// report prints; and since the seed is fixed that error does not move between runs.
    fn default() -> Self {
        Bootstrap {
            resamples: 1_000,
            seed: DEFAULT_SEED,
            level: 0.95,
        }
    }
}

impl Bootstrap {
    /// The quantiles (fractions) of the bootstrap distribution that bound the interval, as
    /// scipy: (1 − level)/2 and 1 − (1 − level)/2. `None` for no resamples or a level outside
    /// (0, 1).
    fn tails(&self) -> Option<(f64, f64)> {
        if self.resamples == 0 || !(self.level > 0.0 && self.level < 1.0) {
            return None;
        }
        let alpha = (1.0 - self.level) / 2.0;
        Some((alpha, 1.0 - alpha))
    }
}

/// The percentile-method interval from the statistic's values over all resamples. `None` if
/// any of them is not finite (a sum that overflowed).
fn percentile_interval(mut stats: Vec<f64>, (lo, hi): (f64, f64)) -> Option<Interval> {
    if stats.is_empty() || !all_finite(&stats) {
        return None;
    }
    stats.sort_unstable_by(f64::total_cmp);
    Some(Interval {
        lo: quantile_unchecked(&stats, lo),
        hi: quantile_unchecked(&stats, hi),
    })
}

/// Records one more draw of position `i`.
fn bump(counts: &mut [u32], i: usize) {
    if let Some(c) = counts.get_mut(i) {
        *c += 1;
    }
}

// ---------------------------------------------------------------------------------------------
// Rank correlation

/// Spearman's rank correlation of paired observations, as `scipy.stats.spearmanr(x, y)`: the
/// Pearson correlation of the ranks, tied values sharing the average of their ranks. `None`
/// when the slices differ in length, have fewer than 2 pairs, hold a NaN or an infinity, or when
/// either side is constant (the correlation is undefined; scipy returns NaN).
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 || !all_finite(x) || !all_finite(y) {
        return None;
    }
    pearson(&average_ranks(x), &average_ranks(y))
}

/// Spearman's ρ within groups ([`spearman_within_groups`]): the estimate, how many pairs and
/// groups it rests on, and its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WithinGroupRho {
    /// `None` when no group has variation on both sides.
    pub rho: Option<f64>,
    /// Pairs in groups of two or more (a lone pair says nothing within its group).
    pub n: usize,
    /// Groups of two or more pairs.
    pub groups: usize,
    /// Fisher-z interval; `None` without ρ or with fewer than [`WITHIN_MIN_DF`] degrees of
    /// freedom (n − groups).
    pub interval: Option<Interval>,
}

/// Degrees of freedom (pairs − groups) below which [`spearman_within_groups`] gives no
/// interval: the Fisher approximation is not trusted on fewer (the simulation in
/// [`calibration::length_bias`] holds its false "established" rate at or under 5 % from here).
pub const WITHIN_MIN_DF: usize = 6;

/// Spearman's rank correlation of paired observations with group effects removed: within
/// each group (e.g. a scenario) both sides are ranked (ties share the average of their ranks)
/// and centred on the group's mean rank; ρ is the Pearson correlation of the pooled centred
/// ranks, Σ cx·cy / √(Σ cx² · Σ cy²). With one group it is [`spearman`]
/// (`scipy.stats.spearmanr`). A group of one pair is left out (it has no ranks to compare
/// within it); a group constant on one side adds nothing to the sums.
///
/// The interval treats the pairs as independent given their group: Fisher's z = atanh ρ
/// with standard error √(1.06 / (df − 2)) (Fieller, Hartley & Pearson 1957, the variance of
/// Spearman's z), df = pairs − groups (one degree of freedom spent on each group's
/// centring, so one group gives the familiar n − 3), z ± q·se back-transformed with tanh,
/// where q is Student's t quantile 0.975 at df − 2 (not the normal 1.96: at the few
/// conversations per scenario users have, 1.96 said "established" for 7 % of simulated
/// judges without a bias, t keeps it at or under 5 %: [`calibration::length_bias`]). Pairs
/// that share something beyond the group (the same provider, the same run) are not modelled.
///
/// `None` for slices of different lengths or a non-finite value.
pub fn spearman_within_groups(x: &[f64], y: &[f64], groups: &[u32]) -> Option<WithinGroupRho> {
    if x.len() != y.len() || x.len() != groups.len() || !all_finite(x) || !all_finite(y) {
        return None;
    }
    let mut by_group: std::collections::BTreeMap<u32, Vec<usize>> =
        std::collections::BTreeMap::new();
    for (i, &g) in groups.iter().enumerate() {
        by_group.entry(g).or_default().push(i);
    }
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    let (mut n, mut k) = (0usize, 0usize);
    for members in by_group.values().filter(|m| m.len() >= 2) {
        let gx: Vec<f64> = members.iter().filter_map(|&i| x.get(i).copied()).collect();
        let gy: Vec<f64> = members.iter().filter_map(|&i| y.get(i).copied()).collect();
        let centre = (members.len() + 1) as f64 / 2.0;
        for (a, b) in average_ranks(&gx).iter().zip(average_ranks(&gy)) {
            let (dx, dy) = (a - centre, b - centre);
            sxy += dx * dy;
            sxx += dx * dx;
            syy += dy * dy;
        }
        n += members.len();
        k += 1;
    }
    let rho = (sxx > 0.0 && syy > 0.0).then(|| (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0));
    let df = n - k;
    let interval = rho.filter(|_| df >= WITHIN_MIN_DF).map(|r| {
        let z = r.clamp(-1.0 + 1e-12, 1.0 - 1e-12).atanh();
        let se = (1.06 / (df - 2) as f64).sqrt();
        let q = inference::student_t_quantile(0.975, (df - 2) as f64).unwrap_or(Z_95);
        Interval {
            lo: (z - q * se).tanh(),
            hi: (z + q * se).tanh(),
        }
    });
    Some(WithinGroupRho {
        rho,
        n,
        groups: k,
        interval,
    })
}

/// A percentile bootstrap interval of [`spearman`] that resamples pairs (each resample as
/// many pairs as the sample, drawn with replacement). Resamples where ρ is undefined (one
/// side constant) are left out; `None` when more than 10 % are, when fewer than 3 pairs are
/// given, when [`spearman`] is `None`, or when `boot` is invalid.
pub fn bootstrap_spearman(x: &[f64], y: &[f64], boot: &Bootstrap) -> Option<Interval> {
    spearman(x, y)?;
    let tails = boot.tails()?;
    let n = x.len();
    let n32 = u32::try_from(n).ok().filter(|&n| n >= 3)?;
    // Each resample is described by how often each pair was drawn (counts): ranks come from
    // one walk over the pairs sorted once by x and once by y, and ρ is a Pearson correlation
    // weighted by the counts. O(n) per resample instead of sorting every resample; the same
    // ρ as ranking the drawn pairs one by one (copies of a pair tie with each other).
    let (gx, gy) = (TieGroups::new(x), TieGroups::new(y));
    let mut counts = vec![0u32; n];
    let (mut rx, mut ry) = (vec![0.0; n], vec![0.0; n]);
    let mut stats = Vec::with_capacity(boot.resamples);
    for r in 0..boot.resamples {
        counts.fill(0);
        Rng::stream(boot.seed, r).indices(n32, n, |i| bump(&mut counts, i));
        if let Some(rho) = resampled_spearman(&gx, &gy, &counts, &mut rx, &mut ry) {
            stats.push(rho);
        }
    }
    if (stats.len() as f64) < 0.9 * boot.resamples as f64 {
        return None;
    }
    percentile_interval(stats, tails)
}

/// The positions of a sample in ascending order, cut into runs of equal values.
struct TieGroups {
    order: Vec<usize>,
    /// Ends (exclusive) of each run of equal values in `order`.
    ends: Vec<usize>,
}

impl TieGroups {
    fn new(values: &[f64]) -> TieGroups {
        let mut order: Vec<usize> = (0..values.len()).collect();
        let value = |i: usize| values.get(i).copied().unwrap_or(f64::NAN);
        order.sort_unstable_by(|&a, &b| value(a).total_cmp(&value(b)));
        let mut ends = Vec::new();
        for (k, pair) in order.windows(2).enumerate() {
            if let [a, b] = pair
                && value(*a) != value(*b)
            {
                ends.push(k + 1);
            }
        }
        ends.push(order.len());
        TieGroups { order, ends }
    }

    /// The average rank each drawn position has in the resample whose multiplicities are
    /// `counts`: a run of equal values drawn g times in all, after `below` smaller draws,
    /// spans ranks below + 1 ..= below + g. Positions not drawn are left as they were.
    fn ranks(&self, counts: &[u32], out: &mut [f64]) {
        let count = |i: usize| u64::from(counts.get(i).copied().unwrap_or(0));
        let mut below = 0u64;
        let mut start = 0;
        for &end in &self.ends {
            let run = self.order.get(start..end).unwrap_or_default();
            start = end;
            let drawn: u64 = run.iter().map(|&i| count(i)).sum();
            if drawn == 0 {
                continue;
            }
            let rank = below as f64 + (drawn as f64 + 1.0) / 2.0;
            for &i in run {
                if let Some(slot) = out.get_mut(i) {
                    *slot = rank;
                }
            }
            below += drawn;
        }
    }
}

/// Spearman's ρ of the resample whose multiplicities are `counts`; `rx`, `ry` are scratch
/// space as long as the sample. `None` when one side is constant in the resample.
fn resampled_spearman(
    gx: &TieGroups,
    gy: &TieGroups,
    counts: &[u32],
    rx: &mut [f64],
    ry: &mut [f64],
) -> Option<f64> {
    gx.ranks(counts, rx);
    gy.ranks(counts, ry);
    let (mut w, mut sx, mut sy) = (0.0, 0.0, 0.0);
    for ((&c, &a), &b) in counts.iter().zip(rx.iter()).zip(ry.iter()) {
        if c > 0 {
            let c = f64::from(c);
            w += c;
            sx += c * a;
            sy += c * b;
        }
    }
    if w == 0.0 {
        return None;
    }
    let (mx, my) = (sx / w, sy / w);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for ((&c, &a), &b) in counts.iter().zip(rx.iter()).zip(ry.iter()) {
        if c > 0 {
            let c = f64::from(c);
            let (dx, dy) = (a - mx, b - my);
            sxy += c * dx * dy;
            sxx += c * dx * dx;
            syy += c * dy * dy;
        }
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some((sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

/// 1-based ranks, ties given the mean of the ranks they span.
fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<(usize, f64)> = values.iter().copied().enumerate().collect();
    order.sort_unstable_by(|a, b| a.1.total_cmp(&b.1));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    for group in order.chunk_by(|a, b| a.1 == b.1) {
        let end = start + group.len();
        // Ranks start + 1 ..= end, averaged.
        let rank = (start + 1 + end) as f64 / 2.0;
        for &(i, _) in group {
            if let Some(slot) = ranks.get_mut(i) {
                *slot = rank;
            }
        }
        start = end;
    }
    ranks
}

fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let mx = mean(x)?;
    let my = mean(y)?;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (&a, &b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some((sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

// ---------------------------------------------------------------------------------------------
// Krippendorff's alpha

/// Krippendorff's α for ordinal data (Krippendorff 2011, "Computing Krippendorff's
/// Alpha-Reliability"), as `krippendorff.alpha(reliability_data=data,
/// level_of_measurement="ordinal")` (package 0.9.0): agreement among judges or replicates that
/// uses only the order of the scores. Rows are coders, columns units (conversations), `None` a
/// missing score.
///
/// α = 1 − D_o/D_e. Only pairable values count: those in units with at least two scores; a
/// unit scored once is left out of every sum, and n, the denominator of both disagreements, is
/// the number of pairable values. The ordinal distance between scores c ≤ k is
/// (Σ_{g=c..k} n_g − (n_c + n_k)/2)², n_g the pairable values equal to g; that is the squared
/// difference of the two scores' mid-ranks, so this is the interval α computed on mid-ranks.
///
/// `None` when rows differ in length, a score is NaN or infinite, fewer than 2 values are
/// pairable, or all pairable values are equal (expected disagreement 0: α is undefined).
#[cfg(test)]
pub fn krippendorff_alpha_ordinal<R: AsRef<[Option<f64>]>>(data: &[R]) -> Option<f64> {
    ordinal_alpha_of_units(&pairable_units(data)?)
}

/// Ordinal α over pairable units (each with at least two values).
fn ordinal_alpha_of_units<U: AsRef<[f64]>>(units: &[U]) -> Option<f64> {
    // Counts of each distinct value (scores take few values: counting, not sorting, keeps a
    // bootstrap of many resamples linear in the values). −0 was folded into 0 and no value
    // is NaN, so a value's bits identify it.
    let mut counts: std::collections::HashMap<u64, (f64, usize)> = std::collections::HashMap::new();
    for &x in units.iter().flat_map(|u| u.as_ref()) {
        counts.entry(x.to_bits()).or_insert((x, 0)).1 += 1;
    }
    let mut distinct: Vec<(f64, usize)> = counts.into_values().collect();
    distinct.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    // Mid-rank of each distinct value among all pairable values: values below it, plus half of
    // its own count.
    let mut mid_ranks: std::collections::HashMap<u64, f64> =
        std::collections::HashMap::with_capacity(distinct.len());
    let mut below = 0usize;
    for (value, n) in distinct {
        mid_ranks.insert(value.to_bits(), below as f64 + n as f64 / 2.0);
        below += n;
    }
    let mid_rank = |x: &f64| mid_ranks.get(&x.to_bits()).copied().unwrap_or(f64::NAN);
    let ranked: Vec<Vec<f64>> = units
        .iter()
        .map(|unit| unit.as_ref().iter().map(mid_rank).collect())
        .collect();
    interval_alpha(&ranked)
}

/// Ordinal α (`krippendorff_alpha_ordinal` (the test oracle)) with what it rests on and a percentile
/// bootstrap interval that resamples units (conversations), the way Krippendorff's own
/// bootstrap and Hayes & Krippendorff (2007) resample: each resample draws as many pairable
/// units as there are, with replacement, and computes α again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlphaEstimate {
    pub alpha: f64,
    /// Pairable units: those with at least two scores.
    pub units: usize,
    /// Pairable values: the scores in those units.
    pub values: usize,
    /// `None` when fewer than 2 units are pairable or more than 10 % of resamples have no
    /// variation at all (α undefined there), so that an interval would speak for a biased
    /// subset of resamples.
    pub interval: Option<Interval>,
}

/// See [`AlphaEstimate`]. `None` where `krippendorff_alpha_ordinal` (the test oracle) is `None`.
pub fn krippendorff_alpha_ordinal_bootstrap<R: AsRef<[Option<f64>]>>(
    data: &[R],
    boot: &Bootstrap,
) -> Option<AlphaEstimate> {
    let units = pairable_units(data)?;
    let alpha = ordinal_alpha_of_units(&units)?;
    let values = units.iter().map(Vec::len).sum();
    let n = units.len();
    let interval = (|| {
        let tails = boot.tails()?;
        let n32 = u32::try_from(n).ok().filter(|&n| n >= 2)?;
        let patterns = UnitPatterns::of(&units);
        let mut draws = vec![0u32; patterns.counts.len()];
        let mut stats = Vec::with_capacity(boot.resamples);
        for r in 0..boot.resamples {
            draws.fill(0);
            Rng::stream(boot.seed, r).indices(n32, n, |i| {
                if let Some(&p) = patterns.of_unit.get(i) {
                    bump(&mut draws, p);
                }
            });
            if let Some(a) = patterns.ordinal_alpha(&draws) {
                stats.push(a);
            }
        }
        // Resamples without variation are left out; too many of them and no interval.
        if (stats.len() as f64) < 0.9 * boot.resamples as f64 {
            return None;
        }
        percentile_interval(stats, tails)
    })();
    Some(AlphaEstimate {
        alpha,
        units: n,
        values,
        interval,
    })
}

/// Units grouped by the multiset of their values: scores take few values, so a few dozen
/// patterns stand for thousands of units, and a resample is how often each pattern was
/// drawn. Ordinal α of a resample then costs one pass over the patterns (Krippendorff's
/// coincidence matrix), not over the values.
struct UnitPatterns {
    /// Pattern id of each pairable unit.
    of_unit: Vec<usize>,
    /// Per pattern: how many of its values equal each distinct value (ascending).
    counts: Vec<Vec<u32>>,
}

impl UnitPatterns {
    fn of(units: &[Vec<f64>]) -> UnitPatterns {
        let mut distinct: Vec<f64> = units.iter().flatten().copied().collect();
        distinct.sort_unstable_by(f64::total_cmp);
        distinct.dedup();
        let index = |x: f64| {
            distinct
                .binary_search_by(|v| v.total_cmp(&x))
                .unwrap_or_default()
        };
        let mut ids: std::collections::HashMap<Vec<u32>, usize> = std::collections::HashMap::new();
        let mut counts: Vec<Vec<u32>> = Vec::new();
        let of_unit = units
            .iter()
            .map(|u| {
                let mut c = vec![0u32; distinct.len()];
                for &x in u {
                    bump(&mut c, index(x));
                }
                *ids.entry(c.clone()).or_insert_with(|| {
                    counts.push(c);
                    counts.len() - 1
                })
            })
            .collect();
        UnitPatterns { of_unit, counts }
    }

    /// Ordinal α of the units drawn `draws[p]` times per pattern p: 1 − (n − 1)·Σ o_ck δ²_ck
    /// / Σ n_c n_k δ²_ck, o the coincidence matrix (Σ_u (n_uc n_uk − [c = k] n_uc)/(m_u − 1)),
    /// n_c the values equal to c, δ_ck the difference of the two values' mid-ranks. The same
    /// α as `krippendorff_alpha_ordinal` (the test oracle) of those units.
    fn ordinal_alpha(&self, draws: &[u32]) -> Option<f64> {
        let k = self.counts.first().map_or(0, Vec::len);
        let mut marginal = vec![0f64; k];
        let mut coincidence = vec![0f64; k * k];
        for (pattern, &d) in self.counts.iter().zip(draws) {
            if d == 0 {
                continue;
            }
            let d = f64::from(d);
            let m: u32 = pattern.iter().sum();
            let scale = d / f64::from(m - 1);
            for (c, &nc) in pattern.iter().enumerate() {
                if nc == 0 {
                    continue;
                }
                marginal[c] += d * f64::from(nc);
                for (j, &nj) in pattern.iter().enumerate() {
                    let pairs =
                        f64::from(nc) * f64::from(nj) - if c == j { f64::from(nc) } else { 0.0 };
                    coincidence[c * k + j] += scale * pairs;
                }
            }
        }
        let mut mid = vec![0f64; k];
        let mut below = 0.0;
        for c in 0..k {
            mid[c] = below + marginal[c] / 2.0;
            below += marginal[c];
        }
        let (mut observed, mut expected) = (0.0, 0.0);
        for c in 0..k {
            for j in 0..k {
                let delta = (mid[c] - mid[j]) * (mid[c] - mid[j]);
                observed += coincidence[c * k + j] * delta;
                expected += marginal[c] * marginal[j] * delta;
            }
        }
        alpha_from(observed, expected, below.round() as usize)
    }
}

/// Krippendorff's α for interval data, as `krippendorff.alpha(..., level_of_measurement=
/// "interval")`: the distance between two scores is their squared difference. Data, pairable
/// values, denominators and `None` as `krippendorff_alpha_ordinal` (the test oracle).
#[cfg(test)]
pub fn krippendorff_alpha_interval<R: AsRef<[Option<f64>]>>(data: &[R]) -> Option<f64> {
    interval_alpha(&pairable_units(data)?)
}

/// Krippendorff's α for nominal data, as `krippendorff.alpha(..., level_of_measurement=
/// "nominal")`: two scores either match (distance 0) or not (distance 1). Data, pairable
/// values, denominators and `None` as `krippendorff_alpha_ordinal` (the test oracle).
pub fn krippendorff_alpha_nominal<R: AsRef<[Option<f64>]>>(data: &[R]) -> Option<f64> {
    let units = pairable_units(data)?;
    // Σ over ordered pairs of different values in a group of values: m² − Σ_c m_c².
    let mismatched = |values: &mut Vec<f64>| {
        values.sort_unstable_by(f64::total_cmp);
        let m = values.len() as f64;
        let same: f64 = values
            .chunk_by(|a, b| a == b)
            .map(|g| (g.len() * g.len()) as f64)
            .sum();
        m * m - same
    };
    let observed = units
        .iter()
        .map(|unit| mismatched(&mut unit.clone()) / (unit.len() - 1) as f64)
        .sum();
    let mut all: Vec<f64> = units.iter().flatten().copied().collect();
    let n = all.len();
    alpha_from(observed, mismatched(&mut all), n)
}

/// The present scores of each unit that has at least two, with −0 folded into 0. `None` on
/// ragged rows or a non-finite score.
fn pairable_units<R: AsRef<[Option<f64>]>>(data: &[R]) -> Option<Vec<Vec<f64>>> {
    let width = data.first()?.as_ref().len();
    if data.iter().any(|row| row.as_ref().len() != width) {
        return None;
    }
    let mut units = Vec::new();
    for u in 0..width {
        let unit: Vec<f64> = data
            .iter()
            .filter_map(|row| row.as_ref().get(u).copied().flatten())
            .map(|x| x + 0.0)
            .collect();
        if !all_finite(&unit) {
            return None;
        }
        if unit.len() >= 2 {
            units.push(unit);
        }
    }
    Some(units)
}

/// α with squared-difference distances. Over a group of m values, Σ over ordered pairs of
/// (x_i − x_j)² equals 2m·Σ(x_i − mean)², which avoids the O(m²) loop and the cancellation of
/// the raw-moment form.
fn interval_alpha(units: &[Vec<f64>]) -> Option<f64> {
    let pair_sum = |values: &[f64]| {
        let m = mean(values).unwrap_or(0.0);
        2.0 * values.len() as f64 * values.iter().map(|x| (x - m) * (x - m)).sum::<f64>()
    };
    let observed = units
        .iter()
        .map(|unit| pair_sum(unit) / (unit.len() - 1) as f64)
        .sum();
    let all: Vec<f64> = units.iter().flatten().copied().collect();
    alpha_from(observed, pair_sum(&all), all.len())
}

/// α = 1 − (n − 1)·Σ_u [Σ_{i≠j} δ(u_i, u_j) / (m_u − 1)] / Σ_{i≠j over all values} δ, which is
/// 1 − D_o/D_e with D_o = observed/n and D_e = expected/(n(n − 1)).
fn alpha_from(observed: f64, expected: f64, n: usize) -> Option<f64> {
    if n < 2 || expected <= 0.0 || !expected.is_finite() || !observed.is_finite() {
        return None;
    }
    Some(1.0 - (n - 1) as f64 * observed / expected)
}

#[cfg(test)]
mod tests {
    //! Reference values come from NumPy, SciPy, statsmodels and the krippendorff package;
    //! `python3 tests/support/stats_reference.py` prints every one of them, each beside the
    //! expression written here in a comment.

    use super::*;

    #[track_caller]
    fn close(actual: f64, expected: f64, tol: f64) {
        assert!(
            (actual - expected).abs() <= tol,
            "{actual} differs from {expected} by more than {tol}"
        );
    }

    #[track_caller]
    fn close_interval(actual: Interval, expected: (f64, f64), tol: f64) {
        assert!(
            (actual.lo - expected.0).abs() <= tol && (actual.hi - expected.1).abs() <= tol,
            "{actual:?} differs from {expected:?} by more than {tol}"
        );
    }

    // Test data, written exactly as in stats_reference.py: only +, −, ×, ÷ and the fractional
    // part, so Python and Rust produce the same bits.
    const PHI: f64 = 0.6180339887498949;

    fn frac(x: f64) -> f64 {
        x.fract()
    }

    /// Right-skewed latencies in seconds: 3 + 2u/(1.05 − u), u = frac(i·φ).
    fn latencies(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| {
                let u = frac(i as f64 * PHI);
                3.0 + 2.0 * u / (1.05 - u)
            })
            .collect()
    }

    // --- percentiles and means ---

    #[test]
    fn percentiles_match_numpy_linear() {
        let x = [15.0, 20.0, 35.0, 40.0, 50.0];
        let cases = [
            (0.0, 15.0),                // np.percentile([15, 20, 35, 40, 50], 0)
            (5.0, 16.0),                // np.percentile([15, 20, 35, 40, 50], 5)
            (30.0, 23.0),               // np.percentile([15, 20, 35, 40, 50], 30)
            (33.3, 24.979999999999997), // np.percentile([15, 20, 35, 40, 50], 33.3)
            (40.0, 29.0),               // np.percentile([15, 20, 35, 40, 50], 40)
            (50.0, 35.0),               // np.percentile([15, 20, 35, 40, 50], 50)
            (95.0, 48.0),               // np.percentile([15, 20, 35, 40, 50], 95)
            (100.0, 50.0),              // np.percentile([15, 20, 35, 40, 50], 100)
        ];
        // Bit for bit: same index arithmetic and the same interpolation as NumPy.
        for (q, expected) in cases {
            assert_eq!(percentile_sorted(&x, q), Some(expected), "q = {q}");
        }
    }

    #[test]
    fn percentiles_by_selection_are_a_sorted_copys_to_the_bit() {
        // Samples with many ties and without, of sizes around the ranks' edges, against
        // interpolating in a sorted copy; q sets from one percentile to the 101 of a curve.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let curve: Vec<f64> = (0..=100).map(f64::from).collect();
        let q_sets: [&[f64]; 5] = [
            &[50.0],
            &[50.0, 95.0, 99.0],
            &[99.0, 0.0, 100.0, 50.0],
            &[37.5, 37.5],
            &curve,
        ];
        for n in [1usize, 2, 3, 7, 100, 1001, 4096] {
            for ties in [false, true] {
                let values: Vec<f64> = (0..n)
                    .map(|_| {
                        let r = next();
                        if ties {
                            (r % 5) as f64
                        } else {
                            (r >> 11) as f64 / 1e6
                        }
                    })
                    .collect();
                let mut sorted = values.clone();
                sorted.sort_by(f64::total_cmp);
                for qs in q_sets {
                    let expected: Vec<f64> = qs
                        .iter()
                        .map(|&q| quantile_unchecked(&sorted, q / 100.0))
                        .collect();
                    let got = percentiles(&values, qs).unwrap();
                    assert_eq!(
                        got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                        expected.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                        "n {n}, ties {ties}, qs {qs:?}"
                    );
                }
            }
        }
    }

    /// Single-precision values in any order give NumPy's percentiles of the same values
    /// (exact in f32: 15, 20, 35, 40, 50), and bad input gives none.
    #[test]
    fn f32_percentiles_in_place_match_numpy_linear() {
        let mut x = [40.0f32, 15.0, 50.0, 20.0, 35.0];
        let q = percentiles_in_place_f32(&mut x, &[5.0, 33.3, 95.0]).unwrap();
        // np.percentile([15, 20, 35, 40, 50], [5, 33.3, 95])
        assert_eq!(q, [16.0, 24.979999999999997, 48.0]);
        assert_eq!(x, [15.0, 20.0, 35.0, 40.0, 50.0]);
        assert!(percentiles_in_place_f32(&mut [], &[50.0]).is_none());
        assert!(percentiles_in_place_f32(&mut [1.0, f32::NAN], &[50.0]).is_none());
        assert!(percentiles_in_place_f32(&mut [1.0], &[101.0]).is_none());
    }

    #[test]
    fn interpolation_rounds_like_numpy() {
        // Past the midpoint NumPy interpolates down from the upper value; going up from the
        // lower one would give 0.52 and 950000.015.
        let p70 = percentile_sorted(&[0.1, 0.7], 70.0);
        assert_eq!(p70, Some(0.5199999999999999)); // np.percentile([0.1, 0.7], 70)
        let p95 = percentile_sorted(&[0.3, 1e6], 95.0);
        assert_eq!(p95, Some(950000.0149999999)); // np.percentile([0.3, 1e6], 95)
    }

    #[test]
    fn percentiles_of_unsorted_values_with_ties_match_numpy() {
        let x = [3.5, 1.0, 2.0, 2.0, 9.75, -4.0, 2.0, 0.5];
        let got = percentiles(&x, &[10.0, 25.0, 50.0, 75.0, 90.0, 99.0]).unwrap();
        // np.percentile([3.5, 1.0, 2.0, 2.0, 9.75, -4.0, 2.0, 0.5], q), q = 10, 25, 50, 75, 90, 99
        let expected = [
            -0.8499999999999996,
            0.875,
            2.0,
            2.375,
            5.374999999999999,
            9.312499999999998,
        ];
        assert_eq!(got, expected);
    }

    #[test]
    fn tail_percentiles_mean_and_median_of_a_cell_match_numpy() {
        let x = latencies(45);
        let got = percentiles(&x, &[50.0, 95.0, 99.0]).unwrap();
        let expected = [
            4.718733239526779,  // np.percentile(latencies(45), 50)
            20.196530582161408, // np.percentile(latencies(45), 95)
            27.478242116025957, // np.percentile(latencies(45), 99)
        ];
        assert_eq!(got, expected);
        assert_eq!(median(&x), Some(4.718733239526779)); // np.median(latencies(45))
        // NumPy sums pairwise, this module left to right: equal to within rounding.
        close(mean(&x).unwrap(), 7.061668845104159, 1e-12); // np.mean(latencies(45))
    }

    #[test]
    fn one_value_is_every_percentile_and_the_ends_are_min_and_max() {
        for q in [0.0, 12.5, 50.0, 99.0, 100.0] {
            assert_eq!(percentile_sorted(&[7.25], q), Some(7.25));
        }
        let x = sort_sample(&latencies(101)).unwrap();
        assert_eq!(percentile_sorted(&x, 0.0), x.first().copied());
        assert_eq!(percentile_sorted(&x, 100.0), x.last().copied());
        // h = 100·0.37 = 37 exactly: the 38th value, no interpolation.
        assert_eq!(percentile_sorted(&x, 37.0), Some(x[37]));
    }

    #[test]
    fn bad_percentile_input_is_none() {
        assert_eq!(percentile_sorted(&[], 50.0), None);
        assert_eq!(percentile_sorted(&[1.0, 2.0], -0.1), None);
        assert_eq!(percentile_sorted(&[1.0, 2.0], 100.1), None);
        assert_eq!(percentile_sorted(&[1.0, 2.0], f64::NAN), None);
        assert_eq!(percentile_sorted(&[2.0, 1.0], 50.0), None, "not sorted");
        assert_eq!(percentile_sorted(&[1.0, f64::NAN], 50.0), None);
        assert_eq!(percentile_sorted(&[f64::NAN], 50.0), None);
        assert_eq!(percentile_sorted(&[1.0, f64::INFINITY], 50.0), None);
        assert_eq!(percentiles(&[], &[50.0]), None);
        assert_eq!(percentiles(&[1.0, 2.0], &[50.0, 101.0]), None);
        assert_eq!(percentiles(&[1.0, 2.0], &[]), Some(vec![]));
        assert_eq!(mean(&[]), None);
        assert_eq!(median(&[]), None);
        assert_eq!(sort_sample(&[]), None);
    }

    #[test]
    fn nan_is_rejected_not_filtered() {
        // Filtering would give the median of [1, 2, 3] = 2 and a mean of 2.
        assert_eq!(percentiles(&[1.0, f64::NAN, 2.0, 3.0], &[50.0]), None);
        assert_eq!(mean(&[1.0, f64::NAN, 2.0, 3.0]), None);
        assert_eq!(mean(&[1.0, f64::NEG_INFINITY]), None);
        assert_eq!(sort_sample(&[3.0, f64::NAN]), None);
        assert_eq!(mean(&[f64::MAX, f64::MAX]), None, "overflowing sum");
    }

    // --- Wilson ---

    #[test]
    fn z_95_is_the_normal_quantile() {
        assert_eq!(Z_95, 1.959963984540054); // scipy.stats.norm.ppf(0.975)
    }

    #[test]
    fn wilson_matches_statsmodels() {
        // proportion_confint(k, n, method='wilson') from statsmodels.stats.proportion
        let cases = [
            (0, 1, (0.0, 0.7934506856227627)),
            (1, 1, (0.2065493143772374, 1.0)),
            (0, 10, (0.0, 0.27753279986288926)),
            (1, 10, (0.017876213095072924, 0.40415002679523854)),
            (5, 10, (0.23659309051256394, 0.7634069094874361)),
            (10, 10, (0.7224672001371106, 1.0)),
            (3, 7, (0.15821985525146964, 0.7495416354723428)),
            (40, 45, (0.765009030042314, 0.9515952820543281)),
            (44, 45, (0.8843331823158511, 0.9960664011171665)),
            (45, 45, (0.9213484012671115, 0.9999999999999999)),
            (9500, 10000, (0.9455528841569758, 0.9541015173094152)),
            (123456, 250000, (0.4918642954914443, 0.4957838943044366)),
        ];
        for (k, n, expected) in cases {
            close_interval(wilson(k, n).unwrap(), expected, 1e-12);
        }
    }

    #[test]
    fn wilson_is_exact_at_the_ends_and_none_without_trials() {
        assert_eq!(wilson(0, 10).unwrap().lo, 0.0);
        assert_eq!(wilson(10, 10).unwrap().hi, 1.0);
        assert_eq!(wilson(0, 0), None);
        assert_eq!(wilson(11, 10), None);
        assert_eq!(wilson_z(4, 10, 0.0), None);
        assert_eq!(wilson_z(4, 10, f64::NAN), None);
    }

    #[test]
    fn wilson_at_90_percent_matches_statsmodels() {
        // scipy.stats.norm.ppf(0.95) = 1.6448536269514722
        let got = wilson_z(40, 45, 1.6448536269514722).unwrap();
        // proportion_confint(40, 45, alpha=0.10, method='wilson')
        close_interval(got, (0.7888096085952867, 0.9448577488194485), 1e-12);
    }

    #[test]
    fn clustered_wilson_matches_a_hand_computation() {
        // Clusters (3 of 10), (8 of 10), (1 of 5): N = 25, p = 12/25 = 0.48; residuals
        // yᵢ − p·nᵢ = −1.8, 3.2, −1.4, squares sum 15.44; v = 3/2 · 15.44 / 625 = 0.037056;
        // p(1 − p)/N = 0.009984; design effect 3.711538…, effective n 6.735751…; Wilson of
        // 0.48 · 6.735751 out of 6.735751 (computed in Python from the score formula).
        let got = wilson_clustered(&[(3, 10), (8, 10), (1, 5)]).unwrap();
        close_interval(got, (0.18609403040194433, 0.7884332741653421), 1e-12);
        // A design effect below 1 counts as 1: the plain Wilson interval of the pooled counts,
        // wilson(10, 20) = proportion_confint(10, 20, method='wilson').
        let even = wilson_clustered(&[(5, 10), (5, 10)]).unwrap();
        close_interval(even, (0.2992980081982123, 0.7007019918017877), 1e-12);
        // Clusters without units do not count towards k.
        assert_eq!(
            wilson_clustered(&[(5, 10), (0, 0), (5, 10)]),
            wilson_clustered(&[(5, 10), (5, 10)])
        );
    }

    #[test]
    fn clustered_wilson_at_the_ends_and_without_clusters() {
        // Every pair identical: nothing to compare variances with, Wilson(10, 10).
        let all = wilson_clustered(&[(4, 4), (6, 6)]).unwrap();
        assert_eq!(all, wilson(10, 10).unwrap());
        assert_eq!(all.hi, 1.0);
        assert!(all.lo < 1.0);
        assert_eq!(wilson_clustered(&[(0, 4), (0, 6)]).unwrap().lo, 0.0);
        // One cluster, none, or more successes than units: no interval.
        assert_eq!(wilson_clustered(&[(3, 10)]), None);
        assert_eq!(wilson_clustered(&[]), None);
        assert_eq!(wilson_clustered(&[(3, 2), (1, 2)]), None);
        // Wider than the Wilson interval that treats the 25 pairs as independent.
        let clustered = wilson_clustered(&[(3, 10), (8, 10), (1, 5)]).unwrap();
        let naive = wilson(12, 25).unwrap();
        assert!(clustered.lo < naive.lo && naive.hi < clustered.hi);
    }

    // --- the generator ---

    #[test]
    fn splitmix64_matches_the_published_reference() {
        // Vigna's splitmix64.c from seed 1477776061723855037, as listed in the test `reference`
        // of rand_xoshiro's splitmix64.rs (github.com/rust-random/rngs).
        let mut state = 1477776061723855037;
        let got: Vec<u64> = (0..5).map(|_| splitmix64(&mut state)).collect();
        let expected = [
            1985237415132408290,
            2979275885539914483,
            13511426838097143398,
            8488337342461049707,
            15141737807933549159,
        ];
        assert_eq!(got, expected);
    }

    #[test]
    fn xoshiro256starstar_matches_the_published_reference() {
        // The reference xoshiro256starstar.c from state {1, 2, 3, 4}, as listed in the test
        // `reference` of rand_xoshiro's xoshiro256starstar.rs (github.com/rust-random/rngs).
        let mut rng = Rng { s: [1, 2, 3, 4] };
        let got: Vec<u64> = (0..10).map(|_| rng.next_u64()).collect();
        let expected = [
            11520,
            0,
            1509978240,
            1215971899390074240,
            1216172134540287360,
            607988272756665600,
            16172922978634559625,
            8476171486693032832,
            10595114339597558777,
            2904607092377533576,
        ];
        assert_eq!(got, expected);
    }

    #[test]
    fn streams_are_splitmix_outputs_in_blocks_of_four() {
        let mut sm = 42;
        let outputs: Vec<u64> = (0..8).map(|_| splitmix64(&mut sm)).collect();
        assert_eq!(Rng::stream(42, 0).s, outputs[0..4]);
        assert_eq!(Rng::stream(42, 1).s, outputs[4..8]);
    }

    fn draw(rng: &mut Rng, n: u32, count: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(count);
        rng.indices(n, count, |i| out.push(i));
        out
    }

    #[test]
    fn indices_stay_in_range_and_come_in_the_number_asked() {
        let mut rng = Rng::stream(7, 0);
        for n in [1, 2, 3, 7, 10, 1000, 60_000, u32::MAX] {
            let got = draw(&mut rng, n, 1001);
            assert_eq!(got.len(), 1001);
            assert!(got.iter().all(|&i| i < n as usize));
        }
        assert_eq!(draw(&mut rng, 1, 5), vec![0; 5]);
        assert_eq!(draw(&mut rng, 0, 5), Vec::<usize>::new());
    }

    #[test]
    fn indices_are_uniform_over_a_small_range() {
        let mut counts = [0u32; 6];
        for i in draw(&mut Rng::stream(11, 0), 6, 60_000) {
            counts[i] += 1;
        }
        // Each count is Binomial(60000, 1/6): mean 10000, sd 91.3; allow 5 sd.
        for c in counts {
            assert!((c as f64 - 10_000.0).abs() < 5.0 * 91.3, "{counts:?}");
        }
    }

    #[test]
    fn indices_reject_the_biased_remainder() {
        // n = 3·2^30 and 32-bit x. Reducing x mod n would put half of all draws below 2^30
        // (each of those results has two preimages); taking the high half of x·n without the
        // rejection gives every result divisible by 3 two preimages out of four. Uniform draws
        // put a third of the draws in each of those sets.
        let n = 3u32 << 30;
        let got = draw(&mut Rng::stream(3, 0), n, 30_000);
        let low = got.iter().filter(|&&i| i < 1 << 30).count();
        let multiple_of_3 = got.iter().filter(|&&i| i % 3 == 0).count();
        // Binomial(30000, 1/3): mean 10000, sd 81.6; allow 5 sd.
        assert!((low as f64 - 10_000.0).abs() < 5.0 * 81.6, "{low}");
        assert!(
            (multiple_of_3 as f64 - 10_000.0).abs() < 5.0 * 81.6,
            "{multiple_of_3}"
        );
    }

    // --- bootstrap ---

    #[test]
    fn default_bootstrap_is_seeded_1000_resamples_at_95_percent() {
        let b = Bootstrap::default();
        assert_eq!((b.resamples, b.seed, b.level), (1_000, DEFAULT_SEED, 0.95));
    }

    // --- Spearman ---

    #[test]
    fn spearman_matches_scipy_with_ties() {
        let x = [1.0, 2.0, 2.0, 3.0, 5.0, 4.0, 4.0, 7.0];
        let y = [2.0, 1.0, 3.0, 3.0, 6.0, 4.0, 5.0, 5.0];
        // scipy.stats.spearmanr(x, y).statistic
        close(spearman(&x, &y).unwrap(), 0.8902439024390245, 1e-12);
        let judge = [4.0, 5.0, 3.0, 4.0, 2.0, 5.0, 4.0, 3.0, 1.0, 4.0];
        // scipy.stats.spearmanr(latencies(10), judge).statistic
        close(
            spearman(&latencies(10), &judge).unwrap(),
            -0.20769510081357426,
            1e-12,
        );
    }

    #[test]
    fn spearman_is_one_for_any_increasing_relation() {
        let x = latencies(50);
        let cubed: Vec<f64> = x.iter().map(|v| v * v * v).collect();
        let negated: Vec<f64> = x.iter().map(|v| -v).collect();
        close(spearman(&x, &cubed).unwrap(), 1.0, 1e-12);
        close(spearman(&x, &negated).unwrap(), -1.0, 1e-12);
    }

    #[test]
    fn spearman_without_variation_or_pairs_is_none() {
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[4.0, 4.0, 4.0]), None);
        assert_eq!(spearman(&[1.0, 2.0], &[1.0]), None);
        assert_eq!(spearman(&[1.0], &[1.0]), None);
        assert_eq!(spearman(&[1.0, f64::NAN], &[1.0, 2.0]), None);
    }

    #[test]
    fn spearman_within_one_group_is_scipys() {
        let x = [1.0, 2.0, 2.0, 3.0, 5.0, 4.0, 4.0, 7.0];
        let y = [2.0, 1.0, 3.0, 3.0, 6.0, 4.0, 5.0, 5.0];
        // The same pairs as `spearman_matches_scipy_with_ties`: scipy's 0.8902439024390245.
        let w = spearman_within_groups(&x, &y, &[7; 8]).unwrap();
        close(w.rho.unwrap(), 0.8902439024390245, 1e-12);
        assert_eq!((w.n, w.groups), (8, 1));
        // df = 8 − 1 = 7: an interval. By hand (Python's math module):
        // z = atanh(0.8902439024390245) = 1.4231003; se = sqrt(1.06 / 5) = 0.4604346;
        // q = scipy.stats.t.ppf(0.975, 5) = 2.5705818; tanh(z ∓ q·se) = 0.2350381, 0.9891723.
        let i = w.interval.unwrap();
        close(i.lo, 0.23503807, 1e-6);
        close(i.hi, 0.98917234, 1e-6);
    }

    #[test]
    fn spearman_within_groups_removes_group_effects() {
        // Two scenarios: within each, longer goes with higher; across them the scenario
        // with long answers scores low. Pooled ranks say negative; within groups, positive.
        let x = [10.0, 20.0, 30.0, 100.0, 200.0, 300.0];
        let y = [4.0, 5.0, 5.0, 1.0, 2.0, 2.0];
        let g = [0, 0, 0, 1, 1, 1];
        assert!(spearman(&x, &y).unwrap() < 0.0);
        // By hand: centred ranks x: (-1, 0, 1) twice; y: (-1, 0.5, 0.5) twice
        // Σcx·cy = 2·(1 + 0 + 0.5) = 3; Σcx² = 4; Σcy² = 2·1.5 = 3; ρ = 3/√12 = 0.8660254.
        let w = spearman_within_groups(&x, &y, &g).unwrap();
        close(w.rho.unwrap(), 0.8660254037844386, 1e-12);
        assert_eq!((w.n, w.groups), (6, 2));
        // df = 4: too few for an interval.
        assert_eq!(w.interval, None);
        // A lone pair in its own group is left out; a group constant on one side adds nothing.
        let w = spearman_within_groups(&[1.0, 2.0, 9.0], &[1.0, 2.0, 9.0], &[0, 0, 1]).unwrap();
        assert_eq!((w.n, w.groups), (2, 1));
        close(w.rho.unwrap(), 1.0, 1e-12);
        let w = spearman_within_groups(&[1.0, 2.0], &[3.0, 3.0], &[0, 0]).unwrap();
        assert_eq!((w.rho, w.interval), (None, None));
        assert_eq!(spearman_within_groups(&[1.0], &[1.0, 2.0], &[0]), None);
        assert_eq!(
            spearman_within_groups(&[f64::NAN, 1.0], &[1.0, 2.0], &[0, 0]),
            None
        );
    }

    // --- Krippendorff's alpha ---

    const M: f64 = f64::NAN;

    /// Rows of scores with NaN standing for a missing score.
    fn coded(rows: &[&[f64]]) -> Vec<Vec<Option<f64>>> {
        rows.iter()
            .map(|row| row.iter().map(|&x| (!x.is_nan()).then_some(x)).collect())
            .collect()
    }

    /// Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 coders,
    /// 12 units, missing values.
    fn paper() -> Vec<Vec<Option<f64>>> {
        coded(&[
            &[1., 2., 3., 3., 2., 1., 4., 1., 2., M, M, M],
            &[1., 2., 3., 3., 2., 2., 4., 1., 2., 5., M, 3.],
            &[M, 3., 3., 3., 2., 3., 4., 2., 2., 5., 1., M],
            &[1., 2., 3., 3., 2., 4., 4., 1., 2., 5., 1., M],
        ])
    }

    #[test]
    fn alpha_reproduces_the_published_worked_example() {
        let data = paper();
        // Published in the paper to three decimals.
        let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
        assert_eq!(round3(krippendorff_alpha_nominal(&data).unwrap()), 0.743);
        assert_eq!(round3(krippendorff_alpha_ordinal(&data).unwrap()), 0.815);
        assert_eq!(round3(krippendorff_alpha_interval(&data).unwrap()), 0.849);
        // krippendorff.alpha(reliability_data=paper, level_of_measurement=level), 0.9.0
        close(
            krippendorff_alpha_nominal(&data).unwrap(),
            0.743421052631579,
            1e-12,
        );
        close(
            krippendorff_alpha_ordinal(&data).unwrap(),
            0.8153875037548814,
            1e-12,
        );
        close(
            krippendorff_alpha_interval(&data).unwrap(),
            0.8491071428571428,
            1e-12,
        );
    }

    #[test]
    fn alpha_matches_the_krippendorff_package() {
        let wiki = coded(&[
            &[M, M, M, M, M, 3., 4., 1., 2., 1., 1., 3., 3., M, 3.],
            &[1., M, 2., 1., 3., 3., 4., 3., M, M, M, M, M, M, M],
            &[M, M, 2., 1., 3., 4., 4., M, 2., 1., 1., 3., 3., M, 4.],
        ]);
        // 7 appears only in a unit scored once: not pairable, it must not count.
        let lonely = coded(&[
            &[1., 2., 3., 3., 7., 4.],
            &[1., 3., 3., M, M, 4.],
            &[2., 2., 3., 4., M, M],
        ]);
        // Three judge replicates scoring ten conversations 1..5, two scores missing.
        let judges = coded(&[
            &[4., 5., 3., 4., 2., 5., 4., 3., 1., 4.],
            &[4., 4., 3., 5., 2., 5., M, 3., 2., 4.],
            &[5., 5., 2., 4., 1., M, 4., 3., 1., 3.],
        ]);
        // krippendorff.alpha(reliability_data=data, level_of_measurement=level), 0.9.0:
        // (data, nominal, ordinal, interval)
        let cases = [
            (
                wiki,
                0.691358024691358,
                0.8067214199413153,
                0.8108448928121059,
            ),
            (
                lonely,
                0.4098360655737706,
                0.7892078071182549,
                0.7831325301204819,
            ),
            (
                judges,
                0.37623762376237624,
                0.8465527950310558,
                0.8489208633093526,
            ),
        ];
        for (data, nominal, ordinal, interval) in cases {
            close(krippendorff_alpha_nominal(&data).unwrap(), nominal, 1e-12);
            close(krippendorff_alpha_ordinal(&data).unwrap(), ordinal, 1e-12);
            close(krippendorff_alpha_interval(&data).unwrap(), interval, 1e-12);
        }
    }

    #[test]
    fn ordinal_alpha_depends_only_on_the_order_of_the_scores() {
        let stretched: Vec<Vec<Option<f64>>> = paper()
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|x| x.map(|v| v * v * v + 10.0))
                    .collect()
            })
            .collect();
        close(
            krippendorff_alpha_ordinal(&stretched).unwrap(),
            krippendorff_alpha_ordinal(&paper()).unwrap(),
            1e-12,
        );
    }

    #[test]
    fn perfect_agreement_is_one() {
        let data = coded(&[&[1., 2., 3., 4.], &[1., 2., 3., 4.], &[1., 2., M, 4.]]);
        assert_eq!(krippendorff_alpha_nominal(&data), Some(1.0));
        assert_eq!(krippendorff_alpha_ordinal(&data), Some(1.0));
        assert_eq!(krippendorff_alpha_interval(&data), Some(1.0));
    }

    #[test]
    fn alpha_bootstrap_resamples_units_and_reports_what_it_rests_on() {
        let boot = Bootstrap::default();
        let data = paper();
        let e = krippendorff_alpha_ordinal_bootstrap(&data, &boot).unwrap();
        // The point estimate is the published one; 11 of 12 units are pairable (unit 12 has
        // one score), holding 40 values (the paper's n = 40).
        close(e.alpha, 0.8153875037548814, 1e-12);
        assert_eq!((e.units, e.values), (11, 40));
        let i = e.interval.unwrap();
        assert!(i.lo < e.alpha && e.alpha <= i.hi, "{i:?}");
        assert!(i.hi <= 1.0 && i.lo > -1.0, "{i:?}");
        // Seeded: the same interval every time; another seed, another interval.
        assert_eq!(
            krippendorff_alpha_ordinal_bootstrap(&data, &boot).unwrap(),
            e
        );
        let other = Bootstrap { seed: 9, ..boot };
        assert_ne!(
            krippendorff_alpha_ordinal_bootstrap(&data, &other)
                .unwrap()
                .interval,
            e.interval
        );
        // Each resample is α over units drawn with replacement: checked the obvious way for
        // the first resample.
        let units = pairable_units(&data).unwrap();
        let mut drawn = Vec::new();
        Rng::stream(boot.seed, 0).indices(units.len() as u32, units.len(), |i| {
            drawn.push(units[i].clone())
        });
        let columns = drawn.len();
        let rows: Vec<Vec<Option<f64>>> = (0..4)
            .map(|r| (0..columns).map(|u| drawn[u].get(r).copied()).collect())
            .collect();
        close(
            ordinal_alpha_of_units(&drawn).unwrap(),
            krippendorff_alpha_ordinal(&rows).unwrap(),
            1e-12,
        );
        // Through unit patterns (how the bootstrap computes), the same α as directly.
        let patterns = UnitPatterns::of(&units);
        for r in 0..20 {
            let mut draws = vec![0u32; patterns.counts.len()];
            let mut drawn: Vec<Vec<f64>> = Vec::new();
            Rng::stream(boot.seed, r).indices(units.len() as u32, units.len(), |i| {
                draws[patterns.of_unit[i]] += 1;
                drawn.push(units[i].clone());
            });
            match (
                patterns.ordinal_alpha(&draws),
                ordinal_alpha_of_units(&drawn),
            ) {
                (Some(a), Some(b)) => close(a, b, 1e-12),
                (a, b) => assert_eq!(a.is_none(), b.is_none(), "{a:?} {b:?}"),
            }
        }
        let every = {
            let mut d = vec![0u32; patterns.counts.len()];
            for &p in &patterns.of_unit {
                d[p] += 1;
            }
            d
        };
        close(
            patterns.ordinal_alpha(&every).unwrap(),
            0.8153875037548814,
            1e-12,
        );
        // Perfect agreement with variation: α = 1 and the interval is [1, 1].
        let perfect = coded(&[&[1., 2., 3., 4., 5., 1., 2.], &[1., 2., 3., 4., 5., 1., 2.]]);
        let e = krippendorff_alpha_ordinal_bootstrap(&perfect, &boot).unwrap();
        assert_eq!(e.alpha, 1.0);
        assert_eq!(e.interval.map(|i| (i.lo, i.hi)), Some((1.0, 1.0)));
        // Two units only: resamples often hold one value twice and no variation.
        let tiny = coded(&[&[1., 5.], &[1., 4.]]);
        let e = krippendorff_alpha_ordinal_bootstrap(&tiny, &boot).unwrap();
        assert_eq!(e.units, 2);
        assert!(e.interval.is_none());
        // More units agreeing the same way: a narrower interval.
        let wide = |k: usize| {
            let a: Vec<f64> = (0..k).map(|i| (i % 5) as f64 + 1.0).collect();
            let b: Vec<f64> = a
                .iter()
                .enumerate()
                .map(|(i, x)| if i % 4 == 0 { (x % 5.0) + 1.0 } else { *x })
                .collect();
            let i = krippendorff_alpha_ordinal_bootstrap(&coded(&[&a, &b]), &boot)
                .unwrap()
                .interval
                .unwrap();
            i.hi - i.lo
        };
        assert!(wide(400) < wide(40), "{} vs {}", wide(400), wide(40));
    }

    #[test]
    fn spearman_bootstrap_resamples_pairs() {
        let boot = Bootstrap::default();
        // A monotone relation: every resample with variation has ρ = 1.
        let x: Vec<f64> = (0..30).map(f64::from).collect();
        let y: Vec<f64> = x.iter().map(|v| v * v).collect();
        let i = bootstrap_spearman(&x, &y, &boot).unwrap();
        assert_eq!((i.lo, i.hi), (1.0, 1.0));
        // A noisy positive relation: the interval holds ρ, is seeded, and narrows with n.
        let noisy = |n: usize| -> (Vec<f64>, Vec<f64>) {
            let x: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let y: Vec<f64> = (0..n).map(|i| (i % 7) as f64 + i as f64 / 10.0).collect();
            (x, y)
        };
        let (x, y) = noisy(60);
        let rho = spearman(&x, &y).unwrap();
        let i = bootstrap_spearman(&x, &y, &boot).unwrap();
        assert!(i.lo <= rho && rho <= i.hi, "{rho} {i:?}");
        assert_eq!(bootstrap_spearman(&x, &y, &boot), Some(i));
        let (x4, y4) = noisy(600);
        let wide = bootstrap_spearman(&x4, &y4, &boot).unwrap();
        assert!(wide.hi - wide.lo < i.hi - i.lo);
        // Each resample by counts gives the ρ of ranking its drawn pairs the obvious way, on
        // data with many ties.
        let tx: Vec<f64> = (0..60).map(|i| f64::from(i % 5)).collect();
        let ty: Vec<f64> = (0..60).map(|i| f64::from((i * 7) % 4)).collect();
        let (gx, gy) = (TieGroups::new(&tx), TieGroups::new(&ty));
        let (mut rx, mut ry) = (vec![0.0; 60], vec![0.0; 60]);
        for r in 0..50 {
            let mut drawn = Vec::new();
            Rng::stream(boot.seed, r).indices(60, 60, |k| drawn.push(k));
            let ox: Vec<f64> = drawn.iter().map(|&k| tx[k]).collect();
            let oy: Vec<f64> = drawn.iter().map(|&k| ty[k]).collect();
            let mut counts = vec![0u32; 60];
            for &k in &drawn {
                counts[k] += 1;
            }
            let by_counts = resampled_spearman(&gx, &gy, &counts, &mut rx, &mut ry);
            match (spearman(&ox, &oy), by_counts) {
                (Some(a), Some(b)) => assert!((a - b).abs() < 1e-12, "resample {r}: {a} vs {b}"),
                (a, b) => assert_eq!(a, b, "resample {r}"),
            }
        }
        // Too few pairs, or a constant side: no interval.
        assert_eq!(bootstrap_spearman(&[1.0, 2.0], &[1.0, 2.0], &boot), None);
        assert_eq!(bootstrap_spearman(&x, &vec![1.0; 60], &boot), None);
    }

    #[test]
    fn alpha_without_pairable_values_or_variation_is_none() {
        let no_pairs = coded(&[&[1., M], &[M, 2.]]);
        let one_value = coded(&[&[3., 3.], &[3., 3.]]);
        let empty: Vec<Vec<Option<f64>>> = vec![];
        let ragged = vec![vec![Some(1.0), Some(2.0)], vec![Some(1.0)]];
        let nan_score = vec![vec![Some(1.0), Some(2.0)], vec![Some(f64::NAN), Some(2.0)]];
        for data in [no_pairs, one_value, empty, ragged, nan_score] {
            assert_eq!(krippendorff_alpha_nominal(&data), None, "{data:?}");
            assert_eq!(krippendorff_alpha_ordinal(&data), None, "{data:?}");
            assert_eq!(krippendorff_alpha_interval(&data), None, "{data:?}");
        }
    }

    // --- Interval ---

    #[test]
    fn interval_predicates() {
        let i = Interval { lo: -1.0, hi: 2.0 };
        assert!(i.contains(-1.0) && i.contains(2.0) && !i.contains(2.5));
        assert!(!i.excludes_zero());
        assert!(Interval { lo: 0.5, hi: 2.0 }.excludes_zero());
        assert!(Interval { lo: -3.0, hi: -0.1 }.excludes_zero());
        assert!(!Interval { lo: 0.0, hi: 1.0 }.excludes_zero());
        assert!(i.overlaps(&Interval { lo: 2.0, hi: 3.0 }));
        assert!(!i.overlaps(&Interval { lo: 2.1, hi: 3.0 }));
    }
}
