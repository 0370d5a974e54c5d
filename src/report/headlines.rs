//! The decision first: sentences that compare cells, each with its interval and whether
//! the data establish it.
//!
//! - Latency, per model label: the provider with the lowest conversation p50 (and p95)
//!   against the next, with a paired bootstrap of the difference over the (scenario, repeat)
//!   pairs both completed. Established when the interval lies below 0.
//! - Reliability per provider across models.
//! - Quality: the top cell against the next; when their intervals overlap (or the judge's
//!   own replicate spread covers the gap) the difference is said to be not established.
//! - Flags: truncation (and reasoning that used the budget), content filters, retries.

use std::collections::{BTreeMap, HashMap};

use super::cells::failure_text;
use super::load::Facts;
use super::model::{
    Cell, Comparison, Headline, HeadlineKind, Interval, JudgeSection, PairedComparison, Rate,
};
use crate::stats::{self, Bootstrap, PairedStat};

/// Fewer pairs than this and a paired bootstrap says nothing worth printing.
pub const MIN_PAIRS: usize = 5;

pub(super) fn headlines(
    facts: &Facts,
    by_cell: &[Vec<usize>],
    cells: &[Cell],
    judges: &[JudgeSection],
    boot: &Bootstrap,
) -> Vec<Headline> {
    let mut out = Vec::new();
    latency(facts, by_cell, cells, boot, &mut out);
    reliability(cells, &mut out);
    checks(cells, &mut out);
    for section in judges {
        judge(cells, section, &mut out);
    }
    flags(cells, &mut out);
    out
}

/// Milliseconds as a person reads them: seconds from 1 s up.
pub fn duration(ms: f64) -> String {
    if ms.abs() >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else {
        format!("{ms:.0} ms")
    }
}

/// A signed difference in the unit of its size.
fn delta(ms: f64, scale_ms: f64) -> String {
    if scale_ms >= 1000.0 {
        format!("{:+.2}", ms / 1000.0).replace('-', "−")
    } else {
        format!("{ms:+.0}").replace('-', "−")
    }
}

fn interval_text(i: &Interval, scale_ms: f64) -> String {
    format!("[{}, {}]", delta(i.lo, scale_ms), delta(i.hi, scale_ms)).replace('+', "")
}

pub fn percent(x: f64) -> String {
    let p = x * 100.0;
    if (p - p.round()).abs() < 0.05 && (p == 100.0 || p == 0.0) {
        format!("{p:.0} %")
    } else {
        format!("{p:.1} %")
    }
}

pub fn rate_text(r: &Rate) -> String {
    match (r.value, r.interval) {
        (Some(v), Some(i)) => format!("{} [{:.1}, {:.1}]", percent(v), i.lo * 100.0, i.hi * 100.0),
        (Some(v), None) => percent(v),
        _ => "-".into(),
    }
}

/// Completed conversations' latency by pair key: (scenario, repeat, k-th such
/// conversation of the cell in run order), so repeated runs pair run by run.
fn pair_keys(facts: &Facts, convs: &[usize]) -> HashMap<(usize, u32, u32), f64> {
    let mut seen: HashMap<(usize, u32), u32> = HashMap::new();
    let mut ordered: Vec<usize> = convs.to_vec();
    ordered.sort_by_key(|&i| (facts.convs[i].run_id, facts.convs[i].id));
    let mut out = HashMap::new();
    for i in ordered {
        let c = &facts.convs[i];
        let Some(s) = c.scenario else { continue };
        let k = seen.entry((s, c.repeat)).or_default();
        let key = (s, c.repeat, *k);
        *k += 1;
        if c.outcome.is_completed() && c.latency_ms.is_finite() {
            out.insert(key, c.latency_ms);
        }
    }
    out
}

fn latency(
    facts: &Facts,
    by_cell: &[Vec<usize>],
    cells: &[Cell],
    boot: &Bootstrap,
    out: &mut Vec<Headline>,
) {
    let mut by_label: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, c) in cells.iter().enumerate() {
        if c.conversation_latency.n > 0 {
            by_label.entry(c.model.as_str()).or_default().push(i);
        }
    }
    // First every comparison's pairs, then their bootstraps side by side on every core,
    // then the sentences.
    struct Job<'l> {
        kind: HeadlineKind,
        label: &'l str,
        q: f64,
        best: usize,
        next: usize,
        bv: f64,
        nv: f64,
        a: Vec<f64>,
        b: Vec<f64>,
    }
    let mut jobs = Vec::new();
    for (label, group) in by_label {
        if group.len() < 2 {
            continue;
        }
        for (kind, q) in [
            (HeadlineKind::LatencyP50, 50.0),
            (HeadlineKind::LatencyP95, 95.0),
        ] {
            let value = |i: usize| {
                let p = &cells[i].conversation_latency;
                if q == 50.0 { p.p50 } else { p.p95 }.map_or(f64::INFINITY, |e| e.value)
            };
            let mut ranked = group.clone();
            ranked.sort_by(|&a, &b| value(a).total_cmp(&value(b)));
            let (best, next) = (ranked[0], ranked[1]);
            let pa = pair_keys(facts, &by_cell[best]);
            let pb = pair_keys(facts, &by_cell[next]);
            let mut keys: Vec<_> = pa.keys().filter(|k| pb.contains_key(k)).copied().collect();
            keys.sort_unstable();
            jobs.push(Job {
                kind,
                label,
                q,
                best,
                next,
                bv: value(best),
                nv: value(next),
                a: keys.iter().map(|k| pa[k]).collect(),
                b: keys.iter().map(|k| pb[k]).collect(),
            });
        }
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, jobs.len().max(1));
    let mut diffs: Vec<Option<stats::PairedDiff>> = vec![None; jobs.len()];
    std::thread::scope(|s| {
        let jobs = &jobs;
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    (t..jobs.len())
                        .step_by(threads)
                        .map(|i| {
                            let j = &jobs[i];
                            let d = (j.a.len() >= MIN_PAIRS)
                                .then(|| {
                                    stats::paired_difference(
                                        &j.a,
                                        &j.b,
                                        PairedStat::Percentile(j.q),
                                        boot,
                                    )
                                })
                                .flatten();
                            (i, d)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for w in workers {
            // Pure arithmetic on finite values; a panic there is a bug, reported as one.
            for (i, d) in w.join().expect("a paired bootstrap panicked") {
                diffs[i] = d;
            }
        }
    });
    for (j, d) in jobs.iter().zip(diffs) {
        let Job {
            kind,
            label,
            q,
            best,
            next,
            bv,
            nv,
            ..
        } = *j;
        let keys = &j.a;
        {
            let paired = d.map(|d| PairedComparison {
                pairs: d.n,
                difference_ms: d.estimate,
                interval: d.interval.into(),
                established: d.interval.hi < 0.0,
            });
            let lower_by = if nv > 0.0 { (nv - bv) / nv } else { 0.0 };
            let (bp, np) = (&cells[best].provider, &cells[next].provider);
            let what = if q == 50.0 {
                "fastest conversation p50"
            } else {
                "fastest conversation p95"
            };
            let head = format!(
                "{what}: {bp} {} vs {np} {} — {:.0} % lower",
                duration(bv),
                duration(nv),
                lower_by * 100.0
            );
            let (text, established) = match &paired {
                Some(p) if p.established => (
                    format!(
                        "{head}, paired over {} (scenario, repeat) pairs: {} s {} → established",
                        p.pairs,
                        delta(p.difference_ms, 1000.0),
                        interval_text(&p.interval, 1000.0)
                    ),
                    true,
                ),
                Some(p) => (
                    format!(
                        "{head} — not established (paired Δ over {} pairs {} s {})",
                        p.pairs,
                        delta(p.difference_ms, 1000.0),
                        interval_text(&p.interval, 1000.0)
                    ),
                    false,
                ),
                None => (
                    format!(
                        "{head} — not established: {} (scenario, repeat) pairs both completed, \
                         a paired comparison needs {MIN_PAIRS}",
                        keys.len()
                    ),
                    false,
                ),
            };
            out.push(Headline {
                kind,
                model: Some(label.to_string()),
                text,
                established: Some(established),
                simulated: cells[best].simulated || cells[next].simulated,
                comparison: Some(Comparison {
                    best: bp.clone(),
                    best_ms: bv,
                    next: np.clone(),
                    next_ms: nv,
                    lower_by,
                    paired,
                }),
            });
        }
    }
}

/// One provider's conversations across its model labels.
#[derive(Default)]
struct ProviderTally {
    attempted: u64,
    completed: u64,
    failures: BTreeMap<String, u64>,
    simulated: bool,
}

fn reliability(cells: &[Cell], out: &mut Vec<Headline>) {
    let mut by_provider: BTreeMap<&str, ProviderTally> = BTreeMap::new();
    for c in cells {
        let e = by_provider.entry(c.provider.as_str()).or_default();
        e.attempted += c.reliability.attempted;
        e.completed += c.reliability.completed;
        for (class, n) in &c.reliability.failures {
            *e.failures.entry(class.clone()).or_default() += n;
        }
        e.simulated |= c.simulated;
    }
    let mut rows: Vec<_> = by_provider
        .into_iter()
        .filter(|(_, t)| t.attempted > 0)
        .collect();
    let rate = |t: &ProviderTally| t.completed as f64 / t.attempted as f64;
    rows.sort_by(|a, b| rate(&a.1).total_cmp(&rate(&b.1)).then(a.0.cmp(b.0)));
    for (provider, t) in rows {
        let ProviderTally {
            attempted,
            completed,
            failures,
            simulated,
        } = t;
        let rate = super::cells::wilson_rate(completed, attempted);
        let failures = if failures.is_empty() {
            "no failures".to_string()
        } else {
            format!("failures: {}", failure_text(&failures))
        };
        out.push(Headline {
            kind: HeadlineKind::Reliability,
            model: None,
            text: format!(
                "{provider}: {completed}/{attempted} conversations completed ({}); {failures}",
                rate_text(&rate)
            ),
            established: None,
            simulated,
            comparison: None,
        });
    }
}

fn cell_name(c: &Cell) -> String {
    format!("{} / {}", c.provider, c.model)
}

/// One cell's quality figure, for a ranking sentence.
struct Ranked {
    name: String,
    value: f64,
    interval: Option<Interval>,
    /// The figure as the sentence prints it, interval included.
    text: String,
}

/// Two figures differ when their intervals do not overlap (and, with a `tolerance`, by
/// more than it); without an interval nothing is established.
fn apart(a: &Ranked, b: &Ranked, tolerance: f64) -> bool {
    match (a.interval, b.interval) {
        (Some(x), Some(y)) => !x.overlaps(&y) && (a.value - b.value).abs() > tolerance,
        _ => false,
    }
}

/// "what" of every cell, best first: who leads, whether its lead over the next is
/// established, and over which cells a difference is. `why_not` says what "not
/// established" rests on. Returns the sentence and whether the lead is established.
fn ranking(
    what: &str,
    mut rows: Vec<Ranked>,
    tolerance: f64,
    why_not: &str,
) -> Option<(String, bool)> {
    if rows.len() < 2 {
        return None;
    }
    rows.sort_by(|a, b| b.value.total_cmp(&a.value));
    let (top, next) = (&rows[0], &rows[1]);
    let below: Vec<&Ranked> = rows[1..]
        .iter()
        .filter(|r| apart(top, r, tolerance))
        .collect();
    let low = rows.last().map_or(top.value, |r| r.value);
    if below.is_empty() {
        return Some((
            format!(
                "{what} {}–{} {why_not}: quality difference not established",
                fmt_value(low, top),
                fmt_value(top.value, top)
            ),
            false,
        ));
    }
    let lead = apart(top, next, tolerance);
    let list = |rs: &[&Ranked]| {
        rs.iter()
            .map(|r| format!("{} {}", r.name, r.text))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let text = if lead && below.len() == rows.len() - 1 {
        format!(
            "{what}: {} leads with {}, established over every other cell (next: {} {})",
            top.name, top.text, next.name, next.text
        )
    } else if lead {
        format!(
            "{what}: {} leads with {}, established over {}",
            top.name,
            top.text,
            list(&below)
        )
    } else {
        format!(
            "{what}: {} leads with {}; its lead over {} {} is not established; established over {}",
            top.name,
            top.text,
            next.name,
            next.text,
            list(&below)
        )
    };
    Some((text, lead))
}

/// A ranking value as the sentence prints it (a rate in %, a score with two decimals).
fn fmt_value(v: f64, like: &Ranked) -> String {
    if like.text.contains('%') {
        percent(v)
    } else {
        format!("{v:.2}")
    }
}

fn checks(cells: &[Cell], out: &mut Vec<Headline>) {
    let rows: Vec<Ranked> = cells
        .iter()
        .filter_map(|c| {
            Some(Ranked {
                name: cell_name(c),
                value: c.checks.pass.value?,
                interval: c.checks.pass.interval,
                text: rate_text(&c.checks.pass),
            })
        })
        .collect();
    let simulated = cells.iter().any(|c| c.simulated);
    if let Some((text, established)) = ranking(
        "check pass rates",
        rows,
        0.0,
        "overlap within their intervals",
    ) {
        out.push(Headline {
            kind: HeadlineKind::QualityChecks,
            model: None,
            text,
            established: Some(established),
            simulated,
            comparison: None,
        });
    }
}

fn judge(cells: &[Cell], section: &JudgeSection, out: &mut Vec<Headline>) {
    let rows: Vec<Ranked> = section
        .cells
        .iter()
        .zip(cells)
        .filter_map(|(j, c)| {
            let e = j.overall?;
            Some(Ranked {
                name: cell_name(c),
                value: e.value,
                interval: e.interval,
                text: match e.interval {
                    Some(i) => format!("{:.2} [{:.2}, {:.2}]", e.value, i.lo, i.hi),
                    None => format!("{:.2}", e.value),
                },
            })
        })
        .collect();
    // A gap inside the judge's own replicate disagreement is not a difference either.
    let spread = section
        .cells
        .iter()
        .filter_map(|j| j.replicate_spread)
        .fold(0.0, f64::max);
    let why_not = if spread > 0.0 {
        format!("overlap within their intervals or the judge's own replicate spread ({spread:.2})")
    } else {
        "overlap within their intervals".to_string()
    };
    let what = format!(
        "judge means ({} by {}{})",
        section.rubric,
        section.judge,
        if section.simulated { ", simulated" } else { "" }
    );
    if let Some((text, established)) = ranking(&what, rows, spread, &why_not) {
        out.push(Headline {
            kind: HeadlineKind::QualityJudge,
            model: None,
            text,
            established: Some(established),
            simulated: section.simulated || cells.iter().any(|c| c.simulated),
            comparison: None,
        });
    }
}

fn flags(cells: &[Cell], out: &mut Vec<Headline>) {
    for c in cells {
        let f = &c.flags;
        let mut parts = Vec::new();
        if f.truncated_turns > 0 {
            let mut s = format!("{} finish_reason=length", turns(f.truncated_turns));
            if f.reasoning_used_budget > 0 {
                s.push_str(&format!(
                    ", {} with reasoning and no answer (reasoning used the budget)",
                    f.reasoning_used_budget
                ));
            }
            parts.push(s);
        }
        if f.content_filtered_turns > 0 {
            parts.push(format!(
                "{} stopped by the provider's content filter",
                turns(f.content_filtered_turns)
            ));
        }
        if f.retried_turns > 0 {
            parts.push(format!(
                "{} needed retries (wall time with retries is shown apart)",
                turns(f.retried_turns)
            ));
        }
        if !parts.is_empty() {
            out.push(Headline {
                kind: HeadlineKind::Flag,
                model: Some(c.model.clone()),
                text: format!("{}: {}", cell_name(c), parts.join("; ")),
                established: None,
                simulated: c.simulated,
                comparison: None,
            });
        }
    }
}

fn turns(n: u64) -> String {
    if n == 1 {
        "1 turn".into()
    } else {
        format!("{n} turns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(8260.0), "8.26 s");
        assert_eq!(duration(812.4), "812 ms");
        assert_eq!(delta(-2740.0, 8000.0), "−2.74");
        assert_eq!(delta(900.0, 8000.0), "+0.90");
        assert_eq!(percent(1.0), "100 %");
        assert_eq!(percent(0.9777), "97.8 %");
    }
}
