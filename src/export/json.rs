//! The JSON format: the report as data, cells, headlines and per-conversation rows, in the
//! shape `docs/report.schema.json` describes (a test validates it). Pretty-printed, but the
//! per-conversation rows one compact row a line.

use std::io::Write;

use serde::Serialize;

use super::{ExportError, Exporter, FormatOptions};
use crate::report::matrix::MatrixRow;
use crate::report::model::{
    AgreementSection, AnchorSection, Cell, CheckAgreement, ChecksSection, Comparison, Family,
    HeadlineKind, JudgeSection, Meta, PairwiseSection, Report, SortBy, Trend, VsFastest,
};
use crate::report::replay::ReplaySection;
use crate::report::rows::ConversationRows;

/// The report as the JSON format writes it: every field of [`Report`] in its order, each
/// headline with its sentence as `text` (the report holds a headline's numbers; the
/// sentence is rendered by [`super::headline`], as in every format). The per-conversation
/// rows follow, written apart.
#[derive(Serialize)]
struct Written<'a> {
    schema: &'a str,
    meta: &'a Meta,
    headlines: Vec<WrittenHeadline<'a>>,
    cells: &'a [Cell],
    sort: SortBy,
    order: &'a [usize],
    vs_fastest: &'a [VsFastest],
    checks: &'a ChecksSection,
    judges: &'a [JudgeSection],
    agreement: &'a [AgreementSection],
    pairwise: &'a [PairwiseSection],
    anchors: &'a [AnchorSection],
    check_agreement: &'a [CheckAgreement],
    notes: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    replay: Option<&'a ReplaySection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trend: Option<&'a Trend>,
    #[serde(skip_serializing_if = "Option::is_none")]
    comparison: Option<&'a Comparison>,
    matrix: &'a [MatrixRow],
}

#[derive(Serialize)]
struct WrittenHeadline<'a> {
    kind: HeadlineKind,
    model: Option<&'a str>,
    /// The sentence every format prints.
    text: String,
    established: Option<bool>,
    simulated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    family: Option<&'a Family>,
}

impl<'a> Written<'a> {
    fn of(r: &'a Report) -> Written<'a> {
        Written {
            schema: r.schema,
            meta: &r.meta,
            headlines: r
                .headlines
                .iter()
                .map(|h| WrittenHeadline {
                    kind: h.kind,
                    model: h.model.as_deref(),
                    text: super::headline::text(h),
                    established: h.established,
                    simulated: h.simulated,
                    family: h.family.as_ref(),
                })
                .collect(),
            cells: &r.cells,
            sort: r.sort,
            order: &r.order,
            vs_fastest: &r.vs_fastest,
            checks: &r.checks,
            judges: &r.judges,
            agreement: &r.agreement,
            pairwise: &r.pairwise,
            anchors: &r.anchors,
            check_agreement: &r.check_agreement,
            notes: &r.notes,
            replay: r.replay.as_ref(),
            trend: r.trend.as_ref(),
            comparison: r.comparison.as_ref(),
            matrix: &r.matrix,
        }
    }
}

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
        let mut head = serde_json::to_vec_pretty(&Written::of(r))?;
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
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let mut start = 0;
    while start < rows.len() {
        let batch: Vec<Result<Vec<u8>, serde_json::Error>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|w| start + w * CHUNK)
                .filter(|&from| from < rows.len())
                .map(|from| s.spawn(move || serialize_chunk(rows, from)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(serde::ser::Error::custom("a row serializer panicked"))
                    })
                })
                .collect()
        });
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
