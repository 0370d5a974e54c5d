//! Issue 38: up to what size one SQLite store serves. A year of hourly collection is ~18 M
//! turns per collector; this builds a store of 10 M turns the way a long-lived one grows (one
//! import run a day for 30 days, then checked), and measures, with the release binary:
//!
//! - the store's size on disk (bytes per turn), import and check throughput;
//! - `report --since 72h` (the last three daily runs, a tenth of the store) and a full
//!   `report`, each the median of 3 with its peak memory, beside a raw scan of `turns`;
//! - `merge` of the whole store into an empty one (turns/s, peak), and merging it again
//!   (everything already there).
//!
//! The transcripts are the report-scale bench's (4 providers, 15 scenarios, 4 turns a
//! conversation), generated once and split into one file per run; the store is built once
//! and kept (`target/store-sizing-N/`). Before each measurement the runs are re-dated one
//! day apart ending an hour ago (a bench-only UPDATE of `runs.started_at`), so the window
//! holds the same runs whenever it reruns. Run:
//!
//!     cargo bench --bench store_sizing                      # 2,500,000 conversations
//!     STORE_SIZING_CONVERSATIONS=25000 cargo bench --bench store_sizing   # a quick look
//!     STORE_SIZING_DIR=/big/disk cargo bench --bench store_sizing
//!
//! At the default size it needs ~25 GB of disk (transcripts, the store, the merged copy).
//! Prints figures; asserts nothing (these machines are shared and noisy).

#[path = "support/memory.rs"]
mod memory;
#[path = "support/scale.rs"]
mod scale;
#[path = "../tests/support/synthetic.rs"]
mod synthetic;

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use memory::run_measured;
use scale::{SCENARIOS, TARGETS, TURNS, median, scan};

/// One import run a day.
const RUNS: u64 = 30;
const ROUNDS: usize = 3;

fn main() {
    let (n, bin, dir) = scale::settings("STORE_SIZING", 2_500_000, "store-sizing");
    let db = dir.join("store.db");
    if !db.exists() {
        build_store(&bin, &dir, &db, n);
    }
    let turns = count(&db, "SELECT count(*) FROM turns");
    let bytes = std::fs::metadata(&db).map_or(0, |m| m.len());
    println!(
        "store {}: {turns} turns, {:.0} MB on disk, {:.0} bytes a turn",
        db.display(),
        bytes as f64 / 1e6,
        bytes as f64 / turns.max(1) as f64
    );
    date_runs(&db);

    let report = |args: &[&str]| {
        let mut cmd = Command::new(&bin);
        cmd.arg("--db")
            .arg(&db)
            .args(["report", "--quiet", "--format", "md", "--out"])
            .arg(dir.join("report.md"))
            .args(args)
            .stdout(Stdio::null());
        run_measured(&mut cmd)
    };
    let (first, _) = report(&[]);
    println!("first report, untimed (upgrades an older store): {first:.2} s");
    println!(
        "{:<22} {:>8} {:>10} {:>7} {:>9}   (median of {ROUNDS}; runs)",
        "what", "scan s", "report s", "ratio", "peak MB"
    );
    for (what, args) in [
        ("report --since 72h", &["--since", "72h"][..]),
        ("report (every run)", &[][..]),
    ] {
        let (mut scans, mut times, mut peak) = (Vec::new(), Vec::new(), 0);
        for _ in 0..ROUNDS {
            scans.push(scan(&db));
            let (secs, kb) = report(args);
            times.push(secs);
            peak = peak.max(kb);
        }
        let (s, r) = (median(&scans), median(&times));
        println!(
            "{what:<22} {s:>8.2} {r:>10.2} {:>6.1}× {:>9.1}   {}",
            r / s,
            peak as f64 / 1000.0,
            times
                .iter()
                .map(|x| format!("{x:.2}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }

    let merged = dir.join("merged.db");
    for stale in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{stale}", merged.display()));
    }
    for pass in ["merge into an empty store", "merge again (all present)"] {
        let (secs, peak) = run_measured(
            Command::new(&bin)
                .args(["--quiet", "merge"])
                .arg(&db)
                .arg("--into")
                .arg(&merged)
                .stdout(Stdio::null()),
        );
        println!(
            "{pass}: {secs:.1} s, {:.0} turns/s, peak {:.0} MB",
            turns as f64 / secs,
            peak as f64 / 1000.0
        );
    }
    let _ = std::fs::remove_file(&merged);
}

/// Transcripts split into one file a run, each imported as its own run, then all checked.
fn build_store(bin: &Path, dir: &Path, db: &Path, n: u64) {
    let parts: Vec<PathBuf> = (0..RUNS)
        .map(|i| dir.join(format!("day-{i:02}.jsonl")))
        .collect();
    if !parts.iter().all(|p| p.exists()) {
        let t = Instant::now();
        let mut out = Split::new(&parts, n.div_ceil(RUNS));
        let turns =
            synthetic::write_transcripts_of(&mut out, n, TURNS, &TARGETS, SCENARIOS).unwrap();
        out.flush().unwrap();
        println!(
            "generated {n} conversations / {turns} turns in {} files in {:.1} s",
            parts.len(),
            t.elapsed().as_secs_f64()
        );
    }
    let building = dir.join("building.db");
    for stale in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{stale}", building.display()));
    }
    let (mut secs, mut peak) = (0.0, 0);
    for part in &parts {
        let (s, kb) = run_measured(
            Command::new(bin)
                .arg("--db")
                .arg(&building)
                .args(["--quiet", "import"])
                .arg(part)
                .stdout(Stdio::null()),
        );
        secs += s;
        peak = peak.max(kb);
    }
    let turns = count(&building, "SELECT count(*) FROM turns");
    println!(
        "imported {turns} turns in {} runs in {secs:.1} s ({:.0} turns/s), peak {:.0} MB",
        parts.len(),
        turns as f64 / secs,
        peak as f64 / 1000.0
    );
    let (secs, peak) = scale::check(bin, &building, dir);
    println!(
        "checked in {secs:.1} s ({:.0} turns/s), peak {:.0} MB",
        turns as f64 / secs,
        peak as f64 / 1000.0
    );
    std::fs::rename(&building, db).unwrap();
}

/// Writes lines to one file after another, `per_file` lines each.
struct Split {
    files: Vec<BufWriter<std::fs::File>>,
    per_file: u64,
    lines: u64,
}

impl Split {
    fn new(paths: &[PathBuf], per_file: u64) -> Split {
        let files = paths
            .iter()
            .map(|p| BufWriter::with_capacity(1 << 20, std::fs::File::create(p).unwrap()))
            .collect();
        Split {
            files,
            per_file: per_file.max(1),
            lines: 0,
        }
    }
}

impl Write for Split {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // A line goes whole to the file its first byte went to: split after each newline.
        let mut done = 0;
        for piece in buf.split_inclusive(|&b| b == b'\n') {
            let at = usize::try_from(self.lines / self.per_file)
                .unwrap_or(usize::MAX)
                .min(self.files.len() - 1);
            self.files[at].write_all(piece)?;
            if piece.ends_with(b"\n") {
                self.lines += 1;
            }
            done += piece.len();
        }
        Ok(done)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.files.iter_mut().try_for_each(|f| f.flush())
    }
}

/// The import runs, oldest first, re-dated one day apart, the newest an hour ago, under one
/// name (`--since` pools the runs of the newest run's name).
fn date_runs(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let changed = conn
        .execute(
            "UPDATE runs SET name = 'daily',
                 started_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-1 hour',
                     printf('-%d days', (SELECT count(*) FROM runs r WHERE r.id > runs.id))),
                 ended_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-30 minutes',
                     printf('-%d days', (SELECT count(*) FROM runs r WHERE r.id > runs.id)))
             WHERE source = 'import'",
            [],
        )
        .unwrap();
    println!("{changed} runs dated a day apart, the newest an hour ago");
}

fn count(db: &Path, sql: &str) -> u64 {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.query_row(sql, [], |r| r.get::<_, i64>(0))
        .map_or(0, |v| v as u64)
}
