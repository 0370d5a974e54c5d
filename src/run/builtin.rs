//! Which bench a command runs, and the built-in mock provider that serves simulated targets.
//!
//! The bench is the file named with `--config`, else `bench.toml` in the current
//! directory, else the built-in one (`<built-in>/bench.toml`, the repository's
//! `bench.toml`): four simulated providers serving one model label. A target whose
//! base_url is on the host `builtin-mock` is served by the mock, started in-process on
//! loopback for as long as the command runs: no key, no network. Used by `run`, `collect`
//! and `replay`.

use std::path::{Path, PathBuf};

use crate::config::{BenchConfig, ConfigError, Scenario, SourceText, TargetConfig, embedded};
use crate::mock::{MockConfig, MockServer};

/// The run name of the built-in bench.
pub const NAME: &str = "builtin-mock";

/// The model label the four simulated providers serve (so the report compares them).
pub const LABEL: &str = "glm-sim";

/// The host that names the built-in mock provider in a target's base_url.
pub const MOCK_HOST: &str = "builtin-mock";

/// Every delay the built-in mock sleeps is this share of its profile's (realistic) delay,
/// so the whole run takes well under a minute; the output says so.
pub const TIME_SCALE: f64 = 0.1;

/// The conventional bench file in the current directory.
pub const CONVENTIONAL: &str = "bench.toml";

/// The bench file a command uses: `named` (on disk, else the built-in file of that name,
/// such as `examples/bench.toml`), else `./bench.toml`, else the built-in one.
pub fn bench_path(named: Option<&Path>) -> PathBuf {
    match named {
        Some(p) => embedded::resolve_file(p, "examples"),
        None if Path::new(CONVENTIONAL).is_file() => PathBuf::from(CONVENTIONAL),
        None => embedded::path(CONVENTIONAL),
    }
}

/// What to change in the bench as read.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--scenarios`: the scenario folder, whatever the file says.
    pub scenarios: Option<PathBuf>,
    /// `--repeats`.
    pub repeats: Option<u32>,
    /// Read without requiring the key variables (`--dry-run`).
    pub without_keys: bool,
    /// `--collector`: where the runs are collected from, whatever the file says.
    pub collector: Option<String>,
}

/// Loads the bench at `path` ([`bench_path`]). The built-in bench takes its scenarios
/// from `./scenarios` when that folder is here (else its own), as every command does.
pub fn load(path: &Path, overrides: &Overrides) -> Result<BenchConfig, ConfigError> {
    let src = SourceText::read(path)?;
    let mut cfg = if overrides.without_keys {
        BenchConfig::from_source_without_keys(&src)?
    } else {
        BenchConfig::from_source(&src)?
    };
    if let Some(dir) = &overrides.scenarios {
        cfg.scenarios_dir = dir.clone();
    } else if embedded::is_builtin(path) {
        cfg.scenarios_dir = embedded::resolve_dir(None, "scenarios");
    }
    if let Some(r) = overrides.repeats {
        cfg.repeats = r;
    }
    if let Some(c) = &overrides.collector {
        cfg.collector = Some(c.clone());
    }
    Ok(cfg)
}

/// Is this target served by the built-in mock?
pub fn is_mock(target: &TargetConfig) -> bool {
    target.host() == MOCK_HOST
}

/// Does the whole bench run on the built-in mock (its failures are simulated faults)?
pub fn all_mock(cfg: &BenchConfig) -> bool {
    !cfg.targets.is_empty() && cfg.targets.iter().all(is_mock)
}

/// Starts the built-in mock when a target names it, at `time_scale` of its realistic
/// delays, and points those targets at it. The targets keep `http://builtin-mock/v1` as
/// their stable URL, so the stored settings (and a resume) do not depend on the port.
/// `None` when no target names the mock.
pub async fn serve(
    cfg: &mut BenchConfig,
    scenarios: &[Scenario],
    time_scale: f64,
) -> Result<Option<MockServer>, String> {
    if !cfg.targets.iter().any(is_mock) {
        return Ok(None);
    }
    let mut mock = MockConfig::builtin();
    mock.time_scale = time_scale;
    if let Some(t) = cfg
        .targets
        .iter()
        .find(|t| is_mock(t) && mock.profile_for(&t.model).is_none())
    {
        let served: Vec<&str> = mock.profiles.iter().map(|p| p.model.as_str()).collect();
        return Err(format!(
            "target {}/{}: the built-in mock does not serve model {:?}\n  fix: use one of {}",
            t.provider,
            t.label,
            t.model,
            served.join(", ")
        ));
    }
    let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let server = MockServer::start(mock, scenarios, loopback, None)
        .await
        .map_err(|e| format!("the built-in mock: {e}"))?;
    let url = server.base_url();
    for t in cfg.targets.iter_mut().filter(|t| is_mock(t)) {
        t.stable_url = Some(std::mem::replace(&mut t.base_url, url.clone()));
    }
    Ok(Some(server))
}

/// What `turnbench mock` serves: its address, its profiles (else the built-in four), the
/// scenarios whose reference answers it gives, a seed over the profiles', a request log.
pub struct StandaloneMock {
    pub addr: std::net::SocketAddr,
    pub profiles: Option<PathBuf>,
    pub scenarios: Option<PathBuf>,
    pub seed: Option<u64>,
    pub log: Option<PathBuf>,
}

/// A mock provider serving on its own (`turnbench mock`) until [`Serving::stop`].
pub struct Serving {
    server: MockServer,
    /// The models its profiles serve.
    pub models: Vec<String>,
    /// How many scenarios it answers with their references.
    pub scenarios: usize,
}

impl Serving {
    /// Its base URL (`http://HOST:PORT/v1`).
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    pub fn stop(self) {
        self.server.stop();
    }
}

/// Starts the mock provider of `turnbench mock`; the caller decides how long it serves.
pub async fn serve_standalone(opts: StandaloneMock) -> Result<Serving, super::RunError> {
    let mut cfg = match &opts.profiles {
        Some(p) => MockConfig::load(p)?,
        None => MockConfig::builtin(),
    };
    if let Some(seed) = opts.seed {
        cfg.seed = seed;
    }
    let scenarios = match &opts.scenarios {
        Some(dir) => Scenario::load_dir(dir)?,
        None => Vec::new(),
    };
    let models: Vec<String> = cfg.profiles.iter().map(|p| p.model.clone()).collect();
    let server = MockServer::start(cfg, &scenarios, opts.addr, opts.log.as_deref())
        .await
        .map_err(|e| super::RunError::Listen {
            addr: opts.addr,
            error: e.to_string(),
        })?;
    Ok(Serving {
        server,
        models,
        scenarios: scenarios.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_bench_is_four_simulated_providers_serving_one_label() {
        let cfg = load(&embedded::path(CONVENTIONAL), &Overrides::default()).unwrap();
        assert_eq!(cfg.name, NAME);
        assert_eq!(cfg.targets.len(), 4);
        assert!(cfg.targets.iter().all(|t| t.label == LABEL));
        assert!(all_mock(&cfg));
        let mock = MockConfig::builtin();
        for t in &cfg.targets {
            assert!(
                mock.profile_for(&t.model).is_some(),
                "the built-in mock serves {}",
                t.model
            );
        }
    }

    #[tokio::test]
    async fn serving_points_mock_targets_at_loopback_and_keeps_their_stable_url() {
        let mut cfg = load(
            &embedded::path(CONVENTIONAL),
            &Overrides {
                repeats: Some(1),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(cfg.repeats, 1);
        let server = serve(&mut cfg, &[], 1.0).await.unwrap().unwrap();
        for t in &cfg.targets {
            assert_eq!(t.base_url, server.base_url());
            assert_eq!(t.stable_url.as_deref(), Some("http://builtin-mock/v1"));
            assert_eq!(t.host(), MOCK_HOST);
        }
        // A model the mock does not serve is refused before anything starts.
        let mut bad = load(&embedded::path(CONVENTIONAL), &Overrides::default()).unwrap();
        if let Some(t) = bad.targets.first_mut() {
            t.model = "gpt-nope".into();
        }
        let Err(err) = serve(&mut bad, &[], 1.0).await else {
            panic!("a model the mock does not serve is refused");
        };
        assert!(
            err.contains("gpt-nope") && err.contains("sim-swift"),
            "{err}"
        );
    }
}
