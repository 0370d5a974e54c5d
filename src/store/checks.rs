//! Check definitions and results (`db/003_checks.sql`): typed inserts and the reads the
//! check stage streams. Plain functions over `&Connection`; the caller owns transactions.
//!
//! Results are only ever inserted (`INSERT OR IGNORE`): a result, once stored, is never
//! replaced or deleted, and an edited check gets a new definition row beside the old one.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, named_params};

use super::StoreError;

/// One version of one check, as stored in `check_definitions`.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckDefinitionRecord<'a> {
    pub scenario: &'a str,
    pub check_id: &'a str,
    /// `Check::definition_hash`.
    pub hash: &'a str,
    pub kind: &'a str,
    pub tag: &'a str,
    /// The `[[check]]` table as JSON (keys sorted).
    pub definition_json: &'a str,
}

/// Returns the id of this definition, inserting it when it is new.
pub fn upsert_check_definition(
    conn: &Connection,
    d: &CheckDefinitionRecord,
) -> Result<i64, StoreError> {
    let mut find = conn.prepare_cached(
        "SELECT id FROM check_definitions WHERE scenario = ?1 AND check_id = ?2 AND hash = ?3",
    )?;
    if let Some(id) = find
        .query_row([d.scenario, d.check_id, d.hash], |r| r.get(0))
        .optional()?
    {
        return Ok(id);
    }
    conn.prepare_cached(
        "INSERT INTO check_definitions (scenario, check_id, hash, kind, tag, definition, first_seen)
         VALUES (:scenario, :check_id, :hash, :kind, :tag, :definition, :now)",
    )?
    .execute(named_params! {
        ":scenario": d.scenario,
        ":check_id": d.check_id,
        ":hash": d.hash,
        ":kind": d.kind,
        ":tag": d.tag,
        ":definition": d.definition_json,
        ":now": super::now_rfc3339(),
    })?;
    Ok(conn.last_insert_rowid())
}

/// Records that a check run loaded this definition: the definitions the newest run that
/// loaded a scenario's checks file loaded are that scenario's current ones
/// (`current_check_definitions` in `db/004_read_model.sql`).
pub fn link_check_definition(
    conn: &Connection,
    check_run_id: i64,
    definition_id: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO check_run_definitions (check_run_id, definition_id) VALUES (?1, ?2)",
    )?
    .execute([check_run_id, definition_id])?;
    Ok(())
}

/// Starts a `check` run; its id stamps every result it writes (the results' "when").
pub fn insert_check_run(conn: &Connection, checks_dir: &str) -> Result<i64, StoreError> {
    conn.execute(
        "INSERT INTO check_runs (checks_dir, tool_version, started_at) VALUES (?1, ?2, ?3)",
        rusqlite::params![checks_dir, env!("CARGO_PKG_VERSION"), super::now_rfc3339()],
    )?;
    Ok(conn.last_insert_rowid())
}

pub fn finish_check_run(conn: &Connection, run_id: i64) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE check_runs SET ended_at = ?1 WHERE id = ?2",
        rusqlite::params![super::now_rfc3339(), run_id],
    )?;
    Ok(())
}

/// One check's result for one conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResultRecord {
    pub conversation_id: i64,
    pub definition_id: i64,
    /// `None`: not scored.
    pub passed: Option<bool>,
    /// Why it failed or was not scored; `None` when it passed.
    pub detail: Option<String>,
}

/// Inserts results of one check run; a result already stored for the same (conversation,
/// definition) is kept as it is. Returns how many rows were new. The caller owns the
/// transaction (one per batch keeps commits cheap).
pub fn insert_check_results(
    conn: &Connection,
    check_run_id: i64,
    rows: &[CheckResultRecord],
) -> Result<usize, StoreError> {
    let mut stmt = conn.prepare_cached(
        "INSERT OR IGNORE INTO check_results
            (conversation_id, definition_id, passed, detail, check_run_id)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    let mut inserted = 0;
    for row in rows {
        inserted += stmt.execute(rusqlite::params![
            row.conversation_id,
            row.definition_id,
            row.passed,
            row.detail,
            check_run_id
        ])?;
    }
    Ok(inserted)
}

/// What the check stage needs to know about a conversation before reading its answers.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationHead {
    pub id: i64,
    pub uid: String,
    pub scenario: Option<String>,
    pub target_id: i64,
    pub repeat: u32,
    pub outcome: crate::outcome::ConversationOutcome,
    pub turn_count: u32,
}

const HEAD_COLUMNS: &str = "id, uid, scenario, target_id, repeat, outcome, turn_count";

fn head(r: &rusqlite::Row) -> rusqlite::Result<ConversationHead> {
    Ok(ConversationHead {
        id: r.get(0)?,
        uid: r.get(1)?,
        scenario: r.get(2)?,
        target_id: r.get(3)?,
        repeat: r.get(4)?,
        outcome: r.get(5)?,
        turn_count: r.get(6)?,
    })
}

/// Up to `limit` conversations with an id above `after`, in id order, appended to `out`:
/// one page of a keyset scan, so a caller streams the store in flat memory.
pub fn conversation_heads_after(
    conn: &Connection,
    after: i64,
    limit: usize,
    out: &mut Vec<ConversationHead>,
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {HEAD_COLUMNS} FROM conversations WHERE id > ?1 ORDER BY id LIMIT ?2"
    ))?;
    let rows = stmt.query_map(rusqlite::params![after, limit as i64], head)?;
    for row in rows {
        out.push(row?);
    }
    Ok(())
}

/// A conversation by its numeric id or its uid.
pub fn find_conversation(
    conn: &Connection,
    key: &str,
) -> Result<Option<ConversationHead>, StoreError> {
    if let Ok(id) = key.parse::<i64>() {
        let found = conn
            .query_row(
                &format!("SELECT {HEAD_COLUMNS} FROM conversations WHERE id = ?1"),
                [id],
                head,
            )
            .optional()?;
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(conn
        .query_row(
            &format!("SELECT {HEAD_COLUMNS} FROM conversations WHERE uid = ?1"),
            [key],
            head,
        )
        .optional()?)
}

/// Conversations per scenario id (`None`: conversations without one).
pub fn conversations_by_scenario(
    conn: &Connection,
) -> Result<Vec<(Option<String>, u64)>, StoreError> {
    let mut stmt =
        conn.prepare("SELECT scenario, COUNT(*) FROM conversations GROUP BY scenario")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Calls `f(conversation_id, definition_id, passed)` for every stored result of the
/// conversations with ids in `first..=last`, in conversation order.
pub fn results_between(
    conn: &Connection,
    first: i64,
    last: i64,
    mut f: impl FnMut(i64, i64, Option<bool>),
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT conversation_id, definition_id, passed FROM check_results
         WHERE conversation_id BETWEEN ?1 AND ?2",
    )?;
    let mut rows = stmt.query([first, last])?;
    while let Some(r) = rows.next()? {
        f(r.get(0)?, r.get(1)?, r.get(2)?);
    }
    Ok(())
}

/// Calls `f(conversation_id, turn index (0-based), answer)` for every turn of the
/// conversations with ids in `first..=last`, in (conversation, turn) order. The answer is
/// borrowed from the row: copy what you keep.
pub fn answers_between(
    conn: &Connection,
    first: i64,
    last: i64,
    mut f: impl FnMut(i64, usize, Option<&str>),
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT conversation_id, idx, answer FROM turns
         WHERE conversation_id BETWEEN ?1 AND ?2 ORDER BY conversation_id, idx",
    )?;
    let mut rows = stmt.query([first, last])?;
    while let Some(r) = rows.next()? {
        let answer = r.get_ref(2)?.as_str_or_null().map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(2, rusqlite::types::Type::Text, e.into())
        })?;
        f(r.get(0)?, r.get::<_, i64>(1)? as usize, answer);
    }
    Ok(())
}

/// A stored result with its definition, for `check --explain`.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredCheckResult {
    pub check_id: String,
    pub hash: String,
    pub tag: String,
    pub passed: Option<bool>,
    pub detail: Option<String>,
    /// When its check run started (RFC 3339).
    pub checked_at: String,
}

/// Every stored result of one conversation, current or not, by check id.
pub fn results_of_conversation(
    conn: &Connection,
    conversation_id: i64,
) -> Result<Vec<StoredCheckResult>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT d.check_id, d.hash, d.tag, r.passed, r.detail, k.started_at
         FROM check_results r
         JOIN check_definitions d ON d.id = r.definition_id
         JOIN check_runs k ON k.id = r.check_run_id
         WHERE r.conversation_id = ?1
         ORDER BY d.check_id, k.started_at",
    )?;
    let rows = stmt.query_map([conversation_id], |r| {
        Ok(StoredCheckResult {
            check_id: r.get(0)?,
            hash: r.get(1)?,
            tag: r.get(2)?,
            passed: r.get(3)?,
            detail: r.get(4)?,
            checked_at: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The answers of one conversation, one slot per stored turn.
pub fn conversation_answers(
    conn: &Connection,
    conversation_id: i64,
) -> Result<Vec<Option<String>>, StoreError> {
    let mut answers = Vec::new();
    answers_between(conn, conversation_id, conversation_id, |_, _, a| {
        answers.push(a.map(str::to_string))
    })?;
    Ok(answers)
}

/// How a target is named in summaries.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TargetName {
    pub provider: String,
    pub label: String,
    pub model: String,
}

pub fn target_names(conn: &Connection) -> Result<HashMap<i64, TargetName>, StoreError> {
    let mut stmt = conn.prepare("SELECT id, provider, label, model FROM targets")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get(0)?,
            TargetName {
                provider: r.get(1)?,
                label: r.get(2)?,
                model: r.get(3)?,
            },
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::inserts::{
        NewRun, NewTarget, insert_conversation, insert_run, upsert_target,
    };
    use crate::store::records::{ConversationRecord, TurnRecord, TurnResult};

    fn store() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open(&dir.path().join("t.db")).unwrap();
        (dir, conn)
    }

    fn conversation(conn: &Connection, uid: &str, outcome: &str, answers: &[&str]) -> i64 {
        let run = insert_run(
            conn,
            &NewRun {
                name: "t",
                source: "import",
                seed: None,
                settings_json: "{}",
                tokenizer: None,
            },
        )
        .unwrap();
        let target = upsert_target(
            conn,
            &NewTarget {
                provider: "acme",
                model: "m",
                label: "m",
                host: None,
                params_json: "{}",
                prices_json: None,
            },
        )
        .unwrap();
        insert_conversation(
            conn,
            &ConversationRecord {
                uid: uid.into(),
                run_id: run,
                target_id: target,
                scenario: Some("demo".into()),
                scenario_ref: None,
                repeat: 1,
                outcome: outcome.parse().unwrap(),
                started_at: None,
                ended_at: None,
                turns: answers
                    .iter()
                    .map(|a| TurnRecord {
                        result: TurnResult {
                            answer: Some(a.to_string()),
                            ..Default::default()
                        },
                        ..Default::default()
                    })
                    .collect(),
                attempts: vec![],
                trailing: vec![],
            },
        )
        .unwrap()
    }

    fn definition<'a>(hash: &'a str) -> CheckDefinitionRecord<'a> {
        CheckDefinitionRecord {
            scenario: "demo",
            check_id: "final-json",
            hash,
            kind: "json_valid",
            tag: "json_validity",
            definition_json: "{}",
        }
    }

    #[test]
    fn definitions_are_upserted_by_scenario_id_and_hash() {
        let (_dir, conn) = store();
        let a = upsert_check_definition(&conn, &definition("h1")).unwrap();
        assert_eq!(
            upsert_check_definition(&conn, &definition("h1")).unwrap(),
            a
        );
        let b = upsert_check_definition(&conn, &definition("h2")).unwrap();
        assert_ne!(a, b);
        let other = CheckDefinitionRecord {
            scenario: "other",
            ..definition("h1")
        };
        assert_ne!(upsert_check_definition(&conn, &other).unwrap(), a);
    }

    #[test]
    fn results_are_inserted_once_and_never_replaced() {
        let (_dir, conn) = store();
        let conv = conversation(&conn, "u1", "completed", &["a", "{}"]);
        let def = upsert_check_definition(&conn, &definition("h1")).unwrap();
        let run = insert_check_run(&conn, "checks").unwrap();
        let row = |passed: Option<bool>, detail: Option<&str>| CheckResultRecord {
            conversation_id: conv,
            definition_id: def,
            passed,
            detail: detail.map(str::to_string),
        };
        assert_eq!(
            insert_check_results(&conn, run, &[row(Some(false), Some("turn 2: bad"))]).unwrap(),
            1
        );
        assert_eq!(
            insert_check_results(&conn, run, &[row(Some(true), None)]).unwrap(),
            0
        );
        finish_check_run(&conn, run).unwrap();
        let stored = results_of_conversation(&conn, conv).unwrap();
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].passed, Some(false));
        assert_eq!(stored[0].detail.as_deref(), Some("turn 2: bad"));
        assert_eq!(stored[0].check_id, "final-json");
        let mut seen = Vec::new();
        results_between(&conn, conv, conv, |c, d, p| seen.push((c, d, p))).unwrap();
        assert_eq!(seen, [(conv, def, Some(false))]);
    }

    #[test]
    fn passed_must_be_a_boolean_or_null() {
        let (_dir, conn) = store();
        let conv = conversation(&conn, "u1", "completed", &["a"]);
        let def = upsert_check_definition(&conn, &definition("h1")).unwrap();
        let run = insert_check_run(&conn, "checks").unwrap();
        let err = conn.execute(
            "INSERT INTO check_results (conversation_id, definition_id, passed, check_run_id)
             VALUES (?1, ?2, 2, ?3)",
            [conv, def, run],
        );
        assert!(err.is_err());
    }

    #[test]
    fn pages_heads_and_answers_stream_in_id_order() {
        let (_dir, conn) = store();
        let a = conversation(&conn, "u1", "completed", &["one", "two"]);
        let b = conversation(&conn, "u2", "timeout", &["three"]);
        let c = conversation(&conn, "u3", "completed", &["four"]);
        let mut page = Vec::new();
        conversation_heads_after(&conn, 0, 2, &mut page).unwrap();
        assert_eq!(page.iter().map(|h| h.id).collect::<Vec<_>>(), [a, b]);
        assert_eq!(page[1].outcome.as_str(), "timeout");
        page.clear();
        conversation_heads_after(&conn, b, 2, &mut page).unwrap();
        assert_eq!(page.iter().map(|h| h.id).collect::<Vec<_>>(), [c]);
        let mut seen = Vec::new();
        answers_between(&conn, a, b, |id, idx, text| {
            seen.push((id, idx, text.map(str::to_string)))
        })
        .unwrap();
        assert_eq!(
            seen,
            [
                (a, 0, Some("one".into())),
                (a, 1, Some("two".into())),
                (b, 0, Some("three".into()))
            ]
        );
        assert_eq!(
            conversation_answers(&conn, c).unwrap(),
            [Some("four".to_string())]
        );
    }

    #[test]
    fn conversations_are_found_by_id_or_uid() {
        let (_dir, conn) = store();
        let a = conversation(&conn, "run-7-x", "completed", &["a"]);
        assert_eq!(
            find_conversation(&conn, &a.to_string())
                .unwrap()
                .unwrap()
                .uid,
            "run-7-x"
        );
        assert_eq!(find_conversation(&conn, "run-7-x").unwrap().unwrap().id, a);
        assert!(find_conversation(&conn, "nope").unwrap().is_none());
        assert_eq!(
            conversations_by_scenario(&conn).unwrap(),
            [(Some("demo".to_string()), 1)]
        );
        assert_eq!(target_names(&conn).unwrap().len(), 1);
    }
}
