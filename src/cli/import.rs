//! `turnbench import`: transcript files into the store, one after another; bad records are
//! reported and skipped (exit 2, some failed), an unreadable file is an error (exit 1).

use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::exit::Exit;
use crate::import::{Defaults, ImportError, ImportOptions, Rejection, ShapeFilter, import_file};

/// Import transcripts: JSON Lines (one conversation a line), one JSON array of them, or
/// JSON documents one after another (a pretty-printed API response); `-` reads stdin.
///
/// Each record is turnbench's own format (a plain OpenAI chat `{"messages": [...]}` too,
/// tool calls included), ShareGPT (`{"conversations": [{"from", "value"}]}`), an OpenAI
/// logged call (`{"request": {...}, "response": {"choices": ...}}`), an Anthropic Messages
/// record or logged call (`{"system", "messages"}` of content blocks; `"response":
/// {"content": [...]}`), an LMSYS-Chat-1M / WildChat row (`{"conversation_id" or
/// "conversation_hash", "conversation": [...]}`), or an OpenAI Responses logged call
/// (`"response": {"output": [...]}`; calls chained by `previous_response_id` are one
/// conversation), Langfuse observations (`{"data": [...]}` pages, or observations with
/// `traceId`; the GENERATIONs of a trace are one conversation), or OpenTelemetry GenAI
/// spans as the OTLP/JSON file exporter writes them (`{"resourceSpans": [...]}`; the chat
/// spans of a `gen_ai.conversation.id` are one conversation); the summary says which it
/// read. Bad
/// records are reported by file:line and field and skipped (exit code 2); so is a record
/// carrying content turnbench does not store, unless --lossy. Conversations already stored
/// are skipped, so importing a file again adds nothing. See docs/import-export.md.
#[derive(clap::Args)]
pub struct ImportArgs {
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Stop at the first bad record, with nothing from that file stored.
    #[arg(long)]
    strict: bool,
    /// The shape of the records: auto (each record's own, recognised by its keys),
    /// turnbench, sharegpt, openai-log, anthropic (Messages records and logged calls),
    /// lmsys (LMSYS-Chat-1M and WildChat rows), responses (OpenAI Responses logged
    /// calls), langfuse (Langfuse observations) or otel (OpenTelemetry GenAI spans); a
    /// record of another shape is refused.
    #[arg(long, default_value = "auto", value_name = "FORMAT")]
    format: ShapeFilter,
    /// Import records that carry content turnbench does not store (an image, a document,
    /// an unknown block or field) without it, counting what was dropped in the summary,
    /// instead of refusing them.
    #[arg(long)]
    lossy: bool,
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
            lossy: self.lossy,
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
