//! `turnbench collect`: the bench (a bench.toml, or the built-in mock run), Ctrl-C, the summary.

use std::path::PathBuf;

use anyhow::{Result, bail};

use super::Global;
use crate::collect::{self, CollectOptions, Resume};
use crate::config::{BenchConfig, Scenario, SourceText};
use crate::mock::{MockConfig, MockServer};
use crate::run::builtin;

/// Run every target × scenario × repeat and store each conversation once.
///
/// Without --config: the built-in mock provider with four simulated providers, no keys,
/// no network.
///
/// Exit status: 0 every conversation stored and completed; 1 a definition, usage or
/// setup error (nothing sent); 2 the run finished but some conversations failed (each
/// stored with its class); 4 the store refused a conversation (a full disk, …) and the
/// run stopped: `--resume` finishes it; 130 interrupted. The built-in run exits 0 when
/// it finishes: its failures are the mock's simulated faults, there to be seen.
#[derive(clap::Args)]
pub struct CollectArgs {
    /// A bench.toml (see examples/bench.toml).
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// Keep what the newest run of this name completed; run only what is missing.
    #[arg(long)]
    resume: bool,
    /// Scenario folder for the built-in run.
    #[arg(long, default_value = "scenarios")]
    scenarios: PathBuf,
    /// Repeats for the built-in run.
    #[arg(long, default_value_t = 2)]
    repeats: u32,
    /// Print what the run would send (URL and first request body per target, run size);
    /// send nothing, touch no store. Key variables need not be set.
    #[arg(long)]
    dry_run: bool,
}

impl CollectArgs {
    pub async fn run(self, global: &Global) -> Result<i32> {
        let Self {
            config,
            resume,
            scenarios: scenarios_dir,
            repeats,
            dry_run,
        } = self;
        let (db, quiet) = (global.db.as_path(), global.quiet);
        // The built-in run keeps its mock alive for as long as the collection lasts.
        let mut _mock = None;
        let builtin = config.is_none();
        let cfg = match config {
            Some(path) if dry_run => {
                BenchConfig::from_source_without_keys(&SourceText::read(&path)?)?
            }
            Some(path) => BenchConfig::load(&path)?,
            None => {
                if !scenarios_dir.is_dir() {
                    bail!(
                        "{}: no scenario folder\n  fix: run from the turnbench checkout, or pass --scenarios DIR",
                        scenarios_dir.display()
                    );
                }
                let scenarios = Scenario::load_dir(&scenarios_dir)?;
                let mut mock = MockConfig::builtin();
                mock.time_scale = builtin::TIME_SCALE;
                let server =
                    MockServer::start(mock, &scenarios, "127.0.0.1:0".parse()?, None).await?;
                let cfg = builtin::bench(&server.base_url(), &scenarios_dir, repeats);
                _mock = Some(server);
                cfg
            }
        };
        let scenarios = collect::load_scenarios(&cfg)?;
        if dry_run {
            print!("{}", collect::format_plan(&cfg, &scenarios));
            return Ok(0);
        }
        if !quiet {
            eprintln!(
                "collect {:?}: {} targets × {} scenarios × {} repeats → {}",
                cfg.name,
                cfg.targets.len(),
                scenarios.len(),
                cfg.repeats,
                db.display()
            );
        }
        let opts = CollectOptions {
            db: db.to_path_buf(),
            resume: if resume { Resume::Yes } else { Resume::No },
            quiet,
            stage: None,
        };
        let report = collect::collect(&cfg, scenarios, &opts, super::interrupts()).await?;
        Ok(super::finish_run(
            &report,
            "collect",
            "conversations",
            quiet,
            builtin,
        ))
    }
}
