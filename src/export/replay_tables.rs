//! The replay section's tables (terminal, Markdown and HTML share them through
//! [`super::sections::tables`]): cache, cache after a break, speed, cost, tool calls and
//! reliability of replayed agent sessions. Formatting only; the figures are
//! `crate::report::replay`'s.

use super::text_table::{Align, Table, thousands};
use crate::figure::{Figure, Unit, percent, usd};
use crate::report::keys::{RowKey, TableKey};
use crate::report::model::Report;
use crate::report::replay::{BREAK_BUCKETS, ReplayCell, Share};
use crate::report::simulated::Marks;

use Align::{Left as L, Right as R};

/// A replay table: simulated in its title when every replayed cell is.
fn table(
    key: TableKey,
    title: &str,
    detail: &str,
    m: Marks,
    columns: &[(&str, Align)],
    footnote: &str,
) -> Table {
    let mut t = Table::new(key, title, Some(detail.to_string()), columns).simulated(m.all);
    t.footnotes.push(footnote.to_string());
    t
}

/// A replayed cell's name, marked when real and simulated cells mix.
fn name(m: Marks, c: &ReplayCell) -> String {
    format!("{} / {}{}", c.provider, c.model, m.row(c.simulated))
}

fn share(s: &Share) -> String {
    match s.value {
        Some(v) => format!("{} ({}/{})", percent(v), s.part, s.n),
        None => "-".into(),
    }
}

/// A rate or duration per turn: `81 t/s`, `812 ms`.
fn per_turn(v: f64, unit: Unit) -> String {
    Figure::new(v, unit).to_string()
}

/// The replay tables, none without replayed turns.
pub fn tables(r: &Report) -> Vec<Table> {
    let Some(s) = &r.replay else {
        return Vec::new();
    };
    let m = Marks::all_of(s.cells.iter().map(|c| c.simulated));
    let [mut cache, mut after, mut speed, mut cost, mut tools] = empty_tables(m);
    for c in &s.cells {
        let name = name(m, c);
        let key = || RowKey::Cell(c.key());
        cache.push(key(), c.simulated, cache_row(c, name.clone()));
        if c.cache.hit_rate.is_some() {
            after.push(key(), c.simulated, after_row(c, name.clone()));
        }
        speed.push(key(), c.simulated, speed_row(c, name.clone()));
        cost.push(key(), c.simulated, cost_row(c, name.clone()));
        tools.push(key(), c.simulated, tools_row(c, name));
    }
    vec![cache, after, speed, cost, tools]
}

/// The five tables' titles, columns and footnotes: cache, cache after a break, speed,
/// cost, tool calls and reliability.
fn empty_tables(m: Marks) -> [Table; 5] {
    let cache = table(
        TableKey::ReplayCache,
        "REPLAY CACHE",
        "cached ÷ prompt tokens, answered turns after a pass's first",
        m,
        &[
            ("cell", L),
            ("hit rate (n)", R),
            ("cold turns", R),
            ("uncached prompt tokens (n)", R),
        ],
        "cold: < 10 % of the prompt cached. not reported: the provider sent no cached-token count (not 0 %).",
    );
    let after = table(
        TableKey::ReplayCacheAfterBreak,
        "REPLAY CACHE AFTER A BREAK",
        "cached share of the prompt by idle break before the turn (n turns)",
        m,
        &[
            ("cell", L),
            ("no break", R),
            ("< 1 min", R),
            ("1–5 min", R),
            ("5–15 min", R),
            ("15–20 min", R),
            ("≥ 20 min", R),
        ],
        "Breaks are seeded, the same before the same turn for every target; a break's length is what the provider's clock saw (slept, i.e. after --pause-scale; the built-in mock's own simulated time).",
    );
    let speed = table(
        TableKey::ReplaySpeed,
        "REPLAY SPEED",
        "ok turns",
        m,
        &[
            ("cell", L),
            ("decode p50 (n)", R),
            ("decode p10", R),
            ("TTFT p50 (n)", R),
            ("TTFT p95", R),
            ("reasoning tok/turn", R),
        ],
        "decode: output tokens ÷ (E2E − TTFT), tokens/s; TTFT counts the first reasoning, text or tool-call delta.",
    );
    let cost = table(
        TableKey::ReplayCost,
        "REPLAY COST",
        "USD from the run's prices",
        m,
        &[
            ("cell", L),
            ("turns priced", R),
            ("per 1k turns", R),
            ("per session (n)", R),
        ],
        "Answered turns only (ok or truncated); per session: mean cost of completed passes priced whole.",
    );
    let tools = table(
        TableKey::ReplayToolsAndReliability,
        "REPLAY TOOL CALLS AND RELIABILITY",
        "answered turns; passes by outcome",
        m,
        &[
            ("cell", L),
            ("calls valid", R),
            ("same tool as recorded", R),
            ("switches (turns)", R),
            ("passes ok", R),
            ("failed by class", R),
        ],
        "valid: every call's arguments parse as a JSON object and its name was offered. switches: the serving provider changed from the previous turn (a gateway's header).",
    );
    [cache, after, speed, cost, tools]
}

fn cache_row(c: &ReplayCell, name: String) -> Vec<String> {
    let (hit, cold) = match c.cache.hit_rate {
        Some(h) => (
            format!("{} ({})", percent(h), c.cache.turns_reported),
            c.cache.cold_turns.to_string(),
        ),
        None => ("not reported".into(), "-".into()),
    };
    let uncached = match c.cache.uncached_prompt_tokens {
        Some(u) => format!("{} ({})", thousands(u), c.cache.uncached_turns),
        None => "not reported".into(),
    };
    vec![name, hit, cold, uncached]
}

/// The cached share by break length, with each bucket's n.
fn after_row(c: &ReplayCell, name: String) -> Vec<String> {
    let mut row = vec![name];
    row.extend(c.cache.after_break.iter().map(|b| match b.share {
        Some(v) => format!("{} ({})", percent(v), b.n),
        None => "-".into(),
    }));
    row
}

fn speed_row(c: &ReplayCell, name: String) -> Vec<String> {
    let d = &c.decode_tokens_per_s;
    let t = &c.ttft_ms;
    vec![
        name,
        d.at(50.0).map_or("-".into(), |v| {
            format!("{} ({})", per_turn(v, Unit::TokensPerSecond), d.n)
        }),
        d.at(10.0)
            .map_or("-".into(), |v| per_turn(v, Unit::TokensPerSecond)),
        t.at(50.0).map_or("-".into(), |v| {
            format!("{} ({})", per_turn(v, Unit::Millis), t.n)
        }),
        t.at(95.0).map_or("-".into(), |v| per_turn(v, Unit::Millis)),
        c.reasoning_tokens_per_turn
            .map_or("not reported".into(), |v| {
                format!("{v:.0} ({})", c.reasoning_turns)
            }),
    ]
}

fn cost_row(c: &ReplayCell, name: String) -> Vec<String> {
    if !c.cost.priced {
        return vec![name, "no price".into(), "-".into(), "-".into()];
    }
    vec![
        name,
        format!("{}/{}", c.cost.turns_priced, c.reliability.turns_sent),
        usd(c.cost.per_1000_turns_usd),
        match c.cost.per_session_usd {
            Some(v) => format!("{} ({})", usd(Some(v)), c.cost.sessions_priced),
            None => "-".into(),
        },
    ]
}

fn tools_row(c: &ReplayCell, name: String) -> Vec<String> {
    let failed: Vec<String> = c
        .reliability
        .passes_by_outcome
        .iter()
        .filter(|(o, _)| o.as_str() != "completed")
        .map(|(o, n)| format!("{o} {n}"))
        .collect();
    vec![
        name,
        share(&c.tools.valid),
        share(&c.tools.agreement),
        c.switches.as_ref().map_or("not reported".into(), |s| {
            format!("{} ({})", s.switches, s.turns)
        }),
        format!(
            "{}/{}",
            c.reliability.passes_completed, c.reliability.passes
        ),
        if failed.is_empty() {
            "-".into()
        } else {
            failed.join(", ")
        },
    ]
}

/// The CSV columns of the replay section, appended after the others (docs/report.md).
pub fn csv_header() -> Vec<String> {
    let mut h: Vec<String> = REPLAY_LEAD.iter().map(|n| n.to_string()).collect();
    for b in bucket_names() {
        h.push(format!("replay_cache_{b}_n"));
        h.push(format!("replay_cache_{b}_share"));
    }
    h.extend(REPLAY_REST.iter().map(|n| n.to_string()));
    h
}

/// REPLAY's columns before the break buckets'.
#[rustfmt::skip]
const REPLAY_LEAD: &[&str] = &[
    "replay_turns", "replay_passes", "replay_passes_completed", "replay_cache_turns_reported",
    "replay_cache_hit_rate", "replay_cache_cold_turns",
];

/// REPLAY's columns after the break buckets': cost, decode, TTFT, reasoning, tools, switches.
#[rustfmt::skip]
const REPLAY_REST: &[&str] = &[
    "replay_uncached_prompt_tokens", "replay_cost_turns_priced", "replay_cost_per_1000_turns_usd",
    "replay_cost_per_session_usd", "replay_cost_sessions_priced", "replay_decode_tps_n",
    "replay_decode_tps_p50", "replay_decode_tps_p10", "replay_ttft_n", "replay_ttft_p50_ms",
    "replay_ttft_p95_ms", "replay_reasoning_turns", "replay_reasoning_tokens_per_turn",
    "replay_tool_turns", "replay_tool_valid", "replay_tool_agreement_n", "replay_tool_agreement",
    "replay_switch_turns", "replay_switches",
];

/// Column-name forms of the break buckets: none, lt_1m, 1_5m, 5_15m, 15_20m, ge_20m.
fn bucket_names() -> Vec<&'static str> {
    debug_assert_eq!(BREAK_BUCKETS.len(), 5);
    vec!["none", "lt_1m", "1_5m", "5_15m", "15_20m", "ge_20m"]
}

/// The replay columns of the cell (provider, model label); empty without replayed turns.
pub fn csv_row(r: &Report, provider: &str, model: &str) -> Vec<String> {
    let width = csv_header().len();
    let Some(c) = r.replay.as_ref().and_then(|s| {
        s.cells
            .iter()
            .find(|c| c.provider == provider && c.model == model)
    }) else {
        return vec![String::new(); width];
    };
    let num = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    let mut row = vec![
        c.reliability.turns_sent.to_string(),
        c.reliability.passes.to_string(),
        c.reliability.passes_completed.to_string(),
        c.cache.turns_reported.to_string(),
        num(c.cache.hit_rate),
        c.cache.cold_turns.to_string(),
    ];
    for b in &c.cache.after_break {
        row.push(b.n.to_string());
        row.push(num(b.share));
    }
    row.extend([
        c.cache
            .uncached_prompt_tokens
            .map_or(String::new(), |u| u.to_string()),
        c.cost.turns_priced.to_string(),
        num(c.cost.per_1000_turns_usd),
        num(c.cost.per_session_usd),
        c.cost.sessions_priced.to_string(),
        c.decode_tokens_per_s.n.to_string(),
        num(c.decode_tokens_per_s.at(50.0)),
        num(c.decode_tokens_per_s.at(10.0)),
        c.ttft_ms.n.to_string(),
        num(c.ttft_ms.at(50.0)),
        num(c.ttft_ms.at(95.0)),
        c.reasoning_turns.to_string(),
        num(c.reasoning_tokens_per_turn),
        c.tools.turns_with_calls.to_string(),
        num(c.tools.valid.value),
        c.tools.agreement.n.to_string(),
        num(c.tools.agreement.value),
        c.switches
            .as_ref()
            .map_or(String::new(), |s| s.turns.to_string()),
        c.switches
            .as_ref()
            .map_or(String::new(), |s| s.switches.to_string()),
    ]);
    debug_assert_eq!(row.len(), width);
    row
}
