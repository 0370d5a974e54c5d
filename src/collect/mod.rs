//! `turnbench collect`: every target × scenario × repeat, stored once in SQLite.
//!
//! Workers only measure; the store writer thread owns the connection and writes each
//! conversation whole as it ends. Ctrl-C once: no new conversation or turn starts, turns
//! in flight finish. Twice: turns in flight are recorded as interrupted. Either way,
//! everything finished is flushed; `--resume` reruns only what is missing.

mod conversation;
mod dry_run;
pub mod schedule;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::client::{Client, Endpoint};
use crate::config::{BenchConfig, ConfigError, RetryPolicy, Scenario};
pub use crate::launcher::Resume;
use crate::launcher::{
    Limits, PrepareError, ResumeError, close_run, drive, open_run, prepare_client, stable_settings,
    store_targets,
};
use crate::store::StoreError;
use crate::store::inserts::{NewRun, upsert_scenario};
use crate::store::read::{TargetSummary, finished_slots};
use crate::store::records::ConversationRecord;
pub use dry_run::format_plan;
use schedule::{Job, queues};

#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "{}: no scenario folder\n  fix: pass --scenarios DIR, or set `scenarios` in the bench file to a folder of scenarios (relative to it); without either, ./scenarios or the built-in scenarios are used",
        .0.display()
    )]
    NoScenarioFolder(PathBuf),
    #[error(
        "{}: no scenario files (*.toml)\n  fix: set `scenarios` in the bench file to a folder of scenarios",
        .0.display()
    )]
    NoScenarioFiles(PathBuf),
    #[error(transparent)]
    Resume(#[from] ResumeError),
    #[error(transparent)]
    Prepare(#[from] PrepareError),
}

pub struct CollectOptions {
    pub db: PathBuf,
    pub resume: Resume,
    pub quiet: bool,
    /// The label of this stage in a longer run (`[1/4 collect]`), shown on the bar.
    pub stage: Option<String>,
}

/// What a collect run did.
pub use crate::launcher::LaunchReport as CollectReport;

/// One conversation to run, with what it needs.
#[derive(Clone)]
struct Slot {
    job: Job,
    ctx: Arc<RunContext>,
    endpoint: Arc<Endpoint>,
}

/// Shared, read-only state of a run.
pub(crate) struct RunContext {
    pub run_id: i64,
    pub seed: u64,
    pub pause_scale: f64,
    pub timeout: Duration,
    pub retry: RetryPolicy,
    pub client: Client,
    pub scenarios: Vec<Scenario>,
    pub scenario_ids: Vec<i64>,
    pub target_ids: Vec<i64>,
}

/// Loads the scenarios a bench config names; an unknown id in `only` is an error.
pub fn load_scenarios(cfg: &BenchConfig) -> Result<Vec<Scenario>, CollectError> {
    if !crate::config::embedded::is_dir(&cfg.scenarios_dir) {
        return Err(CollectError::NoScenarioFolder(cfg.scenarios_dir.clone()));
    }
    let all = Scenario::load_dir(&cfg.scenarios_dir)?;
    let Some(only) = &cfg.only else {
        if all.is_empty() {
            return Err(CollectError::NoScenarioFiles(cfg.scenarios_dir.clone()));
        }
        return Ok(all);
    };
    let mut chosen = Vec::new();
    for id in only {
        match all.iter().find(|s| &s.id == id) {
            Some(s) => chosen.push(s.clone()),
            None => {
                let known: Vec<_> = all.iter().map(|s| s.id.as_str()).collect();
                let (path, line) = cfg.only_at.clone().unwrap_or_default();
                return Err(ConfigError::invalid(
                    &path,
                    line,
                    format!(
                        "unknown scenario {id:?} in `only` (not in {})",
                        cfg.scenarios_dir.display()
                    ),
                    format!("use one of: {}", known.join(", ")),
                )
                .into());
            }
        }
    }
    Ok(chosen)
}

/// Runs a whole collection. `stop_signal` resolves on each Ctrl-C (tests pass a channel).
pub async fn collect(
    cfg: &BenchConfig,
    scenarios: Vec<Scenario>,
    opts: &CollectOptions,
    interrupts: tokio::sync::mpsc::Receiver<()>,
) -> Result<CollectReport, CollectError> {
    let conn = crate::store::open(&opts.db)?;
    let _lock = crate::store::lock::RunLock::acquire(&opts.db, &format!("collect {:?}", cfg.name))?;
    let settings = settings_json(cfg, &scenarios);
    let new_run = NewRun {
        name: &cfg.name,
        source: "collect",
        seed: Some(cfg.seed),
        settings_json: &settings,
        tokenizer: Some(crate::tokens::TOKENIZER),
    };
    let run_id = open_run(&conn, &opts.db, &new_run, opts.resume, "collect")??;
    crate::store::inserts::set_collector(&conn, run_id, &cfg.collector_or_host())?;
    let target_ids = store_targets(&conn, cfg)?;
    let scenario_ids = scenarios
        .iter()
        .map(|s| upsert_scenario(&conn, s))
        .collect::<Result<Vec<_>, _>>()?;
    let done = finished_slots(&conn, run_id)?;
    let (pending, total) = pending_jobs(cfg, &scenarios, &target_ids, &done);
    let to_run: usize = pending.iter().map(Vec::len).sum();

    let ctx = Arc::new(RunContext {
        run_id,
        seed: cfg.seed,
        pause_scale: cfg.pause_scale,
        timeout: Duration::from_secs_f64(cfg.turn_timeout_s),
        retry: cfg.retry.clone(),
        client: prepare_client().await?,
        scenarios,
        scenario_ids,
        target_ids,
    });
    let progress = crate::progress::bar(
        to_run as u64,
        !opts.quiet,
        "conversations",
        opts.stage.as_deref(),
    );
    let driven = drive(
        conn,
        slots(cfg, pending, &ctx),
        Limits {
            total: cfg.concurrency,
            per_target: cfg.per_target_concurrency,
        },
        interrupts,
        progress,
        opts.quiet,
        |slot: Slot, stop| conversation::run_conversation(slot.ctx, slot.job, slot.endpoint, stop),
        |slot, message| conversation::internal_error(&slot.ctx, slot.job, message),
        |record| {
            (
                record.outcome.failure().is_some(),
                record.outcome.to_string(),
            )
        },
    )
    .await?;
    let store_failures = store_failures(cfg, &ctx.target_ids, &driven.written.failed);
    Ok(close_run(driven, run_id, total - to_run, store_failures)?)
}

/// The settings stored with the run: the bench (stable URLs) and each scenario's hash,
/// so that `--resume` refuses a run whose inputs changed.
fn settings_json(cfg: &BenchConfig, scenarios: &[Scenario]) -> String {
    serde_json::json!({
        "bench": stable_settings(cfg),
        "scenarios": scenarios.iter().map(|s| (&s.id, &s.hash)).collect::<Vec<_>>(),
    })
    .to_string()
}

/// Each target's queue of conversations not stored yet, and how many the run has in all.
fn pending_jobs(
    cfg: &BenchConfig,
    scenarios: &[Scenario],
    target_ids: &[i64],
    done: &HashSet<(i64, String, u32)>,
) -> (Vec<Vec<Job>>, usize) {
    let mut pending = queues(cfg.targets.len(), scenarios.len(), cfg.repeats);
    let total: usize = pending.iter().map(Vec::len).sum();
    for q in &mut pending {
        q.retain(|j| {
            !done.contains(&(
                target_ids[j.target],
                scenarios[j.scenario].id.clone(),
                j.repeat,
            ))
        });
    }
    (pending, total)
}

/// The jobs with what each needs to run: the run's context and its target's endpoint.
fn slots(cfg: &BenchConfig, pending: Vec<Vec<Job>>, ctx: &Arc<RunContext>) -> Vec<Vec<Slot>> {
    let endpoints: Vec<Arc<Endpoint>> = cfg
        .targets
        .iter()
        .map(|t| Arc::new(Endpoint::for_target(t)))
        .collect();
    pending
        .into_iter()
        .map(|q| {
            q.into_iter()
                .map(|job| Slot {
                    job,
                    ctx: ctx.clone(),
                    endpoint: endpoints[job.target].clone(),
                })
                .collect()
        })
        .collect()
}

/// One line per conversation the store refused, naming its target, scenario and repeat.
fn store_failures(
    cfg: &BenchConfig,
    target_ids: &[i64],
    failed: &[(ConversationRecord, StoreError)],
) -> Vec<String> {
    let names: HashMap<i64, String> = cfg
        .targets
        .iter()
        .zip(target_ids)
        .map(|(t, id)| (*id, format!("{} / {}", t.provider, t.label)))
        .collect();
    failed
        .iter()
        .map(|(c, e)| {
            format!(
                "{} · {} · repeat {} ({}; uid {}): not stored: {e}",
                names.get(&c.target_id).map_or("?", String::as_str),
                c.scenario.as_deref().unwrap_or("-"),
                c.repeat,
                c.outcome,
                c.uid
            )
        })
        .collect()
}

/// The closing summary per target: attempted; completed, split into clean ones and those
/// with a truncated or content-filtered answer; failed, by class.
pub fn format_summary(summary: &[TargetSummary]) -> String {
    let mut out = format!(
        "{:<36} {:>9} {:>9} {:>6} {:>9} {:>8} {:>6}  failures by class\n",
        "target", "attempted", "completed", "clean", "truncated", "filtered", "failed"
    );
    for s in summary {
        let failures: Vec<String> = s
            .by_outcome
            .iter()
            .filter(|(o, _)| !matches!(o.as_str(), "completed" | "interrupted"))
            .map(|(o, n)| format!("{o} {n}"))
            .collect();
        let name = format!("{} / {}", s.provider, s.label);
        let interrupted = s.by_outcome.get("interrupted").copied().unwrap_or(0);
        out.push_str(&format!(
            "{name:<36} {:>9} {:>9} {:>6} {:>9} {:>8} {:>6}  {}{}\n",
            s.attempted(),
            s.completed(),
            s.clean,
            s.truncated,
            s.filtered,
            s.failed(),
            if failures.is_empty() {
                "-".to_string()
            } else {
                failures.join(", ")
            },
            if interrupted > 0 {
                format!(" (+{interrupted} interrupted, not attempted)")
            } else {
                String::new()
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_scenario_folder_is_its_own_error_with_its_fix() {
        let dir = tempfile::tempdir().unwrap();
        let bench = dir.path().join("bench.toml");
        std::fs::write(
            &bench,
            "name = \"t\"\nscenarios = \"nowhere\"\n\n[[target]]\nprovider = \"p\"\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
        )
        .unwrap();
        let cfg = BenchConfig::load(&bench).unwrap();
        let err = load_scenarios(&cfg).unwrap_err();
        assert!(matches!(err, CollectError::NoScenarioFolder(_)), "{err}");
        assert!(
            err.to_string()
                .contains("nowhere: no scenario folder\n  fix: pass --scenarios DIR"),
            "{err}"
        );
    }

    #[test]
    fn truncated_and_filtered_are_apart_from_clean_completions() {
        let s = TargetSummary {
            provider: "acme".into(),
            label: "m".into(),
            by_outcome: [("completed".to_string(), 20), ("timeout".to_string(), 2)]
                .into_iter()
                .collect(),
            clean: 0,
            truncated: 20,
            filtered: 0,
        };
        let text = format_summary(&[s]);
        let row = text.lines().nth(1).unwrap();
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            &cols[3..10],
            ["22", "20", "0", "20", "0", "2", "timeout"],
            "{text}"
        );
    }
}
