//! Build-time facts for the binary:
//! - the resolved version of tiktoken-rs (the visible-token counter), so that each run can
//!   store which tokenizer counted its tokens (`runs.tokenizer`);
//! - the commit the binary is built from, for `turnbench --version`;
//! - the list of built-in definitions (`src/config/embedded.rs`): every file under the
//!   shipped folders, compiled in with `include_str!`.

use std::path::{Path, PathBuf};

/// The folders whose files are the built-in definitions, and the built-in bench.
const SHIPPED: [&str; 6] = [
    "scenarios",
    "checks",
    "rubrics",
    "judges",
    "sessions",
    "examples",
];
const SHIPPED_FILES: [&str; 1] = ["bench.toml"];

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    tokenizer_version(&dir);
    commit(&dir);
    embedded(&dir);
}

fn tokenizer_version(dir: &Path) {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = std::fs::read_to_string(dir.join("Cargo.lock")).unwrap_or_default();
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"tiktoken-rs\""))
        .and_then(|p| p.lines().find_map(|l| l.trim().strip_prefix("version = ")))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=TURNBENCH_TIKTOKEN_RS_VERSION={version}");
}

/// `git rev-parse --short=10 HEAD`, or "unknown" outside a git checkout (a source tarball).
fn commit(dir: &Path) {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_string())
    };
    let commit = git(&["rev-parse", "--short=10", "HEAD"]).unwrap_or_else(|| "unknown".into());
    // Rebuild when HEAD moves: the HEAD file (a checkout) and the branch it names (a commit).
    if let Some(head) = git(&["rev-parse", "--git-path", "HEAD"]) {
        println!("cargo:rerun-if-changed={}", dir.join(head).display());
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"])
        && let Some(path) = git(&["rev-parse", "--git-path", &branch])
    {
        println!("cargo:rerun-if-changed={}", dir.join(path).display());
    }
    println!("cargo:rustc-env=TURNBENCH_COMMIT={commit}");
}

/// Writes `$OUT_DIR/embedded.rs`: a sorted slice of (path relative to the checkout, text).
fn embedded(dir: &Path) {
    let mut files = Vec::new();
    for folder in SHIPPED {
        println!("cargo:rerun-if-changed={folder}");
        walk(&dir.join(folder), &mut files);
    }
    for file in SHIPPED_FILES {
        println!("cargo:rerun-if-changed={file}");
        files.push(dir.join(file));
    }
    files.retain(|p| p.is_file());
    files.sort();
    let mut out = String::from("&[\n");
    for path in &files {
        let rel = path.strip_prefix(dir).unwrap_or(path);
        let rel = rel.to_string_lossy().replace('\\', "/");
        out.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    out.push(']');
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into()));
    if let Err(e) = std::fs::write(out_dir.join("embedded.rs"), out) {
        panic!("cannot write embedded.rs: {e}");
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let hidden = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}
