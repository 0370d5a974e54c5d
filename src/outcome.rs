//! The outcome vocabulary shared by the client, the store and the report (DESIGN.md).

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
}

impl TurnOutcome {
    pub const ALL: [TurnOutcome; 11] = [
        TurnOutcome::Ok,
        TurnOutcome::RateLimited,
        TurnOutcome::Http4xx,
        TurnOutcome::Http5xx,
        TurnOutcome::Timeout,
        TurnOutcome::ConnectError,
        TurnOutcome::StreamCut,
        TurnOutcome::Malformed,
        TurnOutcome::EmptyAnswer,
        TurnOutcome::Truncated,
        TurnOutcome::Interrupted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TurnOutcome::Ok => "ok",
            TurnOutcome::RateLimited => "rate_limited",
            TurnOutcome::Http4xx => "http_4xx",
            TurnOutcome::Http5xx => "http_5xx",
            TurnOutcome::Timeout => "timeout",
            TurnOutcome::ConnectError => "connect_error",
            TurnOutcome::StreamCut => "stream_cut",
            TurnOutcome::Malformed => "malformed",
            TurnOutcome::EmptyAnswer => "empty_answer",
            TurnOutcome::Truncated => "truncated",
            TurnOutcome::Interrupted => "interrupted",
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

/// How a conversation ended: `completed`, or the class of the turn that ended it.
pub fn conversation_outcome(turns: &[(TurnOutcome, bool)]) -> String {
    for &(outcome, has_text) in turns {
        if !outcome.lets_conversation_continue(has_text) {
            return outcome.as_str().to_string();
        }
    }
    if turns.is_empty() {
        TurnOutcome::Interrupted.as_str().to_string()
    } else {
        "completed".to_string()
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
        use TurnOutcome::*;
        assert_eq!(
            conversation_outcome(&[(Ok, true), (Truncated, true)]),
            "completed"
        );
        assert_eq!(
            conversation_outcome(&[(Ok, true), (Truncated, false)]),
            "truncated"
        );
        assert_eq!(
            conversation_outcome(&[(Ok, true), (Timeout, false)]),
            "timeout"
        );
        assert_eq!(conversation_outcome(&[]), "interrupted");
    }

    #[test]
    fn statuses_classify() {
        assert_eq!(TurnOutcome::from_status(429), TurnOutcome::RateLimited);
        assert_eq!(TurnOutcome::from_status(404), TurnOutcome::Http4xx);
        assert_eq!(TurnOutcome::from_status(503), TurnOutcome::Http5xx);
    }
}
