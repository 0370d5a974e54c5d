//! Reference anchors: the conversations a judge's sanity run scores (`turnbench judge
//! --anchors`), made from what the suite already holds — each scenario's user turns
//! answered by its reference answers, and one spoiled variant per `[[defect]]` of its
//! checks file (the same spoiling `turnbench lint` self-tests the checks with). This sits
//! above the stages: it reads scenarios and checks files and hands the judge stage
//! conversations, so the judge stage never reads the checks stage's files.

use crate::checks::CheckSet;
use crate::config::Scenario;
use crate::judge::anchor_run::AnchorInput;
use crate::judge::blind::VisibleMessage;

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
        assert_eq!(got.len(), references + defects);
        // Each variant differs from its reference in some answer, and only in answers.
        for a in got.iter().filter(|a| a.defect.is_some()) {
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
