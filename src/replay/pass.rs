//! One pass: a recorded session replayed against one target. Each recorded assistant turn
//! is one request whose history is the *recorded* messages before it (never the target's
//! answers), with the session's tools, the pass's salt before the system prompt and the
//! target's cache hint. Pauses and breaks are slept before the turn and never timed; a
//! failed turn ends the pass, as it ends a conversation in `collect`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::watch;

use super::schedule::{break_ms, capped_pause_ms, salt};
use super::session::{Session, SessionIndex, SessionMessage, SessionRole};
use crate::chat::Message;
use crate::client::{Client, Endpoint, Reply};
use crate::config::{CacheHint, ReplaySettings, RetryPolicy, TargetReplay};
use crate::launcher::{Stop, pause as sleep_pause, send_turn};
use crate::outcome::ConversationOutcome;
use crate::store::now_rfc3339;
use crate::store::records::{AttemptRecord, ConversationRecord, TurnRecord};
use crate::store::replay::{ReplayRecord, ReplayTurnRecord, ToolCallRecord};

/// Shared, read-only state of a replay run.
pub(super) struct ReplayContext {
    pub run_id: i64,
    pub seed: u64,
    pub settings: ReplaySettings,
    pub timeout: Duration,
    pub retry: RetryPolicy,
    pub client: Client,
    /// Where each session is; a pass reads its session when it starts.
    pub sessions: SessionIndex,
    pub target_ids: Vec<i64>,
    pub endpoints: Vec<Endpoint>,
    pub hints: Vec<TargetReplay>,
}

/// One pass to run.
#[derive(Clone)]
pub(super) struct PassJob {
    pub ctx: Arc<ReplayContext>,
    pub target: usize,
    pub session: usize,
    pub round: u32,
}

/// The session's messages with the salt before the system prompt (a system message of
/// its own when the session has none), and how far the recorded indices moved.
pub fn salted(session: &Session, salt: &str) -> (Vec<SessionMessage>, usize) {
    let mut messages = session.messages.clone();
    let tag = format!("[session {salt}]");
    match messages.first_mut() {
        Some(first) if first.role == SessionRole::System => {
            let text = first.content.take().unwrap_or_default();
            first.content = Some(format!("{tag}\n{text}"));
            (messages, 0)
        }
        _ => {
            let system = SessionMessage {
                role: SessionRole::System,
                content: Some(tag),
                tool_calls: Vec::new(),
                tool_call_id: None,
                at_ms: None,
            };
            messages.insert(0, system);
            (messages, 1)
        }
    }
}

/// The hash of what a turn sends: its messages and the tools (serialised as sent).
pub fn prompt_hash(messages: &[SessionMessage], tools: Option<&Value>) -> String {
    let mut h = blake3::Hasher::new();
    // Messages and a JSON value always serialise.
    let body = serde_json::to_vec(messages).expect("messages serialise");
    h.update(&(body.len() as u64).to_le_bytes());
    h.update(&body);
    if let Some(tools) = tools {
        h.update(&serde_json::to_vec(tools).expect("tools serialise"));
    }
    h.finalize().to_hex()[..32].to_string()
}

/// The target's endpoint for one pass: the session's tools, and the cache hint.
pub fn pass_endpoint(
    base: &Endpoint,
    hint: &CacheHint,
    tools: Option<&Value>,
    pass_id: &str,
) -> Endpoint {
    let mut endpoint = base.clone();
    if let Some(tools) = tools {
        endpoint.params.extra.insert("tools".into(), tools.clone());
    }
    match hint {
        CacheHint::None => {}
        CacheHint::User => {
            endpoint
                .params
                .extra
                .insert("user".into(), Value::String(pass_id.to_string()));
        }
        CacheHint::Header(name) => endpoint.headers.push((name.clone(), pass_id.to_string())),
    }
    endpoint
}

/// The messages a turn added to the history, as stored in `turns.prompt`: system and user
/// messages as they are, a tool result as a user message naming its call; recorded
/// assistant messages are left out (the target's answer stands in their place; the exact
/// request is the session's history, whose hash is stored).
fn stored_prompt(added: &[SessionMessage]) -> Vec<Message> {
    added
        .iter()
        .filter_map(|m| match m.role {
            SessionRole::Assistant => None,
            SessionRole::Tool => Some(Message::new(
                "user",
                format!(
                    "[tool result {}]\n{}",
                    m.tool_call_id.as_deref().unwrap_or_default(),
                    m.content.as_deref().unwrap_or_default()
                ),
            )),
            role => Some(Message::new(
                role.as_str(),
                m.content.clone().unwrap_or_default(),
            )),
        })
        .collect()
}

pub(super) async fn run_pass(job: PassJob, mut stop: watch::Receiver<Stop>) -> ReplayRecord {
    let ctx = &job.ctx;
    let session = match load_session(&job).await {
        Ok(s) => s,
        Err(message) => return internal_error(&job, message),
    };
    let session = &session;
    let salt = salt(ctx.seed, ctx.run_id, &session.id, job.round);
    let pass_id = format!("{}#{}-{salt}", session.id, job.round);
    let target = &ctx.hints[job.target];
    let endpoint = pass_endpoint(
        &ctx.endpoints[job.target],
        &target.cache_hint,
        session.tools.as_ref(),
        &pass_id,
    );
    let (messages, offset) = salted(session, &salt);
    let started_at = now_rfc3339();
    let t0 = Instant::now();
    let mut turns = Vec::new();
    let mut replay_turns = Vec::new();
    let mut attempts = Vec::new();
    let mut interrupted = false;
    let mut sent_up_to = 0;
    let settings = &ctx.settings;
    for (k, idx) in session.turn_indices().enumerate() {
        let pause = capped_pause_ms(session.recorded_pause_ms(idx), settings.pause_cap_s);
        let idle = break_ms(ctx.seed, &session.id, job.round, k, &settings.breaks);
        let slept = (pause + idle) * settings.pause_scale;
        sleep_pause(slept, &mut stop).await;
        if *stop.borrow() != Stop::Run {
            interrupted = true;
            break;
        }
        let history = &messages[..idx + offset];
        let hash = prompt_hash(history, session.tools.as_ref());
        let start_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let (reply, turn_attempts) = send_turn(
            &ctx.client,
            &endpoint,
            history,
            ctx.timeout,
            &ctx.retry,
            k as u32,
            &mut stop,
        )
        .await;
        let served_by = served_by(&reply, target);
        let tool_calls = tool_call_records(&reply, session);
        let has_output = reply.has_visible_text() || !tool_calls.is_empty();
        let mut turn =
            TurnRecord::from_reply(reply, stored_prompt(&messages[sent_up_to..idx + offset]));
        sent_up_to = idx + offset;
        turn.pause_ms = Some(slept);
        turn.start_ms = Some(start_ms);
        turn.visible_tokens = turn.answer.as_deref().map(crate::tokens::count);
        attempts.extend(turn_attempts.into_iter().map(AttemptRecord::from));
        let go_on = turn.outcome().lets_conversation_continue(has_output);
        replay_turns.push(ReplayTurnRecord {
            message_idx: idx as u32,
            prompt_hash: hash,
            pause_ms: pause,
            break_ms: idle,
            served_by,
            recorded_tools: recorded_tools(session, idx),
            tool_calls,
        });
        turns.push((turn, has_output));
        if !go_on {
            break;
        }
    }
    ReplayRecord {
        conversation: ConversationRecord {
            outcome: pass_outcome(&turns, interrupted),
            started_at: Some(started_at),
            turns: turns.into_iter().map(|(t, _)| t).collect(),
            attempts,
            ..pass_record(&job)
        },
        session_id: session.id.clone(),
        round: job.round,
        salt,
        cache_hint: target.cache_hint.clone().into(),
        turns: replay_turns,
    }
}

/// The job's session, read from the sessions file off the async threads.
async fn load_session(job: &PassJob) -> Result<Session, String> {
    let index = job.ctx.clone();
    let i = job.session;
    tokio::task::spawn_blocking(move || index.sessions.load(i))
        .await
        .unwrap_or_else(|e| Err(format!("reading the session failed: {e}")))
}

/// The provider that served the reply, as the target's header (or else body field) names
/// it.
fn served_by(reply: &Reply, target: &TargetReplay) -> Option<String> {
    let named = |list: &[(String, String)], name: &str| {
        list.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    target
        .served_by_header
        .as_deref()
        .and_then(|h| named(&reply.headers, h))
        .or_else(|| {
            target
                .served_by_field
                .as_deref()
                .and_then(|f| named(&reply.fields, f))
        })
}

/// The reply's tool calls, each with whether the session offered a tool of that name.
fn tool_call_records(reply: &Reply, session: &Session) -> Vec<ToolCallRecord> {
    reply
        .tool_calls
        .iter()
        .map(|c| ToolCallRecord {
            call_idx: c.index,
            arguments_parse: c.arguments_parse(),
            name_offered: session.tool_names.contains(&c.name),
            name: c.name.clone(),
            arguments: c.arguments.clone(),
        })
        .collect()
}

/// The tools the recorded agent called at message `idx`.
fn recorded_tools(session: &Session, idx: usize) -> Vec<String> {
    session
        .messages
        .get(idx)
        .map(|m| m.tool_calls.iter().map(|c| c.name.clone()).collect())
        .unwrap_or_default()
}

/// The pass's outcome from its turns (each with whether it had output); a pass stopped
/// before its end that had not failed is interrupted.
fn pass_outcome(turns: &[(TurnRecord, bool)], interrupted: bool) -> ConversationOutcome {
    let summary: Vec<_> = turns.iter().map(|(t, out)| (t.outcome(), *out)).collect();
    let outcome = ConversationOutcome::from_turns(&summary);
    if interrupted && outcome.is_completed() {
        ConversationOutcome::Interrupted
    } else {
        outcome
    }
}

/// The record of a pass whose task panicked (a bug): failed with `internal_error` and the
/// message, no turns.
pub(super) fn internal_error(job: &PassJob, message: String) -> ReplayRecord {
    let id = &job.ctx.sessions.entries[job.session].id;
    ReplayRecord {
        conversation: pass_record(job).internal_error("replaying this session", &message),
        session_id: id.clone(),
        round: job.round,
        salt: salt(job.ctx.seed, job.ctx.run_id, id, job.round),
        cache_hint: job.ctx.hints[job.target].cache_hint.clone().into(),
        turns: vec![ReplayTurnRecord {
            message_idx: 0,
            prompt_hash: String::new(),
            pause_ms: 0.0,
            break_ms: 0.0,
            served_by: None,
            recorded_tools: Vec::new(),
            tool_calls: Vec::new(),
        }],
    }
}

/// A conversation record for the pass with its identity filled in, no turns, ended now.
fn pass_record(job: &PassJob) -> ConversationRecord {
    let ctx = &job.ctx;
    let id = &ctx.sessions.entries[job.session].id;
    let target_id = ctx.target_ids[job.target];
    ConversationRecord {
        uid: crate::launcher::conversation_uid(ctx.run_id, target_id, id, job.round),
        run_id: ctx.run_id,
        target_id,
        scenario: Some(id.clone()),
        scenario_ref: None,
        repeat: job.round,
        outcome: ConversationOutcome::Interrupted,
        started_at: None,
        ended_at: Some(now_rfc3339()),
        turns: Vec::new(),
        attempts: Vec::new(),
        trailing: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(line: &str) -> Session {
        super::super::session::parse_session(line.as_bytes(), 1).unwrap()
    }

    #[test]
    fn the_salt_goes_before_the_system_prompt_or_in_a_system_message_of_its_own() {
        let with = session(
            r#"{"id":"a","messages":[{"role":"system","content":"Rules."},{"role":"user","content":"q"},{"role":"assistant","content":"x"}]}"#,
        );
        let (m, offset) = salted(&with, "0badcafe");
        assert_eq!(offset, 0);
        assert_eq!(m[0].content.as_deref(), Some("[session 0badcafe]\nRules."));
        assert_eq!(m.len(), 3);
        let without = session(
            r#"{"id":"b","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"x"}]}"#,
        );
        let (m, offset) = salted(&without, "0badcafe");
        assert_eq!(offset, 1);
        assert_eq!(
            (m[0].role, m[0].content.as_deref()),
            (SessionRole::System, Some("[session 0badcafe]"))
        );
        assert_eq!(m[1].content.as_deref(), Some("q"));
    }

    #[test]
    fn tool_results_are_stored_as_user_text_and_recorded_answers_left_out() {
        let s = session(
            r#"{"id":"a","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","function":{"name":"ls","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"a.py"},{"role":"assistant","content":"done"}]}"#,
        );
        let stored = stored_prompt(&s.messages[1..3]);
        assert_eq!(stored, vec![Message::new("user", "[tool result c1]\na.py")]);
    }

    #[test]
    fn a_pass_endpoint_carries_tools_and_the_hint_where_the_target_wants_it() {
        let base = Endpoint {
            url: "http://x/v1/chat/completions".into(),
            model: "m".into(),
            api_key: None,
            headers: vec![],
            params: Default::default(),
        };
        let tools = serde_json::json!([{"type":"function","function":{"name":"ls"}}]);
        let e = pass_endpoint(&base, &CacheHint::User, Some(&tools), "s#1-ab");
        let body = e.body::<Message>(&[]);
        assert_eq!(body["user"], "s#1-ab");
        assert_eq!(body["tools"], tools);
        let e = pass_endpoint(
            &base,
            &CacheHint::Header("x-session-affinity".into()),
            None,
            "s#1-ab",
        );
        assert_eq!(
            e.headers,
            vec![("x-session-affinity".to_string(), "s#1-ab".to_string())]
        );
        assert!(e.body::<Message>(&[]).get("user").is_none());
        let e = pass_endpoint(&base, &CacheHint::None, None, "s#1-ab");
        assert!(e.headers.is_empty() && e.body::<Message>(&[]).get("user").is_none());
    }
}
