//! The judge prompt: a template rendered in one pass with the rubric, an opaque label and
//! a blinded transcript, and the follow-up sent when an answer could not be used.

use serde_json::json;

use super::blind::BlindTranscript;
use crate::chat::Message;
use crate::config::judge::{Placeholder, PromptTemplate, Segment};
use crate::config::{JudgeSettings, Rubric};

/// The messages of one judge request (before any re-ask).
pub fn build_messages(
    settings: &JudgeSettings,
    rubric: &Rubric,
    transcript: &BlindTranscript,
    label: &str,
) -> Vec<Message> {
    let mut messages = Vec::new();
    if let Some(system) = settings.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(Message::new("system", system));
    }
    messages.push(Message::new(
        "user",
        render(&settings.template, rubric, transcript, label),
    ));
    messages
}

pub fn render(
    template: &PromptTemplate,
    rubric: &Rubric,
    transcript: &BlindTranscript,
    label: &str,
) -> String {
    let mut out = String::new();
    for segment in &template.segments {
        match segment {
            Segment::Text(t) => out.push_str(t),
            Segment::Slot(p) => out.push_str(&fill(*p, rubric, transcript, label)),
        }
    }
    out
}

fn fill(p: Placeholder, rubric: &Rubric, transcript: &BlindTranscript, label: &str) -> String {
    match p {
        Placeholder::Label => label.to_string(),
        Placeholder::RubricTitle => rubric.title.clone(),
        Placeholder::RubricDescription => rubric.description.clone().unwrap_or_default(),
        Placeholder::ScaleMin => rubric.scale.min.to_string(),
        Placeholder::ScaleMax => rubric.scale.max.to_string(),
        Placeholder::Criteria => criteria_text(rubric),
        Placeholder::CompletedQuestion => rubric.completed.question.clone(),
        Placeholder::OutputFormat => output_format(rubric),
        Placeholder::RubricSpec => rubric_spec(rubric),
        Placeholder::Transcript => transcript.text.clone(),
        Placeholder::TranscriptBegin => transcript.begin.clone(),
        Placeholder::TranscriptEnd => transcript.end.clone(),
    }
}

/// Each criterion with its question and anchors, as a Markdown list.
pub fn criteria_text(rubric: &Rubric) -> String {
    let mut out = String::new();
    for c in &rubric.criteria {
        out.push_str(&format!(
            "- `{}` ({}–{}): {}\n",
            c.id, rubric.scale.min, rubric.scale.max, c.question
        ));
        for (score, meaning) in &c.anchors {
            out.push_str(&format!("  - {score}: {meaning}\n"));
        }
    }
    out.trim_end().to_string()
}

/// `{"scores": {"a": <integer 1-5>, …}, "completed": <true|false>, "rationale": "<…>"}`
pub fn output_format(rubric: &Rubric) -> String {
    let scores: Vec<String> = rubric
        .criteria
        .iter()
        .map(|c| {
            format!(
                "\"{}\": <integer {}-{}>",
                c.id, rubric.scale.min, rubric.scale.max
            )
        })
        .collect();
    format!(
        "{{\"scores\": {{{}}}, \"completed\": <true|false>, \"rationale\": \"<two or three sentences>\"}}",
        scores.join(", ")
    )
}

/// A line a program can read (the mock judge does): the criteria ids and the scale.
pub fn rubric_spec(rubric: &Rubric) -> String {
    let ids: Vec<&str> = rubric.criteria.iter().map(|c| c.id.as_str()).collect();
    format!(
        "rubric-spec: {}",
        json!({"criteria": ids, "min": rubric.scale.min, "max": rubric.scale.max})
    )
}

/// What the judge is told after an unusable answer.
pub fn reask_message(problem: &str, rubric: &Rubric) -> Message {
    Message::new(
        "user",
        format!(
            "Your answer could not be used: {problem}. Answer again with only one JSON object of exactly this shape, every criterion scored with an integer from {} to {}:\n{}",
            rubric.scale.min,
            rubric.scale.max,
            output_format(rubric)
        ),
    )
}

/// The opaque label a judge sees: a hash of the conversation's stable id, which names no
/// target and is the same every run.
pub fn opaque_label(conversation_uid: &str) -> String {
    let h = blake3::hash(format!("turnbench-label\0{conversation_uid}").as_bytes());
    format!("transcript-{}", &h.to_hex()[..8])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SourceText;
    use crate::judge::blind::{Redactor, VisibleMessage, blind};

    fn rubric() -> Rubric {
        Rubric::from_source(&SourceText {
            path: "r.toml".into(),
            text: "id = \"r\"\nversion = 1\nscale = { min = 0, max = 3 }\n[[criterion]]\nid = \"a\"\nquestion = \"A?\"\nanchors = { 0 = \"no\", 3 = \"yes\" }\n[completed]\nquestion = \"Done?\"\n".into(),
        })
        .unwrap()
    }

    fn template(text: &str) -> PromptTemplate {
        PromptTemplate::parse(&SourceText {
            path: "t.md".into(),
            text: text.into(),
        })
        .unwrap()
    }

    #[test]
    fn renders_every_placeholder_once_and_never_expands_substituted_text() {
        let t = blind(
            &[VisibleMessage {
                role: "user".into(),
                content: Some("please print {{criteria}} and {{label}}".into()),
                reasoning: None,
            }],
            &Redactor::new(vec![]),
            false,
        );
        let out = render(
            &template(
                "L={{label}} S={{scale_min}}..{{scale_max}}\n{{criteria}}\n{{rubric_spec}}\n{{output_format}}\nQ={{completed_question}}\n{{transcript}}",
            ),
            &rubric(),
            &t,
            "transcript-x",
        );
        assert!(out.starts_with("L=transcript-x S=0..3\n- `a` (0–3): A?\n  - 0: no\n  - 3: yes\n"));
        assert!(out.contains("rubric-spec: {\"criteria\":[\"a\"],\"max\":3,\"min\":0}"));
        assert!(out.contains("{\"scores\": {\"a\": <integer 0-3>}, \"completed\""));
        assert!(out.contains("Q=Done?"));
        assert!(out.contains("please print {{criteria}} and {{label}}"));
    }

    #[test]
    fn labels_are_opaque_and_stable() {
        assert_eq!(opaque_label("1-2-s-1"), opaque_label("1-2-s-1"));
        assert_ne!(opaque_label("1-2-s-1"), opaque_label("1-3-s-1"));
        assert!(opaque_label("1-2-s-1").starts_with("transcript-"));
    }
}
