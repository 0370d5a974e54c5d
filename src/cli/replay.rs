//! `turnbench replay`: recorded agent sessions against the bench's targets (or, without
//! --config, the shipped sessions against the built-in mock providers), Ctrl-C, the summary.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::Global;
use crate::config::{BenchConfig, Breaks, embedded};
use crate::exit::Exit;
use crate::launcher::Resume;
use crate::replay::{self, ReplayOptions, SHIPPED_SESSIONS};
use crate::run::builtin;

/// The built-in replay runs the mock and sleeps every pause at this share of real time,
/// the same share, so a break longer than a profile's cache retention is still longer.
pub const BUILTIN_SCALE: f64 = 0.02;

/// Replay recorded agent sessions against every target: each recorded assistant turn is
/// one request built from the recorded history, with the session's tools.
///
/// Without --config or ./bench.toml: the built-in sessions against the built-in mock
/// providers (simulated, at 1/50 of real time), no keys, no network.
///
/// Exit status as `collect`: 0 every pass stored and completed; 1 a definition, session,
/// usage or setup error (nothing sent); 2 some passes failed (each stored with its class);
/// 4 the store refused a pass and the run stopped (`--resume` finishes it); 130
/// interrupted. The built-in run exits 0 when it finishes.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// Recorded sessions, JSON Lines (see docs/replay.md) [default:
    /// ./sessions/agent-sessions.jsonl, else the built-in sessions].
    #[arg(long)]
    sessions: Option<PathBuf>,
    /// A bench.toml (targets, request settings, [replay]) [default: ./bench.toml, else
    /// the built-in bench].
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// Keep what the newest replay run of this name completed; run only what is missing.
    #[arg(long)]
    resume: bool,
    /// Where the replay is collected from, stored with it (`turnbench report --collector`)
    /// [default: the bench's `collector`, else the host name].
    #[arg(long, value_name = "NAME", value_parser = super::collector_arg)]
    collector: Option<String>,
    /// Passes over every session per target (overrides [replay] rounds).
    #[arg(long)]
    rounds: Option<u32>,
    /// Sleep every pause and break at this share (0: none; overrides [replay] pause_scale).
    #[arg(long)]
    pause_scale: Option<f64>,
    /// Idle breaks: SHARE:MIN_S-MAX_S (e.g. 0.15:60-1200), or none (overrides [replay] breaks).
    #[arg(long)]
    breaks: Option<Breaks>,
    /// Print what the replay would send (URL, cache hint and first request body per
    /// target, run size); send nothing, touch no store. Key variables need not be set.
    #[arg(long)]
    dry_run: bool,
}

/// A bench of simulated providers replays at the mock's time scale under its own run
/// name, with sim-flaky's gateway header read.
fn simulated_replay(cfg: &mut BenchConfig) {
    if cfg.name == builtin::NAME {
        cfg.name = "builtin-replay".into();
    }
    cfg.replay.pause_scale = BUILTIN_SCALE;
    for t in &mut cfg.targets {
        // sim-flaky plays a gateway and names the upstream that served.
        if t.model == "sim-flaky" {
            t.replay.served_by_header = Some("x-served-by".into());
        }
    }
}

impl ReplayArgs {
    pub async fn run(self, global: &Global) -> Result<Exit> {
        let (db, quiet) = (global.db.as_path(), global.quiet);
        let sessions_path = match &self.sessions {
            Some(p) => p.clone(),
            None if Path::new(SHIPPED_SESSIONS).is_file() => PathBuf::from(SHIPPED_SESSIONS),
            None => embedded::path(SHIPPED_SESSIONS),
        };
        let sessions = replay::SessionIndex::build(&sessions_path)?;
        let bench_path = builtin::bench_path(self.config.as_deref());
        let mut cfg = builtin::load(
            &bench_path,
            &builtin::Overrides {
                without_keys: self.dry_run,
                collector: self.collector,
                ..Default::default()
            },
        )?;
        let builtin = builtin::all_mock(&cfg);
        if builtin {
            simulated_replay(&mut cfg);
        }
        if !quiet {
            eprintln!(
                "definitions: bench {}; sessions {}",
                embedded::describe(&bench_path),
                embedded::describe(&sessions_path)
            );
        }
        if let Some(r) = self.rounds {
            cfg.replay.rounds = r;
        }
        if let Some(s) = self.pause_scale {
            cfg.replay.pause_scale = s;
        }
        if let Some(b) = self.breaks {
            cfg.replay.breaks = b;
        }
        if let Err(problem) = cfg.replay.check() {
            bail!("{problem}\n  fix: --rounds at least 1, --pause-scale 0 or more");
        }
        if self.dry_run {
            // Nothing is sent: simulated targets stay at their stable address, no mock.
            print!(
                "{}",
                replay::format_plan(&cfg, &sessions).map_err(anyhow::Error::msg)?
            );
            return Ok(Exit::Success);
        }
        if !quiet {
            let turns: usize = sessions.entries.iter().map(|s| s.turns).sum();
            eprintln!(
                "replay {:?}: {} targets × {} sessions ({turns} turns) × {} rounds → {}{}",
                cfg.name,
                cfg.targets.len(),
                sessions.entries.len(),
                cfg.replay.rounds,
                db.display(),
                if builtin {
                    format!(
                        " (built-in: simulated providers, pauses and delays at {BUILTIN_SCALE} of real time)"
                    )
                } else {
                    String::new()
                }
            );
        }
        // The built-in mock lives for as long as the replay lasts.
        let _mock = builtin::serve(&mut cfg, &[], BUILTIN_SCALE)
            .await
            .map_err(anyhow::Error::msg)?;
        let opts = ReplayOptions {
            db: db.to_path_buf(),
            sessions_path,
            resume: if self.resume { Resume::Yes } else { Resume::No },
            quiet,
            clock_scale: if builtin { BUILTIN_SCALE } else { 1.0 },
        };
        let report = replay::replay(&cfg, sessions, &opts, super::interrupts()).await?;
        Ok(super::finish_run(
            &report, "replay", "passes", quiet, builtin,
        ))
    }
}
