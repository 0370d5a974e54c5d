//! The exchange format (docs/import-export.md, "The turnbench format"): JSON Lines, one conversation per line.
//! `import` reads it and `export conversations` writes it, so both use these types.
//!
//! ```json
//! {"id": "c-1", "provider": "acme", "model": "glm-5.3-flash", "scenario": "dev-api",
//!  "repeat": 1, "outcome": "completed",
//!  "messages": [{"role": "user", "content": "..."},
//!               {"role": "assistant", "content": "...", "timing": {"e2e_ms": 2310.5}}]}
//! ```
//!
//! Only `messages` is required, so a plain OpenAI chat line imports as it is (tool calls
//! included). Fields the format does not know are ignored, except the content-bearing
//! OpenAI ones it does not store (`refusal`, `function_call`, `audio`), which import
//! refuses or, with `--lossy`, counts. Unknown values are left out when written (never 0).

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// One conversation: one line of the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConversationLine {
    /// Stable identity; without it the importer uses a hash of the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model id sent to the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model label cells group by, written only when it differs from `model` (an
    /// addition to the format's first list, so that an export keeps labels through a round trip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Scenario id; links the conversation to its checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// `completed`, `interrupted`, or the class of the turn that ended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// Written by export for an interrupted attempt that a later conversation of its slot
    /// redid: the id of the one that counts. Never read (import works it out again).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    #[serde(deserialize_with = "objects")]
    pub messages: Vec<MessageLine>,
    /// Written by `export --with-scores`; never read (checks and judgments are recomputed).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<CheckLine>>,
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub judgments: Option<Vec<JudgmentLine>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    /// A tool's result (OpenAI `tool`, ShareGPT `tool`/`function`/`observation`): text in
    /// a prompt, like a user message, with the `tool_call_id` of the call it answers when
    /// the source names it. The calls are the `tool_calls` of the assistant message.
    Tool,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::System, Role::User, Role::Assistant, Role::Tool];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// The role named exactly so, as the format writes it.
    pub fn parse(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct RoleVisitor;
        impl Visitor<'_> for RoleVisitor {
            type Value = Role;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a role: system, user, assistant or tool")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Role, E> {
                Role::parse(v).ok_or_else(|| {
                    E::custom(format_args!(
                        "unknown role {v:?}; expected system, user, assistant or tool \
                         (other roles cannot be imported)"
                    ))
                })
            }
        }
        d.deserialize_str(RoleVisitor)
    }
}

/// One message. Everything after `content` belongs to assistant messages only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageLine {
    pub role: Role,
    /// A string, or null for an assistant turn where nothing arrived. On input, an OpenAI
    /// array of text parts is also accepted (joined with newlines).
    #[serde(default, deserialize_with = "text_content")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The turn's class (`ok`, `timeout`, ...); derived when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// What went wrong, for a failed turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub timing: Option<TimingLine>,
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub usage: Option<UsageLine>,
    /// For a turn that outgrew the context (`outcome` `context_overflow`): the sizes the
    /// server stated, when it stated any.
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub context: Option<ContextLine>,
    /// The tools an assistant message called (OpenAI's shape). A message that only calls
    /// tools is a turn like any other: outcome `ok`, `content` null.
    #[serde(
        default,
        deserialize_with = "optional_calls",
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_calls: Option<Vec<ToolCallLine>>,
    /// A `tool` message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Content-bearing OpenAI message fields turnbench does not store, when given with a
    /// value (OpenAI writes `"refusal": null` on every message): read so that import
    /// refuses the record naming the field, or counts the drop with `--lossy`. Never
    /// written.
    #[serde(default, skip_serializing, deserialize_with = "carries")]
    pub refusal: bool,
    #[serde(default, skip_serializing, deserialize_with = "carries")]
    pub function_call: bool,
    #[serde(default, skip_serializing, deserialize_with = "carries")]
    pub audio: bool,
}

/// Whether a field holds something: not null, not an empty string, array or object.
fn carries<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::Null => false,
        serde_json::Value::String(s) => !s.is_empty(),
        serde_json::Value::Array(a) => !a.is_empty(),
        serde_json::Value::Object(o) => !o.is_empty(),
        _ => true,
    })
}

/// One tool call, as OpenAI's chat format writes it:
/// `{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallLine {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `function` (the only kind OpenAI's chat format has); kept as given.
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    pub function: FunctionCallLine,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCallLine {
    pub name: String,
    /// The arguments as JSON text; an object given in their place is written as its text.
    #[serde(default, deserialize_with = "arguments_text")]
    pub arguments: String,
}

impl ToolCallLine {
    /// A function call with these arguments (JSON text).
    pub fn function(id: Option<String>, name: impl Into<String>, arguments: String) -> Self {
        ToolCallLine {
            id,
            kind: function_kind(),
            function: FunctionCallLine {
                name: name.into(),
                arguments,
            },
        }
    }
}

fn function_kind() -> String {
    "function".to_string()
}

fn optional_calls<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<ToolCallLine>>, D::Error> {
    // An empty list is no calls: written back as none.
    Ok(Option::<Vec<Object<ToolCallLine>>>::deserialize(d)?
        .map(|v| v.into_iter().map(|o| o.0).collect::<Vec<_>>())
        .filter(|v| !v.is_empty()))
}

/// Arguments as JSON text: a string as it is, any other JSON value as its text.
fn arguments_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => s,
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    })
}

impl MessageLine {
    /// A visible message with no turn data (system, user, or a bare assistant answer).
    pub fn text(role: Role, content: impl Into<String>) -> Self {
        MessageLine {
            role,
            content: Some(content.into()),
            reasoning: None,
            finish_reason: None,
            outcome: None,
            error: None,
            http_status: None,
            timing: None,
            usage: None,
            context: None,
            tool_calls: None,
            tool_call_id: None,
            refusal: false,
            function_call: false,
            audio: false,
        }
    }

    /// The content-bearing fields this message carried that turnbench does not store.
    pub fn unstored(&self) -> impl Iterator<Item = &'static str> {
        [
            ("refusal", self.refusal),
            ("function_call", self.function_call),
            ("audio", self.audio),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
    }

    /// The name of the first assistant-only field set on this message, if any.
    pub fn assistant_field(&self) -> Option<&'static str> {
        [
            ("reasoning", self.reasoning.is_some()),
            ("finish_reason", self.finish_reason.is_some()),
            ("outcome", self.outcome.is_some()),
            ("error", self.error.is_some()),
            ("http_status", self.http_status.is_some()),
            ("timing", self.timing.is_some()),
            ("usage", self.usage.is_some()),
            ("context", self.context.is_some()),
            ("tool_calls", self.tool_calls.is_some()),
        ]
        .into_iter()
        .find_map(|(name, set)| set.then_some(name))
    }
}

/// Milliseconds from the request start; absent = not measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TimingLine {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfa_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<f64>,
}

impl TimingLine {
    pub fn is_empty(&self) -> bool {
        self.ttft_ms.is_none() && self.ttfa_ms.is_none() && self.e2e_ms.is_none()
    }
}

/// Token counts as the provider reported them; absent = not reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageLine {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<i64>,
}

impl UsageLine {
    pub fn is_empty(&self) -> bool {
        *self == UsageLine::default()
    }
}

/// What a server said about sizes when it refused a request that outgrew the model's
/// context; absent = not stated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextLine {
    /// The prompt's tokens as the server counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<i64>,
    /// The context window the server serves the model with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_tokens: Option<i64>,
    /// The completion room the request asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<i64>,
}

impl ContextLine {
    pub fn is_empty(&self) -> bool {
        *self == ContextLine::default()
    }
}

/// A rule-based check result (`export --with-scores`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckLine {
    pub id: String,
    pub tag: Option<String>,
    /// `None` when the check was not scored.
    pub passed: Option<bool>,
    pub detail: Option<String>,
}

/// A judge result (`export --with-scores`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgmentLine {
    pub rubric: String,
    pub judge: String,
    /// A simulated judge (the built-in mock) gave it: never a real score.
    pub simulated: bool,
    pub replicate: i64,
    /// `ok`, `unparseable` or `judge_error`; only `ok` carries scores.
    pub status: String,
    pub scores: std::collections::BTreeMap<String, i64>,
    pub completed: Option<bool>,
    pub rationale: Option<String>,
    /// The judge's last answer as received: why an unparseable judgment is unscored.
    pub raw_output: Option<String>,
    /// Why each ask failed, for unparseable and failed judgments.
    pub error: Option<String>,
}

impl ConversationLine {
    /// Parses one line. Only a JSON object is a conversation (serde would otherwise also
    /// take a struct from an array, by position).
    pub fn from_json(line: &[u8]) -> serde_json::Result<Self> {
        serde_json::from_slice::<Object<ConversationLine>>(line).map(|o| o.0)
    }
}

/// A struct read only from a JSON object, never from an array by position.
pub struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Object)
            }
        }
        d.deserialize_map(ObjectVisitor(std::marker::PhantomData))
    }
}

fn objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    // Same layout, so this collect reuses the vector in place.
    Ok(Vec::<Object<T>>::deserialize(d)?
        .into_iter()
        .map(|o| o.0)
        .collect())
}

fn optional_object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Ok(Option::<Object<T>>::deserialize(d)?.map(|o| o.0))
}

/// `content`: a string, null, or an array of `{"type": "text", "text": ...}` parts.
fn text_content<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    struct ContentVisitor;
    impl<'de> Visitor<'de> for ContentVisitor {
        type Value = Option<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a string, null, or an array of text parts")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Some(v.to_owned()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_any(self)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut text = String::new();
            while let Some(part) = seq.next_element::<TextPart>()? {
                if part.kind != "text" {
                    return Err(de::Error::custom(format_args!(
                        "a {:?} part; only text parts can be imported (import with --lossy \
                         to drop the others, counted in the summary)",
                        part.kind
                    )));
                }
                let Some(t) = part.text else {
                    return Err(de::Error::custom("a text part without `text`"));
                };
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&t);
            }
            Ok(Some(text))
        }
    }
    d.deserialize_option(ContentVisitor)
}

#[derive(Deserialize)]
struct TextPart {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_openai_line_parses() {
        let line = r#"{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!","name":"x"}],"temperature":0.2}"#;
        let c: ConversationLine = serde_json::from_str(line).unwrap();
        assert_eq!(c.messages.len(), 3);
        assert_eq!(c.messages[2].role, Role::Assistant);
        assert_eq!(c.messages[2].content.as_deref(), Some("Hello!"));
        assert_eq!(c.provider, None);
    }

    #[test]
    fn content_accepts_null_and_text_parts() {
        let m: MessageLine =
            serde_json::from_str(r#"{"role":"assistant","content":null}"#).unwrap();
        assert_eq!(m.content, None);
        let m: MessageLine = serde_json::from_str(r#"{"role":"assistant"}"#).unwrap();
        assert_eq!(m.content, None);
        let m: MessageLine = serde_json::from_str(
            r#"{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#,
        )
        .unwrap();
        assert_eq!(m.content.as_deref(), Some("a\nb"));
        let err = serde_json::from_str::<MessageLine>(
            r#"{"role":"user","content":[{"type":"image_url","image_url":{}}]}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("only text parts"), "{err}");
    }

    #[test]
    fn unknown_role_is_named() {
        let err = serde_json::from_str::<MessageLine>(r#"{"role":"developer","content":"x"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown role \"developer\""), "{err}");
        let m: MessageLine =
            serde_json::from_str(r#"{"role":"tool","content":"42","tool_call_id":"c1"}"#).unwrap();
        assert_eq!((m.role, m.content.as_deref()), (Role::Tool, Some("42")));
    }

    #[test]
    fn unknown_values_are_left_out_when_written() {
        let mut m = MessageLine::text(Role::Assistant, "ok");
        m.timing = Some(TimingLine {
            e2e_ms: Some(12.5),
            ..Default::default()
        });
        let c = ConversationLine {
            messages: vec![m],
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"messages":[{"role":"assistant","content":"ok","timing":{"e2e_ms":12.5}}]}"#
        );
    }

    #[test]
    fn structs_are_objects_never_arrays() {
        assert!(
            ConversationLine::from_json(br#"[null,null,null,null,null,null,null,[]]"#).is_err()
        );
        let err = ConversationLine::from_json(br#"{"messages":[["user","hi"]]}"#).unwrap_err();
        assert!(err.to_string().contains("expected an object"), "{err}");
        let err = ConversationLine::from_json(
            br#"{"messages":[{"role":"assistant","content":"a","timing":[1,2,3]}]}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("expected an object"), "{err}");
        let ok = ConversationLine::from_json(
            br#"{"messages":[{"role":"assistant","content":"a","timing":{"e2e_ms":3},"usage":null}]}"#,
        )
        .unwrap();
        assert_eq!(ok.messages[0].timing.unwrap().e2e_ms, Some(3.0));
    }

    #[test]
    fn scores_are_written_but_never_read() {
        let line = r#"{"messages":[],"checks":[{"id":"x"}],"judgments":"anything"}"#;
        let c: ConversationLine = serde_json::from_str(line).unwrap();
        assert_eq!(c.checks, None);
        assert_eq!(c.judgments, None);
    }
}
