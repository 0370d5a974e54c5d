//! Generated transcript files for the crash test and the import benchmark: deterministic,
//! varied text, a mix of lines with and without `id`, and some failed last turns.
#![allow(dead_code)] // each includer (tests, benches) uses its own subset

use std::io::{self, Write};

const WORDS: &[&str] = &[
    "cursor",
    "page",
    "order",
    "index",
    "latency",
    "token",
    "stream",
    "retry",
    "cache",
    "schema",
    "query",
    "budget",
    "invoice",
    "refund",
    "client",
    "deadline",
    "format",
    "constraint",
    "summary",
    "table",
    "review",
    "release",
    "the",
    "a",
    "with",
    "and",
    "for",
    "when",
    "because",
    "should",
    "returns",
    "keeps",
    "every",
    "without",
];
const PROVIDERS: &[(&str, &str)] = &[
    ("acme", "glm-5.3-flash"),
    ("acme", "glm-5.3"),
    ("nimbus", "llama-4-scout"),
    ("nimbus", "llama-4-maverick"),
    ("orbit", "qwen3-32b"),
    ("orbit", "qwen3-235b"),
];
const SCENARIOS: u64 = 12;

/// Small, fast, deterministic generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn text(&mut self, out: &mut String, chars: usize) {
        out.clear();
        while out.len() < chars {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(WORDS[(self.next() % WORDS.len() as u64) as usize]);
        }
        out.push('.');
    }
}

/// Writes `conversations` lines of `turns` turns each; returns the number of turns.
/// Every 4th line has no `id` (identity by content hash); every 50th ends with a failed
/// turn. (target, scenario, repeat) is unique per line, as in a real benchmark export.
pub fn write_transcripts(out: &mut impl Write, conversations: u64, turns: u32) -> io::Result<u64> {
    write_transcripts_of(out, conversations, turns, PROVIDERS, SCENARIOS)
}

/// [`write_transcripts`] over the given (provider, model) targets and `scenarios` scenarios
/// (`scenario-00`, `scenario-01`, …), cycled in that order.
pub fn write_transcripts_of(
    out: &mut impl Write,
    conversations: u64,
    turns: u32,
    targets: &[(&str, &str)],
    scenarios: u64,
) -> io::Result<u64> {
    let mut rng = Rng(42);
    let (mut user, mut answer, mut reasoning) = (String::new(), String::new(), String::new());
    let mut total_turns = 0;
    for i in 0..conversations {
        let (provider, model) = targets[(i % targets.len() as u64) as usize];
        let scenario = (i / targets.len() as u64) % scenarios;
        let repeat = i / (targets.len() as u64 * scenarios) + 1;
        let failed = i % 50 == 49;
        out.write_all(b"{")?;
        if i % 4 != 3 {
            write!(out, "\"id\":\"synthetic-{i}\",")?;
        }
        write!(
            out,
            "\"provider\":\"{provider}\",\"model\":\"{model}\",\"scenario\":\"scenario-{scenario:02}\",\"repeat\":{repeat},\"messages\":["
        )?;
        out.write_all(b"{\"role\":\"system\",\"content\":\"You are a careful senior engineer; answer precisely and briefly.\"}")?;
        for t in 0..turns {
            let len = 90 + (rng.next() % 40) as usize;
            rng.text(&mut user, len);
            write!(
                out,
                ",{{\"role\":\"user\",\"content\":\"Turn {t}: {user}\"}}"
            )?;
            let ttft = 150.0 + (rng.next() % 600) as f64 / 2.0;
            if failed && t + 1 == turns {
                write!(
                    out,
                    ",{{\"role\":\"assistant\",\"content\":null,\"outcome\":\"timeout\",\"error\":\"no complete answer within 30 s\",\"timing\":{{\"ttft_ms\":{ttft}}}}}"
                )?;
            } else {
                let len = 220 + (rng.next() % 160) as usize;
                rng.text(&mut answer, len);
                rng.text(&mut reasoning, 40);
                let e2e = ttft + 400.0 + (rng.next() % 3000) as f64 / 4.0;
                let prompt = 120 + 90 * t as u64;
                write!(
                    out,
                    ",{{\"role\":\"assistant\",\"content\":\"{answer}\",\"reasoning\":\"{reasoning}\",\"finish_reason\":\"stop\",\"timing\":{{\"ttft_ms\":{ttft},\"ttfa_ms\":{ttft},\"e2e_ms\":{e2e}}},\"usage\":{{\"prompt_tokens\":{prompt},\"completion_tokens\":{},\"cached_tokens\":{}}}}}",
                    answer.len() / 4,
                    prompt / 2
                )?;
            }
            total_turns += 1;
        }
        if failed {
            out.write_all(b"],\"outcome\":\"timeout\"}\n")?;
        } else {
            out.write_all(b"]}\n")?;
        }
    }
    Ok(total_turns)
}
