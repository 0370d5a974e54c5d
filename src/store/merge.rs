//! `turnbench merge`: the rows of other stores copied into one, each found again by its
//! content identity (a conversation's uid, a definition's hash, a judgment's key and
//! invocation), so that a row both stores hold is kept once and nothing is lost.
//!
//! One transaction per source store: a conflict (the same identity with other content), a
//! refused row or a failed check after copying rolls the whole source back. After each
//! source, before its commit, `PRAGMA integrity_check` and every table's row count (before
//! plus added = after) are verified. A source of an older schema is read from an upgraded
//! copy in memory ([`super::open_unchanged`]); a source is never written.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use super::StoreError;

/// One table as merge copies it.
struct Spec {
    name: &'static str,
    /// The columns that identify a row across stores (references already mapped).
    identity: &'static [&'static str],
    /// Columns holding another table's `id`: (column, table).
    refs: &'static [(&'static str, &'static str)],
    /// Columns not compared: provenance a store gave the row, kept as the target has it.
    ignored: &'static [&'static str],
    /// The table has an `id INTEGER PRIMARY KEY` that other tables refer to.
    keyed: bool,
}

const fn spec(
    name: &'static str,
    identity: &'static [&'static str],
    refs: &'static [(&'static str, &'static str)],
    ignored: &'static [&'static str],
    keyed: bool,
) -> Spec {
    Spec {
        name,
        identity,
        refs,
        ignored,
        keyed,
    }
}

const CONV: (&str, &str) = ("conversation_id", "conversations");

/// Every table of the store but `schema_migrations`, in an order where each row's
/// references are copied before it (a test checks that none is missing).
const TABLES: &[Spec] = &[
    spec(
        "runs",
        &["name", "source", "started_at", "settings_hash"],
        &[],
        &[],
        true,
    ),
    spec("targets", &["key"], &[], &[], true),
    spec("scenarios", &["scenario_id", "hash"], &[], &[], true),
    spec(
        "conversations",
        &["uid"],
        &[
            ("run_id", "runs"),
            ("target_id", "targets"),
            ("scenario_ref", "scenarios"),
            ("superseded_by", "conversations"),
        ],
        &[],
        true,
    ),
    spec("turns", &["conversation_id", "idx"], &[CONV], &[], false),
    spec(
        "attempts",
        &["conversation_id", "turn_idx", "attempt"],
        &[CONV],
        &[],
        false,
    ),
    spec(
        "replay_runs",
        &["run_id"],
        &[("run_id", "runs")],
        &[],
        false,
    ),
    spec("replay_passes", &["conversation_id"], &[CONV], &[], false),
    spec(
        "replay_turns",
        &["conversation_id", "idx"],
        &[CONV],
        &[],
        false,
    ),
    spec(
        "replay_tool_calls",
        &["conversation_id", "turn_idx", "call_idx"],
        &[CONV],
        &[],
        false,
    ),
    spec("rubrics", &["rubric_id", "version"], &[], &[], true),
    spec("judges", &["hash"], &[], &[], true),
    spec(
        "judgments",
        &["conversation_id", "key", "invocation", "seq"],
        &[CONV, ("rubric_ref", "rubrics"), ("judge_ref", "judges")],
        &[],
        true,
    ),
    spec(
        "pairwise_judgments",
        &["baseline_id", "candidate_id", "key", "invocation", "seq"],
        &[
            ("baseline_id", "conversations"),
            ("candidate_id", "conversations"),
            ("rubric_ref", "rubrics"),
            ("judge_ref", "judges"),
        ],
        &[],
        true,
    ),
    spec(
        "anchor_judgments",
        &["key", "invocation", "seq"],
        &[("rubric_ref", "rubrics"), ("judge_ref", "judges")],
        &[],
        true,
    ),
    spec(
        "check_definitions",
        &["scenario", "check_id", "hash"],
        &[],
        &["first_seen"],
        true,
    ),
    spec(
        "check_runs",
        &["started_at", "checks_dir", "tool_version"],
        &[],
        &[],
        true,
    ),
    spec(
        "check_run_definitions",
        &["check_run_id", "definition_id"],
        &[
            ("check_run_id", "check_runs"),
            ("definition_id", "check_definitions"),
        ],
        &[],
        false,
    ),
    spec(
        "check_results",
        &["conversation_id", "definition_id"],
        &[
            CONV,
            ("definition_id", "check_definitions"),
            ("check_run_id", "check_runs"),
        ],
        &["check_run_id"],
        false,
    ),
    spec(
        "check_turn_results",
        &["conversation_id", "definition_id", "turn"],
        &[CONV, ("definition_id", "check_definitions")],
        &[],
        false,
    ),
    spec("store_backfills", &["name"], &[], &["since"], false),
];

/// What a merge did to one table for one source: every source row is one or the other.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TableTally {
    pub table: &'static str,
    /// Rows the source holds (n).
    pub rows: u64,
    pub added: u64,
    pub present: u64,
}

/// One source merged.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SourceTally {
    pub source: PathBuf,
    /// The source's schema version, when it was older than this build's (read upgraded).
    pub upgraded_from: Option<i64>,
    pub tables: Vec<TableTally>,
}

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("{path}: is the store merged into (--into)\n  fix: name each store once, and the target only after --into", path = .path.display())]
    SameFile { path: PathBuf },
    #[error("{0}")]
    Refused(Box<Refusal>),
    #[error(
        "{src}: {table}.{column} refers to {to} {id}, which the store does not hold; the store is damaged\n  fix: merge the other stores without it",
        src = .src.display()
    )]
    Dangling {
        src: PathBuf,
        table: &'static str,
        column: &'static str,
        to: &'static str,
        id: i64,
    },
    #[error("merge of {src} not committed: {problem}", src = .src.display())]
    Verify { src: PathBuf, problem: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A row of a source the target cannot take, nothing of that source written: both stores,
/// the table, the row's identity and why.
#[derive(Debug)]
pub struct Refusal {
    pub src: PathBuf,
    pub dst: PathBuf,
    pub table: &'static str,
    pub identity: String,
    pub why: Why,
}

#[derive(Debug)]
pub enum Why {
    /// The same identity in both stores with another value of `column`.
    Conflict {
        column: String,
        src_value: String,
        dst_value: String,
    },
    /// The target's constraints refused the row.
    Constraint(rusqlite::Error),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (src, dst) = (self.src.display(), self.dst.display());
        let (table, identity) = (self.table, &self.identity);
        write!(f, "merge refused, nothing of {src} written: ")?;
        match &self.why {
            Why::Conflict {
                column,
                src_value,
                dst_value,
            } => write!(
                f,
                "{table} {identity} is in both stores with another {column}\n  {src}: {src_value}\n  {dst}: {dst_value}\n  fix: the same identity must hold the same content; find which store was edited (`sqlite3`), or merge the other stores without {src}"
            ),
            Why::Constraint(error) => write!(
                f,
                "{dst} refused {table} {identity}: {error}\n  fix: the two stores hold different rows in one place (e.g. two conversations for one run's slot); merge the other stores without {src}"
            ),
        }
    }
}

impl std::error::Error for Refusal {}

impl From<rusqlite::Error> for MergeError {
    fn from(e: rusqlite::Error) -> Self {
        MergeError::Store(StoreError::Sql(e))
    }
}

/// Merges each source into `dst` (created when missing), one transaction per source, in
/// the order given; `before` is called with each source's path once its transaction has
/// begun (the command says so). Stops at the first source refused: the sources before it
/// stay merged, it and those after it are not.
pub fn merge(
    sources: &[PathBuf],
    dst: &Path,
    mut before: impl FnMut(&Path),
) -> Result<Vec<SourceTally>, MergeError> {
    let mut conn = super::open(dst)?;
    let _lock = super::lock::RunLock::acquire(dst, "merge")?;
    let dst_real = std::fs::canonicalize(dst).ok();
    let mut tallies = Vec::new();
    for src in sources {
        if std::fs::canonicalize(src).ok() == dst_real {
            return Err(MergeError::SameFile { path: src.clone() });
        }
        let found: Option<i64> =
            Connection::open_with_flags(src, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .ok()
                .and_then(|c| {
                    c.pragma_query_value(None, "user_version", |r| r.get(0))
                        .ok()
                });
        let from = super::open_unchanged(src)?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        before(src);
        let mut job = Job {
            src,
            dst,
            from: &from,
            to: &tx,
            ids: HashMap::new(),
        };
        let tables = job.run()?;
        tx.commit()?;
        let current = super::migrate::MIGRATIONS.len() as i64;
        tallies.push(SourceTally {
            source: src.clone(),
            upgraded_from: found.filter(|&v| v < current),
            tables,
        });
    }
    Ok(tallies)
}

/// One source being copied into the target's open transaction.
struct Job<'a> {
    src: &'a Path,
    dst: &'a Path,
    from: &'a Connection,
    to: &'a Connection,
    /// Per keyed table: source id → target id.
    ids: HashMap<&'static str, HashMap<i64, i64>>,
}

impl Job<'_> {
    /// Every table, then the conversations' `superseded_by`, then the checks.
    fn run(&mut self) -> Result<Vec<TableTally>, MergeError> {
        let before = counts(self.to)?;
        let mut tallies = Vec::new();
        for spec in TABLES {
            let (tally, inserted) = self.table(spec)?;
            if spec.name == "conversations" {
                self.superseded(&inserted)?;
            }
            tallies.push(tally);
        }
        self.verify(&before, &tallies)?;
        Ok(tallies)
    }

    /// Copies one table's missing rows; returns its tally and the target ids it added.
    fn table(&mut self, spec: &Spec) -> Result<(TableTally, HashSet<i64>), MergeError> {
        let cols = columns(self.to, spec)?;
        let select = format!(
            "SELECT {}{} FROM {}",
            if spec.keyed { "id, " } else { "" },
            cols.join(", "),
            spec.name
        );
        let mut stmt = self.from.prepare(&select)?;
        let mut rows = stmt.query([])?;
        let mut tally = TableTally {
            table: spec.name,
            rows: 0,
            added: 0,
            present: 0,
        };
        let mut inserted = HashSet::new();
        let offset = usize::from(spec.keyed);
        let sql = RowSql::new(spec, &cols);
        while let Some(row) = rows.next()? {
            let src_id: Option<i64> = if spec.keyed { Some(row.get(0)?) } else { None };
            let mut values = Vec::with_capacity(cols.len());
            for i in 0..cols.len() {
                values.push(row.get::<_, Value>(i + offset)?);
            }
            self.map_refs(spec, &cols, &mut values)?;
            tally.rows += 1;
            let (dst_id, added) = self.find_or_insert(spec, &cols, &sql, &values)?;
            if added {
                tally.added += 1;
                inserted.insert(dst_id);
            } else {
                tally.present += 1;
            }
            if let Some(id) = src_id {
                self.ids.entry(spec.name).or_default().insert(id, dst_id);
            }
        }
        Ok((tally, inserted))
    }

    /// Source ids in reference columns become target ids. A conversation's
    /// `superseded_by` may point at one not copied yet: it is set afterwards.
    fn map_refs(
        &self,
        spec: &Spec,
        cols: &[String],
        values: &mut [Value],
    ) -> Result<(), MergeError> {
        for (col, to) in spec.refs {
            let Some(i) = cols.iter().position(|c| c == col) else {
                continue;
            };
            let Value::Integer(id) = values[i] else {
                continue;
            };
            if *col == "superseded_by" {
                values[i] = Value::Null;
                continue;
            }
            match self.ids.get(to).and_then(|m| m.get(&id)) {
                Some(&mapped) => values[i] = Value::Integer(mapped),
                None => {
                    return Err(MergeError::Dangling {
                        src: self.src.to_path_buf(),
                        table: spec.name,
                        column: col,
                        to,
                        id,
                    });
                }
            }
        }
        Ok(())
    }

    /// The target's row of this identity, compared column by column; else the row added.
    /// Returns the target id (the rowid for tables without `id`) and whether it was added.
    fn find_or_insert(
        &self,
        spec: &Spec,
        cols: &[String],
        sql: &RowSql,
        values: &[Value],
    ) -> Result<(i64, bool), MergeError> {
        let key = sql.identity.iter().map(|&i| &values[i]);
        let mut stmt = self.to.prepare_cached(&sql.find)?;
        let found = stmt
            .query_row(rusqlite::params_from_iter(key), |r| {
                let id: i64 = r.get(0)?;
                let row: Vec<Value> = (0..cols.len())
                    .map(|i| r.get::<_, Value>(i + 1))
                    .collect::<Result<_, _>>()?;
                Ok((id, row))
            })
            .optional()?;
        if let Some((id, there)) = found {
            for (i, col) in cols.iter().enumerate() {
                if spec.ignored.contains(&col.as_str()) || col == "superseded_by" {
                    continue;
                }
                if there[i] != values[i] {
                    return Err(self.conflict(spec, cols, values, col, &there[i]));
                }
            }
            return Ok((id, false));
        }
        let mut stmt = self.to.prepare_cached(&sql.insert)?;
        stmt.execute(rusqlite::params_from_iter(values.iter()))
            .map_err(|error| {
                self.refusal(
                    spec.name,
                    identity(spec, cols, values),
                    Why::Constraint(error),
                )
            })?;
        Ok((self.to.last_insert_rowid(), true))
    }

    /// The same identity, another `column`: both sides named.
    fn conflict(
        &self,
        spec: &Spec,
        cols: &[String],
        values: &[Value],
        column: &str,
        dst_value: &Value,
    ) -> MergeError {
        let src_value = cols
            .iter()
            .position(|c| c == column)
            .map_or(Value::Null, |i| values[i].clone());
        // A reference is shown as the row it names (both are target ids by now).
        let show = |v: &Value| match (spec.refs.iter().find(|(c, _)| *c == column), v) {
            (Some((_, table)), Value::Integer(id)) => self.referred(table, *id),
            _ => shown(v),
        };
        let why = Why::Conflict {
            column: column.to_string(),
            src_value: show(&src_value),
            dst_value: show(dst_value),
        };
        self.refusal(spec.name, self.described(spec, cols, values), why)
    }

    fn refusal(&self, table: &'static str, identity: String, why: Why) -> MergeError {
        MergeError::Refused(Box::new(Refusal {
            src: self.src.to_path_buf(),
            dst: self.dst.to_path_buf(),
            table,
            identity,
            why,
        }))
    }

    /// A row's identity for a message: references as the referred row's own identity
    /// (a conversation by its uid), read from the target, where the mapped row is.
    fn described(&self, spec: &Spec, cols: &[String], values: &[Value]) -> String {
        let mut parts = Vec::new();
        for name in spec.identity {
            let Some(i) = cols.iter().position(|c| c == name) else {
                continue;
            };
            let referred = spec.refs.iter().find(|(c, _)| c == name).map(|(_, t)| *t);
            let text = match (referred, &values[i]) {
                (Some(table), Value::Integer(id)) => self.referred(table, *id),
                (_, v) => shown(v),
            };
            parts.push(format!("{name} {text}"));
        }
        parts.join(", ")
    }

    /// A target row of a keyed table named by its identity columns.
    fn referred(&self, table: &str, id: i64) -> String {
        let Some(spec) = TABLES.iter().find(|s| s.name == table) else {
            return id.to_string();
        };
        let sql = format!(
            "SELECT {} FROM {table} WHERE id = ?1",
            spec.identity.join(", ")
        );
        self.to
            .query_row(&sql, [id], |r| {
                (0..spec.identity.len())
                    .map(|i| r.get::<_, Value>(i).map(|v| shown(&v)))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map(|v| format!("({})", v.join(" · ")))
            .unwrap_or_else(|_| id.to_string())
    }

    /// Each copied conversation's `superseded_by`, mapped: set on the rows this merge
    /// added; on rows the target held, it must already be the same.
    fn superseded(&self, inserted: &HashSet<i64>) -> Result<(), MergeError> {
        let empty = HashMap::new();
        let map = self.ids.get("conversations").unwrap_or(&empty);
        let mut stmt = self
            .from
            .prepare("SELECT id, superseded_by, uid FROM conversations")?;
        let mut rows = stmt.query([])?;
        let mut read = self
            .to
            .prepare_cached("SELECT superseded_by FROM conversations WHERE id = ?1")?;
        let mut write = self
            .to
            .prepare_cached("UPDATE conversations SET superseded_by = ?1 WHERE id = ?2")?;
        while let Some(row) = rows.next()? {
            let (src_id, by, uid): (i64, Option<i64>, String) =
                (row.get(0)?, row.get(1)?, row.get(2)?);
            let Some(&dst_id) = map.get(&src_id) else {
                continue;
            };
            let wanted = by.and_then(|b| map.get(&b).copied());
            let there: Option<i64> = read.query_row([dst_id], |r| r.get(0))?;
            if there == wanted {
                continue;
            }
            if inserted.contains(&dst_id) && there.is_none() {
                write.execute(rusqlite::params![wanted, dst_id])?;
                continue;
            }
            let uid_of = |id: Option<i64>| {
                id.map_or("NULL".to_string(), |id| self.referred("conversations", id))
            };
            let why = Why::Conflict {
                column: "superseded_by".into(),
                src_value: uid_of(wanted),
                dst_value: uid_of(there),
            };
            return Err(self.refusal("conversations", format!("uid {uid}"), why));
        }
        Ok(())
    }

    /// Before commit: the file is sound and each table grew by exactly what was added.
    fn verify(&self, before: &[(String, u64)], tallies: &[TableTally]) -> Result<(), MergeError> {
        let problem = |problem: String| MergeError::Verify {
            src: self.src.to_path_buf(),
            problem,
        };
        let after = counts(self.to)?;
        for ((table, was), (_, now)) in before.iter().zip(&after) {
            let added = tallies
                .iter()
                .find(|t| t.table == table)
                .map_or(0, |t| t.added);
            if was + added != *now {
                return Err(problem(format!(
                    "{table}: {was} rows before + {added} added ≠ {now} after"
                )));
            }
        }
        let check: String = self
            .to
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        if check != "ok" {
            return Err(problem(format!("integrity_check: {check}")));
        }
        let dangling: i64 =
            self.to
                .query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| {
                    r.get(0)
                })?;
        if dangling > 0 {
            return Err(problem(format!("{dangling} rows refer to rows not there")));
        }
        Ok(())
    }
}

/// One table's statements and where its identity stands among its columns: made once a
/// table, not once a row.
struct RowSql {
    /// The target's row of an identity: its id (0 for tables without one), then `cols`.
    find: String,
    insert: String,
    /// The positions in `cols` of the identity's columns, in [`Spec::identity`] order.
    identity: Vec<usize>,
}

impl RowSql {
    fn new(spec: &Spec, cols: &[String]) -> RowSql {
        let identity: Vec<usize> = spec
            .identity
            .iter()
            .filter_map(|c| cols.iter().position(|x| x == c))
            .collect();
        let find = format!(
            "SELECT {}, {} FROM {} WHERE {}",
            if spec.keyed { "id" } else { "0" },
            cols.join(", "),
            spec.name,
            identity
                .iter()
                .enumerate()
                .map(|(n, &i)| format!("{} IS ?{}", cols[i], n + 1))
                .collect::<Vec<_>>()
                .join(" AND ")
        );
        let insert = format!(
            "INSERT INTO {} ({}) VALUES ({})",
            spec.name,
            cols.join(", "),
            (1..=cols.len())
                .map(|i| format!("?{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        RowSql {
            find,
            insert,
            identity,
        }
    }
}

/// The columns a table's rows are copied with: all but `id`, in the target's order.
fn columns(conn: &Connection, spec: &Spec) -> Result<Vec<String>, MergeError> {
    let mut stmt = conn.prepare_cached("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?;
    let cols = stmt
        .query_map([spec.name], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(cols
        .into_iter()
        .filter(|c| !(spec.keyed && c == "id"))
        .collect())
}

/// Every merged table's row count, in [`TABLES`] order.
fn counts(conn: &Connection) -> Result<Vec<(String, u64)>, MergeError> {
    TABLES
        .iter()
        .map(|s| {
            let n: i64 = conn.query_row(&format!("SELECT COUNT(*) FROM {}", s.name), [], |r| {
                r.get(0)
            })?;
            Ok((s.name.to_string(), n.max(0) as u64))
        })
        .collect()
}

/// A row's identity as stored (references as target ids), for a refused insert.
fn identity(spec: &Spec, cols: &[String], values: &[Value]) -> String {
    spec.identity
        .iter()
        .filter_map(|name| {
            let i = cols.iter().position(|c| c == name)?;
            Some(format!("{name} {}", shown(&values[i])))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A value for a message: text quoted and cut at 120 characters, blobs by their size.
fn shown(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Integer(i) => i.to_string(),
        Value::Real(f) => f.to_string(),
        Value::Text(t) => {
            let cut: String = t.chars().take(120).collect();
            let more = if cut.len() < t.len() { "…" } else { "" };
            format!("{:?}", format!("{cut}{more}"))
        }
        Value::Blob(b) => format!("<{} bytes>", b.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A migration that adds a table must say how merge finds its rows again.
    #[test]
    fn every_table_of_the_store_is_merged_after_what_it_refers_to() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open(&dir.path().join("t.db")).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT name FROM sqlite_master WHERE type = 'table'
                 AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name",
            )
            .unwrap();
        let tables: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut merged: Vec<&str> = TABLES.iter().map(|s| s.name).collect();
        merged.sort_unstable();
        assert_eq!(tables, merged);
        for (at, spec) in TABLES.iter().enumerate() {
            let cols = columns(&conn, spec).unwrap();
            for c in spec.identity.iter().chain(spec.ignored) {
                assert!(cols.iter().any(|x| x == c), "{}.{c}", spec.name);
            }
            for (c, to) in spec.refs {
                assert!(cols.iter().any(|x| x == c), "{}.{c}", spec.name);
                let target = TABLES.iter().position(|s| s.name == *to).unwrap();
                assert!(target <= at && TABLES[target].keyed, "{}.{c}", spec.name);
            }
        }
    }

    /// A store holding one conversation `uid` in a run named `run`.
    fn store(dir: &Path, file: &str, run: &str, uid: &str) -> PathBuf {
        let path = dir.join(file);
        let conn = crate::store::open(&path).unwrap();
        conn.execute_batch(&format!(
            "INSERT INTO runs (name, source, settings, settings_hash, tool_version, started_at)
               VALUES ('{run}', 'import', '{{}}', 'h', '0', '2026-01-01T00:00:00.000Z');
             INSERT INTO targets (provider, model, label, key) VALUES ('p', 'm', 'm', 'k');
             INSERT INTO conversations (uid, run_id, target_id, scenario, repeat, outcome, turn_count)
               VALUES ('{uid}', 1, 1, 's', 1, 'completed', 1);
             INSERT INTO turns (conversation_id, idx, prompt, answer, outcome)
               VALUES (1, 0, '[]', 'hello', 'ok');"
        ))
        .unwrap();
        path
    }

    #[test]
    fn a_conversation_in_another_run_is_a_conflict_naming_both_runs() {
        let dir = tempfile::tempdir().unwrap();
        let a = store(dir.path(), "a.db", "first", "u1");
        let b = store(dir.path(), "b.db", "second", "u1");
        let into = dir.path().join("into.db");
        let tallies = merge(std::slice::from_ref(&a), &into, |_| {}).unwrap();
        assert!(tallies[0].tables.iter().all(|t| t.present == 0));
        let err = merge(&[a.clone(), b.clone()], &into, |_| {}).unwrap_err();
        let text = err.to_string();
        for part in [
            "b.db",
            "into.db",
            "conversations uid \"u1\"",
            "run_id",
            "\"first\"",
            "\"second\"",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
        // a.db again added nothing; b.db wrote nothing.
        let conn = Connection::open(&into).unwrap();
        let runs: i64 = conn
            .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(runs, 1);
    }
}
