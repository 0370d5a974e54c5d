//! Runs one conversation: each turn sends the full visible history, earlier answers
//! included; a failed turn ends the conversation; pauses are slept but never timed.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::watch;

use super::RunContext;
use super::schedule::{Job, pause_ms};
use crate::chat::Message;
use crate::client::Endpoint;
use crate::launcher::{Stop, pause as sleep_pause, send_turn};
use crate::outcome::ConversationOutcome;
use crate::store::now_rfc3339;
use crate::store::records::{AttemptRecord, ConversationRecord, TurnRecord};

pub(super) async fn run_conversation(
    ctx: Arc<RunContext>,
    job: Job,
    endpoint: Arc<Endpoint>,
    mut stop: watch::Receiver<Stop>,
) -> ConversationRecord {
    let scenario = &ctx.scenarios[job.scenario];
    let started_at = now_rfc3339();
    let t0 = Instant::now();
    let mut history: Vec<Message> = Vec::new();
    let mut turns: Vec<TurnRecord> = Vec::new();
    let mut attempts = Vec::new();
    let mut interrupted = false;
    if let Some(system) = &scenario.system {
        history.push(Message::new("system", system.clone()));
    }

    for (i, step) in scenario.turns.iter().enumerate() {
        let pause = pause_ms(
            ctx.seed,
            &scenario.id,
            job.repeat,
            i,
            step.pause_ms,
            ctx.pause_scale,
        );
        sleep_pause(pause, &mut stop).await;
        if *stop.borrow() != Stop::Run {
            interrupted = true;
            break;
        }
        let mut prompt = if i == 0 { history.clone() } else { Vec::new() };
        let user = Message::new("user", step.user.clone());
        prompt.push(user.clone());
        history.push(user);

        let start_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let (reply, turn_attempts) = send_turn(
            &ctx.client,
            &endpoint,
            &history,
            ctx.timeout,
            &ctx.retry,
            i as u32,
            &mut stop,
        )
        .await;
        let mut turn = TurnRecord::from_reply(reply, prompt);
        turn.pause_ms = step.pause_ms.map(|_| pause);
        turn.start_ms = Some(start_ms);
        turn.visible_tokens = turn.answer.as_deref().map(crate::tokens::count);
        attempts.extend(turn_attempts.into_iter().map(AttemptRecord::from));
        let go_on = turn
            .outcome()
            .lets_conversation_continue(turn.has_visible_text());
        let answer = turn.answer.clone().unwrap_or_default();
        turns.push(turn);
        if !go_on {
            break;
        }
        history.push(Message::new("assistant", answer));
    }

    let summary: Vec<_> = turns
        .iter()
        .map(|t| (t.outcome(), t.has_visible_text()))
        .collect();
    let mut outcome = ConversationOutcome::from_turns(&summary);
    if interrupted && outcome.is_completed() {
        outcome = ConversationOutcome::Interrupted;
    }
    ConversationRecord {
        outcome,
        started_at: Some(started_at),
        turns,
        attempts,
        ..slot_record(&ctx, job)
    }
}

/// The record of a slot whose conversation task panicked (a bug): failed with
/// `internal_error` and the message, no turns (what they held was lost with the task).
pub(super) fn internal_error(ctx: &RunContext, job: Job, message: String) -> ConversationRecord {
    slot_record(ctx, job).internal_error("running this conversation", &message)
}

/// A record for the slot with its identity filled in, no turns, ended now.
fn slot_record(ctx: &RunContext, job: Job) -> ConversationRecord {
    let scenario = &ctx.scenarios[job.scenario];
    let target_id = ctx.target_ids[job.target];
    ConversationRecord {
        uid: crate::launcher::conversation_uid(ctx.run_id, target_id, &scenario.id, job.repeat),
        run_id: ctx.run_id,
        target_id,
        scenario: Some(scenario.id.clone()),
        scenario_ref: Some(ctx.scenario_ids[job.scenario]),
        repeat: job.repeat,
        outcome: ConversationOutcome::Interrupted,
        started_at: None,
        ended_at: Some(now_rfc3339()),
        turns: Vec::new(),
        attempts: Vec::new(),
        trailing: Vec::new(),
    }
}
