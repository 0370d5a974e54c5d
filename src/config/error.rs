//! Errors for definition files: every one names the file, the line and what to fix.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer};
use serde_path_to_error::Segment;

use super::keys::{self, FileKind, KeyDoc};

/// A problem with a definition file (bench, scenario, check, rubric, judge).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `error` is not a `#[source]`: the message carries it, so `{:#}` prints it once.
    #[error("{path}: cannot read: {error}", path = .path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Syntax, unknown key, missing field or wrong type, as found by the TOML parser, with
    /// what the key takes ([`parse_fix`]).
    #[error("{path}:{line}: {message}\n  fix: {fix}", path = .path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
        fix: String,
    },
    /// The file parsed, but a value is not acceptable.
    #[error("{path}:{line}: {message}\n  fix: {fix}", path = .path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
        fix: String,
    },
}

impl ConfigError {
    pub fn invalid(
        path: &Path,
        line: usize,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        ConfigError::Invalid {
            path: path.to_path_buf(),
            line,
            message: message.into(),
            fix: fix.into(),
        }
    }
}

/// A definition file's text, kept so that later validation can point at a line.
#[derive(Debug, Clone)]
pub struct SourceText {
    pub path: PathBuf,
    pub text: String,
}

impl SourceText {
    /// Reads a definition file: from disk, or from the built-in set for a path under
    /// `<built-in>` ([`super::embedded`]).
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        if super::embedded::is_builtin(path) {
            return match super::embedded::read(path) {
                Some(text) => Ok(SourceText {
                    path: path.to_path_buf(),
                    text: text.to_string(),
                }),
                None => Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    error: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "the built-in definitions have no such file",
                    ),
                }),
            };
        }
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        Ok(SourceText {
            path: path.to_path_buf(),
            text,
        })
    }

    /// Deserializes the whole file, a file of `kind`; parser errors become
    /// `file:line: message` with a fix that names the key, what it is for and what it
    /// takes ([`super::keys`]).
    pub fn parse<T: DeserializeOwned>(&self, kind: FileKind) -> Result<T, ConfigError> {
        let de = toml::de::Deserializer::parse(&self.text).map_err(|e| self.toml_error(e))?;
        self.deserialize(de, kind, &[])
    }

    /// Deserializes one part of this file (a check's table: `within` = `["check"]`) with
    /// the path of the key an error is about, for its fix.
    pub fn deserialize<'de, T, D>(
        &self,
        de: D,
        kind: FileKind,
        within: &[&str],
    ) -> Result<T, ConfigError>
    where
        T: Deserialize<'de>,
        D: Deserializer<'de, Error = toml::de::Error>,
    {
        serde_path_to_error::deserialize(de).map_err(|e| {
            let mut path: Vec<String> = within.iter().map(|s| s.to_string()).collect();
            path.extend(e.path().iter().filter_map(|seg| match seg {
                // Spanned values are read through private keys: not the user's.
                Segment::Map { key } if !key.starts_with("$__") => Some(key.clone()),
                _ => None,
            }));
            let names: Vec<&str> = path.iter().map(String::as_str).collect();
            let message = e.inner().message().trim().to_string();
            let known = keys::find(kind, &names).filter(|_| about_a_value(&message));
            self.keyed_error(e.into_inner(), names.last().copied(), known)
        })
    }

    /// A TOML error in this file as `file:line: message` (line 1 when it has no position),
    /// its fix from the parser's message and the key on its line.
    pub fn toml_error(&self, e: toml::de::Error) -> ConfigError {
        self.keyed_error(e, None, None)
    }

    /// A TOML error about `key` (`None`: the key on the error's line), with the fix
    /// `known` says when the key's entry is known, else one from the parser's message.
    fn keyed_error(
        &self,
        e: toml::de::Error,
        key: Option<&str>,
        known: Option<&KeyDoc>,
    ) -> ConfigError {
        let line = e.span().map_or(1, |s| self.line_of(s.start));
        let message = e.message().trim().to_string();
        let fix = match known {
            Some(doc) => keys::fix_for(doc),
            None => {
                let key = key.or_else(|| self.text.lines().nth(line - 1).and_then(key_of));
                parse_fix(&message, key)
            }
        };
        ConfigError::Parse {
            path: self.path.clone(),
            line,
            fix,
            message,
        }
    }

    /// A value of a file of `kind` out of the range its key takes (a check after
    /// parsing): `file:line: message` with the key's meaning and range as the fix.
    pub fn out_of_range(
        &self,
        kind: FileKind,
        path: &[&str],
        line: usize,
        message: impl Into<String>,
    ) -> ConfigError {
        let key = path.last().copied().unwrap_or("this key");
        let fix = keys::find(kind, path).map_or_else(
            || format!("set `{key}` to an accepted value"),
            keys::fix_for,
        );
        ConfigError::invalid(&self.path, line, message, fix)
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// Line of `key =` at the start of a line (1 when absent), for errors about scalar
    /// settings, which carry no span.
    pub fn key_line(&self, key: &str) -> usize {
        self.text
            .lines()
            .position(|l| {
                l.trim_start()
                    .strip_prefix(key)
                    .is_some_and(|r| r.trim_start().starts_with('='))
            })
            .map_or(1, |i| i + 1)
    }

    pub fn invalid(
        &self,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> ConfigError {
        ConfigError::invalid(&self.path, self.line_of(span.start), message, fix)
    }
}

/// The key a `key = value` line sets (`repeats` of `repeats = -1`; the last part of a
/// dotted key).
fn key_of(line: &str) -> Option<&str> {
    let (key, _) = line.split_once('=')?;
    let key = key.trim().rsplit('.').next()?.trim().trim_matches('"');
    (!key.is_empty() && !key.starts_with('[') && !key.starts_with('#')).then_some(key)
}

/// Whether a parser error is about a key's value (a wrong type, a value out of the type's
/// range, a value its own parser refused), rather than about keys or syntax.
fn about_a_value(message: &str) -> bool {
    ![
        "unknown field",
        "missing field",
        "duplicate key",
        "invalid key",
    ]
    .iter()
    .any(|p| message.starts_with(p))
}

/// What to do about a parser error: the accepted values of the key's type (from the
/// parser's "expected …"), or the keys and variants it lists.
pub(crate) fn parse_fix(message: &str, key: Option<&str>) -> String {
    let key_text = key.map_or("this key".to_string(), |k| format!("`{k}`"));
    let example = |value: &str| key.map_or(String::new(), |k| format!(" (e.g. {k} = {value})"));
    let typed = ["invalid type", "invalid value", "invalid length"]
        .iter()
        .any(|p| message.starts_with(p));
    let expected = message
        .rsplit_once("expected ")
        .map(|(_, e)| e.trim())
        .filter(|_| typed);
    if message.starts_with("unknown field") {
        return "remove the key or correct its spelling: the accepted keys are listed above".into();
    }
    if message.starts_with("unknown variant") {
        return format!("set {key_text} to one of the values listed above");
    }
    if let Some(field) = message.strip_prefix("missing field ") {
        return format!(
            "add {} = … to this table (the docs of this file's kind say what it means)",
            field.trim_matches('`')
        );
    }
    match expected {
        Some("u8" | "u16" | "u32" | "u64" | "usize") => {
            format!("{key_text} takes a whole number, 0 or more{}", example("3"))
        }
        Some("i8" | "i16" | "i32" | "i64" | "isize") => {
            format!("{key_text} takes a whole number{}", example("3"))
        }
        Some("f32" | "f64") => format!("{key_text} takes a number{}", example("0.5")),
        Some("a boolean") => format!("{key_text} takes true or false{}", example("true")),
        Some(e) if e.contains("string") => {
            format!("{key_text} takes a quoted string{}", example("\"text\""))
        }
        Some(e) if e.contains("sequence") || e.contains("array") => {
            format!("{key_text} takes a list in brackets{}", example("[\"a\", \"b\"]"))
        }
        Some(e) if e.contains("map") || e.contains("table") || e.contains("struct") => {
            format!("{key_text} takes a table: a [section] or {{ key = value, … }}")
        }
        Some(e) => format!("{key_text} takes {e}"),
        None => "check the TOML syntax on this line (as the parser says above): `key = value`, strings in quotes, lists in brackets, [table] headers".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Demo {
        name: String,
        count: u32,
    }

    fn source(text: &str) -> SourceText {
        SourceText {
            path: "demo.toml".into(),
            text: text.to_string(),
        }
    }

    #[test]
    fn unknown_key_names_its_line() {
        let err = source("name = \"a\"\ncount = 1\ncolour = 3\n")
            .parse::<Demo>(FileKind::Mock)
            .unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("demo.toml:3:"), "{text}");
        assert!(text.contains("colour"), "{text}");
    }

    #[test]
    fn wrong_type_names_its_line() {
        let err = source("name = \"a\"\n\ncount = \"many\"\n")
            .parse::<Demo>(FileKind::Mock)
            .unwrap_err();
        assert!(err.to_string().starts_with("demo.toml:3:"), "{err}");
    }

    #[test]
    fn every_parser_error_says_what_the_key_takes() {
        let fix = |text: &str| match source(text).parse::<Demo>(FileKind::Mock).unwrap_err() {
            ConfigError::Parse { fix, .. } => fix,
            other => panic!("{other}"),
        };
        assert_eq!(
            fix("name = \"a\"\ncount = -1\n"),
            "`count` takes a whole number, 0 or more (e.g. count = 3)"
        );
        assert_eq!(
            fix("name = 3\ncount = 1\n"),
            "`name` takes a quoted string (e.g. name = \"text\")"
        );
        assert!(fix("name = \"a\"\ncount = 1\ncolour = 3\n").starts_with("remove the key"));
        assert!(fix("name = \"a\"\n").starts_with("add count = …"));
        assert!(fix("name = \"a\n").starts_with("check the TOML syntax"));
        let err = source("name = \"a\"\ncount = -1\n")
            .parse::<Demo>(FileKind::Mock)
            .unwrap_err();
        assert!(err.to_string().contains("\n  fix: `count` takes"), "{err}");
    }

    #[test]
    fn missing_field_is_reported() {
        let err = source("name = \"a\"\n")
            .parse::<Demo>(FileKind::Mock)
            .unwrap_err();
        assert!(err.to_string().contains("count"), "{err}");
    }
}
