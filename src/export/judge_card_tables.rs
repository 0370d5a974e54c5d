//! THE JUDGE CARD as a table (terminal, Markdown and HTML share it through
//! [`super::sections::tables`]): one row per judge × rubric — anchors, controls, length
//! bias beside the checks, position, self-family, human agreement and the verdict — and
//! each card's reasons as footnotes. Formatting only; the figures and the verdict are
//! `crate::report::judge_card`'s.

use super::text_table::{Align, Table};
use crate::figure::{Figure, Unit};
use crate::report::judge_card::{JudgeCard, LengthBias, Position, Verdict};
use crate::report::keys::{JudgeKey, RowKey, TableKey};
use crate::report::model::Report;
use crate::report::simulated::{Marks, name_mark as sim};

use Align::{Left as L, Right as R};

/// The card table; none without cards.
pub fn tables(r: &Report) -> Vec<Table> {
    if r.judge_card.is_empty() {
        return Vec::new();
    }
    let m = Marks::of(r);
    let mut t = Table::new(
        TableKey::JudgeCard,
        "JUDGE CARD",
        Some("can each judge's scores count? anchors, controls, length, position, its own family, people".into()),
        &[
            ("judge", L),
            ("rubric", L),
            ("anchors", L),
            ("controls", L),
            ("length ρ", R),
            ("position consistent", R),
            ("own family", L),
            ("verdict", L),
        ],
    )
    .simulated(r.judge_card.iter().any(|c| c.simulated) || m.all);
    for c in &r.judge_card {
        t.push(
            RowKey::Judge(key(c)),
            c.simulated,
            vec![
                format!("{} ({}){}", c.judge, c.judge_model, sim(c.simulated)),
                c.rubric.clone(),
                anchors(c),
                controls(c),
                length(c.length_bias.as_ref()),
                position(c.position.as_ref()),
                family(c),
                verdict(c.verdict),
            ],
        );
    }
    for c in &r.judge_card {
        t.footnotes.push(format!(
            "{} on {}: {}: {}.",
            c.judge,
            c.rubric,
            c.verdict.as_str(),
            c.reasons.join("; ")
        ));
    }
    t.footnotes.push(
        "failed: an anchor or control rule fails; flagged: length bias established (Spearman ρ of final-answer visible tokens with the judge's mean score within scenario × checks failed, 95 % interval excludes 0), position consistency below 80 %, or a scored cell of the judge's own family; else trusted. first won: pairs in which the transcript shown first won in both orders. Each card's reasons give the checks' own pass rate and its ρ with length beside the judge's, so a reader sees whether longer answers were also better by the rules (docs/judge.md).".into(),
    );
    vec![t]
}

fn key(c: &JudgeCard) -> JudgeKey {
    JudgeKey {
        rubric: c.rubric.clone(),
        judge: c.judge.clone(),
        judge_model: c.judge_model.clone(),
        simulated: c.simulated,
    }
}

fn anchors(c: &JudgeCard) -> String {
    c.anchors.as_ref().map_or("not run".into(), |a| {
        format!(
            "{} {}/{}",
            if a.passed { "passed" } else { "FAILED" },
            a.above.k,
            a.pairs
        )
    })
}

fn controls(c: &JudgeCard) -> String {
    c.controls.as_ref().map_or("not run".into(), |cs| {
        cs.iter()
            .map(|x| {
                format!(
                    "{} {}/{} {}",
                    x.name,
                    x.held,
                    x.pairs,
                    if x.passed { "ok" } else { "FAILED" }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    })
}

fn rho(rho: Option<f64>, interval: Option<crate::report::model::Interval>, n: usize) -> String {
    rho.map_or(format!("- (n {n})"), |v| {
        Figure::new(v, Unit::Signed)
            .within(interval)
            .n(n)
            .to_string()
    })
}

fn length(l: Option<&LengthBias>) -> String {
    l.map_or("-".into(), |l| {
        let mark = if l.established { " established" } else { "" };
        format!("{}{mark}", rho(l.rho, l.interval, l.n))
    })
}

/// Consistency with its interval and n, and the pairs the first position won both ways.
fn position(p: Option<&Position>) -> String {
    p.map_or("-".into(), |p| {
        let rate = p.rate.map_or(format!("- (n {})", p.n), |v| {
            Figure::percent(v).within(p.interval).n(p.n).to_string()
        });
        format!("{rate} · first won {}", p.first_position_wins)
    })
}

fn family(c: &JudgeCard) -> String {
    match (&c.family, &c.self_family) {
        (Some(f), Some(cells)) if !cells.is_empty() => format!(
            "{f}: {}",
            cells
                .iter()
                .map(|x| x.cell.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        (Some(f), _) => format!("{f}: none scored"),
        (None, _) => "unknown".into(),
    }
}

fn verdict(v: Verdict) -> String {
    match v {
        Verdict::Trusted => "trusted",
        Verdict::Flagged => "FLAGGED",
        Verdict::Failed => "FAILED",
    }
    .into()
}
