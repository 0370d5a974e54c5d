//! CONSTRAINTS ACROSS TURNS as tables (terminal, Markdown and HTML share them through
//! [`super::sections::tables`]): one table per model label, one row per provider × check
//! tag — the pass rate at each turn, the forgetting and the recovery ratio, each with the
//! counts it rests on. Formatting only; the figures are `crate::report::survival`'s.

use super::text_table::{Align, Table, by_turn_frame};
use crate::figure::percent;
use crate::report::keys::{CellKey, RowKey, TableKey};
use crate::report::model::Report;
use crate::report::survival::ConstraintSurvival;

use Align::{Left as L, Right as R};

/// A share with the counts it is of: `87.5 % (7/8)`; `-` with nothing to count.
fn share(k: u64, n: u64, value: Option<f64>) -> String {
    match value {
        Some(v) if n > 0 => format!("{} ({k}/{n})", percent(v)),
        _ => "-".into(),
    }
}

/// One table per model label, in the report's order; none without turn verdicts. Each
/// label's providers come in the order its cell tables show them (`--sort`), each
/// provider's tags in the report's tag order.
pub fn tables(r: &Report) -> Vec<Table> {
    super::text_table::per_label(r, &r.constraint_survival, table)
}

fn table(label: &str, rows: &[&ConstraintSurvival]) -> Table {
    let (m, turns) = by_turn_frame(rows);
    let mut t = Table::by_turn(
        TableKey::ConstraintsAcrossTurns {
            model: label.to_string(),
        },
        format!("CONSTRAINTS ACROSS TURNS · {label}"),
        "pass rate at each turn (held/scored) · forgetting: lost ÷ held at the previous scored turn · recovery: regained ÷ failing",
        (
            &[("provider", L), ("tag", L)],
            &turns,
            &[("forgetting", R), ("recovery", R)],
        ),
    )
    .simulated(m.all)
    .lead(2);
    for s in rows {
        let mut cells = vec![
            format!("{}{}", s.provider, m.row(s.simulated)),
            s.tag.clone(),
        ];
        cells.extend(turns.iter().map(|&turn| {
            s.turns
                .iter()
                .find(|x| x.turn == turn)
                .map_or("-".into(), |x| share(x.held, x.scored, x.rate))
        }));
        let (f, c) = (&s.forgetting, &s.recovery);
        cells.push(share(f.lost, f.at_risk, f.ratio));
        cells.push(share(c.recovered, c.failing, c.ratio));
        t.push(
            RowKey::CellTag {
                cell: CellKey::new(&s.provider, &s.label),
                tag: s.tag.clone(),
            },
            s.simulated,
            cells,
        );
    }
    t.footnotes.push(
        "One unit per (conversation, check): a check is scored at each answered turn of its scope \
         (from_turn = N: turn N on; turn = N: that turn; unscoped: the final answer), under its one tag. \
         Forgetting and recovery compare consecutive scored turns of one unit; - where there is nothing to count. \
         The 95 % intervals and the survival curve are in the JSON (constraint_survival) and the CSV (--turns)."
            .into(),
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::survival::{Forgetting, Recovery};

    fn entry(provider: &str, simulated: bool) -> ConstraintSurvival {
        ConstraintSurvival {
            label: "m".into(),
            provider: provider.into(),
            tag: "retained_constraint".into(),
            simulated,
            turns: Vec::new(),
            forgetting: Forgetting {
                at_risk: 0,
                lost: 0,
                ratio: None,
                interval: None,
            },
            recovery: Recovery {
                failing: 0,
                recovered: 0,
                ratio: None,
                interval: None,
            },
            survival: Vec::new(),
        }
    }

    #[test]
    fn simulated_rows_are_marked_as_in_every_table() {
        let (real, sim) = (entry("acme", false), entry("sim-swift", true));
        super::super::text_table::assert_simulated_marks(
            &table("m", &[&real, &sim]),
            &table("m", &[&sim]),
        );
    }

    #[test]
    fn a_share_carries_its_counts_and_nothing_is_never_zero() {
        assert_eq!(share(7, 8, Some(0.875)), "87.5 % (7/8)");
        assert_eq!(share(0, 0, None), "-");
    }
}
