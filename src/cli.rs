//! Command-line interface: argument parsing and dispatch only; the stages do the work.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

use crate::checks::{self, CheckOptions};
use crate::collect::{self, CollectOptions};
use crate::config::{BenchConfig, BenchTargetNames, JudgeSettings, Rubric, Scenario};
use crate::export::{ExportFilter, ExportOptions};
use crate::import::ImportOptions;
use crate::judge::{self, JudgeOptions, Mode};
use crate::lint;
use crate::mock::{MockConfig, MockServer};
use crate::store::judgments::JudgmentStatus;

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
    /// Score stored conversations with a blind LLM judge; only what is not judged yet
    /// is sent.
    ///
    /// Exit status: 0 all judged, 2 some judgments unparseable or judge errors (stored),
    /// 3 the audit found a name in a prompt (nothing sent), 130 interrupted, 1 any other
    /// error. See docs/judge.md.
    Judge {
        /// Judge settings (see judges/default.toml, judges/mock.toml).
        #[arg(long)]
        judge: PathBuf,
        /// The rubric (see rubrics/).
        #[arg(long)]
        rubric: PathBuf,
        /// A bench.toml whose target names, aliases and hosts are redacted too.
        #[arg(long, short)]
        config: Option<PathBuf>,
        /// Print the exact blinded prompts that would be sent; send nothing.
        #[arg(long)]
        dry_run: bool,
        /// Scan every prompt for every redaction term; exit 3 on a leak; send nothing.
        #[arg(long)]
        audit: bool,
        /// Judgments per conversation (overrides the settings).
        #[arg(long)]
        replicates: Option<u32>,
        /// Which conversations: the first completed repeat per cell × scenario, or all.
        #[arg(long, value_parser = ["first", "all"])]
        sample: Option<String>,
        /// Seed of the call order (overrides the settings).
        #[arg(long)]
        seed: Option<u64>,
        /// Judge calls in flight at once (overrides the settings).
        #[arg(long)]
        concurrency: Option<usize>,
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
    /// Import transcripts (JSON Lines, one conversation per line; `-` reads stdin).
    ///
    /// Bad lines are reported and skipped (exit code 1); conversations already stored are
    /// skipped, so importing a file again adds nothing. See docs/import-export.md.
    Import {
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Stop at the first bad line, with nothing from that file stored.
        #[arg(long)]
        strict: bool,
    },
    /// Write stored data out.
    #[command(subcommand)]
    Export(ExportCommand),
}

#[derive(Subcommand)]
pub enum ExportCommand {
    /// Conversations in the import format (JSON Lines), oldest first.
    Conversations {
        /// Output file (default, or `-`: standard output).
        #[arg(long, short)]
        out: Option<PathBuf>,
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
        /// Add each conversation's check results and judgments.
        #[arg(long)]
        with_scores: bool,
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
        Command::Judge {
            judge,
            rubric,
            config,
            dry_run,
            audit,
            replicates,
            sample,
            seed,
            concurrency,
        } => {
            let mut settings = JudgeSettings::load(&judge)?;
            if let Some(n) = replicates {
                anyhow::ensure!(n >= 1, "--replicates must be at least 1");
                settings.replicates = n;
            }
            if let Some(s) = sample {
                settings.sample = s.parse().map_err(anyhow::Error::msg)?;
            }
            if let Some(s) = seed {
                settings.seed = s;
            }
            if let Some(n) = concurrency {
                anyhow::ensure!(n >= 1, "--concurrency must be at least 1");
                settings.concurrency = n;
            }
            let mode = match (audit, dry_run) {
                (true, _) => Mode::Audit,
                (false, true) => Mode::DryRun,
                (false, false) => Mode::Judge,
            };
            let opts = JudgeOptions {
                db: cli.db.clone(),
                settings,
                rubric: Rubric::load(&rubric)?,
                bench_targets: match &config {
                    Some(path) => BenchTargetNames::load(path)?,
                    None => Vec::new(),
                },
                mode,
                quiet: cli.quiet,
            };
            run_judge(opts, dry_run).await
        }
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
        Command::Import { files, strict } => run_import(&cli.db, cli.quiet, &files, strict),
        Command::Export(ExportCommand::Conversations {
            out,
            run,
            provider,
            model,
            scenario,
            with_scores,
        }) => {
            let opts = ExportOptions {
                filter: ExportFilter {
                    run,
                    provider,
                    model,
                    scenario,
                },
                with_scores,
            };
            run_export(&cli.db, cli.quiet, out.as_deref(), &opts)
        }
    }
}

async fn run_judge(opts: JudgeOptions, print_prompts: bool) -> Result<i32> {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if tx.send(()).await.is_err() {
                break;
            }
        }
    });
    let (report, plan) = judge::judge(&opts, rx).await?;
    if print_prompts {
        print!("{}", judge::format_dry_run(&plan, &opts.settings));
    }
    for l in &report.leaks {
        eprintln!(
            "leak: conversation {} replicate {}: {:?} in \"…{}…\"",
            l.conversation_id, l.replicate, l.leak.term, l.leak.context
        );
    }
    if !report.leaks.is_empty() {
        eprintln!(
            "audit: {} leaks in {} prompts; nothing was sent\n  fix: remove the names from the rubric or template, or check the redaction terms",
            report.leaks.len(),
            report.planned
        );
        return Ok(3);
    }
    if opts.mode != Mode::Judge {
        if !opts.quiet {
            eprintln!(
                "{}: {} prompts checked against {} redaction terms, no leak; {} would be sent ({} already judged); nothing was sent",
                if opts.mode == Mode::Audit {
                    "audit"
                } else {
                    "dry run"
                },
                report.planned,
                plan.terms.len(),
                report.planned - report.cached,
                report.cached
            );
        }
        return Ok(0);
    }
    print!(
        "{}",
        judge::format_summary(&report, &opts.settings, &opts.rubric)
    );
    let failed =
        report.count(JudgmentStatus::Unparseable) + report.count(JudgmentStatus::JudgeError);
    Ok(if report.interrupted {
        130
    } else if failed > 0 {
        2
    } else {
        0
    })
}

/// Imports each file in turn; a bad line or an unreadable file is reported and makes the
/// exit code 1 without stopping the others, except under --strict.
fn run_import(db: &std::path::Path, quiet: bool, files: &[PathBuf], strict: bool) -> Result<i32> {
    let mut conn = crate::store::open(db)?;
    let opts = ImportOptions {
        strict,
        progress: !quiet,
    };
    let mut failed = false;
    for path in files {
        let mut report = |r: &crate::import::Rejection| eprintln!("rejected {r}");
        match crate::import::import_file(&mut conn, path, &opts, &mut report) {
            Ok(summary) => {
                failed |= summary.rejected > 0;
                println!("{summary}");
            }
            Err(
                e @ (crate::import::ImportError::Open { .. }
                | crate::import::ImportError::Read { .. }),
            ) if !strict => {
                eprintln!("error: {e}");
                failed = true;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(i32::from(failed))
}

fn run_export(
    db: &std::path::Path,
    quiet: bool,
    out: Option<&std::path::Path>,
    opts: &ExportOptions,
) -> Result<i32> {
    if !db.exists() {
        bail!(
            "{}: no store here\n  fix: pass --db with the store to export from",
            db.display()
        );
    }
    let conn = crate::store::open(db)?;
    let out = out.filter(|p| *p != std::path::Path::new("-"));
    let summary = match out {
        Some(path) => crate::export::export_to_file(&conn, opts, path)?,
        None => {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            match crate::export::export_conversations(&conn, opts, &mut stdout) {
                Ok(summary) => summary,
                Err(e) if e.is_broken_pipe() => return Ok(0),
                Err(e) => return Err(e.into()),
            }
        }
    };
    if !quiet {
        eprintln!(
            "exported {} conversations ({} turns){}",
            summary.conversations,
            summary.turns,
            out.map(|p| format!(" to {}", p.display()))
                .unwrap_or_default()
        );
    }
    Ok(0)
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
