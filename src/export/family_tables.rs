//! FAMILIES: every comparison behind a headline as a table, one per headline family —
//! the leader against every other cell first, then every other pair — with pairs,
//! scenarios, each side's value over the pairs, the difference with its interval, the
//! Holm-adjusted p and the verdict (why, when not established), and the equivalence test
//! when `--margin` asked for one. Markdown writes them as a section, HTML under the
//! headlines in a `<details>`, the terminal with `--verbose`. Formatting only: every
//! figure and verdict is the report's (`crate::report::headlines`).

use super::text_table::{Align, Table};
use crate::figure::p_value;
use crate::report::keys::{RowKey, TableKey};
use crate::report::model::{Claim, Family, Report, Shortfall};
use crate::report::sentences::{
    equivalence_interval_text, gap_text, margin_text, member_figure, member_name as name,
    statistic_value, what,
};

use Align::{Left as L, Right as R};

/// One table per headline with a family of ranked cells (pairwise families have their
/// own section).
pub fn tables(r: &Report) -> Vec<Table> {
    let mut out = Vec::new();
    for (i, h) in r.headlines.iter().enumerate() {
        let (Some(f), Some(what)) = (&h.family, what(h)) else {
            continue;
        };
        if f.members.is_empty() {
            continue;
        }
        let equivalence = f.claims.iter().any(|c| c.equivalence.is_some());
        let mut columns = vec![
            ("comparison", L),
            ("pairs", R),
            ("scenarios", R),
            ("a", R),
            ("b", R),
            ("difference [interval]", R),
            ("adjusted p", R),
            ("verdict", L),
        ];
        if equivalence {
            columns.push(("equivalence", L));
        }
        let mut t = Table::new(
            TableKey::Family { headline: i },
            format!("FAMILY · {what}"),
            Some(format!(
                "{} comparison{} of {} cells, Holm, family-wise {:.0} %",
                f.comparisons,
                if f.comparisons == 1 { "" } else { "s" },
                f.cells,
                f.alpha * 100.0
            )),
            &columns,
        )
        .simulated(h.simulated);
        let label = h.model.as_deref();
        for c in f.claims.iter().chain(&f.others) {
            let mut cells = vec![
                format!("{} vs {}", name(f, label, &c.a), name(f, label, &c.b)),
                c.n.to_string(),
                c.scenarios.to_string(),
                value(f, c.a_value),
                value(f, c.b_value),
                gap_text(c, f.statistic).unwrap_or_else(|| "-".into()),
                p_value(c.adjusted_p),
                verdict(c),
            ];
            if equivalence {
                cells.push(equivalent(f, c));
            }
            t.push(
                RowKey::Comparison {
                    a: c.a.clone(),
                    b: c.b.clone(),
                },
                h.simulated,
                cells,
            );
        }
        t.footnotes.push(ranking(f, label));
        t.footnotes.extend(reasons(f));
        t.footnotes.push(
            "a, b: each side's figure over the pairs both hold; the leader's comparisons come \
             first, the next best first, then every other pair. The interval is at the \
             comparison's Holm-adjusted level and holds no difference exactly when the \
             comparison is not established (docs/metrics.md, \"Claims\")."
                .into(),
        );
        if equivalence {
            t.footnotes.push(
                "equivalence: two one-sided tests, the interval at 1 − 2α/m (α 5 %, m the \
                 leader's comparisons) inside ± the margin (--margin)."
                    .into(),
            );
        }
        out.push(t);
    }
    out
}

fn value(f: &Family, v: Option<f64>) -> String {
    v.map_or("-".into(), |v| statistic_value(f.statistic, v))
}

fn verdict(c: &Claim) -> String {
    match &c.reason {
        None if c.established => "established".into(),
        Some(r) => format!("not established: {}", r.brief()),
        None => "not established".into(),
    }
}

/// Each kind of reason a comparison is not established, in full, once (too few pairs
/// says all in its cell).
fn reasons(f: &Family) -> Option<String> {
    let mut kinds = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for r in f.claims.iter().chain(&f.others).filter_map(|c| c.reason) {
        let kind = std::mem::discriminant(&r);
        if matches!(r, Shortfall::TooFewPairs { .. }) || kinds.contains(&kind) {
            continue;
        }
        kinds.push(kind);
        seen.push(format!("{}: {}", r.brief(), r.sentence()));
    }
    (!seen.is_empty()).then(|| format!("not established — {}.", seen.join("; ")))
}

fn equivalent(f: &Family, c: &Claim) -> String {
    let Some(e) = c.equivalence else {
        return String::new();
    };
    let margin = margin_text(e.margin, f.statistic);
    let interval = equivalence_interval_text(c, f.statistic).unwrap_or_else(|| "-".into());
    if e.established {
        format!("equivalent within ±{margin} {interval}")
    } else {
        format!("not shown equivalent within ±{margin} {interval}")
    }
}

/// The family's cells by their own figure, best first, each with its n.
fn ranking(f: &Family, label: Option<&str>) -> String {
    let ranked: Vec<String> = f
        .members
        .iter()
        .map(|m| format!("{} {}", name(f, label, &m.cell), member_figure(f, &m.cell)))
        .collect();
    format!("ranked by each cell's own figure: {}", ranked.join(", "))
}
