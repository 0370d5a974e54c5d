//! Runs over time as tables (terminal, Markdown and HTML share them through
//! [`super::sections::tables`]): the comparison with a baseline — one row per cell ×
//! statistic, each side's figure with its n, the change with its interval, the pairs it
//! rests on and the verdict — and the trend, one row per cell × run. Formatting only; the
//! figures are `crate::report::compare`'s and `crate::report::trend`'s.

use super::text_table::{Align, Table};
use crate::figure::Unit;
use crate::report::keys::TableKey;
use crate::report::model::{ChangeVerdict, Report};
use crate::report::sentences::{change_text, statistic_name, value_text, verdict_text};

use Align::{Left as L, Right as R};

/// The comparison first (it leads the report), the trend after the cells.
pub fn comparison(r: &Report) -> Vec<Table> {
    let Some(c) = &r.comparison else {
        return Vec::new();
    };
    let simulated = c.changes.iter().any(|x| x.simulated);
    let selected = if c.runs.len() == 1 { "run" } else { "runs" };
    let mut t = Table::new(
        TableKey::Comparison,
        format!(
            "AGAINST THE BASELINE · {selected} {} vs {}",
            crate::report::window::join_ids(&c.runs),
            c.baseline,
        ),
        None,
        &[
            ("cell", L),
            ("figure", L),
            ("baseline", R),
            ("now", R),
            ("change [95 % adj.]", R),
            ("pairs (scenarios)", R),
            ("verdict", L),
        ],
    )
    .simulated(simulated);
    // Regressions first, then improvements, then the rest in the report's order.
    let mut order: Vec<usize> = (0..c.changes.len()).collect();
    order.sort_by_key(|&i| match c.changes[i].verdict {
        ChangeVerdict::Regressed => 0,
        ChangeVerdict::Improved => 1,
        ChangeVerdict::NoEstablishedChange => 2,
    });
    for i in order {
        let x = &c.changes[i];
        t.push(
            x.key(),
            x.simulated,
            vec![
                x.cell.clone(),
                statistic_name(x),
                format!("{} (n {})", value_text(x, x.claim.b_value), x.baseline_n),
                format!("{} (n {})", value_text(x, x.claim.a_value), x.selected_n),
                change_text(x),
                format!("{} ({})", x.claim.n, x.claim.scenarios),
                verdict_text(x),
            ],
        );
    }
    t.footnotes.push(format!(
        "{} comparisons (every figure of every cell both sides hold), Holm, family-wise {:.0} %: \
         {} regression{} and {} improvement{} established. Each side's figure is over the \
         (scenario version, repeat) slots both hold; n is each side's conversations of the cell. \
         Latency changes are ratios (now ÷ baseline − 1); shares change in points.",
        c.comparisons,
        c.alpha * 100.0,
        c.regressions,
        if c.regressions == 1 { "" } else { "s" },
        c.improvements,
        if c.improvements == 1 { "" } else { "s" },
    ));
    if !c.only_selected.is_empty() {
        t.footnotes.push(format!(
            "only in {selected} {}, not compared: {}",
            crate::report::window::join_ids(&c.runs),
            c.only_selected.join(", ")
        ));
    }
    if !c.only_baseline.is_empty() {
        t.footnotes.push(format!(
            "only in the baseline ({}), not compared: {}",
            c.baseline,
            c.only_baseline.join(", ")
        ));
    }
    t.footnotes.extend(c.left_out.iter().cloned());
    vec![t]
}

/// TREND: each cell run by run, p50 with its interval and success with its Wilson interval.
pub fn trend(r: &Report) -> Vec<Table> {
    let Some(t) = &r.trend else {
        return Vec::new();
    };
    let simulated = t.points.iter().any(|p| p.simulated);
    let mut table = Table::new(
        TableKey::Trend,
        format!(
            "TREND · {} run{} · each cell run by run",
            t.runs,
            if t.runs == 1 { "" } else { "s" },
        ),
        None,
        &[
            ("cell", L),
            ("run", R),
            ("started", L),
            ("success [95 %] (k/n)", R),
            ("conv p50 [95 %] (n)", R),
            ("", L),
        ],
    )
    .simulated(simulated);
    for p in &t.points {
        let success = format!(
            "{} ({}/{})",
            p.success.figure().map_or("-".into(), |f| f.to_string()),
            p.success.k,
            p.success.n
        );
        let p50 = p.conversation_p50.map_or("-".into(), |e| {
            e.figure(Unit::Duration).n(p.latency_n).to_string()
        });
        table.push(
            p.key(),
            p.simulated,
            vec![
                p.cell.clone(),
                match &p.collector {
                    Some(c) => format!("{} on {c}", p.run),
                    None => p.run.to_string(),
                },
                p.started_at
                    .get(..16)
                    .unwrap_or(&p.started_at)
                    .replace('T', " "),
                success,
                p50,
                if p.apart {
                    "apart".into()
                } else {
                    String::new()
                },
            ],
        );
    }
    table.footnotes.push(format!(
        "apart ({} of {}): the run's p50 interval and the window's (the pooled cell's, in the \
         CELLS table) do not meet. Intervals: distribution-free order statistics for the p50 \
         (from 6 conversations), Wilson for success. Times UTC.",
        t.apart,
        t.points.len()
    ));
    vec![table]
}
