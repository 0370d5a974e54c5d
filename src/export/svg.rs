//! Inline SVG charts for the HTML format: an empirical CDF of conversation latency per
//! cell, quality against p50 latency with interval whiskers on both axes, and a stacked bar
//! of conversation outcomes per cell. Plain SVG text, no script; every label escaped; one
//! colour per provider (Okabe–Ito, safe for colour-blind readers) and one dash pattern per
//! model label, the same in every chart.

use std::fmt::Write;

/// Text safe inside HTML and SVG element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => {
                let _ = write!(out, "&#x{:x};", 0xFFFD);
            }
            c => out.push(c),
        }
    }
    out
}

/// Okabe & Ito (2008), "Color Universal Design": distinguishable with any colour vision.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#F0E442",
];
/// Dash patterns that tell model labels of one provider apart.
const DASHES: [&str; 4] = ["", "7 4", "2 3", "10 3 2 3"];

const W: f64 = 760.0;
const H: f64 = 380.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 56.0;

/// A cell as the charts draw it.
pub struct Series<'a> {
    pub name: &'a str,
    pub colour: &'a str,
    pub dash: usize,
}

impl Series<'_> {
    fn stroke(&self) -> String {
        let dash = DASHES[self.dash % DASHES.len()];
        if dash.is_empty() {
            format!("stroke=\"{}\"", self.colour)
        } else {
            format!("stroke=\"{}\" stroke-dasharray=\"{dash}\"", self.colour)
        }
    }
}

/// Round tick values from at or below `lo` to at or above `hi`: steps of 1, 2 or 5 × 10^k,
/// about `about` of them.
pub fn ticks(lo: f64, hi: f64, about: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo, lo + 1.0];
    }
    let raw = (hi - lo) / about.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    let first = (lo / step + 1e-9).floor() as i64;
    let last = (hi / step - 1e-9).ceil() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

fn tick_label(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else if (v * 10.0 - (v * 10.0).round()).abs() < 1e-9 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    fn x(&self, v: f64) -> f64 {
        LEFT + (v - self.x0) / (self.x1 - self.x0).max(1e-12) * (W - LEFT - RIGHT)
    }
    fn y(&self, v: f64) -> f64 {
        H - BOTTOM - (v - self.y0) / (self.y1 - self.y0).max(1e-12) * (H - TOP - BOTTOM)
    }
}

fn open(out: &mut String, id: &str, title: &str, desc: &str, height: f64) {
    let _ = write!(
        out,
        "<svg id=\"{id}\" role=\"img\" viewBox=\"0 0 {W} {height}\" xmlns=\"http://www.w3.org/2000/svg\" \
         aria-labelledby=\"{id}-t {id}-d\"><title id=\"{id}-t\">{}</title><desc id=\"{id}-d\">{}</desc>\
         <rect width=\"{W}\" height=\"{height}\" fill=\"#fff\"/>\
         <text x=\"{LEFT}\" y=\"22\" class=\"ct\">{}</text>",
        esc(title),
        esc(desc),
        esc(title)
    );
}

/// Axes with ticks, grid lines and labels.
fn axes(out: &mut String, f: &Frame, xt: &[f64], yt: &[f64], xlabel: &str, ylabel: &str) {
    for &v in yt {
        let y = f.y(v);
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" class=\"grid\"/>\
             <text x=\"{}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"end\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            tick_label(v)
        );
    }
    for &v in xt {
        let x = f.x(v);
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{}\" class=\"grid\"/>\
             <text x=\"{x:.1}\" y=\"{}\" class=\"tk\" text-anchor=\"middle\">{}</text>",
            H - BOTTOM,
            H - BOTTOM + 16.0,
            tick_label(v)
        );
    }
    let _ = write!(
        out,
        "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{b}\" y2=\"{b}\" class=\"axis\"/>\
         <line x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{b}\" class=\"axis\"/>\
         <text x=\"{}\" y=\"{}\" class=\"al\" text-anchor=\"middle\">{}</text>\
         <text transform=\"translate(16 {}) rotate(-90)\" class=\"al\" text-anchor=\"middle\">{}</text>",
        W - RIGHT,
        LEFT + (W - LEFT - RIGHT) / 2.0,
        H - 14.0,
        esc(xlabel),
        TOP + (H - TOP - BOTTOM) / 2.0,
        esc(ylabel),
        b = H - BOTTOM,
    );
}

/// An empirical CDF per cell from its latency at each whole percentile (ms).
pub fn ecdf(curves: &[(Series, &[f64], usize)]) -> Option<String> {
    let drawn: Vec<_> = curves.iter().filter(|(_, c, _)| c.len() >= 2).collect();
    if drawn.is_empty() {
        return None;
    }
    let max_s = drawn
        .iter()
        .filter_map(|(_, c, _)| c.last())
        .fold(0.0f64, |m, v| m.max(*v))
        / 1000.0;
    let xt = ticks(0.0, max_s.max(0.001), 6);
    let f = Frame {
        x0: 0.0,
        x1: xt.last().copied().unwrap_or(1.0),
        y0: 0.0,
        y1: 1.0,
    };
    let mut out = String::new();
    open(
        &mut out,
        "chart-ecdf",
        "Conversation latency, completed conversations (empirical CDF)",
        "For each cell, the share of completed conversations that finished within x seconds; \
         curves further left are faster, a long flat top is a slow tail.",
        H,
    );
    axes(
        &mut out,
        &f,
        &xt,
        &[0.0, 0.25, 0.5, 0.75, 1.0],
        "conversation latency (s): sum of turn E2E, pauses excluded",
        "share of conversations ≤ x",
    );
    for (s, curve, _) in &drawn {
        let mut points = String::new();
        for (q, v) in curve.iter().enumerate() {
            let _ = write!(
                points,
                "{:.1},{:.1} ",
                f.x(v / 1000.0),
                f.y(q as f64 / (curve.len() - 1) as f64)
            );
        }
        let _ = write!(
            out,
            "<polyline fill=\"none\" stroke-width=\"2.2\" {} points=\"{}\"><title>{}</title></polyline>",
            s.stroke(),
            points.trim_end(),
            esc(s.name)
        );
    }
    legend(
        &mut out,
        drawn
            .iter()
            .map(|(s, _, n)| (s, format!("{} (n {n})", s.name))),
        LEFT + 12.0,
        TOP + 8.0,
    );
    out.push_str("</svg>");
    Some(out)
}

/// A legend box of line samples, top-left of the plot area.
fn legend<'a>(
    out: &mut String,
    items: impl Iterator<Item = (&'a Series<'a>, String)>,
    x: f64,
    y: f64,
) {
    let items: Vec<_> = items.collect();
    let width = items
        .iter()
        .map(|(_, l)| l.chars().count())
        .max()
        .unwrap_or(0) as f64
        * 6.6
        + 44.0;
    let _ = write!(
        out,
        "<rect x=\"{x}\" y=\"{y}\" width=\"{width:.0}\" height=\"{:.0}\" class=\"lg\"/>",
        items.len() as f64 * 18.0 + 8.0
    );
    for (i, (s, label)) in items.iter().enumerate() {
        let ly = y + 16.0 + i as f64 * 18.0;
        let _ = write!(
            out,
            "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke-width=\"2.6\" {}/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"lt\">{}</text>",
            x + 8.0,
            x + 32.0,
            ly - 4.0,
            ly - 4.0,
            s.stroke(),
            x + 38.0,
            ly,
            esc(label)
        );
    }
}

/// One point of the quality chart: p50 latency (ms) and quality, each with its interval.
pub struct QualityPoint<'a> {
    pub series: Series<'a>,
    pub p50_ms: f64,
    pub p50_interval: Option<(f64, f64)>,
    pub quality: f64,
    pub quality_interval: Option<(f64, f64)>,
}

/// Quality against conversation p50, whiskers on both axes: the trade-off a chooser reads.
pub fn quality_vs_latency(
    points: &[QualityPoint],
    title: &str,
    quality_label: &str,
    scale: (f64, f64),
) -> Option<String> {
    if points.is_empty() {
        return None;
    }
    let xs = points.iter().flat_map(|p| {
        [
            Some(p.p50_ms),
            p.p50_interval.map(|i| i.0),
            p.p50_interval.map(|i| i.1),
        ]
        .into_iter()
        .flatten()
    });
    let (xmin, xmax) = xs.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let xt = ticks(
        (xmin / 1000.0 * 0.9).max(0.0),
        (xmax / 1000.0 * 1.05).max(0.001),
        6,
    );
    let yt = ticks(scale.0, scale.1, 5);
    let f = Frame {
        x0: xt.first().copied().unwrap_or(0.0),
        x1: xt.last().copied().unwrap_or(1.0),
        y0: scale.0,
        y1: scale.1,
    };
    let mut out = String::new();
    let key_rows = points.len().div_ceil(2) as f64;
    open(
        &mut out,
        "chart-quality",
        title,
        "Each point is a cell: further left is faster, higher is better; whiskers are 95 % intervals.",
        H + 8.0 + key_rows * 20.0,
    );
    axes(
        &mut out,
        &f,
        &xt,
        &yt,
        "conversation latency p50 (s)",
        quality_label,
    );
    for p in points {
        let (x, y) = (f.x(p.p50_ms / 1000.0), f.y(p.quality));
        let c = p.series.colour;
        if let Some((lo, hi)) = p.p50_interval {
            let _ = write!(
                out,
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{c}\" stroke-width=\"1.6\"/>",
                f.x(lo / 1000.0),
                f.x(hi / 1000.0)
            );
        }
        if let Some((lo, hi)) = p.quality_interval {
            let _ = write!(
                out,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{c}\" stroke-width=\"1.6\"/>",
                f.y(lo),
                f.y(hi)
            );
        }
        let _ = write!(
            out,
            "{}",
            marker(
                &p.series,
                x,
                y,
                6.0,
                &format!("<title>{}</title>", esc(p.series.name))
            )
        );
    }
    // The key below the plot, two columns: marker (colour: provider, shape: model) and name.
    for (i, p) in points.iter().enumerate() {
        let (col, row) = ((i % 2) as f64, (i / 2) as f64);
        let x = LEFT + col * (W - LEFT - RIGHT) / 2.0;
        let y = H + 8.0 + row * 20.0;
        let _ = write!(
            out,
            "{}<text x=\"{:.1}\" y=\"{:.1}\" class=\"lt\">{}</text>",
            marker(&p.series, x + 6.0, y - 4.0, 5.0, ""),
            x + 18.0,
            y,
            esc(p.series.name)
        );
    }
    out.push_str("</svg>");
    Some(out)
}

/// A point marker: the provider's colour, a shape per model label (circle, square,
/// triangle, diamond).
fn marker(s: &Series, x: f64, y: f64, r: f64, inner: &str) -> String {
    let c = s.colour;
    let style = format!("fill=\"{c}\" stroke=\"#fff\" stroke-width=\"1.5\"");
    match s.dash % DASHES.len() {
        0 => format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r}\" {style}>{inner}</circle>"),
        1 => format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" {style}>{inner}</rect>",
            x - r,
            y - r,
            2.0 * r,
            2.0 * r
        ),
        2 => format!(
            "<polygon points=\"{x:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" {style}>{inner}</polygon>",
            y - r * 1.2,
            x + r * 1.1,
            y + r * 0.8,
            x - r * 1.1,
            y + r * 0.8
        ),
        _ => format!(
            "<polygon points=\"{x:.1},{:.1} {:.1},{y:.1} {x:.1},{:.1} {:.1},{y:.1}\" {style}>{inner}</polygon>",
            y - r * 1.3,
            x + r * 1.3,
            y + r * 1.3,
            x - r * 1.3
        ),
    }
}

/// One bar of the outcome chart: a cell and its conversations by outcome.
pub struct OutcomeBar<'a> {
    pub name: &'a str,
    /// (outcome, conversations), completed first.
    pub parts: Vec<(String, u64)>,
}

/// A colour per outcome class, fixed so a class looks the same in every report.
fn outcome_colour(class: &str) -> &'static str {
    match class {
        "completed" => "#009E73",
        "truncated" => "#F0E442",
        "rate_limited" => "#E69F00",
        "http_5xx" => "#D55E00",
        "http_4xx" => "#CC79A7",
        "timeout" => "#0072B2",
        "stream_cut" => "#56B4E9",
        "connect_error" => "#000000",
        "malformed" => "#999999",
        "empty_answer" => "#882255",
        "interrupted" => "#DDDDDD",
        _ => "#666666",
    }
}

/// Horizontal bars, one per cell, split by outcome share; labelled with counts.
pub fn outcomes(bars: &[OutcomeBar]) -> Option<String> {
    if bars.is_empty() {
        return None;
    }
    // Room for the longest name (about 7 px a character at 12 px), within reason.
    let longest = bars
        .iter()
        .map(|b| b.name.chars().count())
        .max()
        .unwrap_or(0);
    let name_w = (longest as f64 * 7.0 + 12.0).clamp(120.0, 320.0);
    let row = 26.0;
    let classes: Vec<String> = {
        let mut v: Vec<String> = bars
            .iter()
            .flat_map(|b| b.parts.iter().map(|(c, _)| c.clone()))
            .collect();
        v.sort_by_key(|c| (c != "completed", c.clone()));
        v.dedup();
        v
    };
    let per_row = (((W - RIGHT - 16.0) / 118.0) as usize).max(1);
    let legend_rows = classes.len().div_ceil(per_row) as f64;
    let height = TOP + 10.0 + bars.len() as f64 * row + 22.0 + legend_rows * 18.0;
    let plot_w = W - name_w - RIGHT - 10.0;
    let mut out = String::new();
    open(
        &mut out,
        "chart-outcomes",
        "How conversations ended, per cell (share of attempted)",
        "Completed conversations and each failure class as a share of the conversations attempted.",
        height,
    );
    for (i, b) in bars.iter().enumerate() {
        let y = TOP + 10.0 + i as f64 * row;
        let total: u64 = b.parts.iter().map(|(_, n)| n).sum();
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"end\">{}</text>",
            name_w - 4.0,
            y + 15.0,
            esc(b.name)
        );
        let mut x = name_w + 6.0;
        for (class, n) in &b.parts {
            if total == 0 || *n == 0 {
                continue;
            }
            let w = *n as f64 / total as f64 * plot_w;
            let _ = write!(
                out,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.0}\" fill=\"{}\"><title>{}: {n} of {total}</title></rect>",
                row - 6.0,
                outcome_colour(class),
                esc(class)
            );
            if w > 34.0 {
                let dark = matches!(class.as_str(), "truncated" | "interrupted" | "stream_cut");
                let _ = write!(
                    out,
                    "<text x=\"{:.1}\" y=\"{:.1}\" class=\"bl\" fill=\"{}\" text-anchor=\"middle\">{n}</text>",
                    x + w / 2.0,
                    y + 14.5,
                    if dark { "#000" } else { "#fff" }
                );
            }
            x += w;
        }
    }
    let ly = TOP + 10.0 + bars.len() as f64 * row + 22.0;
    for (i, class) in classes.iter().enumerate() {
        let (col, r) = ((i % per_row) as f64, (i / per_row) as f64);
        let x = 16.0 + col * 118.0;
        let y = ly + r * 18.0;
        let _ = write!(
            out,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"lt\">{}</text>",
            y - 10.0,
            outcome_colour(class),
            x + 16.0,
            y,
            esc(class)
        );
    }
    out.push_str("</svg>");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc("\"><img src=x onerror=alert(1)>"),
            "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"
        );
        assert_eq!(esc("a'b&c"), "a&#39;b&amp;c");
        assert_eq!(esc("bell\u{7}"), "bell&#xfffd;");
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(0.0, 0.9, 4), vec![0.0, 0.5, 1.0]);
        assert_eq!(ticks(3.2, 17.5, 6), vec![0.0, 5.0, 10.0, 15.0, 20.0]);
        assert_eq!(ticks(1.0, 1.0, 5), vec![1.0, 2.0]);
    }
}
