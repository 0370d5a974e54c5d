//! `turnbench report`: the joined table of quality, latency and reliability per provider ×
//! model, in the format asked for, to standard output or a file.

use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::export::{self, FormatOptions, REPORT_FORMATS};
use crate::report::{self, ReportOptions};
use crate::stats::Bootstrap;
use crate::store::facts::JudgmentFilter;

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
    /// `all`, or `none`.
    #[arg(long, value_enum, default_value = "failed")]
    conversations: report::drilldown::ConversationViews,
    /// At most this many conversation views; a note counts the rest.
    #[arg(long, value_name = "N", default_value_t = report::drilldown::DEFAULT_CAP)]
    conversations_cap: usize,
    /// Bootstrap seed: the same seed and store print the same intervals.
    #[arg(long)]
    seed: Option<u64>,
}

impl ReportArgs {
    pub fn run(self, global: &Global) -> Result<i32> {
        let exporter = export::find(REPORT_FORMATS, &self.format)?;
        let defaults = Bootstrap::default();
        let opts = ReportOptions {
            filter: self.select.filter(),
            judgments: JudgmentFilter {
                rubric: self.rubric,
                judge: self.judge,
            },
            sla_ms: self.sla_ms,
            bootstrap: Bootstrap {
                resamples: self.resamples.max(1),
                seed: self.seed.unwrap_or(defaults.seed),
                level: defaults.level,
            },
            with_conversations: exporter.name() == "json",
            // Only the HTML format shows conversation views.
            views: if exporter.name() == "html" {
                self.conversations
            } else {
                report::drilldown::ConversationViews::None
            },
            views_cap: Some(self.conversations_cap),
        };
        let report = report::build(&global.db, &opts)?;
        let format = FormatOptions {
            tables_only: global.quiet,
        };
        match self.out.filter(|p| p.as_os_str() != "-") {
            Some(path) => {
                export::write_file(exporter, &report, &format, &path)?;
                if !global.quiet {
                    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
                    let views = if exporter.name() == "html" {
                        format!(", {} conversation views", report.drilldown.views.len())
                    } else {
                        String::new()
                    };
                    eprintln!(
                        "wrote {} report of {} cells{views} to {} ({:.1} kB)",
                        exporter.name(),
                        report.cells.len(),
                        path.display(),
                        size as f64 / 1000.0
                    );
                }
            }
            None => export::write_stdout(exporter, &report, &format)?,
        }
        Ok(0)
    }
}
