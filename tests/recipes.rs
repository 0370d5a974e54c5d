//! docs/store.md's recipes for other engines ("Reading the store in DuckDB, Polars and
//! pandas"), run as the page writes them against a built-in run's store by
//! `tests/recipes/store_recipes.py`, which checks their figures against
//! `turnbench report --format json`: TTFT p50 per cell, attempted and completed
//! conversations, conversation latency p50, the Parquet file's rows.
//!
//! The script needs Python with duckdb, pandas and polars (`TURNBENCH_PYTHON`, else
//! `python3`; offline, also `duckdb-ext-sqlite`: tests/recipes/requirements.txt). Without
//! them this test says how to install them on one stderr line and passes, unless
//! `TURNBENCH_REQUIRE_DUCKDB=1` (set by `.ci/run`, which installs them), where their
//! absence fails it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const INSTALL: &str = "python3 -m venv target/ci-venv && target/ci-venv/bin/pip install \
     -r tests/recipes/requirements.txt, then \
     TURNBENCH_PYTHON=target/ci-venv/bin/python cargo test --test integration recipes::";

/// The Python that has the recipes' packages, or `None` (after the skip line) when there
/// is none and none is required.
fn python() -> Option<PathBuf> {
    let required = std::env::var("TURNBENCH_REQUIRE_DUCKDB").is_ok_and(|v| v == "1");
    let python = std::env::var_os("TURNBENCH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| "python3".into());
    let probe = Command::new(&python)
        .args(["-c", "import duckdb, pandas, polars"])
        .output();
    let missing = match probe {
        Ok(out) if out.status.success() => return Some(python),
        Ok(out) => format!(
            "{} cannot import duckdb, pandas and polars ({})",
            python.display(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ),
        Err(e) => format!("{} does not run ({e})", python.display()),
    };
    assert!(
        !required,
        "TURNBENCH_REQUIRE_DUCKDB=1 but {missing}; {INSTALL}"
    );
    let _ = writeln!(
        std::io::stderr(),
        "recipes: skipped, {missing}; to run it: {INSTALL}"
    );
    None
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

#[test]
fn the_store_recipes_in_duckdb_pandas_and_polars_equal_the_report() {
    let Some(python) = python() else { return };
    // The built-in run, as a new user runs it: no bench, no scenarios here.
    let dir = tempfile::tempdir().unwrap();
    let turnbench = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("turnbench")
            .unwrap()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "turnbench {args:?} failed: {stderr}");
        out.stdout
    };
    turnbench(&["run", "--repeats", "1", "--quiet"]);
    let report = turnbench(&["report", "--format", "json"]);
    std::fs::write(dir.path().join("report.json"), report).unwrap();

    let out = Command::new(&python)
        .arg(repo("tests/recipes/store_recipes.py"))
        .arg(repo("docs/store.md"))
        .arg("report.json")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the recipes failed:\n{stdout}\n{stderr}"
    );
    // The script ran every block and compared every cell of the built-in run.
    assert!(
        stdout.contains("7 blocks ran; 4 cells equal the report"),
        "{stdout}"
    );
    assert!(dir.path().join("turns.parquet").is_file());
}
