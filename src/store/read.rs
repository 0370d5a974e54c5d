//! Queries used by the stages (resume, summaries). Plain functions over `&Connection`.

use std::collections::{BTreeMap, HashSet};

use rusqlite::{Connection, OptionalExtension};

use super::StoreError;

/// The newest run with this name that called providers, of collect (`replay` false) or
/// of replay (true): (id, settings_hash).
pub fn latest_run(
    conn: &Connection,
    name: &str,
    replay: bool,
) -> Result<Option<(i64, String)>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT id, settings_hash FROM runs WHERE name = ?1 AND source = 'collect'
               AND EXISTS (SELECT 1 FROM replay_runs p WHERE p.run_id = runs.id) = ?2
             ORDER BY id DESC LIMIT 1",
            rusqlite::params![name, replay],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

/// Slots (target id, scenario, repeat) of a run that hold a stored, non-interrupted result.
pub fn finished_slots(
    conn: &Connection,
    run_id: i64,
) -> Result<HashSet<(i64, String, u32)>, StoreError> {
    super::all(
        conn,
        "SELECT target_id, scenario, repeat FROM conversations
         WHERE run_id = ?1 AND outcome <> 'interrupted'",
        [run_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// Per target label: conversations by outcome, for a run's closing summary. Each slot
/// counts once: an interrupted conversation that a later one redid is history, not counted.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TargetSummary {
    pub provider: String,
    pub label: String,
    pub by_outcome: BTreeMap<String, u64>,
    /// Completed conversations with every answer clean: no `truncated` turn and no
    /// `content_filter` finish.
    pub clean: u64,
    /// Completed conversations with at least one truncated answer (`finish_reason = length`).
    pub truncated: u64,
    /// Completed conversations with at least one answer the provider's content filter
    /// stopped or changed (`finish_reason = content_filter`).
    pub filtered: u64,
}

impl TargetSummary {
    pub fn attempted(&self) -> u64 {
        self.by_outcome
            .iter()
            .filter(|(o, _)| o.as_str() != "interrupted")
            .map(|(_, n)| n)
            .sum()
    }

    pub fn completed(&self) -> u64 {
        self.by_outcome.get("completed").copied().unwrap_or(0)
    }

    /// Conversations that ended in a failure (neither completed nor interrupted).
    pub fn failed(&self) -> u64 {
        self.by_outcome
            .iter()
            .filter(|(o, _)| !matches!(o.as_str(), "completed" | "interrupted"))
            .map(|(_, n)| n)
            .sum()
    }
}

pub fn run_summary(conn: &Connection, run_id: i64) -> Result<Vec<TargetSummary>, StoreError> {
    let mut stmt = conn.prepare(
        "WITH flags AS (
             SELECT c.id, c.target_id, c.outcome,
                    EXISTS (SELECT 1 FROM turns u WHERE u.conversation_id = c.id
                            AND u.outcome = 'truncated') AS truncated,
                    EXISTS (SELECT 1 FROM turns u WHERE u.conversation_id = c.id
                            AND u.finish_reason = 'content_filter') AS filtered
             FROM conversations c
             WHERE c.run_id = ?1 AND c.superseded_by IS NULL)
         SELECT t.id, t.provider, t.label, f.outcome, COUNT(*),
                SUM(f.outcome = 'completed' AND NOT f.truncated AND NOT f.filtered),
                SUM(f.outcome = 'completed' AND f.truncated),
                SUM(f.outcome = 'completed' AND f.filtered)
         FROM flags f JOIN targets t ON t.id = f.target_id
         GROUP BY t.id, f.outcome ORDER BY t.id",
    )?;
    let mut out: Vec<(i64, TargetSummary)> = Vec::new();
    let mut rows = stmt.query([run_id])?;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let summary = TargetSummary {
            provider: r.get(1)?,
            label: r.get(2)?,
            ..Default::default()
        };
        let s = match out.last_mut() {
            Some((last, s)) if *last == id => s,
            _ => {
                out.push((id, summary));
                // Just pushed: the vector is not empty.
                &mut out.last_mut().expect("pushed above").1
            }
        };
        let n: i64 = r.get(4)?;
        s.by_outcome.insert(r.get(3)?, n as u64);
        s.clean += r.get::<_, i64>(5)? as u64;
        s.truncated += r.get::<_, i64>(6)? as u64;
        s.filtered += r.get::<_, i64>(7)? as u64;
    }
    Ok(out.into_iter().map(|(_, s)| s).collect())
}
