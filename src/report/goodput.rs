//! GOODPUT (`--slo`): per cell, the share of turns sent that met every given bound, and of
//! conversations whose every turn met it — vLLM's `--goodput` and AIPerf's goodput, per
//! turn of a conversation. Definitions: `docs/metrics.md`.

use super::cells::{cluster_of, counted_conversation, ratio_rate, wilson_rate};
use super::load::{Conv, Facts, NO_COUNT, Turn};
use super::model::{Cell, Goodput};
use super::stream::{tpot_ms, turn_itl_p95};
use crate::config::slo::Slo;
use rayon::prelude::*;

/// Whether a turn met every bound of `slo`: `Some(true)` met, `Some(false)` missed
/// (a failed turn misses), `None` when a bounded figure was not measured (the turn is
/// not met, and counted apart).
pub(super) fn meets(t: &Turn, slo: &Slo) -> Option<bool> {
    if !t.outcome.lets_conversation_continue(t.has_answer) {
        return Some(false);
    }
    let within = |v: f64, bound: Option<f64>| bound.is_none_or(|b| v <= b);
    let mut unknown = false;
    let mut check = |v: Option<f64>, bound: Option<f64>| match (v, bound) {
        (_, None) => true,
        (Some(v), b) => within(v, b),
        (None, Some(_)) => {
            unknown = true;
            true
        }
    };
    let known = |v: f64| v.is_finite().then_some(v);
    let mut met = check(known(t.ttft), slo.ttft_ms) && check(known(t.e2e), slo.e2e_ms);
    met &= match slo.tpot_ms {
        None => true,
        // Fewer than two tokens: nothing between tokens to bound.
        Some(_) if t.completion_tokens != NO_COUNT && t.completion_tokens < 2 => true,
        Some(b) => check(tpot_ms(t), Some(b)),
    };
    met &= match slo.itl_p95_ms {
        None => true,
        // One text event or none: no gap to bound.
        Some(_) if t.gap_count == 0 => true,
        Some(b) => check(turn_itl_p95(t), Some(b)),
    };
    if !met {
        Some(false)
    } else if unknown {
        None
    } else {
        Some(true)
    }
}

/// Conversation `i`'s share of turns that met every bound: `None` when it is in no
/// denominator (interrupted, a turnbench fault) or sent no turn.
pub(super) fn conversation_share(facts: &Facts, i: usize, slo: &Slo) -> Option<f64> {
    let c = facts.convs.get(i).filter(|c| counted_conversation(c))?;
    let turns = facts.turns.get(c.first_turn..c.first_turn + c.n_turns)?;
    let met = turns.iter().filter(|t| meets(t, slo) == Some(true)).count();
    (!turns.is_empty()).then(|| met as f64 / turns.len() as f64)
}

/// GOODPUT of every cell under `slo`; empty when no bound is given.
pub(super) fn section(
    facts: &Facts,
    by_cell: &[Vec<usize>],
    cells: &[Cell],
    slo: Option<&Slo>,
) -> Vec<Goodput> {
    let Some(slo) = slo.filter(|s| s.any()) else {
        return Vec::new();
    };
    by_cell
        .par_iter()
        .zip(cells)
        .filter(|(convs, _)| !convs.is_empty())
        .map(|(convs, cell)| one_cell(facts, convs, cell, slo))
        .collect()
}

fn one_cell(facts: &Facts, convs: &[usize], cell: &Cell, slo: &Slo) -> Goodput {
    let (mut met, mut sent, mut cluster) = (Vec::new(), Vec::new(), Vec::new());
    let (mut conversations, mut conversations_met, mut unmeasured) = (0u64, 0u64, 0u64);
    for &i in convs {
        let c: &Conv = &facts.convs[i];
        if !counted_conversation(c) {
            continue;
        }
        let turns = &facts.turns[c.first_turn..c.first_turn + c.n_turns];
        let mut k = 0u64;
        for t in turns {
            match meets(t, slo) {
                Some(true) => k += 1,
                Some(false) => {}
                None => unmeasured += 1,
            }
        }
        conversations += 1;
        conversations_met += u64::from(c.outcome.is_completed() && k == turns.len() as u64);
        met.push(k as f64);
        sent.push(turns.len() as f64);
        cluster.push(cluster_of(facts, i));
    }
    let turns = ratio_rate(&met, &sent, &cluster);
    let by_conversation = wilson_rate(conversations_met, conversations);
    Goodput {
        label: cell.model.clone(),
        provider: cell.provider.clone(),
        simulated: cell.simulated,
        slo: *slo,
        turns: turns.n,
        turns_met: turns.k,
        rate: turns.value,
        interval: turns.interval,
        turns_unmeasured: unmeasured,
        conversations,
        conversations_met,
        conversation_rate: by_conversation.value,
        conversation_interval: by_conversation.interval,
    }
}
