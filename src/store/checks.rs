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
    insert_each(
        conn,
        "INSERT OR IGNORE INTO check_results
            (conversation_id, definition_id, passed, detail, check_run_id)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        rows,
        |r| {
            (
                r.conversation_id,
                r.definition_id,
                r.passed,
                &r.detail,
                check_run_id,
            )
        },
    )
}

/// Runs one cached `INSERT OR IGNORE` per row with the parameters `params` gives it;
/// returns how many rows were new.
fn insert_each<'p, T, P: rusqlite::Params>(
    conn: &Connection,
    sql: &str,
    rows: &'p [T],
    params: impl Fn(&'p T) -> P,
) -> Result<usize, StoreError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut inserted = 0;
    for row in rows {
        inserted += stmt.execute(params(row))?;
    }
    Ok(inserted)
}

/// One check's verdict on one answer of one conversation (`check_turn_results`).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckTurnRecord {
    pub conversation_id: i64,
    pub definition_id: i64,
    /// The scenario turn (1-based) whose answer was checked.
    pub turn: u32,
    pub passed: bool,
    /// Why that answer failed; `None` when it passed.
    pub detail: Option<String>,
}

/// Inserts turn verdicts; one already stored for the same (conversation, definition, turn)
/// is kept. Returns how many rows were new. The caller owns the transaction.
pub fn insert_check_turn_results(
    conn: &Connection,
    rows: &[CheckTurnRecord],
) -> Result<usize, StoreError> {
    insert_each(
        conn,
        "INSERT OR IGNORE INTO check_turn_results
            (conversation_id, definition_id, turn, passed, detail)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        rows,
        |r| {
            (
                r.conversation_id,
                r.definition_id,
                r.turn,
                r.passed,
                &r.detail,
            )
        },
    )
}

/// The backfill `db/009_check_turns.sql` asks for: results stored before turn verdicts
/// were, still to be given theirs by the next check run.
pub const TURN_VERDICTS_BACKFILL: &str = "check_turn_verdicts";

/// Whether the store still asks for turn verdicts of results stored before migration 009.
pub fn turn_verdicts_pending(conn: &Connection) -> Result<bool, StoreError> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM store_backfills WHERE name = ?1)",
        [TURN_VERDICTS_BACKFILL],
        |r| r.get(0),
    )?)
}

/// Ends the backfill once every scored current result has its turn verdicts (a check run
/// over only some scenarios' checks leaves the rest, and the record, for a later one).
/// Returns whether it ended.
pub fn finish_turn_verdicts_backfill(conn: &Connection) -> Result<bool, StoreError> {
    let missing: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM current_check_results r
                        WHERE r.passed IS NOT NULL
                          AND NOT EXISTS (SELECT 1 FROM check_turn_results t
                                          WHERE t.conversation_id = r.conversation_id
                                            AND t.definition_id = r.definition_id))",
        [],
        |r| r.get(0),
    )?;
    if !missing {
        conn.execute(
            "DELETE FROM store_backfills WHERE name = ?1",
            [TURN_VERDICTS_BACKFILL],
        )?;
    }
    Ok(!missing)
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
    Ok(row!(r => ConversationHead { id, uid, scenario, target_id, repeat, outcome, turn_count }))
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

/// A stored conversation verdict, as the check stage pages through them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoredVerdict {
    pub conversation_id: i64,
    pub definition_id: i64,
    pub passed: Option<bool>,
    /// A scored verdict without turn verdicts (stored before migration 009). Looked up
    /// only when asked for (`with_turns`); `false` otherwise.
    pub lacks_turns: bool,
}

/// Calls `f` for every stored result of the conversations with ids in `first..=last`, in
/// conversation order. With `with_turns`, each scored result also says whether its turn
/// verdicts are missing (one primary-key probe per result: asked only while the
/// backfill of [`TURN_VERDICTS_BACKFILL`] is pending).
pub fn results_between(
    conn: &Connection,
    first: i64,
    last: i64,
    with_turns: bool,
    mut f: impl FnMut(StoredVerdict),
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(if with_turns {
        "SELECT r.conversation_id, r.definition_id, r.passed,
                r.passed IS NOT NULL AND NOT EXISTS (
                    SELECT 1 FROM check_turn_results t
                    WHERE t.conversation_id = r.conversation_id
                      AND t.definition_id = r.definition_id)
         FROM check_results r
         WHERE r.conversation_id BETWEEN ?1 AND ?2"
    } else {
        "SELECT conversation_id, definition_id, passed, 0 FROM check_results
         WHERE conversation_id BETWEEN ?1 AND ?2"
    })?;
    let mut rows = stmt.query([first, last])?;
    while let Some(r) = rows.next()? {
        f(StoredVerdict {
            conversation_id: r.get(0)?,
            definition_id: r.get(1)?,
            passed: r.get(2)?,
            lacks_turns: r.get(3)?,
        });
    }
    Ok(())
}

/// A stored turn verdict with its check, for `check --explain`.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTurnVerdict {
    pub check_id: String,
    pub hash: String,
    pub turn: u32,
    pub passed: bool,
    pub detail: Option<String>,
}

/// Every stored turn verdict of one conversation, by check id and turn.
pub fn turn_results_of_conversation(
    conn: &Connection,
    conversation_id: i64,
) -> Result<Vec<StoredTurnVerdict>, StoreError> {
    super::all(
        conn,
        "SELECT d.check_id, d.hash, t.turn, t.passed, t.detail
         FROM check_turn_results t
         JOIN check_definitions d ON d.id = t.definition_id
         WHERE t.conversation_id = ?1
         ORDER BY d.check_id, t.turn",
        [conversation_id],
        |r| Ok(row!(r => StoredTurnVerdict { check_id, hash, turn, passed, detail })),
    )
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
    super::all(
        conn,
        "SELECT d.check_id, d.hash, d.tag, r.passed, r.detail, k.started_at
         FROM check_results r
         JOIN check_definitions d ON d.id = r.definition_id
         JOIN check_runs k ON k.id = r.check_run_id
         WHERE r.conversation_id = ?1
         ORDER BY d.check_id, k.started_at",
        [conversation_id],
        |r| Ok(row!(r => StoredCheckResult { check_id, hash, tag, passed, detail, checked_at })),
    )
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
    super::all(
        conn,
        "SELECT id, provider, label, model FROM targets",
        [],
        |r| {
            Ok((
                r.get(0)?,
                TargetName {
                    provider: r.get(1)?,
                    label: r.get(2)?,
                    model: r.get(3)?,
                },
            ))
        },
    )
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
        results_between(&conn, conv, conv, false, |r| {
            seen.push((r.conversation_id, r.definition_id, r.passed, r.lacks_turns))
        })
        .unwrap();
        assert_eq!(seen, [(conv, def, Some(false), false)]);
        // Asked, the probe finds the scored result without turn verdicts, until it has them.
        let lacks = |conn: &Connection| {
            let mut lacks = Vec::new();
            results_between(conn, conv, conv, true, |r| lacks.push(r.lacks_turns)).unwrap();
            lacks
        };
        assert_eq!(lacks(&conn), [true]);
        let turn = |turn: u32, passed: bool| CheckTurnRecord {
            conversation_id: conv,
            definition_id: def,
            turn,
            passed,
            detail: (!passed).then(|| "bad".to_string()),
        };
        assert_eq!(
            insert_check_turn_results(&conn, &[turn(1, true), turn(2, false)]).unwrap(),
            2
        );
        assert_eq!(
            insert_check_turn_results(&conn, &[turn(2, true)]).unwrap(),
            0
        );
        assert_eq!(lacks(&conn), [false]);
        let turns = turn_results_of_conversation(&conn, conv).unwrap();
        assert_eq!(
            turns.iter().map(|t| (t.turn, t.passed)).collect::<Vec<_>>(),
            [(1, true), (2, false)]
        );
        assert_eq!(turns[1].detail.as_deref(), Some("bad"));
    }

    #[test]
    fn the_turn_verdict_backfill_ends_when_every_scored_current_result_has_them() {
        let (_dir, conn) = store();
        let conv = conversation(&conn, "u1", "completed", &["a", "{}"]);
        let def = upsert_check_definition(&conn, &definition("h1")).unwrap();
        let run = insert_check_run(&conn, "checks").unwrap();
        link_check_definition(&conn, run, def).unwrap();
        // A store made before migration 009 would have the record; a new one has none.
        assert!(!turn_verdicts_pending(&conn).unwrap());
        conn.execute(
            "INSERT INTO store_backfills (name, since) VALUES (?1, 'then')",
            [TURN_VERDICTS_BACKFILL],
        )
        .unwrap();
        assert!(turn_verdicts_pending(&conn).unwrap());
        let result = CheckResultRecord {
            conversation_id: conv,
            definition_id: def,
            passed: Some(true),
            detail: None,
        };
        insert_check_results(&conn, run, &[result]).unwrap();
        assert!(!finish_turn_verdicts_backfill(&conn).unwrap());
        assert!(turn_verdicts_pending(&conn).unwrap());
        let verdict = CheckTurnRecord {
            conversation_id: conv,
            definition_id: def,
            turn: 2,
            passed: true,
            detail: None,
        };
        insert_check_turn_results(&conn, &[verdict]).unwrap();
        assert!(finish_turn_verdicts_backfill(&conn).unwrap());
        assert!(!turn_verdicts_pending(&conn).unwrap());
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
