//! Queries used by the stages (resume, summaries). Plain functions over `&Connection`.

use std::collections::{BTreeMap, HashSet};

use rusqlite::{Connection, OptionalExtension};

use super::StoreError;

/// The newest collect run with this name: (id, settings_hash).
pub fn latest_run(conn: &Connection, name: &str) -> Result<Option<(i64, String)>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT id, settings_hash FROM runs WHERE name = ?1 AND source = 'collect'
             ORDER BY id DESC LIMIT 1",
            [name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

/// Slots (target id, scenario, repeat) of a run that hold a stored, non-interrupted result.
pub fn finished_slots(
    conn: &Connection,
    run_id: i64,
) -> Result<HashSet<(i64, String, u32)>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT target_id, scenario, repeat FROM conversations
         WHERE run_id = ?1 AND outcome <> 'interrupted'",
    )?;
    let rows = stmt.query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Per target label: conversations by outcome, for a run's closing summary.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TargetSummary {
    pub provider: String,
    pub label: String,
    pub by_outcome: BTreeMap<String, u64>,
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
}

pub fn run_summary(conn: &Connection, run_id: i64) -> Result<Vec<TargetSummary>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT t.id, t.provider, t.label, c.outcome, COUNT(*)
         FROM conversations c JOIN targets t ON t.id = c.target_id
         WHERE c.run_id = ?1
         GROUP BY t.id, c.outcome ORDER BY t.id",
    )?;
    let mut out: Vec<(i64, TargetSummary)> = Vec::new();
    let mut rows = stmt.query([run_id])?;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        if out.last().is_none_or(|(last, _)| *last != id) {
            out.push((
                id,
                TargetSummary {
                    provider: r.get(1)?,
                    label: r.get(2)?,
                    by_outcome: BTreeMap::new(),
                },
            ));
        }
        let n: i64 = r.get(4)?;
        out.last_mut()
            .expect("pushed above")
            .1
            .by_outcome
            .insert(r.get(3)?, n as u64);
    }
    Ok(out.into_iter().map(|(_, s)| s).collect())
}
