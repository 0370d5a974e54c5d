//! `lint`: every scenario and checks file of a project, loaded and cross-checked, with each
//! problem as a `ConfigError` naming file, line and fix.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

use super::definition::{CheckSet, Scope};
use crate::config::scenario::toml_files;
use crate::config::{ConfigError, Scenario};

/// Loads `scenarios/` and `checks/` under `project_dir` (a missing directory has nothing to
/// report) and returns every problem found; empty means clean. Beyond what loading checks,
/// it reports a checks file for an unknown scenario, a `turn`/`from_turn` past the
/// scenario's last turn, a check that the scenario's reference conversation fails, and a
/// defect that does not fail exactly its `fails`.
pub fn lint(project_dir: &Path) -> Vec<ConfigError> {
    let mut errors = Vec::new();
    let mut scenarios = BTreeMap::new();
    // Scenarios whose file did not load: their checks files are not blamed for it.
    let mut broken = HashSet::new();
    for path in files_in(&project_dir.join("scenarios"), &mut errors) {
        match Scenario::load(&path) {
            Ok(s) => {
                scenarios.insert(s.id.clone(), s);
            }
            Err(e) => {
                errors.push(e);
                broken.insert(stem(&path));
            }
        }
    }
    for path in files_in(&project_dir.join("checks"), &mut errors) {
        let set = match CheckSet::load(&path) {
            Ok(set) => set,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        match scenarios.get(&set.scenario) {
            Some(scenario) => errors.extend(lint_against(&set, scenario)),
            None if broken.contains(&set.scenario) => {}
            None => errors.push(ConfigError::invalid(
                &set.path,
                set.scenario_line,
                format!("checks for unknown scenario {:?}", set.scenario),
                format!(
                    "add scenarios/{}.toml, or name an existing scenario (and the file after it)",
                    set.scenario
                ),
            )),
        }
    }
    errors
}

fn files_in(dir: &Path, errors: &mut Vec<ConfigError>) -> Vec<std::path::PathBuf> {
    if !dir.is_dir() {
        return Vec::new();
    }
    toml_files(dir).unwrap_or_else(|e| {
        errors.push(e);
        Vec::new()
    })
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("")
        .to_string()
}

/// Checks whose `turn`/`from_turn` lies past the scenario's last turn: they could never be
/// scored. `check` refuses to run with these; `lint` reports them with the rest.
pub fn scope_errors(set: &CheckSet, scenario: &crate::config::Scenario) -> Vec<ConfigError> {
    let turns = scenario.turns.len();
    let mut errors = Vec::new();
    for check in &set.checks {
        let (key, turn) = match check.scope {
            Scope::Turn(t) => ("turn", t),
            Scope::FromTurn(t) => ("from_turn", t),
            Scope::Final => continue,
        };
        if turn > turns {
            errors.push(ConfigError::invalid(
                &set.path,
                check.scope_line,
                format!(
                    "check {:?} has {key} = {turn}, but scenario {:?} has {turns} turns",
                    check.id, scenario.id
                ),
                format!("use a turn from 1 to {turns}, or leave it out to check the final answer"),
            ));
        }
    }
    errors
}

/// Problems of a checks file that only show next to its scenario.
pub fn lint_against(set: &CheckSet, scenario: &crate::config::Scenario) -> Vec<ConfigError> {
    let turns = scenario.turns.len();
    let mut errors = scope_errors(set, scenario);
    let past_end = |turn: usize| turn > turns;
    for defect in &set.defects {
        if defect.turn.is_some_and(past_end) {
            errors.push(ConfigError::invalid(
                &set.path,
                defect.turn_line,
                format!(
                    "defect {:?} is for turn {}, but scenario {:?} has {turns} turns",
                    defect.name,
                    defect.turn.unwrap_or(turns),
                    scenario.id
                ),
                format!("use a turn from 1 to {turns}, or leave it out for the final turn"),
            ));
        }
    }
    if !errors.is_empty() {
        return errors;
    }
    let Some(references) = scenario
        .turns
        .iter()
        .map(|t| t.reference.clone())
        .collect::<Option<Vec<String>>>()
    else {
        if let Some(defect) = set.defects.first() {
            errors.push(ConfigError::invalid(
                &set.path,
                defect.line,
                format!(
                    "scenario {:?} lacks a reference answer for some turn, so defects cannot be applied",
                    scenario.id
                ),
                format!("write `reference` for every turn in scenarios/{}.toml", scenario.id),
            ));
        }
        return errors;
    };
    let slots: Vec<Option<&str>> = references.iter().map(|r| Some(r.as_str())).collect();
    for (check, verdict) in set.checks.iter().zip(set.evaluate(&slots)) {
        if verdict.passed != Some(true) {
            errors.push(ConfigError::invalid(
                &set.path,
                check.line,
                format!(
                    "check {:?} does not pass the reference conversation: {}",
                    check.id, verdict.detail
                ),
                format!(
                    "fix the check, or the reference answer in scenarios/{}.toml",
                    scenario.id
                ),
            ));
        }
    }
    for defect in &set.defects {
        let mut spoiled = references.clone();
        if let Err(why) = defect.apply(&mut spoiled) {
            errors.push(ConfigError::invalid(
                &set.path,
                defect.change_line,
                why,
                "quote text that occurs in that turn's reference answer",
            ));
            continue;
        }
        let slots: Vec<Option<&str>> = spoiled.iter().map(|r| Some(r.as_str())).collect();
        let failed: BTreeSet<&str> = set
            .evaluate(&slots)
            .iter()
            .zip(&set.checks)
            .filter(|(v, _)| v.passed != Some(true))
            .map(|(_, c)| c.id.as_str())
            .collect();
        let expected: BTreeSet<&str> = defect.fails.iter().map(String::as_str).collect();
        if failed != expected {
            errors.push(ConfigError::invalid(
                &set.path,
                defect.line,
                format!(
                    "defect {:?} should fail exactly {expected:?}, but {failed:?} failed",
                    defect.name
                ),
                "make `fails` list the checks this defect breaks, or fix those checks",
            ));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENARIO: &str = r#"id = "demo"
category = "developer"

[[turn]]
user = "Page size 20."
reference = "OK, 20 per page."

[[turn]]
user = "Make it 50, as JSON."
reference = '{"page_size": 50}'
"#;

    const CHECKS: &str = r#"scenario = "demo"

[[check]]
id = "json"
kind = "json_valid"
tag = "json_validity"

[[check]]
id = "no-20"
kind = "not_contains"
tag = "superseded_instruction"
from_turn = 2
text = "20"

[[defect]]
name = "old-size"
replace = ["50", "20"]
fails = ["no-20"]
"#;

    fn project(scenario: &str, checks: &str) -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("scenarios")).unwrap();
        std::fs::create_dir(dir.path().join("checks")).unwrap();
        std::fs::write(dir.path().join("scenarios/demo.toml"), scenario).unwrap();
        std::fs::write(dir.path().join("checks/demo.toml"), checks).unwrap();
        let errors = lint(dir.path()).iter().map(|e| e.to_string()).collect();
        (dir, errors)
    }

    fn one_error(scenario: &str, checks: &str) -> String {
        let (_dir, errors) = project(scenario, checks);
        assert_eq!(errors.len(), 1, "{errors:#?}");
        errors[0].clone()
    }

    #[test]
    fn clean_project_has_no_errors() {
        assert_eq!(project(SCENARIO, CHECKS).1, Vec::<String>::new());
        assert!(lint(Path::new("/nonexistent-turnbench-project")).is_empty());
    }

    #[test]
    fn turn_past_the_end_names_file_and_line() {
        let err = one_error(SCENARIO, &CHECKS.replace("from_turn = 2", "from_turn = 3"));
        assert!(err.contains("checks/demo.toml:12: check \"no-20\" has from_turn = 3, but scenario \"demo\" has 2 turns"), "{err}");
        assert!(err.contains("fix: use a turn from 1 to 2"), "{err}");
    }

    #[test]
    fn unknown_scenario_is_reported() {
        let (dir, _) = project(SCENARIO, CHECKS);
        std::fs::write(
            dir.path().join("checks/other.toml"),
            "scenario = \"other\"\n",
        )
        .unwrap();
        let errors: Vec<String> = lint(dir.path()).iter().map(|e| e.to_string()).collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].contains("checks/other.toml:1: checks for unknown scenario \"other\""),
            "{}",
            errors[0]
        );
    }

    #[test]
    fn a_check_the_reference_fails_is_reported() {
        let err = one_error(SCENARIO, &CHECKS.replace("from_turn = 2", "from_turn = 1"));
        assert!(err.contains("checks/demo.toml:8: check \"no-20\" does not pass the reference conversation: turn 1: found"), "{err}");
    }

    #[test]
    fn a_defect_that_fails_other_checks_is_reported() {
        let err = one_error(
            SCENARIO,
            &CHECKS.replace("[\"50\", \"20\"]", "[\"50}\", \"50\"]"),
        );
        assert!(err.contains("checks/demo.toml:15: defect \"old-size\" should fail exactly {\"no-20\"}, but {\"json\"} failed"), "{err}");
        let err = one_error(
            SCENARIO,
            &CHECKS.replace("[\"50\", \"20\"]", "[\"51\", \"20\"]"),
        );
        assert!(
            err.contains("checks/demo.toml:17:") && err.contains("does not occur"),
            "{err}"
        );
    }

    #[test]
    fn broken_files_are_all_reported() {
        let (dir, _) = project(
            SCENARIO,
            &CHECKS.replace("\"json_valid\"", "\"json_vaild\""),
        );
        std::fs::write(dir.path().join("scenarios/bad.toml"), "id = \"bad\"\n").unwrap();
        std::fs::write(dir.path().join("checks/bad.toml"), "scenario = \"bad\"\n").unwrap();
        let errors: Vec<String> = lint(dir.path()).iter().map(|e| e.to_string()).collect();
        // The scenario without category, the unknown kind; not "unknown scenario bad".
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(
            errors
                .iter()
                .any(|e| e.contains("checks/demo.toml:5: unknown check kind")),
            "{errors:#?}"
        );
    }
}
