//! Reading an assistant answer: its text, and the one JSON value every JSON-reading kind sees.
//!
//! Every kind that reads JSON goes through [`read_json`], so "is this JSON?" has one answer
//! for a given `allow_fence`: exactly one JSON value with only whitespace around it; duplicate
//! keys, NaN/Infinity and trailing text fail; `allow_fence` also accepts the whole answer being
//! one fenced block (three backticks, info string `json` or none, the value, closing fence).

use std::cell::OnceCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// One turn's answer as the kinds see it. The parsed JSON is cached, so a conversation's
/// answer is parsed once however many checks read it.
pub struct Answer<'a> {
    text: &'a str,
    strict: OnceCell<Result<Value, String>>,
    fenced: OnceCell<Result<Value, String>>,
}

impl<'a> Answer<'a> {
    pub fn new(text: &'a str) -> Self {
        Answer {
            text,
            strict: OnceCell::new(),
            fenced: OnceCell::new(),
        }
    }

    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The answer's JSON value, or why it is not one (read as [`read_json`] does).
    pub fn json(&self, allow_fence: bool) -> Result<&Value, &str> {
        let cell = if allow_fence && fence_body(self.text).is_some() {
            &self.fenced
        } else {
            &self.strict
        };
        cell.get_or_init(|| read_json(self.text, allow_fence))
            .as_ref()
            .map_err(String::as_str)
    }
}

/// Parses `answer` as exactly one JSON value. The error says what is wrong, for a verdict.
pub fn read_json(answer: &str, allow_fence: bool) -> Result<Value, String> {
    let body = match fence_body(answer) {
        Some(body) if allow_fence => body,
        Some(_) => {
            return Err("answer is a fenced code block, not bare JSON".to_string());
        }
        None => answer,
    };
    let mut de = serde_json::Deserializer::from_str(body);
    let value = StrictValue
        .deserialize(&mut de)
        .map_err(|e| format!("not valid JSON: {e}"))?;
    de.end()
        .map_err(|e| format!("text after the JSON value: {e}"))?;
    Ok(value)
}

/// The body of a fenced block when the whole trimmed answer is one, with info string `json`
/// (any case) or none.
fn fence_body(answer: &str) -> Option<&str> {
    let rest = answer.trim().strip_prefix("```")?;
    let (info, rest) = rest.split_once('\n')?;
    let info = info.trim();
    if !(info.is_empty() || info.eq_ignore_ascii_case("json")) {
        return None;
    }
    let body = rest.trim_end().strip_suffix("```")?;
    // A second fence inside means more than one block, or prose between blocks.
    (!body.contains("```")).then_some(body)
}

/// Builds a `serde_json::Value` like serde_json does, but refuses duplicate object keys,
/// which serde_json would silently resolve to the last one.
struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("number is not finite"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(StrictValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format!("duplicate key {key:?}")));
            }
            let value = map.next_value_seed(StrictValue)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// Why `pointer` is not a JSON pointer, if it is not: it must be "" or start with "/", and
/// every "~" must be "~0" or "~1".
pub fn pointer_problem(pointer: &str) -> Option<&'static str> {
    if !(pointer.is_empty() || pointer.starts_with('/')) {
        return Some("a JSON pointer must be \"\" or start with \"/\"");
    }
    let mut chars = pointer.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Some("in a JSON pointer \"~\" must be written \"~0\" (and \"/\" as \"~1\")");
        }
    }
    None
}

/// A JSON pointer parsed once: tokens unescaped and array indexes read up front, so looking
/// it up allocates nothing (`Value::pointer` unescapes every token on every call). Resolves
/// exactly as `Value::pointer` does.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPointer {
    text: String,
    /// Each token unescaped, with its value as an array index when it is one.
    tokens: Vec<(String, Option<usize>)>,
}

impl JsonPointer {
    pub fn parse(text: &str) -> Result<Self, &'static str> {
        if let Some(problem) = pointer_problem(text) {
            return Err(problem);
        }
        let tokens = text
            .split('/')
            .skip(1)
            .map(|t| {
                let key = t.replace("~1", "/").replace("~0", "~");
                // As serde_json: no sign, no leading zero.
                let index = if key.starts_with('+') || (key.starts_with('0') && key.len() != 1) {
                    None
                } else {
                    key.parse().ok()
                };
                (key, index)
            })
            .collect();
        Ok(JsonPointer {
            text: text.to_string(),
            tokens,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn resolve<'v>(&self, root: &'v Value) -> Option<&'v Value> {
        let mut value = root;
        for (key, index) in &self.tokens {
            value = match value {
                Value::Object(map) => map.get(key)?,
                Value::Array(items) => items.get((*index)?)?,
                _ => return None,
            };
        }
        Some(value)
    }
}

impl fmt::Display for JsonPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// JSON equality where numbers compare by value, so `50` equals `50.0`.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// A short JSON rendering of a value for a failure detail.
pub fn brief(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 80 {
        text
    } else {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}...")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_value_with_whitespace_is_json() {
        assert_eq!(
            read_json("  \n{\"a\": [1, 2.5, null]}\n ", false),
            Ok(json!({"a": [1, 2.5, null]}))
        );
        assert_eq!(read_json("42", false), Ok(json!(42)));
    }

    #[test]
    fn duplicate_keys_fail_even_when_nested() {
        let err = read_json(r#"{"a": {"b": 1, "b": 2}}"#, false).unwrap_err();
        assert!(err.contains("duplicate key \"b\""), "{err}");
        assert!(read_json(r#"[{"a": 1}, {"a": 2}]"#, false).is_ok());
    }

    #[test]
    fn nan_and_infinity_fail() {
        assert!(read_json(r#"{"x": NaN}"#, false).is_err());
        assert!(read_json(r#"{"x": Infinity}"#, false).is_err());
        assert!(read_json(r#"{"x": -Infinity}"#, false).is_err());
    }

    #[test]
    fn trailing_text_fails() {
        let err = read_json("{\"a\": 1}\nHope this helps!", false).unwrap_err();
        assert!(err.starts_with("text after the JSON value"), "{err}");
        assert!(read_json("{\"a\": 1} {\"b\": 2}", false).is_err());
        assert!(read_json("Here it is: {\"a\": 1}", false).is_err());
    }

    #[test]
    fn fence_needs_allow_fence() {
        let fenced = "```json\n{\"a\": 1}\n```";
        assert!(read_json(fenced, false).unwrap_err().contains("fenced"));
        assert_eq!(read_json(fenced, true), Ok(json!({"a": 1})));
        assert_eq!(read_json("\n```\n[1]\n```\n", true), Ok(json!([1])));
        // Bare JSON is still fine when fences are allowed.
        assert_eq!(read_json("{\"a\": 1}", true), Ok(json!({"a": 1})));
    }

    #[test]
    fn fence_must_be_the_whole_answer() {
        assert!(read_json("Sure:\n```json\n{\"a\": 1}\n```", true).is_err());
        assert!(read_json("```json\n{\"a\": 1}\n```\nDone.", true).is_err());
        assert!(read_json("```python\n{\"a\": 1}\n```", true).is_err());
        assert!(read_json("```json\n{\"a\": 1}\n```\n```json\n{}\n```", true).is_err());
    }

    #[test]
    fn answer_caches_per_reading() {
        let fenced = Answer::new("```json\n{\"a\": 1}\n```");
        assert!(fenced.json(false).is_err());
        assert_eq!(fenced.json(true), Ok(&json!({"a": 1})));
        let bare = Answer::new("{\"a\": 1}");
        assert_eq!(bare.json(true), bare.json(false));
    }

    #[test]
    fn pointers_are_checked() {
        assert_eq!(pointer_problem(""), None);
        assert_eq!(pointer_problem("/a/0/b~1c~0"), None);
        assert!(pointer_problem("a/b").is_some());
        assert!(pointer_problem("/a~2").is_some());
        assert!(pointer_problem("/a~").is_some());
    }

    #[test]
    fn parsed_pointers_resolve_like_serde_json() {
        let value = json!({"a": [{"b/c": 1, "m~n": 2}, 3], "": {"": 4}, "01": 5, "0": 6});
        for pointer in [
            "",
            "/a",
            "/a/0",
            "/a/1",
            "/a/2",
            "/a/0/b~1c",
            "/a/0/m~0n",
            "/a/01",
            "/a/+1",
            "/a/-",
            "/",
            "//",
            "/01",
            "/0",
            "/a/0/b",
            "/x/y",
        ] {
            let parsed = JsonPointer::parse(pointer).unwrap();
            assert_eq!(parsed.resolve(&value), value.pointer(pointer), "{pointer}");
            assert_eq!(parsed.to_string(), pointer);
        }
        assert!(JsonPointer::parse("a").is_err());
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_equal(&json!({"n": 50}), &json!({"n": 50.0})));
        assert!(!json_equal(&json!(50), &json!("50")));
        assert!(!json_equal(&json!([1, 2]), &json!([2, 1])));
    }
}
