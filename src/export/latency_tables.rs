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
        let Some(g) = r.goodput_of(&c.provider, &c.model) else {
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

/// Turn columns TTFT BY TURN shows at most; later turns are in the JSON and the chart.
const TURN_COLUMNS: u32 = 8;

/// TTFT BY TURN, one row per cell in the report's order: TTFT p50 at each turn (n), and
/// the slope on prompt tokens with its interval.
pub fn ttft_by_turn(r: &Report) -> Option<Table> {
    if r.ttft_by_turn.is_empty() {
        return None;
    }
    let m = Marks::all_of(r.ttft_by_turn.iter().map(|t| t.simulated));
    let last = r
        .ttft_by_turn
        .iter()
        .flat_map(|t| t.turns.iter().map(|x| x.turn))
        .max()
        .unwrap_or(1);
    let shown = last.min(TURN_COLUMNS);
    let turns: Vec<u32> = (1..=shown).collect();
    let mut t = Table::by_turn(
        TableKey::TtftByTurn,
        "TTFT BY TURN",
        "TTFT p50 at each turn (ms, n) · slope of TTFT on prompt tokens",
        (
            &[("cell", L)],
            &turns,
            &[("ms per 1k prompt tokens", R), ("n", R)],
        ),
    )
    .simulated(m.all);
    for &i in &r.order {
        let Some(c) = r.cells.get(i) else { continue };
        let Some(x) = r.ttft_by_turn_of(&c.provider, &c.model) else {
            continue;
        };
        let mut cells = vec![format!(
            "{} / {}{}",
            x.provider,
            x.label,
            m.row(x.simulated)
        )];
        cells.extend((1..=shown).map(|turn| {
            x.turns
                .iter()
                .find(|a| a.turn == turn)
                .and_then(|a| Some(format!("{:.0} ({})", a.p50?, a.n)))
                .unwrap_or_else(|| "-".into())
        }));
        cells.push(x.slope_ms_per_1k_prompt_tokens.map_or("-".into(), |s| {
            let mut f = format!("{s:.1}");
            if let Some(i) = x.interval {
                f.push_str(&format!(" [{:.1}, {:.1}]", i.lo, i.hi));
            }
            f
        }));
        cells.push(format!(
            "{} turns, {} conv.",
            x.slope_n, x.slope_conversations
        ));
        t.push(
            RowKey::Cell(CellKey::new(&x.provider, &x.label)),
            x.simulated,
            cells,
        );
    }
    t.footnotes.push(
        "Turns of completed conversations. Slope: least squares of TTFT on the prompt tokens the \
         provider reported within each conversation (its own intercept), per 1,000 tokens, 95 % \
         interval clustered by conversation; a provider \
         whose prefix cache works stays flat as the history grows, one that pays for the whole \
         prompt every turn climbs. - where prompt tokens were not reported."
            .into(),
    );
    if last > TURN_COLUMNS {
        t.footnotes.push(format!(
            "Turns {}–{last}: in the JSON (ttft_by_turn) and the HTML chart.",
            TURN_COLUMNS + 1
        ));
    }
    Some(t)
}
