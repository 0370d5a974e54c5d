//! The JSON format: the report as data, cells, headlines and per-conversation rows, in the
//! shape `docs/report.schema.json` describes (a test validates it). Pretty-printed, but the
//! per-conversation rows one compact row a line.

use std::io::Write;

use super::{ExportError, Exporter, FormatOptions};
use crate::report::model::Report;

pub struct Json;

impl Exporter<Report> for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn description(&self) -> &'static str {
        "cells, headlines and per-conversation rows (schema: docs/report.schema.json)"
    }

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
        // Each row into one buffer, then one write: serde's many small writes would each
        // go through the `dyn Write`.
        let mut line = Vec::with_capacity(4096);
        for (i, row) in rows.iter().enumerate() {
            line.clear();
            line.extend_from_slice(if i == 0 { b"\n    " } else { b",\n    " });
            serde_json::to_writer(&mut line, &row)?;
            out.write_all(&line)?;
        }
        out.write_all(if rows.is_empty() {
            b"]\n}\n"
        } else {
            b"\n  ]\n}\n"
        })?;
        Ok(())
    }
}
