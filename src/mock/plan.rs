//! What the mock sends for one request, decided up front from the seed.
//!
//! The draw is keyed by (seed, model, request messages, how many times this exact request
//! was seen before): the same seed gives the same faults on the same requests, and a retry
//! of an identical request gets a fresh draw. Answer defects are drawn from their own
//! stream of the same key (see [`super::defect`]), so they do not move the timings.

use std::collections::HashMap;

use crate::draw::Draw;

use super::defect;
use super::profile::{CacheReport, Profile, ReasoningStyle};
use crate::chat::Message;
use crate::config::Scenario;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    RateLimited,
    Http500,
    Http503,
    Stall,
    StreamCut,
    Malformed,
    ErrorAfter200,
    Empty,
    Length,
    /// Reasoning only, then `finish_reason: "length"`: the budget went to thinking.
    ReasoningBudget,
}

/// One piece of the response body, sent `at_ms` after the request arrived.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    pub at_ms: f64,
    pub kind: PieceKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PieceKind {
    Role,
    Reasoning(String),
    Content(String),
    /// The first delta of a tool call: its index, id and name (see [`super::tools`]).
    ToolStart {
        index: u32,
        id: String,
        name: String,
    },
    /// A piece of a tool call's arguments.
    ToolArguments {
        index: u32,
        text: String,
    },
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub fault: Option<Fault>,
    pub pieces: Vec<Piece>,
    /// When the finish (and usage, and `[DONE]`) goes out.
    pub end_ms: f64,
    pub finish_reason: &'static str,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub reasoning_tokens: i64,
    pub cached_tokens: i64,
    pub cache: CacheReport,
    /// The delta field reasoning pieces are sent in: `reasoning_content` or `reasoning`.
    pub reasoning_field: &'static str,
    /// The first piece carrying text (reasoning or content), if any: the nominal TTFT.
    pub nominal_ttft_ms: Option<f64>,
}

impl Plan {
    /// Delays everything after the role chunk by `ms`: prefill before the first token.
    pub fn delay_first_token(&mut self, ms: f64) {
        if !(ms.is_finite() && ms > 0.0) {
            return;
        }
        for p in self.pieces.iter_mut().filter(|p| p.kind != PieceKind::Role) {
            p.at_ms += ms;
        }
        self.end_ms += ms;
        if let Some(t) = &mut self.nominal_ttft_ms {
            *t += ms;
        }
    }
}

/// Reference answers by user message, for answering scenario turns.
#[derive(Debug, Default)]
pub struct ScenarioIndex {
    by_user: HashMap<String, (usize, usize)>,
    references: Vec<Vec<Option<String>>>,
    /// Each scenario's user turns in order, for the grading judge.
    users: Vec<Vec<String>>,
}

impl ScenarioIndex {
    pub fn new(scenarios: &[Scenario]) -> Self {
        let mut index = ScenarioIndex::default();
        for (s, scenario) in scenarios.iter().enumerate() {
            for (t, turn) in scenario.turns.iter().enumerate() {
                index.by_user.insert(turn.user.clone(), (s, t));
            }
            index
                .references
                .push(scenario.turns.iter().map(|t| t.reference.clone()).collect());
            index
                .users
                .push(scenario.turns.iter().map(|t| t.user.clone()).collect());
        }
        index
    }

    /// How many scenarios the index holds.
    pub fn len(&self) -> usize {
        self.users.len()
    }

    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }

    /// Scenario `s`'s user turns, in order.
    pub fn users(&self, s: usize) -> &[String] {
        &self.users[s]
    }

    /// Scenario `s`'s reference answers, by turn.
    pub fn references(&self, s: usize) -> &[Option<String>] {
        &self.references[s]
    }

    /// (scenario, 0-based turn) of a user message.
    fn position(&self, user: &str) -> Option<(usize, usize)> {
        self.by_user.get(user).copied()
    }
}

pub fn request_key(seed: u64, model: &str, messages: &[Message], occurrence: u32) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(&seed.to_le_bytes());
    h.update(model.as_bytes());
    for m in messages {
        h.update(&(m.role.len() as u64).to_le_bytes());
        h.update(m.role.as_bytes());
        h.update(&(m.content.len() as u64).to_le_bytes());
        h.update(m.content.as_bytes());
    }
    h.update(&occurrence.to_le_bytes());
    *h.finalize().as_bytes()
}

pub fn make_plan(
    profile: &Profile,
    key: [u8; 32],
    messages: &[Message],
    index: &ScenarioIndex,
) -> Plan {
    // The order of the draws below is part of the seed's meaning: keep it.
    let mut rng = Draw::from_seed(key);
    let fault = draw_fault(profile, rng.unit());
    let budget = fault == Some(Fault::ReasoningBudget);
    let answer = answer_text(profile, key, messages, index, &mut rng);
    let reasoning = reasoning_chunks(profile, budget, &mut rng);
    let mut answer_chunks = chunk_words(&answer, profile.words_per_chunk.max(1) as usize);
    let finish_reason = cut_by_fault(fault, &mut answer_chunks);
    let reasoning_count = reasoning.len() as i64;
    let answer_count = answer_chunks.len() as i64;
    let timed = timed_pieces(profile, &mut rng, reasoning, answer_chunks, budget);
    Plan {
        fault,
        pieces: timed.pieces,
        end_ms: timed.end_ms,
        finish_reason,
        prompt_tokens: prompt_tokens(messages),
        completion_tokens: reasoning_count + answer_count,
        reasoning_tokens: reasoning_count,
        cached_tokens: cached_tokens(messages),
        cache: profile.cache,
        reasoning_field: match profile.reasoning_style {
            ReasoningStyle::Reasoning => "reasoning",
            _ => "reasoning_content",
        },
        nominal_ttft_ms: timed.nominal_ttft_ms,
    }
}

/// The answer's text: the scenario's reference for the last user turn (with the profile's
/// defects applied), else generated words; behind the profile's identity, if it has one.
fn answer_text(
    profile: &Profile,
    key: [u8; 32],
    messages: &[Message],
    index: &ScenarioIndex,
    rng: &mut Draw,
) -> String {
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .map_or("", |m| m.content.as_str());
    let answer = match index.position(last_user) {
        Some((s, t)) => {
            let refs = index.references(s);
            let draws = defect::Draws::from_key(key);
            let current = refs.get(t).and_then(|r| r.as_deref());
            let slip = profile.forgetting.slip(t, refs, messages, draws.forget);
            match slip.and_then(|j| refs.get(j)).and_then(|r| r.as_deref()) {
                // The final format kept, a detail lost (see `super::forget`).
                Some(back)
                    if current.is_some_and(defect::is_json_structure)
                        && !defect::is_json_structure(back) =>
                {
                    let rates = super::profile::DefectRates {
                        stale: 0.0,
                        missing_field: 1.0,
                        ..profile.defects
                    };
                    defect::apply(&rates, current, None, &draws)
                }
                // Slipped back: that turn's answer again, with no turn before it.
                Some(back) => defect::apply(&profile.defects, Some(back), None, &draws),
                None => {
                    let prev = t.checked_sub(1).and_then(|p| refs.get(p)?.as_deref());
                    defect::apply(&profile.defects, current, prev, &draws)
                }
            }
            .unwrap_or_else(|| generated_text(rng, 30, 80))
        }
        None => generated_text(rng, 30, 80),
    };
    match &profile.identity {
        Some(identity) => format!("{identity}{answer}"),
        None => answer,
    }
}

/// The reasoning, a word a chunk; reasoning that eats the budget runs on well past its
/// usual length.
fn reasoning_chunks(profile: &Profile, budget: bool, rng: &mut Draw) -> Vec<String> {
    let words = if budget {
        profile.reasoning_words.max(20) as usize * 3
    } else {
        profile.reasoning_words as usize
    };
    if words == 0 {
        return Vec::new();
    }
    chunk_words(&generated_words(rng, words), 1)
}

/// Cuts the answer as the fault asks and says why it ends (`length` or `stop`).
fn cut_by_fault(fault: Option<Fault>, answer_chunks: &mut Vec<String>) -> &'static str {
    match fault {
        Some(Fault::Length) => {
            answer_chunks.truncate(answer_chunks.len().div_ceil(3));
            "length"
        }
        Some(Fault::ReasoningBudget) => {
            answer_chunks.clear();
            "length"
        }
        Some(Fault::Empty) => {
            answer_chunks.clear();
            "stop"
        }
        _ => "stop",
    }
}

/// The pieces of a response on the clock, when it ends, and when its first token is due.
struct Timed {
    pieces: Vec<Piece>,
    end_ms: f64,
    nominal_ttft_ms: Option<f64>,
}

/// Puts the role, the reasoning and the answer on the clock: the first token after a
/// drawn TTFT, each later one a drawn gap after the one before (slowed, if the profile
/// slows down).
fn timed_pieces(
    profile: &Profile,
    rng: &mut Draw,
    reasoning: Vec<String>,
    answer_chunks: Vec<String>,
    budget: bool,
) -> Timed {
    let mut pieces = vec![Piece {
        at_ms: 0.0,
        kind: PieceKind::Role,
    }];
    let mut t = profile.ttft_ms.sample(rng.unit(), rng.unit());
    // Drawn only when set, so that profiles without it keep their timings.
    let slowdown = profile
        .slowdown
        .map_or(1.0, |d| d.sample(rng.unit(), rng.unit()));
    let gap = |rng: &mut Draw| profile.gap_ms.sample(rng.unit(), rng.unit()) * slowdown;
    let nominal_ttft_ms = (!reasoning.is_empty() || !answer_chunks.is_empty()).then_some(t);
    // Text chunks so far: a burst profile stalls after every `every`-th (no draw, so the
    // other timings keep their seeds).
    let mut sent = 0u32;
    let mut push = |kind: PieceKind, rng: &mut Draw, first: &mut bool| {
        if !*first {
            t += gap(rng);
        }
        *first = false;
        pieces.push(Piece { at_ms: t, kind });
        sent += 1;
        if let Some(b) = profile
            .burst
            .filter(|b| b.every > 0 && sent.is_multiple_of(b.every))
        {
            t += b.stall_ms;
        }
    };
    let mut first = true;
    let think = profile.reasoning_style == ReasoningStyle::Think;
    let n_reasoning = reasoning.len();
    for (i, word) in reasoning.into_iter().enumerate() {
        let kind = if think {
            let mut text = word;
            if i == 0 {
                text = format!("<think>{text}");
            }
            // Cut off by the budget, the block never closes.
            if i + 1 == n_reasoning && !budget {
                text.push_str("</think>\n\n");
            }
            PieceKind::Content(text)
        } else {
            PieceKind::Reasoning(word)
        };
        push(kind, rng, &mut first);
    }
    for chunk in answer_chunks {
        push(PieceKind::Content(chunk), rng, &mut first);
    }
    let end_ms = t + profile.gap_ms.sample(rng.unit(), rng.unit()) * slowdown;
    Timed {
        pieces,
        end_ms,
        nominal_ttft_ms,
    }
}

/// A rough token count of a message: a token per four bytes, and four for the framing.
fn message_tokens(m: &Message) -> i64 {
    m.content.len() as i64 / 4 + 4
}

fn prompt_tokens(messages: &[Message]) -> i64 {
    messages.iter().map(message_tokens).sum()
}

/// A simulated prefix cache: everything before the newest message, in 64-token blocks,
/// once a conversation has gone past its first exchange.
fn cached_tokens(messages: &[Message]) -> i64 {
    match messages.split_last() {
        Some((_, before)) if messages.len() > 2 => {
            before.iter().map(message_tokens).sum::<i64>() / 64 * 64
        }
        _ => 0,
    }
}

fn draw_fault(profile: &Profile, u: f64) -> Option<Fault> {
    let f = profile.faults;
    let table = [
        (f.rate_limited, Fault::RateLimited),
        (f.http_500, Fault::Http500),
        (f.http_503, Fault::Http503),
        (f.stall, Fault::Stall),
        (f.stream_cut, Fault::StreamCut),
        (f.malformed, Fault::Malformed),
        (f.error_after_200, Fault::ErrorAfter200),
        (f.empty, Fault::Empty),
        (f.length, Fault::Length),
        (f.reasoning_budget, Fault::ReasoningBudget),
    ];
    let mut acc = 0.0;
    for (p, fault) in table {
        acc += p;
        if u < acc {
            return Some(fault);
        }
    }
    None
}

/// Splits text into chunks of `n` words, each keeping its following whitespace, so that
/// the chunks concatenate to exactly the input.
pub fn chunk_words(text: &str, n: usize) -> Vec<String> {
    let mut chunks = Vec::new();
    let mut current = String::new();
    let mut words = 0;
    let mut in_space = false;
    for c in text.chars() {
        let space = c.is_whitespace();
        if in_space && !space {
            words += 1;
            if words == n {
                chunks.push(std::mem::take(&mut current));
                words = 0;
            }
        }
        in_space = space;
        current.push(c);
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

const WORDS: &[&str] = &[
    "the",
    "request",
    "needs",
    "a",
    "careful",
    "answer",
    "that",
    "keeps",
    "every",
    "constraint",
    "from",
    "earlier",
    "turns",
    "and",
    "drops",
    "what",
    "was",
    "replaced",
    "so",
    "result",
    "stays",
    "consistent",
    "with",
    "latest",
    "instructions",
    "format",
    "plan",
    "step",
    "check",
    "value",
    "field",
    "deadline",
    "budget",
    "team",
    "review",
    "update",
    "final",
    "clear",
];

fn generated_words(rng: &mut Draw, n: usize) -> String {
    (0..n)
        .map(|_| WORDS[rng.index(WORDS.len())])
        .collect::<Vec<_>>()
        .join(" ")
}

fn generated_text(rng: &mut Draw, min: usize, max: usize) -> String {
    let n = rng.int(min as i64, max as i64) as usize;
    let mut text = generated_words(rng, n);
    text.push('.');
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().collect::<String>() + chars.as_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::profile::{MockConfig, Profile};

    #[test]
    fn chunks_concatenate_to_the_input() {
        let text = "{\n  \"a\": 1,\n  \"b\": [1, 2]\n}  end";
        for n in 1..4 {
            assert_eq!(chunk_words(text, n).concat(), text);
        }
        assert_eq!(
            chunk_words("one two three", 1),
            vec!["one ", "two ", "three"]
        );
    }

    #[test]
    fn same_key_same_plan_and_faults_follow_rates() {
        let mut p = Profile::quick("m", 10.0, 1.0);
        p.faults.http_500 = 0.5;
        let msgs = vec![Message::new("user", "hello")];
        let idx = ScenarioIndex::default();
        let a = make_plan(&p, request_key(1, "m", &msgs, 0), &msgs, &idx);
        let b = make_plan(&p, request_key(1, "m", &msgs, 0), &msgs, &idx);
        assert_eq!(a.pieces, b.pieces);
        assert_eq!(a.fault, b.fault);
        let faults = (0..1000)
            .filter(|&n| {
                make_plan(&p, request_key(1, "m", &msgs, n), &msgs, &idx)
                    .fault
                    .is_some()
            })
            .count();
        assert!((400..600).contains(&faults), "{faults}");
    }

    #[test]
    fn a_burst_profile_stalls_after_every_nth_chunk_and_prefill_delays_the_first_token() {
        let mut p = Profile::quick("m", 10.0, 2.0);
        p.burst = Some(super::super::profile::Burst {
            every: 3,
            stall_ms: 50.0,
        });
        let msgs = vec![Message::new("user", "hello")];
        let mut plan = make_plan(&p, [7; 32], &msgs, &ScenarioIndex::default());
        let at: Vec<f64> = plan
            .pieces
            .iter()
            .filter(|x| x.kind != PieceKind::Role)
            .map(|x| x.at_ms)
            .collect();
        assert!(at.len() > 6, "{at:?}");
        let gaps: Vec<f64> = at.windows(2).map(|w| w[1] - w[0]).collect();
        for (i, g) in gaps.iter().enumerate() {
            let want = if (i + 1) % 3 == 0 { 52.0 } else { 2.0 };
            assert!((g - want).abs() < 1e-9, "gap {i}: {g}");
        }
        let end = plan.end_ms;
        plan.delay_first_token(100.0);
        assert_eq!(plan.nominal_ttft_ms, Some(110.0));
        assert_eq!(plan.pieces[0].at_ms, 0.0, "the role chunk goes at once");
        assert!((plan.end_ms - end - 100.0).abs() < 1e-9);
    }

    #[test]
    fn think_style_wraps_reasoning_in_content() {
        let mut p = Profile::quick("m", 10.0, 1.0);
        p.reasoning_words = 3;
        p.reasoning_style = ReasoningStyle::Think;
        let msgs = vec![Message::new("user", "hello")];
        let plan = make_plan(&p, [7; 32], &msgs, &ScenarioIndex::default());
        let text: String = plan
            .pieces
            .iter()
            .filter_map(|x| match &x.kind {
                PieceKind::Content(c) => Some(c.as_str()),
                _ => None,
            })
            .collect();
        assert!(text.starts_with("<think>"));
        assert_eq!(text.matches("</think>").count(), 1);
        assert_eq!(plan.reasoning_tokens, 3);
        assert_eq!(plan.nominal_ttft_ms, Some(10.0));
    }

    fn real_scenarios() -> Vec<Scenario> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        Scenario::load_dir(&dir).unwrap()
    }

    fn key(i: u32) -> [u8; 32] {
        let mut k = [0u8; 32];
        k[..4].copy_from_slice(&i.to_le_bytes());
        k
    }

    #[test]
    fn a_scaled_profile_plans_the_same_response_with_scaled_delays() {
        for p in MockConfig::builtin().profiles {
            let msgs = vec![Message::new("user", "hello")];
            let idx = ScenarioIndex::default();
            let scaled = p.scaled(0.1);
            assert_eq!(scaled.stall_ms, p.stall_ms * 0.1);
            assert_eq!(scaled.slowdown, p.slowdown, "a ratio, not a delay");
            for i in 0..20 {
                let a = make_plan(&p, key(i), &msgs, &idx);
                let b = make_plan(&scaled, key(i), &msgs, &idx);
                assert_eq!(a.fault, b.fault);
                assert_eq!(a.pieces.len(), b.pieces.len());
                for (x, y) in a.pieces.iter().zip(&b.pieces) {
                    assert_eq!(x.kind, y.kind);
                    assert!(
                        (y.at_ms - 0.1 * x.at_ms).abs() < 1e-9,
                        "{} {}",
                        x.at_ms,
                        y.at_ms
                    );
                }
                assert!((b.end_ms - 0.1 * a.end_ms).abs() < 1e-9);
            }
        }
    }

    /// p95 / p50 of the planned end of a 90-word answer, over many requests.
    fn tail_ratio(p: &Profile) -> f64 {
        let answer = vec!["word"; 90].join(" ");
        let scenario = Scenario::from_source(&crate::config::SourceText {
            path: "s.toml".into(),
            text: format!(
                "id = \"s\"\ncategory = \"x\"\n[[turn]]\nuser = \"go\"\nreference = \"{answer}\"\n"
            ),
        })
        .unwrap();
        let idx = ScenarioIndex::new(&[scenario]);
        let msgs = vec![Message::new("user", "go")];
        let mut ends: Vec<f64> = (0..400)
            .map(|i| make_plan(p, key(i), &msgs, &idx).end_ms)
            .collect();
        ends.sort_by(f64::total_cmp);
        ends[380] / ends[200]
    }

    #[test]
    fn builtin_burst_has_a_long_decode_tail_and_swift_a_thin_one() {
        let cfg = MockConfig::builtin();
        let swift = tail_ratio(cfg.profile_for("sim-swift").unwrap());
        let burst = tail_ratio(cfg.profile_for("sim-burst").unwrap());
        assert!(swift < 1.2, "swift p95/p50 {swift}");
        assert!(burst > 2.5, "burst p95/p50 {burst}");
    }

    #[test]
    fn builtin_defect_rates_rank_the_providers_on_real_final_answers() {
        let scenarios = real_scenarios();
        let idx = ScenarioIndex::new(&scenarios);
        let cfg = MockConfig::builtin();
        // The per-answer defects alone: forgetting, which depends on the turn and on the
        // answers before it, has its own test below.
        let clean = |model: &str| {
            let mut p = cfg.profile_for(model).unwrap().clone();
            p.forgetting = crate::mock::forget::Forgetting::default();
            let p = &p;
            let mut clean = 0;
            for s in &scenarios {
                let last = s.turns.last().unwrap();
                let msgs = vec![Message::new("user", last.user.clone())];
                for i in 0..40 {
                    let plan = make_plan(p, key(i), &msgs, &idx);
                    let text: String = plan
                        .pieces
                        .iter()
                        .filter_map(|x| match &x.kind {
                            PieceKind::Content(c) => Some(c.as_str()),
                            _ => None,
                        })
                        .collect();
                    clean += usize::from(plan.fault.is_none() && Some(text) == last.reference);
                }
            }
            clean as f64 / (40 * scenarios.len()) as f64
        };
        let (swift, burst, flaky, thinker) = (
            clean("sim-swift"),
            clean("sim-burst"),
            clean("sim-flaky"),
            clean("sim-thinker"),
        );
        assert!(swift >= 0.93, "{swift}");
        assert!(
            swift > burst && burst > flaky.max(thinker),
            "{swift} {burst} {flaky} {thinker}"
        );
        assert!(flaky < 0.8 && thinker < 0.8, "{flaky} {thinker}");
    }

    /// The content a plan streams.
    fn content(plan: &Plan) -> String {
        plan.pieces
            .iter()
            .filter_map(|x| match &x.kind {
                PieceKind::Content(c) => Some(c.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn builtin_burst_forgets_later_turns_more_and_the_others_do_not_forget() {
        let scenarios = real_scenarios();
        let s = scenarios
            .iter()
            .find(|s| s.id == "biz-incident-communications")
            .unwrap();
        let idx = ScenarioIndex::new(&scenarios);
        let cfg = MockConfig::builtin();
        let burst = cfg.profile_for("sim-burst").unwrap();
        let first = s.turns[0].reference.as_deref().unwrap().trim();
        // Answers that slipped back to the first turn's, by 0-based turn, over conversations
        // that carry the mock's own answers forward as a collector does.
        let mut slipped = [0usize; 4];
        for seed in 0..300 {
            let mut msgs = vec![Message::new("system", s.system.clone().unwrap())];
            for (t, turn) in s.turns.iter().enumerate().take(4) {
                msgs.push(Message::new("user", turn.user.clone()));
                let plan = make_plan(burst, request_key(seed, "sim-burst", &msgs, 0), &msgs, &idx);
                let answer = content(&plan);
                slipped[t] += usize::from(t > 0 && answer.contains(first));
                msgs.push(Message::new("assistant", answer));
            }
        }
        assert_eq!(slipped[0], 0);
        assert!(
            slipped[1] < slipped[2] && slipped[2] < slipped[3],
            "{slipped:?}"
        );
        // A fresh slip at turn 4 is three times as likely as at turn 2 (0.24 vs 0.08), and
        // slips persist.
        assert!(slipped[3] > 2 * slipped[1], "{slipped:?}");
        for p in &cfg.profiles {
            if p.model != "sim-burst" {
                assert_eq!(
                    p.forgetting,
                    crate::mock::forget::Forgetting::default(),
                    "{}",
                    p.model
                );
            }
        }
    }

    #[test]
    fn defects_are_the_same_for_the_same_seed_and_request() {
        let scenarios = real_scenarios();
        let idx = ScenarioIndex::new(&scenarios);
        let flaky = MockConfig::builtin()
            .profile_for("sim-flaky")
            .unwrap()
            .clone();
        let answer = |seed: u64, occurrence: u32| {
            let s = &scenarios[0];
            let msgs = vec![Message::new("user", s.turns.last().unwrap().user.clone())];
            let plan = make_plan(
                &flaky,
                request_key(seed, "sim-flaky", &msgs, occurrence),
                &msgs,
                &idx,
            );
            plan.pieces
                .iter()
                .filter_map(|x| match &x.kind {
                    PieceKind::Content(c) => Some(c.clone()),
                    _ => None,
                })
                .collect::<String>()
        };
        let first: Vec<String> = (0..30).map(|n| answer(1, n)).collect();
        let again: Vec<String> = (0..30).map(|n| answer(1, n)).collect();
        let other: Vec<String> = (0..30).map(|n| answer(2, n)).collect();
        assert_eq!(first, again);
        assert_ne!(first, other);
        let distinct: std::collections::HashSet<&String> = first.iter().collect();
        assert!(distinct.len() > 1, "some answers carry defects");
    }
}
