//! `field_equals`, `field_matches`, `field_one_of`: the value at one JSON pointer equals a
//! value, matches a regex, or is one of a list. Expected values are written in TOML and
//! compared as JSON (numbers by value, strings exactly).

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use super::{KindFields, Rule};
use crate::checks::answer_json::{Answer, JsonPointer, brief, json_equal};
use crate::checks::toml_json::toml_to_json;
use crate::config::ConfigError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EqualsParams {
    pointer: Spanned<String>,
    value: toml::Value,
    #[serde(default)]
    allow_fence: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatchesParams {
    pointer: Spanned<String>,
    pattern: Spanned<String>,
    #[serde(default)]
    case_sensitive: bool,
    #[serde(default)]
    allow_fence: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OneOfParams {
    pointer: Spanned<String>,
    values: Spanned<Vec<toml::Value>>,
    #[serde(default)]
    allow_fence: bool,
}

#[derive(Debug)]
enum Expect {
    Equals(Value),
    Matches(Regex),
    OneOf(Vec<Value>),
}

#[derive(Debug)]
struct FieldValue {
    pointer: JsonPointer,
    expect: Expect,
    allow_fence: bool,
}

pub fn build_equals(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    let p: EqualsParams = fields.parse()?;
    Ok(Box::new(FieldValue {
        pointer: fields.pointer(&p.pointer)?,
        expect: Expect::Equals(toml_to_json(&p.value)),
        allow_fence: p.allow_fence,
    }))
}

pub fn build_matches(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    let p: MatchesParams = fields.parse()?;
    Ok(Box::new(FieldValue {
        pointer: fields.pointer(&p.pointer)?,
        expect: Expect::Matches(fields.regex(&p.pattern, false, p.case_sensitive, false)?),
        allow_fence: p.allow_fence,
    }))
}

pub fn build_one_of(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    let p: OneOfParams = fields.parse()?;
    if p.values.get_ref().is_empty() {
        return Err(fields.invalid(
            p.values.span(),
            "`values` is empty, so the check could never pass",
            "list the accepted values, e.g. values = [\"low\", \"medium\", \"high\"]",
        ));
    }
    Ok(Box::new(FieldValue {
        pointer: fields.pointer(&p.pointer)?,
        expect: Expect::OneOf(p.values.get_ref().iter().map(toml_to_json).collect()),
        allow_fence: p.allow_fence,
    }))
}

impl Rule for FieldValue {
    fn evaluate(&self, answer: &Answer<'_>) -> Result<(), String> {
        let root = answer.json(self.allow_fence)?;
        let pointer = &self.pointer;
        let Some(value) = pointer.resolve(root) else {
            return Err(format!("{pointer} is missing"));
        };
        match &self.expect {
            Expect::Equals(expected) if json_equal(value, expected) => Ok(()),
            Expect::Equals(expected) => Err(format!(
                "{pointer} is {}, expected {}",
                brief(value),
                brief(expected)
            )),
            Expect::OneOf(values) if values.iter().any(|v| json_equal(value, v)) => Ok(()),
            Expect::OneOf(values) => Err(format!(
                "{pointer} is {}, expected one of {}",
                brief(value),
                brief(&Value::Array(values.clone()))
            )),
            Expect::Matches(regex) => {
                let scalar;
                let text = match value {
                    Value::String(s) => s.as_str(),
                    Value::Number(_) | Value::Bool(_) => {
                        scalar = value.to_string();
                        scalar.as_str()
                    }
                    _ => return Err(format!("{pointer} is {}, not a string", brief(value))),
                };
                if regex.is_match(text) {
                    Ok(())
                } else {
                    Err(format!(
                        "{pointer} is {}, which does not match /{}/",
                        brief(value),
                        pattern_of(regex)
                    ))
                }
            }
        }
    }
}

/// The pattern as written, without the capture group `KindFields::regex` wraps it in.
fn pattern_of(regex: &Regex) -> &str {
    let s = regex.as_str();
    s.strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{judge, load_error};

    const ANSWER: &str = r#"{"page_size": 50, "status": "Open", "due": "2025-03-14", "ok": true}"#;

    #[test]
    fn equals_compares_json_values() {
        let eq = |v: &str| {
            judge(
                &format!("kind = \"field_equals\"\npointer = \"/page_size\"\nvalue = {v}"),
                ANSWER,
            )
        };
        assert_eq!(eq("50"), Ok(()));
        assert_eq!(eq("50.0"), Ok(()));
        assert_eq!(eq("20").unwrap_err(), "/page_size is 50, expected 20");
        assert!(eq("\"50\"").is_err());
    }

    #[test]
    fn equals_reports_a_missing_pointer() {
        let err = judge(
            "kind = \"field_equals\"\npointer = \"/owner\"\nvalue = \"x\"",
            ANSWER,
        );
        assert_eq!(err.unwrap_err(), "/owner is missing");
    }

    #[test]
    fn matches_uses_the_regex_with_case_option() {
        let m = |extra: &str| {
            judge(
                &format!(
                    "kind = \"field_matches\"\npointer = \"/status\"\npattern = '^open$'\n{extra}"
                ),
                ANSWER,
            )
        };
        assert_eq!(m(""), Ok(()));
        assert!(
            m("case_sensitive = true")
                .unwrap_err()
                .contains("does not match /^open$/")
        );
        let number = judge(
            "kind = \"field_matches\"\npointer = \"/page_size\"\npattern = '^\\d+$'",
            ANSWER,
        );
        assert_eq!(number, Ok(()));
    }

    #[test]
    fn one_of_lists_the_accepted_values() {
        let lines =
            "kind = \"field_one_of\"\npointer = \"/status\"\nvalues = [\"open\", \"closed\"]";
        assert_eq!(
            judge(lines, ANSWER).unwrap_err(),
            "/status is \"Open\", expected one of [\"open\",\"closed\"]"
        );
        let lines = "kind = \"field_one_of\"\npointer = \"/ok\"\nvalues = [true]";
        assert_eq!(judge(lines, ANSWER), Ok(()));
    }

    #[test]
    fn bad_regex_names_its_line() {
        let err = load_error("kind = \"field_matches\"\npointer = \"/a\"\npattern = '(unclosed'");
        assert!(err.starts_with("checks/demo.toml:8: bad regex"), "{err}");
        assert!(err.contains("fix:"), "{err}");
    }
}
