//! `turnbench replay`: recorded agent sessions sent again, turn by turn, to every target
//! of a bench, on the driver `collect` runs on (`crate::launcher`: resume, concurrency,
//! Ctrl-C, the store writer) and with its client.
//!
//! Each (session, round, target) is one pass, stored as a conversation (scenario = the
//! session id, repeat = the round) with replay's own rows beside it (`store::replay`).
//! Sessions in flight per target: `sessions_in_flight`; over all targets: `concurrency`.

mod dry_run;
pub mod pass;
pub mod schedule;
pub mod session;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::client::{Client, Endpoint};
use crate::config::BenchConfig;
use crate::config::replay::ReplaySettings;
use crate::launcher::{
    Limits, PrepareError, Resume, ResumeError, close_run, drive, open_run, prepare_client,
    stable_settings, store_targets,
};
use crate::store::StoreError;
use crate::store::inserts::NewRun;
use crate::store::read::finished_slots;
use crate::store::replay::{NewReplayRun, insert_replay_run};
pub use dry_run::format_plan;
use pass::{PassJob, ReplayContext};
pub use session::{Session, SessionError, SessionIndex, read_sessions};

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Sessions(#[from] SessionError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The `[replay]` settings are out of range (the message names the field).
    #[error("{0}")]
    Settings(String),
    #[error(transparent)]
    Resume(#[from] ResumeError),
    #[error(transparent)]
    Prepare(#[from] PrepareError),
}

pub struct ReplayOptions {
    pub db: PathBuf,
    /// The sessions file, as the user named it (stored with the run).
    pub sessions_path: PathBuf,
    pub resume: Resume,
    pub quiet: bool,
    /// The providers' clock ÷ real time: 1 for real providers; the built-in mock's time
    /// scale, so that a break is bucketed by the length the simulated provider saw.
    pub clock_scale: f64,
}

/// What a replay run did.
pub use crate::launcher::LaunchReport as ReplayReport;

/// Replays every session `cfg.replay.rounds` times against every target.
pub async fn replay(
    cfg: &BenchConfig,
    sessions: SessionIndex,
    opts: &ReplayOptions,
    interrupts: tokio::sync::mpsc::Receiver<()>,
) -> Result<ReplayReport, ReplayError> {
    let settings = cfg.replay.clone();
    settings
        .check()
        .map_err(|p| ReplayError::Settings(p.to_string()))?;
    let conn = crate::store::open(&opts.db)?;
    let _lock = crate::store::lock::RunLock::acquire(&opts.db, &format!("replay {:?}", cfg.name))?;
    let hash = sessions.hash();
    let stored_settings = serde_json::json!({
        "bench": stable_settings(cfg),
        "replay": settings,
        "sessions": hash,
    })
    .to_string();
    let new_run = NewRun {
        name: &cfg.name,
        source: "collect",
        seed: Some(cfg.seed),
        settings_json: &stored_settings,
        tokenizer: Some(crate::tokens::TOKENIZER),
    };
    let run_id = open_run(&conn, &opts.db, &new_run, opts.resume, "replay")??;
    crate::store::inserts::set_collector(&conn, run_id, &cfg.collector_or_host())?;
    let sessions_path = opts.sessions_path.display().to_string();
    let replay_run = new_replay_run(run_id, &sessions_path, &hash, &settings, opts.clock_scale);
    insert_replay_run(&conn, &replay_run)?;
    let target_ids = store_targets(&conn, cfg)?;
    let done = finished_slots(&conn, run_id)?;

    let ctx = Arc::new(ReplayContext {
        run_id,
        seed: cfg.seed,
        settings: settings.clone(),
        timeout: Duration::from_secs_f64(cfg.turn_timeout_s),
        retry: cfg.retry.clone(),
        client: replay_client(cfg).await?,
        endpoints: cfg.targets.iter().map(Endpoint::for_target).collect(),
        hints: cfg.targets.iter().map(|t| t.replay.clone()).collect(),
        target_ids,
        sessions,
    });
    let (queues, total) = pending_passes(&ctx, &done);
    let to_run: usize = queues.iter().map(Vec::len).sum();
    let progress = crate::progress::bar(to_run as u64, !opts.quiet, "passes", None);
    let driven = drive(
        conn,
        queues,
        Limits {
            total: cfg.concurrency,
            per_target: settings.sessions_in_flight,
        },
        interrupts,
        progress,
        opts.quiet,
        pass::run_pass,
        pass::internal_error,
        |r| {
            let o = r.conversation.outcome;
            (o.failure().is_some(), o.to_string())
        },
    )
    .await?;
    let store_failures: Vec<String> = driven
        .written
        .failed
        .iter()
        .map(|(r, e)| {
            format!(
                "session {} · round {} ({}; uid {}): not stored: {e}",
                r.session_id, r.round, r.conversation.outcome, r.conversation.uid
            )
        })
        .collect();
    Ok(close_run(driven, run_id, total - to_run, store_failures)?)
}

/// Replay's own row of the run: the sessions it sends and how their pauses are played.
fn new_replay_run<'a>(
    run_id: i64,
    sessions: &'a str,
    sessions_hash: &'a str,
    settings: &ReplaySettings,
    clock_scale: f64,
) -> NewReplayRun<'a> {
    NewReplayRun {
        run_id,
        sessions,
        sessions_hash,
        pause_cap_ms: settings.pause_cap_s * 1000.0,
        pause_scale: settings.pause_scale,
        break_share: settings.breaks.share,
        break_min_ms: settings.breaks.min_s * 1000.0,
        break_max_ms: settings.breaks.max_s * 1000.0,
        clock_scale,
    }
}

/// The run's client, keeping the headers and body fields that name the provider that
/// served (a gateway's), for the targets that ask.
async fn replay_client(cfg: &BenchConfig) -> Result<Client, PrepareError> {
    Ok(prepare_client()
        .await?
        .capturing(
            cfg.targets
                .iter()
                .filter_map(|t| t.replay.served_by_header.clone()),
        )
        .capturing_fields(
            cfg.targets
                .iter()
                .filter_map(|t| t.replay.served_by_field.clone()),
        ))
}

/// Each target's queue of passes (round by round, session by session) not stored yet,
/// and how many the run has in all.
fn pending_passes(
    ctx: &Arc<ReplayContext>,
    done: &HashSet<(i64, String, u32)>,
) -> (Vec<Vec<PassJob>>, usize) {
    let mut total = 0;
    let queues = ctx
        .target_ids
        .iter()
        .enumerate()
        .map(|(target, target_id)| {
            let mut q = Vec::new();
            for round in 1..=ctx.settings.rounds {
                for (i, s) in ctx.sessions.entries.iter().enumerate() {
                    total += 1;
                    if !done.contains(&(*target_id, s.id.clone(), round)) {
                        q.push(PassJob {
                            ctx: ctx.clone(),
                            target,
                            session: i,
                            round,
                        });
                    }
                }
            }
            q
        })
        .collect();
    (queues, total)
}

/// The sessions shipped in the repo, relative to the checkout.
pub const SHIPPED_SESSIONS: &str = "sessions/agent-sessions.jsonl";
