//! The one task that owns the store's connection while conversations are collected.
//!
//! Workers send finished conversations here; each is written whole in a transaction as soon
//! as it arrives, so a crash loses at most the conversations still in flight. A dedicated OS
//! thread (not a tokio task) because rusqlite calls block.

use rusqlite::Connection;
use tokio::sync::mpsc;

use super::StoreError;
use super::records::ConversationRecord;
use super::write::insert_conversation;

/// Records queued at most before senders wait; backpressure, not loss.
const QUEUE: usize = 256;

pub struct StoreWriter {
    tx: mpsc::Sender<ConversationRecord>,
    thread: std::thread::JoinHandle<Result<(Connection, u64), StoreError>>,
}

impl StoreWriter {
    pub fn spawn(conn: Connection) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        let thread = std::thread::Builder::new()
            .name("turnbench-store".into())
            .spawn(move || run(conn, rx))
            .expect("spawn store thread");
        StoreWriter { tx, thread }
    }

    /// A handle for workers.
    pub fn sender(&self) -> mpsc::Sender<ConversationRecord> {
        self.tx.clone()
    }

    /// Waits until everything sent is written; returns the connection and the count written.
    pub fn finish(self) -> Result<(Connection, u64), StoreError> {
        drop(self.tx);
        self.thread
            .join()
            .map_err(|_| StoreError::WriterGone("store thread panicked".into()))?
    }
}

fn run(
    mut conn: Connection,
    mut rx: mpsc::Receiver<ConversationRecord>,
) -> Result<(Connection, u64), StoreError> {
    let mut written = 0;
    while let Some(first) = rx.blocking_recv() {
        // Whatever else is already queued goes into the same transaction: each conversation
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
            insert_conversation(&tx, rec)?;
        }
        tx.commit()?;
        written += batch.len() as u64;
    }
    Ok((conn, written))
}
