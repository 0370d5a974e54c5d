//! Mends streamed JSON chunks whose strings hold lone UTF-16 surrogate escapes.
//!
//! A server written in JavaScript that cuts an answer into chunks with `String.slice` cuts
//! by UTF-16 unit, so a character outside the Basic Multilingual Plane (an emoji, say) can
//! be split in two: one chunk's text ends with the escape of its high surrogate
//! (`"…\ud83d"`), the next chunk's text starts with the low one (`"\ude00…"`). Each chunk
//! is valid JSON by RFC 8259's grammar and a JavaScript client joins the halves again, but
//! serde_json refuses a lone surrogate, which would make a good answer `malformed`.
//! Seen from `@dwmkerr/mock-llm` (`tests/third_party.rs`).
//!
//! Only chunks that failed to parse come here, so well-formed streams pay nothing.

/// `data` with its lone surrogate escapes mended, or `None` when it has none.
///
/// A lone high surrogate that ends a string is cut off and handed back in `carry_out`; a
/// lone low surrogate that starts a string is joined with `carried` (the previous chunk's
/// cut-off half) into the character they encode. Any other lone surrogate becomes U+FFFD,
/// as a lossy UTF-16 decoder would make it; a cut-off half that no next chunk completes is
/// dropped.
pub fn mend(data: &str, carried: Option<u16>, carry_out: &mut Option<u16>) -> Option<String> {
    let b = data.as_bytes();
    let mut carried = carried;
    let mut out = String::new();
    // Bytes of `data` before this index are in `out` (or were replaced).
    let mut copied = 0;
    let mut in_string = false;
    let mut string_start = 0;
    let mut i = 0;
    while i < b.len() {
        if !in_string {
            if b[i] == b'"' {
                in_string = true;
                string_start = i + 1;
            }
            i += 1;
            continue;
        }
        match b[i] {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' if b.get(i + 1) == Some(&b'u') => {
                let Some(unit) = hex4(b, i + 2) else {
                    i += 2; // a broken escape: left for the JSON parser to report
                    continue;
                };
                let replacement = if is_high(unit) {
                    if b.get(i + 6) == Some(&b'\\')
                        && b.get(i + 7) == Some(&b'u')
                        && hex4(b, i + 8).is_some_and(is_low)
                    {
                        i += 12; // a whole pair
                        continue;
                    }
                    if b.get(i + 6) == Some(&b'"') {
                        *carry_out = Some(unit);
                        String::new()
                    } else {
                        '\u{FFFD}'.to_string()
                    }
                } else if is_low(unit) {
                    match carried.take() {
                        Some(high) if i == string_start => joined(high, unit).to_string(),
                        _ => '\u{FFFD}'.to_string(),
                    }
                } else {
                    i += 6;
                    continue;
                };
                out.push_str(&data[copied..i]);
                out.push_str(&replacement);
                i += 6;
                copied = i;
            }
            b'\\' => i += 2, // \" \\ \n …: the escaped byte never ends or starts a string
            _ => i += 1,
        }
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&data[copied..]);
    Some(out)
}

fn hex4(b: &[u8], at: usize) -> Option<u16> {
    let digits = std::str::from_utf8(b.get(at..at + 4)?).ok()?;
    if !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(digits, 16).ok()
}

fn is_high(unit: u16) -> bool {
    (0xD800..=0xDBFF).contains(&unit)
}

fn is_low(unit: u16) -> bool {
    (0xDC00..=0xDFFF).contains(&unit)
}

fn joined(high: u16, low: u16) -> char {
    let code = 0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
    // A high and a low surrogate always encode a scalar value in U+10000..=U+10FFFF.
    char::from_u32(code).unwrap_or('\u{FFFD}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_cut_between_two_chunks_is_joined() {
        let mut carry = None;
        let first = mend(r#"{"c":"ab\ud83d"}"#, None, &mut carry).unwrap();
        assert_eq!(first, r#"{"c":"ab"}"#);
        assert_eq!(carry, Some(0xD83D));
        let mut next = None;
        let second = mend(r#"{"id":"x","c":"\ude00cd"}"#, carry, &mut next).unwrap();
        assert_eq!(second, r#"{"id":"x","c":"😀cd"}"#);
        assert_eq!(next, None);
    }

    #[test]
    fn well_formed_text_is_left_alone() {
        let mut carry = None;
        for text in [
            r#"{"c":"plain"}"#,
            r#"{"c":"pair \ud83d\ude00 and \u00e9"}"#,
            r#"{"c":"an escaped backslash then u: \\ud83d"}"#,
            r#"{"c":"quote \" then \\"}"#,
        ] {
            assert_eq!(mend(text, None, &mut carry), None, "{text}");
            assert_eq!(carry, None);
        }
    }

    #[test]
    fn other_lone_surrogates_become_replacement_characters() {
        let mut carry = None;
        // A high one inside a string, a low one with nothing carried, a low one not at a
        // string's start: each is U+FFFD, and nothing is carried.
        let out = mend(r#"{"c":"a\ud83db\ude00","d":"x\ude00"}"#, None, &mut carry).unwrap();
        assert_eq!(out, r#"{"c":"a�b�","d":"x�"}"#);
        assert_eq!(carry, None);
        let out = mend(r#"{"c":"x\ude00"}"#, Some(0xD83D), &mut carry).unwrap();
        assert_eq!(
            out, r#"{"c":"x�"}"#,
            "a carried half joins only a string's start"
        );
        // Upper-case hex, as some encoders write it.
        let out = mend(r#"{"c":"\uDE00"}"#, Some(0xD83D), &mut carry).unwrap();
        assert_eq!(out, r#"{"c":"😀"}"#);
    }

    #[test]
    fn every_result_parses() {
        let mut carry = None;
        for text in [
            r#"{"c":"\ud83d"}"#,
            r#"{"c":"\ude00"}"#,
            r#"{"c":"\ud83d\ud83d\ude00"}"#,
            r#"{"c":"\ud83d\\"}"#,
        ] {
            let mended = mend(text, Some(0xD83D), &mut carry).unwrap();
            serde_json::from_str::<serde_json::Value>(&mended).unwrap();
        }
        // A broken escape is left for the JSON parser to report.
        assert_eq!(mend(r#"{"c":"\ud83"}"#, None, &mut carry), None);
    }
}
