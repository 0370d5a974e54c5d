//! The JSON format: the report value as it is (`Report` derives `Serialize`), in the shape
//! `docs/report.schema.json` describes (a test validates it). Pretty-printed, but the
//! per-conversation rows, written last, one compact row a line.

use std::io::Write;

use super::{ExportError, Exporter, FormatOptions};
use crate::report::model::Report;
use crate::report::rows::{ConversationRow, ConversationRows};
use serde_json::ser::{CompactFormatter, Formatter};

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
        write_row(&mut buf, &row)?;
    }
    Ok(buf)
}

/// One row, byte for byte as `serde_json::to_writer` writes its derived `Serialize` (a test
/// holds the two equal on every kind of value). A million-turn report writes a million turn
/// objects, and serde's way through each field (a key serializer, an escape scan of the key,
/// three writes) was most of the JSON format's cost; here the keys are constant bytes and the
/// values go through serde_json's own formatter (numbers) and escaping (strings that need
/// it), so the output cannot drift from serde_json's.
fn write_row(buf: &mut Vec<u8>, row: &ConversationRow<'_>) -> Result<(), serde_json::Error> {
    signed(buf, br#"{"id":"#, row.id)?;
    string(buf, br#","uid":"#, row.uid)?;
    signed(buf, br#","run_id":"#, row.run_id)?;
    string(buf, br#","provider":"#, row.provider)?;
    string(buf, br#","model":"#, row.model)?;
    optional(buf, br#","scenario":"#, row.scenario)?;
    unsigned(buf, br#","repeat":"#, u64::from(row.repeat))?;
    string(buf, br#","outcome":"#, row.outcome)?;
    number(buf, br#","latency_ms":"#, row.latency_ms)?;
    buf.extend_from_slice(br#","turns":["#);
    for (i, t) in row.turns.iter().enumerate() {
        let key: &[u8] = if i == 0 {
            br#"{"outcome":"#
        } else {
            br#",{"outcome":"#
        };
        string(buf, key, t.outcome)?;
        optional(buf, br#","finish_reason":"#, t.finish_reason)?;
        number(buf, br#","ttft_ms":"#, t.ttft_ms)?;
        number(buf, br#","ttfa_ms":"#, t.ttfa_ms)?;
        number(buf, br#","e2e_ms":"#, t.e2e_ms)?;
        buf.extend_from_slice(if t.usable {
            br#","usable":true}"#
        } else {
            br#","usable":false}"#
        });
    }
    buf.extend_from_slice(br#"],"checks":"#);
    match &row.checks {
        Some(c) => {
            unsigned(buf, br#"{"passed":"#, c.passed)?;
            unsigned(buf, br#","failed":"#, c.failed)?;
            unsigned(buf, br#","not_scored":"#, c.not_scored)?;
            buf.extend_from_slice(br#","failed_checks":["#);
            for (i, id) in c.failed_checks.iter().enumerate() {
                string(buf, if i == 0 { b"" } else { b"," }, id)?;
            }
            buf.extend_from_slice(b"]}");
        }
        None => buf.extend_from_slice(b"null"),
    }
    buf.extend_from_slice(br#","judgments":"#);
    serde_json::to_writer(&mut *buf, &row.judgments)?;
    buf.push(b'}');
    Ok(())
}

// Each writes `key` (the bytes before the value: a separator, a key and its colon), then
// the value.

fn signed(buf: &mut Vec<u8>, key: &[u8], v: i64) -> Result<(), serde_json::Error> {
    buf.extend_from_slice(key);
    CompactFormatter
        .write_i64(buf, v)
        .map_err(serde_json::Error::io)
}

fn unsigned(buf: &mut Vec<u8>, key: &[u8], v: u64) -> Result<(), serde_json::Error> {
    buf.extend_from_slice(key);
    CompactFormatter
        .write_u64(buf, v)
        .map_err(serde_json::Error::io)
}

/// An `Option<&str>` as serde_json writes it.
fn optional(buf: &mut Vec<u8>, key: &[u8], s: Option<&str>) -> Result<(), serde_json::Error> {
    match s {
        Some(s) => string(buf, key, s),
        None => {
            buf.extend_from_slice(key);
            buf.extend_from_slice(b"null");
            Ok(())
        }
    }
}

/// A string as serde_json writes it: as it is when nothing in it needs escaping (the usual
/// case: ids, names, outcomes), else by serde_json.
fn string(buf: &mut Vec<u8>, key: &[u8], s: &str) -> Result<(), serde_json::Error> {
    buf.extend_from_slice(key);
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        buf.push(b'"');
        buf.extend_from_slice(s.as_bytes());
        buf.push(b'"');
        Ok(())
    } else {
        serde_json::to_writer(buf, s)
    }
}

/// A number as serde_json writes an `Option<f64>`: `null` for none and for a non-finite value.
fn number(buf: &mut Vec<u8>, key: &[u8], v: Option<f64>) -> Result<(), serde_json::Error> {
    buf.extend_from_slice(key);
    match v.filter(|v| v.is_finite()) {
        Some(v) => CompactFormatter
            .write_f64(buf, v)
            .map_err(serde_json::Error::io),
        None => {
            buf.extend_from_slice(b"null");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::report::rows::{ConversationChecks, ConversationJudgment, TurnRow};

    fn turn(outcome: &'static str, finish: Option<&'static str>, ms: Option<f64>) -> TurnRow {
        TurnRow {
            outcome,
            finish_reason: finish,
            ttft_ms: ms,
            ttfa_ms: ms.map(|v| v * 3.0),
            e2e_ms: ms.map(|v| -v),
            usable: ms.is_some(),
        }
    }

    /// The hand-laid row writer against serde_json's derived output, on every kind of
    /// value a row can hold: nulls, non-finite and extreme numbers, strings that need
    /// escaping, empty and full lists.
    #[test]
    fn rows_are_written_byte_for_byte_as_serde_json_writes_them() {
        let scores = BTreeMap::from([("accuracy", 4), ("tone \"q\"", -1)]);
        let rows = [
            ConversationRow {
                id: 1,
                uid: "synthetic-0",
                run_id: 7,
                provider: "acme",
                model: "glm-5.3",
                scenario: Some("scenario-00"),
                repeat: 1,
                outcome: "completed",
                latency_ms: Some(5250.0),
                turns: vec![
                    turn("ok", Some("stop"), Some(354.25)),
                    turn("timeout", None, None),
                    turn("ok", Some("length"), Some(f64::NAN)),
                    turn("ok", Some("stop"), Some(1e-7)),
                    turn("ok", Some("stop"), Some(1.5e21)),
                    turn("ok", Some("stop"), Some(-0.0)),
                ],
                checks: Some(ConversationChecks {
                    passed: 3,
                    failed: 2,
                    not_scored: u64::MAX,
                    failed_checks: vec!["brief", "back\\slash", "new\nline"],
                }),
                judgments: vec![ConversationJudgment {
                    rubric: "helpful",
                    judge: "judge-a",
                    simulated: true,
                    replicate: 2,
                    status: "ok",
                    scores,
                }],
            },
            ConversationRow {
                id: -4,
                uid: "quote \" back \\ tab \t bell \u{7} é 日本",
                run_id: i64::MAX,
                provider: "slash \\ only",
                model: "m\u{1f}",
                scenario: None,
                repeat: u32::MAX,
                outcome: "interrupted",
                latency_ms: Some(f64::INFINITY),
                turns: Vec::new(),
                checks: Some(ConversationChecks {
                    passed: 0,
                    failed: 0,
                    not_scored: 0,
                    failed_checks: Vec::new(),
                }),
                judgments: Vec::new(),
            },
            ConversationRow {
                id: 0,
                uid: "",
                run_id: 0,
                provider: "p",
                model: "q",
                scenario: Some("s\u{0}"),
                repeat: 0,
                outcome: "failed",
                latency_ms: None,
                turns: vec![turn("ok", None, Some(0.1 + 0.2))],
                checks: None,
                judgments: Vec::new(),
            },
        ];
        for row in &rows {
            let mut ours = Vec::new();
            write_row(&mut ours, row).unwrap();
            let theirs = serde_json::to_vec(row).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&theirs)
            );
        }
    }
}
