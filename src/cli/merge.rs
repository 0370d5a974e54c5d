//! `turnbench merge SRC.db… --into DST.db`: other stores' rows copied into one (the work is
//! `store::merge`); the per-table summary.

use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::exit::Exit;
use crate::store::merge::{self, SourceTally};

/// Merge other stores into one: runs, conversations, turns, attempts, replays, check
/// definitions and results, rubrics, judges and every judgment (pairwise, anchors,
/// controls, human labels), each found by its content identity, so that merging a store
/// again, or two stores that share a run, adds nothing and loses nothing.
///
/// One transaction per source store: a conflict (the same identity, other content) refuses
/// that source whole, naming both stores and the row, and leaves the target as it was.
/// Sources are never written; an older store is read upgraded, in memory. Exit status: 0
/// merged; 1 a source was refused (those before it stay merged).
#[derive(clap::Args)]
pub struct MergeArgs {
    /// The stores to merge from, in order.
    #[arg(value_name = "SRC.db", required = true)]
    sources: Vec<PathBuf>,
    /// The store to merge into (created when missing).
    #[arg(long, value_name = "DST.db")]
    into: PathBuf,
}

impl MergeArgs {
    pub fn run(self, global: &Global) -> Result<Exit> {
        let quiet = global.quiet;
        let tallies = merge::merge(&self.sources, &self.into, |src| {
            if !quiet {
                eprintln!("merging {} into {} …", src.display(), self.into.display());
            }
        })?;
        if !quiet {
            for t in &tallies {
                print!("{}", summary(t, &self.into));
            }
        }
        Ok(Exit::Success)
    }
}

/// One source's table of rows: read (n), added, already present; tables with no row left out.
fn summary(t: &SourceTally, into: &std::path::Path) -> String {
    let mut out = format!(
        "merged {} into {}{}\n",
        t.source.display(),
        into.display(),
        t.upgraded_from.map_or(String::new(), |v| format!(
            " (read upgraded from schema version {v})"
        ))
    );
    out.push_str(&format!(
        "  {:<24} {:>10} {:>10} {:>16}\n",
        "table", "rows (n)", "added", "already present"
    ));
    for row in t.tables.iter().filter(|r| r.rows > 0) {
        out.push_str(&format!(
            "  {:<24} {:>10} {:>10} {:>16}\n",
            row.table, row.rows, row.added, row.present
        ));
    }
    let (n, added): (u64, u64) = t
        .tables
        .iter()
        .fold((0, 0), |(n, a), r| (n + r.rows, a + r.added));
    out.push_str(&format!(
        "  {:<24} {:>10} {:>10} {:>16}\n",
        "all",
        n,
        added,
        n - added
    ));
    out
}
