//! `turnbench lint`: print every problem in the project's definition files, then a one-line
//! verdict; exit 1 if any, or if it found no definition file to check.

use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::exit::Exit;
use crate::project_lint::{LintInput, lint_project};

/// Validate every definition file of a project: bench.toml, scenarios, checks, rubrics,
/// judges, and bench files given with --bench. Each problem names its file, line and
/// fix; exits 1 if any, or if there is nothing to check.
#[derive(clap::Args)]
pub struct LintArgs {
    /// The project folder (holding bench.toml, scenarios/, checks/, rubrics/, judges/).
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// A bench file to validate too (repeatable). Key variables need not be set.
    #[arg(long = "bench", value_name = "FILE")]
    bench: Vec<PathBuf>,
}

impl LintArgs {
    pub fn run(self, global: &Global) -> Result<Exit> {
        let findings = lint_project(&LintInput {
            project: &self.dir,
            bench_files: &self.bench,
        });
        let files: usize = findings.iter().map(|(_, f)| f.files).sum();
        let problems: usize = findings.iter().map(|(_, f)| f.errors.len()).sum();
        for (_, f) in &findings {
            for e in &f.errors {
                println!("{e}");
            }
        }
        if problems > 0 {
            println!("lint: {problems} problems in {files} definition files");
            return Ok(Exit::Error);
        }
        // A linter that read nothing has not passed.
        if files == 0 {
            let why = if self.dir.is_dir() {
                "no bench.toml, and no *.toml in scenarios/, checks/, rubrics/ or judges/"
            } else {
                "no such folder"
            };
            eprintln!(
                "lint: nothing to check in {}: {why}\n  fix: run it in a project folder (`turnbench init DIR` makes one), name one (`turnbench lint DIR`), or name a bench file with --bench FILE",
                self.dir.display()
            );
            return Ok(Exit::Error);
        }
        if !global.quiet {
            let covered: Vec<String> = findings
                .iter()
                .map(|(what, f)| {
                    let s = if f.files == 1 { "" } else { "s" };
                    format!("{} {what}{s}", f.files)
                })
                .collect();
            println!(
                "lint: no problems in {files} files ({})",
                covered.join(", ")
            );
        }
        Ok(Exit::Success)
    }
}
