//! A store at the width users have (issue 25): 10 providers × 3 model labels over the 15
//! shipped scenarios × 2 repeats, as one transcript file for `turnbench import`. Seeded and
//! deterministic: providers differ in speed by about 9 % steps, labels and scenarios scale
//! the time, each conversation has its own noise, and a few conversations per provider are
//! rate limited or answer a turn with a stale value the checks catch.
#![allow(dead_code)] // each includer uses its own subset

use serde_json::{Value, json};
use turnbench::config::Scenario;

use super::synthetic::Rng;

pub const PROVIDERS: [&str; 10] = [
    "baseten",
    "together",
    "fireworks",
    "groq",
    "deepinfra",
    "novita",
    "nebius",
    "hyperbolic",
    "lambda",
    "parasail",
];
pub const LABELS: [&str; 3] = ["deepseek-v3.1", "llama-4-maverick", "qwen3-235b-a22b"];
pub const REPEATS: u32 = 2;

/// The transcript lines (JSON Lines) of every provider × label × scenario × repeat.
pub fn lines(scenarios: &[Scenario], seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::new();
    for (l, label) in LABELS.iter().enumerate() {
        let label_speed = [1.0, 1.6, 0.6][l % 3];
        for (p, provider) in PROVIDERS.iter().enumerate() {
            // Rotate the order per label, so the fastest provider differs by label.
            let rank = (p + 3 * l) % PROVIDERS.len();
            let speed = label_speed * (0.7 + 0.09 * rank as f64);
            for (s, sc) in scenarios.iter().enumerate() {
                for repeat in 1..=REPEATS {
                    let scenario_speed = 1.0 + 0.15 * (s % 5) as f64;
                    let line = conversation(
                        &mut rng,
                        provider,
                        label,
                        sc,
                        repeat,
                        speed * scenario_speed,
                        p,
                    );
                    out.push_str(&line.to_string());
                    out.push('\n');
                }
            }
        }
    }
    out
}

fn conversation(
    rng: &mut Rng,
    provider: &str,
    label: &str,
    sc: &Scenario,
    repeat: u32,
    speed: f64,
    p: usize,
) -> Value {
    let rate_limited = rng.unit() < 0.015 + 0.01 * (p % 4) as f64;
    let stale = rng.unit() < 0.04 + 0.04 * (p % 3) as f64;
    let noise = (0.5 * (rng.unit() - 0.5)).exp();
    let mut messages = vec![json!({"role": "system", "content": sc.system})];
    let mut prompt_tokens = 60;
    for (t, turn) in sc.turns.iter().enumerate() {
        messages.push(json!({"role": "user", "content": turn.user}));
        let jitter = (0.2 * (rng.unit() - 0.5)).exp();
        let e2e = ((500.0 + 140.0 * t as f64) * speed * noise * jitter * 100.0).round() / 100.0;
        let ttft = (e2e * 0.2 * 100.0).round() / 100.0;
        prompt_tokens += 180;
        let usage = json!({"prompt_tokens": prompt_tokens, "completion_tokens": 90});
        let timing = json!({"ttft_ms": ttft, "ttfa_ms": ttft + 10.0, "e2e_ms": e2e});
        if rate_limited && t == 0 {
            messages.push(
                json!({"role": "assistant", "content": null, "outcome": "rate_limited",
                "http_status": 429, "error": "HTTP 429: slow down"}),
            );
            break;
        }
        let answer = if stale && t == 1 {
            sc.turns[0].reference.clone().unwrap_or_default()
        } else {
            turn.reference.clone().unwrap_or_default()
        };
        messages.push(
            json!({"role": "assistant", "content": answer, "finish_reason": "stop",
            "timing": timing, "usage": usage}),
        );
    }
    json!({
        "id": format!("{provider}-{label}-{}-{repeat}", sc.id),
        "provider": provider, "model": label, "scenario": sc.id, "repeat": repeat,
        "messages": messages,
    })
}
