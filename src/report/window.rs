//! Which runs a report reads, and which it compares them with: `--since 72h`, `--last N`,
//! `--runs R1,R2` pool runs of one bench name; `--baseline-run R` and `--baseline-window 7d`
//! name the runs the selection is compared with (`docs/report.md`, "Runs over time").
//!
//! Pure: the store's runs go in ([`RunRow`], oldest first), run ids come out.

use crate::store::facts::RunRow;

/// A span of time as the flags take it: `90m`, `72h`, `7d`, `2w`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub ms: i64,
    text: &'static str,
    count: i64,
}

impl Span {
    /// `None` for anything but a positive whole number and one of `m`, `h`, `d`, `w`.
    pub fn parse(text: &str) -> Option<Span> {
        let text = text.trim();
        let unit = text.chars().last()?;
        let (per, name) = match unit {
            'm' => (60_000, "m"),
            'h' => (3_600_000, "h"),
            'd' => (86_400_000, "d"),
            'w' => (7 * 86_400_000, "w"),
            _ => return None,
        };
        let count: i64 = text.get(..text.len() - 1)?.parse().ok()?;
        (count > 0).then_some(())?;
        Some(Span {
            ms: count.checked_mul(per)?,
            text: name,
            count,
        })
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.count, self.text)
    }
}

/// How the runs to report are chosen. All `None`: every run (or `--run`), as before.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunChoice {
    /// Runs of the bench name started within this span before now.
    pub since: Option<Span>,
    /// The newest N runs of the bench name.
    pub last: Option<usize>,
    /// These runs, by id or name.
    pub runs: Option<Vec<String>>,
    pub baseline: Option<Baseline>,
    /// Only runs collected by one of these (`--collector`); empty: any. Narrows the runs
    /// every other choice (and the baseline) is made among.
    pub collectors: Vec<String>,
}

impl RunChoice {
    pub fn is_default(&self) -> bool {
        *self == RunChoice::default()
    }
}

/// What the selection is compared with.
#[derive(Debug, Clone, PartialEq)]
pub enum Baseline {
    /// A run id, or a run name (every run of that name but the selected ones).
    Run(String),
    /// The runs of the selection's bench name started within this span before its first run.
    Window(Span),
}

/// The runs chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    /// The runs to report, oldest first; `None`: every run the other filters allow.
    pub selected: Option<Vec<i64>>,
    /// The baseline's runs and how the report names them.
    pub baseline: Option<(Vec<i64>, String)>,
}

/// Why no runs could be chosen: said with the runs there are.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WindowError {
    #[error("{what}: no such run in the store\n  runs there are: {known}")]
    NoSuchRun { what: String, known: String },
    #[error("{what}: no run of \"{name}\" matches\n  runs of \"{name}\": {known}")]
    Empty {
        what: String,
        name: String,
        known: String,
    },
    #[error(
        "--collector {names}: no run of the store was collected by {them}\n  collectors there are: {known}"
    )]
    NoCollector {
        names: String,
        them: &'static str,
        known: String,
    },
    #[error(
        "{what}: the baseline holds only runs already selected ({ids})\n  fix: name another run, or select fewer (--run, --last, --since)"
    )]
    SameRuns { what: String, ids: String },
}

/// Chooses the runs. `all`: the store's runs holding conversations, oldest first; `narrow`:
/// `--run` (an id or a name), which the selection stays within; `now_ms`: the clock, for
/// `--since`. A baseline is looked for among all runs.
pub fn choose(
    all: &[RunRow],
    narrow: Option<&str>,
    choice: &RunChoice,
    now_ms: i64,
) -> Result<Chosen, WindowError> {
    let kept = of_collectors(all, &choice.collectors)?;
    let all = kept.as_ref();
    let narrowed = narrowed(all, narrow);
    let runs = narrowed.as_slice();
    let mut selected = select(runs, choice, now_ms)?;
    if selected.is_none() && !choice.collectors.is_empty() {
        // Every run the other choices allow: of these collectors only.
        selected = Some(all.iter().map(|r| r.id).collect());
    }
    if let Some(ids) = &mut selected {
        ids.sort_unstable();
        ids.dedup();
    }
    let Some(baseline) = &choice.baseline else {
        return Ok(Chosen {
            selected,
            baseline: None,
        });
    };
    let chosen: Vec<i64> = selected.clone().unwrap_or_default();
    let first = runs.iter().find(|r| chosen.contains(&r.id)).or(runs.last());
    let (what, candidates) = baseline_candidates(all, runs, baseline, first, now_ms)?;
    let ids: Vec<i64> = candidates
        .iter()
        .map(|r| r.id)
        .filter(|id| !chosen.contains(id))
        .collect();
    if ids.is_empty() {
        return Err(WindowError::SameRuns {
            what,
            ids: join_ids(&chosen),
        });
    }
    let name = baseline_name(baseline, &ids, first);
    Ok(Chosen {
        selected,
        baseline: Some((ids, name)),
    })
}

/// The runs collected by one of `collectors` (`--collector`), every run when none is
/// named; none of theirs is an error listing the collectors there are, with their runs.
fn of_collectors<'r>(
    all: &'r [RunRow],
    collectors: &[String],
) -> Result<std::borrow::Cow<'r, [RunRow]>, WindowError> {
    if collectors.is_empty() {
        return Ok(std::borrow::Cow::Borrowed(all));
    }
    let kept: Vec<RunRow> = all
        .iter()
        .filter(|r| r.collector.as_ref().is_some_and(|c| collectors.contains(c)))
        .cloned()
        .collect();
    if !kept.is_empty() {
        return Ok(std::borrow::Cow::Owned(kept));
    }
    let mut runs: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for c in all.iter().filter_map(|r| r.collector.as_deref()) {
        *runs.entry(c).or_default() += 1;
    }
    let known: Vec<String> = runs
        .iter()
        .map(|(name, n)| format!("{name} ({n} run{})", if *n == 1 { "" } else { "s" }))
        .collect();
    Err(WindowError::NoCollector {
        names: collectors.join(","),
        them: if collectors.len() == 1 {
            "it"
        } else {
            "any of them"
        },
        known: if known.is_empty() {
            "none (runs stored before collectors were recorded, and imports, have none)".into()
        } else {
            known.join(", ")
        },
    })
}

/// The runs `--run` leaves (an id or a name); all of them without it.
fn narrowed(all: &[RunRow], narrow: Option<&str>) -> Vec<RunRow> {
    match narrow {
        Some(r) => {
            let ids = find(all, r);
            all.iter()
                .filter(|x| ids.contains(&x.id))
                .cloned()
                .collect()
        }
        None => all.to_vec(),
    }
}

/// The bench name of the newest run: the one `--last` and `--since` pool.
fn newest_name(runs: &[RunRow]) -> String {
    runs.last().map(|r| r.name.clone()).unwrap_or_default()
}

/// The selected run ids as `--runs`, `--last` or `--since` name them (unsorted); the
/// newest run when only a baseline is asked for; `None`: every run.
fn select(
    runs: &[RunRow],
    choice: &RunChoice,
    now_ms: i64,
) -> Result<Option<Vec<i64>>, WindowError> {
    let newest_name = newest_name(runs);
    let of_name = |name: &str| -> Vec<&RunRow> { runs.iter().filter(|r| r.name == name).collect() };
    if let Some(list) = &choice.runs {
        let mut ids = Vec::new();
        for item in list {
            let found = find(runs, item);
            if found.is_empty() {
                return Err(WindowError::NoSuchRun {
                    what: format!("--runs {item}"),
                    known: listing(runs.iter()),
                });
            }
            ids.extend(found);
        }
        Ok(Some(ids))
    } else if let Some(n) = choice.last {
        let all = of_name(&newest_name);
        let skip = all.len().saturating_sub(n.max(1));
        Ok(Some(all.iter().skip(skip).map(|r| r.id).collect()))
    } else if let Some(span) = choice.since {
        let from = now_ms.saturating_sub(span.ms);
        let all = of_name(&newest_name);
        let ids: Vec<i64> = all
            .iter()
            .filter(|r| started(r).is_some_and(|t| t >= from))
            .map(|r| r.id)
            .collect();
        if ids.is_empty() {
            return Err(WindowError::Empty {
                what: format!("--since {span}"),
                name: newest_name,
                known: listing(all.into_iter()),
            });
        }
        Ok(Some(ids))
    } else if choice.baseline.is_some() {
        Ok(runs.last().map(|r| vec![r.id]))
    } else {
        // `--run` alone narrows through the filter, as it always has.
        Ok(None)
    }
}

/// The flag that named the baseline, and the runs it names (selected ones not yet taken
/// out). `first`: the selection's first run, which a window ends at.
fn baseline_candidates<'a>(
    all: &'a [RunRow],
    runs: &[RunRow],
    baseline: &Baseline,
    first: Option<&RunRow>,
    now_ms: i64,
) -> Result<(String, Vec<&'a RunRow>), WindowError> {
    match baseline {
        Baseline::Run(r) => {
            let found = find(all, r);
            if found.is_empty() {
                return Err(WindowError::NoSuchRun {
                    what: format!("--baseline-run {r}"),
                    known: listing(all.iter()),
                });
            }
            Ok((
                format!("--baseline-run {r}"),
                all.iter().filter(|x| found.contains(&x.id)).collect(),
            ))
        }
        Baseline::Window(span) => {
            let name = first.map_or(newest_name(runs), |r| r.name.clone());
            let to = first.and_then(started).unwrap_or(now_ms);
            let from = to.saturating_sub(span.ms);
            let named: Vec<&RunRow> = all.iter().filter(|r| r.name == name).collect();
            let inside: Vec<&RunRow> = named
                .iter()
                .copied()
                .filter(|r| started(r).is_some_and(|t| t >= from && t < to))
                .collect();
            if inside.is_empty() {
                return Err(WindowError::Empty {
                    what: format!("--baseline-window {span}"),
                    name,
                    known: listing(named.into_iter()),
                });
            }
            Ok((format!("--baseline-window {span}"), inside))
        }
    }
}

/// How the report names the baseline's runs `ids`.
fn baseline_name(baseline: &Baseline, ids: &[i64], first: Option<&RunRow>) -> String {
    match baseline {
        Baseline::Run(_) if ids.len() == 1 => format!("run {}", join_ids(ids)),
        Baseline::Run(_) => format!("runs {}", join_ids(ids)),
        Baseline::Window(span) => format!(
            "run{} {} (the {span} before run {})",
            if ids.len() == 1 { "" } else { "s" },
            join_ids(ids),
            first.map_or(0, |r| r.id)
        ),
    }
}

/// A run by id, or every run of a name.
fn find(runs: &[RunRow], item: &str) -> Vec<i64> {
    match item.trim().parse::<i64>() {
        Ok(id) => runs.iter().filter(|r| r.id == id).map(|r| r.id).collect(),
        Err(_) => runs
            .iter()
            .filter(|r| r.name == item.trim())
            .map(|r| r.id)
            .collect(),
    }
}

fn started(r: &RunRow) -> Option<i64> {
    crate::timestamp::parse_rfc3339_ms(&r.started_at)
}

pub fn join_ids(ids: &[i64]) -> String {
    ids.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The runs as an error lists them: the newest ten, `3 (name, started)`.
fn listing<'r>(runs: impl DoubleEndedIterator<Item = &'r RunRow>) -> String {
    let shown: Vec<String> = runs
        .rev()
        .take(10)
        .map(|r| format!("{} ({}, {})", r.id, r.name, r.started_at))
        .collect();
    if shown.is_empty() {
        "(none)".into()
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: i64, name: &str, started_at: &str) -> RunRow {
        RunRow {
            id,
            name: name.into(),
            settings_hash: "h".into(),
            started_at: started_at.into(),
            collector: None,
        }
    }

    fn store() -> Vec<RunRow> {
        vec![
            run(1, "hourly", "2026-12-01T10:00:00Z"),
            run(2, "hourly", "2026-12-02T10:00:00Z"),
            run(3, "other", "2026-12-02T12:00:00Z"),
            run(4, "hourly", "2026-12-03T09:00:00Z"),
            run(5, "hourly", "2026-12-03T10:00:00Z"),
        ]
    }

    fn now() -> i64 {
        crate::timestamp::parse_rfc3339_ms("2026-12-03T11:00:00Z").unwrap()
    }

    fn choose_with(choice: RunChoice) -> Result<Chosen, WindowError> {
        choose(&store(), None, &choice, now())
    }

    #[test]
    fn spans_read_as_people_write_them() {
        assert_eq!(Span::parse("72h").map(|s| s.ms), Some(72 * 3_600_000));
        assert_eq!(Span::parse("7d").map(|s| s.to_string()), Some("7d".into()));
        assert_eq!(Span::parse("90m").map(|s| s.ms), Some(90 * 60_000));
        assert_eq!(Span::parse("2w").map(|s| s.ms), Some(14 * 86_400_000));
        for bad in [
            "",
            "h",
            "0h",
            "-3h",
            "3",
            "3.5h",
            "3y",
            "99999999999999999w",
        ] {
            assert_eq!(Span::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn without_flags_nothing_is_narrowed() {
        let c = choose_with(RunChoice::default()).unwrap();
        assert_eq!((c.selected, c.baseline), (None, None));
    }

    #[test]
    fn windows_pool_runs_of_the_newest_runs_name() {
        let since = |s: &str| RunChoice {
            since: Span::parse(s),
            ..RunChoice::default()
        };
        // 26 h back from 11:00 on the 3rd: the runs of the 2nd at 10:00 and after, by name.
        assert_eq!(
            choose_with(since("26h")).unwrap().selected,
            Some(vec![2, 4, 5])
        );
        assert_eq!(choose_with(since("3h")).unwrap().selected, Some(vec![4, 5]));
        let err = choose_with(since("30m")).unwrap_err().to_string();
        assert!(
            err.contains("--since 30m: no run of \"hourly\" matches"),
            "{err}"
        );
        assert!(err.contains("5 (hourly, 2026-12-03T10:00:00Z)"), "{err}");
        let last = |n| RunChoice {
            last: Some(n),
            ..RunChoice::default()
        };
        assert_eq!(choose_with(last(2)).unwrap().selected, Some(vec![4, 5]));
        assert_eq!(
            choose_with(last(9)).unwrap().selected,
            Some(vec![1, 2, 4, 5])
        );
        let list = RunChoice {
            runs: Some(vec!["5".into(), "other".into(), "1".into()]),
            ..RunChoice::default()
        };
        assert_eq!(choose_with(list).unwrap().selected, Some(vec![1, 3, 5]));
        let unknown = RunChoice {
            runs: Some(vec!["8".into()]),
            ..RunChoice::default()
        };
        assert!(matches!(
            choose_with(unknown),
            Err(WindowError::NoSuchRun { .. })
        ));
    }

    #[test]
    fn a_baseline_compares_the_newest_run_unless_told_otherwise() {
        let c = choose_with(RunChoice {
            baseline: Some(Baseline::Run("1".into())),
            ..RunChoice::default()
        })
        .unwrap();
        assert_eq!(c.selected, Some(vec![5]));
        assert_eq!(c.baseline, Some((vec![1], "run 1".into())));
        // By name: every run of it but the selected.
        let c = choose_with(RunChoice {
            baseline: Some(Baseline::Run("hourly".into())),
            ..RunChoice::default()
        })
        .unwrap();
        assert_eq!(c.baseline.unwrap().0, vec![1, 2, 4]);
        // The same run on both sides is refused.
        let err = choose_with(RunChoice {
            baseline: Some(Baseline::Run("5".into())),
            ..RunChoice::default()
        })
        .unwrap_err();
        assert!(matches!(err, WindowError::SameRuns { .. }), "{err}");
        // --run picks the side compared; the baseline may be any run.
        let c = choose(
            &store(),
            Some("other"),
            &RunChoice {
                baseline: Some(Baseline::Run("hourly".into())),
                ..RunChoice::default()
            },
            now(),
        )
        .unwrap();
        assert_eq!(c.selected, Some(vec![3]));
        assert_eq!(c.baseline.unwrap().0, vec![1, 2, 4, 5]);
    }

    #[test]
    fn a_baseline_window_ends_where_the_selection_begins() {
        let c = choose_with(RunChoice {
            last: Some(2),
            baseline: Some(Baseline::Window(Span::parse("2d").unwrap())),
            ..RunChoice::default()
        })
        .unwrap();
        assert_eq!(c.selected, Some(vec![4, 5]));
        // Before run 4 (09:00 on the 3rd), within 2 days, of its name: 1 and 2, not 3.
        assert_eq!(
            c.baseline,
            Some((vec![1, 2], "runs 1, 2 (the 2d before run 4)".into()))
        );
        let err = choose_with(RunChoice {
            baseline: Some(Baseline::Window(Span::parse("30m").unwrap())),
            ..RunChoice::default()
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("--baseline-window 30m: no run"), "{err}");
    }

    #[test]
    fn collectors_narrow_the_runs_and_an_unknown_one_lists_those_there_are() {
        let mut runs = store();
        for (r, c) in runs.iter_mut().zip(["east", "west", "east"]) {
            r.collector = Some(c.into());
        }
        let choice = |names: &[&str], last: Option<usize>| RunChoice {
            collectors: names.iter().map(|n| n.to_string()).collect(),
            last,
            ..RunChoice::default()
        };
        // Alone: every run of those collectors; with --last, the choice is made among them.
        let chosen = choose(&runs, None, &choice(&["east"], None), now()).unwrap();
        assert_eq!(chosen.selected, Some(vec![1, 3]));
        let chosen = choose(&runs, None, &choice(&["west", "east"], Some(1)), now()).unwrap();
        assert_eq!(chosen.selected, Some(vec![3]));
        let err = choose(&runs, None, &choice(&["north"], None), now())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "--collector north: no run of the store was collected by it\n  collectors there are: east (2 runs), west (1 run)"
        );
        let err = choose(&store(), None, &choice(&["a", "b"], None), now())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("by any of them") && err.contains("there are: none ("),
            "{err}"
        );
    }
}
