//! Transcripts of the shipped scenarios for claims between providers of one model label:
//! every answer is its turn's reference (so the shipped checks pass it), a provider's
//! latencies are its `speed` × a scenario's × a conversation's own noise (±10 %), and a
//! `stale` slot repeats the first answer at the second turn (a shipped check catches it).
//! The prompt grows by 1,000 tokens a turn; a provider's TTFT is 150 ms × its speed × the
//! scenario's × the conversation's noise, plus `ttft_per_1k` ms per 1,000 prompt tokens,
//! plus a turn's own jitter (−10 to +10 ms, fixed by its place, so that the slopes vary).
//! Seeded: the same providers and seed give the same lines.

use serde_json::json;
use turnbench::config::Scenario;

use super::synthetic::Rng;

/// One provider's conversations.
pub struct Provider<'a> {
    pub name: &'static str,
    pub speed: f64,
    /// Whether the conversation of (scenario index, repeat) answers its second turn stale.
    pub stale: &'a dyn Fn(usize, u32) -> bool,
    /// TTFT's growth with the prompt, ms per 1,000 prompt tokens.
    pub ttft_per_1k: f64,
}

/// One line per provider × scenario × repeat (from 1), in that order, model label
/// `glm-5.3-flash`.
pub fn lines(scenarios: &[Scenario], providers: &[Provider], repeats: u32, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::new();
    for p in providers {
        for (s, sc) in scenarios.iter().enumerate() {
            for repeat in 1..=repeats {
                let noise = (0.2 * (rng.unit() - 0.5)).exp();
                let scenario_speed = 1.0 + 0.2 * (s % 5) as f64;
                let mut messages = vec![json!({"role": "system", "content": sc.system})];
                for (t, turn) in sc.turns.iter().enumerate() {
                    messages.push(json!({"role": "user", "content": turn.user}));
                    let e2e =
                        ((600.0 + 150.0 * t as f64) * p.speed * scenario_speed * noise).round();
                    let answer = if t == 1 && (p.stale)(s, repeat) {
                        sc.turns[0].reference.clone().unwrap_or_default()
                    } else {
                        turn.reference.clone().unwrap_or_default()
                    };
                    let prompt = 1000 * (t as u64 + 1);
                    let jitter = ((s * 7 + repeat as usize * 3 + t * 5 + p.name.len()) % 11) as f64
                        * 2.0
                        - 10.0;
                    let ttft = (150.0 * p.speed * scenario_speed * noise
                        + p.ttft_per_1k * prompt as f64 / 1000.0
                        + jitter)
                        .round();
                    messages.push(json!({
                        "role": "assistant", "content": answer, "finish_reason": "stop",
                        "timing": {"ttft_ms": ttft, "ttfa_ms": ttft, "e2e_ms": e2e.max(ttft + 100.0)},
                        "usage": {"prompt_tokens": prompt, "completion_tokens": 80},
                    }));
                }
                let line = json!({
                    "id": format!("{}-{}-{repeat}", p.name, sc.id),
                    "provider": p.name, "model": "glm-5.3-flash", "scenario": sc.id,
                    "repeat": repeat, "messages": messages,
                });
                out.push_str(&line.to_string());
                out.push('\n');
            }
        }
    }
    out
}
