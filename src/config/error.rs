//! Errors for definition files: every one names the file, the line and what to fix.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

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

    /// Deserializes the whole file; parser errors become `file:line: message`.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, ConfigError> {
        toml::from_str(&self.text).map_err(|e| self.toml_error(e))
    }

    /// A TOML error in this file as `file:line: message` (line 1 when it has no position).
    pub fn toml_error(&self, e: toml::de::Error) -> ConfigError {
        let line = e.span().map_or(1, |s| self.line_of(s.start));
        let message = e.message().trim().to_string();
        let key = self.text.lines().nth(line - 1).and_then(key_of);
        ConfigError::Parse {
            path: self.path.clone(),
            line,
            fix: parse_fix(&message, key),
            message,
        }
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
            .parse::<Demo>()
            .unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("demo.toml:3:"), "{text}");
        assert!(text.contains("colour"), "{text}");
    }

    #[test]
    fn wrong_type_names_its_line() {
        let err = source("name = \"a\"\n\ncount = \"many\"\n")
            .parse::<Demo>()
            .unwrap_err();
        assert!(err.to_string().starts_with("demo.toml:3:"), "{err}");
    }

    #[test]
    fn every_parser_error_says_what_the_key_takes() {
        let fix = |text: &str| match source(text).parse::<Demo>().unwrap_err() {
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
            .parse::<Demo>()
            .unwrap_err();
        assert!(err.to_string().contains("\n  fix: `count` takes"), "{err}");
    }

    #[test]
    fn missing_field_is_reported() {
        let err = source("name = \"a\"\n").parse::<Demo>().unwrap_err();
        assert!(err.to_string().contains("count"), "{err}");
    }
}
