//! A bench's `[report]` table (issue 36): `slo` gives goodput's objectives to `report
//! --config` and to `run`; `--slo` overrides it; a malformed one is refused by file:line.

use std::path::{Path, PathBuf};

use serde_json::Value;
use turnbench::config::Scenario;

use crate::common::*;
use crate::paired::{self, Provider};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The built-in bench with a `[report]` table appended, its scenarios the shipped ones.
fn bench(project: &Project, report: &str) -> PathBuf {
    let text = std::fs::read_to_string(repo("bench.toml")).unwrap();
    let text = text.replace(
        "scenarios = \"scenarios\"",
        &format!("scenarios = {:?}", repo("scenarios").to_str().unwrap()),
    );
    project.write("bench.toml", &format!("{text}\n[report]\n{report}\n"))
}

fn imported() -> Project {
    let all = Scenario::load_dir(&repo("scenarios")).unwrap();
    let fresh = |_: usize, _: u32| false;
    let providers = [
        Provider {
            name: "a",
            speed: 1.0,
            stale: &fresh,
            ttft_per_1k: 0.0,
        },
        Provider {
            name: "b",
            speed: 1.5,
            stale: &fresh,
            ttft_per_1k: 0.0,
        },
    ];
    let project = Project::new(&[]);
    let file = project.write("t.jsonl", &paired::lines(&all[..3], &providers, 2, 7));
    project.run_ok(&["import", file.to_str().unwrap()]);
    project
}

fn goodput_slo(project: &Project, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["report", "--format", "json"];
    all.extend(args);
    let (out, _) = project.run_ok(&all);
    let r: Value = serde_json::from_str(&out).unwrap();
    // (No `goodput` key without objectives.)
    r["goodput"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|g| g["slo"].clone())
        .collect()
}

#[test]
fn report_config_gives_the_slo_and_the_flag_overrides_it() {
    let project = imported();
    let file = bench(&project, "slo = \"e2e=800ms\"");
    let config = file.to_str().unwrap();
    let slo = goodput_slo(&project, &["--config", config]);
    assert_eq!(slo.len(), 2, "{slo:?}");
    assert!(
        slo.iter()
            .all(|s| *s == serde_json::json!({"e2e_ms": 800.0})),
        "{slo:?}"
    );
    let slo = goodput_slo(&project, &["--config", config, "--slo", "ttft=100ms"]);
    assert!(
        slo.iter()
            .all(|s| *s == serde_json::json!({"ttft_ms": 100.0})),
        "{slo:?}"
    );
    // Without either, no goodput.
    assert!(goodput_slo(&project, &[]).is_empty());
}

#[test]
fn a_malformed_report_slo_is_refused_by_file_and_line() {
    let project = imported();
    let file = bench(&project, "slo = \"e2e=fast\"");
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text.lines().position(|l| l.starts_with("slo =")).unwrap() + 1;
    let out = project
        .cmd(&["report", "--config", file.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("bench.toml:{line}"))
            && stderr.contains("[report] slo: `e2e=fast`")
            && stderr.contains("fix: give NAME=DURATION pairs"),
        "{stderr}"
    );
}

#[test]
fn run_reports_goodput_under_the_benchs_slo() {
    let project = Project::new(&[]);
    let file = bench(&project, "slo = \"e2e=400ms\"");
    let (stdout, stderr) =
        project.run_ok(&["run", "--repeats", "1", "--config", file.to_str().unwrap()]);
    assert!(
        stdout.contains("goodput (e2e=400ms) on glm-sim"),
        "{stdout}\n{stderr}"
    );
}
