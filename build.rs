//! Records the resolved version of tiktoken-rs (the visible-token counter), so that each
//! run can store which tokenizer counted its tokens (`runs.tokenizer`).

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let lock = std::fs::read_to_string(format!("{dir}/Cargo.lock")).unwrap_or_default();
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"tiktoken-rs\""))
        .and_then(|p| p.lines().find_map(|l| l.trim().strip_prefix("version = ")))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=TURNBENCH_TIKTOKEN_RS_VERSION={version}");
}
