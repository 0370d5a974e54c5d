//! `turnbench import`: transcript files into the store, one after another; bad lines are
//! reported and make the exit code 1.

use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::import::{ImportError, ImportOptions, Rejection, import_file};

/// Import transcripts (JSON Lines, one conversation per line; `-` reads stdin).
///
/// Bad lines are reported and skipped (exit code 1); conversations already stored are
/// skipped, so importing a file again adds nothing. See docs/import-export.md.
#[derive(clap::Args)]
pub struct ImportArgs {
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Stop at the first bad line, with nothing from that file stored.
    #[arg(long)]
    strict: bool,
}

impl ImportArgs {
    /// Imports each file in turn; a bad line or an unreadable file is reported and makes
    /// the exit code 1 without stopping the others, except under --strict.
    pub fn run(self, global: &Global) -> Result<i32> {
        let strict = self.strict;
        let mut conn = crate::store::open(&global.db)?;
        let opts = ImportOptions {
            strict,
            progress: !global.quiet,
        };
        let mut failed = false;
        for path in &self.files {
            let mut report = |r: &Rejection| eprintln!("rejected {r}");
            match import_file(&mut conn, path, &opts, &mut report) {
                Ok(summary) => {
                    failed |= summary.rejected > 0;
                    println!("{summary}");
                }
                Err(e @ (ImportError::Open { .. } | ImportError::Read { .. })) if !strict => {
                    eprintln!("error: {e}");
                    failed = true;
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(i32::from(failed))
    }
}
