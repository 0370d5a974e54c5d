//! `turnbench report`: the joined table of quality, latency and reliability per provider ×
//! model, in the format asked for, to standard output or a file.

use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::exit::Exit;
use crate::export::{self, FormatOptions, REPORT_FORMATS};
use crate::report::window::{Baseline, RunChoice, Span};
use crate::report::{self, ReportOptions};
use crate::stats::Bootstrap;
use crate::store::JudgmentFilter;

/// Report quality joined with latency and reliability per provider × model label.
///
/// Headlines first (which differences the data establish), then the cells, then quality by
/// tag and by criterion. Every figure carries its n; intervals are 95 %. Definitions:
/// docs/metrics.md. Formats: terminal (default), md, csv, json, html.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// terminal, md, csv, json or html.
    #[arg(long, short, default_value = "terminal")]
    format: String,
    /// Output file (default, or `-`: standard output).
    #[arg(long, short)]
    out: Option<PathBuf>,
    #[command(flatten)]
    select: super::SelectArgs,
    /// Only judgments of this rubric id.
    #[arg(long)]
    rubric: Option<String>,
    /// Only judgments by this judge id.
    #[arg(long)]
    judge: Option<String>,
    /// A turn slower than this many milliseconds (E2E) is not usable.
    #[arg(long, value_name = "MS")]
    sla_ms: Option<f64>,
    /// Bootstrap resamples for every interval (at least 1,000 is advised).
    #[arg(long, default_value_t = 1000)]
    resamples: usize,
    /// Which conversations the HTML report shows in full: `failed` (did not complete,
    /// failed a check, or a judge's lowest score; plus one passing example per cell),
    /// `all`, or `none`. With `none`, the JSON report leaves out its per-conversation
    /// rows (the summary alone: kilobytes where the rows of a million turns are 170 MB).
    #[arg(long, value_enum, default_value = "failed")]
    conversations: report::drilldown::ConversationViews,
    /// At most this many conversation views; a note counts the rest.
    #[arg(long, value_name = "N", default_value_t = report::drilldown::DEFAULT_CAP)]
    conversations_cap: usize,
    /// Bootstrap seed: the same seed and store print the same intervals.
    #[arg(long)]
    seed: Option<u64>,
    /// Order each model label's cells by conversation p50, p95 or p99 (fastest first),
    /// success or quality (highest first).
    #[arg(long, value_enum, default_value_t = report::vs_fastest::SortBy::P50)]
    sort: report::vs_fastest::SortBy,
    /// Pool the runs of the newest run's name started within this span: 90m, 72h, 7d, 2w.
    #[arg(long, value_name = "SPAN", value_parser = span, conflicts_with_all = ["last", "runs"])]
    since: Option<Span>,
    /// Pool the newest N runs of the newest run's name.
    #[arg(long, value_name = "N", conflicts_with = "runs")]
    last: Option<usize>,
    /// Pool these runs (ids or names, comma-separated).
    #[arg(long, value_name = "R,R…", value_delimiter = ',')]
    runs: Option<Vec<String>>,
    /// Only runs collected by NAME (`collect --collector`; default there: the host name);
    /// repeat or comma-separate for several. Every other run choice is made among them.
    #[arg(long = "collector", value_name = "NAME,…", value_delimiter = ',')]
    collectors: Vec<String>,
    /// Compare the selected run (default: the newest) with run R (an id, or a name: its
    /// runs).
    #[arg(long, value_name = "R", conflicts_with = "baseline_window")]
    baseline_run: Option<String>,
    /// Compare the selected run(s) with the runs of the same name started within this span
    /// before them, pooled.
    #[arg(long, value_name = "SPAN", value_parser = span)]
    baseline_window: Option<Span>,
    /// Each cell run by run: conversation p50 and success per run (a TREND table; CSV then
    /// writes one row per run × cell instead of the cells).
    #[arg(long)]
    trend: bool,
    /// The scenario × cell matrix as the CSV's rows (one per scenario × cell) instead of
    /// the cells.
    #[arg(long, conflicts_with = "trend")]
    matrix: bool,
    /// CONSTRAINTS ACROSS TURNS as the CSV's rows (one per cell × check tag × turn:
    /// pass rate, survival, forgetting and recovery) instead of the cells.
    #[arg(long, conflicts_with_all = ["trend", "matrix"])]
    turns: bool,
    /// Exit with status 6 when any comparison with the baseline is an established
    /// regression (needs --baseline-run or --baseline-window).
    #[arg(long)]
    fail_on_regression: bool,
    /// Quality claims (task success, judge means) also compare cells of different model
    /// labels, as their own family; by default a family holds one model label's cells
    /// (always across labels when one provider serves every cell).
    #[arg(long)]
    across_models: bool,
    /// Equivalence claims: the differences that count as none, per statistic (any subset):
    /// p50=10%,p95=15% (a percentage of the latency), success=5,completed=2,kept=5 (points
    /// of a share), judge=0.25 (a score). Each of the leader's comparisons of a statistic
    /// given a margin also reads "equivalent within ±M" or "not shown equivalent" (two
    /// one-sided tests at the family's level).
    #[arg(long, value_name = "NAME=M,…")]
    margin: Option<String>,
    /// Goodput: per-turn objectives (any subset) ttft=500ms,tpot=50ms,itl_p95=100ms,e2e=3s;
    /// GOODPUT then gives per cell the share of turns meeting every bound (a failed turn
    /// counts as sent and not met) and of conversations whose every turn met it.
    #[arg(long, value_name = "NAME=DURATION,…")]
    slo: Option<String>,
    /// A bench.toml whose `[report]` table gives defaults (`slo`); a flag overrides it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The terminal also prints every headline's family of comparisons as a table
    /// (FAMILIES); Markdown and HTML always carry them.
    #[arg(long, short)]
    verbose: bool,
    /// Exit with status 7 when a judge whose scores the report shows is not trusted by its
    /// judge card (flagged or failed; docs/judge.md "The judge card"), after the report is
    /// written.
    #[arg(long)]
    require_trusted_judge: bool,
}

fn span(text: &str) -> Result<Span, String> {
    Span::parse(text).ok_or_else(|| {
        format!(
            "{text:?} is not a span of time: a whole number and m, h, d or w (90m, 72h, 7d, 2w)"
        )
    })
}

impl ReportArgs {
    /// What to report, from the flags: the store's selection, judgments, statistics and
    /// runs. A malformed `--margin` is refused here, naming its part.
    fn options(&self) -> Result<ReportOptions> {
        let defaults = Bootstrap::default();
        Ok(ReportOptions {
            filter: self.select.clone().filter(),
            judgments: JudgmentFilter {
                rubric: self.rubric.clone(),
                judge: self.judge.clone(),
            },
            sla_ms: self.sla_ms,
            bootstrap: Bootstrap {
                resamples: self.resamples.max(1),
                seed: self.seed.unwrap_or(defaults.seed),
                level: defaults.level,
            },
            with_conversations: self.format == "json"
                && self.conversations != report::drilldown::ConversationViews::None,
            sort: self.sort,
            trend: self.trend,
            across_models: self.across_models,
            margins: match &self.margin {
                Some(text) => {
                    report::margin::Margins::parse(text).map_err(|e| anyhow::anyhow!("{e}"))?
                }
                None => report::margin::Margins::default(),
            },
            slo: match (&self.slo, &self.config) {
                (Some(text), _) => {
                    Some(crate::config::slo::Slo::parse(text).map_err(|e| anyhow::anyhow!("{e}"))?)
                }
                (None, Some(path)) => {
                    let src = crate::config::SourceText::read(path)?;
                    crate::config::BenchConfig::from_source_without_keys(&src)?.report_slo
                }
                (None, None) => None,
            },
            runs: RunChoice {
                since: self.since,
                last: self.last,
                runs: self.runs.clone(),
                collectors: self.collectors.clone(),
                baseline: match (self.baseline_run.clone(), self.baseline_window) {
                    (Some(r), _) => Some(Baseline::Run(r)),
                    (None, Some(w)) => Some(Baseline::Window(w)),
                    (None, None) => None,
                },
            },
            // Only the HTML format shows conversation views.
            views: if self.format == "html" {
                self.conversations
            } else {
                report::drilldown::ConversationViews::None
            },
            views_cap: Some(self.conversations_cap),
        })
    }

    pub fn run(self, global: &Global) -> Result<Exit> {
        let exporter = export::find(REPORT_FORMATS, &self.format)?;
        let opts = self.options()?;
        if self.fail_on_regression && opts.runs.baseline.is_none() {
            anyhow::bail!(
                "--fail-on-regression needs a baseline\n  fix: add --baseline-run R or --baseline-window SPAN"
            );
        }
        let report = report::build(report::load(&global.db, &opts)?, &opts);
        let format = FormatOptions {
            matrix_rows: self.matrix,
            turn_rows: self.turns,
            families: self.verbose,
        };
        match self.out.as_ref().filter(|p| p.as_os_str() != "-") {
            Some(path) => {
                export::write_file(exporter, &report, &format, path)?;
                if !global.quiet {
                    let size = std::fs::metadata(path).map_or(0, |m| m.len());
                    let views = if self.format == "html" {
                        format!(", {} conversation views", report.drilldown.views.len())
                    } else {
                        String::new()
                    };
                    eprintln!(
                        "wrote {} report of {} cells{views} to {} ({:.1} kB)",
                        self.format,
                        report.cells.len(),
                        path.display(),
                        size as f64 / 1000.0
                    );
                }
            }
            None => export::write_stdout(exporter, &report, &format)?,
        }
        Ok(self.exit_for(&report))
    }

    /// The exit the report's findings ask for: a regression against the baseline with
    /// `--fail-on-regression`, an untrusted judge with `--require-trusted-judge`, each said
    /// on stderr.
    fn exit_for(&self, report: &report::model::Report) -> Exit {
        let regressions = report.comparison.as_ref().map_or(0, |c| c.regressions);
        if self.fail_on_regression && regressions > 0 {
            eprintln!(
                "{regressions} established regression{} against the baseline: exit {}",
                if regressions == 1 { "" } else { "s" },
                Exit::Regression.code()
            );
            return Exit::Regression;
        }
        let untrusted = report::judge_card::untrusted(&report.judge_card);
        if self.require_trusted_judge && !untrusted.is_empty() {
            for card in report
                .judge_card
                .iter()
                .filter(|c| c.verdict != report::judge_card::Verdict::Trusted)
            {
                eprintln!("{}", report::judge_card::line(card));
            }
            eprintln!(
                "--require-trusted-judge: {} not trusted: exit {}",
                untrusted
                    .iter()
                    .map(|(j, v)| format!("judge {j} ({})", v.as_str()))
                    .collect::<Vec<_>>()
                    .join(", "),
                Exit::UntrustedJudge.code()
            );
            return Exit::UntrustedJudge;
        }
        Exit::Success
    }
}
