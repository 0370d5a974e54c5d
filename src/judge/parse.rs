//! Reading a judge's answer: strict JSON first, else the last JSON object in the text;
//! then every criterion present as an integer inside the scale, `completed` a boolean and
//! `rationale` a string. Anything else is a [`ParseFailure`]: a score is never invented,
//! defaulted, rounded or clamped.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::config::Rubric;
use crate::config::rubric::ScoreProblem;

/// A judge's usable answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredAnswer {
    pub scores: BTreeMap<String, i64>,
    pub completed: bool,
    pub rationale: String,
}

/// Why an answer could not be used; the text is shown to the judge when it is re-asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseFailure {
    #[error("the answer is empty")]
    Empty,
    #[error("the answer holds no JSON object")]
    NoJson,
    #[error("`scores` is missing or not an object")]
    NoScores,
    /// The rubric's own check of the scores (`Rubric::check_scores`),
    /// which human labels pass through too.
    #[error(transparent)]
    Scores(#[from] ScoreProblem),
    #[error("`completed` is missing or not true/false")]
    NoCompleted,
    #[error("`rationale` is missing or not a string")]
    NoRationale,
    #[error("`winner` is missing or not \"A\", \"B\" or \"tie\"")]
    NoWinner,
}

impl ParseFailure {
    /// The kind of failure a stored message names (what `Display` wrote, perhaps after
    /// "ask N: "), in a few words, for summaries that group unscored judgments.
    pub fn kind_of(message: &str) -> &'static str {
        const KINDS: [(&str, &str); 10] = [
            ("the answer is empty", "empty answer"),
            ("holds no JSON object", "no JSON object"),
            ("`scores` is missing", "no scores object"),
            ("is missing from `scores`", "a criterion missing"),
            ("which is not a criterion", "an unknown criterion"),
            ("not an integer", "a score not an integer"),
            (", outside ", "a score out of range"),
            ("`completed` is missing", "no completed flag"),
            ("`rationale` is missing", "no rationale"),
            ("`winner` is missing", "no winner"),
        ];
        KINDS
            .iter()
            .find(|(text, _)| message.contains(text))
            .map_or("unusable answer", |(_, kind)| kind)
    }
}

/// Longest answer looked at; a judge that writes more has not followed the format.
const MAX_SCAN: usize = 256 * 1024;

pub fn parse_verdict(raw: &str, rubric: &Rubric) -> Result<ScoredAnswer, ParseFailure> {
    let text = raw.trim();
    if text.is_empty() {
        return Err(ParseFailure::Empty);
    }
    let object = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => o,
        _ => last_object(text).ok_or(ParseFailure::NoJson)?,
    };
    check(&object, rubric)
}

/// The last top-level JSON object in free text (after prose, inside a code fence, …).
pub(super) fn last_object(text: &str) -> Option<Map<String, Value>> {
    let text = &text[..floor_boundary(text, text.len().min(MAX_SCAN))];
    let mut found = None;
    let mut at = 0;
    while let Some(open) = text[at..].find('{').map(|o| o + at) {
        let mut stream = serde_json::Deserializer::from_str(&text[open..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(Value::Object(o))) => {
                // Objects nested inside this one are not top-level: skip past its end.
                at = open + stream.byte_offset();
                found = Some(o);
            }
            _ => at = open + 1,
        }
    }
    found
}

/// The largest char boundary at or below `i` (0 is always one, so this stops).
fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn check(object: &Map<String, Value>, rubric: &Rubric) -> Result<ScoredAnswer, ParseFailure> {
    let scores = object
        .get("scores")
        .and_then(Value::as_object)
        .ok_or(ParseFailure::NoScores)?;
    let parsed = rubric.check_scores(scores).map_err(ParseFailure::from)?;
    let completed = object
        .get("completed")
        .and_then(Value::as_bool)
        .ok_or(ParseFailure::NoCompleted)?;
    let rationale = object
        .get("rationale")
        .and_then(Value::as_str)
        .ok_or(ParseFailure::NoRationale)?
        .to_string();
    Ok(ScoredAnswer {
        scores: parsed,
        completed,
        rationale,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SourceText;

    fn rubric() -> Rubric {
        Rubric::from_source(&SourceText {
            path: "r.toml".into(),
            text: r#"
id = "r"
version = 1
scale = { min = 1, max = 5 }
[[criterion]]
id = "a"
question = "A?"
anchors = { 1 = "no", 5 = "yes" }
[[criterion]]
id = "b"
question = "B?"
anchors = { 1 = "no", 5 = "yes" }
[completed]
question = "Done?"
"#
            .into(),
        })
        .unwrap()
    }

    const GOOD: &str = r#"{"scores": {"a": 4, "b": 1}, "completed": true, "rationale": "ok"}"#;

    #[test]
    fn strict_json_parses() {
        let v = parse_verdict(GOOD, &rubric()).unwrap();
        assert_eq!(v.scores["a"], 4);
        assert_eq!(v.scores["b"], 1);
        assert!(v.completed);
        assert_eq!(v.rationale, "ok");
    }

    #[test]
    fn falls_back_to_the_last_object_in_prose() {
        let text = format!(
            "Draft: {{\"scores\": {{\"a\": 9}}}}\nFinal answer:\n```json\n{GOOD}\n```\nThanks {{ not json"
        );
        let v = parse_verdict(&text, &rubric()).unwrap();
        assert_eq!(v.scores["a"], 4);
        // The last object wins even when an earlier one is valid.
        let text = format!("{GOOD} then {}", GOOD.replace("\"a\": 4", "\"a\": 2"));
        assert_eq!(parse_verdict(&text, &rubric()).unwrap().scores["a"], 2);
    }

    #[test]
    fn failures_are_named_and_nothing_is_made_up() {
        let r = rubric();
        let cases = [
            ("", ParseFailure::Empty),
            ("I think it is good.", ParseFailure::NoJson),
            ("{\"scores\": {\"a\": 4, \"b\": ", ParseFailure::NoJson),
            (r#"{"completed": true}"#, ParseFailure::NoScores),
            (
                r#"{"scores": {"a": 4}, "completed": true, "rationale": ""}"#,
                ParseFailure::Scores(ScoreProblem::MissingCriterion("b".into())),
            ),
            (
                r#"{"scores": {"a": 4, "b": 6}, "completed": true, "rationale": ""}"#,
                ParseFailure::Scores(ScoreProblem::OutOfRange {
                    criterion: "b".into(),
                    value: 6,
                    min: 1,
                    max: 5,
                }),
            ),
            (
                r#"{"scores": {"a": 4, "b": 0}, "completed": true, "rationale": ""}"#,
                ParseFailure::Scores(ScoreProblem::OutOfRange {
                    criterion: "b".into(),
                    value: 0,
                    min: 1,
                    max: 5,
                }),
            ),
            (
                r#"{"scores": {"a": 4.5, "b": 1}, "completed": true, "rationale": ""}"#,
                ParseFailure::Scores(ScoreProblem::NotInteger {
                    criterion: "a".into(),
                    value: "4.5".into(),
                }),
            ),
            (
                r#"{"scores": {"a": "4", "b": 1}, "completed": true, "rationale": ""}"#,
                ParseFailure::Scores(ScoreProblem::NotInteger {
                    criterion: "a".into(),
                    value: "\"4\"".into(),
                }),
            ),
            (
                r#"{"scores": {"a": 4, "b": 1, "c": 2}, "completed": true, "rationale": ""}"#,
                ParseFailure::Scores(ScoreProblem::UnknownCriterion("c".into())),
            ),
            (
                r#"{"scores": {"a": 4, "b": 1}, "completed": "yes", "rationale": ""}"#,
                ParseFailure::NoCompleted,
            ),
            (
                r#"{"scores": {"a": 4, "b": 1}, "completed": false}"#,
                ParseFailure::NoRationale,
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_verdict(text, &r), Err(expected), "{text}");
        }
    }
}
