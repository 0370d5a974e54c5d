//! The tool as installed: the binary copied into an empty folder runs the whole offline
//! pipeline from its built-in definitions; `init` writes a project whose own files the next
//! run uses; completions, the manual page and the version come from the binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::count;

/// The binary, copied into `dir` as an installed tool would be (nothing of the checkout
/// beside it).
fn installed(dir: &Path) -> PathBuf {
    let to = dir.join("turnbench");
    std::fs::copy(env!("CARGO_BIN_EXE_turnbench"), &to).unwrap();
    to
}

/// Runs `cmd`, retrying while the kernel still counts the freshly copied binary as open
/// for writing (ETXTBSY: another test thread forked while our copy's file was open, and
/// its child holds the descriptor until it execs). A known race of copying an executable
/// in a multi-threaded process; a few milliseconds later it is gone.
fn output(cmd: &mut Command) -> std::process::Output {
    for _ in 0..50 {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other.unwrap(),
        }
    }
    cmd.output().unwrap()
}

/// Runs the copied binary in `cwd`; returns (stdout, stderr), asserting success.
fn ok(bin: &Path, cwd: &Path, args: &[&str]) -> (String, String) {
    let out = output(
        Command::new(bin)
            .args(args)
            .current_dir(cwd)
            .env_remove("RUST_LOG"),
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "turnbench {args:?} failed:\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

fn shipped_scenarios() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut ids: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.trim_end_matches(".toml").to_string()
        })
        .collect();
    ids.sort();
    ids
}

fn stored_scenarios(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT DISTINCT scenario FROM conversations ORDER BY scenario")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn the_binary_alone_runs_everything_and_a_project_runs_on_its_own_files() {
    let empty = tempfile::tempdir().unwrap();
    let bin = installed(empty.path());
    let version = env!("CARGO_PKG_VERSION");

    // 1. An empty folder: the built-in definitions, and the output says so.
    let (stdout, stderr) = ok(&bin, empty.path(), &["run", "--repeats", "1"]);
    assert!(
        stderr.contains(&format!(
            "[0/4 definitions] bench built-in v{version}; scenarios built-in v{version}; checks built-in v{version}"
        )),
        "{stderr}"
    );
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&format!("(collect, scenarios built-in v{version})")),
        "the report names where its scenarios came from:\n{stdout}"
    );
    let db = empty.path().join("turnbench.db");
    assert!(empty.path().join("report.html").is_file());
    assert_eq!(stored_scenarios(&db), shipped_scenarios());
    let conn = rusqlite::Connection::open(&db).unwrap();
    assert!(
        count(&conn, "SELECT COUNT(*) FROM check_results") > 0,
        "checks ran"
    );
    assert!(
        count(&conn, "SELECT COUNT(*) FROM judgments WHERE status = 'ok'") > 0,
        "the judge ran"
    );
    // Nothing of the definitions was written beside the binary.
    for dir in ["scenarios", "checks", "judges", "rubrics"] {
        assert!(!empty.path().join(dir).exists(), "{dir}");
    }

    // 2. init writes a project that lints clean; its files are the ones used.
    let (stdout, _) = ok(&bin, empty.path(), &["init", "proj"]);
    assert!(stdout.contains("cd proj && turnbench lint ."), "{stdout}");
    let proj = empty.path().join("proj");
    let (stdout, _) = ok(&bin, &proj, &["lint", "."]);
    assert!(
        stdout.starts_with("lint: no problems") && stdout.contains("1 bench file"),
        "{stdout}"
    );
    let dropped = "biz-policy-faq";
    std::fs::remove_file(proj.join(format!("scenarios/{dropped}.toml"))).unwrap();
    std::fs::remove_file(proj.join(format!("checks/{dropped}.toml"))).unwrap();
    let (_, stderr) = ok(&bin, &proj, &["run", "--repeats", "1"]);
    assert!(
        stderr.contains("[0/4 definitions] bench bench.toml; scenarios scenarios; checks checks"),
        "{stderr}"
    );
    let mut want = shipped_scenarios();
    want.retain(|s| s != dropped);
    assert_eq!(
        stored_scenarios(&proj.join("turnbench.db")),
        want,
        "the deleted scenario is not sent"
    );

    // 3. init refuses to overwrite, naming the files, unless --force.
    let out = output(
        Command::new(&bin)
            .args(["init", "proj"])
            .current_dir(empty.path()),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("exist already") && err.contains("bench.toml") && err.contains("--force"),
        "{err}"
    );
    ok(&bin, empty.path(), &["init", "proj", "--force"]);
    assert!(proj.join(format!("scenarios/{dropped}.toml")).is_file());
}

#[test]
fn a_named_judge_or_rubric_not_on_disk_is_the_built_in_one() {
    let empty = tempfile::tempdir().unwrap();
    let bin = installed(empty.path());
    ok(&bin, empty.path(), &["run", "--repeats", "1", "--quiet"]);
    // The names the closing lines suggest work where those files are not.
    let (stdout, stderr) = ok(
        &bin,
        empty.path(),
        &[
            "judge",
            "--judge",
            "judges/mock.toml",
            "--rubric",
            "support-tone",
            "--dry-run",
        ],
    );
    // The prompts ask for the support-tone rubric's criteria.
    assert!(
        stdout.contains(r#"{"scores": {"tone": <integer 1-5>, "concision": <integer 1-5>}"#),
        "{stdout}\n{stderr}"
    );
    // A name found nowhere is an error naming it.
    let mut out = Command::new(&bin);
    out.args([
        "judge",
        "--judge",
        "judges/nope.toml",
        "--rubric",
        "support-tone",
    ])
    .current_dir(empty.path());
    let out = output(&mut out);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("judges/nope.toml: cannot read"));
}

#[test]
fn completions_manual_and_version_come_from_the_binary() {
    let empty = tempfile::tempdir().unwrap();
    let bin = installed(empty.path());
    let (version, _) = ok(&bin, empty.path(), &["--version"]);
    assert!(
        version.starts_with(&format!("turnbench {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{version}"
    );
    for shell in ["bash", "zsh", "fish"] {
        let (script, _) = ok(&bin, empty.path(), &["completions", shell]);
        for word in ["turnbench", "init", "collect", "scenarios", "completions"] {
            assert!(script.contains(word), "{shell}: {word}");
        }
    }
    let (man, _) = ok(&bin, empty.path(), &["man"]);
    assert!(
        man.starts_with(".ie") || man.contains(".TH turnbench"),
        "{}",
        &man[..200.min(man.len())]
    );
    assert!(man.contains(".TH turnbench-init") && man.contains("\\-\\-force"));
}
