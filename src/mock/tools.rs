//! The mock calls tools: a request that offers `tools` is answered, on a share of
//! requests per profile, with one or more tool calls instead of text, streamed in the
//! OpenAI delta format (the first delta of a call carries its id and name, later deltas
//! carry pieces of the arguments) or whole in a non-streamed body. Defects per profile:
//! arguments cut short (not JSON) and a name the request never offered.
//!
//! Everything is drawn from the request's key, so the same seed and request give the same
//! calls on every run.

use crate::draw::Draw;
use serde_json::{Value, json};

use super::plan::{Piece, PieceKind, Plan};

pub use super::profile::ToolBehaviour;

/// An offered tool: its name and the properties its parameters declare.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool {
    pub name: String,
    pub properties: Vec<String>,
}

/// The function tools of a request's `tools` list; anything else is skipped.
pub fn offered(tools: &[Value]) -> Vec<OfferedTool> {
    tools
        .iter()
        .filter_map(|t| {
            let f = t.get("function")?;
            let name = f.get("name")?.as_str()?.to_string();
            let properties = f
                .pointer("/parameters/properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            Some(OfferedTool { name, properties })
        })
        .collect()
}

/// Turns a planned text answer into tool calls, on `call_rate` of the requests: the
/// content pieces are replaced by call pieces at the same pace (reasoning is kept), the
/// finish reason becomes `tool_calls` and the completion tokens count the calls.
pub fn apply(plan: &mut Plan, behaviour: &ToolBehaviour, key: [u8; 32], tools: &[OfferedTool]) {
    if tools.is_empty() || plan.fault.is_some() {
        return;
    }
    // Its own stream of the key: timings and defects stay as planned.
    let mut seed = key;
    seed[0] ^= 0x7a;
    let mut rng = Draw::from_seed(seed);
    if rng.unit() >= behaviour.call_rate {
        return;
    }
    let n = rng.int(1, i64::from(behaviour.max_calls.max(1))) as usize;
    let mut calls = Vec::with_capacity(n);
    for i in 0..n {
        let tool = &tools[rng.index(tools.len())];
        let mut name = tool.name.clone();
        if rng.unit() < behaviour.unknown_name {
            name.push_str("_v2");
        }
        let args: serde_json::Map<String, Value> = tool
            .properties
            .iter()
            .map(|p| (p.clone(), json!(format!("{p}-{}", rng.int(1, 99)))))
            .collect();
        let mut arguments = Value::Object(args).to_string();
        if rng.unit() < behaviour.bad_arguments {
            // Cut at a character boundary: property names come from the request.
            let half = arguments.chars().count() / 2;
            let cut = arguments
                .char_indices()
                .nth(half)
                .map_or(arguments.len(), |(i, _)| i);
            arguments.truncate(cut);
        }
        let id = format!("call_{}_{i}", hex(&key[..6]));
        calls.push((i as u32, id, name, arguments));
    }

    let times: Vec<f64> = plan
        .pieces
        .iter()
        .filter(|p| matches!(p.kind, PieceKind::Content(_)))
        .map(|p| p.at_ms)
        .collect();
    let start = times.first().copied().unwrap_or(plan.end_ms);
    let step = match times.len() {
        0 | 1 => 5.0,
        k => (times[k - 1] - start) / (k - 1) as f64,
    };
    plan.pieces
        .retain(|p| !matches!(p.kind, PieceKind::Content(_)));
    let mut t = start;
    let mut tokens = 0;
    for (index, id, name, arguments) in calls {
        plan.pieces.push(Piece {
            at_ms: t,
            kind: PieceKind::ToolStart { index, id, name },
        });
        tokens += 4;
        let chars: Vec<char> = arguments.chars().collect();
        for part in chars.chunks(behaviour.chars_per_delta.max(1) as usize) {
            t += step;
            tokens += 1;
            plan.pieces.push(Piece {
                at_ms: t,
                kind: PieceKind::ToolArguments {
                    index,
                    text: part.iter().collect(),
                },
            });
        }
        t += step;
    }
    plan.end_ms = plan.end_ms.max(t);
    if plan.nominal_ttft_ms.is_none() {
        plan.nominal_ttft_ms = Some(start);
    }
    plan.finish_reason = "tool_calls";
    plan.completion_tokens = plan.reasoning_tokens + tokens;
}

/// The delta a tool piece is streamed as (`None` for other pieces).
pub fn delta(kind: &PieceKind) -> Option<Value> {
    Some(match kind {
        PieceKind::ToolStart { index, id, name } => json!({"tool_calls": [{
            "index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": ""}
        }]}),
        PieceKind::ToolArguments { index, text } => json!({"tool_calls": [{
            "index": index, "function": {"arguments": text}
        }]}),
        _ => return None,
    })
}

/// The `tool_calls` of a whole (non-streamed) message, or `None` without calls.
pub fn whole_calls(pieces: &[Piece]) -> Option<Value> {
    let mut calls: Vec<Value> = Vec::new();
    for p in pieces {
        match &p.kind {
            PieceKind::ToolStart { id, name, .. } => calls.push(json!({
                "id": id, "type": "function", "function": {"name": name, "arguments": ""}
            })),
            PieceKind::ToolArguments { text, .. } => {
                if let Some(Value::String(args)) = calls
                    .last_mut()
                    .and_then(|c| c.pointer_mut("/function/arguments"))
                {
                    args.push_str(text);
                }
            }
            _ => {}
        }
    }
    (!calls.is_empty()).then_some(Value::Array(calls))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::plan::Fault;
    use crate::mock::profile::CacheReport;

    fn text_plan() -> Plan {
        Plan {
            fault: None,
            pieces: vec![
                Piece {
                    at_ms: 0.0,
                    kind: PieceKind::Role,
                },
                Piece {
                    at_ms: 100.0,
                    kind: PieceKind::Content("a ".into()),
                },
                Piece {
                    at_ms: 110.0,
                    kind: PieceKind::Content("b".into()),
                },
            ],
            end_ms: 120.0,
            finish_reason: "stop",
            prompt_tokens: 10,
            completion_tokens: 2,
            reasoning_tokens: 0,
            cached_tokens: 0,
            cache: CacheReport::Openai,
            reasoning_field: "reasoning_content",
            nominal_ttft_ms: Some(100.0),
        }
    }

    fn tools() -> Vec<OfferedTool> {
        offered(&[
            json!({"type":"function","function":{"name":"read_file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}),
            json!({"type":"function","function":{"name":"search","parameters":{"properties":{"pattern":{},"glob":{}}}}}),
            json!({"type":"retrieval"}),
        ])
    }

    #[test]
    fn calls_replace_the_text_and_stream_as_deltas_that_rebuild_them() {
        let always = ToolBehaviour {
            call_rate: 1.0,
            max_calls: 3,
            ..ToolBehaviour::default()
        };
        let offered = tools();
        assert_eq!(offered.len(), 2);
        let mut seen_several = false;
        for k in 0..40u8 {
            let mut plan = text_plan();
            apply(&mut plan, &always, [k; 32], &offered);
            assert_eq!(plan.finish_reason, "tool_calls");
            assert!(
                !plan
                    .pieces
                    .iter()
                    .any(|p| matches!(p.kind, PieceKind::Content(_)))
            );
            let calls = whole_calls(&plan.pieces).unwrap();
            let calls = calls.as_array().unwrap();
            seen_several |= calls.len() > 1;
            for c in calls {
                let name = c.pointer("/function/name").unwrap().as_str().unwrap();
                assert!(["read_file", "search"].contains(&name));
                let args: Value = serde_json::from_str(
                    c.pointer("/function/arguments").unwrap().as_str().unwrap(),
                )
                .unwrap();
                assert!(args.is_object());
            }
            let times: Vec<f64> = plan.pieces.iter().map(|p| p.at_ms).collect();
            assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
            assert!(plan.end_ms >= *times.last().unwrap());
            assert!(
                plan.pieces
                    .iter()
                    .filter_map(|p| delta(&p.kind))
                    .all(|d| d["tool_calls"][0]["index"].is_u64())
            );
        }
        assert!(seen_several);
    }

    #[test]
    fn arguments_cut_short_stay_text_whatever_the_property_names() {
        let broken = ToolBehaviour {
            call_rate: 1.0,
            max_calls: 1,
            bad_arguments: 1.0,
            ..ToolBehaviour::default()
        };
        let offered = offered(&[
            json!({"type":"function","function":{"name":"é","parameters":{"properties":{"çhemin→ñ":{},"日本語":{}}}}}),
        ]);
        for k in 0..20u8 {
            let mut plan = text_plan();
            apply(&mut plan, &broken, [k; 32], &offered);
            let calls = whole_calls(&plan.pieces).unwrap();
            let args = calls[0]
                .pointer("/function/arguments")
                .unwrap()
                .as_str()
                .unwrap();
            assert!(serde_json::from_str::<Value>(args).is_err(), "{args}");
        }
    }

    #[test]
    fn defects_and_rates_follow_the_profile() {
        let broken = ToolBehaviour {
            call_rate: 1.0,
            max_calls: 1,
            bad_arguments: 1.0,
            unknown_name: 1.0,
            ..ToolBehaviour::default()
        };
        let mut plan = text_plan();
        apply(&mut plan, &broken, [3; 32], &tools());
        let calls = whole_calls(&plan.pieces).unwrap();
        let args = calls[0]
            .pointer("/function/arguments")
            .unwrap()
            .as_str()
            .unwrap();
        assert!(serde_json::from_str::<Value>(args).is_err(), "{args}");
        assert!(
            calls[0]
                .pointer("/function/name")
                .unwrap()
                .as_str()
                .unwrap()
                .ends_with("_v2")
        );

        let never = ToolBehaviour {
            call_rate: 0.0,
            ..ToolBehaviour::default()
        };
        let mut plan = text_plan();
        apply(&mut plan, &never, [3; 32], &tools());
        assert_eq!(plan.finish_reason, "stop");
        // A fault keeps its planned shape; no tools offered, no calls.
        let mut plan = text_plan();
        plan.fault = Some(Fault::Length);
        apply(&mut plan, &broken, [3; 32], &tools());
        assert_eq!(plan.finish_reason, "stop");
        let mut plan = text_plan();
        apply(&mut plan, &broken, [3; 32], &[]);
        assert_eq!(plan.finish_reason, "stop");
    }
}
