//! Check and judge results for `export --with-scores`, one small reader each.
//!
//! Check results come from `db/003_checks.sql`, judgments from `db/002_judgments.sql`.

use rusqlite::Connection;

use crate::exchange::{CheckLine, JudgmentLine};

/// The conversation's current check results (`current_check_results`): when a check was
/// edited, the result of the definition the newest check run loaded (older ones stay in
/// the store as history).
pub(super) fn checks_for(
    conn: &Connection,
    conversation_id: i64,
) -> rusqlite::Result<Vec<CheckLine>> {
    let mut stmt = conn.prepare_cached(
        "SELECT check_id, tag, passed, detail FROM current_check_results
         WHERE conversation_id = ?1 ORDER BY check_id",
    )?;
    stmt.query_map([conversation_id], |r| {
        Ok(CheckLine {
            id: r.get(0)?,
            tag: r.get(1)?,
            passed: r.get::<_, Option<bool>>(2)?,
            detail: r.get(3)?,
        })
    })?
    .collect()
}

/// The conversation's current judgments (`current_judgments`), so a `judge_error` that a
/// later run retried successfully is not exported. `rubric` is `id@version`, since an
/// edited rubric is a new version with its own judgments.
pub(super) fn judgments_for(
    conn: &Connection,
    conversation_id: i64,
) -> rusqlite::Result<Vec<JudgmentLine>> {
    let mut stmt = conn.prepare_cached(
        "SELECT rubric_id || '@' || rubric_version, judge_id, replicate, status, scores,
                completed, rationale
         FROM current_judgments WHERE conversation_id = ?1
         ORDER BY rubric_id, rubric_version, judge_id, simulated, replicate",
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A store with one conversation (id 1).
    fn store() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open(&dir.path().join("t.db")).unwrap();
        conn.execute_batch(
            "INSERT INTO runs (id, name, source, settings, settings_hash, tool_version, started_at)
               VALUES (1, 'r', 'import', '{}', 'h', '0', 't');
             INSERT INTO targets (id, provider, model, label, key) VALUES (1, 'p', 'm', 'm', 'k');
             INSERT INTO conversations (id, uid, run_id, target_id, repeat, outcome, turn_count)
               VALUES (1, 'u', 1, 1, 1, 'completed', 1);",
        )
        .unwrap();
        (dir, conn)
    }

    #[test]
    fn reads_the_newest_definition_of_each_check() {
        let (_dir, conn) = store();
        assert!(checks_for(&conn, 1).unwrap().is_empty());
        conn.execute_batch(
            "INSERT INTO check_runs (id, checks_dir, tool_version, started_at) VALUES (1, 'c', '0', 't');
             INSERT INTO check_definitions (id, scenario, check_id, hash, kind, tag, definition, first_seen)
               VALUES (1, 's', 'json-valid', 'h1', 'json_valid', 'json_validity', '{}', 't'),
                      (2, 's', 'no-old-date', 'h2', 'not_contains', 'superseded_instruction', '{}', 't'),
                      (3, 's', 'json-valid', 'h3', 'json_valid', 'json_validity', '{}', 't');
             INSERT INTO check_run_definitions (check_run_id, definition_id) VALUES (1, 2), (1, 3);
             INSERT INTO check_results (conversation_id, definition_id, passed, detail, check_run_id)
               VALUES (1, 1, 0, 'old definition failed', 1),
                      (1, 2, NULL, 'not scored', 1),
                      (1, 3, 1, NULL, 1);",
        )
        .unwrap();
        let checks = checks_for(&conn, 1).unwrap();
        assert_eq!(checks.len(), 2, "one entry per check id");
        assert_eq!(checks[0].id, "json-valid");
        assert_eq!(
            checks[0].passed,
            Some(true),
            "the edited definition's result"
        );
        assert_eq!(checks[1].passed, None);
        assert!(checks_for(&conn, 2).unwrap().is_empty());
    }

    #[test]
    fn reads_the_current_judgment_per_key() {
        let (_dir, conn) = store();
        conn.execute_batch(
            "INSERT INTO rubrics (id, rubric_id, version, hash, title, content)
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
