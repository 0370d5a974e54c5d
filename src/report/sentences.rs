//! The report's sentences, written once when the report is built: each headline's, from
//! what it states ([`super::model::Said`]) and the family of claims behind it, and a
//! run-against-baseline change in words (its statistic's name, each side's value, the
//! change with its interval, the verdict), which the headline and the AGAINST THE BASELINE
//! table share. Every figure is formatted by [`crate::figure`]. Every format prints these
//! sentences as they are: the terminal, Markdown and HTML under their groups, the JSON
//! report as each headline's `text`.

use std::collections::BTreeMap;

use super::model::{
    Change, ChangeVerdict, Claim, ClaimStatistic, Family, Flags, Headline, Rate, Said, Scale,
    Shortfall,
};
use crate::figure::{Figure, Unit, duration, percent};
use crate::stats::inference;

/// Writes each headline's sentence into its `text`.
pub(super) fn write(headlines: &mut [Headline]) {
    for h in headlines {
        h.text = text(h);
    }
}

/// What a family headline compares, as its sentence and its family's table name it:
/// `fastest conversation p50 on glm-5.3-flash`, `task success across models`. `None` for
/// a headline that compares nothing.
pub fn what(h: &Headline) -> Option<String> {
    Some(match &h.said {
        Said::Fastest { q, label, .. } => format!("fastest conversation p{q} on {label}"),
        Said::Reliability { .. } => format!("conversations completed {}", scope(h)),
        Said::TaskSuccess { .. } => format!("task success {}", scope(h)),
        Said::Retention { .. } => format!("constraints kept {}", scope(h)),
        Said::Goodput { slo, .. } => format!("goodput ({slo}) {}", scope(h)),
        Said::TtftSlope { .. } => format!("TTFT per 1k prompt tokens (ms) {}", scope(h)),
        Said::JudgeMean {
            rubric,
            judge,
            simulated,
            ..
        } => format!(
            "judge mean ({} by {judge}{}) {}",
            rubric.split_once('@').map_or(rubric.as_str(), |(id, _)| id),
            if *simulated { ", simulated" } else { "" },
            scope(h)
        ),
        _ => return None,
    })
}

/// A headline's sentence.
fn text(h: &Headline) -> String {
    if let (Some(f), Some(what)) = (&h.family, what(h)) {
        return family_line(&what, h.model.as_deref(), f);
    }
    match &h.said {
        Said::Fastest {
            q,
            label,
            provider,
            ms,
            n,
        } => format!(
            "fastest conversation p{q} on {label}: {provider} {} (n {n})",
            duration(*ms)
        ),
        Said::Reliability {
            cell,
            completed,
            attempted,
            rate,
            failures,
        } => reliability_text(cell, *completed, *attempted, rate, failures),
        Said::TaskSuccess { leader, rate } => format!(
            "task success: {leader} {} (n {} attempted)",
            rate_text(rate),
            rate.n
        ),
        Said::JudgeMean { .. } => judge_text(h),
        Said::Retention {
            leader,
            held_again,
            held_before,
            rate,
        } => format!(
            "constraints kept: {leader} {} ({held_again} of {held_before} held again)",
            rate_text(rate)
        ),
        Said::Goodput { leader, rate, slo } => format!(
            "goodput ({slo}): {leader} {} ({} of {} turns)",
            rate_text(rate),
            rate.k,
            rate.n
        ),
        Said::TtftSlope {
            leader,
            slope,
            turns,
            conversations,
        } => format!(
            "TTFT per 1k prompt tokens: {leader} {} ({turns} turns of {conversations} conversations)",
            slope.figure(Unit::MsPer1k)
        ),
        Said::CellFlags { cell, flags } => format!("{cell}: {}", flags_text(flags)),
        Said::ContextOverflow(contrast) => contrast.text.clone(),
        Said::Frontier(f) => frontier_text(f),
        Said::Anchors(a) => super::anchor_check::sentence(a),
        Said::Simulated { all } => {
            let which = if *all {
                "every cell was".to_string()
            } else {
                format!("cells marked{} were", super::simulated::NAME_MARK)
            };
            format!(
                "simulated: {which} served by the built-in mock provider; these figures say \
                 nothing about any real provider"
            )
        }
        Said::Change {
            change,
            selected,
            baseline,
        } => change_headline(change, selected, baseline),
        Said::Baseline { .. } => baseline_text(&h.said),
    }
}

fn rate_text(rate: &Rate) -> String {
    rate.figure().map_or("-".into(), |f| f.to_string())
}

/// "P: 23/24 conversations completed (95.8 % [79.8, 99.3]); failures: 1 truncated".
fn reliability_text(
    provider: &str,
    completed: u64,
    attempted: u64,
    rate: &Rate,
    failures: &BTreeMap<String, u64>,
) -> String {
    let failures = if failures.is_empty() {
        "no failures".to_string()
    } else {
        format!("failures: {}", super::cells::failure_text(failures))
    };
    format!(
        "{provider}: {completed}/{attempted} conversations completed ({}); {failures}",
        rate_text(rate)
    )
}

/// A judge's leader by mean score, when it has no family.
fn judge_text(h: &Headline) -> String {
    let Said::JudgeMean {
        leader,
        mean,
        all_equal,
        n,
        attempted,
        ..
    } = &h.said
    else {
        return String::new();
    };
    let figure = match mean {
        Some(e) if *all_equal && e.interval.is_none() => {
            format!("{} (all {n} equal)", e.figure(Unit::Score))
        }
        Some(e) => e.figure(Unit::Score).to_string(),
        None => "-".into(),
    };
    format!(
        "{}: {leader} {figure} (scored {n} of {attempted} attempted)",
        what(h).unwrap_or_default()
    )
}

/// Where a family's comparisons are made: `on LABEL`, or `across models`.
fn scope(h: &Headline) -> String {
    match &h.model {
        Some(label) => format!("on {label}"),
        None => "across models".into(),
    }
}

/// A family's headline in one line: what, the leader and its figure, the next and its
/// figure, the difference with its interval over the pairs, the verdict (and equivalence
/// when a margin was given), then how many more comparisons the family holds and over how
/// many others the lead is established. Within a model label the cells are named by
/// provider; the family's table (FAMILIES) holds every comparison.
fn family_line(what: &str, label: Option<&str>, f: &Family) -> String {
    let name = |cell: &str| member_name(f, label, cell);
    let figure = |cell: &str| member_figure(f, cell);
    let Some(next) = f.claims.first() else {
        return match &f.leader {
            Some(l) => format!("{what}: {} {}", name(l), figure(l)),
            None => what.to_string(),
        };
    };
    // Both sides over the pairs the difference is of, when a test was made.
    // (Too few pairs: the verdict counts them.)
    let over = match next.reason {
        Some(Shortfall::TooFewPairs { .. }) => String::new(),
        _ => format!(" over {} pairs", next.n),
    };
    let sides = match (next.a_value, next.b_value) {
        (Some(a), Some(b)) => format!(
            "{} {} vs next {} {}{over}",
            name(&next.a),
            statistic_value(f.statistic, a),
            name(&next.b),
            statistic_value(f.statistic, b),
        ),
        _ => format!(
            "{} {} vs next {} {}",
            name(&next.a),
            figure(&next.a),
            name(&next.b),
            figure(&next.b),
        ),
    };
    let mut line = format!("{what}: {sides}: {}", verdict_line(next, f.statistic));
    if f.comparisons > 1 {
        let won = f.claims.iter().filter(|c| c.established).count();
        line.push_str(&format!("; {won} of {} leads established", f.claims.len()));
        if f.claims.iter().any(|c| c.equivalence.is_some()) {
            let eq = f
                .claims
                .iter()
                .filter(|c| c.equivalence.is_some_and(|e| e.established))
                .count();
            line.push_str(&format!(", equivalent to {eq}"));
        }
        line.push_str(&format!(" (family of {})", f.comparisons));
    }
    line
}

/// A cell as a family's sentence and table name it: its provider within a model label,
/// else `provider / model label`.
pub fn member_name(f: &Family, label: Option<&str>, cell: &str) -> String {
    match (label, f.members.iter().find(|m| m.cell == cell)) {
        (Some(_), Some(m)) => m.provider.clone(),
        _ => cell.to_string(),
    }
}

/// A family cell's own figure with its n: `765 ms (n 29)`.
pub fn member_figure(f: &Family, cell: &str) -> String {
    match f.members.iter().find(|m| m.cell == cell) {
        Some(m) => format!(
            "{} (n {})",
            m.figure
                .map_or("-".into(), |v| statistic_value(f.statistic, v)),
            m.n
        ),
        None => "-".into(),
    }
}

/// A claim's difference and verdict: `44 % lower [35, 51], established`, with its
/// equivalence when one was asked for.
pub fn verdict_line(c: &Claim, statistic: ClaimStatistic) -> String {
    let gap = gap_text(c, statistic).map_or(String::new(), |g| format!("{g}, "));
    // (An interval holding no difference shows it: no more words.)
    let verdict = match &c.reason {
        None if c.established => "established".to_string(),
        Some(Shortfall::NoDifference | Shortfall::IntervalHoldsNone) | None => {
            "not established".to_string()
        }
        Some(r) => format!("not established: {}", r.brief()),
    };
    let mut s = format!("{gap}{verdict}");
    if let Some(e) = &c.equivalence {
        let margin = margin_text(e.margin, statistic);
        s.push_str(&if e.established {
            format!(", equivalent within ±{margin}")
        } else {
            format!(", not shown equivalent within ±{margin}")
        });
    }
    s
}

/// A margin as `--margin` takes it: `10 %`, `5 points`, `0.25`.
pub fn margin_text(m: f64, statistic: ClaimStatistic) -> String {
    match statistic.scale() {
        Scale::Ratio => format!("{} %", trim_number(m * 100.0)),
        Scale::Share => format!("{} points", trim_number(m * 100.0)),
        Scale::Score => trim_number(m),
        Scale::Slope => format!("{} ms per 1k prompt tokens", trim_number(m)),
    }
}

/// A number with no trailing zeros: 10, 2.5, 0.25.
fn trim_number(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A side's own figure as a headline prints it: a duration, a share in %, a score.
pub fn statistic_value(statistic: ClaimStatistic, v: f64) -> String {
    match statistic.scale() {
        Scale::Ratio => duration(v),
        Scale::Share => percent(v),
        Scale::Score => Figure::new(v, Unit::Score).to_string(),
        // (What the headline compares names the unit.)
        Scale::Slope => Figure::new(v, Unit::MsPer1k).bare().to_string(),
    }
}

/// A claim's estimate with its interval, in the statistic's unit; `None` without one.
pub fn gap_text(c: &Claim, statistic: ClaimStatistic) -> Option<String> {
    match statistic.scale() {
        Scale::Ratio => lower_text(c),
        Scale::Share => points_text(c),
        Scale::Score => score_text(c),
        Scale::Slope => difference_text(c, |v| Figure::new(v, Unit::MsPer1k).bare()),
    }
}

/// An equivalence claim's interval in the statistic's unit: `[−3.1, +4.0] points`.
pub fn equivalence_interval_text(c: &Claim, statistic: ClaimStatistic) -> Option<String> {
    let e = c.equivalence?;
    let i = e.interval?;
    // Rounded first, so that a bound of −10⁻¹⁴ prints as +0.0, not −0.0.
    let r = |x: f64, digits: i32| {
        let k = 10f64.powi(digits);
        (x * k).round() / k + 0.0
    };
    let text = match statistic.scale() {
        // As the claim's difference reads: % lower (1 − the ratio).
        Scale::Ratio => format!(
            "[{:.0}, {:.0}] % lower",
            r((1.0 - i.hi) * 100.0, 0),
            r((1.0 - i.lo) * 100.0, 0)
        ),
        Scale::Share => format!(
            "[{:+.1}, {:+.1}] points",
            r(i.lo * 100.0, 1),
            r(i.hi * 100.0, 1)
        ),
        Scale::Score => format!("[{:+.2}, {:+.2}]", r(i.lo, 2), r(i.hi, 2)),
        Scale::Slope => format!(
            "[{:+.1}, {:+.1}] ms per 1k prompt tokens",
            r(i.lo, 1),
            r(i.hi, 1)
        ),
    };
    Some(text.replace('-', "−"))
}

/// An established change against the baseline.
fn change_headline(c: &Change, selected: &str, baseline: &str) -> String {
    format!(
        "{}: {} {} {} → {} ({}), established ({selected} vs {baseline}, {} pairs in {} scenarios)",
        c.cell,
        statistic_name(c),
        if c.verdict == ChangeVerdict::Regressed {
            "regressed"
        } else {
            "improved"
        },
        value_text(c, c.claim.b_value),
        value_text(c, c.claim.a_value),
        change_text(c),
        c.claim.n,
        c.claim.scenarios,
    )
}

/// The comparison with the baseline, summed up.
fn baseline_text(said: &Said) -> String {
    let Said::Baseline {
        selected,
        baseline,
        regressions,
        improvements,
        comparisons,
        cells,
        alpha,
        alone,
    } = said
    else {
        return String::new();
    };
    let mut text = format!(
        "{selected} against {baseline}: {regressions} regression{}, {improvements} improvement{} established in {comparisons} comparisons of {cells} cells (Holm, family-wise {:.0} %)",
        if *regressions == 1 { "" } else { "s" },
        if *improvements == 1 { "" } else { "s" },
        alpha * 100.0
    );
    if *alone > 0 {
        text.push_str(&format!("; {alone} cell(s) in one side only, not compared"));
    }
    text
}

/// A cell's flags: truncation (and reasoning that used the budget), content filtering,
/// retries.
fn flags_text(f: &Flags) -> String {
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
    parts.join("; ")
}

fn turns(n: u64) -> String {
    if n == 1 {
        "1 turn".into()
    } else {
        format!("{n} turns")
    }
}

/// Why a claim has no interval: too few scenarios for a t interval, or nothing varies.
fn unbounded(c: &Claim) -> &'static str {
    if matches!(
        c.reason,
        Some(
            Shortfall::TooFewPairs { .. }
                | Shortfall::OneScenario { .. }
                | Shortfall::TooFewScenarios { .. }
        )
    ) {
        // The verdict says why: a comparison short of pairs gets no interval.
        ""
    } else if c.scenarios <= inference::MIN_DF {
        "(too few scenarios to bound)"
    } else {
        "(no spread)"
    }
}

/// A latency ratio as "24 % lower [12, 35]" (lower = 1 − ratio).
fn lower_text(c: &Claim) -> Option<String> {
    let r = c.estimate?;
    let lower = |x: f64| (1.0 - x) * 100.0;
    let word = if r <= 1.0 { "lower" } else { "higher" };
    let main = format!("{:.0} % {word}", lower(r).abs());
    Some(match c.interval {
        Some(i) => format!("{main} [{:.0}, {:.0}]", lower(i.hi), lower(i.lo)).replace('-', "−"),
        None => format!("{main} {}", unbounded(c)).trim_end().to_string(),
    })
}

/// A difference of shares as "+25.0 points [+5.1, +44.9]".
fn points_text(c: &Claim) -> Option<String> {
    difference_text(c, |v| Figure::new(v, Unit::Points))
}

/// A difference of scores as "+0.40 [+0.12, +0.68]".
fn score_text(c: &Claim) -> Option<String> {
    difference_text(c, |v| Figure::new(v, Unit::Signed))
}

/// A claim's estimate with its interval, or why it has none.
fn difference_text(c: &Claim, figure: impl FnOnce(f64) -> Figure) -> Option<String> {
    let f = figure(c.estimate?);
    Some(match c.interval {
        Some(i) => f.within(Some(i)).to_string(),
        None => format!("{f} {}", unbounded(c)).trim_end().to_string(),
    })
}

/// What a statistic is called in a sentence.
pub fn statistic_name(c: &Change) -> String {
    match c.statistic {
        ClaimStatistic::SuccessDifference => "success".into(),
        ClaimStatistic::RetentionDifference => "constraints kept".into(),
        ClaimStatistic::LatencyP50Ratio => "conversation p50".into(),
        ClaimStatistic::LatencyP95Ratio => "conversation p95".into(),
        ClaimStatistic::TaskSuccessDifference => "task success".into(),
        ClaimStatistic::JudgeMeanDifference => {
            format!("judge mean ({})", c.judge.as_deref().unwrap_or("?"))
        }
        ClaimStatistic::PairwiseNet => "pairwise net".into(),
        ClaimStatistic::GoodputDifference => "goodput".into(),
        ClaimStatistic::TtftSlopeDifference => "TTFT per 1k prompt tokens".into(),
    }
}

/// A side's value as the sentence prints it: ms as durations, shares in %, scores as they are.
pub fn value_text(c: &Change, v: Option<f64>) -> String {
    v.map_or("-".into(), |v| statistic_value(c.statistic, v))
}

/// The change and its interval: `+77 % [+61, +93]` for a latency ratio (`+0.4 % [−0.6,
/// +1.3]` when it is small), `−30.0 points [−45.1, −14.9]` for a share, `+0.50 [+0.12,
/// +0.88]` for a score.
pub fn change_text(c: &Change) -> String {
    let Some(e) = c.claim.estimate else {
        return "-".into();
    };
    let unit = match c.statistic.scale() {
        Scale::Ratio => Unit::Change,
        Scale::Share => Unit::Points,
        Scale::Score => Unit::Signed,
        Scale::Slope => Unit::MsPer1k,
    };
    Figure::new(e, unit).within(c.claim.interval).to_string()
}

/// The verdict in words, with why a change is not established.
pub fn verdict_text(c: &Change) -> String {
    match c.verdict {
        ChangeVerdict::Regressed => "regressed".into(),
        ChangeVerdict::Improved => "improved".into(),
        ChangeVerdict::NoEstablishedChange => match &c.claim.reason {
            Some(r) => format!("no established change ({r})"),
            None => "no established change".into(),
        },
    }
}

/// A label's frontier in one line: `frontier on glm (task success × conversation p50): a
/// (fastest), b (best quality); off it: c (beaten on both by a)`. At width it names the
/// leaders and counts the rest (the JSON `frontier`, the CSV column and the chart name
/// every cell).
pub fn frontier_text(f: &super::model::FrontierLabel) -> String {
    use super::model::FrontierWhy as W;
    let quality = if f.judge.is_some() {
        "judge mean"
    } else {
        "task success"
    };
    let head = format!("frontier on {} ({quality} × conversation p50)", f.model);
    let named = |whys: &[W]| {
        let names: Vec<&str> = f
            .cells
            .iter()
            .filter(|c| whys.contains(&c.why))
            .map(|c| c.provider.as_str())
            .collect();
        match names.len() {
            1 | 2 => names.join(" and "),
            n => format!("{n} cells tied"),
        }
    };
    let mut on = vec![
        format!("fastest {}", named(&[W::Fastest, W::FastestAndBest])),
        format!(
            "best quality {}",
            named(&[W::BestQuality, W::FastestAndBest])
        ),
    ];
    if f.off.is_empty() {
        let all = match f.cells.len() {
            2 => "both cells".to_string(),
            n => format!("all {n} cells"),
        };
        return format!(
            "{head}: {all}, none established both faster and better; {}",
            on.join(", ")
        );
    }
    let others = f.cells.iter().filter(|c| c.why == W::NotBeaten).count();
    if others > 0 {
        on.push(format!(
            "{} not beaten on both",
            if others <= 2 {
                named(&[W::NotBeaten])
            } else {
                format!("{others} others")
            }
        ));
    }
    format!("{head}: {}; off it: {}", on.join(", "), off_text(&f.off))
}

/// The cells off a frontier: with who beats them when few, else counted.
fn off_text(off: &[super::model::OffFrontier]) -> String {
    if off.len() > 3 {
        return format!(
            "{} cells, each beaten on both by a faster, better one",
            off.len()
        );
    }
    // Cells beaten by the same cells are named together.
    let mut groups: Vec<(Vec<&str>, &[String])> = Vec::new();
    for o in off {
        match groups
            .iter_mut()
            .find(|(_, by)| *by == o.beaten_by.as_slice())
        {
            Some((names, _)) => names.push(&o.provider),
            None => groups.push((vec![&o.provider], &o.beaten_by)),
        }
    }
    groups
        .iter()
        .map(|(names, by)| {
            let by = if by.len() > 2 {
                format!("{} cells", by.len())
            } else {
                by.join(" and ")
            };
            format!("{} (beaten on both by {by})", names.join(" and "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::Interval;

    fn change(statistic: ClaimStatistic, estimate: f64, interval: Option<(f64, f64)>) -> Change {
        Change {
            cell: "p / m".into(),
            provider: "p".into(),
            model: "m".into(),
            statistic,
            judge: None,
            selected_n: 30,
            baseline_n: 30,
            claim: Claim {
                a: "run 2".into(),
                b: "run 1".into(),
                n: 30,
                scenarios: 15,
                needed: 10,
                a_value: Some(1310.0),
                b_value: Some(742.0),
                estimate: Some(estimate),
                interval: interval.map(|(lo, hi)| Interval { lo, hi }),
                level: 0.99,
                p_value: Some(0.001),
                adjusted_p: 0.01,
                established: true,
                reason: None,
                equivalence: None,
            },
            verdict: ChangeVerdict::Regressed,
            simulated: false,
        }
    }

    #[test]
    fn changes_read_in_their_units() {
        let p50 = change(ClaimStatistic::LatencyP50Ratio, 1.77, Some((1.61, 1.93)));
        assert_eq!(change_text(&p50), "+77 % [+61, +93]");
        assert_eq!(value_text(&p50, p50.claim.b_value), "742 ms");
        assert_eq!(value_text(&p50, p50.claim.a_value), "1.31 s");
        let tiny = change(
            ClaimStatistic::LatencyP50Ratio,
            0.99996,
            Some((0.994, 1.013)),
        );
        assert_eq!(change_text(&tiny), "+0.0 % [−0.6, +1.3]");
        let share = change(
            ClaimStatistic::TaskSuccessDifference,
            -0.3,
            Some((-0.451, -0.149)),
        );
        assert_eq!(change_text(&share), "−30.0 points [−45.1, −14.9]");
        let none = change(ClaimStatistic::SuccessDifference, 0.0, None);
        assert_eq!(change_text(&none), "+0.0 points");
        let mut judge = change(ClaimStatistic::JudgeMeanDifference, 0.5, Some((0.12, 0.88)));
        judge.judge = Some("helpfulness@1 by mock".into());
        assert_eq!(change_text(&judge), "+0.50 [+0.12, +0.88]");
        assert_eq!(statistic_name(&judge), "judge mean (helpfulness@1 by mock)");
    }
}
