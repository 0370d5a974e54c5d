//! Progress bars for long work: drawn on stderr only when it is a terminal and not
//! `--quiet`, so piped and CI output stays clean.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` items named `unit`, e.g. `bar(90, !quiet, "conversations", None)`.
/// Under `turnbench run` each stage's bar starts with the stage's label (`[1/4 collect]`),
/// so the whole run reads as one display: stage, done/total, ETA, and the stage's message
/// (failures so far).
pub fn bar(len: u64, show: bool, unit: &str, stage: Option<&str>) -> ProgressBar {
    let label = stage.map(|s| format!("{s} ")).unwrap_or_default();
    styled(
        ProgressBar::new(len),
        show,
        &format!(
            "{{spinner}} {label}[{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {unit} · eta {{eta}}  {{msg}}"
        ),
    )
}

/// A bar with its own indicatif template (e.g. bytes of a file).
pub fn styled(bar: ProgressBar, show: bool, template: &str) -> ProgressBar {
    if !show || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    // Templates are this crate's constants; a bad one falls back to the default style
    // rather than stopping a run over its progress display.
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}
