//! The chart of TTFT BY TURN in the HTML format: for one model label, TTFT p50 at each turn
//! index, one line per provider. A provider whose prefix cache works stays flat as the
//! history grows; one that pays for the whole prompt every turn climbs. Drawn like the
//! other charts ([`super::svg`]): each provider keeps its colour, marker and dash; every
//! point carries its n in a tooltip, every legend entry its slope.

use std::fmt::Write;

use super::svg::{self, LEFT, RIGHT, ROW, Series, TOP, W, esc};

/// One provider's TTFT p50 (ms) at each turn: (turn, p50, n).
pub struct TtftLine<'a> {
    pub series: Series<'a>,
    pub points: Vec<(u32, f64, usize)>,
}

const PLOT_H: f64 = 260.0;
const BELOW_H: f64 = 46.0;

/// The chart, or `None` when no line has two turns.
pub fn ttft_turns(
    id: &str,
    title: &str,
    lines: &[TtftLine],
    legend: &[(&Series, String)],
) -> Option<String> {
    if !lines.iter().any(|l| l.points.len() > 1) || legend.is_empty() {
        return None;
    }
    let labels: Vec<String> = legend.iter().map(|(_, l)| l.clone()).collect();
    let lw = svg::legend_width(&labels);
    let (x0, pw) = (LEFT, W - RIGHT - lw - 14.0 - LEFT);
    let (top, bottom) = (TOP + 8.0, TOP + 8.0 + PLOT_H);
    let height = (bottom + BELOW_H).max(TOP + legend.len() as f64 * ROW + 16.0);
    let mut out = String::new();
    svg::open(
        &mut out,
        id,
        title,
        "TTFT p50 at each turn index, one line per provider: a flat line is a provider whose \
         prefix cache works as the history grows, a climbing one pays for the whole prompt.",
        height,
    );
    let points = lines.iter().flat_map(|l| l.points.iter());
    let first = points.clone().map(|p| p.0).min()?;
    let last = points.clone().map(|p| p.0).max()?;
    let hi = points.map(|p| p.1).fold(0.0, f64::max);
    let ticks = svg::ticks(0.0, hi.max(1.0), 5);
    let top_tick = ticks.last().copied().unwrap_or(hi).max(hi).max(1.0);
    let span = f64::from(last - first + 1);
    let x = |t: u32| x0 + (f64::from(t - first) + 0.5) / span * pw;
    let y = |ms: f64| bottom - (ms / top_tick).clamp(0.0, 1.0) * PLOT_H;
    for v in &ticks {
        let yy = y(*v);
        let _ = write!(
            out,
            "<line x1=\"{x0:.1}\" x2=\"{:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" class=\"grid\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"end\">{}</text>",
            x0 + pw,
            x0 - 6.0,
            yy + 4.0,
            svg::tick_label(*v)
        );
    }
    let all: Vec<u32> = (first..=last).collect();
    let xs: Vec<f64> = all.iter().map(|&t| x(t)).collect();
    let width = |i: usize| svg::text_width(&all[i].to_string(), 12.0);
    for i in svg::thin(&xs, width, 10.0) {
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"middle\">{}</text>",
            xs[i],
            bottom + 17.0,
            all[i]
        );
    }
    let _ = write!(
        out,
        "<line x1=\"{x0:.1}\" x2=\"{:.1}\" y1=\"{bottom:.1}\" y2=\"{bottom:.1}\" class=\"axis\"/>\
         <line x1=\"{x0:.1}\" x2=\"{x0:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\" class=\"axis\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" class=\"al\" text-anchor=\"middle\">turn</text>\
         <text transform=\"translate(18 {:.1}) rotate(-90)\" class=\"al\" text-anchor=\"middle\">TTFT p50 (ms)</text>",
        x0 + pw,
        x0 + pw / 2.0,
        bottom + 36.0,
        (top + bottom) / 2.0
    );
    for l in lines {
        let pts: Vec<String> = l
            .points
            .iter()
            .map(|&(t, ms, _)| format!("{:.1},{:.1}", x(t), y(ms)))
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
        for &(t, ms, n) in &l.points {
            let tip = format!(
                "<title>{} · turn {t}: TTFT p50 {} ms (n {n})</title>",
                esc(l.series.name),
                svg::tick_label(ms)
            );
            out.push_str(&svg::marker(&l.series.style, x(t), y(ms), 4.0, &tip));
        }
    }
    svg::legend(&mut out, legend, W - RIGHT - lw, TOP, true);
    out.push_str("</svg>");
    Some(out)
}
