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
pub(super) fn turn_itl_p95(t: &Turn) -> Option<f64> {
    // NaN unless the reader found a gap.
    t.itl_p95.is_finite().then_some(f64::from(t.itl_p95))
}

/// ITL and TPOT of cell `cell` over the turns of its completed conversations: the gaps as
/// the reader counted them ([`Facts::itl`]), the turns measured or not counted here.
pub(super) fn stream_stats<'f>(
    facts: &'f Facts,
    cell: usize,
    convs: &[&Conv],
    turns_of: &impl Fn(&Conv) -> &'f [Turn],
) -> (Itl, Tpot) {
    let mut tpot: Vec<f64> = Vec::new();
    let (mut turns, mut unmeasured) = (0, 0);
    for c in convs.iter().filter(|c| c.outcome.is_completed()) {
        for t in turns_of(c) {
            if t.gap_count == NO_COUNT {
                unmeasured += 1;
            } else {
                turns += 1;
            }
            tpot.extend(tpot_ms(t));
        }
    }
    let estimate = |value: f64| Estimate {
        value,
        interval: None,
        too_few: false,
    };
    // Counted in µs; shown in ms.
    let gaps = facts.itl.get(cell);
    let quantiles = gaps.and_then(|h| h.percentiles(&[50.0, 95.0, 99.0]));
    let itl = match quantiles {
        Some(q) => Itl {
            n: gaps.map_or(0, |h| usize::try_from(h.len()).unwrap_or(usize::MAX)),
            p50: q.first().map(|&v| estimate(v / 1000.0)),
            p95: q.get(1).map(|&v| estimate(v / 1000.0)),
            p99: q.get(2).map(|&v| estimate(v / 1000.0)),
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
        p50: stats::median(&tpot).map(estimate),
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
