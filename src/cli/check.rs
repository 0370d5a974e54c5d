//! `turnbench check`: run the rule-based checks and print the report, or `--explain` one
//! conversation's verdicts.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::checks::{self, CheckOptions};
use crate::config::embedded;
use crate::exit::Exit;

/// Run the rule-based checks (checks/*.toml) on every stored conversation; only
/// results that are missing are computed.
///
/// Conversations that did not complete are stored as not scored, never passed or
/// failed. Failed checks are results: the exit code is 0 unless an error occurred.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// Folder of checks files, one per scenario [default: ./checks, else the built-in checks].
    #[arg(long)]
    checks: Option<PathBuf>,
    /// Scenario folder the checks are validated against [default: ./scenarios, else the
    /// built-in scenarios].
    #[arg(long)]
    scenarios: Option<PathBuf>,
    /// Print each current check of one conversation (numeric id or uid), its verdict
    /// and why, instead of running the checks.
    #[arg(long, value_name = "CONVERSATION")]
    explain: Option<String>,
    /// Evaluator threads (default: one per core).
    #[arg(long, default_value_t = 0, hide_default_value = true)]
    threads: usize,
}

impl CheckArgs {
    pub fn run(self, global: &Global) -> Result<Exit> {
        let checks_dir = embedded::resolve_dir(self.checks.as_deref(), "checks");
        if let Some(key) = &self.explain {
            println!(
                "{}",
                checks::explain(&global.db, &checks_dir, key)?.trim_end()
            );
            return Ok(Exit::Success);
        }
        let scenarios_dir = embedded::resolve_dir(self.scenarios.as_deref(), "scenarios");
        if !global.quiet {
            eprintln!(
                "definitions: checks {}; scenarios {}",
                embedded::describe(&checks_dir),
                embedded::describe(&scenarios_dir)
            );
        }
        let opts = CheckOptions {
            scenarios_dir: Some(scenarios_dir),
            threads: self.threads,
            progress: !global.quiet && std::io::stderr().is_terminal(),
            ..CheckOptions::new(global.db.clone(), checks_dir)
        };
        let report = checks::run_checks(&opts)?;
        print!("{}", checks::format_report(&report));
        Ok(Exit::Success)
    }
}
