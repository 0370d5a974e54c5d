//! `turnbench run`: collect → check → judge → report in one go, each stage only on what is
//! missing. The stages never call each other; this module orchestrates them: it checks
//! every definition file before anything is sent, starts the shared services (the built-in
//! mock provider for the run, the mock judges for the judge stage, when they are used)
//! and hands each stage its endpoint, then runs the stages in order against one store.
//!
//! - collect resumes the newest run of the same name when its settings and scenarios are
//!   the same (a re-run after a crash or Ctrl-C does no work twice), else starts a run;
//! - check computes only the results missing for the current check definitions;
//! - judge goes through [`crate::judge_panel`], the seam `turnbench judge` uses too: every judge's
//!   prompts audited (and its endpoint checked) before any judge sends, the mock judges
//!   started, then each judge's reference anchors (cached: once per judge × rubric) and
//!   the judgments not yet scored, for every `--judge` × `--rubric`;
//! - report reads the store and is written as HTML; the caller prints it to the terminal.
//!
//! Ctrl-C stops the stage in flight the way the stage itself does, and the run there.

pub mod builtin;

use std::path::{Path, PathBuf};

use tokio::sync::mpsc::Receiver;

use crate::checks::{CheckError, CheckOptions, CheckReport};
use crate::collect::{CollectError, CollectOptions, CollectReport, Resume};
use crate::config::{
    BenchConfig, BenchTargetNames, ConfigError, JudgeSettings, Rubric, Scenario, embedded,
};
use crate::exit::Exit;
use crate::export::{ExportError, FormatOptions, REPORT_FORMATS};
use crate::judge::anchor_run::AnchorInput;
use crate::judge::{JudgeError, JudgeOptions, JudgeReport, JudgmentScope, Mode};
use crate::judge_panel::{self, PanelJob};
use crate::report::model::Report;
use crate::report::{ReportError, ReportOptions};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(
        "--judge needs at least one --rubric\n  fix: add --rubric rubrics/multiturn-quality.toml (or your own)"
    )]
    JudgeWithoutRubric,
    /// A scenario's references and its checks file's defects do not make anchors.
    #[error("{0}")]
    Anchors(String),
    /// The built-in mock provider could not start (it listens on 127.0.0.1).
    #[error("{0}")]
    MockProvider(String),
    /// `turnbench mock` could not listen where it was asked to.
    #[error("cannot listen on {addr}: {error}")]
    Listen {
        addr: std::net::SocketAddr,
        error: String,
    },
    /// A stage's worker thread ended without its result (it panicked or was cancelled).
    #[error("the {stage} stage stopped: {error}")]
    StageStopped { stage: &'static str, error: String },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Collect(#[from] CollectError),
    #[error(transparent)]
    Check(#[from] CheckError),
    #[error(transparent)]
    Judge(#[from] JudgeError),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Export(#[from] ExportError),
}

/// What `turnbench run` was asked to do. Each definition not named here is taken from
/// its conventional place in the current directory, else from the built-in set
/// ([`crate::config::embedded`]).
pub struct RunOptions {
    pub db: PathBuf,
    /// A bench.toml (`--config`); `None`: `./bench.toml`, else the built-in bench.
    pub config: Option<PathBuf>,
    /// `--scenarios`: the scenario folder, whatever the bench says.
    pub scenarios: Option<PathBuf>,
    /// `--repeats`, whatever the bench says.
    pub repeats: Option<u32>,
    /// `--collector`, whatever the bench says.
    pub collector: Option<String>,
    /// `--checks`; `None`: `./checks`, else the built-in checks.
    pub checks: Option<PathBuf>,
    /// Judge settings files; with `rubrics`, every judge judges every rubric. A bench of
    /// simulated providers uses the simulated judge and the default rubric when none is
    /// given; a real bench runs no judge unless one is given.
    pub judges: Vec<PathBuf>,
    pub rubrics: Vec<PathBuf>,
    /// Where the HTML report goes.
    pub out: PathBuf,
    pub quiet: bool,
}

/// What a run did, stage by stage (a stage that did not run is `None`).
pub struct RunOutcome {
    pub builtin: bool,
    pub collect: CollectReport,
    pub check: Option<CheckReport>,
    /// Why the check stage was skipped, if it was.
    pub check_skipped: Option<String>,
    pub judges: Vec<(String, JudgeReport)>,
    /// Why the judge stage was skipped, if it was.
    pub judge_skipped: Option<String>,
    pub report: Option<Report>,
    /// The run stopped early: Ctrl-C, or the store refused a write.
    pub stopped: bool,
}

impl RunOutcome {
    /// How the run ended (docs/commands/exit-codes.md): some failed when conversations
    /// failed or judgments stayed unscored (a real bench; the built-in run's failures are
    /// its simulated faults); a leak when a judge prompt named a provider (nothing sent to
    /// any judge); the store refused a write; interrupted.
    pub fn exit(&self) -> Exit {
        let store_refused = !self.collect.store_failures.is_empty()
            || self
                .judges
                .iter()
                .any(|(_, j)| !j.store_failures.is_empty());
        let interrupted =
            self.collect.interrupted || self.judges.iter().any(|(_, j)| j.interrupted);
        let leaked = self.judges.iter().any(|(_, j)| !j.leaks.is_empty());
        let unscored = self
            .judges
            .iter()
            .any(|(_, j)| j.by_status.iter().any(|(s, n)| *s != "ok" && *n > 0));
        if store_refused {
            Exit::StoreRefused
        } else if interrupted {
            Exit::Interrupted
        } else if leaked {
            Exit::Leak
        } else {
            Exit::failed_if(!self.builtin && (self.collect.failed() > 0 || unscored))
        }
    }
}

/// The judge × rubric pairs to run, each file resolved (on disk, else built in), loaded
/// and checked. A simulated bench without `--judge` gets the simulated judge and, without
/// `--rubric`, the default rubric.
fn judge_jobs(
    opts: &RunOptions,
    simulated_bench: bool,
) -> Result<Vec<(JudgeSettings, Rubric)>, RunError> {
    let mut judge_files: Vec<PathBuf> = opts.judges.clone();
    let mut rubric_files: Vec<PathBuf> = opts.rubrics.clone();
    if simulated_bench && judge_files.is_empty() {
        judge_files.push("judges/mock.toml".into());
        if rubric_files.is_empty() {
            rubric_files.push("rubrics/multiturn-quality.toml".into());
        }
    }
    if !judge_files.is_empty() && rubric_files.is_empty() {
        return Err(RunError::JudgeWithoutRubric);
    }
    let mut jobs = Vec::new();
    for j in &judge_files {
        // `run` judges what it collects: the judges' variables are needed, as the bench's are.
        let settings = judge_panel::load_settings(j, true)?;
        for r in &rubric_files {
            let rubric = Rubric::load(&embedded::resolve_file(r, "rubrics"))?;
            jobs.push((settings.clone(), rubric));
        }
    }
    Ok(jobs)
}

/// Every definition a run reads, loaded and checked before anything runs.
struct Definitions {
    bench_path: PathBuf,
    cfg: BenchConfig,
    /// Every target is the built-in mock's.
    builtin: bool,
    jobs: Vec<(JudgeSettings, Rubric)>,
    scenarios: Vec<Scenario>,
    checks_dir: PathBuf,
    checks_found: bool,
    /// The judges' reference anchors: each scenario's reference conversation and the
    /// variants its checks file's defects spoil (none without references or defects).
    anchors: Vec<AnchorInput>,
}

/// Every definition file first: an error names its file and line before anything runs.
fn definitions(opts: &RunOptions) -> Result<Definitions, RunError> {
    let bench_path = builtin::bench_path(opts.config.as_deref());
    let cfg: BenchConfig = builtin::load(
        &bench_path,
        &builtin::Overrides {
            scenarios: opts.scenarios.clone(),
            repeats: opts.repeats,
            without_keys: false,
            collector: opts.collector.clone(),
        },
    )?;
    let builtin = builtin::all_mock(&cfg);
    let jobs = judge_jobs(opts, builtin)?;
    let scenarios = crate::collect::load_scenarios(&cfg)?;
    let checks_dir = embedded::resolve_dir(opts.checks.as_deref(), "checks");
    let checks_found = embedded::is_dir(&checks_dir);
    let anchors = if jobs.is_empty() || !checks_found {
        Vec::new()
    } else {
        let checks = crate::checks::CheckSet::load_dir(&checks_dir)?;
        crate::anchor_suite::inputs(&scenarios, &checks).map_err(RunError::Anchors)?
    };
    Ok(Definitions {
        bench_path,
        cfg,
        builtin,
        jobs,
        scenarios,
        checks_dir,
        checks_found,
        anchors,
    })
}

impl Definitions {
    /// The first line: where each definition came from.
    fn describe(&self) -> String {
        format!(
            "[0/4 definitions] bench {}; scenarios {}; checks {}",
            embedded::describe(&self.bench_path),
            embedded::describe(&self.cfg.scenarios_dir),
            if self.checks_found {
                embedded::describe(&self.checks_dir)
            } else {
                format!("none ({} is not a folder)", self.checks_dir.display())
            }
        )
    }
}

/// Runs the whole pipeline. `interrupts()` gives each stage its own Ctrl-C channel;
/// `say` prints a line of progress (the caller decides where, and whether).
pub async fn run(
    opts: &RunOptions,
    interrupts: &dyn Fn() -> Receiver<()>,
    say: &dyn Fn(&str),
) -> Result<RunOutcome, RunError> {
    let mut defs = definitions(opts)?;
    say(&defs.describe());
    // The shared service: the built-in mock provider, for targets that name it. It lives
    // until the run ends (the mock judges live as long as the judge stage).
    let provider = builtin::serve(&mut defs.cfg, &defs.scenarios, builtin::TIME_SCALE)
        .await
        .map_err(RunError::MockProvider)?;
    let mut outcome = collect_stage(opts, &defs, interrupts, say).await?;
    if !outcome.stopped {
        check_stage(opts, &defs, &mut outcome, say).await?;
        judge_stage(opts, &defs, &mut outcome, interrupts, say).await?;
    }
    if !outcome.stopped {
        report_stage(opts, defs.cfg.report_slo, &mut outcome, say).await?;
    }
    drop(provider);
    Ok(outcome)
}

/// Stage 1, collect: resumes the newest run of the same name when it is the same, else
/// starts one.
async fn collect_stage(
    opts: &RunOptions,
    defs: &Definitions,
    interrupts: &dyn Fn() -> Receiver<()>,
    say: &dyn Fn(&str),
) -> Result<RunOutcome, RunError> {
    let cfg = &defs.cfg;
    say(&format!(
        "[1/4 collect] {:?}: {} targets × {} scenarios × {} repeats → {}{}",
        cfg.name,
        cfg.targets.len(),
        defs.scenarios.len(),
        cfg.repeats,
        opts.db.display(),
        if defs.builtin {
            format!(
                " (simulated providers; their delays scaled ×{})",
                builtin::TIME_SCALE
            )
        } else {
            String::new()
        }
    ));
    let collect = crate::collect::collect(
        cfg,
        defs.scenarios.clone(),
        &CollectOptions {
            db: opts.db.clone(),
            resume: Resume::IfSame,
            quiet: opts.quiet,
            stage: Some("[1/4 collect]".into()),
        },
        interrupts(),
    )
    .await?;
    say(&format!(
        "[1/4 collect] run {}: {} conversations run, {} already stored, {} failed",
        collect.run_id,
        collect.launched,
        collect.skipped,
        collect.failed()
    ));
    let stopped = collect.interrupted || !collect.store_failures.is_empty();
    Ok(RunOutcome {
        builtin: defs.builtin,
        collect,
        check: None,
        check_skipped: None,
        judges: Vec::new(),
        judge_skipped: None,
        report: None,
        stopped,
    })
}

/// Stage 2, check: only the results missing for the current check definitions.
async fn check_stage(
    opts: &RunOptions,
    defs: &Definitions,
    outcome: &mut RunOutcome,
    say: &dyn Fn(&str),
) -> Result<(), RunError> {
    if !defs.checks_found {
        let why = format!(
            "{}: no checks folder (pass --checks DIR to score with rule-based checks)",
            defs.checks_dir.display()
        );
        say(&format!("[2/4 check] skipped: {why}"));
        outcome.check_skipped = Some(why);
        return Ok(());
    }
    let check_opts = CheckOptions {
        scenarios_dir: Some(defs.cfg.scenarios_dir.clone()),
        progress: !opts.quiet,
        stage: Some("[2/4 check]".into()),
        ..CheckOptions::new(opts.db.clone(), defs.checks_dir.clone())
    };
    let report = tokio::task::spawn_blocking(move || crate::checks::run_checks(&check_opts))
        .await
        .map_err(|e| RunError::StageStopped {
            stage: "check",
            error: e.to_string(),
        })??;
    say(&format!(
        "[2/4 check] {} new results ({} passed, {} failed, {} not scored), {} already current",
        report.evaluated.total(),
        report.evaluated.passed,
        report.evaluated.failed,
        report.evaluated.not_scored,
        report.already_current
    ));
    outcome.check = Some(report);
    Ok(())
}

/// The panel of a run: for every judge × rubric, its anchors first (when the scenarios
/// have references and defects), then the stored conversations.
fn panel(opts: &RunOptions, defs: &Definitions) -> Vec<PanelJob> {
    let bench_targets = BenchTargetNames::of(&defs.cfg);
    let with_anchors = defs.anchors.iter().any(|a| a.defect.is_some());
    let mut jobs = Vec::new();
    for (settings, rubric) in &defs.jobs {
        let judge_opts = JudgeOptions {
            db: opts.db.clone(),
            settings: settings.clone(),
            rubric: rubric.clone(),
            bench_targets: bench_targets.clone(),
            mode: Mode::Judge,
            quiet: opts.quiet,
            selection: Default::default(),
            mock_url: None,
            stage: Some("[3/4 judge]".into()),
        };
        if with_anchors {
            let anchor_opts = JudgeOptions {
                selection: JudgmentScope {
                    anchors: Some(defs.anchors.clone()),
                    ..Default::default()
                },
                ..judge_opts.clone()
            };
            jobs.push(PanelJob::new(anchor_opts, " · anchors"));
        }
        jobs.push(PanelJob::new(judge_opts, ""));
    }
    jobs
}

/// Stage 3, judge: every judge's prompts audited before any judge sends (a name in the prompts
/// of one stops them all: nothing is sent), then each judge's anchors (cached: once per
/// judge × rubric), then the judgments not yet scored.
async fn judge_stage(
    opts: &RunOptions,
    defs: &Definitions,
    outcome: &mut RunOutcome,
    interrupts: &dyn Fn() -> Receiver<()>,
    say: &dyn Fn(&str),
) -> Result<(), RunError> {
    if defs.jobs.is_empty() {
        let why = "no --judge given (add --judge judges/default.toml --rubric rubrics/multiturn-quality.toml)".to_string();
        say(&format!("[3/4 judge] skipped: {why}"));
        outcome.judge_skipped = Some(why);
        return Ok(());
    }
    let jobs = panel(opts, defs);
    let anchors_skipped = !defs.anchors.iter().any(|a| a.defect.is_some());
    let mut after_each =
        |job: &PanelJob, report: &JudgeReport| say_judged(job, report, anchors_skipped, say);
    let panel =
        judge_panel::judge_panel(jobs, &defs.scenarios, interrupts, &mut after_each).await?;
    for job in panel
        .audit
        .jobs
        .iter()
        .filter(|j| !j.report.leaks.is_empty())
    {
        say(&format!(
            "[3/4 judge] {}: the audit found {} names in its prompts: nothing was sent to any judge (`turnbench judge --audit` lists them)",
            job.name,
            job.report.leaks.len()
        ));
    }
    outcome.stopped = panel.stopped;
    if !panel.audit_passed() {
        outcome.judges = panel
            .audit
            .jobs
            .into_iter()
            .filter(|j| !j.report.leaks.is_empty())
            .map(|j| (j.name, j.report))
            .collect();
        return Ok(());
    }
    outcome.judges = panel
        .judged
        .into_iter()
        .map(|(job, report)| (job.name, report))
        .collect();
    Ok(())
}

/// The progress line of a judge that ran: its anchors' verdict, or what it sent.
fn say_judged(
    job: &PanelJob,
    report: &JudgeReport,
    anchors_skipped: bool,
    say: &dyn Fn(&str),
) -> Result<(), JudgeError> {
    let o = &job.opts;
    let name = format!("{} · {}@{}", o.settings.id, o.rubric.id, o.rubric.version);
    if report.anchors {
        let verdict = judge_panel::anchor_verdict(o)?;
        say(&format!(
            "[3/4 judge] {name} anchors: {} sent, {} already judged; {}",
            report.launched,
            report.cached,
            verdict.as_deref().unwrap_or("no anchor scored")
        ));
        return Ok(());
    }
    if anchors_skipped {
        say(&format!(
            "[3/4 judge] {name} anchors: skipped (no scenario with reference answers and [[defect]] tables in its checks file)"
        ));
    }
    say(&format!(
        "[3/4 judge] {name}{}: {} sent, {} already judged{}",
        if report.simulated { " (simulated)" } else { "" },
        report.launched,
        report.cached,
        if report.leaks.is_empty() {
            String::new()
        } else {
            format!(
                "; the audit found {} names in prompts: nothing sent",
                report.leaks.len()
            )
        }
    ));
    if let Some(hint) = &report.format_refused {
        say(&format!("[3/4 judge] {hint}"));
    }
    Ok(())
}

/// Stage 4, report: read from the store, written as HTML; the caller prints it to the
/// terminal. The bench's `[report] slo` gives goodput's objectives.
async fn report_stage(
    opts: &RunOptions,
    slo: Option<crate::config::slo::Slo>,
    outcome: &mut RunOutcome,
    say: &dyn Fn(&str),
) -> Result<(), RunError> {
    say(&format!("[4/4 report] {}", opts.out.display()));
    let db = opts.db.clone();
    let report = tokio::task::spawn_blocking(move || {
        let opts = ReportOptions {
            slo,
            ..ReportOptions::default()
        };
        crate::report::load(&db, &opts).map(|facts| crate::report::build(facts, &opts))
    })
    .await
    .map_err(|e| RunError::StageStopped {
        stage: "report",
        error: e.to_string(),
    })??;
    let html = crate::export::find(REPORT_FORMATS, "html")?;
    crate::export::write_file(html, &report, &FormatOptions::default(), &opts.out)?;
    say(&format!(
        "[4/4 report] {:.1} kB, {} conversation views (`turnbench report --conversations all|none` for more or none)",
        std::fs::metadata(&opts.out).map_or(0, |m| m.len()) as f64 / 1000.0,
        report.drilldown.views.len()
    ));
    for card in &report.judge_card {
        say(&format!(
            "[4/4 report] {}",
            crate::report::judge_card::line(card)
        ));
    }
    outcome.report = Some(report);
    Ok(())
}

/// What to run next, for the closing lines.
pub fn next_steps(outcome: &RunOutcome, out: &Path) -> String {
    let mut s = format!("report written to {}", out.display());
    if outcome.builtin {
        s.push_str(
            "\nthese figures are simulated (the built-in mock provider and judge). With real providers:\n  turnbench init my-bench && cd my-bench    # an editable bench.toml, scenarios/, checks/, rubrics/, judges/\n  # in bench.toml: uncomment real targets; export the key variables they name\n  turnbench collect --dry-run                # what would be sent, nothing sent\n  turnbench run --judge judges/default.toml --rubric rubrics/multiturn-quality.toml",
        );
    }
    s
}
