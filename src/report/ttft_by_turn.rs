//! TTFT BY TURN: per cell, TTFT p50 at each turn index, and the slope of TTFT on prompt
//! tokens — what a working prefix cache saves as the history grows (a flat line) and what
//! paying for the whole prompt every turn costs (a slope). Definitions: `docs/metrics.md`;
//! the regression and its interval are `crate::stats::regression`'s.

use super::load::{Facts, NO_COUNT};
use super::model::{Cell, TtftAtTurn, TtftByTurn};
use crate::stats::{self, regression};
use rayon::prelude::*;

/// The confidence level of the slope's interval.
const LEVEL: f64 = 0.95;

/// TTFT BY TURN of every cell with a completed conversation whose TTFT is known.
pub(super) fn section(facts: &Facts, by_cell: &[Vec<usize>], cells: &[Cell]) -> Vec<TtftByTurn> {
    by_cell
        .par_iter()
        .zip(cells)
        .filter_map(|(convs, cell)| one_cell(facts, convs, cell))
        .collect()
}

/// A completed conversation's own least-squares slope of TTFT on prompt tokens, in ms per
/// 1,000 tokens, over its turns with both known: a slot's value in the TTFT-slope family
/// (`super::headlines::ttft_slope`). `None` for a conversation that did not complete or
/// has no two turns of different prompt sizes.
pub(super) fn conversation_slope(facts: &Facts, i: usize) -> Option<f64> {
    let c = facts.convs.get(i)?;
    if !c.outcome.is_completed() {
        return None;
    }
    let turns = facts.turns.get(c.first_turn..c.first_turn + c.n_turns)?;
    let pairs = turns
        .iter()
        .filter(|t| t.ttft.is_finite() && t.prompt_tokens != NO_COUNT)
        .map(|t| (f64::from(t.prompt_tokens), t.ttft));
    regression::least_squares_of(pairs).map(|(slope, _)| slope * 1000.0)
}

fn one_cell(facts: &Facts, convs: &[usize], cell: &Cell) -> Option<TtftByTurn> {
    // TTFT by turn index (0-based); and (prompt tokens, TTFT, conversation) for the slope.
    let mut by_turn: Vec<Vec<f64>> = Vec::new();
    let (mut x, mut y, mut cluster) = (Vec::new(), Vec::new(), Vec::new());
    for &i in convs {
        let c = &facts.convs[i];
        if !c.outcome.is_completed() {
            continue;
        }
        let turns = &facts.turns[c.first_turn..c.first_turn + c.n_turns];
        for (k, t) in turns.iter().enumerate() {
            if !t.ttft.is_finite() {
                continue;
            }
            if by_turn.len() <= k {
                by_turn.resize(k + 1, Vec::new());
            }
            by_turn[k].push(t.ttft);
            if t.prompt_tokens != NO_COUNT {
                x.push(f64::from(t.prompt_tokens));
                y.push(t.ttft);
                cluster.push(u32::try_from(i).unwrap_or(u32::MAX));
            }
        }
    }
    if by_turn.is_empty() {
        return None;
    }
    let turns = by_turn
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| TtftAtTurn {
            turn: k as u32 + 1,
            n: v.len(),
            p50: stats::median(v),
        })
        .collect();
    let line = regression::within_clusters(&x, &y, &cluster, LEVEL);
    let per_1k = |v: f64| v * 1000.0;
    Some(TtftByTurn {
        label: cell.model.clone(),
        provider: cell.provider.clone(),
        simulated: cell.simulated,
        turns,
        slope_ms_per_1k_prompt_tokens: line.map(|l| per_1k(l.slope)),
        interval: line.and_then(|l| l.interval).map(|i| stats::Interval {
            lo: per_1k(i.lo),
            hi: per_1k(i.hi),
        }),
        slope_n: line.map_or(0, |l| l.n),
        slope_conversations: line.map_or(0, |l| l.clusters),
    })
}
