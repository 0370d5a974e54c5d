//! Mock provider settings: per-model timing distributions, reasoning, cache reporting,
//! fault rates and answer defects. Read from TOML (`turnbench mock --profiles FILE`) or
//! built in ([`MockConfig::builtin`]).
//!
//! ```toml
//! seed = 7
//! time_scale = 1.0                        # multiplies every delay the mock sleeps (default 1)
//! [[profile]]
//! model = "mock-fast"                     # the model id requested; "*" matches any
//! ttft_ms = { dist = "lognormal", median = 180, sigma = 0.3 }
//! gap_ms = { dist = "uniform", min = 4, max = 12 }
//! slowdown = { dist = "lognormal", median = 1, sigma = 0.9 }   # per-request gap factor
//! reasoning_words = 0                      # reasoning chunks before the answer
//! reasoning_style = "reasoning_content"    # or "reasoning", "think"
//! cache = "openai"                         # or "deepseek", "none"
//! faults = { rate_limited = 0.02, http_500 = 0.01, stream_cut = 0.01, reasoning_budget = 0.02 }
//! defects = { stale = 0.1, missing_field = 0.1, prose = 0.05, fence = 0.05 }
//! forgetting = { per_turn = 0.08, persist = 0.8 }   # slips back to its first answer (mock::forget)
//! burst = { every = 10, stall_ms = 200 }  # tokens in bursts: a stall after every tenth
//! prefill_ms_per_1k_tokens = 200          # first token later by this per 1,000 prompt tokens not cached
//! ```
//!
//! `time_scale` multiplies every delay a response is planned with (first token, gaps, the
//! stall) and nothing else: 0.1 runs a realistic profile ten times faster with the same
//! shape, the same faults and the same answers. Answer defects apply to the scenario's
//! reference answers; each is drawn per answer from the request's key, so the same seed
//! gives the same defects on the same requests. `forgetting` is the one defect that depends
//! on the turn and on the answers before it (see [`super::forget`]).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::forget::Forgetting;
use crate::config::keys::FileKind;
use crate::config::{ConfigError, SourceText};

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MockConfig {
    #[serde(default)]
    pub seed: u64,
    #[serde(rename = "profile")]
    pub profiles: Vec<Profile>,
    /// Multiplies every delay the mock sleeps (first token, gaps, stall); 1 = as profiled.
    #[serde(default = "unit_scale")]
    pub time_scale: f64,
}

fn unit_scale() -> f64 {
    1.0
}

/// A delay distribution in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum Delay {
    Fixed {
        ms: f64,
    },
    Uniform {
        min: f64,
        max: f64,
    },
    /// Median and log-space sigma: the long right tail real TTFTs have.
    Lognormal {
        median: f64,
        sigma: f64,
    },
}

impl Delay {
    /// A draw from two uniforms in [0, 1).
    pub fn sample(&self, u1: f64, u2: f64) -> f64 {
        match *self {
            Delay::Fixed { ms } => ms,
            Delay::Uniform { min, max } => min + (max - min) * u1,
            Delay::Lognormal { median, sigma } => {
                // Box–Muller; 1 - u1 keeps the log argument above zero.
                let z = (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                median * (sigma * z).exp()
            }
        }
    }

    /// The same distribution with every value multiplied by `factor` (≥ 0).
    pub fn scaled(&self, factor: f64) -> Delay {
        match *self {
            Delay::Fixed { ms } => Delay::Fixed { ms: ms * factor },
            Delay::Uniform { min, max } => Delay::Uniform {
                min: min * factor,
                max: max * factor,
            },
            Delay::Lognormal { median, sigma } => Delay::Lognormal {
                median: median * factor,
                sigma,
            },
        }
    }

    fn check(&self) -> Result<(), String> {
        let ok = match *self {
            Delay::Fixed { ms } => ms >= 0.0,
            Delay::Uniform { min, max } => min >= 0.0 && min <= max,
            Delay::Lognormal { median, sigma } => median > 0.0 && sigma >= 0.0,
        };
        if ok {
            Ok(())
        } else {
            Err(format!("invalid delay {self:?}"))
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningStyle {
    ReasoningContent,
    Reasoning,
    Think,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheReport {
    Openai,
    Deepseek,
    None,
}

/// Probability per request of each fault; at most one fault per request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FaultRates {
    pub rate_limited: f64,
    pub http_500: f64,
    pub http_503: f64,
    /// Stops sending after the first chunk, past any client timeout.
    pub stall: f64,
    pub stream_cut: f64,
    pub malformed: f64,
    pub error_after_200: f64,
    pub empty: f64,
    pub length: f64,
    /// Reasoning that eats the token budget: the stream carries reasoning only and ends
    /// with `finish_reason: "length"`, with no answer text.
    pub reasoning_budget: f64,
}

impl FaultRates {
    pub fn total(&self) -> f64 {
        self.rate_limited
            + self.http_500
            + self.http_503
            + self.stall
            + self.stream_cut
            + self.malformed
            + self.error_after_200
            + self.empty
            + self.length
            + self.reasoning_budget
    }
}

/// Probability per answer of each defect applied to a reference answer. Each is drawn on
/// its own, in this order: `stale` picks the answer, `missing_field` and `fence` change a
/// JSON answer, `prose` wraps whatever came out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DefectRates {
    /// Answer with the previous turn's reference, as if the latest message were ignored.
    pub stale: f64,
    /// Drop one top-level key (chosen from the seed) of an answer that is a JSON object;
    /// other answers are left as they are.
    pub missing_field: f64,
    /// Wrap an answer that is JSON in a ```json fence; other answers are left as they are.
    pub fence: f64,
    /// Wrap the answer in a sentence before and after ("Sure — here is …", "Let me know …").
    pub prose: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub model: String,
    pub ttft_ms: Delay,
    pub gap_ms: Delay,
    /// Per request, a factor every gap of that response is multiplied by (dimensionless):
    /// a congested replica decodes a whole answer slowly, which gives conversation
    /// latency the long tail per-chunk jitter alone averages away. None: 1.
    #[serde(default)]
    pub slowdown: Option<Delay>,
    #[serde(default)]
    pub reasoning_words: u32,
    #[serde(default = "default_style")]
    pub reasoning_style: ReasoningStyle,
    #[serde(default = "default_cache")]
    pub cache: CacheReport,
    #[serde(default)]
    pub faults: FaultRates,
    #[serde(default)]
    pub defects: DefectRates,
    /// Slipping back to the first turn's answer, more often at later turns and, once
    /// slipped, again (see `mock::forget`). Default: never.
    #[serde(default)]
    pub forgetting: Forgetting,
    /// Words per content chunk.
    #[serde(default = "one")]
    pub words_per_chunk: u32,
    /// Prepended to every answer, e.g. "As Acme's GLM model, " (for blinding tests).
    #[serde(default)]
    pub identity: Option<String>,
    /// How long a stalled stream waits before giving up, ms.
    #[serde(default = "default_stall")]
    pub stall_ms: f64,
    /// Answer judge prompts with rubric-shaped JSON, with these defect rates
    /// (see `mock::judge`; models named `mock-judge…` do so without the table).
    #[serde(default)]
    pub judge: Option<JudgeFaultRates>,
    /// How long an unused prompt prefix stays cached, in seconds (scaled by `time_scale`
    /// like every delay). Unset: every message before the newest counts as cached,
    /// whatever the time between requests (see `mock::cache`).
    #[serde(default)]
    pub cache_retention_s: Option<f64>,
    /// How requests that offer tools are answered (see `mock::tools`).
    #[serde(default)]
    pub tools: ToolBehaviour,
    /// Play a gateway in front of several providers (see `mock::cache`).
    #[serde(default)]
    pub gateway: Option<super::cache::Gateway>,
    /// Tokens that arrive in bursts: after every `every`-th text chunk the stream stalls
    /// `stall_ms` more (scaled by `time_scale`). None: every gap drawn alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<Burst>,
    /// Prefill time: the first token comes this many ms later per 1,000 prompt tokens the
    /// prefix cache did not hold (scaled by `time_scale`). 0: TTFT does not depend on the
    /// prompt.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub prefill_ms_per_1k_tokens: f64,
}

/// A stall after every `every`-th text chunk.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Burst {
    pub every: u32,
    pub stall_ms: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

fn default_style() -> ReasoningStyle {
    ReasoningStyle::ReasoningContent
}
fn default_cache() -> CacheReport {
    CacheReport::Openai
}
fn one() -> u32 {
    1
}
fn default_stall() -> f64 {
    600_000.0
}

impl Profile {
    pub fn quick(model: &str, ttft_ms: f64, gap_ms: f64) -> Profile {
        Profile {
            model: model.to_string(),
            ttft_ms: Delay::Fixed { ms: ttft_ms },
            gap_ms: Delay::Fixed { ms: gap_ms },
            slowdown: None,
            reasoning_words: 0,
            reasoning_style: default_style(),
            cache: default_cache(),
            faults: FaultRates::default(),
            defects: DefectRates::default(),
            forgetting: Forgetting::default(),
            words_per_chunk: 1,
            identity: None,
            stall_ms: default_stall(),
            judge: None,
            cache_retention_s: None,
            tools: ToolBehaviour::default(),
            gateway: None,
            burst: None,
            prefill_ms_per_1k_tokens: 0.0,
        }
    }

    /// This profile with every delay it sleeps multiplied by `factor`: first token, gaps
    /// and stall. The per-request `slowdown` is a ratio and stays as it is.
    pub fn scaled(&self, factor: f64) -> Profile {
        Profile {
            ttft_ms: self.ttft_ms.scaled(factor),
            gap_ms: self.gap_ms.scaled(factor),
            stall_ms: self.stall_ms * factor,
            cache_retention_s: self.cache_retention_s.map(|s| s * factor),
            burst: self.burst.map(|b| Burst {
                stall_ms: b.stall_ms * factor,
                ..b
            }),
            prefill_ms_per_1k_tokens: self.prefill_ms_per_1k_tokens * factor,
            ..self.clone()
        }
    }
}

impl MockConfig {
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let src = SourceText::read(path)?;
        let cfg: MockConfig = src.parse(FileKind::Mock)?;
        for p in &cfg.profiles {
            let line = src
                .text
                .find(&format!("\"{}\"", p.model))
                .map_or(1, |o| src.line_of(o));
            let bad = |msg: String| {
                ConfigError::invalid(
                    path,
                    line,
                    format!("profile {}: {msg}", p.model),
                    "use non-negative delays and probabilities that sum to at most 1",
                )
            };
            p.ttft_ms.check().map_err(&bad)?;
            p.gap_ms.check().map_err(&bad)?;
            if p.cache_retention_s
                .is_some_and(|s| !(s.is_finite() && s >= 0.0))
            {
                return Err(bad(
                    "cache_retention_s must be a number of seconds ≥ 0".into()
                ));
            }
            p.tools.check().map_err(&bad)?;
            p.forgetting.check().map_err(&bad)?;
            if let Some(g) = &p.gateway {
                g.check().map_err(&bad)?;
            }
            if let Some(s) = &p.slowdown {
                s.check().map_err(&bad)?;
            }
            if p.burst
                .is_some_and(|b| b.every == 0 || !(b.stall_ms.is_finite() && b.stall_ms >= 0.0))
            {
                return Err(bad("burst needs every ≥ 1 (chunks) and stall_ms ≥ 0".into()));
            }
            if !(p.prefill_ms_per_1k_tokens.is_finite() && p.prefill_ms_per_1k_tokens >= 0.0) {
                return Err(bad("prefill_ms_per_1k_tokens must be ≥ 0".into()));
            }
            let total = p.faults.total();
            if !(0.0..=1.0).contains(&total) {
                return Err(bad(format!("fault rates sum to {total}")));
            }
            let d = p.defects;
            for (name, rate) in [
                ("stale", d.stale),
                ("missing_field", d.missing_field),
                ("fence", d.fence),
                ("prose", d.prose),
            ] {
                if !(0.0..=1.0).contains(&rate) {
                    return Err(bad(format!("defect rate {name} = {rate}")));
                }
            }
        }
        if !(cfg.time_scale.is_finite() && cfg.time_scale >= 0.0) {
            let line = src.text.find("time_scale").map_or(1, |o| src.line_of(o));
            return Err(ConfigError::invalid(
                path,
                line,
                format!("time_scale = {} is not a factor", cfg.time_scale),
                "use a finite number ≥ 0 (1 = the delays as profiled, 0.1 = ten times faster)",
            ));
        }
        Ok(cfg)
    }

    /// Four simulated providers for demos and the offline default run, at real-world
    /// speeds (`time_scale` 1; scale them down for a quick run). They differ the way real
    /// providers do:
    /// - `sim-swift`: a fast first token (~0.3 s) and a steady fast decode (~80 words/s),
    ///   a thin tail, almost no faults or defects; cached tokens in OpenAI's shape, kept
    ///   30 minutes.
    /// - `sim-burst`: a fast first token (~0.25 s) but a slow, long-tailed decode: gaps
    ///   lognormal with a large sigma, and a per-request slowdown, so its conversation
    ///   p95 and p99 are far above its p50; reports no cached tokens (caches 10 minutes).
    ///   The forgetful one: the later the turn, the likelier it slips back to its first
    ///   answer (a chance of 8 % at turn 2, 8 points more each turn after), and once
    ///   slipped it stays there 80 % of the time (`mock::forget`), so it loses later
    ///   turns' constraints.
    /// - `sim-flaky`: a slower, variable first token (~0.7 s); now and then a 429 (with
    ///   Retry-After), a 503 or a stream cut mid-answer, and the most answer defects
    ///   (stale answers, missing fields); a gateway over two upstreams that moves a
    ///   conversation on 10 % of requests (named in `x-served-by`); cache kept 5 minutes;
    ///   the most broken tool calls.
    /// - `sim-thinker`: a reasoning model (~80 words of `reasoning_content` before each
    ///   answer, first token ~0.9 s) whose reasoning sometimes eats the token budget
    ///   (reasoning only, `finish_reason: "length"`, no answer); DeepSeek-shaped cached
    ///   tokens kept 10 minutes; answers often wrapped in prose or a ```json fence.
    pub fn builtin() -> MockConfig {
        let lognormal = |median: f64, sigma: f64| Delay::Lognormal { median, sigma };

        let mut swift = Profile::quick("sim-swift", 0.0, 0.0);
        swift.ttft_ms = lognormal(320.0, 0.15);
        swift.gap_ms = lognormal(12.0, 0.2);
        swift.cache = CacheReport::Openai;
        swift.faults.rate_limited = 0.001;
        swift.cache_retention_s = Some(1800.0);
        swift.tools.bad_arguments = 0.005;
        swift.defects = DefectRates {
            stale: 0.01,
            missing_field: 0.02,
            fence: 0.0,
            prose: 0.01,
        };

        let mut burst = Profile::quick("sim-burst", 0.0, 0.0);
        burst.ttft_ms = lognormal(260.0, 0.15);
        burst.gap_ms = lognormal(16.0, 1.0);
        burst.slowdown = Some(lognormal(1.0, 0.9));
        burst.cache = CacheReport::None;
        burst.cache_retention_s = Some(600.0);
        burst.tools.bad_arguments = 0.02;
        burst.defects = DefectRates {
            stale: 0.03,
            missing_field: 0.05,
            fence: 0.02,
            prose: 0.03,
        };
        burst.forgetting = Forgetting {
            per_turn: 0.08,
            persist: 0.8,
        };
        // No working prefix cache (and none reported): every turn pays prefill for the
        // whole history, so its TTFT climbs as the conversation grows.
        burst.cache_retention_s = Some(0.0);
        burst.prefill_ms_per_1k_tokens = 400.0;

        let mut flaky = Profile::quick("sim-flaky", 0.0, 0.0);
        flaky.ttft_ms = lognormal(700.0, 0.45);
        flaky.gap_ms = Delay::Uniform {
            min: 14.0,
            max: 24.0,
        };
        flaky.cache = CacheReport::Openai;
        flaky.cache_retention_s = Some(300.0);
        flaky.tools.bad_arguments = 0.06;
        flaky.tools.unknown_name = 0.03;
        flaky.gateway = Some(super::cache::Gateway {
            providers: vec!["upstream-a".into(), "upstream-b".into()],
            switch_rate: 0.1,
            header: "x-served-by".into(),
            field: None,
        });
        // A congested gateway: tokens arrive in bursts, a stall after every tenth.
        flaky.burst = Some(Burst {
            every: 10,
            stall_ms: 200.0,
        });
        flaky.faults = FaultRates {
            rate_limited: 0.02,
            http_503: 0.015,
            stream_cut: 0.015,
            ..FaultRates::default()
        };
        flaky.defects = DefectRates {
            stale: 0.12,
            missing_field: 0.25,
            fence: 0.05,
            prose: 0.05,
        };

        let mut thinker = Profile::quick("sim-thinker", 0.0, 0.0);
        thinker.ttft_ms = lognormal(900.0, 0.3);
        thinker.gap_ms = lognormal(22.0, 0.25);
        thinker.reasoning_words = 80;
        thinker.reasoning_style = ReasoningStyle::ReasoningContent;
        thinker.cache = CacheReport::Deepseek;
        thinker.cache_retention_s = Some(600.0);
        thinker.tools.bad_arguments = 0.02;
        thinker.faults.reasoning_budget = 0.04;
        thinker.defects = DefectRates {
            stale: 0.06,
            missing_field: 0.1,
            fence: 0.15,
            prose: 0.12,
        };

        MockConfig {
            seed: 0,
            profiles: vec![swift, burst, flaky, thinker],
            time_scale: 1.0,
        }
    }

    /// The profile for a requested model: exact match, then "*". Like a real provider, an
    /// unknown model is refused (404) rather than served by some other profile.
    pub fn profile_for(&self, model: &str) -> Option<&Profile> {
        self.profiles
            .iter()
            .find(|p| p.model == model)
            .or_else(|| self.profiles.iter().find(|p| p.model == "*"))
    }
}

/// Probability per judge answer of each defect; at most one per answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct JudgeFaultRates {
    /// JSON cut off mid-object.
    pub invalid_json: f64,
    /// One score one step outside the scale.
    pub out_of_range: f64,
    /// One criterion left out.
    pub missing_criterion: f64,
    /// Valid JSON inside prose and a code fence (usable through the fallback).
    pub prose: f64,
    /// Every score written as a decimal number (`4.0`), as some servers serialise
    /// integral numbers: usable, it is the same integer.
    pub decimal_scores: f64,
    /// One score half a step off the scale's integers (`4.5`): refused.
    pub fractional_score: f64,
    /// One score written as a string (`"4"`): refused.
    pub string_score: f64,
    /// Pairwise prompts: answer "A" whatever the transcripts say (position bias).
    pub prefer_a: f64,
    /// Score every criterion uniformly at random over the scale, whatever the transcript
    /// says (a judge that does not read).
    pub random: f64,
    /// Score every criterion by the length of the transcript's last answer, whatever it
    /// says: the bottom of the scale for an empty answer, the middle at
    /// [`crate::mock::judge::LENGTH_HALF`] characters, rising towards the top (a
    /// length-biased judge: its judge card must flag it).
    pub by_length: f64,
    /// Answer a request with a `json_schema` response format as if none had been sent (a
    /// server that ignores the schema; the defects above apply again).
    pub ignore_schema: f64,
    /// Refuse a request with a `json_schema` response format: HTTP 500 naming it (as
    /// llama-cpp-python's server does).
    pub reject_schema: f64,
}

/// How a profile answers requests that offer tools.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToolBehaviour {
    /// Share of tool-offering requests answered with tool calls (the rest with text).
    pub call_rate: f64,
    /// Calls per answer at most (drawn from 1 to this).
    pub max_calls: u32,
    /// Share of calls whose arguments are cut short (not JSON).
    pub bad_arguments: f64,
    /// Share of calls that name a tool the request did not offer.
    pub unknown_name: f64,
    /// Characters of arguments per streamed delta.
    pub chars_per_delta: u32,
}

impl Default for ToolBehaviour {
    fn default() -> Self {
        ToolBehaviour {
            call_rate: 0.8,
            max_calls: 2,
            bad_arguments: 0.0,
            unknown_name: 0.0,
            chars_per_delta: 12,
        }
    }
}

impl ToolBehaviour {
    pub fn check(&self) -> Result<(), String> {
        for (name, p) in [
            ("call_rate", self.call_rate),
            ("bad_arguments", self.bad_arguments),
            ("unknown_name", self.unknown_name),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("tools.{name} {p} is not a probability"));
            }
        }
        if self.max_calls == 0 || self.chars_per_delta == 0 {
            return Err("tools.max_calls and tools.chars_per_delta must be at least 1".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lognormal_median_is_the_median() {
        let d = Delay::Lognormal {
            median: 100.0,
            sigma: 0.5,
        };
        let mut below = 0;
        let n = 10_000;
        for i in 0..n {
            // A low-discrepancy grid over both uniforms.
            let u1 = (i as f64 + 0.5) / n as f64;
            let u2 = ((i * 7919) % n) as f64 / n as f64;
            if d.sample(u1, u2) < 100.0 {
                below += 1;
            }
        }
        assert!((4_500..5_500).contains(&below), "{below}");
    }

    #[test]
    fn profile_file_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.toml");
        std::fs::write(
            &path,
            "[[profile]]\nmodel = \"x\"\nttft_ms = { dist = \"fixed\", ms = 1 }\ngap_ms = { dist = \"uniform\", min = 5, max = 1 }\n",
        )
        .unwrap();
        let err = MockConfig::load(&path).unwrap_err().to_string();
        assert!(err.contains("m.toml:2"), "{err}");
        std::fs::write(&path, "[[profile]]\nmodel = \"x\"\nttft = 3\n").unwrap();
        let err = MockConfig::load(&path).unwrap_err().to_string();
        assert!(err.contains("m.toml:3"), "{err}");
    }

    #[test]
    fn the_example_file_is_the_builtin_set() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mock-profiles.toml");
        assert_eq!(MockConfig::load(&path).unwrap(), MockConfig::builtin());
    }

    #[test]
    fn time_scale_is_read_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.toml");
        let profile = "[[profile]]\nmodel = \"x\"\nttft_ms = { dist = \"fixed\", ms = 100 }\ngap_ms = { dist = \"fixed\", ms = 10 }\n";
        std::fs::write(&path, profile).unwrap();
        assert_eq!(MockConfig::load(&path).unwrap().time_scale, 1.0, "default");
        std::fs::write(&path, format!("time_scale = 0.1\n{profile}")).unwrap();
        let cfg = MockConfig::load(&path).unwrap();
        assert_eq!(cfg.time_scale, 0.1);
        let scaled = cfg.profiles[0].scaled(cfg.time_scale);
        assert_eq!(scaled.ttft_ms, Delay::Fixed { ms: 10.0 });
        assert_eq!(scaled.gap_ms, Delay::Fixed { ms: 1.0 });
        assert_eq!(scaled.stall_ms, 60_000.0);
        std::fs::write(&path, format!("seed = 1\ntime_scale = -2\n{profile}")).unwrap();
        let err = MockConfig::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("m.toml:2") && err.contains("time_scale"),
            "{err}"
        );
        std::fs::write(&path, format!("{profile}defects = {{ prose = 1.5 }}\n")).unwrap();
        let err = MockConfig::load(&path).unwrap_err().to_string();
        assert!(err.contains("prose"), "{err}");
    }

    #[test]
    fn builtin_profiles_are_valid() {
        let cfg = MockConfig::builtin();
        let models: Vec<&str> = cfg.profiles.iter().map(|p| p.model.as_str()).collect();
        assert_eq!(
            models,
            ["sim-swift", "sim-burst", "sim-flaky", "sim-thinker"]
        );
        assert_eq!(cfg.profile_for("sim-flaky").unwrap().model, "sim-flaky");
        assert_eq!(cfg.time_scale, 1.0);
        // The built-in profiles round-trip through the file format and pass its checks.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("builtin.toml");
        std::fs::write(&path, toml::to_string(&cfg).unwrap()).unwrap();
        assert_eq!(MockConfig::load(&path).unwrap(), cfg);
        assert!(cfg.profile_for("unknown").is_none());
        let mut any = cfg.clone();
        any.profiles.push(Profile::quick("*", 1.0, 1.0));
        assert_eq!(any.profile_for("unknown").unwrap().model, "*");
    }
}
