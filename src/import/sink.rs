//! Writes prepared conversations of one file into the store, inside the caller's
//! transaction: the run (created with the first new conversation, so a re-import that adds
//! nothing leaves no empty run), targets, scenario links, repeat numbers, and the rows.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension};

use super::validate::PreparedConversation;
use crate::store::StoreError;
use crate::store::conversation_rows::ConversationInserter;
use crate::store::inserts::{NewRun, NewTarget, insert_run, upsert_target};

/// What became of one conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stored {
    Imported {
        turns: usize,
    },
    /// Its uid is in the store already (an earlier import, or an earlier line).
    AlreadyPresent,
    /// Its explicit repeat collides with an earlier conversation of this import.
    RepeatTaken {
        repeat: u32,
    },
}

/// Per-file state; lookups are cached because a file has few targets and scenarios.
pub(crate) struct FileSink {
    run_name: String,
    settings_json: String,
    run_id: Option<i64>,
    targets: HashMap<(String, String, String), i64>,
    /// The previous conversation's target: consecutive lines usually share one.
    last_target: Option<((String, String, String), i64)>,
    scenarios: HashMap<String, Option<i64>>,
    /// Next repeat number to try per (target, scenario) for lines that give none.
    next_repeat: HashMap<(i64, Option<String>), u32>,
}

impl FileSink {
    pub(crate) fn new(run_name: &str, settings_json: String) -> Self {
        FileSink {
            run_name: run_name.to_string(),
            settings_json,
            run_id: None,
            targets: HashMap::new(),
            last_target: None,
            scenarios: HashMap::new(),
            next_repeat: HashMap::new(),
        }
    }

    /// The import run, once a conversation has been stored.
    pub(crate) fn run_id(&self) -> Option<i64> {
        self.run_id
    }

    /// Stores one conversation whole, setting its ids. Statement-level atomicity keeps a
    /// refused conversation row from leaving anything behind, and the inserter writes that
    /// row first, so no savepoint is needed.
    pub(crate) fn store(
        &mut self,
        conn: &Connection,
        inserter: &mut ConversationInserter,
        c: &mut PreparedConversation,
    ) -> Result<Stored, StoreError> {
        // Until this file has a run, look before inserting, so that a file with nothing
        // new leaves no empty run. After that the uid's unique index answers by itself.
        if self.run_id.is_none() {
            let present = conn
                .prepare_cached("SELECT 1 FROM conversations WHERE uid = ?1")?
                .query_row([&c.record.uid], |_| Ok(()))
                .optional()?
                .is_some();
            if present {
                return Ok(Stored::AlreadyPresent);
            }
        }
        let run_id = self.run(conn)?;
        let target_id = self.target(conn, c)?;
        let record = &mut c.record;
        record.run_id = run_id;
        record.target_id = target_id;
        record.scenario_ref = self.scenario_ref(conn, record.scenario.as_deref())?;
        loop {
            if c.repeat.is_none() {
                let key = (target_id, record.scenario.clone());
                let next = self.next_repeat.entry(key).or_insert(1);
                record.repeat = *next;
                *next += 1;
            }
            match inserter.insert(conn, record, &c.prompts_json) {
                Ok(_) => {
                    return Ok(Stored::Imported {
                        turns: record.turns.len(),
                    });
                }
                Err(e) if is_unique_violation(&e, "conversations.uid") => {
                    return Ok(Stored::AlreadyPresent);
                }
                Err(e) if is_unique_violation(&e, "conversations.repeat") => match c.repeat {
                    Some(repeat) => return Ok(Stored::RepeatTaken { repeat }),
                    None => continue, // an explicit repeat took this number: try the next
                },
                Err(e) => return Err(e),
            }
        }
    }

    fn run(&mut self, conn: &Connection) -> Result<i64, StoreError> {
        if let Some(id) = self.run_id {
            return Ok(id);
        }
        let id = insert_run(
            conn,
            &NewRun {
                name: &self.run_name,
                source: "import",
                seed: None,
                settings_json: &self.settings_json,
                tokenizer: Some(crate::tokens::TOKENIZER),
            },
        )?;
        self.run_id = Some(id);
        Ok(id)
    }

    fn target(&mut self, conn: &Connection, c: &PreparedConversation) -> Result<i64, StoreError> {
        if let Some(((provider, model, label), id)) = &self.last_target
            && (provider, model, label) == (&c.provider, &c.model, &c.label)
        {
            return Ok(*id);
        }
        let key = (c.provider.clone(), c.model.clone(), c.label.clone());
        if let Some(id) = self.targets.get(&key) {
            self.last_target = Some((key, *id));
            return Ok(*id);
        }
        let id = upsert_target(
            conn,
            &NewTarget {
                provider: &c.provider,
                model: &c.model,
                label: &c.label,
                host: None,
                params_json: "{}",
                prices_json: None,
            },
        )?;
        self.targets.insert(key.clone(), id);
        self.last_target = Some((key, id));
        Ok(id)
    }

    /// The newest stored version of the scenario with this id, when there is one.
    fn scenario_ref(
        &mut self,
        conn: &Connection,
        scenario: Option<&str>,
    ) -> Result<Option<i64>, StoreError> {
        let Some(id) = scenario else { return Ok(None) };
        if let Some(found) = self.scenarios.get(id) {
            return Ok(*found);
        }
        let found = conn
            .query_row(
                "SELECT id FROM scenarios WHERE scenario_id = ?1 ORDER BY id DESC LIMIT 1",
                [id],
                |r| r.get(0),
            )
            .optional()?;
        self.scenarios.insert(id.to_string(), found);
        Ok(found)
    }
}

/// A unique index covering `column` refused the row: `conversations.uid`, or
/// `conversations.repeat` for the one on (run, target, scenario, repeat). Either way the
/// conversation row was not written, and its turns are written only after it.
fn is_unique_violation(e: &StoreError, column: &str) -> bool {
    matches!(
        e,
        StoreError::Sql(rusqlite::Error::SqliteFailure(f, Some(msg)))
            if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                && msg.contains(column)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::validate::prepare_line;

    fn conv(line: &str) -> PreparedConversation {
        prepare_line(line.as_bytes(), &mut Vec::new()).unwrap()
    }

    const A: &str = r#"{"id":"a","provider":"p","model":"m","scenario":"s","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#;

    #[test]
    fn stores_once_and_numbers_repeats() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open(&dir.path().join("t.db")).unwrap();
        let mut sink = FileSink::new("f.jsonl", "{}".into());
        let mut ins = ConversationInserter::new(&conn).unwrap();
        assert_eq!(
            sink.store(&conn, &mut ins, &mut conv(A)).unwrap(),
            Stored::Imported { turns: 1 }
        );
        assert_eq!(
            sink.store(&conn, &mut ins, &mut conv(A)).unwrap(),
            Stored::AlreadyPresent
        );
        // An explicit repeat 2, then two lines without: they get 1 and 3.
        sink.store(
            &conn,
            &mut ins,
            &mut conv(&A.replace(r#""id":"a""#, r#""id":"b","repeat":2"#)),
        )
        .unwrap();
        sink.store(
            &conn,
            &mut ins,
            &mut conv(&A.replace(r#""id":"a""#, r#""id":"c""#)),
        )
        .unwrap();
        let repeats: Vec<(String, u32)> = conn
            .prepare("SELECT uid, repeat FROM conversations ORDER BY uid")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            repeats,
            vec![("a".into(), 1), ("b".into(), 2), ("c".into(), 3)]
        );
        // An explicit repeat already taken is refused, and leaves nothing.
        let mut taken = conv(&A.replace(r#""id":"a""#, r#""id":"d","repeat":3"#));
        assert_eq!(
            sink.store(&conn, &mut ins, &mut taken).unwrap(),
            Stored::RepeatTaken { repeat: 3 }
        );
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM conversations", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 3);
        let runs: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM runs WHERE source = 'import'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(runs, 1);
    }
}
