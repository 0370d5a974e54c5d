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
/// report, so chunks of rows are serialized side by side, one per core, into buffers, while
/// this thread writes the batch before (a million-turn report writes 170 MB: the kernel's
/// copying overlaps the next batch's serializing); memory stays at a few buffers.
fn write_rows(rows: &ConversationRows, out: &mut dyn Write) -> Result<(), ExportError> {
    use rayon::prelude::*;
    let workers = rayon::current_num_threads().clamp(1, 4);
    let batch = workers * CHUNK;
    // One batch waits in the channel while the next is serialized and one is written.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Vec<Vec<u8>>, serde_json::Error>>(1);
    std::thread::scope(|s| {
        s.spawn(move || {
            for start in (0..rows.len()).step_by(batch) {
                let serialized: Result<Vec<Vec<u8>>, serde_json::Error> = (0..workers)
                    .into_par_iter()
                    .map(|w| start + w * CHUNK)
                    .filter(|&from| from < rows.len())
                    .map(|from| serialize_chunk(rows, from))
                    .collect();
                let failed = serialized.is_err();
                // A closed channel: the writer stopped on an error of its own.
                if tx.send(serialized).is_err() || failed {
                    return;
                }
            }
        });
        for serialized in rx {
            for buf in serialized? {
                out.write_all(&buf)?;
            }
        }
        Ok(())
    })
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
