//! The outcome vocabulary shared by the client, the store and the report (docs/metrics.md,
//! "Reliability"; docs/store.md).

use std::fmt;
use std::str::FromStr;

/// How one turn ended. Exactly one per turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TurnOutcome {
    Ok,
    /// HTTP 429 (or an in-stream error object carrying 429).
    RateLimited,
    Http4xx,
    Http5xx,
    /// The request outgrew the context window the server serves the model with (any
    /// status, or an error in the stream that says so): a property of the workload and of
    /// the provider's configured window, not a serving fault. Never retried.
    ContextOverflow,
    /// The per-turn client timeout passed.
    Timeout,
    ConnectError,
    /// The stream closed before a finish reason or `[DONE]`.
    StreamCut,
    /// An unparseable chunk or body.
    Malformed,
    /// The stream completed with no visible answer text.
    EmptyAnswer,
    /// `finish_reason = length`: kept, not a transport failure.
    Truncated,
    /// Stopped by Ctrl-C; `collect --resume` runs the conversation again.
    Interrupted,
    /// turnbench itself failed on this turn (a bug, caught instead of crashing the run):
    /// never the provider's doing. The error holds the message; please report it.
    InternalError,
}

impl TurnOutcome {
    pub const ALL: [TurnOutcome; 13] = [
        TurnOutcome::Ok,
        TurnOutcome::RateLimited,
        TurnOutcome::Http4xx,
        TurnOutcome::Http5xx,
        TurnOutcome::ContextOverflow,
        TurnOutcome::Timeout,
        TurnOutcome::ConnectError,
        TurnOutcome::StreamCut,
        TurnOutcome::Malformed,
        TurnOutcome::EmptyAnswer,
        TurnOutcome::Truncated,
        TurnOutcome::Interrupted,
        TurnOutcome::InternalError,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TurnOutcome::Ok => "ok",
            TurnOutcome::RateLimited => "rate_limited",
            TurnOutcome::Http4xx => "http_4xx",
            TurnOutcome::Http5xx => "http_5xx",
            TurnOutcome::ContextOverflow => "context_overflow",
            TurnOutcome::Timeout => "timeout",
            TurnOutcome::ConnectError => "connect_error",
            TurnOutcome::StreamCut => "stream_cut",
            TurnOutcome::Malformed => "malformed",
            TurnOutcome::EmptyAnswer => "empty_answer",
            TurnOutcome::Truncated => "truncated",
            TurnOutcome::Interrupted => "interrupted",
            TurnOutcome::InternalError => "internal_error",
        }
    }

    /// Whether the next turn of the conversation can start after this one.
    pub fn lets_conversation_continue(self, has_visible_text: bool) -> bool {
        match self {
            TurnOutcome::Ok => true,
            TurnOutcome::Truncated => has_visible_text,
            _ => false,
        }
    }

    /// Class for an HTTP error status.
    pub fn from_status(status: u16) -> TurnOutcome {
        match status {
            429 => TurnOutcome::RateLimited,
            400..=499 => TurnOutcome::Http4xx,
            _ => TurnOutcome::Http5xx,
        }
    }
}

impl fmt::Display for TurnOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TurnOutcome {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        TurnOutcome::ALL
            .into_iter()
            .find(|o| o.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<_> = TurnOutcome::ALL.iter().map(|o| o.as_str()).collect();
                format!(
                    "unknown outcome {s:?}; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// How a conversation ended. Stored as text: `completed`, `interrupted`, or the class of
/// the turn that ended it (`timeout`, `truncated`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConversationOutcome {
    /// Every turn answered (`ok`, or `truncated` with visible text).
    Completed,
    /// A turn failed; the conversation stopped there. Never `Ok` or `Interrupted`.
    Failed(TurnOutcome),
    /// Stopped by Ctrl-C before it ended; `collect --resume` runs the slot again.
    Interrupted,
}

impl ConversationOutcome {
    /// How a conversation whose turns ended like this ended: the first turn that does not
    /// let it continue decides; no turn at all means it was interrupted before its first.
    pub fn from_turns(turns: &[(TurnOutcome, bool)]) -> ConversationOutcome {
        for &(outcome, has_text) in turns {
            if !outcome.lets_conversation_continue(has_text) {
                return ConversationOutcome::from_turn(outcome);
            }
        }
        if turns.is_empty() {
            ConversationOutcome::Interrupted
        } else {
            ConversationOutcome::Completed
        }
    }

    /// The outcome of a conversation that a turn with this outcome ended.
    pub fn from_turn(outcome: TurnOutcome) -> ConversationOutcome {
        match outcome {
            TurnOutcome::Ok => ConversationOutcome::Completed,
            TurnOutcome::Interrupted => ConversationOutcome::Interrupted,
            failed => ConversationOutcome::Failed(failed),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ConversationOutcome::Completed => "completed",
            ConversationOutcome::Interrupted => "interrupted",
            ConversationOutcome::Failed(t) => t.as_str(),
        }
    }

    pub fn is_completed(self) -> bool {
        self == ConversationOutcome::Completed
    }

    /// The turn class that ended it, for a failed conversation.
    pub fn failure(self) -> Option<TurnOutcome> {
        match self {
            ConversationOutcome::Failed(t) => Some(t),
            _ => None,
        }
    }
}

impl fmt::Display for ConversationOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ConversationOutcome {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "completed" => Ok(ConversationOutcome::Completed),
            "ok" => Err(
                "\"ok\" is a turn's outcome; a conversation that ended well is \"completed\""
                    .to_string(),
            ),
            _ => s
                .parse::<TurnOutcome>()
                .map(ConversationOutcome::from_turn)
                .map_err(|_| {
                    let names: Vec<_> = TurnOutcome::ALL[1..].iter().map(|o| o.as_str()).collect();
                    format!(
                        "unknown outcome {s:?}; expected completed, or the class of the turn that \
                     ended it: {}",
                        names.join(", ")
                    )
                }),
        }
    }
}

impl rusqlite::types::ToSql for ConversationOutcome {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl rusqlite::types::FromSql for ConversationOutcome {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        value
            .as_str()?
            .parse()
            .map_err(|e: String| rusqlite::types::FromSqlError::Other(e.into()))
    }
}

impl rusqlite::types::ToSql for TurnOutcome {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl rusqlite::types::FromSql for TurnOutcome {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        value
            .as_str()?
            .parse()
            .map_err(|e: String| rusqlite::types::FromSqlError::Other(e.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for o in TurnOutcome::ALL {
            assert_eq!(o.as_str().parse::<TurnOutcome>().unwrap(), o);
        }
        assert!("fine".parse::<TurnOutcome>().is_err());
    }

    #[test]
    fn truncated_with_text_completes() {
        use ConversationOutcome as C;
        use TurnOutcome::*;
        let of = C::from_turns;
        assert_eq!(of(&[(Ok, true), (Truncated, true)]), C::Completed);
        assert_eq!(of(&[(Ok, true), (Truncated, false)]), C::Failed(Truncated));
        assert_eq!(of(&[(Ok, true), (Timeout, false)]), C::Failed(Timeout));
        assert_eq!(of(&[(Ok, true), (Interrupted, false)]), C::Interrupted);
        assert_eq!(of(&[]), C::Interrupted);
    }

    #[test]
    fn conversation_names_round_trip() {
        for o in TurnOutcome::ALL {
            let c = ConversationOutcome::from_turn(o);
            assert_eq!(c.as_str().parse::<ConversationOutcome>().unwrap(), c);
        }
        assert_eq!(ConversationOutcome::Completed.as_str(), "completed");
        let err = "ok".parse::<ConversationOutcome>().unwrap_err();
        assert!(err.contains("completed"), "{err}");
        let err = "fine".parse::<ConversationOutcome>().unwrap_err();
        assert!(err.contains("stream_cut"), "{err}");
    }

    #[test]
    fn statuses_classify() {
        assert_eq!(TurnOutcome::from_status(429), TurnOutcome::RateLimited);
        assert_eq!(TurnOutcome::from_status(404), TurnOutcome::Http4xx);
        assert_eq!(TurnOutcome::from_status(503), TurnOutcome::Http5xx);
    }
}
