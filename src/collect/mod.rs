//! `turnbench collect`: every target × scenario × repeat, stored once in SQLite.
//!
//! Workers only measure; the store writer thread owns the connection and writes each
//! conversation whole as it ends. Ctrl-C once: no new conversation or turn starts, turns
//! in flight finish. Twice: turns in flight are recorded as interrupted. Either way,
//! everything finished is flushed; `--resume` reruns only what is missing.

mod conversation;
mod dry_run;
pub mod schedule;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, Semaphore, watch};

use crate::client::{Client, Endpoint};
use crate::config::{BenchConfig, ConfigError, RetryPolicy, Scenario};
use crate::store::read::{TargetSummary, finished_slots, latest_run, run_summary};
use crate::store::write::{
    NewRun, NewTarget, finish_run, insert_run, upsert_scenario, upsert_target,
};
use crate::store::{ConversationRecord, StoreError, StoreWriter};
pub use dry_run::format_plan;
use schedule::{Job, queues};

#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Setup(String),
}

pub struct CollectOptions {
    pub db: PathBuf,
    pub resume: bool,
    pub quiet: bool,
}

/// What a collect run did.
#[derive(Debug)]
pub struct CollectReport {
    pub run_id: i64,
    pub launched: usize,
    pub skipped: usize,
    pub interrupted: bool,
    pub summary: Vec<TargetSummary>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Run,
    /// Start nothing new; let turns in flight finish.
    Drain,
    /// Record turns in flight as interrupted.
    Abort,
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
    let all = Scenario::load_dir(&cfg.scenarios_dir)?;
    let Some(only) = &cfg.only else {
        if all.is_empty() {
            return Err(CollectError::Setup(format!(
                "{}: no scenario files (*.toml)\n  fix: set `scenarios` in the bench file to a folder of scenarios",
                cfg.scenarios_dir.display()
            )));
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
    mut interrupts: tokio::sync::mpsc::Receiver<()>,
) -> Result<CollectReport, CollectError> {
    let conn = crate::store::open(&opts.db)?;
    let settings = serde_json::json!({
        "bench": stable_settings(cfg),
        "scenarios": scenarios.iter().map(|s| (&s.id, &s.hash)).collect::<Vec<_>>(),
    })
    .to_string();
    let settings_hash = blake3::hash(settings.as_bytes()).to_hex()[..16].to_string();

    let run_id = if opts.resume {
        match latest_run(&conn, &cfg.name)? {
            Some((id, hash)) if hash == settings_hash => id,
            Some((id, _)) => {
                return Err(CollectError::Setup(format!(
                    "--resume: run {id} ({:?}) was collected with other settings or scenarios\n  fix: restore them, or collect under a new `name`",
                    cfg.name
                )));
            }
            None => {
                return Err(CollectError::Setup(format!(
                    "--resume: {} has no run named {:?}\n  fix: drop --resume to start it",
                    opts.db.display(),
                    cfg.name
                )));
            }
        }
    } else {
        insert_run(
            &conn,
            &NewRun {
                name: &cfg.name,
                source: "collect",
                seed: Some(cfg.seed),
                settings_json: &settings,
            },
        )?
    };
    let mut target_ids = Vec::new();
    for t in &cfg.targets {
        let params = serde_json::json!({
            "request": t.request,
            "header_names": t.headers.keys().collect::<Vec<_>>(),
        })
        .to_string();
        let prices = t.price.map(|p| serde_json::to_string(&p).expect("prices"));
        target_ids.push(upsert_target(
            &conn,
            &NewTarget {
                provider: &t.provider,
                model: &t.model,
                label: &t.label,
                host: Some(&t.host()),
                params_json: &params,
                prices_json: prices.as_deref(),
            },
        )?);
    }
    let scenario_ids = scenarios
        .iter()
        .map(|s| upsert_scenario(&conn, s))
        .collect::<Result<Vec<_>, _>>()?;
    let done = finished_slots(&conn, run_id)?;

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
        q.reverse(); // pop() takes from the front of the original order
    }
    let to_run: usize = pending.iter().map(Vec::len).sum();

    // Loaded before the first request so it never lands inside a timed turn.
    tokio::task::spawn_blocking(crate::tokens::warm_up)
        .await
        .map_err(|e| CollectError::Setup(format!("tokenizer: {e}")))?;
    let client = Client::new().map_err(|e| CollectError::Setup(format!("HTTP client: {e}")))?;
    let endpoints: Vec<Arc<Endpoint>> = cfg
        .targets
        .iter()
        .map(|t| Arc::new(Endpoint::for_target(t)))
        .collect();
    let ctx = Arc::new(RunContext {
        run_id,
        seed: cfg.seed,
        pause_scale: cfg.pause_scale,
        timeout: Duration::from_secs_f64(cfg.turn_timeout_s),
        retry: cfg.retry.clone(),
        client,
        scenarios,
        scenario_ids,
        target_ids,
    });

    let writer = StoreWriter::<ConversationRecord>::spawn(conn);
    let sink = writer.sender();
    let progress = crate::progress::bar(to_run as u64, !opts.quiet, "conversations");
    let (stop_tx, stop_rx) = watch::channel(Stop::Run);
    let stop_tx = Arc::new(stop_tx);
    let signal_task = {
        let stop_tx = stop_tx.clone();
        let progress = progress.clone();
        let quiet = opts.quiet;
        tokio::spawn(async move {
            if interrupts.recv().await.is_some() {
                let note = "interrupt: finishing turns in flight (Ctrl-C again to stop them now)";
                // A hidden bar prints nothing: say it plainly unless asked to be quiet.
                if !progress.is_hidden() {
                    progress.println(note);
                } else if !quiet {
                    eprintln!("{note}");
                }
                let _ = stop_tx.send(Stop::Drain);
            }
            if interrupts.recv().await.is_some() {
                let _ = stop_tx.send(Stop::Abort);
            }
        })
    };

    let global = Arc::new(Semaphore::new(cfg.concurrency));
    let per_target: Vec<_> = cfg
        .targets
        .iter()
        .map(|_| Arc::new(Semaphore::new(cfg.per_target_concurrency)))
        .collect();
    let freed = Arc::new(Notify::new());
    let mut tasks = tokio::task::JoinSet::new();
    let mut cursor = 0;
    let mut launched = 0;
    'launch: while pending.iter().any(|q| !q.is_empty()) {
        let global_permit = tokio::select! {
            p = global.clone().acquire_owned() => p.expect("semaphore open"),
            _ = stopped(stop_rx.clone()) => break 'launch,
        };
        let (job, target_permit) = loop {
            if *stop_rx.borrow() != Stop::Run {
                break 'launch;
            }
            let n = pending.len();
            let found = (0..n).map(|k| (cursor + k) % n).find_map(|i| {
                if pending[i].is_empty() {
                    return None;
                }
                let permit = per_target[i].clone().try_acquire_owned().ok()?;
                Some((i, permit))
            });
            if let Some((i, permit)) = found {
                cursor = (i + 1) % n;
                let job: Job = pending[i].pop().expect("non-empty queue");
                break (job, permit);
            }
            tokio::select! {
                _ = freed.notified() => {}
                _ = stopped(stop_rx.clone()) => break 'launch,
            }
        };
        launched += 1;
        let (ctx, sink, progress, freed) =
            (ctx.clone(), sink.clone(), progress.clone(), freed.clone());
        let endpoint = endpoints[job.target].clone();
        let stop = stop_rx.clone();
        let stop_tx = stop_tx.clone();
        tasks.spawn(async move {
            let record = conversation::run_conversation(ctx, job, endpoint, stop).await;
            progress.set_message(format!("last: {}", record.outcome));
            if sink.send(record).await.is_err() {
                // The writer failed (its error is returned below): measuring on would be
                // work that can never be stored.
                let _ = stop_tx.send(Stop::Abort);
            }
            progress.inc(1);
            drop((global_permit, target_permit));
            freed.notify_one();
        });
    }
    while tasks.join_next().await.is_some() {}
    signal_task.abort();
    progress.finish_and_clear();
    drop(sink);
    let interrupted = *stop_rx.borrow() != Stop::Run;
    let (conn, _) = writer.finish()?;
    if !interrupted {
        finish_run(&conn, run_id)?;
    }
    Ok(CollectReport {
        run_id,
        launched,
        skipped: total - to_run,
        interrupted,
        summary: run_summary(&conn, run_id)?,
    })
}

/// The config as stored with the run: each target's `stable_url`, when it has one, in
/// place of its address.
fn stable_settings(cfg: &BenchConfig) -> BenchConfig {
    let mut cfg = cfg.clone();
    for t in &mut cfg.targets {
        if let Some(url) = &t.stable_url {
            t.base_url = url.clone();
        }
    }
    cfg
}

async fn stopped(mut rx: watch::Receiver<Stop>) {
    let _ = rx.wait_for(|s| *s != Stop::Run).await;
}

/// The closing summary: attempted, completed and failures by class, per target.
pub fn format_summary(summary: &[TargetSummary]) -> String {
    let mut out =
        String::from("target                                   attempted  completed  failures\n");
    for s in summary {
        let failures: Vec<String> = s
            .by_outcome
            .iter()
            .filter(|(o, _)| o.as_str() != "completed")
            .map(|(o, n)| format!("{o} {n}"))
            .collect();
        let name = format!("{} / {}", s.provider, s.label);
        out.push_str(&format!(
            "{name:<40} {:>10} {:>10}  {}\n",
            s.attempted(),
            s.completed(),
            if failures.is_empty() {
                "-".to_string()
            } else {
                failures.join(", ")
            }
        ));
    }
    out
}
