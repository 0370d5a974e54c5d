//! The shipped example files parse, so a user's first command does not fail on them.

use turnbench::config::BenchConfig;
use turnbench::mock::MockConfig;

#[test]
fn example_bench_parses_once_its_keys_are_set() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/bench.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let vars: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("api_key_env = \""))
        .map(|v| v.trim_end_matches('"'))
        .collect();
    assert!(vars.len() >= 5, "several real providers: {vars:?}");
    for v in &vars {
        // SAFETY: this test binary has a single test; nothing reads the env concurrently.
        unsafe { std::env::set_var(v, "placeholder") };
    }
    let cfg = BenchConfig::load(&path).unwrap();
    assert_eq!(cfg.targets.len(), vars.len());
    assert!(cfg.targets.iter().all(|t| t.label == "glm-5.3-flash"));
    assert!(
        cfg.targets
            .iter()
            .all(|t| t.base_url.starts_with("https://"))
    );
    let profiles =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mock-profiles.toml");
    assert_eq!(MockConfig::load(&profiles).unwrap().profiles.len(), 4);
}
