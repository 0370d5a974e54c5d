//! The mock judge: a profile with a `judge` table (or a model named `mock-judge…`) answers
//! judge prompts with rubric-shaped JSON drawn from the seed, and injects the faults a
//! real judge shows, so every path of `turnbench judge` can be tested offline.
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
//! ```

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::plan::{Fault, Piece, PieceKind, Plan};
use super::profile::{Delay, MockConfig, Profile};
use crate::store::records::Message;

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
}

/// Whether this profile answers as a judge.
pub fn is_judge(profile: &Profile) -> bool {
    profile.judge.is_some() || profile.model.starts_with("mock-judge")
}

/// The built-in mock judge used by `judges/mock.toml` (`builtin_mock = true`).
pub fn builtin_config(model: &str, seed: u64) -> MockConfig {
    let mut p = Profile::quick(model, 0.0, 0.0);
    p.ttft_ms = Delay::Lognormal {
        median: 150.0,
        sigma: 0.3,
    };
    p.judge = Some(JudgeFaultRates::default());
    MockConfig {
        seed,
        profiles: vec![p],
        time_scale: 1.0,
    }
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

/// The judge's answer text for a request, drawn from the request's key.
pub fn answer(profile: &Profile, key: [u8; 32], messages: &[Message]) -> String {
    let mut seed = [0u8; 32];
    seed.copy_from_slice(blake3::keyed_hash(&key, b"mock-judge").as_bytes());
    let mut rng = StdRng::from_seed(seed);
    let Some(spec) = find_spec(messages) else {
        return "I cannot find a rubric-spec line in this request, so I cannot score it."
            .to_string();
    };
    let mut scores = Map::new();
    for c in &spec.criteria {
        scores.insert(c.clone(), json!(rng.random_range(spec.min..=spec.max)));
    }
    let mean = scores.values().filter_map(Value::as_i64).sum::<i64>() as f64
        / spec.criteria.len().max(1) as f64;
    let completed = mean >= (spec.min + spec.max) as f64 / 2.0;

    let rates = profile.judge.unwrap_or_default();
    let u: f64 = rng.random();
    let table = [
        rates.invalid_json,
        rates.out_of_range,
        rates.missing_criterion,
        rates.prose,
    ];
    // The first defect whose cumulative probability passes the draw, if any.
    let mut acc = 0.0;
    let defect = table.iter().position(|p| {
        acc += p;
        u < acc
    });
    let (invalid, out_of_range, missing, prose) = (
        defect == Some(0),
        defect == Some(1),
        defect == Some(2),
        defect == Some(3),
    );
    if out_of_range && let Some(first) = spec.criteria.first() {
        let bad = if rng.random_bool(0.5) {
            spec.max + 1
        } else {
            spec.min - 1
        };
        scores.insert(first.clone(), json!(bad));
    } else if missing && let Some(last) = spec.criteria.last() {
        scores.remove(last);
    }
    let body = json!({
        "scores": scores,
        "completed": completed,
        "rationale": "Simulated judgment from the mock judge; it did not read the transcript.",
    })
    .to_string();
    if invalid {
        body[..body.len() / 2].to_string()
    } else if prose {
        format!("Here is my assessment.\n```json\n{body}\n```\nI hope this helps.")
    } else {
        body
    }
}

/// Replaces a planned scenario answer with a judge answer, sent at the planned first-token
/// time in one piece; transport faults already drawn in the plan stay as they are.
pub fn answer_as_judge(plan: &mut Plan, profile: &Profile, key: [u8; 32], messages: &[Message]) {
    let mut text = answer(profile, key, messages);
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

    fn judge_profile(rates: JudgeFaultRates) -> Profile {
        let mut p = Profile::quick("mock-judge", 10.0, 0.0);
        p.judge = Some(rates);
        p
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
            let text = answer(&p, [i; 32], &prompt());
            let v: Value = serde_json::from_str(&text).unwrap();
            for c in ["a", "b"] {
                let s = v["scores"][c].as_i64().unwrap();
                assert!((1..=5).contains(&s), "{text}");
            }
            assert!(v["completed"].is_boolean());
        }
        assert_eq!(
            answer(&p, [1; 32], &prompt()),
            answer(&p, [1; 32], &prompt())
        );
    }

    #[test]
    fn injects_each_defect() {
        let rates = |f: fn(&mut JudgeFaultRates)| {
            let mut r = JudgeFaultRates::default();
            f(&mut r);
            judge_profile(r)
        };
        let text = answer(&rates(|r| r.invalid_json = 1.0), [2; 32], &prompt());
        assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");
        let text = answer(&rates(|r| r.out_of_range = 1.0), [2; 32], &prompt());
        let a = serde_json::from_str::<Value>(&text).unwrap()["scores"]["a"]
            .as_i64()
            .unwrap();
        assert!(a == 0 || a == 6, "{text}");
        let text = answer(&rates(|r| r.missing_criterion = 1.0), [2; 32], &prompt());
        let v: Value = serde_json::from_str(&text).unwrap();
        assert!(v["scores"].get("b").is_none(), "{text}");
        let text = answer(&rates(|r| r.prose = 1.0), [2; 32], &prompt());
        assert!(
            text.starts_with("Here is") && text.contains("```json"),
            "{text}"
        );
    }

    #[test]
    fn judge_models_are_recognised_by_name_or_table() {
        assert!(is_judge(&Profile::quick("mock-judge-x", 1.0, 1.0)));
        assert!(!is_judge(&Profile::quick("mock-fast", 1.0, 1.0)));
        assert!(is_judge(&judge_profile(JudgeFaultRates::default())));
    }
}
