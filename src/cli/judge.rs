//! `turnbench judge`: settings overridden by flags, the Ctrl-C channel, the report and its
//! exit code (0 judged, 1 error, 2 unscored judgments stored, 3 leak, 4 the store refused
//! a judgment, 130 interrupted).

use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::config::{BenchTargetNames, JudgeEndpoint, JudgeSettings, Rubric, Scenario};
use crate::judge::{self, JudgeOptions, Mode, Selection};
use crate::mock::MockServer;
use crate::store::judgments::JudgmentStatus;

/// Score stored conversations with a blind LLM judge; only what is not judged yet
/// is sent.
///
/// Exit status: 0 all judged, 1 a definition, usage or setup error, 2 some judgments
/// unparseable or judge errors (stored), 3 the audit found a name in a prompt (nothing
/// sent), 4 the store refused a judgment (the run stopped sending), 130 interrupted.
/// See docs/judge.md.
#[derive(clap::Args)]
pub struct JudgeArgs {
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
    /// Only this conversation (id or uid; repeat the flag for more), instead of the sample.
    #[arg(long = "conversation", value_name = "ID")]
    conversations: Vec<String>,
    /// Ask the selected judgments again even where a scored one is stored; the fresh
    /// answers are stored beside the old rows and the newest scored one counts.
    #[arg(long)]
    rejudge: bool,
    /// Scenario folder: the built-in mock judge grades answers against its references.
    #[arg(long, default_value = "scenarios")]
    scenarios: PathBuf,
}

impl JudgeArgs {
    pub async fn run(self, global: &Global) -> Result<i32> {
        // --dry-run prints the prompts even under --audit (which then decides the mode).
        let print_prompts = self.dry_run;
        let scenarios_dir = self.scenarios.clone();
        let mut opts = self.into_options(global)?;
        // The built-in mock judge, for this command's calls only; it grades transcripts
        // against the scenarios' reference answers when it has them.
        let mut _mock = None;
        if opts.mode == Mode::Judge && opts.settings.endpoint == JudgeEndpoint::BuiltinMock {
            let scenarios = if scenarios_dir.is_dir() {
                Scenario::load_dir(&scenarios_dir)?
            } else {
                Vec::new()
            };
            let server = MockServer::start(
                crate::mock::judge::builtin_config(&opts.settings.model, opts.settings.seed),
                &scenarios,
                "127.0.0.1:0".parse()?,
                None,
            )
            .await?;
            opts.mock_url = Some(server.base_url());
            _mock = Some(server);
        }
        let (report, plan) = judge::judge(&opts, super::interrupts()).await?;
        if print_prompts {
            print!("{}", judge::format_dry_run(&plan, &opts.settings));
        }
        for l in &report.leaks {
            eprintln!(
                "leak: conversation {}: {:?} ({}) in \"…{}…\"",
                l.conversation_id,
                l.leak.term,
                l.leak.kind.as_str(),
                l.leak.context
            );
        }
        if !report.leaks.is_empty() {
            eprintln!(
                "audit: {} names found in the transcripts of {} prompts; nothing was sent\n  fix: add the names to the settings' `redact` list (or keep `builtin_redactions = true`), or drop those conversations with --conversation",
                report.leaks.len(),
                report.planned
            );
            return Ok(3);
        }
        if opts.mode != Mode::Judge {
            if !opts.quiet {
                eprintln!(
                    "{}: the transcripts of {} prompts checked against {} redaction terms, the shipped name list and self-identification phrasing, no leak; {} would be sent ({} already judged); nothing was sent",
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
        let table = {
            let conn = crate::store::open(&opts.db)?;
            crate::store::judgments::judgment_summary(&conn, judge::unscored_reason)?
        };
        print!(
            "{}",
            judge::format_summary(&report, &opts.settings, &opts.rubric, &table)
        );
        for f in &report.store_failures {
            eprintln!("store: {f}");
        }
        if !report.store_failures.is_empty() {
            eprintln!(
                "store: {} judgments could not be written; the run stopped sending\n  fix: free disk space (or fix the store), then run the same command again: it asks only what is missing",
                report.store_failures.len()
            );
        }
        let failed =
            report.count(JudgmentStatus::Unparseable) + report.count(JudgmentStatus::JudgeError);
        Ok(if !report.store_failures.is_empty() {
            4
        } else if report.interrupted {
            130
        } else if failed > 0 {
            2
        } else {
            0
        })
    }

    /// The second stage of argument resolution: settings, rubric and redaction names
    /// loaded, flags applied over the settings file.
    fn into_options(self, global: &Global) -> Result<JudgeOptions> {
        let mut settings = JudgeSettings::load(&self.judge)?;
        if let Some(n) = self.replicates {
            anyhow::ensure!(n >= 1, "--replicates must be at least 1");
            settings.replicates = n;
        }
        if let Some(s) = self.sample {
            settings.sample = s.parse().map_err(anyhow::Error::msg)?;
        }
        if let Some(s) = self.seed {
            settings.seed = s;
        }
        if let Some(n) = self.concurrency {
            anyhow::ensure!(n >= 1, "--concurrency must be at least 1");
            settings.concurrency = n;
        }
        let mode = match (self.audit, self.dry_run) {
            (true, _) => Mode::Audit,
            (false, true) => Mode::DryRun,
            (false, false) => Mode::Judge,
        };
        Ok(JudgeOptions {
            db: global.db.clone(),
            settings,
            rubric: Rubric::load(&self.rubric)?,
            bench_targets: match &self.config {
                Some(path) => BenchTargetNames::load(path)?,
                None => Vec::new(),
            },
            mode,
            quiet: global.quiet,
            selection: Selection {
                conversations: self.conversations,
                rejudge: self.rejudge,
            },
            mock_url: None,
            stage: None,
        })
    }
}
