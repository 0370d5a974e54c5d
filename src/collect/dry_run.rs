//! `collect --dry-run`: what a run would send, printed without sending anything or
//! touching the store — the request URL and body per target, and the size of the run.

use std::fmt::Write;

use crate::client::Endpoint;
use crate::config::{BenchConfig, Scenario};
use crate::store::records::Message;

/// Message text longer than this is shortened in the printed bodies.
const SHOWN_CHARS: usize = 100;

pub fn format_plan(cfg: &BenchConfig, scenarios: &[Scenario]) -> String {
    let turns: usize = scenarios.iter().map(|s| s.turns.len()).sum();
    let per_target = turns * cfg.repeats as usize;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "run {:?}: {} targets × {} scenarios × {} repeats = {} conversations, {} requests at most ({} per target)",
        cfg.name,
        cfg.targets.len(),
        scenarios.len(),
        cfg.repeats,
        cfg.targets.len() * scenarios.len() * cfg.repeats as usize,
        per_target * cfg.targets.len(),
        per_target,
    );
    let _ = writeln!(
        out,
        "seed {}, pauses × {}, turn timeout {} s, concurrency {} ({} per target), {} attempt(s) per turn",
        cfg.seed,
        cfg.pause_scale,
        cfg.turn_timeout_s,
        cfg.concurrency,
        cfg.per_target_concurrency,
        cfg.retry.attempts
    );
    let Some(first) = scenarios.first() else {
        return out;
    };
    let mut messages = Vec::new();
    if let Some(system) = &first.system {
        messages.push(Message::new("system", shorten(system)));
    }
    messages.push(Message::new("user", shorten(&first.turns[0].user)));
    for t in &cfg.targets {
        let endpoint = Endpoint::for_target(t);
        let key = match &t.api_key_env {
            Some(var) if std::env::var(var).is_ok_and(|v| !v.is_empty()) => format!("${var} (set)"),
            Some(var) => format!("${var} (NOT SET: collect will refuse to start)"),
            None => "none".to_string(),
        };
        let headers: Vec<&str> = t.headers.keys().map(String::as_str).collect();
        let body = serde_json::to_string_pretty(&endpoint.body(&messages)).expect("json");
        let _ = writeln!(
            out,
            "\ntarget {} / {} (model {})",
            t.provider, t.label, t.model
        );
        let _ = writeln!(out, "  POST {}", endpoint.url);
        let _ = writeln!(
            out,
            "  key {key}; extra headers: {}",
            if headers.is_empty() {
                "none".to_string()
            } else {
                headers.join(", ")
            }
        );
        let _ = writeln!(out, "  first request of {:?}:", first.id);
        for line in body.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    out
}

fn shorten(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}
