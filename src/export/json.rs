//! The JSON format: the report as data, cells, headlines and per-conversation rows, in the
//! shape `docs/report.schema.json` describes (a test validates it).

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
        serde_json::to_writer_pretty(&mut *out, r)?;
        out.write_all(b"\n")?;
        Ok(())
    }
}
