//! `turnbench replay`: recorded agent sessions against the bench's targets (or, without
//! --config, the shipped sessions against the built-in mock providers), Ctrl-C, the summary.

use std::path::PathBuf;

use anyhow::{Result, bail};

use super::Global;
use crate::config::{BenchConfig, Breaks};
use crate::drive::Resume;
use crate::mock::{MockConfig, MockServer};
use crate::replay::{self, ReplayOptions, SHIPPED_SESSIONS};
use crate::run::builtin;

/// The built-in replay runs the mock and sleeps every pause at this share of real time,
/// the same share, so a break longer than a profile's cache retention is still longer.
pub const BUILTIN_SCALE: f64 = 0.02;

/// Replay recorded agent sessions against every target: each recorded assistant turn is
/// one request built from the recorded history, with the session's tools.
///
/// Without --config: the sessions in sessions/ against the built-in mock providers
/// (simulated, at 1/50 of real time), no keys, no network; run from the checkout.
///
/// Exit status as `collect`: 0 every pass stored and completed; 1 a definition, session,
/// usage or setup error (nothing sent); 2 some passes failed (each stored with its class);
/// 4 the store refused a pass and the run stopped (`--resume` finishes it); 130
/// interrupted. The built-in run exits 0 when it finishes.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// Recorded sessions, JSON Lines (see docs/replay.md).
    #[arg(long, default_value = SHIPPED_SESSIONS)]
    sessions: PathBuf,
    /// A bench.toml (targets, request settings, [replay]).
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// Keep what the newest replay run of this name completed; run only what is missing.
    #[arg(long)]
    resume: bool,
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

/// The built-in replay's bench: the built-in targets, pauses at the mock's time scale,
/// sim-flaky's gateway header read.
fn builtin_bench(base_url: &str) -> BenchConfig {
    let mut cfg = builtin::bench(base_url, "scenarios".as_ref(), 1);
    cfg.name = "builtin-replay".into();
    cfg.replay.pause_scale = BUILTIN_SCALE;
    for t in &mut cfg.targets {
        // sim-flaky plays a gateway and names the upstream that served.
        if t.model == "sim-flaky" {
            t.replay.served_by_header = Some("x-served-by".into());
        }
    }
    cfg
}

impl ReplayArgs {
    pub async fn run(self, global: &Global) -> Result<i32> {
        let (db, quiet) = (global.db.as_path(), global.quiet);
        if self.sessions == std::path::Path::new(SHIPPED_SESSIONS) && !self.sessions.exists() {
            bail!(
                "{SHIPPED_SESSIONS}: the shipped sessions are not here\n  fix: run from the turnbench checkout, or pass --sessions FILE"
            );
        }
        let sessions = replay::SessionIndex::build(&self.sessions)?;
        // The built-in run keeps its mock alive for as long as the replay lasts.
        let mut _mock = None;
        let builtin = self.config.is_none();
        let mut cfg = match &self.config {
            Some(path) if self.dry_run => {
                BenchConfig::from_source_without_keys(&crate::config::SourceText::read(path)?)?
            }
            Some(path) => BenchConfig::load(path)?,
            // Nothing is sent: the built-in targets at their stable address, no mock.
            None if self.dry_run => builtin_bench("http://builtin-mock/v1"),
            None => {
                let mut mock = MockConfig::builtin();
                mock.time_scale = BUILTIN_SCALE;
                let server = MockServer::start(mock, &[], "127.0.0.1:0".parse()?, None).await?;
                let cfg = builtin_bench(&server.base_url());
                _mock = Some(server);
                cfg
            }
        };
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
            print!(
                "{}",
                replay::format_plan(&cfg, &sessions).map_err(anyhow::Error::msg)?
            );
            return Ok(0);
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
        let opts = ReplayOptions {
            db: db.to_path_buf(),
            sessions_path: self.sessions.clone(),
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
