//! Inserts: runs, targets, scenarios and whole conversations (one transaction each).

use rusqlite::{Connection, OptionalExtension, named_params};

use super::StoreError;
use super::records::{ConversationRecord, encode_offsets};

/// What identifies a run's settings.
pub struct NewRun<'a> {
    pub name: &'a str,
    pub source: &'a str,
    pub seed: Option<u64>,
    pub settings_json: &'a str,
}

pub fn insert_run(conn: &Connection, run: &NewRun) -> Result<i64, StoreError> {
    let hash = blake3::hash(run.settings_json.as_bytes()).to_hex()[..16].to_string();
    conn.execute(
        "INSERT INTO runs (name, source, seed, settings, settings_hash, tool_version, started_at)
         VALUES (:name, :source, :seed, :settings, :hash, :version, :now)",
        named_params! {
            ":name": run.name,
            ":source": run.source,
            ":seed": run.seed.map(|s| s as i64),
            ":settings": run.settings_json,
            ":hash": hash,
            ":version": env!("CARGO_PKG_VERSION"),
            ":now": super::now_rfc3339(),
        },
    )?;
    Ok(conn.last_insert_rowid())
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
    let mut h = blake3::Hasher::new();
    for part in [
        t.provider,
        t.model,
        t.label,
        t.host.unwrap_or("\0"),
        t.params_json,
        t.prices_json.unwrap_or("\0"),
    ] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let key = h.finalize().to_hex()[..24].to_string();
    if let Some(id) = conn
        .query_row("SELECT id FROM targets WHERE key = ?1", [&key], |r| {
            r.get(0)
        })
        .optional()?
    {
        return Ok(id);
    }
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
    )?;
    Ok(conn.last_insert_rowid())
}

/// Returns the id of this scenario version, inserting it when new.
pub fn upsert_scenario(
    conn: &Connection,
    scenario: &crate::config::Scenario,
) -> Result<i64, StoreError> {
    if let Some(id) = conn
        .query_row(
            "SELECT id FROM scenarios WHERE scenario_id = ?1 AND hash = ?2",
            [&scenario.id, &scenario.hash],
            |r| r.get(0),
        )
        .optional()?
    {
        return Ok(id);
    }
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
    )?;
    Ok(conn.last_insert_rowid())
}

/// Writes a conversation with its turns and attempts; the caller owns the transaction.
pub fn insert_conversation(conn: &Connection, c: &ConversationRecord) -> Result<i64, StoreError> {
    let trailing = if c.trailing.is_empty() {
        None
    } else {
        Some(serde_json::to_string(&c.trailing).expect("messages serialise"))
    };
    let mut stmt = conn.prepare_cached(
        "INSERT INTO conversations (uid, run_id, target_id, scenario, scenario_ref, repeat, outcome,
                                    started_at, ended_at, latency_ms, turn_count, trailing)
         VALUES (:uid, :run, :target, :scenario, :scenario_ref, :repeat, :outcome,
                 :started, :ended, :latency, :turns, :trailing)",
    )?;
    stmt.execute(named_params! {
        ":uid": c.uid,
        ":run": c.run_id,
        ":target": c.target_id,
        ":scenario": c.scenario,
        ":scenario_ref": c.scenario_ref,
        ":repeat": c.repeat,
        ":outcome": c.outcome,
        ":started": c.started_at,
        ":ended": c.ended_at,
        ":latency": c.latency_ms(),
        ":turns": c.turns.len() as i64,
        ":trailing": trailing,
    })?;
    let id = conn.last_insert_rowid();
    let mut turn = conn.prepare_cached(
        "INSERT INTO turns (conversation_id, idx, prompt, answer, reasoning, finish_reason,
            http_status, outcome, error, attempts, pause_ms, start_ms, ttft_ms, ttfa_ms, e2e_ms,
            prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, visible_tokens,
            request_id, chunk_offsets)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                 ?19, ?20, ?21, ?22)",
    )?;
    for (idx, t) in c.turns.iter().enumerate() {
        let prompt = serde_json::to_string(&t.prompt).expect("messages serialise");
        let offsets = (!t.chunk_offsets_us.is_empty()).then(|| encode_offsets(&t.chunk_offsets_us));
        turn.execute(rusqlite::params![
            id,
            idx as i64,
            prompt,
            t.answer,
            t.reasoning,
            t.finish_reason,
            t.http_status,
            t.outcome().as_str(),
            t.error,
            t.attempts,
            t.pause_ms,
            t.start_ms,
            t.ttft_ms,
            t.ttfa_ms,
            t.e2e_ms,
            t.usage.prompt_tokens,
            t.usage.completion_tokens,
            t.usage.reasoning_tokens,
            t.usage.cached_tokens,
            t.visible_tokens,
            t.request_id,
            offsets,
        ])?;
    }
    let mut attempt = conn.prepare_cached(
        "INSERT INTO attempts (conversation_id, turn_idx, attempt, outcome, http_status, error,
                               e2e_ms, waited_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for a in &c.attempts {
        attempt.execute(rusqlite::params![
            id,
            a.turn_idx,
            a.attempt,
            a.outcome.as_str(),
            a.http_status,
            a.error,
            a.e2e_ms,
            a.waited_ms
        ])?;
    }
    Ok(id)
}
