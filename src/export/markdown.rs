//! The Markdown format: GitHub tables with the terminal's sections. Every piece of text is
//! escaped, so a name like `<script>` or `a|b` stays text.

use std::io::Write;

use super::sections::{Align, Table, headline_groups, run_line, scope_line, tables};
use super::text_table::markdown_escape as escape;
use super::{ExportError, Exporter, FormatOptions};
use crate::report::model::Report;

pub struct Markdown;

impl Exporter<Report> for Markdown {
    fn write(
        &self,
        r: &Report,
        _opts: &FormatOptions,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
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
        for t in tables(r) {
            write_table(out, &t, "##")?;
        }
        let families = super::family_tables::tables(r);
        if !families.is_empty() {
            writeln!(out, "## Families\n")?;
            writeln!(
                out,
                "Every comparison behind the headlines, one table per headline.\n"
            )?;
            for t in &families {
                write_table(out, t, "###")?;
            }
        }
        write!(out, "{}", super::matrix_view::markdown(r))?;
        if !r.notes.is_empty() {
            writeln!(out, "## Notes\n")?;
            for n in &r.notes {
                writeln!(out, "- {}", escape(n))?;
            }
        }
        Ok(())
    }
}

/// One table under a heading of `level` (`##`, `###`), then its footnotes.
fn write_table(out: &mut dyn Write, t: &Table, level: &str) -> Result<(), ExportError> {
    writeln!(out, "{level} {}\n", escape(&t.heading()))?;
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
        writeln!(out, "{}", row(&r.cells))?;
    }
    writeln!(out)?;
    for f in &t.footnotes {
        writeln!(out, "{}\n", escape(f))?;
    }
    Ok(())
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
