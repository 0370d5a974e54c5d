//! `turnbench import`: transcript files into the store. A file is JSON Lines, one JSON
//! array, or JSON documents one after another ([`records`]); a record is the exchange format, a ShareGPT conversation, a logged
//! OpenAI chat call, an Anthropic Messages record or logged call, an LMSYS-Chat-1M or
//! WildChat row, a logged OpenAI Responses call, Langfuse observations or an OpenTelemetry
//! export batch ([`format`], [`sharegpt`], [`openai_log`], [`anthropic`], [`lmsys`],
//! [`responses`], [`langfuse`], [`otel`]), each read into the exchange
//! format and validated once ([`validate`]). Content a record carries that is not stored
//! refuses it naming the field, or with `--lossy` is dropped and counted ([`Dropped`]).
//!
//! A reader thread reads and validates records while this thread writes them ([`sink`]);
//! memory stays flat whatever the file size, except for Responses calls, held until the
//! end of the file to be joined along `previous_response_id`. The model calls of traces
//! are spilled to a temporary database and joined by trace there ([`grouped`]). Each conversation is stored whole or not at
//! all, and its identity is its `id`, else a hash of its normalised content, so importing a
//! file again adds nothing.
//!
//! Transactions: by default many conversations share one transaction (committed every
//! [`COMMIT_EVERY`]): each one is whole, a crash loses at most the last uncommitted group,
//! and a re-run skips what is stored and completes the rest. With `--strict` the whole
//! file is one transaction: the first bad line rolls it back, so nothing from that file is
//! stored, and nothing is ever deleted; a crash leaves nothing of it either (SQLite
//! discards uncommitted WAL frames). One big transaction is also the fastest way to write.

mod anthropic;
pub mod format;
mod grouped;
mod langfuse;
mod lmsys;
mod openai_log;
mod otel;
mod reader;
mod records;
mod responses;
mod shape;
mod sharegpt;
mod sink;
pub mod validate;

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use rusqlite::{Connection, Transaction, TransactionBehavior};

pub use crate::jsonl::{Place, Rejection};
use crate::store::StoreError;
use crate::store::conversation_rows::ConversationInserter;
use crate::store::inserts::finish_run;
use reader::{Batch, Item, ReadFailure, RecordSettings};
pub use shape::{Dropped, Shape, ShapeCounts, ShapeFilter};
use sink::{FileSink, Stored};
pub use validate::{Defaults, LineProblem};

/// Conversations per transaction without `--strict`: large enough that commits cost
/// little, small enough that a crash loses little.
pub const COMMIT_EVERY: u64 = 5_000;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Errors here carry their cause in the message, not as a `#[source]`: `{:#}` at the
    /// command line would print it twice.
    #[error("{path}: cannot read: {error}\n  fix: check the path", path = .path.display())]
    Open { path: PathBuf, error: io::Error },
    #[error(
        "{path}:{line}: read failed: {error}\n  importing the file again completes it (what is stored already is skipped)",
        path = .path.display()
    )]
    Read {
        path: PathBuf,
        line: u64,
        error: io::Error,
    },
    /// `--strict`: the first bad line; nothing from the file was stored.
    #[error(
        "{0}\n  --strict: nothing from {path} was stored; fix the line (or drop --strict to skip bad lines) and import again",
        path = .0.path.display()
    )]
    Strict(Rejection),
    #[error(
        "{path}: the reader thread stopped before the end of the file (a bug: please report it)\n  whole conversations stored so far stay; importing the file again completes it",
        path = .path.display()
    )]
    ReaderStopped { path: PathBuf },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for ImportError {
    fn from(e: rusqlite::Error) -> Self {
        ImportError::Store(StoreError::Sql(e))
    }
}

#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Stop at the first bad line; nothing from that file is stored.
    pub strict: bool,
    /// Show a progress bar (on a terminal only).
    pub progress: bool,
    /// The shapes records may take.
    pub format: ShapeFilter,
    /// What fills in the fields records leave out.
    pub defaults: Defaults,
    /// Import records that carry content turnbench does not store (an image, an unknown
    /// block), dropping it and counting it in the summary, instead of refusing them.
    pub lossy: bool,
}

/// What importing one file did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileSummary {
    pub path: PathBuf,
    pub imported: u64,
    pub already_present: u64,
    pub rejected: u64,
    /// Turns of the imported conversations.
    pub turns: u64,
    /// The run created for this file; `None` when nothing new was stored.
    pub run_id: Option<i64>,
    /// Conversations read (imported or already present) per shape.
    pub read_as: ShapeCounts,
    /// What the imported conversations carried that is not stored, by kind.
    pub dropped: Dropped,
}

impl fmt::Display for FileSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} imported ({} turn{}), {} already present, {} rejected",
            self.path.display(),
            self.imported,
            self.turns,
            if self.turns == 1 { "" } else { "s" },
            self.already_present,
            self.rejected
        )?;
        match self.run_id {
            Some(id) => write!(f, " → run {id}")?,
            None if self.rejected == 0 && self.already_present > 0 => {
                f.write_str(" (nothing new)")?
            }
            None => {}
        }
        if !self.read_as.is_empty() {
            write!(f, "; read as {}", self.read_as)?;
        }
        if !self.dropped.is_empty() {
            write!(f, "; not stored: {}", self.dropped)?;
        }
        Ok(())
    }
}

/// Imports one file (`-` reads standard input). Bad lines go to `on_reject` and are
/// skipped, unless `--strict`, where the first one is the error.
pub fn import_file(
    conn: &mut Connection,
    path: &Path,
    opts: &ImportOptions,
    on_reject: &mut dyn FnMut(&Rejection),
) -> Result<FileSummary, ImportError> {
    let open_err = |error| ImportError::Open {
        path: path.to_path_buf(),
        error,
    };
    let (input, len): (Box<dyn BufRead + Send>, Option<u64>) = if path == Path::new("-") {
        (Box::new(BufReader::new(io::stdin())), None)
    } else {
        let file = File::open(path).map_err(open_err)?;
        let len = file.metadata().map_err(open_err)?.len();
        (Box::new(BufReader::with_capacity(1 << 20, file)), Some(len))
    };
    import_reader(conn, path, input, len, opts, on_reject)
}

/// Imports records (JSON Lines or one JSON array) from any reader; `path` names it in
/// messages and in the run.
pub fn import_reader(
    conn: &mut Connection,
    path: &Path,
    input: Box<dyn BufRead + Send>,
    len: Option<u64>,
    opts: &ImportOptions,
    on_reject: &mut dyn FnMut(&Rejection),
) -> Result<FileSummary, ImportError> {
    let run_name = match path.file_name() {
        Some(name) if path != Path::new("-") => name.to_string_lossy().into_owned(),
        _ => "stdin".to_string(),
    };
    let settings = serde_json::json!({
        "path": path.display().to_string(),
        "strict": opts.strict,
        "format": opts.format.to_string(),
        "provider": opts.defaults.provider,
        "model": opts.defaults.model,
        "scenario": opts.defaults.scenario,
        "lossy": opts.lossy,
    })
    .to_string();
    let mut sink = FileSink::new(&run_name, settings);
    let mut summary = FileSummary {
        path: path.to_path_buf(),
        ..Default::default()
    };
    let tuned = BulkSettings::apply(conn)?;
    let progress = progress_bar(len, opts.progress);
    // A second, read-only connection for the reader thread (none for a store in memory).
    let stored = conn
        .path()
        .filter(|p| !p.is_empty())
        .and_then(|p| crate::store::open_read_only(Path::new(p)).ok());
    let record_settings = RecordSettings {
        format: opts.format,
        defaults: opts.defaults.clone(),
        lossy: opts.lossy,
    };
    let (channels, reader) = reader::spawn(input, progress.clone(), stored, record_settings);
    let result = write_all(conn, &channels, &mut sink, &mut summary, opts, on_reject);
    drop(channels); // lets the reader stop if we stopped early
    let _ = reader.join();
    progress.finish_and_clear();
    let restored = tuned.restore(conn);
    result.map_err(|e| match e {
        WriteError::Read(ReadFailure { line, source }) => ImportError::Read {
            path: path.to_path_buf(),
            line,
            error: source,
        },
        WriteError::Strict { place, problem } => ImportError::Strict(Rejection {
            path: path.to_path_buf(),
            place,
            problem,
        }),
        WriteError::ReaderStopped => ImportError::ReaderStopped {
            path: path.to_path_buf(),
        },
        WriteError::Store(e) => ImportError::Store(e),
    })?;
    restored?;
    summary.run_id = sink.run_id();
    Ok(summary)
}

/// Page cache and checkpoint settings for a bulk write, restored afterwards. A larger
/// cache keeps the uid index in memory instead of spilling and re-reading pages; a
/// larger auto-checkpoint copies hot pages (index interiors) from the WAL less often.
/// Both only trade memory and WAL size for speed: durability is unchanged.
struct BulkSettings {
    cache_size: i64,
    wal_autocheckpoint: i64,
}

impl BulkSettings {
    /// 64 MiB of page cache (negative = KiB).
    const CACHE_KIB: i64 = -65_536;
    /// Pages (4 KiB) in the WAL before an automatic checkpoint: 256 MiB.
    const CHECKPOINT_PAGES: i64 = 65_536;

    fn apply(conn: &Connection) -> rusqlite::Result<Self> {
        let get = |name| conn.pragma_query_value(None, name, |r| r.get::<_, i64>(0));
        let saved = BulkSettings {
            cache_size: get("cache_size")?,
            wal_autocheckpoint: get("wal_autocheckpoint")?,
        };
        conn.pragma_update(None, "cache_size", Self::CACHE_KIB)?;
        conn.pragma_update(None, "wal_autocheckpoint", Self::CHECKPOINT_PAGES)?;
        Ok(saved)
    }

    fn restore(self, conn: &Connection) -> rusqlite::Result<()> {
        conn.pragma_update(None, "cache_size", self.cache_size)?;
        conn.pragma_update(None, "wal_autocheckpoint", self.wal_autocheckpoint)
    }
}

enum WriteError {
    Read(ReadFailure),
    ReaderStopped,
    Strict { place: Place, problem: LineProblem },
    Store(StoreError),
}

impl From<StoreError> for WriteError {
    fn from(e: StoreError) -> Self {
        WriteError::Store(e)
    }
}

impl From<rusqlite::Error> for WriteError {
    fn from(e: rusqlite::Error) -> Self {
        WriteError::Store(StoreError::Sql(e))
    }
}

/// What the writer takes from the reader next.
enum Received {
    Items(Vec<Item>),
    End,
    /// A read error, or the reader thread gone without saying it reached the end.
    Failed(WriteError),
}

fn receive(channels: &reader::ReaderChannels) -> Received {
    match channels.batches.recv() {
        Ok(Batch::Items(items)) => Received::Items(items),
        Ok(Batch::End) => Received::End,
        Ok(Batch::Failed(failure)) => Received::Failed(WriteError::Read(failure)),
        Err(_) => Received::Failed(WriteError::ReaderStopped),
    }
}

/// The writer loop: one transaction per group of conversations (one for the whole file
/// with `--strict`), begun only when there is something to write. Only an explicit end
/// of input finishes the run; a failure keeps the group's whole conversations unless
/// `--strict`, where it rolls the file back.
fn write_all(
    conn: &Connection,
    channels: &reader::ReaderChannels,
    sink: &mut FileSink,
    summary: &mut FileSummary,
    opts: &ImportOptions,
    on_reject: &mut dyn FnMut(&Rejection),
) -> Result<(), WriteError> {
    // Statements prepared once for the file; they live across its transactions, which is
    // why those are opened on a shared reference (`new_unchecked`: this function is the
    // connection's only user meanwhile).
    let mut inserter = ConversationInserter::new(conn)?;
    let mut next = receive(channels);
    while let Received::Items(mut items) = next {
        // IMMEDIATE: take the write lock now, so that a concurrent writer makes us wait
        // (busy timeout) instead of failing halfway.
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let mut in_tx = 0u64;
        loop {
            in_tx += write_items(
                &tx,
                &mut inserter,
                &mut items,
                sink,
                summary,
                opts,
                on_reject,
            )?;
            let _ = channels.done.try_send(items); // else freed here: the reader has ended
            next = receive(channels);
            match next {
                Received::Items(more) if opts.strict || in_tx < COMMIT_EVERY => items = more,
                _ => break,
            }
        }
        match &next {
            Received::Failed(_) if opts.strict => break, // dropping `tx` rolls back
            Received::End => {
                if let Some(run_id) = sink.run_id() {
                    finish_run(&tx, run_id)?;
                }
                tx.commit()?;
            }
            Received::Items(_) | Received::Failed(_) => tx.commit()?,
        }
    }
    match next {
        Received::Failed(e) => Err(e),
        Received::End | Received::Items(_) => Ok(()),
    }
}

/// Writes one batch; returns how many conversations it added.
fn write_items(
    tx: &Connection,
    inserter: &mut ConversationInserter,
    items: &mut [Item],
    sink: &mut FileSink,
    summary: &mut FileSummary,
    opts: &ImportOptions,
    on_reject: &mut dyn FnMut(&Rejection),
) -> Result<u64, WriteError> {
    let mut added = 0;
    for item in items {
        match item {
            Item::Rejected { place, problem } => {
                let problem = std::mem::take(problem);
                reject(summary, opts, on_reject, *place, problem)?;
            }
            Item::Conversation {
                place,
                shape,
                conversation,
            } => match sink.store(tx, inserter, conversation)? {
                Stored::Imported { turns } => {
                    summary.imported += 1;
                    summary.turns += turns as u64;
                    summary.dropped.merge(&conversation.dropped);
                    summary.read_as.add(*shape);
                    added += 1;
                }
                Stored::AlreadyPresent => {
                    summary.already_present += 1;
                    summary.read_as.add(*shape);
                }
                Stored::RepeatTaken { repeat } => {
                    let problem = LineProblem {
                        field: "repeat".into(),
                        problem: format!(
                            "{repeat} is taken: an earlier conversation of this file has the \
                             same provider, model, label and scenario; give each its own \
                             repeat (or none)"
                        ),
                    };
                    reject(summary, opts, on_reject, *place, problem)?;
                }
            },
        }
    }
    Ok(added)
}

fn reject(
    summary: &mut FileSummary,
    opts: &ImportOptions,
    on_reject: &mut dyn FnMut(&Rejection),
    place: Place,
    problem: LineProblem,
) -> Result<(), WriteError> {
    if opts.strict {
        return Err(WriteError::Strict { place, problem });
    }
    summary.rejected += 1;
    on_reject(&Rejection {
        path: summary.path.clone(),
        place,
        problem,
    });
    Ok(())
}

fn progress_bar(len: Option<u64>, show: bool) -> ProgressBar {
    match len {
        Some(len) => crate::progress::styled(
            ProgressBar::new(len),
            show,
            "{spinner} [{elapsed_precise}] {bar:30} {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
        ),
        None => crate::progress::styled(ProgressBar::new_spinner(), show, "{spinner} {msg}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Valid lines, then an I/O error (a disk or network file system failing mid-read).
    struct FailingAfter {
        lines: io::Cursor<Vec<u8>>,
    }

    impl io::Read for FailingAfter {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.lines.read(buf)? {
                0 => Err(io::Error::other("device went away")),
                n => Ok(n),
            }
        }
    }

    fn lines(n: usize) -> io::Cursor<Vec<u8>> {
        let mut text = String::new();
        for i in 0..n {
            text.push_str(&format!(
                "{{\"id\":\"c{i}\",\"messages\":[{{\"role\":\"user\",\"content\":\"q\"}},{{\"role\":\"assistant\",\"content\":\"a\"}}]}}\n"
            ));
        }
        io::Cursor::new(text.into_bytes())
    }

    fn failing_input(n: usize) -> Box<dyn BufRead + Send> {
        Box::new(BufReader::new(FailingAfter { lines: lines(n) }))
    }

    /// Valid lines, then a panic inside the reader thread.
    struct PanicsAfter {
        lines: io::Cursor<Vec<u8>>,
    }

    impl io::Read for PanicsAfter {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.lines.read(buf)? {
                0 => panic!("simulated bug in the reader"),
                n => Ok(n),
            }
        }
    }

    fn stored(conn: &Connection) -> i64 {
        conn.query_row("SELECT COUNT(*) FROM conversations", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn read_error_keeps_whole_conversations_unless_strict() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = crate::store::open(&dir.path().join("t.db")).unwrap();
        for (strict, expected) in [(true, 0), (false, 600)] {
            let opts = ImportOptions {
                strict,
                ..ImportOptions::default()
            };
            let err = import_reader(
                &mut conn,
                Path::new("flaky.jsonl"),
                failing_input(600),
                None,
                &opts,
                &mut |r| panic!("{r}"),
            )
            .unwrap_err();
            assert!(
                err.to_string()
                    .starts_with("flaky.jsonl:601: read failed: device went away"),
                "{err}"
            );
            assert_eq!(stored(&conn), expected, "strict: {strict}");
        }
        // The bulk settings are restored even when the import failed.
        let cache: i64 = conn
            .pragma_query_value(None, "cache_size", |r| r.get(0))
            .unwrap();
        assert_eq!(cache, -2000);
    }

    #[test]
    fn a_reader_that_dies_is_never_taken_for_the_end_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = crate::store::open(&dir.path().join("t.db")).unwrap();
        // Non-strict keeps what the reader had handed over: one full batch of 256.
        for (strict, expected) in [(true, 0), (false, 256)] {
            let input = Box::new(BufReader::new(PanicsAfter { lines: lines(300) }));
            let opts = ImportOptions {
                strict,
                ..ImportOptions::default()
            };
            let err = import_reader(
                &mut conn,
                Path::new("x.jsonl"),
                input,
                None,
                &opts,
                &mut |r| panic!("{r}"),
            )
            .unwrap_err();
            assert!(matches!(err, ImportError::ReaderStopped { .. }), "{err}");
            assert_eq!(stored(&conn), expected, "strict: {strict}");
            let unfinished: i64 = conn
                .query_row(
                    "SELECT COUNT(*) FROM runs WHERE ended_at IS NULL",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(
                unfinished,
                i64::from(!strict),
                "an unfinished run is not ended"
            );
        }
    }
}
