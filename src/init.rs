//! `turnbench init`: an editable project made from the built-in definitions — the bench,
//! scenarios, checks, rubrics, judge settings and templates, replay sessions — and a
//! README of the next commands. Existing files are never overwritten unless asked.

use std::path::{Path, PathBuf};

use crate::config::embedded;

/// The built-in folders a project gets (examples stay in the binary and the repository).
const PROJECT_FOLDERS: [&str; 5] = ["scenarios", "checks", "rubrics", "judges", "sessions"];

#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error(
        "{dir}: {count} of the project's files exist already: {names}\n  fix: init another folder, or pass --force to overwrite them (other files are left alone)",
        dir = .dir.display(),
        count = .existing.len(),
        names = list(.existing)
    )]
    Exists {
        dir: PathBuf,
        existing: Vec<PathBuf>,
    },
    #[error("{path}: cannot write: {error}", path = .path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// At most five names, then how many more.
fn list(paths: &[PathBuf]) -> String {
    let mut names: Vec<String> = paths
        .iter()
        .take(5)
        .map(|p| p.display().to_string())
        .collect();
    if paths.len() > 5 {
        names.push(format!("and {} more", paths.len() - 5));
    }
    names.join(", ")
}

/// Every file of a new project: (path relative to the project, text).
pub fn project_files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = embedded::files()
        .iter()
        .filter(|(path, _)| {
            PROJECT_FOLDERS
                .iter()
                .any(|f| path.strip_prefix(f).is_some_and(|r| r.starts_with('/')))
        })
        .map(|(path, text)| (path.to_string(), text.to_string()))
        .collect();
    if let Some(bench) = embedded::read(&embedded::path("bench.toml")) {
        files.push(("bench.toml".into(), bench.to_string()));
    }
    files.push(("README.md".into(), readme()));
    files.sort();
    files
}

/// Writes a new project into `dir` (created when missing). Without `force`, refuses when
/// any of its files exists, naming them, and writes nothing. Returns the files written.
pub fn init(dir: &Path, force: bool) -> Result<Vec<PathBuf>, InitError> {
    let files = project_files();
    let existing: Vec<PathBuf> = files
        .iter()
        .map(|(rel, _)| dir.join(rel))
        .filter(|p| p.exists())
        .collect();
    if !existing.is_empty() && !force {
        return Err(InitError::Exists {
            dir: dir.to_path_buf(),
            existing,
        });
    }
    let mut written = Vec::new();
    for (rel, text) in files {
        let path = dir.join(&rel);
        let write = || {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, &text)
        };
        write().map_err(|error| InitError::Write {
            path: path.clone(),
            error,
        })?;
        written.push(path);
    }
    Ok(written)
}

fn readme() -> String {
    format!(
        r#"# A turnbench project

Made by `turnbench init` (turnbench {version}). Every file here is yours to edit;
`turnbench lint .` checks them all and names each problem's file, line and fix. Run
the commands below from this folder: each command reads `bench.toml`, `scenarios/`,
`checks/`, `rubrics/` and `judges/` here (a flag such as `--checks DIR` names another).

| file | what it decides |
|---|---|
| `bench.toml` | whom to measure (targets: the built-in simulated providers; real providers commented out), repeats, limits, request settings |
| `scenarios/` | the scripted multi-turn conversations sent, one file each |
| `checks/` | rule-based checks of each scenario's answers (file named after the scenario) |
| `rubrics/` | what the judge scores, on which scale |
| `judges/` | judge settings and prompt templates (`mock.toml`: the simulated judge; `default.toml`: a real one) |
| `sessions/` | recorded agent sessions for `turnbench replay` |

## Next

```sh
turnbench lint .                  # every definition file
turnbench run                     # collect → check → judge → report.html, offline (simulated providers)
# real providers: uncomment targets in bench.toml, export the key variables they name, then
turnbench collect --dry-run       # what would be sent; nothing is sent
turnbench run --judge judges/default.toml --rubric rubrics/multiturn-quality.toml
# saved chats: checks in checks/ID.toml apply to transcripts imported for scenario ID
turnbench import chats.jsonl --scenario ID --provider P --model M
turnbench check && turnbench report
```
"#,
        version = embedded::VERSION
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_holds_the_built_in_definitions_and_a_readme() {
        let files = project_files();
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        for want in [
            "bench.toml",
            "README.md",
            "scenarios/biz-policy-faq.toml",
            "checks/biz-policy-faq.toml",
            "rubrics/multiturn-quality.toml",
            "judges/mock.toml",
            "judges/prompt.md",
            "sessions/agent-sessions.jsonl",
        ] {
            assert!(names.contains(&want), "{want} in {names:?}");
        }
        assert!(!names.iter().any(|n| n.starts_with("examples/")));
    }

    #[test]
    fn existing_files_are_named_and_kept_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("scenarios/biz-policy-faq.toml");
        std::fs::create_dir_all(mine.parent().unwrap()).unwrap();
        std::fs::write(&mine, "mine").unwrap();
        let err = init(dir.path(), false).unwrap_err().to_string();
        assert!(
            err.contains("biz-policy-faq.toml") && err.contains("--force"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine");
        assert!(!dir.path().join("bench.toml").exists(), "nothing written");
        let written = init(dir.path(), true).unwrap();
        assert_eq!(written.len(), project_files().len());
        assert_ne!(std::fs::read_to_string(&mine).unwrap(), "mine");
    }
}
