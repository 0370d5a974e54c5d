//! Replicates that measure something: at temperature 0 an identical prompt gets an
//! identical answer, so replicates after the first vary what a verdict should not depend
//! on (settings `vary`): the order of the rubric's criteria, the opaque label, the
//! transcript's nonce — each seeded by the conversation and the replicate, so a re-run
//! builds the same prompts and hits the cache. Replicate 1 is always the plain prompt.

use super::blind::BlindTranscript;
use super::prompt;
use crate::config::{Rubric, Variation};

/// One replicate's prompt inputs.
#[derive(Debug, Clone)]
pub struct ReplicateInputs {
    pub label: String,
    pub transcript: BlindTranscript,
    /// The rubric as shown: criteria possibly reordered (ids and content unchanged).
    pub shown: Rubric,
    /// What was varied, for the cache key: `None` for the plain prompt.
    pub variation: Option<String>,
}

/// The inputs of `replicate` for conversation `uid`.
pub fn replicate_inputs(
    vary: &[Variation],
    rubric: &Rubric,
    transcript: &BlindTranscript,
    uid: &str,
    replicate: u32,
) -> ReplicateInputs {
    let plain_label = prompt::opaque_label(uid);
    if replicate <= 1 || vary.is_empty() {
        return ReplicateInputs {
            label: plain_label,
            transcript: transcript.clone(),
            shown: rubric.clone(),
            variation: None,
        };
    }
    let mut shown = rubric.clone();
    let mut label = plain_label;
    let mut transcript = transcript.clone();
    for v in vary {
        match v {
            Variation::Order => {
                let order = permutation(shown.criteria.len(), uid, replicate);
                let criteria = std::mem::take(&mut shown.criteria);
                let mut slots: Vec<Option<_>> = criteria.into_iter().map(Some).collect();
                shown.criteria = order
                    .iter()
                    .filter_map(|&i| slots.get_mut(i).and_then(Option::take))
                    .collect();
            }
            Variation::Label => {
                label = prompt::opaque_label(&format!("{uid}\0replicate {replicate}"))
            }
            Variation::Nonce => transcript = transcript.with_salted_nonce(replicate),
        }
    }
    let order: Vec<&str> = shown.criteria.iter().map(|c| c.id.as_str()).collect();
    let variation = format!(
        "vary={};order={};label={label}",
        vary.iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(","),
        order.join(",")
    );
    ReplicateInputs {
        label,
        transcript,
        shown,
        variation: Some(variation),
    }
}

/// A seeded permutation of 0..n (Fisher–Yates over blake3's output stream).
fn permutation(n: usize, uid: &str, replicate: u32) -> Vec<usize> {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"turnbench-criteria-order\0");
    hasher.update(uid.as_bytes());
    hasher.update(&replicate.to_le_bytes());
    let mut stream = hasher.finalize_xof();
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let mut bytes = [0u8; 8];
        stream.fill(&mut bytes);
        // The modulo bias over 2^64 is below 10^-17 for any rubric.
        let j = (u64::from_le_bytes(bytes) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SourceText;
    use crate::judge::blind::{Redactor, VisibleMessage, blind};

    fn rubric() -> Rubric {
        let mut text = String::from("id = \"r\"\nversion = 1\nscale = { min = 1, max = 5 }\n");
        for c in ["a", "b", "c", "d", "e"] {
            text.push_str(&format!(
                "[[criterion]]\nid = \"{c}\"\nquestion = \"{c}?\"\nanchors = {{ 1 = \"no\", 5 = \"yes\" }}\n"
            ));
        }
        text.push_str("[completed]\nquestion = \"Done?\"\n");
        Rubric::from_source(&SourceText {
            path: "r.toml".into(),
            text,
        })
        .unwrap()
    }

    fn transcript() -> BlindTranscript {
        blind(
            &[VisibleMessage {
                role: "user".into(),
                content: Some("hello".into()),
                reasoning: None,
            }],
            &Redactor::new(vec![]),
            false,
        )
    }

    fn ids(r: &Rubric) -> Vec<String> {
        r.criteria.iter().map(|c| c.id.clone()).collect()
    }

    #[test]
    fn replicate_one_is_the_plain_prompt() {
        let all = [Variation::Order, Variation::Label, Variation::Nonce];
        let one = replicate_inputs(&all, &rubric(), &transcript(), "u1", 1);
        assert_eq!(one.label, prompt::opaque_label("u1"));
        assert_eq!(one.transcript, transcript());
        assert_eq!(ids(&one.shown), ["a", "b", "c", "d", "e"]);
        assert!(one.variation.is_none());
        // Nothing to vary: every replicate is plain.
        assert!(
            replicate_inputs(&[], &rubric(), &transcript(), "u1", 3)
                .variation
                .is_none()
        );
    }

    #[test]
    fn later_replicates_vary_what_was_asked_seeded() {
        let all = [Variation::Order, Variation::Label, Variation::Nonce];
        let r = rubric();
        let t = transcript();
        let mut orders = std::collections::HashSet::new();
        for rep in 2..12 {
            let x = replicate_inputs(&all, &r, &t, "u1", rep);
            // Same again: seeded.
            let again = replicate_inputs(&all, &r, &t, "u1", rep);
            assert_eq!(ids(&x.shown), ids(&again.shown));
            assert_eq!(x.variation, again.variation);
            assert_ne!(x.label, prompt::opaque_label("u1"));
            assert_ne!(x.transcript.begin, t.begin);
            assert_eq!(x.transcript.messages, t.messages);
            let mut sorted = ids(&x.shown);
            sorted.sort();
            assert_eq!(sorted, ["a", "b", "c", "d", "e"]);
            orders.insert(ids(&x.shown));
        }
        // Ten replicates of five criteria: the orders differ (120 possible).
        assert!(orders.len() >= 5, "{orders:?}");
        // Only the label: criteria and nonce stay.
        let x = replicate_inputs(&[Variation::Label], &r, &t, "u1", 2);
        assert_eq!(ids(&x.shown), ids(&r));
        assert_eq!(x.transcript, t);
        assert_ne!(x.label, prompt::opaque_label("u1"));
    }
}
