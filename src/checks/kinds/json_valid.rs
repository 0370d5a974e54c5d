//! `json_valid`: the answer is exactly one JSON value (see `answer_json::read_json`).

use serde::Deserialize;

use super::{KindFields, Rule};
use crate::checks::answer_json::Answer;
use crate::config::ConfigError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    #[serde(default)]
    allow_fence: bool,
}

#[derive(Debug)]
struct JsonValid {
    allow_fence: bool,
}

pub fn build(fields: &mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError> {
    let p: Params = fields.parse()?;
    Ok(Box::new(JsonValid {
        allow_fence: p.allow_fence,
    }))
}

impl Rule for JsonValid {
    fn evaluate(&self, answer: &Answer<'_>) -> Result<(), String> {
        answer
            .json(self.allow_fence)
            .map(|_| ())
            .map_err(str::to_string)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{judge, load_error};

    const STRICT: &str = "kind = \"json_valid\"";
    const FENCED: &str = "kind = \"json_valid\"\nallow_fence = true";

    #[test]
    fn one_value_passes() {
        assert_eq!(judge(STRICT, " {\"a\": [1, 2]}\n"), Ok(()));
    }

    #[test]
    fn duplicate_keys_nan_and_trailing_text_fail() {
        assert!(
            judge(STRICT, r#"{"a": 1, "a": 2}"#)
                .unwrap_err()
                .contains("duplicate key")
        );
        assert!(judge(STRICT, r#"{"a": NaN}"#).is_err());
        assert!(
            judge(STRICT, "{\"a\": 1}\nLet me know!")
                .unwrap_err()
                .contains("after")
        );
    }

    #[test]
    fn fence_only_with_allow_fence() {
        let fenced = "```json\n{\"a\": 1}\n```";
        assert!(judge(STRICT, fenced).unwrap_err().contains("fenced"));
        assert_eq!(judge(FENCED, fenced), Ok(()));
        assert!(judge(FENCED, "Here:\n```json\n{\"a\": 1}\n```").is_err());
    }

    #[test]
    fn unknown_field_names_its_line() {
        let err = load_error("kind = \"json_valid\"\nallow_fences = true");
        assert!(err.starts_with("checks/demo.toml:7:"), "{err}");
        assert!(err.contains("allow_fences"), "{err}");
    }
}
