//! Check kinds. Each file turns the kind's own fields of a `[[check]]` table into a compiled
//! [`Rule`] (regexes and schemas are compiled here, once per definition). [`KINDS`] is the
//! registry: adding a kind is one new file plus one line in it.

mod field_value;
mod json_schema;
mod json_valid;
mod length;
mod required_fields;
mod text_search;
mod whole_answer;

use std::fmt;
use std::ops::Range;
use std::path::Path;

use regex::{Regex, RegexBuilder};
use serde::de::DeserializeOwned;
use toml::Spanned;
use toml::de::DeTable;

use super::answer_json::{Answer, JsonPointer};
use crate::config::keys::FileKind;
use crate::config::{ConfigError, SourceText};

/// A compiled check kind: judges one answer.
pub trait Rule: Send + Sync + fmt::Debug {
    /// `Ok(())` when the answer passes; otherwise why not (which pointer, which text, which
    /// schema path), without the turn: the caller adds it.
    fn evaluate(&self, answer: &Answer<'_>) -> Result<(), String>;
}

/// Builds a kind's [`Rule`] from its fields.
pub type Build = fn(&mut KindFields<'_>) -> Result<Box<dyn Rule>, ConfigError>;

/// Every kind, by the name written as `kind = "..."`.
pub const KINDS: &[(&str, Build)] = &[
    ("json_valid", json_valid::build),
    ("json_schema", json_schema::build),
    ("required_fields", required_fields::build),
    ("field_equals", field_value::build_equals),
    ("field_matches", field_value::build_matches),
    ("field_one_of", field_value::build_one_of),
    ("contains", text_search::build_contains),
    ("not_contains", text_search::build_not_contains),
    ("regex", text_search::build_regex),
    ("not_regex", text_search::build_not_regex),
    ("max_words", length::build_max_words),
    ("max_chars", length::build_max_chars),
    ("max_lines", length::build_max_lines),
    ("one_of", whole_answer::build_one_of),
    ("starts_with", whole_answer::build_starts_with),
    ("ends_with", whole_answer::build_ends_with),
];

pub fn find(name: &str) -> Option<Build> {
    KINDS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, build)| *build)
}

/// The registered kind names, in registry order.
pub fn kind_names() -> Vec<&'static str> {
    KINDS.iter().map(|(n, _)| *n).collect()
}

pub(crate) fn names() -> String {
    kind_names().join(", ")
}

/// The fields of one `[[check]]` table that belong to its kind (the shared ones, `id`,
/// `kind`, `tag`, `description`, `turn`, `from_turn`, are taken out), with their spans so
/// that every error points at its line.
pub struct KindFields<'a> {
    src: &'a SourceText,
    table: Spanned<DeTable<'a>>,
    /// Bytes that define the check besides its table (a schema file's content), hashed
    /// with it so that editing the file makes a new definition.
    pub(crate) extra: Vec<u8>,
}

impl<'a> KindFields<'a> {
    pub(crate) fn new(src: &'a SourceText, table: Spanned<DeTable<'a>>) -> Self {
        KindFields {
            src,
            table,
            extra: Vec::new(),
        }
    }

    /// Deserializes the kind's parameters; unknown keys and wrong types name their line.
    pub fn parse<P: DeserializeOwned>(&self) -> Result<P, ConfigError> {
        let de = toml::de::Deserializer::from(self.table.clone());
        self.src.deserialize(de, FileKind::Checks, &["check"])
    }

    /// The span of the whole `[[check]]` table, for errors about a missing field.
    pub fn span(&self) -> Range<usize> {
        self.table.span()
    }

    pub fn invalid(
        &self,
        span: Range<usize>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> ConfigError {
        self.src.invalid(span, message, fix)
    }

    /// Compiles a text rule: `literal` text is escaped; `whole_word` demands a non-word
    /// character or the answer's edge on both sides (capture group 1 is the match itself).
    pub fn regex(
        &self,
        pattern: &Spanned<String>,
        literal: bool,
        case_sensitive: bool,
        whole_word: bool,
    ) -> Result<Regex, ConfigError> {
        let body = if literal {
            regex::escape(pattern.get_ref())
        } else {
            pattern.get_ref().clone()
        };
        if body.is_empty() {
            return Err(self.invalid(
                pattern.span(),
                "empty text or pattern matches every answer",
                "write the text the rule looks for",
            ));
        }
        // \b would misbehave around non-word edges such as "$20" or "v2.", hence explicit
        // edges; \W and \w are Unicode-aware.
        let full = if whole_word {
            format!(r"(?:^|\W)({body})(?:\W|$)")
        } else {
            format!("({body})")
        };
        RegexBuilder::new(&full)
            .case_insensitive(!case_sensitive)
            .build()
            .map_err(|e| {
                self.invalid(
                    pattern.span(),
                    format!("bad regex {:?}: {e}", pattern.get_ref()),
                    "fix the pattern (Rust regex syntax: no look-around, no backreferences; \
                     in TOML prefer '...' literal strings so backslashes stay as written)",
                )
            })
    }

    /// A validated JSON pointer, parsed once.
    pub fn pointer(&self, pointer: &Spanned<String>) -> Result<JsonPointer, ConfigError> {
        match JsonPointer::parse(pointer.get_ref()) {
            Ok(parsed) => Ok(parsed),
            Err(problem) => Err(self.invalid(
                pointer.span(),
                format!("bad JSON pointer {:?}: {problem}", pointer.get_ref()),
                "write a pointer such as \"/items/0/name\" (\"\" is the whole answer)",
            )),
        }
    }

    /// Reads a file named relative to the checks file; its content joins the definition hash.
    pub fn read_relative(&mut self, name: &Spanned<String>) -> Result<String, ConfigError> {
        let dir = self.src.path.parent().unwrap_or(Path::new("."));
        let path = dir.join(name.get_ref());
        let text = SourceText::read(&path)
            .map_err(|e| {
                self.invalid(
                    name.span(),
                    match e {
                        ConfigError::Read { error, .. } => {
                            format!("cannot read {}: {error}", path.display())
                        }
                        other => other.to_string(),
                    },
                    "give a path relative to this checks file",
                )
            })?
            .text;
        self.extra.extend_from_slice(text.as_bytes());
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    #[test]
    fn kind_names_are_unique() {
        let names = super::kind_names();
        assert_eq!(names.iter().collect::<HashSet<_>>().len(), names.len());
        assert!(names.contains(&"json_valid") && names.contains(&"ends_with"));
    }
}

/// Helpers for the kinds' unit tests: one check built from its kind fields.
#[cfg(test)]
pub(crate) mod testing {
    use crate::checks::CheckSet;
    use crate::checks::answer_json::Answer;
    use crate::config::SourceText;

    /// A checks file holding one check (tag custom) with these lines, e.g. `kind = "..."`.
    pub fn source(lines: &str) -> SourceText {
        SourceText {
            path: "checks/demo.toml".into(),
            text: format!(
                "scenario = \"demo\"\n\n[[check]]\nid = \"c\"\ntag = \"custom\"\n{lines}\n"
            ),
        }
    }

    /// The verdict of that check on one answer.
    pub fn judge(lines: &str, answer: &str) -> Result<(), String> {
        let set = CheckSet::from_source(&source(lines)).unwrap_or_else(|e| panic!("{e}"));
        set.checks[0].rule.evaluate(&Answer::new(answer))
    }

    /// The load error of that check, as shown to a user.
    pub fn load_error(lines: &str) -> String {
        match CheckSet::from_source(&source(lines)) {
            Ok(_) => panic!("expected an error for {lines:?}"),
            Err(e) => e.to_string(),
        }
    }
}
