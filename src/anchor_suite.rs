//! Reference anchors: the conversations a judge's sanity run scores (`turnbench judge
//! --anchors`), made from what the suite already holds — each scenario's user turns
//! answered by its reference answers, and one spoiled variant per `[[defect]]` of its
//! checks file (the same spoiling `turnbench lint` self-tests the checks with), then two
//! controls per reference ([`ControlKind`]): `padding` (the final answer followed by
//! irrelevant, fluent filler) and `null` (a generic, polite non-answer to every turn). This sits
//! above the stages: it reads scenarios and checks files and hands the judge stage
//! conversations, so the judge stage never reads the checks stage's files.

use crate::checks::CheckSet;
use crate::config::Scenario;
use crate::judge::anchor_run::AnchorInput;
use crate::judge::blind::VisibleMessage;
use crate::store::anchor_judgments::ControlKind;

/// What `padding` appends to the reference's final answer: fluent, friendly, and nothing the
/// user asked for.
pub const PADDING: &str = "As a final note, it often helps to step back and look at the bigger picture when working through requests like this one. Taking short breaks, keeping notes in one place and setting a clear goal for each session can make any project feel more manageable, and small, steady improvements tend to add up over time. Thank you for the thoughtful questions, and good luck with the rest of your work.";

/// What `null` answers every turn with: polite, and no answer at all.
pub const NON_ANSWER: &str = "Thank you for your message. I appreciate the detail you have shared and I will keep it in mind. Please let me know if there is anything else I can help you with.";

/// The answers of a control made from the reference answers.
fn control_answers(kind: ControlKind, references: &[String]) -> Vec<String> {
    match kind {
        ControlKind::Padding => {
            let mut answers = references.to_vec();
            if let Some(last) = answers.last_mut() {
                *last = format!("{last}\n\n{PADDING}");
            }
            answers
        }
        ControlKind::Null => vec![NON_ANSWER.to_string(); references.len()],
    }
}

fn message(role: &str, text: &str) -> VisibleMessage {
    VisibleMessage {
        role: role.into(),
        content: Some(text.into()),
        reasoning: None,
    }
}

fn conversation(scenario: &Scenario, answers: &[String]) -> Vec<VisibleMessage> {
    let mut out = Vec::new();
    if let Some(system) = &scenario.system {
        out.push(message("system", system));
    }
    for (turn, answer) in scenario.turns.iter().zip(answers) {
        out.push(message("user", &turn.user));
        out.push(message("assistant", answer));
    }
    out
}

/// The reference conversation of every scenario whose turns all have a reference answer,
/// and after it each variant its checks file's defects make. A defect that cannot be
/// applied is an error naming the checks file and the defect's line (run `turnbench lint`).
pub fn inputs(scenarios: &[Scenario], check_sets: &[CheckSet]) -> Result<Vec<AnchorInput>, String> {
    let mut out = Vec::new();
    for s in scenarios {
        let Some(references) = s
            .turns
            .iter()
            .map(|t| t.reference.clone())
            .collect::<Option<Vec<String>>>()
        else {
            continue;
        };
        out.push(AnchorInput {
            scenario: s.id.clone(),
            defect: None,
            messages: conversation(s, &references),
        });
        for set in check_sets.iter().filter(|c| c.scenario == s.id) {
            for d in &set.defects {
                let mut answers = references.clone();
                d.apply(&mut answers).map_err(|e| {
                    format!(
                        "{}:{}: {e}\n  fix: run `turnbench lint` and correct the defect",
                        set.path.display(),
                        d.line
                    )
                })?;
                out.push(AnchorInput {
                    scenario: s.id.clone(),
                    defect: Some(d.name.clone()),
                    messages: conversation(s, &answers),
                });
            }
        }
        for kind in ControlKind::ALL {
            out.push(AnchorInput {
                scenario: s.id.clone(),
                defect: Some(kind.defect()),
                messages: conversation(s, &control_answers(kind, &references)),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_suite_gives_a_reference_and_a_variant_per_defect() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let scenarios = Scenario::load_dir(&root.join("scenarios")).unwrap();
        let checks = CheckSet::load_dir(&root.join("checks")).unwrap();
        let got = inputs(&scenarios, &checks).unwrap();
        let references = got.iter().filter(|a| a.defect.is_none()).count();
        let defects: usize = checks.iter().map(|c| c.defects.len()).sum();
        assert_eq!(references, scenarios.len());
        assert_eq!(got.len(), references * 3 + defects);
        // Each reference has its two controls: padding ends its final answer with the
        // filler after the reference answer; null answers every turn with the non-answer.
        for r in got.iter().filter(|a| a.defect.is_none()) {
            let of = |kind: ControlKind| {
                got.iter()
                    .find(|a| a.scenario == r.scenario && a.defect == Some(kind.defect()))
                    .unwrap()
            };
            let last = |a: &AnchorInput| a.messages.last().unwrap().content.clone().unwrap();
            let padded = last(of(ControlKind::Padding));
            assert!(padded.starts_with(&last(r)) && padded.ends_with(PADDING));
            for m in of(ControlKind::Null)
                .messages
                .iter()
                .filter(|m| m.role == "assistant")
            {
                assert_eq!(m.content.as_deref(), Some(NON_ANSWER));
            }
        }
        // Each variant differs from its reference in some answer, and only in answers.
        for a in got
            .iter()
            .filter(|a| a.defect.is_some() && ControlKind::of(a.defect.as_deref()).is_none())
        {
            let r = got
                .iter()
                .find(|r| r.scenario == a.scenario && r.defect.is_none())
                .unwrap();
            assert_eq!(a.messages.len(), r.messages.len());
            assert_ne!(a.messages, r.messages, "{:?} changes nothing", a.defect);
            for (x, y) in a.messages.iter().zip(&r.messages) {
                if x.role != "assistant" {
                    assert_eq!(x, y);
                }
            }
        }
    }
}
