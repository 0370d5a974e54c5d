//! Property tests (proptest) of the readers that take provider bytes and user files: the
//! SSE reader with the answer reader, and the import reader. Case counts stay modest so
//! the suite stays fast on two cores.

use std::io::{BufRead, BufReader, Read};

use proptest::prelude::*;
use turnbench::client::Reply;
use turnbench::client::completion::AnswerAccumulator;
use turnbench::client::conclude;
use turnbench::client::sse::{SseEvent, SseParser};

fn parse_in(bytes: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    let mut at = 0;
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    for c in cuts {
        p.feed(&bytes[at..c.max(at)], &mut out);
        at = c.max(at);
    }
    p.feed(&bytes[at..], &mut out);
    p.finish(&mut out);
    out
}

/// The outcome a turn gets from these events: exactly one, whatever they hold.
fn outcome_of(events: Vec<SseEvent>) -> Reply {
    let mut acc = AnswerAccumulator::default();
    for (i, e) in events.into_iter().enumerate() {
        if !acc.on_event(e, i as f64) {
            break;
        }
    }
    conclude(Reply::default(), &acc, None)
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(serde_json::Value::from),
        "[a-z<>/ \u{e9}\u{2713}]{0,12}".prop_map(serde_json::Value::from),
        prop_oneof![
            Just("stop"),
            Just("length"),
            Just("content_filter"),
            Just("rate_limit_exceeded"),
            Just("server_error"),
            Just("</think>")
        ]
        .prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    Just("choices".to_string()),
                    Just("delta".to_string()),
                    Just("content".to_string()),
                    Just("reasoning_content".to_string()),
                    Just("finish_reason".to_string()),
                    Just("error".to_string()),
                    Just("code".to_string()),
                    Just("type".to_string()),
                    Just("usage".to_string()),
                    Just("object".to_string()),
                    Just("message".to_string()),
                    "[a-z_]{1,8}",
                ],
                inner,
                0..5
            )
            .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Arbitrary bytes cut anywhere (mid-UTF-8, mid-CRLF): the same events as read whole,
    /// never a panic, one outcome.
    #[test]
    fn sse_bytes_split_anywhere(bytes in prop::collection::vec(any::<u8>(), 0..400),
                                cuts in prop::collection::vec(any::<usize>(), 0..8)) {
        let whole = parse_in(&bytes, &[]);
        prop_assert_eq!(&parse_in(&bytes, &cuts), &whole);
        prop_assert!(outcome_of(whole).outcome.is_some());
    }

    /// Arbitrary JSON in `data:` lines (and `event: error`, `error:` fields), in chunks cut
    /// anywhere: never a panic, exactly one outcome, the same one whatever the cuts.
    #[test]
    fn arbitrary_json_events(values in prop::collection::vec(json_value(), 0..6),
                             kinds in prop::collection::vec(0u8..4, 6),
                             cuts in prop::collection::vec(any::<usize>(), 0..6)) {
        let mut text = String::from("\u{feff}");
        for (v, k) in values.iter().zip(&kinds) {
            match k {
                0 => text.push_str(&format!("data: {v}\r\n\r\n")),
                1 => text.push_str(&format!("event: error\ndata: {v}\n\n")),
                2 => text.push_str(&format!("error: {v}\n\n")),
                _ => text.push_str(&format!(": keep-alive\ndata: {v}\n\ndata: [DONE]\n\n")),
            }
        }
        let bytes = text.as_bytes();
        let a = outcome_of(parse_in(bytes, &[]));
        let b = outcome_of(parse_in(bytes, &cuts));
        prop_assert!(a.outcome.is_some());
        prop_assert_eq!(a.outcome, b.outcome);
        prop_assert_eq!(&a.answer, &b.answer);
    }

    /// Any line, valid or not, in any shape: prepared or rejected with a reason, never a
    /// panic.
    #[test]
    fn import_lines_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300),
                                v in json_value()) {
        let prepare = |text: &[u8]| turnbench::import::validate::prepare_line(text, &mut Vec::new());
        let _ = prepare(&bytes);
        let lines = [
            serde_json::json!({"messages": [{"role": "user", "content": "q"}, v]}),
            serde_json::json!({"conversations": [{"from": "human", "value": "q"}, v], "system": v}),
            serde_json::json!({"request": {"messages": [v]}, "response": v, "metadata": v, "startTime": v}),
            serde_json::json!({"request": v, "response": {"choices": [{"message": v}], "usage": v}, "endTime": v}),
            v.clone(),
        ];
        for line in lines {
            let _ = prepare(line.to_string().as_bytes());
        }
    }
}

/// A reader that hands out its bytes in the given piece sizes (a slow pipe).
struct Pieces {
    data: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
    n: usize,
}

impl Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let size = self
            .sizes
            .get(self.n % self.sizes.len().max(1))
            .copied()
            .unwrap_or(7)
            .max(1);
        self.n += 1;
        let end = (self.at + size.min(buf.len())).min(self.data.len());
        let got = end - self.at;
        buf[..got].copy_from_slice(&self.data[self.at..end]);
        self.at = end;
        Ok(got)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

    /// A whole file of arbitrary lines, read in arbitrary pieces: every non-blank line is
    /// imported, already present or rejected, exactly once; nothing panics.
    #[test]
    fn import_files_account_for_every_line(
        lines in prop::collection::vec(
            prop_oneof![
                prop::collection::vec(any::<u8>(), 0..60).prop_map(|b| b.into_iter().filter(|c| *c != b'\n').collect::<Vec<u8>>()),
                json_value().prop_map(|v| serde_json::json!({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": v.to_string()}]}).to_string().into_bytes()),
            ],
            0..40),
        sizes in prop::collection::vec(1usize..64, 1..5),
    ) {
        let mut data = Vec::new();
        for l in &lines {
            data.extend_from_slice(l);
            data.push(b'\n');
        }
        // A file whose first character is `[` is a JSON array, not JSON Lines (below).
        prop_assume!(first_byte(&data) != Some(b'['));
        let non_blank = lines
            .iter()
            .enumerate()
            .filter(|(i, l)| {
                let l: &[u8] = if *i == 0 { l.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(l) } else { l };
                !l.iter().all(u8::is_ascii_whitespace)
            })
            .count() as u64;
        let dir = tempfile::tempdir().unwrap();
        let mut conn = turnbench::store::open(&dir.path().join("p.db")).unwrap();
        let input: Box<dyn BufRead + Send> =
            Box::new(BufReader::with_capacity(16, Pieces { data, at: 0, sizes, n: 0 }));
        let opts = turnbench::import::ImportOptions::default();
        let summary = turnbench::import::import_reader(
            &mut conn,
            std::path::Path::new("p.jsonl"),
            input,
            None,
            &opts,
            &mut |_| {},
        )
        .unwrap();
        prop_assert_eq!(summary.imported + summary.already_present + summary.rejected, non_blank);
    }
}

/// The first byte after a BOM and whitespace.
fn first_byte(data: &[u8]) -> Option<u8> {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    data.iter().copied().find(|b| !b.is_ascii_whitespace())
}

fn import_bytes(data: Vec<u8>, sizes: Vec<usize>) -> turnbench::import::FileSummary {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = turnbench::store::open(&dir.path().join("p.db")).unwrap();
    let input: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(
        16,
        Pieces {
            data,
            at: 0,
            sizes,
            n: 0,
        },
    ));
    turnbench::import::import_reader(
        &mut conn,
        std::path::Path::new("p.json"),
        input,
        None,
        &turnbench::import::ImportOptions::default(),
        &mut |_| {},
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

    /// A JSON array of any values, pretty or not, read in arbitrary pieces: every element
    /// is imported, already present or rejected, exactly once.
    #[test]
    fn import_arrays_account_for_every_element(
        elements in prop::collection::vec(
            prop_oneof![
                json_value(),
                json_value().prop_map(|v| serde_json::json!({"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": v.to_string()}]})),
            ],
            0..20),
        pretty in any::<bool>(),
        sizes in prop::collection::vec(1usize..64, 1..5),
    ) {
        let array = serde_json::Value::from(elements.clone());
        let text = if pretty { serde_json::to_string_pretty(&array) } else { serde_json::to_string(&array) };
        let summary = import_bytes(text.unwrap().into_bytes(), sizes);
        prop_assert_eq!(
            summary.imported + summary.already_present + summary.rejected,
            elements.len() as u64
        );
    }

    /// Any bytes after a `[`: read or rejected, never a panic or a hang.
    #[test]
    fn import_broken_arrays_never_panic(
        bytes in prop::collection::vec(prop_oneof![Just(b'['), Just(b']'), Just(b'{'), Just(b'}'), Just(b'"'), Just(b'\\'), Just(b','), Just(b'\n'), any::<u8>()], 0..200),
        sizes in prop::collection::vec(1usize..64, 1..5),
    ) {
        let mut data = b"[".to_vec();
        data.extend_from_slice(&bytes);
        let _ = import_bytes(data, sizes);
    }
}
