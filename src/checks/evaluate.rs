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
        let judged = self.judge_by_turn(answers);
        (judged.passed, judged.detail)
    }

    /// This check on each answer in its scope, and the conversation's verdict derived from
    /// those: passed iff every turn in scope has an answer and passed; failed as soon as one
    /// answered turn failed (that failure is certain, whatever a later turn holds); not
    /// scored when an answer in scope is missing and none failed.
    pub fn judge_by_turn(&self, answers: &Answers<'_>) -> Judged {
        let slots = answers.slots.as_slice();
        let (from, to) = match self.scope {
            Scope::Final if slots.is_empty() => return Judged::not_scored("no answers".into()),
            Scope::Final => (slots.len(), slots.len()),
            Scope::Turn(turn) => (turn, turn),
            Scope::FromTurn(from) => (from, slots.len()),
        };
        let mut turns = Vec::new();
        let mut unanswered = None;
        for turn in from.max(1)..=to {
            match slots.get(turn - 1) {
                Some(Some(answer)) => turns.push(TurnVerdict {
                    turn: turn as u32,
                    failure: self.rule.evaluate(answer).err(),
                }),
                _ => {
                    unanswered.get_or_insert(turn);
                }
            }
        }
        if turns.is_empty() && unanswered.is_none() {
            // `from_turn` past the conversation's end: nothing in scope was answered.
            unanswered = Some(from);
        }
        let failures: Vec<String> = turns
            .iter()
            .filter_map(|t| Some(format!("turn {}: {}", t.turn, t.failure.as_ref()?)))
            .collect();
        let (passed, detail) = if !failures.is_empty() {
            (Some(false), failures.join("; "))
        } else if let Some(turn) = unanswered {
            (None, format!("turn {turn} has no answer"))
        } else {
            (Some(true), String::new())
        };
        Judged {
            passed,
            detail,
            turns,
        }
    }
}

/// One answer's verdict under a check: which turn (1-based, the scenario's user turn whose
/// answer it is) and why it failed (`None`: it passed).
#[derive(Debug, Clone, PartialEq)]
pub struct TurnVerdict {
    pub turn: u32,
    pub failure: Option<String>,
}

impl TurnVerdict {
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }
}

/// A check on one conversation: the conversation's verdict (as stored in `check_results`)
/// and the verdict of every answered turn in its scope (`check_turn_results`).
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// `None`: not scored.
    pub passed: Option<bool>,
    /// Why it failed or was not scored, naming the turns; empty when it passed.
    pub detail: String,
    /// In turn order; empty when nothing in scope was answered.
    pub turns: Vec<TurnVerdict>,
}

impl Judged {
    fn not_scored(detail: String) -> Judged {
        Judged {
            passed: None,
            detail,
            turns: Vec::new(),
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

    /// (turn, passed) of each turn verdict of check `c` on these answers.
    fn turns(c: usize, answers: &[Option<&str>]) -> Vec<(u32, bool)> {
        let set = set();
        let answers = crate::checks::Answers::new(answers.iter().copied());
        set.checks[c]
            .judge_by_turn(&answers)
            .turns
            .iter()
            .map(|t| (t.turn, t.passed()))
            .collect()
    }

    #[test]
    fn each_answer_in_scope_gets_its_own_verdict() {
        let answers = [
            Some("x"),
            Some("20"),
            Some("50"),
            Some("still 20"),
            Some("{}"),
        ];
        // Unscoped: the final answer only.
        assert_eq!(turns(0, &answers), [(5, true)]);
        // turn = 2: that answer only.
        assert_eq!(turns(1, &answers), [(2, false)]);
        // from_turn = 2: every answer from turn 2 on, lost at 2, back at 3, lost at 4.
        assert_eq!(
            turns(2, &answers),
            [(2, false), (3, true), (4, false), (5, true)]
        );
        // Unanswered turns have no verdict; nothing in scope, none at all.
        assert_eq!(turns(2, &[Some("x"), None, Some("20")]), [(3, false)]);
        assert!(turns(2, &[Some("x")]).is_empty());
        assert!(turns(0, &[]).is_empty());
    }

    #[test]
    fn the_conversation_verdict_is_derived_from_the_turn_verdicts() {
        let set = set();
        let cases: [&[Option<&str>]; 6] = [
            &[Some("x"), Some("50"), Some("{}")],
            &[Some("x"), Some("20"), Some("50"), Some("20")],
            &[Some("x"), None, Some("20")],
            &[Some("x"), None, Some("50")],
            &[Some("{}")],
            &[],
        ];
        for answers in cases {
            let a = crate::checks::Answers::new(answers.iter().copied());
            for check in &set.checks {
                let judged = check.judge_by_turn(&a);
                let any_failed = judged.turns.iter().any(|t| !t.passed());
                match judged.passed {
                    Some(true) => assert!(!judged.turns.is_empty() && !any_failed),
                    Some(false) => assert!(any_failed),
                    None => assert!(!any_failed),
                }
                // The per-turn path gives what `judge` (the stored conversation verdict) gives.
                assert_eq!(check.judge(&a), (judged.passed, judged.detail.clone()));
            }
        }
    }
}
