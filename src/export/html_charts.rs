//! The HTML report's charts, as small multiples: per model label, the latency ECDF and
//! quality against speed of that label's providers (providers compared within a model, as
//! the headlines compare them); then one outcome chart with its rows grouped by label. Every
//! provider keeps one colour, marker and dash in all of them ([`svg::styles`]).

use std::fmt::Write as _;

use super::svg::{self, Curve, OutcomeBar, QualityPoint, Series, Style, TrendDot, TrendLine, esc};
use crate::report::model::{FrontierPlace, Report};
use crate::report::simulated::LEGEND_MARK;

/// One style per provider of the report, the same in every chart and table swatch.
pub fn provider_styles(r: &Report) -> Vec<(String, Style)> {
    svg::styles(r.cells.iter().map(|c| c.provider.as_str()))
}

/// The model labels in the report's order, each once.
fn labels(r: &Report) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for c in &r.cells {
        if !out.contains(&c.model.as_str()) {
            out.push(c.model.as_str());
        }
    }
    out
}

/// A chart id from a label's position (labels are user text: never in an id).
fn chart_id(kind: &str, k: usize) -> String {
    format!("chart-{kind}-{}", k + 1)
}

/// The charts section, or nothing when no chart has data.
pub fn charts(h: &mut String, r: &Report) {
    let styles = provider_styles(r);
    let names: Vec<String> = r
        .cells
        .iter()
        .map(|c| {
            format!(
                "{}{}",
                c.provider,
                if c.simulated { LEGEND_MARK } else { "" }
            )
        })
        .collect();
    let series = |i: usize| Series {
        name: &names[i],
        style: svg::style_of(&styles, &r.cells[i].provider),
    };
    let axis = QualityAxis::of(r);
    let mut figures: Vec<Figure> = Vec::new();
    for (k, label_name) in labels(r).into_iter().enumerate() {
        let in_label: Vec<usize> = (0..r.cells.len())
            .filter(|&i| r.cells[i].model == label_name)
            .collect();
        figures.extend(ecdf_figure(r, label_name, k, &in_label, &series));
        figures.extend(quality_figure(r, label_name, k, &in_label, &axis, &series));
        if let Some((svg, caption)) = trend_chart(r, label_name, k, &series) {
            figures.push((Some(label_name.to_string()), svg, caption));
        }
        if let Some((svg, caption)) = ttft_turn_chart(r, label_name, k, &series) {
            figures.push((Some(label_name.to_string()), svg, caption));
        }
    }
    figures.extend(outcome_figure(r, &names));
    write_figures(h, figures);
}

/// A chart as the page shows it: the label heading it sits under (`None`: all labels),
/// the SVG, the caption.
type Figure = (Option<String>, String, String);

/// What the quality axis shows: the primary judge's mean score, else the check pass rate.
struct QualityAxis {
    judge: Option<usize>,
    what: &'static str,
    label: &'static str,
    scale: (f64, f64),
    caption: &'static str,
}

impl QualityAxis {
    fn of(r: &Report) -> QualityAxis {
        match r.primary_judge() {
            Some((j, s)) => QualityAxis {
                judge: Some(j),
                what: "judge mean score",
                label: "judge mean score",
                scale: (1.0, 5.0),
                caption: if s.simulated {
                    "Quality is the simulated judge's mean score over conversations."
                } else {
                    "Quality is the judge's mean score over conversations."
                },
            },
            None => QualityAxis {
                judge: None,
                what: "check pass rate",
                label: "check pass rate (%)",
                scale: (0.0, 100.0),
                caption: "Quality is the share of rule-based checks passed.",
            },
        }
    }
}

/// A label's latency ECDF, one curve per provider.
fn ecdf_figure<'a>(
    r: &'a Report,
    label_name: &str,
    k: usize,
    in_label: &[usize],
    series: &dyn Fn(usize) -> Series<'a>,
) -> Option<Figure> {
    let curves: Vec<Curve> = in_label
        .iter()
        .map(|&i| Curve {
            series: series(i),
            curve: r.cells[i].latency_curve.as_slice(),
            n: r.cells[i].conversation_latency.n,
        })
        .collect();
    let svg = svg::ecdf(
        &chart_id("ecdf", k),
        &format!("Conversation latency on {label_name} (empirical CDF)"),
        &curves,
    )?;
    Some((
        Some(label_name.to_string()),
        svg,
        format!(
            "{label_name}: each curve is one provider; n is its completed conversations; markers sit at p50 and p95. \
             Failed conversations are not in latency: see the outcome chart."
        ),
    ))
}

/// A label's quality against conversation p50, one point per provider with whiskers.
fn quality_figure<'a>(
    r: &'a Report,
    label_name: &str,
    k: usize,
    in_label: &[usize],
    axis: &QualityAxis,
    series: &dyn Fn(usize) -> Series<'a>,
) -> Option<Figure> {
    let judge = axis.judge.and_then(|j| r.judges.get(j));
    let frontier = r.frontier.iter().find(|f| f.model == label_name);
    let on_frontier = |provider: &str| {
        r.frontier_place(provider, label_name)
            .map(|p| matches!(p, FrontierPlace::On(_)))
    };
    let points: Vec<QualityPoint> = in_label
        .iter()
        .filter_map(|&i| {
            let c = &r.cells[i];
            let p50 = c.conversation_latency.p50?;
            let (q, qi) = match judge {
                Some(s) => {
                    let e = s.cells.get(i)?.overall?;
                    (e.value, e.interval.map(|i| (i.lo, i.hi)))
                }
                None => (
                    c.checks.pass.value? * 100.0,
                    c.checks.pass.interval.map(|i| (i.lo * 100.0, i.hi * 100.0)),
                ),
            };
            Some(QualityPoint {
                series: series(i),
                p50_ms: p50.value,
                p50_interval: p50.interval.map(|i| (i.lo, i.hi)),
                quality: q,
                quality_interval: qi,
                frontier: on_frontier(&c.provider),
            })
        })
        .collect();
    let scale = axis.scale;
    let svg = svg::quality_vs_latency(
        &chart_id("quality", k),
        &format!(
            "Quality against speed on {label_name}: {} and conversation p50",
            axis.what
        ),
        &points,
        axis.label,
        scale,
    )?;
    let (lo, hi) = svg::quality_range(&points, scale);
    Some((
        Some(label_name.to_string()),
        svg,
        format!(
            "{label_name}: {} The quality axis runs from {} to {} of the scale {}–{}. \
             Whiskers: 95 % intervals (latency: order statistics of the p50; quality: over scenarios).{}",
            axis.caption,
            svg::tick_label(lo),
            svg::tick_label(hi),
            svg::tick_label(scale.0),
            svg::tick_label(scale.1),
            frontier.map_or(String::new(), |f| format!(
                " Ringed: the efficient frontier by {} and conversation p50 (no other cell is \
                 established both faster and better); faded: beaten on both.",
                if f.judge.is_some() {
                    "the judge's mean"
                } else {
                    "task success"
                }
            ))
        ),
    ))
}

/// How conversations ended, every cell in one chart, rows grouped by label.
fn outcome_figure(r: &Report, names: &[String]) -> Option<Figure> {
    let bars: Vec<OutcomeBar> = r
        .cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut parts = vec![("completed".to_string(), c.reliability.completed)];
            let mut failures: Vec<_> = c.reliability.failures.iter().collect();
            failures.sort_by(|a, b| b.1.cmp(a.1));
            parts.extend(failures.into_iter().map(|(k, n)| (k.clone(), *n)));
            OutcomeBar {
                group: c.model.as_str(),
                name: &names[i],
                parts,
            }
        })
        .collect();
    let svg = svg::outcomes(&bars)?;
    Some((None, svg, "Bars are shares of attempted conversations; the numbers are counts. Interrupted conversations are in no denominator.".to_string()))
}

/// The charts section: each figure under its label's heading, with its caption.
fn write_figures(h: &mut String, figures: Vec<Figure>) {
    if figures.is_empty() {
        return;
    }
    h.push_str("<section><h2>Charts</h2><div class=\"charts\">");
    let mut last: Option<String> = None;
    for (heading, svg, caption) in figures {
        if heading.is_some() && heading != last {
            let _ = write!(
                h,
                "<h3>{}</h3>",
                esc(&format!(
                    "model label {}",
                    heading.as_deref().unwrap_or_default()
                ))
            );
        } else if heading.is_none() && last.is_some() {
            h.push_str("<h3>all model labels</h3>");
        }
        last = heading.clone().or(Some(String::new()));
        let _ = write!(
            h,
            "<figure>{svg}<figcaption>{}</figcaption></figure>",
            esc(&caption)
        );
    }
    h.push_str("</div></section>\n");
}

/// A label's trend chart (several runs, or `--trend`): each provider's p50 run by run.
fn trend_chart<'a>(
    r: &'a Report,
    label: &str,
    k: usize,
    series: &dyn Fn(usize) -> Series<'a>,
) -> Option<(String, String)> {
    let t = r.trend.as_ref()?;
    let lines: Vec<TrendLine> = (0..r.cells.len())
        .filter(|&i| r.cells[i].model == label)
        .filter_map(|i| {
            let c = &r.cells[i];
            let points: Vec<_> = t
                .points
                .iter()
                .filter(|p| p.provider == c.provider && p.model == c.model)
                .collect();
            let dots: Vec<TrendDot> = points
                .iter()
                .filter_map(|p| {
                    let e = p.conversation_p50?;
                    Some(TrendDot {
                        t_ms: crate::timestamp::parse_rfc3339_ms(&p.started_at)?,
                        p50_ms: e.value,
                        interval: e.interval.map(|i| (i.lo, i.hi)),
                        apart: p.apart,
                    })
                })
                .collect();
            (!dots.is_empty()).then(|| TrendLine {
                series: series(i),
                n: points.iter().map(|p| p.latency_n).sum(),
                dots,
            })
        })
        .collect();
    let svg = svg::trend(
        &chart_id("trend", k),
        &format!("Conversation p50 run by run on {label}"),
        &lines,
    )?;
    let apart = t
        .points
        .iter()
        .filter(|p| p.model == label && p.apart)
        .count();
    Some((
        svg,
        format!(
            "{label}: {} runs; each point is one provider's conversation p50 in one run, at the run's start (UTC), \
             whiskers its 95 % interval (order statistics); n is the completed conversations over every run. \
             Ringed ({apart}): the run's interval misses the window's (the pooled p50 interval in the CELLS table).",
            t.runs
        ),
    ))
}

/// TTFT BY TURN of one model label: TTFT p50 against turn index, one line per provider,
/// each legend entry with its slope on prompt tokens.
fn ttft_turn_chart<'a>(
    r: &'a Report,
    label: &str,
    k: usize,
    series: &dyn Fn(usize) -> Series<'a>,
) -> Option<(String, String)> {
    use super::ttft_chart::{TtftLine, ttft_turns};
    let mut lines: Vec<TtftLine> = Vec::new();
    let mut slopes: Vec<String> = Vec::new();
    for i in r
        .order
        .iter()
        .copied()
        .filter(|&i| r.cells.get(i).is_some_and(|c| c.model == label))
    {
        let c = &r.cells[i];
        let Some(x) = r.ttft_by_turn_of(&c.provider, &c.model) else {
            continue;
        };
        let points: Vec<(u32, f64, usize)> = x
            .turns
            .iter()
            .filter_map(|t| Some((t.turn, t.p50?, t.n)))
            .collect();
        if points.is_empty() {
            continue;
        }
        slopes.push(x.slope_ms_per_1k_prompt_tokens.map_or(
            format!("{} (no prompt tokens)", series(i).name),
            |s| {
                // A slope that rounds to 0 reads "+0", never "−0"; a minus is a minus sign.
                let s = if s.round() == 0.0 { 0.0 } else { s };
                let s = format!("{s:+.0}").replace('-', "−");
                format!("{} ({s} ms/1k tok)", series(i).name)
            },
        ));
        lines.push(TtftLine {
            series: series(i),
            points,
        });
    }
    let legend: Vec<(&Series, String)> = lines
        .iter()
        .zip(&slopes)
        .map(|(l, s)| (&l.series, s.clone()))
        .collect();
    let svg = ttft_turns(
        &chart_id("ttft-turn", k),
        &format!("TTFT p50 by turn on {label}"),
        &lines,
        &legend,
    )?;
    Some((
        svg,
        format!(
            "{label}: TTFT p50 at each turn index over the turns of completed conversations (n in each point's \
             tooltip); the legend gives each provider's slope of TTFT on prompt tokens, \
             within conversations (TTFT BY TURN has its interval)."
        ),
    ))
}

/// CONSTRAINTS ACROSS TURNS of one model label as a chart, for the HTML page to place under
/// that label's table: the pass rate at each turn index, one line per provider (in the
/// table's order), one panel per check tag scored at more than one turn. Nothing when no
/// tag is.
pub fn constraints_figure(h: &mut String, r: &Report, label: &str, k: usize) {
    use super::turn_chart::{TurnLine, TurnPanel, turn_panels};
    use crate::report::survival::ConstraintSurvival;

    let styles = provider_styles(r);
    let mut rows: Vec<&ConstraintSurvival> = r
        .constraint_survival
        .iter()
        .filter(|s| s.label == label)
        .collect();
    rows.sort_by_key(|s| r.rank_of(&s.provider, &s.label));
    let mut providers: Vec<(&str, bool)> = Vec::new();
    let mut tags: Vec<&str> = Vec::new();
    for s in &rows {
        if !providers.iter().any(|(p, _)| *p == s.provider) {
            providers.push((s.provider.as_str(), s.simulated));
        }
        if !tags.contains(&s.tag.as_str()) {
            tags.push(s.tag.as_str());
        }
    }
    let names: Vec<String> = providers
        .iter()
        .map(|(p, sim)| format!("{p}{}", if *sim { LEGEND_MARK } else { "" }))
        .collect();
    let series = |i: usize| Series {
        name: &names[i],
        style: svg::style_of(&styles, providers[i].0),
    };
    let points = |s: &ConstraintSurvival| -> Vec<(u32, f64, u64, u64)> {
        s.turns
            .iter()
            .filter_map(|t| Some((t.turn, t.rate?, t.held, t.scored)))
            .collect()
    };
    let mut single: Vec<&str> = Vec::new();
    let panels: Vec<TurnPanel> = tags
        .iter()
        .filter_map(|&tag| {
            let lines: Vec<TurnLine> = providers
                .iter()
                .enumerate()
                .filter_map(|(i, (p, _))| {
                    let s = rows.iter().find(|s| s.provider == *p && s.tag == tag)?;
                    let points = points(s);
                    (!points.is_empty()).then(|| TurnLine {
                        series: series(i),
                        points,
                    })
                })
                .collect();
            if lines.iter().any(|l| l.points.len() > 1) {
                Some(TurnPanel { tag, lines })
            } else {
                single.push(tag);
                None
            }
        })
        .collect();
    let all_series: Vec<Series> = (0..providers.len()).map(series).collect();
    let legend: Vec<(&Series, String)> = all_series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let scored = rows
                .iter()
                .filter(|c| c.provider == providers[i].0)
                .flat_map(|c| c.turns.iter().map(|t| t.scored));
            let (lo, hi) = scored.fold((u64::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
            let n = if lo >= hi {
                hi.to_string()
            } else {
                format!("{lo}–{hi}")
            };
            (s, format!("{} (n {n})", s.name))
        })
        .collect();
    let Some(svg) = turn_panels(
        &chart_id("turns", k),
        &format!("Pass rate at each turn on {label}, by check tag"),
        &panels,
        &legend,
    ) else {
        return;
    };
    let _ = write!(
        h,
        "<div class=\"charts\"><figure>{svg}<figcaption>{}</figcaption></figure></div>",
        esc(&constraints_caption(label, &single))
    );
}

/// The caption under a label's CONSTRAINTS ACROSS TURNS chart; `single`: the tags not
/// drawn because they were scored at one turn only.
fn constraints_caption(label: &str, single: &[&str]) -> String {
    let mut caption = format!(
        "{label}: each line is one provider; a point is the share of (conversation, check) pairs of the tag \
         that passed at that turn (its counts in the point's tooltip and in the table above); n is the \
         range of pairs scored per point. A falling line is a provider losing what it was told."
    );
    if !single.is_empty() {
        let _ = write!(
            caption,
            " Not drawn (scored at one turn only): {}.",
            single.join(", ")
        );
    }
    caption
}
