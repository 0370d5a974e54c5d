//! Judgment keys and the seeded call order.
//!
//! A judgment's key hashes everything that can change its answer: where the judge runs
//! (its base URL, or the built-in mock) and whether its results are simulated, the judge
//! model and request parameters, the system text and template text, the rubric's
//! content, the blinded transcript and the replicate index; a rubric-built response
//! schema, a pairwise template of the judge's own, and for a simulated judge the version
//! of the mock's grader (`grader_version`, set by whoever starts the mock judge). Not the judge's key, headers,
//! concurrency or retry policy, which change how an answer is fetched, not what it says.
//! So a simulated run never stands in for a real judge of the same id and model.

use crate::config::judge::ResponseFormat;
use crate::config::{JudgeEndpoint, JudgeSettings, Rubric};

/// Length-prefixed fields, so that no two different inputs hash alike.
struct KeyHasher(blake3::Hasher);

impl KeyHasher {
    fn new(domain: &str) -> Self {
        let mut k = KeyHasher(blake3::Hasher::new());
        k.field(domain.as_bytes());
        k
    }

    fn field(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    fn hex(&self, len: usize) -> String {
        self.0.finalize().to_hex()[..len].to_string()
    }
}

/// What a judge's answers depend on: endpoint, simulated or not, model, parameters,
/// system text, template text.
pub fn judge_hash(settings: &JudgeSettings) -> String {
    // Request parameters are plain values with string keys: serialising cannot fail.
    let params = serde_json::to_string(&settings.request).expect("params serialise");
    let endpoint = match &settings.endpoint {
        JudgeEndpoint::Url(url) => url.as_str(),
        JudgeEndpoint::BuiltinMock => "builtin-mock",
    };
    let mut k = KeyHasher::new("turnbench-judge-v2");
    k.field(endpoint.as_bytes())
        .field(if settings.simulated {
            b"simulated"
        } else {
            b"real"
        })
        .field(settings.model.as_bytes())
        .field(params.as_bytes())
        .field(settings.system.as_deref().unwrap_or("\0none").as_bytes())
        .field(settings.template.text.as_bytes());
    // Added only when set, so the keys of judges that set none of them stay as they were.
    if settings.response_format == ResponseFormat::RubricSchema {
        // The schema itself follows from the rubric, which every key holds.
        k.field(b"response_format=rubric_schema");
    }
    if let Some(t) = &settings.pairwise_template {
        k.field(b"pairwise_template").field(t.text.as_bytes());
    }
    if let Some(version) = settings.grader_version {
        // A simulated judge's answers are the grader's: a new grader is a new judge.
        k.field(b"mock-grader").field(&version.to_le_bytes());
    }
    k.hex(24)
}

/// The cache key of one judgment.
pub fn judgment_key(
    judge_hash: &str,
    rubric: &Rubric,
    blinded_transcript: &str,
    replicate: u32,
) -> String {
    KeyHasher::new("turnbench-judgment-v1")
        .field(judge_hash.as_bytes())
        .field(rubric.content_json().as_bytes())
        .field(blinded_transcript.as_bytes())
        .field(&replicate.to_le_bytes())
        .hex(32)
}

/// The key of a replicate whose prompt varies (criteria order, label, nonce): the plain
/// key's inputs plus a description of exactly what was varied, so a changed variation is
/// asked anew and an unchanged one is found again.
pub fn varied_judgment_key(
    judge_hash: &str,
    rubric: &Rubric,
    blinded_transcript: &str,
    replicate: u32,
    variation: &str,
) -> String {
    KeyHasher::new("turnbench-judgment-varied-v1")
        .field(judge_hash.as_bytes())
        .field(rubric.content_json().as_bytes())
        .field(blinded_transcript.as_bytes())
        .field(&replicate.to_le_bytes())
        .field(variation.as_bytes())
        .hex(32)
}

/// The key of one pairwise ask: the judge's settings, the rubric's content, the two
/// blinded transcripts in the order shown and which of them is the baseline (so the
/// swapped ask has its own key even when both transcripts read the same).
pub fn pairwise_key(
    judge_hash: &str,
    rubric: &Rubric,
    first: &str,
    second: &str,
    baseline_position: &str,
) -> String {
    KeyHasher::new("turnbench-pairwise-v1")
        .field(judge_hash.as_bytes())
        .field(rubric.content_json().as_bytes())
        .field(first.as_bytes())
        .field(second.as_bytes())
        .field(baseline_position.as_bytes())
        .hex(32)
}

/// The key of one reference-anchor ask: the judge's settings, the rubric's content, the
/// blinded transcript, and which scenario and variant (reference or defect) it is.
pub fn anchor_key(
    judge_hash: &str,
    rubric: &Rubric,
    blinded_transcript: &str,
    scenario: &str,
    defect: Option<&str>,
) -> String {
    KeyHasher::new("turnbench-anchor-v1")
        .field(judge_hash.as_bytes())
        .field(rubric.content_json().as_bytes())
        .field(blinded_transcript.as_bytes())
        .field(scenario.as_bytes())
        .field(defect.unwrap_or("\0reference").as_bytes())
        .hex(32)
}

/// Position of a judge call in the run's order: a seeded hash, so the order is random
/// across targets, the same for the same seed, and a partial re-run keeps the relative
/// order of what is left.
pub fn order_key(seed: u64, conversation_uid: &str, replicate: u32) -> [u8; 32] {
    *KeyHasher::new("turnbench-judge-order-v1")
        .field(&seed.to_le_bytes())
        .field(conversation_uid.as_bytes())
        .field(&replicate.to_le_bytes())
        .0
        .finalize()
        .as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SourceText;

    fn rubric(question: &str) -> Rubric {
        Rubric::from_source(&SourceText {
            path: "r.toml".into(),
            text: format!("id = \"r\"\nversion = 1\nscale = {{ min = 1, max = 5 }}\n[[criterion]]\nid = \"a\"\nquestion = \"{question}\"\nanchors = {{ 1 = \"no\", 5 = \"yes\" }}\n[completed]\nquestion = \"Done?\"\n"),
        })
        .unwrap()
    }

    #[test]
    fn key_changes_with_each_input() {
        let r = rubric("A?");
        let base = judgment_key("j", &r, "t", 1);
        assert_eq!(base, judgment_key("j", &r, "t", 1));
        assert_ne!(base, judgment_key("k", &r, "t", 1));
        assert_ne!(base, judgment_key("j", &rubric("B?"), "t", 1));
        assert_ne!(base, judgment_key("j", &r, "u", 1));
        assert_ne!(base, judgment_key("j", &r, "t", 2));
        let varied = varied_judgment_key("j", &r, "t", 2, "vary=order;order=a");
        assert_ne!(varied, judgment_key("j", &r, "t", 2));
        assert_ne!(
            varied,
            varied_judgment_key("j", &r, "t", 2, "vary=order;order=b")
        );
        assert_eq!(
            varied,
            varied_judgment_key("j", &r, "t", 2, "vary=order;order=a")
        );
    }

    #[test]
    fn order_is_seeded() {
        assert_eq!(order_key(1, "c", 1), order_key(1, "c", 1));
        assert_ne!(order_key(1, "c", 1), order_key(2, "c", 1));
        assert_ne!(order_key(1, "c", 1), order_key(1, "c", 2));
    }
}
