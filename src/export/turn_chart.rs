//! The chart of CONSTRAINTS ACROSS TURNS in the HTML format: for one model label, the pass
//! rate at each turn index, one line per provider, in small multiples (one panel per check
//! tag that is scored at more than one turn) sharing one legend and one y scale. Drawn
//! like the other charts ([`super::svg`]): each provider keeps its colour, marker and dash;
//! plain SVG, no script; every point carries its counts in a tooltip and every legend entry
//! the range of n its points rest on.

use std::fmt::Write;

use super::svg::{self, LEFT, RIGHT, ROW, Series, TOP, W, esc};

/// One provider's pass rate at each scored turn of one tag: (turn, rate 0–1, held, scored).
pub struct TurnLine<'a> {
    pub series: Series<'a>,
    pub points: Vec<(u32, f64, u64, u64)>,
}

/// One panel: a check tag and its providers' lines.
pub struct TurnPanel<'a> {
    pub tag: &'a str,
    pub lines: Vec<TurnLine<'a>>,
}

/// Panel plot height, the title row above it and the tick and axis rows below it.
const PLOT_H: f64 = 150.0;
const TITLE_H: f64 = 24.0;
const BELOW_H: f64 = 46.0;
/// Room between two panel columns for the right column's y tick labels.
const COL_GAP: f64 = 52.0;

/// The chart, or `None` when no panel has a line.
pub fn turn_panels(
    id: &str,
    title: &str,
    panels: &[TurnPanel],
    legend: &[(&Series, String)],
) -> Option<String> {
    let panels: Vec<&TurnPanel> = panels.iter().filter(|p| !p.lines.is_empty()).collect();
    if panels.is_empty() || legend.is_empty() {
        return None;
    }
    let labels: Vec<String> = legend.iter().map(|(_, l)| l.clone()).collect();
    let lw = svg::legend_width(&labels);
    let area = W - RIGHT - lw - 14.0 - LEFT;
    let cols = if panels.len() > 1 { 2 } else { 1 };
    let pw = (area - (cols - 1) as f64 * COL_GAP) / cols as f64;
    let rows = panels.len().div_ceil(cols);
    let row_h = TITLE_H + PLOT_H + BELOW_H;
    let height = (TOP + rows as f64 * row_h + 6.0).max(TOP + legend.len() as f64 * ROW + 16.0);
    let mut out = String::new();
    svg::open(
        &mut out,
        id,
        title,
        "For each check tag, the share of (conversation, check) pairs that passed at each turn \
         index, one line per provider: a line that falls is a provider losing what it was told.",
        height,
    );
    for (k, p) in panels.iter().enumerate() {
        let x0 = LEFT + (k % cols) as f64 * (pw + COL_GAP);
        let y0 = TOP + (k / cols) as f64 * row_h;
        panel(&mut out, p, x0, y0, pw);
    }
    let _ = write!(
        out,
        "<text transform=\"translate(18 {:.1}) rotate(-90)\" class=\"al\" text-anchor=\"middle\">pass rate at the turn (%)</text>",
        TOP + (rows as f64 * row_h) / 2.0
    );
    svg::legend(&mut out, legend, W - RIGHT - lw, TOP, true);
    out.push_str("</svg>");
    Some(out)
}

/// One panel with its top-left corner at (`x0`, `y0`) and plot width `pw`.
fn panel(out: &mut String, p: &TurnPanel, x0: f64, y0: f64, pw: f64) {
    let top = y0 + TITLE_H;
    let bottom = top + PLOT_H;
    let mut turns: Vec<u32> = p
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|q| q.0))
        .collect();
    turns.sort_unstable();
    turns.dedup();
    let (first, last) = match (turns.first(), turns.last()) {
        (Some(&a), Some(&b)) => (a, b),
        _ => return,
    };
    // Turns are bands: the first and last sit half a band inside the plot.
    let span = f64::from(last - first + 1);
    let x = |t: u32| x0 + (f64::from(t - first) + 0.5) / span * pw;
    let y = |rate: f64| bottom - rate.clamp(0.0, 1.0) * PLOT_H;
    let _ = write!(
        out,
        "<text x=\"{x0:.1}\" y=\"{:.1}\" class=\"gh\">{}</text>",
        y0 + 16.0,
        esc(&fit_tag(p.tag, pw))
    );
    for v in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let yy = y(v);
        let _ = write!(
            out,
            "<line x1=\"{x0:.1}\" x2=\"{:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" class=\"grid\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"end\">{}</text>",
            x0 + pw,
            x0 - 6.0,
            yy + 4.0,
            svg::tick_label(v * 100.0)
        );
    }
    let all: Vec<u32> = (first..=last).collect();
    let xs: Vec<f64> = all.iter().map(|&t| x(t)).collect();
    let width = |i: usize| svg::text_width(&all[i].to_string(), 12.0);
    for i in svg::thin(&xs, width, 10.0) {
        let _ = write!(
            out,
            "<line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\" class=\"grid\"/>\
             <text x=\"{xx:.1}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"middle\">{}</text>",
            bottom + 17.0,
            all[i],
            xx = xs[i]
        );
    }
    let _ = write!(
        out,
        "<line x1=\"{x0:.1}\" x2=\"{:.1}\" y1=\"{bottom:.1}\" y2=\"{bottom:.1}\" class=\"axis\"/>\
         <line x1=\"{x0:.1}\" x2=\"{x0:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\" class=\"axis\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"middle\">turn</text>",
        x0 + pw,
        x0 + pw / 2.0,
        bottom + 34.0
    );
    for l in &p.lines {
        let pts: Vec<String> = l
            .points
            .iter()
            .map(|&(t, rate, _, _)| format!("{:.1},{:.1}", x(t), y(rate)))
            .collect();
        if pts.len() > 1 {
            let _ = write!(
                out,
                "<polyline fill=\"none\" stroke-width=\"2\" {} points=\"{}\"><title>{}</title></polyline>",
                l.series.stroke(),
                pts.join(" "),
                esc(l.series.name)
            );
        }
        for &(t, rate, held, scored) in &l.points {
            let tip = format!(
                "<title>{} · {} · turn {t}: {}/{} held ({} %)</title>",
                esc(l.series.name),
                esc(p.tag),
                held,
                scored,
                svg::tick_label(rate * 100.0)
            );
            out.push_str(&svg::marker(&l.series.style, x(t), y(rate), 4.0, &tip));
        }
    }
}

/// A tag name shortened to the panel's width.
fn fit_tag(tag: &str, width: f64) -> String {
    if svg::text_width(tag, 13.0) <= width {
        return tag.to_string();
    }
    let keep = ((width / (13.0 * 0.62)) as usize).saturating_sub(1);
    let mut s: String = tag.chars().take(keep).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::svg::Style;

    fn series(name: &str, i: usize) -> Series<'_> {
        Series {
            name,
            style: Style {
                colour: svg::PALETTE[i % 10],
                marker: i % 7,
                dash: i % 7,
            },
        }
    }

    #[test]
    fn one_panel_per_tag_one_line_per_provider_and_counts_in_every_tooltip() {
        let names = ["a", "b"];
        let panels = vec![
            TurnPanel {
                tag: "retained_constraint",
                lines: (0..2)
                    .map(|i| TurnLine {
                        series: series(names[i], i),
                        points: vec![(2, 1.0, 4, 4), (3, 0.5, 2, 4), (4, 0.25, 1, 4)],
                    })
                    .collect(),
            },
            TurnPanel {
                tag: "custom",
                lines: vec![],
            },
        ];
        let legend_series: Vec<Series> = (0..2).map(|i| series(names[i], i)).collect();
        let legend: Vec<(&Series, String)> = legend_series
            .iter()
            .map(|s| (s, format!("{} (n 4)", s.name)))
            .collect();
        let svg = turn_panels("c", "t", &panels, &legend).unwrap();
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(
            svg.matches("class=\"gh\"").count(),
            1,
            "the empty panel is left out"
        );
        assert!(svg.contains("turn 3: 2/4 held (50 %)"), "{svg}");
        assert!(svg.contains(">retained_constraint<"));
        let none: Vec<TurnPanel> = Vec::new();
        assert!(turn_panels("c", "t", &none, &legend).is_none());
    }
}
