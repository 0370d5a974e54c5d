//! Inline SVG charts for the HTML format: an empirical CDF of conversation latency, quality
//! against p50 latency with interval whiskers on both axes (each drawn once per model label:
//! small multiples, providers compared within a model), and a stacked bar of conversation
//! outcomes per cell, its rows grouped by model label. Plain SVG text, no script; every label
//! escaped.
//!
//! Legibility is laid out here, not left to the browser: each provider keeps one colour
//! *and* one marker and dash pattern in every chart ([`styles`]); legends sit beside the plot
//! inside the SVG (the chart grows to hold them), direct labels are placed only where they
//! cover no other text, tick labels are thinned until they cannot touch, and text widths are
//! estimated generously (DejaVu Sans, the widest common fallback of `system-ui`).

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

/// Ten colours a colour-blind reader can still tell apart in pairs: Okabe & Ito (2008),
/// "Color Universal Design", without its yellow (too faint on white), then Paul Tol's wine,
/// olive and indigo.
pub const PALETTE: [&str; 10] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#882255",
    "#999933", "#332288",
];
/// Marker shapes: circle, square, triangle, diamond, down triangle, plus, cross.
const MARKERS: usize = 7;
/// Dash patterns, as many as the markers, so colour × dash × marker repeat only after 70
/// providers.
const DASHES: [&str; MARKERS] = ["", "8 4", "2 3", "10 3 2 3", "5 2", "12 3 2 3 2 3", "1 3"];

/// How one provider is drawn in every chart of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub colour: &'static str,
    pub marker: usize,
    pub dash: usize,
}

/// One style per provider, by its place among the report's providers sorted by name: the
/// same provider looks the same in every chart, whatever label it serves.
pub fn styles<'a>(providers: impl IntoIterator<Item = &'a str>) -> Vec<(String, Style)> {
    let mut names: Vec<&str> = providers.into_iter().collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            (
                p.to_string(),
                Style {
                    colour: PALETTE[i % PALETTE.len()],
                    marker: i % MARKERS,
                    dash: i % MARKERS,
                },
            )
        })
        .collect()
}

/// The style of `provider` in `styles` (black circles for one that is not there).
pub fn style_of(styles: &[(String, Style)], provider: &str) -> Style {
    styles.iter().find(|(p, _)| p == provider).map_or(
        Style {
            colour: "#000000",
            marker: 0,
            dash: 0,
        },
        |(_, s)| *s,
    )
}

/// The width of the whole chart (user units; the page scales it).
pub const W: f64 = 960.0;
const H: f64 = 400.0;
pub(super) const LEFT: f64 = 70.0;
pub(super) const RIGHT: f64 = 16.0;
pub(super) const TOP: f64 = 40.0;
const BOTTOM: f64 = 58.0;
/// Legend rows.
pub(super) const ROW: f64 = 20.0;

/// Estimated rendered width of `s` at `px` font size: a generous 0.62 em a character (DejaVu
/// Sans averages about 0.55 em over lower case and digits).
pub fn text_width(s: &str, px: f64) -> f64 {
    s.chars().count() as f64 * px * 0.62
}

/// `s` shortened with `…` to fit `width` at `px`.
fn fit(s: &str, px: f64, width: f64) -> String {
    if text_width(s, px) <= width {
        return s.to_string();
    }
    let keep = ((width / (px * 0.62)) as usize).saturating_sub(1);
    let mut out: String = s.chars().take(keep).collect();
    out.push('…');
    out
}

/// A chart's series: one provider of one model label.
pub struct Series<'a> {
    pub name: &'a str,
    pub style: Style,
}

impl Series<'_> {
    pub(super) fn stroke(&self) -> String {
        let dash = DASHES[self.style.dash % DASHES.len()];
        if dash.is_empty() {
            format!("stroke=\"{}\"", self.style.colour)
        } else {
            format!(
                "stroke=\"{}\" stroke-dasharray=\"{dash}\"",
                self.style.colour
            )
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

pub fn tick_label(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else if (v * 10.0 - (v * 10.0).round()).abs() < 1e-9 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Every `k`-th of `positions` (always the first), with the smallest `k` that leaves at least
/// `gap` between neighbours whose extents (`size` each) are centred on them.
pub(super) fn thin(positions: &[f64], size: impl Fn(usize) -> f64, gap: f64) -> Vec<usize> {
    for k in 1..=positions.len().max(1) {
        let kept: Vec<usize> = (0..positions.len()).step_by(k).collect();
        let clear = kept.windows(2).all(|w| {
            let (a, b) = (w[0], w[1]);
            (positions[b] - positions[a]).abs() >= (size(a) + size(b)) / 2.0 + gap
        });
        if clear {
            return kept;
        }
    }
    vec![0]
}

/// A rectangle a text or marker covers, for placing labels.
#[derive(Clone, Copy)]
struct Box2 {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Box2 {
    fn hits(&self, o: &Box2) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }
    fn inside(&self, o: &Box2) -> bool {
        self.x0 >= o.x0 && self.x1 <= o.x1 && self.y0 >= o.y0 && self.y1 <= o.y1
    }
}

/// The plot area and its data ranges.
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    /// Plot area in user units.
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Frame {
    /// The plot area of a chart with a legend of `items` beside it: the chart grows taller
    /// with the legend. Returns the frame, the chart's height and the legend's width.
    fn beside_legend(
        items: &[(&Series, String)],
        x: (f64, f64),
        y: (f64, f64),
    ) -> (Frame, f64, f64) {
        let lw = legend_width(&items.iter().map(|(_, l)| l.clone()).collect::<Vec<_>>());
        let height = H.max(TOP + items.len() as f64 * ROW + 8.0 + BOTTOM);
        let f = Frame {
            x0: x.0,
            x1: x.1,
            y0: y.0,
            y1: y.1,
            left: LEFT,
            right: W - RIGHT - lw - 14.0,
            top: TOP,
            bottom: height - BOTTOM,
        };
        (f, height, lw)
    }

    fn x(&self, v: f64) -> f64 {
        self.left + (v - self.x0) / (self.x1 - self.x0).max(1e-12) * (self.right - self.left)
    }
    fn y(&self, v: f64) -> f64 {
        self.bottom - (v - self.y0) / (self.y1 - self.y0).max(1e-12) * (self.bottom - self.top)
    }
    fn plot(&self) -> Box2 {
        Box2 {
            x0: self.left,
            y0: self.top,
            x1: self.right,
            y1: self.bottom,
        }
    }
}

pub(super) fn open(out: &mut String, id: &str, title: &str, desc: &str, height: f64) {
    let _ = write!(
        out,
        "<svg id=\"{id}\" role=\"img\" viewBox=\"0 0 {W} {height:.0}\" xmlns=\"http://www.w3.org/2000/svg\" \
         aria-labelledby=\"{id}-t {id}-d\"><title id=\"{id}-t\">{}</title><desc id=\"{id}-d\">{}</desc>\
         <rect width=\"{W}\" height=\"{height:.0}\" fill=\"#fff\"/>\
         <text x=\"{LEFT}\" y=\"24\" class=\"ct\">{}</text>",
        esc(title),
        esc(desc),
        esc(&fit(title, 15.0 * 1.08, W - LEFT - RIGHT))
    );
}

/// Axes with ticks, grid lines and labels. Tick labels are thinned until neighbours cannot
/// touch; x labels hang low enough to clear the lowest y label at the corner.
fn axes(out: &mut String, f: &Frame, xt: &[f64], yt: &[f64], xlabel: &str, ylabel: &str) {
    let labels: Vec<String> = xt.iter().map(|&v| tick_label(v)).collect();
    axes_labelled(out, f, xt, &labels, yt, xlabel, ylabel);
}

/// [`axes`] with the x ticks' labels given (a time axis reads as clock times).
fn axes_labelled(
    out: &mut String,
    f: &Frame,
    xt: &[f64],
    labels: &[String],
    yt: &[f64],
    xlabel: &str,
    ylabel: &str,
) {
    let ypos: Vec<f64> = yt.iter().map(|&v| f.y(v)).collect();
    for i in thin(&ypos, |_| 15.0, 4.0) {
        let (v, y) = (yt[i], ypos[i]);
        let _ = write!(
            out,
            "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" class=\"grid\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"end\">{}</text>",
            f.left,
            f.right,
            f.left - 6.0,
            y + 4.0,
            tick_label(v)
        );
    }
    let xpos: Vec<f64> = xt.iter().map(|&v| f.x(v)).collect();
    let width = |i: usize| labels.get(i).map_or(0.0, |l| text_width(l, 12.0));
    for i in thin(&xpos, width, 10.0) {
        let x = xpos[i];
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" class=\"grid\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"middle\">{}</text>",
            f.top,
            f.bottom,
            f.bottom + 22.0,
            labels.get(i).map_or("", String::as_str)
        );
    }
    let _ = write!(
        out,
        "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{b:.1}\" y2=\"{b:.1}\" class=\"axis\"/>\
         <line x1=\"{l:.1}\" x2=\"{l:.1}\" y1=\"{:.1}\" y2=\"{b:.1}\" class=\"axis\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" class=\"al\" text-anchor=\"middle\">{}</text>\
         <text transform=\"translate(18 {:.1}) rotate(-90)\" class=\"al\" text-anchor=\"middle\">{}</text>",
        f.left,
        f.right,
        f.top,
        (f.left + f.right) / 2.0,
        f.bottom + 46.0,
        esc(&fit(xlabel, 13.0, f.right - f.left)),
        (f.top + f.bottom) / 2.0,
        esc(&fit(ylabel, 13.0, f.bottom - f.top)),
        b = f.bottom,
        l = f.left,
    );
}

/// A legend beside the plot, right of it, one row per series: a line sample (with the
/// dash) when `lines`, and the marker. Returns its width; `rows` draws nothing.
pub(super) fn legend_width(labels: &[String]) -> f64 {
    let longest = labels
        .iter()
        .map(|l| text_width(l, 12.5))
        .fold(0.0f64, f64::max);
    (longest + 50.0).clamp(110.0, 330.0)
}

/// Items are (series, label); a label's trailing "(n N)" is kept whole when the name before
/// it is shortened, so every series keeps its n.
pub(super) fn legend(out: &mut String, items: &[(&Series, String)], x: f64, y: f64, lines: bool) {
    let width = legend_width(&items.iter().map(|(_, l)| l.clone()).collect::<Vec<_>>());
    let shorten = |label: &str| -> String {
        let room = width - 46.0;
        match label.rfind(" (n ") {
            Some(at) if text_width(label, 12.5) > room => {
                let (name, n) = label.split_at(at);
                format!("{}{n}", fit(name, 12.5, room - text_width(n, 12.5)))
            }
            _ => fit(label, 12.5, room),
        }
    };
    let _ = write!(
        out,
        "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{width:.0}\" height=\"{:.0}\" class=\"lg\"/>",
        items.len() as f64 * ROW + 8.0
    );
    for (i, (s, label)) in items.iter().enumerate() {
        let ly = y + 4.0 + ROW / 2.0 + i as f64 * ROW;
        if lines {
            let _ = write!(
                out,
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{ly:.1}\" y2=\"{ly:.1}\" stroke-width=\"2.4\" {}/>",
                x + 6.0,
                x + 36.0,
                s.stroke()
            );
        }
        out.push_str(&marker(&s.style, x + 21.0, ly, 4.5, ""));
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"lt\">{}</text>",
            x + 42.0,
            ly + 4.5,
            esc(&shorten(label))
        );
    }
}

/// Direct labels: `name` beside each anchor point, at the first of eight places around it
/// that stays in the plot and covers no other label and no marker; none where none fits.
fn direct_labels(out: &mut String, f: &Frame, anchors: &[(f64, f64, &str)]) {
    let h = 14.0;
    let mut taken: Vec<Box2> = anchors
        .iter()
        .map(|&(x, y, _)| Box2 {
            x0: x - 7.0,
            y0: y - 7.0,
            x1: x + 7.0,
            y1: y + 7.0,
        })
        .collect();
    let plot = f.plot();
    for &(x, y, name) in anchors {
        let w = text_width(name, 12.5) + 4.0;
        let candidates = [
            (x + 9.0, y - h - 2.0),
            (x + 9.0, y + 2.0),
            (x - 9.0 - w, y - h - 2.0),
            (x - 9.0 - w, y + 2.0),
            (x + 10.0, y - h / 2.0),
            (x - 10.0 - w, y - h / 2.0),
            (x - w / 2.0, y - h - 9.0),
            (x - w / 2.0, y + 9.0),
        ];
        let spot = candidates.iter().find_map(|&(x0, y0)| {
            let b = Box2 {
                x0,
                y0,
                x1: x0 + w,
                y1: y0 + h,
            };
            (b.inside(&plot) && !taken.iter().any(|t| t.hits(&b))).then_some(b)
        });
        if let Some(b) = spot {
            let _ = write!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" class=\"pl\">{}</text>",
                b.x0 + 2.0,
                b.y1 - 3.0,
                esc(name)
            );
            taken.push(b);
        }
    }
}

/// One curve of the latency chart: latency at each whole percentile 0–100 (ms) and n.
pub struct Curve<'a> {
    pub series: Series<'a>,
    pub curve: &'a [f64],
    pub n: usize,
}

/// An empirical CDF per series, its p50 and p95 marked with the provider's marker.
pub fn ecdf(id: &str, title: &str, curves: &[Curve]) -> Option<String> {
    let drawn: Vec<&Curve> = curves.iter().filter(|c| c.curve.len() >= 2).collect();
    if drawn.is_empty() {
        return None;
    }
    let max_s = drawn
        .iter()
        .filter_map(|c| c.curve.last())
        .fold(0.0f64, |m, v| m.max(*v))
        / 1000.0;
    let items: Vec<(&Series, String)> = drawn
        .iter()
        .map(|c| (&c.series, format!("{} (n {})", c.series.name, c.n)))
        .collect();
    let xt = ticks(0.0, max_s.max(0.001), 7);
    let (f, height, lw) =
        Frame::beside_legend(&items, (0.0, xt.last().copied().unwrap_or(1.0)), (0.0, 1.0));
    let mut out = String::new();
    open(
        &mut out,
        id,
        title,
        "For each provider, the share of completed conversations that finished within x seconds; \
         curves further left are faster, a long flat top is a slow tail. Markers: p50 and p95.",
        height,
    );
    axes(
        &mut out,
        &f,
        &xt,
        &[0.0, 0.25, 0.5, 0.75, 1.0],
        "conversation latency (s): sum of turn E2E, pauses excluded",
        "share of conversations ≤ x",
    );
    let mut anchors = Vec::new();
    for c in &drawn {
        let last = (c.curve.len() - 1) as f64;
        let mut points = String::new();
        for (q, v) in c.curve.iter().enumerate() {
            let _ = write!(
                points,
                "{:.1},{:.1} ",
                f.x(v / 1000.0),
                f.y(q as f64 / last)
            );
        }
        let _ = write!(
            out,
            "<polyline fill=\"none\" stroke-width=\"2.2\" {} points=\"{}\"><title>{}</title></polyline>",
            c.series.stroke(),
            points.trim_end(),
            esc(c.series.name)
        );
        for q in [0.5, 0.95] {
            let k = (q * last).round() as usize;
            if let Some(v) = c.curve.get(k) {
                let (x, y) = (f.x(v / 1000.0), f.y(k as f64 / last));
                out.push_str(&marker(&c.series.style, x, y, 4.5, ""));
                if q == 0.5 {
                    anchors.push((x, y, c.series.name));
                }
            }
        }
    }
    direct_labels(&mut out, &f, &anchors);
    legend(&mut out, &items, W - RIGHT - lw, TOP, true);
    out.push_str("</svg>");
    Some(out)
}

/// One point of the quality chart: p50 latency (ms) and quality, each with its interval.
pub struct QualityPoint<'a> {
    pub series: Series<'a>,
    pub p50_ms: f64,
    pub p50_interval: Option<(f64, f64)>,
    pub quality: f64,
    pub quality_interval: Option<(f64, f64)>,
    /// On its label's efficient frontier (`Some(true)`: ringed), beaten on both
    /// (`Some(false)`: faded), or no frontier drawn (`None`).
    pub frontier: Option<bool>,
}

/// The quality axis: from where the data (with their intervals) start to where they end,
/// padded and rounded, within the scale.
pub fn quality_range(points: &[QualityPoint], scale: (f64, f64)) -> (f64, f64) {
    let ys = points.iter().flat_map(|p| {
        [
            Some(p.quality),
            p.quality_interval.map(|i| i.0),
            p.quality_interval.map(|i| i.1),
        ]
        .into_iter()
        .flatten()
    });
    let (lo, hi) = ys
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !(lo.is_finite() && hi.is_finite()) {
        return scale;
    }
    let pad = ((hi - lo) * 0.08).max((scale.1 - scale.0) * 0.02);
    let t = ticks(
        (lo - pad).max(scale.0),
        (hi + pad).min(scale.1).max(lo + pad),
        5,
    );
    let first = t.first().copied().unwrap_or(scale.0).max(scale.0);
    let last = t.last().copied().unwrap_or(scale.1).min(scale.1);
    if last > first { (first, last) } else { scale }
}

/// Quality against conversation p50, whiskers on both axes: the trade-off a chooser reads.
/// `scale` is the quality's full scale; the axis covers only where the data are, and its
/// label says so.
pub fn quality_vs_latency(
    id: &str,
    title: &str,
    points: &[QualityPoint],
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
        7,
    );
    let (y0, y1) = quality_range(points, scale);
    let yt = ticks(y0, y1, 5);
    let items: Vec<(&Series, String)> = points
        .iter()
        .map(|p| (&p.series, p.series.name.to_string()))
        .collect();
    let (f, height, lw) = Frame::beside_legend(
        &items,
        (
            xt.first().copied().unwrap_or(0.0),
            xt.last().copied().unwrap_or(1.0),
        ),
        (y0, y1),
    );
    let ylabel = if (y0, y1) == scale {
        quality_label.to_string()
    } else {
        format!(
            "{quality_label} · axis {}–{}",
            tick_label(y0),
            tick_label(y1)
        )
    };
    let mut out = String::new();
    open(
        &mut out,
        id,
        title,
        "Each point is a provider: further left is faster, higher is better; whiskers are 95 % intervals.",
        height,
    );
    axes(
        &mut out,
        &f,
        &xt,
        &yt,
        "conversation latency p50 (s)",
        &ylabel,
    );
    let anchors: Vec<_> = points
        .iter()
        .map(|p| quality_point(&mut out, &f, (y0, y1), p))
        .collect();
    direct_labels(&mut out, &f, &anchors);
    legend(&mut out, &items, W - RIGHT - lw, TOP, false);
    out.push_str("</svg>");
    Some(out)
}

/// One provider's point on the quality-against-latency chart, its whiskers and its
/// frontier mark; the place its label is anchored at.
fn quality_point<'a>(
    out: &mut String,
    f: &Frame,
    (y0, y1): (f64, f64),
    p: &QualityPoint<'a>,
) -> (f64, f64, &'a str) {
    let clamp_y = |v: f64| f.y(v.clamp(y0, y1));
    let (x, y) = (f.x(p.p50_ms / 1000.0), clamp_y(p.quality));
    let c = p.series.style.colour;
    match p.frontier {
        Some(true) => {
            let _ = write!(
                out,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"11\" fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\" data-frontier=\"on\"/>"
            );
            out.push_str("<g>");
        }
        Some(false) => out.push_str("<g opacity=\"0.35\" data-frontier=\"off\">"),
        None => out.push_str("<g>"),
    }
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
            clamp_y(lo),
            clamp_y(hi)
        );
    }
    out.push_str(&marker(
        &p.series.style,
        x,
        y,
        6.0,
        &format!("<title>{}</title>", esc(p.series.name)),
    ));
    out.push_str("</g>");
    (x, y, p.series.name)
}

/// A point marker in the provider's colour and shape (circle, square, triangle, diamond,
/// down triangle, plus, cross), white-edged so overlapping markers stay apart.
pub fn marker(s: &Style, x: f64, y: f64, r: f64, inner: &str) -> String {
    let c = s.colour;
    let style = format!("fill=\"{c}\" stroke=\"#fff\" stroke-width=\"1.2\"");
    let poly = |pts: &[(f64, f64)]| {
        let p: Vec<String> = pts
            .iter()
            .map(|(dx, dy)| format!("{:.1},{:.1}", x + dx * r, y + dy * r))
            .collect();
        format!(
            "<polygon points=\"{}\" {style} data-m=\"{}\">{inner}</polygon>",
            p.join(" "),
            s.marker % MARKERS
        )
    };
    let (a, b) = (0.38, 1.05);
    match s.marker % MARKERS {
        0 => format!(
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r}\" {style} data-m=\"0\">{inner}</circle>"
        ),
        1 => poly(&[(-0.9, -0.9), (0.9, -0.9), (0.9, 0.9), (-0.9, 0.9)]),
        2 => poly(&[(0.0, -1.2), (1.1, 0.8), (-1.1, 0.8)]),
        3 => poly(&[(0.0, -1.3), (1.3, 0.0), (0.0, 1.3), (-1.3, 0.0)]),
        4 => poly(&[(0.0, 1.2), (1.1, -0.8), (-1.1, -0.8)]),
        5 => poly(&[
            (-a, -b),
            (a, -b),
            (a, -a),
            (b, -a),
            (b, a),
            (a, a),
            (a, b),
            (-a, b),
            (-a, a),
            (-b, a),
            (-b, -a),
            (-a, -a),
        ]),
        _ => poly(&[
            (0.0, -0.5),
            (0.7, -1.2),
            (1.2, -0.7),
            (0.5, 0.0),
            (1.2, 0.7),
            (0.7, 1.2),
            (0.0, 0.5),
            (-0.7, 1.2),
            (-1.2, 0.7),
            (-0.5, 0.0),
            (-1.2, -0.7),
            (-0.7, -1.2),
        ]),
    }
}

/// One bar of the outcome chart: a provider of a model label and its conversations by
/// outcome.
pub struct OutcomeBar<'a> {
    /// The model label the bar is grouped under.
    pub group: &'a str,
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

/// Horizontal bars, one per cell, split by outcome share and labelled with counts; the
/// rows grouped under their model label (bars in `bars` order, a heading where the group
/// changes).
pub fn outcomes(bars: &[OutcomeBar]) -> Option<String> {
    if bars.is_empty() {
        return None;
    }
    let longest = bars
        .iter()
        .map(|b| text_width(b.name, 12.0))
        .fold(0.0f64, f64::max);
    let name_w = (longest + 16.0).clamp(120.0, 320.0);
    let row = 26.0;
    let classes = outcome_classes(bars);
    let col_w = classes
        .iter()
        .map(|c| text_width(c, 12.5) + 30.0)
        .fold(118.0f64, f64::max);
    let per_row = (((W - RIGHT - 16.0) / col_w) as usize).max(1);
    let legend_rows = classes.len().div_ceil(per_row) as f64;
    let headings = group_headings(bars);
    let grouped = headings > 1 || bars.iter().any(|b| !b.group.is_empty());
    let heading_h = if grouped { 24.0 } else { 0.0 };
    let body = bars.len() as f64 * row + headings as f64 * heading_h;
    let height = TOP + 10.0 + body + 22.0 + legend_rows * 18.0;
    let plot_w = W - name_w - RIGHT - 10.0;
    let mut out = String::new();
    open(
        &mut out,
        "chart-outcomes",
        "How conversations ended, per provider and model label (share of attempted)",
        "Completed conversations and each failure class as a share of the conversations attempted, rows grouped by model label.",
        height,
    );
    let mut y = TOP + 10.0;
    let mut last: Option<&str> = None;
    for b in bars {
        if grouped && last != Some(b.group) {
            let _ = write!(
                out,
                "<text x=\"16\" y=\"{:.1}\" class=\"gh\">{}</text>",
                y + 16.0,
                esc(&fit(b.group, 13.0 * 1.08, W - 32.0))
            );
            y += heading_h;
            last = Some(b.group);
        }
        outcome_bar(&mut out, b, y, (name_w, plot_w, row));
        y += row;
    }
    outcome_legend(&mut out, &classes, y + 22.0, (per_row, col_w));
    out.push_str("</svg>");
    Some(out)
}

/// Outcome classes in legend order: completed first, then by name.
fn outcome_classes(bars: &[OutcomeBar]) -> Vec<String> {
    let mut v: Vec<String> = bars
        .iter()
        .flat_map(|b| b.parts.iter().map(|(c, _)| c.clone()))
        .collect();
    v.sort_by_key(|c| (c != "completed", c.clone()));
    v.dedup();
    v
}

/// How many group headings the rows need: one per run of bars with the same group.
fn group_headings(bars: &[OutcomeBar]) -> usize {
    let mut n = 0;
    let mut last: Option<&str> = None;
    for b in bars {
        if last != Some(b.group) {
            n += 1;
            last = Some(b.group);
        }
    }
    n
}

/// One bar at `y`: its name, then each class's share of its total with the count on it
/// where it fits. `(name_w, plot_w, row)`: the name column, the bars' width, the row height.
fn outcome_bar(out: &mut String, b: &OutcomeBar, y: f64, (name_w, plot_w, row): (f64, f64, f64)) {
    let total: u64 = b.parts.iter().map(|(_, n)| n).sum();
    let _ = write!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"end\">{}<title>{}</title></text>",
        name_w - 4.0,
        y + 15.0,
        esc(&fit(b.name, 12.0, name_w - 12.0)),
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
        if w > text_width(&n.to_string(), 12.0) + 12.0 {
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

/// The legend of outcome classes from `ly`, `per_row` columns of `col_w`.
fn outcome_legend(out: &mut String, classes: &[String], ly: f64, (per_row, col_w): (usize, f64)) {
    for (i, class) in classes.iter().enumerate() {
        let (col, r) = ((i % per_row) as f64, (i / per_row) as f64);
        let x = 16.0 + col * col_w;
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
}

/// One run of one provider in the trend chart: when the run started and its p50 (ms) with
/// its interval.
pub struct TrendDot {
    pub t_ms: i64,
    pub p50_ms: f64,
    pub interval: Option<(f64, f64)>,
    /// The run's interval misses the window's: drawn with a ring.
    pub apart: bool,
}

pub struct TrendLine<'a> {
    pub series: Series<'a>,
    pub dots: Vec<TrendDot>,
    /// Conversations the p50s rest on, over every run.
    pub n: usize,
}

/// Round steps for a time axis, in ms: one minute to four weeks.
const TIME_STEPS: [i64; 13] = [
    60_000,
    300_000,
    900_000,
    1_800_000,
    3_600_000,
    3 * 3_600_000,
    6 * 3_600_000,
    12 * 3_600_000,
    86_400_000,
    2 * 86_400_000,
    7 * 86_400_000,
    14 * 86_400_000,
    28 * 86_400_000,
];

/// Each provider's conversation p50 run by run against the run's start time (UTC), with
/// its interval as a whisker; a run apart from its window is ringed.
pub fn trend(id: &str, title: &str, lines: &[TrendLine]) -> Option<String> {
    let dots = lines.iter().flat_map(|l| &l.dots);
    let (t0, t1) = dots.clone().fold((i64::MAX, i64::MIN), |(a, b), d| {
        (a.min(d.t_ms), b.max(d.t_ms))
    });
    if t0 > t1 {
        return None;
    }
    let top_ms = dots
        .map(|d| d.interval.map_or(d.p50_ms, |(_, hi)| hi.max(d.p50_ms)))
        .fold(0.0f64, f64::max);
    let TimeAxis {
        x0,
        x1,
        ticks: xt_ms,
        labels: xlabels,
    } = TimeAxis::of(t0, t1);
    let xt: Vec<f64> = xt_ms.iter().map(|&t| hours(t, x0)).collect();
    let items: Vec<(&Series, String)> = lines
        .iter()
        .map(|l| (&l.series, format!("{} (n {})", l.series.name, l.n)))
        .collect();
    let yt = ticks(0.0, (top_ms / 1000.0).max(0.001), 6);
    let (f, height, lw) = Frame::beside_legend(
        &items,
        (0.0, hours(x1, x0)),
        (0.0, yt.last().copied().unwrap_or(1.0)),
    );
    let mut out = String::new();
    open(
        &mut out,
        id,
        title,
        "For each provider, the conversation p50 of each run, placed at the run's start; \
         whiskers are the p50's 95 % interval; a ringed point is a run whose interval misses \
         the window's.",
        height,
    );
    axes_labelled(
        &mut out,
        &f,
        &xt,
        &xlabels,
        &yt,
        "run started (UTC)",
        "conversation p50 (s)",
    );
    let anchors: Vec<(f64, f64, &str)> = lines
        .iter()
        .filter_map(|l| trend_line(&mut out, &f, l, x0))
        .collect();
    direct_labels(&mut out, &f, &anchors);
    legend(&mut out, &items, W - RIGHT - lw, TOP, true);
    out.push_str("</svg>");
    Some(out)
}

/// A trend's time axis: its ends (ms, padded around the runs) and round ticks with their
/// labels (UTC, with the date when it spans a day).
struct TimeAxis {
    x0: i64,
    x1: i64,
    ticks: Vec<i64>,
    labels: Vec<String>,
}

impl TimeAxis {
    fn of(t0: i64, t1: i64) -> TimeAxis {
        let span = t1 - t0;
        let pad = (span / 20).max(30_000);
        let (x0, x1) = (t0 - pad, t1 + pad);
        let step = TIME_STEPS
            .iter()
            .copied()
            .find(|s| (x1 - x0) / s <= 6)
            .unwrap_or(28 * 86_400_000);
        let first = x0.div_euclid(step) * step + step;
        let with_date = x1 - x0 >= 86_400_000;
        let ticks: Vec<i64> = (0..)
            .map(|k| first + k * step)
            .take_while(|t| *t <= x1)
            .collect();
        let labels = ticks
            .iter()
            .map(|&t| crate::timestamp::utc_minutes(t, with_date))
            .collect();
        TimeAxis {
            x0,
            x1,
            ticks,
            labels,
        }
    }
}

/// The chart works in hours from the axis origin `x0`: f64 keeps ms exactly there.
fn hours(t: i64, x0: i64) -> f64 {
    (t - x0) as f64 / 3_600_000.0
}

/// One provider's line of a trend: its p50s joined, whiskers, rings on runs apart from
/// the window, a marker per run; returns where its direct label goes (its last run).
fn trend_line<'s>(
    out: &mut String,
    f: &Frame,
    l: &'s TrendLine,
    x0: i64,
) -> Option<(f64, f64, &'s str)> {
    let mut points = String::new();
    for d in &l.dots {
        let _ = write!(
            points,
            "{:.1},{:.1} ",
            f.x(hours(d.t_ms, x0)),
            f.y(d.p50_ms / 1000.0)
        );
    }
    if l.dots.len() > 1 {
        let _ = write!(
            out,
            "<polyline fill=\"none\" stroke-width=\"2\" {} points=\"{}\"/>",
            l.series.stroke(),
            points.trim_end()
        );
    }
    for d in &l.dots {
        let (x, y) = (f.x(hours(d.t_ms, x0)), f.y(d.p50_ms / 1000.0));
        if let Some((lo, hi)) = d.interval {
            let _ = write!(
                out,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"1.4\"/>",
                f.y(lo / 1000.0),
                f.y(hi / 1000.0),
                l.series.style.colour
            );
        }
        if d.apart {
            let _ = write!(
                out,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"9\" fill=\"none\" stroke=\"#b00020\" stroke-width=\"2\"/>"
            );
        }
        let tip = format!(
            "{}: p50 {} at {}{}",
            l.series.name,
            crate::figure::Figure::new(d.p50_ms, crate::figure::Unit::Seconds),
            crate::timestamp::utc_minutes(d.t_ms, true),
            if d.apart {
                " (apart from the window)"
            } else {
                ""
            }
        );
        out.push_str(&marker(
            &l.series.style,
            x,
            y,
            4.5,
            &format!("<title>{}</title>", esc(&tip)),
        ));
    }
    let d = l.dots.last()?;
    Some((
        f.x(hours(d.t_ms, x0)),
        f.y(d.p50_ms / 1000.0),
        l.series.name,
    ))
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

    #[test]
    fn ten_providers_get_ten_distinct_styles_in_name_order() {
        let names = [
            "j", "i", "h", "g", "f", "e", "d", "c", "b", "a", "a", "k", "l",
        ];
        let s = styles(names);
        assert_eq!(s.len(), 12);
        assert_eq!(s[0].0, "a");
        for (i, (_, x)) in s.iter().enumerate() {
            for (_, y) in &s[i + 1..] {
                assert!(
                    (x.colour, x.marker) != (y.colour, y.marker)
                        && (x.colour, x.dash) != (y.colour, y.dash)
                );
            }
        }
        // The first ten differ in colour alone.
        let colours: std::collections::BTreeSet<_> =
            s[..10].iter().map(|(_, s)| s.colour).collect();
        assert_eq!(colours.len(), 10);
    }

    #[test]
    fn thinned_ticks_never_touch() {
        let pos: Vec<f64> = (0..20).map(|i| i as f64 * 12.0).collect();
        let kept = thin(&pos, |_| 20.0, 4.0);
        assert_eq!(kept.first(), Some(&0));
        assert!(kept.windows(2).all(|w| pos[w[1]] - pos[w[0]] >= 24.0));
    }

    #[test]
    fn the_quality_axis_starts_where_the_data_do() {
        let s = Series {
            name: "a",
            style: Style {
                colour: "#000",
                marker: 0,
                dash: 0,
            },
        };
        let p = QualityPoint {
            frontier: None,
            series: s,
            p50_ms: 1000.0,
            p50_interval: None,
            quality: 4.2,
            quality_interval: Some((3.9, 4.5)),
        };
        let (lo, hi) = quality_range(&[p], (1.0, 5.0));
        assert!(
            lo > 1.0 && lo <= 3.9 && (4.5..=5.0).contains(&hi),
            "{lo} {hi}"
        );
    }
}
