//! `json_schema`: the answer's JSON validates against a JSON Schema (draft 2020-12 unless its
//! `$schema` names another), given inline (`schema`, a string holding JSON) or as
//! `schema_file` (relative to the checks file). Validation is the `jsonschema` crate's,
//! through [`JsonSchema`].

use serde::Deserialize;
use toml::Spanned;

use super::{KindFields, Rule};
use crate::checks::answer_json::{Answer, read_json};
use crate::checks::schema::JsonSchema;
use crate::config::ConfigError;

/// Violations listed in one detail; beyond that only the count, so a detail stays readable.
const MAX_LISTED: usize = 8;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    schema: Option<Spanned<String>>,
    schema_file: Option<Spanned<String>>,
    #[serde(default)]
    allow_fence: bool,
}

#[derive(Debug)]
struct SchemaCheck {
    schema: JsonSchema,
    allow_fence: bool,
}

pub fn build(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    let p: Params = fields.parse()?;
    let (text, span) = match (&p.schema, &p.schema_file) {
        (Some(inline), None) => (inline.get_ref().clone(), inline.span()),
        (None, Some(file)) => (fields.read_relative(file)?, file.span()),
        _ => {
            return Err(fields.invalid(
                fields.span(),
                "json_schema needs exactly one of `schema` and `schema_file`",
                "write schema = '''{\"type\": \"object\"}''' or schema_file = \"schemas/x.json\"",
            ));
        }
    };
    let schema = read_json(&text, false).map_err(|e| {
        fields.invalid(
            span.clone(),
            format!("the schema is not JSON: {e}"),
            "write the schema as one JSON object",
        )
    })?;
    // Formats (date, email, ...) are asserted, not just annotated: a check that names a
    // format means it. An unknown format or a remote $ref is refused here, not ignored.
    let schema = JsonSchema::compile(&schema).map_err(|e| {
        fields.invalid(
            span,
            format!("invalid JSON Schema: {e}"),
            "fix the schema (JSON Schema, the formats and references docs/checks.md lists)",
        )
    })?;
    Ok(Box::new(SchemaCheck {
        schema,
        allow_fence: p.allow_fence,
    }))
}

impl Rule for SchemaCheck {
    fn evaluate(&self, answer: &Answer<'_>) -> Result<(), String> {
        let value = answer.json(self.allow_fence)?;
        // The fast path: validity alone, without collecting errors.
        if self.schema.is_valid(value) {
            return Ok(());
        }
        let violations = self.schema.violations(value);
        let count = violations.len();
        // Each as "pointer: message", "(root)" for the whole answer.
        let listed: Vec<String> = violations
            .iter()
            .take(MAX_LISTED)
            .map(ToString::to_string)
            .collect();
        if count == 0 {
            return Ok(());
        }
        let mut detail = format!("schema violations: {}", listed.join("; "));
        if count > listed.len() {
            detail.push_str(&format!("; and {} more", count - listed.len()));
        }
        Err(detail)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{judge, load_error};

    const SCHEMA: &str = r#"kind = "json_schema"
schema = '''
{"type": "object",
 "required": ["id", "items"],
 "properties": {
   "id": {"type": "string"},
   "due": {"type": "string", "format": "date"},
   "items": {"type": "array", "items": {"type": "integer"}}
 },
 "additionalProperties": false}
'''"#;

    #[test]
    fn valid_instance_passes() {
        assert_eq!(
            judge(
                SCHEMA,
                r#"{"id": "a", "due": "2025-06-30", "items": [1, 2]}"#
            ),
            Ok(())
        );
    }

    #[test]
    fn each_violation_names_its_pointer() {
        let err = judge(SCHEMA, r#"{"id": 7, "items": [1, "two"], "extra": true}"#).unwrap_err();
        assert!(err.contains("/id:"), "{err}");
        assert!(err.contains("/items/1:"), "{err}");
        assert!(err.contains("(root):"), "{err}");
    }

    #[test]
    fn formats_are_asserted() {
        let err = judge(SCHEMA, r#"{"id": "a", "due": "30/06/2025", "items": []}"#).unwrap_err();
        assert!(err.contains("/due:"), "{err}");
    }

    #[test]
    fn not_json_fails_before_schema() {
        let err = judge(SCHEMA, "```json\n{\"id\": \"a\", \"items\": []}\n```").unwrap_err();
        assert!(err.contains("fenced"), "{err}");
    }

    #[test]
    fn invalid_schema_names_its_line() {
        let err = load_error("kind = \"json_schema\"\n\nschema = '{\"type\": \"strin\"}'");
        assert!(
            err.starts_with("checks/demo.toml:8: invalid JSON Schema"),
            "{err}"
        );
        assert!(err.contains("fix:"), "{err}");
        let err = load_error("kind = \"json_schema\"\nschema = '{\"type\": '");
        assert!(
            err.starts_with("checks/demo.toml:7: the schema is not JSON"),
            "{err}"
        );
    }

    #[test]
    fn beyond_eight_violations_only_the_count() {
        let lines = r#"kind = "json_schema"
schema = '{"items": {"type": "integer"}}'"#;
        let err = judge(
            lines,
            r#"["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]"#,
        )
        .unwrap_err();
        assert!(
            err.starts_with("schema violations: /0: \"a\" is not of type \"integer\"; /1:"),
            "{err}"
        );
        assert_eq!(err.matches("is not of type").count(), 8, "{err}");
        assert!(err.ends_with("; and 2 more"), "{err}");
    }

    #[test]
    fn the_whole_of_draft_2020_12_loads() {
        let lines = r#"kind = "json_schema"
schema = '{"properties": {"a": {}}, "unevaluatedProperties": false, "$defs": {"n": {"$anchor": "n", "type": "integer"}}, "additionalItems": true}'"#;
        assert_eq!(judge(lines, r#"{"a": 1}"#), Ok(()));
        let err = judge(lines, r#"{"a": 1, "b": 2}"#).unwrap_err();
        assert!(err.starts_with("schema violations: (root): "), "{err}");
    }

    #[test]
    fn unknown_formats_and_remote_refs_are_load_errors() {
        let err = load_error("kind = \"json_schema\"\nschema = '{\"format\": \"ipv5\"}'");
        assert!(
            err.starts_with("checks/demo.toml:7: invalid JSON Schema: ")
                && err.contains("Unknown format: 'ipv5'"),
            "{err}"
        );
        assert!(err.contains("docs/checks.md"), "{err}");
        let err = load_error(
            "kind = \"json_schema\"\nschema = '{\"$ref\": \"https://example.com/s.json\"}'",
        );
        assert!(
            err.starts_with("checks/demo.toml:7: invalid JSON Schema: ")
                && err.contains("remote $ref https://example.com/s.json is not fetched")
                && err.contains("\"$defs\""),
            "{err}"
        );
        assert!(err.contains("fix:"), "{err}");
    }

    #[test]
    fn needs_exactly_one_schema_source() {
        let err = load_error("kind = \"json_schema\"");
        assert!(
            err.contains("exactly one of `schema` and `schema_file`"),
            "{err}"
        );
        let err = load_error("kind = \"json_schema\"\nschema_file = \"nowhere.json\"");
        assert!(err.starts_with("checks/demo.toml:7: cannot read"), "{err}");
    }
}
