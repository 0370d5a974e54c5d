//! Check and judge results for `export --with-scores`, one small reader each.
//!
//! Their tables arrive with later migrations (`db/002_checks.sql`, `db/003_judgments.sql`).
//! Until a table exists the array is empty. The queries assume the columns named below;
//! when the real schema lands, adapting is one query (and one row mapping) per function.

use rusqlite::{Connection, OptionalExtension};

use crate::exchange::{CheckLine, JudgmentLine};

/// Assumed: `check_results(conversation_id, check_id, tag, passed NULL|0|1, detail)`.
pub(super) fn checks_for(
    conn: &Connection,
    conversation_id: i64,
) -> rusqlite::Result<Vec<CheckLine>> {
    if !table_exists(conn, "check_results")? {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached(
        "SELECT check_id, tag, passed, detail FROM check_results
         WHERE conversation_id = ?1 ORDER BY check_id",
    )?;
    stmt.query_map([conversation_id], |r| {
        Ok(CheckLine {
            id: r.get(0)?,
            tag: r.get(1)?,
            passed: r.get(2)?,
            detail: r.get(3)?,
        })
    })?
    .collect()
}

/// Assumed: `judgments(conversation_id, rubric, judge, replicate, status, scores JSON
/// {criterion: integer}, completed NULL|0|1, rationale)`.
pub(super) fn judgments_for(
    conn: &Connection,
    conversation_id: i64,
) -> rusqlite::Result<Vec<JudgmentLine>> {
    if !table_exists(conn, "judgments")? {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached(
        "SELECT rubric, judge, replicate, status, scores, completed, rationale FROM judgments
         WHERE conversation_id = ?1 ORDER BY rubric, judge, replicate",
    )?;
    stmt.query_map([conversation_id], |r| {
        let scores: Option<String> = r.get(4)?;
        let scores = match scores {
            None => Default::default(),
            Some(text) => serde_json::from_str(&text).map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(4, rusqlite::types::Type::Text, e.into())
            })?,
        };
        Ok(JudgmentLine {
            rubric: r.get(0)?,
            judge: r.get(1)?,
            replicate: r.get(2)?,
            status: r.get(3)?,
            scores,
            completed: r.get(5)?,
            rationale: r.get(6)?,
        })
    })?
    .collect()
}

fn table_exists(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")?
        .query_row([name], |_| Ok(()))
        .optional()?
        .is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_scores_once_tables_exist() {
        let conn = Connection::open_in_memory().unwrap();
        assert!(checks_for(&conn, 1).unwrap().is_empty());
        assert!(judgments_for(&conn, 1).unwrap().is_empty());
        conn.execute_batch(
            "CREATE TABLE check_results (conversation_id INTEGER, check_id TEXT, tag TEXT,
                                         passed INTEGER, detail TEXT);
             INSERT INTO check_results VALUES (1, 'json-valid', 'format', 1, NULL),
                                              (1, 'mentions-cursor', 'content', NULL, 'not scored');
             CREATE TABLE judgments (conversation_id INTEGER, rubric TEXT, judge TEXT,
                                     replicate INTEGER, status TEXT, scores TEXT,
                                     completed INTEGER, rationale TEXT);
             INSERT INTO judgments VALUES (1, 'quality', 'j1', 1, 'ok',
                                           '{\"accuracy\": 4, \"clarity\": 5}', 1, 'fine');",
        )
        .unwrap();
        let checks = checks_for(&conn, 1).unwrap();
        assert_eq!(checks.len(), 2);
        assert_eq!(checks[0].passed, Some(true));
        assert_eq!(checks[1].passed, None);
        let judgments = judgments_for(&conn, 1).unwrap();
        assert_eq!(judgments[0].scores["clarity"], 5);
        assert_eq!(judgments[0].completed, Some(true));
        assert!(checks_for(&conn, 2).unwrap().is_empty());
    }
}
