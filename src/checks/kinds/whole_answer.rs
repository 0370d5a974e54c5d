//! `one_of`, `starts_with`, `ends_with`: rules on the whole trimmed answer, such as a
//! one-word label. `case_sensitive` defaults to false, as for the other text rules.

use serde::Deserialize;
use toml::Spanned;

use super::{KindFields, Rule};
use crate::checks::answer_json::Answer;
use crate::config::ConfigError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OneOfParams {
    values: Spanned<Vec<String>>,
    #[serde(default)]
    case_sensitive: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AffixParams {
    text: Spanned<String>,
    #[serde(default)]
    case_sensitive: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    OneOf,
    StartsWith,
    EndsWith,
}

#[derive(Debug)]
struct WholeAnswer {
    mode: Mode,
    /// As written, for details.
    texts: Vec<String>,
    /// What is compared: lower-cased at load time (see `fold`) when the rule ignores case.
    folded: Vec<String>,
    case_sensitive: bool,
}

pub fn build_one_of(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    let p: OneOfParams = fields.parse()?;
    if p.values.get_ref().is_empty() {
        return Err(fields.invalid(
            p.values.span(),
            "`values` is empty, so the check could never pass",
            "list the accepted answers, e.g. values = [\"approve\", \"reject\"]",
        ));
    }
    Ok(rule(Mode::OneOf, p.values.into_inner(), p.case_sensitive))
}

pub fn build_starts_with(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    let p: AffixParams = fields.parse()?;
    Ok(rule(
        Mode::StartsWith,
        vec![p.text.into_inner()],
        p.case_sensitive,
    ))
}

pub fn build_ends_with(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    let p: AffixParams = fields.parse()?;
    Ok(rule(
        Mode::EndsWith,
        vec![p.text.into_inner()],
        p.case_sensitive,
    ))
}

fn rule(mode: Mode, texts: Vec<String>, case_sensitive: bool) -> Box<dyn Rule> {
    let texts: Vec<String> = texts
        .into_iter()
        .map(|t| {
            if mode == Mode::OneOf {
                t.trim().to_string()
            } else {
                t
            }
        })
        .collect();
    let folded = texts
        .iter()
        .map(|t| {
            if case_sensitive {
                t.clone()
            } else {
                fold(t).collect()
            }
        })
        .collect();
    Box::new(WholeAnswer {
        mode,
        texts,
        folded,
        case_sensitive,
    })
}

impl Rule for WholeAnswer {
    fn evaluate(&self, answer: &Answer<'_>) -> Result<(), String> {
        let trimmed = answer.text().trim();
        let expected = self.folded.iter().map(String::as_str);
        // Case folded char by char, so that judging an answer allocates nothing.
        let ok = match (self.mode, self.case_sensitive) {
            (Mode::OneOf, true) => expected.into_iter().any(|t| t == trimmed),
            (Mode::StartsWith, true) => trimmed.starts_with(&self.folded[0]),
            (Mode::EndsWith, true) => trimmed.ends_with(&self.folded[0]),
            (Mode::OneOf, false) => expected.into_iter().any(|t| fold(trimmed).eq(t.chars())),
            (Mode::StartsWith, false) => {
                let mut text = fold(trimmed);
                self.folded[0].chars().all(|c| text.next() == Some(c))
            }
            (Mode::EndsWith, false) => {
                let mut text = fold(trimmed).rev();
                self.folded[0].chars().rev().all(|c| text.next() == Some(c))
            }
        };
        if ok {
            return Ok(());
        }
        let shown: String = trimmed.chars().take(60).collect();
        let more = if shown.len() < trimmed.len() {
            "..."
        } else {
            ""
        };
        Err(match self.mode {
            Mode::OneOf => format!("answer {shown:?}{more} is not one of {:?}", self.texts),
            Mode::StartsWith => format!(
                "answer {shown:?}{more} does not start with {:?}",
                self.texts[0]
            ),
            Mode::EndsWith => format!("answer does not end with {:?}", self.texts[0]),
        })
    }
}

/// Lower case, char by char (as the expected texts are folded at load time).
fn fold(text: &str) -> impl DoubleEndedIterator<Item = char> + '_ {
    text.chars().flat_map(char::to_lowercase)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{judge, load_error};

    #[test]
    fn one_of_is_the_whole_trimmed_answer() {
        let lines = "kind = \"one_of\"\nvalues = [\"approve\", \"reject\"]";
        assert_eq!(judge(lines, "  Approve\n"), Ok(()));
        assert!(judge(lines, "Approve.").is_err());
        assert!(judge(lines, "I approve").is_err());
        let strict = format!("{lines}\ncase_sensitive = true");
        assert!(
            judge(&strict, "Approve")
                .unwrap_err()
                .contains("not one of [\"approve\", \"reject\"]")
        );
    }

    #[test]
    fn starts_and_ends_with() {
        assert_eq!(
            judge(
                "kind = \"starts_with\"\ntext = \"subject:\"",
                "\nSubject: Outage"
            ),
            Ok(())
        );
        assert!(
            judge(
                "kind = \"starts_with\"\ntext = \"Subject:\"\ncase_sensitive = true",
                "subject: x"
            )
            .is_err()
        );
        assert_eq!(
            judge(
                "kind = \"ends_with\"\ntext = \"-- Ops\"",
                "Thanks\n-- Ops\n"
            ),
            Ok(())
        );
        assert!(judge("kind = \"ends_with\"\ntext = \"-- Ops\"", "-- Ops\nPS").is_err());
        // Case folding is Unicode, on both ends.
        assert_eq!(
            judge(
                "kind = \"ends_with\"\ntext = \"Grüße\"",
                "Viele GRÜSSE grüße"
            ),
            Ok(())
        );
        assert_eq!(
            judge("kind = \"starts_with\"\ntext = \"Ärger\"", "ÄRGER im Büro"),
            Ok(())
        );
        assert_eq!(
            judge("kind = \"one_of\"\nvalues = [\"Ωμέγα\"]", " ΩΜΈΓΑ "),
            Ok(())
        );
        assert!(judge("kind = \"ends_with\"\ntext = \"grüße\"", "grüß").is_err());
    }

    #[test]
    fn empty_values_are_refused() {
        let err = load_error("kind = \"one_of\"\nvalues = []");
        assert!(err.starts_with("checks/demo.toml:7:"), "{err}");
    }
}
