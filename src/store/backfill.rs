//! Facts a migration asks for but SQL cannot compute, filled in Rust when the store is
//! opened (`store_backfills`, `db/007_visible_tokens.sql`): each once, then its record is
//! removed and opening costs one lookup.
//!
//! `visible_tokens`: answers stored without an o200k_base count (imports before migration
//! 007) are counted as collect counts them, in batches of one write transaction each, on
//! every core. A crash leaves the record and the rest to count: the next open goes on.

use rusqlite::{Connection, TransactionBehavior};

use super::StoreError;

/// A batch holds at most this many answers, or this many bytes of them.
const BATCH_ROWS: usize = 8_192;
const BATCH_BYTES: usize = 16 << 20;

/// Runs what the store still asks for. Returns how many answers were counted now.
pub(crate) fn run_pending(conn: &mut Connection) -> Result<u64, StoreError> {
    if !pending(conn)? {
        return Ok(0);
    }
    visible_tokens(conn)
}

fn pending(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM store_backfills WHERE name = 'visible_tokens')",
        [],
        |r| r.get(0),
    )
}

/// One stored answer without a count: its key and text.
type Uncounted = (i64, i64, String);

fn visible_tokens(conn: &mut Connection) -> Result<u64, StoreError> {
    let mut after = (i64::MIN, i64::MIN);
    let mut counted = 0;
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have finished it while this one waited for the lock.
        if !pending(&tx)? {
            return Ok(counted);
        }
        let batch = next_batch(&tx, after)?;
        let Some(&(conversation_id, idx, _)) = batch.last() else {
            // The runs whose answers this counted (imports) now name the tokenizer.
            tx.execute(
                "UPDATE runs SET tokenizer = ?1 WHERE tokenizer IS NULL AND source = 'import'",
                [crate::tokens::TOKENIZER],
            )?;
            tx.execute(
                "DELETE FROM store_backfills WHERE name = 'visible_tokens'",
                [],
            )?;
            tx.commit()?;
            return Ok(counted);
        };
        after = (conversation_id, idx);
        let counts = count_on_every_core(&batch);
        {
            let mut update = tx.prepare_cached(
                "UPDATE turns SET visible_tokens = ?3 WHERE conversation_id = ?1 AND idx = ?2",
            )?;
            for ((conversation_id, idx, _), n) in batch.iter().zip(counts) {
                update.execute([*conversation_id, *idx, n])?;
            }
        }
        tx.commit()?;
        counted += batch.len() as u64;
    }
}

/// The next answers without a count after `after`, in key order.
fn next_batch(conn: &Connection, after: (i64, i64)) -> rusqlite::Result<Vec<Uncounted>> {
    let mut stmt = conn.prepare_cached(
        "SELECT conversation_id, idx, answer FROM turns
         WHERE (conversation_id, idx) > (?1, ?2)
           AND visible_tokens IS NULL AND answer IS NOT NULL
         ORDER BY conversation_id, idx",
    )?;
    let mut rows = stmt.query([after.0, after.1])?;
    let (mut batch, mut bytes) = (Vec::new(), 0);
    while batch.len() < BATCH_ROWS && bytes < BATCH_BYTES {
        let Some(r) = rows.next()? else { break };
        let answer: String = r.get(2)?;
        bytes += answer.len();
        batch.push((r.get(0)?, r.get(1)?, answer));
    }
    Ok(batch)
}

/// o200k_base counts of the batch's answers, in order, on every core.
fn count_on_every_core(batch: &[Uncounted]) -> Vec<i64> {
    use rayon::prelude::*;
    batch
        .par_iter()
        .map(|(_, _, answer)| crate::tokens::count(answer))
        .collect()
}
