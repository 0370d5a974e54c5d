//! `turnbench completions SHELL` and `turnbench man`: generated from the clap definitions,
//! so they never drift from the flags.

use anyhow::Result;
use clap::CommandFactory;

use super::{Cli, Global};
use crate::exit::Exit;

/// Print a shell completion script, e.g. `turnbench completions bash >
/// ~/.local/share/bash-completion/completions/turnbench`.
#[derive(clap::Args)]
pub struct CompletionsArgs {
    shell: clap_complete::Shell,
}

impl CompletionsArgs {
    pub fn run(self, _global: &Global) -> Result<Exit> {
        let mut cmd = Cli::command();
        clap_complete::generate(self.shell, &mut cmd, "turnbench", &mut std::io::stdout());
        Ok(Exit::Success)
    }
}

/// Print the manual page (roff), e.g. `turnbench man > ~/.local/share/man/man1/turnbench.1`.
#[derive(clap::Args)]
pub struct ManArgs {}

impl ManArgs {
    pub fn run(self, _global: &Global) -> Result<Exit> {
        let cmd = Cli::command();
        let mut out = std::io::stdout().lock();
        clap_mangen::Man::new(cmd.clone()).render(&mut out)?;
        // Each command's own section, after the page of the whole.
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let name = format!("turnbench-{}", sub.get_name());
            let sub = sub.clone().name(name);
            clap_mangen::Man::new(sub).render(&mut out)?;
        }
        Ok(Exit::Success)
    }
}
