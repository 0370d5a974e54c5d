//! `collect --dry-run`: what a run would send, printed without sending anything or
//! touching the store — the request URL and the exact first body per target (header
//! names only, never a value or a key), and the size of the run.

use std::fmt::Write;

use crate::chat::Message;
use crate::client::Endpoint;
use crate::config::{BenchConfig, Scenario};

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
        messages.push(Message::new("system", system.clone()));
    }
    if let Some(turn) = first.turns.first() {
        messages.push(Message::new("user", turn.user.clone()));
    }
    for t in &cfg.targets {
        let endpoint = Endpoint::for_target(t);
        crate::launcher::describe_target(
            &mut out,
            t,
            &endpoint,
            "collect",
            &format!("first request of {:?}", first.id),
            &endpoint.body(&messages),
        );
    }
    out
}
