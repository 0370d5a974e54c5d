//! `turnbench judge`: settings overridden by flags (one or several judges: a panel), the
//! Ctrl-C channel, the report and its [`Exit`] (docs/commands/exit-codes.md).

use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::config::{BenchTargetNames, JudgeEndpoint, JudgeSettings, Rubric, Scenario, embedded};
use crate::exit::Exit;
use crate::judge::{self, JudgeOptions, JudgeReport, JudgmentScope, Mode};
use crate::judge_panel::{self, PanelAudit, PanelJob};

/// Score stored conversations with a blind LLM judge; only what is not judged yet
/// is sent.
///
/// Exit status: 0 all judged, 1 an error, 2 some judgments unparseable or judge errors
/// (stored), 3 the audit found a name in a prompt (nothing sent), 4 the store refused a
/// judgment, 5 with --anchors: a judge failed its reference anchors, 130 interrupted (see
/// `turnbench --help`). See docs/judge.md.
#[derive(clap::Args)]
pub struct JudgeArgs {
    /// Judge settings: a file, or a built-in name (judges/default.toml, judges/mock.toml);
    /// repeat for a panel: each judge judges the same conversations, and the report shows
    /// their agreement.
    #[arg(long = "judge", value_name = "JUDGE.toml", required = true)]
    judges: Vec<PathBuf>,
    /// The rubric: a file, or a built-in name (rubrics/multiturn-quality.toml,
    /// rubrics/support-tone.toml).
    #[arg(long)]
    rubric: PathBuf,
    /// A bench.toml whose target names, aliases and hosts are redacted too [default:
    /// ./bench.toml when there is one].
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
    /// Pairwise mode: the judge compares each conversation with the baseline's of the same
    /// scenario and repeat (A or B, or a tie), asked twice with the positions swapped.
    #[arg(long, requires = "baseline")]
    pairwise: bool,
    /// The baseline of --pairwise: a provider or a model label as stored.
    #[arg(long, value_name = "LABEL_OR_TARGET", requires = "pairwise")]
    baseline: Option<String>,
    /// The judge's sanity run: score each scenario's reference conversation and the
    /// variants the checks files' [[defect]] tables spoil; a judge that cannot rank the
    /// references above them is flagged in every report that uses it.
    #[arg(long, conflicts_with_all = ["pairwise", "conversations", "rejudge"])]
    anchors: bool,
    /// Folder of checks files whose [[defect]] tables --anchors spoils references with
    /// [default: ./checks, else the built-in checks].
    #[arg(long)]
    checks: Option<PathBuf>,
    /// Scenario folder: the built-in mock judge grades answers against its references
    /// (and --anchors takes the reference answers from it) [default: ./scenarios, else
    /// the built-in scenarios].
    #[arg(long)]
    scenarios: Option<PathBuf>,
}

/// One line per judge card of each (judge id, rubric id) just judged: the verdict its
/// scores get in a report over the whole store (docs/judge.md "The judge card").
fn card_lines(db: &std::path::Path, judged: &[(String, String)]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for (judge, rubric) in judged {
        let opts = crate::report::ReportOptions {
            judgments: crate::store::facts::JudgmentFilter {
                rubric: Some(rubric.clone()),
                judge: Some(judge.clone()),
            },
            ..crate::report::ReportOptions::default()
        };
        let report = crate::report::build(crate::report::load(db, &opts)?, &opts);
        out.extend(
            report
                .judge_card
                .iter()
                .filter(|c| &c.judge == judge)
                .map(crate::report::judge_card::line),
        );
    }
    Ok(out)
}

impl JudgeArgs {
    pub async fn run(self, global: &Global) -> Result<Exit> {
        // --dry-run prints the prompts even under --audit (which then decides the mode).
        let print_prompts = self.dry_run;
        let scenarios_dir = embedded::resolve_dir(self.scenarios.as_deref(), "scenarios");
        let panel = self.into_options(global)?;
        let mode = panel.first().map_or(Mode::Judge, |o| o.mode);
        // The built-in mock judge grades transcripts against the scenarios' reference
        // answers when it has them.
        let uses_mock = panel
            .iter()
            .any(|o| o.settings.endpoint == JudgeEndpoint::BuiltinMock);
        let scenarios = if uses_mock && mode == Mode::Judge && embedded::is_dir(&scenarios_dir) {
            Scenario::load_dir(&scenarios_dir)?
        } else {
            Vec::new()
        };
        let jobs: Vec<PanelJob> = panel.into_iter().map(|o| PanelJob::new(o, "")).collect();
        let mut anchors_failed = false;
        let mut unscored = 0;
        let mut after_each = |job: &PanelJob, report: &JudgeReport| {
            if report.leaks.is_empty() {
                let closing = judge_panel::closing(&job.opts, report)?;
                print!("{}", closing.text);
                anchors_failed |= closing.anchors_failed;
                unscored += closing.unscored;
            }
            Ok(())
        };
        // Every judge's prompts are audited before any judge of the panel sends: a leak in
        // the second judge's transcripts stops the first one too.
        let outcome =
            judge_panel::judge_panel(jobs, &scenarios, &super::interrupts, &mut after_each).await?;
        print_audit(&outcome.audit, mode, print_prompts, global.quiet);
        if !outcome.audit_passed() {
            return Ok(Exit::Leak);
        }
        for (job, report) in &outcome.judged {
            if let Some(code) = stopping_code(job, report) {
                return Ok(code);
            }
        }
        if mode == Mode::Judge {
            let judged: Vec<(String, String)> = outcome
                .judged
                .iter()
                .map(|(job, _)| (job.opts.settings.id.clone(), job.opts.rubric.id.clone()))
                .collect();
            for line in card_lines(&global.db, &judged)? {
                println!("{line}");
            }
        }
        // A judge that cannot tell references from spoiled answers outranks unscored asks.
        Ok(if anchors_failed {
            Exit::AnchorsFailed
        } else {
            Exit::failed_if(unscored > 0)
        })
    }

    /// The second stage of argument resolution: each judge's settings, the rubric and the
    /// redaction names loaded, flags applied over every settings file.
    fn into_options(self, global: &Global) -> Result<Vec<JudgeOptions>> {
        self.check_flags()?;
        let mode = match (self.audit, self.dry_run) {
            (true, _) => Mode::Audit,
            (false, true) => Mode::DryRun,
            (false, false) => Mode::Judge,
        };
        let rubric = Rubric::load(&embedded::resolve_file(&self.rubric, "rubrics"))?;
        let bench_targets = self.bench_targets()?;
        let selection = JudgmentScope {
            conversations: self.conversations.clone(),
            rejudge: self.rejudge,
            pairwise: self.baseline.clone(),
            anchors: self.anchor_inputs()?,
        };
        let mut panel: Vec<JudgeOptions> = Vec::new();
        for path in &self.judges {
            let settings = self.settings(path, mode == Mode::Judge)?;
            check_differs(&panel, &settings)?;
            panel.push(JudgeOptions {
                db: global.db.clone(),
                settings,
                rubric: rubric.clone(),
                bench_targets: bench_targets.clone(),
                mode,
                quiet: global.quiet,
                selection: selection.clone(),
                mock_url: None,
                stage: None,
            });
        }
        Ok(panel)
    }

    /// The flags' own rules, before any file is read.
    fn check_flags(&self) -> Result<()> {
        if let Some(n) = self.replicates {
            anyhow::ensure!(n >= 1, "--replicates must be at least 1");
        }
        if let Some(n) = self.concurrency {
            anyhow::ensure!(n >= 1, "--concurrency must be at least 1");
        }
        anyhow::ensure!(
            !(self.pairwise || self.anchors) || self.replicates.is_none_or(|n| n == 1),
            "--replicates does not apply to --pairwise or --anchors: each pair is asked once per position, each anchor once\n  fix: leave out --replicates"
        );
        Ok(())
    }

    /// The names of a bench.toml's targets (`--config`, else ./bench.toml when there is
    /// one), redacted besides the store's.
    fn bench_targets(&self) -> Result<Vec<BenchTargetNames>> {
        let bench = self
            .config
            .as_deref()
            .map(|p| embedded::resolve_file(p, "examples"))
            .or_else(|| {
                let here = PathBuf::from(crate::run::builtin::CONVENTIONAL);
                here.is_file().then_some(here)
            });
        Ok(match &bench {
            Some(path) => BenchTargetNames::load(path)?,
            None => Vec::new(),
        })
    }

    /// `--anchors`: each scenario's reference conversation and the variants its checks
    /// file's defects spoil.
    fn anchor_inputs(&self) -> Result<Option<Vec<judge::anchor_run::AnchorInput>>> {
        if !self.anchors {
            return Ok(None);
        }
        let scenarios_dir = embedded::resolve_dir(self.scenarios.as_deref(), "scenarios");
        let checks_dir = embedded::resolve_dir(self.checks.as_deref(), "checks");
        let scenarios = Scenario::load_dir(&scenarios_dir)?;
        let checks = if embedded::is_dir(&checks_dir) {
            crate::checks::CheckSet::load_dir(&checks_dir)?
        } else {
            Vec::new()
        };
        let inputs =
            crate::anchor_suite::inputs(&scenarios, &checks).map_err(anyhow::Error::msg)?;
        anyhow::ensure!(
            inputs.iter().any(|a| a.defect.is_some()),
            "--anchors: no scenario in {} has reference answers and [[defect]] tables in {}\n  fix: point --scenarios and --checks at the suite (defaults: scenarios/, checks/)",
            embedded::describe(&scenarios_dir),
            embedded::describe(&checks_dir)
        );
        Ok(Some(inputs))
    }

    /// One judge's settings with the flags applied over them.
    fn settings(&self, path: &std::path::Path, to_send: bool) -> Result<JudgeSettings> {
        let mut settings = judge_panel::load_settings(path, to_send)?;
        if let Some(n) = self.replicates {
            settings.replicates = n;
        }
        if let Some(s) = &self.sample {
            settings.sample = s.parse().map_err(anyhow::Error::msg)?;
        }
        if let Some(s) = self.seed {
            settings.seed = s;
        }
        if let Some(n) = self.concurrency {
            settings.concurrency = n;
        }
        settings.check_replicates()?;
        Ok(settings)
    }
}

/// A panel's judges must differ: in what they send, and in their ids.
fn check_differs(panel: &[JudgeOptions], settings: &JudgeSettings) -> Result<()> {
    let hash = judge::cache::judge_hash(settings);
    if let Some(other) = panel
        .iter()
        .find(|o| judge::cache::judge_hash(&o.settings) == hash)
    {
        anyhow::bail!(
            "{} and {} would send identical requests (same endpoint, model, parameters, system text and template), so their judgments would be one judge's\n  fix: a panel's judges must differ in what they send: another model (for the built-in mock, another `mock-judge-…` name), parameters or template",
            other.settings.path.display(),
            settings.path.display(),
        );
    }
    if let Some(other) = panel.iter().find(|o| o.settings.id == settings.id) {
        anyhow::bail!(
            "{} and {} both name judge {:?}: a panel's judges must differ\n  fix: give one of them another `id`",
            other.settings.path.display(),
            settings.path.display(),
            settings.id
        );
    }
    Ok(())
}

/// What the audit found (every leak, with its judge), and for a dry run or an audit that
/// found nothing, the prompts (`--dry-run`) and one line per judge.
fn print_audit(audit: &PanelAudit, mode: Mode, print_prompts: bool, quiet: bool) {
    if mode == Mode::Judge && audit.leaks() == 0 {
        return;
    }
    for job in &audit.jobs {
        if print_prompts {
            print!("{}", judge::format_dry_run(&job.plan, &job.settings));
        }
        for l in &job.report.leaks {
            eprintln!(
                "leak: judge {} · conversation {}: {:?} ({}) in \"…{}…\"",
                job.settings.id,
                l.conversation_id,
                l.leak.term,
                l.leak.kind.as_str(),
                l.leak.context
            );
        }
        let r = &job.report;
        if mode != Mode::Judge && r.leaks.is_empty() && !quiet {
            eprintln!(
                "{} · judge {}: the transcripts of {} prompts checked against {} redaction terms, the shipped name list and self-identification phrasing, no leak; {} would be sent ({} already judged); nothing was sent",
                if mode == Mode::Audit {
                    "audit"
                } else {
                    "dry run"
                },
                job.settings.id,
                r.planned,
                job.plan.terms.len(),
                r.planned - r.cached,
                r.cached
            );
        }
    }
    if audit.leaks() > 0 {
        eprintln!(
            "audit: {} names found in the transcripts of {} prompts; nothing was sent\n  fix: add the names to the settings' `redact` list (or keep `builtin_redactions = true`), or leave those conversations out with --conversation",
            audit.leaks(),
            audit.planned()
        );
    }
}

/// How a judge that stopped the panel ends the command, after saying why: a name turned
/// up at send time, the store refused a judgment, or Ctrl-C.
fn stopping_code(job: &PanelJob, report: &JudgeReport) -> Option<Exit> {
    if !report.leaks.is_empty() {
        // Audited before any sending; only a store changed in between gets here.
        eprintln!(
            "audit: judge {}: {} names found; nothing was sent to it",
            job.opts.settings.id,
            report.leaks.len()
        );
        return Some(Exit::Leak);
    }
    if let Some(hint) = &report.format_refused {
        eprintln!("{hint}");
    }
    for f in &report.store_failures {
        eprintln!("store: {f}");
    }
    if !report.store_failures.is_empty() {
        eprintln!(
            "store: {} judgments could not be written; the run stopped sending\n  fix: free disk space (or fix the store), then run the same command again: it asks only what is missing",
            report.store_failures.len()
        );
        return Some(Exit::StoreRefused);
    }
    report.interrupted.then_some(Exit::Interrupted)
}
