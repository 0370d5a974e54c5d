//! `turnbench mock`: serve the simulated OpenAI-compatible provider until Ctrl-C.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use anyhow::Result;

use super::Global;
use crate::exit::Exit;
use crate::run::builtin::{self, StandaloneMock};

/// Serve a simulated OpenAI-compatible provider until Ctrl-C.
#[derive(clap::Args)]
pub struct MockArgs {
    #[arg(long, default_value_t = 8089)]
    port: u16,
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Model profiles (TOML); default: sim-swift, sim-burst, sim-flaky, sim-thinker.
    #[arg(long)]
    profiles: Option<PathBuf>,
    /// Answer scenario turns with their reference answers.
    #[arg(long)]
    scenarios: Option<PathBuf>,
    /// Overrides the profiles' seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Append every request body to this file (JSON Lines).
    #[arg(long)]
    log: Option<PathBuf>,
}

impl MockArgs {
    /// Serves until Ctrl-C; the store (`--db`) is not used.
    pub async fn run(self, _global: &Global) -> Result<Exit> {
        let serving = builtin::serve_standalone(StandaloneMock {
            addr: SocketAddr::new(self.host, self.port),
            profiles: self.profiles,
            scenarios: self.scenarios,
            seed: self.seed,
            log: self.log,
        })
        .await?;
        println!(
            "turnbench mock listening on {} (models: {}; {} scenarios)",
            serving.base_url(),
            serving.models.join(", "),
            serving.scenarios
        );
        std::io::stdout().flush()?;
        tokio::signal::ctrl_c().await?;
        serving.stop();
        Ok(Exit::Success)
    }
}
