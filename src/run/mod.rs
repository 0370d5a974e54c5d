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
use crate::config::{
    BenchConfig, BenchTargetNames, ConfigError, JudgeSettings, Rubric, Scenario, embedded,
};
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

/// The judge × rubric pairs to run, each file resolved (on disk, else built in), loaded
/// and checked. A simulated bench without `--judge` gets the simulated judge and, without
/// `--rubric`, the default rubric.
fn judge_jobs(opts: &RunOptions, simulated_bench: bool) -> Result<Vec<JudgeJob>, RunError> {
    let mut judge_files: Vec<PathBuf> = opts.judges.clone();
    let mut rubric_files: Vec<PathBuf> = opts.rubrics.clone();
    if simulated_bench && judge_files.is_empty() {
        judge_files.push("judges/mock.toml".into());
        if rubric_files.is_empty() {
            rubric_files.push("rubrics/multiturn-quality.toml".into());
        }
    }
    if !judge_files.is_empty() && rubric_files.is_empty() {
        return Err(RunError::Setup(
            "--judge needs at least one --rubric\n  fix: add --rubric rubrics/multiturn-quality.toml (or your own)".into(),
        ));
    }
    let mut jobs = Vec::new();
    for j in &judge_files {
        let mut settings = JudgeSettings::load(&embedded::resolve_file(j, "judges"))?;
        if settings.simulated {
            // Simulated judgments are the mock grader's: keyed by its version.
            settings.grader_version = Some(crate::mock::grade::GRADER_VERSION);
        }
        for r in &rubric_files {
            jobs.push(JudgeJob {
                settings: settings.clone(),
                rubric: Rubric::load(&embedded::resolve_file(r, "rubrics"))?,
            });
        }
    }
    Ok(jobs)
}

/// Runs the whole pipeline. `interrupts()` gives each stage its own Ctrl-C channel;
/// `say` prints a line of progress (the caller decides where, and whether).
pub async fn run(
    opts: &RunOptions,
    interrupts: &dyn Fn() -> Receiver<()>,
    say: &dyn Fn(&str),
) -> Result<RunOutcome, RunError> {
    // Every definition file first: an error names its file and line before anything runs.
    let bench_path = builtin::bench_path(opts.config.as_deref());
    let mut cfg: BenchConfig = builtin::load(
        &bench_path,
        &builtin::Overrides {
            scenarios: opts.scenarios.clone(),
            repeats: opts.repeats,
            without_keys: false,
        },
    )?;
    let builtin = builtin::all_mock(&cfg);
    let jobs = judge_jobs(opts, builtin)?;
    let scenarios = crate::collect::load_scenarios(&cfg)?;
    let checks_dir = embedded::resolve_dir(opts.checks.as_deref(), "checks");
    let checks_found = embedded::is_dir(&checks_dir);
    say(&format!(
        "[0/4 definitions] bench {}; scenarios {}; checks {}",
        embedded::describe(&bench_path),
        embedded::describe(&cfg.scenarios_dir),
        if checks_found {
            embedded::describe(&checks_dir)
        } else {
            format!("none ({} is not a folder)", checks_dir.display())
        }
    ));
    // The judges' reference anchors: each scenario's reference conversation and the
    // variants its checks file's defects spoil (none without references or defects).
    let anchor_inputs = if jobs.is_empty() || !checks_found {
        Vec::new()
    } else {
        let checks = crate::checks::CheckSet::load_dir(&checks_dir)
            .map_err(|e| RunError::Setup(e.to_string()))?;
        crate::anchors::inputs(&scenarios, &checks).map_err(RunError::Setup)?
    };

    // The shared services: the built-in mock provider (for targets that name it), the
    // mock judge (when a judge names it). They live until the run ends.
    let mut servers: Vec<MockServer> = Vec::new();
    servers.extend(
        builtin::serve(&mut cfg, &scenarios, builtin::TIME_SCALE)
            .await
            .map_err(RunError::Setup)?,
    );
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
    if checks_found {
        let check_opts = CheckOptions {
            scenarios_dir: Some(cfg.scenarios_dir.clone()),
            progress: !opts.quiet,
            stage: Some("[2/4 check]".into()),
            ..CheckOptions::new(opts.db.clone(), checks_dir.clone())
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
            checks_dir.display()
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
    say(&format!(
        "[4/4 report] {:.1} kB, {} conversation views (`turnbench report --conversations all|none` for more or none)",
        std::fs::metadata(&opts.out).map_or(0, |m| m.len()) as f64 / 1000.0,
        report.drilldown.views.len()
    ));
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
            "\nthese figures are simulated (the built-in mock provider and judge). With real providers:\n  turnbench init my-bench && cd my-bench    # an editable bench.toml, scenarios/, checks/, rubrics/, judges/\n  # in bench.toml: uncomment real targets; export the key variables they name\n  turnbench collect --dry-run                # what would be sent, nothing sent\n  turnbench run --judge judges/default.toml --rubric rubrics/multiturn-quality.toml",
        );
    }
    s
}
