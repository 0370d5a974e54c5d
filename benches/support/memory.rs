//! Peak memory of the benchmark process (Linux): one copy for every benchmark.

/// Peak resident set size of this process (VmHWM), in kB; 0 where it cannot be read.
pub fn peak_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Resets the peak to the current resident size, so the next phase's peak is its own
/// ("5" to clear_refs, Linux ≥ 4.0); a no-op where it is not supported.
#[allow(dead_code)] // not every benchmark measures phases apart
pub fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}
