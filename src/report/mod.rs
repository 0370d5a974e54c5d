//! `turnbench report`: quality joined with latency and reliability per provider × model
//! label, with the statistics a reader needs to tell which differences are real.
//!
//! - [`load`]: the read model's views (`db/004_read_model.sql`) into compact facts.
//! - [`cells`]: per-cell figures: reliability, latency, per-turn, usable, checks, cache,
//!   cost, flags.
//! - [`judges`]: judge means per rubric × judge × cell.
//! - [`headlines`]: the sentences a reader decides from.
//! - [`model`]: the report as data; `crate::export` formats it.
//!
//! The report computes; it never formats (exporters do) and never writes to the store.
//! Statistics come from `crate::stats`; every definition is in `docs/metrics.md`.

pub mod cells;
pub mod headlines;
mod judges;
mod load;
pub mod model;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::stats::Bootstrap;
use crate::store::StoreError;
use crate::store::facts::{FactFilter, JudgmentFilter, Selection, judged_rubrics_and_judges};
use model::{
    BootstrapInfo, ChecksSection, ConversationChecks, ConversationJudgment, ConversationRow,
    Filters, Meta, Report, RunCard, TurnRow,
};

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
}

/// Builds the report from the store at `db` (upgraded first if it is older than this
/// build; never created).
pub fn build(db: &Path, opts: &ReportOptions) -> Result<Report, ReportError> {
    if !db.exists() {
        return Err(ReportError::NoStore(db.to_path_buf()));
    }
    if let Some(sla) = opts.sla_ms
        && !(sla.is_finite() && sla > 0.0)
    {
        return Err(ReportError::BadSla(sla));
    }
    let conn = crate::store::open(db)?;
    let sel = Selection::resolve(&conn, &opts.filter)?;
    let facts = load::load(db, &conn, &sel, &opts.judgments)?;
    let by_cell = cells::conversations_by_cell(&facts);
    let cell_opts = cells::CellOptions {
        sla_ms: opts.sla_ms,
        bootstrap: opts.bootstrap,
    };
    let report_cells = cells::cells(&facts, &by_cell, &cell_opts);
    let judge_sections = judges::sections(&facts, &opts.bootstrap);
    let mut headlines = headlines::headlines(
        &facts,
        &by_cell,
        &report_cells,
        &judge_sections,
        &opts.bootstrap,
    );
    let notes = notes(&conn, &facts, &report_cells, &judge_sections, opts)?;
    if report_cells.iter().any(|c| c.simulated) {
        let which = if report_cells.iter().all(|c| c.simulated) {
            "every cell was"
        } else {
            "cells marked (simulated) were"
        };
        headlines.push(model::Headline {
            kind: model::HeadlineKind::Flag,
            model: None,
            text: format!(
                "simulated: {which} served by the built-in mock provider; these figures say \
                 nothing about any real provider"
            ),
            established: None,
            simulated: true,
            comparison: None,
        });
    }
    let checks = ChecksSection {
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
    };
    let conversations = opts
        .with_conversations
        .then(|| conversation_rows(&facts, opts.sla_ms));
    let labels: BTreeSet<&str> = report_cells.iter().map(|c| c.model.as_str()).collect();
    let providers: BTreeSet<&str> = report_cells.iter().map(|c| c.provider.as_str()).collect();
    let meta = Meta {
        store: db.display().to_string(),
        generated_at: crate::store::now_rfc3339(),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        runs: facts
            .runs
            .iter()
            .map(|r| RunCard {
                id: r.id,
                name: r.name.clone(),
                source: r.source.clone(),
                seed: r.seed,
                settings_hash: r.settings_hash.clone(),
                tool_version: r.tool_version.clone(),
                tokenizer: r.tokenizer.clone(),
                started_at: r.started_at.clone(),
                ended_at: r.ended_at.clone(),
            })
            .collect(),
        filters: Filters {
            run: opts.filter.run.clone(),
            provider: opts.filter.provider.clone(),
            model: opts.filter.label.clone(),
            scenario: opts.filter.scenario.clone(),
            rubric: opts.judgments.rubric.clone(),
            judge: opts.judgments.judge.clone(),
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
    };
    Ok(Report {
        schema: model::SCHEMA,
        meta,
        headlines,
        cells: report_cells,
        checks,
        judges: judge_sections,
        notes,
        conversations,
    })
}

/// What each section lacks, and the command that fills it.
fn notes(
    conn: &rusqlite::Connection,
    facts: &load::Facts,
    cells: &[model::Cell],
    judges: &[model::JudgeSection],
    opts: &ReportOptions,
) -> Result<Vec<String>, ReportError> {
    let mut notes = Vec::new();
    if facts.convs.is_empty() {
        let filtered = opts.filter != FactFilter::default();
        notes.push(if filtered {
            "no conversations match these filters: drop or change --run / --provider / --model / --scenario".to_string()
        } else {
            "the store holds no conversations yet: run `turnbench run`, `turnbench collect`, or `turnbench import FILE`".to_string()
        });
        return Ok(notes);
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
        let (rubrics, judge_ids) = judged_rubrics_and_judges(conn)?;
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
    if facts.counted_now > 0 {
        notes.push(format!(
            "{} answers had no stored visible-token count (imports) and were counted now with o200k_base",
            facts.counted_now
        ));
    }
    if cells.iter().all(|c| c.cache.turns_reported == 0) {
        notes.push("cache: no provider reported cached tokens (\"not reported\", not 0 %)".into());
    }
    if cells.iter().all(|c| !c.cost.priced) {
        notes.push("cost: no prices in the run settings (add `price = {input, cached, output}` to a target, USD per million tokens)".into());
    }
    Ok(notes)
}

fn conversation_rows(facts: &load::Facts, sla_ms: Option<f64>) -> Vec<ConversationRow> {
    let judgments_of = {
        let mut by_conv: Vec<Vec<&load::Judgment>> = vec![Vec::new(); facts.convs.len()];
        for j in &facts.judges.judgments {
            by_conv[j.conv].push(j);
        }
        by_conv
    };
    facts
        .convs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let cell = &facts.cells[c.cell];
            let turns = &facts.turns[c.first_turn..c.first_turn + c.n_turns];
            let known = |v: f64| v.is_finite().then_some(v);
            ConversationRow {
                id: c.id,
                uid: c.uid.clone(),
                run_id: c.run_id,
                provider: cell.provider.clone(),
                model: cell.label.clone(),
                scenario: c.scenario.map(|s| facts.scenarios[s].clone()),
                repeat: c.repeat,
                outcome: c.outcome.to_string(),
                latency_ms: known(c.latency_ms),
                turns: turns
                    .iter()
                    .map(|t| TurnRow {
                        outcome: t.outcome.to_string(),
                        finish_reason: t.finish.as_str().map(str::to_string),
                        ttft_ms: known(t.ttft),
                        ttfa_ms: known(t.ttfa),
                        e2e_ms: known(t.e2e),
                        usable: cells::is_usable(t, sla_ms),
                    })
                    .collect(),
                checks: facts.checks.per_conv[i]
                    .as_ref()
                    .map(|k| ConversationChecks {
                        passed: u64::from(k.passed),
                        failed: u64::from(k.failed),
                        not_scored: u64::from(k.not_scored),
                        failed_checks: k
                            .failed_defs
                            .iter()
                            .filter_map(|d| facts.checks.definitions.get(d))
                            .map(|d| d.check_id.clone())
                            .collect(),
                    }),
                judgments: judgments_of[i]
                    .iter()
                    .map(|j| {
                        let key = &facts.judges.sections[j.section];
                        ConversationJudgment {
                            rubric: key.rubric.clone(),
                            judge: key.judge.clone(),
                            simulated: key.simulated,
                            replicate: j.replicate,
                            status: match j.status {
                                load::JudgmentStatus::Ok => "ok",
                                load::JudgmentStatus::Unparseable => "unparseable",
                                load::JudgmentStatus::JudgeError => "judge_error",
                            }
                            .to_string(),
                            scores: j
                                .scores
                                .iter()
                                .map(|(c, s)| (facts.judges.criteria[*c].clone(), *s))
                                .collect(),
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}
