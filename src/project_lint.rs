//! `turnbench lint`: every definition file of a project, validated by a list of linters.
//! Each linter returns the files it read and every problem as a [`ConfigError`] naming file,
//! line and fix. Adding one is its function plus one line in [`LINTERS`].

use std::path::{Path, PathBuf};

use crate::config::scenario::toml_files;
use crate::config::{BenchConfig, ConfigError, Scenario, SourceText};

/// What the linters look at.
pub struct LintInput<'a> {
    /// The project folder: `scenarios/`, `checks/`, `rubrics/`, `judges/`.
    pub project: &'a Path,
    /// Bench files named on the command line (the project's own `bench.toml` is linted
    /// without being named).
    pub bench_files: &'a [PathBuf],
}

/// What one linter found.
#[derive(Debug, Default)]
pub struct LintFindings {
    /// Definition files read.
    pub files: usize,
    pub errors: Vec<ConfigError>,
}

pub type Linter = fn(&LintInput) -> LintFindings;

/// Every linter, with the files it covers (singular); run in this order.
pub const LINTERS: &[(&str, Linter)] = &[
    ("scenario and checks file", scenarios_and_checks),
    ("bench file", bench_files),
    ("rubric file", rubrics),
    ("judge settings file", judges),
];

/// Runs every linter; returns (what, findings) per linter.
pub fn lint_project(input: &LintInput) -> Vec<(&'static str, LintFindings)> {
    LINTERS
        .iter()
        .map(|(name, linter)| (*name, linter(input)))
        .collect()
}

/// `scenarios/*.toml` and `checks/*.toml`, loaded and cross-checked (see `checks::lint`).
fn scenarios_and_checks(input: &LintInput) -> LintFindings {
    let files = ["scenarios", "checks"]
        .iter()
        .map(|d| input.project.join(d))
        .filter(|d| d.is_dir())
        .map(|d| toml_files(&d).map_or(0, |f| f.len()))
        .sum();
    LintFindings {
        files,
        errors: crate::checks::lint(input.project),
    }
}

/// `rubrics/*.toml`: scale, criteria and anchors (see `config::rubric`).
fn rubrics(input: &LintInput) -> LintFindings {
    each_file(&input.project.join("rubrics"), |p| {
        crate::config::Rubric::load(p).map(drop)
    })
}

/// `judges/*.toml`: endpoint, parameters and the prompt template they name. Keys are not
/// needed to lint.
fn judges(input: &LintInput) -> LintFindings {
    each_file(&input.project.join("judges"), |p| {
        crate::config::JudgeSettings::load_without_keys(p).map(drop)
    })
}

/// Runs `load` on every `*.toml` in `dir` (none when the folder is absent).
fn each_file(dir: &Path, load: impl Fn(&Path) -> Result<(), ConfigError>) -> LintFindings {
    let mut findings = LintFindings::default();
    if !dir.is_dir() {
        return findings;
    }
    match toml_files(dir) {
        Ok(files) => {
            for path in files {
                findings.files += 1;
                findings.errors.extend(load(&path).err());
            }
        }
        Err(e) => findings.errors.push(e),
    }
    findings
}

/// The project's `bench.toml` (when there is one) and each `--bench FILE`: parsed and
/// validated as `collect` would (key variables need not be set), its scenario folder
/// present, and every id in `only` a scenario there.
fn bench_files(input: &LintInput) -> LintFindings {
    let mut findings = LintFindings::default();
    let own = input.project.join("bench.toml");
    let own = own.is_file().then_some(own);
    let named = input
        .bench_files
        .iter()
        .filter(|p| own.as_ref().is_none_or(|o| !same_file(o, p)));
    for path in own.iter().chain(named) {
        findings.files += 1;
        findings.errors.extend(lint_bench(path));
    }
    findings
}

/// Do two paths name one file (both resolved; as written when one cannot be)?
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

fn lint_bench(path: &Path) -> Vec<ConfigError> {
    let src = match SourceText::read(path) {
        Ok(src) => src,
        Err(e) => return vec![e],
    };
    let cfg = match BenchConfig::from_source_without_keys(&src) {
        Ok(cfg) => cfg,
        Err(e) => return vec![e],
    };
    let dir = &cfg.scenarios_dir;
    if !dir.is_dir() {
        return vec![ConfigError::invalid(
            path,
            src.key_line("scenarios"),
            format!("scenario folder {} does not exist", dir.display()),
            "set `scenarios` to a folder of scenario files, relative to this bench file",
        )];
    }
    let Some(only) = &cfg.only else {
        return Vec::new();
    };
    // The scenario files' own problems are the scenario linter's; here only the ids count.
    let known: Vec<String> = toml_files(dir)
        .unwrap_or_default()
        .iter()
        .filter_map(|p| Scenario::load(p).ok().map(|s| s.id))
        .collect();
    only.iter()
        .filter(|id| !known.contains(id))
        .map(|id| {
            ConfigError::invalid(
                path,
                src.key_line("only"),
                format!(
                    "`only` names scenario {id:?}, which is not in {}",
                    dir.display()
                ),
                format!("use one of: {}", known.join(", ")),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BENCH: &str = r#"name = "t"
scenarios = "scenarios"
only = ["demo", "nope"]

[[target]]
provider = "acme"
model = "m"
base_url = "https://api.example.com/v1"
api_key_env = "TURNBENCH_LINT_TEST_SURELY_UNSET"
"#;

    const SCENARIO: &str = "id = \"demo\"\ncategory = \"developer\"\n[[turn]]\nuser = \"Hi.\"\nreference = \"Hello.\"\n";

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("scenarios")).unwrap();
        std::fs::write(dir.path().join("scenarios/demo.toml"), SCENARIO).unwrap();
        dir
    }

    fn run(dir: &Path, bench: &[PathBuf]) -> Vec<String> {
        lint_project(&LintInput {
            project: dir,
            bench_files: bench,
        })
        .into_iter()
        .flat_map(|(_, f)| f.errors)
        .map(|e| e.to_string())
        .collect()
    }

    #[test]
    fn shipped_rubrics_and_judges_lint_clean_and_a_broken_copy_names_its_line() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = project();
        for sub in ["rubrics", "judges"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
            for entry in std::fs::read_dir(root.join(sub)).unwrap() {
                let path = entry.unwrap().path();
                std::fs::copy(&path, dir.path().join(sub).join(path.file_name().unwrap())).unwrap();
            }
        }
        assert_eq!(run(dir.path(), &[]), Vec::<String>::new());
        let rubric = dir.path().join("rubrics/multiturn-quality.toml");
        let text = std::fs::read_to_string(&rubric).unwrap();
        std::fs::write(
            &rubric,
            format!(
                "{text}
surprise = 1\n"
            ),
        )
        .unwrap();
        let errors = run(dir.path(), &[]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("multiturn-quality.toml:"), "{errors:?}");
        assert!(errors[0].contains("surprise"), "{errors:?}");
    }

    #[test]
    fn unknown_only_id_names_its_line_and_unset_keys_are_not_errors() {
        let dir = project();
        let bench = dir.path().join("bench.toml");
        std::fs::write(&bench, BENCH).unwrap();
        let errors = run(dir.path(), std::slice::from_ref(&bench));
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert!(
            errors[0].contains("bench.toml:3: `only` names scenario \"nope\""),
            "{}",
            errors[0]
        );
        assert!(errors[0].contains("fix: use one of: demo"), "{}", errors[0]);
    }

    #[test]
    fn missing_scenario_folder_and_bad_values_are_reported() {
        let dir = project();
        let bench = dir.path().join("bench.toml");
        std::fs::write(&bench, BENCH.replace("\"scenarios\"", "\"elsewhere\"")).unwrap();
        let errors = run(dir.path(), std::slice::from_ref(&bench));
        assert!(
            errors[0].contains("bench.toml:2: scenario folder"),
            "{errors:#?}"
        );
        std::fs::write(&bench, BENCH.replace("https://", "ftp://")).unwrap();
        let errors = run(dir.path(), std::slice::from_ref(&bench));
        assert!(errors[0].contains("bench.toml:8: base_url"), "{errors:#?}");
    }

    #[test]
    fn files_are_counted_and_a_clean_project_has_no_errors() {
        let dir = project();
        let findings = lint_project(&LintInput {
            project: dir.path(),
            bench_files: &[],
        });
        assert_eq!(findings.len(), LINTERS.len());
        assert_eq!(findings[0].1.files, 1);
        assert!(findings.iter().all(|(_, f)| f.errors.is_empty()));
    }
}
