//! Output formats: each one only formats data it is handed, behind one small trait.
//!
//! - Report formats ([`REPORT_FORMATS`]): `terminal`, `md`, `csv`, `json`, `html` — what
//!   `turnbench report --format` writes from a computed [`Report`].
//! - Conversation formats ([`CONVERSATION_FORMATS`]): `jsonl`, the exchange format that
//!   `turnbench export conversations` streams and `turnbench import` reads.
//!
//! Adding a format is one file with one `Exporter` impl plus one line in a registry. The
//! maths lives in `crate::report` and `crate::stats`; the reading in `crate::store::facts`.
//! Text from users' files (provider, model, scenario names, answers) is rendered inert by
//! every format: escaped in HTML and Markdown, neutralised against formula injection in
//! CSV, control characters made visible on a terminal.

mod consistency_tables;
pub mod conversation_view;
pub mod conversations;
mod csv;
mod family_tables;
mod html;
mod html_charts;
mod json;
mod judge_card_tables;
mod latency_tables;
mod markdown;
mod matrix_view;
mod over_time_tables;
mod replay_tables;
pub mod sections;
mod survival_tables;
mod svg;
mod terminal;
mod text_table;
mod ttft_chart;
mod turn_chart;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::report::model::Report;
use crate::store::StoreError;
pub use conversations::ConversationSource;
pub use html::page as html_page;

/// One output format for one kind of data `D`: it only formats. Its name is the
/// registry's ([`Format`]).
pub trait Exporter<D: ?Sized>: Sync {
    fn write(&self, data: &D, opts: &FormatOptions, out: &mut dyn Write)
    -> Result<(), ExportError>;
}

/// A format as `--format` names it.
pub struct Format<D: ?Sized + 'static> {
    /// The name `--format` takes.
    pub name: &'static str,
    pub exporter: &'static dyn Exporter<D>,
}

/// Choices that belong to the reader, not to the data.
#[derive(Debug, Clone, Copy, Default)]
pub struct FormatOptions {
    /// CSV: the scenario × cell matrix's rows instead of the cells' (`--matrix`).
    pub matrix_rows: bool,
    /// CSV: one row per cell × check tag × turn of CONSTRAINTS ACROSS TURNS instead of
    /// the cells' (`--turns`).
    pub turn_rows: bool,
    /// Terminal: every headline's family as a table under FAMILIES (`--verbose`); the
    /// Markdown and HTML formats always carry them.
    pub families: bool,
}

pub static REPORT_FORMATS: &[Format<Report>] = &[
    Format {
        name: "terminal",
        exporter: &terminal::Terminal,
    },
    Format {
        name: "md",
        exporter: &markdown::Markdown,
    },
    Format {
        name: "csv",
        exporter: &csv::Csv,
    },
    Format {
        name: "json",
        exporter: &json::Json,
    },
    Format {
        name: "html",
        exporter: &html::Html,
    },
];

pub static CONVERSATION_FORMATS: &[Format<ConversationSource>] = &[Format {
    name: "jsonl",
    exporter: &conversations::Jsonl,
}];

/// The exporter of `D` named `name`, or an error listing the names there are.
pub fn find<D: ?Sized>(
    registry: &[Format<D>],
    name: &str,
) -> Result<&'static dyn Exporter<D>, ExportError> {
    registry
        .iter()
        .find(|f| f.name == name)
        .map(|f| f.exporter)
        .ok_or_else(|| ExportError::UnknownFormat {
            name: name.to_string(),
            known: registry
                .iter()
                .map(|f| f.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("--format {name}: no such format\n  fix: use one of: {known}")]
    UnknownFormat { name: String, known: String },
    #[error("{path}: cannot write: {source}", path = .path.display())]
    Create { path: PathBuf, source: io::Error },
    #[error("writing the output: {0}")]
    Write(#[from] io::Error),
    #[error("writing JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("writing CSV: {0}")]
    Csv(#[from] ::csv::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ExportError {
    /// The reader went away (`| head`): not an error for a command-line tool.
    pub fn is_broken_pipe(&self) -> bool {
        let pipe = io::ErrorKind::BrokenPipe;
        match self {
            ExportError::Write(e) => e.kind() == pipe,
            ExportError::Json(e) => e.io_error_kind() == Some(pipe),
            ExportError::Csv(e) => matches!(e.kind(), ::csv::ErrorKind::Io(e) if e.kind() == pipe),
            _ => false,
        }
    }
}

/// Writes with `exporter` to `path`, beside it first and renamed at the end, so a failed
/// export never leaves half a file under the name asked for.
pub fn write_file<D: ?Sized>(
    exporter: &dyn Exporter<D>,
    data: &D,
    opts: &FormatOptions,
    path: &Path,
) -> Result<(), ExportError> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let create = |source| ExportError::Create {
        path: path.to_path_buf(),
        source,
    };
    let file = File::create(&partial).map_err(create)?;
    let mut out = BufWriter::with_capacity(1 << 16, file);
    let result = exporter.write(data, opts, &mut out).and_then(|()| {
        out.into_inner()
            .map_err(|e| ExportError::Write(e.into_error()))?
            .sync_all()?;
        std::fs::rename(&partial, path).map_err(create)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result
}

/// Writes with `exporter` to standard output; a closed pipe ends it quietly.
pub fn write_stdout<D: ?Sized>(
    exporter: &dyn Exporter<D>,
    data: &D,
    opts: &FormatOptions,
) -> Result<(), ExportError> {
    let mut out = BufWriter::new(io::stdout().lock());
    match exporter
        .write(data, opts, &mut out)
        .and_then(|()| out.flush().map_err(ExportError::from))
    {
        Err(e) if e.is_broken_pipe() => Ok(()),
        other => other,
    }
}

/// Text from a user's file, safe on a terminal: control characters (ANSI escapes, carriage
/// returns, newlines) are shown as `\u{…}` escapes instead of acting.
pub fn terminal_inert(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return s.into();
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_a_distinct_name() {
        let mut names: Vec<_> = REPORT_FORMATS.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names, ["csv", "html", "json", "md", "terminal"]);
        let err = find(REPORT_FORMATS, "xlsx").err().unwrap().to_string();
        assert!(
            err.contains("csv, html") || err.contains("terminal, md"),
            "{err}"
        );
    }

    #[test]
    fn control_characters_are_made_visible() {
        assert_eq!(terminal_inert("plain"), "plain");
        assert_eq!(terminal_inert("a\u{1b}[31mred"), "a\\u{1b}[31mred");
        assert_eq!(terminal_inert("x\ry"), "x\\u{d}y");
    }
}
