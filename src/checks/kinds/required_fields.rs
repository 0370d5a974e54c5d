//! `required_fields`: every JSON pointer in `pointers` exists in the answer's JSON and, with
//! `non_empty = true`, is not null, a blank string, `[]` or `{}`.

use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use super::{KindFields, Rule};
use crate::checks::answer_json::{Answer, JsonPointer};
use crate::config::ConfigError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    pointers: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    non_empty: bool,
    #[serde(default)]
    allow_fence: bool,
}

#[derive(Debug)]
struct RequiredFields {
    pointers: Vec<JsonPointer>,
    non_empty: bool,
    allow_fence: bool,
}

pub fn build(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    let p: Params = fields.parse()?;
    if p.pointers.get_ref().is_empty() {
        return Err(fields.invalid(
            p.pointers.span(),
            "`pointers` is empty, so the check could never fail",
            "list the JSON pointers that must exist, e.g. pointers = [\"/id\", \"/items\"]",
        ));
    }
    let pointers = p
        .pointers
        .get_ref()
        .iter()
        .map(|ptr| fields.pointer(ptr))
        .collect::<Result<_, _>>()?;
    Ok(Box::new(RequiredFields {
        pointers,
        non_empty: p.non_empty,
        allow_fence: p.allow_fence,
    }))
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

impl Rule for RequiredFields {
    fn evaluate(&self, answer: &Answer<'_>) -> Result<(), String> {
        let value = answer.json(self.allow_fence)?;
        let mut missing = Vec::new();
        let mut empty = Vec::new();
        for pointer in &self.pointers {
            match pointer.resolve(value) {
                None => missing.push(pointer.as_str()),
                Some(v) if self.non_empty && is_empty(v) => empty.push(pointer.as_str()),
                Some(_) => {}
            }
        }
        let mut problems = Vec::new();
        if !missing.is_empty() {
            problems.push(format!("missing {}", missing.join(", ")));
        }
        if !empty.is_empty() {
            problems.push(format!("empty {}", empty.join(", ")));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{judge, load_error};

    const FIELDS: &str =
        "kind = \"required_fields\"\npointers = [\"/id\", \"/owner/name\", \"/tags\"]";

    #[test]
    fn present_fields_pass_even_if_empty() {
        assert_eq!(
            judge(FIELDS, r#"{"id": 1, "owner": {"name": ""}, "tags": []}"#),
            Ok(())
        );
    }

    #[test]
    fn missing_fields_are_named() {
        let err = judge(FIELDS, r#"{"id": 1, "owner": {}}"#).unwrap_err();
        assert_eq!(err, "missing /owner/name, /tags");
    }

    #[test]
    fn non_empty_rejects_blank_values() {
        let lines = format!("{FIELDS}\nnon_empty = true");
        let err = judge(&lines, r#"{"id": 0, "owner": {"name": "  "}, "tags": []}"#).unwrap_err();
        assert_eq!(err, "empty /owner/name, /tags");
        assert_eq!(
            judge(
                &lines,
                r#"{"id": 0, "owner": {"name": "Ada"}, "tags": ["x"]}"#
            ),
            Ok(())
        );
    }

    #[test]
    fn bad_pointer_names_its_line() {
        let err = load_error("kind = \"required_fields\"\npointers = [\"id\"]");
        assert!(
            err.starts_with("checks/demo.toml:7: bad JSON pointer \"id\""),
            "{err}"
        );
        assert!(err.contains("fix:"), "{err}");
    }
}
