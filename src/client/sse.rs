//! An incremental Server-Sent Events reader, tolerant of what real servers send.
//!
//! Written by hand because common crates panic on a leading BOM and drop a final event that
//! has no blank line after it. Handles CRLF, LF or CR line ends split anywhere across
//! reads, `:` comment keep-alives, multi-line `data:`, and llama.cpp's `error:` field, which
//! a strict reader would silently drop.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseEvent {
    /// `data:` lines joined by `\n`, with the `event:` type when one was given.
    Data { event: Option<String>, data: String },
    /// A non-standard `error:` field (llama.cpp server).
    ErrorField(String),
}

#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    data: String,
    has_data: bool,
    event: Option<String>,
    /// The previous read ended in `\r`; a `\n` starting the next read belongs to it.
    after_cr: bool,
    /// Whether the start of the stream (and any BOM) has been dealt with.
    started: bool,
    /// The first bytes, held while they could still be the start of a BOM.
    head: Vec<u8>,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; complete events are appended to `out`. A leading BOM is dropped even
    /// when the reads split it (its first bytes are held until the rest arrives).
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        const BOM: &[u8] = b"\xEF\xBB\xBF";
        if !self.started {
            self.head.extend_from_slice(bytes);
            if self.head.len() < BOM.len() && BOM.starts_with(&self.head) {
                return; // maybe a BOM, not all of it yet
            }
            self.started = true;
            let head = std::mem::take(&mut self.head);
            let rest = head.strip_prefix(BOM).unwrap_or(&head);
            self.scan(rest, out);
            return;
        }
        self.scan(bytes, out);
    }

    fn scan(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.end_line(out),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(out);
                }
                _ => self.line.push(b),
            }
        }
    }

    /// At end of stream: a pending line and event are dispatched (no blank line needed).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.started {
            // Fewer bytes than a BOM arrived, all of them a BOM's first bytes: nothing.
            self.started = true;
            self.head.clear();
        }
        if !self.line.is_empty() {
            self.end_line(out);
        }
        self.dispatch(out);
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.first() == Some(&b':') {
            return; // comment / keep-alive
        }
        let text = String::from_utf8_lossy(&line);
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (text.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_string()),
            "error" => out.push(SseEvent::ErrorField(value.to_string())),
            _ => {} // id, retry and unknown fields carry nothing we use
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if self.has_data {
            self.has_data = false;
            out.push(SseEvent::Data {
                event,
                data: std::mem::take(&mut self.data),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_pieces(input: &[u8], piece: usize) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for chunk in input.chunks(piece.max(1)) {
            p.feed(chunk, &mut out);
        }
        p.finish(&mut out);
        out
    }

    fn data(s: &str) -> SseEvent {
        SseEvent::Data {
            event: None,
            data: s.to_string(),
        }
    }

    #[test]
    fn every_split_gives_the_same_events() {
        let input = "\u{FEFF}: OPENROUTER PROCESSING\r\n\r\ndata: {\"a\":1}\r\n\r\ndata: line1\ndata: line2\n\nevent: error\ndata: {\"e\":2}\r\rdata: [DONE]\n\n".as_bytes();
        let expected = vec![
            data("{\"a\":1}"),
            data("line1\nline2"),
            SseEvent::Data {
                event: Some("error".into()),
                data: "{\"e\":2}".into(),
            },
            data("[DONE]"),
        ];
        for piece in 1..input.len() {
            assert_eq!(
                parse_in_pieces(input, piece),
                expected,
                "piece size {piece}"
            );
        }
    }

    #[test]
    fn final_event_without_blank_line_is_kept() {
        assert_eq!(
            parse_in_pieces(b"data: {\"x\":1}", 3),
            vec![data("{\"x\":1}")]
        );
        assert_eq!(
            parse_in_pieces(b"data: {\"x\":1}\n", 3),
            vec![data("{\"x\":1}")]
        );
    }

    #[test]
    fn llama_cpp_error_field_is_surfaced() {
        let out = parse_in_pieces(b"error: {\"code\":500,\"message\":\"boom\"}\n\n", 5);
        assert_eq!(
            out,
            vec![SseEvent::ErrorField(
                "{\"code\":500,\"message\":\"boom\"}".into()
            )]
        );
    }

    #[test]
    fn multibyte_text_split_mid_character_survives() {
        let input = "data: {\"c\":\"héllo ✓\"}\n\n".as_bytes();
        for piece in 1..8 {
            assert_eq!(
                parse_in_pieces(input, piece),
                vec![data("{\"c\":\"héllo ✓\"}")]
            );
        }
    }

    #[test]
    fn data_without_space_and_empty_data_lines() {
        let out = parse_in_pieces(b"data:x\ndata\ndata: y\n\n", 2);
        assert_eq!(out, vec![data("x\n\ny")]);
    }
}
