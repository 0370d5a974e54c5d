//! `turnbench judge`: settings overridden by flags (one or several judges: a panel), the
//! Ctrl-C channel, the report and its exit code (0 judged, 1 error, 2 unscored judgments
//! stored, 3 leak, 4 the store refused a judgment, 5 `--anchors`: the judge failed its
//! reference anchors, 130 interrupted).

use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::config::{BenchTargetNames, JudgeEndpoint, JudgeSettings, Rubric, Scenario, embedded};
use crate::judge::{self, JudgeOptions, Mode, Selection};
use crate::mock::MockServer;
use crate::store::judgments::JudgmentStatus;

/// Score stored conversations with a blind LLM judge; only what is not judged yet
/// is sent.
///
/// Exit status: 0 all judged, 1 a definition, usage or setup error, 2 some judgments
/// unparseable or judge errors (stored), 3 the audit found a name in a prompt (nothing
/// sent), 4 the store refused a judgment (the run stopped sending), 5 with --anchors: a
/// judge failed its reference anchors (its scores are not evidence), 130 interrupted.
/// See docs/judge.md.
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

impl JudgeArgs {
    pub async fn run(self, global: &Global) -> Result<i32> {
        // --dry-run prints the prompts even under --audit (which then decides the mode).
        let print_prompts = self.dry_run;
        let scenarios_dir = embedded::resolve_dir(self.scenarios.as_deref(), "scenarios");
        let panel = self.into_options(global)?;
        let mode = panel.first().map_or(Mode::Judge, |o| o.mode);
        // Audit every judge's prompts before any judge of a panel sends: a leak in the
        // second judge's transcripts stops the first one too. (A lone judge audits its own
        // prompts before it sends.)
        let mut leaks = 0;
        let mut planned = 0;
        let pre_audit = mode != Mode::Judge || panel.len() > 1;
        for opts in panel.iter().filter(|_| pre_audit) {
            let audit_opts = JudgeOptions {
                mode: if mode == Mode::Judge {
                    Mode::Audit
                } else {
                    mode
                },
                ..opts.clone()
            };
            let (report, plan) = judge::judge(&audit_opts, super::interrupts()).await?;
            if print_prompts {
                print!("{}", judge::format_dry_run(&plan, &opts.settings));
            }
            for l in &report.leaks {
                eprintln!(
                    "leak: judge {} · conversation {}: {:?} ({}) in \"…{}…\"",
                    opts.settings.id,
                    l.conversation_id,
                    l.leak.term,
                    l.leak.kind.as_str(),
                    l.leak.context
                );
            }
            leaks += report.leaks.len();
            planned += report.planned;
            if mode != Mode::Judge && report.leaks.is_empty() && !opts.quiet {
                eprintln!(
                    "{} · judge {}: the transcripts of {} prompts checked against {} redaction terms, the shipped name list and self-identification phrasing, no leak; {} would be sent ({} already judged); nothing was sent",
                    if mode == Mode::Audit {
                        "audit"
                    } else {
                        "dry run"
                    },
                    opts.settings.id,
                    report.planned,
                    plan.terms.len(),
                    report.planned - report.cached,
                    report.cached
                );
            }
        }
        if leaks > 0 {
            eprintln!(
                "audit: {leaks} names found in the transcripts of {planned} prompts; nothing was sent\n  fix: add the names to the settings' `redact` list (or keep `builtin_redactions = true`), or leave those conversations out with --conversation"
            );
            return Ok(3);
        }
        if mode != Mode::Judge {
            return Ok(0);
        }
        let mut code = 0;
        let mut anchors_failed = false;
        for mut opts in panel {
            // The built-in mock judge, for this judge's calls only; it grades transcripts
            // against the scenarios' reference answers when it has them.
            let mut _mock = None;
            if opts.settings.endpoint == JudgeEndpoint::BuiltinMock {
                let scenarios = if embedded::is_dir(&scenarios_dir) {
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
            let (report, _) = judge::judge(&opts, super::interrupts()).await?;
            if !report.leaks.is_empty() {
                // Audited above; only a store changed in between gets here.
                eprintln!(
                    "audit: judge {}: {} names found; nothing was sent to it",
                    opts.settings.id,
                    report.leaks.len()
                );
                return Ok(3);
            }
            let conn = crate::store::open(&opts.db)?;
            let table = crate::store::judgments::judgment_summary(&conn, judge::unscored_reason)?;
            print!(
                "{}",
                judge::format_summary(&report, &opts.settings, &opts.rubric, &table)
            );
            if report.anchors {
                let rows = crate::store::anchors::current_anchor_judgments(&conn)?;
                let rubric_key = format!("{}@{}", opts.rubric.id, opts.rubric.version);
                for a in crate::report::anchors::sections(&rows).iter().filter(|a| {
                    a.rubric == rubric_key
                        && a.judge == opts.settings.id
                        && a.simulated == opts.settings.simulated
                }) {
                    println!("anchors: {}", crate::report::anchors::sentence(a));
                    anchors_failed |= !a.passed;
                }
            }
            if report.pairwise.is_some() {
                let verdicts = crate::store::pairwise::pairwise_verdicts(&conn)?;
                print!(
                    "{}",
                    judge::format_pairwise_summary(&opts.settings, &opts.rubric, &verdicts)
                );
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
                return Ok(4);
            }
            if report.interrupted {
                return Ok(130);
            }
            let failed = report.count(JudgmentStatus::Unparseable)
                + report.count(JudgmentStatus::JudgeError);
            if failed > 0 {
                code = 2;
            }
        }
        // A judge that cannot tell references from spoiled answers outranks unscored asks.
        Ok(if anchors_failed { 5 } else { code })
    }

    /// The second stage of argument resolution: each judge's settings, the rubric and the
    /// redaction names loaded, flags applied over every settings file.
    fn into_options(self, global: &Global) -> Result<Vec<JudgeOptions>> {
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
        let mode = match (self.audit, self.dry_run) {
            (true, _) => Mode::Audit,
            (false, true) => Mode::DryRun,
            (false, false) => Mode::Judge,
        };
        let rubric = Rubric::load(&embedded::resolve_file(&self.rubric, "rubrics"))?;
        let bench = self
            .config
            .as_deref()
            .map(|p| embedded::resolve_file(p, "examples"))
            .or_else(|| {
                let here = PathBuf::from(crate::run::builtin::CONVENTIONAL);
                here.is_file().then_some(here)
            });
        let bench_targets = match &bench {
            Some(path) => BenchTargetNames::load(path)?,
            None => Vec::new(),
        };
        let anchors = if self.anchors {
            let scenarios_dir = embedded::resolve_dir(self.scenarios.as_deref(), "scenarios");
            let checks_dir = embedded::resolve_dir(self.checks.as_deref(), "checks");
            let scenarios = Scenario::load_dir(&scenarios_dir)?;
            let checks = if embedded::is_dir(&checks_dir) {
                crate::checks::CheckSet::load_dir(&checks_dir)?
            } else {
                Vec::new()
            };
            let inputs = crate::anchors::inputs(&scenarios, &checks).map_err(anyhow::Error::msg)?;
            anyhow::ensure!(
                inputs.iter().any(|a| a.defect.is_some()),
                "--anchors: no scenario in {} has reference answers and [[defect]] tables in {}\n  fix: point --scenarios and --checks at the suite (defaults: scenarios/, checks/)",
                embedded::describe(&scenarios_dir),
                embedded::describe(&checks_dir)
            );
            Some(inputs)
        } else {
            None
        };
        let mut panel: Vec<JudgeOptions> = Vec::new();
        for path in &self.judges {
            let path = &embedded::resolve_file(path, "judges");
            let mut settings = JudgeSettings::load(path)?;
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
            if settings.simulated {
                // Simulated judgments are the mock grader's: keyed by its version.
                settings.grader_version = Some(crate::mock::grade::GRADER_VERSION);
            }
            let hash = judge::cache::judge_hash(&settings);
            if let Some(other) = panel
                .iter()
                .find(|o| judge::cache::judge_hash(&o.settings) == hash)
            {
                anyhow::bail!(
                    "{} and {} would send identical requests (same endpoint, model, parameters, system text and template), so their judgments would be one judge's\n  fix: a panel's judges must differ in what they send: another model (for the built-in mock, another `mock-judge-…` name), parameters or template",
                    other.settings.path.display(),
                    path.display(),
                );
            }
            if let Some(other) = panel.iter().find(|o| o.settings.id == settings.id) {
                anyhow::bail!(
                    "{} and {} both name judge {:?}: a panel's judges must differ\n  fix: give one of them another `id`",
                    other.settings.path.display(),
                    path.display(),
                    settings.id
                );
            }
            panel.push(JudgeOptions {
                db: global.db.clone(),
                settings,
                rubric: rubric.clone(),
                bench_targets: bench_targets.clone(),
                mode,
                quiet: global.quiet,
                selection: Selection {
                    conversations: self.conversations.clone(),
                    rejudge: self.rejudge,
                    pairwise: self.baseline.clone(),
                    anchors: anchors.clone(),
                },
                mock_url: None,
                stage: None,
            });
        }
        Ok(panel)
    }
}
