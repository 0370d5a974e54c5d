//! Tests that measure time, in a binary of their own: cargo runs test binaries one after
//! another, so nothing of the rest of the suite competes for the CPU while these read
//! planted token gaps back (a collector starved of CPU reads events late), and `serial`
//! runs them one at a time within this binary too.

mod common;

mod latency;

/// Held by every test here: one at a time.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A test that failed while holding it leaves it poisoned; the next still runs.
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
