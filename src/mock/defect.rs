//! Answer defects: what the mock does to a scenario's reference answer so that checks and a
//! judge have something to find. A defect changes the text in the way a real model's slip
//! does, and only where it applies:
//! - `stale`: the previous turn's reference instead of this one (the correction ignored);
//! - `missing_field`: one top-level key of a JSON object dropped, the rest of the text
//!   kept byte for byte;
//! - `fence`: a JSON answer inside a ```json fence;
//! - `prose`: a sentence before and after the answer.
//!
//! Each defect is drawn on its own from a stream of the request's key kept apart from the
//! timing draws: the same seed gives the same defects on the same requests.

use crate::draw::Draw;
use serde_json::Value;

use super::profile::DefectRates;

/// The sentences a `prose` defect wraps an answer in.
pub const PROSE: &[(&str, &str)] = &[
    (
        "Sure — here is the updated version:",
        "Let me know if you need anything else.",
    ),
    ("Here you go:", "Happy to adjust anything if needed."),
    (
        "Of course! Below is the revised answer.",
        "I hope this helps.",
    ),
];

/// Every draw one answer's defects need, taken up front.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Draws {
    pub stale: f64,
    pub missing_field: f64,
    pub fence: f64,
    pub prose: f64,
    /// Which key a `missing_field` defect drops, and which sentences `prose` uses.
    pub pick: u64,
    /// Whether the answer slips back to an earlier turn's (`super::forget`); drawn last,
    /// so that the draws above are what they were before forgetting existed.
    pub forget: f64,
}

impl Draws {
    pub fn from_key(key: [u8; 32]) -> Draws {
        let seed = *blake3::keyed_hash(&key, b"mock-answer-defects").as_bytes();
        let mut rng = Draw::from_seed(seed);
        Draws {
            stale: rng.unit(),
            missing_field: rng.unit(),
            fence: rng.unit(),
            prose: rng.unit(),
            pick: rng.u64(),
            forget: rng.unit(),
        }
    }
}

/// The answer for a scenario turn whose reference is `current` (the turn before: `prev`),
/// with the defects the draws select. None when there is nothing to answer with (a turn
/// without a reference, not made stale).
pub fn apply(
    rates: &DefectRates,
    current: Option<&str>,
    prev: Option<&str>,
    draws: &Draws,
) -> Option<String> {
    let mut answer = match prev {
        Some(p) if draws.stale < rates.stale => p,
        _ => current?,
    }
    .to_string();
    if draws.missing_field < rates.missing_field
        && let Some((text, _)) = drop_top_level_key(&answer, draws.pick)
    {
        answer = text;
    }
    if draws.fence < rates.fence && is_json_structure(&answer) {
        answer = fence(&answer);
    }
    if draws.prose < rates.prose {
        answer = wrap_in_prose(&answer, draws.pick);
    }
    Some(answer)
}

/// Whether the text is one JSON object or array (whitespace around allowed).
pub fn is_json_structure(text: &str) -> bool {
    matches!(
        serde_json::from_str::<Value>(text.trim()),
        Ok(Value::Object(_) | Value::Array(_))
    )
}

pub fn fence(text: &str) -> String {
    format!("```json\n{}\n```", text.trim())
}

pub fn wrap_in_prose(text: &str, pick: u64) -> String {
    let (before, after) = PROSE[(pick % PROSE.len() as u64) as usize];
    format!("{before}\n\n{}\n\n{after}", text.trim())
}

/// `text` without one of its top-level keys (the `pick`-th, modulo their number), and the
/// key dropped. None unless the text is a JSON object with at least one key. The text
/// around the dropped member (layout, key order, number spelling) is kept as it was.
pub fn drop_top_level_key(text: &str, pick: u64) -> Option<(String, String)> {
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text.trim()) else {
        return None;
    };
    if object.is_empty() {
        return None;
    }
    let spans = members(text).filter(|m| m.len() == object.len());
    let Some(spans) = spans else {
        // Not reached for valid JSON; rewritten rather than left whole, to be safe.
        let key = object
            .keys()
            .nth((pick % object.len() as u64) as usize)?
            .clone();
        let mut rest = object;
        rest.remove(&key);
        return Some((serde_json::to_string_pretty(&rest).ok()?, key));
    };
    let n = spans.len();
    let i = (pick % n as u64) as usize;
    let cut = if i + 1 < n {
        // The member, its comma and the layout before the next member.
        spans[i].start..spans[i + 1].start
    } else if n > 1 {
        // The last member and the comma after the one before it.
        spans[i - 1].end..spans[i].end
    } else {
        spans[i].start..spans[i].end
    };
    let out = format!("{}{}", &text[..cut.start], &text[cut.end..]);
    Some((out, spans[i].key.clone()))
}

/// A top-level member of a JSON object: its key, and the byte span from the key's opening
/// quote to the end of its value.
#[derive(Debug, Clone, PartialEq)]
struct Member {
    key: String,
    start: usize,
    end: usize,
}

/// The members of the JSON object `text` holds, in order. Scans bytes: every delimiter is
/// ASCII, and no byte of a multi-byte UTF-8 character is.
fn members(text: &str) -> Option<Vec<Member>> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut out = Vec::new();
    loop {
        i = skip_ws(b, i);
        match b.get(i)? {
            b'}' => return Some(out),
            b'"' => {}
            _ => return None,
        }
        let start = i;
        let key_end = string_end(b, i)?;
        let key: String = serde_json::from_str(&text[start..key_end]).ok()?;
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = value_end(b, i + 1)?;
        let mut end = i;
        while end > start && b[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        out.push(Member { key, start, end });
        match b[i] {
            b',' => i += 1,
            _ => return Some(out),
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The index just past the string starting at `i` (a `"`).
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

/// The index of the `,` or `}` that ends the value starting at or after `i`.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() {
        match b[j] {
            b'"' => {
                j = string_end(b, j)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => return Some(j),
            b'}' | b']' => depth -= 1,
            b',' if depth == 0 => return Some(j),
            _ => {}
        }
        j += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;

    fn invoice_final() -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios/struct-invoice-extraction.toml");
        let scenario = Scenario::load(&path).unwrap();
        scenario.turns.last().unwrap().reference.clone().unwrap()
    }

    fn keys(text: &str) -> Vec<String> {
        match serde_json::from_str::<Value>(text.trim()).unwrap() {
            Value::Object(o) => o.keys().cloned().collect(),
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn missing_field_drops_exactly_one_key_and_keeps_the_rest_verbatim() {
        let reference = invoice_final();
        let all = keys(&reference);
        assert_eq!(all.len(), 11);
        let original: Value = serde_json::from_str(reference.trim()).unwrap();
        let mut dropped_keys = std::collections::BTreeSet::new();
        for pick in 0..11u64 {
            let (text, dropped) = drop_top_level_key(&reference, pick).unwrap();
            let v: Value = serde_json::from_str(text.trim())
                .unwrap_or_else(|e| panic!("pick {pick}: {e}\n{text}"));
            let left = v.as_object().unwrap();
            assert_eq!(left.len(), 10, "{text}");
            assert!(!left.contains_key(&dropped));
            for (k, value) in left {
                assert_eq!(value, &original[k], "{k} unchanged");
            }
            // Every other line of the reference is still there, in order: nothing was
            // reformatted.
            let kept: Vec<&str> = reference
                .lines()
                .filter(|l| !l.contains(&format!("\"{dropped}\"")))
                .map(|l| l.trim_end_matches(','))
                .collect();
            let got: Vec<&str> = text.lines().map(|l| l.trim_end_matches(',')).collect();
            if dropped != "line_items" {
                assert_eq!(got, kept, "pick {pick}");
            }
            dropped_keys.insert(dropped);
        }
        assert_eq!(dropped_keys.len(), 11, "each pick drops another key");
        // The same pick drops the same key; wrapping around the count.
        assert_eq!(
            drop_top_level_key(&reference, 3),
            drop_top_level_key(&reference, 14)
        );
    }

    #[test]
    fn missing_field_leaves_other_answers_alone() {
        assert_eq!(drop_top_level_key("Plain prose {not json}", 1), None);
        assert_eq!(drop_top_level_key("[1, 2]", 1), None);
        assert_eq!(drop_top_level_key("{}", 1), None);
        assert_eq!(
            drop_top_level_key("{\"only\": {\"a\": [1, \"}\"]}}", 5),
            Some(("{}".to_string(), "only".to_string()))
        );
        let rates = DefectRates {
            missing_field: 1.0,
            ..DefectRates::default()
        };
        let draws = Draws::from_key([4; 32]);
        assert_eq!(
            apply(&rates, Some("Use 50 per page."), None, &draws).as_deref(),
            Some("Use 50 per page.")
        );
        let json = "{\"a\": 1, \"b\": \"x, y\", \"c\": [1, {\"d\": 2}]}";
        let out = apply(&rates, Some(json), None, &draws).unwrap();
        assert_eq!(keys(&out).len(), 2, "{out}");
    }

    #[test]
    fn prose_wraps_the_whole_answer_and_fence_only_json() {
        let rates = DefectRates {
            prose: 1.0,
            ..DefectRates::default()
        };
        let draws = Draws::from_key([9; 32]);
        let out = apply(&rates, Some("The answer."), None, &draws).unwrap();
        let (before, after) = PROSE[(draws.pick % PROSE.len() as u64) as usize];
        assert_eq!(out, format!("{before}\n\nThe answer.\n\n{after}"));

        let rates = DefectRates {
            fence: 1.0,
            ..DefectRates::default()
        };
        let reference = invoice_final();
        let out = apply(&rates, Some(&reference), None, &draws).unwrap();
        assert_eq!(out, format!("```json\n{}\n```", reference.trim()));
        assert_eq!(
            apply(&rates, Some("Not JSON."), None, &draws).as_deref(),
            Some("Not JSON.")
        );
    }

    #[test]
    fn stale_answers_with_the_turn_before() {
        let rates = DefectRates {
            stale: 1.0,
            ..DefectRates::default()
        };
        let draws = Draws::from_key([1; 32]);
        assert_eq!(
            apply(&rates, Some("new"), Some("old"), &draws).as_deref(),
            Some("old")
        );
        // The first turn has nothing to be stale with.
        assert_eq!(
            apply(&rates, Some("new"), None, &draws).as_deref(),
            Some("new")
        );
    }

    #[test]
    fn draws_are_seeded_by_the_key_and_follow_the_rates() {
        assert_eq!(Draws::from_key([5; 32]), Draws::from_key([5; 32]));
        assert_ne!(Draws::from_key([5; 32]), Draws::from_key([6; 32]));
        let rates = DefectRates {
            missing_field: 0.25,
            prose: 0.1,
            ..DefectRates::default()
        };
        let reference = invoice_final();
        let (mut missing, mut prose) = (0, 0);
        for i in 0..2000u32 {
            let mut key = [0u8; 32];
            key[..4].copy_from_slice(&i.to_le_bytes());
            let out = apply(&rates, Some(&reference), None, &Draws::from_key(key)).unwrap();
            missing += usize::from(!out.contains(reference.trim()));
            prose += usize::from(PROSE.iter().any(|(b, _)| out.starts_with(b)));
        }
        assert!((420..580).contains(&missing), "{missing}");
        assert!((150..250).contains(&prose), "{prose}");
    }
}
