//! The report's sentences, written once when the report is built: each headline's, from
//! what it states ([`super::model::Said`]) and the family of claims behind it, and a
//! run-against-baseline change in words (its statistic's name, each side's value, the
//! change with its interval, the verdict), which the headline and the AGAINST THE BASELINE
//! table share. Every figure is formatted by [`crate::figure`]. Every format prints these
//! sentences as they are: the terminal, Markdown and HTML under their groups, the JSON
//! report as each headline's `text`.

use std::collections::BTreeMap;

use super::model::{
    Change, ChangeVerdict, Claim, ClaimStatistic, Family, Flags, Headline, Rate, Said,
};
use crate::figure::{Figure, Unit, duration, p_value, percent};
use crate::stats::inference;

/// Writes each headline's sentence into its `text`.
pub(super) fn write(headlines: &mut [Headline]) {
    for h in headlines {
        h.text = text(h);
    }
}

/// A headline's sentence.
fn text(h: &Headline) -> String {
    let family = h.family.as_ref();
    match &h.said {
        Said::Fastest {
            q,
            label,
            provider,
            ms,
            n,
        } => {
            let head = format!(
                "fastest conversation p{q} on {label}: {provider} {}",
                duration(*ms)
            );
            match family {
                Some(f) => format!(
                    "{head} (n {n}) — {} {}",
                    claims_text(f, &lower_text),
                    family_text(f)
                ),
                None => head,
            }
        }
        Said::Reliability {
            cell,
            completed,
            attempted,
            rate,
            failures,
        } => match family {
            Some(_) => {
                let figure = format!("{completed}/{attempted} completed ({})", rate_text(rate));
                quality_text(
                    "conversations completed (per attempted)",
                    cell,
                    &figure,
                    family,
                    &points_text,
                )
            }
            None => reliability_text(cell, *completed, *attempted, rate, failures),
        },
        Said::TaskSuccess { leader, rate } => {
            let figure = format!("{} (n {} attempted)", rate_text(rate), rate.n);
            quality_text(
                "task success (completed and every check passed, per attempted conversation)",
                leader,
                &figure,
                family,
                &points_text,
            )
        }
        Said::JudgeMean { .. } => judge_text(&h.said, family),
        Said::Retention {
            leader,
            held_again,
            held_before,
            rate,
        } => {
            let figure = format!(
                "{} ({held_again} of {held_before} held again at the next scored turn)",
                rate_text(rate)
            );
            quality_text(
                "constraints kept (a check that held holds again at the next turn: 1 − forgetting)",
                leader,
                &figure,
                family,
                &points_text,
            )
        }
        Said::CellFlags { cell, flags } => format!("{cell}: {}", flags_text(flags)),
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

/// A judge's leader by mean score, and its claims.
fn judge_text(said: &Said, family: Option<&Family>) -> String {
    let Said::JudgeMean {
        rubric,
        judge,
        simulated,
        leader,
        mean,
        all_equal,
        n,
        attempted,
    } = said
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
    let figure = format!("{figure} (scored {n} of {attempted} attempted)");
    let what = format!(
        "judge means ({rubric} by {judge}{}; pairs both completed and scored)",
        if *simulated { ", simulated" } else { "" }
    );
    quality_text(&what, leader, &figure, family, &score_text)
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

/// The leader's claims, each as [`claim_text`] states it.
fn claims_text(f: &Family, gap: &dyn Fn(&Claim) -> Option<String>) -> String {
    f.claims
        .iter()
        .map(|c| claim_text(c, gap))
        .collect::<Vec<_>>()
        .join("; ")
}

/// How one claim reads in a sentence: "established over B: …" or "not established over
/// B: …". `gap` renders the estimate and its interval.
fn claim_text(c: &Claim, gap: &dyn Fn(&Claim) -> Option<String>) -> String {
    let verdict = if c.established {
        "established"
    } else {
        "not established"
    };
    let detail = match (&c.reason, gap(c)) {
        (Some(r), _) if c.n < c.needed || c.scenarios < 2 => r.clone(),
        (_, Some(g)) => format!(
            "{g} over {} pairs in {} scenarios, adjusted p {}",
            c.n,
            c.scenarios,
            p_value(c.adjusted_p)
        ),
        (Some(r), None) => r.clone(),
        (None, None) => format!("{} pairs", c.n),
    };
    format!("{verdict} over {}: {detail}", c.b)
}

/// Why a claim has no interval: too few scenarios for a t interval, or nothing varies.
fn unbounded(c: &Claim) -> &'static str {
    if c.scenarios <= inference::MIN_DF {
        "(too few scenarios to bound)"
    } else {
        "(no spread to bound)"
    }
}

/// The closing words of a family's sentence: its size and adjustment.
fn family_text(f: &Family) -> String {
    let m = f.comparisons;
    format!(
        "({m} comparison{} of {} cells, Holm, family-wise {:.0} %)",
        if m == 1 { "" } else { "s" },
        f.cells,
        f.alpha * 100.0
    )
}

/// A latency ratio as "24 % lower [12, 35]" (lower = 1 − ratio).
fn lower_text(c: &Claim) -> Option<String> {
    let r = c.estimate?;
    let lower = |x: f64| (1.0 - x) * 100.0;
    let word = if r <= 1.0 { "lower" } else { "higher" };
    let main = format!("{:.0} % {word}", lower(r).abs());
    Some(match c.interval {
        Some(i) => format!("{main} [{:.0}, {:.0}]", lower(i.hi), lower(i.lo)).replace('-', "−"),
        None => format!("{main} {}", unbounded(c)),
    })
}

/// A difference of shares as "+25.0 points [+5.1, +44.9]".
fn points_text(c: &Claim) -> Option<String> {
    difference_text(c, Unit::Points)
}

/// A difference of scores as "+0.40 [+0.12, +0.68]".
fn score_text(c: &Claim) -> Option<String> {
    difference_text(c, Unit::Signed)
}

/// A claim's estimate with its interval, or why it has none.
fn difference_text(c: &Claim, unit: Unit) -> Option<String> {
    let f = Figure::new(c.estimate?, unit);
    Some(match c.interval {
        Some(i) => f.within(Some(i)).to_string(),
        None => format!("{f} {}", unbounded(c)),
    })
}

/// A quality family's sentence: who leads with what, and over whom that is established.
fn quality_text(
    what: &str,
    leader: &str,
    figure: &str,
    f: Option<&Family>,
    gap: &dyn Fn(&Claim) -> Option<String>,
) -> String {
    match f {
        Some(f) => format!(
            "{what}: {leader} leads with {figure} — {} {}",
            claims_text(f, gap),
            family_text(f)
        ),
        None => format!("{what}: {leader} leads with {figure}"),
    }
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
    }
}

/// A side's value as the sentence prints it: ms as durations, shares in %, scores as they are.
pub fn value_text(c: &Change, v: Option<f64>) -> String {
    let Some(v) = v else { return "-".into() };
    match c.statistic {
        ClaimStatistic::LatencyP50Ratio | ClaimStatistic::LatencyP95Ratio => duration(v),
        ClaimStatistic::SuccessDifference
        | ClaimStatistic::TaskSuccessDifference
        | ClaimStatistic::RetentionDifference => percent(v),
        _ => Figure::new(v, Unit::Score).to_string(),
    }
}

/// The change and its interval: `+77 % [+61, +93]` for a latency ratio (`+0.4 % [−0.6,
/// +1.3]` when it is small), `−30.0 points [−45.1, −14.9]` for a share, `+0.50 [+0.12,
/// +0.88]` for a score.
pub fn change_text(c: &Change) -> String {
    let Some(e) = c.claim.estimate else {
        return "-".into();
    };
    let unit = match c.statistic {
        ClaimStatistic::LatencyP50Ratio | ClaimStatistic::LatencyP95Ratio => Unit::Change,
        ClaimStatistic::SuccessDifference
        | ClaimStatistic::TaskSuccessDifference
        | ClaimStatistic::RetentionDifference => Unit::Points,
        _ => Unit::Signed,
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
