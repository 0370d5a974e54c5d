//! The text `turnbench check` prints: what the run did, then pass rates of every current
//! result by tag and by target, each rate with its n (scored results) and the not-scored
//! count beside it. Formatting only; the counting is done by the run.

use std::fmt::Write;

use super::scoring::{CheckReport, Tally};

/// The closing summary of a check run.
pub fn format_report(r: &CheckReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "checked {} conversations against {} checks files ({} current check definitions) in {:.2} s",
        r.conversations,
        r.check_files,
        r.definitions,
        r.elapsed.as_secs_f64()
    );
    let mut rows: Vec<(&str, u64, String)> = vec![
        (
            "evaluated now",
            r.evaluated.scored(),
            format!(
                "{} passed, {} failed",
                r.evaluated.passed, r.evaluated.failed
            ),
        ),
        (
            "not scored now",
            r.evaluated.not_scored,
            format!(
                "{} of the {} conversations did not complete",
                r.incomplete, r.conversations
            ),
        ),
        ("already current", r.already_current, String::new()),
        (
            "older definitions",
            r.older_results,
            "stored results kept, no longer current".to_string(),
        ),
        (
            "no checks file",
            r.without_checks,
            "conversations skipped".to_string(),
        ),
        (
            "turn verdicts now",
            r.turn_verdicts,
            "one per answer in each check's scope (docs/checks.md, \"Scopes\")".to_string(),
        ),
    ];
    if r.turns_filled > 0 {
        rows.push((
            "older, turns added",
            r.turns_filled,
            "results stored before turn verdicts were: theirs judged from the stored answers"
                .to_string(),
        ));
    }
    if r.turns_unfillable > 0 {
        rows.push((
            "older, no turns",
            r.turns_unfillable,
            "results whose answers now give another verdict than the stored one: left without turn verdicts"
                .to_string(),
        ));
    }
    let width = rows.iter().map(|(_, n, _)| n.to_string().len()).max();
    for (what, n, note) in rows {
        let line = format!(
            "  {what:<18} {n:>width$}   {note}",
            width = width.unwrap_or(1)
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let tags: Vec<(String, Tally)> = r
        .by_tag
        .iter()
        .map(|(tag, t)| (tag.to_string(), *t))
        .collect();
    let targets: Vec<(String, Tally)> = r
        .by_target
        .iter()
        .map(|((provider, label), t)| (format!("{provider} / {label}"), *t))
        .collect();
    for (title, rows) in [("pass rate by tag", tags), ("pass rate by target", targets)] {
        if rows.is_empty() {
            continue;
        }
        out.push('\n');
        out.push_str(&rate_table(title, &rows));
    }
    out
}

/// A table of pass rates: name, rate, n (scored), not scored.
pub fn rate_table(title: &str, rows: &[(String, Tally)]) -> String {
    let name_width = rows
        .iter()
        .map(|(name, _)| name.chars().count() + 2)
        .chain([title.chars().count()])
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "{title:<name_width$} {:>8} {:>9} {:>11}\n",
        "rate", "n", "not scored"
    );
    for (name, tally) in rows {
        let _ = writeln!(
            out,
            "  {name:<w$} {:>8} {:>9} {:>11}",
            rate_cell(tally),
            tally.scored(),
            tally.not_scored,
            w = name_width - 2
        );
    }
    out
}

/// "97.8 %" (the report's rule: `100 %` at the top), or "-" when nothing was scored.
pub fn rate_cell(tally: &Tally) -> String {
    tally
        .pass_rate()
        .map_or("-".to_string(), crate::figure::percent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Tag;

    fn tally(passed: u64, failed: u64, not_scored: u64) -> Tally {
        Tally {
            passed,
            failed,
            not_scored,
        }
    }

    #[test]
    fn rates_show_one_decimal_or_a_dash() {
        assert_eq!(rate_cell(&tally(2, 1, 5)), "66.7 %");
        assert_eq!(rate_cell(&tally(0, 0, 5)), "-");
        assert_eq!(rate_cell(&tally(7, 0, 0)), "100 %");
    }

    #[test]
    fn table_puts_n_beside_every_rate() {
        let table = rate_table(
            "pass rate by tag",
            &[
                ("json_validity".into(), tally(9, 1, 2)),
                ("format".into(), tally(0, 0, 3)),
            ],
        );
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("pass rate by tag"), "{table}");
        assert!(lines[0].ends_with("rate         n  not scored"), "{table}");
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            ["json_validity", "90.0", "%", "10", "2"]
        );
        assert_eq!(
            lines[2].split_whitespace().collect::<Vec<_>>(),
            ["format", "-", "0", "3"]
        );
    }

    #[test]
    fn report_lists_counts_then_tables() {
        let mut report = CheckReport {
            check_files: 2,
            definitions: 20,
            conversations: 12,
            incomplete: 1,
            evaluated: tally(200, 19, 11),
            ..Default::default()
        };
        report.by_tag.insert(Tag::Format, tally(10, 2, 1));
        report
            .by_target
            .insert(("sim-alpha".into(), "mock-fast".into()), tally(200, 19, 11));
        let text = format_report(&report);
        assert!(
            text.starts_with(
                "checked 12 conversations against 2 checks files (20 current check definitions)"
            ),
            "{text}"
        );
        assert!(
            text.contains("  evaluated now      219   200 passed, 19 failed\n"),
            "{text}"
        );
        assert!(
            text.contains("  not scored now      11   1 of the 12 conversations did not complete"),
            "{text}"
        );
        assert!(text.contains("  already current      0\n"), "{text}");
        assert!(text.contains("\n  format "), "{text}");
        assert!(text.contains("\n  sim-alpha / mock-fast "), "{text}");
    }
}
