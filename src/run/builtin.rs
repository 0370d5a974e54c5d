//! The built-in offline run: four simulated providers serving one model label from the
//! in-process mock (`MockConfig::builtin`), no key, no network. Used by `turnbench run`
//! and `turnbench collect` without `--config`.

use std::path::Path;

use crate::config::{BenchConfig, SourceText};

/// The run name the built-in bench is stored under.
pub const NAME: &str = "builtin-mock";

/// The model label the four simulated providers serve (so the report compares them).
pub const LABEL: &str = "glm-sim";

/// Every delay the built-in mock sleeps is this share of its profile's (realistic) delay,
/// so the whole run takes well under a minute; the output says so.
pub const TIME_SCALE: f64 = 0.1;

/// The built-in bench against a mock at `base_url` (`http://127.0.0.1:PORT/v1`). The
/// targets' stable URL is `http://builtin-mock/v1`, so the settings (and a resume) do not
/// depend on the port, and the report labels them simulated.
pub fn bench(base_url: &str, scenarios: &Path, repeats: u32) -> BenchConfig {
    let text = format!(
        r#"
name = "{NAME}"
seed = 42
repeats = {repeats}
scenarios = {scenarios:?}
turn_timeout_s = 30
concurrency = 16
per_target_concurrency = 4
pause_scale = 0.02

[[target]]
provider = "sim-swift"
model = "sim-swift"
label = "{LABEL}"
base_url = "{base_url}"
price = {{ input = 0.60, cached = 0.15, output = 2.20 }}

[[target]]
provider = "sim-burst"
model = "sim-burst"
label = "{LABEL}"
base_url = "{base_url}"
price = {{ input = 0.30, cached = 0.08, output = 1.20 }}

[[target]]
provider = "sim-flaky"
model = "sim-flaky"
label = "{LABEL}"
base_url = "{base_url}"
price = {{ input = 0.20, output = 0.80 }}

[[target]]
provider = "sim-thinker"
model = "sim-thinker"
label = "{LABEL}"
base_url = "{base_url}"
price = {{ input = 0.40, cached = 0.10, output = 1.60 }}
"#,
        scenarios = scenarios.display().to_string()
    );
    let src = SourceText {
        path: "<built-in bench>".into(),
        text,
    };
    // The text above is fixed and names no key variable: it always parses (a test runs it).
    let mut cfg = BenchConfig::from_source(&src).expect("the built-in bench is valid");
    for t in &mut cfg.targets {
        t.stable_url = Some("http://builtin-mock/v1".to_string());
    }
    cfg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_simulated_providers_serve_one_label() {
        let cfg = bench("http://127.0.0.1:9/v1", Path::new("scenarios"), 2);
        assert_eq!(cfg.targets.len(), 4);
        assert!(cfg.targets.iter().all(|t| t.label == LABEL));
        assert!(cfg.targets.iter().all(|t| t.host() == "builtin-mock"));
        let mock = crate::mock::MockConfig::builtin();
        for t in &cfg.targets {
            assert!(
                mock.profile_for(&t.model).is_some(),
                "the built-in mock serves {}",
                t.model
            );
        }
    }
}
