//! Visible-token counting with o200k_base (never provider usage), so that answers from
//! different providers are measured with one ruler.

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
}
