//! The shipped, versioned list of vendor and model-family names (`names.toml`), and the
//! words blinding and the audit read a name's context with. Compiled in; a unit test
//! proves the file parses and holds what the docs promise.

use std::sync::LazyLock;

use serde::Deserialize;

const SOURCE: &str = include_str!("names.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NameList {
    /// Raised whenever an entry changes; stored with every judge's settings.
    pub version: u32,
    #[serde(rename = "vendor")]
    pub vendors: Vec<Vendor>,
    pub ordinary_words: Vec<String>,
    pub placeholders: Vec<String>,
    pub identifying_after: Vec<String>,
    pub authoring_verbs: Vec<String>,
    pub self_lead_ins: Vec<String>,
    pub identifying_json_keys: Vec<String>,
    pub generic_words: Vec<String>,
    pub hosting_lead_ins: Vec<String>,
    pub capitalised_lead_ins: Vec<String>,
    pub identifying_suffixes: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vendor {
    pub name: String,
    /// Not ordinary words: redacted wherever they stand as a word.
    pub distinctive: Vec<String>,
    /// Ordinary words too: redacted only where they identify.
    pub contextual: Vec<String>,
}

static SHIPPED: LazyLock<NameList> = LazyLock::new(|| {
    // The file is compiled in and parsed by a unit test: a failure here is a build defect.
    toml::from_str(SOURCE).expect("src/judge/names.toml parses (see its unit test)")
});

/// The list shipped with this build.
pub fn shipped() -> &'static NameList {
    &SHIPPED
}

fn has(list: &[String], word: &str) -> bool {
    list.iter().any(|w| w.eq_ignore_ascii_case(word))
}

impl NameList {
    /// A name a target gets when nothing named it (`unknown`): never redacted.
    pub fn is_placeholder(&self, name: &str) -> bool {
        has(&self.placeholders, name.trim())
    }

    /// An ordinary word: redacted only where it identifies.
    pub fn is_ordinary(&self, name: &str) -> bool {
        has(&self.ordinary_words, name) || self.vendors.iter().any(|v| has(&v.contextual, name))
    }

    /// A word that is never a self-identified name ("AI", "Large", "Sorry").
    pub fn is_generic(&self, word: &str) -> bool {
        has(&self.generic_words, word)
    }

    pub fn identifies_after(&self, word: &str) -> bool {
        has(&self.identifying_after, word)
    }

    pub fn is_authoring_verb(&self, word: &str) -> bool {
        has(&self.authoring_verbs, word)
    }

    /// "-hosted", "-served": glued to a target's name by a hyphen, it identifies.
    pub fn is_identifying_suffix(&self, word: &str) -> bool {
        has(&self.identifying_suffixes, word)
    }

    /// Every vendor and family name, with whether it is an ordinary word.
    pub fn names(&self) -> impl Iterator<Item = (&str, bool)> {
        self.vendors.iter().flat_map(|v| {
            v.distinctive
                .iter()
                .map(|n| (n.as_str(), false))
                .chain(v.contextual.iter().map(|n| (n.as_str(), true)))
        })
    }
}

/// Lower-cases text character by character wherever that keeps the character's UTF-8
/// length, so byte offsets in the folded text are offsets in the original. ("İ" and the
/// few others whose lower case is longer are left as they are.)
pub fn fold(text: &str) -> String {
    text.chars()
        .map(|c| {
            let mut lower = c.to_lowercase();
            match (lower.next(), lower.next()) {
                (Some(l), None) if l.len_utf8() == c.len_utf8() => l,
                _ => c,
            }
        })
        .collect()
}

/// A letter of the Latin script: the neighbour that makes a name part of a longer word
/// ("ernie" in "Bernie"). Other scripts are not written with spaces between words.
pub fn is_latin_letter(c: char) -> bool {
    c.is_ascii_alphabetic() || (('\u{00C0}'..='\u{024F}').contains(&c) && c.is_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_list_parses_and_is_wider_than_version_one() {
        let list = shipped();
        assert_eq!(list.version, 3);
        let all: Vec<&str> = list.names().map(|(n, _)| n).collect();
        for name in [
            "gemini",
            "google",
            "llama",
            "meta",
            "phi",
            "microsoft",
            "mistral",
            "codestral",
            "cohere",
            "command",
            "xai",
            "grok",
            "claude",
            "kimi",
            "glm",
            "通义千问",
        ] {
            assert!(all.contains(&name), "{name} missing");
        }
        // Every entry is lower case (matching folds the text, never the list).
        for n in &all {
            assert_eq!(fold(n), *n, "{n} is not lower case");
        }
        assert!(list.is_ordinary("Together") && list.is_ordinary("meta"));
        assert!(!list.is_ordinary("claude"));
        // Provider names that are no ordinary word are not treated as one.
        for provider in ["groq", "deepinfra", "cerebras", "sambanova", "openrouter"] {
            assert!(!list.is_ordinary(provider), "{provider}");
        }
        assert!(list.is_placeholder("unknown") && list.is_placeholder(" Unknown "));
        assert!(list.is_generic("Sorry"));
    }

    #[test]
    fn folding_keeps_byte_offsets() {
        for text in [
            "Grok İstanbul ẞ",
            "ClaudeÄÖ",
            "通义千问",
            "ГигаЧат",
            "plain",
        ] {
            let f = fold(text);
            assert_eq!(f.len(), text.len());
            assert!(text.char_indices().all(|(i, _)| f.is_char_boundary(i)));
        }
        assert_eq!(fold("ГигаЧат Claude"), "гигачат claude");
    }
}
