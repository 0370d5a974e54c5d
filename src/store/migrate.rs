//! Schema migrations from `db/*.sql`, applied in order inside one transaction each.

use std::path::Path;

use rusqlite::Connection;

use super::StoreError;

/// Every migration, in order; the store's version is how many have been applied.
pub(crate) const MIGRATIONS: &[(&str, &str)] = &[
    ("001_init", include_str!("../../db/001_init.sql")),
    ("002_judgments", include_str!("../../db/002_judgments.sql")),
];

pub(crate) fn apply(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let found: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|source| StoreError::NotAStore {
            path: path.to_path_buf(),
            source,
        })?;
    let supported = MIGRATIONS.len() as i64;
    if found > supported {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            supported,
        });
    }
    // The names applied so far must be this build's first migrations, in order: a store
    // made by a build whose migrations were numbered otherwise is refused, not corrupted.
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)",
    )?;
    let applied: Vec<String> = {
        let mut stmt = conn.prepare("SELECT name FROM schema_migrations ORDER BY rowid")?;
        stmt.query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?
    };
    let expected: Vec<&str> = MIGRATIONS[..found as usize].iter().map(|m| m.0).collect();
    if applied != expected {
        return Err(StoreError::MigrationMismatch {
            path: path.to_path_buf(),
            applied: applied.join(", "),
            expected: expected.join(", "),
        });
    }
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)
            .and_then(|()| {
                tx.execute(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?1, ?2)",
                    rusqlite::params![name, super::now_rfc3339()],
                )
            })
            .and_then(|_| tx.pragma_update(None, "user_version", i as i64 + 1))
            .map_err(|source| StoreError::Migration { name, source })?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_store_reaches_latest_version_and_reopens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = crate::store::open(&path).unwrap();
        let v: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, MIGRATIONS.len() as i64);
        drop(conn);
        crate::store::open(&path).unwrap();
    }

    #[test]
    fn an_older_store_is_upgraded_and_keeps_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        // A store as the first release left it: only the first migration applied.
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(MIGRATIONS[0].1).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL);
             INSERT INTO schema_migrations VALUES ('001_init', '2026-01-01T00:00:00Z');",
        )
        .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO runs (name, source, settings, settings_hash, tool_version, started_at)
             VALUES ('old', 'collect', '{}', 'h', '0.0.1', '2026-01-01T00:00:00Z')",
            [],
        )
        .unwrap();
        drop(conn);
        let conn = crate::store::open(&path).unwrap();
        let v: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, MIGRATIONS.len() as i64);
        let name: String = conn
            .query_row("SELECT name FROM runs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(name, "old");
    }

    #[test]
    fn a_store_with_other_migrations_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.db");
        drop(crate::store::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        conn.execute(
            "UPDATE schema_migrations SET name = '001_other' WHERE name = '001_init'",
            [],
        )
        .unwrap();
        drop(conn);
        let err = crate::store::open(&path).unwrap_err().to_string();
        assert!(err.contains("001_other"), "{err}");
        assert!(err.contains("fix:"), "{err}");
    }

    #[test]
    fn newer_store_is_refused_with_a_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", 999).unwrap();
        drop(conn);
        let err = crate::store::open(&path).unwrap_err().to_string();
        assert!(err.contains("schema version 999"), "{err}");
        assert!(err.contains("fix:"), "{err}");
    }

    #[test]
    fn non_database_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(
            &path,
            "this is not sqlite, just a long enough text file .....",
        )
        .unwrap();
        let err = crate::store::open(&path).unwrap_err().to_string();
        assert!(err.contains("not a turnbench store"), "{err}");
    }
}
