//! Inserts: runs, targets, scenarios and whole conversations (one transaction each).

use rusqlite::{Connection, Transaction, named_params};

use super::StoreError;
use super::conversation_rows::ConversationInserter;
use super::records::ConversationRecord;
use super::writer_task::Storable;

/// What identifies a run's settings.
pub struct NewRun<'a> {
    pub name: &'a str,
    pub source: &'a str,
    pub seed: Option<u64>,
    pub settings_json: &'a str,
    /// The tokenizer that counts this run's visible tokens, name and version
    /// ([`crate::tokens::TOKENIZER`]); `None` when the run counts none (imports).
    pub tokenizer: Option<&'a str>,
}

/// The hash stored with a run's settings, which `collect --resume` compares with the
/// settings of the day: the one definition both sides use.
pub fn settings_hash(settings_json: &str) -> String {
    blake3::hash(settings_json.as_bytes()).to_hex()[..16].to_string()
}

pub fn insert_run(conn: &Connection, run: &NewRun) -> Result<i64, StoreError> {
    conn.execute(
        "INSERT INTO runs (name, source, seed, settings, settings_hash, tool_version, started_at,
             tokenizer)
         VALUES (:name, :source, :seed, :settings, :hash, :version, :now, :tokenizer)",
        named_params! {
            ":name": run.name,
            ":source": run.source,
            ":seed": run.seed.map(|s| s as i64),
            ":settings": run.settings_json,
            ":hash": settings_hash(run.settings_json),
            ":version": env!("CARGO_PKG_VERSION"),
            ":now": super::now_rfc3339(),
            ":tokenizer": run.tokenizer,
        },
    )?;
    Ok(conn.last_insert_rowid())
}

/// Records where a run was collected from, once: a run resumed from another machine (or
/// by another name) keeps the collector it started with.
pub fn set_collector(conn: &Connection, run_id: i64, collector: &str) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE runs SET collector = ?1 WHERE id = ?2 AND collector IS NULL",
        rusqlite::params![collector, run_id],
    )?;
    Ok(())
}

pub fn finish_run(conn: &Connection, run_id: i64) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE runs SET ended_at = ?1 WHERE id = ?2",
        rusqlite::params![super::now_rfc3339(), run_id],
    )?;
    Ok(())
}

/// A target as stored: no key, ever.
pub struct NewTarget<'a> {
    pub provider: &'a str,
    pub model: &'a str,
    pub label: &'a str,
    pub host: Option<&'a str>,
    pub params_json: &'a str,
    pub prices_json: Option<&'a str>,
}

/// Returns the id of the identical target, inserting it when new.
pub fn upsert_target(conn: &Connection, t: &NewTarget) -> Result<i64, StoreError> {
    let key = super::content_key(&[
        t.provider,
        t.model,
        t.label,
        t.host.unwrap_or("\0"),
        t.params_json,
        t.prices_json.unwrap_or("\0"),
    ]);
    let select = "SELECT id FROM targets WHERE key = ?1";
    super::id_or_insert(conn, select, [&key], || {
        conn.execute(
            "INSERT INTO targets (provider, model, label, host, params, prices, key)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            rusqlite::params![
                t.provider,
                t.model,
                t.label,
                t.host,
                t.params_json,
                t.prices_json,
                key
            ],
        )
    })
}

/// Returns the id of this scenario version, inserting it when new.
pub fn upsert_scenario(
    conn: &Connection,
    scenario: &crate::config::Scenario,
) -> Result<i64, StoreError> {
    let select = "SELECT id FROM scenarios WHERE scenario_id = ?1 AND hash = ?2";
    super::id_or_insert(conn, select, [&scenario.id, &scenario.hash], || {
        // A scenario is strings, numbers and lists: serialising it cannot fail.
        let content = serde_json::to_string(scenario).expect("scenario serialises");
        conn.execute(
            "INSERT INTO scenarios (scenario_id, hash, category, title, content)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![
                scenario.id,
                scenario.hash,
                scenario.category,
                scenario.title,
                content
            ],
        )
    })
}

/// Writes a conversation with its turns and attempts; the caller owns the transaction.
pub fn insert_conversation(conn: &Connection, c: &ConversationRecord) -> Result<i64, StoreError> {
    let prompts: Vec<String> = c
        .turns
        .iter()
        // Messages are two strings each: serialising them cannot fail.
        .map(|t| serde_json::to_string(&t.prompt).expect("messages serialise"))
        .collect();
    ConversationInserter::new(conn)?.insert(conn, c, &prompts)
}

/// Collect's records: each conversation adds its rows (a refused one fails the writer).
impl Storable for ConversationRecord {
    const THREAD: &'static str = "turnbench-store";

    fn insert(&self, tx: &Transaction) -> Result<bool, StoreError> {
        insert_conversation(tx, self).map(|_| true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_hash_is_the_one_resume_computes() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open(&dir.path().join("t.db")).unwrap();
        let settings = r#"{"bench":{"name":"x"}}"#;
        let id = insert_run(
            &conn,
            &NewRun {
                name: "x",
                source: "collect",
                seed: Some(1),
                settings_json: settings,
                tokenizer: Some(crate::tokens::TOKENIZER),
            },
        )
        .unwrap();
        let (hash, tokenizer): (String, Option<String>) = conn
            .query_row(
                "SELECT settings_hash, tokenizer FROM runs WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(hash, settings_hash(settings));
        assert_eq!(hash.len(), 16);
        assert_eq!(tokenizer.as_deref(), Some(crate::tokens::TOKENIZER));
    }
}
