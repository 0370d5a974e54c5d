//! A table of text cells with a title, aligned columns and footnotes: what every section of
//! the report becomes before a format draws it (`table.rs`, `replay_tables.rs`).

/// A column's alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

#[derive(Debug, Clone)]
pub struct Table {
    /// What the table shows, with its units.
    pub title: String,
    pub header: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
    pub footnotes: Vec<String>,
}

impl Table {
    pub(super) fn new(title: impl Into<String>, columns: &[(&str, Align)]) -> Table {
        Table {
            title: title.into(),
            header: columns.iter().map(|(h, _)| h.to_string()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
            footnotes: Vec::new(),
        }
    }
}

/// 1000 as `1,000`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
