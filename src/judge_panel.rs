//! Judging, one way for `turnbench judge` and `turnbench run`: a panel of jobs (a judge ×
//! a rubric × a selection) is planned and audited, and each judge's key, headers and URL
//! checked — every job before any job sends, so a name in one judge's prompts (or a key
//! variable one judge lacks) stops the whole panel with nothing sent — then the built-in mock judges the
//! jobs name are started (one per model × seed, living until the panel ends) and handed
//! down, and the jobs run in order, each judgment stored as it ends. A job that was
//! interrupted or whose judgments the store refused stops the panel there.
//!
//! The judge stage does the planning, auditing and calling ([`crate::judge::judge`]);
//! this module only sequences it and starts the services, as orchestration does. The
//! closing lines of a job, read from the store as reports read them, are here too.

use tokio::sync::mpsc::Receiver;

use crate::config::{JudgeEndpoint, JudgeSettings, Scenario};
use crate::judge::{self, AuditLeak, JudgeError, JudgeOptions, JudgePlan, JudgeReport, Mode};
use crate::mock::MockServer;
use crate::store::judgments::JudgmentStatus;

/// One job of a panel: what to ask one judge, and the name progress lines give it.
#[derive(Clone)]
pub struct PanelJob {
    /// `judge · rubric@version`, and ` · anchors` for an anchor run.
    pub name: String,
    pub opts: JudgeOptions,
}

impl PanelJob {
    /// A job named after its judge and rubric (and `suffix`, e.g. `" · anchors"`).
    pub fn new(opts: JudgeOptions, suffix: &str) -> PanelJob {
        PanelJob {
            name: format!(
                "{} · {}@{}{suffix}",
                opts.settings.id, opts.rubric.id, opts.rubric.version
            ),
            opts,
        }
    }
}

/// One job's audit: its plan (the prompts it would send) and what the audit found.
pub struct AuditedJob {
    pub name: String,
    pub settings: JudgeSettings,
    pub report: JudgeReport,
    pub plan: JudgePlan,
}

/// The audit of every job of a panel, done before any job sends.
#[derive(Default)]
pub struct PanelAudit {
    pub jobs: Vec<AuditedJob>,
}

impl PanelAudit {
    /// Names found, over every job.
    pub fn leaks(&self) -> usize {
        self.jobs.iter().map(|j| j.report.leaks.len()).sum()
    }

    /// Prompts planned, over every job.
    pub fn planned(&self) -> usize {
        self.jobs.iter().map(|j| j.report.planned).sum()
    }

    /// Every leak with the judge whose prompts carry it.
    pub fn each_leak(&self) -> impl Iterator<Item = (&str, &AuditLeak)> {
        self.jobs.iter().flat_map(|j| {
            j.report
                .leaks
                .iter()
                .map(move |l| (j.settings.id.as_str(), l))
        })
    }
}

/// What a panel did: its audit, then each job that ran, in order, with its report.
pub struct PanelOutcome {
    pub audit: PanelAudit,
    pub judged: Vec<(PanelJob, JudgeReport)>,
    /// A job was interrupted, the store refused a judgment, or a name turned up at send
    /// time (a store changed since the audit): no later job ran.
    pub stopped: bool,
}

impl PanelOutcome {
    /// Whether anything was sent or would be: false when the audit found a name.
    pub fn audit_passed(&self) -> bool {
        self.audit.leaks() == 0
    }
}

/// Audits every job of a panel (its mode kept for a dry run, else [`Mode::Audit`]); sends
/// nothing and writes nothing.
pub async fn audit(
    jobs: &[PanelJob],
    interrupts: &dyn Fn() -> Receiver<()>,
) -> Result<PanelAudit, JudgeError> {
    let mut audit = PanelAudit::default();
    for job in jobs {
        if job.opts.mode == Mode::Judge {
            // The store is the one judging writes: created or upgraded now, as judging
            // would, so an empty one is reported as empty (with its fix), not as missing.
            crate::store::open(&job.opts.db)?;
        }
        let opts = JudgeOptions {
            mode: match job.opts.mode {
                Mode::Judge => Mode::Audit,
                other => other,
            },
            ..job.opts.clone()
        };
        let (report, plan) = judge::judge(&opts, interrupts()).await?;
        audit.jobs.push(AuditedJob {
            name: job.name.clone(),
            settings: job.opts.settings.clone(),
            report,
            plan,
        });
    }
    Ok(audit)
}

/// Plans and audits every job, and — when the jobs judge ([`Mode::Judge`]) and the audit
/// found no name — starts the mock judges they name and runs them in order. `after_each`
/// sees each job's report as it ends (progress lines, the closing summary).
pub async fn judge_panel(
    jobs: Vec<PanelJob>,
    scenarios: &[Scenario],
    interrupts: &dyn Fn() -> Receiver<()>,
    after_each: &mut dyn FnMut(&PanelJob, &JudgeReport) -> Result<(), JudgeError>,
) -> Result<PanelOutcome, JudgeError> {
    let audit = audit(&jobs, interrupts).await?;
    let mut outcome = PanelOutcome {
        audit,
        judged: Vec::new(),
        stopped: false,
    };
    let judging = jobs.iter().all(|j| j.opts.mode == Mode::Judge);
    if !judging || !outcome.audit_passed() {
        return Ok(outcome);
    }
    let mocks = MockJudges::start(jobs.iter().map(|j| &j.opts.settings), scenarios).await?;
    for mut job in jobs {
        job.opts.mock_url = mocks.url_for(&job.opts.settings);
        let (report, _plan) = judge::judge(&job.opts, interrupts()).await?;
        after_each(&job, &report)?;
        let stop =
            report.interrupted || !report.store_failures.is_empty() || !report.leaks.is_empty();
        outcome.judged.push((job, report));
        if stop {
            outcome.stopped = true;
            break;
        }
    }
    Ok(outcome)
}

/// The built-in mock judges a panel names: one server per model × seed.
struct MockJudges {
    servers: Vec<((String, u64), MockServer)>,
}

impl MockJudges {
    async fn start<'a>(
        settings: impl Iterator<Item = &'a JudgeSettings>,
        scenarios: &[Scenario],
    ) -> Result<MockJudges, JudgeError> {
        let mut servers: Vec<((String, u64), MockServer)> = Vec::new();
        for s in settings.filter(|s| s.endpoint == JudgeEndpoint::BuiltinMock) {
            let key = (s.model.clone(), s.seed);
            if servers.iter().any(|(k, _)| *k == key) {
                continue;
            }
            // It grades transcripts against the scenarios' reference answers when it has
            // them.
            let config = crate::mock::judge::builtin_config(&key.0, key.1);
            let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
            let server = MockServer::start(config, scenarios, loopback, None)
                .await
                .map_err(|e| JudgeError::MockJudge(e.to_string()))?;
            servers.push((key, server));
        }
        Ok(MockJudges { servers })
    }

    fn url_for(&self, settings: &JudgeSettings) -> Option<String> {
        self.servers
            .iter()
            .find(|((model, seed), _)| *model == settings.model && *seed == settings.seed)
            .map(|(_, server)| server.base_url())
    }
}

/// The closing lines of a job that ran, read from the store as reports read them.
pub struct Closing {
    /// The summary (and the anchor and pairwise verdicts, when the job had them).
    pub text: String,
    /// An anchor run whose judge could not rank the references above their defects.
    pub anchors_failed: bool,
    /// Judgments left unparseable or failed.
    pub unscored: u64,
}

/// Reads what a job stored and says it: the summary table, the anchor verdict, the
/// pairwise verdicts.
pub fn closing(opts: &JudgeOptions, report: &JudgeReport) -> Result<Closing, JudgeError> {
    let conn = crate::store::open(&opts.db)?;
    let table = crate::store::judgments::judgment_summary(&conn, judge::unscored_reason)?;
    let mut text = judge::format_summary(report, &opts.settings, &opts.rubric, &table);
    let mut anchors_failed = false;
    if report.anchors {
        let rows = crate::store::anchor_judgments::current_anchor_judgments(&conn)?;
        for a in this_judge_anchors(&rows, opts) {
            text.push_str(&format!(
                "anchors: {}\n",
                crate::report::anchor_check::sentence(&a)
            ));
            anchors_failed |= !a.passed;
        }
    }
    if report.pairwise.is_some() {
        let verdicts = crate::store::pairwise::pairwise_verdicts(&conn)?;
        text.push_str(&judge::format_pairwise_summary(
            &opts.settings,
            &opts.rubric,
            &verdicts,
        ));
    }
    Ok(Closing {
        text,
        anchors_failed,
        unscored: report.count(JudgmentStatus::Unparseable)
            + report.count(JudgmentStatus::JudgeError),
    })
}

/// The anchor result of this judge × rubric as reports read it, in one sentence.
pub fn anchor_verdict(opts: &JudgeOptions) -> Result<Option<String>, JudgeError> {
    let conn = crate::store::open(&opts.db)?;
    let rows = crate::store::anchor_judgments::current_anchor_judgments(&conn)?;
    Ok(this_judge_anchors(&rows, opts)
        .first()
        .map(crate::report::anchor_check::sentence))
}

fn this_judge_anchors(
    rows: &[crate::store::anchor_judgments::AnchorRow],
    opts: &JudgeOptions,
) -> Vec<crate::report::model::AnchorSection> {
    let rubric = format!("{}@{}", opts.rubric.id, opts.rubric.version);
    crate::report::anchor_check::sections(rows)
        .into_iter()
        .filter(|a| {
            a.rubric == rubric
                && a.judge == opts.settings.id
                && a.simulated == opts.settings.simulated
        })
        .collect()
}

/// Judge settings from a file (on disk, else built in: `judges/…`), keyed for the mock
/// grader when simulated: simulated judgments are the grader's, so its version is part of
/// their key. `to_send`: the variables its endpoint names must be set (checked now, as a
/// bench's are, so that what stops one judge of a panel stops them all before any sends);
/// a dry run or an audit needs none.
pub fn load_settings(path: &std::path::Path, to_send: bool) -> Result<JudgeSettings, JudgeError> {
    let path = crate::config::embedded::resolve_file(path, "judges");
    let mut settings = if to_send {
        JudgeSettings::load(&path)?
    } else {
        JudgeSettings::load_without_keys(&path)?
    };
    if settings.simulated {
        settings.grader_version = Some(crate::mock::grade::GRADER_VERSION);
    }
    Ok(settings)
}
