//! Import throughput and memory: generates a transcript file (default 250,000
//! conversations × 4 turns = 1,000,000 turns), imports it into a fresh store in this
//! process, and prints seconds, turns per second and peak RSS (VmHWM).
//!
//! Run: `cargo bench --bench import` (release build). Smaller or larger:
//! `TURNBENCH_BENCH_CONVERSATIONS=50000 cargo bench --bench import`; keep the generated
//! file with `TURNBENCH_BENCH_FILE=/tmp/synthetic.jsonl`.
//! Goal (issue 3): ≥ 150,000 turns/s and peak memory < 200 MB.

#[path = "support/memory.rs"]
mod memory;
#[path = "../tests/support/synthetic.rs"]
mod synthetic;

use std::io::{BufWriter, Write};
use std::time::Instant;

use turnbench::import::{ImportOptions, import_file};

const TURNS: u32 = 4;

fn main() {
    let conversations: u64 = std::env::var("TURNBENCH_BENCH_CONVERSATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(250_000);
    let dir = tempfile::tempdir().expect("temp dir");
    // TURNBENCH_BENCH_FILE keeps the generated file there (to time the CLI on it too).
    let file = std::env::var_os("TURNBENCH_BENCH_FILE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| dir.path().join("synthetic.jsonl"));
    let t = Instant::now();
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(&file).unwrap());
    let turns = synthetic::write_transcripts(&mut out, conversations, TURNS).unwrap();
    out.flush().unwrap();
    drop(out);
    let bytes = std::fs::metadata(&file).unwrap().len();
    println!(
        "generated {conversations} conversations, {turns} turns, {:.0} MB in {:.1} s",
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let rss_before = memory::peak_kb();

    let db = dir.path().join("bench.db");
    let mut conn = turnbench::store::open(&db).unwrap();
    let t = Instant::now();
    let cpu = cpu_seconds();
    let summary = import_file(&mut conn, &file, &ImportOptions::default(), &mut |r| {
        panic!("{r}")
    })
    .unwrap();
    assert_eq!(summary.imported, conversations);
    assert_eq!(summary.turns, turns);
    // Closing checkpoints what is left in the WAL: part of the import's cost.
    drop(conn);
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    let db_bytes = std::fs::metadata(&db).unwrap().len();
    report(secs, cpu, turns, bytes, db_bytes, rss_before);

    // Idempotent re-import of the same file: everything already present.
    let mut conn = turnbench::store::open(&db).unwrap();
    let t = Instant::now();
    let again = import_file(&mut conn, &file, &ImportOptions::default(), &mut |r| {
        panic!("{r}")
    })
    .unwrap();
    assert_eq!(again.already_present, conversations);
    println!(
        "re-import (all already present): {:.2} s, {:.0} conversations/s",
        t.elapsed().as_secs_f64(),
        conversations as f64 / t.elapsed().as_secs_f64()
    );
    println!(
        "peak RSS after both: {:.1} MB",
        memory::peak_kb() as f64 / 1024.0
    );
}

fn report(secs: f64, cpu: f64, turns: u64, bytes: u64, db_bytes: u64, rss_before: u64) {
    println!(
        "import: {secs:.2} s, {:.0} turns/s, {:.0} MB/s of JSON, store {:.0} MB",
        turns as f64 / secs,
        bytes as f64 / 1e6 / secs,
        db_bytes as f64 / 1e6
    );
    println!("CPU time (both threads): {cpu:.2} s (a busy machine slows the wall clock, not this)");
    println!(
        "peak RSS (VmHWM): {:.1} MB (before import: {:.1} MB)",
        memory::peak_kb() as f64 / 1024.0,
        rss_before as f64 / 1024.0
    );
}

/// User + system CPU seconds of this process so far (Linux, 100 ticks per second).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    (ticks(11) + ticks(12)) / 100.0
}
