//! The comparison with a baseline as a table (terminal, Markdown and HTML share it through
//! [`super::table::tables`]): one row per cell × statistic, each side's figure with its n,
//! the change with its interval, the pairs it rests on and the verdict. Formatting only;
//! the figures are `crate::report::compare`'s.

use super::grid::{Align, Table};
use crate::report::compare::{change_text, statistic_name, value_text, verdict_text};
use crate::report::model::{ChangeVerdict, Report};

use Align::{Left as L, Right as R};

pub fn tables(r: &Report) -> Vec<Table> {
    let Some(c) = &r.comparison else {
        return Vec::new();
    };
    let simulated = c.changes.iter().any(|x| x.simulated);
    let selected = if c.runs.len() == 1 { "run" } else { "runs" };
    let mut t = Table::new(
        format!(
            "AGAINST THE BASELINE · {selected} {} vs {}{}",
            crate::report::window::join_ids(&c.runs),
            c.baseline,
            if simulated { " · SIMULATED" } else { "" }
        ),
        &[
            ("cell", L),
            ("figure", L),
            ("baseline", R),
            ("now", R),
            ("change [95 % adj.]", R),
            ("pairs (scenarios)", R),
            ("verdict", L),
        ],
    );
    // Regressions first, then improvements, then the rest in the report's order.
    let mut order: Vec<usize> = (0..c.changes.len()).collect();
    order.sort_by_key(|&i| match c.changes[i].verdict {
        ChangeVerdict::Regressed => 0,
        ChangeVerdict::Improved => 1,
        ChangeVerdict::NoEstablishedChange => 2,
    });
    for i in order {
        let x = &c.changes[i];
        t.rows.push(vec![
            x.cell.clone(),
            statistic_name(x),
            format!("{} (n {})", value_text(x, x.claim.b_value), x.baseline_n),
            format!("{} (n {})", value_text(x, x.claim.a_value), x.selected_n),
            change_text(x),
            format!("{} ({})", x.claim.n, x.claim.scenarios),
            verdict_text(x),
        ]);
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
