//! `contains`, `not_contains`, `regex`, `not_regex`: text rules over the whole answer.
//! `text` is literal (one string, or a list: `contains` wants every one, `not_contains` none);
//! `pattern` is a Rust regex. Both take `case_sensitive` (default false) and `whole_word`
//! (default false). `not_*` is how a superseded value is caught coming back.

use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

use super::{KindFields, Rule};
use crate::checks::answer_json::Answer;
use crate::config::ConfigError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TextParams {
    text: Spanned<toml::Value>,
    #[serde(default)]
    case_sensitive: bool,
    #[serde(default)]
    whole_word: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatternParams {
    pattern: Spanned<String>,
    #[serde(default)]
    case_sensitive: bool,
    #[serde(default)]
    whole_word: bool,
}

#[derive(Debug)]
struct TextSearch {
    /// What was written (for details) and its compiled form.
    needles: Vec<(String, Regex)>,
    /// true: each needle must be found; false: none may be.
    wanted: bool,
    literal: bool,
}

pub fn build_contains(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    build_text(fields, true)
}

pub fn build_not_contains(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    build_text(fields, false)
}

pub fn build_regex(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    build_pattern(fields, true)
}

pub fn build_not_regex(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    build_pattern(fields, false)
}

fn build_text(fields: &mut KindFields<'_>, wanted: bool) -> Result<Box<dyn Rule>, ConfigError> {
    let p: TextParams = fields.parse()?;
    let span = p.text.span();
    let texts: Vec<String> = match p.text.get_ref() {
        toml::Value::String(s) => vec![s.clone()],
        toml::Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                fields.invalid(
                    span.clone(),
                    "`text` must be a string or a list of strings",
                    "write text = \"March 14\" or text = [\"March 14\", \"14 March\"]",
                )
            })?,
        _ => {
            return Err(fields.invalid(
                span,
                "`text` must be a string or a non-empty list of strings",
                "write text = \"March 14\" or text = [\"March 14\", \"14 March\"]",
            ));
        }
    };
    let mut needles = Vec::new();
    for text in texts {
        let spanned = Spanned::new(span.clone(), text.clone());
        let regex = fields.regex(&spanned, true, p.case_sensitive, p.whole_word)?;
        needles.push((text, regex));
    }
    Ok(Box::new(TextSearch {
        needles,
        wanted,
        literal: true,
    }))
}

fn build_pattern(fields: &mut KindFields<'_>, wanted: bool) -> Result<Box<dyn Rule>, ConfigError> {
    let p: PatternParams = fields.parse()?;
    let regex = fields.regex(&p.pattern, false, p.case_sensitive, p.whole_word)?;
    Ok(Box::new(TextSearch {
        needles: vec![(p.pattern.into_inner(), regex)],
        wanted,
        literal: false,
    }))
}

impl TextSearch {
    fn show(&self, needle: &str) -> String {
        if self.literal {
            format!("{needle:?}")
        } else {
            format!("/{needle}/")
        }
    }
}

impl Rule for TextSearch {
    fn evaluate(&self, answer: &Answer<'_>) -> Result<(), String> {
        let text = answer.text();
        let mut problems = Vec::new();
        for (needle, regex) in &self.needles {
            if self.wanted {
                if !regex.is_match(text) {
                    problems.push(format!("missing {}", self.show(needle)));
                }
            } else if let Some(found) = regex
                // Captures allocate; most answers pass, so look first.
                .is_match(text)
                .then(|| regex.captures(text).and_then(|c| c.get(1)))
                .flatten()
            {
                let what = if self.literal {
                    format!("forbidden {:?}", found.as_str())
                } else {
                    format!("{:?}, matching forbidden /{needle}/", found.as_str())
                };
                problems.push(format!(
                    "found {what} in \"{}\"",
                    context(text, found.start(), found.end())
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

/// Up to 30 characters either side of a match, on one line, so a detail shows where it was.
fn context(text: &str, start: usize, end: usize) -> String {
    let before: String = {
        let chars: Vec<char> = text[..start].chars().rev().take(30).collect();
        chars.into_iter().rev().collect()
    };
    let after: String = text[end..].chars().take(30).collect();
    let lead = if before.len() < start { "..." } else { "" };
    let tail = if after.len() < text.len() - end {
        "..."
    } else {
        ""
    };
    format!("{lead}{before}{}{after}{tail}", &text[start..end]).replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::super::testing::{judge, load_error};

    const ANSWER: &str = "We ship on March 21 with a page_size of 50.\nThe PAGE SIZE stays fixed.";

    fn text(kind: &str, text: &str, extra: &str) -> Result<(), String> {
        judge(
            &format!("kind = \"{kind}\"\ntext = {text}\n{extra}"),
            ANSWER,
        )
    }

    #[test]
    fn contains_ignores_case_by_default() {
        assert_eq!(text("contains", "\"page size\"", ""), Ok(()));
        assert!(text("contains", "\"page size\"", "case_sensitive = true").is_err());
        assert_eq!(
            text("contains", "\"PAGE SIZE\"", "case_sensitive = true"),
            Ok(())
        );
    }

    #[test]
    fn contains_a_list_needs_every_text() {
        assert_eq!(text("contains", "[\"March 21\", \"50\"]", ""), Ok(()));
        let err = text("contains", "[\"March 21\", \"April\", \"cursor\"]", "").unwrap_err();
        assert_eq!(err, "missing \"April\"; missing \"cursor\"");
    }

    #[test]
    fn not_contains_names_what_and_where() {
        let err = text("not_contains", "\"march 21\"", "").unwrap_err();
        assert!(
            err.starts_with("found forbidden \"March 21\" in \"We ship on March 21 with"),
            "{err}"
        );
        assert_eq!(
            text("not_contains", "[\"March 14\", \"page_size=20\"]", ""),
            Ok(())
        );
    }

    #[test]
    fn whole_word_respects_word_edges() {
        // "5" occurs inside "50" but not as a word; "50" does, and so does "page_size".
        assert_eq!(text("not_contains", "\"5\"", "whole_word = true"), Ok(()));
        assert!(text("not_contains", "\"5\"", "").is_err());
        assert!(text("contains", "\"50\"", "whole_word = true").is_ok());
        assert!(text("contains", "\"page\"", "whole_word = true").is_ok());
        assert!(text("contains", "\"size_of\"", "whole_word = true").is_err());
        // Non-word edges such as "$" still work.
        let price = judge(
            "kind = \"contains\"\ntext = \"$20\"\nwhole_word = true",
            "costs $20.",
        );
        assert_eq!(price, Ok(()));
    }

    #[test]
    fn regex_and_not_regex() {
        let re = |kind: &str, pattern: &str, extra: &str| {
            judge(
                &format!("kind = \"{kind}\"\npattern = '{pattern}'\n{extra}"),
                ANSWER,
            )
        };
        assert_eq!(re("regex", r"page_size of \d+", ""), Ok(()));
        assert!(re("regex", r"^The", "").is_err());
        assert_eq!(re("regex", r"(?m)^The", ""), Ok(()));
        let err = re("not_regex", r"march \d+", "").unwrap_err();
        assert!(
            err.starts_with("found \"March 21\", matching forbidden /march \\d+/"),
            "{err}"
        );
        assert!(re("not_regex", r"march \d+", "case_sensitive = true").is_ok());
        assert!(re("regex", r"\d", "whole_word = true").is_err());
    }

    #[test]
    fn bad_regex_and_bad_text_name_their_line() {
        let err = load_error("kind = \"regex\"\npattern = '[a-'");
        assert!(err.starts_with("checks/demo.toml:7: bad regex"), "{err}");
        let err = load_error("kind = \"not_contains\"\ntext = 20");
        assert!(err.starts_with("checks/demo.toml:7:"), "{err}");
        let err = load_error("kind = \"contains\"\ntext = \"\"");
        assert!(err.contains("empty text"), "{err}");
    }
}
