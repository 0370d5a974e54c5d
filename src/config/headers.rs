//! Extra HTTP headers of a target or a judge: literal values (`headers`) and values read
//! from environment variables (`headers_env = { "x-api-key" = "ACME_KEY" }`), for
//! providers authenticated by a header rather than a bearer key.
//!
//! A header's value may be a secret, so values never leave memory: settings serialise
//! header names (and variable names) only, and every message names the header, never
//! its value.

use std::collections::BTreeMap;

use serde::Serializer;

use super::error::{ConfigError, SourceText};

/// Serialises a header map with each value replaced: the names say which headers were
/// sent; the values are not stored.
pub fn names_only<S: Serializer>(
    headers: &BTreeMap<String, String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(headers.keys().map(|k| (k, "<not stored>")))
}

/// Whether an environment variable holds a value (set, and not only whitespace).
pub fn env_is_set(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| !v.trim().is_empty())
}

/// Checks header names and literal values, that no header is given twice, and (when
/// `require_env`) that each `headers_env` variable is set and not empty. `owner` names
/// the target or judge in messages.
pub fn validate(
    src: &SourceText,
    owner: &str,
    literal: &BTreeMap<String, String>,
    from_env: &BTreeMap<String, String>,
    require_env: bool,
) -> Result<(), ConfigError> {
    let line_of = |name: &str| {
        src.text
            .find(&format!("\"{name}\""))
            .or_else(|| src.text.find(name))
            .map_or_else(|| src.key_line("headers"), |o| src.line_of(o))
    };
    for name in literal.keys().chain(from_env.keys()) {
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(ConfigError::invalid(
                &src.path,
                line_of(name),
                format!("header name {name:?} of {owner} is not a valid HTTP header name"),
                "use letters, digits and '-' only, e.g. \"x-api-key\"",
            ));
        }
    }
    for (name, value) in literal {
        if reqwest::header::HeaderValue::from_str(value).is_err() {
            return Err(ConfigError::invalid(
                &src.path,
                line_of(name),
                format!("the value of header {name:?} of {owner} is not a valid HTTP header value"),
                "remove line breaks and control characters from it",
            ));
        }
        if from_env.contains_key(name) {
            return Err(ConfigError::invalid(
                &src.path,
                line_of(name),
                format!("header {name:?} of {owner} is in both headers and headers_env"),
                "keep one of them",
            ));
        }
    }
    for (name, var) in from_env {
        if require_env && !env_is_set(var) {
            return Err(ConfigError::invalid(
                &src.path,
                line_of(name),
                format!(
                    "environment variable {var} (headers_env {name:?} of {owner}) is not set or empty"
                ),
                unset_fix(var, &format!("the header {name:?}")),
            ));
        }
        if let Ok(value) = std::env::var(var)
            && reqwest::header::HeaderValue::from_str(&value).is_err()
        {
            return Err(ConfigError::invalid(
                &src.path,
                line_of(name),
                format!(
                    "environment variable {var} (headers_env {name:?} of {owner}) is not a valid HTTP header value"
                ),
                format!("remove line breaks and control characters from {var}"),
            ));
        }
    }
    Ok(())
}

/// The headers to send: literal values, then each `headers_env` value read now. A
/// variable unset or empty is the `Err` (its name), for the caller's message.
pub fn resolve(
    literal: &BTreeMap<String, String>,
    from_env: &BTreeMap<String, String>,
) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = literal
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (name, var) in from_env {
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => out.push((name.clone(), v)),
            _ => return Err(var.clone()),
        }
    }
    Ok(out)
}

/// How the dry run shows a target's or judge's headers: names, and where each value
/// comes from; never a value.
pub fn describe(literal: &BTreeMap<String, String>, from_env: &BTreeMap<String, String>) -> String {
    let mut parts: Vec<String> = literal
        .keys()
        .map(|k| format!("{k} (value in the file)"))
        .collect();
    for (name, var) in from_env {
        let state = if env_is_set(var) {
            "set"
        } else {
            "NOT SET: collect will refuse to start"
        };
        parts.push(format!("{name} (from ${var}, {state})"));
    }
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

/// The fix for a variable an endpoint names and nobody set: the same words for every key.
pub fn unset_fix(var: &str, remove: &str) -> String {
    format!(
        "export {var}=... before running, or remove {remove}; what sends nothing (lint, --dry-run, judge --audit) needs no value"
    )
}
