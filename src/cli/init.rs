//! `turnbench init`: write an editable project from the built-in definitions.

use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::exit::Exit;

/// Write an editable project: bench.toml (the built-in simulated providers; real
/// providers commented out), scenarios/, checks/, rubrics/, judges/, sessions/ and a
/// README of the next commands. Existing files are named and left alone, unless --force.
#[derive(clap::Args)]
pub struct InitArgs {
    /// The project folder (created when missing).
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Overwrite the project's files where they exist (other files are left alone).
    #[arg(long)]
    force: bool,
}

impl InitArgs {
    pub fn run(self, global: &Global) -> Result<Exit> {
        let written = crate::init::init(&self.dir, self.force)?;
        if !global.quiet {
            let cd = if self.dir == std::path::Path::new(".") {
                String::new()
            } else {
                format!("cd {} && ", self.dir.display())
            };
            println!(
                "wrote {} files into {}\nnext: {cd}turnbench lint . && turnbench run    (README.md has the rest)",
                written.len(),
                self.dir.display()
            );
        }
        Ok(Exit::Success)
    }
}
