//! Evaluating a check set against one conversation's answers: scopes, verdicts, details.

use super::answer_json::Answer;
use super::definition::{Check, CheckSet, Scope, Tag};

/// One check's result for one conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckVerdict {
    pub id: String,
    pub tag: Tag,
    /// `None`: not scored, because an answer the check reads does not exist.
    pub passed: Option<bool>,
    /// Why it failed or was not scored, naming the turn; empty when it passed.
    pub detail: String,
}

/// One conversation's answers as the checks read them (index 0 is turn 1; `None` for a turn
/// without an answer). Each answer's JSON is parsed at most once, however many checks read it.
pub struct Answers<'a> {
    slots: Vec<Option<Answer<'a>>>,
}

impl<'a> Answers<'a> {
    pub fn new(answers: impl IntoIterator<Item = Option<&'a str>>) -> Self {
        Answers {
            slots: answers.into_iter().map(|a| a.map(Answer::new)).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

impl CheckSet {
    /// Runs every check, in file order, on the answers of one conversation (index 0 is
    /// turn 1; `None` for a turn without an answer). The final answer is the last slot, so
    /// pass one slot per scenario turn.
    pub fn evaluate(&self, answers: &[Option<&str>]) -> Vec<CheckVerdict> {
        // Built once here so that each answer's JSON is parsed once for all checks.
        let answers = Answers::new(answers.iter().copied());
        self.checks.iter().map(|c| c.verdict(&answers)).collect()
    }
}

impl Check {
    /// This check alone on one conversation's answers (see [`CheckSet::evaluate`]).
    pub fn evaluate(&self, answers: &[Option<&str>]) -> CheckVerdict {
        self.verdict(&Answers::new(answers.iter().copied()))
    }

    fn verdict(&self, answers: &Answers<'_>) -> CheckVerdict {
        let (passed, detail) = self.judge(answers);
        CheckVerdict {
            id: self.id.clone(),
            tag: self.tag,
            passed,
            detail,
        }
    }

    /// This check on answers shared with other checks: passed (`None`: not scored) and why
    /// not (empty when it passed, so a pass allocates nothing).
    pub fn judge(&self, answers: &Answers<'_>) -> (Option<bool>, String) {
        let answers = answers.slots.as_slice();
        match self.scope {
            Scope::Final if answers.is_empty() => (None, "no answers".to_string()),
            Scope::Final => self.judge_turn(answers, answers.len()),
            Scope::Turn(turn) => self.judge_turn(answers, turn),
            Scope::FromTurn(from) => self.judge_from(answers, from),
        }
    }

    fn judge_turn(&self, answers: &[Option<Answer<'_>>], turn: usize) -> (Option<bool>, String) {
        match answers.get(turn - 1) {
            Some(Some(answer)) => match self.rule.evaluate(answer) {
                Ok(()) => (Some(true), String::new()),
                Err(why) => (Some(false), format!("turn {turn}: {why}")),
            },
            _ => (None, format!("turn {turn} has no answer")),
        }
    }

    /// Every turn from `from` on must pass; a failure anywhere fails the check even if a
    /// later turn has no answer, since that failure is already certain.
    fn judge_from(&self, answers: &[Option<Answer<'_>>], from: usize) -> (Option<bool>, String) {
        let mut failures = Vec::new();
        let mut unanswered = None;
        for turn in from..=answers.len() {
            match &answers[turn - 1] {
                Some(answer) => {
                    if let Err(why) = self.rule.evaluate(answer) {
                        failures.push(format!("turn {turn}: {why}"));
                    }
                }
                None => {
                    unanswered.get_or_insert(turn);
                }
            }
        }
        if !failures.is_empty() {
            (Some(false), failures.join("; "))
        } else if from > answers.len() {
            (None, format!("turn {from} has no answer"))
        } else if let Some(turn) = unanswered {
            (None, format!("turn {turn} has no answer"))
        } else {
            (Some(true), String::new())
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::checks::{CheckSet, Tag};
    use crate::config::SourceText;

    fn set() -> CheckSet {
        let text = r#"scenario = "demo"

[[check]]
id = "final-json"
kind = "json_valid"
tag = "json_validity"

[[check]]
id = "turn-2-mentions-50"
kind = "contains"
tag = "custom"
turn = 2
text = "50"

[[check]]
id = "never-20-again"
kind = "not_contains"
tag = "superseded_instruction"
from_turn = 2
text = "20"
whole_word = true
"#;
        CheckSet::from_source(&SourceText {
            path: "checks/demo.toml".into(),
            text: text.into(),
        })
        .unwrap()
    }

    #[test]
    fn good_conversation_passes_everything() {
        let verdicts = set().evaluate(&[
            Some("page size 20"),
            Some("50 it is"),
            Some("{\"page_size\": 50}"),
        ]);
        assert!(
            verdicts
                .iter()
                .all(|v| v.passed == Some(true) && v.detail.is_empty()),
            "{verdicts:?}"
        );
        assert_eq!(verdicts[2].tag, Tag::SupersededInstruction);
    }

    #[test]
    fn details_name_the_turn() {
        let verdicts = set().evaluate(&[Some("x"), Some("20 per page"), Some("{\"a\": 1} ok")]);
        assert_eq!(verdicts[0].passed, Some(false));
        assert!(
            verdicts[0]
                .detail
                .starts_with("turn 3: text after the JSON value"),
            "{}",
            verdicts[0].detail
        );
        assert_eq!(verdicts[1].detail, "turn 2: missing \"50\"");
        assert!(
            verdicts[2]
                .detail
                .starts_with("turn 2: found forbidden \"20\""),
            "{}",
            verdicts[2].detail
        );
    }

    #[test]
    fn from_turn_reports_every_failing_turn() {
        let verdicts = set().evaluate(&[Some("x"), Some("20"), Some("50"), Some("still 20")]);
        let detail = &verdicts[2].detail;
        assert!(
            detail.contains("turn 2:") && detail.contains("turn 4:") && !detail.contains("turn 3:"),
            "{detail}"
        );
    }

    #[test]
    fn missing_answers_are_not_scored() {
        let verdicts = set().evaluate(&[Some("x"), None, None]);
        assert_eq!(verdicts[0].passed, None);
        assert_eq!(verdicts[0].detail, "turn 3 has no answer");
        assert_eq!(verdicts[1].passed, None);
        assert_eq!(verdicts[2].passed, None);
        // A failure already seen is certain, whatever comes later.
        let verdicts = set().evaluate(&[Some("x"), Some("20"), None]);
        assert_eq!(verdicts[2].passed, Some(false));
        // Turns that never happened.
        let verdicts = set().evaluate(&[Some("{}")]);
        assert_eq!(
            verdicts.iter().map(|v| v.passed).collect::<Vec<_>>(),
            [Some(true), None, None]
        );
        assert!(set().evaluate(&[]).iter().all(|v| v.passed.is_none()));
    }
}
