//! ShareGPT records (FastChat, Axolotl and most public chat datasets) into the exchange
//! format: `{"id", "model", "system", "conversations": [{"from": "human", "value": …},
//! {"from": "gpt", "value": …}]}`. Each `from` maps to one role, by a fixed table; a name
//! not in it is an error, never a guess.

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use super::shape::{Dropped, MessagePaths, Normalised, RawLine, Shape, parse_field};
use crate::exchange::{MessageLine, Object, Role};
use crate::jsonl::LineProblem;

/// Every `from` read, and its role.
const SPEAKERS: [(&str, Role); 11] = [
    ("human", Role::User),
    ("user", Role::User),
    ("gpt", Role::Assistant),
    ("assistant", Role::Assistant),
    ("chatgpt", Role::Assistant),
    ("bing", Role::Assistant),
    ("bard", Role::Assistant),
    ("system", Role::System),
    ("tool", Role::Tool),
    ("function", Role::Tool),
    ("observation", Role::Tool),
];

/// One entry of `conversations`. Other keys (`weight`, `markdown`, ...) are ignored.
#[derive(Deserialize)]
struct Turn {
    from: Speaker,
    value: String,
}

struct Speaker(Role);

impl<'de> Deserialize<'de> for Speaker {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct SpeakerVisitor;
        impl Visitor<'_> for SpeakerVisitor {
            type Value = Speaker;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a ShareGPT role")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Speaker, E> {
                SPEAKERS
                    .iter()
                    .find(|(name, _)| *name == v)
                    .map(|(_, role)| Speaker(*role))
                    .ok_or_else(|| {
                        E::custom(format_args!(
                            "unknown role {v:?}; expected human or user (user), gpt, \
                             assistant, chatgpt, bing or bard (assistant), system, or tool, \
                             function or observation (tool)"
                        ))
                    })
            }
        }
        d.deserialize_str(SpeakerVisitor)
    }
}

/// The record's `conversations` as messages, after its `system` prompt when it has a
/// non-blank one.
pub(super) fn normalise(mut raw: RawLine) -> Result<Normalised, LineProblem> {
    let mut line = raw.take_common();
    let Some(conversations) = raw.conversations else {
        return Err(LineProblem::new("conversations", "missing"));
    };
    let turns: Vec<Object<Turn>> = parse_field("conversations", conversations)?;
    let system = raw
        .system
        .map(|s| parse_field::<Option<String>>("system", s))
        .transpose()?
        .flatten()
        .filter(|s| !s.trim().is_empty());
    let system_field = system.is_some();
    line.messages
        .reserve_exact(turns.len() + usize::from(system_field));
    line.messages
        .extend(system.map(|s| MessageLine::text(Role::System, s)));
    line.messages.extend(
        turns
            .into_iter()
            .map(|Object(t)| MessageLine::text(t.from.0, t.value)),
    );
    Ok(Normalised {
        shape: Shape::ShareGpt,
        line,
        paths: MessagePaths::ShareGpt { system_field },
        dropped: Dropped::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::format::read_record;
    use super::super::shape::ShapeFilter;
    use super::*;

    fn read(text: &str) -> Result<Normalised, LineProblem> {
        read_record(text.as_bytes(), ShapeFilter::Auto)
    }

    fn roles(n: &Normalised) -> Vec<(&str, &str)> {
        n.line
            .messages
            .iter()
            .map(|m| (m.role.as_str(), m.content.as_deref().unwrap_or("")))
            .collect()
    }

    #[test]
    fn every_speaker_maps_to_its_role() {
        for (name, role) in SPEAKERS {
            let text = format!(r#"{{"conversations":[{{"from":"{name}","value":"x"}}]}}"#);
            assert_eq!(read(&text).unwrap().line.messages[0].role, role, "{name}");
        }
    }

    #[test]
    fn fields_and_system_prompt_are_kept() {
        let n = read(
            r#"{"id":"sg-1","model":"vicuna-13b","system":"Be brief.","weight":1,
                "conversations":[{"from":"human","value":"Q"},{"from":"gpt","value":"A","weight":0},
                {"from":"observation","value":"42"},{"from":"chatgpt","value":"B"}]}"#,
        )
        .unwrap();
        assert_eq!(n.shape, Shape::ShareGpt);
        assert_eq!(n.line.id.as_deref(), Some("sg-1"));
        assert_eq!(n.line.model.as_deref(), Some("vicuna-13b"));
        assert_eq!(
            roles(&n),
            [
                ("system", "Be brief."),
                ("user", "Q"),
                ("assistant", "A"),
                ("tool", "42"),
                ("assistant", "B")
            ]
        );
        assert_eq!(n.paths, MessagePaths::ShareGpt { system_field: true });
        // A blank or null system prompt gives no message.
        for system in [r#""  ""#, "null"] {
            let n = read(&format!(
                r#"{{"system":{system},"conversations":[{{"from":"human","value":"Q"}}]}}"#
            ))
            .unwrap();
            assert_eq!(roles(&n), [("user", "Q")]);
            assert_eq!(
                n.paths,
                MessagePaths::ShareGpt {
                    system_field: false
                }
            );
        }
    }

    #[test]
    fn an_unknown_role_is_named_never_guessed() {
        let p = read(
            r#"{"conversations":[{"from":"human","value":"Q"},{"from":"robot","value":"A"}]}"#,
        )
        .unwrap_err();
        assert_eq!(p.field, "conversations[1].from");
        assert!(
            p.problem
                .starts_with("unknown role \"robot\"; expected human or user (user), gpt,"),
            "{p}"
        );
    }

    #[test]
    fn wrong_shapes_name_their_path() {
        let p = read(r#"{"conversations":[{"from":"human","value":null}]}"#).unwrap_err();
        assert_eq!(p.field, "conversations[0].value");
        assert!(p.problem.starts_with("wrong type: null"), "{p}");
        let p = read(r#"{"conversations":[["human","Q"]]}"#).unwrap_err();
        assert_eq!(p.field, "conversations[0]");
        let p = read(r#"{"system":5,"conversations":[]}"#).unwrap_err();
        assert_eq!(p.field, "system");
    }
}
