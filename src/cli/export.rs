//! `turnbench export`: stored data out; `export conversations` writes the import format to
//! a file or standard output (a closed pipe is not an error).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::Global;
use crate::exit::Exit;
use crate::export::{self, CONVERSATION_FORMATS, ConversationSource, FormatOptions};
use crate::store::Selection;

/// What `export` writes; one variant per kind of data.
#[derive(clap::Subcommand)]
pub enum ExportCommand {
    Conversations(ConversationsArgs),
}

impl ExportCommand {
    pub fn run(self, global: &Global) -> Result<Exit> {
        match self {
            ExportCommand::Conversations(args) => args.run(global),
        }
    }
}

/// Conversations in the import format (JSON Lines), oldest first. Interrupted attempts
/// that a later conversation redid are included, marked `superseded_by`.
#[derive(clap::Args)]
pub struct ConversationsArgs {
    /// Output file (default, or `-`: standard output).
    #[arg(long, short)]
    out: Option<PathBuf>,
    #[command(flatten)]
    select: super::SelectArgs,
    /// Add each conversation's current check results and judgments (with the judge,
    /// whether it was simulated, its status and its raw answer).
    #[arg(long)]
    with_scores: bool,
    /// jsonl (the exchange format).
    #[arg(long, default_value = "jsonl")]
    format: String,
}

impl ConversationsArgs {
    pub fn run(self, global: &Global) -> Result<Exit> {
        let exporter = export::find(CONVERSATION_FORMATS, &self.format)?;
        let db = global.db.as_path();
        if !db.exists() {
            bail!(
                "{}: no store here\n  fix: pass --db with the store to export from",
                db.display()
            );
        }
        let conn = crate::store::open(db)?;
        let filter = self.select.filter();
        let source = ConversationSource {
            selection: Selection::resolve(&conn, &filter)?,
            conn,
            with_scores: self.with_scores,
        };
        let format = FormatOptions::default();
        let out = self.out.as_deref().filter(|p| *p != Path::new("-"));
        match out {
            Some(path) => export::write_file(exporter, &source, &format, path)?,
            None => export::write_stdout(exporter, &source, &format)?,
        }
        if !global.quiet {
            let summary = source.count()?;
            eprintln!(
                "exported {} conversations ({} turns){}",
                summary.conversations,
                summary.turns,
                out.map(|p| format!(" to {}", p.display()))
                    .unwrap_or_default()
            );
        }
        Ok(Exit::Success)
    }
}
