//! `turnbench run`: collect → check → judge → report in one go, each stage only on what is
//! missing. The stages never call each other; this module orchestrates them: it checks
//! every definition file before anything is sent, starts the shared services (the built-in
//! mock provider and mock judge, when the run uses them) and hands each stage its
//! endpoint, then runs the stages in order against one store.
//!
//! - collect resumes the newest run of the same name when its settings and scenarios are
//!   the same (a re-run after a crash or Ctrl-C does no work twice), else starts a run;
//! - check computes only the results missing for the current check definitions;
//! - judge runs each judge's reference anchors first (cached: once per judge × rubric),
//!   then sends only judgments not yet scored, for every `--judge` × `--rubric`;
//! - report reads the store and is written as HTML; the caller prints it to the terminal.
//!
//! Ctrl-C stops the stage in flight the way the stage itself does, and the run there.

pub mod builtin;

use std::path::{Path, PathBuf};

use tokio::sync::mpsc::Receiver;

use crate::checks::{CheckError, CheckOptions, CheckReport};
use crate::collect::{CollectError, CollectOptions, CollectReport, Resume};
use crate::config::{BenchConfig, BenchTargetNames, ConfigError, JudgeSettings, Rubric, Scenario};
use crate::export::{ExportError, FormatOptions, REPORT_FORMATS};
use crate::judge::{JudgeError, JudgeOptions, JudgeReport, Mode};
use crate::mock::{MockConfig, MockServer};
use crate::report::model::Report;
use crate::report::{ReportError, ReportOptions};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Setup(String),
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

/// What `turnbench run` was asked to do.
pub struct RunOptions {
    pub db: PathBuf,
    /// A bench.toml; `None`: the built-in offline run.
    pub config: Option<PathBuf>,
    /// The built-in run's scenario folder.
    pub scenarios: PathBuf,
    /// The built-in run's repeats.
    pub repeats: u32,
    /// The checks folder (skipped, with a note, when it does not exist).
    pub checks: PathBuf,
    /// Judge settings files; with `rubrics`, every judge judges every rubric. The built-in
    /// run uses the simulated judge and the default rubric when none is given.
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
    /// The process exit code (README): 0 done; 2 done, but conversations failed or
    /// judgments stayed unscored (a real bench; the built-in run's failures are its
    /// simulated faults); 3 a judge prompt named a provider (nothing sent to that judge);
    /// 4 the store refused a write; 130 interrupted.
    pub fn exit_code(&self) -> i32 {
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
            4
        } else if interrupted {
            130
        } else if leaked {
            3
        } else if !self.builtin && (self.collect.failed() > 0 || unscored) {
            2
        } else {
            0
        }
    }
}

/// A judge × rubric to run, loaded and checked before anything is sent.
struct JudgeJob {
    settings: JudgeSettings,
    rubric: Rubric,
}

/// Runs the whole pipeline. `interrupts()` gives each stage its own Ctrl-C channel;
/// `say` prints a line of progress (the caller decides where, and whether).
pub async fn run(
    opts: &RunOptions,
    interrupts: &dyn Fn() -> Receiver<()>,
    say: &dyn Fn(&str),
) -> Result<RunOutcome, RunError> {
    let builtin = opts.config.is_none();
    // Every definition file first: an error names its file and line before anything runs.
    let (judge_files, rubric_files) = if builtin && opts.judges.is_empty() {
        (
            vec![PathBuf::from("judges/mock.toml")],
            if opts.rubrics.is_empty() {
                vec![PathBuf::from("rubrics/multiturn-quality.toml")]
            } else {
                opts.rubrics.clone()
            },
        )
    } else {
        (opts.judges.clone(), opts.rubrics.clone())
    };
    if !judge_files.is_empty() && rubric_files.is_empty() {
        return Err(RunError::Setup(
            "--judge needs at least one --rubric\n  fix: add --rubric rubrics/multiturn-quality.toml (or your own)".into(),
        ));
    }
    let mut jobs = Vec::new();
    for j in &judge_files {
        let mut settings = JudgeSettings::load(j)?;
        if settings.simulated {
            // Simulated judgments are the mock grader's: keyed by its version.
            settings.grader_version = Some(crate::mock::grade::GRADER_VERSION);
        }
        for r in &rubric_files {
            jobs.push(JudgeJob {
                settings: settings.clone(),
                rubric: Rubric::load(r)?,
            });
        }
    }

    // The shared services: the built-in mock provider (built-in run), the mock judge
    // (when a judge names it). They live until the run ends.
    if opts.config.is_none() && !opts.scenarios.is_dir() {
        return Err(RunError::Setup(format!(
            "{}: no scenario folder\n  fix: run from the turnbench checkout, or pass --scenarios DIR",
            opts.scenarios.display()
        )));
    }
    let mut servers: Vec<MockServer> = Vec::new();
    let cfg: BenchConfig = match &opts.config {
        Some(path) => BenchConfig::load(path)?,
        None => {
            let scenarios = Scenario::load_dir(&opts.scenarios)?;
            let mut mock = MockConfig::builtin();
            mock.time_scale = builtin::TIME_SCALE;
            let server = start_mock(mock, &scenarios).await?;
            let cfg = builtin::bench(&server.base_url(), &opts.scenarios, opts.repeats);
            servers.push(server);
            cfg
        }
    };
    let scenarios = crate::collect::load_scenarios(&cfg)?;
    // The judges' reference anchors: each scenario's reference conversation and the
    // variants its checks file's defects spoil (none without references or defects).
    let anchor_inputs = if jobs.is_empty() {
        Vec::new()
    } else {
        let checks = if opts.checks.is_dir() {
            crate::checks::CheckSet::load_dir(&opts.checks)
                .map_err(|e| RunError::Setup(e.to_string()))?
        } else {
            Vec::new()
        };
        crate::anchors::inputs(&scenarios, &checks).map_err(RunError::Setup)?
    };
    let mut mock_judges: Vec<((String, u64), String)> = Vec::new();
    for job in &jobs {
        let key = (job.settings.model.clone(), job.settings.seed);
        if job.settings.endpoint == crate::config::JudgeEndpoint::BuiltinMock
            && !mock_judges.iter().any(|(k, _)| *k == key)
        {
            let server = start_mock(
                crate::mock::judge::builtin_config(&key.0, key.1),
                &scenarios,
            )
            .await?;
            mock_judges.push((key, server.base_url()));
            servers.push(server);
        }
    }

    // 1. collect
    say(&format!(
        "[1/4 collect] {:?}: {} targets × {} scenarios × {} repeats → {}{}",
        cfg.name,
        cfg.targets.len(),
        scenarios.len(),
        cfg.repeats,
        opts.db.display(),
        if builtin {
            format!(
                " (simulated providers; their delays scaled ×{})",
                builtin::TIME_SCALE
            )
        } else {
            String::new()
        }
    ));
    let collect = crate::collect::collect(
        &cfg,
        scenarios,
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
    let mut outcome = RunOutcome {
        builtin,
        collect,
        check: None,
        check_skipped: None,
        judges: Vec::new(),
        judge_skipped: None,
        report: None,
        stopped: false,
    };
    if outcome.collect.interrupted || !outcome.collect.store_failures.is_empty() {
        outcome.stopped = true;
        return Ok(outcome);
    }

    // 2. check
    if opts.checks.is_dir() {
        let check_opts = CheckOptions {
            scenarios_dir: Some(cfg.scenarios_dir.clone()).filter(|d| d.is_dir()),
            progress: !opts.quiet,
            stage: Some("[2/4 check]".into()),
            ..CheckOptions::new(opts.db.clone(), opts.checks.clone())
        };
        let report = tokio::task::spawn_blocking(move || crate::checks::run_checks(&check_opts))
            .await
            .map_err(|e| RunError::Setup(format!("the check stage stopped: {e}")))??;
        say(&format!(
            "[2/4 check] {} new results ({} passed, {} failed, {} not scored), {} already current",
            report.evaluated.total(),
            report.evaluated.passed,
            report.evaluated.failed,
            report.evaluated.not_scored,
            report.already_current
        ));
        outcome.check = Some(report);
    } else {
        let why = format!(
            "{}: no checks folder (pass --checks DIR to score with rule-based checks)",
            opts.checks.display()
        );
        say(&format!("[2/4 check] skipped: {why}"));
        outcome.check_skipped = Some(why);
    }

    // 3. judge
    if jobs.is_empty() {
        let why = "no --judge given (add --judge judges/default.toml --rubric rubrics/multiturn-quality.toml)".to_string();
        say(&format!("[3/4 judge] skipped: {why}"));
        outcome.judge_skipped = Some(why);
    }
    let bench_targets = BenchTargetNames::of(&cfg);
    for job in jobs {
        let name = format!(
            "{} · {}@{}",
            job.settings.id, job.rubric.id, job.rubric.version
        );
        let mock_url = mock_judges
            .iter()
            .find(|(k, _)| *k == (job.settings.model.clone(), job.settings.seed))
            .map(|(_, url)| url.clone());
        let judge_opts = JudgeOptions {
            db: opts.db.clone(),
            settings: job.settings,
            rubric: job.rubric,
            bench_targets: bench_targets.clone(),
            mode: Mode::Judge,
            quiet: opts.quiet,
            selection: Default::default(),
            mock_url,
            stage: Some("[3/4 judge]".into()),
        };
        // Anchors before trust: the judge's sanity run first (cached: once per judge ×
        // rubric), its result said here and shown in the report beside its scores.
        if anchor_inputs.iter().any(|a| a.defect.is_some()) {
            let anchor_opts = JudgeOptions {
                selection: crate::judge::Selection {
                    anchors: Some(anchor_inputs.clone()),
                    ..Default::default()
                },
                ..judge_opts.clone()
            };
            let (report, _plan) = crate::judge::judge(&anchor_opts, interrupts()).await?;
            let verdict = anchor_verdict(&opts.db, &anchor_opts)?;
            say(&format!(
                "[3/4 judge] {name} anchors: {} sent, {} already judged; {}",
                report.launched,
                report.cached,
                verdict.as_deref().unwrap_or("no anchor scored")
            ));
            let stop = report.interrupted || !report.store_failures.is_empty();
            let leaked = !report.leaks.is_empty();
            outcome.judges.push((format!("{name} · anchors"), report));
            if stop {
                outcome.stopped = true;
                return Ok(outcome);
            }
            if leaked {
                continue;
            }
        } else {
            say(&format!(
                "[3/4 judge] {name} anchors: skipped (no scenario with reference answers and [[defect]] tables in its checks file)"
            ));
        }
        let (report, _plan) = crate::judge::judge(&judge_opts, interrupts()).await?;
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
        let stop = report.interrupted || !report.store_failures.is_empty();
        outcome.judges.push((name, report));
        if stop {
            outcome.stopped = true;
            return Ok(outcome);
        }
    }

    // 4. report
    say(&format!("[4/4 report] {}", opts.out.display()));
    let db = opts.db.clone();
    let report =
        tokio::task::spawn_blocking(move || crate::report::build(&db, &ReportOptions::default()))
            .await
            .map_err(|e| RunError::Setup(format!("the report stage stopped: {e}")))??;
    let html = crate::export::find(REPORT_FORMATS, "html")?;
    crate::export::write_file(html, &report, &FormatOptions::default(), &opts.out)?;
    outcome.report = Some(report);
    drop(servers);
    Ok(outcome)
}

/// The anchor result of this judge × rubric as reports read it, in one sentence.
fn anchor_verdict(db: &Path, opts: &JudgeOptions) -> Result<Option<String>, RunError> {
    let conn = crate::store::open(db).map_err(crate::judge::JudgeError::from)?;
    let rows = crate::store::anchors::current_anchor_judgments(&conn)
        .map_err(crate::judge::JudgeError::from)?;
    let rubric = format!("{}@{}", opts.rubric.id, opts.rubric.version);
    Ok(crate::report::anchors::sections(&rows)
        .iter()
        .find(|a| {
            a.rubric == rubric
                && a.judge == opts.settings.id
                && a.simulated == opts.settings.simulated
        })
        .map(crate::report::anchors::sentence))
}

async fn start_mock(config: MockConfig, scenarios: &[Scenario]) -> Result<MockServer, RunError> {
    let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    MockServer::start(config, scenarios, loopback, None)
        .await
        .map_err(|e| RunError::Setup(format!("the built-in mock: {e}")))
}

/// What to run next, for the closing lines.
pub fn next_steps(outcome: &RunOutcome, out: &Path) -> String {
    let mut s = format!("report written to {}", out.display());
    if outcome.builtin {
        s.push_str(
            "\nthese figures are simulated (the built-in mock provider and judge). With real providers:\n  export TOGETHER_API_KEY=... FIREWORKS_API_KEY=...        # the variables your bench.toml names\n  turnbench collect --config examples/bench.toml --dry-run  # what would be sent, nothing sent\n  turnbench run --config examples/bench.toml --judge judges/default.toml --rubric rubrics/multiturn-quality.toml",
        );
    }
    s
}
