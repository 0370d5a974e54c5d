//! The SQLite store: opening, migrations, and typed reads and writes.
//!
//! Schema lives in `db/NNN_name.sql`, applied in order; the version is `PRAGMA user_version`.
//! WAL and foreign keys are set on every open, outside migrations. Nothing here deletes
//! evaluation data.

/// `row!(r => T { a, b, c })` is `T { a: r.get(0)?, b: r.get(1)?, c: r.get(2)? }`: a struct
/// read from a row whose columns are its fields, in the order named (the SELECT's order).
/// `row!(r => T { a, b; ..base })` takes the fields not named from `base`. Defined before
/// the modules below, so every one of them has it.
macro_rules! row {
    ($r:ident => $t:path { $($f:ident),+ $(,)? $(; ..$base:expr)? }) => {{
        let mut column = 0usize;
        $t {
            $($f: {
                column += 1;
                $r.get(column - 1)?
            },)+
            $(..$base)?
        }
    }};
}

pub mod anchor_judgments;
mod backfill;
pub mod checks;
pub mod conversation_rows;
pub mod detail;
pub mod facts;
pub mod inserts;
pub mod judgments;
pub mod labels;
pub mod lock;
pub mod merge;
mod migrate;
pub mod pairwise;
#[cfg(test)]
mod plans;
pub mod read;
pub mod records;
pub mod repeats;
pub mod replay;
pub mod writer_task;

use std::path::{Path, PathBuf};

use rusqlite::Connection;

/// The read model's selection types: what every reader (report, export, show) filters by.
pub use facts::{FactFilter, JudgmentFilter, Selection};
pub use records::{AttemptRecord, ConversationRecord, TurnRecord};
pub use writer_task::{Storable, StoreWriter, Written};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {error}", path = .path.display())]
    Open {
        path: PathBuf,
        error: rusqlite::Error,
    },
    #[error(
        "{path}: store is at schema version {found}, this turnbench knows up to {supported}\n  fix: use a newer turnbench, or a fresh --db file",
        path = .path.display()
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error(
        "{path}: not a turnbench store ({error})\n  fix: point --db at a turnbench database or a new file",
        path = .path.display()
    )]
    NotAStore {
        path: PathBuf,
        error: rusqlite::Error,
    },
    #[error(
        "{path}: store has migrations [{applied}], this turnbench expects [{expected}] first\n  fix: this store was made by a different build; use a fresh --db file",
        path = .path.display()
    )]
    MigrationMismatch {
        path: PathBuf,
        applied: String,
        expected: String,
    },
    #[error("migration {name} failed: {error}")]
    Migration {
        name: &'static str,
        error: rusqlite::Error,
    },
    /// Not a `#[source]`: the message already carries it, and `{:#}` would print it twice.
    #[error("store: {0}")]
    Sql(rusqlite::Error),
    #[error(
        "{path}: no such store\n  fix: run `turnbench collect` (or import transcripts) into it first, or point --db at an existing store",
        path = .path.display()
    )]
    Missing { path: PathBuf },
    #[error("store writer stopped: {0}")]
    WriterGone(String),
    #[error("conversation {uid}: stored {column} is unreadable ({problem}); the store is damaged")]
    Corrupt {
        uid: String,
        column: &'static str,
        problem: String,
    },
    #[error("--run {run}: no run with this id or name in the store\n  fix: use one of: {known}")]
    NoSuchRun { run: String, known: String },
    #[error(
        "{path}: another run is writing to this store ({holder})\n  fix: let it finish and start again, or write into another store with --db (a scheduled collection that overlaps the previous one is skipped, not queued)",
        path = .path.display()
    )]
    Busy { path: PathBuf, holder: String },
    #[error("{path}: cannot take the store's run lock: {error}", path = .path.display())]
    Lock { path: PathBuf, error: String },
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sql(e)
    }
}

/// Opens (creating if needed) and upgrades a store, filling once what a migration left to
/// Rust (`store_backfills`: visible tokens of answers imported before migration 007).
pub fn open(path: &Path) -> Result<Connection, StoreError> {
    let mut conn = Connection::open(path).map_err(|error| StoreError::Open {
        path: path.to_path_buf(),
        error,
    })?;
    configure(&conn).map_err(|error| StoreError::NotAStore {
        path: path.to_path_buf(),
        error,
    })?;
    migrate::apply(&mut conn, path)?;
    backfill::run_pending(&mut conn)?;
    Ok(conn)
}

/// Opens an existing store to read only, for a reader thread beside a connection that
/// [`open`] already brought up to date.
pub fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|error| StoreError::Open {
        path: path.to_path_buf(),
        error,
    })?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    stable_plans(&conn)?;
    Ok(conn)
}

/// Plans made once per statement, whatever is bound to it (SQLite's query planner
/// stability guarantee). Without it SQLite marks a parameter that the planner compared
/// with a literal as "re-prepare on every new value": a cached statement over the read
/// model's views was compiled again for each conversation a drill-down view reads (most of
/// a 300-view HTML report's time in those views). turnbench keeps no STAT4 samples and
/// binds no LIKE patterns, the two cases where a bound value could pick a better plan.
fn stable_plans(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(())
}

/// Opens an existing store to read it as it is: never creates the file, never upgrades or
/// writes it (`query_only`). A store made by an older turnbench is upgraded in a copy in
/// memory, for this reading only. For `judge --dry-run` and `--audit`, which promise to
/// leave the store alone.
pub fn open_unchanged(path: &Path) -> Result<Connection, StoreError> {
    use rusqlite::OpenFlags;
    if !path.exists() {
        return Err(StoreError::Missing {
            path: path.to_path_buf(),
        });
    }
    let open_err = |error| StoreError::Open {
        path: path.to_path_buf(),
        error,
    };
    // Read-write without CREATE: SQLite may need to create the WAL's index file to read,
    // which a read-only open cannot; `query_only` then refuses every write.
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(open_err)?;
    let not_a_store = |error| StoreError::NotAStore {
        path: path.to_path_buf(),
        error,
    };
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(not_a_store)?;
    conn.pragma_update(None, "query_only", "ON")
        .map_err(not_a_store)?;
    stable_plans(&conn).map_err(not_a_store)?;
    let found: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(not_a_store)?;
    if found == migrate::MIGRATIONS.len() as i64 {
        return Ok(conn);
    }
    let mut copy = Connection::open_in_memory().map_err(open_err)?;
    {
        let backup = rusqlite::backup::Backup::new(&conn, &mut copy)?;
        backup.run_to_completion(256, std::time::Duration::ZERO, None)?;
    }
    copy.pragma_update(None, "foreign_keys", "ON")?;
    stable_plans(&copy)?;
    migrate::apply(&mut copy, path)?;
    Ok(copy)
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    // WAL: readers never block the writer; NORMAL is durable at each checkpoint and
    // cannot corrupt the file on a crash, which is what a benchmark store needs.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    stable_plans(conn)?;
    // A cap on the store's size, to simulate a full disk in tests (docs/reliability.md):
    // every write that needs a page past it fails as a full disk would.
    if let Some(pages) = std::env::var(MAX_PAGES_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
    {
        conn.pragma_update(None, "max_page_count", pages)?;
    }
    Ok(())
}

/// The environment variable that caps a store's pages (`PRAGMA max_page_count`) for
/// every connection turnbench opens: a full disk, simulated, for the reliability tests.
pub const MAX_PAGES_ENV: &str = "TURNBENCH_MAX_PAGE_COUNT";

/// A row's identity from its parts: blake3 over each part's length and bytes (so no two
/// lists of parts collide by concatenation), 24 hex digits.
fn content_key(parts: &[&str]) -> String {
    let mut h = blake3::Hasher::new();
    for part in parts {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().to_hex()[..24].to_string()
}

/// The id of the row `select` finds with `params`, else of the row `insert` adds: the one
/// shape of every upsert of a row that is never changed, only found again.
fn id_or_insert<P: rusqlite::Params>(
    conn: &Connection,
    select: &str,
    params: P,
    insert: impl FnOnce() -> rusqlite::Result<usize>,
) -> Result<i64, StoreError> {
    use rusqlite::OptionalExtension;
    if let Some(id) = conn.query_row(select, params, |r| r.get(0)).optional()? {
        return Ok(id);
    }
    insert()?;
    Ok(conn.last_insert_rowid())
}

/// Every row `sql` finds with `params`, each read by `read`, collected (a `Vec`, a map, a
/// set): the one shape of a read that returns many rows.
fn all<T, C: FromIterator<T>, P: rusqlite::Params>(
    conn: &Connection,
    sql: &str,
    params: P,
    read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<C, StoreError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params, read)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Current UTC time as RFC 3339 with milliseconds.
pub fn now_rfc3339() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, day) = crate::timestamp::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        d.subsec_millis()
    )
}
