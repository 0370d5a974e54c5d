//! When a difference is established: the inference behind every claim the report makes.
//! Pure functions, std only; each rule is shown to hold by the calibration simulation
//! ([`super::calibration`], `cargo bench --bench calibration`) and documented in
//! `docs/metrics.md` ("Claims").
//!
//! - **Comparisons are paired and clustered.** Two cells are compared on the (scenario,
//!   repeat) slots both hold; slots of one scenario form a cluster, because conversations
//!   that share a scenario are not independent (Miller 2024, "Adding Error Bars to Evals",
//!   §2.2; Davison & Hinkley 1997, §3.8).
//! - **Means** (task success, a judge score, a pairwise verdict): the exact cluster
//!   sign-flip test of the mean paired difference (valid at any n: two scenarios give at best
//!   p = 0.5, fifteen that agree 6·10⁻⁵); the interval is mean ± t_{C−1} · the
//!   cluster-robust (CR1) standard error, C the scenarios holding pairs.
//! - **Latency percentiles**: the log of the ratio of the two percentiles over the pairs, a
//!   Wald test with Student's t on C − 1 degrees of freedom and the standard error of a
//!   cluster bootstrap (whole scenarios drawn with replacement), counted with
//!   multiplicities, never copied. When every resample gives the same ratio the p-value is
//!   the exact sign test over scenarios instead: no spread is no evidence of precision.
//! - **Pooled runs** are a second, crossed cluster level (a run's conditions are shared by
//!   its conversations): two-way cluster-robust variances (Cameron, Gelbach & Miller 2011),
//!   t on min(scenarios, runs) − 1 degrees of freedom, and a p-value that must pass both the
//!   sign-flip test over scenarios and the two-way t test.
//! - **Too few to compare.** Below a minimum number of pairs per statistic ([`min_pairs`]),
//!   taken from the calibration table, nothing is established, whatever the p-value.
//! - **Families.** The comparisons of one headline family (every pair of providers of a
//!   model label for a latency percentile; every pair of cells in a quality ranking; every
//!   candidate against one baseline in pairwise judging) are adjusted together by Holm's
//!   step-down method (Holm 1979), which controls the family-wise error rate at 5 %.

use super::{Interval, Rng, all_finite, lerp, rank_position};
use rayon::prelude::*;

/// The family-wise error rate every headline family is held to.
pub const FAMILY_ALPHA: f64 = 0.05;

/// Resamples of a clustered bootstrap standard error. The relative Monte-Carlo error of a
/// standard deviation from B resamples is about 1/√(2B): 2.5 % at 800, so an interval's
/// half-width is stable to about ±2.5 % (the seed is fixed per comparison, so it does not
/// move between runs either).
pub const SE_RESAMPLES: usize = 800;

/// The fewest degrees of freedom (scenarios − 1) a t interval is printed from: with one,
/// t's 97.5 % point is 12.7 and the interval bounds nothing a reader can use.
pub const MIN_DF: usize = 2;

/// What a comparison compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Statistic {
    /// Ratio of conversation-latency p50s over the paired slots (tested as its log).
    LatencyP50,
    /// Ratio of conversation-latency p95s over the paired slots (tested as its log).
    LatencyP95,
    /// Difference of means of a per-conversation score (task success 0/1, a judge score,
    /// a pairwise net verdict) over the paired slots.
    Mean,
}

impl Statistic {
    /// Whether a higher value is better: quality yes, latency no.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Statistic::Mean)
    }

    /// The percentile compared, for the latency statistics.
    pub fn percentile(self) -> Option<f64> {
        match self {
            Statistic::LatencyP50 => Some(50.0),
            Statistic::LatencyP95 => Some(95.0),
            Statistic::Mean => None,
        }
    }
}

/// The fewest paired slots from which a difference of `stat` can be established, from the
/// calibration table (BENCHMARKS.md, "Calibration"): with them the false-claim rate stays
/// within 5 % and the comparison intervals cover about 93 % or more under every simulated
/// truth, including identical providers with heavy-tailed (lognormal σ = 1) noise and
/// scenario effects. p95 needs more: the cluster-bootstrap standard error of a p95 from
/// fewer than 40 pairs rests on one or two values per resample.
pub fn min_pairs(stat: Statistic) -> usize {
    match stat {
        Statistic::LatencyP50 => 10,
        Statistic::LatencyP95 => 40,
        Statistic::Mean => 10,
    }
}

/// Paired values of two cells: `a[i]` and `b[i]` belong to the same slot, in scenario
/// `cluster[i]` (any labels; equal labels are one cluster) and, when several runs are
/// pooled, run `run[i]` (empty: one run). Runs are a second, crossed cluster level: a
/// run's conditions (a provider's load or routing that hour) are shared by every
/// conversation of the run, whatever its scenario.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairedSample {
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub cluster: Vec<u32>,
    pub run: Vec<u32>,
}

impl PairedSample {
    pub fn len(&self) -> usize {
        self.a.len()
    }

    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    fn valid(&self) -> bool {
        !self.a.is_empty()
            && self.a.len() == self.b.len()
            && self.a.len() == self.cluster.len()
            && (self.run.is_empty() || self.run.len() == self.a.len())
            && all_finite(&self.a)
            && all_finite(&self.b)
            && u32::try_from(self.a.len()).is_ok()
    }
}

/// One paired comparison, before its family's adjustment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Test {
    /// Pairs.
    pub n: usize,
    /// Clusters (scenarios) holding pairs.
    pub clusters: usize,
    /// Runs holding pairs: 1 for one run; from 2, runs are a second cluster level.
    pub runs: usize,
    /// The statistic of each side over the pairs.
    pub a: f64,
    pub b: f64,
    /// On the test's scale: a − b for a mean, ln(a / b) for a latency percentile.
    pub estimate: f64,
    /// Cluster-robust standard error of the estimate; 0 when nothing varies.
    pub se: f64,
    /// Degrees of freedom of the t reference: clusters − 1, or with pooled runs
    /// min(scenarios, runs) − 1 (Cameron, Gelbach & Miller 2011).
    pub df: usize,
    /// Two-sided p-value, unadjusted: the cluster sign-flip test for a mean; for a
    /// percentile the Wald t test, or the sign test over clusters when `se` is 0. With
    /// pooled runs, the larger of that and the two-way Wald t test's.
    pub p: f64,
}

impl Test {
    /// The interval estimate ± t·se (on the test's scale) at the two-sided confidence
    /// `level`; `None` when there is no spread to bound (se 0) or too few degrees of
    /// freedom.
    pub fn interval(&self, level: f64) -> Option<Interval> {
        t_interval(self.estimate, self.se, self.df + 1, level)
    }
}

/// estimate ± t_{C−1} · se at the two-sided confidence `level`: the one shape of every
/// interval of a mean, a ratio or a comparison here. `None` without spread (se 0) or with
/// fewer than [`MIN_DF`] degrees of freedom.
fn t_interval(estimate: f64, se: f64, clusters: usize, level: f64) -> Option<Interval> {
    let df = clusters.checked_sub(1)?;
    if !(se > 0.0 && se.is_finite()) || df < MIN_DF {
        return None;
    }
    let t = student_t_quantile(1.0 - (1.0 - level) / 2.0, df as f64)?;
    Some(Interval {
        lo: estimate - t * se,
        hi: estimate + t * se,
    })
}

/// Tests a − b for `stat` over the paired slots. `seed` seeds the cluster bootstrap of a
/// percentile (derive it from the two cells with [`seed_for`], so comparisons do not share
/// resamples). `None` for invalid input (empty, unequal lengths, a value not finite) or
/// fewer than 2 clusters (no degree of freedom).
pub fn paired_test(sample: &PairedSample, stat: Statistic, seed: u64) -> Option<Test> {
    if !sample.valid() {
        return None;
    }
    let clusters = Clusters::of(&sample.cluster);
    let c = clusters.count();
    if c < 2 {
        return None;
    }
    let runs = Runs::of(sample, &clusters);
    let (a, b, estimate, se, p) = match stat.percentile() {
        None => {
            let a = super::mean(&sample.a)?;
            let b = super::mean(&sample.b)?;
            let d: Vec<f64> = sample.a.iter().zip(&sample.b).map(|(x, y)| x - y).collect();
            let se = match &runs {
                None => cluster_robust_se(&d, &clusters)?,
                Some(r) => r.two_way_se(&d, &clusters)?,
            };
            let p = sign_flip_p(&d, &clusters, seed);
            (a, b, a - b, se, p)
        }
        Some(q) => {
            let p = q / 100.0;
            // Sorted once for both: the resamples over scenarios and the sign patterns.
            let scenarios = ScenarioSides::new(sample, &clusters);
            let (a, b, se) =
                clustered_log_ratio_se(sample, &clusters, &scenarios, runs.as_ref(), p, seed)?;
            let flip = percentile_flip_p(&scenarios, sample.len(), p, seed)?;
            (a, b, (a / b).ln(), se, flip)
        }
    };
    let h = runs.as_ref().map_or(1, Runs::count);
    let df = match &runs {
        None => c - 1,
        Some(r) => c.min(r.count()) - 1,
    };
    // Pooled runs: the sign-flip test over scenarios cannot see a run's shared conditions,
    // so the claim must also pass the two-way Wald t test (an intersection of two tests:
    // the larger p).
    let p = match &runs {
        Some(_) if se > 0.0 => {
            p.max(student_t_two_sided_p(estimate / se, df as f64).unwrap_or(1.0))
        }
        Some(_) if estimate != 0.0 => {
            p.max(2.0 * 0.5f64.powi(i32::try_from(df + 1).unwrap_or(i32::MAX)))
        }
        _ => p,
    };
    Some(Test {
        n: sample.len(),
        clusters: c,
        runs: h,
        a,
        b,
        estimate,
        se,
        df,
        p: p.min(1.0),
    })
}

/// The runs of a paired sample that pools two or more, with each pair's (scenario, run)
/// combination: the second, crossed cluster level of [`paired_test`].
struct Runs {
    runs: Clusters,
    /// Pairs grouped by (scenario, run).
    both: Clusters,
    /// Per (scenario, run) group: its scenario's and its run's index in `clusters`/`runs`.
    parents: Vec<(usize, usize)>,
}

impl Runs {
    /// `None` for one run (or none given): the one-level rules apply.
    fn of(sample: &PairedSample, clusters: &Clusters) -> Option<Runs> {
        if sample.run.len() != sample.a.len() {
            return None;
        }
        let runs = Clusters::of(&sample.run);
        if runs.count() < 2 {
            return None;
        }
        let scenario_of = clusters.index_of(sample.len());
        let run_of = runs.index_of(sample.len());
        // One label per (scenario, run) combination, dense.
        let width = runs.count() as u64;
        let labels: Vec<u64> = (0..sample.len())
            .map(|i| scenario_of[i] as u64 * width + run_of[i] as u64)
            .collect();
        let mut dense: Vec<u64> = labels.clone();
        dense.sort_unstable();
        dense.dedup();
        let combined: Vec<u32> = labels
            .iter()
            .map(|l| u32::try_from(dense.partition_point(|x| x < l)).unwrap_or(u32::MAX))
            .collect();
        let both = Clusters::of(&combined);
        let parents = dense
            .iter()
            .map(|&l| ((l / width) as usize, (l % width) as usize))
            .collect();
        Some(Runs {
            runs,
            both,
            parents,
        })
    }

    fn count(&self) -> usize {
        self.runs.count()
    }

    /// The two-way cluster-robust standard error of the mean of `d` (Cameron, Gelbach &
    /// Miller 2011): V = V_scenario + V_run − V_(scenario ∩ run), each the CR1 variance of
    /// [`cluster_robust_se`], held at least at the larger one-way variance (the sum can fall
    /// below it, or below 0, in small samples; CGM §2.3 suggest this floor).
    fn two_way_se(&self, d: &[f64], clusters: &Clusters) -> Option<f64> {
        let g = cluster_robust_se(d, clusters)?;
        let h = cluster_robust_se(d, &self.runs)?;
        let gh = cluster_robust_se(d, &self.both).unwrap_or(0.0);
        let v = (g * g + h * h - gh * gh).max(g * g).max(h * h);
        Some(v.sqrt())
    }

    /// A resample's weight per (scenario, run) group from a multiplicity per scenario:
    /// every group of a scenario drawn k times, k times.
    fn spread_scenarios(&self, per_scenario: &[u32], out: &mut [u32]) {
        for (w, &(s, _)) in out.iter_mut().zip(&self.parents) {
            *w = per_scenario.get(s).copied().unwrap_or(0);
        }
    }

    /// The same from a multiplicity per run.
    fn spread_runs(&self, per_run: &[u32], out: &mut [u32]) {
        for (w, &(_, r)) in out.iter_mut().zip(&self.parents) {
            *w = per_run.get(r).copied().unwrap_or(0);
        }
    }
}

/// Sign patterns drawn when there are too many to enumerate them all.
const FLIPS: usize = 2_000;

/// Work (patterns × pairs) up to which every sign pattern is enumerated: the test is then
/// exact, not Monte Carlo.
const ENUMERATE_WORK: usize = 4_000_000;

/// The two-sided p-value of a cluster sign-flip (randomization) test (Fisher 1935;
/// Cameron, Gelbach & Miller 2008, wild cluster bootstrap with Rademacher weights). When the
/// two cells are alike, swapping their labels within a scenario changes nothing, so every
/// pattern of swaps is equally likely, whatever the distribution, its tails or the scenario
/// effects. `statistic(flip)` computes the statistic with the scenarios where `flip[k]` is
/// true swapped; p is the share of patterns whose |statistic| reaches the observed one: all
/// 2^C patterns when that is cheap (`work` is the cost of one pattern), else [`FLIPS`] seeded
/// draws counted as (1 + hits)/(1 + draws). Two scenarios give at best p = 0.5; fifteen that
/// agree, 6·10⁻⁵ (exactly) or 5·10⁻⁴ (drawn).
fn flip_p(
    clusters: usize,
    work: usize,
    seed: u64,
    mut statistic: impl FnMut(&[bool]) -> Option<f64>,
) -> Option<f64> {
    let observed = statistic(&vec![false; clusters])?.abs();
    // Values equal to the observed one up to rounding count as reaching it.
    let reach = observed * (1.0 - 1e-9) - 1e-12;
    let mut hits = 0usize;
    let mut failed = false;
    let drawn = flip_patterns(clusters, work, seed, |flip| match statistic(flip) {
        Some(x) => hits += usize::from(x.abs() >= reach),
        None => failed = true,
    });
    if failed {
        return None;
    }
    Some(flip_share(hits, drawn, clusters))
}

/// How the sign-flip patterns of [`flip_patterns`] were chosen: every one, or drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Patterns {
    /// All 2^C patterns (the identity among them).
    Every,
    /// [`FLIPS`] seeded draws (the observed pattern counted apart).
    Drawn,
}

/// Calls `f` with every sign-flip pattern of `clusters` scenarios when that is cheap
/// (`work` is the cost of one pattern), else with [`FLIPS`] seeded draws: the patterns
/// behind every sign-flip p-value and the interval that inverts it.
fn flip_patterns(clusters: usize, work: usize, seed: u64, mut f: impl FnMut(&[bool])) -> Patterns {
    let mut flip = vec![false; clusters];
    let enumerate = clusters < 31 && (1usize << clusters).saturating_mul(work) <= ENUMERATE_WORK;
    if enumerate {
        for mask in 0..(1u32 << clusters) {
            for (k, v) in flip.iter_mut().enumerate() {
                *v = mask >> k & 1 == 1;
            }
            f(&flip);
        }
        Patterns::Every
    } else {
        let mut rng = Rng::stream(seed ^ 0x666c_6970, 0);
        for _ in 0..FLIPS {
            for chunk in flip.chunks_mut(64) {
                let bits = rng.next_u64();
                for (k, v) in chunk.iter_mut().enumerate() {
                    *v = bits >> k & 1 == 1;
                }
            }
            f(&flip);
        }
        Patterns::Drawn
    }
}

/// The p-value from `hits` patterns reaching the observed statistic: their share of all
/// 2^C, or (1 + hits)/(1 + draws).
fn flip_share(hits: usize, patterns: Patterns, clusters: usize) -> f64 {
    match patterns {
        Patterns::Every => hits as f64 / (1u64 << clusters) as f64,
        Patterns::Drawn => (1 + hits) as f64 / (1 + FLIPS) as f64,
    }
}

/// The interval that inverts the sign-flip test of a mean paired difference: the
/// differences δ the test does not reject at `level` when it is run on d − δ (Hartigan
/// 1969; the randomization-test interval of Garthwaite 1996). A pattern's statistic is
/// linear in δ, Σₖ ±(Sₖ − nₖ·δ) = A − δ·B, so each pattern's (A, B) is computed once and
/// the p-value at any δ costs one pass over them; the ends are found by bisection from the
/// estimate (where p = 1) outwards. The interval therefore agrees with the test: it holds
/// 0 exactly when the test does not reject no difference (0 is used as a bracket when it
/// is rejected; when it is not, the interval is widened to reach it). `None` when the
/// test cannot reject any difference on a side (too few scenarios: 2/2^C above the level).
fn flip_interval(d: &[f64], clusters: &Clusters, seed: u64, level: f64) -> Option<Interval> {
    let c = clusters.count();
    let alpha = 1.0 - level;
    let sums: Vec<(f64, f64)> = (0..c)
        .map(|k| {
            let m = clusters.members(k);
            (m.iter().filter_map(|&i| d.get(i)).sum(), m.len() as f64)
        })
        .collect();
    let mut ab: Vec<(f64, f64)> = Vec::new();
    let patterns = flip_patterns(c, c, seed, |flip| {
        let (mut a, mut b) = (0.0, 0.0);
        for (&(s, n), &f) in sums.iter().zip(flip) {
            let sign = if f { -1.0 } else { 1.0 };
            a += sign * s;
            b += sign * n;
        }
        ab.push((a, b));
    });
    let (total, n): (f64, f64) = sums
        .iter()
        .fold((0.0, 0.0), |(a, b), &(s, m)| (a + s, b + m));
    if n == 0.0 {
        return None;
    }
    let estimate = total / n;
    let p = |delta: f64| {
        let observed = (total - delta * n).abs();
        let reach = observed * (1.0 - 1e-9) - 1e-12;
        let hits = ab
            .iter()
            .filter(|(a, b)| (a - delta * b).abs() >= reach)
            .count();
        flip_share(hits, patterns, c)
    };
    let rejects = |delta: f64| p(delta) <= alpha;
    let scale = d.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-12);
    let end = |dir: f64| -> Option<f64> {
        // A rejected difference on this side: no difference itself when the test rejects
        // it, else the first of steps doubling outwards from the estimate.
        let mut far = None;
        if (0.0 - estimate) * dir > 0.0 && rejects(0.0) {
            far = Some(0.0);
        }
        let mut step = scale / 64.0;
        while far.is_none() {
            let x = estimate + dir * step;
            if rejects(x) {
                far = Some(x);
            } else if step > 64.0 * scale {
                return None;
            }
            step *= 2.0;
        }
        let (mut inside, mut outside) = (estimate, far?);
        for _ in 0..60 {
            let mid = 0.5 * (inside + outside);
            if rejects(mid) {
                outside = mid;
            } else {
                inside = mid;
            }
        }
        Some(inside)
    };
    let (lo, hi) = (end(-1.0)?, end(1.0)?);
    // Not rejected, so no difference belongs with the differences the data allow.
    let (lo, hi) = if rejects(0.0) {
        (lo, hi)
    } else {
        (lo.min(0.0), hi.max(0.0))
    };
    Some(Interval { lo, hi })
}

/// The sign-flip p-value of the mean paired difference: the statistic is Σₖ ±Sₖ over the
/// scenarios' summed differences Sₖ.
fn sign_flip_p(d: &[f64], clusters: &Clusters, seed: u64) -> f64 {
    let sums: Vec<f64> = (0..clusters.count())
        .map(|k| clusters.members(k).iter().filter_map(|&i| d.get(i)).sum())
        .collect();
    let stat = |flip: &[bool]| {
        Some(
            sums.iter()
                .zip(flip)
                .map(|(s, &f)| if f { -s } else { *s })
                .sum::<f64>(),
        )
    };
    flip_p(sums.len(), sums.len(), seed, stat).unwrap_or(1.0)
}

/// The sign-flip p-value of the log ratio of the two cells' percentile p over the pairs: a
/// pattern swaps the two sides' values within the flipped scenarios. `sides` holds the
/// scenarios' lists of the `pairs` pairs.
fn percentile_flip_p(sides: &ScenarioSides, pairs: usize, p: f64, seed: u64) -> Option<f64> {
    let c = sides.a.len();
    // Side a takes b's list where a scenario is flipped; side b the other list.
    let mut b_from = vec![true; c];
    let ones = vec![1u32; c];
    // A pattern costs about C · log² n comparisons.
    let work = c * (usize::BITS - pairs.leading_zeros()).pow(2) as usize;
    flip_p(c, work, seed, |flip| {
        for (b, &f) in b_from.iter_mut().zip(flip) {
            *b = !f;
        }
        let x = sides.quantile(&ones, flip, p)?;
        let y = sides.quantile(&ones, &b_from, p)?;
        (x > 0.0 && y > 0.0).then(|| (x / y).ln())
    })
}

/// Each scenario's values of each side, sorted once, and every value of both sides sorted
/// together. A replicate — a cluster resample (a multiplicity per scenario) or a sign-flip
/// pattern (which side each scenario lends) — is then a multiset of whole scenario lists,
/// and any order statistic of it is found by binary search over the merged values, counting
/// at each candidate how many of the multiset's values lie at or below it: one binary search
/// per scenario. O(C · log² n) per replicate, where walking the pairs would be O(n): the
/// claims of a million-turn store cost milliseconds. Small samples walk instead.
struct ScenarioSides {
    /// Per scenario: side a's values sorted, side b's values sorted.
    a: Vec<Vec<f64>>,
    b: Vec<Vec<f64>>,
    /// Every value of both sides, sorted: the candidates for any order statistic.
    merged: Vec<f64>,
    /// The same values with their scenario and side (true: b), for small samples, where
    /// one walk over them is cheaper than the binary searches.
    entries: Vec<(f64, usize, bool)>,
}

/// Values (both sides) below which a replicate's order statistics are found by one walk
/// over them rather than by binary search: about where C · log² n comparisons cost as much
/// as n steps.
const WALK_BELOW: usize = 2_048;

impl ScenarioSides {
    fn new(sample: &PairedSample, clusters: &Clusters) -> ScenarioSides {
        let sorted = |values: &[f64], k: usize| {
            let mut v: Vec<f64> = clusters
                .members(k)
                .iter()
                .filter_map(|&i| values.get(i).copied())
                .collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let c = clusters.count();
        let a: Vec<Vec<f64>> = (0..c).map(|k| sorted(&sample.a, k)).collect();
        let b: Vec<Vec<f64>> = (0..c).map(|k| sorted(&sample.b, k)).collect();
        // The lists are sorted runs already: the sort merges them (the same values, so the
        // same order as sorting the sample's values).
        let mut merged: Vec<f64> = a.iter().chain(&b).flatten().copied().collect();
        merged.sort_by(f64::total_cmp);
        let mut entries = Vec::new();
        if merged.len() < WALK_BELOW {
            for k in 0..c {
                for &i in clusters.members(k) {
                    if let (Some(&x), Some(&y)) = (sample.a.get(i), sample.b.get(i)) {
                        entries.push((x, k, false));
                        entries.push((y, k, true));
                    }
                }
            }
            entries.sort_by(|x, y| x.0.total_cmp(&y.0));
        }
        ScenarioSides {
            a,
            b,
            merged,
            entries,
        }
    }

    /// The values at 0-based ranks `lower` ≤ `upper` of the multiset, by one walk over the
    /// entries (from the top for ranks in the upper half).
    fn walk(
        &self,
        weight: &[u32],
        from_b: &[bool],
        total: usize,
        lower: usize,
        upper: usize,
    ) -> (f64, f64) {
        let taken = |&(_, k, side): &(f64, usize, bool)| -> usize {
            let lends = from_b.get(k).copied().unwrap_or(false) == side;
            if lends {
                weight.get(k).copied().unwrap_or(0) as usize
            } else {
                0
            }
        };
        let (mut lo, mut hi) = (f64::NAN, f64::NAN);
        let mut seen = 0usize;
        if lower >= total / 2 {
            // Ranks from the top: the r-th from the bottom is the (total − 1 − r)-th from it.
            let (first, second) = (total - 1 - upper, total - 1 - lower);
            for e in self.entries.iter().rev() {
                seen += taken(e);
                if hi.is_nan() && first < seen {
                    hi = e.0;
                }
                if second < seen {
                    lo = e.0;
                    break;
                }
            }
        } else {
            for e in &self.entries {
                seen += taken(e);
                if lo.is_nan() && lower < seen {
                    lo = e.0;
                }
                if upper < seen {
                    hi = e.0;
                    break;
                }
            }
        }
        (lo, hi)
    }

    /// The list scenario k lends: side b's when `from_b[k]`, else side a's.
    fn list(&self, k: usize, from_b: &[bool]) -> &[f64] {
        let side = if from_b.get(k).copied().unwrap_or(false) {
            &self.b
        } else {
            &self.a
        };
        side.get(k).map_or(&[], Vec::as_slice)
    }

    /// How many values of the multiset (scenario k's list taken `weight[k]` times) are ≤ v.
    fn count_le(&self, weight: &[u32], from_b: &[bool], v: f64) -> usize {
        weight
            .iter()
            .enumerate()
            .filter(|(_, w)| **w > 0)
            .map(|(k, &w)| w as usize * self.list(k, from_b).partition_point(|x| *x <= v))
            .sum()
    }

    /// The value at 0-based rank r of the multiset: the smallest merged value with more
    /// than r of the multiset's values at or below it. A binary search over the merged
    /// values that counts each list only between the list's counts at the search's two
    /// bounds (the bounds only close in, so each count is within them): the same answer as
    /// counting over whole lists at every step, with a fraction of the comparisons.
    fn at_rank(&self, weight: &[u32], from_b: &[bool], r: usize) -> Option<f64> {
        /// A list taken: its values at or below the search's lower bound are `from`, at or
        /// below its upper bound `to`; `at` those at or below the value being tried.
        struct Taken<'s> {
            values: &'s [f64],
            weight: usize,
            from: usize,
            to: usize,
            at: usize,
        }
        let mut lists: Vec<Taken> = weight
            .iter()
            .enumerate()
            .filter(|(_, w)| **w > 0)
            .map(|(k, &w)| {
                let values = self.list(k, from_b);
                Taken {
                    values,
                    weight: w as usize,
                    from: 0,
                    to: values.len(),
                    at: 0,
                }
            })
            .collect();
        let (mut lo, mut hi) = (0, self.merged.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let v = self.merged.get(mid).copied()?;
            let mut count = 0;
            for l in &mut lists {
                let within = l.values.get(l.from..l.to).unwrap_or_default();
                l.at = l.from + within.partition_point(|x| *x <= v);
                count += l.weight * l.at;
            }
            let below = count <= r;
            for l in &mut lists {
                if below {
                    l.from = l.at;
                } else {
                    l.to = l.at;
                }
            }
            if below {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        self.merged.get(lo).copied()
    }

    /// The quantile p (NumPy's linear rule) of the multiset; `None` when it is empty.
    fn quantile(&self, weight: &[u32], from_b: &[bool], p: f64) -> Option<f64> {
        let total: usize = weight
            .iter()
            .enumerate()
            .map(|(k, &w)| w as usize * self.list(k, from_b).len())
            .sum();
        if total == 0 {
            return None;
        }
        let (lower, upper, t) = rank_position(total, p);
        if !self.entries.is_empty() {
            let (lo, hi) = self.walk(weight, from_b, total, lower, upper);
            return (lo.is_finite() && hi.is_finite()).then(|| lerp(lo, hi, t));
        }
        let lo = self.at_rank(weight, from_b, lower)?;
        let hi = if upper == lower || self.count_le(weight, from_b, lo) > upper {
            lo
        } else {
            // The next value of the multiset: the smallest value above `lo` in any list it
            // takes (upper is lower + 1).
            weight
                .iter()
                .enumerate()
                .filter(|(_, w)| **w > 0)
                .filter_map(|(k, _)| {
                    let list = self.list(k, from_b);
                    list.get(list.partition_point(|x| *x <= lo)).copied()
                })
                .fold(f64::INFINITY, f64::min)
        };
        hi.is_finite().then(|| lerp(lo, hi, t))
    }
}

/// A family's verdict on one of its tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// The two-sided confidence level of this test's interval: 1 − α/(m − r + 1) for its
    /// Holm rank r, held at the level of the first rank that failed for every rank after it
    /// (so an interval excludes 0 exactly when the test is established).
    pub level: f64,
    /// Holm-adjusted p-value.
    pub adjusted_p: f64,
    pub established: bool,
}

/// Holm's step-down adjustment of the family's p-values at family-wise level `alpha`, one
/// verdict per p in input order. `None` values (tests that could not be made, too few pairs)
/// count in the family's size m but are never established. Adjusted p-values as
/// `statsmodels.stats.multitest.multipletests(p, method="holm")`.
pub fn holm(ps: &[Option<f64>], alpha: f64) -> Vec<Verdict> {
    let m = ps.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| {
        let key = |k: usize| ps.get(k).copied().flatten().unwrap_or(f64::INFINITY);
        key(i).total_cmp(&key(j)).then(i.cmp(&j))
    });
    let mut out = vec![
        Verdict {
            level: 1.0 - alpha / m.max(1) as f64,
            adjusted_p: 1.0,
            established: false,
        };
        m
    ];
    let mut running = 0.0f64;
    let mut failed_at: Option<usize> = None;
    for (rank, &i) in order.iter().enumerate() {
        let divisor = (m - rank) as f64;
        let p = ps.get(i).copied().flatten();
        running = running.max(p.map_or(1.0, |p| (p * divisor).min(1.0)));
        let established = failed_at.is_none() && p.is_some_and(|p| p * divisor <= alpha);
        if !established && failed_at.is_none() {
            failed_at = Some(rank);
        }
        let level_rank = failed_at.map_or(rank, |s| s.min(rank));
        if let Some(v) = out.get_mut(i) {
            *v = Verdict {
                level: 1.0 - alpha / (m - level_rank) as f64,
                adjusted_p: running,
                established,
            };
        }
    }
    out
}

/// The leader of a family: the cell with the best figure (`None` figures left out; ties to
/// the first). Chosen from the data, so the family tests it against every other cell and the
/// calibration measures the family-wise error with that choice made.
pub fn leader(figures: &[Option<f64>], higher_is_better: bool) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, f) in figures.iter().enumerate() {
        let Some(v) = f.filter(|v| v.is_finite()) else {
            continue;
        };
        let better = best.is_none_or(|(_, b)| if higher_is_better { v > b } else { v < b });
        if better {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}

/// A seed for one comparison or cell, from the report's seed and a key naming it (the
/// cells and the statistic): FNV-1a of the key mixed into the seed, so two comparisons of
/// equal size never share resamples, and the same store always prints the same figures.
pub fn seed_for(seed: u64, key: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key.bytes() {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut s = seed ^ h;
    super::splitmix64(&mut s)
}

// ---------------------------------------------------------------------------------------------
// Clusters

/// Pair indices grouped by cluster.
struct Clusters {
    /// Members of each cluster, concatenated; cluster k is `members[starts[k]..starts[k+1]]`.
    members: Vec<usize>,
    starts: Vec<usize>,
}

impl Clusters {
    fn of(labels: &[u32]) -> Clusters {
        // By label, each label's pairs in their order (a stable sort; none when the labels
        // come in order, as a slot's pairs do).
        let mut order: Vec<usize> = (0..labels.len()).collect();
        if !labels.is_sorted() {
            order.sort_by_key(|&i| labels.get(i).copied().unwrap_or(0));
        }
        let mut starts = Vec::new();
        let mut previous = None;
        for (pos, &i) in order.iter().enumerate() {
            let label = labels.get(i).copied();
            if label != previous {
                starts.push(pos);
                previous = label;
            }
        }
        starts.push(order.len());
        Clusters {
            members: order,
            starts,
        }
    }

    fn count(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    fn members(&self, k: usize) -> &[usize] {
        match (self.starts.get(k), self.starts.get(k + 1)) {
            (Some(&s), Some(&e)) => self.members.get(s..e).unwrap_or_default(),
            _ => &[],
        }
    }

    /// Each of the `n` units' cluster index.
    fn index_of(&self, n: usize) -> Vec<usize> {
        let mut out = vec![0; n];
        for k in 0..self.count() {
            for &i in self.members(k) {
                if let Some(slot) = out.get_mut(i) {
                    *slot = k;
                }
            }
        }
        out
    }
}

/// The cluster-robust (CR1) standard error of the mean of `d`: with cluster sums of the
/// deviations from the mean, se² = C/(C − 1) · Σ_c (Σ_{i∈c} (dᵢ − d̄))² / n² (Cameron &
/// Miller 2015, "A Practitioner's Guide to Cluster-Robust Inference", eq. 11 without the
/// regression factor). With one pair per cluster it is the ordinary standard error s/√n.
fn cluster_robust_se(d: &[f64], clusters: &Clusters) -> Option<f64> {
    let n = d.len();
    let c = clusters.count();
    if n == 0 || c < 2 {
        return None;
    }
    let mean = super::mean(d)?;
    let mut sum = 0.0;
    for k in 0..c {
        let s: f64 = clusters
            .members(k)
            .iter()
            .filter_map(|&i| d.get(i))
            .map(|x| x - mean)
            .sum();
        sum += s * s;
    }
    let cf = c as f64;
    let se = (cf / (cf - 1.0) * sum / (n as f64 * n as f64)).sqrt();
    // Rounding leaves a tiny positive value where the scenarios do not vary.
    let scale = d.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    Some(if se > 1e-12 * scale.max(1e-300) {
        se
    } else {
        0.0
    })
}

/// The interval of a ratio of sums Σnum / Σden over units in clusters (unit i in cluster
/// `cluster[i]`): Σnum / Σden ± t_{C−1} · [`ratio_se`] at `level`. `None` where the ratio or
/// its standard error is not defined, without spread, or from fewer than 3 clusters.
pub fn ratio_interval(num: &[f64], den: &[f64], cluster: &[u32], level: f64) -> Option<Interval> {
    let total: f64 = den.iter().sum();
    let r = num.iter().sum::<f64>() / total;
    let se = ratio_se(num, den, cluster)?;
    t_interval(r, se, Clusters::of(cluster).count(), level)
}

/// The cluster-robust standard error of a ratio of sums Σnum / Σden over units in clusters,
/// by linearization: the residuals numᵢ − r·denᵢ, summed per cluster, as
/// [`cluster_robust_se`] (Cochran 1977, §6.4; Cameron & Miller 2015). `None` without two
/// clusters or with Σden = 0.
fn ratio_se(num: &[f64], den: &[f64], cluster: &[u32]) -> Option<f64> {
    if num.len() != den.len() || num.len() != cluster.len() || num.is_empty() {
        return None;
    }
    let total: f64 = den.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    let r = num.iter().sum::<f64>() / total;
    let clusters = Clusters::of(cluster);
    let c = clusters.count();
    if c < 2 {
        return None;
    }
    let mut sum = 0.0;
    for k in 0..c {
        let s: f64 = clusters
            .members(k)
            .iter()
            .filter_map(|&i| Some(num.get(i)? - r * den.get(i)?))
            .sum();
        sum += s * s;
    }
    let cf = c as f64;
    Some((cf / (cf - 1.0) * sum).sqrt() / total)
}

/// The percentile of each side over the pairs, and the standard deviation of the log of
/// their ratio over [`SE_RESAMPLES`] cluster resamples (whole scenarios drawn with
/// replacement, each with all its pairs: the "pairs cluster bootstrap" of Cameron, Gelbach &
/// Miller 2008; drawing the pairs within each drawn scenario again, the two-stage scheme,
/// counts the within-scenario variation twice, Davison & Hinkley 1997 §3.8). The ratio, not the difference: a scenario effect
/// that scales both cells alike cancels in it. A resample is a multiplicity per scenario;
/// each side's percentile is found by [`ScenarioSides`] without copying a value. `None` when
/// a percentile is not positive. `scenarios`: the sample's lists by scenario.
fn clustered_log_ratio_se(
    sample: &PairedSample,
    clusters: &Clusters,
    scenarios: &ScenarioSides,
    runs: Option<&Runs>,
    p: f64,
    seed: u64,
) -> Option<(f64, f64, f64)> {
    // With pooled runs the lists are per (scenario, run) group, so that one resample can
    // weigh whole scenarios, whole runs or single groups.
    let groups = runs.map_or(clusters, |r| &r.both);
    let by_group;
    let sides = match runs {
        None => scenarios,
        Some(r) => {
            by_group = ScenarioSides::new(sample, &r.both);
            &by_group
        }
    };
    let g = groups.count();
    let (from_a, from_b) = (vec![false; g], vec![true; g]);
    let a = sides.quantile(&vec![1u32; g], &from_a, p)?;
    let b = sides.quantile(&vec![1u32; g], &from_b, p)?;
    if !(a > 0.0 && b > 0.0) {
        return None;
    }
    let spread = |level: Level| -> Option<f64> {
        let units = match level {
            Level::Scenario => clusters.count(),
            Level::Run => runs.map_or(0, Runs::count),
            Level::Both => g,
        };
        let n = u32::try_from(units).ok()?;
        let mut drawn = vec![0u32; units];
        let mut weight = vec![0u32; g];
        let mut logs = Vec::with_capacity(SE_RESAMPLES);
        for r in 0..SE_RESAMPLES {
            drawn.fill(0);
            Rng::stream(seed ^ level.salt(), r).indices(n, units, |k| super::bump(&mut drawn, k));
            match (level, runs) {
                (Level::Scenario, Some(runs)) => runs.spread_scenarios(&drawn, &mut weight),
                (Level::Run, Some(runs)) => runs.spread_runs(&drawn, &mut weight),
                _ => weight.copy_from_slice(&drawn),
            }
            let (Some(x), Some(y)) = (
                sides.quantile(&weight, &from_a, p),
                sides.quantile(&weight, &from_b, p),
            ) else {
                continue;
            };
            if x > 0.0 && y > 0.0 {
                logs.push((x / y).ln());
            }
        }
        let sd = standard_deviation(&logs)?;
        // Rounding can leave a tiny spread where every resample gives the same ratio.
        Some(if sd < 1e-12 { 0.0 } else { sd })
    };
    let sd = match runs {
        None => spread(Level::Scenario)?,
        // Cameron, Gelbach & Miller (2011) with bootstrap variances: each one-way cluster
        // bootstrap, less the bootstrap over (scenario, run) groups, held at least at the
        // larger one-way variance.
        Some(_) => {
            let (vs, vr, vb) = (
                spread(Level::Scenario)?.powi(2),
                spread(Level::Run)?.powi(2),
                spread(Level::Both)?.powi(2),
            );
            (vs + vr - vb).max(vs).max(vr).sqrt()
        }
    };
    Some((a, b, sd))
}

/// The unit a cluster bootstrap draws: a scenario, a run, or a (scenario, run) group.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Level {
    Scenario,
    Run,
    Both,
}

impl Level {
    /// Separate resample streams per level; the scenario level keeps the one-run stream.
    fn salt(self) -> u64 {
        match self {
            Level::Scenario => 0,
            Level::Run => 0x7275_6e73,
            Level::Both => 0x626f_7468,
        }
    }
}

/// The sample standard deviation (n − 1); `None` below two values.
fn standard_deviation(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let mean = super::mean(values)?;
    let ss: f64 = values.iter().map(|x| (x - mean) * (x - mean)).sum();
    let sd = (ss / (values.len() - 1) as f64).sqrt();
    sd.is_finite().then_some(sd)
}

// ---------------------------------------------------------------------------------------------
// Order-statistic intervals for percentiles

/// The distribution-free interval for the q-th percentile (q in (0, 100)) of the population a
/// sample of n values came from, at two-sided confidence `level`: the order statistics
/// [x₍ₗ₎, x₍ᵤ₎] (1-based ranks) with P(l ≤ B < u) ≥ level, where B ~ Binomial(n, q/100) counts
/// the values below the true percentile (Hahn & Meeker, *Statistical Intervals*, 2nd ed.,
/// §5.2). Of the rank pairs that reach the level, the one with the fewest ranks between them,
/// then the most central. Exists only from a minimal n (p50: 6 values; p95: 59; p99: 299);
/// `None` below it, for an invalid q or level, or when `sorted` is not an ascending, finite
/// sample. Its coverage holds for any continuous distribution, whatever n.
pub fn quantile_interval(sorted: &[f64], q: f64, level: f64) -> Option<Interval> {
    let (l, u) = quantile_interval_ranks(sorted.len(), q / 100.0, level)?;
    if !super::is_sorted_finite(sorted) {
        return None;
    }
    Some(Interval {
        lo: *sorted.get(l - 1)?,
        hi: *sorted.get(u - 1)?,
    })
}

/// The 1-based ranks (l, u) of [`quantile_interval`] for n values and the quantile p.
pub fn quantile_interval_ranks(n: usize, p: f64, level: f64) -> Option<(usize, usize)> {
    if n == 0 || !(p > 0.0 && p < 1.0) || !(level > 0.0 && level < 1.0) {
        return None;
    }
    // cdf[k] = P(B ≤ k − 1) for k = 0..=n+1, so P(l ≤ B < u) = cdf[u] − cdf[l].
    let pmf = binomial_pmf(n, p);
    let mut cdf = Vec::with_capacity(n + 2);
    cdf.push(0.0);
    let mut acc = 0.0;
    for x in &pmf {
        acc += x;
        cdf.push(acc.min(1.0));
    }
    let centre = p * n as f64;
    let mut best: Option<(usize, usize)> = None;
    // For each l the smallest u reaching the level; it never moves back as l grows (the
    // cumulative probabilities are monotone), so one pass of two pointers: O(n).
    let mut u = 2;
    for l in 1..n {
        u = u.max(l + 1);
        while u <= n && cdf[u] - cdf[l] < level - 1e-12 {
            u += 1;
        }
        if u > n {
            break;
        }
        let better = match best {
            None => true,
            Some((bl, bu)) => {
                let (w, bw) = (u - l, bu - bl);
                let off = ((l + u) as f64 / 2.0 - centre).abs();
                let boff = ((bl + bu) as f64 / 2.0 - centre).abs();
                w < bw || (w == bw && off < boff)
            }
        };
        if better {
            best = Some((l, u));
        }
    }
    best
}

/// P(B = k) for k = 0..=n, B ~ Binomial(n, p), 0 < p < 1, computed in logs.
fn binomial_pmf(n: usize, p: f64) -> Vec<f64> {
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut ln_choose = 0.0;
    (0..=n)
        .map(|k| {
            if k > 0 {
                ln_choose += ((n - k + 1) as f64).ln() - (k as f64).ln();
            }
            (ln_choose + k as f64 * lp + (n - k) as f64 * lq).exp()
        })
        .collect()
}

/// The smallest n for which [`quantile_interval`] exists at `level` (what the docs quote:
/// 6 for p50, 59 for p95, 299 for p99).
#[cfg(test)]
fn quantile_interval_min_n(q: f64, level: f64) -> Option<usize> {
    (1..100_000).find(|&n| quantile_interval_ranks(n, q / 100.0, level).is_some())
}

// ---------------------------------------------------------------------------------------------
// Student's t

/// The two-sided p-value of t with `df` degrees of freedom: P(|T| ≥ |t|) =
/// I_{df/(df+t²)}(df/2, ½), as `2 * scipy.stats.t.sf(abs(t), df)`.
pub fn student_t_two_sided_p(t: f64, df: f64) -> Option<f64> {
    if df.is_nan() || df <= 0.0 || t.is_nan() {
        return None;
    }
    if t.is_infinite() {
        return Some(0.0);
    }
    let x = df / (df + t * t);
    regularized_incomplete_beta(x, df / 2.0, 0.5)
}

/// The quantile `prob` in (0, 1) of Student's t with `df` degrees of freedom, as
/// `scipy.stats.t.ppf(prob, df)`, by bisection on [`student_t_two_sided_p`] to 1e-12.
pub fn student_t_quantile(prob: f64, df: f64) -> Option<f64> {
    let valid = prob > 0.0 && prob < 1.0 && df > 0.0;
    if !valid {
        return None;
    }
    if prob == 0.5 {
        return Some(0.0);
    }
    let upper = prob > 0.5;
    // For t ≥ 0: P(T > t) = p2/2. Find t with that upper tail.
    let tail = if upper { 1.0 - prob } else { prob };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while student_t_two_sided_p(hi, df)? / 2.0 > tail {
        hi *= 2.0;
        if hi > 1e12 {
            return None;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if student_t_two_sided_p(mid, df)? / 2.0 > tail {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-13 * hi.max(1.0) {
            break;
        }
    }
    let t = 0.5 * (lo + hi);
    Some(if upper { t } else { -t })
}

/// The regularized incomplete beta function I_x(a, b) by its continued fraction (Lentz's
/// method; Press et al., *Numerical Recipes*, 3rd ed., §6.4), using the symmetry
/// I_x(a, b) = 1 − I_{1−x}(b, a) where the fraction converges slowly.
fn regularized_incomplete_beta(x: f64, a: f64, b: f64) -> Option<f64> {
    let valid = (0.0..=1.0).contains(&x) && a > 0.0 && b > 0.0;
    if !valid {
        return None;
    }
    if x == 0.0 || x == 1.0 {
        return Some(x);
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        Some(front * beta_fraction(x, a, b)? / a)
    } else {
        Some(1.0 - front * beta_fraction(1.0 - x, b, a)? / b)
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> Option<f64> {
    const TINY: f64 = 1e-300;
    let floor = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / floor(1.0 - qab * x / qap);
    let mut h = d;
    // One step of the modified Lentz recurrence for the coefficient `aa`: the factor by
    // which it moves the fraction.
    let mut step = |aa: f64| {
        d = 1.0 / floor(1.0 + aa * d);
        c = floor(1.0 + aa / c);
        d * c
    };
    for m in 1..10_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        h *= step(m * (b - m) * x / ((qam + m2) * (a + m2)));
        let delta = step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)));
        h *= delta;
        if (delta - 1.0).abs() < 1e-15 {
            return Some(h);
        }
    }
    None
}

/// ln Γ(x) for x > 0 by the Lanczos approximation (g = 7, n = 9; relative error ~1e-15).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEF[0];
    for (i, c) in COEF.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

// ---------------------------------------------------------------------------------------------
// A family of claims

/// One comparison of a family, as the report states it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    /// `None` when no test could be made (fewer than 2 scenarios hold pairs).
    pub test: Option<Test>,
    /// Pairs, whether or not a test could be made.
    pub n: usize,
    /// The pairs needed ([`min_pairs`]); below it nothing is established.
    pub needed: usize,
    pub verdict: Verdict,
    /// The interval at the verdict's (adjusted) level ([`comparison_interval`]); `None`
    /// with too few pairs (no claim is made) or nothing to bound.
    interval: Option<Interval>,
}

impl Judged {
    pub fn enough(&self) -> bool {
        self.n >= self.needed
    }

    /// The interval at the verdict's (adjusted) level.
    pub fn interval(&self) -> Option<Interval> {
        self.interval
    }
}

/// The interval printed beside a comparison, at the family's adjusted `level`, on the
/// test's scale. A mean difference: the differences the sign-flip test does not reject
/// ([`flip_interval`]), so that the interval holds 0 exactly when the claim is not
/// established; with pooled runs, whose claim must also pass the two-way Wald t test, the
/// differences either test accepts (the hull of both intervals). A latency percentile: the
/// cluster-bootstrap t interval of the log ratio.
fn comparison_interval(
    sample: &PairedSample,
    stat: Statistic,
    seed: u64,
    test: &Test,
    level: f64,
) -> Option<Interval> {
    let t = test.interval(level);
    // Nothing varies between scenarios: no spread to bound (never [x, x]).
    if stat.percentile().is_some() || test.se.is_nan() || test.se <= 0.0 {
        return t;
    }
    let d: Vec<f64> = sample.a.iter().zip(&sample.b).map(|(x, y)| x - y).collect();
    let flip = flip_interval(&d, &Clusters::of(&sample.cluster), seed, level)?;
    if test.runs < 2 {
        return Some(flip);
    }
    t.map(|t| Interval {
        lo: t.lo.min(flip.lo),
        hi: t.hi.max(flip.hi),
    })
}

/// An equivalence claim: whether two cells differ by less than a margin the reader names
/// (two one-sided tests, Schuirmann 1987), at the family's level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Equivalence {
    /// The interval at confidence 1 − 2α (α each one-sided test's level), on the test's
    /// scale; `None` with too few pairs or nothing to bound (then nothing is established).
    pub interval: Option<Interval>,
    /// The interval lies inside (−margin, +margin): both one-sided tests reject a
    /// difference at the margin.
    pub established: bool,
}

/// Equivalence within ±`margin` (on the test's scale: a difference for a mean, ln(1 + m)
/// for a latency ratio of ±m) of every comparison of a family, each sample with its seed:
/// two one-sided tests per comparison, read from the interval at confidence 1 − 2α that
/// inverts the same test as the claims' ([`comparison_interval`]), with α = [`FAMILY_ALPHA`]
/// divided by the family's comparisons (Bonferroni: the chance of any false "equivalent" in
/// the family is at most 5 %). A comparison with fewer than [`min_pairs`] pairs is never
/// equivalent.
pub fn equivalence_family(
    samples: &[(&PairedSample, u64)],
    stat: Statistic,
    margin: f64,
) -> Vec<Equivalence> {
    let tests: Vec<Option<Test>> = samples
        .iter()
        .map(|&(sample, seed)| paired_test(sample, stat, seed))
        .collect();
    let tested: Vec<(&PairedSample, u64, Option<&Test>)> = samples
        .iter()
        .zip(&tests)
        .map(|(&(sample, seed), t)| (sample, seed, t.as_ref()))
        .collect();
    equivalence_of(&tested, stat, margin)
}

/// [`equivalence_family`] for comparisons already tested (each sample with its seed and the
/// [`paired_test`] [`judge_family`] made of it, in [`Judged::test`]): the report's claims
/// reuse their own tests rather than run them again.
pub fn equivalence_of(
    tested: &[(&PairedSample, u64, Option<&Test>)],
    stat: Statistic,
    margin: f64,
) -> Vec<Equivalence> {
    let alpha = FAMILY_ALPHA / tested.len().max(1) as f64;
    let level = 1.0 - 2.0 * alpha;
    tested
        .iter()
        .map(|&(sample, seed, test)| {
            let interval = test
                .filter(|_| sample.len() >= min_pairs(stat))
                .and_then(|t| {
                    // Every pair's difference equal (no spread): the claim prints no interval,
                    // but the inverted test still bounds a mean's difference to where the
                    // scenarios' signs allow (two identical cells are equivalent).
                    if stat.percentile().is_none() && t.se == 0.0 && t.runs < 2 {
                        let d: Vec<f64> =
                            sample.a.iter().zip(&sample.b).map(|(x, y)| x - y).collect();
                        return flip_interval(&d, &Clusters::of(&sample.cluster), seed, level);
                    }
                    comparison_interval(sample, stat, seed, t, level)
                });
            Equivalence {
                interval,
                established: margin > 0.0
                    && interval.is_some_and(|i| -margin < i.lo && i.hi < margin),
            }
        })
        .collect()
}

/// Tests every comparison of one family (each sample with its seed) for `stat`, then adjusts
/// them together (Holm at [`FAMILY_ALPHA`]): the one rule behind every "established" the
/// report prints, and the one the calibration simulation runs. A comparison with fewer
/// pairs than [`min_pairs`] still counts in the family's size, is never established and
/// gets no interval; nor is one established whose interval at its adjusted level holds 0.
/// A mean's interval inverts the same sign-flip test, so it holds 0 exactly when the claim
/// is not established; a latency percentile's is the bootstrap t interval, widened to reach
/// 0 when the exact test does not reach the level (so it too holds 0 exactly when the claim
/// is not established).
pub fn judge_family(samples: &[(&PairedSample, u64)], stat: Statistic) -> Vec<Judged> {
    let tagged: Vec<(&PairedSample, u64, Statistic)> =
        samples.iter().map(|&(s, seed)| (s, seed, stat)).collect();
    judge_mixed_family(&tagged)
}

/// [`judge_family`] for a family whose comparisons test different statistics (a run
/// against its baseline: success, latency p50 and p95, task success, judge means — every
/// cell's, adjusted together, so that the chance of any false "regressed" or "improved" in
/// the whole comparison is at most [`FAMILY_ALPHA`]). Holm holds under any dependence
/// between the tests, so mixing statistics changes nothing of the rule.
pub fn judge_mixed_family(samples: &[(&PairedSample, u64, Statistic)]) -> Vec<Judged> {
    let tests = parallel_tests(samples);
    let needed: Vec<usize> = samples.iter().map(|s| min_pairs(s.2)).collect();
    let ps: Vec<Option<f64>> = tests
        .iter()
        .zip(&needed)
        .map(|((n, t), &needed)| t.filter(|_| *n >= needed).map(|t| t.p))
        .collect();
    holm(&ps, FAMILY_ALPHA)
        .into_iter()
        .zip(tests)
        .zip(needed)
        .zip(samples)
        .map(
            |(((mut verdict, (n, test)), needed), &(sample, seed, stat))| {
                let interval = test
                    .as_ref()
                    .filter(|_| n >= needed)
                    .and_then(|t| comparison_interval(sample, stat, seed, t, verdict.level));
                // The interval printed beside a claim must agree with it: a test that reaches
                // the level while its interval still holds 0 is not established either; and a
                // claim not established has an interval that holds 0 (a percentile's bootstrap
                // interval can exclude it where the exact test does not reach the level: it is
                // widened to reach no difference, which only adds coverage).
                if interval.is_some_and(|i| i.lo <= 0.0 && 0.0 <= i.hi) {
                    verdict.established = false;
                }
                let interval = interval.map(|i| {
                    if verdict.established {
                        i
                    } else {
                        Interval {
                            lo: i.lo.min(0.0),
                            hi: i.hi.max(0.0),
                        }
                    }
                });
                Judged {
                    test,
                    n,
                    needed,
                    verdict,
                    interval,
                }
            },
        )
        .collect()
}

/// Every sample's test, on every core (tests are independent and seeded, so the split
/// cannot change a figure).
fn parallel_tests(samples: &[(&PairedSample, u64, Statistic)]) -> Vec<(usize, Option<Test>)> {
    samples
        .par_iter()
        .map(|(s, seed, stat)| (s.len(), paired_test(s, *stat, *seed)))
        .collect()
}

/// A mean over units in clusters with its t interval: mean ± t_{C−1} · se (cluster-robust).
/// `interval` is `None` with fewer than 3 clusters ([`MIN_DF`]) or when nothing varies
/// between them (no spread to bound: the report says "all n equal" instead of printing
/// [x, x]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanEstimate {
    pub value: f64,
    pub interval: Option<Interval>,
    /// Every value is the same.
    pub constant: bool,
}

/// The mean of `values` (unit i in cluster `cluster[i]`) with a cluster-robust t interval at
/// `level`. `None` for an empty or non-finite sample or unequal lengths.
pub fn clustered_mean(values: &[f64], cluster: &[u32], level: f64) -> Option<MeanEstimate> {
    if values.len() != cluster.len() {
        return None;
    }
    let value = super::mean(values)?;
    let clusters = Clusters::of(cluster);
    let constant = values.iter().all(|&x| x == value);
    let interval = cluster_robust_se(values, &clusters)
        .and_then(|se| t_interval(value, se, clusters.count(), level));
    Some(MeanEstimate {
        value,
        interval,
        constant,
    })
}

/// [`clustered_mean`] for values on a bounded scale `[lo, hi]` (a rubric's scores): the t
/// interval is formed on the logit of the mean's position in the scale, with the delta
/// method's standard error se / ((hi − lo) · p(1 − p)), and mapped back, so it never leaves
/// the scale and is asymmetric near an end (a mean of 4.8 on 1–5 cannot reach 5.02). The
/// estimate itself is the plain mean. `None` as [`clustered_mean`], or for a scale with no
/// width or a value outside it.
pub fn clustered_mean_within(
    values: &[f64],
    cluster: &[u32],
    level: f64,
    (lo, hi): (f64, f64),
) -> Option<MeanEstimate> {
    if !(lo.is_finite() && hi.is_finite() && hi > lo) || values.iter().any(|&x| x < lo || x > hi) {
        return None;
    }
    let plain = clustered_mean(values, cluster, level)?;
    let width = hi - lo;
    let p = (plain.value - lo) / width;
    let interval = if p > 0.0 && p < 1.0 {
        let clusters = Clusters::of(cluster);
        cluster_robust_se(values, &clusters).and_then(|se| {
            let logit = (p / (1.0 - p)).ln();
            let se_logit = se / width / (p * (1.0 - p));
            let back = |x: f64| lo + width / (1.0 + (-x).exp());
            t_interval(logit, se_logit, clusters.count(), level).map(|i| Interval {
                lo: back(i.lo),
                hi: back(i.hi),
            })
        })
    } else {
        None
    };
    Some(MeanEstimate { interval, ..plain })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol * b.abs().max(1.0), "{a} vs {b}");
    }

    #[test]
    fn student_t_matches_scipy() {
        // 2 * scipy.stats.t.sf(abs(t), df), scipy 1.16
        for (t, df, p) in [
            (2.0, 9.0, 0.07655282377070101),
            (0.5, 1.0, 0.7048327646991335),
            (3.7, 14.0, 0.0023773206291980856),
            (1.96, 1000.0, 0.050273184955748736),
            (10.0, 2.0, 0.00985245702332569),
        ] {
            close(student_t_two_sided_p(t, df).unwrap(), p, 1e-10);
            close(student_t_two_sided_p(-t, df).unwrap(), p, 1e-10);
        }
        // scipy.stats.t.ppf(p, df)
        for (p, df, q) in [
            (0.975, 9.0, 2.262157162798205),
            (0.975, 1.0, 12.706204736174694),
            (0.9975, 14.0, 3.325695817838035),
            (0.025, 29.0, -2.045229642132704),
            (0.999, 3.0, 10.214531852407383),
        ] {
            close(student_t_quantile(p, df).unwrap(), q, 1e-9);
        }
        assert_eq!(student_t_two_sided_p(0.0, 5.0), Some(1.0));
        assert_eq!(student_t_two_sided_p(1.0, 0.0), None);
    }

    #[test]
    fn holm_matches_statsmodels() {
        // statsmodels.stats.multitest.multipletests([.01,.04,.03,.005,.2], method="holm")
        let v = holm(
            &[Some(0.01), Some(0.04), Some(0.03), Some(0.005), Some(0.2)],
            0.05,
        );
        let est: Vec<bool> = v.iter().map(|x| x.established).collect();
        assert_eq!(est, [true, false, false, true, false]);
        for (x, want) in v.iter().zip([0.04, 0.09, 0.09, 0.025, 0.2]) {
            close(x.adjusted_p, want, 1e-12);
        }
        // Levels: rank 1 (0.005) at 1 − .05/5, rank 2 (0.01) at 1 − .05/4, rank 3 fails at
        // 1 − .05/3, and every later rank stays at that level.
        close(v[3].level, 0.99, 1e-12);
        close(v[0].level, 0.9875, 1e-12);
        for i in [2, 1, 4] {
            close(v[i].level, 1.0 - 0.05 / 3.0, 1e-12);
        }
        // A test that could not be made counts in m and is never established.
        let v = holm(&[Some(0.03), None], 0.05);
        assert!(!v[0].established, "0.03 × 2 > 0.05");
        assert!(!v[1].established);
    }

    #[test]
    fn scenario_lists_give_the_same_percentiles_as_numpy() {
        let a = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 8.0, 4.5];
        let b = [6.0, 4.0, 10.0, 12.0, 11.0, 13.0, 0.5, 2.5];
        let s = sample(&a, &b, &[0, 0, 1, 1, 2, 2, 3, 3]);
        let clusters = Clusters::of(&s.cluster);
        let sides = ScenarioSides::new(&s, &clusters);
        let pct = |v: &[f64], q: f64| super::super::percentiles(v, &[q]).unwrap()[0];
        let ones = [1u32; 4];
        for q in [0.0, 10.0, 50.0, 95.0, 100.0] {
            let p = q / 100.0;
            close(
                sides.quantile(&ones, &[false; 4], p).unwrap(),
                pct(&a, q),
                1e-12,
            );
            close(
                sides.quantile(&ones, &[true; 4], p).unwrap(),
                pct(&b, q),
                1e-12,
            );
            // Scenario 3 swapped: a holds b's 0.5 and 2.5.
            let mut a2 = a;
            a2[6..].copy_from_slice(&b[6..]);
            let swapped = [false, false, false, true];
            close(
                sides.quantile(&ones, &swapped, p).unwrap(),
                pct(&a2, q),
                1e-12,
            );
            // A resample: scenario 0 twice, scenario 2 once, 1 and 3 not at all.
            let resample = [5.0, 1.0, 5.0, 1.0, 7.0, 2.0];
            close(
                sides.quantile(&[2, 0, 1, 0], &[false; 4], p).unwrap(),
                pct(&resample, q),
                1e-12,
            );
        }
        assert_eq!(sides.quantile(&[0; 4], &[false; 4], 0.5), None);
        // Four scenarios: 16 patterns, and the all-swapped one always reaches |observed|.
        let p = percentile_flip_p(&sides, s.len(), 0.5, 1).unwrap();
        assert!(p >= 2.0 / 16.0 - 1e-12, "{p}");
    }

    #[test]
    fn large_samples_search_to_the_same_percentiles_as_a_sort() {
        // 1,200 pairs in 7 scenarios: 2,400 values, past WALK_BELOW, so found by search.
        let n = 1200;
        let a: Vec<f64> = (0..n).map(|i| f64::from((i * 7919) % 1013) + 0.5).collect();
        let b: Vec<f64> = (0..n)
            .map(|i| f64::from((i * 104_729) % 997) * 1.3)
            .collect();
        let cluster: Vec<u32> = (0..n).map(|i| (i * 31 % 7) as u32).collect();
        let s = sample(&a, &b, &cluster);
        let clusters = Clusters::of(&s.cluster);
        let sides = ScenarioSides::new(&s, &clusters);
        assert!(sides.entries.is_empty(), "the search path");
        let pct = |v: &[f64], q: f64| super::super::percentiles(v, &[q]).unwrap()[0];
        let weight = [2u32, 0, 1, 3, 0, 1, 1];
        let flip = [false, true, false, true, true, false, false];
        for q in [0.0, 5.0, 50.0, 95.0, 99.0, 100.0] {
            // The resample, written out: each scenario's a-values `weight` times.
            let mut resample = Vec::new();
            let mut flipped = Vec::new();
            for (i, &k) in cluster.iter().enumerate() {
                for _ in 0..weight[k as usize] {
                    resample.push(a[i]);
                }
                flipped.push(if flip[k as usize] { b[i] } else { a[i] });
            }
            let got = sides.quantile(&weight, &[false; 7], q / 100.0).unwrap();
            close(got, pct(&resample, q), 1e-12);
            let got = sides.quantile(&[1; 7], &flip, q / 100.0).unwrap();
            close(got, pct(&flipped, q), 1e-12);
        }
    }

    #[test]
    fn the_narrowing_search_finds_every_rank_the_whole_list_search_finds() {
        // Every rank of several resamples and flips of 2,400 values with ties: the search
        // that counts each list between its bounds answers as counting whole lists does.
        let n = 1200;
        let a: Vec<f64> = (0..n).map(|i| f64::from((i * 7919) % 211)).collect();
        let b: Vec<f64> = (0..n)
            .map(|i| f64::from((i * 104_729) % 199) * 1.5)
            .collect();
        let cluster: Vec<u32> = (0..n).map(|i| (i * 31 % 7) as u32).collect();
        let s = sample(&a, &b, &cluster);
        let clusters = Clusters::of(&s.cluster);
        let sides = ScenarioSides::new(&s, &clusters);
        let cases: [([u32; 7], [bool; 7]); 3] = [
            ([1; 7], [false; 7]),
            (
                [2, 0, 1, 3, 0, 1, 1],
                [false, true, false, true, true, false, false],
            ),
            ([0, 0, 0, 5, 0, 0, 0], [true; 7]),
        ];
        for (weight, flip) in cases {
            let total: usize = (0..7)
                .map(|k| weight[k] as usize * sides.list(k, &flip).len())
                .sum();
            for r in 0..total {
                let whole = sides
                    .merged
                    .partition_point(|&v| sides.count_le(&weight, &flip, v) <= r);
                assert_eq!(
                    sides.at_rank(&weight, &flip, r),
                    sides.merged.get(whole).copied(),
                    "rank {r} of {weight:?}"
                );
            }
        }
    }

    #[test]
    fn order_statistic_ranks_are_the_shortest_reaching_the_level() {
        // Brute force over scipy.stats.binom.cdf: the shortest (l, u) with
        // P(l ≤ B < u) ≥ 0.95, most central among equals.
        for (n, p, want) in [
            (6, 0.5, Some((1, 6))),
            (20, 0.5, Some((6, 15))),
            (30, 0.5, Some((10, 21))),
            (59, 0.95, Some((50, 59))),
            (58, 0.95, None),
            (100, 0.95, Some((90, 99))),
            (299, 0.99, Some((289, 299))),
            (298, 0.99, None),
            (5, 0.5, None),
        ] {
            assert_eq!(quantile_interval_ranks(n, p, 0.95), want, "n {n} p {p}");
        }
        assert_eq!(quantile_interval_min_n(95.0, 0.95), Some(59));
        assert_eq!(quantile_interval_min_n(50.0, 0.95), Some(6));
        let sorted: Vec<f64> = (1..=20).map(f64::from).collect();
        let i = quantile_interval(&sorted, 50.0, 0.95).unwrap();
        assert_eq!((i.lo, i.hi), (6.0, 15.0));
        assert!(quantile_interval(&[3.0, 1.0, 2.0, 4.0, 5.0, 6.0], 50.0, 0.95).is_none());
    }

    #[test]
    fn the_flip_interval_is_the_differences_the_test_keeps() {
        // Four scenarios of one pair each, differences 1, 2, 3, 4: every δ below 1 leaves
        // all four on one side (p = 2/16 = 0.125), δ = 1 ties one (p = 4/16); so at level
        // 0.8 the interval is [1, 4] (by enumeration in Python over a grid of δ), and at
        // 0.95 nothing can be rejected (0.125 > 0.05): no interval.
        let d = [1.0, 2.0, 3.0, 4.0];
        let c = Clusters::of(&[0, 1, 2, 3]);
        let i = flip_interval(&d, &c, 1, 0.8).unwrap();
        close(i.lo, 1.0, 1e-6);
        close(i.hi, 4.0, 1e-6);
        assert!(flip_interval(&d, &c, 1, 0.95).is_none());
        // On drawn samples, the interval holds 0 exactly when the test does not reject it.
        let mut rng = Rng::stream(42, 0);
        let mut both = [0; 2];
        for case in 0..300 {
            let clusters = 5 + case % 9;
            let per = 1 + case % 3;
            let shift = (case % 5) as f64 * 0.25;
            let mut d = Vec::new();
            let mut label = Vec::new();
            for k in 0..clusters {
                for _ in 0..per {
                    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    d.push(shift + (u - 0.5) * 2.0);
                    label.push(k as u32);
                }
            }
            let cl = Clusters::of(&label);
            let level = [0.95, 0.975, 0.99][case % 3];
            let rejected = sign_flip_p(&d, &cl, 9) <= 1.0 - level;
            match flip_interval(&d, &cl, 9, level) {
                Some(i) => {
                    assert_eq!(rejected, !i.contains(0.0), "case {case}: {i:?}");
                    both[usize::from(rejected)] += 1;
                }
                None => assert!(!rejected, "case {case}"),
            }
        }
        assert!(both[0] > 20 && both[1] > 20, "{both:?}");
    }

    #[test]
    fn a_bounded_mean_stays_in_its_scale() {
        // Mean 4.8 of five scenarios' scores on 1–5 (two per scenario).
        let v = [5.0, 5.0, 5.0, 4.0, 5.0, 5.0, 4.0, 5.0, 5.0, 5.0];
        let c = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4];
        let plain = clustered_mean(&v, &c, 0.95).unwrap();
        let bounded = clustered_mean_within(&v, &c, 0.95, (1.0, 5.0)).unwrap();
        assert_eq!(bounded.value, plain.value);
        let (pi, bi) = (plain.interval.unwrap(), bounded.interval.unwrap());
        // The symmetric t interval leaves the scale: 4.8 ± 2.776 · 0.1 (by hand: cluster
        // sums of deviations 0.4, −0.6, 0.4, −0.6, 0.4; se = sqrt(5/4 · 1.2 / 100) = 0.1225).
        assert!(pi.hi > 5.0, "{pi:?}");
        close(
            pi.hi,
            4.8 + 2.776_445_105_197_793 * 0.122_474_487_139_158_9,
            1e-9,
        );
        // On the logit scale: p = 0.95, logit = 2.944439, se = 0.1224745 / 4 / 0.0475
        // = 0.644602; back-transformed ends 1 + 4 / (1 + exp(−(2.944439 ∓ 2.776445 · 0.644602))).
        let end = |x: f64| 1.0 + 4.0 / (1.0 + (-x).exp());
        close(
            bi.lo,
            end(2.944_438_979_166_44 - 2.776_445_105_197_793 * 0.644_602_563_890_31),
            1e-9,
        );
        close(
            bi.hi,
            end(2.944_438_979_166_44 + 2.776_445_105_197_793 * 0.644_602_563_890_31),
            1e-9,
        );
        assert!(bi.lo < 4.8 && bi.hi > 4.8 && bi.hi < 5.0, "{bi:?}");
        // Every score at the top: no spread to bound.
        let top = clustered_mean_within(&[5.0; 6], &[0, 0, 1, 1, 2, 2], 0.95, (1.0, 5.0)).unwrap();
        assert!(top.interval.is_none() && top.constant);
        // A value outside the scale is no sample of it.
        assert!(clustered_mean_within(&[6.0, 5.0, 4.0], &[0, 1, 2], 0.95, (1.0, 5.0)).is_none());
    }

    #[test]
    fn cluster_robust_se_matches_statsmodels() {
        // sm.OLS(d, ones).fit(cov_type="cluster", cov_kwds={"groups": g}).bse
        let d = [1.0, 2.0, 3.0, 4.0, 10.0, -1.0];
        let g = [0, 0, 1, 1, 2, 2];
        let se = cluster_robust_se(&d, &Clusters::of(&g)).unwrap();
        close(se, 0.8819171036881975, 1e-12);
        // One pair per cluster: the ordinary standard error s/√n.
        let d = [1.0, 2.0, 4.0];
        let se = cluster_robust_se(&d, &Clusters::of(&[0, 1, 2])).unwrap();
        close(se, (7.0f64 / 3.0).sqrt() / 3f64.sqrt(), 1e-12);
    }

    fn sample(a: &[f64], b: &[f64], cluster: &[u32]) -> PairedSample {
        PairedSample {
            a: a.to_vec(),
            b: b.to_vec(),
            cluster: cluster.to_vec(),
            run: Vec::new(),
        }
    }

    #[test]
    fn identical_values_are_no_evidence_of_precision() {
        // Two conversations, one always succeeds, the other always fails: the difference
        // is 1 with no spread; the sign test over 2 scenarios gives p = 0.5.
        let s = sample(&[1.0, 1.0], &[0.0, 0.0], &[0, 1]);
        let t = paired_test(&s, Statistic::Mean, 1).unwrap();
        assert_eq!((t.estimate, t.se), (1.0, 0.0));
        close(t.p, 0.5, 1e-12);
        assert!(t.interval(0.95).is_none(), "never a zero-width interval");
        let j = judge_family(&[(&s, 1)], Statistic::Mean);
        assert!(!j[0].verdict.established);
        // Fifteen scenarios that all agree are evidence, even without spread.
        let s = sample(
            &[1.0; 30],
            &[0.0; 30],
            &(0..30).map(|i| i / 2).collect::<Vec<_>>(),
        );
        let j = judge_family(&[(&s, 1)], Statistic::Mean);
        assert!(j[0].verdict.established, "{j:?}");
        // One scenario: no degree of freedom, no test.
        let s = sample(&[1.0; 12], &[0.0; 12], &[7; 12]);
        assert!(paired_test(&s, Statistic::Mean, 1).is_none());
    }

    #[test]
    fn equivalence_needs_the_whole_interval_inside_the_margin() {
        // 40 pairs over 20 scenarios, differences alternating ±0.1 around 0.02.
        let cluster: Vec<u32> = (0..40).map(|i| i / 2).collect();
        let b: Vec<f64> = (0..40).map(|i| 3.0 + f64::from(i % 3)).collect();
        let a: Vec<f64> = b
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x + 0.02 + if i % 2 == 0 { 0.1 } else { -0.1 } * (1.0 + (i % 5) as f64 / 5.0)
            })
            .collect();
        let s = sample(&a, &b, &cluster);
        let wide = equivalence_family(&[(&s, 1)], Statistic::Mean, 0.25);
        let i = wide[0].interval.unwrap();
        assert!(
            wide[0].established && -0.25 < i.lo && i.hi < 0.25,
            "{wide:?}"
        );
        // A margin the interval does not fit in: not shown equivalent.
        let narrow = equivalence_family(&[(&s, 1)], Statistic::Mean, i.hi * 0.9);
        assert!(!narrow[0].established);
        // A family of two halves each test's α: the interval widens.
        let two = equivalence_family(&[(&s, 1), (&s, 1)], Statistic::Mean, 0.25);
        let i2 = two[0].interval.unwrap();
        assert!(i2.lo < i.lo && i2.hi > i.hi, "{i:?} {i2:?}");
        // A clear difference is never equivalent within a margin below it.
        let shifted: Vec<f64> = a.iter().map(|x| x + 1.0).collect();
        let far = equivalence_family(
            &[(&sample(&shifted, &b, &cluster), 1)],
            Statistic::Mean,
            0.5,
        );
        assert!(!far[0].established);
        // Identical sides (no spread at all) are equivalent within any margin.
        let same = equivalence_family(&[(&sample(&b, &b, &cluster), 1)], Statistic::Mean, 0.01);
        assert!(same[0].established, "{same:?}");
        // Too few pairs: nothing is established, whatever the data.
        let few = sample(&a[..6], &b[..6], &cluster[..6]);
        let e = equivalence_family(&[(&few, 1)], Statistic::Mean, 10.0);
        assert!(!e[0].established && e[0].interval.is_none());
    }

    #[test]
    fn a_claim_not_established_has_an_interval_holding_no_difference() {
        // Percentiles whose bootstrap interval can exclude 0 while the exact sign-flip test
        // over 4 scenarios cannot reach the level (its smallest p is 2/2^4 = 0.125).
        let cluster: Vec<u32> = (0..40).map(|i| i / 10).collect();
        let b: Vec<f64> = (0..40).map(|i| 1000.0 + 13.0 * f64::from(i % 9)).collect();
        let a: Vec<f64> = b
            .iter()
            .enumerate()
            .map(|(i, x)| x * 0.7 * (1.0 + 0.01 * (i % 7) as f64))
            .collect();
        let s = sample(&a, &b, &cluster);
        let t = paired_test(&s, Statistic::LatencyP50, 5).unwrap();
        assert!(
            t.interval(0.95).unwrap().hi < 0.0,
            "the bootstrap interval excludes 0"
        );
        let j = judge_family(&[(&s, 5)], Statistic::LatencyP50);
        assert!(!j[0].verdict.established, "{j:?}");
        let i = j[0].interval().unwrap();
        assert!(
            i.lo < 0.0 && i.hi == 0.0,
            "widened to reach no difference: {i:?}"
        );
    }

    #[test]
    fn too_few_pairs_are_never_established() {
        let a: Vec<f64> = (0..6).map(|i| 100.0 + f64::from(i)).collect();
        let b: Vec<f64> = (0..6).map(|i| 900.0 + f64::from(i)).collect();
        let s = sample(&a, &b, &[0, 1, 2, 3, 4, 5]);
        let j = judge_family(&[(&s, 3)], Statistic::LatencyP50);
        assert!(j[0].test.is_some_and(|t| t.p < 0.05), "{j:?}");
        assert!(!j[0].enough());
        assert!(!j[0].verdict.established);
    }

    #[test]
    fn a_clear_percentile_gap_is_established_and_its_interval_excludes_zero() {
        let n = 30;
        let cluster: Vec<u32> = (0..n).map(|i| i / 2).collect();
        let a: Vec<f64> = (0..n)
            .map(|i| 1000.0 + 37.0 * f64::from(i % 7) + f64::from(i))
            .collect();
        let b: Vec<f64> = (0..n)
            .map(|i| (1000.0 + 41.0 * f64::from(i % 5) + f64::from(i)) * 2.0)
            .collect();
        let s = sample(&a, &b, &cluster);
        let j = judge_family(&[(&s, 9)], Statistic::LatencyP50);
        assert!(j[0].verdict.established, "{j:?}");
        let i = j[0].interval().unwrap();
        assert!(i.hi < 0.0 && i.contains(j[0].test.unwrap().estimate));
        // Exactly proportional values: no spread; established by the sign test over the 15
        // scenarios, with no interval rather than a zero-width one.
        let doubled: Vec<f64> = a.iter().map(|x| 2.0 * x).collect();
        let s2 = sample(&a, &doubled, &cluster);
        let j2 = judge_family(&[(&s2, 9)], Statistic::LatencyP50);
        assert!(j2[0].verdict.established && j2[0].interval().is_none());
        // The same data, seeded alike, give the same figures; another seed other resamples.
        let again = judge_family(&[(&s, 9)], Statistic::LatencyP50);
        assert_eq!(j, again);
        let other = paired_test(&s, Statistic::LatencyP50, 10).unwrap();
        assert_ne!(other.se, j[0].test.unwrap().se);
    }

    #[test]
    fn clustered_mean_says_when_all_values_are_equal() {
        let m = clustered_mean(&[5.0; 15], &(0..15).collect::<Vec<_>>(), 0.95).unwrap();
        assert!(m.constant && m.interval.is_none());
        let m = clustered_mean(&[4.0, 5.0, 3.0, 5.0], &[0, 1, 2, 3], 0.95).unwrap();
        let i = m.interval.unwrap();
        // mean 4.25, s = 0.9574271077563381, t(0.975, 3) = 3.182446305284263
        close(
            i.hi - 4.25,
            3.182446305284263 * 0.9574271077563381 / 2.0,
            1e-9,
        );
    }

    #[test]
    fn ratio_se_is_cluster_robust() {
        // Residuals num − r·den with r = 6/10: per cluster sums (1 − .6·2 + 1 − .6·2) = −0.4,
        // (2 − .6·3) = 0.2, (2 − .6·3) = 0.2; se = √(3/2 · 0.24) / 10.
        let se = ratio_se(&[1.0, 1.0, 2.0, 2.0], &[2.0, 2.0, 3.0, 3.0], &[0, 0, 1, 2]).unwrap();
        close(se, (1.5f64 * 0.24).sqrt() / 10.0, 1e-12);
        assert!(ratio_se(&[1.0], &[0.0], &[0]).is_none());
    }

    /// 6 scenarios × 3 runs, differences = scenario effect + run effect + noise.
    fn crossed() -> PairedSample {
        let d = [
            1.13, 0.38, 0.42, 0.5, -0.98, -0.28, 2.07, 0.45, 1.09, 0.62, -0.36, -0.01, 1.08, -0.49,
            0.39, 0.57, -0.8, -0.15,
        ];
        PairedSample {
            a: d.to_vec(),
            b: vec![0.0; d.len()],
            cluster: (0..18).map(|i| i / 3).collect(),
            run: (0..18).map(|i| i % 3).collect(),
        }
    }

    #[test]
    fn pooled_runs_are_a_second_cluster_level() {
        // Two-way CR1 variance V_s + V_r − V_(s∩r), each as `cluster_robust_se` squared,
        // computed independently in plain Python: 0.04895956790123457 (scenarios),
        // 0.14095771604938273 (runs), 0.03222601670297749 (scenario ∩ run).
        let s = crossed();
        let t = paired_test(&s, Statistic::Mean, 1).unwrap();
        close(t.se, 0.3971035976261608, 1e-12);
        close(t.estimate, 0.31277777777777777, 1e-12);
        assert_eq!((t.clusters, t.runs, t.df), (6, 3, 2), "df = min(6, 3) − 1");
        // The p-value is at least the two-way t test's (scipy.stats.t.sf(|t|, 2) · 2).
        let t_p = student_t_two_sided_p(t.estimate / t.se, 2.0).unwrap();
        assert!(t.p >= t_p - 1e-15, "{} < {t_p}", t.p);
        // One run: the one-level rule, unchanged.
        let one = PairedSample {
            run: vec![7; 18],
            ..s.clone()
        };
        let t1 = paired_test(&one, Statistic::Mean, 1).unwrap();
        let t0 = paired_test(&PairedSample { run: vec![], ..s }, Statistic::Mean, 1).unwrap();
        assert_eq!(t1, t0);
        assert_eq!((t0.runs, t0.df), (1, 5));
        close(t0.se, 0.04895956790123457f64.sqrt(), 1e-12);
    }

    #[test]
    fn a_run_shift_is_not_evidence_across_runs() {
        // Ten scenarios, two runs: cell a is slower in run 0 only, by the same factor in every
        // scenario. Over scenarios alone that is a consistent 1.5× (established at once);
        // with runs as clusters there is one degree of freedom: nothing to claim.
        let mut s = PairedSample::default();
        for k in 0..10u32 {
            for r in 0..2u32 {
                for rep in 0..3 {
                    let base = 1000.0 + 100.0 * f64::from(k) + 7.0 * f64::from(rep);
                    s.a.push(if r == 0 { base * 1.5 } else { base * 1.01 });
                    s.b.push(base);
                    s.cluster.push(k);
                    s.run.push(r);
                }
            }
        }
        let pooled = paired_test(&s, Statistic::LatencyP50, 3).unwrap();
        assert_eq!((pooled.runs, pooled.df), (2, 1));
        assert!(
            pooled.interval(0.95).is_none(),
            "one degree of freedom bounds nothing"
        );
        let scenarios_only = paired_test(
            &PairedSample {
                run: vec![],
                ..s.clone()
            },
            Statistic::LatencyP50,
            3,
        )
        .unwrap();
        assert!(scenarios_only.p < 0.01 && pooled.p > scenarios_only.p);
        let verdicts = judge_family(&[(&s, 3)], Statistic::LatencyP50);
        assert!(!verdicts[0].verdict.established);
    }
}
