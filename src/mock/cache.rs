//! The mock's prompt cache: a prefix cache with a retention time per profile, and a
//! gateway that may switch the provider serving a conversation.
//!
//! A request's prompt is the tool list and then its messages, each as the exact bytes
//! received. Every prefix that ends at a message boundary is hashed (chained, so a hash
//! names the whole prefix) and remembered until `retention` after its last use. The
//! cached part of a request is its longest remembered prefix, in whole 64-token blocks, as
//! real caches store them. The cache is scoped by model and, behind a gateway, by the
//! serving provider: a switch starts cold. A fresh salt in the system prompt therefore
//! never reads another pass's cache, and the same prefix in another conversation does.
//!
//! Tokens are estimated as bytes / 4 (+ 4 per message for its framing): the same estimate
//! for every request, so the shares compare.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::draw::Draw;
use serde::{Deserialize, Serialize};

/// Tokens per cache block.
pub const BLOCK: i64 = 64;
/// Entries kept before expired ones are dropped.
const PRUNE_AT: usize = 200_000;

/// Estimated tokens of one message's bytes.
pub fn message_tokens(bytes: &[u8]) -> i64 {
    bytes.len() as i64 / 4 + 4
}

/// What the cache found for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheUse {
    pub prompt_tokens: i64,
    pub cached_tokens: i64,
}

#[derive(Default)]
pub struct PrefixCache {
    /// Prefix hash → when it expires.
    entries: Mutex<HashMap<[u8; 32], Instant>>,
}

impl PrefixCache {
    /// Looks the request up and remembers all its prefixes until `now + retention`.
    /// `scope` separates models and serving providers.
    pub fn serve(
        &self,
        scope: &str,
        tools: Option<&[u8]>,
        messages: &[&[u8]],
        retention: Duration,
        now: Instant,
    ) -> CacheUse {
        let mut h = blake3::Hasher::new();
        h.update(&(scope.len() as u64).to_le_bytes());
        h.update(scope.as_bytes());
        let tools = tools.unwrap_or_default();
        h.update(&(tools.len() as u64).to_le_bytes());
        h.update(tools);
        let mut chain = *h.finalize().as_bytes();
        let mut tokens = tools.len() as i64 / 4;
        let mut prefixes = Vec::with_capacity(messages.len());
        for m in messages {
            let mut h = blake3::Hasher::new();
            h.update(&chain);
            h.update(&(m.len() as u64).to_le_bytes());
            h.update(m);
            chain = *h.finalize().as_bytes();
            tokens += message_tokens(m);
            prefixes.push((chain, tokens));
        }
        let expires = now + retention;
        // Poisoned only if a holder panicked, and none can (map reads and writes only).
        let mut entries = self.entries.lock().expect("cache lock");
        let hit = prefixes
            .iter()
            .rev()
            .find(|(hash, _)| entries.get(hash).is_some_and(|until| *until > now))
            .map_or(0, |(_, t)| *t);
        if entries.len() > PRUNE_AT {
            entries.retain(|_, until| *until > now);
        }
        for (hash, _) in &prefixes {
            entries.insert(*hash, expires);
        }
        CacheUse {
            prompt_tokens: tokens,
            cached_tokens: hit / BLOCK * BLOCK,
        }
    }
}

/// A gateway in front of several providers: each conversation sticks to one, and on a
/// share of requests the gateway moves it to another (seeded). The provider that served
/// is reported in a response header.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Gateway {
    /// The providers behind it, at least two.
    pub providers: Vec<String>,
    /// Per request, the chance the conversation moves to another provider.
    pub switch_rate: f64,
    /// The response header naming the provider.
    #[serde(default = "default_header")]
    pub header: String,
    /// Also name it in this top-level field of every chunk (or of the body), as
    /// OpenRouter's `provider`.
    #[serde(default)]
    pub field: Option<String>,
}

fn default_header() -> String {
    "x-served-by".to_string()
}

impl Gateway {
    pub fn check(&self) -> Result<(), String> {
        if self.providers.len() < 2 || self.providers.iter().any(|p| p.trim().is_empty()) {
            return Err("a gateway needs at least two named providers".into());
        }
        if !(0.0..=1.0).contains(&self.switch_rate) {
            return Err(format!(
                "gateway switch_rate {} is not a probability",
                self.switch_rate
            ));
        }
        axum::http::HeaderName::from_bytes(self.header.as_bytes())
            .map_err(|_| format!("gateway header {:?} is not a header name", self.header))?;
        Ok(())
    }
}

/// Which provider each conversation is on.
#[derive(Default)]
pub struct Routes {
    current: Mutex<HashMap<String, usize>>,
}

impl Routes {
    /// The provider for this request of `conversation`; `key` (the request's seeded key)
    /// decides whether it moves.
    pub fn route(&self, gateway: &Gateway, conversation: &str, key: [u8; 32]) -> String {
        let mut rng = Draw::from_seed(key);
        let n = gateway.providers.len();
        // Poisoned only if a holder panicked, and none can (map reads and writes only).
        let mut current = self.current.lock().expect("routes lock");
        let at = match current.get(conversation) {
            None => rng.index(n),
            Some(&i) if rng.unit() < gateway.switch_rate => (i + 1 + rng.index(n - 1)) % n,
            Some(&i) => i,
        };
        current.insert(conversation.to_string(), at);
        gateway.providers[at].clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(texts: &[&'static str]) -> Vec<&'static [u8]> {
        texts.iter().map(|t| t.as_bytes()).collect()
    }

    #[test]
    fn a_growing_conversation_reads_its_prefix_until_retention_passes() {
        let cache = PrefixCache::default();
        let t0 = Instant::now();
        let keep = Duration::from_secs(300);
        let sys = "s".repeat(1000);
        let sys: &'static str = Box::leak(sys.into_boxed_str());
        let first = cache.serve("m", None, &msgs(&[sys, "q1"]), keep, t0);
        assert_eq!(first.cached_tokens, 0, "a cold start");
        // 1,000 bytes: 250 tokens + 4; "q1": 0 + 4.
        assert_eq!(first.prompt_tokens, 254 + 4);
        // The next turn holds the first request as its prefix: 254 + 4 tokens → 256.
        let second = cache.serve(
            "m",
            None,
            &msgs(&[sys, "q1", "a1", "q2"]),
            keep,
            t0 + Duration::from_secs(10),
        );
        assert_eq!(second.cached_tokens, 256 / BLOCK * BLOCK);
        // Past the retention after the last use, nothing is cached.
        let late = cache.serve(
            "m",
            None,
            &msgs(&[sys, "q1", "a1", "q2", "a2", "q3"]),
            keep,
            t0 + Duration::from_secs(10 + 301),
        );
        assert_eq!(late.cached_tokens, 0);
        // Another scope (model or provider), or another salt, starts cold.
        let other = cache.serve("m2", None, &msgs(&[sys, "q1"]), keep, t0);
        assert_eq!(other.cached_tokens, 0);
        let salted = cache.serve(
            "m",
            None,
            &msgs(&["salt", "q1"]),
            keep,
            t0 + Duration::from_secs(320),
        );
        assert_eq!(salted.cached_tokens, 0);
    }

    #[test]
    fn tools_are_part_of_the_prefix() {
        let cache = PrefixCache::default();
        let t0 = Instant::now();
        let keep = Duration::from_secs(60);
        let long = "x".repeat(2000);
        let long: &'static str = Box::leak(long.into_boxed_str());
        cache.serve("m", Some(b"[tools-a]"), &msgs(&[long, "q"]), keep, t0);
        let same = cache.serve("m", Some(b"[tools-a]"), &msgs(&[long, "q", "a"]), keep, t0);
        let other = cache.serve("m", Some(b"[tools-b]"), &msgs(&[long, "q", "a"]), keep, t0);
        assert!(same.cached_tokens >= 448, "{same:?}");
        assert_eq!(other.cached_tokens, 0);
    }

    #[test]
    fn a_gateway_keeps_a_conversation_on_one_provider_and_switches_at_its_rate() {
        let gateway = Gateway {
            providers: vec!["a".into(), "b".into(), "c".into()],
            switch_rate: 0.25,
            header: default_header(),
            field: None,
        };
        let routes = Routes::default();
        let mut switches = 0;
        let mut last = None;
        let n = 4000;
        for i in 0..n {
            let key = *blake3::hash(&(i as u32).to_le_bytes()).as_bytes();
            let p = routes.route(&gateway, "conv", key);
            if last.as_ref().is_some_and(|l| *l != p) {
                switches += 1;
            }
            last = Some(p);
        }
        let rate = switches as f64 / (n - 1) as f64;
        assert!((0.2..0.3).contains(&rate), "{rate}");
        let never = Gateway {
            switch_rate: 0.0,
            ..gateway.clone()
        };
        let first = routes.route(&never, "other", [1; 32]);
        for k in 2..50u8 {
            assert_eq!(routes.route(&never, "other", [k; 32]), first);
        }
        assert!(never.check().is_ok());
        let bad = Gateway {
            providers: vec!["solo".into()],
            ..gateway
        };
        assert!(bad.check().is_err());
    }
}
