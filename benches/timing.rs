//! Timing fidelity of `collect`: the mock injects known delays, the collector measures
//! them, and this prints p50/p99 of |measured − injected| for TTFT and E2E at 1, 64 and 512
//! concurrent streams, and the collector's CPU time per turn.
//!
//! "Injected" is the moment the mock handed the first text chunk (TTFT) or `[DONE]` (E2E)
//! to its connection, measured from when it received the request; the nominal delays of
//! the profile are shown too (they add the timer's own slack). Run:
//!
//!     cargo bench --bench timing
//!
//! "span" is (E2E − TTFT) measured against the mock's (E2E − TTFT): a request that waited
//! in the mock's intake queue shifts both ends alike, which that difference cancels.
//!
//! Prints figures; asserts nothing (these machines are shared and noisy).

use std::collections::HashMap;
use std::time::Instant;

use turnbench::collect::{CollectOptions, collect};
use turnbench::config::{BenchConfig, Scenario, SourceText};
use turnbench::mock::profile::Delay;
use turnbench::mock::{MockConfig, MockServer, Profile};

fn main() {
    let levels: Vec<(usize, u32)> = match std::env::var("TIMING_LEVELS") {
        Ok(v) => v
            .split(',')
            .map(|p| {
                let (n, r) = p.split_once('x').expect("LEVELS like 1x50,64x4");
                (n.parse().unwrap(), r.parse().unwrap())
            })
            .collect(),
        Err(_) => vec![(1, 60), (64, 4), (512, 2)],
    };
    let (gap_min, gap_max) = gap_range();
    println!(
        "timing fidelity: |collector − mock| in ms; TTFT 20–60 ms, chunk gaps {gap_min}–{gap_max} ms, 2 turns per conversation"
    );
    println!(
        "{:>8} {:>5} {:>6} | {:>9} {:>9} | {:>9} {:>9} | {:>9} | {:>12} {:>12} | {:>9}",
        "streams",
        "turns",
        "n",
        "TTFT p50",
        "TTFT p99",
        "E2E p50",
        "E2E p99",
        "span p99",
        "TTFT−nom p99",
        "E2E−nom p99",
        "CPU/turn"
    );
    for (streams, rounds) in levels {
        run_level(streams, rounds);
    }
}

fn run_level(streams: usize, rounds: u32) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("scenarios")).unwrap();
    std::fs::write(
        dir.path().join("scenarios/fidelity.toml"),
        "id = \"fidelity\"\ncategory = \"bench\"\n[[turn]]\nuser = \"Say something.\"\n[[turn]]\nuser = \"Say more.\"\n",
    )
    .unwrap();

    // The mock gets its own runtime and threads, as a remote server would.
    let mock_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("tb-mock")
        .enable_all()
        .build()
        .unwrap();
    let mut profile = Profile::quick("fidelity", 0.0, 0.0);
    profile.ttft_ms = Delay::Uniform {
        min: 20.0,
        max: 60.0,
    };
    let (gap_min, gap_max) = gap_range();
    profile.gap_ms = Delay::Uniform {
        min: gap_min,
        max: gap_max,
    };
    let mock = mock_rt
        .block_on(MockServer::start(
            MockConfig {
                seed: 1,
                profiles: vec![profile],
                time_scale: 1.0,
            },
            &[],
            "127.0.0.1:0".parse().unwrap(),
            None,
        ))
        .unwrap();

    let bench_text = format!(
        "name = \"fidelity\"\nrepeats = {}\nconcurrency = {streams}\nper_target_concurrency = {streams}\nturn_timeout_s = 60\n[[target]]\nprovider = \"mock\"\nmodel = \"fidelity\"\nbase_url = \"{}\"\n",
        streams as u32 * rounds,
        mock.base_url()
    );
    let cfg = BenchConfig::from_source(&SourceText {
        path: dir.path().join("bench.toml"),
        text: bench_text,
    })
    .unwrap();
    let scenarios = Scenario::load_dir(&dir.path().join("scenarios")).unwrap();
    let opts = CollectOptions {
        db: dir.path().join("t.db"),
        resume: turnbench::collect::Resume::No,
        quiet: true,
        stage: None,
    };

    // Two workers, as the binary has on this machine (TIMING_CLIENT_THREADS to vary).
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(client_threads())
        .thread_name("tb-collect")
        .enable_all()
        .build()
        .unwrap();
    let (_tx, rx) = tokio::sync::mpsc::channel(1);
    turnbench::tokens::warm_up(); // its one-off load is not per-turn work
    let cpu_before = collector_cpu_seconds();
    let wall = Instant::now();
    rt.block_on(collect(&cfg, scenarios, &opts, rx)).unwrap();
    let wall = wall.elapsed().as_secs_f64();
    let cpu = collector_cpu_seconds() - cpu_before;

    let served: HashMap<String, _> = mock
        .served()
        .into_iter()
        .map(|s| (s.id.clone(), s))
        .collect();
    let conn = turnbench::store::open(&opts.db).unwrap();
    let mut stmt = conn
        .prepare("SELECT request_id, ttft_ms, e2e_ms, idx FROM turns WHERE outcome = 'ok'")
        .unwrap();
    let rows: Vec<(String, f64, f64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let cpu_per_turn = cpu / rows.len().max(1) as f64 * 1e6;
    // First turns open their connection: TCP connect and the mock's accept queue are in the
    // client's TTFT (as they are against a real provider) but not in the mock's reference.
    // Later turns reuse a pooled connection and show the measurement error alone.
    for (which, min_idx) in [("all", 0), ("warm", 1)] {
        let (mut ttft, mut e2e, mut ttft_nom, mut e2e_nom) = (vec![], vec![], vec![], vec![]);
        let mut span = vec![];
        for (id, t, e, _) in rows.iter().filter(|r| r.3 >= min_idx) {
            let s = &served[id];
            ttft.push((t - s.sent_ttft_ms.unwrap()).abs());
            e2e.push((e - s.sent_e2e_ms.unwrap()).abs());
            ttft_nom.push((t - s.nominal_ttft_ms.unwrap()).abs());
            e2e_nom.push((e - s.nominal_e2e_ms).abs());
            // E2E − TTFT on both sides: a late start at the mock (its request intake queue)
            // cancels out, leaving the error of timing the stream itself.
            span.push(((e - t) - (s.sent_e2e_ms.unwrap() - s.sent_ttft_ms.unwrap())).abs());
        }
        println!(
            "{:>8} {:>5} {:>6} | {:>9.3} {:>9.3} | {:>9.3} {:>9.3} | {:>9.3} | {:>12.3} {:>12.3} | {:>7.0}µs   ({:.1} s wall)",
            streams,
            which,
            ttft.len(),
            pct(&mut ttft, 50.0),
            pct(&mut ttft, 99.0),
            pct(&mut e2e, 50.0),
            pct(&mut e2e, 99.0),
            pct(&mut span, 99.0),
            pct(&mut ttft_nom, 99.0),
            pct(&mut e2e_nom, 99.0),
            cpu_per_turn,
            wall
        );
    }
    drop(rt);
    mock.stop();
}

fn client_threads() -> usize {
    std::env::var("TIMING_CLIENT_THREADS").map_or(2, |v| v.parse().expect("a number"))
}

/// Inter-chunk gap range in ms (`TIMING_GAP=min,max`); default 2–6 ms, ~250 chunks/s
/// per stream, faster than most providers decode.
fn gap_range() -> (f64, f64) {
    std::env::var("TIMING_GAP")
        .ok()
        .and_then(|v| {
            let (a, b) = v.split_once(',')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .unwrap_or((2.0, 6.0))
}

/// Linear interpolation between closest ranks (NumPy's default).
fn pct(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = p / 100.0 * (v.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (rank - lo as f64)
}

/// CPU seconds (user + system) of the collector: the whole process (exited threads such as
/// the store writer included) less the mock's threads.
fn collector_cpu_seconds() -> f64 {
    let mut ticks =
        stat_ticks(&std::fs::read_to_string("/proc/self/stat").unwrap_or_default()) as i64;
    for task in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.starts_with("tb-mock") {
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            ticks -= stat_ticks(&stat) as i64;
        }
    }
    ticks as f64 / 100.0 // USER_HZ is 100 on Linux
}

/// utime + stime from a /proc stat line (fields 14 and 15, after the command name).
fn stat_ticks(stat: &str) -> u64 {
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    [11, 12]
        .iter()
        .filter_map(|&i| f.get(i)?.parse::<u64>().ok())
        .sum()
}
