//! A table of text cells with a title, aligned columns and footnotes: what every section of
//! the report becomes before a format draws it (`sections.rs`, `replay_tables.rs`); and the
//! Markdown escaping every Markdown table cell goes through.

use crate::report::keys::{RowKey, TableKey};
use crate::report::simulated::{Marks, title_mark};

/// A column's alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table of the report. What it is and what each row is are typed keys
/// ([`TableKey`], [`RowKey`]) and flags from the report model: a renderer links, colours
/// and marks by those, never by reading a title or a cell's text.
#[derive(Debug, Clone)]
pub struct Table {
    pub key: TableKey,
    /// What the table shows: its name (`RELIABILITY`, `JUDGE · rubric by judge (model)`)…
    pub title: String,
    /// …and, after the simulated mark, what it measures, with its units.
    pub detail: Option<String>,
    /// The table holds simulated figures and says so in its title.
    pub simulated: bool,
    pub header: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Row>,
    pub footnotes: Vec<String>,
    /// How many leading columns name a row (1 unless a row is named by several, as
    /// provider and tag): a table too wide for the terminal repeats them in every group.
    pub lead: usize,
}

/// One row: what it shows, whether its figures are simulated, and its text.
#[derive(Debug, Clone)]
pub struct Row {
    pub key: RowKey,
    pub simulated: bool,
    pub cells: Vec<String>,
}

/// A row of a table per model label and turn (CONSTRAINTS ACROSS TURNS, CONSISTENCY
/// ACROSS REPEATS): its cell, whether its figures are simulated, and the turns it has
/// figures at.
pub(super) trait ByTurnRow {
    fn label(&self) -> &str;
    fn provider(&self) -> &str;
    fn simulated(&self) -> bool;
    fn turns(&self) -> impl Iterator<Item = u32>;
}

/// The by-turn rows hold their cell, marks and turns in fields of the same names.
macro_rules! by_turn_row {
    ($($t:ty),+) => {$(
        impl ByTurnRow for $t {
            fn label(&self) -> &str {
                &self.label
            }
            fn provider(&self) -> &str {
                &self.provider
            }
            fn simulated(&self) -> bool {
                self.simulated
            }
            fn turns(&self) -> impl Iterator<Item = u32> {
                self.turns.iter().map(|t| t.turn)
            }
        }
    )+};
}
by_turn_row!(
    crate::report::survival::ConstraintSurvival,
    crate::report::consistency::Consistency
);

/// How every by-turn table marks simulated figures, asserted for one: `mixed` holds a real
/// row "acme" and a simulated "sim-swift", `all` the simulated one alone.
#[cfg(test)]
pub(super) fn assert_simulated_marks(mixed: &Table, all: &Table) {
    assert!(!mixed.simulated);
    assert_eq!(mixed.rows[0].cells[0], "acme");
    assert_eq!(mixed.rows[1].cells[0], "sim-swift (simulated)");
    assert!(mixed.rows[1].simulated && !mixed.rows[0].simulated);
    assert!(all.simulated && all.heading().contains("SIMULATED"));
    assert_eq!(all.rows[0].cells[0], "sim-swift");
}

/// One table per model label of `rows` (labels as they first come), each label's rows in
/// the order its cell tables show them (`--sort`; rows of cells the report lacks after, as
/// they come).
pub(super) fn per_label<'a, T: ByTurnRow>(
    r: &crate::report::model::Report,
    rows: &'a [T],
    table: impl Fn(&str, &[&'a T]) -> Table,
) -> Vec<Table> {
    let mut labels: Vec<&str> = rows.iter().map(|s| s.label()).collect();
    labels.dedup();
    labels
        .into_iter()
        .map(|label| {
            let mut these: Vec<&T> = rows.iter().filter(|s| s.label() == label).collect();
            these.sort_by_key(|s| r.rank_of(s.provider(), s.label()));
            table(label, &these)
        })
        .collect()
}

/// The marks of a label's rows and the turns any of them has figures at: a by-turn
/// table's frame.
pub(super) fn by_turn_frame<T: ByTurnRow>(rows: &[&T]) -> (Marks, Vec<u32>) {
    let marks = Marks::all_of(rows.iter().map(|s| s.simulated()));
    (marks, distinct_turns(rows.iter().flat_map(|s| s.turns())))
}

/// A column's header and alignment.
pub(super) type Column<'a> = (&'a str, Align);

/// The distinct turns of `turns`, ascending: the columns of a table by turn.
pub(super) fn distinct_turns(turns: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut out: Vec<u32> = turns.collect();
    out.sort_unstable();
    out.dedup();
    out
}

impl Table {
    pub(super) fn new(
        key: TableKey,
        title: impl Into<String>,
        detail: Option<String>,
        columns: &[(&str, Align)],
    ) -> Table {
        Table {
            key,
            title: title.into(),
            detail,
            simulated: false,
            header: columns.iter().map(|(h, _)| h.to_string()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
            footnotes: Vec::new(),
            lead: 1,
        }
    }

    /// A table by turn: the `before` columns, one `turn N` column per turn that any row
    /// has (ascending), then the `after` columns.
    pub(super) fn by_turn(
        key: TableKey,
        title: impl Into<String>,
        detail: &str,
        (before, turns, after): (&[Column], &[u32], &[Column]),
    ) -> Table {
        let names: Vec<String> = turns.iter().map(|t| format!("turn {t}")).collect();
        let mut columns: Vec<(&str, Align)> = before.to_vec();
        columns.extend(names.iter().map(|n| (n.as_str(), Align::Right)));
        columns.extend_from_slice(after);
        Table::new(key, title, Some(detail.to_string()), &columns)
    }

    /// Rows are named by the first `lead` columns (at least one).
    pub(super) fn lead(mut self, lead: usize) -> Table {
        self.lead = lead.max(1);
        self
    }

    /// Marks the table as holding simulated figures (its title then says so).
    pub(super) fn simulated(mut self, simulated: bool) -> Table {
        self.simulated = simulated;
        self
    }

    pub(super) fn push(&mut self, key: RowKey, simulated: bool, cells: Vec<String>) {
        self.rows.push(Row {
            key,
            simulated,
            cells,
        });
    }

    /// The title as every format prints it: the name, the simulated mark, the detail.
    pub fn heading(&self) -> String {
        let mut h = format!("{}{}", self.title, title_mark(self.simulated));
        if let Some(d) = &self.detail {
            h.push_str(" · ");
            h.push_str(d);
        }
        h
    }

    /// Whether the table shows any simulated figure: in its title, or on a row.
    pub fn shows_simulated(&self) -> bool {
        self.simulated || self.rows.iter().any(|r| r.simulated)
    }
}

pub use crate::figure::thousands;

/// Text as Markdown shows it literally: HTML specials as entities, the Markdown punctuation
/// that could start markup backslash-escaped, line breaks as spaces (a table row is one
/// line). Parentheses, quotes and `!` stay as they are: with `[` and `]` escaped no link or
/// image can form. An underscore inside a word stays too (GitHub never reads it as
/// emphasis), so `rate_limited` reads as itself in the raw file.
pub fn markdown_escape(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '_' => {
                let word = |j: Option<&char>| j.is_some_and(|c| c.is_alphanumeric());
                let inside =
                    word(i.checked_sub(1).and_then(|j| chars.get(j))) && word(chars.get(i + 1));
                if !inside {
                    out.push('\\');
                }
                out.push('_');
            }
            '\\' | '`' | '*' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '#' if i == 0 => out.push_str("\\#"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}
