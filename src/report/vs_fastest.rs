//! Provider tables as readers of provider studies expect them: within each model label, the
//! cells ordered by a chosen figure (`--sort`), and each cell's conversation-latency
//! percentiles against the fastest provider of its label ("Δ vs fastest").
//!
//! The Δ is the difference (and ratio) of the cells' own percentiles, the figures the table
//! prints, so the fastest shows exactly 0. Its interval is the paired one the headline
//! family already tested (`super::headlines`, calibrated in `crate::stats::inference`): the
//! ratio of the two cells' percentile over the (scenario, repeat) slots both completed, with
//! the cluster-bootstrap interval at the family's Holm-adjusted level, inverted to read
//! "this cell ÷ the fastest". It is given only where the calibration allows one: at least
//! [`crate::stats::inference::min_pairs`] pairs (p50 10, p95 40) and 3 scenarios. p99 has no
//! calibrated paired comparison, so its Δ never carries an interval.

use super::model::{Cell, ClaimStatistic, Headline, Interval, JudgeSection};

// The types live with the rest of the report's data (`super::model`); re-exported here
// beside the code that computes them.
pub use super::model::{Delta, SortBy, VsFastest};

/// Each cell's Δ vs the fastest of its label, in the order of `cells`. `headlines` hold the
/// latency families whose claims give the paired intervals.
pub fn vs_fastest(cells: &[Cell], headlines: &[Headline]) -> Vec<VsFastest> {
    let own = |c: &Cell, q: u8| {
        let p = &c.conversation_latency;
        match q {
            50 => p.p50,
            95 => p.p95,
            _ => p.p99,
        }
        .map(|e| e.value)
        .filter(|v| v.is_finite() && *v > 0.0)
    };
    let delta = |i: usize, q: u8| -> Option<Delta> {
        let c = cells.get(i)?;
        let mine = own(c, q)?;
        let (fi, best) = cells
            .iter()
            .enumerate()
            .filter(|(_, o)| o.model == c.model)
            .filter_map(|(j, o)| Some((j, own(o, q)?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))?;
        let fastest = cells.get(fi)?;
        let is_fastest = fi == i;
        let stat = match q {
            50 => Some(ClaimStatistic::LatencyP50Ratio),
            95 => Some(ClaimStatistic::LatencyP95Ratio),
            _ => None,
        };
        let name = super::headlines::cell_name(c);
        let fastest_name = super::headlines::cell_name(fastest);
        let claim = stat.filter(|_| !is_fastest).and_then(|stat| {
            let family = headlines
                .iter()
                .filter_map(|h| h.family.as_ref())
                .find(|f| f.statistic == stat && f.leader.as_deref() == Some(&fastest_name))?;
            family
                .claims
                .iter()
                .find(|cl| cl.a == fastest_name && cl.b == name)
        });
        let paired_ok = claim.is_some_and(|cl| cl.n >= cl.needed);
        Some(Delta {
            fastest: fastest.provider.clone(),
            is_fastest,
            difference_ms: if is_fastest { 0.0 } else { mine - best },
            ratio: if is_fastest { 1.0 } else { mine / best },
            pairs: claim.map(|cl| cl.n),
            needed: claim.map(|cl| cl.needed),
            // The claim is fastest ÷ this cell; the table reads this cell ÷ the fastest.
            paired_ratio: claim
                .and_then(|cl| cl.estimate)
                .filter(|r| *r > 0.0)
                .map(|r| 1.0 / r),
            interval: claim
                .filter(|_| paired_ok)
                .and_then(|cl| cl.interval)
                .filter(|iv| iv.lo > 0.0 && iv.hi > iv.lo)
                .map(|iv| Interval {
                    lo: 1.0 / iv.hi,
                    hi: 1.0 / iv.lo,
                }),
            level: claim.map(|cl| cl.level),
            established: claim.map(|cl| cl.established),
        })
    };
    (0..cells.len())
        .map(|i| VsFastest {
            p50: delta(i, 50),
            p95: delta(i, 95),
            p99: delta(i, 99),
        })
        .collect()
}

/// The cells' indices grouped by model label (in the report's label order), each label's
/// cells ordered by `by`; cells without the figure last, ties in the report's order.
pub fn order(cells: &[Cell], judges: &[JudgeSection], by: SortBy) -> Vec<usize> {
    let judge = judges
        .iter()
        .find(|s| !s.simulated)
        .or_else(|| judges.first());
    // Lower is better for every key: latency as it is, rates and scores negated.
    let key = |i: usize| -> Option<f64> {
        let c = cells.get(i)?;
        let p = &c.conversation_latency;
        match by {
            SortBy::P50 => p.p50.map(|e| e.value),
            SortBy::P95 => p.p95.map(|e| e.value),
            SortBy::P99 => p.p99.map(|e| e.value),
            SortBy::Success => c.reliability.success.value.map(|v| -v),
            SortBy::Quality => match judge {
                Some(s) => s.cells.get(i)?.overall.map(|e| -e.value),
                None => c.checks.task_success.value.map(|v| -v),
            },
        }
        .filter(|v| v.is_finite())
    };
    let mut labels: Vec<&str> = Vec::new();
    for c in cells {
        if !labels.contains(&c.model.as_str()) {
            labels.push(c.model.as_str());
        }
    }
    let mut out = Vec::with_capacity(cells.len());
    for label in labels {
        let mut group: Vec<(usize, Option<f64>)> = (0..cells.len())
            .filter(|&i| cells[i].model == label)
            .map(|i| (i, key(i)))
            .collect();
        group.sort_by(|a, b| match (a.1, b.1) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        out.extend(group.into_iter().map(|(i, _)| i));
    }
    out
}
