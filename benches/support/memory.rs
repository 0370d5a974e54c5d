//! Peak memory of the benchmark process (Linux): one copy for every benchmark.

/// Peak resident set size of this process (VmHWM), in kB; 0 where it cannot be read.
#[allow(dead_code)] // a benchmark that runs commands measures theirs instead
pub fn peak_kb() -> u64 {
    hwm_kb("/proc/self/status").unwrap_or(0)
}

/// VmHWM in kB from a `/proc/<pid>/status` file.
fn hwm_kb(status_file: &str) -> Option<u64> {
    std::fs::read_to_string(status_file).ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
    })
}

/// Resets the peak to the current resident size, so the next phase's peak is its own
/// ("5" to clear_refs, Linux ≥ 4.0); a no-op where it is not supported.
#[allow(dead_code)] // not every benchmark measures phases apart
pub fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Runs `cmd` to its end; returns its wall time in seconds and its peak resident set size
/// (VmHWM) in kB, read from `/proc/<pid>/status` every 2 ms while it runs (0 where that
/// cannot be read). Panics when the command cannot start or fails.
#[allow(dead_code)] // not every benchmark runs commands
pub fn run_measured(cmd: &mut std::process::Command) -> (f64, u64) {
    let t = std::time::Instant::now();
    let mut child = cmd.spawn().expect("start the command");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let status = loop {
        if let Some(kb) = hwm_kb(&status_file) {
            peak = peak.max(kb);
        }
        match child.try_wait().expect("wait for the command") {
            Some(status) => break status,
            None => std::thread::sleep(std::time::Duration::from_millis(2)),
        }
    };
    let secs = t.elapsed().as_secs_f64();
    assert!(status.success(), "{cmd:?} failed: {status}");
    (secs, peak)
}
