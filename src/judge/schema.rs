//! Structured output: the `response_format` a judge is sent when its settings say
//! `response_format = "rubric_schema"` — a strict JSON schema built from the rubric, the
//! exact shape [`super::parse`] accepts: `scores` with every criterion (and no other) an
//! integer of the scale, `completed` a boolean, `rationale` a string, nothing else. A
//! pairwise ask gets the pairwise shape (`winner` "A", "B" or "tie", `rationale`).
//!
//! A server may ignore the schema: the parser still checks every answer it receives.

use serde_json::{Value, json};

use crate::config::Rubric;
use crate::config::judge::{JudgeSettings, ResponseFormat};

/// The schema's name: `[a-zA-Z0-9_-]`, at most 64 characters (OpenAI's rule).
fn schema_name(rubric: &Rubric) -> String {
    let raw = format!("rubric_{}_v{}", rubric.id, rubric.version);
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

/// The JSON schema of a single verdict for this rubric.
pub fn verdict_schema(rubric: &Rubric) -> Value {
    let scale: Vec<i64> = (rubric.scale.min..=rubric.scale.max).collect();
    let scores: serde_json::Map<String, Value> = rubric
        .criteria
        .iter()
        .map(|c| {
            (
                c.id.clone(),
                json!({"type": "integer", "enum": scale, "description": c.question}),
            )
        })
        .collect();
    let ids: Vec<&str> = rubric.criteria.iter().map(|c| c.id.as_str()).collect();
    json!({
        "type": "object",
        "properties": {
            "scores": {
                "type": "object",
                "properties": scores,
                "required": ids,
                "additionalProperties": false,
            },
            "completed": {"type": "boolean", "description": rubric.completed.question},
            "rationale": {"type": "string"},
        },
        "required": ["scores", "completed", "rationale"],
        "additionalProperties": false,
    })
}

/// The JSON schema of a pairwise answer.
pub fn preference_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "winner": {"type": "string", "enum": ["A", "B", "tie"]},
            "rationale": {"type": "string"},
        },
        "required": ["winner", "rationale"],
        "additionalProperties": false,
    })
}

/// The `response_format` field to send with `rubric_schema`.
pub fn response_format(rubric: &Rubric, pairwise: bool) -> Value {
    let (name, schema) = if pairwise {
        (
            format!("{}_pairwise", schema_name(rubric))
                .chars()
                .take(64)
                .collect(),
            preference_schema(),
        )
    } else {
        (schema_name(rubric), verdict_schema(rubric))
    };
    json!({
        "type": "json_schema",
        "json_schema": {"name": name, "strict": true, "schema": schema},
    })
}

/// The `response_format` a judge's requests carry for this rubric, if any: the schema for
/// `rubric_schema`, else what the settings hold.
pub fn request_format(settings: &JudgeSettings, rubric: &Rubric, pairwise: bool) -> Option<Value> {
    match settings.response_format {
        ResponseFormat::RubricSchema => Some(response_format(rubric, pairwise)),
        ResponseFormat::None | ResponseFormat::JsonObject | ResponseFormat::AsWritten => {
            settings.request.response_format.clone()
        }
    }
}

/// Words in an HTTP error that say the server refused the response format.
const FORMAT_WORDS: [&str; 4] = [
    "response_format",
    "json_schema",
    "response format",
    "json schema",
];

/// One line for a judge whose request was refused (HTTP 4xx or 5xx) with an error naming
/// the response format: what happened and the fix.
pub fn refusal_hint(settings: &JudgeSettings, status: Option<u16>, error: &str) -> Option<String> {
    let refused = status.is_some_and(|s| (400..600).contains(&s));
    let lower = error.to_lowercase();
    if !refused || !FORMAT_WORDS.iter().any(|w| lower.contains(w)) {
        return None;
    }
    let fix = match settings.response_format {
        ResponseFormat::RubricSchema => "set response_format = \"json_object\" (or \"none\")",
        ResponseFormat::JsonObject | ResponseFormat::AsWritten => {
            "set response_format = \"none\" (the prompt still asks for JSON, and the parser checks it)"
        }
        ResponseFormat::None => "remove response_format from [request] extra",
    };
    Some(format!(
        "judge {}: the server refused the response format ({}; HTTP {}); fix: {fix} in [request] of {}:{}",
        settings.id,
        settings.response_format.as_str(),
        status.unwrap_or(0),
        settings.path.display(),
        settings.response_format_line,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::JsonSchema;
    use crate::judge::parse::parse_verdict;

    fn rubric() -> Rubric {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        Rubric::load(&root.join("rubrics/multiturn-quality.toml")).unwrap()
    }

    /// Every answer the schema admits, the parser accepts; what it rejects, the parser
    /// refuses too (validated with the checks' JSON Schema validator, not the parser).
    #[test]
    fn the_schema_admits_exactly_what_the_parser_accepts() {
        let r = rubric();
        let schema = verdict_schema(&r);
        let validator = JsonSchema::compile(&schema).unwrap();
        let ids: Vec<&str> = r.criteria.iter().map(|c| c.id.as_str()).collect();
        let scores = |v: i64| -> serde_json::Map<String, Value> {
            ids.iter().map(|id| (id.to_string(), json!(v))).collect()
        };
        let good = json!({"scores": scores(r.scale.max), "completed": true, "rationale": "ok"});
        assert!(validator.is_valid(&good));
        assert!(parse_verdict(&good.to_string(), &r).is_ok());
        let mut missing = scores(3);
        missing.remove(ids[0]);
        let mut extra = scores(3);
        extra.insert("charm".into(), json!(3));
        for bad in [
            json!({"scores": scores(r.scale.max + 1), "completed": true, "rationale": "x"}),
            json!({"scores": scores(r.scale.min - 1), "completed": true, "rationale": "x"}),
            json!({"scores": missing, "completed": true, "rationale": "x"}),
            json!({"scores": extra, "completed": true, "rationale": "x"}),
            json!({"scores": scores(3), "completed": "yes", "rationale": "x"}),
            json!({"scores": scores(3), "completed": true}),
            json!({"scores": scores(3), "completed": true, "rationale": "x", "more": 1}),
        ] {
            assert!(!validator.is_valid(&bad), "schema admits {bad}");
            // The parser refuses the same answers, except an unknown top-level field,
            // which it reads past.
            if bad.get("more").is_none() {
                assert!(parse_verdict(&bad.to_string(), &r).is_err(), "{bad}");
            }
        }
        let format = response_format(&r, false);
        assert_eq!(format["type"], "json_schema");
        assert_eq!(format["json_schema"]["strict"], true);
        assert_eq!(
            format["json_schema"]["name"],
            format!("rubric_{}_v{}", r.id, r.version)
        );
        let pairwise = response_format(&r, true);
        let v = JsonSchema::compile(&pairwise["json_schema"]["schema"]).unwrap();
        assert!(v.is_valid(&json!({"winner": "tie", "rationale": "same"})));
        assert!(!v.is_valid(&json!({"winner": "C", "rationale": "same"})));
    }

    #[test]
    fn a_refused_format_gets_one_line_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.md"), "{{criteria}}\n{{transcript}}\n").unwrap();
        let p = dir.path().join("j.toml");
        std::fs::write(
            &p,
            "base_url = \"http://x/v1\"\nmodel = \"m\"\ntemplate = \"t.md\"\n[request]\nresponse_format = \"rubric_schema\"\n",
        )
        .unwrap();
        let s = JudgeSettings::load(&p).unwrap();
        assert_eq!(s.response_format, ResponseFormat::RubricSchema);
        assert_eq!(s.request.response_format, None);
        let hint = refusal_hint(
            &s,
            Some(500),
            "HTTP 500: Unrecognized response_format type: json_schema",
        )
        .unwrap();
        assert!(hint.contains("j.toml:5"), "{hint}");
        assert!(hint.contains("response_format = \"json_object\""), "{hint}");
        assert!(!hint.contains('\n'));
        assert!(refusal_hint(&s, Some(500), "HTTP 500: internal error").is_none());
        assert!(refusal_hint(&s, None, "response_format").is_none());
    }
}
