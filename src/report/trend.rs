//! Each cell run by run (`turnbench report --trend`, and the HTML report whenever the
//! selection spans several runs): per run × cell, the conversation p50 with its
//! distribution-free interval and the success rate with its Wilson interval, and whether
//! the run stands apart from the window it is part of.

use std::collections::BTreeMap;

use super::cells::{latency, wilson_rate};
use super::load::Facts;
use super::model::{Cell, Trend, TrendPoint};

/// Every run × cell of the selection, in cell order, then run order. `cells`: the pooled
/// cells (the report's), whose p50 interval is the window's.
pub(super) fn trend(facts: &Facts, by_cell: &[Vec<usize>], cells: &[Cell], asked: bool) -> Trend {
    let started: BTreeMap<i64, &str> = facts
        .runs
        .iter()
        .map(|r| (r.id, r.started_at.as_str()))
        .collect();
    let collector: BTreeMap<i64, &str> = facts
        .runs
        .iter()
        .filter_map(|r| Some((r.id, r.collector.as_deref()?)))
        .collect();
    let mut points = Vec::new();
    for (cell, convs) in by_cell.iter().enumerate() {
        let Some(pooled) = cells.get(cell) else {
            continue;
        };
        let mut by_run: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        for &i in convs {
            if let Some(c) = facts.convs.get(i) {
                by_run.entry(c.run_id).or_default().push(i);
            }
        }
        for (run, members) in by_run {
            let attempted = members.len() as u64;
            let completed: Vec<&super::load::Conv> = members
                .iter()
                .filter_map(|&i| facts.convs.get(i))
                .filter(|c| c.outcome.is_completed())
                .collect();
            let done = completed.len() as u64;
            let latencies: Vec<f64> = completed
                .iter()
                .map(|c| c.latency_ms)
                .filter(|v| v.is_finite())
                .collect();
            let p = latency(&latencies);
            let window = pooled.conversation_latency.p50.and_then(|e| e.interval);
            // Apart: the run's p50 interval and the window's do not meet. (A point outside
            // a pooled interval is expected from noise alone once the window is large: the
            // pooled interval narrows with every run, a run's does not.)
            let apart = match (p.p50.and_then(|e| e.interval), window) {
                (Some(run), Some(all)) => run.hi < all.lo || run.lo > all.hi,
                _ => false,
            };
            points.push(TrendPoint {
                run,
                started_at: started.get(&run).map(|s| s.to_string()).unwrap_or_default(),
                collector: collector.get(&run).map(|c| c.to_string()),
                cell: format!("{} / {}", pooled.provider, pooled.model),
                provider: pooled.provider.clone(),
                model: pooled.model.clone(),
                success: wilson_rate(done, attempted),
                conversation_p50: p.p50,
                latency_n: p.n,
                apart,
                simulated: pooled.simulated,
            });
        }
    }
    Trend {
        asked,
        runs: facts.runs.len(),
        apart: points.iter().filter(|p| p.apart).count(),
        points,
    }
}
