//! Check and judge results for `export --with-scores`, one small reader each.
//!
//! Judgments come from `db/002_judgments.sql`. Check results arrive with a later
//! migration: until their table exists the array is empty (the query assumes the columns
//! named below).

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

/// The current judgment per (conversation, judgment key): the newest row, so a
/// `judge_error` that a later run retried successfully is not exported. `rubric` is
/// `id@version`, since an edited rubric is a new version with its own judgments.
pub(super) fn judgments_for(
    conn: &Connection,
    conversation_id: i64,
) -> rusqlite::Result<Vec<JudgmentLine>> {
    let mut stmt = conn.prepare_cached(
        "SELECT rubric_id || '@' || rubric_version, judge_id, replicate, status, scores,
                completed, rationale
         FROM judgments j
         WHERE conversation_id = ?1
           AND id = (SELECT MAX(id) FROM judgments k
                     WHERE k.conversation_id = j.conversation_id AND k.key = j.key)
         ORDER BY rubric_id, rubric_version, judge_id, replicate",
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
    fn reads_checks_once_their_table_exists() {
        let conn = Connection::open_in_memory().unwrap();
        assert!(checks_for(&conn, 1).unwrap().is_empty());
        conn.execute_batch(
            "CREATE TABLE check_results (conversation_id INTEGER, check_id TEXT, tag TEXT,
                                         passed INTEGER, detail TEXT);
             INSERT INTO check_results VALUES (1, 'json-valid', 'format', 1, NULL),
                                              (1, 'mentions-cursor', 'content', NULL, 'not scored');",
        )
        .unwrap();
        let checks = checks_for(&conn, 1).unwrap();
        assert_eq!(checks.len(), 2);
        assert_eq!(checks[0].passed, Some(true));
        assert_eq!(checks[1].passed, None);
        assert!(checks_for(&conn, 2).unwrap().is_empty());
    }

    #[test]
    fn reads_the_current_judgment_per_key() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open(&dir.path().join("t.db")).unwrap();
        conn.execute_batch(
            "INSERT INTO runs (id, name, source, settings, settings_hash, tool_version, started_at)
               VALUES (1, 'r', 'import', '{}', 'h', '0', 't');
             INSERT INTO targets (id, provider, model, label, key) VALUES (1, 'p', 'm', 'm', 'k');
             INSERT INTO conversations (id, uid, run_id, target_id, repeat, outcome, turn_count)
               VALUES (1, 'u', 1, 1, 1, 'completed', 1);
             INSERT INTO rubrics (id, rubric_id, version, hash, title, content)
               VALUES (1, 'quality', 2, 'h', 'Q', '{}');
             INSERT INTO judges (id, judge_id, model, host, simulated, settings, template, hash)
               VALUES (1, 'j1', 'jm', 'h', 0, '{}', 't', 'jh');
             INSERT INTO judgments (key, conversation_id, rubric_ref, judge_ref, rubric_id,
                 rubric_version, judge_id, replicate, label, status, scores, completed, rationale,
                 asks, attempts, simulated, invocation, seq, created_at)
               VALUES ('k1', 1, 1, 1, 'quality', 2, 'j1', 1, 'A', 'judge_error', NULL, NULL, NULL,
                       1, 4, 0, 'i1', 0, 't1'),
                      ('k1', 1, 1, 1, 'quality', 2, 'j1', 1, 'A', 'ok',
                       '{\"accuracy\": 4, \"clarity\": 5}', 1, 'fine', 1, 1, 0, 'i2', 0, 't2');",
        )
        .unwrap();
        let judgments = judgments_for(&conn, 1).unwrap();
        assert_eq!(
            judgments.len(),
            1,
            "the retried error is history, not exported"
        );
        assert_eq!(judgments[0].rubric, "quality@2");
        assert_eq!(judgments[0].status, "ok");
        assert_eq!(judgments[0].scores["clarity"], 5);
        assert_eq!(judgments[0].completed, Some(true));
    }
}
