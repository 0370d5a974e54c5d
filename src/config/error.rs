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
    /// Syntax, unknown key, missing field or wrong type, as found by the TOML parser.
    #[error("{path}:{line}: {message}", path = .path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
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
        ConfigError::Parse {
            path: self.path.clone(),
            line: e.span().map_or(1, |s| self.line_of(s.start)),
            message: e.message().trim().to_string(),
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
    fn missing_field_is_reported() {
        let err = source("name = \"a\"\n").parse::<Demo>().unwrap_err();
        assert!(err.to_string().contains("count"), "{err}");
    }
}
