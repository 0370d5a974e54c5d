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

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};

use crate::client::{Client, Endpoint};
use crate::config::{BenchConfig, ConfigError, RetryPolicy, Scenario};
use crate::store::read::{TargetSummary, finished_slots, latest_run, run_summary};
use crate::store::write::{
    NewRun, NewTarget, finish_run, insert_run, settings_hash, upsert_scenario, upsert_target,
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
    pub resume: Resume,
    pub quiet: bool,
    /// The label of this stage in a longer run (`[1/4 collect]`), shown on the bar.
    pub stage: Option<String>,
}

/// Whether a collect continues a stored run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// A new run.
    No,
    /// The newest run of this name; refused when its settings or scenarios differ.
    Yes,
    /// The newest run of this name when its settings and scenarios are these; else a new
    /// run (`turnbench run`: a re-run after a crash or Ctrl-C does no work twice).
    IfSame,
}

/// What a collect run did.
#[derive(Debug)]
pub struct CollectReport {
    pub run_id: i64,
    pub launched: usize,
    pub skipped: usize,
    pub interrupted: bool,
    pub summary: Vec<TargetSummary>,
    /// Conversations the store refused (a full disk, a constraint), one message each with
    /// the conversation's identity and the reason; the run stopped at the first.
    pub store_failures: Vec<String>,
}

impl CollectReport {
    /// Conversations of the run that ended in a failure (stored with its class).
    pub fn failed(&self) -> u64 {
        self.summary.iter().map(TargetSummary::failed).sum()
    }
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
    let settings_hash = settings_hash(&settings);

    let latest = match opts.resume {
        Resume::No => None,
        Resume::Yes | Resume::IfSame => latest_run(&conn, &cfg.name)?,
    };
    let run_id = if opts.resume == Resume::IfSame
        && let Some((id, hash)) = &latest
        && *hash == settings_hash
    {
        *id
    } else if opts.resume == Resume::Yes {
        match latest {
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
                tokenizer: Some(crate::tokens::TOKENIZER),
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
        // Three numbers: serialising them cannot fail.
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

    let writer = StoreWriter::<ConversationRecord>::spawn(conn)?;
    let sink = writer.sender();
    let progress = crate::progress::bar(
        to_run as u64,
        !opts.quiet,
        "conversations",
        opts.stage.as_deref(),
    );
    let failed_so_far = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let (stop_tx, stop_rx) = watch::channel(Stop::Run);
    let stop_tx = Arc::new(stop_tx);
    let say = {
        let progress = progress.clone();
        let quiet = opts.quiet;
        move |note: &str| {
            // A hidden bar prints nothing: say it plainly unless asked to be quiet.
            if !progress.is_hidden() {
                progress.println(note);
            } else if !quiet {
                eprintln!("{note}");
            }
        }
    };
    let signal_task = {
        let stop_tx = stop_tx.clone();
        let say = say.clone();
        tokio::spawn(async move {
            if interrupts.recv().await.is_some() {
                say("interrupt: finishing turns in flight (Ctrl-C again to stop them now)");
                let _ = stop_tx.send(Stop::Drain);
            }
            if interrupts.recv().await.is_some() {
                let _ = stop_tx.send(Stop::Abort);
            }
        })
    };
    // The store refused a conversation (a full disk, …): measuring on would be work that
    // may never be stored, so turns in flight stop now and nothing new starts.
    let store_watch = {
        let stop_tx = stop_tx.clone();
        let mut failed = writer.failed();
        tokio::spawn(async move {
            if failed.wait_for(|f| *f).await.is_ok() {
                say("store: a conversation could not be written; stopping the run");
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
            // The semaphore is never closed: acquiring fails only on a closed one.
            p = global.clone().acquire_owned() => p.expect("semaphore open"),
            _ = stopped(stop_rx.clone()) => break 'launch,
        };
        let (job, target_permit) = loop {
            if *stop_rx.borrow() != Stop::Run {
                break 'launch;
            }
            let n = pending.len();
            let found = (0..n).map(|k| (cursor + k) % n).find_map(|i| {
                let job = *pending[i].last()?;
                let permit = per_target[i].clone().try_acquire_owned().ok()?;
                pending[i].pop();
                Some((job, permit))
            });
            if let Some((job, permit)) = found {
                cursor = (job.target + 1) % n;
                break (job, permit);
            }
            tokio::select! {
                _ = freed.notified() => {}
                _ = stopped(stop_rx.clone()) => break 'launch,
            }
        };
        launched += 1;
        let slot = SlotGuard {
            permits: Some((global_permit, target_permit)),
            freed: freed.clone(),
        };
        let (ctx, sink, progress) = (ctx.clone(), sink.clone(), progress.clone());
        let failed_so_far = failed_so_far.clone();
        let endpoint = endpoints[job.target].clone();
        let stop = stop_rx.clone();
        tasks.spawn(async move {
            // Held to the end of the task, and dropped even if it panics: the slot is freed.
            let _slot = slot;
            let record = run_slot(ctx, job, endpoint, stop).await;
            let this = u64::from(record.outcome.failure().is_some());
            let failed = failed_so_far.fetch_add(this, std::sync::atomic::Ordering::Relaxed) + this;
            progress.set_message(format!("{failed} failed · last: {}", record.outcome));
            // A closed writer has already reported why; the store watch stops the run.
            let _ = sink.send(record).await;
            progress.inc(1);
        });
    }
    while let Some(joined) = tasks.join_next().await {
        if let Err(e) = joined {
            // run_slot catches panics; a task that still failed is reported, never silent.
            eprintln!("collect: a conversation task failed: {e}");
        }
    }
    signal_task.abort();
    store_watch.abort();
    progress.finish_and_clear();
    drop(sink);
    let written = writer.finish()?;
    let conn = written.conn;
    let names: std::collections::HashMap<i64, String> = cfg
        .targets
        .iter()
        .zip(&ctx.target_ids)
        .map(|(t, id)| (*id, format!("{} / {}", t.provider, t.label)))
        .collect();
    let store_failures: Vec<String> = written
        .failed
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
        .collect();
    let interrupted = *stop_rx.borrow() != Stop::Run && store_failures.is_empty();
    if !interrupted && store_failures.is_empty() {
        finish_run(&conn, run_id)?;
    }
    Ok(CollectReport {
        run_id,
        launched,
        skipped: total - to_run,
        interrupted,
        summary: run_summary(&conn, run_id)?,
        store_failures,
    })
}

/// A conversation's hold on its concurrency slots. Dropping it, however the task ends
/// (a panic included), releases the permits and then wakes the launcher.
struct SlotGuard {
    permits: Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)>,
    freed: Arc<Notify>,
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        // Release both permits before waking the launcher: woken first, it could find the
        // target's permit still held and wait for a wake-up that never comes.
        drop(self.permits.take());
        self.freed.notify_one();
    }
}

/// Runs one slot's conversation. A panic inside it (a bug) still yields a stored
/// conversation: failed, `internal_error`, with the message, so it is counted and the
/// exit code says so.
async fn run_slot(
    ctx: Arc<RunContext>,
    job: Job,
    endpoint: Arc<Endpoint>,
    stop: watch::Receiver<Stop>,
) -> ConversationRecord {
    caught(
        conversation::run_conversation(ctx.clone(), job, endpoint, stop),
        |message| conversation::internal_error(&ctx, job, message),
    )
    .await
}

/// Awaits `fut`; if it panics, returns `fallback(message)` instead.
async fn caught<T>(
    fut: impl std::future::Future<Output = T>,
    fallback: impl FnOnce(String) -> T,
) -> T {
    use futures_util::FutureExt;
    match std::panic::AssertUnwindSafe(fut).catch_unwind().await {
        Ok(v) => v,
        Err(panic) => fallback(crate::client::panic_message(panic.as_ref())),
    }
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

    #[tokio::test]
    async fn a_panicking_conversation_becomes_its_fallback_record() {
        let got = caught(async { panic!("boom at turn 2") }, |m| {
            format!("stored: {m}")
        })
        .await;
        assert_eq!(got, "stored: boom at turn 2");
        let got = caught(async { 7 }, |_| 0).await;
        assert_eq!(got, 7);
    }

    #[tokio::test]
    async fn a_slot_is_freed_even_when_its_task_panics() {
        let sem = Arc::new(Semaphore::new(1));
        let freed = Arc::new(Notify::new());
        let guard = SlotGuard {
            permits: Some((
                sem.clone().acquire_owned().await.unwrap(),
                Arc::new(Semaphore::new(1)).acquire_owned().await.unwrap(),
            )),
            freed: freed.clone(),
        };
        let task = tokio::spawn(async move {
            let _slot = guard;
            panic!("a bug");
        });
        assert!(task.await.is_err());
        tokio::time::timeout(std::time::Duration::from_secs(1), freed.notified())
            .await
            .expect("the launcher is woken");
        assert_eq!(sem.available_permits(), 1);
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
