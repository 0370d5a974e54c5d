//! The CSV format: one row per cell under a stable header (`docs/report.md` lists every
//! column). Milliseconds and fractions, plain numbers; empty means unknown, never 0. A cell
//! that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is prefixed with `'` so
//! a spreadsheet never runs it as a formula.

use std::io::Write;

use super::{ExportError, Exporter, FormatOptions};
use crate::report::model::{Cell, Estimate, FrontierPlace, Interval, Percentiles, Rate, Report};

pub struct Csv;

/// Tags with their own columns, in the report's order (a store's other tags are in JSON).
const TAGS: [&str; 6] = crate::report::TAG_ORDER;

/// The cell and its reliability.
#[rustfmt::skip]
const LEAD: &[&str] = &[
    "provider", "model", "model_ids", "simulated", "attempted", "completed", "interrupted",
    "success_rate", "success_lo", "success_hi", "failures", "turns_sent", "turns_answered",
];

/// Decode speed, output size, usable turns, task success and checks.
#[rustfmt::skip]
const DECODE_TO_CHECKS: &[&str] = &[
    "decode_tps_n", "decode_tps_median", "visible_tokens_n", "visible_tokens_median",
    "visible_tokens_missing", "usable_turns", "usable_of", "usable_rate", "usable_lo", "usable_hi",
    "task_success", "task_attempted", "task_success_rate", "task_success_lo", "task_success_hi",
    "checks_passed", "checks_scored", "checks_pass_rate", "checks_lo", "checks_hi",
    "checks_not_scored",
];

/// The judge, cache and cost, and the finish reasons.
#[rustfmt::skip]
const JUDGE_TO_RETRIES: &[&str] = &[
    "judge", "judge_simulated", "judge_n", "judge_attempted", "judge_mean", "judge_lo", "judge_hi",
    "judge_unparseable", "judge_errors", "cache_turns_reported", "cache_hit_rate",
    "cache_cold_turns", "cost_per_success_usd", "cost_per_1000_turns_usd", "cost_turns_priced",
    "truncated_turns", "reasoning_used_budget", "content_filtered_turns", "retried_turns",
];

/// Context overflow, the frontier, ITL and TPOT, and goodput.
#[rustfmt::skip]
const OVERFLOW_TO_GOODPUT: &[&str] = &[
    "context_overflows", "context_overflow_first_turn", "context_overflow_prompt_tokens",
    "context_overflow_window_tokens", "frontier", "itl_n", "itl_turns", "itl_turns_unmeasured",
    "itl_p50_ms", "itl_p95_ms", "itl_p99_ms", "tpot_n", "tpot_p50_ms", "goodput_turns",
    "goodput_turns_met", "goodput_rate", "goodput_rate_lo", "goodput_rate_hi",
    "goodput_conversations", "goodput_conversations_met",
];

/// The header, fixed: new columns are only ever appended.
pub fn header() -> Vec<String> {
    let names = |list: &[&str]| list.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let mut h = names(LEAD);
    for q in ["conversation", "conversation_wall"] {
        h.push(format!("{q}_n"));
        for p in ["p50", "p95", "p99"] {
            for part in ["ms", "lo_ms", "hi_ms"] {
                h.push(format!("{q}_{p}_{part}"));
            }
        }
    }
    for q in ["ttft", "ttfa", "e2e"] {
        h.push(format!("{q}_n"));
        for p in ["p50", "p95", "p99"] {
            h.push(format!("{q}_{p}_ms"));
        }
    }
    h.extend(names(DECODE_TO_CHECKS));
    for t in TAGS {
        h.push(format!("{t}_passed"));
        h.push(format!("{t}_scored"));
        h.push(format!("{t}_not_scored"));
    }
    h.extend(names(JUDGE_TO_RETRIES));
    h.extend(super::replay_tables::csv_header());
    for q in ["p50", "p95", "p99"] {
        for part in ["vs_fastest_ratio", "vs_fastest_lo", "vs_fastest_hi"] {
            h.push(format!("conversation_{q}_{part}"));
        }
    }
    h.extend(super::consistency_tables::csv_header());
    h.extend(names(OVERFLOW_TO_GOODPUT));
    h
}

/// One cell's row, in the header's order.
fn cell_row(r: &Report, i: usize, c: &Cell) -> Vec<String> {
    let mut row = lead_row(c);
    percentiles(&c.conversation_latency, true, &mut row);
    percentiles(&c.conversation_wall.unwrap_or_default(), true, &mut row);
    for p in [&c.turns.ttft, &c.turns.ttfa, &c.turns.e2e] {
        percentiles(p, false, &mut row);
    }
    decode_to_checks_row(c, &mut row);
    judge_to_retries_row(r, i, c, &mut row);
    row.extend(super::replay_tables::csv_row(r, &c.provider, &c.model));
    let d = r.vs_fastest.get(i);
    for delta in [
        d.and_then(|d| d.p50.as_ref()),
        d.and_then(|d| d.p95.as_ref()),
        d.and_then(|d| d.p99.as_ref()),
    ] {
        row.push(num(delta.map(|d| d.ratio)));
        row.extend(interval(delta.and_then(|d| d.interval)));
    }
    row.extend(super::consistency_tables::csv_row(r, &c.provider, &c.model));
    row.extend(overflow_row(r, &c.provider, &c.model));
    row.push(frontier_field(r, &c.provider, &c.model));
    row.extend(stream_row(&c.turns));
    row.extend(goodput_row(r, &c.provider, &c.model));
    row
}

/// `LEAD`: the cell and its reliability.
fn lead_row(c: &Cell) -> Vec<String> {
    let rel = &c.reliability;
    let mut row = vec![
        c.provider.clone(),
        c.model.clone(),
        c.model_ids.join(" "),
        c.simulated.to_string(),
        rel.attempted.to_string(),
        rel.completed.to_string(),
        rel.interrupted.to_string(),
    ];
    row.extend(rate(&rel.success));
    row.push(
        rel.failures
            .iter()
            .map(|(k, n)| format!("{k}:{n}"))
            .collect::<Vec<_>>()
            .join(";"),
    );
    row.push(rel.turns_sent.to_string());
    row.push(rel.turns_answered.to_string());
    row
}

/// `DECODE_TO_CHECKS`, then each tag's passed, scored and not scored.
fn decode_to_checks_row(c: &Cell, row: &mut Vec<String>) {
    row.push(c.turns.decode_tps.n.to_string());
    row.push(num(c.turns.decode_tps.value));
    row.push(c.turns.visible_tokens.n.to_string());
    row.push(num(c.turns.visible_tokens.value));
    row.push(c.turns.visible_tokens_missing.to_string());
    for r in [&c.usable, &c.checks.task_success, &c.checks.pass] {
        row.push(r.k.to_string());
        row.push(r.n.to_string());
        row.extend(rate(r));
    }
    row.push(c.checks.not_scored.to_string());
    for t in TAGS {
        let tally = c.checks.by_tag.get(t).copied().unwrap_or_default();
        row.push(tally.passed.to_string());
        row.push(tally.scored().to_string());
        row.push(tally.not_scored.to_string());
    }
}

/// `JUDGE_TO_RETRIES`: the primary judge's score of cell `i` (empty without one), cache and
/// cost, and the finish reasons' flags.
fn judge_to_retries_row(r: &Report, i: usize, c: &Cell, row: &mut Vec<String>) {
    match r
        .primary_judge()
        .and_then(|(_, s)| s.cells.get(i).map(|j| (s, j)))
    {
        Some((s, j)) => {
            row.push(format!("{} by {}", s.rubric, s.judge));
            row.push(s.simulated.to_string());
            row.push(j.n.to_string());
            row.push(j.attempted.to_string());
            row.extend(estimate(j.overall));
            row.push(j.unparseable.to_string());
            row.push(j.judge_errors.to_string());
        }
        None => row.extend(std::iter::repeat_n(String::new(), 9)),
    }
    row.push(c.cache.turns_reported.to_string());
    row.push(num(c.cache.hit_rate));
    row.push(c.cache.cold_turns.to_string());
    row.push(num(c.cost.per_success_usd));
    row.push(num(c.cost.per_1000_turns_usd));
    row.push(c.cost.turns_priced.to_string());
    row.push(c.flags.truncated_turns.to_string());
    row.push(c.flags.reasoning_used_budget.to_string());
    row.push(c.flags.content_filtered_turns.to_string());
    row.push(c.flags.retried_turns.to_string());
}

/// GOODPUT of one cell under `--slo`: turns sent and met, the rate with its interval,
/// conversations attempted and met; empty without `--slo`.
fn goodput_row(r: &Report, provider: &str, model: &str) -> [String; 7] {
    match r.goodput_of(provider, model) {
        None => Default::default(),
        Some(g) => {
            let [lo, hi] = interval(g.interval);
            [
                g.turns.to_string(),
                g.turns_met.to_string(),
                num(g.rate),
                lo,
                hi,
                g.conversations.to_string(),
                g.conversations_met.to_string(),
            ]
        }
    }
}

/// The cell's place on its label's efficient frontier: why it is on it (`fastest`,
/// `best_quality`, `fastest_and_best`, `not_beaten`), `off`, or empty when its label has
/// no frontier.
fn frontier_field(r: &Report, provider: &str, model: &str) -> String {
    match r.frontier_place(provider, model) {
        Some(FrontierPlace::On(why)) => why.as_str().to_string(),
        Some(FrontierPlace::Off) => "off".into(),
        None => String::new(),
    }
}

/// ITL and TPOT of a cell (PER TURN): gaps, turns measured and not, p50 / p95 / p99, and
/// TPOT's n and median.
fn stream_row(t: &crate::report::model::TurnStats) -> [String; 8] {
    let v = |e: Option<crate::report::model::Estimate>| num(e.map(|e| e.value));
    [
        t.itl_ms.n.to_string(),
        t.itl_ms.turns.to_string(),
        t.itl_ms.turns_unmeasured.to_string(),
        v(t.itl_ms.p50),
        v(t.itl_ms.p95),
        v(t.itl_ms.p99),
        t.tpot_ms.n.to_string(),
        v(t.tpot_ms.p50),
    ]
}

/// CONTEXT OVERFLOW's figures of one cell: conversations that outgrew the context (0 when
/// none did), the earliest turn, the median stated prompt and the stated window.
fn overflow_row(r: &Report, provider: &str, model: &str) -> [String; 4] {
    let flag = r
        .context_overflow
        .iter()
        .flat_map(|s| &s.cells)
        .find(|f| f.provider == provider && f.model == model);
    match flag {
        None => ["0".into(), String::new(), String::new(), String::new()],
        Some(f) => [
            f.conversations.to_string(),
            f.turns.keys().next().map_or(String::new(), u32::to_string),
            num(f.prompt_tokens),
            f.window_tokens.map_or(String::new(), |w| w.to_string()),
        ],
    }
}

fn num(x: Option<f64>) -> String {
    x.map_or(String::new(), |v| format!("{v}"))
}

fn interval(i: Option<Interval>) -> [String; 2] {
    [num(i.map(|i| i.lo)), num(i.map(|i| i.hi))]
}

fn rate(r: &Rate) -> [String; 3] {
    let [lo, hi] = interval(r.interval);
    [num(r.value), lo, hi]
}

fn estimate(e: Option<Estimate>) -> [String; 3] {
    let [lo, hi] = interval(e.and_then(|e| e.interval));
    [num(e.map(|e| e.value)), lo, hi]
}

fn percentiles(p: &Percentiles, with_intervals: bool, row: &mut Vec<String>) {
    row.push(p.n.to_string());
    for e in [p.p50, p.p95, p.p99] {
        let [v, lo, hi] = estimate(e);
        row.push(v);
        if with_intervals {
            row.push(lo);
            row.push(hi);
        }
    }
}

/// Neutralises a cell a spreadsheet would run as a formula.
pub fn inert(cell: String) -> String {
    match cell.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{cell}"),
        _ => cell,
    }
}

/// `--trend`: one row per run × cell.
#[rustfmt::skip]
pub const TREND_HEADER: [&str; 16] = [
    "run", "started_at", "provider", "model", "simulated", "attempted", "completed",
    "success_rate", "success_lo", "success_hi", "conversation_n", "conversation_p50_ms",
    "conversation_p50_lo_ms", "conversation_p50_hi_ms", "apart", "collector",
];

fn trend<W: Write>(
    t: &crate::report::model::Trend,
    w: &mut ::csv::Writer<W>,
) -> Result<(), ExportError> {
    w.write_record(TREND_HEADER)?;
    for p in &t.points {
        let mut row = vec![
            p.run.to_string(),
            p.started_at.clone(),
            p.provider.clone(),
            p.model.clone(),
            p.simulated.to_string(),
            p.success.n.to_string(),
            p.success.k.to_string(),
        ];
        row.extend(rate(&p.success));
        row.push(p.latency_n.to_string());
        row.extend(estimate(p.conversation_p50));
        row.push(p.apart.to_string());
        row.push(p.collector.clone().unwrap_or_default());
        w.write_record(row.into_iter().map(inert))?;
    }
    w.flush()?;
    Ok(())
}

/// `--matrix`: one row per scenario × cell (`crate::report::matrix`).
#[rustfmt::skip]
pub const MATRIX_HEADER: [&str; 12] = [
    "model", "provider", "scenario", "simulated", "attempted", "completed", "checks_scored",
    "checks_passed", "check_pass_rate", "judge", "judge_n", "judge_mean",
];

fn matrix<W: Write>(
    rows: &[crate::report::matrix::MatrixRow],
    w: &mut ::csv::Writer<W>,
) -> Result<(), ExportError> {
    w.write_record(MATRIX_HEADER)?;
    for m in rows {
        let row = vec![
            m.model.clone(),
            m.provider.clone(),
            m.scenario.clone(),
            m.simulated.to_string(),
            m.attempted.to_string(),
            m.completed.to_string(),
            m.checks_scored.to_string(),
            m.checks_passed.to_string(),
            num(m.check_pass_rate),
            m.judge.clone().unwrap_or_default(),
            m.judge_n.to_string(),
            num(m.judge_mean),
        ];
        w.write_record(row.into_iter().map(inert))?;
    }
    w.flush()?;
    Ok(())
}

/// `--turns`: one row per cell × check tag × turn (`crate::report::survival`); the tag's
/// forgetting and recovery figures repeat on each of its rows.
#[rustfmt::skip]
pub const TURNS_HEADER: [&str; 22] = [
    "model", "provider", "simulated", "tag", "turn", "scored", "held", "pass_rate", "pass_lo",
    "pass_hi", "survival_at_risk", "still_held", "forgetting_at_risk", "forgetting_lost",
    "forgetting_ratio", "forgetting_lo", "forgetting_hi", "recovery_failing", "recovery_recovered",
    "recovery_ratio", "recovery_lo", "recovery_hi",
];

fn turns<W: Write>(
    rows: &[crate::report::survival::ConstraintSurvival],
    w: &mut ::csv::Writer<W>,
) -> Result<(), ExportError> {
    w.write_record(TURNS_HEADER)?;
    for s in rows {
        let (f, c) = (&s.forgetting, &s.recovery);
        for (t, point) in s.turns.iter().zip(&s.survival) {
            let mut row = vec![
                s.label.clone(),
                s.provider.clone(),
                s.simulated.to_string(),
                s.tag.clone(),
                t.turn.to_string(),
                t.scored.to_string(),
                t.held.to_string(),
                num(t.rate),
            ];
            row.extend(interval(t.interval));
            row.push(point.at_risk.to_string());
            row.push(point.still_held.to_string());
            row.extend([f.at_risk.to_string(), f.lost.to_string(), num(f.ratio)]);
            row.extend(interval(f.interval));
            row.extend([c.failing.to_string(), c.recovered.to_string(), num(c.ratio)]);
            row.extend(interval(c.interval));
            w.write_record(row.into_iter().map(inert))?;
        }
    }
    w.flush()?;
    Ok(())
}

impl Exporter<Report> for Csv {
    fn write(
        &self,
        r: &Report,
        opts: &FormatOptions,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        let mut w = ::csv::Writer::from_writer(out);
        if let Some(t) = r.trend.as_ref().filter(|t| t.asked) {
            return trend(t, &mut w);
        }
        if opts.matrix_rows {
            return matrix(&r.matrix, &mut w);
        }
        if opts.turn_rows {
            return turns(&r.constraint_survival, &mut w);
        }
        w.write_record(header())?;
        for (i, c) in r.cells.iter().enumerate() {
            w.write_record(cell_row(r, i, c).into_iter().map(inert))?;
        }
        w.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_neutralised() {
        for bad in ["=HYPERLINK(\"x\")", "+1", "-1+2", "@SUM(A1)", "\tx", "\rx"] {
            assert!(inert(bad.into()).starts_with('\''), "{bad}");
        }
        assert_eq!(inert("acme".into()), "acme");
        assert_eq!(inert("0.5".into()), "0.5");
    }

    #[test]
    fn the_header_has_no_duplicates() {
        let h = header();
        let mut sorted = h.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), h.len());
    }
}
