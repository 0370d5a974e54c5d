//! The JSON format: the report value as it is (`Report` derives `Serialize`), in the shape
//! `docs/report.schema.json` describes (a test validates it). Pretty-printed, but the
//! per-conversation rows, written last, one compact row a line.

use std::io::Write;

use super::{ExportError, Exporter, FormatOptions};
use crate::report::model::Report;
use crate::report::rows::ConversationRows;

/// Rows a worker serializes into one buffer (a few MB).
const CHUNK: usize = 8_192;

pub struct Json;

impl Exporter<Report> for Json {
    fn write(
        &self,
        r: &Report,
        _opts: &FormatOptions,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        let mut head = serde_json::to_vec_pretty(r)?;
        let Some(rows) = &r.conversations else {
            out.write_all(&head)?;
            out.write_all(b"\n")?;
            return Ok(());
        };
        // The report's last field: one compact row a line, so that a million-turn report
        // writes half the bytes and a reader can still take it a line at a time. Only the
        // layout differs from pretty-printing; the JSON is the same.
        // Drop the object's closing brace (and the white space around it), nothing more.
        while head.last().is_some_and(u8::is_ascii_whitespace) {
            head.pop();
        }
        if head.last() == Some(&b'}') {
            head.pop();
        }
        while head.last().is_some_and(u8::is_ascii_whitespace) {
            head.pop();
        }
        out.write_all(&head)?;
        out.write_all(b",\n  \"conversations\": [")?;
        write_rows(rows, out)?;
        out.write_all(if rows.is_empty() {
            b"]\n}\n"
        } else {
            b"\n  ]\n}\n"
        })?;
        Ok(())
    }
}

/// The rows, one compact row a line, in order. Serializing is most of the work for a big
/// report, so chunks of rows are serialized side by side, one per core, into buffers, and
/// each batch is written in order: memory stays at a few buffers.
fn write_rows(rows: &ConversationRows, out: &mut dyn Write) -> Result<(), ExportError> {
    use rayon::prelude::*;
    let workers = rayon::current_num_threads().clamp(1, 4);
    let mut start = 0;
    while start < rows.len() {
        let batch: Vec<Result<Vec<u8>, serde_json::Error>> = (0..workers)
            .into_par_iter()
            .map(|w| start + w * CHUNK)
            .filter(|&from| from < rows.len())
            .map(|from| serialize_chunk(rows, from))
            .collect();
        for buf in batch {
            out.write_all(&buf?)?;
        }
        start += workers * CHUNK;
    }
    Ok(())
}

/// Rows `from..from + CHUNK`, each on its own line after a separator (none before the
/// first row of the report).
fn serialize_chunk(rows: &ConversationRows, from: usize) -> Result<Vec<u8>, serde_json::Error> {
    let mut buf = Vec::with_capacity(CHUNK * 512);
    for (i, row) in rows.range(from..from + CHUNK).enumerate() {
        buf.extend_from_slice(if from + i == 0 { b"\n    " } else { b",\n    " });
        serde_json::to_writer(&mut buf, &row)?;
    }
    Ok(buf)
}
