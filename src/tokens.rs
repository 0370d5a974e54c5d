//! Visible-token counting with o200k_base (never provider usage), so that answers from
//! different providers are measured with one ruler.

/// The tokenizer and the version of the crate that implements it, stored with each run
/// (`runs.tokenizer`). The version is the one Cargo resolved for this build, read from
/// `Cargo.lock` by `build.rs` ("unknown" when the build had no lock file).
pub const TOKENIZER: &str = concat!(
    "o200k_base (tiktoken-rs ",
    env!("TURNBENCH_TIKTOKEN_RS_VERSION"),
    ")"
);

/// Loads the tokenizer (~0.3 s) so that the first count does not land inside a run.
pub fn warm_up() {
    let _ = tiktoken_rs::o200k_base_singleton();
}

pub fn count(text: &str) -> i64 {
    tiktoken_rs::o200k_base_singleton().count_ordinary(text) as i64
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_o200k_tokens() {
        assert_eq!(super::count(""), 0);
        assert_eq!(super::count("hello world"), 2);
    }

    #[test]
    fn the_recorded_version_is_the_locked_one() {
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock")).unwrap();
        let at = lock.find("name = \"tiktoken-rs\"\nversion = \"").unwrap();
        let version = lock[at..].split('"').nth(3).unwrap();
        assert_eq!(
            super::TOKENIZER,
            format!("o200k_base (tiktoken-rs {version})")
        );
    }
}
