//! CONSISTENCY ACROSS REPEATS as tables (terminal, Markdown and HTML share them through
//! [`super::sections::tables`]) and as the per-cell CSV's last columns: one table per model
//! label, one row per provider — identical answers and agreeing verdicts of repeats sent
//! the same request (with their intervals and counts), identical answers turn by turn, and
//! aptitude and unreliability with the scenarios they average. Formatting only; the
//! figures are `crate::report::consistency`'s.

use super::text_table::{Align, Table, by_turn_frame};
use crate::figure::{Figure, rate};
use crate::report::consistency::{Consistency, Share};
use crate::report::keys::{CellKey, RowKey, TableKey};
use crate::report::model::Report;

use Align::{Left as L, Right as R};

/// A share with its interval and counts: `63.2 % [40.1, 81.3] (12/19)`; `-` without pairs.
fn share(s: &Share) -> String {
    match s.share {
        Some(_) if s.pairs > 0 => {
            format!("{} ({}/{})", rate(s.share, s.interval), s.matching, s.pairs)
        }
        _ => "-".into(),
    }
}

/// A share with its counts only (turn columns): `50.0 % (3/6)`.
fn share_short(s: &Share) -> String {
    match s.share {
        Some(v) if s.pairs > 0 => format!("{} ({}/{})", Figure::percent(v), s.matching, s.pairs),
        _ => "-".into(),
    }
}

/// A 0–1 task-success figure as a percentage with the scenarios it averages.
fn spread_figure(value: Option<f64>, scenarios: u64) -> String {
    value.map_or("-".into(), |v| {
        format!("{} (n {scenarios})", Figure::percent(v))
    })
}

/// One table per model label, in the report's order of cells; none without repeats.
pub fn tables(r: &Report) -> Vec<Table> {
    super::text_table::per_label(r, &r.consistency, table)
}

fn table(label: &str, rows: &[&Consistency]) -> Table {
    let (m, turns) = by_turn_frame(rows);
    let mut t = Table::by_turn(
        TableKey::ConsistencyAcrossRepeats {
            model: label.to_string(),
        },
        format!("CONSISTENCY ACROSS REPEATS · {label}"),
        "repeats sent byte-identical requests: identical answers and agreeing check verdicts (pairs of repeats) · identical answers per turn · task success across repeats (Laban et al.)",
        (
            &[
                ("provider", L),
                ("scenarios", R),
                ("identical answers", R),
                ("agreeing verdicts", R),
            ],
            &turns,
            &[("aptitude P90", R), ("unreliability P90−P10", R)],
        ),
    )
    .simulated(m.all)
    .lead(1);
    for s in rows {
        let mut cells = vec![
            format!("{}{}", s.provider, m.row(s.simulated)),
            s.scenarios.to_string(),
            share(&s.answers),
            share(&s.verdicts),
        ];
        cells.extend(turns.iter().map(|&turn| {
            s.turns
                .iter()
                .find(|x| x.turn == turn)
                .map_or("-".into(), |x| share_short(&x.answers))
        }));
        cells.push(spread_figure(s.spread.aptitude, s.spread.scenarios));
        cells.push(spread_figure(s.spread.unreliability, s.spread.scenarios));
        t.push(
            RowKey::Cell(CellKey::new(&s.provider, &s.label)),
            s.simulated,
            cells,
        );
    }
    t.footnotes.push(format!(
        "Repeats: one run, target and scenario version. Two repeats were sent the same request at turn t while \
         their prompts up to t and their answers before t are byte-identical; a pair is two such repeats with an \
         answer at t. Intervals are 95 %, clustered by scenario (none from one scenario). Aptitude and \
         unreliability: P90 and P90 − P10 of each repeat's share of checks passed (a failed conversation 0), \
         over scenarios with at least {} scored repeats, averaged (n scenarios); - where there is nothing to count. \
         Per-turn intervals and verdicts, and each scenario's P10 and P90, are in the JSON (consistency).",
        crate::report::consistency::MIN_SPREAD_REPEATS
    ));
    t
}

/// The per-cell CSV's consistency columns, appended last.
pub fn csv_header() -> Vec<String> {
    COLUMNS.iter().map(|n| n.to_string()).collect()
}

#[rustfmt::skip]
const COLUMNS: &[&str] = &[
    "repeat_scenarios", "answer_pairs", "answers_identical", "answers_identical_share",
    "answers_identical_lo", "answers_identical_hi", "verdict_pairs", "verdicts_agree",
    "verdicts_agree_share", "verdicts_agree_lo", "verdicts_agree_hi", "spread_scenarios",
    "spread_repeats", "aptitude_p90", "unreliability_p90_p10",
];

/// The consistency columns of one cell; empty when its scenarios were not repeated.
pub fn csv_row(r: &Report, provider: &str, model: &str) -> Vec<String> {
    let Some(c) = r
        .consistency
        .iter()
        .find(|c| c.provider == provider && c.label == model)
    else {
        return vec![String::new(); csv_header().len()];
    };
    let num = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    let mut row = vec![c.scenarios.to_string()];
    for s in [&c.answers, &c.verdicts] {
        row.extend([
            s.pairs.to_string(),
            s.matching.to_string(),
            num(s.share),
            num(s.interval.map(|i| i.lo)),
            num(s.interval.map(|i| i.hi)),
        ]);
    }
    row.extend([
        c.spread.scenarios.to_string(),
        c.spread.repeats.to_string(),
        num(c.spread.aptitude),
        num(c.spread.unreliability),
    ]);
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::consistency::{Spread, TurnConsistency};

    fn none() -> Share {
        Share {
            pairs: 0,
            matching: 0,
            share: None,
            interval: None,
            scenarios: 0,
        }
    }

    fn entry(provider: &str, simulated: bool) -> Consistency {
        Consistency {
            label: "m".into(),
            provider: provider.into(),
            simulated,
            scenarios: 1,
            answers: Share {
                pairs: 4,
                matching: 3,
                share: Some(0.75),
                interval: None,
                scenarios: 1,
            },
            verdicts: none(),
            turns: vec![TurnConsistency {
                turn: 2,
                answers: Share {
                    pairs: 4,
                    matching: 3,
                    share: Some(0.75),
                    interval: None,
                    scenarios: 1,
                },
                verdicts: none(),
            }],
            spread: Spread {
                min_repeats: 5,
                scenarios: 0,
                repeats: 0,
                aptitude: None,
                unreliability: None,
                by_scenario: Vec::new(),
            },
        }
    }

    #[test]
    fn rows_carry_counts_and_simulated_rows_are_marked() {
        let (real, sim) = (entry("acme", false), entry("sim-swift", true));
        let t = table("m", &[&real, &sim]);
        super::super::text_table::assert_simulated_marks(&t, &table("m", &[&sim]));
        assert_eq!(t.rows[0].cells[2], "75.0 % (3/4)");
        assert_eq!(t.rows[0].cells[3], "-");
        assert_eq!(t.rows[0].cells[4], "75.0 % (3/4)");
        assert_eq!(t.rows[0].cells[5], "-");
    }

    #[test]
    fn figures_carry_their_interval_counts_and_n() {
        let s = Share {
            pairs: 4,
            matching: 3,
            share: Some(0.75),
            interval: Some(crate::report::model::Interval { lo: 0.4, hi: 0.9 }),
            scenarios: 2,
        };
        assert_eq!(share(&s), "75.0 % [40.0, 90.0] (3/4)");
        assert_eq!(share_short(&s), "75.0 % (3/4)");
        assert_eq!(share(&none()), "-");
        assert_eq!(spread_figure(Some(0.8), 2), "80.0 % (n 2)");
        assert_eq!(spread_figure(None, 0), "-");
    }
}
