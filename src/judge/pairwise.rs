//! Pairwise mode (`turnbench judge --pairwise --baseline LABEL_OR_TARGET`): for each run ×
//! scenario × repeat in which the baseline and another target both completed, the judge
//! sees the two blinded conversations as A and B and says which better satisfies the
//! rubric, or a tie — asked twice, the baseline first and then second. The two answers are
//! stored apart (`pairwise_judgments`); the `pairwise_verdicts` view reads a verdict that
//! changes with position as inconsistent, and counts it as a tie.
//!
//! The prompt is the settings' `pairwise_template`, else the shipped `judges/pairwise.md`
//! (placeholders `{{rubric_title}}`, `{{rubric_description}}`, `{{criteria}}`,
//! `{{transcript_a}}`, `{{transcript_b}}`), rendered in one pass (text put into it
//! is never expanded again). The answer is `{"winner": "A"|"B"|"tie", "rationale": …}`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::blind::{BlindTranscript, blind};
use super::parse::{ParseFailure, last_object};
use super::{AuditLeak, JudgeError, JudgePlan, PlannedJudgment, audit, cache, prompt};
use crate::chat::Message;
use crate::config::{BenchTargetNames, JudgeSettings, Rubric};
use crate::store::judgments::{CompletedConversation, completed_conversations, visible_messages};
use crate::store::pairwise::{Position, Winner, final_pairwise_keys};

/// The shipped pairwise prompt.
pub const TEMPLATE: &str = include_str!("../../judges/pairwise.md");

/// What a planned pairwise ask compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairSubject {
    pub baseline_id: i64,
    pub candidate_id: i64,
    pub baseline_position: Position,
}

/// A usable pairwise answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Preference {
    pub winner: Winner,
    pub rationale: String,
}

/// Strict JSON first, else the last JSON object; `winner` must be "A", "B" or "tie" (any
/// case), `rationale` a string.
pub fn parse_preference(raw: &str) -> Result<Preference, ParseFailure> {
    let text = raw.trim();
    if text.is_empty() {
        return Err(ParseFailure::Empty);
    }
    let object = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => o,
        _ => last_object(text).ok_or(ParseFailure::NoJson)?,
    };
    let winner = match object.get("winner").and_then(Value::as_str).map(str::trim) {
        Some(w) if w.eq_ignore_ascii_case("a") => Winner::Position(Position::A),
        Some(w) if w.eq_ignore_ascii_case("b") => Winner::Position(Position::B),
        Some(w) if w.eq_ignore_ascii_case("tie") => Winner::Tie,
        _ => return Err(ParseFailure::NoWinner),
    };
    let rationale = object
        .get("rationale")
        .and_then(Value::as_str)
        .ok_or(ParseFailure::NoRationale)?
        .to_string();
    Ok(Preference { winner, rationale })
}

/// What the judge is told after an unusable pairwise answer.
pub fn reask_message(problem: &str) -> Message {
    Message::new(
        "user",
        format!(
            "Your answer could not be used: {problem}. Answer again with only one JSON object of exactly this shape:\n{{\"winner\": \"<A|B|tie>\", \"rationale\": \"<two or three sentences>\"}}"
        ),
    )
}

/// The pairwise template of these settings: their own `pairwise_template`, else the
/// shipped one.
pub fn template(settings: &JudgeSettings) -> &str {
    settings
        .pairwise_template
        .as_ref()
        .map_or(TEMPLATE, |t| t.text.as_str())
}

/// The prompt with transcript `first` as A and `second` as B.
pub fn render(
    template: &str,
    rubric: &Rubric,
    first: &BlindTranscript,
    second: &BlindTranscript,
) -> String {
    let mut out = String::with_capacity(template.len() + first.text.len() + second.text.len());
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let name = &after[..close];
        match name {
            "rubric_title" => out.push_str(&rubric.title),
            "rubric_description" => out.push_str(rubric.description.as_deref().unwrap_or("")),
            "criteria" => out.push_str(&prompt::criteria_text(rubric)),
            "transcript_a" => out.push_str(&first.text),
            "transcript_b" => out.push_str(&second.text),
            // Not a placeholder: kept as written.
            _ => out.push_str(&rest[open..open + 2 + close + 2]),
        }
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    out
}

/// Which stored conversations are the baseline: a provider or a model label as stored.
fn is_baseline(c: &CompletedConversation, baseline: &str) -> bool {
    c.provider == baseline || c.label == baseline
}

/// (baseline, candidate) pairs: same run, scenario and repeat, both completed. A
/// candidate's baseline is the baseline conversation of its own model label when there is
/// one, else the only baseline conversation of that slot.
pub fn pairs<'c>(
    convs: &'c [CompletedConversation],
    baseline: &str,
) -> Result<Vec<(&'c CompletedConversation, &'c CompletedConversation)>, JudgeError> {
    if !convs.iter().any(|c| is_baseline(c, baseline)) {
        let mut names: Vec<String> = convs
            .iter()
            .flat_map(|c| [c.provider.clone(), c.label.clone()])
            .collect();
        names.sort();
        names.dedup();
        return Err(JudgeError::UnknownBaseline {
            baseline: baseline.to_string(),
            known: names.join(", "),
        });
    }
    type Slot<'a> = (i64, &'a str, u32);
    let mut slots: BTreeMap<Slot, (Vec<&CompletedConversation>, Vec<&CompletedConversation>)> =
        BTreeMap::new();
    for c in convs {
        // Imported conversations without a scenario have no counterpart.
        let Some(scenario) = c.scenario.as_deref() else {
            continue;
        };
        let slot = slots.entry((c.run_id, scenario, c.repeat)).or_default();
        if is_baseline(c, baseline) {
            slot.0.push(c);
        } else {
            slot.1.push(c);
        }
    }
    let mut out = Vec::new();
    for ((run, scenario, repeat), (bases, candidates)) in &slots {
        for cand in candidates {
            let same_label: Vec<_> = bases.iter().filter(|b| b.label == cand.label).collect();
            let base = match (same_label.as_slice(), bases.as_slice()) {
                ([one], _) => **one,
                ([], [one]) => *one,
                ([], []) => continue,
                _ => {
                    return Err(JudgeError::AmbiguousBaseline {
                        baseline: baseline.to_string(),
                        run: *run,
                        scenario: scenario.to_string(),
                        repeat: *repeat,
                        count: bases.len(),
                        provider: cand.provider.clone(),
                        label: cand.label.clone(),
                    });
                }
            };
            out.push((base, *cand));
        }
    }
    out.sort_by_key(|(_, c)| c.id);
    Ok(out)
}

/// Every pairwise ask: each pair twice, the baseline first and then second, in a seeded
/// order. Reads only.
pub fn plan(
    conn: &rusqlite::Connection,
    settings: &JudgeSettings,
    rubric: &Rubric,
    bench_targets: &[BenchTargetNames],
    baseline: &str,
) -> Result<JudgePlan, JudgeError> {
    let (terms, redactor, audit_list) = super::blinding(conn, settings, bench_targets)?;
    let judge_hash = cache::judge_hash(settings);
    let done = final_pairwise_keys(conn)?;
    let convs = completed_conversations(conn)?;
    let chosen = pairs(&convs, baseline)?;
    let mut transcripts: BTreeMap<i64, BlindTranscript> = BTreeMap::new();
    let mut leaks = Vec::new();
    let mut items = Vec::new();
    for (base, cand) in &chosen {
        for c in [base, cand] {
            if let std::collections::btree_map::Entry::Vacant(slot) = transcripts.entry(c.id) {
                let t = blind(
                    &visible_messages(conn, c.id)?,
                    &redactor,
                    settings.include_reasoning,
                );
                for m in &t.messages {
                    leaks.extend(
                        audit::audit(&m.content, &audit_list)
                            .into_iter()
                            .map(|leak| AuditLeak {
                                conversation_id: c.id,
                                leak,
                            }),
                    );
                }
                slot.insert(t);
            }
        }
        let (Some(tb), Some(tc)) = (transcripts.get(&base.id), transcripts.get(&cand.id)) else {
            continue;
        };
        for position in [Position::A, Position::B] {
            let (first, second) = match position {
                Position::A => (tb, tc),
                Position::B => (tc, tb),
            };
            let mut messages = Vec::new();
            if let Some(system) = settings.system.as_deref().filter(|s| !s.is_empty()) {
                messages.push(Message::new("system", system));
            }
            messages.push(Message::new(
                "user",
                render(template(settings), rubric, first, second),
            ));
            let key = cache::pairwise_key(
                &judge_hash,
                rubric,
                &first.text,
                &second.text,
                position.as_str(),
            );
            items.push((
                cache::order_key(
                    settings.seed,
                    &format!("pair\0{}\0{}\0{}", base.uid, cand.uid, position.as_str()),
                    1,
                ),
                PlannedJudgment {
                    conversation_id: cand.id,
                    label: format!("baseline {}", position.as_str()),
                    replicate: 1,
                    cached: done.contains(&(cand.id, key.clone())),
                    key,
                    messages,
                    pair: Some(PairSubject {
                        baseline_id: base.id,
                        candidate_id: cand.id,
                        baseline_position: position,
                    }),
                    anchor: None,
                },
            ));
        }
    }
    items.sort_by_key(|(order, _)| *order);
    Ok(JudgePlan {
        sampled: chosen.len(),
        items: items.into_iter().map(|(_, i)| i).collect(),
        terms,
        leaks,
        response_format: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::blind::{Redactor, VisibleMessage};

    fn conv(
        id: i64,
        provider: &str,
        label: &str,
        scenario: &str,
        repeat: u32,
    ) -> CompletedConversation {
        CompletedConversation {
            id,
            uid: format!("u{id}"),
            run_id: 1,
            provider: provider.into(),
            label: label.into(),
            scenario: Some(scenario.into()),
            repeat,
        }
    }

    #[test]
    fn pairs_meet_in_their_slot_and_prefer_the_same_label() {
        let convs = vec![
            conv(1, "base", "m", "s1", 1),
            conv(2, "other", "m", "s1", 1),
            conv(3, "third", "m", "s1", 1),
            conv(4, "other", "m", "s1", 2), // no baseline in repeat 2
            conv(5, "base", "m", "s2", 1),
            conv(6, "other", "m", "s2", 1),
        ];
        let got: Vec<(i64, i64)> = pairs(&convs, "base")
            .unwrap()
            .iter()
            .map(|(b, c)| (b.id, c.id))
            .collect();
        assert_eq!(got, vec![(1, 2), (1, 3), (5, 6)]);
        // A label works as well as a provider; an unknown name lists the names there are.
        assert_eq!(pairs(&convs, "m").unwrap().len(), 0);
        let err = pairs(&convs, "nobody").unwrap_err().to_string();
        assert!(err.contains("base, m, other, third"), "{err}");
        // A provider serving two labels: each candidate meets its own label.
        let two = vec![
            conv(1, "base", "x", "s", 1),
            conv(2, "base", "y", "s", 1),
            conv(3, "other", "y", "s", 1),
            conv(4, "other", "z", "s", 1),
        ];
        assert!(pairs(&two, "base").is_err());
        let two = &two[..3];
        let got: Vec<(i64, i64)> = pairs(two, "base")
            .unwrap()
            .iter()
            .map(|(b, c)| (b.id, c.id))
            .collect();
        assert_eq!(got, vec![(2, 3)]);
    }

    #[test]
    fn preferences_parse_strictly() {
        let p = parse_preference(r#"{"winner": "b", "rationale": "B kept the budget."}"#).unwrap();
        assert_eq!(p.winner, Winner::Position(Position::B));
        let p = parse_preference(
            "Thinking… ```json\n{\"winner\": \"tie\", \"rationale\": \"same\"}\n```",
        )
        .unwrap();
        assert_eq!(p.winner, Winner::Tie);
        assert_eq!(
            parse_preference(r#"{"winner": "C", "rationale": "x"}"#),
            Err(ParseFailure::NoWinner)
        );
        assert_eq!(
            parse_preference(r#"{"winner": "A"}"#),
            Err(ParseFailure::NoRationale)
        );
        assert_eq!(parse_preference(" "), Err(ParseFailure::Empty));
    }

    #[test]
    fn the_prompt_holds_both_transcripts_once_and_never_expands_their_text() {
        let t = |text: &str| {
            blind(
                &[VisibleMessage {
                    role: "assistant".into(),
                    content: Some(text.into()),
                    reasoning: None,
                }],
                &Redactor::new(vec![]),
                false,
            )
        };
        let rubric = Rubric::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rubrics/support-tone.toml"),
        )
        .unwrap();
        let (a, b) = (t("first says {{transcript_b}}"), t("second"));
        let out = render(TEMPLATE, &rubric, &a, &b);
        assert!(out.contains(&a.text) && out.contains(&b.text));
        assert!(out.find(&a.text) < out.find(&b.text));
        assert!(out.contains("first says {{transcript_b}}"));
        assert!(out.contains(&rubric.title));
        assert!(!out.contains("{{criteria}}") && !out.contains("{{transcript_a}}"));
        assert!(out.contains("pairwise-spec:"));
    }
}
