//! The real suite: the 15 scenarios in `scenarios/`, their checks in `checks/`, the reference
//! conversations, the `[[defect]]` self-tests, and generic defects built for every scenario.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use turnbench::checks::{self, Check, CheckSet, Scope, Tag, read_json};
use turnbench::config::Scenario;

fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

struct Case {
    scenario: Scenario,
    checks: CheckSet,
}

impl Case {
    fn references(&self) -> Vec<String> {
        self.scenario
            .turns
            .iter()
            .map(|t| t.reference.clone().expect("every turn has a reference"))
            .collect()
    }

    /// Verdicts as (check id → passed) for a full conversation of answers.
    fn passed(&self, answers: &[String]) -> BTreeMap<String, Option<bool>> {
        let slots: Vec<Option<&str>> = answers.iter().map(|a| Some(a.as_str())).collect();
        self.checks
            .evaluate(&slots)
            .into_iter()
            .map(|v| (v.id, v.passed))
            .collect()
    }
}

fn suite() -> Vec<Case> {
    let scenarios =
        Scenario::load_dir(&project().join("scenarios")).unwrap_or_else(|e| panic!("{e}"));
    let mut sets: BTreeMap<String, CheckSet> = CheckSet::load_dir(&project().join("checks"))
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|s| (s.scenario.clone(), s))
        .collect();
    let cases: Vec<Case> = scenarios
        .into_iter()
        .map(|scenario| {
            let checks = sets
                .remove(&scenario.id)
                .unwrap_or_else(|| panic!("no checks/{}.toml", scenario.id));
            Case { scenario, checks }
        })
        .collect();
    assert!(
        sets.is_empty(),
        "checks without a scenario: {:?}",
        sets.keys()
    );
    cases
}

/// The turn (1-based) whose answer a check reads first.
fn target_turn(check: &Check, turns: usize) -> usize {
    match check.scope {
        Scope::Final => turns,
        Scope::Turn(n) | Scope::FromTurn(n) => n,
    }
}

fn allows_fence(check: &Check) -> bool {
    check.definition.get("allow_fence") == Some(&Value::Bool(true))
}

#[test]
fn fifteen_scenarios_five_per_category() {
    let cases = suite();
    assert_eq!(cases.len(), 15);
    let mut per_category: BTreeMap<&str, usize> = BTreeMap::new();
    for case in &cases {
        *per_category
            .entry(case.scenario.category.as_str())
            .or_default() += 1;
        let prefix = match case.scenario.category.as_str() {
            "developer" => "dev-",
            "business" => "biz-",
            "structured" => "struct-",
            other => panic!("{}: unknown category {other}", case.scenario.id),
        };
        assert!(case.scenario.id.starts_with(prefix), "{}", case.scenario.id);
    }
    assert_eq!(
        per_category,
        BTreeMap::from([("business", 5), ("developer", 5), ("structured", 5)])
    );
}

#[test]
fn every_turn_has_a_reference_and_later_turns_a_pause() {
    for case in suite() {
        let s = &case.scenario;
        assert!(s.turns.len() >= 4, "{}: {} turns", s.id, s.turns.len());
        for (i, turn) in s.turns.iter().enumerate() {
            let reference = turn.reference.as_deref().unwrap_or("");
            assert!(
                !reference.trim().is_empty(),
                "{} turn {}: no reference",
                s.id,
                i + 1
            );
            assert_eq!(
                turn.pause_ms.is_some(),
                i > 0,
                "{} turn {}: pause",
                s.id,
                i + 1
            );
        }
    }
}

#[test]
fn every_scenario_covers_its_tags() {
    for case in suite() {
        let tags: BTreeSet<Tag> = case.checks.checks.iter().map(|c| c.tag).collect();
        for needed in [
            Tag::SupersededInstruction,
            Tag::RetainedConstraint,
            Tag::Format,
            Tag::Custom,
        ] {
            assert!(
                tags.contains(&needed),
                "{}: no {needed} check",
                case.scenario.id
            );
        }
        // Wherever JSON is read, its validity and its fields are checked too.
        let reads_json = case.checks.checks.iter().any(|c| {
            matches!(
                c.kind.as_str(),
                "json_schema" | "required_fields" | "field_equals"
            )
        });
        if reads_json {
            assert!(
                tags.contains(&Tag::JsonValidity),
                "{}: no json_validity",
                case.scenario.id
            );
            assert!(
                tags.contains(&Tag::RequiredFields),
                "{}: no required_fields",
                case.scenario.id
            );
        }
    }
}

#[test]
fn reference_conversations_pass_every_check() {
    for case in suite() {
        let slots: Vec<String> = case.references();
        let slots: Vec<Option<&str>> = slots.iter().map(|a| Some(a.as_str())).collect();
        for verdict in case.checks.evaluate(&slots) {
            assert_eq!(
                verdict.passed,
                Some(true),
                "{}: {} fails the reference: {}",
                case.scenario.id,
                verdict.id,
                verdict.detail
            );
        }
    }
}

#[test]
fn defects_fail_exactly_their_checks() {
    for case in suite() {
        let id = &case.scenario.id;
        let mut broken_tags = BTreeSet::new();
        for defect in &case.checks.defects {
            let mut answers = case.references();
            defect
                .apply(&mut answers)
                .unwrap_or_else(|e| panic!("{id}: {e}"));
            let failed: BTreeSet<String> = case
                .passed(&answers)
                .into_iter()
                .filter(|(_, passed)| *passed != Some(true))
                .map(|(id, _)| id)
                .collect();
            let expected: BTreeSet<String> = defect.fails.iter().cloned().collect();
            assert_eq!(failed, expected, "{id}: defect {}", defect.name);
            for check in &case.checks.checks {
                if expected.contains(&check.id) {
                    broken_tags.insert(check.tag);
                }
            }
        }
        for tag in [Tag::SupersededInstruction, Tag::RetainedConstraint] {
            assert!(
                broken_tags.contains(&tag),
                "{id}: no defect breaks a {tag} check"
            );
        }
    }
}

#[test]
fn fenced_json_fails_json_validity_without_allow_fence() {
    let mut seen = 0;
    for case in suite() {
        let turns = case.scenario.turns.len();
        for check in case
            .checks
            .checks
            .iter()
            .filter(|c| c.tag == Tag::JsonValidity)
        {
            let mut answers = case.references();
            let turn = target_turn(check, turns);
            answers[turn - 1] = format!("```json\n{}\n```", answers[turn - 1].trim());
            let passed = case.passed(&answers)[&check.id];
            let expected = if allows_fence(check) {
                Some(true)
            } else {
                Some(false)
            };
            assert_eq!(
                passed, expected,
                "{}: {} on a fenced turn {turn}",
                case.scenario.id, check.id
            );
            seen += 1;
        }
    }
    assert!(seen >= 12, "only {seen} json_validity checks");
}

#[test]
fn trailing_prose_fails_json_validity() {
    for case in suite() {
        let turns = case.scenario.turns.len();
        for check in case
            .checks
            .checks
            .iter()
            .filter(|c| c.tag == Tag::JsonValidity)
        {
            let mut answers = case.references();
            let turn = target_turn(check, turns);
            answers[turn - 1].push_str("\n\nLet me know if you want any changes!");
            let passed = case.passed(&answers)[&check.id];
            assert_eq!(
                passed,
                Some(false),
                "{}: {} with trailing prose",
                case.scenario.id,
                check.id
            );
        }
    }
}

/// Removes what `pointer` names: an object member, or an array element and all after it
/// (removing one element would shift the next one into its place).
fn remove_pointer(value: &mut Value, pointer: &str) -> bool {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return false;
    };
    let last = last.replace("~1", "/").replace("~0", "~");
    match value.pointer_mut(parent) {
        Some(Value::Object(map)) => map.remove(&last).is_some(),
        Some(Value::Array(items)) => match last.parse::<usize>() {
            Ok(i) if i < items.len() => {
                items.truncate(i);
                true
            }
            _ => false,
        },
        _ => false,
    }
}

#[test]
fn removing_a_required_field_fails_its_check() {
    let mut seen = 0;
    for case in suite() {
        let turns = case.scenario.turns.len();
        for check in case
            .checks
            .checks
            .iter()
            .filter(|c| c.kind == "required_fields")
        {
            let turn = target_turn(check, turns);
            let pointers = check.definition["pointers"].as_array().unwrap();
            for pointer in pointers.iter().map(|p| p.as_str().unwrap()) {
                let mut answers = case.references();
                let mut json = read_json(&answers[turn - 1], allows_fence(check)).unwrap();
                assert!(
                    remove_pointer(&mut json, pointer),
                    "{}: cannot remove {pointer}",
                    case.scenario.id
                );
                answers[turn - 1] = serde_json::to_string_pretty(&json).unwrap();
                let slots: Vec<Option<&str>> = answers.iter().map(|a| Some(a.as_str())).collect();
                let verdict = check.evaluate(&slots);
                assert_eq!(
                    verdict.passed,
                    Some(false),
                    "{}: {} without {pointer}",
                    case.scenario.id,
                    check.id
                );
                assert!(verdict.detail.contains(pointer), "{}", verdict.detail);
                seen += 1;
            }
        }
    }
    assert!(seen >= 50, "only {seen} required pointers");
}

#[test]
fn lint_is_clean_on_the_project() {
    let errors: Vec<String> = checks::lint(&project())
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn lint_catches_a_broken_copy_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&project().join("scenarios"), &dir.path().join("scenarios"));
    copy_dir(&project().join("checks"), &dir.path().join("checks"));
    let path = dir.path().join("checks/dev-cursor-pagination.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    // Point the first from_turn check past the scenario's last turn.
    let at = text.find("from_turn = ").expect("a from_turn check");
    let line = text[..at].lines().count() + 1;
    let end = at + text[at..].find('\n').unwrap();
    let broken = format!("{}from_turn = 9{}", &text[..at], &text[end..]);
    std::fs::write(&path, broken).unwrap();
    // And an unknown check for a scenario that does not exist.
    std::fs::write(
        dir.path().join("checks/dev-nothing.toml"),
        "scenario = \"dev-nothing\"\n",
    )
    .unwrap();

    let errors: Vec<String> = checks::lint(dir.path())
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(errors.len(), 2, "{errors:#?}");
    let expected = format!("dev-cursor-pagination.toml:{line}: check");
    assert!(
        errors
            .iter()
            .any(|e| e.contains(&expected) && e.contains("from_turn = 9")),
        "{errors:#?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("dev-nothing.toml:1: checks for unknown scenario")),
        "{errors:#?}"
    );
}
