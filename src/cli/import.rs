//! `turnbench import`: transcript files into the store, one after another; bad records are
//! reported and skipped (exit 2, some failed), an unreadable file is an error (exit 1).

use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::exit::Exit;
use crate::import::{Defaults, ImportError, ImportOptions, Rejection, ShapeFilter, import_file};

/// Import transcripts: JSON Lines (one conversation a line) or one JSON array of them;
/// `-` reads stdin.
///
/// Each record is turnbench's own format (a plain OpenAI chat `{"messages": [...]}` too),
/// ShareGPT (`{"conversations": [{"from", "value"}]}`) or a logged call
/// (`{"request": {...}, "response": {...}}`); the summary says which it read. Bad records
/// are reported and skipped (exit code 2); conversations already stored are skipped, so
/// importing a file again adds nothing. See docs/import-export.md.
#[derive(clap::Args)]
pub struct ImportArgs {
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Stop at the first bad record, with nothing from that file stored.
    #[arg(long)]
    strict: bool,
    /// The shape of the records: auto (each record's own, recognised by its keys),
    /// turnbench, sharegpt or openai-log (a record of another shape is refused).
    #[arg(long, default_value = "auto", value_name = "FORMAT")]
    format: ShapeFilter,
    /// Scenario id for records that name none, so that the checks written for that
    /// scenario score them. A record's own `scenario` wins.
    #[arg(long, value_name = "ID", value_parser = non_empty)]
    scenario: Option<String>,
    /// Provider for records that name none (else "unknown"). A record's own wins.
    #[arg(long, value_name = "P", value_parser = non_empty)]
    provider: Option<String>,
    /// Model for records that name none (else "unknown"). A record's own wins (for a
    /// logged call: the response's model, else the request's).
    #[arg(long, value_name = "M", value_parser = non_empty)]
    model: Option<String>,
}

fn non_empty(s: &str) -> Result<String, String> {
    match s.trim() {
        "" => Err("empty; leave the flag out instead".to_string()),
        _ => Ok(s.to_string()),
    }
}

impl ImportArgs {
    /// Imports each file in turn; a bad record (exit 2) or an unreadable file (exit 1) is
    /// reported without stopping the others, except under --strict.
    pub fn run(self, global: &Global) -> Result<Exit> {
        let strict = self.strict;
        let mut conn = crate::store::open(&global.db)?;
        let opts = ImportOptions {
            strict,
            progress: !global.quiet,
            format: self.format,
            defaults: Defaults {
                provider: self.provider,
                model: self.model,
                scenario: self.scenario,
            },
        };
        let (mut rejected, mut unreadable) = (false, false);
        for path in &self.files {
            let mut report = |r: &Rejection| eprintln!("rejected {r}");
            match import_file(&mut conn, path, &opts, &mut report) {
                Ok(summary) => {
                    rejected |= summary.rejected > 0;
                    println!("{summary}");
                }
                Err(e @ (ImportError::Open { .. } | ImportError::Read { .. })) if !strict => {
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
