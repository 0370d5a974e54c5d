//! Command-line interface: argument parsing and dispatch only; the stages do the work.
//!
//! One file per command: its flags (a `clap::Args` struct) and its `run`, which turns the
//! raw values into the stage's options, calls the stage and prints the outcome. Adding a
//! command is one new file plus one variant in [`Command`] and one line in [`run`].

pub mod check;
pub mod collect;
pub mod completions;
pub mod export;
pub mod import;
pub mod init;
pub mod judge;
pub mod label;
pub mod lint;
pub mod merge;
pub mod mock;
pub mod replay;
pub mod report;
pub mod run;
pub mod show;

use std::path::PathBuf;

use anyhow::Result;

use crate::exit::Exit;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "turnbench",
    after_help = crate::exit::help(),
    version = crate::config::embedded::VERSION,
    about = "Measure LLM providers the way a sequential, multi-turn agent feels them"
)]
pub struct Cli {
    /// The SQLite store every stage reads and writes.
    #[arg(long, global = true, default_value = "turnbench.db")]
    pub db: PathBuf,
    /// No progress bars or chatter (errors and results still print).
    #[arg(long, short, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// The global flags, handed to every command's `run`.
pub struct Global {
    /// The SQLite store (`--db`).
    pub db: PathBuf,
    /// `--quiet`: no progress bars or chatter.
    pub quiet: bool,
}

/// Which stored conversations a reader takes (`report`, `export`): every filter given
/// must match.
#[derive(clap::Args, Debug, Clone)]
pub struct SelectArgs {
    /// Only this run: an id, or a name (every run of that name).
    #[arg(long)]
    run: Option<String>,
    #[arg(long)]
    provider: Option<String>,
    /// Only this model label.
    #[arg(long)]
    model: Option<String>,
    #[arg(long)]
    scenario: Option<String>,
}

/// `--collector NAME`: a name as `collector =` in bench.toml takes it.
pub(crate) fn collector_arg(text: &str) -> Result<String, String> {
    crate::config::bench::collector_name(text)
        .map_err(|problem| format!("{problem}; {}", crate::config::bench::COLLECTOR_FIX))
}

impl SelectArgs {
    pub fn filter(self) -> crate::store::FactFilter {
        crate::store::FactFilter {
            run: self.run,
            provider: self.provider,
            label: self.model,
            scenario: self.scenario,
            run_ids: None,
        }
    }
}

/// Ctrl-C as a channel for one stage: each press sends `()`. A stage that has ended drops
/// its receiver, and its listener stops at the next press; a new stage gets a new channel.
pub fn interrupts() -> tokio::sync::mpsc::Receiver<()> {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if tx.send(()).await.is_err() {
                break;
            }
        }
    });
    rx
}

/// The end of a `collect` or `replay` run: the summary per target, what the store refused,
/// one closing line (unless quiet); then the exit status (docs/commands/exit-codes.md).
/// `unit` names what was run ("conversations", "passes"); the built-in run's failures are its
/// simulated faults, so they do not make the status 2.
fn finish_run(
    report: &crate::launcher::LaunchReport,
    command: &str,
    unit: &str,
    quiet: bool,
    builtin: bool,
) -> Exit {
    print!("{}", crate::collect::format_summary(&report.summary));
    for failure in &report.store_failures {
        eprintln!("store: {failure}");
    }
    if !report.store_failures.is_empty() {
        eprintln!(
            "store: {} {unit} could not be written, and the run stopped; everything stored before is kept\n  fix: free disk space (or fix the store), then `turnbench {command} --resume` runs what is missing",
            report.store_failures.len()
        );
    }
    let failed = report.failed();
    if !quiet {
        eprintln!(
            "run {}: {} {unit} run, {} already stored{}{}",
            report.run_id,
            report.launched,
            report.skipped,
            if failed > 0 {
                format!("; {failed} failed (stored with their class)")
            } else {
                String::new()
            },
            if report.interrupted {
                format!(" — interrupted; `{command} --resume` finishes it")
            } else {
                String::new()
            }
        );
    }
    if !report.store_failures.is_empty() {
        Exit::StoreRefused
    } else if report.interrupted {
        Exit::Interrupted
    } else {
        Exit::failed_if(failed > 0 && !builtin)
    }
}

/// One variant per command; each command's help text is the doc comment of its args struct.
#[derive(Subcommand)]
pub enum Command {
    Collect(collect::CollectArgs),
    Judge(judge::JudgeArgs),
    Check(check::CheckArgs),
    Lint(lint::LintArgs),
    Mock(mock::MockArgs),
    Replay(replay::ReplayArgs),
    Import(import::ImportArgs),
    // (Boxed: the largest of the arguments.)
    Report(Box<report::ReportArgs>),
    Run(run::RunArgs),
    Show(show::ShowArgs),
    Merge(merge::MergeArgs),
    Init(init::InitArgs),
    Completions(completions::CompletionsArgs),
    Man(completions::ManArgs),
    /// Write stored data out.
    #[command(subcommand)]
    Export(export::ExportCommand),
    /// Human labels: import what people scored, for the judges' agreement with them.
    #[command(subcommand)]
    Label(label::LabelCommand),
}

/// Runs the chosen command; the `Ok` value is how it ended (an `Err` is [`Exit::Error`]).
pub async fn run(cli: Cli) -> Result<Exit> {
    let global = Global {
        db: cli.db,
        quiet: cli.quiet,
    };
    match cli.command {
        Command::Collect(args) => args.run(&global).await,
        Command::Judge(args) => args.run(&global).await,
        Command::Check(args) => args.run(&global),
        Command::Lint(args) => args.run(&global),
        Command::Mock(args) => args.run(&global).await,
        Command::Replay(args) => args.run(&global).await,
        Command::Import(args) => args.run(&global),
        Command::Merge(args) => args.run(&global),
        Command::Report(args) => args.run(&global),
        Command::Run(args) => args.run(&global).await,
        Command::Show(args) => args.run(&global),
        Command::Init(args) => args.run(&global),
        Command::Completions(args) => args.run(&global),
        Command::Man(args) => args.run(&global),
        Command::Export(cmd) => cmd.run(&global),
        Command::Label(cmd) => cmd.run(&global),
    }
}
