//! The scenario × cell matrix: as HTML squares (one matrix per model label, coloured by
//! the check pass rate, each square linking to a conversation view behind it) and as a
//! Markdown table (one row per scenario × cell). Formatting only: the rows are
//! `crate::report::matrix`.

use std::fmt::Write as _;

use super::conversation_view::anchor;
use super::svg::esc;
use crate::report::matrix::MatrixRow;
use crate::report::model::Report;
use crate::store::detail::ConversationDetail;

pub const STYLE: &str = r#"
table.mx td.sq{white-space:normal;min-width:10em;font-size:12.5px;line-height:1.35;border:2px solid #fff;background:var(--b1)}
#mx-by-done:checked ~ .tw table.mx td.sq{background:var(--b2)}
#mx-by-judge:checked ~ .tw table.mx td.sq{background:var(--b3)}
.mxc{margin:.4em 0 .8em;font-size:13.5px}.mxc label{margin-right:1.2em}
table.mx td.sq a{font-weight:600}
table.mx td.sq.none{background:var(--soft);color:var(--muted)}
"#;

fn rate(r: &MatrixRow) -> String {
    r.check_pass_rate.map_or("-".to_string(), |p| {
        format!("{:.1} % (n {})", p * 100.0, r.checks_scored)
    })
}

fn judge(r: &MatrixRow) -> String {
    r.judge_mean
        .map_or("-".to_string(), |m| format!("{m:.2} (n {})", r.judge_n))
}

/// A pale background from red (0 %) through yellow to green (100 %).
fn colour(p: f64) -> String {
    format!("hsl({:.0},70%,86%)", (p.clamp(0.0, 1.0) * 120.0))
}

/// A square's three backgrounds, one per figure the reader can colour by (grey where the
/// square has no such figure): check pass rate, completion, and the judge mean placed
/// between the lowest and highest judge mean of the whole matrix.
fn backgrounds(row: &MatrixRow, judge_range: Option<(f64, f64)>) -> String {
    let grey = "var(--soft)".to_string();
    let checks = row.check_pass_rate.map_or(grey.clone(), colour);
    let done = if row.attempted > 0 {
        colour(row.completed as f64 / row.attempted as f64)
    } else {
        grey.clone()
    };
    let judge = match (row.judge_mean, judge_range) {
        (Some(m), Some((lo, hi))) if hi > lo => colour((m - lo) / (hi - lo)),
        (Some(_), Some(_)) => colour(1.0),
        _ => grey,
    };
    format!("--b1:{checks};--b2:{done};--b3:{judge}")
}

fn failed(c: &ConversationDetail) -> bool {
    c.outcome != "completed" || c.checks.iter().any(|k| k.passed == Some(false))
}

/// The view a square links to: a failed conversation of it, else any of it.
fn view_of<'a>(r: &'a Report, row: &MatrixRow) -> Option<&'a ConversationDetail> {
    let mut of_square = r.drilldown.views.iter().filter(|c| {
        c.provider == row.provider
            && c.label == row.model
            && c.scenario.as_deref() == Some(row.scenario.as_str())
    });
    let all: Vec<_> = of_square.by_ref().collect();
    all.iter().find(|c| failed(c)).or(all.first()).copied()
}

pub fn html_section(h: &mut String, r: &Report) {
    if r.matrix.is_empty() {
        return;
    }
    let means: Vec<f64> = r.matrix.iter().filter_map(|m| m.judge_mean).collect();
    let judge_range = (!means.is_empty()).then(|| {
        means
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &m| {
                (lo.min(m), hi.max(m))
            })
    });
    h.push_str("<section id=\"matrix\"><h2>Scenarios × cells</h2><p class=\"fn\">Each square: conversations completed of attempted; share of scored checks passed (its n); the primary judge's mean score (n: conversations judged). The colour is the figure chosen below: red 0 %, green 100 % for the check pass rate and completion; for the judge, red the lowest mean in this matrix and green the highest (a ranking, not a scale); grey: no such figure. A link opens a conversation behind the square (a failed one when there is one).</p>");
    let judge_label = match judge_range {
        Some((lo, hi)) => format!("judge mean ({lo:.2} red – {hi:.2} green)"),
        None => "judge mean (none judged)".to_string(),
    };
    let _ = write!(
        h,
        "<input type=\"radio\" name=\"mx-by\" id=\"mx-by-checks\" checked><label for=\"mx-by-checks\" class=\"mxc\">colour by check pass rate</label> \
         <input type=\"radio\" name=\"mx-by\" id=\"mx-by-done\"><label for=\"mx-by-done\" class=\"mxc\">by completion</label> \
         <input type=\"radio\" name=\"mx-by\" id=\"mx-by-judge\"><label for=\"mx-by-judge\" class=\"mxc\">by {}</label>",
        esc(&judge_label)
    );
    let mut models: Vec<&str> = r.matrix.iter().map(|m| m.model.as_str()).collect();
    models.dedup();
    for model in models {
        let rows: Vec<&MatrixRow> = r.matrix.iter().filter(|m| m.model == model).collect();
        let mut providers: Vec<&str> = rows.iter().map(|m| m.provider.as_str()).collect();
        providers.sort_unstable();
        providers.dedup();
        let mut scenarios: Vec<&str> = rows.iter().map(|m| m.scenario.as_str()).collect();
        scenarios.dedup();
        let _ = write!(
            h,
            "<div class=\"tw\"><table class=\"mx\"><caption>model {}{}</caption><thead><tr><th scope=\"col\">scenario</th>",
            esc(model),
            crate::report::simulated::name_mark(rows.iter().any(|m| m.simulated))
        );
        for p in &providers {
            let _ = write!(h, "<th scope=\"col\">{}</th>", esc(p));
        }
        h.push_str("</tr></thead><tbody>");
        for s in &scenarios {
            let _ = write!(h, "<tr><th scope=\"row\">{}</th>", esc(s));
            for p in &providers {
                let Some(row) = rows.iter().find(|m| m.provider == *p && m.scenario == *s) else {
                    h.push_str("<td class=\"sq none\">-</td>");
                    continue;
                };
                let (class, style) = (
                    "sq",
                    format!(" style=\"{}\"", backgrounds(row, judge_range)),
                );
                let link = view_of(r, row).map_or(String::new(), |c| {
                    format!(
                        "<br><a href=\"#{}\">{}</a>",
                        esc(&anchor(&c.uid)),
                        if failed(c) {
                            "a failed conversation"
                        } else {
                            "a conversation"
                        }
                    )
                });
                let _ = write!(
                    h,
                    "<td class=\"{class}\"{style}>{}{link}</td>",
                    esc(&format!(
                        "{}/{} completed · checks {} · judge {}",
                        row.completed,
                        row.attempted,
                        rate(row),
                        judge(row)
                    ))
                );
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table></div>");
    }
    h.push_str("</section>\n");
}

use super::text_table::markdown_escape as md;

/// The matrix as one Markdown table, one row per scenario × cell.
pub fn markdown(r: &Report) -> String {
    if r.matrix.is_empty() {
        return String::new();
    }
    let mut o = String::from(
        "## Scenarios × cells\n\n| model | scenario | provider | completed | checks passed | judge mean |\n| --- | --- | --- | ---: | ---: | ---: |\n",
    );
    for m in &r.matrix {
        let _ = writeln!(
            o,
            "| {}{} | {} | {} | {}/{} | {} | {} |",
            md(&m.model),
            crate::report::simulated::name_mark(m.simulated),
            md(&m.scenario),
            md(&m.provider),
            m.completed,
            m.attempted,
            rate(m),
            judge(m)
        );
    }
    o.push('\n');
    o
}
