//! The selected run(s) against a baseline (`turnbench report --baseline-run R`,
//! `--baseline-window 7d`): per cell, the change in success rate, conversation p50 and p95,
//! task success and each judge's mean, each a claim over the (scenario version, repeat)
//! slots both sides hold, with the calibrated inference of the headlines
//! (`crate::stats::inference`) and every comparison of every cell adjusted together (Holm):
//! so the chance of any false "regressed" in a report is at most 5 %, which is what a CI
//! gate (`--fail-on-regression`) needs.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::cells::{conversations_by_cell, task_success_of};
use super::headlines::claim_of;
use super::load::Facts;
use super::model::{
    Change, ChangeVerdict, ClaimStatistic, Comparison, Headline, HeadlineKind, JudgeSection, Said,
};
use crate::stats::inference::{self, PairedSample, Statistic};

/// A pair slot across runs: (scenario, scenario version, repeat, k), k numbering a side's
/// conversations of that slot in run order, so pooled runs pair run by run.
type Slot = (usize, u32, u32, u32);

/// A conversation's value for one statistic (`None`: not in its denominator).
type Value<'a> = &'a dyn Fn(usize) -> Option<f64>;

/// What the comparison reads: facts over the selected and the baseline runs together.
pub(super) struct Sides<'f> {
    pub facts: &'f Facts,
    /// The scenario version of each conversation (index into `facts.convs`); `None` for
    /// one linked to no stored scenario.
    pub versions: Vec<Option<u32>>,
    pub selected: &'f [i64],
    pub baseline: &'f [i64],
    /// How the two sides are named in claims: `run 3`, `run 1` …
    pub selected_name: String,
    pub baseline_name: String,
    /// Each judge section over these facts, with its conversations' scores.
    pub judges: &'f [(JudgeSection, HashMap<usize, f64>)],
}

/// One comparison before the family is judged.
struct Planned {
    cell: usize,
    statistic: ClaimStatistic,
    stat: Statistic,
    judge: Option<String>,
    sample: PairedSample,
}

/// Compares the selected runs with the baseline, cell by cell, and judges every comparison
/// as one Holm family: the comparison section and its headlines.
pub(super) fn compare(s: &Sides<'_>, seed: u64) -> (Comparison, Vec<Headline>) {
    let sides = side_per_conversation(s);
    let side_of = |i: usize| sides.get(i).copied().flatten();
    let (held_selected, held_baseline) = (held(s, &side_of, true), held(s, &side_of, false));
    let both: BTreeSet<(usize, u32)> = held_selected
        .intersection(&held_baseline)
        .copied()
        .collect();
    let left_out = left_out(s, &held_selected, &held_baseline, &side_of);
    let plan = plan(s, &side_of, &both);
    let changes = judge(s, &plan, seed);
    let count = |v: ChangeVerdict| changes.iter().filter(|c| c.verdict == v).count();
    let comparison = Comparison {
        runs: s.selected.to_vec(),
        baseline_runs: s.baseline.to_vec(),
        baseline: s.baseline_name.clone(),
        comparisons: changes.len(),
        method: "holm",
        alpha: inference::FAMILY_ALPHA,
        regressions: count(ChangeVerdict::Regressed),
        improvements: count(ChangeVerdict::Improved),
        changes,
        only_selected: plan.only_selected,
        only_baseline: plan.only_baseline,
        left_out,
    };
    let headlines = headlines(&comparison, &s.selected_name);
    (comparison, headlines)
}

/// Each conversation's side, once: Some(true) the selected runs, Some(false) the
/// baseline's, None neither.
fn side_per_conversation(s: &Sides<'_>) -> Vec<Option<bool>> {
    s.facts
        .convs
        .iter()
        .map(|c| {
            if s.selected.contains(&c.run_id) {
                Some(true)
            } else if s.baseline.contains(&c.run_id) {
                Some(false)
            } else {
                None
            }
        })
        .collect()
}

/// The (scenario, scenario version) pairs one side's conversations ran.
fn held(
    s: &Sides<'_>,
    side_of: &dyn Fn(usize) -> Option<bool>,
    selected: bool,
) -> BTreeSet<(usize, u32)> {
    (0..s.facts.convs.len())
        .filter(|&i| side_of(i) == Some(selected))
        .filter_map(|i| Some((s.facts.convs[i].scenario?, s.versions.get(i).copied()??)))
        .collect()
}

/// Every comparison to judge, in family order, and the cells only one side ran.
struct Plan {
    planned: Vec<Planned>,
    only_selected: Vec<String>,
    only_baseline: Vec<String>,
    /// Each cell's conversation count on (selected, baseline).
    counts: Vec<(u64, u64)>,
}

/// Plans the comparisons of every cell both sides ran, cell by cell in cell order.
fn plan(
    s: &Sides<'_>,
    side_of: &dyn Fn(usize) -> Option<bool>,
    both: &BTreeSet<(usize, u32)>,
) -> Plan {
    let facts = s.facts;
    let mut plan = Plan {
        planned: Vec::new(),
        only_selected: Vec::new(),
        only_baseline: Vec::new(),
        counts: vec![(0, 0); facts.cells.len()],
    };
    for (cell, convs) in conversations_by_cell(facts).iter().enumerate() {
        let n_of = |selected: bool| {
            convs
                .iter()
                .filter(|&&i| side_of(i) == Some(selected))
                .count() as u64
        };
        let (na, nb) = (n_of(true), n_of(false));
        plan.counts[cell] = (na, nb);
        let name = facts.cell_name(cell);
        match (na, nb) {
            (0, 0) => continue,
            (_, 0) => {
                plan.only_selected.push(name);
                continue;
            }
            (0, _) => {
                plan.only_baseline.push(name);
                continue;
            }
            _ => {}
        }
        let slots = |selected: bool| slots(s, convs, side_of, both, selected);
        plan_cell(s, cell, &slots(true), &slots(false), &mut plan.planned);
    }
    plan
}

/// One side's conversations of a cell by pair slot, over the scenario versions both
/// sides hold.
fn slots(
    s: &Sides<'_>,
    convs: &[usize],
    side_of: &dyn Fn(usize) -> Option<bool>,
    both: &BTreeSet<(usize, u32)>,
    selected: bool,
) -> BTreeMap<Slot, usize> {
    let facts = s.facts;
    let mut mine: Vec<usize> = convs
        .iter()
        .copied()
        .filter(|&i| side_of(i) == Some(selected))
        .collect();
    mine.sort_by_key(|&i| (facts.convs[i].run_id, facts.convs[i].id));
    let mut seen: HashMap<(usize, u32, u32), u32> = HashMap::new();
    let mut out = BTreeMap::new();
    for i in mine {
        let c = &facts.convs[i];
        let (Some(sc), Some(v)) = (c.scenario, s.versions.get(i).copied().flatten()) else {
            continue;
        };
        if !both.contains(&(sc, v)) {
            continue;
        }
        let k = seen.entry((sc, v, c.repeat)).or_default();
        out.insert((sc, v, c.repeat, *k), i);
        *k += 1;
    }
    out
}

/// Plans one cell's comparisons (success, p50, p95, task success, then each judge), each
/// only where both sides have a value.
fn plan_cell(
    s: &Sides<'_>,
    cell: usize,
    a: &BTreeMap<Slot, usize>,
    b: &BTreeMap<Slot, usize>,
    planned: &mut Vec<Planned>,
) {
    let facts = s.facts;
    let any = |value: Value<'_>| {
        a.values().any(|&i| value(i).is_some()) && b.values().any(|&i| value(i).is_some())
    };
    let completed = |i: usize| Some(f64::from(u8::from(facts.convs[i].outcome.is_completed())));
    let latency = |i: usize| {
        let c = &facts.convs[i];
        (c.outcome.is_completed() && c.latency_ms.is_finite()).then_some(c.latency_ms)
    };
    let task = |i: usize| task_success_of(facts, i);
    let plain: [(ClaimStatistic, Statistic, Value<'_>); 4] = [
        (
            ClaimStatistic::SuccessDifference,
            Statistic::Mean,
            &completed,
        ),
        (
            ClaimStatistic::LatencyP50Ratio,
            Statistic::LatencyP50,
            &latency,
        ),
        (
            ClaimStatistic::LatencyP95Ratio,
            Statistic::LatencyP95,
            &latency,
        ),
        (
            ClaimStatistic::TaskSuccessDifference,
            Statistic::Mean,
            &task,
        ),
    ];
    for (statistic, stat, value) in plain {
        if any(value) {
            planned.push(Planned {
                cell,
                statistic,
                stat,
                judge: None,
                sample: paired(a, b, value),
            });
        }
    }
    for (section, scores) in s.judges {
        let score = |i: usize| scores.get(&i).copied();
        if any(&score) {
            planned.push(Planned {
                cell,
                statistic: ClaimStatistic::JudgeMeanDifference,
                stat: Statistic::Mean,
                judge: Some(format!("{} by {}", section.rubric, section.judge)),
                sample: paired(a, b, &score),
            });
        }
    }
}

/// The pairs of `value` over the slots both sides hold, clustered by scenario.
fn paired(a: &BTreeMap<Slot, usize>, b: &BTreeMap<Slot, usize>, value: Value<'_>) -> PairedSample {
    let mut out = PairedSample::default();
    for (slot, &i) in a {
        let Some(&j) = b.get(slot) else { continue };
        if let (Some(x), Some(y)) = (value(i), value(j)) {
            out.a.push(x);
            out.b.push(y);
            out.cluster.push(u32::try_from(slot.0).unwrap_or(u32::MAX));
        }
    }
    out
}

/// Judges the planned comparisons as one family (Holm), each seeded from its names, and
/// states each as a change.
fn judge(s: &Sides<'_>, plan: &Plan, seed: u64) -> Vec<Change> {
    let facts = s.facts;
    let seeded: Vec<(&PairedSample, u64, Statistic)> = plan
        .planned
        .iter()
        .map(|p| {
            let key = format!(
                "baseline|{}|{:?}|{}",
                facts.cell_name(p.cell),
                p.statistic,
                p.judge.as_deref().unwrap_or("")
            );
            (&p.sample, inference::seed_for(seed, &key), p.stat)
        })
        .collect();
    let judged = inference::judge_mixed_family(&seeded);
    plan.planned
        .iter()
        .zip(&judged)
        .map(|(p, j)| {
            let key = facts.cells.get(p.cell);
            let claim = claim_of(
                j,
                true,
                p.statistic,
                s.selected_name.clone(),
                s.baseline_name.clone(),
            );
            let verdict = verdict_of(claim.estimate, claim.established, p.stat);
            let (selected_n, baseline_n) = plan.counts.get(p.cell).copied().unwrap_or_default();
            Change {
                cell: facts.cell_name(p.cell),
                provider: key.map(|k| k.provider.clone()).unwrap_or_default(),
                model: key.map(|k| k.label.clone()).unwrap_or_default(),
                statistic: p.statistic,
                judge: p.judge.clone(),
                selected_n,
                baseline_n,
                claim,
                verdict,
                simulated: key.is_some_and(|k| k.simulated),
            }
        })
        .collect()
}

/// An established change's direction: worse is a lower difference for a statistic where
/// higher is better, a ratio above 1 otherwise.
fn verdict_of(estimate: Option<f64>, established: bool, stat: Statistic) -> ChangeVerdict {
    match estimate {
        Some(e) if established => {
            let worse = if stat.higher_is_better() {
                e < 0.0
            } else {
                e > 1.0
            };
            if worse {
                ChangeVerdict::Regressed
            } else {
                ChangeVerdict::Improved
            }
        }
        _ => ChangeVerdict::NoEstablishedChange,
    }
}

/// Scenario versions only one side holds (their conversations are not compared), and runs
/// whose settings differ from the other side's.
fn left_out(
    s: &Sides<'_>,
    held_selected: &BTreeSet<(usize, u32)>,
    held_baseline: &BTreeSet<(usize, u32)>,
    side_of: &dyn Fn(usize) -> Option<bool>,
) -> Vec<String> {
    let facts = s.facts;
    let mut out = Vec::new();
    let mut alone: BTreeMap<(bool, usize), u64> = BTreeMap::new();
    let mut unversioned = [0u64; 2];
    for (i, c) in facts.convs.iter().enumerate() {
        let Some(side) = side_of(i) else { continue };
        let version = s.versions.get(i).copied().flatten();
        match (c.scenario, version) {
            (Some(sc), Some(v)) => {
                let other = if side { held_baseline } else { held_selected };
                if !other.contains(&(sc, v)) {
                    *alone.entry((side, sc)).or_default() += 1;
                }
            }
            _ => unversioned[usize::from(side)] += 1,
        }
    }
    for ((side, sc), n) in alone {
        let name = facts.scenarios.get(sc).map_or("?", String::as_str);
        let (here, there) = if side {
            (&s.selected_name, &s.baseline_name)
        } else {
            (&s.baseline_name, &s.selected_name)
        };
        out.push(format!(
            "scenario {name}: {n} conversation{} of {here} ran a version {there} did not; not compared",
            if n == 1 { "" } else { "s" }
        ));
    }
    for (side, n) in [(true, unversioned[1]), (false, unversioned[0])] {
        if n > 0 {
            let here = if side {
                &s.selected_name
            } else {
                &s.baseline_name
            };
            out.push(format!(
                "{n} conversation{} of {here} ran no stored scenario; not compared",
                if n == 1 { "" } else { "s" }
            ));
        }
    }
    let hashes = |ids: &[i64]| -> BTreeSet<&str> {
        facts
            .runs
            .iter()
            .filter(|r| ids.contains(&r.id))
            .map(|r| r.settings_hash.as_str())
            .collect()
    };
    if hashes(s.selected) != hashes(s.baseline) {
        out.push(format!(
            "the settings of {} and {} differ (settings hash); their figures are compared as they are",
            s.selected_name, s.baseline_name
        ));
    }
    out
}

/// Headlines: one per established change (regressions first), then one that sums up.
fn headlines(cmp: &Comparison, selected: &str) -> Vec<Headline> {
    let mut out = Vec::new();
    let mut established: Vec<&Change> = cmp
        .changes
        .iter()
        .filter(|c| c.verdict != ChangeVerdict::NoEstablishedChange)
        .collect();
    established.sort_by_key(|c| c.verdict != ChangeVerdict::Regressed);
    for c in established {
        out.push(Headline {
            kind: HeadlineKind::Change,
            model: Some(c.model.clone()),
            text: String::new(),
            said: Said::Change {
                change: Box::new(c.clone()),
                selected: selected.to_string(),
                baseline: cmp.baseline.clone(),
            },
            established: Some(true),
            simulated: c.simulated,
            family: None,
        });
    }
    let cells: BTreeSet<&str> = cmp.changes.iter().map(|c| c.cell.as_str()).collect();
    out.push(Headline {
        kind: HeadlineKind::Change,
        model: None,
        text: String::new(),
        said: Said::Baseline {
            selected: selected.to_string(),
            baseline: cmp.baseline.clone(),
            regressions: cmp.regressions,
            improvements: cmp.improvements,
            comparisons: cmp.comparisons,
            cells: cells.len(),
            alpha: cmp.alpha,
            alone: cmp.only_selected.len() + cmp.only_baseline.len(),
        },
        established: Some(cmp.regressions + cmp.improvements > 0),
        simulated: cmp.changes.iter().any(|c| c.simulated),
        family: None,
    });
    out
}
