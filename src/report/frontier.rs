//! The efficient frontier of each model label (issue 39; the seeds' lesson: "8.8 in four
//! seconds can be better than 9.0 in forty"): the cells that no other cell of the label
//! beats on both quality and conversation p50 by an established margin. A chooser picks
//! from these; the others are beaten on both counts by a cell the report names.
//!
//! Built from the label's headline families, so "beats" is exactly an established claim
//! of those families (Holm-adjusted within each): quality is the primary judge's family
//! when the report has a judge, else task success's; speed is conversation p50's. A cell
//! that takes part in only one of them is left out. The rule: `docs/metrics.md`,
//! "Efficient frontier".

use super::headlines::cell_name;
use super::model::{
    Cell, Claim, ClaimStatistic, Family, FrontierCell, FrontierLabel, FrontierWhy, Headline,
    HeadlineKind, JudgeSection, OffFrontier, Said, Scale,
};

/// Each label's frontier, in the cells' label order, for labels where two or more cells
/// have both figures.
pub(super) fn frontier(
    headlines: &[Headline],
    judges: &[JudgeSection],
    cells: &[Cell],
) -> Vec<FrontierLabel> {
    let judge = super::model::primary_judge(judges).map(|(_, s)| s);
    let mut labels: Vec<&str> = cells.iter().map(|c| c.model.as_str()).collect();
    labels.dedup();
    labels
        .into_iter()
        .filter_map(|label| one_label(label, headlines, judge, cells))
        .map(|mut f| {
            f.text = super::sentences::frontier_text(&f);
            f
        })
        .collect()
}

/// The family of the label's headline of `kind` (and, for a judge, of that judge).
fn family_of<'h>(
    headlines: &'h [Headline],
    label: &str,
    kind: HeadlineKind,
    judge: Option<&JudgeSection>,
) -> Option<&'h Family> {
    headlines
        .iter()
        .filter(|h| h.kind == kind && h.model.as_deref() == Some(label))
        .find(|h| match (&h.said, judge) {
            (
                Said::JudgeMean {
                    rubric,
                    judge: j,
                    simulated,
                    ..
                },
                Some(s),
            ) => *rubric == s.rubric && *j == s.judge && *simulated == s.simulated,
            _ => judge.is_none(),
        })?
        .family
        .as_ref()
}

/// Whether `x` is established better than `y` in `f`: an established claim between them
/// whose estimate favours `x` (a ratio below 1 is faster; a positive difference better).
fn beats(f: &Family, x: &str, y: &str) -> bool {
    let favours_a = |c: &Claim| match (f.statistic.scale(), c.estimate) {
        (Scale::Ratio, Some(e)) => e < 1.0,
        (_, Some(e)) => e > 0.0,
        (_, None) => false,
    };
    f.claims.iter().chain(&f.others).any(|c| {
        c.established
            && ((c.a == x && c.b == y && favours_a(c)) || (c.a == y && c.b == x && !favours_a(c)))
    })
}

/// Whether `cell` holds its family's leading figure (cells tied with the leader lead too:
/// a tie is not a ranking).
fn leads(f: &Family, cell: &str) -> bool {
    let figure = |name: &str| {
        f.members
            .iter()
            .find(|m| m.cell == name)
            .and_then(|m| m.figure)
    };
    match (f.leader.as_deref().and_then(figure), figure(cell)) {
        (Some(best), Some(own)) => own == best,
        _ => false,
    }
}

fn one_label(
    label: &str,
    headlines: &[Headline],
    judge: Option<&JudgeSection>,
    cells: &[Cell],
) -> Option<FrontierLabel> {
    let speed = family_of(headlines, label, HeadlineKind::LatencyP50, None)?;
    let (quality, quality_kind) = match judge {
        Some(_) => (
            family_of(headlines, label, HeadlineKind::QualityJudge, judge)?,
            ClaimStatistic::JudgeMeanDifference,
        ),
        None => (
            family_of(headlines, label, HeadlineKind::QualityChecks, None)?,
            ClaimStatistic::TaskSuccessDifference,
        ),
    };
    // Both families' cells, fastest first.
    let both: Vec<&str> = speed
        .members
        .iter()
        .filter(|m| m.figure.is_some())
        .map(|m| m.cell.as_str())
        .filter(|c| {
            quality
                .members
                .iter()
                .any(|q| q.cell == *c && q.figure.is_some())
        })
        .collect();
    if both.len() < 2 {
        return None;
    }
    let provider = |cell: &str| {
        cells
            .iter()
            .find(|c| cell_name(c) == cell)
            .map_or_else(|| cell.to_string(), |c| c.provider.clone())
    };
    let mut on = Vec::new();
    let mut off = Vec::new();
    for &x in &both {
        let beaten_by: Vec<String> = both
            .iter()
            .filter(|&&y| y != x && beats(speed, y, x) && beats(quality, y, x))
            .map(|y| provider(y))
            .collect();
        if !beaten_by.is_empty() {
            off.push(OffFrontier {
                provider: provider(x),
                cell: x.to_string(),
                beaten_by,
            });
            continue;
        }
        let fastest = leads(speed, x);
        let best = leads(quality, x);
        let why = match (fastest, best) {
            (true, true) => FrontierWhy::FastestAndBest,
            (true, false) => FrontierWhy::Fastest,
            (false, true) => FrontierWhy::BestQuality,
            (false, false) => FrontierWhy::NotBeaten,
        };
        on.push(FrontierCell {
            provider: provider(x),
            cell: x.to_string(),
            why,
        });
    }
    let simulated = both
        .iter()
        .any(|x| cells.iter().any(|c| cell_name(c) == *x && c.simulated))
        || judge.is_some_and(|j| j.simulated);
    Some(FrontierLabel {
        model: label.to_string(),
        quality: quality_kind,
        judge: judge.map(|j| format!("{} · {}", j.rubric, j.judge)),
        cells: on,
        off,
        simulated,
        text: String::new(),
    })
}

/// A frontier headline per label, before the flags.
pub(super) fn headlines(frontier: &[FrontierLabel], out: &mut Vec<Headline>) {
    let lines = frontier.iter().map(|f| Headline {
        kind: HeadlineKind::Frontier,
        model: Some(f.model.clone()),
        text: String::new(),
        said: Said::Frontier(f.clone()),
        established: None,
        simulated: f.simulated,
        family: None,
    });
    super::headlines::before_flags(out, lines.collect());
}
