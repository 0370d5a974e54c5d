//! The terminal format: the run card, headlines as sentences, then aligned tables that fit
//! 100 columns (long names are shortened with `…`; the other formats keep them whole), then
//! notes. `--quiet` silences progress on stderr, never the report.

use std::io::Write;

use super::sections::{Align, Table, headline_groups, run_line, scope_line, tables};
use super::{ExportError, Exporter, FormatOptions, terminal_inert};
use crate::report::model::Report;

/// The width everything is laid out for.
const WIDTH: usize = 100;
/// The widest a name column may be before it is shortened.
const NAME_WIDTH: usize = 28;

pub struct Terminal;

impl Exporter<Report> for Terminal {
    fn write(
        &self,
        r: &Report,
        opts: &FormatOptions,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        writeln!(out, "{}", wrap(&terminal_inert(&run_line(r)), 0))?;
        writeln!(out, "{}", wrap(&terminal_inert(&scope_line(r)), 0))?;
        writeln!(out)?;
        if !r.headlines.is_empty() {
            writeln!(out, "HEADLINES")?;
            // Each group under its name; each headline a bullet wrapped at the width.
            for (group, lines) in &headline_groups(r) {
                writeln!(out, "  {}", shorten(&terminal_inert(group), WIDTH - 2))?;
                for line in lines {
                    writeln!(out, "  · {}", wrap(&terminal_inert(line), 4))?;
                }
            }
            let families = super::family_tables::tables(r);
            if !families.is_empty() && !opts.families {
                writeln!(
                    out,
                    "  (every comparison behind these headlines: turnbench report --verbose)"
                )?;
            }
            if opts.families && !families.is_empty() {
                writeln!(out, "\nFAMILIES")?;
                for t in &families {
                    write_table(out, t)?;
                    writeln!(out)?;
                }
            }
            writeln!(out)?;
        }
        for t in tables(r) {
            write_table(out, &t)?;
            writeln!(out)?;
        }
        if !r.notes.is_empty() {
            writeln!(out, "NOTES")?;
            for n in &r.notes {
                writeln!(out, "  - {}", wrap(&terminal_inert(n), 4))?;
            }
        }
        Ok(())
    }
}

fn shorten(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Wraps `text` at word boundaries to the page width, continuing lines `indent` in.
fn wrap(text: &str, indent: usize) -> String {
    let room = WIDTH.saturating_sub(indent).max(40);
    let mut out = String::new();
    let mut line = 0;
    // A unit never starts a line: `44 %` and `1.32 s` stay whole.
    let mut words: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match words.last_mut() {
            Some(last) if matches!(word, "%" | "s" | "ms" | "points") => {
                last.push(' ');
                last.push_str(word);
            }
            _ => words.push(word.to_string()),
        }
    }
    for word in &words {
        let len = word.chars().count();
        if line > 0 && line + 1 + len > room {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += len;
    }
    out
}

fn write_table(out: &mut dyn Write, t: &Table) -> Result<(), ExportError> {
    let cells: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|row| {
            row.cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let c = terminal_inert(c);
                    if i == 0 {
                        shorten(&c, NAME_WIDTH)
                    } else {
                        c.into_owned()
                    }
                })
                .collect()
        })
        .collect();
    let widths: Vec<usize> = (0..t.header.len())
        .map(|i| {
            cells
                .iter()
                .filter_map(|r| r.get(i))
                .chain(t.header.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    writeln!(out, "{}", wrap(&t.heading(), 2))?;
    for group in column_groups(&widths, t.lead) {
        let line = |row: &[String]| {
            let mut s = String::new();
            for (k, &i) in group.iter().enumerate() {
                let (Some(c), Some(w)) = (row.get(i), widths.get(i)) else {
                    continue;
                };
                if k > 0 {
                    s.push_str("  ");
                }
                let pad = w.saturating_sub(c.chars().count());
                match t.align.get(i) {
                    Some(Align::Right) => {
                        s.push_str(&" ".repeat(pad));
                        s.push_str(c);
                    }
                    _ => {
                        s.push_str(c);
                        s.push_str(&" ".repeat(pad));
                    }
                }
            }
            s.trim_end().to_string()
        };
        writeln!(out, "{}", line(&t.header))?;
        // A row with nothing in this group's columns (a criterion row's empty "unscored")
        // would print as a blank line.
        for text in cells.iter().map(|row| line(row)).filter(|l| !l.is_empty()) {
            writeln!(out, "{text}")?;
        }
    }
    for f in &t.footnotes {
        writeln!(out, "  {}", wrap(f, 2))?;
    }
    Ok(())
}

/// Columns in groups that each fit the page, the first `lead` (name) columns repeated in
/// every group: a table too wide for 100 columns is printed as several narrower ones.
fn column_groups(widths: &[usize], lead: usize) -> Vec<Vec<usize>> {
    if widths.is_empty() {
        return Vec::new();
    }
    let lead = lead.clamp(1, widths.len());
    let names: Vec<usize> = (0..lead).collect();
    let first: usize = widths[..lead].iter().sum::<usize>() + 2 * (lead - 1);
    let mut groups = vec![names.clone()];
    let mut used = first;
    for (i, &w) in widths.iter().enumerate().skip(lead) {
        let fits = used + 2 + w <= WIDTH;
        match groups.last_mut() {
            Some(g) if fits || g.len() == lead => {
                g.push(i);
                used += 2 + w;
            }
            _ => {
                let mut g = names.clone();
                g.push(i);
                groups.push(g);
                used = first + 2 + w;
            }
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_to_the_page() {
        let text = "word ".repeat(60);
        for line in wrap(text.trim(), 4).lines() {
            assert!(line.chars().count() <= WIDTH, "{line:?}");
        }
        assert_eq!(shorten("abcdef", 4), "abc…");
        assert_eq!(shorten("abc", 4), "abc");
    }

    #[test]
    fn wide_tables_split_into_groups_that_fit() {
        assert_eq!(column_groups(&[20, 30, 30], 1), vec![vec![0, 1, 2]]);
        let groups = column_groups(&[28, 20, 20, 20, 20, 20], 1);
        assert_eq!(groups, vec![vec![0, 1, 2, 3], vec![0, 4, 5]]);
        for g in groups {
            let w: usize = g.iter().map(|&i| [28, 20, 20, 20, 20, 20][i] + 2).sum();
            assert!(w <= WIDTH + 2);
        }
        // Rows named by two columns (provider, tag) keep both in every group.
        let groups = column_groups(&[12, 22, 14, 14, 14, 14, 14, 14], 2);
        assert_eq!(
            groups,
            vec![vec![0, 1, 2, 3, 4, 5], vec![0, 1, 6, 7]],
            "{groups:?}"
        );
    }
}
