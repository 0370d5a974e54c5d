//! A table of text cells with a title, aligned columns and footnotes: what every section of
//! the report becomes before a format draws it (`sections.rs`, `replay_tables.rs`); and the
//! Markdown escaping every Markdown table cell goes through.

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
