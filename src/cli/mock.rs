//! `turnbench mock`: serve the simulated OpenAI-compatible provider until Ctrl-C.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use anyhow::{Context, Result};

use super::Global;
use crate::config::Scenario;
use crate::mock::{MockConfig, MockServer};

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
    pub async fn run(self, _global: &Global) -> Result<i32> {
        let Self {
            port,
            host,
            profiles,
            scenarios,
            seed,
            log,
        } = self;
        let mut cfg = match profiles {
            Some(p) => MockConfig::load(&p)?,
            None => MockConfig::builtin(),
        };
        if let Some(seed) = seed {
            cfg.seed = seed;
        }
        let scenarios = match scenarios {
            Some(dir) => Scenario::load_dir(&dir)?,
            None => Vec::new(),
        };
        let models: Vec<_> = cfg.profiles.iter().map(|p| p.model.clone()).collect();
        let server =
            MockServer::start(cfg, &scenarios, SocketAddr::new(host, port), log.as_deref())
                .await
                .with_context(|| format!("cannot listen on {host}:{port}"))?;
        println!(
            "turnbench mock listening on {} (models: {}; {} scenarios)",
            server.base_url(),
            models.join(", "),
            scenarios.len()
        );
        std::io::stdout().flush()?;
        tokio::signal::ctrl_c().await?;
        server.stop();
        Ok(0)
    }
}
