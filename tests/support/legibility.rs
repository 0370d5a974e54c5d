//! A browser-free stand-in for `render-html`'s `illegible` list: every `<text>` of every
//! chart, its box estimated from its font size (0.62 em a character, as wide as DejaVu
//! Sans; 0.93 em above the baseline and 0.24 em below, DejaVu's ascent and descent), must
//! stay inside the chart's viewBox and cover no other text by more than 2 px both ways. Rotated axis titles (`transform`) are left to the browser check.
#![allow(dead_code)]

/// (class, font px; bold counted 8 % wider) of the chart text classes (`src/export/html.rs`, STYLE).
const FONTS: [(&str, f64); 7] = [
    ("ct", 15.0 * 1.08),
    ("tk", 12.0),
    ("al", 13.0),
    ("lt", 12.5),
    ("pl", 12.5),
    ("bl", 12.0 * 1.08),
    ("gh", 13.0 * 1.08),
];

/// Problems found, one line each: `chart: "text" leaves the chart` or `covers "other"`.
pub fn problems(html: &str) -> Vec<String> {
    let svg =
        regex::Regex::new(r#"(?s)<svg id="([^"]+)"[^>]*viewBox="0 0 ([\d.]+) ([\d.]+)".*?</svg>"#)
            .unwrap();
    let text = regex::Regex::new(
        r#"<text x="([\d.-]+)" y="([\d.-]+)" class="(\w+)"(?: fill="[^"]*")?(?: text-anchor="(\w+)")?>([^<]*)"#,
    )
    .unwrap();
    let mut out = Vec::new();
    for s in svg.captures_iter(html) {
        let (id, w, h) = (
            &s[1],
            s[2].parse::<f64>().unwrap(),
            s[3].parse::<f64>().unwrap(),
        );
        let mut boxes: Vec<(String, [f64; 4])> = Vec::new();
        for t in text.captures_iter(&s[0]) {
            let (x, y): (f64, f64) = (t[1].parse().unwrap(), t[2].parse().unwrap());
            let px = FONTS
                .iter()
                .find(|(c, _)| *c == &t[3])
                .map_or(13.0, |(_, p)| *p);
            let content = t[5]
                .replace("&amp;", "&")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&#39;", "'");
            if content.trim().is_empty() {
                continue;
            }
            let width = content.chars().count() as f64 * px * 0.62;
            let x0 = match t.get(4).map(|m| m.as_str()) {
                Some("middle") => x - width / 2.0,
                Some("end") => x - width,
                _ => x,
            };
            let b = [x0, y - 0.93 * px, x0 + width, y + 0.24 * px];
            if b[0] < -1.0 || b[1] < -1.0 || b[2] > w + 1.0 || b[3] > h + 1.0 {
                out.push(format!(
                    "{id}: {content:?} leaves the chart ({b:?} in {w}×{h})"
                ));
            }
            boxes.push((content, b));
        }
        for (i, (a, p)) in boxes.iter().enumerate() {
            for (b, q) in &boxes[i + 1..] {
                let x = p[2].min(q[2]) - p[0].max(q[0]);
                let y = p[3].min(q[3]) - p[1].max(q[1]);
                if x > 2.0 && y > 2.0 {
                    out.push(format!("{id}: {a:?} covers {b:?}"));
                }
            }
        }
    }
    out
}
