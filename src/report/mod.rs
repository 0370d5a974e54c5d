//! `turnbench report`: quality joined with latency and reliability per provider × model
//! label, with the statistics a reader needs to tell which differences are real.
//!
//! - [`load()`]: the report's one read of the store: the read model's views
//!   (`db/004_read_model.sql`) into compact facts, with each figure family's rows.
//! - [`build`]: the report from those facts alone (no store handle).
//! - [`cells`]: per-cell figures: reliability, latency, per-turn, usable, checks, cache,
//!   cost, flags.
//! - [`survival`]: CONSTRAINTS ACROSS TURNS: per-turn pass rates, survival, forgetting
//!   and recovery of the checks' turn verdicts.
//! - [`consistency`]: CONSISTENCY ACROSS REPEATS: identical answers and agreeing check
//!   verdicts of repeats sent the same request, and the spread of their task success.
//! - [`judges`]: judge means per rubric × judge × cell.
//! - [`agreement`]: Krippendorff's α per criterion between replicates and between judges.
//! - [`pairwise`]: win / tie / loss against a baseline, position consistency.
//! - [`anchor_check`]: whether each judge ranks reference answers above spoiled ones.
//! - [`check_agreement`]: rank correlation of judge criteria with the checks' pass rates.
//! - [`human_agreement`]: each judge's weighted Cohen's κ with the human labels.
//! - [`judge_card`]: per judge × rubric, whether its scores can count, and one verdict.
//! - [`headlines`]: what a reader decides from: each headline's figures and claims.
//! - [`model`]: the report as data; `crate::export` formats it.
//! - [`sentences`]: each headline's sentence and a change's words, written at build time.
//! - [`rows`]: per-conversation rows, built one at a time while they are written.
//! - [`replay`]: the replay section (cache, cost, speed, tool calls of replayed sessions).
//! - [`window`]: which runs are read (`--since`, `--last`, `--runs`) and compared with
//!   (`--baseline-run`, `--baseline-window`); [`compare`]: the comparison itself.
//!
//! The report reads only in [`load()`] and computes in [`build`]; it writes its sentences
//! once ([`sentences`], through `crate::figure`), `crate::export` lays out every table, and
//! it never writes to the store.
//! Statistics come from `crate::stats`; every definition is in `docs/metrics.md`.

mod agreement;
pub mod anchor_check;
pub mod cells;
mod check_agreement;
pub mod compare;
pub mod consistency;
pub mod drilldown;
mod frontier;
mod goodput;
pub mod headlines;
pub mod human_agreement;
pub mod judge_card;
mod judges;
pub mod keys;
mod load;
pub mod margin;
pub mod matrix;
pub mod model;
mod overflow;
mod pairwise;
pub mod replay;

pub mod rows;
pub mod sentences;
pub mod simulated;
mod stream;
pub mod survival;
mod trend;
mod ttft_by_turn;
pub mod vs_fastest;
pub mod window;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub use load::TAG_ORDER;

use crate::stats::Bootstrap;
use crate::store::StoreError;
use crate::store::facts::{FactFilter, JudgmentFilter, Selection, judged_rubrics_and_judges};
use model::{BootstrapInfo, ChecksSection, Filters, Meta, Report};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(
        "{path}: no store here\n  fix: run `turnbench run` (or `turnbench collect`) first, or pass --db with your store",
        path = .0.display()
    )]
    NoStore(PathBuf),
    #[error("--sla-ms {0}: not a positive number of milliseconds")]
    BadSla(f64),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("a report reader thread stopped: {0}")]
    Thread(String),
    #[error(transparent)]
    Runs(#[from] window::WindowError),
}

#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    pub filter: FactFilter,
    pub judgments: JudgmentFilter,
    /// Turns slower than this (E2E, ms) are not usable.
    pub sla_ms: Option<f64>,
    pub bootstrap: Bootstrap,
    /// Build per-conversation rows (the JSON format writes them).
    pub with_conversations: bool,
    /// The figure the tables order each label's cells by.
    pub sort: vs_fastest::SortBy,
    /// Which runs to read and what to compare them with.
    pub runs: window::RunChoice,
    /// Each cell run by run, even from one run (`--trend`; several runs always give it).
    pub trend: bool,
    /// Which conversations get a full view (the HTML drill-down), and at most how many.
    pub views: drilldown::ConversationViews,
    /// `None`: [`drilldown::DEFAULT_CAP`].
    pub views_cap: Option<usize>,
    /// Quality claims also across model labels (`--across-models`); always when one
    /// provider serves every cell.
    pub across_models: bool,
    /// Equivalence margins per statistic (`--margin`): each of a leader's comparisons of a
    /// statistic given one is also tested for equivalence.
    pub margins: margin::Margins,
    /// Per-request objectives for GOODPUT (`--slo`); `None`: no goodput section.
    pub slo: Option<crate::config::slo::Slo>,
}

/// Everything a report is built from, read from the store in one step ([`load`]):
/// the selected conversations' facts, the baseline's when there is one, and each figure
/// family's rows. [`build`] computes the report from it alone.
#[derive(Debug)]
pub struct Facts {
    store: String,
    /// When the facts were read (RFC 3339): the report's `generated_at`.
    read_at: String,
    selected: std::sync::Arc<load::Facts>,
    baseline: Option<BaselineFacts>,
    /// What the judging sections read besides the selected facts.
    judging: JudgingRead,
    replay: Vec<crate::store::replay::ReplayTurnFact>,
    /// The sizes the servers stated on the conversations that outgrew the context.
    overflow: overflow::OverflowRead,
    /// The selected scenarios' repeats, counted for CONSISTENCY ACROSS REPEATS.
    repeats: consistency::Tallies,
    /// Every rubric and judge with a judgment (for the notes when none is shown).
    judged: (Vec<String>, Vec<String>),
    drilldown: drilldown::DrilldownRead,
}

/// What the report reads besides the selected facts, beside their pass.
struct SideReads {
    judging: JudgingRead,
    replay: Vec<crate::store::replay::ReplayTurnFact>,
    /// Every rubric and judge with a judgment.
    judged: (Vec<String>, Vec<String>),
}

fn side_reads(db: &Path, sel: &Selection) -> Result<SideReads, ReportError> {
    let conn = crate::store::open_read_only(db)?;
    Ok(SideReads {
        judging: JudgingRead {
            variation: crate::store::judgments::replicate_variation(&conn)?,
            pairwise: pairwise::PairwiseRead::read(&conn)?,
            anchors: crate::store::anchor_judgments::current_anchor_judgments(&conn)?,
            families: crate::store::judgments::judge_families(&conn)?,
        },
        replay: crate::store::replay::replay_turn_facts(&conn, sel)?,
        judged: judged_rubrics_and_judges(&conn)?,
    })
}

/// The selected run(s) and the baseline's, read together, with each conversation's
/// scenario version.
#[derive(Debug)]
struct BaselineFacts {
    facts: load::Facts,
    versions: Vec<Option<u32>>,
    selected: Vec<i64>,
    baseline: Vec<i64>,
    baseline_name: String,
}

/// Reads everything the report shows from the store at `db` (upgraded first if it is
/// older than this build; never created): the report's only door to the store.
pub fn load(db: &Path, opts: &ReportOptions) -> Result<Facts, ReportError> {
    check_options(db, opts)?;
    let conn = crate::store::open(db)?;
    let read_at = crate::store::now_rfc3339();
    let chosen = choose_runs(&conn, opts)?;
    let mut filter = opts.filter.clone();
    if let Some(c) = &chosen {
        filter.run_ids = c.selected.clone();
    }
    let sel = Selection::resolve(&conn, &filter)?;
    let baseline = read_baseline(db, &conn, &filter, opts, chosen.as_ref())?;
    // With the repeats' members: the pass over turns, check results and turn verdicts
    // keeps theirs (their texts as identities: `store::facts::turns`). The reads that need
    // no selected facts go on beside it, on a connection of their own.
    let (main, side) = std::thread::scope(|s| {
        let side = s.spawn(|| side_reads(db, &sel));
        let main = load::load(db, &conn, &sel, &opts.judgments, true);
        (main, side.join())
    });
    let (selected, repeat_groups) = main?;
    let SideReads {
        judging,
        replay,
        judged,
    } = side.map_err(|_| load::panicked("judging"))??;
    let drilldown = drilldown::read(
        &conn,
        &selected,
        opts.views,
        opts.views_cap.unwrap_or(drilldown::DEFAULT_CAP),
    )?;
    Ok(Facts {
        store: db.display().to_string(),
        read_at,
        judging,
        replay,
        overflow: overflow::read(&conn, &selected)?,
        repeats: consistency::Tallies::of(repeat_groups),
        judged,
        selected: std::sync::Arc::new(selected),
        baseline,
        drilldown,
    })
}

/// Builds the report from the facts [`load`] read: computes, never reads.
pub fn build(facts: Facts, opts: &ReportOptions) -> Report {
    let Facts {
        store,
        read_at,
        selected: facts,
        baseline,
        judging: judging_read,
        replay,
        overflow: overflow_read,
        repeats,
        judged,
        drilldown: drilldown_read,
    } = facts;
    let comparison = baseline.map(|b| comparison(&b, opts));
    let by_cell = cells::conversations_by_cell(&facts);
    let (report_cells, ttft_by_turn, goodput) = cell_sections(&facts, &by_cell, opts);
    let attempted: Vec<u64> = report_cells
        .iter()
        .map(|c| c.reliability.attempted)
        .collect();
    let judging = judging(&facts, &attempted, &judging_read, opts);
    let mut headlines = claims(
        &facts,
        &by_cell,
        &report_cells,
        &judging.scored,
        (&goodput, &ttft_by_turn),
        opts,
    );
    let comparison = comparison.map(|(cmp, mut changes)| {
        changes.append(&mut headlines);
        headlines = changes;
        cmp
    });
    let judge_sections: Vec<model::JudgeSection> =
        judging.scored.into_iter().map(|(s, _)| s).collect();
    let frontier = frontier::frontier(&headlines, &judge_sections, &report_cells);
    frontier::headlines(&frontier, &mut headlines);
    let context_overflow = overflow::section(&facts, &report_cells, &overflow_read, &replay);
    overflow::headlines(context_overflow.as_ref(), &report_cells, &mut headlines);
    let replay = replay::section(&replay);
    let only_replay = only_replay(replay.as_ref(), &facts);
    let mut notes = notes(
        &judged,
        &facts,
        &report_cells,
        &judge_sections,
        only_replay,
        opts,
    );
    anchor_flags(
        &judge_sections,
        &judging.pairwise,
        &judging.anchors,
        &mut headlines,
        &mut notes,
    );
    headlines.extend(simulated_flag(&report_cells));
    sentences::write(&mut headlines);
    let drilldown = drilldown::select(&facts, drilldown_read);
    notes.extend(drilldown.cap_note());
    Report {
        schema: model::SCHEMA,
        meta: meta(store, read_at, opts, &facts, &report_cells),
        sort: opts.sort,
        order: vs_fastest::order(&report_cells, &judge_sections, opts.sort),
        vs_fastest: vs_fastest::vs_fastest(&report_cells, &headlines),
        headlines,
        checks: checks_section(&facts, &report_cells),
        trend: (opts.trend || facts.runs.len() > 1)
            .then(|| trend::trend(&facts, &by_cell, &report_cells, opts.trend)),
        cells: report_cells,
        constraint_survival: constraint_survival(&facts),
        consistency: repeats.section(),
        judges: judge_sections,
        agreement: judging.agreement,
        pairwise: judging.pairwise,
        anchors: judging.anchors,
        check_agreement: judging.check_agreement,
        human_agreement: judging.human_agreement,
        judge_card: judging.judge_card,
        notes,
        frontier,
        context_overflow,
        replay,
        comparison,
        ttft_by_turn,
        goodput,
        matrix: matrix::rows(&facts),
        drilldown,
        conversations: opts
            .with_conversations
            .then(|| rows::ConversationRows::new(facts, opts.sla_ms)),
    }
}

/// The cells, then each cell's TTFT by turn and goodput (those two side by side).
fn cell_sections(
    facts: &load::Facts,
    by_cell: &[Vec<usize>],
    opts: &ReportOptions,
) -> (
    Vec<model::Cell>,
    Vec<model::TtftByTurn>,
    Vec<model::Goodput>,
) {
    let cells = cells::cells(
        facts,
        by_cell,
        &cells::CellOptions {
            sla_ms: opts.sla_ms,
        },
    );
    let (ttft_by_turn, goodput) = rayon::join(
        || ttft_by_turn::section(facts, by_cell, &cells),
        || goodput::section(facts, by_cell, &cells, opts.slo.as_ref()),
    );
    (cells, ttft_by_turn, goodput)
}

/// What the judging sections read from the store besides the selected facts.
#[derive(Debug)]
struct JudgingRead {
    /// Each judge's replicate settings (what their prompts varied).
    variation: Vec<(String, bool, String)>,
    pairwise: pairwise::PairwiseRead,
    anchors: Vec<crate::store::anchor_judgments::AnchorRow>,
    /// The family each judge's settings wrote (the judge card).
    families: Vec<crate::store::judgments::JudgeFamily>,
}

/// The judging sections: each rubric × judge's scores, the judges' agreement with
/// themselves, the checks and people, pairwise preferences, anchors and the judge card.
struct Judging {
    /// Each section with its conversations' overall scores (for the claims).
    scored: Vec<(model::JudgeSection, std::collections::HashMap<usize, f64>)>,
    agreement: Vec<model::AgreementSection>,
    check_agreement: Vec<model::CheckAgreement>,
    human_agreement: Option<Vec<model::HumanAgreementSection>>,
    pairwise: Vec<model::PairwiseSection>,
    anchors: Vec<model::AnchorSection>,
    judge_card: Vec<model::JudgeCard>,
}

fn judging(
    facts: &load::Facts,
    attempted: &[u64],
    reads: &JudgingRead,
    opts: &ReportOptions,
) -> Judging {
    let scored = judges::sections(facts, attempted);
    let pairwise = pairwise::sections(&reads.pairwise, facts, &opts.judgments, opts.bootstrap.seed);
    let anchors = anchor_check::sections(&reads.anchors);
    let human_agreement = human_agreement::sections(facts, &opts.bootstrap);
    let judge_card = judge_card::cards(
        facts,
        &judge_card::CardInputs {
            scored: &scored,
            pairwise: &pairwise,
            anchors: &anchors,
            anchor_rows: &reads.anchors,
            families: &reads.families,
            human: human_agreement.as_deref(),
        },
    );
    Judging {
        agreement: agreement::sections(facts, &reads.variation, &opts.bootstrap),
        check_agreement: check_agreement::sections(facts, &opts.bootstrap),
        scored,
        human_agreement,
        pairwise,
        anchors,
        judge_card,
    }
}

/// The headlines that state claims: every family of the cells' figures and judges, TTFT's
/// slope on prompt tokens, and goodput's under `--slo` (before the flags).
fn claims(
    facts: &load::Facts,
    by_cell: &[Vec<usize>],
    cells: &[model::Cell],
    scored: &[(model::JudgeSection, std::collections::HashMap<usize, f64>)],
    (goodput, ttft_by_turn): (&[model::Goodput], &[model::TtftByTurn]),
    opts: &ReportOptions,
) -> Vec<model::Headline> {
    let scope = headlines::Scope {
        across_models: opts.across_models,
        margins: opts.margins,
    };
    let slots = headlines::cell_slots(facts, by_cell);
    let on = headlines::ClaimInputs {
        facts,
        slots: &slots,
        cells,
        seed: opts.bootstrap.seed,
    };
    // The cells' and judges' families beside TTFT's slope and goodput (each seeded by its
    // key: the split cannot change a figure).
    let (mut out, more) = rayon::join(
        || headlines::headlines(&on, by_cell, scored, &scope),
        || {
            let slope = |i: usize| ttft_by_turn::conversation_slope(facts, i);
            let mut more = headlines::ttft_slope(&on, ttft_by_turn, &slope);
            if let Some(slo) = opts.slo.filter(|s| s.any()) {
                let share = |i: usize| goodput::conversation_share(facts, i, &slo);
                more.extend(headlines::goodput(&on, goodput, &share));
            }
            more
        },
    );
    headlines::before_flags(&mut out, more);
    out
}

/// The options a report cannot be built with: no store, or an SLA that is no duration.
fn check_options(db: &Path, opts: &ReportOptions) -> Result<(), ReportError> {
    if !db.exists() {
        return Err(ReportError::NoStore(db.to_path_buf()));
    }
    if let Some(sla) = opts.sla_ms
        && !(sla.is_finite() && sla > 0.0)
    {
        return Err(ReportError::BadSla(sla));
    }
    Ok(())
}

/// The runs `--runs`, `--since`, `--last` and the baseline options choose; `None`: the
/// default selection.
fn choose_runs(
    conn: &rusqlite::Connection,
    opts: &ReportOptions,
) -> Result<Option<window::Chosen>, ReportError> {
    if opts.runs.is_default() {
        return Ok(None);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let all = crate::store::facts::run_rows(conn)?;
    Ok(Some(window::choose(
        &all,
        opts.filter.run.as_deref(),
        &opts.runs,
        now,
    )?))
}

/// A selection of replayed agent sessions only: checks and the judge never score those.
fn only_replay(replay: Option<&replay::ReplaySection>, facts: &load::Facts) -> bool {
    let replayed: u64 = replay
        .iter()
        .flat_map(|r| &r.cells)
        .map(|c| c.reliability.passes)
        .sum();
    replayed > 0 && replayed as usize >= facts.convs.len()
}

/// Every judge whose scores this report shows: flagged when it failed its anchors,
/// noted when it never ran them.
fn anchor_flags(
    judge_sections: &[model::JudgeSection],
    pairwise: &[model::PairwiseSection],
    anchor_sections: &[model::AnchorSection],
    headlines: &mut Vec<model::Headline>,
    notes: &mut Vec<String>,
) {
    let used: BTreeSet<(&str, &str, bool)> = judge_sections
        .iter()
        .map(|j| (j.rubric.as_str(), j.judge.as_str(), j.simulated))
        .chain(
            pairwise
                .iter()
                .map(|p| (p.rubric.as_str(), p.judge.as_str(), p.simulated)),
        )
        .collect();
    for (rubric, judge, simulated) in &used {
        let found = anchor_sections
            .iter()
            .find(|a| a.rubric == *rubric && a.judge == *judge && a.simulated == *simulated);
        match found {
            Some(a) if !a.passed => headlines.push(model::Headline {
                kind: model::HeadlineKind::Flag,
                model: None,
                text: String::new(),
                said: model::Said::Anchors(a.clone()),
                established: None,
                simulated: a.simulated,
                family: None,
            }),
            Some(_) => {}
            None => notes.push(format!(
                "judge {judge} on {rubric} has no reference-anchor check: run `turnbench judge --judge JUDGE.toml --rubric RUBRIC.toml --anchors`"
            )),
        }
    }
}

/// What the report was built from and how: store, runs, filters, counts, settings.
fn meta(
    store: String,
    generated_at: String,
    opts: &ReportOptions,
    facts: &load::Facts,
    report_cells: &[model::Cell],
) -> Meta {
    let labels: BTreeSet<&str> = report_cells.iter().map(|c| c.model.as_str()).collect();
    let providers: BTreeSet<&str> = report_cells.iter().map(|c| c.provider.as_str()).collect();
    Meta {
        store,
        generated_at,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        runs: facts
            .runs
            .iter()
            .map(|run| crate::store::facts::RunFact {
                definitions: run
                    .definitions
                    .as_deref()
                    .map(|d| crate::config::embedded::describe(std::path::Path::new(d))),
                ..run.clone()
            })
            .collect(),
        filters: Filters {
            run: opts.filter.run.clone(),
            provider: opts.filter.provider.clone(),
            model: opts.filter.label.clone(),
            scenario: opts.filter.scenario.clone(),
            rubric: opts.judgments.rubric.clone(),
            judge: opts.judgments.judge.clone(),
            collector: opts.runs.collectors.clone(),
        },
        scenarios: facts.scenarios.len(),
        providers: providers.len(),
        models: labels.len(),
        check_definitions: facts.checks.definitions.len(),
        sla_ms: opts.sla_ms,
        bootstrap: BootstrapInfo {
            resamples: opts.bootstrap.resamples,
            seed: opts.bootstrap.seed,
            level: opts.bootstrap.level,
        },
        percentiles: "linear interpolation between closest ranks (NumPy's default)",
        simulated_providers: report_cells.iter().any(|c| c.simulated),
    }
}

/// Check pass rates by tag: the tags some cell has, and each cell's figures.
fn checks_section(facts: &load::Facts, report_cells: &[model::Cell]) -> ChecksSection {
    ChecksSection {
        tags: facts
            .checks
            .tags
            .iter()
            .filter(|t| {
                report_cells
                    .iter()
                    .any(|c| c.checks.by_tag.contains_key(*t))
            })
            .cloned()
            .collect(),
        cells: report_cells.iter().map(|c| c.checks.clone()).collect(),
    }
}

/// The flag that says the figures are simulated, when any are.
fn simulated_flag(report_cells: &[model::Cell]) -> Option<model::Headline> {
    if !report_cells.iter().any(|c| c.simulated) {
        return None;
    }
    Some(model::Headline {
        kind: model::HeadlineKind::Flag,
        model: None,
        text: String::new(),
        said: model::Said::Simulated {
            all: report_cells.iter().all(|c| c.simulated),
        },
        established: None,
        simulated: true,
        family: None,
    })
}

/// The selected runs and the baseline's, read together, when the runs chosen have a
/// baseline.
fn read_baseline(
    db: &Path,
    conn: &rusqlite::Connection,
    filter: &FactFilter,
    opts: &ReportOptions,
    chosen: Option<&window::Chosen>,
) -> Result<Option<BaselineFacts>, ReportError> {
    let Some((selected, (baseline, name))) =
        chosen.and_then(|c| Some((c.selected.as_ref()?, c.baseline.as_ref()?)))
    else {
        return Ok(None);
    };
    let mut both = filter.clone();
    both.run = None;
    both.run_ids = Some(selected.iter().chain(baseline).copied().collect());
    let sel = Selection::resolve(conn, &both)?;
    let (facts, _) = load::load(db, conn, &sel, &opts.judgments, false)?;
    let mut by_id: std::collections::HashMap<i64, Option<String>> =
        std::collections::HashMap::new();
    crate::store::facts::scenario_versions(conn, &sel, |id, v| {
        by_id.insert(id, v);
    })?;
    let mut names: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    let versions: Vec<Option<u32>> = facts
        .convs
        .iter()
        .map(|c| {
            let v = by_id.get(&c.id)?.clone()?;
            let next = u32::try_from(names.len()).unwrap_or(u32::MAX);
            Some(*names.entry(v).or_insert(next))
        })
        .collect();
    Ok(Some(BaselineFacts {
        facts,
        versions,
        selected: selected.clone(),
        baseline: baseline.clone(),
        baseline_name: name.clone(),
    }))
}

/// The selected runs against the baseline's: facts over both, split by run.
fn comparison(
    b: &BaselineFacts,
    opts: &ReportOptions,
) -> (model::Comparison, Vec<model::Headline>) {
    let attempted: Vec<u64> = cells::conversations_by_cell(&b.facts)
        .iter()
        .map(|c| c.len() as u64)
        .collect();
    let scored = judges::sections(&b.facts, &attempted);
    let name = |ids: &[i64]| {
        if ids.len() == 1 {
            format!("run {}", window::join_ids(ids))
        } else {
            format!("runs {}", window::join_ids(ids))
        }
    };
    let sides = compare::Sides {
        facts: &b.facts,
        versions: b.versions.clone(),
        selected: &b.selected,
        baseline: &b.baseline,
        selected_name: name(&b.selected),
        baseline_name: b.baseline_name.clone(),
        judges: &scored,
    };
    compare::compare(&sides, opts.bootstrap.seed)
}

/// What each section lacks, and the command that fills it.
fn notes(
    judged: &(Vec<String>, Vec<String>),
    facts: &load::Facts,
    cells: &[model::Cell],
    judges: &[model::JudgeSection],
    only_replay: bool,
    opts: &ReportOptions,
) -> Vec<String> {
    let mut notes = Vec::new();
    if facts.convs.is_empty() {
        let filtered = opts.filter != FactFilter::default();
        notes.push(if filtered {
            "no conversations match these filters: drop or change --run / --provider / --model / --scenario".to_string()
        } else {
            "the store holds no conversations yet: run `turnbench run`, `turnbench collect`, or `turnbench import FILE`".to_string()
        });
        return notes;
    }
    let timed = cells.iter().any(|c| c.turns.e2e.n > 0);
    if !timed {
        notes.push(
            "no timings stored (transcripts imported without timing): latency figures are empty, not zero".into(),
        );
    } else {
        for c in cells.iter().filter(|c| c.turns.e2e.n == 0) {
            notes.push(format!(
                "{} / {}: no timings stored, or no completed conversation: its latency figures are empty",
                c.provider, c.model
            ));
        }
    }
    if only_replay {
        notes.push(
            "replayed agent sessions only: checks and the judge do not score them (see docs/replay.md)"
                .into(),
        );
    } else {
        if facts.checks.definitions.is_empty() {
            notes.push("no check results yet: run `turnbench check`".into());
        } else {
            let unchecked: u64 = cells.iter().map(|c| c.checks.unchecked_conversations).sum();
            if unchecked > 0 {
                notes.push(format!(
                "{unchecked} conversations have no results for the current check definitions yet: run `turnbench check`"
            ));
            }
            if cells.iter().all(|c| c.checks.pass.n == 0) {
                notes.push(
                "no selected conversation has a scenario with checks: check pass rates are empty"
                    .into(),
            );
            }
        }
        if judges.is_empty() {
            let (rubrics, judge_ids) = judged;
            notes.push(match (&opts.judgments.rubric, &opts.judgments.judge) {
            (Some(r), _) if !rubrics.contains(r) => format!(
                "no judgments for rubric {r} yet: run `turnbench judge --judge JUDGE.toml --rubric rubrics/{r}.toml`"
            ),
            (_, Some(j)) if !judge_ids.contains(j) => format!(
                "no judgments by judge {j} yet: run `turnbench judge --judge judges/{j}.toml --rubric RUBRIC.toml`"
            ),
            _ if rubrics.is_empty() => "no judgments yet: run `turnbench judge --judge judges/mock.toml --rubric rubrics/multiturn-quality.toml` (simulated) or with your own judge".to_string(),
            _ => "no current judgments for the selected conversations: run `turnbench judge` on them".to_string(),
        });
        } else {
            let unscored: u64 = judges
                .iter()
                .flat_map(|s| &s.cells)
                .map(|c| c.unparseable + c.judge_errors)
                .sum();
            if unscored > 0 {
                notes.push(format!(
                "{unscored} judgments are unscored (unparseable or judge errors): a plain `turnbench judge` re-run asks again"
            ));
            }
        }
    }
    let internal: u64 = cells.iter().map(|c| c.reliability.internal_errors).sum();
    if internal > 0 {
        notes.push(format!(
            "{internal} conversations ended by turnbench's own failure (internal_error), not the provider's: they are in no denominator (docs/reliability.md)"
        ));
    }
    if facts.uncounted > 0 {
        notes.push(format!(
            "answers without a stored visible-token count: {} (rows written by other means than turnbench); missing from the visible-token medians, never 0",
            facts.uncounted
        ));
    }
    if cells.iter().all(|c| c.cache.turns_reported == 0) {
        notes.push("cache: no provider reported cached tokens (\"not reported\", not 0 %)".into());
    }
    if cells.iter().all(|c| !c.cost.priced) {
        notes.push("cost: no prices in the run settings (add `price = {input, cached, output}` to a target, USD per million tokens)".into());
    }
    notes
}

/// The section: one entry per cell × tag with any turn verdict, in the report's cell order
/// (model label, then provider), tags in the report's tag order.
fn constraint_survival(facts: &load::Facts) -> Vec<survival::ConstraintSurvival> {
    facts
        .checks
        .turn_tallies
        .iter()
        .filter_map(|(&(cell, tag), t)| {
            let key = facts.cells.get(cell)?;
            Some(survival::ConstraintSurvival {
                label: key.label.clone(),
                provider: key.provider.clone(),
                tag: facts.checks.tags.get(tag)?.clone(),
                simulated: key.simulated,
                turns: t.turns(),
                forgetting: t.forgetting(),
                recovery: t.recovery(),
                survival: t.survival(),
            })
        })
        .collect()
}
