//! Defects: data-driven self-tests of a checks file. A `[[defect]]` spoils one turn of the
//! scenario's reference conversation and names exactly the checks that must then fail.
//!
//! ```toml
//! [[defect]]
//! name = "old-page-size-back"
//! turn = 5                          # optional; default the final turn
//! replace = ["\"page_size\": 50", "\"page_size\": 20"]   # every occurrence, in that turn's reference
//! # or: answer = "..."              # replaces that turn's answer entirely
//! fails = ["no-old-page-size"]      # exactly these checks fail, all others still pass
//! ```

use std::collections::HashSet;

use serde::Deserialize;
use toml::Spanned;

use crate::config::{ConfigError, SourceText};

#[derive(Debug, Clone, PartialEq)]
pub struct Defect {
    pub name: String,
    /// 1-based; `None` is the final turn.
    pub turn: Option<usize>,
    pub change: DefectChange,
    /// Ids of the checks that must fail once the defect is applied; all others must pass.
    pub fails: Vec<String>,
    pub line: usize,
    /// Line of `turn` (of the table when absent), and of `replace`/`answer`.
    pub turn_line: usize,
    pub change_line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum DefectChange {
    Replace { from: String, to: String },
    Answer(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DefectDoc {
    name: Spanned<String>,
    turn: Option<Spanned<i64>>,
    replace: Option<Spanned<Vec<String>>>,
    answer: Option<Spanned<String>>,
    fails: Vec<Spanned<String>>,
}

impl Defect {
    pub(crate) fn from_doc(
        src: &SourceText,
        doc: Spanned<DefectDoc>,
        check_ids: &HashSet<String>,
    ) -> Result<Defect, ConfigError> {
        let span = doc.span();
        let doc = doc.into_inner();
        let turn = match &doc.turn {
            None => None,
            Some(t) => Some(
                usize::try_from(*t.get_ref())
                    .ok()
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| {
                        src.invalid(
                            t.span(),
                            format!("turn = {} is not a turn number", t.get_ref()),
                            "turns count from 1; leave `turn` out for the final turn",
                        )
                    })?,
            ),
        };
        let (change, change_span) = match (doc.replace, doc.answer) {
            (Some(r), None) => {
                let change_span = r.span();
                match r.into_inner().as_slice() {
                    [from, to] if !from.is_empty() => (
                        DefectChange::Replace {
                            from: from.clone(),
                            to: to.clone(),
                        },
                        change_span,
                    ),
                    _ => {
                        return Err(src.invalid(
                            change_span,
                            "`replace` must be [\"from\", \"to\"] with a non-empty \"from\"",
                            "write replace = [\"page_size=50\", \"page_size=20\"]",
                        ));
                    }
                }
            }
            (None, Some(a)) => (DefectChange::Answer(a.get_ref().clone()), a.span()),
            _ => {
                return Err(src.invalid(
                    span,
                    "a defect needs exactly one of `replace` and `answer`",
                    "write replace = [\"from\", \"to\"] to edit the reference answer, \
                     or answer = \"...\" to replace it",
                ));
            }
        };
        let mut fails = Vec::new();
        for id in doc.fails {
            if !check_ids.contains(id.get_ref()) {
                return Err(src.invalid(
                    id.span(),
                    format!(
                        "defect names check {:?}, which this file does not define",
                        id.get_ref()
                    ),
                    "list ids of [[check]] tables in this file",
                ));
            }
            fails.push(id.into_inner());
        }
        Ok(Defect {
            name: doc.name.into_inner(),
            turn,
            change,
            fails,
            line: src.line_of(span.start),
            turn_line: src.line_of(doc.turn.as_ref().map_or(span.start, |t| t.span().start)),
            change_line: src.line_of(change_span.start),
        })
    }

    /// Spoils a conversation's answers (one per turn) in place.
    pub fn apply(&self, answers: &mut [String]) -> Result<(), String> {
        let count = answers.len();
        let index = self.turn.unwrap_or(count);
        let Some(answer) = index.checked_sub(1).and_then(|i| answers.get_mut(i)) else {
            return Err(format!(
                "defect {:?} is for turn {index}, but the conversation has {count} turns",
                self.name
            ));
        };
        match &self.change {
            DefectChange::Answer(text) => *answer = text.clone(),
            DefectChange::Replace { from, to } => {
                if !answer.contains(from.as_str()) {
                    return Err(format!(
                        "defect {:?}: {from:?} does not occur in turn {index}'s answer",
                        self.name
                    ));
                }
                *answer = answer.replace(from.as_str(), to);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defect(turn: Option<usize>, change: DefectChange) -> Defect {
        Defect {
            name: "d".into(),
            turn,
            change,
            fails: vec![],
            line: 1,
            turn_line: 1,
            change_line: 1,
        }
    }

    #[test]
    fn replace_edits_every_occurrence_of_the_final_turn_by_default() {
        let mut answers = vec!["20 and 20".to_string(), "size 50, 50".to_string()];
        let replace = DefectChange::Replace {
            from: "50".into(),
            to: "20".into(),
        };
        defect(None, replace).apply(&mut answers).unwrap();
        assert_eq!(answers[1], "size 20, 20");
        assert_eq!(answers[0], "20 and 20");
    }

    #[test]
    fn answer_replaces_a_chosen_turn() {
        let mut answers = vec!["a".to_string(), "b".to_string()];
        defect(Some(1), DefectChange::Answer("z".into()))
            .apply(&mut answers)
            .unwrap();
        assert_eq!(answers, ["z", "b"]);
    }

    #[test]
    fn text_that_is_not_there_or_a_missing_turn_is_an_error() {
        let mut answers = vec!["a".to_string()];
        let replace = DefectChange::Replace {
            from: "q".into(),
            to: "r".into(),
        };
        assert!(
            defect(None, replace)
                .apply(&mut answers)
                .unwrap_err()
                .contains("does not occur")
        );
        let err = defect(Some(3), DefectChange::Answer("z".into()))
            .apply(&mut answers)
            .unwrap_err();
        assert!(err.contains("turn 3"), "{err}");
    }
}
