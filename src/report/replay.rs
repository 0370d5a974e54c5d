//! The replay section: per provider × model label, what replayed agent sessions measured —
//! prompt cache (hit rate, cold turns, what survives a break by its length), uncached
//! prompt tokens and cost, decode speed, first-token time, reasoning tokens, tool calls
//! (valid, agreeing with the recording), provider switches behind a gateway, and
//! reliability. Every figure carries its n; definitions in `docs/metrics.md` ("Replay").
//!
//! Computed from `replay_turn_facts` (`store::replay::replay_turn_facts`); statistics from
//! `crate::stats`.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::config::Prices;
use crate::stats::{self, Interval};
use crate::store::replay::ReplayTurnFact;

/// Share of the prompt below which a turn is cold (docs/metrics.md, "Replay").
const COLD_SHARE: f64 = 0.10;

/// Break-length buckets (upper bounds in minutes, exclusive), after "no break".
pub const BREAK_BUCKETS: [(&str, f64); 5] = [
    ("< 1 min", 1.0),
    ("1–5 min", 5.0),
    ("5–15 min", 15.0),
    ("15–20 min", 20.0),
    ("≥ 20 min", f64::INFINITY),
];

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReplaySection {
    pub cells: Vec<ReplayCell>,
}

/// A share with its count: `value` = `part` ÷ `n`, `None` when `n` is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Share {
    pub value: Option<f64>,
    pub part: u64,
    pub n: u64,
    /// 95 % Wilson interval; the JSON writes it `[lo, hi]`, as it always has here.
    #[serde(serialize_with = "lo_hi_pair")]
    pub interval: Option<Interval>,
}

impl Share {
    fn of(part: u64, n: u64) -> Share {
        Share {
            value: (n > 0).then(|| part as f64 / n as f64),
            part,
            n,
            interval: stats::wilson(part, n),
        }
    }
}

/// An interval as `[lo, hi]` (the replay section's shape; the other sections write
/// `{"lo", "hi"}`).
fn lo_hi_pair<S: serde::Serializer>(i: &Option<Interval>, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&i.map(|i| [i.lo, i.hi]), s)
}

/// Cached share of the prompt over some turns: Σ cached ÷ Σ prompt.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CacheShare {
    pub bucket: String,
    /// Turns in the bucket that reported cached tokens.
    pub n: u64,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub share: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReplayCache {
    /// Answered turns after a pass's first that reported cached tokens; 0: not reported.
    pub turns_reported: u64,
    pub hit_rate: Option<f64>,
    /// Of those, turns with less than 10 % of the prompt cached.
    pub cold_turns: u64,
    /// The cached share after no break, then per break length.
    pub after_break: Vec<CacheShare>,
    /// Σ (prompt − cached) over answered turns reporting both; `None`: not reported.
    pub uncached_prompt_tokens: Option<u64>,
    pub uncached_turns: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReplayCost {
    pub priced: bool,
    /// Answered turns whose usage priced them.
    pub turns_priced: u64,
    pub total_usd: Option<f64>,
    pub per_1000_turns_usd: Option<f64>,
    /// Mean over completed passes of the pass's cost; n = completed passes priced whole.
    pub per_session_usd: Option<f64>,
    pub sessions_priced: u64,
}

/// A distribution's percentiles with their n.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Spread {
    pub n: u64,
    /// (q, value) for each reported percentile.
    pub percentiles: Vec<(f64, f64)>,
}

impl Spread {
    fn of(values: &[f64], qs: &[f64]) -> Spread {
        Spread {
            n: values.len() as u64,
            percentiles: stats::percentiles(values, qs)
                .map(|v| qs.iter().copied().zip(v).collect())
                .unwrap_or_default(),
        }
    }

    pub fn at(&self, q: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|(p, _)| *p == q)
            .map(|(_, v)| *v)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReplayTools {
    /// Answered turns with at least one tool call.
    pub turns_with_calls: u64,
    /// Of those: every call's arguments parse and its name was offered.
    pub valid: Share,
    /// Turns whose recorded answer called a tool and whose answer called one: the first
    /// call's name is the recorded first call's.
    pub agreement: Share,
    /// Of answered turns whose recorded answer called a tool: the answer called one too.
    pub called_when_recorded: Share,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReplaySwitches {
    /// Turns after a pass's first whose provider and previous provider were both named.
    pub turns: u64,
    pub switches: u64,
    /// Passes with at least one switch, of passes with a named provider.
    pub passes_with_switch: u64,
    pub passes: u64,
    pub providers: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReplayReliability {
    pub turns_sent: u64,
    /// Turns by outcome class.
    pub turns_by_outcome: BTreeMap<String, u64>,
    pub passes: u64,
    pub passes_completed: u64,
    /// Passes by outcome (`completed`, or the class of the turn that ended it).
    pub passes_by_outcome: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReplayCell {
    pub provider: String,
    pub model: String,
    pub simulated: bool,
    pub sessions: u64,
    pub reliability: ReplayReliability,
    pub cache: ReplayCache,
    pub cost: ReplayCost,
    /// Output tokens ÷ (E2E − TTFT), tokens/s, ok turns: p10 and p50.
    pub decode_tokens_per_s: Spread,
    /// ms, ok streamed turns: p50 and p95.
    pub ttft_ms: Spread,
    /// Mean reasoning tokens per answered turn that reported them; `None`: not reported.
    pub reasoning_tokens_per_turn: Option<f64>,
    pub reasoning_turns: u64,
    pub tools: ReplayTools,
    /// `None` when no turn named its serving provider.
    pub switches: Option<ReplaySwitches>,
}

fn answered(outcome: &str) -> bool {
    matches!(outcome, "ok" | "truncated")
}

/// The section, one cell per (model label, provider) in that order; `None` without any
/// replayed turn.
pub fn section(facts: &[ReplayTurnFact]) -> Option<ReplaySection> {
    if facts.is_empty() {
        return None;
    }
    let mut cells: BTreeMap<(&str, &str), Vec<&ReplayTurnFact>> = BTreeMap::new();
    for f in facts {
        cells
            .entry((f.label.as_str(), f.provider.as_str()))
            .or_default()
            .push(f);
    }
    Some(ReplaySection {
        cells: cells
            .into_iter()
            .map(|((label, provider), turns)| cell(provider, label, &turns))
            .collect(),
    })
}

fn cell(provider: &str, label: &str, turns: &[&ReplayTurnFact]) -> ReplayCell {
    let mut c = ReplayCell {
        provider: provider.to_string(),
        model: label.to_string(),
        simulated: turns.iter().any(|t| t.simulated),
        ..ReplayCell::default()
    };
    let passes = reliability(&mut c, turns);
    cache(&mut c, turns);
    cost(&mut c, turns, &passes);
    speed(&mut c, turns);
    tools(&mut c, turns);
    c.switches = switches(turns);
    c
}

/// Reliability: turns and passes by outcome; returns each pass's outcome by conversation.
fn reliability<'t>(c: &mut ReplayCell, turns: &[&'t ReplayTurnFact]) -> BTreeMap<i64, &'t str> {
    let mut passes: BTreeMap<i64, &str> = BTreeMap::new();
    let mut sessions = BTreeSet::new();
    for t in turns {
        c.reliability.turns_sent += 1;
        *c.reliability
            .turns_by_outcome
            .entry(t.outcome.clone())
            .or_default() += 1;
        passes.insert(t.conversation_id, t.conversation_outcome.as_str());
        sessions.insert(t.session_id.as_str());
    }
    c.sessions = sessions.len() as u64;
    c.reliability.passes = passes.len() as u64;
    for outcome in passes.values() {
        *c.reliability
            .passes_by_outcome
            .entry(outcome.to_string())
            .or_default() += 1;
    }
    c.reliability.passes_completed = passes.values().filter(|o| **o == "completed").count() as u64;
    passes
}

/// The cache: hit rate, cold turns, uncached prompt tokens, and the share by break length.
fn cache(c: &mut ReplayCell, turns: &[&ReplayTurnFact]) {
    let mut buckets: Vec<CacheShare> = std::iter::once("no break")
        .chain(BREAK_BUCKETS.iter().map(|(name, _)| *name))
        .map(|b| CacheShare {
            bucket: b.to_string(),
            ..CacheShare::default()
        })
        .collect();
    let (mut prompt, mut cached) = (0u64, 0u64);
    let mut uncached = 0u64;
    for t in turns.iter().filter(|t| answered(&t.outcome)) {
        let (Some(p), Some(k)) = (t.prompt_tokens, t.cached_tokens) else {
            continue;
        };
        let (p, k) = (p.max(0) as u64, k.max(0) as u64);
        let k = k.min(p);
        c.cache.uncached_turns += 1;
        uncached += p - k;
        if t.idx == 0 || p == 0 {
            continue;
        }
        c.cache.turns_reported += 1;
        prompt += p;
        cached += k;
        if (k as f64) < COLD_SHARE * p as f64 {
            c.cache.cold_turns += 1;
        }
        let minutes = t.break_ms / 60_000.0;
        let b = if t.break_ms <= 0.0 {
            0
        } else {
            1 + BREAK_BUCKETS
                .iter()
                .position(|(_, upper)| minutes < *upper)
                .unwrap_or(BREAK_BUCKETS.len() - 1)
        };
        let bucket = &mut buckets[b];
        bucket.n += 1;
        bucket.prompt_tokens += p;
        bucket.cached_tokens += k;
    }
    for b in &mut buckets {
        b.share = (b.prompt_tokens > 0).then(|| b.cached_tokens as f64 / b.prompt_tokens as f64);
    }
    c.cache.after_break = buckets;
    c.cache.hit_rate = (prompt > 0).then(|| cached as f64 / prompt as f64);
    c.cache.uncached_prompt_tokens = (c.cache.uncached_turns > 0).then_some(uncached);
}

/// Cost of answered turns, and of completed passes (`passes`: each pass's outcome).
fn cost(c: &mut ReplayCell, turns: &[&ReplayTurnFact], passes: &BTreeMap<i64, &str>) {
    let prices: Option<Prices> = turns
        .iter()
        .find_map(|t| t.prices.as_deref())
        .and_then(|p| serde_json::from_str(p).ok());
    if let Some(price) = prices {
        c.cost.priced = true;
        let mut total = 0.0;
        let mut per_pass: BTreeMap<i64, (f64, bool)> = BTreeMap::new();
        for t in turns {
            let cost = match (answered(&t.outcome), t.prompt_tokens, t.completion_tokens) {
                (true, Some(p), Some(out)) => {
                    let k = t.cached_tokens.unwrap_or(0).clamp(0, p.max(0)) as f64;
                    let p = p.max(0) as f64;
                    let cached_price = price.cached.unwrap_or(price.input);
                    Some(
                        ((p - k) * price.input
                            + k * cached_price
                            + out.max(0) as f64 * price.output)
                            / 1e6,
                    )
                }
                _ => None,
            };
            let entry = per_pass.entry(t.conversation_id).or_insert((0.0, true));
            match cost {
                Some(usd) => {
                    c.cost.turns_priced += 1;
                    total += usd;
                    entry.0 += usd;
                }
                None => entry.1 = false,
            }
        }
        if c.cost.turns_priced > 0 {
            c.cost.total_usd = Some(total);
            c.cost.per_1000_turns_usd = Some(total / c.cost.turns_priced as f64 * 1000.0);
        }
        let whole: Vec<f64> = per_pass
            .iter()
            .filter(|(id, (_, all))| *all && passes.get(id) == Some(&"completed"))
            .map(|(_, (usd, _))| *usd)
            .collect();
        c.cost.sessions_priced = whole.len() as u64;
        c.cost.per_session_usd = stats::mean(&whole);
    }
}

/// Speed: decode rate and TTFT of ok turns, reasoning tokens of answered ones.
fn speed(c: &mut ReplayCell, turns: &[&ReplayTurnFact]) {
    let ok: Vec<&&ReplayTurnFact> = turns.iter().filter(|t| t.outcome == "ok").collect();
    let decode: Vec<f64> = ok
        .iter()
        .filter_map(|t| {
            let (ttft, e2e, out) = (t.ttft_ms?, t.e2e_ms?, t.completion_tokens?);
            (e2e > ttft && out > 0).then(|| out as f64 / ((e2e - ttft) / 1000.0))
        })
        .collect();
    c.decode_tokens_per_s = Spread::of(&decode, &[10.0, 50.0]);
    let ttft: Vec<f64> = ok.iter().filter_map(|t| t.ttft_ms).collect();
    c.ttft_ms = Spread::of(&ttft, &[50.0, 95.0]);
    let reasoning: Vec<f64> = turns
        .iter()
        .filter(|t| answered(&t.outcome))
        .filter_map(|t| t.reasoning_tokens.map(|r| r as f64))
        .collect();
    c.reasoning_turns = reasoning.len() as u64;
    c.reasoning_tokens_per_turn = stats::mean(&reasoning);
}

/// Tool calls: valid, agreeing with the recorded session's first tool, called when recorded.
fn tools(c: &mut ReplayCell, turns: &[&ReplayTurnFact]) {
    let (mut valid, mut agree, mut agree_n, mut called, mut recorded_n) = (0, 0, 0, 0, 0);
    for t in turns.iter().filter(|t| answered(&t.outcome)) {
        if t.tool_calls > 0 {
            c.tools.turns_with_calls += 1;
            valid += u64::from(t.tool_calls_valid == Some(true));
        }
        let recorded_first = t
            .recorded_tools
            .as_deref()
            .and_then(|j| serde_json::from_str::<Vec<String>>(j).ok())
            .and_then(|names| names.into_iter().next());
        if let Some(expected) = recorded_first {
            recorded_n += 1;
            if let Some(first) = &t.first_tool {
                called += 1;
                agree_n += 1;
                agree += u64::from(*first == expected);
            }
        }
    }
    c.tools.valid = Share::of(valid, c.tools.turns_with_calls);
    c.tools.agreement = Share::of(agree, agree_n);
    c.tools.called_when_recorded = Share::of(called, recorded_n);
}

/// Provider switches behind a gateway; `None` when no turn says who served it.
fn switches(turns: &[&ReplayTurnFact]) -> Option<ReplaySwitches> {
    if !turns.iter().any(|t| t.served_by.is_some()) {
        return None;
    }
    let mut s = ReplaySwitches::default();
    let mut switched: BTreeMap<i64, bool> = BTreeMap::new();
    let mut names = BTreeSet::new();
    for t in turns {
        if let Some(now) = &t.served_by {
            names.insert(now.clone());
            let entry = switched.entry(t.conversation_id).or_insert(false);
            if let Some(before) = &t.previous_served_by {
                s.turns += 1;
                if before != now {
                    s.switches += 1;
                    *entry = true;
                }
            }
        }
    }
    s.passes = switched.len() as u64;
    s.passes_with_switch = switched.values().filter(|v| **v).count() as u64;
    s.providers = names.into_iter().collect();
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(conv: i64, idx: i64) -> ReplayTurnFact {
        ReplayTurnFact {
            provider: "p".into(),
            label: "m".into(),
            simulated: false,
            prices: Some(r#"{"input":1.0,"cached":0.5,"output":4.0}"#.into()),
            conversation_id: conv,
            idx,
            session_id: format!("s{conv}"),
            outcome: "ok".into(),
            conversation_outcome: "completed".into(),
            ttft_ms: Some(100.0),
            e2e_ms: Some(1100.0),
            prompt_tokens: Some(1000),
            completion_tokens: Some(50),
            reasoning_tokens: None,
            cached_tokens: Some(0),
            break_ms: 0.0,
            served_by: None,
            previous_served_by: None,
            recorded_tools: None,
            tool_calls: 0,
            tool_calls_valid: None,
            first_tool: None,
        }
    }

    #[test]
    fn cache_cold_turns_and_break_buckets_count_by_hand() {
        let mut turns = vec![fact(1, 0)];
        // Turn 1: 900 of 1000 cached, no break. Turn 2: after a 7-minute break, 50 cached
        // (cold). Turn 3: after 30 s, 800 cached. Turn 4 failed: in no cache figure.
        let mut t = fact(1, 1);
        t.cached_tokens = Some(900);
        turns.push(t);
        let mut t = fact(1, 2);
        t.cached_tokens = Some(50);
        t.break_ms = 7.0 * 60_000.0;
        turns.push(t);
        let mut t = fact(1, 3);
        t.cached_tokens = Some(800);
        t.break_ms = 30_000.0;
        turns.push(t);
        let mut t = fact(1, 4);
        t.outcome = "http_5xx".into();
        t.cached_tokens = None;
        t.prompt_tokens = None;
        turns.push(t);
        for t in &mut turns {
            t.conversation_outcome = "http_5xx".into();
        }
        let s = section(&turns).unwrap();
        let c = &s.cells[0];
        assert_eq!(c.cache.turns_reported, 3);
        assert_eq!(c.cache.hit_rate, Some(1750.0 / 3000.0));
        assert_eq!(c.cache.cold_turns, 1);
        let by: BTreeMap<&str, (u64, Option<f64>)> = c
            .cache
            .after_break
            .iter()
            .map(|b| (b.bucket.as_str(), (b.n, b.share)))
            .collect();
        assert_eq!(by["no break"], (1, Some(0.9)));
        assert_eq!(by["< 1 min"], (1, Some(0.8)));
        assert_eq!(by["5–15 min"], (1, Some(0.05)));
        assert_eq!(by["15–20 min"], (0, None));
        // Uncached: the first turn's 1000, then 100, 950, 200.
        assert_eq!(c.cache.uncached_prompt_tokens, Some(2250));
        assert_eq!(c.reliability.turns_by_outcome["http_5xx"], 1);
        assert_eq!(c.reliability.passes_by_outcome["http_5xx"], 1);
        assert_eq!(c.reliability.passes_completed, 0);
        // Cost: answered turns only; a failed pass has no per-session cost.
        assert_eq!(c.cost.turns_priced, 4);
        let expected = (1000.0 * 1.0
            + 50.0 * 4.0
            + (100.0 * 1.0 + 900.0 * 0.5 + 200.0)
            + (950.0 + 50.0 * 0.5 + 200.0)
            + (200.0 + 800.0 * 0.5 + 200.0))
            / 1e6;
        assert!((c.cost.total_usd.unwrap() - expected).abs() < 1e-12);
        assert!((c.cost.per_1000_turns_usd.unwrap() - expected / 4.0 * 1000.0).abs() < 1e-12);
        assert_eq!((c.cost.per_session_usd, c.cost.sessions_priced), (None, 0));
    }

    #[test]
    fn speed_tools_switches_and_not_reported() {
        let mut turns = Vec::new();
        for i in 0..5 {
            let mut t = fact(2, i);
            t.ttft_ms = Some(100.0 * (i + 1) as f64);
            t.e2e_ms = Some(100.0 * (i + 1) as f64 + 500.0);
            t.completion_tokens = Some(10 * (i + 1));
            t.cached_tokens = None;
            t.served_by = Some(if i < 3 { "a" } else { "b" }.into());
            t.previous_served_by = (i > 0).then(|| if i < 4 { "a" } else { "b" }.into());
            t.recorded_tools = Some(r#"["read_file"]"#.into());
            if i % 2 == 0 {
                t.tool_calls = 1;
                t.tool_calls_valid = Some(i != 4);
                t.first_tool = Some(if i == 0 { "search" } else { "read_file" }.into());
            }
            turns.push(t);
        }
        let c = &section(&turns).unwrap().cells[0];
        // Decode: 10k tokens over 0.5 s = 20, 40, 60, 80, 100 tokens/s.
        assert_eq!(c.decode_tokens_per_s.n, 5);
        let near = |x: Option<f64>, y: f64| x.is_some_and(|x| (x - y).abs() < 1e-9);
        assert!(near(c.decode_tokens_per_s.at(50.0), 60.0));
        // numpy.percentile([20,40,60,80,100], 10) = 28.0
        assert!(near(c.decode_tokens_per_s.at(10.0), 28.0));
        // numpy.percentile([100,200,300,400,500], 95) = 480.0
        assert!(near(c.ttft_ms.at(95.0), 480.0));
        assert_eq!(c.cache.hit_rate, None, "not reported");
        assert_eq!(c.cache.uncached_prompt_tokens, None);
        assert_eq!(c.reasoning_tokens_per_turn, None);
        assert_eq!((c.tools.turns_with_calls, c.tools.valid.part), (3, 2));
        assert_eq!((c.tools.agreement.part, c.tools.agreement.n), (2, 3));
        assert_eq!(
            (
                c.tools.called_when_recorded.part,
                c.tools.called_when_recorded.n
            ),
            (3, 5)
        );
        let s = c.switches.as_ref().unwrap();
        assert_eq!(
            (s.turns, s.switches, s.passes_with_switch, s.passes),
            (4, 1, 1, 1)
        );
        assert_eq!(s.providers, ["a", "b"]);
    }
}
