//! The grading behind the simulated judge: it reads the transcript a judge prompt carries,
//! finds the scenario whose user turns it holds, and compares each assistant answer with
//! that turn's reference answer.
//!
//! The transcript is read the way `judge::blind` writes it: a line
//! `<<<transcript NONCE begin>>>`, then each message after a line `<<<message N: role>>>`,
//! then `<<<transcript NONCE end>>>`. Messages were redacted and had runs of `<`/`>`
//! broken, so texts are compared with whitespace removed, and a user turn or answer that
//! differs only by a few redacted words still matches by word overlap.
//!
//! Each answer gets one [`Finding`]; the findings give every rubric criterion a value in
//! [0, 1] ([`Grading::criterion`]), which the judge maps onto the rubric's scale:
//!
//! | finding | content | form (final answer) |
//! | --- | --- | --- |
//! | equal to its reference | 1 | 1 |
//! | the reference inside prose or a fence | 1 | 0.6 |
//! | a JSON object missing k of n top-level keys | (n − k)/n | 0.6 · (n − k)/n (× 0.6 if wrapped) |
//! | an earlier turn's reference (stale) | 0.2 | 0.1 |
//! | its reference with names redacted | 1 | 1 |
//! | near its reference (word overlap d ≥ 0.85): a detail changed | 0.5 | d |
//! | unrelated (overlap d) | 0.3 · d | 0.1 |
//! | empty | 0 | 0 |
//!
//! Criteria, by what their id names: task completion = 0.8 × the final answer's content
//! (× 0.9 wrapped, × 0.55 missing fields, × 0.75 stale) + 0.2 × mean content;
//! correctness = mean content; state tracking = 1 − Σ per answer (stale, unrelated or
//! empty 0.5; missing fields 0.35 + the share missing; near 0.5); correction
//! handling = 1 − Σ per answer after the first (stale, unrelated or empty 0.7; missing
//! fields 0.1; near 0.35); final-answer usability = the final answer's form;
//! any other criterion = the mean of those five. `completed`: the final answer's task
//! value is at least 0.75 (a wrapped reference yes; missing fields or stale no).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::plan::ScenarioIndex;
use crate::chat::Message;

/// The version of this grading logic (and of how [`super::judge`] maps it onto a rubric's
/// scale): raise it whenever either changes what a simulated judge answers. It is part of
/// every simulated judgment's key, so judgments by an older grader are asked again.
/// 2: honours a `json_schema` response format.
pub const GRADER_VERSION: u32 = 2;

/// Word overlap (Dice coefficient over word multisets) from which two texts count as the
/// same text with a few words changed (redacted names, a slip).
const NEAR: f64 = 0.85;
/// Word overlap from which a transcript's user turn counts as a scenario's user turn.
const SAME_USER_TURN: f64 = 0.8;

/// What one answer was found to be, against its turn's reference.
#[derive(Debug, Clone, PartialEq)]
pub enum Finding {
    Exact,
    /// The reference with text around it (prose, a fence, a preamble).
    Wrapped,
    /// A JSON object equal to the reference's but for missing top-level keys.
    MissingKeys {
        missing: Vec<String>,
        total: usize,
        wrapped: bool,
    },
    /// The reference of an earlier turn (0-based): a correction was ignored.
    Stale {
        of_turn: usize,
    },
    /// The reference with some words replaced by `[redacted]` (blinding, not the answer).
    Redacted,
    /// Close to the reference with a detail changed: a careful reader sees a wrong answer.
    Near {
        overlap: f64,
    },
    Unrelated {
        overlap: f64,
    },
    Empty,
}

impl Finding {
    /// How much of the reference's content the answer carries, in [0, 1].
    pub fn content(&self) -> f64 {
        match self {
            Finding::Exact | Finding::Wrapped | Finding::Redacted => 1.0,
            Finding::MissingKeys { missing, total, .. } => present_share(missing, *total),
            Finding::Stale { .. } => 0.2,
            Finding::Near { .. } => 0.5,
            Finding::Unrelated { overlap } => 0.3 * overlap,
            Finding::Empty => 0.0,
        }
    }

    /// Whether the user could use the answer as given, in the demanded form, in [0, 1].
    pub fn form(&self) -> f64 {
        match self {
            Finding::Exact | Finding::Redacted => 1.0,
            Finding::Wrapped => 0.6,
            Finding::MissingKeys {
                missing,
                total,
                wrapped,
            } => 0.6 * present_share(missing, *total) * if *wrapped { 0.6 } else { 1.0 },
            Finding::Near { overlap } => *overlap,
            Finding::Stale { .. } | Finding::Unrelated { .. } => 0.1,
            Finding::Empty => 0.0,
        }
    }

    /// How far the answer gets the task done, in [0, 1]: content, less for chatter around
    /// it and much less for a missing field.
    pub fn done(&self) -> f64 {
        let factor = match self {
            Finding::Wrapped => 0.9,
            Finding::MissingKeys { wrapped: true, .. } => 0.55 * 0.9,
            Finding::MissingKeys { .. } => 0.55,
            Finding::Stale { .. } => 0.75,
            _ => 1.0,
        };
        self.content() * factor
    }

    /// What the answer costs in details kept from earlier turns.
    fn state_penalty(&self) -> f64 {
        match self {
            Finding::Exact | Finding::Wrapped | Finding::Redacted => 0.0,
            Finding::MissingKeys { missing, total, .. } => {
                0.35 + (1.0 - present_share(missing, *total))
            }
            Finding::Near { .. } => 0.5,
            Finding::Stale { .. } | Finding::Unrelated { .. } | Finding::Empty => 0.5,
        }
    }

    /// What the answer costs in corrections applied (turns after the first only).
    fn correction_penalty(&self) -> f64 {
        match self {
            Finding::Exact | Finding::Wrapped | Finding::Redacted => 0.0,
            Finding::MissingKeys { .. } => 0.1,
            Finding::Near { .. } => 0.35,
            Finding::Stale { .. } | Finding::Unrelated { .. } | Finding::Empty => 0.7,
        }
    }

    fn describe(&self) -> String {
        match self {
            Finding::Exact => "matches its reference".to_string(),
            Finding::Redacted => "matches its reference but for redacted names".to_string(),
            Finding::Wrapped => "holds its reference with text around it".to_string(),
            Finding::MissingKeys {
                missing,
                total,
                wrapped,
            } => format!(
                "lacks {} of {total} fields ({}){}",
                missing.len(),
                missing.join(", "),
                if *wrapped {
                    ", with text around it"
                } else {
                    ""
                }
            ),
            Finding::Stale { of_turn } => format!(
                "repeats the answer to turn {} (the latest message was ignored)",
                of_turn + 1
            ),
            Finding::Near { overlap } => {
                format!(
                    "is close to its reference ({:.0} % overlap)",
                    overlap * 100.0
                )
            }
            Finding::Unrelated { overlap } => format!(
                "does not answer the turn ({:.0} % overlap with its reference)",
                overlap * 100.0
            ),
            Finding::Empty => "is empty".to_string(),
        }
    }
}

fn present_share(missing: &[String], total: usize) -> f64 {
    if total == 0 {
        return 1.0;
    }
    (total - missing.len().min(total)) as f64 / total as f64
}

/// The findings for one transcript matched to a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Grading {
    /// One per user turn that has a reference, in order: (0-based turn, finding).
    pub turns: Vec<(usize, Finding)>,
}

impl Grading {
    fn last(&self) -> &Finding {
        // A grading is made only with at least one graded turn.
        &self.turns.last().expect("a graded turn").1
    }

    fn mean_content(&self) -> f64 {
        self.turns.iter().map(|(_, f)| f.content()).sum::<f64>() / self.turns.len() as f64
    }

    /// A rubric criterion's value in [0, 1], by what its id names: task completion,
    /// correctness, state tracking, correction handling, final-answer usability; any
    /// other criterion gets the mean of those five.
    pub fn criterion(&self, id: &str) -> f64 {
        let id = id.to_lowercase();
        let named = |words: &[&str]| words.iter().any(|w| id.contains(w));
        if named(&["correction", "supersed"]) {
            self.correction_handling()
        } else if named(&["state", "track", "consisten", "retain", "memory"]) {
            self.state_tracking()
        } else if named(&["usab", "format", "final"]) {
            self.last().form()
        } else if named(&["complet", "task"]) {
            self.task_completion()
        } else if named(&["correct", "accura"]) {
            self.mean_content()
        } else {
            (self.task_completion()
                + self.mean_content()
                + self.state_tracking()
                + self.correction_handling()
                + self.last().form())
                / 5.0
        }
    }

    fn task_completion(&self) -> f64 {
        0.8 * self.last().done() + 0.2 * self.mean_content()
    }

    fn state_tracking(&self) -> f64 {
        let lost: f64 = self.turns.iter().map(|(_, f)| f.state_penalty()).sum();
        (1.0 - lost).clamp(0.0, 1.0)
    }

    fn correction_handling(&self) -> f64 {
        let lost: f64 = self
            .turns
            .iter()
            .filter(|(t, _)| *t > 0)
            .map(|(_, f)| f.correction_penalty())
            .sum();
        (1.0 - lost).clamp(0.0, 1.0)
    }

    /// Whether the user could stop here: the final answer does the task (chatter around
    /// it allowed, a missing field or a stale answer not).
    pub fn completed(&self) -> bool {
        self.last().done() >= 0.75
    }

    pub fn rationale(&self) -> String {
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for (turn, finding) in &self.turns {
            let what = finding.describe();
            match groups.iter_mut().find(|(w, _)| *w == what) {
                Some((_, turns)) => turns.push(turn + 1),
                None => groups.push((what, vec![turn + 1])),
            }
        }
        let parts: Vec<String> = groups
            .into_iter()
            .map(|(what, turns)| {
                let list: Vec<String> = turns.iter().map(usize::to_string).collect();
                let noun = if turns.len() == 1 { "turn" } else { "turns" };
                format!("{noun} {}: {what}", list.join(", "))
            })
            .collect();
        format!(
            "Simulated judge, grading each answer against the scenario's reference answer: {}.",
            parts.join("; ")
        )
    }
}

/// A message of the transcript in a judge prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptMessage {
    pub role: String,
    pub content: String,
}

/// The transcript block of a judge prompt, from the first request message that has one.
pub fn read_transcript(messages: &[Message]) -> Option<Vec<TranscriptMessage>> {
    messages
        .iter()
        .filter(|m| m.role != "assistant")
        .find_map(|m| transcript_in(&m.content))
}

fn transcript_in(text: &str) -> Option<Vec<TranscriptMessage>> {
    let mut lines = text.lines();
    // The block's first line is the begin marker alone (a template may also name the
    // marker inside a sentence; that line is not it).
    let nonce = lines.by_ref().find_map(|l| {
        l.strip_prefix("<<<transcript ")?
            .strip_suffix(" begin>>>")
            .map(str::to_string)
    })?;
    let end = format!("<<<transcript {nonce} end>>>");
    let mut out: Vec<TranscriptMessage> = Vec::new();
    let mut body: Vec<&str> = Vec::new();
    let flush = |out: &mut Vec<TranscriptMessage>, body: &mut Vec<&str>| {
        if let Some(last) = out.last_mut() {
            last.content = body.join("\n");
        }
        body.clear();
    };
    for line in lines {
        if line == end {
            flush(&mut out, &mut body);
            return Some(out);
        }
        // Message text cannot hold "<<<" (blinding breaks such runs): this is a marker.
        let marker = line
            .strip_prefix("<<<message ")
            .and_then(|l| l.strip_suffix(">>>"))
            .and_then(|l| l.split_once(": "));
        match marker {
            Some((_, role)) => {
                flush(&mut out, &mut body);
                out.push(TranscriptMessage {
                    role: role.to_string(),
                    content: String::new(),
                });
            }
            None => body.push(line),
        }
    }
    None // no end marker: not a transcript this module can read
}

/// The scenario whose user turns, in order, the transcript's user messages are (a prefix
/// of them: a conversation may have stopped early).
pub fn match_scenario(index: &ScenarioIndex, transcript: &[TranscriptMessage]) -> Option<usize> {
    let users: Vec<&str> = transcript
        .iter()
        .filter(|m| m.role == "user")
        .map(|m| m.content.as_str())
        .collect();
    if users.is_empty() {
        return None;
    }
    (0..index.len()).find(|&s| {
        let turns = index.users(s);
        users.len() <= turns.len()
            && users
                .iter()
                .zip(turns)
                .all(|(seen, turn)| same_user_turn(seen, turn))
    })
}

fn same_user_turn(seen: &str, turn: &str) -> bool {
    squeeze(seen) == squeeze(turn) || overlap(seen, turn) >= SAME_USER_TURN
}

/// Grades a judge request's transcript; None when there is no transcript, no scenario
/// matches, or the matched turns have no reference answers.
pub fn grade(index: &ScenarioIndex, messages: &[Message]) -> Option<Grading> {
    let transcript = read_transcript(messages)?;
    let s = match_scenario(index, &transcript)?;
    let references = index.references(s);
    // Each user turn, and the first assistant answer before the next user turn.
    let mut answers: Vec<Option<&str>> = Vec::new();
    for m in &transcript {
        match m.role.as_str() {
            "user" => answers.push(None),
            "assistant" => {
                if let Some(slot @ None) = answers.last_mut() {
                    *slot = Some(m.content.as_str());
                }
            }
            _ => {}
        }
    }
    let turns: Vec<(usize, Finding)> = answers
        .iter()
        .enumerate()
        .filter(|(t, _)| references[*t].is_some())
        .map(|(t, answer)| (t, grade_answer(answer.unwrap_or(""), t, references)))
        .collect();
    (!turns.is_empty()).then_some(Grading { turns })
}

/// One answer against turn `turn`'s reference (which exists) and the earlier ones.
pub fn grade_answer(answer: &str, turn: usize, references: &[Option<String>]) -> Finding {
    if answer.trim().is_empty() {
        return Finding::Empty;
    }
    let reference = references[turn].as_deref().unwrap_or("");
    let (a, r) = (squeeze(answer), squeeze(reference));
    if a == r {
        return Finding::Exact;
    }
    if !r.is_empty() && a.contains(&r) {
        return Finding::Wrapped;
    }
    if let Some(finding) = compare_json(answer, reference) {
        return finding;
    }
    for earlier in (0..turn).rev() {
        let Some(e) = references[earlier].as_deref().map(squeeze) else {
            continue;
        };
        if !e.is_empty() && a.contains(&e) {
            return Finding::Stale { of_turn: earlier };
        }
    }
    let d = overlap(answer, reference);
    if d >= NEAR && only_redactions_added(answer, reference) {
        return Finding::Redacted;
    }
    if d >= NEAR {
        return Finding::Near { overlap: d };
    }
    let stale = (0..turn)
        .filter_map(|e| Some((e, overlap(answer, references[e].as_deref()?))))
        .max_by(|x, y| x.1.total_cmp(&y.1));
    match stale {
        Some((e, de)) if de >= NEAR && de > d => Finding::Stale { of_turn: e },
        _ => Finding::Unrelated { overlap: d },
    }
}

/// Whether every word the answer has beyond the reference's is `redacted` (blinding
/// replaced a name), with at least one.
fn only_redactions_added(answer: &str, reference: &str) -> bool {
    let (a, r) = (words(answer), words(reference));
    let mut redactions = false;
    for (w, n) in &a {
        if r.get(w).copied().unwrap_or(0) < *n {
            if w == "redacted" {
                redactions = true;
            } else {
                return false;
            }
        }
    }
    redactions
}

/// For a reference that is a JSON object: the answer's object equal to it, or equal but
/// for missing top-level keys.
fn compare_json(answer: &str, reference: &str) -> Option<Finding> {
    let Ok(Value::Object(want)) = serde_json::from_str::<Value>(reference.trim()) else {
        return None;
    };
    let (got, wrapped) = object_in(answer)?;
    let extra = got.keys().any(|k| !want.contains_key(k));
    let differs = got.iter().any(|(k, v)| want.get(k).is_some_and(|w| w != v));
    if extra || differs || got.is_empty() {
        return None;
    }
    let missing: Vec<String> = want
        .keys()
        .filter(|k| !got.contains_key(*k))
        .cloned()
        .collect();
    Some(match (missing.is_empty(), wrapped) {
        (true, false) => Finding::Exact,
        (true, true) => Finding::Wrapped,
        (false, _) => Finding::MissingKeys {
            missing,
            total: want.len(),
            wrapped,
        },
    })
}

/// The JSON object an answer is, or holds between its first `{` and last `}` (inside a
/// fence or prose: then `wrapped`).
fn object_in(answer: &str) -> Option<(Map<String, Value>, bool)> {
    if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(answer.trim()) {
        return Some((o, false));
    }
    let (from, to) = (answer.find('{')?, answer.rfind('}')?);
    match serde_json::from_str::<Value>(answer.get(from..=to)?) {
        Ok(Value::Object(o)) => Some((o, true)),
        _ => None,
    }
}

/// The text with all whitespace removed: layout, and the spaces blinding puts into runs
/// of angle brackets, do not count.
fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

fn words(text: &str) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        *out.entry(w.to_lowercase()).or_insert(0) += 1;
    }
    out
}

/// Dice coefficient over word multisets: 1 for the same words, 0 for none shared.
fn overlap(a: &str, b: &str) -> f64 {
    let (wa, wb) = (words(a), words(b));
    let (na, nb): (usize, usize) = (wa.values().sum(), wb.values().sum());
    if na + nb == 0 {
        return 1.0;
    }
    let shared: usize = wa
        .iter()
        .map(|(w, n)| (*n).min(wb.get(w).copied().unwrap_or(0)))
        .sum();
    2.0 * shared as f64 / (na + nb) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;
    use crate::mock::defect;

    fn scenario(id: &str) -> Scenario {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{id}.toml"));
        Scenario::load(&path).unwrap()
    }

    fn refs(s: &Scenario) -> Vec<Option<String>> {
        s.turns.iter().map(|t| t.reference.clone()).collect()
    }

    #[test]
    fn each_answer_kind_is_found() {
        let s = scenario("struct-invoice-extraction");
        let r = refs(&s);
        let last = r.len() - 1;
        let final_ref = r[last].as_deref().unwrap();
        assert_eq!(grade_answer(final_ref, last, &r), Finding::Exact);
        assert_eq!(
            grade_answer(&format!("\n{final_ref}\n\n"), last, &r),
            Finding::Exact
        );
        assert_eq!(
            grade_answer(&defect::fence(final_ref), last, &r),
            Finding::Wrapped
        );
        assert_eq!(
            grade_answer(&defect::wrap_in_prose(final_ref, 0), last, &r),
            Finding::Wrapped
        );
        let (dropped, key) = defect::drop_top_level_key(final_ref, 6).unwrap();
        assert_eq!(
            grade_answer(&dropped, last, &r),
            Finding::MissingKeys {
                missing: vec![key.clone()],
                total: 11,
                wrapped: false
            }
        );
        assert_eq!(
            grade_answer(&defect::wrap_in_prose(&dropped, 1), last, &r),
            Finding::MissingKeys {
                missing: vec![key],
                total: 11,
                wrapped: true
            }
        );
        let prev = r[last - 1].as_deref().unwrap();
        assert_eq!(
            grade_answer(prev, last, &r),
            Finding::Stale { of_turn: last - 1 }
        );
        assert_eq!(grade_answer("  \n", last, &r), Finding::Empty);
        assert!(matches!(
            grade_answer("I cannot help with that request.", last, &r),
            Finding::Unrelated { .. }
        ));
        // A redacted word or two: the reference, not a changed answer.
        let redacted = r[0].as_deref().unwrap().replace("NORDLICHT", "[redacted]");
        assert_eq!(grade_answer(&redacted, 0, &r), Finding::Redacted);
        // A detail changed: near, and worth much less than the reference.
        let changed = r[0].as_deref().unwrap().replace("NORDLICHT", "SUDWIND");
        let near = grade_answer(&changed, 0, &r);
        assert!(
            matches!(near, Finding::Near { overlap } if overlap > 0.9),
            "{near:?}"
        );
        assert!(near.content() <= 0.5);
        // A stale answer with a redacted word still reads as stale.
        let stale = r[1].as_deref().unwrap().replace("USB-C", "[redacted]");
        assert_eq!(grade_answer(&stale, 2, &r), Finding::Stale { of_turn: 1 });
    }

    #[test]
    fn findings_order_the_criteria() {
        let exact = Grading {
            turns: vec![(0, Finding::Exact), (1, Finding::Exact)],
        };
        let wrapped = Grading {
            turns: vec![(0, Finding::Exact), (1, Finding::Wrapped)],
        };
        let missing = Grading {
            turns: vec![
                (0, Finding::Exact),
                (
                    1,
                    Finding::MissingKeys {
                        missing: vec!["a".into()],
                        total: 4,
                        wrapped: false,
                    },
                ),
            ],
        };
        let stale = Grading {
            turns: vec![(0, Finding::Exact), (1, Finding::Stale { of_turn: 0 })],
        };
        for c in [
            "task_completion",
            "correctness",
            "state_tracking",
            "correction_handling",
            "final_answer_usability",
            "tone",
        ] {
            assert_eq!(exact.criterion(c), 1.0, "{c}");
            assert!(wrapped.criterion(c) <= exact.criterion(c), "{c}");
            assert!(missing.criterion(c) <= wrapped.criterion(c), "{c}");
            assert!(stale.criterion(c) < exact.criterion(c), "{c}");
        }
        assert!(wrapped.criterion("final_answer_usability") < 1.0);
        assert!(stale.criterion("correction_handling") < 0.35);
        assert!(stale.criterion("state_tracking") <= 0.5);
        assert!(exact.completed() && wrapped.completed());
        assert!(!missing.completed() && !stale.completed());
        assert!(
            stale
                .rationale()
                .contains("turn 2: repeats the answer to turn 1"),
            "{}",
            stale.rationale()
        );
    }

    #[test]
    fn reads_the_transcript_block_and_skips_the_template_mention() {
        let prompt = "It starts at the line <<<transcript ab12 begin>>> and ends at <<<transcript ab12 end>>>.\n\
            <<<transcript ab12 begin>>>\n<<<message 1: system>>>\nBe brief.\n<<<message 2: user>>>\nHi\nthere\n\
            <<<message 3: assistant reasoning>>>\nhmm\n<<<message 4: assistant>>>\nHello.\n<<<transcript ab12 end>>>\nrubric-spec: {}";
        let t = read_transcript(&[Message::new("user", prompt)]).unwrap();
        let got: Vec<(&str, &str)> = t
            .iter()
            .map(|m| (m.role.as_str(), m.content.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("system", "Be brief."),
                ("user", "Hi\nthere"),
                ("assistant reasoning", "hmm"),
                ("assistant", "Hello.")
            ]
        );
        assert_eq!(read_transcript(&[Message::new("user", "no block")]), None);
        let unterminated = "<<<transcript ab12 begin>>>\n<<<message 1: user>>>\nHi";
        assert_eq!(read_transcript(&[Message::new("user", unterminated)]), None);
    }
}
