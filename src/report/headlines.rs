//! The decision first: headlines that compare cells, each resting on a [`Family`] of
//! claims adjusted together (`docs/metrics.md`, "Claims"; the inference is
//! `crate::stats::inference`, calibrated by `crate::stats::calibration`).
//!
//! - Latency, per model label and percentile (p50, p95): the fastest provider against every
//!   other, paired over the (scenario, repeat) slots both completed, compared as a ratio.
//! - Reliability: conversation completion per model label, the most reliable cell against
//!   every other (paired by slot).
//! - Quality: task success per attempted conversation (failures count as not meeting the
//!   bar), and each judge's mean over the slots both cells completed and it scored: the
//!   leading cell against every other, per model label like latency ([`Scope`]: across
//!   labels only with `--across-models` or when one provider serves every cell).
//! - Constraint retention per model label (1 − the forgetting ratio of CONSTRAINTS ACROSS
//!   TURNS, a conversation's share over its checks per slot).
//! - Flags: truncation (and reasoning that used the budget), content filters, retries.
//!
//! Every family tests every pair of its cells (Holm over all of them), and the headline
//! states the leader's comparisons: the rule the calibration measured. A headline holds
//! numbers and names ([`Said`]); `super::sentences` writes its sentence.

use std::collections::{BTreeMap, HashMap};

use super::cells::{cluster_of, completed_of, retention_of, run_of, task_success_of};
use super::load::Facts;
use super::margin::Margins;
use super::model::{
    Cell, Claim, ClaimStatistic, EquivalenceClaim, Family, Headline, HeadlineKind, JudgeSection,
    Member, Said, Shortfall,
};
use crate::stats::inference::{self, PairedSample, Statistic};
use rayon::prelude::*;

/// Every family of the cells' figures and judges, per `scope`, from `on` (the cells and
/// their slots).
pub(super) fn headlines(
    on: &ClaimInputs,
    by_cell: &[Vec<usize>],
    judges: &[(JudgeSection, HashMap<usize, f64>)],
    scope: &Scope,
) -> Vec<Headline> {
    let (facts, cells, seed) = (on.facts, on.cells, on.seed);
    let ctx = Ctx {
        facts,
        slots: on.slots,
        cells,
        scope,
        seed,
    };
    // Each family on a core of its own (a family's tests are seeded by its key, so which
    // core takes it cannot change a figure), the headlines kept in this order.
    let families: Vec<FamilyOf> = [
        FamilyOf::Latency,
        FamilyOf::Reliability,
        FamilyOf::TaskSuccess,
        FamilyOf::Retention,
    ]
    .into_iter()
    .chain(
        judges
            .iter()
            .map(|(section, scores)| FamilyOf::Judge(section, scores)),
    )
    .collect();
    let mut out: Vec<Headline> = families
        .par_iter()
        .flat_map_iter(|family| {
            let mut out = Vec::new();
            match family {
                FamilyOf::Latency => {
                    latency(facts, on.slots, cells, (seed, &scope.margins), &mut out);
                }
                FamilyOf::Reliability => reliability(&ctx, &mut out),
                FamilyOf::TaskSuccess => task_success(&ctx, &mut out),
                FamilyOf::Retention => retention(&ctx, by_cell, &mut out),
                FamilyOf::Judge(section, scores) => judge(&ctx, section, scores, &mut out),
            }
            out
        })
        .collect();
    flags(cells, &mut out);
    out
}

/// What one family of [`headlines`] compares.
enum FamilyOf<'j> {
    Latency,
    Reliability,
    TaskSuccess,
    Retention,
    Judge(&'j JudgeSection, &'j HashMap<usize, f64>),
}

/// What every family of a mean statistic is made from.
struct Ctx<'a> {
    facts: &'a Facts,
    /// Each cell's conversations by slot ([`slots`]).
    slots: &'a [Vec<(Slot, usize)>],
    cells: &'a [Cell],
    scope: &'a Scope,
    seed: u64,
}

/// One statistic compared as a difference of means over paired slots, per family of
/// [`Scope`]: which cells take part, each cell's own figure (it picks the leader, as the
/// tables show it), each conversation's value, and what the headline says of the leader.
struct MeanClaim<'a> {
    /// Names the family's seed (with the model label, when the family is within one).
    key: &'a str,
    kind: HeadlineKind,
    claim: ClaimStatistic,
    takes_part: &'a dyn Fn(usize) -> bool,
    figure: &'a dyn Fn(usize) -> Option<f64>,
    value: &'a dyn Fn(usize) -> Option<f64>,
    said: &'a dyn Fn(usize) -> Option<Said>,
    /// The figures are simulated whatever the cells (a simulated judge).
    simulated: bool,
    /// The equivalence margin (`--margin`) on the claim's scale.
    margin: Option<f64>,
}

/// A headline per family of `m` with two or more cells: the leader against every other.
fn mean_headlines(ctx: &Ctx, m: &MeanClaim, out: &mut Vec<Headline>) {
    let cells = ctx.cells;
    for (label, group) in ctx.scope.families(cells, |i| (m.takes_part)(*i)) {
        let sides: Vec<Side> = group
            .iter()
            .map(|&i| Side::new(ctx.facts, i, &ctx.slots[i], (m.figure)(i), m.value))
            .collect();
        let key = match &label {
            Some(l) => format!("{} {l}", m.key),
            None => m.key.to_string(),
        };
        let test = FamilyTest {
            stat: Statistic::Mean,
            claim: m.claim,
            margin: m.margin,
        };
        let Some(f) = family(cells, &sides, test, ctx.seed, &key) else {
            continue;
        };
        let Some(said) = leader_side(cells, &sides, &f).and_then(|l| (m.said)(l.cell)) else {
            continue;
        };
        out.push(Headline {
            kind: m.kind,
            model: label,
            text: String::new(),
            said,
            established: Some(lead_established(&f)),
            simulated: m.simulated || group.iter().any(|&i| cells[i].simulated),
            family: Some(f),
        });
    }
}

/// A pair slot: (scenario, repeat, k), k numbering a cell's conversations of that scenario
/// and repeat in run order, so repeated runs pair run by run.
pub(super) type Slot = (usize, u32, u32);

/// Each cell's conversations by slot, once for every family that pairs them.
pub(super) fn cell_slots(facts: &Facts, by_cell: &[Vec<usize>]) -> Vec<Vec<(Slot, usize)>> {
    by_cell.par_iter().map(|c| slots(facts, c)).collect()
}

/// Every conversation of a cell that has a scenario, by its slot, in slot order.
fn slots(facts: &Facts, convs: &[usize]) -> Vec<(Slot, usize)> {
    let mut seen: HashMap<(usize, u32), u32> = HashMap::new();
    let mut ordered: Vec<usize> = convs.to_vec();
    ordered.sort_by_key(|&i| (facts.convs[i].run_id, facts.convs[i].id));
    let mut out = Vec::with_capacity(ordered.len());
    for i in ordered {
        let c = &facts.convs[i];
        let Some(s) = c.scenario else { continue };
        let k = seen.entry((s, c.repeat)).or_default();
        out.push(((s, c.repeat, *k), i));
        *k += 1;
    }
    out.sort_unstable_by_key(|x| x.0);
    out
}

/// One cell as a family sees it: its name, its own figure (what the tables show, which
/// chooses the leader) and its value per slot.
struct Side {
    cell: usize,
    figure: Option<f64>,
    /// (slot, value, cluster, run), sorted by slot.
    values: Vec<(Slot, f64, u32, u32)>,
}

impl Side {
    /// `slots`: the cell's conversations by slot, in slot order ([`slots`]).
    fn new(
        facts: &Facts,
        cell: usize,
        slots: &[(Slot, usize)],
        figure: Option<f64>,
        value: impl Fn(usize) -> Option<f64>,
    ) -> Side {
        let values: Vec<(Slot, f64, u32, u32)> = slots
            .iter()
            .filter_map(|&(slot, i)| {
                Some((slot, value(i)?, cluster_of(facts, i), run_of(facts, i)))
            })
            .collect();
        Side {
            cell,
            figure,
            values,
        }
    }
}

/// The pairs of two sides: the slots both hold, in slot order (one merge of two sorted
/// lists).
fn pairs(x: &Side, y: &Side) -> PairedSample {
    let mut out = PairedSample::default();
    let (mut i, mut j) = (0, 0);
    while let (Some(&(sx, a, cluster, run)), Some(&(sy, b, _, _))) =
        (x.values.get(i), y.values.get(j))
    {
        match sx.cmp(&sy) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.a.push(a);
                out.b.push(b);
                out.cluster.push(cluster);
                out.run.push(run);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// Conversation completion per model label: the cell that completed the largest share of
/// its attempted conversations against every other cell of its label (paired by slot: a
/// slot's value is 1 when its conversation completed, 0 when it failed), as the other
/// statistics are compared. A label served by one cell states its figure alone.
fn reliability(ctx: &Ctx, out: &mut Vec<Headline>) {
    let (facts, cells) = (ctx.facts, ctx.cells);
    let attempted = |i: usize| cells[i].reliability.attempted > 0;
    mean_headlines(
        ctx,
        &MeanClaim {
            key: "reliability",
            kind: HeadlineKind::Reliability,
            claim: ClaimStatistic::SuccessDifference,
            takes_part: &attempted,
            figure: &|i| {
                let r = &cells[i].reliability;
                Some(r.completed as f64 / r.attempted as f64)
            },
            value: &|conv| completed_of(facts, conv),
            said: &|i| Some(reliability_said(&cells[i])),
            simulated: false,
            margin: ctx.scope.margins.completed,
        },
        out,
    );
    // A label's only cell states its figure alone.
    let in_family: Vec<usize> = ctx
        .scope
        .families(cells, |i| attempted(*i))
        .into_iter()
        .filter(|(label, _)| label.is_some())
        .flat_map(|(_, g)| g)
        .collect();
    for (i, c) in cells.iter().enumerate() {
        if attempted(i) && !in_family.contains(&i) {
            out.push(Headline {
                kind: HeadlineKind::Reliability,
                model: Some(c.model.clone()),
                text: String::new(),
                said: reliability_said(c),
                established: None,
                simulated: c.simulated,
                family: None,
            });
        }
    }
}

fn reliability_said(c: &Cell) -> Said {
    let r = &c.reliability;
    Said::Reliability {
        cell: cell_name(c),
        completed: r.completed,
        attempted: r.attempted,
        rate: r.success,
        failures: r.failures.clone(),
    }
}

/// Puts `lines` before the first flag headline (findings before what a reader must also
/// know), or at the end when there is none.
pub(super) fn before_flags(out: &mut Vec<Headline>, lines: Vec<Headline>) {
    let at = out
        .iter()
        .position(|h| h.kind == HeadlineKind::Flag)
        .unwrap_or(out.len());
    out.splice(at..at, lines);
}

pub(super) fn cell_name(c: &Cell) -> String {
    format!("{} / {}", c.provider, c.model)
}

/// Tests every pair of `sides` together and states the leader's comparisons: the family
/// behind one headline, with its members ranked and every other pair; with a `margin` (on
/// the claim's scale), each of the leader's comparisons also gets its equivalence test.
/// `None` with fewer than two sides.
fn family(
    cells: &[Cell],
    sides: &[Side],
    test: FamilyTest,
    seed: u64,
    key: &str,
) -> Option<Family> {
    if sides.len() < 2 {
        return None;
    }
    let name = |s: &Side| cells.get(s.cell).map(cell_name).unwrap_or_default();
    let tested = Tested::of(sides, test.stat, |x, y| {
        inference::seed_for(seed, &format!("{key}|{}|{}", name(x), name(y)))
    });
    let figures: Vec<Option<f64>> = sides.iter().map(|s| s.figure).collect();
    let leader = inference::leader(&figures, test.claim.higher_is_better());
    let rank = ranking(&figures, test.claim.higher_is_better());
    let (mut claims, others) = stated(&tested, leader, &rank, test.claim, |i| {
        sides.get(i).map(name).unwrap_or_default()
    });
    if let Some(m) = test.margin {
        equivalences(&tested, leader, &mut claims, test.stat, m);
    }
    Some(Family {
        statistic: test.claim,
        comparisons: tested.index.len(),
        cells: sides.len(),
        method: "holm",
        alpha: inference::FAMILY_ALPHA,
        leader: leader.and_then(|l| sides.get(l)).map(name),
        claims: claims.into_iter().map(|(_, c)| c).collect(),
        members: rank
            .iter()
            .filter_map(|&i| sides.get(i))
            .map(|s| Member {
                cell: name(s),
                provider: cells
                    .get(s.cell)
                    .map(|c| c.provider.clone())
                    .unwrap_or_default(),
                figure: s.figure,
                n: s.values.len(),
            })
            .collect(),
        others,
    })
}

/// Every pair of a family's sides, its paired sample with its seed, and the family's
/// verdicts on them (Holm together).
struct Tested {
    /// The sides of each pair, `(x, y)` with `x < y`.
    index: Vec<(usize, usize)>,
    samples: Vec<PairedSample>,
    seeds: Vec<u64>,
    judged: Vec<inference::Judged>,
}

impl Tested {
    fn of(sides: &[Side], stat: Statistic, seed: impl Fn(&Side, &Side) -> u64) -> Tested {
        let index: Vec<(usize, usize)> = (0..sides.len())
            .flat_map(|x| (x + 1..sides.len()).map(move |y| (x, y)))
            .collect();
        let (samples, seeds): (Vec<PairedSample>, Vec<u64>) = index
            .iter()
            .filter_map(|&(x, y)| Some((sides.get(x)?, sides.get(y)?)))
            .map(|(x, y)| (pairs(x, y), seed(x, y)))
            .unzip();
        let seeded: Vec<(&PairedSample, u64)> = samples.iter().zip(seeds.iter().copied()).collect();
        let judged = inference::judge_family(&seeded, stat);
        Tested {
            index,
            samples,
            seeds,
            judged,
        }
    }
}

/// The family's pairs as claims: the leader's comparisons, closest figure first (the next
/// best is named first), each with the index of its pair; and every other pair, the
/// better-ranked side first, in rank order.
fn stated(
    tested: &Tested,
    leader: Option<usize>,
    rank: &[usize],
    claim: ClaimStatistic,
    name: impl Fn(usize) -> String,
) -> (Vec<(usize, Claim)>, Vec<Claim>) {
    let place = |i: usize| rank.iter().position(|&r| r == i).unwrap_or(usize::MAX);
    let figure_gap = |x: usize, y: usize| {
        let at = |i: usize| rank.iter().position(|&r| r == i);
        // Ranks stand in for figures: the next-ranked side is the closest to the leader.
        at(x).zip(at(y)).map_or(usize::MAX, |(a, b)| a.abs_diff(b))
    };
    let mut claims: Vec<(usize, usize, Claim)> = Vec::new();
    let mut others: Vec<((usize, usize), Claim)> = Vec::new();
    for (k, (&(x, y), j)) in tested.index.iter().zip(&tested.judged).enumerate() {
        match leader {
            Some(l) if x == l || y == l => {
                let other = if x == l { y } else { x };
                let c = claim_of(j, x == l, claim, name(l), name(other));
                claims.push((figure_gap(l, other), k, c));
            }
            _ => {
                let (first, second) = if place(x) <= place(y) { (x, y) } else { (y, x) };
                let c = claim_of(j, first == x, claim, name(first), name(second));
                others.push(((place(first), place(second)), c));
            }
        }
    }
    claims.sort_by_key(|c| c.0);
    others.sort_by_key(|o| o.0);
    (
        claims.into_iter().map(|(_, k, c)| (k, c)).collect(),
        others.into_iter().map(|(_, c)| c).collect(),
    )
}

/// Gives each of the leader's claims its equivalence within `margin` (on the claim's
/// scale), from the test its claim already rests on.
fn equivalences(
    tested: &Tested,
    leader: Option<usize>,
    claims: &mut [(usize, Claim)],
    stat: Statistic,
    margin: f64,
) {
    let ratio = stat.percentile().is_some();
    let on_test_scale = if ratio { margin.ln_1p() } else { margin };
    let of_leader: Vec<(&PairedSample, u64, Option<&inference::Test>)> = claims
        .iter()
        .filter_map(|&(k, _)| {
            Some((
                tested.samples.get(k)?,
                *tested.seeds.get(k)?,
                tested.judged.get(k)?.test.as_ref(),
            ))
        })
        .collect();
    let found = inference::equivalence_of(&of_leader, stat, on_test_scale);
    for ((k, c), e) in claims.iter_mut().zip(found) {
        let leader_first = leader.is_some() && leader == tested.index.get(*k).map(|p| p.0);
        c.equivalence = Some(EquivalenceClaim {
            margin,
            established: e.established,
            interval: e.interval.map(|i| on_claim_scale(i, leader_first, ratio)),
        });
    }
}

/// What a family tests: the statistic, how its claims state it, and the equivalence
/// margin (`--margin`) on the claim's scale, when one is given.
#[derive(Clone, Copy)]
struct FamilyTest {
    stat: Statistic,
    claim: ClaimStatistic,
    margin: Option<f64>,
}

/// The sides' indices ranked by their figure, best first; those without one last.
fn ranking(figures: &[Option<f64>], higher_is_better: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..figures.len()).collect();
    order.sort_by(|&x, &y| match (figures[x], figures[y]) {
        (Some(a), Some(b)) if higher_is_better => b.total_cmp(&a),
        (Some(a), Some(b)) => a.total_cmp(&b),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    order
}

/// An interval on a test's scale as a claim states it: the leader's side first (`leader_first`:
/// the test had the leader as its own a), a latency log ratio as the ratio.
fn on_claim_scale(
    i: super::model::Interval,
    leader_first: bool,
    ratio: bool,
) -> super::model::Interval {
    let (lo, hi) = if leader_first {
        (i.lo, i.hi)
    } else {
        (-i.hi, -i.lo)
    };
    let to_scale = |x: f64| if ratio { x.exp() } else { x };
    super::model::Interval {
        lo: to_scale(lo),
        hi: to_scale(hi),
    }
}

/// The side the family names as its leader.
fn leader_side<'s>(cells: &[Cell], sides: &'s [Side], f: &Family) -> Option<&'s Side> {
    sides
        .iter()
        .find(|s| cells.get(s.cell).map(cell_name) == f.leader)
}

/// One judged comparison as a claim with the leader as `a` (`leader_first`: the test had
/// the leader as its own a).
pub(super) fn claim_of(
    j: &inference::Judged,
    leader_first: bool,
    stat: ClaimStatistic,
    a: String,
    b: String,
) -> Claim {
    let ratio = stat.scale() == super::model::Scale::Ratio;
    let sign = if leader_first { 1.0 } else { -1.0 };
    let t = j.test;
    let to_scale = |x: f64| if ratio { x.exp() } else { x };
    let interval = j.interval().map(|i| on_claim_scale(i, leader_first, ratio));
    let (a_value, b_value) = match t {
        Some(t) if leader_first => (Some(t.a), Some(t.b)),
        Some(t) => (Some(t.b), Some(t.a)),
        None => (None, None),
    };
    let reason = if j.verdict.established {
        None
    } else if !j.enough() {
        Some(Shortfall::TooFewPairs {
            n: j.n,
            needed: j.needed,
        })
    } else if t.is_none() {
        Some(Shortfall::OneScenario { n: j.n })
    } else if let Some(t) = t.filter(|t| t.runs >= 2 && t.runs <= inference::MIN_DF) {
        Some(Shortfall::TooFewRuns {
            runs: t.runs,
            needed: inference::MIN_DF + 1,
        })
    } else if let Some(t) = t.filter(scenario_limited) {
        Some(Shortfall::TooFewScenarios {
            scenarios: t.clusters,
            p: t.p,
        })
    } else if j.verdict.adjusted_p <= inference::FAMILY_ALPHA {
        Some(Shortfall::IntervalHoldsNone)
    } else {
        Some(Shortfall::NoDifference)
    };
    Claim {
        a,
        b,
        n: j.n,
        scenarios: t.map_or(0, |t| t.clusters),
        needed: j.needed,
        a_value,
        b_value,
        estimate: t.map(|t| to_scale(sign * t.estimate)),
        interval,
        level: j.verdict.level,
        p_value: t.map(|t| t.p),
        adjusted_p: j.verdict.adjusted_p,
        established: j.verdict.established,
        reason,
        equivalence: None,
    }
}

/// Whether a test's p-value is the smallest its scenarios allow: every scenario's
/// difference on one side, 2 / 2^C for C scenarios. Such a claim is short of scenarios, not
/// of evidence.
fn scenario_limited(t: &inference::Test) -> bool {
    let floor = 2.0 * 0.5f64.powi(i32::try_from(t.clusters).unwrap_or(i32::MAX));
    t.p <= floor * (1.0 + 1e-9)
}

/// Whether the leader's lead holds: established over every other cell of its family.
fn lead_established(f: &Family) -> bool {
    !f.claims.is_empty() && f.claims.iter().all(|c| c.established)
}

fn latency(
    facts: &Facts,
    slots: &[Vec<(Slot, usize)>],
    cells: &[Cell],
    (seed, margins): (u64, &Margins),
    out: &mut Vec<Headline>,
) {
    let mut by_label: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, c) in cells.iter().enumerate() {
        if c.conversation_latency.n > 0 {
            by_label.entry(c.model.as_str()).or_default().push(i);
        }
    }
    let percentiles = [
        (
            HeadlineKind::LatencyP50,
            Statistic::LatencyP50,
            ClaimStatistic::LatencyP50Ratio,
            50,
        ),
        (
            HeadlineKind::LatencyP95,
            Statistic::LatencyP95,
            ClaimStatistic::LatencyP95Ratio,
            95,
        ),
    ];
    for (label, group) in by_label {
        if group.len() < 2 {
            continue;
        }
        for (kind, stat, claim, q) in percentiles {
            let sides: Vec<Side> = group
                .iter()
                .map(|&i| {
                    let p = &cells[i].conversation_latency;
                    let figure = if q == 50 { p.p50 } else { p.p95 }.map(|e| e.value);
                    Side::new(facts, i, &slots[i], figure, |c| {
                        let conv = &facts.convs[c];
                        (conv.outcome.is_completed() && conv.latency_ms.is_finite())
                            .then_some(conv.latency_ms)
                    })
                })
                .collect();
            let key = format!("latency p{q} {label}");
            let test = FamilyTest {
                stat,
                claim,
                margin: if q == 50 { margins.p50 } else { margins.p95 },
            };
            let Some(f) = family(cells, &sides, test, seed, &key) else {
                continue;
            };
            let Some(leader) = leader_side(cells, &sides, &f) else {
                continue;
            };
            let Some(fig) = leader.figure else { continue };
            let c = &cells[leader.cell];
            out.push(Headline {
                kind,
                model: Some(label.to_string()),
                text: String::new(),
                said: Said::Fastest {
                    q,
                    label: label.to_string(),
                    provider: c.provider.clone(),
                    ms: fig,
                    n: c.conversation_latency.n,
                },
                established: Some(lead_established(&f)),
                simulated: group.iter().any(|&i| cells[i].simulated),
                family: Some(f),
            });
        }
    }
}

fn task_success(ctx: &Ctx, out: &mut Vec<Headline>) {
    let (facts, cells) = (ctx.facts, ctx.cells);
    mean_headlines(
        ctx,
        &MeanClaim {
            key: "task success",
            kind: HeadlineKind::QualityChecks,
            claim: ClaimStatistic::TaskSuccessDifference,
            takes_part: &|i| cells[i].checks.task_success.n > 0,
            figure: &|i| cells[i].checks.task_success.value,
            value: &|conv| task_success_of(facts, conv),
            said: &|i| {
                Some(Said::TaskSuccess {
                    leader: cell_name(&cells[i]),
                    rate: cells[i].checks.task_success,
                })
            },
            simulated: false,
            margin: ctx.scope.margins.success,
        },
        out,
    );
}

/// Constraint retention per model label: the provider whose checks, once held, most often
/// hold again at the next scored turn, against every other (a slot's value is its
/// conversation's share over its checks; slots without such a turn pair are left out).
fn retention(ctx: &Ctx, by_cell: &[Vec<usize>], out: &mut Vec<Headline>) {
    let (facts, cells) = (ctx.facts, ctx.cells);
    // Each cell's pooled counts (held again, held before): the figure that picks the
    // leader.
    let pooled: Vec<(u64, u64)> = by_cell
        .iter()
        .map(|convs| {
            convs
                .iter()
                .filter_map(|&i| facts.checks.kept.get(i))
                .fold((0, 0), |(a, b), k| {
                    (a + u64::from(k.held_again), b + u64::from(k.held_before))
                })
        })
        .collect();
    let counts = |i: usize| pooled.get(i).copied().filter(|&(_, b)| b > 0);
    mean_headlines(
        ctx,
        &MeanClaim {
            key: "retention",
            kind: HeadlineKind::ConstraintRetention,
            claim: ClaimStatistic::RetentionDifference,
            takes_part: &|i| counts(i).is_some(),
            figure: &|i| counts(i).map(|(a, b)| a as f64 / b as f64),
            value: &|conv| retention_of(facts, conv),
            said: &|i| {
                let (held_again, held_before) = counts(i)?;
                Some(Said::Retention {
                    leader: cell_name(&cells[i]),
                    held_again,
                    held_before,
                    rate: super::cells::wilson_rate(held_again, held_before),
                })
            },
            simulated: false,
            margin: ctx.scope.margins.kept,
        },
        out,
    );
}

/// Goodput under `--slo` per model label (a family like the others, calibrated as every
/// share is): the provider whose turns most often met every bound against every other,
/// paired by slot; a slot's value is its conversation's share of turns met
/// (`conversation_share`, `None` outside the denominators). Empty without `--slo`.
pub(super) fn goodput(
    on: &ClaimInputs,
    rows: &[super::model::Goodput],
    conversation_share: &dyn Fn(usize) -> Option<f64>,
) -> Vec<Headline> {
    let cells = on.cells;
    let row = |i: usize| {
        let c = cells.get(i)?;
        rows.iter()
            .find(|g| g.provider == c.provider && g.label == c.model && g.turns > 0)
    };
    let Some(slo) = rows.first().map(|g| g.slo.text()) else {
        return Vec::new();
    };
    on.headlines(&MeanClaim {
        key: "goodput",
        kind: HeadlineKind::Goodput,
        claim: ClaimStatistic::GoodputDifference,
        takes_part: &|i| row(i).is_some(),
        figure: &|i| row(i).and_then(|g| g.rate),
        value: conversation_share,
        said: &|i| {
            let g = row(i)?;
            Some(Said::Goodput {
                leader: cell_name(&cells[i]),
                rate: super::model::Rate {
                    k: g.turns_met,
                    n: g.turns,
                    value: g.rate,
                    interval: g.interval,
                },
                slo: slo.clone(),
            })
        },
        simulated: false,
        margin: None,
    })
}

/// TTFT's growth with the prompt per model label (a family like the others, calibrated:
/// `crate::stats::calibration`, "TTFT slope"): the provider whose TTFT grows least per
/// 1,000 prompt tokens (TTFT BY TURN's pooled slope chooses it) against every other,
/// paired by slot; a slot's value is its conversation's own least-squares slope
/// (`conversation_slope`, `None` without two turns of different prompt sizes).
pub(super) fn ttft_slope(
    on: &ClaimInputs,
    rows: &[super::model::TtftByTurn],
    conversation_slope: &dyn Fn(usize) -> Option<f64>,
) -> Vec<Headline> {
    let cells = on.cells;
    let row = |i: usize| {
        let c = cells.get(i)?;
        rows.iter().find(|r| {
            r.provider == c.provider
                && r.label == c.model
                && r.slope_ms_per_1k_prompt_tokens.is_some()
        })
    };
    on.headlines(&MeanClaim {
        key: "ttft slope",
        kind: HeadlineKind::TtftSlope,
        claim: ClaimStatistic::TtftSlopeDifference,
        takes_part: &|i| row(i).is_some(),
        figure: &|i| row(i)?.slope_ms_per_1k_prompt_tokens,
        value: conversation_slope,
        said: &|i| {
            let r = row(i)?;
            Some(Said::TtftSlope {
                leader: cell_name(&cells[i]),
                slope: super::model::Estimate {
                    value: r.slope_ms_per_1k_prompt_tokens?,
                    interval: r.interval,
                    too_few: false,
                },
                turns: r.slope_n,
                conversations: r.slope_conversations,
            })
        },
        simulated: false,
        margin: None,
    })
}

/// What every family is built from: the cells, their conversations by slot
/// ([`cell_slots`]) and the report's seed.
pub(super) struct ClaimInputs<'a> {
    pub facts: &'a Facts,
    pub slots: &'a [Vec<(Slot, usize)>],
    pub cells: &'a [Cell],
    pub seed: u64,
}

impl ClaimInputs<'_> {
    /// A headline per model label of `m` with two or more cells.
    fn headlines(&self, m: &MeanClaim) -> Vec<Headline> {
        let scope = Scope {
            across_models: false,
            margins: Margins::default(),
        };
        let ctx = Ctx {
            facts: self.facts,
            slots: self.slots,
            cells: self.cells,
            scope: &scope,
            seed: self.seed,
        };
        let mut out = Vec::new();
        mean_headlines(&ctx, m, &mut out);
        out
    }
}

fn judge(ctx: &Ctx, section: &JudgeSection, scores: &HashMap<usize, f64>, out: &mut Vec<Headline>) {
    let cells = ctx.cells;
    let key = format!(
        "judge {} {} {}",
        section.rubric, section.judge, section.simulated
    );
    mean_headlines(
        ctx,
        &MeanClaim {
            key: &key,
            kind: HeadlineKind::QualityJudge,
            claim: ClaimStatistic::JudgeMeanDifference,
            takes_part: &|i| section.cells.get(i).is_some_and(|j| j.n > 0),
            figure: &|i| section.cells.get(i)?.overall.map(|e| e.value),
            value: &|conv| scores.get(&conv).copied(),
            said: &|i| {
                let j = section.cells.get(i)?;
                Some(Said::JudgeMean {
                    rubric: section.rubric.clone(),
                    judge: section.judge.clone(),
                    simulated: section.simulated,
                    leader: cell_name(&cells[i]),
                    mean: j.overall,
                    all_equal: j.all_equal,
                    n: j.n,
                    attempted: j.attempted,
                })
            },
            simulated: section.simulated,
            margin: ctx.scope.margins.judge,
        },
        out,
    );
}

/// Which cells a quality family compares: those of one model label (a provider against
/// the others serving the same model), and across labels only when asked
/// (`--across-models`) or when one provider serves every cell (then the models are what
/// differs).
pub(super) struct Scope {
    pub across_models: bool,
    /// Equivalence margins (`--margin`).
    pub margins: Margins,
}

impl Scope {
    /// `(label, cells)` per family: `Some(label)` within a label, `None` across labels.
    fn families(
        &self,
        cells: &[Cell],
        scored: impl Fn(&usize) -> bool,
    ) -> Vec<(Option<String>, Vec<usize>)> {
        let mut by_label: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for i in (0..cells.len()).filter(&scored) {
            by_label.entry(cells[i].model.as_str()).or_default().push(i);
        }
        let providers: std::collections::BTreeSet<&str> =
            cells.iter().map(|c| c.provider.as_str()).collect();
        let across = (self.across_models || providers.len() == 1) && by_label.len() > 1;
        let mut out: Vec<(Option<String>, Vec<usize>)> = by_label
            .iter()
            .filter(|(_, g)| g.len() > 1)
            .map(|(l, g)| (Some((*l).to_string()), g.clone()))
            .collect();
        if across {
            out.push((None, by_label.into_values().flatten().collect()));
        }
        out
    }
}

fn flags(cells: &[Cell], out: &mut Vec<Headline>) {
    for c in cells {
        let f = &c.flags;
        if f.truncated_turns + f.content_filtered_turns + f.retried_turns > 0 {
            out.push(Headline {
                kind: HeadlineKind::Flag,
                model: Some(c.model.clone()),
                text: String::new(),
                said: Said::CellFlags {
                    cell: cell_name(c),
                    flags: *f,
                },
                established: None,
                simulated: c.simulated,
                family: None,
            });
        }
    }
}
