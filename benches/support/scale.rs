//! What the at-scale benches (report_scale, store_sizing) share: the synthetic transcripts'
//! shape, the checks they run over them, the raw scan a report is measured against, and
//! the median. One copy for every benchmark.

use std::path::{Path, PathBuf};
use std::time::Instant;

/// Turns a conversation.
pub const TURNS: u32 = 4;
/// Providers × model label.
pub const TARGETS: [(&str, &str); 4] = [
    ("acme", "glm-5.3"),
    ("nimbus", "glm-5.3"),
    ("orbit", "glm-5.3"),
    ("zenith", "glm-5.3"),
];
pub const SCENARIOS: u64 = 15;

/// The bench's size, binary and folder from `{PREFIX}_CONVERSATIONS` (else `default`),
/// `{PREFIX}_BIN` (else this build's turnbench) and `{PREFIX}_DIR` (else
/// `target/{folder}-{n}`, created).
pub fn settings(prefix: &str, default: u64, folder: &str) -> (u64, PathBuf, PathBuf) {
    let var = |name: &str| std::env::var_os(format!("{prefix}_{name}"));
    let n: u64 = var("CONVERSATIONS")
        .and_then(|v| v.to_str().and_then(|v| v.parse().ok()))
        .unwrap_or(default);
    let bin = var("BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_turnbench")));
    let dir = var("DIR").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target")
            .join(format!("{folder}-{n}"))
    });
    std::fs::create_dir_all(&dir).unwrap();
    (n, bin, dir)
}

/// The raw scan a report is measured against: every row of `turns`, its answer read, on a
/// fresh connection. Seconds.
pub fn scan(db: &Path) -> f64 {
    let t = Instant::now();
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let (chars, rows): (i64, i64) = conn
        .query_row("SELECT sum(length(answer)), count(*) FROM turns", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert!(chars > 0 && rows > 0);
    t.elapsed().as_secs_f64()
}

pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Checks the store at `db` with `bin`, two checks per scenario (a text one and a
/// structural `format` one that some answers fail, so that usable turns differ from
/// answered ones; written under `dir/checks`): its wall seconds and peak kB.
pub fn check(bin: &Path, db: &Path, dir: &Path) -> (f64, u64) {
    let checks = dir.join("checks");
    std::fs::create_dir_all(&checks).unwrap();
    for s in 0..SCENARIOS {
        std::fs::write(
            checks.join(format!("scenario-{s:02}.toml")),
            format!(
                "scenario = \"scenario-{s:02}\"\n\n\
                 [[check]]\nid = \"mentions-cache\"\nkind = \"contains\"\ntag = \"retained_constraint\"\ntext = \"cache\"\n\n\
                 [[check]]\nid = \"brief\"\nkind = \"max_words\"\ntag = \"format\"\nmax = 55\n"
            ),
        )
        .unwrap();
    }
    crate::memory::run_measured(
        std::process::Command::new(bin)
            .arg("--db")
            .arg(db)
            .args(["--quiet", "check", "--checks"])
            .arg(&checks)
            // Generated scenario ids: no scenario files to validate the checks against.
            .arg("--scenarios")
            .arg(dir.join("no-scenarios"))
            .stdout(std::process::Stdio::null()),
    )
}
