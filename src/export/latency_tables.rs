//! GOODPUT (`--slo`) as a table (terminal, Markdown and HTML share it through
//! [`super::sections::tables`]): per cell, the turns and conversations that met every
//! bound, with their intervals and counts. Formatting only; the figures are
//! `crate::report::goodput`'s.

use super::text_table::{Align, Table};
use crate::figure::rate;
use crate::report::keys::{CellKey, RowKey, TableKey};
use crate::report::model::Report;
use crate::report::simulated::Marks;

use Align::{Left as L, Right as R};

/// GOODPUT, one row per cell in the report's order; none without `--slo`.
pub fn goodput(r: &Report) -> Option<Table> {
    let first = r.goodput.first()?;
    let m = Marks::all_of(r.goodput.iter().map(|g| g.simulated));
    let mut t = Table::new(
        TableKey::Goodput,
        "GOODPUT",
        Some(format!(
            "turns and conversations meeting {}",
            first.slo.text()
        )),
        &[
            ("cell", L),
            ("turns met", R),
            ("of turns", R),
            ("goodput", R),
            ("conversations met", R),
            ("of conversations", R),
            ("conversation goodput", R),
        ],
    )
    .simulated(m.all);
    let mut unmeasured = 0;
    for &i in &r.order {
        let Some(c) = r.cells.get(i) else { continue };
        let Some(g) = r
            .goodput
            .iter()
            .find(|g| g.provider == c.provider && g.label == c.model)
        else {
            continue;
        };
        unmeasured += g.turns_unmeasured;
        t.push(
            RowKey::Cell(CellKey::new(&g.provider, &g.label)),
            g.simulated,
            vec![
                format!("{} / {}{}", g.provider, g.label, m.row(g.simulated)),
                g.turns_met.to_string(),
                g.turns.to_string(),
                rate(g.rate, g.interval),
                g.conversations_met.to_string(),
                g.conversations.to_string(),
                rate(g.conversation_rate, g.conversation_interval),
            ],
        );
    }
    t.footnotes.push(
        "A turn meets the objective when it was answered and every bound holds (TTFT, TPOT, the turn's own \
         ITL p95, E2E); a failed turn counts as sent and not met. A conversation meets it when it completed \
         and every turn met it. Intervals 95 %: turns clustered by scenario (as usable turns), conversations \
         Wilson."
            .into(),
    );
    if unmeasured > 0 {
        t.footnotes.push(format!(
            "{unmeasured} turns could not be judged against a bound (a figure not measured: no TTFT, or no \
             stored event offsets for ITL): counted as not met."
        ));
    }
    Some(t)
}
