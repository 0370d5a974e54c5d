//! The `[replay]` table of `bench.toml` and each target's `replay` table: what `replay`
//! adds to the settings `collect` reads. Unset, they change nothing `collect` stores.
//!
//! ```toml
//! [replay]
//! rounds = 1                 # passes over every session per target
//! sessions_in_flight = 2     # sessions in flight per target
//! pause_cap_s = 60           # recorded pauses longer than this are cut to it
//! pause_scale = 1.0          # every pause and break is slept at this share (0: none)
//! breaks = "0.15:60-1200"    # a break on 15 % of turns, 1 to 20 minutes ("none": no breaks)
//!
//! [[target]]
//! # …
//! replay = { cache_hint = "user", served_by_header = "x-served-by" }
//! # cache_hint: "user" (the `user` field), "header:x-session-affinity", or "none"
//! # served_by_field = "provider": a top-level response field naming the provider instead
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Seeded idle breaks: on `share` of the turns after a session's first, a break drawn
/// uniformly from `min_s..=max_s` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Breaks {
    pub share: f64,
    pub min_s: f64,
    pub max_s: f64,
}

impl Breaks {
    pub const NONE: Breaks = Breaks {
        share: 0.0,
        min_s: 0.0,
        max_s: 0.0,
    };
}

impl Default for Breaks {
    /// 15 % of turns, 1 to 20 minutes: idle gaps an agent's user takes.
    fn default() -> Self {
        Breaks {
            share: 0.15,
            min_s: 60.0,
            max_s: 1200.0,
        }
    }
}

impl FromStr for Breaks {
    type Err = String;

    /// `SHARE:MIN_S-MAX_S` (e.g. `0.15:60-1200`), or `none`.
    fn from_str(s: &str) -> Result<Self, String> {
        if s.trim() == "none" {
            return Ok(Breaks::NONE);
        }
        let bad = || {
            format!(
                "breaks {s:?}: expected SHARE:MIN_S-MAX_S (e.g. 0.15:60-1200: 15 % of turns, 1 to 20 minutes) or none"
            )
        };
        let (share, range) = s.split_once(':').ok_or_else(bad)?;
        let (lo, hi) = range.split_once('-').ok_or_else(bad)?;
        let num = |t: &str| t.trim().parse::<f64>().map_err(|_| bad());
        let b = Breaks {
            share: num(share)?,
            min_s: num(lo)?,
            max_s: num(hi)?,
        };
        let finite = b.share.is_finite() && b.min_s.is_finite() && b.max_s.is_finite();
        if !finite || !(0.0..=1.0).contains(&b.share) || b.min_s < 0.0 || b.min_s > b.max_s {
            return Err(format!(
                "breaks {s:?}: the share must be within 0..1 and 0 ≤ MIN_S ≤ MAX_S"
            ));
        }
        Ok(b)
    }
}

impl TryFrom<String> for Breaks {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<Breaks> for String {
    fn from(b: Breaks) -> String {
        b.to_string()
    }
}

impl fmt::Display for Breaks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.share == 0.0 {
            f.write_str("none")
        } else {
            write!(f, "{}:{}-{}", self.share, self.min_s, self.max_s)
        }
    }
}

/// The `[replay]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplaySettings {
    pub rounds: u32,
    pub sessions_in_flight: usize,
    pub pause_cap_s: f64,
    pub pause_scale: f64,
    pub breaks: Breaks,
}

impl Default for ReplaySettings {
    fn default() -> Self {
        ReplaySettings {
            rounds: 1,
            sessions_in_flight: 2,
            pause_cap_s: 60.0,
            pause_scale: 1.0,
            breaks: Breaks::default(),
        }
    }
}

impl ReplaySettings {
    pub fn is_default(&self) -> bool {
        *self == ReplaySettings::default()
    }

    /// What is wrong with these settings, if anything.
    pub fn check(&self) -> Result<(), ReplayProblem> {
        for (key, v) in [
            ("rounds", self.rounds as usize),
            ("sessions_in_flight", self.sessions_in_flight),
        ] {
            if v == 0 {
                return Err(ReplayProblem {
                    key,
                    message: format!("replay: {key} must be at least 1"),
                });
            }
        }
        for (key, v) in [
            ("pause_cap_s", self.pause_cap_s),
            ("pause_scale", self.pause_scale),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ReplayProblem {
                    key,
                    message: format!("replay: {key} must be a number ≥ 0"),
                });
            }
        }
        Ok(())
    }
}

/// A `[replay]` setting out of range: its key, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ReplayProblem {
    pub key: &'static str,
    pub message: String,
}

/// How a target is told which requests belong to one conversation, so that a provider
/// that routes by it can keep the conversation's cache on one replica.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum CacheHint {
    /// Nothing is sent.
    None,
    /// The request's `user` field carries the pass's id.
    #[default]
    User,
    /// This header carries the pass's id.
    Header(String),
}

impl TryFrom<String> for CacheHint {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        match s.as_str() {
            "none" => Ok(CacheHint::None),
            "user" => Ok(CacheHint::User),
            _ => match s.strip_prefix("header:") {
                Some(h) if axum::http::HeaderName::from_bytes(h.as_bytes()).is_ok() => {
                    Ok(CacheHint::Header(h.to_string()))
                }
                _ => Err(format!(
                    "cache_hint {s:?}: expected \"user\", \"none\" or \"header:NAME\" (e.g. \"header:x-session-affinity\")"
                )),
            },
        }
    }
}

impl From<CacheHint> for String {
    fn from(h: CacheHint) -> String {
        match h {
            CacheHint::None => "none".into(),
            CacheHint::User => "user".into(),
            CacheHint::Header(h) => format!("header:{h}"),
        }
    }
}

/// A target's `replay` table.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TargetReplay {
    pub cache_hint: CacheHint,
    /// The response header in which a gateway names the provider that served.
    pub served_by_header: Option<String>,
    /// Or the top-level field of the response (every chunk, or the body) that does, e.g.
    /// OpenRouter's `provider`.
    pub served_by_field: Option<String>,
}

impl TargetReplay {
    pub fn is_default(&self) -> bool {
        *self == TargetReplay::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breaks_read_and_refuse_what_they_should() {
        let b: Breaks = "0.15:60-1200".parse().unwrap();
        assert_eq!((b.share, b.min_s, b.max_s), (0.15, 60.0, 1200.0));
        assert_eq!(b.to_string(), "0.15:60-1200");
        assert_eq!("none".parse::<Breaks>().unwrap(), Breaks::NONE);
        for bad in ["0.15", "1.5:1-2", "0.1:5-2", "x:1-2", "0.1:-1-2", "NaN:1-2"] {
            assert!(bad.parse::<Breaks>().is_err(), "{bad}");
        }
    }

    #[test]
    fn cache_hints_read_from_their_words() {
        let read = |s: &str| CacheHint::try_from(s.to_string());
        assert_eq!(read("user"), Ok(CacheHint::User));
        assert_eq!(read("none"), Ok(CacheHint::None));
        assert_eq!(
            read("header:x-session-affinity"),
            Ok(CacheHint::Header("x-session-affinity".into()))
        );
        assert!(read("header:bad header").is_err());
        assert!(read("cookie").is_err());
    }
}
