//! One record of a transcript file → a conversation ready to store, or the problem with
//! it: the field as a JSON path in the record's own shape (`messages[3].timing.e2e_ms`,
//! `conversations[2].from`) and what is wrong.
//!
//! Pure: no store, no file. Reading a record's shape into the exchange format is
//! [`super::format`]'s; everything after (turns, outcomes, identity, defaults) is here, once
//! for every shape.

use super::format::{Record, read_any, read_record_as};
use super::responses::Call;
use super::shape::Normalised;
use super::shape::{Dropped, MessagePaths, Shape, ShapeFilter, check_context, check_usage};
use crate::chat::Message;
use crate::exchange::{ConversationLine, MessageLine, Role, TimingLine};
pub use crate::jsonl::LineProblem;
use crate::outcome::{ConversationOutcome, TurnOutcome};
use crate::store::records::{ContextSizes, ConversationRecord, TurnRecord, TurnResult, Usage};

/// A valid conversation, built whole on the reader thread; the writer only sets the ids
/// the store gives it (run, target, scenario link) and the repeat when none was given.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedConversation {
    pub provider: String,
    pub model: String,
    pub label: String,
    /// As given; `None`: numbered by the importer.
    pub repeat: Option<u32>,
    /// Each turn's prompt as stored (JSON), serialised here rather than on the writer.
    pub prompts_json: Vec<String>,
    /// `uid` is the given `id`, else a hash of the content; `run_id` and `target_id` are 0
    /// until the writer sets them.
    pub record: ConversationRecord,
    /// What the record carried that is not stored (`--lossy`, `redacted_thinking`).
    pub dropped: Dropped,
}

/// Used when neither the line nor a default names the provider or the model.
pub const UNKNOWN: &str = "unknown";

/// What fills in the fields a record leaves out (`import --provider --model --scenario`).
/// A record's own fields win. Defaults are not part of a conversation's identity.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Defaults {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub scenario: Option<String>,
}

/// Parses and validates one line of any shape, without defaults. `scratch` is reused for
/// hashing.
pub fn prepare_line(
    line: &[u8],
    scratch: &mut Vec<u8>,
) -> Result<PreparedConversation, LineProblem> {
    prepare_record(
        line,
        ShapeFilter::Auto,
        false,
        &Defaults::default(),
        scratch,
    )
    .map(|(_, c)| c)
}

/// Reads one record (a line or an array element) as `format` allows, and prepares it.
pub fn prepare_record(
    text: &[u8],
    format: ShapeFilter,
    lossy: bool,
    defaults: &Defaults,
    scratch: &mut Vec<u8>,
) -> Result<(Shape, PreparedConversation), LineProblem> {
    prepare_normalised(read_record_as(text, format, lossy)?, defaults, scratch)
}

/// A record prepared, or a call held until the end of the file for its chain.
pub(super) enum Read {
    Prepared(Shape, Box<PreparedConversation>),
    Held(Box<Call>),
    /// Model calls held until the end of the file to be grouped by trace.
    Pieces(super::grouped::Pieces),
}

/// Reads one record as `format` allows and prepares it, unless it is a call of a chain.
pub(super) fn read_or_hold(
    text: &[u8],
    format: ShapeFilter,
    lossy: bool,
    defaults: &Defaults,
    scratch: &mut Vec<u8>,
) -> Result<Read, LineProblem> {
    match read_any(text, format, lossy)? {
        Record::Whole(n) => {
            prepare_normalised(n, defaults, scratch).map(|(s, c)| Read::Prepared(s, Box::new(c)))
        }
        Record::Call(call) => Ok(Read::Held(Box::new(call))),
        Record::Pieces(pieces) => Ok(Read::Pieces(pieces)),
    }
}

/// Prepares a normalised record.
pub(super) fn prepare_normalised(
    normalised: Normalised,
    defaults: &Defaults,
    scratch: &mut Vec<u8>,
) -> Result<(Shape, PreparedConversation), LineProblem> {
    let mut prepared = prepare(normalised.line, &normalised.paths, defaults, scratch)?;
    prepared.dropped = normalised.dropped;
    Ok((normalised.shape, prepared))
}

/// Counts the visible tokens of every answer of `conversations` (o200k_base, as collect
/// counts a streamed answer; no answer, no count), on every core: counting is most of an
/// import's CPU, and the writer thread is busy with the previous batch meanwhile.
pub fn count_visible_tokens<'a>(conversations: impl Iterator<Item = &'a mut PreparedConversation>) {
    use rayon::prelude::*;
    let mut all: Vec<&mut PreparedConversation> = conversations.collect();
    all.par_iter_mut()
        .flat_map_iter(|c| c.record.turns.iter_mut())
        .for_each(|turn| turn.visible_tokens = turn.answer.as_deref().map(crate::tokens::count));
}

/// Checks a normalised conversation and turns it into turns (one per assistant message).
/// `paths` names its messages in the record's own shape.
pub fn prepare(
    line: ConversationLine,
    paths: &MessagePaths,
    defaults: &Defaults,
    scratch: &mut Vec<u8>,
) -> Result<PreparedConversation, LineProblem> {
    check_fields(&line)?;
    if line.messages.is_empty() {
        return Err(LineProblem::new(paths.list(), "no messages"));
    }
    let given_outcome = line
        .outcome
        .as_deref()
        .map(parse_conversation_outcome)
        .transpose()?;
    // Hashed before the messages are taken apart (moved, not copied, into turns), and
    // before the defaults: they never change which conversation a record is.
    let uid = match &line.id {
        Some(id) => id.clone(),
        None => content_hash(&line, scratch),
    };
    let ConversationLine {
        provider,
        model,
        label,
        scenario,
        repeat,
        messages,
        ..
    } = line;
    let turns = build_turns(messages, paths)?;
    let outcome = conversation_outcome(&turns, given_outcome, paths)?;
    let prompts_json = turns
        .turns
        .iter()
        // Messages are strings and string maps already parsed from JSON: serialising them cannot fail.
        .map(|t| serde_json::to_string(&t.prompt).expect("messages serialise"))
        .collect();
    let or_default =
        |given: Option<String>, default: &Option<String>| given.or_else(|| default.clone());
    let provider = or_default(provider, &defaults.provider).unwrap_or_else(|| UNKNOWN.to_string());
    let model = or_default(model, &defaults.model).unwrap_or_else(|| UNKNOWN.to_string());
    let label = label.unwrap_or_else(|| model.clone());
    Ok(PreparedConversation {
        provider,
        model,
        label,
        repeat,
        prompts_json,
        record: ConversationRecord {
            uid,
            run_id: 0,
            target_id: 0,
            scenario: or_default(scenario, &defaults.scenario),
            scenario_ref: None,
            repeat: repeat.unwrap_or(0),
            outcome,
            started_at: None,
            ended_at: None,
            turns: turns.turns,
            attempts: Vec::new(),
            trailing: turns.trailing,
        },
        dropped: Dropped::default(),
    })
}

fn check_fields(line: &ConversationLine) -> Result<(), LineProblem> {
    for (name, value) in [
        ("id", &line.id),
        ("provider", &line.provider),
        ("model", &line.model),
        ("label", &line.label),
        ("scenario", &line.scenario),
    ] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            return Err(LineProblem::new(name, "empty; leave the field out instead"));
        }
    }
    if line.repeat == Some(0) {
        return Err(LineProblem::new("repeat", "0; repeats count from 1"));
    }
    Ok(())
}

/// A conversation's messages as turns.
struct Turns {
    turns: Vec<TurnRecord>,
    /// Messages after the last answer.
    trailing: Vec<Message>,
    /// The assistant message whose turn ended the conversation, its class, and the field
    /// that says so.
    ended: Option<(usize, TurnOutcome, &'static str)>,
}

fn build_turns(messages: Vec<MessageLine>, paths: &MessagePaths) -> Result<Turns, LineProblem> {
    let mut turns: Vec<TurnRecord> = Vec::new();
    let mut pending: Vec<Message> = Vec::new();
    let mut ended: Option<(usize, TurnOutcome, &'static str)> = None;
    for (i, m) in messages.into_iter().enumerate() {
        if m.role != Role::Assistant {
            if let Some(name) = m.assistant_field() {
                return Err(LineProblem::new(
                    paths.field(i, name),
                    format!("only assistant messages carry {name}"),
                ));
            }
            if m.tool_call_id.is_some() && m.role != Role::Tool {
                return Err(LineProblem::new(
                    paths.field(i, "tool_call_id"),
                    format!(
                        "on a {} message; only tool messages answer a call",
                        m.role.as_str()
                    ),
                ));
            }
            let Some(content) = m.content else {
                return Err(LineProblem::new(
                    paths.field(i, "content"),
                    format!("missing; a {} message needs text", m.role.as_str()),
                ));
            };
            let mut message = Message::new(m.role.as_str(), content);
            message.tool_call_id = m.tool_call_id;
            pending.push(message);
            continue;
        }
        if let Some((j, outcome, field)) = ended {
            return Err(LineProblem::new(
                paths.field(j, field),
                format!(
                    "this turn failed ({outcome}), which ends a conversation, but {} \
                     is a later answer; a failed turn must be the last assistant message",
                    paths.message(i)
                ),
            ));
        }
        let explicit_outcome = m.outcome.is_some();
        let at = |field: &str| paths.field(i, field);
        let turn = prepare_turn(&at, m, std::mem::take(&mut pending))?;
        let outcome = turn.outcome();
        if !outcome.lets_conversation_continue(turn.has_visible_text()) {
            let field = if explicit_outcome {
                "outcome"
            } else if outcome == TurnOutcome::Truncated {
                "finish_reason"
            } else {
                "content"
            };
            ended = Some((i, outcome, field));
        }
        turns.push(turn);
    }
    if turns.is_empty() {
        return Err(LineProblem::new(
            paths.list(),
            "no assistant message; a conversation needs at least one answer",
        ));
    }
    Ok(Turns {
        turns,
        trailing: pending,
        ended,
    })
}

/// The given outcome when it agrees with a failed turn, else the one the turns make.
fn conversation_outcome(
    turns: &Turns,
    given: Option<ConversationOutcome>,
    paths: &MessagePaths,
) -> Result<ConversationOutcome, LineProblem> {
    let Some(given) = given else {
        let summary: Vec<_> = turns
            .turns
            .iter()
            .map(|t| (t.outcome(), t.has_visible_text()))
            .collect();
        return Ok(ConversationOutcome::from_turns(&summary));
    };
    if let Some((j, failed, _)) = turns.ended
        && given != ConversationOutcome::from_turn(failed)
    {
        return Err(LineProblem::new(
            "outcome",
            format!(
                "\"{given}\", but {} ended the conversation with {failed}; \
                 the conversation's outcome is the class of the turn that ended it",
                paths.message(j)
            ),
        ));
    }
    Ok(given)
}

fn parse_conversation_outcome(s: &str) -> Result<ConversationOutcome, LineProblem> {
    s.parse()
        .map_err(|e: String| LineProblem::new("outcome", e))
}

/// One assistant message as a turn; `at` names its fields.
fn prepare_turn(
    at: &dyn Fn(&str) -> String,
    m: MessageLine,
    prompt: Vec<Message>,
) -> Result<TurnRecord, LineProblem> {
    let outcome = match m.outcome.as_deref() {
        Some(s) => s.parse::<TurnOutcome>().map_err(|_| {
            let names: Vec<_> = TurnOutcome::ALL.iter().map(|o| o.as_str()).collect();
            LineProblem::new(
                at("outcome"),
                format!(
                    "unknown outcome {s:?}; expected one of {}",
                    names.join(", ")
                ),
            )
        })?,
        // As collect classifies a stream: `length` is truncated, no text is an empty answer
        // unless the message called tools (one model call is one turn, whatever it said).
        None if m.finish_reason.as_deref() == Some("length") => TurnOutcome::Truncated,
        None if m.tool_calls.is_some() => TurnOutcome::Ok,
        None if m.content.as_deref().is_none_or(|c| c.trim().is_empty()) => {
            TurnOutcome::EmptyAnswer
        }
        None => TurnOutcome::Ok,
    };
    if m.tool_call_id.is_some() {
        return Err(LineProblem::new(
            at("tool_call_id"),
            "on an assistant message; only tool messages answer a call",
        ));
    }
    if let Some(k) = m
        .tool_calls
        .iter()
        .flatten()
        .position(|c| c.function.name.trim().is_empty())
    {
        return Err(LineProblem::new(
            at(&format!("tool_calls[{k}].function.name")),
            "empty; a tool call names the tool it calls",
        ));
    }
    if outcome == TurnOutcome::Ok && m.content.is_none() && m.tool_calls.is_none() {
        return Err(LineProblem::new(
            at("content"),
            "null, but the turn's outcome is ok; give the answer, or the outcome of the \
             failed turn (for example \"empty_answer\" or \"timeout\")",
        ));
    }
    if let Some(status) = m.http_status
        && !(100..=599).contains(&status)
    {
        return Err(LineProblem::new(
            at("http_status"),
            format!("{status} is not an HTTP status (100–599)"),
        ));
    }
    let timing = m.timing.unwrap_or_default();
    check_timing(&timing, at)?;
    let usage = m.usage.unwrap_or_default();
    check_usage(&usage, at)?;
    if let Some(context) = &m.context {
        check_context(context, outcome == TurnOutcome::ContextOverflow, at)?;
    }
    Ok(TurnRecord {
        result: TurnResult {
            answer: m.content,
            reasoning: m.reasoning,
            finish_reason: m.finish_reason,
            http_status: m.http_status,
            outcome: Some(outcome),
            error: m.error,
            attempts: 1,
            ttft_ms: timing.ttft_ms,
            ttfa_ms: timing.ttfa_ms,
            e2e_ms: timing.e2e_ms,
            usage: Usage {
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
                cached_tokens: usage.cached_tokens,
                reasoning_tokens: usage.reasoning_tokens,
            },
            context: m.context.map(|c| ContextSizes {
                prompt_tokens: c.prompt_tokens,
                window_tokens: c.window_tokens,
                completion_tokens: c.completion_tokens,
            }),
            ..Default::default()
        },
        prompt,
        tool_calls: m.tool_calls.unwrap_or_default(),
        ..Default::default()
    })
}

fn check_timing(t: &TimingLine, at: &dyn Fn(&str) -> String) -> Result<(), LineProblem> {
    for (name, v) in [
        ("ttft_ms", t.ttft_ms),
        ("ttfa_ms", t.ttfa_ms),
        ("e2e_ms", t.e2e_ms),
    ] {
        if let Some(v) = v
            && (v < 0.0 || !v.is_finite())
        {
            return Err(LineProblem::new(
                at(&format!("timing.{name}")),
                format!("{v} is negative; timings are milliseconds from the request start"),
            ));
        }
    }
    let order = [
        (
            "ttft_ms",
            t.ttft_ms,
            "ttfa_ms",
            t.ttfa_ms,
            "the first answer text cannot come before the first token",
        ),
        (
            "ttft_ms",
            t.ttft_ms,
            "e2e_ms",
            t.e2e_ms,
            "the first token cannot come after the end of the stream",
        ),
        (
            "ttfa_ms",
            t.ttfa_ms,
            "e2e_ms",
            t.e2e_ms,
            "the first answer text cannot come after the end of the stream",
        ),
    ];
    for (a, va, b, vb, why) in order {
        if let (Some(va), Some(vb)) = (va, vb)
            && va > vb
        {
            return Err(LineProblem::new(
                at(&format!("timing.{a}")),
                format!("{va} is later than {b} {vb}; {why}"),
            ));
        }
    }
    Ok(())
}

/// Identity of a record without `id`: blake3 of the normalised conversation's canonical
/// JSON (field order and number format fixed by the typed struct), so whitespace, key
/// order, or the shape it came in (ShareGPT, a log, turnbench) do not make a new one.
fn content_hash(line: &ConversationLine, scratch: &mut Vec<u8>) -> String {
    scratch.clear();
    serde_json::to_writer(&mut *scratch, line).expect("a parsed line serialises");
    blake3::hash(scratch).to_hex()[..32].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prep(line: &str) -> Result<PreparedConversation, LineProblem> {
        prepare_line(line.as_bytes(), &mut Vec::new())
    }

    fn problem(line: &str) -> (String, String) {
        let p = prep(line).unwrap_err();
        (p.field, p.problem)
    }

    const GOOD: &str = r#"{"id":"c1","provider":"acme","model":"m1","scenario":"s","repeat":2,
        "messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Q1"},
        {"role":"assistant","content":"A1","reasoning":"r","finish_reason":"stop",
         "timing":{"ttft_ms":10.5,"ttfa_ms":20,"e2e_ms":30},
         "usage":{"prompt_tokens":12,"completion_tokens":3,"cached_tokens":0}},
        {"role":"user","content":"Q2"},{"role":"assistant","content":"A2"},
        {"role":"user","content":"thanks"}]}"#;

    #[test]
    fn timings_are_read_to_the_last_bit() {
        // Exports write the shortest text that reads back as the same f64; serde_json's
        // default parser may land one ULP off, which changed re-exported timings.
        for text in [
            "2.2412036799999998",
            "3.8012657999999995",
            "0.1",
            "19.120367999999998",
        ] {
            let line = GOOD.replace('\n', " ").replace("10.5", text);
            let c = prep(&line).unwrap();
            let want: f64 = text.parse().unwrap();
            assert_eq!(
                c.record.turns[0].ttft_ms.map(f64::to_bits),
                Some(want.to_bits()),
                "{text}"
            );
        }
    }

    #[test]
    fn turns_take_the_messages_before_their_answer() {
        let c = prep(&GOOD.replace('\n', " ")).unwrap();
        assert_eq!(c.record.uid, "c1");
        assert_eq!((c.provider.as_str(), c.label.as_str()), ("acme", "m1"));
        assert_eq!(c.repeat, Some(2));
        assert_eq!(c.record.outcome.as_str(), "completed");
        assert_eq!(c.record.turns.len(), 2);
        assert_eq!(
            c.record.turns[0].prompt,
            vec![
                Message::new("system", "Be brief."),
                Message::new("user", "Q1")
            ]
        );
        assert_eq!(c.record.turns[0].ttft_ms, Some(10.5));
        assert_eq!(c.record.turns[0].usage.cached_tokens, Some(0));
        assert_eq!(c.record.turns[0].usage.reasoning_tokens, None);
        assert_eq!(c.record.turns[1].prompt, vec![Message::new("user", "Q2")]);
        assert_eq!(c.record.turns[1].e2e_ms, None);
        assert_eq!(c.record.trailing, vec![Message::new("user", "thanks")]);
    }

    #[test]
    fn plain_chat_gets_defaults_and_a_stable_hash() {
        let line = r#"{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}]}"#;
        let c = prep(line).unwrap();
        assert_eq!(
            (c.provider.as_str(), c.model.as_str()),
            ("unknown", "unknown")
        );
        assert_eq!(c.record.uid.len(), 32);
        // Same content, other spacing and key order: same identity.
        let spaced = r#"{ "messages": [ {"content": "Hi", "role": "user"},
            {"role": "assistant", "content": "Hello"} ] }"#;
        assert_eq!(prep(spaced).unwrap().record.uid, c.record.uid);
        let other = line.replace("Hello", "Hello!");
        assert_ne!(prep(&other).unwrap().record.uid, c.record.uid);
    }

    #[test]
    fn failed_last_turn_sets_the_outcome() {
        let line = r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"},
            {"role":"user","content":"Q2"},
            {"role":"assistant","content":null,"outcome":"rate_limited","http_status":429,"error":"slow down"}]}"#;
        let c = prep(line).unwrap();
        assert_eq!(c.record.outcome.as_str(), "rate_limited");
        assert_eq!(c.record.turns[1].answer, None);
        assert_eq!(c.record.turns[1].http_status, Some(429));
    }

    #[test]
    fn derived_turn_outcomes() {
        let c = prep(r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"cut","finish_reason":"length"},{"role":"user","content":"go on"},{"role":"assistant","content":"more"}]}"#).unwrap();
        assert_eq!(c.record.turns[0].outcome, Some(TurnOutcome::Truncated));
        assert_eq!(c.record.outcome.as_str(), "completed");
        let c = prep(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":""}]}"#,
        )
        .unwrap();
        assert_eq!(c.record.outcome.as_str(), "empty_answer");
    }

    #[test]
    fn given_interrupted_is_kept() {
        let c = prep(r#"{"outcome":"interrupted","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#).unwrap();
        assert_eq!(c.record.outcome.as_str(), "interrupted");
    }

    #[test]
    fn not_json() {
        let (field, p) = problem("{\"messages\": [");
        assert_eq!(field, "");
        assert!(p.starts_with("not JSON"), "{p}");
        let (_, p) = problem("hello");
        assert!(p.starts_with("not JSON: expected value (column 1)"), "{p}");
    }

    #[test]
    fn wrong_types_name_their_path() {
        let (field, p) = problem(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A","timing":{"e2e_ms":"fast"}}]}"#,
        );
        assert_eq!(field, "messages[1].timing.e2e_ms");
        assert!(p.starts_with("wrong type: string \"fast\""), "{p}");
        let (field, _) = problem(r#"{"repeat":"one","messages":[]}"#);
        assert_eq!(field, "repeat");
        let (field, p) = problem(r#"{"messages":{"role":"user"}}"#);
        assert_eq!(field, "messages");
        assert_eq!(p, "wrong type: object, expected an array");
        let (field, p) = problem(r#"[1,2]"#);
        assert_eq!(field, "");
        assert_eq!(
            p,
            "expected a JSON object (one conversation per line or array element), found an array"
        );
        let (field, p) = problem(r#"{"messages":["hi"]}"#);
        assert_eq!(
            (field.as_str(), p.as_str()),
            (
                "messages[0]",
                "wrong type: string \"hi\", expected an object"
            )
        );
        let (field, p) = problem(r#"{"messages":[{"content":"Q"}]}"#);
        assert_eq!(
            (field.as_str(), p.as_str()),
            ("messages[0].role", "missing")
        );
        let (field, _) = problem(r#"{"messages":[{"role":"user","content":5}]}"#);
        assert_eq!(field, "messages[0].content");
        let (field, _) = problem(
            r#"{"messages":[{"role":"assistant","content":"a","usage":{"prompt_tokens":1.5}}]}"#,
        );
        assert_eq!(field, "messages[0].usage.prompt_tokens");
    }

    #[test]
    fn missing_or_empty_messages() {
        assert_eq!(problem(r#"{"id":"x"}"#).0, "messages");
        assert_eq!(
            problem(r#"{"messages":[]}"#),
            ("messages".into(), "no messages".into())
        );
        let (field, p) = problem(r#"{"messages":[{"role":"user","content":"Q"}]}"#);
        assert_eq!(field, "messages");
        assert!(p.contains("no assistant message"), "{p}");
    }

    #[test]
    fn unknown_role() {
        let (field, p) = problem(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"developer","content":"x"}]}"#,
        );
        assert_eq!(field, "messages[1].role");
        assert!(p.contains("unknown role \"developer\""), "{p}");
    }

    #[test]
    fn tool_results_are_prompt_text() {
        let c = prep(r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"calling"},{"role":"tool","content":"42","tool_call_id":"c1"},{"role":"assistant","content":"It is 42."}]}"#).unwrap();
        let mut result = Message::new("tool", "42");
        result.tool_call_id = Some("c1".into());
        assert_eq!(c.record.turns[1].prompt, vec![result]);
        assert_eq!(
            c.prompts_json[1],
            r#"[{"role":"tool","content":"42","tool_call_id":"c1"}]"#
        );
        let (field, _) = problem(
            r#"{"messages":[{"role":"user","content":"Q","tool_call_id":"c1"},{"role":"assistant","content":"A"}]}"#,
        );
        assert_eq!(field, "messages[0].tool_call_id");
        let (field, _) =
            problem(r#"{"messages":[{"role":"tool"},{"role":"assistant","content":"A"}]}"#);
        assert_eq!(field, "messages[0].content");
    }

    #[test]
    fn an_answer_that_only_calls_tools_is_an_ok_turn_that_keeps_its_calls() {
        let c = prep(r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":{"p":1}}}]},{"role":"tool","content":"a.py","tool_call_id":"c1"},{"role":"assistant","content":"Done."}]}"#).unwrap();
        assert_eq!(c.record.outcome, ConversationOutcome::Completed);
        let first = &c.record.turns[0];
        assert_eq!(
            (first.outcome(), first.answer.as_deref()),
            (TurnOutcome::Ok, None)
        );
        assert_eq!(first.tool_calls[0].function.name, "ls");
        assert_eq!(first.tool_calls[0].function.arguments, r#"{"p":1}"#);
        assert_eq!(c.record.turns.len(), 2);
        // Without calls, the same null answer is still an empty answer that ends it.
        let (field, why) = problem(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":null},{"role":"user","content":"Q2"},{"role":"assistant","content":"A"}]}"#,
        );
        assert_eq!(field, "messages[1].content", "{why}");
        let (field, _) = problem(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":" "}}]}]}"#,
        );
        assert_eq!(field, "messages[1].tool_calls[0].function.name");
    }

    fn with(line: &str, defaults: &Defaults) -> PreparedConversation {
        prepare_record(
            line.as_bytes(),
            ShapeFilter::Auto,
            false,
            defaults,
            &mut Vec::new(),
        )
        .unwrap()
        .1
    }

    #[test]
    fn defaults_fill_in_what_a_line_leaves_out_and_never_change_its_identity() {
        let plain = r#"{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}]}"#;
        let defaults = Defaults {
            provider: Some("acme".into()),
            model: Some("m1".into()),
            scenario: Some("support".into()),
        };
        let c = with(plain, &defaults);
        assert_eq!(
            (c.provider.as_str(), c.model.as_str(), c.label.as_str()),
            ("acme", "m1", "m1")
        );
        assert_eq!(c.record.scenario.as_deref(), Some("support"));
        assert_eq!(c.record.uid, prep(plain).unwrap().record.uid);
        // The line's own fields win.
        let own = r#"{"provider":"nimbus","scenario":"s2","messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}]}"#;
        let c = with(own, &defaults);
        assert_eq!((c.provider.as_str(), c.model.as_str()), ("nimbus", "m1"));
        assert_eq!(c.record.scenario.as_deref(), Some("s2"));
        // Without defaults: unknown, and no scenario.
        let c = prep(plain).unwrap();
        assert_eq!((c.provider.as_str(), c.model.as_str()), (UNKNOWN, UNKNOWN));
        assert_eq!(c.record.scenario, None);
    }

    #[test]
    fn one_conversation_in_any_shape_is_one_identity() {
        let chat = r#"{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}]}"#;
        let share = r#"{"model":"m","system":"S","conversations":[{"from":"human","value":"Hi"},{"from":"gpt","value":"Hello"}]}"#;
        let log = r#"{"request":{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"Hi"}]},"response":{"choices":[{"message":{"role":"assistant","content":"Hello"}}]}}"#;
        let uid = prep(chat).unwrap().record.uid;
        assert_eq!(prep(share).unwrap().record.uid, uid);
        assert_eq!(prep(log).unwrap().record.uid, uid);
        // What the log adds (a finish reason) is part of the conversation.
        let finished = log.replace("}}]}}", r#"},"finish_reason":"stop"}]}}"#);
        assert_ne!(prep(&finished).unwrap().record.uid, uid);
    }

    #[test]
    fn other_shapes_name_their_own_paths() {
        let (field, p) = problem(
            r#"{"conversations":[{"from":"human","value":"Q"},{"from":"gpt","value":""},{"from":"human","value":"Q2"},{"from":"gpt","value":"A2"}]}"#,
        );
        assert_eq!(field, "conversations[1].value");
        assert!(p.contains("but conversations[3] is a later answer"), "{p}");
        let (field, p) =
            problem(r#"{"system":"S","conversations":[{"from":"human","value":"Q"}]}"#);
        assert_eq!(field, "conversations");
        assert!(p.starts_with("no assistant message"), "{p}");
        let (field, _) = problem(r#"{"conversations":[]}"#);
        assert_eq!(field, "conversations");
        let (field, p) = problem(
            r#"{"request":{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":null},{"role":"user","content":"Q2"}]},"response":{"choices":[{"message":{"content":"A"}}]}}"#,
        );
        assert_eq!(field, "request.messages[1].content");
        assert!(
            p.contains("but response.choices[0].message is a later answer"),
            "{p}"
        );
    }

    #[test]
    fn negative_and_inconsistent_timings() {
        let (field, p) = problem(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A","timing":{"e2e_ms":-3}}]}"#,
        );
        assert_eq!(field, "messages[1].timing.e2e_ms");
        assert!(p.contains("negative"), "{p}");
        let (field, _) = problem(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A","timing":{"ttft_ms":50,"e2e_ms":30}}]}"#,
        );
        assert_eq!(field, "messages[1].timing.ttft_ms");
        let (field, _) = problem(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A","usage":{"completion_tokens":-1}}]}"#,
        );
        assert_eq!(field, "messages[1].usage.completion_tokens");
        let (field, _) = problem(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A","usage":{"prompt_tokens":5,"cached_tokens":6}}]}"#,
        );
        assert_eq!(field, "messages[1].usage.cached_tokens");
    }

    #[test]
    fn unknown_outcomes() {
        let (field, p) = problem(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A","outcome":"fine"}]}"#,
        );
        assert_eq!(field, "messages[1].outcome");
        assert!(p.contains("unknown outcome \"fine\""), "{p}");
        let (field, _) = problem(
            r#"{"outcome":"great","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#,
        );
        assert_eq!(field, "outcome");
        let (field, _) = problem(
            r#"{"outcome":"ok","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#,
        );
        assert_eq!(field, "outcome");
    }

    #[test]
    fn failed_turn_in_the_middle() {
        let (field, p) = problem(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":null,"outcome":"timeout"},{"role":"user","content":"Q2"},{"role":"assistant","content":"A2"}]}"#,
        );
        assert_eq!(field, "messages[1].outcome");
        assert!(p.contains("messages[3] is a later answer"), "{p}");
        let (field, _) = problem(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":null},{"role":"assistant","content":"A2"}]}"#,
        );
        assert_eq!(field, "messages[1].content");
    }

    #[test]
    fn conversation_outcome_must_match_the_failed_turn() {
        let (field, p) = problem(
            r#"{"outcome":"completed","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":null,"outcome":"timeout"}]}"#,
        );
        assert_eq!(field, "outcome");
        assert!(
            p.contains("messages[1] ended the conversation with timeout"),
            "{p}"
        );
    }

    #[test]
    fn misplaced_and_empty_fields() {
        let (field, _) = problem(
            r#"{"messages":[{"role":"user","content":"Q","timing":{"e2e_ms":1}},{"role":"assistant","content":"A"}]}"#,
        );
        assert_eq!(field, "messages[0].timing");
        let (field, _) =
            problem(r#"{"messages":[{"role":"user"},{"role":"assistant","content":"A"}]}"#);
        assert_eq!(field, "messages[0].content");
        let (field, _) = problem(
            r#"{"provider":"","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#,
        );
        assert_eq!(field, "provider");
        let (field, _) = problem(
            r#"{"repeat":0,"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#,
        );
        assert_eq!(field, "repeat");
        let (field, _) = problem(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":null,"outcome":"ok"}]}"#,
        );
        assert_eq!(field, "messages[1].content");
        let (field, _) = problem(
            r#"{"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A","http_status":42}]}"#,
        );
        assert_eq!(field, "messages[1].http_status");
    }
}
