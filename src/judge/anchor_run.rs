//! Reference anchors: the judge's sanity run. Each scenario's reference conversation (its
//! user turns answered by its reference answers) and the variants its checks file's
//! `[[defect]]` tables spoil are judged like stored conversations — blinded, audited,
//! cached, never fabricated — and stored in `anchor_judgments`. A judge that reads ranks
//! the reference above its spoiled variants; one that cannot tell them apart is flagged in
//! every report that uses it (the report's `anchors`).
//!
//! Whoever starts this stage builds the conversations ([`AnchorInput`]) from the scenarios
//! and checks files; this module never reads either.

use super::blind::{VisibleMessage, blind};
use super::{AuditLeak, JudgeError, JudgePlan, PlannedJudgment, audit, cache, prompt};
use crate::config::{JudgeSettings, Rubric};
use crate::store::anchor_judgments::final_anchor_keys;

/// One anchor conversation to judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorInput {
    pub scenario: String,
    /// `None`: the reference conversation; else the defect that spoiled it.
    pub defect: Option<String>,
    pub messages: Vec<VisibleMessage>,
}

/// What a planned anchor ask judges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorSubject {
    pub scenario: String,
    pub defect: Option<String>,
}

/// Every anchor ask, in a seeded order. Reads only. Redaction uses the settings' terms and
/// the shipped list (anchors name no target).
pub fn plan(
    conn: &rusqlite::Connection,
    settings: &JudgeSettings,
    rubric: &Rubric,
    inputs: &[AnchorInput],
) -> Result<JudgePlan, JudgeError> {
    let (terms, redactor, audit_list) = super::blinding(conn, settings, &[])?;
    let judge_hash = cache::judge_hash(settings);
    let done = final_anchor_keys(conn)?;
    let mut leaks = Vec::new();
    let mut items = Vec::new();
    for input in inputs {
        let transcript = blind(&input.messages, &redactor, settings.include_reasoning);
        for m in &transcript.messages {
            leaks.extend(
                audit::audit(&m.content, &audit_list)
                    .into_iter()
                    .map(|leak| AuditLeak {
                        conversation_id: 0,
                        leak,
                    }),
            );
        }
        let id = format!(
            "anchor\0{}\0{}",
            input.scenario,
            input.defect.as_deref().unwrap_or("")
        );
        let label = prompt::opaque_label(&id);
        let messages = prompt::build_messages(settings, rubric, &transcript, &label);
        let key = cache::anchor_key(
            &judge_hash,
            rubric,
            &transcript.text,
            &input.scenario,
            input.defect.as_deref(),
        );
        items.push((
            cache::order_key(settings.seed, &id, 1),
            PlannedJudgment {
                conversation_id: 0,
                label,
                replicate: 1,
                cached: done.contains(&key),
                key,
                messages,
                pair: None,
                anchor: Some(AnchorSubject {
                    scenario: input.scenario.clone(),
                    defect: input.defect.clone(),
                }),
            },
        ));
    }
    items.sort_by_key(|(order, _)| *order);
    Ok(JudgePlan {
        sampled: inputs.len(),
        items: items.into_iter().map(|(_, i)| i).collect(),
        terms,
        leaks,
        response_format: None,
    })
}
