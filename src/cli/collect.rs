//! `turnbench collect`: the bench (a bench.toml, or the built-in mock run), Ctrl-C, the summary.

use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::collect::{self, CollectOptions, Resume};
use crate::config::embedded;
use crate::exit::Exit;
use crate::run::builtin;

/// Run every target × scenario × repeat and store each conversation once.
///
/// The bench is --config, else ./bench.toml, else the built-in bench (four simulated
/// providers on the built-in mock, no keys, no network); the first line says which.
///
/// Exit status: 0 every conversation stored and completed; 1 a definition, usage or
/// setup error (nothing sent); 2 the run finished but some conversations failed (each
/// stored with its class); 4 the store refused a conversation (a full disk, …) and the
/// run stopped: `--resume` finishes it; 130 interrupted. A bench of simulated providers
/// exits 0 when it finishes: its failures are the mock's simulated faults, there to be seen.
#[derive(clap::Args)]
pub struct CollectArgs {
    /// A bench.toml [default: ./bench.toml, else the built-in bench].
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// Keep what the newest run of this name completed; run only what is missing.
    #[arg(long)]
    resume: bool,
    /// Scenario folder, whatever the bench says [default: the bench's; for the built-in
    /// bench ./scenarios, else the built-in scenarios].
    #[arg(long)]
    scenarios: Option<PathBuf>,
    /// Repeats, whatever the bench says.
    #[arg(long)]
    repeats: Option<u32>,
    /// Where the run is collected from, stored with it (`turnbench report --collector`)
    /// [default: the bench's `collector`, else the host name].
    #[arg(long, value_name = "NAME", value_parser = super::collector_arg)]
    collector: Option<String>,
    /// Print what the run would send (URL and first request body per target, run size);
    /// send nothing, touch no store. Key variables need not be set.
    #[arg(long)]
    dry_run: bool,
}

impl CollectArgs {
    pub async fn run(self, global: &Global) -> Result<Exit> {
        let (db, quiet) = (global.db.as_path(), global.quiet);
        let bench_path = builtin::bench_path(self.config.as_deref());
        let mut cfg = builtin::load(
            &bench_path,
            &builtin::Overrides {
                scenarios: self.scenarios,
                repeats: self.repeats,
                without_keys: self.dry_run,
                collector: self.collector,
            },
        )?;
        let builtin = builtin::all_mock(&cfg);
        let scenarios = collect::load_scenarios(&cfg)?;
        let source = format!(
            "bench {}; scenarios {}",
            embedded::describe(&bench_path),
            embedded::describe(&cfg.scenarios_dir)
        );
        if self.dry_run {
            println!("definitions: {source}");
            print!("{}", collect::format_plan(&cfg, &scenarios));
            return Ok(Exit::Success);
        }
        // The built-in mock lives for as long as the collection lasts.
        let _mock = builtin::serve(&mut cfg, &scenarios, builtin::TIME_SCALE)
            .await
            .map_err(anyhow::Error::msg)?;
        if !quiet {
            eprintln!(
                "collect {:?}: {} targets × {} scenarios × {} repeats → {} ({source})",
                cfg.name,
                cfg.targets.len(),
                scenarios.len(),
                cfg.repeats,
                db.display()
            );
        }
        let opts = CollectOptions {
            db: db.to_path_buf(),
            resume: if self.resume { Resume::Yes } else { Resume::No },
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
