//! The Markdown format: GitHub tables with the terminal's sections. Every piece of text is
//! escaped, so a name like `<script>` or `a|b` stays text.

use std::io::Write;

use super::table::{Align, headline_groups, run_line, scope_line, tables};
use super::{ExportError, Exporter, FormatOptions};
use crate::report::model::Report;

pub struct Markdown;

impl Exporter<Report> for Markdown {
    fn name(&self) -> &'static str {
        "md"
    }

    fn description(&self) -> &'static str {
        "GitHub-flavoured Markdown tables"
    }

    fn write(
        &self,
        r: &Report,
        opts: &FormatOptions,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        if !opts.tables_only {
            writeln!(out, "# turnbench report\n")?;
            writeln!(out, "{}  ", escape(&run_line(r)))?;
            writeln!(out, "{}\n", escape(&scope_line(r)))?;
            if !r.headlines.is_empty() {
                writeln!(out, "## Headlines\n")?;
                for (group, lines) in headline_groups(r) {
                    for line in lines {
                        writeln!(out, "- **{}**: {}", escape(&group), escape(&line))?;
                    }
                }
                writeln!(out)?;
            }
        }
        for t in tables(r) {
            writeln!(out, "## {}\n", escape(&t.title))?;
            let row = |cells: &[String]| {
                let inner: Vec<String> = cells.iter().map(|c| escape(c)).collect();
                format!("| {} |", inner.join(" | "))
            };
            writeln!(out, "{}", row(&t.header))?;
            let rule: Vec<&str> = t
                .align
                .iter()
                .map(|a| match a {
                    Align::Left => ":---",
                    Align::Right => "---:",
                })
                .collect();
            writeln!(out, "| {} |", rule.join(" | "))?;
            for r in &t.rows {
                writeln!(out, "{}", row(r))?;
            }
            writeln!(out)?;
            for f in &t.footnotes {
                writeln!(out, "{}\n", escape(f))?;
            }
        }
        write!(out, "{}", super::matrix_view::markdown(r))?;
        if !opts.tables_only && !r.notes.is_empty() {
            writeln!(out, "## Notes\n")?;
            for n in &r.notes {
                writeln!(out, "- {}", escape(n))?;
            }
        }
        Ok(())
    }
}

/// Text as Markdown shows it literally: HTML specials as entities, the Markdown punctuation
/// that could start markup backslash-escaped, line breaks as spaces (a table row is one
/// line). Parentheses, quotes and `!` stay as they are: with `[` and `]` escaped no link or
/// image can form. An underscore inside a word stays too (GitHub never reads it as
/// emphasis), so `rate_limited` reads as itself in the raw file.
pub fn escape(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_stays_text() {
        assert_eq!(escape("<script>"), "&lt;script&gt;");
        assert_eq!(escape("a|b"), "a\\|b");
        assert_eq!(escape("[x](javascript:1)"), "\\[x\\](javascript:1)");
        assert_eq!(escape("rate_limited _em_"), "rate_limited \\_em\\_");
        assert_eq!(escape("#1 *b*"), "\\#1 \\*b\\*");
        assert_eq!(escape("two\nlines"), "two lines");
    }
}
