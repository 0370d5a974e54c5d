//! Command-line interface: argument parsing and dispatch only; the stages do the work.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

use crate::checks::{self, CheckOptions};
use crate::collect::{self, CollectOptions};
use crate::config::{BenchConfig, Scenario};
use crate::lint;
use crate::mock::{MockConfig, MockServer};

#[derive(Parser)]
#[command(
    name = "turnbench",
    version,
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

#[derive(Subcommand)]
pub enum Command {
    /// Run every target × scenario × repeat and store each conversation once.
    ///
    /// Without --config: the built-in mock provider with three simulated models, no keys,
    /// no network.
    Collect {
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
    },
    /// Run the rule-based checks (checks/*.toml) on every stored conversation; only
    /// results that are missing are computed.
    ///
    /// Conversations that did not complete are stored as not scored, never passed or
    /// failed. Failed checks are results: the exit code is 0 unless an error occurred.
    Check {
        /// Folder of checks files, one per scenario.
        #[arg(long, default_value = "checks")]
        checks: PathBuf,
        /// Scenario folder the checks are validated against (skipped when absent).
        #[arg(long, default_value = "scenarios")]
        scenarios: PathBuf,
        /// Print each current check of one conversation (numeric id or uid), its verdict
        /// and why, instead of running the checks.
        #[arg(long, value_name = "CONVERSATION")]
        explain: Option<String>,
        /// Evaluator threads (default: one per core).
        #[arg(long, default_value_t = 0, hide_default_value = true)]
        threads: usize,
    },
    /// Validate every definition file of a project: scenarios, checks, and bench files
    /// given with --bench. Each problem names its file, line and fix; exits 1 if any.
    Lint {
        /// The project folder (holding scenarios/ and checks/).
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// A bench file to validate too (repeatable). Key variables need not be set.
        #[arg(long = "bench", value_name = "FILE")]
        bench: Vec<PathBuf>,
    },
    /// Serve a simulated OpenAI-compatible provider until Ctrl-C.
    Mock {
        #[arg(long, default_value_t = 8089)]
        port: u16,
        #[arg(long, default_value = "127.0.0.1")]
        host: std::net::IpAddr,
        /// Model profiles (TOML); default: mock-fast, mock-reasoner, mock-flaky.
        #[arg(long)]
        profiles: Option<PathBuf>,
        /// Answer scenario turns with their reference answers.
        #[arg(long)]
        scenarios: Option<PathBuf>,
        /// Overrides the profiles' seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Append every request body to this file (JSON Lines).
        #[arg(long)]
        log: Option<PathBuf>,
    },
}

pub async fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Collect {
            config,
            resume,
            scenarios,
            repeats,
        } => run_collect(&cli.db, cli.quiet, config, resume, scenarios, repeats).await,
        Command::Check {
            checks,
            scenarios,
            explain,
            threads,
        } => match explain {
            Some(key) => {
                print!("{}", checks::explain(&cli.db, &checks, &key)?);
                Ok(0)
            }
            None => run_check(&cli.db, cli.quiet, checks, scenarios, threads),
        },
        Command::Lint { dir, bench } => Ok(run_lint(&dir, &bench, cli.quiet)),
        Command::Mock {
            port,
            host,
            profiles,
            scenarios,
            seed,
            log,
        } => {
            let mut cfg = match profiles {
                Some(p) => MockConfig::load(&p)?,
                None => MockConfig::builtin(),
            };
            if let Some(seed) = seed {
                cfg.seed = seed;
            }
            let scenarios = match scenarios {
                Some(dir) => Scenario::load_dir(&dir)?,
                None => Vec::new(),
            };
            let models: Vec<_> = cfg.profiles.iter().map(|p| p.model.clone()).collect();
            let server =
                MockServer::start(cfg, &scenarios, SocketAddr::new(host, port), log.as_deref())
                    .await
                    .with_context(|| format!("cannot listen on {host}:{port}"))?;
            println!(
                "turnbench mock listening on {} (models: {}; {} scenarios)",
                server.base_url(),
                models.join(", "),
                scenarios.len()
            );
            use std::io::Write;
            std::io::stdout().flush()?;
            tokio::signal::ctrl_c().await?;
            server.stop();
            Ok(0)
        }
    }
}

async fn run_collect(
    db: &std::path::Path,
    quiet: bool,
    config: Option<PathBuf>,
    resume: bool,
    scenarios_dir: PathBuf,
    repeats: u32,
) -> Result<i32> {
    // The built-in run keeps its mock alive for as long as the collection lasts.
    let mut _mock = None;
    let cfg = match config {
        Some(path) => BenchConfig::load(&path)?,
        None => {
            if !scenarios_dir.is_dir() {
                bail!(
                    "{}: no scenario folder\n  fix: run from the turnbench checkout, or pass --scenarios DIR",
                    scenarios_dir.display()
                );
            }
            let scenarios = Scenario::load_dir(&scenarios_dir)?;
            let server = MockServer::start(
                MockConfig::builtin(),
                &scenarios,
                "127.0.0.1:0".parse()?,
                None,
            )
            .await?;
            let cfg = builtin_bench(&server.base_url(), &scenarios_dir, repeats);
            _mock = Some(server);
            cfg
        }
    };
    let scenarios = collect::load_scenarios(&cfg)?;
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
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if tx.send(()).await.is_err() {
                break;
            }
        }
    });
    let opts = CollectOptions {
        db: db.to_path_buf(),
        resume,
        quiet,
    };
    let report = collect::collect(&cfg, scenarios, &opts, rx).await?;
    print!("{}", collect::format_summary(&report.summary));
    if !quiet {
        eprintln!(
            "run {}: {} conversations run, {} already stored{}",
            report.run_id,
            report.launched,
            report.skipped,
            if report.interrupted {
                " — interrupted; `collect --resume` finishes it"
            } else {
                ""
            }
        );
    }
    Ok(if report.interrupted { 130 } else { 0 })
}

fn run_check(
    db: &Path,
    quiet: bool,
    checks_dir: PathBuf,
    scenarios_dir: PathBuf,
    threads: usize,
) -> Result<i32> {
    let opts = CheckOptions {
        scenarios_dir: Some(scenarios_dir),
        threads,
        progress: !quiet && std::io::stderr().is_terminal(),
        ..CheckOptions::new(db.to_path_buf(), checks_dir)
    };
    let report = checks::run_checks(&opts)?;
    print!("{}", checks::format_report(&report));
    Ok(0)
}

fn run_lint(dir: &Path, bench: &[PathBuf], quiet: bool) -> i32 {
    let findings = lint::lint_project(&lint::LintInput {
        project: dir,
        bench_files: bench,
    });
    let files: usize = findings.iter().map(|(_, f)| f.files).sum();
    let problems: usize = findings.iter().map(|(_, f)| f.errors.len()).sum();
    for (_, f) in &findings {
        for e in &f.errors {
            println!("{e}");
        }
    }
    if problems > 0 {
        println!("lint: {problems} problems in {files} definition files");
        1
    } else {
        if !quiet {
            let covered: Vec<String> = findings
                .iter()
                .map(|(what, f)| {
                    let s = if f.files == 1 { "" } else { "s" };
                    format!("{} {what}{s}", f.files)
                })
                .collect();
            println!(
                "lint: no problems in {files} files ({})",
                covered.join(", ")
            );
        }
        0
    }
}

/// The offline default: three simulated providers served by the in-process mock.
fn builtin_bench(base_url: &str, scenarios: &std::path::Path, repeats: u32) -> BenchConfig {
    let text = format!(
        r#"
name = "builtin-mock"
seed = 42
repeats = {repeats}
scenarios = {scenarios:?}
turn_timeout_s = 30
concurrency = 12
per_target_concurrency = 4
pause_scale = 0.02

[[target]]
provider = "sim-alpha"
model = "mock-fast"
base_url = "{base_url}"
price = {{ input = 0.20, cached = 0.05, output = 0.80 }}

[[target]]
provider = "sim-beta"
model = "mock-reasoner"
base_url = "{base_url}"
price = {{ input = 0.60, cached = 0.15, output = 2.40 }}

[[target]]
provider = "sim-gamma"
model = "mock-flaky"
base_url = "{base_url}"
price = {{ input = 0.10, output = 0.40 }}
"#,
        scenarios = scenarios.display().to_string()
    );
    let src = crate::config::SourceText {
        path: "<built-in bench>".into(),
        text,
    };
    BenchConfig::from_source(&src).expect("the built-in bench is valid")
}
