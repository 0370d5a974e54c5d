//! The HTML format: one self-contained file that opens offline and reads without scripts:
//! the run card, headlines as sentences, inline SVG charts (per model label), the same tables as the
//! terminal, and notes. All text is escaped; simulated results are marked in the title, the
//! card and every table that holds them.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;

use super::conversation_view;
use super::sections::{Align, Table, headline_groups, tables};
use super::svg::esc;
use super::{ExportError, Exporter, FormatOptions};
use crate::report::keys::TableKey;
use crate::report::model::{HeadlineKind, Report};
use crate::report::simulated::{NAME_MARK, PAGE_BADGE, TABLE_BADGE, name_mark};

pub struct Html;

const STYLE: &str = r#"
:root{--ink:#1b1f24;--muted:#57606a;--line:#d0d7de;--soft:#f6f8fa;--ok:#116329;--warn:#9a6700}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);margin:0 auto;max-width:1180px;padding:24px 20px 60px}
h1{font-size:26px;margin:0 0 6px}h2{font-size:19px;margin:34px 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
.sim{display:inline-block;background:#fff3cd;color:#7a4d00;border:1px solid #e0b84a;border-radius:4px;font-size:13px;font-weight:600;padding:1px 8px;vertical-align:middle;margin-left:8px}
dl.card{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:10px 0 0;font-size:14px;color:var(--muted)}
dl.card dt{font-weight:600;color:var(--ink)}dl.card dd{margin:0}
ul.heads{list-style:none;padding:0;margin:0}
ul.heads li{padding:7px 10px 7px 12px;margin:6px 0;border-left:4px solid var(--line);background:var(--soft);border-radius:0 4px 4px 0}
ul.heads li.yes{border-left-color:var(--ok)}ul.heads li.no{border-left-color:#8c959f}ul.heads li.flag{border-left-color:var(--warn)}
ul.heads b{display:inline-block;min-width:96px;margin-right:6px}
.verdict{font-size:12px;font-weight:600;padding:0 6px;border-radius:3px;margin-left:6px;white-space:nowrap}
.verdict.yes{background:#dafbe1;color:var(--ok)}.verdict.no{background:#eaeef2;color:var(--muted)}
.charts{display:grid;grid-template-columns:1fr;gap:18px}
figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:8px;background:#fff}
figure svg{width:100%;height:auto;display:block}
figcaption{font-size:13px;color:var(--muted);padding:4px 6px 0}
svg .ct{font:600 15px system-ui,sans-serif;fill:#1b1f24}svg .tk{font:12px system-ui,sans-serif;fill:#57606a}
svg .al{font:13px system-ui,sans-serif;fill:#1b1f24}svg .lt{font:12.5px system-ui,sans-serif;fill:#1b1f24}
svg .pl{font:12.5px system-ui,sans-serif;fill:#1b1f24;paint-order:stroke;stroke:#fff;stroke-width:3px}
svg .bl{font:600 12px system-ui,sans-serif}svg .gh{font:600 13px system-ui,sans-serif;fill:#1b1f24}
.charts h3{font-size:16px;margin:10px 0 -6px}
svg .grid{stroke:#eaeef2;stroke-width:1}svg .axis{stroke:#57606a;stroke-width:1.2}
svg .lg{fill:#fff;fill-opacity:.92;stroke:#d0d7de}
.tw{overflow-x:auto;margin:8px 0 4px}
table{border-collapse:collapse;font-size:13.5px;font-variant-numeric:tabular-nums;min-width:60%}
caption{text-align:left;font-weight:600;padding:6px 0;font-size:14px}
th,td{padding:5px 10px;border-bottom:1px solid var(--line);white-space:nowrap}
td:last-child{white-space:normal;min-width:8em}
th{background:var(--soft);font-weight:600;text-align:left}
td.r,th.r{text-align:right}
tbody tr:hover{background:#f3f6fa}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px;vertical-align:baseline}
p.fn{font-size:12.5px;color:var(--muted);margin:2px 0 0}
ul.notes li{margin:4px 0}
@media (max-width:640px){body{font-size:14px;padding:14px 10px}ul.heads b{display:block}}
@media print{body{max-width:none}figure,table{break-inside:avoid}}
"#;

impl Exporter<Report> for Html {
    fn write(
        &self,
        r: &Report,
        _opts: &FormatOptions,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        out.write_all(page(r, &tables(r)).as_bytes())?;
        Ok(())
    }
}

/// The HTML page of `r` with these tables (the exporter passes [`tables`]`(r)`; a test
/// passes them retitled, to show that nothing on the page is found by a title).
pub fn page(r: &Report, tables: &[Table]) -> String {
    let mut h = String::with_capacity(64 * 1024);
    let simulated = r.any_simulated();
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>turnbench report{}</title><style>{STYLE}{}</style></head><body>\n",
        name_mark(simulated),
        format_args!("{}{}", conversation_view::STYLE, super::matrix_view::STYLE)
    );
    let _ = write!(
        h,
        "<header><h1>turnbench report{}</h1>",
        if simulated { PAGE_BADGE } else { "" }
    );
    card(&mut h, r);
    h.push_str("</header>\n");
    headlines(&mut h, r);
    let colours = provider_colours(r);
    families(&mut h, r, &colours);
    super::html_charts::charts(&mut h, r);
    for t in tables {
        table(&mut h, t, &colours, r);
    }
    super::matrix_view::html_section(&mut h, r);
    conversation_view::html_section(&mut h, &r.drilldown);
    if !r.notes.is_empty() {
        h.push_str("<section><h2>Notes</h2><ul class=\"notes\">");
        for n in &r.notes {
            let _ = write!(h, "<li>{}</li>", esc(n));
        }
        h.push_str("</ul></section>\n");
    }
    h.push_str("</body></html>\n");
    h
}

/// One table as a section: its heading (badged when it shows simulated figures, by its
/// flags), each row with its cell's swatch (by the row's key), the footnotes, and the
/// conversations behind its rows (by the table's key).
fn table(h: &mut String, t: &Table, colours: &HashMap<String, &'static str>, r: &Report) {
    let _ = write!(
        h,
        "<section><h2>{}{}</h2><div class=\"tw\"><table><thead><tr>",
        esc(&t.heading()),
        if t.shows_simulated() { TABLE_BADGE } else { "" }
    );
    for (i, head) in t.header.iter().enumerate() {
        let class = if t.align.get(i) == Some(&Align::Right) {
            " class=\"r\""
        } else {
            ""
        };
        let _ = write!(h, "<th{class} scope=\"col\">{}</th>", esc(head));
    }
    h.push_str("</tr></thead><tbody>");
    for row in &t.rows {
        h.push_str("<tr>");
        let swatch = row
            .key
            .named_cell()
            .and_then(|c| colours.get(&c.provider))
            .map(|col| format!("<span class=\"sw\" style=\"background:{col}\"></span>"))
            .unwrap_or_default();
        for (i, c) in row.cells.iter().enumerate() {
            let right = t.align.get(i) == Some(&Align::Right);
            let _ = write!(
                h,
                "<td{}>{}{}</td>",
                if right { " class=\"r\"" } else { "" },
                if i == 0 { swatch.as_str() } else { "" },
                esc(c)
            );
        }
        h.push_str("</tr>");
    }
    h.push_str("</tbody></table></div>");
    for f in &t.footnotes {
        let _ = write!(h, "<p class=\"fn\">{}</p>", esc(f));
    }
    if let TableKey::ConstraintsAcrossTurns { model } = &t.key {
        super::html_charts::constraints_figure(h, r, model, constraints_index(r, model));
    }
    conversation_view::behind_table(h, &t.key, &r.drilldown);
    h.push_str("</section>\n");
}

fn card(h: &mut String, r: &Report) {
    let m = &r.meta;
    h.push_str("<dl class=\"card\">");
    let mut row = |k: &str, v: String| {
        let _ = write!(h, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(&v));
    };
    row("store", m.store.clone());
    row(
        "generated",
        format!("{} · turnbench {}", m.generated_at, m.tool_version),
    );
    for run in &m.runs {
        row(
            &format!("run {}", run.id),
            format!(
                "\"{}\" ({}) · started {}{}{} · settings {} · seed {} · tokenizer {} · turnbench {}",
                run.name,
                run.source,
                run.started_at,
                run.collector
                    .as_ref()
                    .map_or(String::new(), |c| format!(" on {c}")),
                run.definitions
                    .as_ref()
                    .map_or(String::new(), |d| format!(" · scenarios {d}")),
                run.settings_hash,
                run.seed.map_or("-".into(), |s| s.to_string()),
                run.tokenizer.as_deref().unwrap_or("not recorded"),
                run.tool_version
            ),
        );
    }
    row(
        "scope",
        format!(
            "{} providers × {} models · {} scenarios · {} current check definitions",
            m.providers, m.models, m.scenarios, m.check_definitions
        ),
    );
    let judges: Vec<String> = r
        .judges
        .iter()
        .map(|s| {
            format!(
                "{} by {} ({}{})",
                s.rubric,
                s.judge,
                s.judge_model,
                if s.simulated { ", simulated" } else { "" }
            )
        })
        .collect();
    row(
        "judges",
        if judges.is_empty() {
            "none".into()
        } else {
            judges.join("; ")
        },
    );
    row(
        "statistics",
        format!(
            "percentiles: {}; intervals: {:.0} %: percentiles from order statistics, rates Wilson, means t over scenarios; claims: paired, scenario sign-flip test{}, Holm per headline (agreement bootstrap: {} resamples, seed {})",
            m.percentiles,
            m.bootstrap.level * 100.0,
            if m.runs.len() > 1 {
                format!(", {} runs pooled as a second cluster level", m.runs.len())
            } else {
                String::new()
            },
            m.bootstrap.resamples,
            m.bootstrap.seed
        ),
    );
    if let Some(sla) = m.sla_ms {
        row(
            "SLA",
            format!("turns count as usable only within {sla:.0} ms E2E"),
        );
    }
    if m.simulated_providers {
        row(
            "simulated",
            format!("cells marked{NAME_MARK} come from the built-in mock provider"),
        );
    }
    h.push_str("</dl>");
}

fn headlines(h: &mut String, r: &Report) {
    if r.headlines.is_empty() {
        return;
    }
    h.push_str("<section><h2>Headlines</h2><ul class=\"heads\">");
    let groups = headline_groups(r);
    let mut i = 0;
    for (group, lines) in &groups {
        for line in lines {
            let head = &r.headlines[i];
            i += 1;
            let (class, verdict) = match (head.kind, head.established) {
                (HeadlineKind::Flag, _) => ("flag", ""),
                (_, Some(true)) => ("yes", "<span class=\"verdict yes\">established</span>"),
                (_, Some(false)) => ("no", "<span class=\"verdict no\">not established</span>"),
                (_, None) => ("", ""),
            };
            let _ = write!(
                h,
                "<li class=\"{class}\"><b>{}</b>{}{verdict}</li>",
                esc(group),
                esc(line)
            );
        }
    }
    h.push_str("</ul></section>\n");
}

/// Every headline's family of comparisons, folded under the headlines.
fn families(h: &mut String, r: &Report, colours: &HashMap<String, &'static str>) {
    let families = super::family_tables::tables(r);
    if families.is_empty() {
        return;
    }
    let _ = write!(
        h,
        "<details class=\"families\"><summary>Every comparison behind the headlines \
         ({} families)</summary>",
        families.len()
    );
    for t in &families {
        table(h, t, colours, r);
    }
    h.push_str("</details>\n");
}

/// A model label's place among the labels of CONSTRAINTS ACROSS TURNS (a chart id: labels are
/// user text, never in an id).
fn constraints_index(r: &Report, model: &str) -> usize {
    let mut labels: Vec<&str> = r
        .constraint_survival
        .iter()
        .map(|s| s.label.as_str())
        .collect();
    labels.dedup();
    labels
        .iter()
        .position(|l| *l == model)
        .unwrap_or(labels.len())
}

/// One colour per provider: its chart colour.
fn provider_colours(r: &Report) -> HashMap<String, &'static str> {
    super::html_charts::provider_styles(r)
        .into_iter()
        .map(|(p, s)| (p, s.colour))
        .collect()
}
