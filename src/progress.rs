//! Progress bars for long work: drawn on stderr only when it is a terminal and not
//! `--quiet`, so piped and CI output stays clean.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` items named `unit`, e.g. `bar(90, !quiet, "conversations")`.
pub fn bar(len: u64, show: bool, unit: &str) -> ProgressBar {
    styled(
        ProgressBar::new(len),
        show,
        &format!(
            "{{spinner}} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {unit}  {{per_sec}}  {{msg}}"
        ),
    )
}

/// A bar with its own indicatif template (e.g. bytes of a file).
pub fn styled(bar: ProgressBar, show: bool, template: &str) -> ProgressBar {
    if !show || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    bar.set_style(ProgressStyle::with_template(template).expect("valid template"));
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}
