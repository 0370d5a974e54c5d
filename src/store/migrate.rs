//! Schema migrations from `db/*.sql`, applied in order inside one transaction each.

use std::path::Path;

use rusqlite::Connection;

use super::StoreError;

/// Every migration, in order; the store's version is how many have been applied.
pub(crate) const MIGRATIONS: &[(&str, &str)] = &[
    ("001_init", include_str!("../../db/001_init.sql")),
    ("002_judgments", include_str!("../../db/002_judgments.sql")),
    ("003_checks", include_str!("../../db/003_checks.sql")),
    (
        "004_read_model",
        include_str!("../../db/004_read_model.sql"),
    ),
    (
        "005_judge_trust",
        include_str!("../../db/005_judge_trust.sql"),
    ),
    ("006_replay", include_str!("../../db/006_replay.sql")),
    (
        "007_visible_tokens",
        include_str!("../../db/007_visible_tokens.sql"),
    ),
    (
        "008_runs_over_time",
        include_str!("../../db/008_runs_over_time.sql"),
    ),
    (
        "009_check_turns",
        include_str!("../../db/009_check_turns.sql"),
    ),
    (
        "010_rubric_scales",
        include_str!("../../db/010_rubric_scales.sql"),
    ),
    (
        "011_context_overflow",
        include_str!("../../db/011_context_overflow.sql"),
    ),
    (
        "012_chunk_kinds",
        include_str!("../../db/012_chunk_kinds.sql"),
    ),
    (
        "013_tool_calls",
        include_str!("../../db/013_tool_calls.sql"),
    ),
    (
        "014_collectors",
        include_str!("../../db/014_collectors.sql"),
    ),
    (
        "015_check_result_order",
        include_str!("../../db/015_check_result_order.sql"),
    ),
    ("016_turn_rows", include_str!("../../db/016_turn_rows.sql")),
    (
        "017_scenario_ref",
        include_str!("../../db/017_scenario_ref.sql"),
    ),
];

pub(crate) fn apply(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let found: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|error| StoreError::NotAStore {
            path: path.to_path_buf(),
            error,
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
    let had_names = table_exists(conn, "schema_migrations")?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)",
    )?;
    if !had_names && found > 0 {
        backfill_names(conn, found as usize)?;
    }
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
            .map_err(|error| StoreError::Migration { name, error })?;
        tx.commit()?;
    }
    Ok(())
}

/// A table each migration creates, by which a store that predates recorded migration
/// names shows which ones it has.
const CREATES: [&str; 7] = [
    "turns",
    "judgments",
    "check_results",
    "check_run_definitions",
    "pairwise_judgments",
    "replay_turns",
    "store_backfills",
];

fn table_exists(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
        [name],
        |r| r.get(0),
    )
}

/// Stores made before the names table existed (version 1 or 2) record only a version:
/// their first `found` migrations are named after this build's, when the tables those
/// create are there. Otherwise nothing is written and the names check refuses the store.
fn backfill_names(conn: &mut Connection, found: usize) -> Result<(), StoreError> {
    let Some(expected) = CREATES.get(..found) else {
        return Ok(());
    };
    for table in expected {
        if !table_exists(conn, table)? {
            return Ok(());
        }
    }
    let tx = conn.transaction()?;
    for (name, _) in &MIGRATIONS[..found] {
        tx.execute(
            "INSERT INTO schema_migrations (name, applied_at) VALUES (?1, ?2)",
            rusqlite::params![name, "before names were recorded"],
        )?;
    }
    tx.commit()?;
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
    fn version_1_store_is_upgraded_and_keeps_its_conversations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(MIGRATIONS[0].1).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        // Later builds also record applied migration names; this table is harmless here.
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL);
             INSERT INTO schema_migrations VALUES ('001_init', '2025-01-01T00:00:00.000Z');
             INSERT INTO runs (name, source, settings, settings_hash, tool_version, started_at)
               VALUES ('old', 'import', '{}', 'h', '0.0.1', '2025-01-01T00:00:00.000Z');
             INSERT INTO targets (provider, model, label, key) VALUES ('p', 'm', 'm', 'k');
             INSERT INTO conversations (uid, run_id, target_id, scenario, repeat, outcome, turn_count)
               VALUES ('c1', 1, 1, 'demo', 1, 'completed', 1);
             INSERT INTO turns (conversation_id, idx, prompt, answer, outcome)
               VALUES (1, 0, '[]', 'hello', 'ok');",
        )
        .unwrap();
        drop(conn);
        let conn = crate::store::open(&path).unwrap();
        let v: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, MIGRATIONS.len() as i64);
        let answer: String = conn
            .query_row(
                "SELECT answer FROM turns WHERE conversation_id = 1",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(answer, "hello");
        let results: i64 = conn
            .query_row("SELECT COUNT(*) FROM check_results", [], |r| r.get(0))
            .unwrap();
        assert_eq!(results, 0);
    }

    /// A store made by a build from before migration names were recorded: schema version
    /// 2 (001_init, 002_judgments as that build had them), no `schema_migrations`, a
    /// completed and an interrupted conversation (tests/fixtures).
    #[test]
    fn a_store_from_before_migration_names_is_upgraded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        std::fs::copy(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/store-v2-before-migration-names.db"
            ),
            &path,
        )
        .unwrap();
        let conn = crate::store::open(&path).unwrap();
        let v: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, MIGRATIONS.len() as i64);
        let names: Vec<String> = conn
            .prepare("SELECT name FROM schema_migrations ORDER BY rowid")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let expected: Vec<&str> = MIGRATIONS.iter().map(|m| m.0).collect();
        assert_eq!(names, expected);
        let counted: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM conversation_facts WHERE counts",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(counted, 2);
        let answer: String = conn
            .query_row(
                "SELECT answer FROM turns WHERE conversation_id = 1 AND idx = 1",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(answer, "A2");
        drop(conn);
        crate::store::open(&path).unwrap();
    }

    #[test]
    fn an_unnamed_store_whose_tables_differ_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("odd.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(MIGRATIONS[0].1).unwrap();
        conn.execute_batch("CREATE TABLE check_results (x)")
            .unwrap();
        conn.pragma_update(None, "user_version", 2).unwrap();
        drop(conn);
        let err = crate::store::open(&path).unwrap_err().to_string();
        assert!(err.contains("fix:"), "{err}");
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
