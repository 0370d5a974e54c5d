//! `max_words`, `max_chars`, `max_lines`: size limits on the trimmed answer. Words are runs
//! of non-whitespace; characters are Unicode scalar values; lines include blank ones.

use serde::Deserialize;

use super::{KindFields, Rule};
use crate::checks::answer_json::Answer;
use crate::config::ConfigError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    max: usize,
}

#[derive(Debug, Clone, Copy)]
enum Unit {
    Words,
    Chars,
    Lines,
}

#[derive(Debug)]
struct Length {
    unit: Unit,
    max: usize,
}

fn build(fields: &mut KindFields<'_>, unit: Unit) -> Result<Box<dyn Rule>, ConfigError> {
    let p: Params = fields.parse()?;
    Ok(Box::new(Length { unit, max: p.max }))
}

pub fn build_max_words(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    build(fields, Unit::Words)
}

pub fn build_max_chars(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    build(fields, Unit::Chars)
}

pub fn build_max_lines(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    build(fields, Unit::Lines)
}

impl Rule for Length {
    fn evaluate(&self, answer: &Answer<'_>) -> Result<(), String> {
        let text = answer.text().trim();
        let (count, unit) = match self.unit {
            Unit::Words => (text.split_whitespace().count(), "words"),
            Unit::Chars => (text.chars().count(), "characters"),
            Unit::Lines if text.is_empty() => (0, "lines"),
            Unit::Lines => (text.lines().count(), "lines"),
        };
        if count <= self.max {
            Ok(())
        } else {
            Err(format!(
                "{count} {unit}, more than the maximum {}",
                self.max
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::judge;

    #[test]
    fn words_chars_and_lines() {
        let answer = "\n- one two\n- three\n\n- four\n";
        assert_eq!(judge("kind = \"max_words\"\nmax = 7", answer), Ok(()));
        assert_eq!(
            judge("kind = \"max_words\"\nmax = 6", answer).unwrap_err(),
            "7 words, more than the maximum 6"
        );
        assert_eq!(judge("kind = \"max_lines\"\nmax = 4", answer), Ok(()));
        assert!(judge("kind = \"max_lines\"\nmax = 3", answer).is_err());
        assert_eq!(judge("kind = \"max_chars\"\nmax = 5", " héllo "), Ok(()));
        assert!(judge("kind = \"max_chars\"\nmax = 4", "héllo").is_err());
        assert_eq!(judge("kind = \"max_lines\"\nmax = 0", "  "), Ok(()));
    }
}
