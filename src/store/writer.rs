//! The one task that owns the store's connection while a stage produces records:
//! conversations while collecting, judgments while judging.
//!
//! Workers send finished records here; each is written whole in a transaction as soon as it
//! arrives, so a crash loses at most the records still in flight. A dedicated OS thread
//! (not a tokio task) because rusqlite calls block.

use rusqlite::{Connection, Transaction};
use tokio::sync::mpsc;

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

pub struct StoreWriter<R: Storable> {
    tx: mpsc::Sender<R>,
    thread: std::thread::JoinHandle<Result<(Connection, u64), StoreError>>,
}

impl<R: Storable> StoreWriter<R> {
    pub fn spawn(conn: Connection) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        let thread = std::thread::Builder::new()
            .name(R::THREAD.into())
            .spawn(move || run(conn, rx))
            .expect("spawn store thread");
        StoreWriter { tx, thread }
    }

    /// A handle for workers.
    pub fn sender(&self) -> mpsc::Sender<R> {
        self.tx.clone()
    }

    /// Waits until everything sent is written; returns the connection and the rows added.
    pub fn finish(self) -> Result<(Connection, u64), StoreError> {
        drop(self.tx);
        self.thread
            .join()
            .map_err(|_| StoreError::WriterGone(format!("{} thread panicked", R::THREAD)))?
    }
}

fn run<R: Storable>(
    mut conn: Connection,
    mut rx: mpsc::Receiver<R>,
) -> Result<(Connection, u64), StoreError> {
    let mut written = 0;
    while let Some(first) = rx.blocking_recv() {
        // Whatever else is already queued goes into the same transaction: each record
        // stays whole, and a burst costs one commit instead of many.
        let mut batch = vec![first];
        while batch.len() < QUEUE {
            match rx.try_recv() {
                Ok(rec) => batch.push(rec),
                Err(_) => break,
            }
        }
        let tx = conn.transaction()?;
        for rec in &batch {
            written += u64::from(rec.insert(&tx)?);
        }
        tx.commit()?;
    }
    Ok((conn, written))
}
