//! Per provider × model cell: reliability, latency, per-turn figures, usable turns, checks,
//! cache, cost and flags, from the loaded facts. Definitions: `docs/metrics.md`; the
//! statistics themselves are `crate::stats`.

use super::load::{Conv, Facts, Finish, NO_COUNT, Turn, is_usable};
use super::model::{
    Cache, Cell, CellChecks, Cost, Estimate, Flags, Median, Percentiles, Rate, Reliability,
    TurnStats,
};
use crate::outcome::TurnOutcome;
use crate::stats::{self, inference};
use rayon::prelude::*;

/// Share of the prompt below which a cached turn is cold (docs/metrics.md, "Replay").
const COLD_SHARE: f64 = 0.10;

/// What the cell computations need beyond the facts.
pub(super) struct CellOptions {
    pub sla_ms: Option<f64>,
}

/// The cluster of conversation `i` for the statistics: its scenario (conversations that
/// share one are not independent), or, without a scenario, a cluster of its own.
pub(super) fn cluster_of(facts: &Facts, i: usize) -> u32 {
    let c = facts.convs.get(i).and_then(|c| c.scenario);
    let id = c.unwrap_or(facts.scenarios.len() + i);
    u32::try_from(id).unwrap_or(u32::MAX)
}

/// The run of conversation `i` as a cluster label: when a report pools several runs, a
/// run's conditions are shared by its conversations (the second cluster level of
/// [`crate::stats::inference::PairedSample`]).
pub(super) fn run_of(facts: &Facts, i: usize) -> u32 {
    let run = facts.convs.get(i).map_or(0, |c| c.run_id);
    u32::try_from(run).unwrap_or(u32::MAX)
}

/// The conversations of each cell, by index into `facts.convs`.
pub(super) fn conversations_by_cell(facts: &Facts) -> Vec<Vec<usize>> {
    let mut by_cell = vec![Vec::new(); facts.cells.len()];
    for (i, c) in facts.convs.iter().enumerate() {
        by_cell[c.cell].push(i);
    }
    by_cell
}

/// Every cell, computed on every core (cells are independent; the bootstraps dominate).
pub(super) fn cells(facts: &Facts, by_cell: &[Vec<usize>], opts: &CellOptions) -> Vec<Cell> {
    by_cell
        .par_iter()
        .enumerate()
        .map(|(i, convs)| one_cell(facts, i, convs, opts))
        .collect()
}

fn one_cell(facts: &Facts, cell: usize, indices: &[usize], opts: &CellOptions) -> Cell {
    let key = &facts.cells[cell];
    let convs: Vec<&Conv> = indices.iter().map(|&i| &facts.convs[i]).collect();
    let turns_of = |c: &Conv| &facts.turns[c.first_turn..c.first_turn + c.n_turns];
    let retried = convs
        .iter()
        .flat_map(|c| turns_of(c))
        .any(|t| t.attempts > 1);
    let latencies = completed_values(&convs, |c| c.latency_ms);
    let (usable, checks) = quality(facts, indices, &turns_of, opts);
    Cell {
        latency_curve: curve(&latencies),
        provider: key.provider.clone(),
        model: key.label.clone(),
        model_ids: key.model_ids.iter().cloned().collect(),
        simulated: key.simulated,
        reliability: reliability(&convs, &turns_of),
        conversation_latency: latency(&latencies),
        conversation_wall: retried.then(|| {
            let wall = |c: &Conv| {
                turns_of(c)
                    .iter()
                    .map(|t| if t.wall.is_nan() { t.e2e } else { t.wall })
                    .sum::<f64>()
            };
            latency(&completed_values(&convs, wall))
        }),
        turns: turn_stats(facts, cell, &convs, &turns_of),
        usable,
        checks,
        cache: cache(&convs, &turns_of),
        cost: cost(&convs, &turns_of),
        flags: flags(&convs, &turns_of),
    }
}

fn reliability<'f>(convs: &[&Conv], turns_of: &impl Fn(&Conv) -> &'f [Turn]) -> Reliability {
    let mut r = Reliability::default();
    for c in convs {
        if c.outcome == crate::outcome::ConversationOutcome::Interrupted {
            r.interrupted += 1;
            continue;
        }
        if c.outcome.failure() == Some(TurnOutcome::InternalError) {
            r.internal_errors += 1;
            continue;
        }
        r.attempted += 1;
        match c.outcome.failure() {
            None => r.completed += 1,
            Some(class) => *r.failures.entry(class.as_str().to_string()).or_default() += 1,
        }
        for t in turns_of(c) {
            r.turns_sent += 1;
            if t.outcome.lets_conversation_continue(t.has_answer) {
                r.turns_answered += 1;
            }
        }
    }
    r.success = wilson_rate(r.completed, r.attempted);
    r
}

pub(super) fn wilson_rate(k: u64, n: u64) -> Rate {
    Rate {
        k,
        n,
        value: (n > 0).then(|| k as f64 / n as f64),
        interval: stats::wilson(k, n),
    }
}

/// `value(c)` of every completed conversation where it is known.
fn completed_values(convs: &[&Conv], value: impl Fn(&Conv) -> f64) -> Vec<f64> {
    convs
        .iter()
        .filter(|c| c.outcome.is_completed())
        .map(|c| value(c))
        .filter(|v| v.is_finite())
        .collect()
}

/// The percentiles a report shows.
const QS: [f64; 3] = [50.0, 95.0, 99.0];

/// Whether n values can bound the q-th percentile at 95 %: the distribution-free interval
/// from order statistics exists from 6 values for p50, 59 for p95, 299 for p99 (see
/// [`inference::quantile_interval`]). Below that the figure is printed with its n and no
/// interval.
fn interval_possible(n: usize, q: f64) -> bool {
    inference::quantile_interval_ranks(n, q / 100.0, LEVEL).is_some()
}

/// The confidence level of every cell interval.
const LEVEL: f64 = 0.95;

/// p50 / p95 / p99, each with its distribution-free order-statistic interval where n allows
/// one (coverage of at least 95 % for any continuous distribution; measured in the
/// calibration table).
pub(super) fn latency(values: &[f64]) -> Percentiles {
    let Some(sorted) = stats::sort_sample(values) else {
        return Percentiles::default();
    };
    let n = sorted.len();
    let estimate = |k: usize| {
        let q = QS[k];
        stats::percentile_sorted(&sorted, q).map(|value| Estimate {
            value,
            interval: inference::quantile_interval(&sorted, q, LEVEL),
            too_few: !interval_possible(n, q),
        })
    };
    Percentiles {
        n,
        p50: estimate(0),
        p95: estimate(1),
        p99: estimate(2),
    }
}

/// The values at every whole percentile, 0 to 100.
fn curve(values: &[f64]) -> Vec<f64> {
    let qs: Vec<f64> = (0..=100).map(f64::from).collect();
    stats::percentiles(values, &qs).unwrap_or_default()
}

/// Percentiles without intervals (per-turn figures).
fn plain_percentiles(values: &[f64]) -> Percentiles {
    let Some([p50, p95, p99]) =
        stats::percentiles(values, &[50.0, 95.0, 99.0]).and_then(|v| <[f64; 3]>::try_from(v).ok())
    else {
        return Percentiles::default();
    };
    let estimate = |value: f64| {
        Some(Estimate {
            value,
            interval: None,
            too_few: false,
        })
    };
    Percentiles {
        n: values.len(),
        p50: estimate(p50),
        p95: estimate(p95),
        p99: estimate(p99),
    }
}

fn median(values: &[f64]) -> Median {
    Median {
        n: values.len(),
        value: stats::median(values),
    }
}

fn turn_stats<'f>(
    facts: &'f Facts,
    cell: usize,
    convs: &[&Conv],
    turns_of: &impl Fn(&Conv) -> &'f [Turn],
) -> TurnStats {
    let (mut ttft, mut ttfa, mut e2e, mut tps, mut visible) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut missing = 0;
    for c in convs.iter().filter(|c| c.outcome.is_completed()) {
        for t in turns_of(c) {
            for (v, out) in [(t.ttft, &mut ttft), (t.ttfa, &mut ttfa), (t.e2e, &mut e2e)] {
                if v.is_finite() {
                    out.push(v);
                }
            }
            if let Some(speed) = decode_tps(t) {
                tps.push(speed);
            }
            if t.has_answer {
                if t.visible_tokens == NO_COUNT {
                    missing += 1;
                } else {
                    visible.push(f64::from(t.visible_tokens));
                }
            }
        }
    }
    let (itl_ms, tpot_ms) = super::stream::stream_stats(facts, cell, convs, turns_of);
    TurnStats {
        ttft: plain_percentiles(&ttft),
        ttfa: plain_percentiles(&ttfa),
        e2e: plain_percentiles(&e2e),
        decode_tps: median(&tps),
        visible_tokens: median(&visible),
        visible_tokens_missing: missing,
        itl_ms,
        tpot_ms,
    }
}

/// Output tokens per second of decoding: tokens / (E2E − TTFT), tokens from
/// `usage.completion_tokens`, else the visible tokens counted.
fn decode_tps(t: &Turn) -> Option<f64> {
    let span_ms = t.e2e - t.ttft;
    let tokens = if t.completion_tokens != NO_COUNT {
        t.completion_tokens
    } else {
        t.visible_tokens
    };
    (span_ms.is_finite() && span_ms > 0.0 && tokens != NO_COUNT && tokens > 0)
        .then(|| f64::from(tokens) * 1000.0 / span_ms)
}

/// Whether a conversation is in the quality denominators: it ran to its end or to its
/// failure (an interrupted one, or one that turnbench itself failed, is in none).
pub(super) fn counted_conversation(c: &Conv) -> bool {
    counted(c)
}

fn counted(c: &Conv) -> bool {
    c.outcome.is_completed()
        || c.outcome
            .failure()
            .is_some_and(|f| f != TurnOutcome::InternalError)
}

/// Whether the conversation's scenario has current check definitions.
fn has_checks(facts: &Facts, c: &Conv) -> bool {
    c.scenario
        .and_then(|s| facts.scenarios.get(s))
        .is_some_and(|s| facts.checks.scenarios.contains(s))
}

/// A conversation's task success: 1 when it completed and every current check of its
/// scenario passed, 0 when it failed (a failure never meets the bar) or a check failed;
/// `None` when it is in no quality denominator, its scenario has no checks, or it completed
/// and has no check results yet.
/// 1 when conversation `i` completed, 0 when it failed (by the provider or the client),
/// `None` when it does not count as attempted (interrupted, or a turnbench fault).
pub(super) fn completed_of(facts: &Facts, i: usize) -> Option<f64> {
    let c = facts.convs.get(i)?;
    counted(c).then_some(if c.outcome.is_completed() { 1.0 } else { 0.0 })
}

/// Conversation `i`'s constraint retention: of consecutive scored turns of one check where
/// it held first, the share where it held again (over all its checks); `None` without such
/// a pair (checks score completed conversations only).
pub(super) fn retention_of(facts: &Facts, i: usize) -> Option<f64> {
    let k = facts.checks.kept.get(i)?;
    (k.held_before > 0).then(|| f64::from(k.held_again) / f64::from(k.held_before))
}

pub(super) fn task_success_of(facts: &Facts, i: usize) -> Option<f64> {
    let c = facts.convs.get(i)?;
    if !counted(c) {
        return None;
    }
    if !has_checks(facts, c) {
        return None;
    }
    if !c.outcome.is_completed() {
        return Some(0.0);
    }
    let k = facts.checks.per_conv.get(i)?.as_ref()?;
    (k.passed + k.failed > 0).then_some(if k.failed == 0 { 1.0 } else { 0.0 })
}

/// Usable turns, check pass rates and task success. The two ratios (usable ÷ sent, passed
/// ÷ scored) get cluster-robust t intervals over scenarios, widened to hold Wilson's
/// interval over the conversations behind them, so no interval is ever [x, x]; task success
/// is one trial per attempted conversation (Wilson).
fn quality<'f>(
    facts: &Facts,
    indices: &[usize],
    turns_of: &impl Fn(&Conv) -> &'f [Turn],
    opts: &CellOptions,
) -> (Rate, CellChecks) {
    let mut checks = CellChecks::default();
    let (mut usable, mut sent, mut passed, mut scored) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut sent_cluster, mut scored_cluster) = (Vec::new(), Vec::new());
    let (mut successes, mut tried) = (0u64, 0u64);
    for &i in indices {
        let c = &facts.convs[i];
        let stored = facts.checks.per_conv.get(i).and_then(Option::as_ref);
        if let Some(k) = stored {
            checks.not_scored += u64::from(k.not_scored);
            for (tag, counts) in facts.checks.tags.iter().zip(&k.by_tag) {
                let t = checks.by_tag.entry(tag.clone()).or_default();
                t.passed += u64::from(counts[0]);
                t.failed += u64::from(counts[1]);
                t.not_scored += u64::from(counts[2]);
            }
        }
        if !counted(c) {
            continue;
        }
        if has_checks(facts, c) && stored.is_none() && c.outcome.is_completed() {
            checks.unchecked_conversations += 1;
        }
        if let Some(x) = task_success_of(facts, i) {
            tried += 1;
            successes += u64::from(x > 0.0);
        }
        let cluster = cluster_of(facts, i);
        let turns = turns_of(c);
        usable.push(turns.iter().filter(|t| is_usable(t, opts.sla_ms)).count() as f64);
        sent.push(turns.len() as f64);
        sent_cluster.push(cluster);
        if let Some(k) = stored.filter(|k| k.passed + k.failed > 0) {
            passed.push(f64::from(k.passed));
            scored.push(f64::from(k.passed + k.failed));
            scored_cluster.push(cluster);
        }
    }
    checks
        .by_tag
        .retain(|_, t| t.passed + t.failed + t.not_scored > 0);
    checks.task_success = wilson_rate(successes, tried);
    checks.pass = ratio_rate(&passed, &scored, &scored_cluster);
    (ratio_rate(&usable, &sent, &sent_cluster), checks)
}

/// Σnum ÷ Σden over conversations (one entry each) with its interval: estimate ± t_{C−1}
/// · the cluster-robust standard error over scenarios, held to [0, 1] and widened to hold
/// Wilson's interval for the same share over the conversations (so that a rate of 100 %
/// from 15 conversations reads [79.6, 100], never [100, 100]).
pub(super) fn ratio_rate(num: &[f64], den: &[f64], cluster: &[u32]) -> Rate {
    let (a, b): (f64, f64) = (num.iter().sum(), den.iter().sum());
    let value = (b > 0.0).then(|| a / b);
    let interval = value.and_then(|r| {
        let units = num.len() as u64;
        let wilson = stats::wilson((r * units as f64).round() as u64, units)?;
        let robust = inference::ratio_interval(num, den, cluster, LEVEL).map(|i| stats::Interval {
            lo: i.lo.max(0.0),
            hi: i.hi.min(1.0),
        });
        Some(match robust {
            Some(i) => stats::Interval {
                lo: i.lo.min(wilson.lo),
                hi: i.hi.max(wilson.hi),
            },
            None => wilson,
        })
    });
    Rate {
        k: a as u64,
        n: b as u64,
        value,
        interval,
    }
}

fn cache<'f>(convs: &[&Conv], turns_of: &impl Fn(&Conv) -> &'f [Turn]) -> Cache {
    let mut out = Cache::default();
    for c in convs {
        for t in turns_of(c).iter().skip(1) {
            if t.cached_tokens == NO_COUNT || t.prompt_tokens == NO_COUNT || t.prompt_tokens == 0 {
                continue;
            }
            out.turns_reported += 1;
            out.prompt_tokens += u64::from(t.prompt_tokens);
            out.cached_tokens += u64::from(t.cached_tokens);
            if f64::from(t.cached_tokens) < COLD_SHARE * f64::from(t.prompt_tokens) {
                out.cold_turns += 1;
            }
        }
    }
    out.hit_rate =
        (out.prompt_tokens > 0).then(|| out.cached_tokens as f64 / out.prompt_tokens as f64);
    out
}

/// USD per million tokens: (prompt − cached) × input + cached × cached price (the input
/// price when none is set) + completion × output. A turn is priced when its prompt and
/// completion tokens are reported; cached tokens not reported are priced as uncached.
fn cost<'f>(convs: &[&Conv], turns_of: &impl Fn(&Conv) -> &'f [Turn]) -> Cost {
    let mut out = Cost::default();
    let mut total = 0.0;
    let mut completed = 0u64;
    for c in convs {
        let Some(p) = c.prices else { continue };
        out.priced = true;
        completed += u64::from(c.outcome.is_completed());
        for t in turns_of(c) {
            if t.prompt_tokens == NO_COUNT || t.completion_tokens == NO_COUNT {
                continue;
            }
            let cached = if t.cached_tokens == NO_COUNT {
                0.0
            } else {
                f64::from(t.cached_tokens.min(t.prompt_tokens))
            };
            let uncached = f64::from(t.prompt_tokens) - cached;
            total += (uncached * p.input
                + cached * p.cached.unwrap_or(p.input)
                + f64::from(t.completion_tokens) * p.output)
                / 1e6;
            out.turns_priced += 1;
        }
    }
    if out.turns_priced > 0 {
        out.total_usd = Some(total);
        out.per_1000_turns_usd = Some(total / out.turns_priced as f64 * 1000.0);
        out.per_success_usd = (completed > 0).then(|| total / completed as f64);
    }
    out
}

fn flags<'f>(convs: &[&Conv], turns_of: &impl Fn(&Conv) -> &'f [Turn]) -> Flags {
    let mut f = Flags::default();
    for t in convs.iter().flat_map(|c| turns_of(c)) {
        if t.finish == Finish::Length {
            f.truncated_turns += 1;
            if t.has_reasoning && !t.has_answer {
                f.reasoning_used_budget += 1;
            }
        }
        if t.finish == Finish::ContentFilter {
            f.content_filtered_turns += 1;
        }
        if t.attempts > 1 {
            f.retried_turns += 1;
        }
    }
    f
}

/// Kept under this name for `report::sentences`; the one copy is the model's.
pub use super::model::failure_text;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_need_a_value_beyond_the_percentile() {
        // Order-statistic intervals exist from 6 values for p50, 59 for p95, 299 for p99.
        assert!(!interval_possible(5, 50.0));
        assert!(interval_possible(6, 50.0));
        assert!(!interval_possible(58, 95.0));
        assert!(interval_possible(59, 95.0));
        assert!(!interval_possible(298, 99.0));
        assert!(interval_possible(299, 99.0));
    }

    #[test]
    fn a_rate_of_all_successes_is_never_a_zero_width_interval() {
        // 15 conversations, every check passed, in 5 scenarios: the cluster-robust interval
        // has no spread, so Wilson's over the 15 conversations holds it: [79.6, 100].
        let num = [3.0; 15];
        let cluster: Vec<u32> = (0..15).map(|i| i / 3).collect();
        let r = ratio_rate(&num, &num, &cluster);
        let i = r.interval.unwrap();
        assert_eq!(i.hi, 1.0);
        assert!((i.lo - 0.7961).abs() < 1e-4, "{i:?}");
    }

    fn turn(ttft: f64, e2e: f64, completion: u32) -> Turn {
        Turn::sample(ttft, e2e, completion, 7)
    }

    #[test]
    fn decode_speed_is_tokens_over_the_decoding_span() {
        assert_eq!(decode_tps(&turn(200.0, 1200.0, 50)), Some(50.0));
        // Without reported usage, the visible tokens counted.
        assert_eq!(decode_tps(&turn(200.0, 900.0, NO_COUNT)), Some(10.0));
        // No span, no speed (never infinite).
        assert_eq!(decode_tps(&turn(200.0, 200.0, 50)), None);
        assert_eq!(decode_tps(&turn(f64::NAN, 200.0, 50)), None);
    }

    #[test]
    fn usable_turns_need_every_condition() {
        let ok = turn(100.0, 900.0, 10);
        assert!(is_usable(&ok, None));
        assert!(is_usable(&ok, Some(900.0)));
        assert!(!is_usable(&ok, Some(899.0)), "slower than the SLA");
        let mut t = ok.clone();
        t.finish = Finish::Length;
        assert!(!is_usable(&t, None), "cut by the token limit");
        let mut t = ok.clone();
        t.structure_failed = true;
        assert!(
            !is_usable(&t, None),
            "missing the structure its checks demand"
        );
        let mut t = ok.clone();
        t.has_answer = false;
        assert!(!is_usable(&t, None));
        t.finish = Finish::ToolCalls;
        assert!(is_usable(&t, None), "an answer made of tool calls only");
        let mut t = ok;
        t.outcome = TurnOutcome::StreamCut;
        assert!(!is_usable(&t, None));
    }
}
