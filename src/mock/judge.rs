//! The mock judge: a profile with a `judge` table (or a model named `mock-judge…`) answers
//! judge prompts with rubric-shaped JSON, and injects the faults a real judge shows, so
//! every path of `turnbench judge` can be tested offline.
//!
//! It grades what it reads: when the server was started with scenarios and the prompt's
//! transcript holds one scenario's user turns, each answer is compared with that turn's
//! reference answer ([`super::grade`]) and each criterion's value in [0, 1] is mapped onto
//! the rubric's scale, `min + round(value × (max − min) + noise)`, clamped to the scale;
//! the noise is normal with sd 0.35 scale steps, drawn from the request's key, so
//! replicates differ a little and the same key gives the same answer. A transcript that
//! matches no scenario (imports, a server started without scenarios) is not graded: every
//! score is the middle of the scale, `completed` is false and the rationale says so.
//!
//! `random` scores every criterion uniformly at random over the scale (a judge that does not
//! read: the reference-anchor sanity run must fail it). `by_length` scores every criterion
//! by the length of the transcript's last answer alone (the bottom of the scale when empty,
//! the middle at [`LENGTH_HALF`] characters, rising towards the top): a length-biased judge,
//! which the judge card must flag.
//!
//! Pairwise prompts (a `pairwise-spec:` line, two transcripts A and B) are answered with
//! `{"winner": …}`: each transcript graded as above, the better mean of the five criteria
//! wins, a difference under 0.05 is a tie, a transcript that matches no scenario makes a
//! tie that says so; `prefer_a` answers "A" whatever it reads (a position-biased judge).
//!
//! A `json_schema` response format is honoured the way constrained decoding honours it:
//! the answer fits the schema (no malformed-answer defect), and a prompt without a
//! `rubric-spec:` line is scored on the schema's criteria and scale. `ignore_schema`
//! answers as if no schema had been sent (a server that ignores it); `reject_schema`
//! answers HTTP 500 naming the format (as llama-cpp-python's server does).
//!
//! The rubric is read from the `rubric-spec: {"criteria": […], "min": …, "max": …}` line
//! that the `{{rubric_spec}}` placeholder writes into a prompt. HTTP faults (429 with
//! Retry-After, 500, …) come from the profile's ordinary `faults` table.
//!
//! ```toml
//! [[profile]]
//! model = "mock-judge-flaky"
//! ttft_ms = { dist = "fixed", ms = 200 }
//! gap_ms = { dist = "fixed", ms = 0 }
//! faults = { rate_limited = 0.05, http_500 = 0.02 }
//! judge = { invalid_json = 0.05, out_of_range = 0.05, missing_criterion = 0.05, prose = 0.1 }
//! # scores as servers write them: decimal_scores (4.0, usable), fractional_score (4.5) and
//! # string_score ("4") (both refused)
//! # or: judge = { ignore_schema = 1.0, invalid_json = 1.0 }, judge = { reject_schema = 1.0 }
//! ```

use crate::draw::Draw;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::grade;
use super::plan::{Fault, Piece, PieceKind, Plan, ScenarioIndex};
use super::profile::{Delay, MockConfig, Profile};
use crate::chat::Message;

pub use super::profile::JudgeFaultRates;

/// Whether this profile answers as a judge.
pub fn is_judge(profile: &Profile) -> bool {
    profile.judge.is_some() || profile.model.starts_with("mock-judge")
}

/// Scale steps of the noise added to a graded score (standard deviation).
const NOISE_SD: f64 = 0.35;

/// What the rationale says when the transcript matches no scenario.
pub const UNMATCHED: &str = "Simulated judge: this transcript matches no scenario the mock was started with, so it was not graded; every score is the middle of the scale.";

/// The built-in mock judge used by `judges/mock.toml` (`builtin_mock = true`). It grades
/// only when its server is started with the scenarios the transcripts come from.
pub fn builtin_config(model: &str, seed: u64) -> MockConfig {
    let mut p = Profile::quick(model, 0.0, 0.0);
    p.ttft_ms = Delay::Lognormal {
        median: 150.0,
        sigma: 0.3,
    };
    p.judge = Some(judge_by_name(model));
    MockConfig {
        seed,
        profiles: vec![p],
        time_scale: 1.0,
    }
}

/// The behaviour a built-in mock judge's model name asks for, so that a judge settings file
/// can choose one without a profiles file: `mock-judge-by-length…` scores by answer length,
/// `mock-judge-first…` prefers the transcript shown first, `mock-judge-random…` scores at
/// random; any other name grades.
pub fn judge_by_name(model: &str) -> JudgeFaultRates {
    let mut rates = JudgeFaultRates::default();
    if model.starts_with("mock-judge-by-length") {
        rates.by_length = 1.0;
    } else if model.starts_with("mock-judge-first") {
        rates.prefer_a = 1.0;
    } else if model.starts_with("mock-judge-random") {
        rates.random = 1.0;
    }
    rates
}

/// The rubric as the prompt describes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct RubricSpec {
    criteria: Vec<String>,
    min: i64,
    max: i64,
}

fn find_spec(messages: &[Message]) -> Option<RubricSpec> {
    messages
        .iter()
        .filter(|m| m.role != "assistant")
        .flat_map(|m| m.content.lines())
        .find_map(|line| {
            let rest = line.split_once("rubric-spec:")?.1;
            serde_json::from_str(rest.trim()).ok()
        })
}

/// The JSON schema of a request's `response_format`, when it is `json_schema`.
fn requested_schema(format: Option<&Value>) -> Option<&Value> {
    let format = format?;
    (format.get("type")? == "json_schema")
        .then(|| format.pointer("/json_schema/schema"))
        .flatten()
}

/// The rubric as a verdict schema describes it: the required criteria of `scores` and the
/// scale of their `enum` (or `minimum`/`maximum`).
fn spec_from_schema(schema: &Value) -> Option<RubricSpec> {
    let scores = schema.pointer("/properties/scores")?;
    let criteria: Vec<String> = scores
        .get("required")?
        .as_array()?
        .iter()
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect();
    let first = scores.pointer(&format!("/properties/{}", criteria.first()?))?;
    let values: Vec<i64> = match first.get("enum").and_then(Value::as_array) {
        Some(e) => e.iter().filter_map(Value::as_i64).collect(),
        None => vec![
            first.get("minimum")?.as_i64()?,
            first.get("maximum")?.as_i64()?,
        ],
    };
    Some(RubricSpec {
        criteria,
        min: *values.iter().min()?,
        max: *values.iter().max()?,
    })
}

/// Whether this request draws the profile's `reject_schema` fault: a server that answers a
/// `json_schema` response format with HTTP 500 (as llama-cpp-python's does).
pub fn rejects_schema(profile: &Profile, key: [u8; 32], format: Option<&Value>) -> bool {
    let rate = profile.judge.map_or(0.0, |r| r.reject_schema);
    requested_schema(format).is_some() && draw(key, b"mock-judge-reject-schema") < rate
}

/// A uniform draw in [0, 1) of its own for each purpose, so that adding one never moves
/// the others.
fn draw(key: [u8; 32], purpose: &[u8]) -> f64 {
    let mut seed = [0u8; 32];
    seed.copy_from_slice(blake3::keyed_hash(&key, purpose).as_bytes());
    Draw::from_seed(seed).unit()
}

/// The judge's answer text for a request: the transcript graded against the scenarios in
/// `index`, with noise and defects drawn from the request's key. A `json_schema` response
/// format is honoured (unless the profile's `ignore_schema` draws otherwise) as a server
/// with constrained decoding honours it: the answer always fits the schema, so none of the
/// malformed-answer defects can occur, and a prompt without a `rubric-spec:` line is
/// scored on the schema's criteria and scale.
pub fn answer(
    profile: &Profile,
    key: [u8; 32],
    messages: &[Message],
    index: &ScenarioIndex,
    format: Option<&Value>,
) -> String {
    let mut seed = [0u8; 32];
    seed.copy_from_slice(blake3::keyed_hash(&key, b"mock-judge").as_bytes());
    let mut rng = Draw::from_seed(seed);
    if let Some(text) = pairwise_prompt(messages) {
        return pairwise_answer(profile, &mut rng, text, index);
    }
    let ignore = profile.judge.map_or(0.0, |r| r.ignore_schema);
    let schema = requested_schema(format).filter(|_| draw(key, b"mock-judge-schema") >= ignore);
    let Some(spec) = find_spec(messages).or_else(|| schema.and_then(spec_from_schema)) else {
        return "I cannot find a rubric-spec line in this request, so I cannot score it."
            .to_string();
    };
    let mut scores = Map::new();
    let (completed, rationale) = grade_scores(&spec, index, messages, &mut rng, &mut scores);
    let rates = profile.judge.unwrap_or_default();
    let (completed, rationale) = biased_scores(&rates, &spec, messages, &mut rng, &mut scores)
        .unwrap_or((completed, rationale));
    let u: f64 = rng.unit();
    // A schema the server honours leaves no room for a malformed answer.
    let honoured = schema.is_some();
    let table = [
        rates.invalid_json,
        rates.out_of_range,
        rates.missing_criterion,
        rates.prose,
        rates.decimal_scores,
        rates.fractional_score,
        rates.string_score,
    ]
    .map(|rate| if honoured { 0.0 } else { rate });
    // The first defect whose cumulative probability passes the draw, if any.
    let mut acc = 0.0;
    let defect = table.iter().position(|p| {
        acc += p;
        u < acc
    });
    spoil_scores(defect, &spec, &mut rng, &mut scores);
    let body = json!({
        "scores": scores,
        "completed": completed,
        "rationale": rationale,
    })
    .to_string();
    match defect {
        Some(0) => body[..body.len() / 2].to_string(),
        Some(3) => format!("Here is my assessment.\n```json\n{body}\n```\nI hope this helps."),
        _ => body,
    }
}

/// Steps between the scale's ends.
fn steps(spec: &RubricSpec) -> i64 {
    (spec.max - spec.min).max(0)
}

/// The honest scores: each criterion graded against the scenario with normal noise (the
/// scale's middle for a transcript of no known scenario); whether the task completed and
/// why.
fn grade_scores(
    spec: &RubricSpec,
    index: &ScenarioIndex,
    messages: &[Message],
    rng: &mut Draw,
    scores: &mut Map<String, Value>,
) -> (bool, String) {
    let steps = steps(spec);
    match grade::grade(index, messages) {
        Some(grading) => {
            for c in &spec.criteria {
                // Box–Muller; 1 - u keeps the log argument above zero.
                let (u1, u2): (f64, f64) = (rng.unit(), rng.unit());
                let z = (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let steps_up = grading.criterion(c) * steps as f64 + NOISE_SD * z;
                let score = spec.min + (steps_up.round() as i64).clamp(0, steps);
                scores.insert(c.clone(), json!(score));
            }
            (grading.completed(), grading.rationale())
        }
        None => {
            for c in &spec.criteria {
                scores.insert(c.clone(), json!(spec.min + steps / 2));
            }
            (false, UNMATCHED.to_string())
        }
    }
}

/// A biased judge's scores in place of the honest ones, when its mode draws: by the last
/// answer's length, or at random; `None` (the honest scores stand) otherwise.
fn biased_scores(
    rates: &JudgeFaultRates,
    spec: &RubricSpec,
    messages: &[Message],
    rng: &mut Draw,
    scores: &mut Map<String, Value>,
) -> Option<(bool, String)> {
    let steps = steps(spec);
    // No draw unless the mode is on: the other modes' answers stay what they were.
    if rates.by_length > 0.0 && rng.unit() < rates.by_length {
        let chars = last_answer_chars(messages) as f64;
        let share = chars / (chars + LENGTH_HALF as f64);
        // Criterion k of n rounds at an offset of k/n of a step, so the mean over the
        // criteria follows the length in steps of 1/n rather than whole steps.
        let n = spec.criteria.len().max(1) as f64;
        for (k, c) in spec.criteria.iter().enumerate() {
            let up = (share * steps as f64 + k as f64 / n).floor() as i64;
            scores.insert(c.clone(), json!(spec.min + up.clamp(0, steps)));
        }
        Some((
            share >= 0.5,
            "Simulated judge: scored by the length of the last answer, its content unread."
                .to_string(),
        ))
    } else if rng.unit() < rates.random {
        for c in &spec.criteria {
            scores.insert(c.clone(), json!(rng.int(spec.min, spec.max)));
        }
        Some((
            rng.chance(0.5),
            "Simulated judge: scores drawn at random, the transcript unread.".to_string(),
        ))
    } else {
        None
    }
}

/// The scores' defect, by its place in the defect table: 1 one score off the scale, 2 the
/// last criterion missing, 4 every score a decimal, 5 one score a half step off, 6 one
/// score a string (0, cut JSON, and 3, prose, spoil the text, not the scores).
fn spoil_scores(
    defect: Option<usize>,
    spec: &RubricSpec,
    rng: &mut Draw,
    scores: &mut Map<String, Value>,
) {
    if defect == Some(1)
        && let Some(first) = spec.criteria.first()
    {
        let bad = if rng.chance(0.5) {
            spec.max + 1
        } else {
            spec.min - 1
        };
        scores.insert(first.clone(), json!(bad));
    } else if defect == Some(2)
        && let Some(last) = spec.criteria.last()
    {
        scores.remove(last);
    } else if defect == Some(4) {
        for v in scores.values_mut() {
            if let Some(x) = v.as_i64() {
                *v = json!(x as f64);
            }
        }
    } else if let Some(first) = spec.criteria.first()
        && let Some(x) = scores.get(first).and_then(Value::as_i64)
    {
        if defect == Some(5) {
            let half = if x < spec.max {
                x as f64 + 0.5
            } else {
                x as f64 - 0.5
            };
            scores.insert(first.clone(), json!(half));
        } else if defect == Some(6) {
            scores.insert(first.clone(), json!(x.to_string()));
        }
    }
}

/// Characters of the last answer at which a length-biased judge scores the middle of the
/// scale: it scores chars / (chars + this) of the way up, so a longer answer always scores
/// at least as high and the scale never saturates.
pub const LENGTH_HALF: usize = 300;

/// Characters of the transcript's last assistant answer (0 without one).
fn last_answer_chars(messages: &[Message]) -> usize {
    grade::read_transcript(messages)
        .and_then(|t| {
            t.iter()
                .rev()
                .find(|m| m.role == "assistant")
                .map(|m| m.content.trim().chars().count())
        })
        .unwrap_or(0)
}

/// The user message of a pairwise prompt.
fn pairwise_prompt(messages: &[Message]) -> Option<&str> {
    messages
        .iter()
        .filter(|m| m.role == "user")
        .map(|m| m.content.as_str())
        .find(|t| t.lines().any(|l| l.starts_with("pairwise-spec:")))
}

/// Below this difference of mean criterion values two transcripts tie.
const PAIRWISE_TIE: f64 = 0.05;

fn pairwise_answer(profile: &Profile, rng: &mut Draw, text: &str, index: &ScenarioIndex) -> String {
    // Transcript A is the first block; B is the first block after A's end line.
    let a_end = text
        .lines()
        .scan(0usize, |at, l| {
            let start = *at;
            *at += l.len() + 1;
            Some((start + l.len(), l))
        })
        .find(|(_, l)| l.starts_with("<<<transcript ") && l.ends_with(" end>>>"))
        .map(|(end, _)| end.min(text.len()));
    let grade_of =
        |t: &str| grade::grade(index, &[Message::new("user", t)]).map(|g| g.criterion("overall"));
    let a = grade_of(text);
    let b = a_end.and_then(|end| grade_of(&text[end..]));
    let rates = profile.judge.unwrap_or_default();
    let biased = rng.unit() < rates.prefer_a;
    let (winner, rationale) = match (biased, a, b) {
        (true, _, _) => (
            "A",
            "Simulated judge: A, whatever the transcripts say (position bias).".to_string(),
        ),
        (false, Some(a), Some(b)) => {
            let diff = a - b;
            let w = if diff.abs() < PAIRWISE_TIE {
                "tie"
            } else if diff > 0.0 {
                "A"
            } else {
                "B"
            };
            (
                w,
                format!("Simulated judge: graded against the references, A {a:.2} and B {b:.2}."),
            )
        }
        _ => ("tie", format!("{UNMATCHED} (pairwise: a tie)")),
    };
    json!({"winner": winner, "rationale": rationale}).to_string()
}

/// Replaces a planned scenario answer with a judge answer, sent at the planned first-token
/// time in one piece; transport faults already drawn in the plan stay as they are.
pub fn answer_as_judge(
    plan: &mut Plan,
    profile: &Profile,
    key: [u8; 32],
    messages: &[Message],
    index: &ScenarioIndex,
    format: Option<&Value>,
) {
    let mut text = answer(profile, key, messages, index, format);
    match plan.fault {
        Some(Fault::Empty) => text.clear(),
        Some(Fault::Length) => text.truncate(text.len() / 3),
        _ => {}
    }
    let at = plan.nominal_ttft_ms.unwrap_or(0.0);
    plan.pieces = vec![Piece {
        at_ms: 0.0,
        kind: PieceKind::Role,
    }];
    if !text.is_empty() {
        plan.pieces.push(Piece {
            at_ms: at,
            kind: PieceKind::Content(text.clone()),
        });
    }
    plan.end_ms = at;
    plan.reasoning_tokens = 0;
    plan.completion_tokens = text.len() as i64 / 4 + 1;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn judge_profile(rates: JudgeFaultRates) -> Profile {
        let mut p = Profile::quick("mock-judge", 10.0, 0.0);
        p.judge = Some(rates);
        p
    }

    fn none() -> ScenarioIndex {
        ScenarioIndex::default()
    }

    fn prompt() -> Vec<Message> {
        vec![Message::new(
            "user",
            "Score it.\nrubric-spec: {\"criteria\":[\"a\",\"b\"],\"min\":1,\"max\":5}\n<<<transcript>>>",
        )]
    }

    #[test]
    fn answers_every_criterion_inside_the_scale() {
        let p = judge_profile(JudgeFaultRates::default());
        for i in 0..50u8 {
            let text = answer(&p, [i; 32], &prompt(), &none(), None);
            let v: Value = serde_json::from_str(&text).unwrap();
            for c in ["a", "b"] {
                let s = v["scores"][c].as_i64().unwrap();
                assert!((1..=5).contains(&s), "{text}");
            }
            assert!(v["completed"].is_boolean());
        }
        assert_eq!(
            answer(&p, [1; 32], &prompt(), &none(), None),
            answer(&p, [1; 32], &prompt(), &none(), None)
        );
    }

    #[test]
    fn injects_each_defect() {
        let rates = |f: fn(&mut JudgeFaultRates)| {
            let mut r = JudgeFaultRates::default();
            f(&mut r);
            judge_profile(r)
        };
        let text = answer(
            &rates(|r| r.invalid_json = 1.0),
            [2; 32],
            &prompt(),
            &none(),
            None,
        );
        assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");
        let text = answer(
            &rates(|r| r.out_of_range = 1.0),
            [2; 32],
            &prompt(),
            &none(),
            None,
        );
        let a = serde_json::from_str::<Value>(&text).unwrap()["scores"]["a"]
            .as_i64()
            .unwrap();
        assert!(a == 0 || a == 6, "{text}");
        let text = answer(
            &rates(|r| r.missing_criterion = 1.0),
            [2; 32],
            &prompt(),
            &none(),
            None,
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert!(v["scores"].get("b").is_none(), "{text}");
        let text = answer(&rates(|r| r.prose = 1.0), [2; 32], &prompt(), &none(), None);
        assert!(
            text.starts_with("Here is") && text.contains("```json"),
            "{text}"
        );
    }

    /// A schema is honoured as constrained decoding honours it: every defect profile then
    /// answers in shape, on the schema's criteria even without a rubric-spec line; a
    /// profile told to ignore schemas answers as without one.
    #[test]
    fn honours_a_json_schema_unless_told_to_ignore_it() {
        let format = json!({"type": "json_schema", "json_schema": {"name": "r", "strict": true, "schema": {
            "type": "object",
            "properties": {"scores": {"type": "object", "required": ["a", "b"], "properties": {
                "a": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
                "b": {"type": "integer", "enum": [1, 2, 3, 4, 5]}}}},
        }}});
        let bare = vec![Message::new("user", "Score it.\n<<<transcript>>>")];
        for i in 0..20u8 {
            let mut rates = JudgeFaultRates::default();
            match i % 4 {
                0 => rates.invalid_json = 1.0,
                1 => rates.out_of_range = 1.0,
                2 => rates.missing_criterion = 1.0,
                _ => rates.prose = 1.0,
            }
            for messages in [prompt(), bare.clone()] {
                let text = answer(
                    &judge_profile(rates),
                    [i; 32],
                    &messages,
                    &none(),
                    Some(&format),
                );
                let v: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{text}"));
                for c in ["a", "b"] {
                    let s = v["scores"][c].as_i64().unwrap_or(0);
                    assert!((1..=5).contains(&s), "{text}");
                }
            }
            rates.ignore_schema = 1.0;
            let text = answer(
                &judge_profile(rates),
                [i; 32],
                &prompt(),
                &none(),
                Some(&format),
            );
            let shaped = serde_json::from_str::<Value>(&text).is_ok_and(|v| {
                ["a", "b"].iter().all(|c| {
                    v["scores"][c]
                        .as_i64()
                        .is_some_and(|s| (1..=5).contains(&s))
                })
            });
            assert!(!shaped, "ignored the fault: {text}");
        }
        let rejecting = JudgeFaultRates {
            reject_schema: 1.0,
            ..Default::default()
        };
        assert!(rejects_schema(
            &judge_profile(rejecting),
            [1; 32],
            Some(&format)
        ));
        assert!(!rejects_schema(&judge_profile(rejecting), [1; 32], None));
        assert!(!rejects_schema(
            &judge_profile(JudgeFaultRates::default()),
            [1; 32],
            Some(&format)
        ));
    }

    #[test]
    fn judge_models_are_recognised_by_name_or_table() {
        assert!(is_judge(&Profile::quick("mock-judge-x", 1.0, 1.0)));
        assert!(!is_judge(&Profile::quick("mock-fast", 1.0, 1.0)));
        assert!(is_judge(&judge_profile(JudgeFaultRates::default())));
    }

    mod grading {
        use super::*;
        use crate::config::{JudgeSettings, Rubric, Scenario};
        use crate::judge::blind::{Identity, Redactor, VisibleMessage, blind, redaction_terms};
        use crate::judge::prompt::{build_messages, opaque_label};
        use crate::mock::defect;
        use crate::mock::plan::request_key;

        fn root() -> &'static std::path::Path {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        }

        fn scenarios() -> Vec<Scenario> {
            Scenario::load_dir(&root().join("scenarios")).unwrap()
        }

        fn references(s: &Scenario) -> Vec<String> {
            s.turns
                .iter()
                .map(|t| t.reference.clone().unwrap())
                .collect()
        }

        /// The judge prompt exactly as the judge stage builds it: visible messages, blinded
        /// with the redactions a built-in run has, rendered with the mock judge's settings.
        fn prompt(scenario: &Scenario, answers: &[String], rubric: &str) -> Vec<Message> {
            let settings = JudgeSettings::load(&root().join("judges/mock.toml")).unwrap();
            let rubric = Rubric::load(&root().join(format!("rubrics/{rubric}.toml"))).unwrap();
            let message = |role: &str, text: &str| VisibleMessage {
                role: role.into(),
                content: Some(text.into()),
                reasoning: None,
            };
            let mut visible = Vec::new();
            if let Some(system) = &scenario.system {
                visible.push(message("system", system));
            }
            for (turn, answer) in scenario.turns.iter().zip(answers) {
                visible.push(message("user", &turn.user));
                visible.push(message("assistant", answer));
            }
            let identities: Vec<Identity> = ["sim-swift", "sim-burst", "sim-flaky", "sim-thinker"]
                .iter()
                .map(|m| Identity {
                    provider: m.to_string(),
                    model: m.to_string(),
                    label: m.to_string(),
                    host: Some("builtin-mock".into()),
                })
                .collect();
            let terms = redaction_terms(&identities, &settings.redact, settings.builtin_redactions);
            let transcript = blind(&visible, &Redactor::new(terms), settings.include_reasoning);
            build_messages(
                &settings,
                &rubric,
                &transcript,
                &opaque_label("conversation-1"),
            )
        }

        fn judge() -> Profile {
            builtin_config("mock-judge", 0).profiles.remove(0)
        }

        fn verdict(messages: &[Message], index: &ScenarioIndex, replicate: u32) -> Value {
            let key = request_key(0, "mock-judge", messages, replicate);
            serde_json::from_str(&answer(&judge(), key, messages, index, None)).unwrap()
        }

        /// The mean score over every criterion and `n` replicates.
        fn mean(messages: &[Message], index: &ScenarioIndex, n: u32) -> f64 {
            let mut all = Vec::new();
            for r in 0..n {
                let v = verdict(messages, index, r);
                all.extend(
                    v["scores"]
                        .as_object()
                        .unwrap()
                        .values()
                        .map(|s| s.as_i64().unwrap()),
                );
            }
            all.iter().sum::<i64>() as f64 / all.len() as f64
        }

        #[test]
        fn every_reference_conversation_is_matched_and_graded_high() {
            let scenarios = scenarios();
            let index = ScenarioIndex::new(&scenarios);
            for s in &scenarios {
                let messages = prompt(s, &references(s), "multiturn-quality");
                let grading = grade::grade(&index, &messages)
                    .unwrap_or_else(|| panic!("{}: not matched", s.id));
                assert_eq!(grading.turns.len(), s.turns.len(), "{}", s.id);
                assert!(
                    grading
                        .turns
                        .iter()
                        .all(|(_, f)| *f == grade::Finding::Exact),
                    "{}: {grading:?}",
                    s.id
                );
                let v = verdict(&messages, &index, 0);
                assert_eq!(v["completed"], true, "{}", s.id);
                assert!(mean(&messages, &index, 4) >= 4.6, "{}", s.id);
            }
        }

        #[test]
        fn a_reference_conversation_scores_above_defective_ones_of_the_same_scenario() {
            let scenarios = scenarios();
            let index = ScenarioIndex::new(&scenarios);
            let s = scenarios
                .iter()
                .find(|s| s.id == "struct-invoice-extraction")
                .unwrap();
            let refs = references(s);
            let last = refs.len() - 1;
            let with = |turn: usize, answer: String| {
                let mut answers = refs.clone();
                answers[turn] = answer;
                prompt(s, &answers, "multiturn-quality")
            };
            let reference = mean(&prompt(s, &refs, "multiturn-quality"), &index, 16);
            let fenced = mean(&with(last, defect::fence(&refs[last])), &index, 16);
            let (dropped, _) = defect::drop_top_level_key(&refs[last], 2).unwrap();
            let missing = mean(&with(last, dropped), &index, 16);
            // Turn 3 ignores the switch to ISO dates: it repeats turn 2's answer.
            let stale = mean(&with(2, refs[1].clone()), &index, 16);
            let stale_final = mean(&with(last, refs[last - 1].clone()), &index, 16);
            let empty = mean(&with(last, "I'm not sure.".into()), &index, 16);
            assert!(reference > fenced, "{reference} {fenced}");
            assert!(fenced > missing, "{fenced} {missing}");
            assert!(reference - stale >= 0.5, "{reference} {stale}");
            assert!(
                missing > stale_final && stale > stale_final,
                "{missing} {stale} {stale_final}"
            );
            assert!(stale_final > empty, "{stale_final} {empty}");

            // The criteria the defect touches are the ones that drop.
            let v = verdict(&with(2, refs[1].clone()), &index, 0);
            assert!(
                v["scores"]["correction_handling"].as_i64().unwrap() <= 3,
                "{v}"
            );
            assert!(
                v["rationale"]
                    .as_str()
                    .unwrap()
                    .contains("turn 3: repeats the answer to turn 2"),
                "{v}"
            );
            let v = verdict(
                &with(last, defect::drop_top_level_key(&refs[last], 2).unwrap().0),
                &index,
                0,
            );
            assert!(
                v["scores"]["final_answer_usability"].as_i64().unwrap() <= 4,
                "{v}"
            );
            assert_eq!(v["completed"], false, "{v}");
        }

        #[test]
        fn replicates_differ_a_little_and_the_same_key_answers_the_same() {
            let scenarios = scenarios();
            let index = ScenarioIndex::new(&scenarios);
            let s = &scenarios[0];
            let mut answers = references(s);
            answers[2] = answers[1].clone();
            let messages = prompt(s, &answers, "multiturn-quality");
            let key = request_key(0, "mock-judge", &messages, 0);
            assert_eq!(
                answer(&judge(), key, &messages, &index, None),
                answer(&judge(), key, &messages, &index, None)
            );
            let distinct: std::collections::HashSet<String> = (0..12)
                .map(|r| verdict(&messages, &index, r)["scores"].to_string())
                .collect();
            assert!(distinct.len() > 1, "replicates are not all identical");
            // Noise is small: a mid-range criterion moves by at most one step or so.
            let spread: Vec<i64> = (0..12)
                .map(|r| {
                    verdict(&messages, &index, r)["scores"]["correction_handling"]
                        .as_i64()
                        .unwrap()
                })
                .collect();
            let (lo, hi) = (spread.iter().min().unwrap(), spread.iter().max().unwrap());
            assert!(hi - lo <= 2, "{spread:?}");
        }

        #[test]
        fn an_unmatched_transcript_gets_the_middle_of_the_scale_and_says_why() {
            let scenarios = scenarios();
            let (invoice, others): (Vec<Scenario>, Vec<Scenario>) = scenarios
                .into_iter()
                .partition(|s| s.id == "struct-invoice-extraction");
            let messages = prompt(&invoice[0], &references(&invoice[0]), "support-tone");
            // No scenarios at all, and scenarios that do not include this one.
            for index in [ScenarioIndex::default(), ScenarioIndex::new(&others)] {
                let v = verdict(&messages, &index, 0);
                assert_eq!(v["scores"], json!({"tone": 3, "concision": 3}), "{v}");
                assert_eq!(v["completed"], false);
                assert_eq!(v["rationale"], UNMATCHED);
            }
            // A prompt with no transcript block (a custom template) is not graded either.
            let bare = vec![Message::new(
                "user",
                "Grade it.\nrubric-spec: {\"criteria\":[\"a\"],\"min\":0,\"max\":3}",
            )];
            let v = verdict(&bare, &ScenarioIndex::new(&others), 0);
            assert_eq!(v["scores"], json!({"a": 1}), "{v}");
            assert_eq!(v["rationale"], UNMATCHED);
        }
    }
}
