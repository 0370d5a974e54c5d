//! What `collect` and `replay` share to run conversations against targets: one copy of
//! the run's resume rule, the targets' rows, the launcher (concurrency per run and per
//! target, queues taken in rotation), Ctrl-C (once: start nothing new, let turns in flight
//! finish; twice: record them as interrupted), the store writer and its watch (a refused
//! record stops the run), pauses that a stop cuts short, and a turn sent so that an abort
//! ends it as interrupted.
//!
//! The stages supply their jobs and how to run one; neither imports the other.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, mpsc, watch};

use crate::client::{Attempt, Client, Endpoint, Reply, TurnResult};
use crate::config::{BenchConfig, RetryPolicy, TargetConfig};
use crate::outcome::TurnOutcome;
use crate::store::inserts::{
    NewRun, NewTarget, finish_run, insert_run, settings_hash, upsert_target,
};
use crate::store::read::{TargetSummary, latest_run, run_summary};
use crate::store::{Storable, StoreError, StoreWriter, Written};

/// A stored conversation's uid: run, target, scenario (or session), repeat (or round), and
/// the nanosecond it was made, so that a slot redone after an interruption gets a new one.
pub fn conversation_uid(run_id: i64, target_id: i64, slot: &str, repeat: u32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!("{run_id}-{target_id}-{slot}-{repeat}-{nanos}")
}

/// What a collect or replay run did.
#[derive(Debug)]
pub struct LaunchReport {
    pub run_id: i64,
    /// Conversations (passes) started now.
    pub launched: usize,
    /// Slots already stored, not run again.
    pub skipped: usize,
    pub interrupted: bool,
    pub summary: Vec<TargetSummary>,
    /// Conversations the store refused (a full disk, a constraint), one message each with
    /// the conversation's identity and the reason; the run stopped at the first.
    pub store_failures: Vec<String>,
}

impl LaunchReport {
    /// Conversations of the run that ended in a failure (stored with its class).
    pub fn failed(&self) -> u64 {
        self.summary.iter().map(TargetSummary::failed).sum()
    }
}

/// Whether a run continues a stored one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// A new run.
    No,
    /// The newest run of this name; refused when its settings differ.
    Yes,
    /// The newest run of this name when its settings are these; else a new run
    /// (`turnbench run`: a re-run after a crash or Ctrl-C does no work twice).
    IfSame,
}

/// How a run's work should go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Run,
    /// Start nothing new; let turns in flight finish.
    Drain,
    /// Record turns in flight as interrupted.
    Abort,
}

/// Why a run cannot be continued as asked.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error(
        "--resume: run {id} ({name:?}) was run with other settings or inputs\n  fix: restore them, or {command} under a new `name`"
    )]
    OtherSettings {
        id: i64,
        name: String,
        command: String,
    },
    #[error("--resume: {} has no {command} run named {name:?}\n  fix: drop --resume to start it", db.display())]
    NoSuchRun {
        db: PathBuf,
        name: String,
        command: String,
    },
}

/// What must be ready before the first request, and was not.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    #[error("HTTP client: {0}")]
    Http(#[from] reqwest::Error),
}

/// The run to write into: the newest of this name and kind when resuming with the same
/// settings, else a new one. The inner `Err` says what the user should do.
pub fn open_run(
    conn: &rusqlite::Connection,
    db: &Path,
    new: &NewRun,
    resume: Resume,
    command: &str,
) -> Result<Result<i64, ResumeError>, StoreError> {
    let hash = settings_hash(new.settings_json);
    let latest = match resume {
        Resume::No => None,
        Resume::Yes | Resume::IfSame => latest_run(conn, new.name, command == "replay")?,
    };
    match (resume, latest) {
        (Resume::IfSame | Resume::Yes, Some((id, h))) if h == hash => return Ok(Ok(id)),
        (Resume::Yes, Some((id, _))) => {
            return Ok(Err(ResumeError::OtherSettings {
                id,
                name: new.name.to_string(),
                command: command.to_string(),
            }));
        }
        (Resume::Yes, None) => {
            return Ok(Err(ResumeError::NoSuchRun {
                db: db.to_path_buf(),
                name: new.name.to_string(),
                command: command.to_string(),
            }));
        }
        _ => {}
    }
    insert_run(conn, new).map(Ok)
}

/// The report of a driven run: finished in the store unless it was stopped or the store
/// refused a record (either way `--resume` completes it later).
pub fn close_run<R>(
    driven: Driven<R>,
    run_id: i64,
    skipped: usize,
    store_failures: Vec<String>,
) -> Result<LaunchReport, StoreError> {
    let interrupted = driven.stopped && store_failures.is_empty();
    let conn = driven.written.conn;
    if !interrupted && store_failures.is_empty() {
        finish_run(&conn, run_id)?;
    }
    Ok(LaunchReport {
        run_id,
        launched: driven.launched,
        skipped,
        interrupted,
        summary: run_summary(&conn, run_id)?,
        store_failures,
    })
}

/// The config as stored with a run: each target's `stable_url`, when it has one, in place
/// of its address.
pub fn stable_settings(cfg: &BenchConfig) -> BenchConfig {
    let mut cfg = cfg.clone();
    for t in &mut cfg.targets {
        if let Some(url) = &t.stable_url {
            t.base_url = url.clone();
        }
    }
    cfg
}

/// A `--dry-run`'s lines for one target: where it would send, whether its key variable is
/// set, its extra headers (names only, never a value or a key), then `body` (the first
/// request, `what` names it) indented.
pub fn describe_target(
    out: &mut String,
    t: &TargetConfig,
    endpoint: &Endpoint,
    command: &str,
    what: &str,
    body: &serde_json::Value,
) {
    use std::fmt::Write;
    let key = match &t.credentials.api_key_env {
        Some(var) if crate::config::headers::env_is_set(var) => format!("${var} (set)"),
        Some(var) => format!("${var} (NOT SET or empty: {command} will refuse to start)"),
        None => "none".to_string(),
    };
    let headers =
        crate::config::headers::describe(&t.credentials.headers, &t.credentials.headers_env);
    // A JSON value always serialises.
    let body = serde_json::to_string_pretty(body).expect("json");
    let _ = writeln!(
        out,
        "\ntarget {} / {} (model {})",
        t.provider, t.label, t.model
    );
    let _ = writeln!(out, "  POST {}", endpoint.url);
    let _ = writeln!(out, "  key {key}; extra headers: {headers}");
    if !t.credentials.url_secrets.is_empty() {
        let _ = writeln!(
            out,
            "  URL credentials: {}",
            t.credentials.url_secrets.describe()
        );
    }
    let _ = writeln!(out, "  {what}:");
    for line in body.lines() {
        let _ = writeln!(out, "    {line}");
    }
}

/// Every target's row id, in the config's order (created when new).
pub fn store_targets(
    conn: &rusqlite::Connection,
    cfg: &BenchConfig,
) -> Result<Vec<i64>, StoreError> {
    let mut ids = Vec::new();
    for t in &cfg.targets {
        let params = serde_json::json!({
            "request": t.request,
            "header_names": t.credentials.headers.keys().collect::<Vec<_>>(),
        })
        .to_string();
        // Three numbers: serialising them cannot fail.
        let prices = t.price.map(|p| serde_json::to_string(&p).expect("prices"));
        ids.push(upsert_target(
            conn,
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
    Ok(ids)
}

/// One HTTP client for the run and the tokenizer loaded, both before the first request
/// (so neither lands inside a timed turn).
pub async fn prepare_client() -> Result<Client, PrepareError> {
    tokio::task::spawn_blocking(crate::tokens::warm_up)
        .await
        .map_err(|e| PrepareError::Tokenizer(e.to_string()))?;
    Ok(Client::new()?)
}

/// Sleeps a pause (ms); a stop cuts it short.
pub async fn pause(ms: f64, stop: &mut watch::Receiver<Stop>) {
    if ms > 0.0 && ms.is_finite() {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)) => {}
            _ = stop.wait_for(|s| *s != Stop::Run) => {}
        }
    }
}

/// Sends one turn under the retry policy; an abort (Ctrl-C twice, or a store failure)
/// ends it as `interrupted` instead.
pub async fn send_turn<M: Serialize + Sync>(
    client: &Client,
    endpoint: &Endpoint,
    messages: &[M],
    timeout: Duration,
    retry: &RetryPolicy,
    turn_idx: u32,
    stop: &mut watch::Receiver<Stop>,
) -> (Reply, Vec<Attempt>) {
    let send = client.send_with_retries(endpoint, messages, timeout, retry, turn_idx);
    tokio::select! {
        r = send => r,
        _ = stop.wait_for(|s| *s == Stop::Abort) => {
            let reply = Reply { result: TurnResult { outcome: Some(TurnOutcome::Interrupted), error: Some("interrupted by the user while in flight".into()), attempts: 1, ..Default::default() }, ..Default::default() };
            (reply, Vec::new())
        }
    }
}

/// Concurrency limits of a run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// In flight over all targets.
    pub total: usize,
    /// In flight per target.
    pub per_target: usize,
}

/// What the launcher did: how many jobs it started, whether it was stopped, and the
/// writer's account (the connection back, refused records).
pub struct Driven<R> {
    pub launched: usize,
    pub stopped: bool,
    pub written: Written<R>,
}

/// Runs every job of `queues` (one queue per target, in order) with `run`, at most
/// `limits` at a time, taking from the queues in rotation so no target runs ahead; each
/// record goes to the store writer as soon as its job ends. A job that panics (a bug)
/// yields `fallback(job, message)`, so it is still stored and counted. `describe` gives
/// a record's (failed?, outcome) for the progress line.
#[allow(clippy::too_many_arguments)]
pub async fn drive<J, R, Run, Fut>(
    conn: rusqlite::Connection,
    queues: Vec<Vec<J>>,
    limits: Limits,
    interrupts: mpsc::Receiver<()>,
    progress: indicatif::ProgressBar,
    quiet: bool,
    run: Run,
    fallback: fn(&J, String) -> R,
    describe: fn(&R) -> (bool, String),
) -> Result<Driven<R>, StoreError>
where
    J: Clone + Send + Sync + 'static,
    R: Storable,
    Run: Fn(J, watch::Receiver<Stop>) -> Fut,
    Fut: Future<Output = R> + Send + 'static,
{
    let writer = StoreWriter::<R>::spawn(conn)?;
    let sink = writer.sender();
    let failed_so_far = Arc::new(AtomicU64::new(0));
    let (stop_tx, stop_rx) = watch::channel(Stop::Run);
    let stop_tx = Arc::new(stop_tx);
    let say = sayer(&progress, quiet);
    let signal_task = watch_interrupts(interrupts, stop_tx.clone(), say.clone());
    let store_watch = watch_store(writer.failed(), stop_tx, say);

    let mut launcher = Launcher::new(queues, limits, stop_rx.clone());
    let mut tasks = tokio::task::JoinSet::new();
    let mut launched = 0;
    while let Some((job, slot)) = launcher.next().await {
        launched += 1;
        let (sink, progress) = (sink.clone(), progress.clone());
        let failed_so_far = failed_so_far.clone();
        let work = run(job.clone(), stop_rx.clone());
        tasks.spawn(async move {
            // Held to the end of the task, and dropped even if it panics: the slot is freed.
            let _slot = slot;
            let record = caught(work, |message| fallback(&job, message)).await;
            let (failed, outcome) = describe(&record);
            let this = u64::from(failed);
            let failed = failed_so_far.fetch_add(this, Ordering::Relaxed) + this;
            progress.set_message(format!("{failed} failed · last: {outcome}"));
            // A closed writer has already reported why; the store watch stops the run.
            let _ = sink.send(record).await;
            progress.inc(1);
        });
        // Finished tasks are reaped as the run goes: each holds its future's whole
        // allocation until joined, which would make memory grow with the number of jobs.
        while let Some(joined) = tasks.try_join_next() {
            report_join(joined);
        }
    }
    while let Some(joined) = tasks.join_next().await {
        report_join(joined);
    }
    signal_task.abort();
    store_watch.abort();
    progress.finish_and_clear();
    drop(sink);
    let written = writer.finish()?;
    let stopped = *stop_rx.borrow() != Stop::Run;
    Ok(Driven {
        launched,
        stopped,
        written,
    })
}

/// Says a note on the bar's line, or plainly when the bar is hidden, unless asked to be
/// quiet.
fn sayer(progress: &indicatif::ProgressBar, quiet: bool) -> impl Fn(&str) + Clone + Send + 'static {
    let progress = progress.clone();
    move |note: &str| {
        if !progress.is_hidden() {
            progress.println(note);
        } else if !quiet {
            eprintln!("{note}");
        }
    }
}

/// Ctrl-C once drains the run; twice aborts it.
fn watch_interrupts(
    mut interrupts: mpsc::Receiver<()>,
    stop_tx: Arc<watch::Sender<Stop>>,
    say: impl Fn(&str) + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if interrupts.recv().await.is_some() {
            say("interrupt: finishing turns in flight (Ctrl-C again to stop them now)");
            let _ = stop_tx.send(Stop::Drain);
        }
        if interrupts.recv().await.is_some() {
            let _ = stop_tx.send(Stop::Abort);
        }
    })
}

/// The store refused a record (a full disk, …): measuring on would be work that may never
/// be stored, so turns in flight stop now and nothing new starts.
fn watch_store(
    mut failed: watch::Receiver<bool>,
    stop_tx: Arc<watch::Sender<Stop>>,
    say: impl Fn(&str) + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if failed.wait_for(|f| *f).await.is_ok() {
            say("store: a record could not be written; stopping the run");
            let _ = stop_tx.send(Stop::Abort);
        }
    })
}

/// Hands out the jobs of the queues in rotation, each with its slots under the limits.
struct Launcher<J> {
    /// Reversed, so that `pop()` takes from the front of each queue's order.
    queues: Vec<Vec<J>>,
    global: Arc<Semaphore>,
    per_target: Vec<Arc<Semaphore>>,
    freed: Arc<Notify>,
    cursor: usize,
    stop_rx: watch::Receiver<Stop>,
}

impl<J> Launcher<J> {
    fn new(mut queues: Vec<Vec<J>>, limits: Limits, stop_rx: watch::Receiver<Stop>) -> Self {
        for q in &mut queues {
            q.reverse();
        }
        let per_target = queues
            .iter()
            .map(|_| Arc::new(Semaphore::new(limits.per_target.max(1))))
            .collect();
        Launcher {
            queues,
            global: Arc::new(Semaphore::new(limits.total.max(1))),
            per_target,
            freed: Arc::new(Notify::new()),
            cursor: 0,
            stop_rx,
        }
    }

    /// The next job, from the first queue after the last one served whose target has a
    /// free slot, with its slots; `None` once every queue is empty or the run stops.
    async fn next(&mut self) -> Option<(J, SlotGuard)> {
        if self.queues.iter().all(Vec::is_empty) {
            return None;
        }
        let global_permit = tokio::select! {
            // The semaphore is never closed: acquiring fails only on a closed one.
            p = self.global.clone().acquire_owned() => p.expect("semaphore open"),
            _ = stopped(self.stop_rx.clone()) => return None,
        };
        loop {
            if *self.stop_rx.borrow() != Stop::Run {
                return None;
            }
            if let Some((job, target_permit)) = self.take_in_rotation() {
                let slot = SlotGuard {
                    permits: Some((global_permit, target_permit)),
                    freed: self.freed.clone(),
                };
                return Some((job, slot));
            }
            tokio::select! {
                _ = self.freed.notified() => {}
                _ = stopped(self.stop_rx.clone()) => return None,
            }
        }
    }

    /// A job from the first queue, from the cursor on, that has one and a free slot.
    fn take_in_rotation(&mut self) -> Option<(J, OwnedSemaphorePermit)> {
        let n = self.queues.len();
        let (queues, per_target) = (&mut self.queues, &self.per_target);
        let (i, job, permit) = (0..n).map(|k| (self.cursor + k) % n).find_map(|i| {
            queues[i].last()?;
            let permit = per_target[i].clone().try_acquire_owned().ok()?;
            let job = queues[i].pop()?;
            Some((i, job, permit))
        })?;
        self.cursor = (i + 1) % n;
        Some((job, permit))
    }
}

/// Jobs are caught; a task that still failed is reported, never silent.
fn report_join(joined: Result<(), tokio::task::JoinError>) {
    if let Err(e) = joined {
        eprintln!("a conversation task failed: {e}");
    }
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

/// Awaits `fut`; if it panics, returns `fallback(message)` instead.
pub async fn caught<T>(fut: impl Future<Output = T>, fallback: impl FnOnce(String) -> T) -> T {
    use futures_util::FutureExt;
    match std::panic::AssertUnwindSafe(fut).catch_unwind().await {
        Ok(v) => v,
        Err(panic) => fallback(crate::client::panic_message(panic.as_ref())),
    }
}

async fn stopped(mut rx: watch::Receiver<Stop>) {
    let _ = rx.wait_for(|s| *s != Stop::Run).await;
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
}
