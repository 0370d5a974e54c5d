//! `turnbench label`: human labels. `label import FILE…` stores each file's labels as
//! judgments of `human:<rater>`; bad lines are reported by file:line and skipped (exit 2),
//! an unreadable file is an error (exit 1).

use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::config::embedded;
use crate::exit::Exit;
use crate::jsonl::Rejection;
use crate::label::{LabelError, LabelOptions, import_labels};

/// Human labels: what people scored, for the judge's agreement with them.
#[derive(clap::Subcommand)]
pub enum LabelCommand {
    Import(LabelImportArgs),
}

impl LabelCommand {
    pub fn run(self, global: &Global) -> Result<Exit> {
        match self {
            LabelCommand::Import(args) => args.run(global),
        }
    }
}

/// Import human labels: JSON Lines, one label a line: {"conversation": "<uid or id>",
/// "rater": "<name>", "rubric": "<id>@<version>", "scores": {criterion: integer},
/// "completed": true|false}.
///
/// Each label is checked against its rubric like a judge's answer and stored as a judgment
/// of the judge `human:<rater>`; bad lines are reported by file:line and skipped (exit code
/// 2). Importing a file again adds nothing; a changed label replaces the current one (the
/// old one is kept as history). See docs/commands/label.md.
#[derive(clap::Args)]
pub struct LabelImportArgs {
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Where a rubric a label names is looked for when the store has not got it yet
    /// [default: ./rubrics, else the built-in rubrics].
    #[arg(long, value_name = "DIR")]
    rubrics: Option<PathBuf>,
}

impl LabelImportArgs {
    pub fn run(self, global: &Global) -> Result<Exit> {
        let mut conn = crate::store::open(&global.db)?;
        let opts = LabelOptions {
            rubrics_dir: embedded::resolve_dir(self.rubrics.as_deref(), "rubrics"),
        };
        let (mut rejected, mut unreadable) = (false, false);
        for path in &self.files {
            let mut report = |r: &Rejection| eprintln!("rejected {r}");
            match import_labels(&mut conn, path, &opts, &mut report) {
                Ok(summary) => {
                    rejected |= summary.rejected > 0;
                    println!("{summary}");
                }
                Err(e @ (LabelError::Open { .. } | LabelError::Read { .. })) => {
                    eprintln!("error: {e}");
                    unreadable = true;
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(if unreadable {
            Exit::Error
        } else {
            Exit::failed_if(rejected)
        })
    }
}
