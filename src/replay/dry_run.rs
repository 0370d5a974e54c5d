//! `replay --dry-run`: what a replay would send, printed without sending anything or
//! touching the store — the size of the run, and per target the URL, the key variable's
//! state, header names (never a value or a key), the cache hint and where the serving
//! provider is read, and the exact first request of the first session (the salt, drawn per
//! run and round, shown as `SALT`).

use std::fmt::Write;

use super::pass::{pass_endpoint, salted};
use super::session::SessionIndex;
use crate::client::Endpoint;
use crate::config::BenchConfig;

pub fn format_plan(cfg: &BenchConfig, sessions: &SessionIndex) -> Result<String, String> {
    let r = &cfg.replay;
    let turns: usize = sessions.entries.iter().map(|e| e.turns).sum();
    let per_target = turns * r.rounds as usize;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "replay {:?}: {} targets × {} sessions ({turns} turns) × {} rounds = {} requests at most ({per_target} per target)",
        cfg.name,
        cfg.targets.len(),
        sessions.entries.len(),
        r.rounds,
        per_target * cfg.targets.len(),
    );
    let _ = writeln!(
        out,
        "seed {}, recorded pauses capped at {} s, breaks {}, pauses × {}, turn timeout {} s, concurrency {} ({} sessions per target), {} attempt(s) per turn",
        cfg.seed,
        r.pause_cap_s,
        r.breaks,
        r.pause_scale,
        cfg.turn_timeout_s,
        cfg.concurrency,
        r.sessions_in_flight,
        cfg.retry.attempts
    );
    let session = sessions.load(0)?;
    let (messages, offset) = salted(&session, "SALT");
    let first = session.turn_indices().next().unwrap_or(0);
    let pass_id = format!("{}#1-SALT", session.id);
    for t in &cfg.targets {
        let endpoint = pass_endpoint(
            &Endpoint::for_target(t),
            &t.replay.cache_hint,
            session.tools.as_ref(),
            &pass_id,
        );
        let served = match (&t.replay.served_by_header, &t.replay.served_by_field) {
            (Some(h), _) => format!("response header {h}"),
            (None, Some(f)) => format!("response field {f}"),
            (None, None) => "not read".into(),
        };
        let body = endpoint.body(&messages[..first + offset]);
        crate::launcher::describe_target(
            &mut out,
            t,
            &endpoint,
            "replay",
            &format!(
                "cache hint {}; serving provider: {served}; first request of session {:?}",
                String::from(t.replay.cache_hint.clone()),
                session.id
            ),
            &body,
        );
    }
    Ok(out)
}
