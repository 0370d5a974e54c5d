//! `turnbench export`: stored data out; `export conversations` writes the import format to
//! a file or standard output (a closed pipe is not an error).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::Global;
use crate::export::{ExportFilter, ExportOptions, export_conversations, export_to_file};

/// What `export` writes; one variant per kind of data.
#[derive(clap::Subcommand)]
pub enum ExportCommand {
    Conversations(ConversationsArgs),
}

impl ExportCommand {
    pub fn run(self, global: &Global) -> Result<i32> {
        match self {
            ExportCommand::Conversations(args) => args.run(global),
        }
    }
}

/// Conversations in the import format (JSON Lines), oldest first.
#[derive(clap::Args)]
pub struct ConversationsArgs {
    /// Output file (default, or `-`: standard output).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Only this run: an id, or a name (every run of that name).
    #[arg(long)]
    run: Option<String>,
    #[arg(long)]
    provider: Option<String>,
    /// Only this model label.
    #[arg(long)]
    model: Option<String>,
    #[arg(long)]
    scenario: Option<String>,
    /// Add each conversation's check results and judgments.
    #[arg(long)]
    with_scores: bool,
}

impl ConversationsArgs {
    pub fn run(self, global: &Global) -> Result<i32> {
        let opts = ExportOptions {
            filter: ExportFilter {
                run: self.run,
                provider: self.provider,
                model: self.model,
                scenario: self.scenario,
            },
            with_scores: self.with_scores,
        };
        let db = global.db.as_path();
        if !db.exists() {
            bail!(
                "{}: no store here\n  fix: pass --db with the store to export from",
                db.display()
            );
        }
        let conn = crate::store::open(db)?;
        let out = self.out.as_deref().filter(|p| *p != Path::new("-"));
        let summary = match out {
            Some(path) => export_to_file(&conn, &opts, path)?,
            None => {
                let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
                match export_conversations(&conn, &opts, &mut stdout) {
                    Ok(summary) => summary,
                    Err(e) if e.is_broken_pipe() => return Ok(0),
                    Err(e) => return Err(e.into()),
                }
            }
        };
        if !global.quiet {
            eprintln!(
                "exported {} conversations ({} turns){}",
                summary.conversations,
                summary.turns,
                out.map(|p| format!(" to {}", p.display()))
                    .unwrap_or_default()
            );
        }
        Ok(0)
    }
}
