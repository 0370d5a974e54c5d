//! The records of a transcript file and where each starts: JSON Lines (one record a line,
//! read by [`Lines`]), or one JSON array of records, streamed element by element so that
//! memory stays flat whatever the file size. A file whose first byte after a BOM and
//! whitespace is `[` is an array.
//!
//! A file that starts with an object that goes on past its first line and ends, as JSON, on
//! a later one is JSON documents one after another (a pretty-printed API response such as
//! Langfuse's `{"data": [...]}`, or `jq` output): each document is a record, cut by the same
//! scan. A first object that never ends, or is not JSON, is a bad first line of JSON Lines.
//!
//! An array is cut into elements by a scan of brackets and strings, not parsed: each
//! element is then parsed like a line, so a bad element is rejected alone and the next one
//! read. Only a break in the array itself (a missing `,`, a file cut inside an element,
//! text after the closing `]`) stops the reading, as one rejection that says so.

use std::io::{self, BufRead, Cursor, Read};

use crate::jsonl::{LineProblem, Lines, Place};

const BOM: &[u8] = b"\xEF\xBB\xBF";

const TRAILING_COMMA: &str = "a `,` right before the closing `]`: a trailing comma is not \
                              JSON; remove it (every record before was read)";

/// What the reader found next.
#[derive(Debug)]
pub(crate) enum Next<'a> {
    Record {
        place: Place,
        text: &'a [u8],
    },
    /// The array cannot be read on from here: nothing after it is read.
    Broken {
        place: Place,
        problem: LineProblem,
    },
}

pub(crate) enum Records {
    Lines(Lines<Box<dyn BufRead + Send>>),
    Array(ArrayRecords),
}

impl Records {
    /// Looks at the first bytes to tell an array from JSON Lines; nothing is lost (what
    /// was looked at is read again).
    pub(crate) fn open(mut input: Box<dyn BufRead + Send>) -> io::Result<Records> {
        let (mut seen, first) = sniff(&mut input)?;
        // An object that goes on past its line: documents, not lines.
        let documents = first == Some(b'{') && starts_documents(&mut input, &mut seen)?;
        let input: Box<dyn BufRead + Send> = if seen.is_empty() {
            input
        } else {
            Box::new(Cursor::new(seen).chain(input))
        };
        Ok(if first == Some(b'[') {
            Records::Array(ArrayRecords::new(input, false))
        } else if documents {
            Records::Array(ArrayRecords::new(input, true))
        } else {
            Records::Lines(Lines::new(input))
        })
    }

    pub(crate) fn next_record(&mut self) -> io::Result<Option<Next<'_>>> {
        match self {
            Records::Lines(lines) => Ok(lines.next_line()?.map(|(line, text)| Next::Record {
                place: Place::line(line),
                text,
            })),
            Records::Array(array) => array.next_record(),
        }
    }

    /// Bytes read so far (for progress).
    pub(crate) fn bytes(&self) -> u64 {
        match self {
            Records::Lines(lines) => lines.bytes,
            Records::Array(array) => array.bytes,
        }
    }

    /// The line being read (where a read error happened).
    pub(crate) fn line(&self) -> u64 {
        match self {
            Records::Lines(lines) => lines.number + 1,
            Records::Array(array) => array.line,
        }
    }
}

/// Bytes of a first object read ahead, without seeing its end, before the file is taken for
/// documents (a large pretty-printed export).
const LOOKAHEAD: usize = 8 << 20;

/// Reads the first record's object into `seen`, a line at a time: whether the file is JSON
/// documents (the object goes on past its first line and ends, as JSON, on a later one)
/// rather than JSON Lines. A first object that ends on its line, never ends, holds a line
/// break inside a string or is not JSON makes the file JSON Lines: a bad first line is
/// rejected alone and every line after it read, where taking it for the start of a document
/// would have swallowed the rest of the file into one rejection. An object still open after
/// [`LOOKAHEAD`] bytes is taken for a document.
fn starts_documents(input: &mut Box<dyn BufRead + Send>, seen: &mut Vec<u8>) -> io::Result<bool> {
    let mut from = seen.len();
    // Blank lines before it (left in the buffer by `sniff`) are read past.
    while input.read_until(b'\n', seen)? > 0 {
        let line = seen.get(from..).unwrap_or_default();
        if !line
            .iter()
            .all(|b| b.is_ascii_whitespace() || BOM.contains(b))
        {
            break;
        }
        from = seen.len();
    }
    let line = seen.get(from..).unwrap_or_default();
    let start = from
        + line
            .iter()
            .position(|b| !b.is_ascii_whitespace() && !BOM.contains(b))
            .unwrap_or(line.len());
    let mut scan = Scan::default();
    let mut at = start;
    loop {
        let chunk = seen.get(at..).unwrap_or_default();
        let (taken, complete) = scan.feed(chunk);
        if complete {
            let object = seen.get(start..at + taken).unwrap_or_default();
            return Ok(object.contains(&b'\n')
                && serde_json::from_slice::<serde::de::IgnoredAny>(object).is_ok());
        }
        if scan.in_string && chunk.ends_with(b"\n") {
            return Ok(false);
        }
        if seen.len() - start > LOOKAHEAD {
            return Ok(true);
        }
        at = seen.len();
        if input.read_until(b'\n', seen)? == 0 {
            return Ok(false);
        }
    }
}

/// Reads past a BOM and whitespace to the first other byte, keeping what it read only
/// when it had to take it out of the buffer (leading blanks longer than the buffer).
fn sniff(input: &mut Box<dyn BufRead + Send>) -> io::Result<(Vec<u8>, Option<u8>)> {
    let mut seen = Vec::new();
    let mut bom = 0; // BOM bytes at the start so far
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok((seen, None));
        }
        for (k, &b) in buf.iter().enumerate() {
            if seen.len() + k == bom && BOM.get(bom) == Some(&b) {
                bom += 1;
            } else if !b.is_ascii_whitespace() {
                return Ok((seen, Some(b)));
            }
        }
        seen.extend_from_slice(buf);
        let n = buf.len();
        input.consume(n);
    }
}

/// Where the array reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the opening `[`.
    Open,
    /// After `[`: a record or `]`.
    First,
    /// After a record: `,` or `]`.
    AfterRecord,
    /// After a `,`: a record.
    AfterComma,
    /// After `]`: only whitespace may follow.
    Closed,
    /// Documents one after another: a record, or the end.
    Documents,
    Done,
}

pub(crate) struct ArrayRecords {
    input: Box<dyn BufRead + Send>,
    /// The current record's text.
    buf: Vec<u8>,
    /// The line of the next byte to read (from 1).
    line: u64,
    bytes: u64,
    /// Records found so far.
    records: u64,
    /// The line the last record started on.
    last_start: u64,
    /// BOM bytes skipped at the start.
    bom: usize,
    state: State,
    /// Documents one after another rather than an array.
    documents: bool,
}

impl ArrayRecords {
    fn new(input: Box<dyn BufRead + Send>, documents: bool) -> Self {
        ArrayRecords {
            input,
            buf: Vec::new(),
            line: 1,
            bytes: 0,
            records: 0,
            last_start: 1,
            bom: 0,
            state: if documents {
                State::Documents
            } else {
                State::Open
            },
            documents,
        }
    }

    fn next_record(&mut self) -> io::Result<Option<Next<'_>>> {
        loop {
            if self.state == State::Done {
                return Ok(None);
            }
            let next = self.skip_blanks()?;
            let place = Place::line(self.line);
            let problem = match (self.state, next) {
                (State::Done, _) | (State::Closed | State::Documents, None) => {
                    self.state = State::Done;
                    return Ok(None);
                }
                (State::Open, Some(b'[')) => {
                    self.advance(1);
                    self.state = State::First;
                    continue;
                }
                (State::First | State::AfterRecord, Some(b']')) => {
                    self.advance(1);
                    self.state = State::Closed;
                    continue;
                }
                (State::AfterRecord, Some(b',')) => {
                    self.advance(1);
                    self.state = State::AfterComma;
                    continue;
                }
                (State::AfterComma, Some(b']')) => TRAILING_COMMA.to_string(),
                (State::First | State::AfterComma | State::Documents, Some(_)) => {
                    return self.take_record();
                }
                (State::First | State::AfterRecord | State::AfterComma, None) => format!(
                    "the file ends before the array's closing `]` (after record {}): cut \
                     short? every record before was read",
                    self.records
                ),
                (State::AfterRecord, Some(found)) => format!(
                    "expected `,` or `]` after record {} (which starts on line {}), found {}; \
                     nothing after it was read",
                    self.records,
                    self.last_start,
                    shown(found)
                ),
                (State::Closed, Some(found)) => format!(
                    "{} after the end of the JSON array; a file is one JSON array, or JSON \
                     Lines (one object a line); nothing after it was read",
                    shown(found)
                ),
                (State::Open, _) => "expected a JSON array starting with `[`".to_string(),
            };
            self.state = State::Done;
            return Ok(Some(Next::Broken {
                place,
                problem: LineProblem::new("", problem),
            }));
        }
    }

    /// One element, from its first byte to its end, into `buf`.
    fn take_record(&mut self) -> io::Result<Option<Next<'_>>> {
        self.records += 1;
        self.last_start = self.line;
        let place = Place {
            line: self.line,
            record: Some(self.records),
        };
        self.buf.clear();
        let mut scan = Scan::default();
        loop {
            let chunk = self.input.fill_buf()?;
            if chunk.is_empty() {
                if scan.ended_by_eof() && !self.buf.is_empty() {
                    break;
                }
                self.state = State::Done;
                return Ok(Some(Next::Broken {
                    place,
                    problem: LineProblem::new(
                        "",
                        "the file ends inside this record (an unclosed string, `{` or `[`): \
                         cut short? nothing after it can be read",
                    ),
                }));
            }
            let (taken, complete) = scan.feed(chunk);
            self.buf.extend_from_slice(&chunk[..taken]);
            self.advance(taken);
            if complete {
                break;
            }
        }
        self.state = if self.documents {
            State::Documents
        } else {
            State::AfterRecord
        };
        Ok(Some(Next::Record {
            place,
            text: &self.buf,
        }))
    }

    /// Skips a BOM (at the start) and whitespace; the next byte, not consumed.
    fn skip_blanks(&mut self) -> io::Result<Option<u8>> {
        loop {
            let chunk = self.input.fill_buf()?;
            let Some(first) = chunk.first().copied() else {
                return Ok(None);
            };
            let skip = if self.bytes == self.bom as u64 && BOM.get(self.bom) == Some(&first) {
                self.bom += 1;
                1
            } else {
                chunk.iter().take_while(|b| b.is_ascii_whitespace()).count()
            };
            if skip == 0 {
                return Ok(Some(first));
            }
            self.advance(skip);
        }
    }

    /// Consumes `n` bytes of the buffer, counting its lines.
    fn advance(&mut self, n: usize) {
        if let Ok(chunk) = self.input.fill_buf() {
            let n = n.min(chunk.len());
            self.line += chunk[..n].iter().filter(|b| **b == b'\n').count() as u64;
        }
        self.input.consume(n);
        self.bytes += n as u64;
    }
}

/// A byte for a message: the character, or its code when not printable.
fn shown(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("`{}`", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

/// The scan of one element: nesting depth and whether it is inside a string.
#[derive(Debug, Default)]
struct Scan {
    depth: u32,
    in_string: bool,
    escaped: bool,
    started: bool,
}

impl Scan {
    /// Reads `chunk` on: how many of its bytes belong to the element, and whether the
    /// element ends there. A bare value (number, `true`, ...) ends before the `,`, `]` or
    /// whitespace that follows it; a string, object or array at its closing byte.
    fn feed(&mut self, chunk: &[u8]) -> (usize, bool) {
        for (k, &b) in chunk.iter().enumerate() {
            let first = !self.started;
            self.started = true;
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    if self.depth == 0 {
                        return (k + 1, true);
                    }
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth = self.depth.saturating_add(1),
                b'}' | b']' if self.depth > 0 => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return (k + 1, true);
                    }
                }
                b',' | b'}' | b']' if self.depth == 0 && !first => return (k, true),
                b if self.depth == 0 && b.is_ascii_whitespace() => return (k, true),
                _ => {}
            }
        }
        (chunk.len(), false)
    }

    /// Whether the end of the file ends the element (a bare value), rather than cutting it.
    fn ended_by_eof(&self) -> bool {
        self.depth == 0 && !self.in_string
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every record or break, as (line, record, text or problem), reading `text` in
    /// pieces of `piece` bytes.
    fn all(text: &[u8], piece: usize) -> Vec<(u64, Option<u64>, String)> {
        let input: Box<dyn BufRead + Send> = Box::new(io::BufReader::with_capacity(
            piece,
            Cursor::new(text.to_vec()),
        ));
        let mut records = Records::open(input).unwrap();
        let mut out = Vec::new();
        while let Some(next) = records.next_record().unwrap() {
            out.push(match next {
                Next::Record { place, text } => (
                    place.line,
                    place.record,
                    String::from_utf8_lossy(text).into_owned(),
                ),
                Next::Broken { place, problem } => {
                    (place.line, place.record, format!("BROKEN {problem}"))
                }
            });
        }
        out
    }

    const ARRAY: &[u8] = b"\xEF\xBB\xBF \n[\n  {\"a\": \"x]}\\\"\"},\n  {\"b\": [1, {\"c\": 2}]}, 7 ,\"s,]\" ,\n  {}\n]\n\n";

    #[test]
    fn elements_are_cut_at_their_ends_whatever_the_pieces() {
        let expected = vec![
            (3, Some(1), "{\"a\": \"x]}\\\"\"}".to_string()),
            (4, Some(2), "{\"b\": [1, {\"c\": 2}]}".to_string()),
            (4, Some(3), "7".to_string()),
            (4, Some(4), "\"s,]\"".to_string()),
            (5, Some(5), "{}".to_string()),
        ];
        for piece in [1, 2, 3, 7, 64, 1 << 16] {
            assert_eq!(all(ARRAY, piece), expected, "pieces of {piece}");
        }
    }

    #[test]
    fn json_lines_stay_lines() {
        let got = all(b"\n{\"a\":1}\n[1]\n", 4);
        assert_eq!(
            got,
            vec![(2, None, "{\"a\":1}".into()), (3, None, "[1]".into())]
        );
        assert_eq!(all(b"", 4), vec![]);
        assert_eq!(all(b"  \n \n", 1), vec![]);
        assert_eq!(all(b"[]", 1), vec![]);
    }

    #[test]
    fn breaks_in_the_array_stop_it_with_a_reason() {
        let got = all(b"[{\"a\":1},\n {\"b\":2}\n {\"c\":3}]", 5);
        assert_eq!(got.len(), 3);
        assert_eq!(&got[1].2, "{\"b\":2}");
        assert_eq!(
            got[2],
            (
                3,
                None,
                "BROKEN expected `,` or `]` after record 2 (which starts on line 2), found `{`; \
                 nothing after it was read"
                    .into()
            )
        );
        let got = all(b"[{\"a\":1},\n{\"b\": \"unclosed}]\n", 3);
        assert_eq!(got[1].0, 2);
        assert_eq!(got[1].1, Some(2));
        assert!(
            got[1]
                .2
                .starts_with("BROKEN the file ends inside this record"),
            "{got:?}"
        );
        let got = all(b"[{\"a\":1}]\n[{\"b\":2}]\n", 3);
        assert_eq!(got.len(), 2);
        assert!(
            got[1]
                .2
                .starts_with("BROKEN `[` after the end of the JSON array"),
            "{got:?}"
        );
        assert_eq!(got[1].0, 2);
        let got = all(b"[{\"a\":1},]", 3);
        assert!(
            got[1]
                .2
                .starts_with("BROKEN a `,` right before the closing `]`"),
            "{got:?}"
        );
        let got = all(b"[{\"a\":1},", 3);
        assert!(
            got[1].2.starts_with(
                "BROKEN the file ends before the array's closing `]` (after record 1)"
            ),
            "{got:?}"
        );
        // A bad element is only that element: the scan goes on.
        let got = all(b"[{\"a\":tru}, {\"b\":1}]", 2);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].2, "{\"a\":tru}");
    }

    #[test]
    fn pretty_printed_documents_are_records() {
        let text =
            b"{\n  \"data\": [\n    {\"a\": \"}\"}\n  ]\n}\n{\"b\": 1}\n\n{\n \"c\": [1,\n2]}\n";
        for piece in [1, 3, 64] {
            let got = all(text, piece);
            assert_eq!(got.len(), 3, "{got:?}");
            assert_eq!((got[0].0, got[0].1), (1, Some(1)));
            assert!(got[0].2.ends_with("]\n}"), "{got:?}");
            assert_eq!(got[1], (6, Some(2), "{\"b\": 1}".into()));
            assert_eq!((got[2].0, got[2].1), (8, Some(3)));
        }
        // A first object whole on its line: JSON Lines, as before.
        assert_eq!(all(b"{\"a\":1}\n{\n", 4)[0], (1, None, "{\"a\":1}".into()));
    }

    /// A broken first line that opens an object is a bad line of JSON Lines, not the start
    /// of a document that swallows the rest of the file (found by the import property test).
    #[test]
    fn a_broken_first_object_is_one_bad_line() {
        let good = "{\"messages\": []}";
        // (first line, what follows it): each time, every line a record of its own.
        for (first, rest) in [
            // Never ends (the property test's input).
            (&b"{.\xe0yXzmE\xa3\rOU"[..], "{good}\n{good}\n"),
            // A line break inside a string.
            (b"{\"a\": \"open", "{good}\n]}}\n"),
            // Ends on its line, text after it.
            (b"{\"a\": 1} x", "{good}\n{good}\n"),
            // Ends on a later line, but not as JSON.
            (b"{\"a\": [1 2,", "{good}\n]}}\n"),
        ] {
            let mut text = first.to_vec();
            text.push(b'\n');
            text.extend_from_slice(rest.replace("{good}", good).as_bytes());
            for piece in [1, 3, 64] {
                let got = all(&text, piece);
                let lines: Vec<u64> = got.iter().map(|g| g.0).collect();
                let first = String::from_utf8_lossy(first);
                assert_eq!(lines, [1, 2, 3], "{first:?}: {got:?}");
                assert!(got.iter().all(|g| g.1.is_none()), "{got:?}");
                assert_eq!(got[1].2, good);
            }
        }
    }
}
