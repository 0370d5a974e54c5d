//! How the stream came, per turn and per cell: inter-token latency (ITL, the gaps between
//! consecutive text-bearing SSE events) and time per output token (TPOT). Definitions:
//! `docs/metrics.md`; the percentiles are `crate::stats`'.

use super::load::{Conv, Facts, NO_COUNT, Turn};
use super::model::{Estimate, Itl, Tpot};
use crate::stats;

/// Time per output token of one turn, ms: (E2E − TTFT) ÷ (output tokens − 1), tokens
/// from `usage.completion_tokens`, else the visible tokens counted. `None` below 2 tokens
/// or without TTFT and E2E.
pub(super) fn tpot_ms(t: &Turn) -> Option<f64> {
    let tokens = if t.completion_tokens != NO_COUNT {
        t.completion_tokens
    } else {
        t.visible_tokens
    };
    let span = t.e2e - t.ttft;
    (tokens != NO_COUNT && tokens >= 2 && span.is_finite() && span >= 0.0)
        .then(|| span / f64::from(tokens - 1))
}

/// The 95th percentile of one turn's own gaps, ms; `None` when its gaps are not known or
/// it has none (one text event or fewer).
pub(super) fn turn_itl_p95(facts: &Facts, t: &Turn) -> Option<f64> {
    let gaps: Vec<f64> = facts.gaps_of(t)?.iter().map(|&g| f64::from(g)).collect();
    stats::percentiles(&gaps, &[95.0])?.first().copied()
}

/// ITL and TPOT of a cell over the turns of its completed conversations.
pub(super) fn stream_stats<'f>(
    facts: &'f Facts,
    convs: &[&Conv],
    turns_of: &impl Fn(&Conv) -> &'f [Turn],
) -> (Itl, Tpot) {
    // The gaps as stored (f32), sorted in place: one copy of a cell's gaps, not three.
    let (mut pooled, mut tpot): (Vec<f32>, Vec<f64>) = (Vec::new(), Vec::new());
    let (mut turns, mut unmeasured) = (0, 0);
    for c in convs.iter().filter(|c| c.outcome.is_completed()) {
        for t in turns_of(c) {
            match facts.gaps_of(t) {
                Some(g) => {
                    turns += 1;
                    pooled.extend_from_slice(g);
                }
                None => unmeasured += 1,
            }
            tpot.extend(tpot_ms(t));
        }
    }
    let estimate = |value: f64| Estimate {
        value,
        interval: None,
        too_few: false,
    };
    let n = pooled.len();
    let itl = match stats::percentiles_in_place_f32(&mut pooled, &[50.0, 95.0, 99.0]) {
        Some(q) => Itl {
            n,
            p50: q.first().copied().map(estimate),
            p95: q.get(1).copied().map(estimate),
            p99: q.get(2).copied().map(estimate),
            turns,
            turns_unmeasured: unmeasured,
        },
        None => Itl {
            turns,
            turns_unmeasured: unmeasured,
            ..Itl::default()
        },
    };
    let tpot = Tpot {
        n: tpot.len(),
        p50: stats::median(&tpot).map(|value| Estimate {
            value,
            interval: None,
            too_few: false,
        }),
    };
    (itl, tpot)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(ttft: f64, e2e: f64, completion: u32, visible: u32) -> Turn {
        Turn::sample(ttft, e2e, completion, visible)
    }

    #[test]
    fn tpot_is_the_decoding_span_over_the_tokens_after_the_first() {
        assert_eq!(tpot_ms(&turn(100.0, 1090.0, 100, 7)), Some(10.0));
        // Without usage, the visible tokens counted.
        assert_eq!(tpot_ms(&turn(100.0, 190.0, NO_COUNT, 10)), Some(10.0));
        // One token has no time per output token; nor a turn without TTFT.
        assert_eq!(tpot_ms(&turn(100.0, 190.0, 1, 10)), None);
        assert_eq!(tpot_ms(&turn(f64::NAN, 190.0, 10, 10)), None);
        assert_eq!(tpot_ms(&turn(100.0, 190.0, NO_COUNT, NO_COUNT)), None);
    }
}
