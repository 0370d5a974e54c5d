//! JSON Lines input, read one line at a time: the line numbers every message names
//! (`file:line`), and the problem with a line (a field as a JSON path and what is wrong).
//! One copy, shared by `import` (transcripts), `replay` (recorded sessions) and `label`
//! (human labels), and the one shape of a record one of them refused (`Rejection`).

use std::fmt;
use std::io::{self, BufRead};
use std::path::PathBuf;

/// What is wrong with a line. `field` is a JSON path, empty for the line as a whole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineProblem {
    pub field: String,
    pub problem: String,
}

impl LineProblem {
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        LineProblem {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

impl fmt::Display for LineProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.problem)
        } else {
            write!(f, "{}: {}", self.field, self.problem)
        }
    }
}

/// Where a record starts: its line, and for an element of an array its number (from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub line: u64,
    pub record: Option<u64>,
}

impl Place {
    pub fn line(line: u64) -> Place {
        Place { line, record: None }
    }
}

/// `12`, or `12: record 3` for an element of an array (after `FILE:`).
impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.record {
            Some(n) => write!(f, "{}: record {n}", self.line),
            None => write!(f, "{}", self.line),
        }
    }
}

/// A record that was not imported (a transcript, a session, a label), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub path: PathBuf,
    pub place: Place,
    pub problem: LineProblem,
}

/// `FILE:LINE: problem`, or `FILE:LINE: record N: problem` for an element of an array.
impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}",
            self.path.display(),
            self.place,
            self.problem
        )
    }
}

/// Non-blank lines with their 1-based numbers, without the line ending or a leading BOM.
pub struct Lines<R> {
    input: R,
    buf: Vec<u8>,
    /// Number of the last line read.
    pub number: u64,
    /// Bytes consumed so far (for progress).
    pub bytes: u64,
    /// Byte offset in the input of the last line returned (its first byte after any BOM).
    pub start: u64,
}

impl<R: BufRead> Lines<R> {
    pub fn new(input: R) -> Self {
        Lines {
            input,
            buf: Vec::new(),
            number: 0,
            bytes: 0,
            start: 0,
        }
    }

    pub fn next_line(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        Ok(self.next_line_at()?.map(|(n, _, text)| (n, text)))
    }

    /// [`Self::next_line`] with the byte offset where the line starts.
    pub fn next_line_at(&mut self) -> io::Result<Option<(u64, u64, &[u8])>> {
        loop {
            self.buf.clear();
            let line_start = self.bytes;
            let n = self.input.read_until(b'\n', &mut self.buf)?;
            if n == 0 {
                return Ok(None);
            }
            self.number += 1;
            self.bytes += n as u64;
            let mut text = self.buf.as_slice();
            if self.number == 1 {
                text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            }
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let end = text.len()
                - text
                    .iter()
                    .rev()
                    .take_while(|b| **b == b'\n' || **b == b'\r')
                    .count();
            // Re-slice from the buffer so the borrow ends with `self`.
            let start = self.buf.len() - text.len();
            self.start = line_start + start as u64;
            return Ok(Some((
                self.number,
                self.start,
                &self.buf[start..start + end],
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &[u8]) -> Vec<(u64, String)> {
        let mut lines = Lines::new(text);
        let mut out = Vec::new();
        while let Some((n, l)) = lines.next_line().unwrap() {
            out.push((n, String::from_utf8(l.to_vec()).unwrap()));
        }
        out
    }

    #[test]
    fn each_line_knows_where_it_starts() {
        let text = b"\xEF\xBB\xBFab\r\n\ncd\n";
        let mut lines = Lines::new(&text[..]);
        let (_, at, l) = lines.next_line_at().unwrap().unwrap();
        assert_eq!((l, at), (&b"ab"[..], 3));
        let (_, at, l) = lines.next_line_at().unwrap().unwrap();
        assert_eq!((l, at), (&b"cd"[..], 8));
        assert_eq!(lines.start, 8);
    }

    #[test]
    fn numbers_skip_blank_lines_and_strip_endings() {
        let got = all(b"\xEF\xBB\xBF{\"a\":1}\r\n\n   \n{\"b\":2}\n{\"c\":3}");
        assert_eq!(
            got,
            vec![
                (1, "{\"a\":1}".to_string()),
                (4, "{\"b\":2}".to_string()),
                (5, "{\"c\":3}".to_string())
            ]
        );
    }
}
