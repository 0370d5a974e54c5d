//! `turnbench run`: the whole pipeline in one command; the terminal report, the HTML file,
//! what to run next.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::exit::Exit;
use crate::export::{self, FormatOptions, REPORT_FORMATS};
use crate::run::{self, RunOptions};

/// Collect, check, judge and report in one go, each stage only on what is missing.
///
/// Definitions come from the path named with a flag, else from the conventional place in
/// the current directory (bench.toml, scenarios/, checks/, judges/, rubrics/), else from
/// the set built into turnbench; the first line says which. The built-in bench runs four
/// simulated providers on the built-in mock and the simulated judge: no key, no network.
/// A bench of real providers runs the judge stage for each --judge × --rubric given, and
/// skips it when none is. A re-run after a crash or Ctrl-C resumes the collect and does
/// no work twice.
///
/// Exit status: 0 done; 1 a definition, usage or setup error (nothing sent); 2 done, but
/// some conversations failed or judgments stayed unscored (real providers); 3 a judge
/// prompt named a provider (nothing sent to any judge); 4 the store refused a write
/// (re-run to finish); 130 interrupted (re-run to finish).
#[derive(clap::Args)]
pub struct RunArgs {
    /// A bench.toml [default: ./bench.toml, else the built-in bench].
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// Judge settings (a file, or a built-in name such as judges/default.toml); repeat for
    /// a panel. Every judge judges every --rubric.
    #[arg(long = "judge", value_name = "JUDGE.toml")]
    judges: Vec<PathBuf>,
    /// A rubric (a file, or a built-in name such as rubrics/multiturn-quality.toml);
    /// repeat for more.
    #[arg(long = "rubric", value_name = "RUBRIC.toml")]
    rubrics: Vec<PathBuf>,
    /// Where the HTML report is written.
    #[arg(long, short, default_value = "report.html")]
    out: PathBuf,
    /// Folder of checks files [default: ./checks, else the built-in checks].
    #[arg(long)]
    checks: Option<PathBuf>,
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
}

impl RunArgs {
    pub async fn run(self, global: &Global) -> Result<Exit> {
        let opts = RunOptions {
            db: global.db.clone(),
            config: self.config,
            scenarios: self.scenarios,
            repeats: self.repeats,
            collector: self.collector,
            checks: self.checks,
            judges: self.judges,
            rubrics: self.rubrics,
            out: self.out,
            quiet: global.quiet,
        };
        let quiet = global.quiet;
        let say = |line: &str| {
            if !quiet {
                eprintln!("{line}");
            }
        };
        let outcome = run::run(&opts, &super::interrupts, &say).await?;
        if let Some(report) = &outcome.report {
            let terminal = export::find(REPORT_FORMATS, "terminal")?;
            if !quiet && std::io::stdout().is_terminal() {
                println!();
            }
            export::write_stdout(terminal, report, &FormatOptions::default())?;
        }
        for f in &outcome.collect.store_failures {
            eprintln!("store: {f}");
        }
        if outcome.stopped {
            eprintln!(
                "run stopped before its end: the same `turnbench run` command finishes it (it does no work twice)"
            );
        } else if !quiet {
            eprintln!("{}", run::next_steps(&outcome, &opts.out));
        }
        Ok(outcome.exit())
    }
}
