//! The one task that owns the store's connection while a stage produces records:
//! conversations while collecting, judgments while judging.
//!
//! Workers send finished records here; each is written whole in its own transaction as
//! soon as it arrives, so a crash loses at most the records still in flight, and a record
//! the store refuses (a full disk, a constraint) loses that record only: it is handed
//! back with its error, the writer goes on with the next, and [`StoreWriter::failed`]
//! tells the producer to stop starting work whose results could not be kept. A dedicated
//! OS thread (not a tokio task) because rusqlite calls block. With WAL and
//! `synchronous = NORMAL` a commit is an append to the log, not a sync, so a transaction
//! per record costs little.

use rusqlite::{Connection, Transaction};
use tokio::sync::{mpsc, watch};

use super::StoreError;

/// Records queued at most before senders wait; backpressure, not loss.
const QUEUE: usize = 256;

/// A record the [`StoreWriter`] can write.
pub trait Storable: Send + 'static {
    /// The writer thread's name (shown in panics and by OS tools).
    const THREAD: &'static str;

    /// Writes the record whole inside the writer's transaction; returns whether it added a
    /// row (`false`: the store already held what it says, and keeps that).
    fn insert(&self, tx: &Transaction) -> Result<bool, StoreError>;
}

/// What the writer did: the connection back, rows added, and each record it could not
/// write with the reason (nothing of those records is in the store).
pub struct Written<R> {
    pub conn: Connection,
    pub added: u64,
    pub failed: Vec<(R, StoreError)>,
}

pub struct StoreWriter<R: Storable> {
    tx: mpsc::Sender<R>,
    failed: watch::Receiver<bool>,
    thread: std::thread::JoinHandle<Written<R>>,
}

impl<R: Storable> StoreWriter<R> {
    /// Starts the writer thread; fails only if the OS refuses a thread.
    pub fn spawn(conn: Connection) -> Result<Self, StoreError> {
        let (tx, rx) = mpsc::channel(QUEUE);
        let (failed_tx, failed) = watch::channel(false);
        let thread = std::thread::Builder::new()
            .name(R::THREAD.into())
            .spawn(move || run(conn, rx, failed_tx))
            .map_err(|e| StoreError::WriterGone(format!("cannot start {}: {e}", R::THREAD)))?;
        Ok(StoreWriter { tx, failed, thread })
    }

    /// A handle for workers.
    pub fn sender(&self) -> mpsc::Sender<R> {
        self.tx.clone()
    }

    /// Becomes `true` when the store refuses a record: the producer should start nothing
    /// new (`changed().await` wakes on it).
    pub fn failed(&self) -> watch::Receiver<bool> {
        self.failed.clone()
    }

    /// Waits until everything sent is written (or refused).
    pub fn finish(self) -> Result<Written<R>, StoreError> {
        drop(self.tx);
        self.thread
            .join()
            .map_err(|_| StoreError::WriterGone(format!("{} thread panicked", R::THREAD)))
    }
}

fn run<R: Storable>(
    mut conn: Connection,
    mut rx: mpsc::Receiver<R>,
    failed_tx: watch::Sender<bool>,
) -> Written<R> {
    let mut added = 0;
    let mut failed = Vec::new();
    while let Some(rec) = rx.blocking_recv() {
        match write_one(&mut conn, &rec) {
            Ok(n) => added += u64::from(n),
            Err(e) => {
                failed.push((rec, e));
                let _ = failed_tx.send(true);
            }
        }
    }
    Written {
        conn,
        added,
        failed,
    }
}

/// One record, one transaction: an error rolls back this record only (dropping `tx`).
fn write_one<R: Storable>(conn: &mut Connection, rec: &R) -> Result<bool, StoreError> {
    let tx = conn.transaction()?;
    let added = rec.insert(&tx)?;
    tx.commit()?;
    Ok(added)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row of a table whose `n` is unique: a duplicate is refused by the store.
    struct Row {
        n: i64,
        slow: bool,
    }

    impl Storable for Row {
        const THREAD: &'static str = "test-writer";
        fn insert(&self, tx: &Transaction) -> Result<bool, StoreError> {
            if self.slow {
                // Keeps the writer busy while the test queues more records behind it.
                std::thread::sleep(std::time::Duration::from_millis(150));
            }
            tx.execute("INSERT INTO t (n) VALUES (?1)", [self.n])?;
            Ok(true)
        }
    }

    #[tokio::test]
    async fn a_refused_record_loses_only_itself_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("w.db")).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER UNIQUE)")
            .unwrap();
        let writer = StoreWriter::<Row>::spawn(conn).unwrap();
        let mut failed = writer.failed();
        let sink = writer.sender();
        sink.send(Row { n: 0, slow: true }).await.unwrap();
        // Queued while the first is written: these would once share one transaction.
        for n in 1..=9 {
            let n = if n == 5 { 0 } else { n }; // a duplicate of row 0
            sink.send(Row { n, slow: false }).await.unwrap();
        }
        drop(sink);
        failed.changed().await.unwrap();
        assert!(*failed.borrow());
        let written = writer.finish().unwrap();
        assert_eq!(written.added, 9);
        assert_eq!(written.failed.len(), 1);
        assert_eq!(written.failed[0].0.n, 0);
        assert!(
            written.failed[0].1.to_string().contains("UNIQUE"),
            "{}",
            written.failed[0].1
        );
        let stored: i64 = written
            .conn
            .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored, 9);
    }
}
