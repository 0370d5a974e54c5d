//! Reads a transcript file record by record (lines, or the elements of one JSON array:
//! [`super::records`]) on its own thread and prepares every record (its answers' visible
//! tokens counted on every core), so that JSON parsing and counting overlap with the SQLite
//! writes. Prepared records go to the writer in batches over a bounded channel: memory
//! stays flat whatever the file size.
//!
//! The writer hands written batches back and this thread frees them: memory is then freed
//! by the thread that allocated it, which spares both threads glibc's arena lock (it cost
//! a third of the import time when the writer freed the records).

use std::io::{self, BufRead};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::thread::JoinHandle;

use indicatif::ProgressBar;
use rusqlite::Connection;

use super::grouped::{Spill, SpillError};
use super::records::{Next, Records};
use super::responses::Chains;
use super::shape::{Normalised, Shape, ShapeFilter};
use super::validate::{
    Defaults, LineProblem, PreparedConversation, Read, count_visible_tokens, prepare_normalised,
    read_or_hold,
};
use crate::jsonl::Place;

/// Records per batch sent to the writer.
const BATCH: usize = 256;
/// Batches in flight at most; the reader waits when the writer is behind.
const IN_FLIGHT: usize = 4;

/// One record, prepared (with the shape it was read as) or rejected.
#[derive(Debug)]
pub(crate) enum Item {
    Conversation {
        place: Place,
        shape: Shape,
        conversation: Box<PreparedConversation>,
    },
    Rejected {
        place: Place,
        problem: LineProblem,
    },
}

/// How the reader reads records: the shapes allowed, and what fills in missing fields.
#[derive(Debug, Clone, Default)]
pub(crate) struct RecordSettings {
    pub format: ShapeFilter,
    pub defaults: Defaults,
    pub lossy: bool,
}

/// An I/O error while reading, with the line it happened on.
#[derive(Debug)]
pub(crate) struct ReadFailure {
    pub line: u64,
    pub source: io::Error,
}

/// What the reader sends. `End` is explicit, so that a reader that died is never taken
/// for the end of the file.
#[derive(Debug)]
pub(crate) enum Batch {
    Items(Vec<Item>),
    Failed(ReadFailure),
    End,
}

/// The writer's ends of the reader thread's channels.
pub(crate) struct ReaderChannels {
    pub batches: Receiver<Batch>,
    /// Written batches go back here to be freed by the reader.
    pub done: SyncSender<Vec<Item>>,
}

/// Starts the reader thread. It stops at the end of the input, at a read error (sent as
/// the last batch), or as soon as the receiver is dropped. `stored`, a read-only
/// connection to the store, spares counting the tokens of conversations stored already
/// (a re-import); without it every answer is counted.
pub(crate) fn spawn(
    input: Box<dyn BufRead + Send>,
    progress: ProgressBar,
    stored: Option<Connection>,
    settings: RecordSettings,
) -> (ReaderChannels, JoinHandle<()>) {
    let (tx, batches) = sync_channel(IN_FLIGHT);
    let (done, returned) = sync_channel(IN_FLIGHT + 2);
    let handle = std::thread::Builder::new()
        .name("turnbench-import-read".into())
        .spawn(move || read_all(input, &tx, &returned, &progress, stored.as_ref(), &settings))
        // Spawning fails only when the OS cannot create a thread at all; no input reaches this.
        .expect("spawn import reader thread");
    (ReaderChannels { batches, done }, handle)
}

fn read_all(
    input: Box<dyn BufRead + Send>,
    tx: &SyncSender<Batch>,
    returned: &Receiver<Vec<Item>>,
    progress: &ProgressBar,
    stored: Option<&Connection>,
    settings: &RecordSettings,
) {
    let mut records = match Records::open(input) {
        Ok(records) => records,
        Err(source) => {
            let _ = tx.send(Batch::Failed(ReadFailure { line: 1, source }));
            return;
        }
    };
    let mut out = Out {
        tx,
        returned,
        stored,
        batch: Vec::with_capacity(BATCH),
    };
    let mut scratch = Vec::new();
    // OpenAI Responses calls, held until the end of the file to be joined into chains.
    let mut chains = Chains::default();
    // Langfuse and OpenTelemetry model calls, spilled to be grouped by trace at the end.
    let mut groups = Spill::default();
    loop {
        let next = match records.next_record() {
            Ok(Some(next)) => next,
            Ok(None) => break,
            Err(source) => return out.fail(records.line(), source),
        };
        let items = match prepare_next(next, settings, &mut scratch, &mut chains, &mut groups) {
            Ok(items) => items,
            Err(e) => return out.fail(records.line(), io::Error::other(e)),
        };
        let sent = out.batch.len();
        if !out.push(items) {
            return; // the writer stopped (--strict, or a store error)
        }
        if out.batch.len() < sent {
            progress.set_position(records.bytes());
        }
    }
    // Held records, joined: Responses chains, then trace groups.
    let mut prepare = |place: Place, joined: Result<Normalised, LineProblem>| {
        let prepared = joined.and_then(|n| prepare_normalised(n, &settings.defaults, &mut scratch));
        match prepared {
            Ok((shape, c)) => Item::Conversation {
                place,
                shape,
                conversation: Box::new(c),
            },
            Err(problem) => Item::Rejected { place, problem },
        }
    };
    for (place, joined) in chains.join() {
        if !out.push([prepare(place, joined)]) {
            return;
        }
    }
    let mut open = true;
    let grouped = groups.join(|place, joined| {
        open = out.push([prepare(place, joined)]);
        open
    });
    if !open {
        return;
    }
    if let Err(e) = grouped {
        return out.fail(records.line(), io::Error::other(e));
    }
    progress.set_position(records.bytes());
    if !out.batch.is_empty() && !out.send() {
        return;
    }
    let _ = tx.send(Batch::End);
}

/// Prepared records on their way to the writer, in batches of [`BATCH`].
struct Out<'a> {
    tx: &'a SyncSender<Batch>,
    returned: &'a Receiver<Vec<Item>>,
    stored: Option<&'a Connection>,
    batch: Vec<Item>,
}

impl Out<'_> {
    /// Adds the items, sending each full batch; false when the writer has stopped.
    fn push(&mut self, items: impl IntoIterator<Item = Item>) -> bool {
        for item in items {
            self.batch.push(item);
            if self.batch.len() >= BATCH && !self.send() {
                return false;
            }
        }
        true
    }

    /// Sends the batch (its tokens counted); false when the writer has stopped.
    fn send(&mut self) -> bool {
        count_batch(&mut self.batch, self.stored);
        let next = recycle(self.returned).unwrap_or_else(|| Vec::with_capacity(BATCH));
        let full = std::mem::replace(&mut self.batch, next);
        self.tx.send(Batch::Items(full)).is_ok()
    }

    /// Sends what was read before a failure, then the failure.
    fn fail(&mut self, line: u64, source: io::Error) {
        if !self.batch.is_empty() && !self.send() {
            return;
        }
        let _ = self.tx.send(Batch::Failed(ReadFailure { line, source }));
    }
}

/// The record prepared; nothing for a Responses call held in `chains` or model calls
/// spilled to `groups` (but a rejection for each call refused).
fn prepare_next(
    next: Next,
    settings: &RecordSettings,
    scratch: &mut Vec<u8>,
    chains: &mut Chains<Place>,
    groups: &mut Spill,
) -> Result<Vec<Item>, SpillError> {
    Ok(vec![match next {
        Next::Record { place, text } => {
            match read_or_hold(
                text,
                settings.format,
                settings.lossy,
                &settings.defaults,
                scratch,
            ) {
                Ok(Read::Prepared(shape, conversation)) => Item::Conversation {
                    place,
                    shape,
                    conversation,
                },
                Ok(Read::Held(call)) => {
                    chains.add(place, *call);
                    return Ok(Vec::new());
                }
                Ok(Read::Pieces(pieces)) => {
                    let mut refused = Vec::new();
                    for piece in pieces {
                        match piece {
                            Ok(call) => groups.add(place, call)?,
                            Err(problem) => refused.push(Item::Rejected { place, problem }),
                        }
                    }
                    return Ok(refused);
                }
                Err(problem) => Item::Rejected { place, problem },
            }
        }
        Next::Broken { place, problem } => Item::Rejected { place, problem },
    }])
}

/// Visible tokens of the batch's conversations, counted before the writer gets them;
/// not those whose uid is stored already (committed: the writer will skip them too).
fn count_batch(batch: &mut [Item], stored: Option<&Connection>) {
    let mut is_stored = stored.and_then(|c| {
        c.prepare_cached("SELECT 1 FROM conversations WHERE uid = ?1")
            .ok()
    });
    count_visible_tokens(batch.iter_mut().filter_map(|item| match item {
        Item::Conversation { conversation, .. } => {
            let uid = &conversation.record.uid;
            // A failed look-up counts: a count too many costs time, never a wrong row.
            let known = is_stored
                .as_mut()
                .is_some_and(|q| q.exists([uid]).unwrap_or(false));
            (!known).then_some(conversation.as_mut())
        }
        Item::Rejected { .. } => None,
    }));
}

/// Frees the batches the writer has handed back; returns one emptied vector to reuse.
fn recycle(returned: &Receiver<Vec<Item>>) -> Option<Vec<Item>> {
    let mut spare = None;
    loop {
        match returned.try_recv() {
            Ok(mut written) => {
                written.clear();
                spare = Some(written);
            }
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => return spare,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_thread_sends_every_line_in_order() {
        let mut text = String::new();
        for i in 0..600 {
            if i == 7 {
                text.push_str("not json\n");
            } else {
                text.push_str(&format!(
                    "{{\"id\":\"c{i}\",\"messages\":[{{\"role\":\"user\",\"content\":\"q\"}},{{\"role\":\"assistant\",\"content\":\"a\"}}]}}\n"
                ));
            }
        }
        let (channels, handle) = spawn(
            Box::new(io::Cursor::new(text.into_bytes())),
            ProgressBar::hidden(),
            None,
            RecordSettings::default(),
        );
        let mut items: Vec<Item> = Vec::new();
        for batch in channels.batches.iter() {
            match batch {
                Batch::Items(more) => items.extend(more),
                Batch::End => break,
                Batch::Failed(f) => panic!("{f:?}"),
            }
        }
        handle.join().unwrap();
        assert_eq!(items.len(), 600);
        assert!(matches!(
            items[7],
            Item::Rejected {
                place: Place {
                    line: 8,
                    record: None
                },
                ..
            }
        ));
        match &items[599] {
            Item::Conversation {
                place,
                shape,
                conversation,
            } => {
                assert_eq!(*place, Place::line(600));
                assert_eq!(*shape, Shape::Turnbench);
                assert_eq!(conversation.record.uid, "c599");
            }
            other => panic!("{other:?}"),
        }
    }
}
