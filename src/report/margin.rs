//! `--margin`: the differences a reader counts as none, per statistic, for equivalence
//! claims (two one-sided tests, `crate::stats::inference::equivalence_family`).
//!
//! `p50=10%,p95=15%,success=5,completed=2,kept=5,judge=0.25`, any subset: latency
//! percentiles take a percentage (the ratio within 1/(1 + m) and 1 + m), shares take points
//! (task success, conversations completed, constraints kept), a judge mean takes a score.

use std::fmt;

/// The margins given, each on its claim's scale (a share for points: 5 points is 0.05; the
/// relative margin for a percentage: 10 % is 0.10; a score as it is).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Margins {
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    /// Task success.
    pub success: Option<f64>,
    /// Conversations completed (reliability).
    pub completed: Option<f64>,
    /// Constraints kept (retention).
    pub kept: Option<f64>,
    /// A judge's mean score.
    pub judge: Option<f64>,
}

/// What each name takes.
#[derive(Clone, Copy, PartialEq)]
enum Takes {
    Percent,
    Points,
    Score,
}

const NAMES: &[(&str, Takes)] = &[
    ("p50", Takes::Percent),
    ("p95", Takes::Percent),
    ("success", Takes::Points),
    ("completed", Takes::Points),
    ("kept", Takes::Points),
    ("judge", Takes::Score),
];

/// A malformed `--margin`: the part and what to write instead.
#[derive(Debug, Clone, PartialEq)]
pub struct MarginError {
    pub part: String,
    pub problem: String,
}

impl fmt::Display for MarginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "--margin: `{}`: {}\n  fix: give NAME=VALUE pairs separated by commas: p50 and p95 \
             take a percentage (p50=10%), success, completed and kept take points of a share \
             (success=5), judge takes a score (judge=0.25); each greater than 0",
            self.part, self.problem
        )
    }
}

impl std::error::Error for MarginError {}

impl Margins {
    /// Whether any margin is given.
    pub fn any(&self) -> bool {
        [
            self.p50,
            self.p95,
            self.success,
            self.completed,
            self.kept,
            self.judge,
        ]
        .iter()
        .any(Option::is_some)
    }

    /// Parses `NAME=VALUE[,NAME=VALUE…]`.
    pub fn parse(text: &str) -> Result<Margins, MarginError> {
        use crate::config::named_list::{parts, positive, set_once};
        let mut m = Margins::default();
        let list =
            parts(text, "NAME=VALUE").map_err(|(part, problem)| MarginError { part, problem })?;
        for p in list {
            let bad = |problem: String| MarginError {
                part: p.text.to_string(),
                problem,
            };
            let (name, value) = (p.name, p.value);
            let Some(&(_, takes)) = NAMES.iter().find(|(n, _)| *n == name) else {
                return Err(bad(format!("no statistic `{name}`")));
            };
            let (number, percent) = match value.strip_suffix('%') {
                Some(v) => (v.trim(), true),
                None => (value, false),
            };
            match (takes, percent) {
                (Takes::Percent, false) => {
                    return Err(bad(format!(
                        "`{name}` takes a percentage of the latency: write {name}={value}%"
                    )));
                }
                (Takes::Points, true) => {
                    return Err(bad(format!(
                        "`{name}` takes points of a share, not a percentage: write {name}={number}"
                    )));
                }
                (Takes::Score, true) => {
                    return Err(bad(format!(
                        "`{name}` takes a score on the rubric's scale, not a percentage: write {name}={number}"
                    )));
                }
                _ => {}
            }
            let v = positive(number, "a margin").map_err(bad)?;
            if takes == Takes::Points && v >= 100.0 {
                return Err(bad(format!(
                    "{number} points is the whole scale: a margin is below 100"
                )));
            }
            let scaled = match takes {
                Takes::Percent | Takes::Points => v / 100.0,
                Takes::Score => v,
            };
            let slot = match name {
                "p50" => &mut m.p50,
                "p95" => &mut m.p95,
                "success" => &mut m.success,
                "completed" => &mut m.completed,
                "kept" => &mut m.kept,
                _ => &mut m.judge,
            };
            set_once(slot, scaled, name).map_err(bad)?;
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_statistic_reads_in_its_own_unit() {
        let m =
            Margins::parse("p50=10%, p95=15%,success=5,completed=2.5,kept=5,judge=0.25").unwrap();
        assert_eq!(m.p50, Some(0.10));
        assert_eq!(m.p95, Some(0.15));
        assert_eq!(m.success, Some(0.05));
        assert_eq!(m.completed, Some(0.025));
        assert_eq!(m.kept, Some(0.05));
        assert_eq!(m.judge, Some(0.25));
        assert!(m.any() && !Margins::default().any());
        assert_eq!(
            Margins::parse("judge=0.5").unwrap(),
            Margins {
                judge: Some(0.5),
                ..Margins::default()
            }
        );
    }

    #[test]
    fn a_malformed_margin_names_the_part_and_the_forms() {
        let cases = [
            ("p99=10%", "p99=10%", "no statistic `p99`"),
            (
                "success=5%",
                "success=5%",
                "points of a share, not a percentage: write success=5",
            ),
            ("p50=10", "p50=10", "write p50=10%"),
            ("judge=0.25%", "judge=0.25%", "not a percentage"),
            ("p50=10%,judge=-1", "judge=-1", "must be above 0"),
            ("success=0", "success=0", "must be above 0"),
            ("success=abc", "success=abc", "not a number"),
            ("success", "success", "not NAME=VALUE"),
            ("kept=100", "kept=100", "whole scale"),
            ("p50=5%,p50=6%", "p50=6%", "given twice"),
        ];
        for (text, part, problem) in cases {
            let e = Margins::parse(text).unwrap_err();
            assert_eq!(e.part, part, "{text}");
            assert!(e.problem.contains(problem), "{text}: {}", e.problem);
            let shown = e.to_string();
            assert!(
                shown.contains("fix:") && shown.contains("p50=10%"),
                "{shown}"
            );
        }
    }
}
