//! The endpoint a bench's target and a judge send to: its base URL and how requests to it
//! authenticate (a key variable, extra headers, URL credentials). One set of keys, declared
//! once ([`with_endpoint_keys!`]) in both kinds of file, checked by one function
//! ([`check`]) when the file is loaded.
//!
//! The keys are declared into each file's own serde struct rather than flattened into it:
//! `#[serde(flatten)]` buffers the values, which loses the spans errors point at (a
//! `Spanned` value cannot be read through it, and a wrong type would be reported at the
//! table's first line without the key's name).

use std::collections::BTreeMap;

use serde::Serialize;
use toml::Spanned;

use super::error::{ConfigError, SourceText};
use super::headers::{env_is_set, unset_fix};
use super::url::{SecretUrl, UrlSecrets};

/// Declares the serde struct of a table that names an endpoint (a bench's `[[target]]`, a
/// judge file): its own keys as written, then the endpoint keys, and `take_endpoint`,
/// which moves them out as an [`EndpointDoc`]. The endpoint keys are listed here only.
macro_rules! with_endpoint_keys {
    (
        $(#[$meta:meta])*
        struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        struct $name {
            $( $(#[$fmeta])* $field: $ty, )*
            /// The endpoint's base URL (`…/v1`).
            base_url: Option<::toml::Spanned<String>>,
            /// The variable holding the key.
            api_key_env: Option<::toml::Spanned<String>>,
            #[serde(default)]
            headers: ::std::collections::BTreeMap<String, String>,
            /// Header name → the variable that holds its value.
            #[serde(default)]
            headers_env: ::std::collections::BTreeMap<String, String>,
            /// The variable holding the URL's user-info (`user:password`).
            userinfo_env: Option<String>,
            /// Query parameter name → the variable that holds its value.
            #[serde(default)]
            query_env: ::std::collections::BTreeMap<String, String>,
        }

        impl $name {
            /// The endpoint keys as written, moved out of the table.
            fn take_endpoint(&mut self) -> $crate::config::endpoint::EndpointDoc {
                $crate::config::endpoint::EndpointDoc {
                    base_url: self.base_url.take(),
                    api_key_env: self.api_key_env.take(),
                    headers: ::std::mem::take(&mut self.headers),
                    headers_env: ::std::mem::take(&mut self.headers_env),
                    userinfo_env: self.userinfo_env.take(),
                    query_env: ::std::mem::take(&mut self.query_env),
                }
            }
        }
    };
}
pub(super) use with_endpoint_keys;

/// The endpoint keys of a target table or a judge file, as written.
#[derive(Debug, Default)]
pub struct EndpointDoc {
    pub base_url: Option<Spanned<String>>,
    pub api_key_env: Option<Spanned<String>>,
    pub headers: BTreeMap<String, String>,
    pub headers_env: BTreeMap<String, String>,
    pub userinfo_env: Option<String>,
    pub query_env: BTreeMap<String, String>,
}

/// How requests to an endpoint authenticate, checked: variable names and literal header
/// values. Serialises without a secret (header values replaced, variables by name); the
/// values are read from the environment when requests are built.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Credentials {
    /// Where the URL's credentials come from (variable names; left out when none).
    #[serde(flatten)]
    pub url_secrets: UrlSecrets,
    /// Name of the variable holding the key.
    pub api_key_env: Option<String>,
    /// Extra headers with their values as written in the file; only the names are stored.
    #[serde(serialize_with = "super::headers::names_only")]
    pub headers: BTreeMap<String, String>,
    /// Extra headers whose values are read from environment variables (header name →
    /// variable name).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers_env: BTreeMap<String, String>,
}

impl Credentials {
    /// The key from the environment, if a variable is named and holds one.
    pub fn api_key(&self) -> Option<String> {
        self.api_key_env
            .as_deref()
            .and_then(|v| std::env::var(v).ok())
            .filter(|v| !v.trim().is_empty())
    }

    /// The extra headers to send, `headers_env` values read now. A variable checked when
    /// the file was loaded but emptied since is sent as no header at all, never as a
    /// header with a made-up value.
    pub fn header_values(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (name, var) in &self.headers_env {
            if let Ok(v) = std::env::var(var)
                && !v.trim().is_empty()
            {
                out.push((name.clone(), v));
            }
        }
        out
    }

    /// The chat-completions URL under `base`, with the URL credentials read now (one
    /// emptied since loading is left out).
    pub fn request_url(&self, base: &str) -> SecretUrl {
        SecretUrl::build_lenient(base, "chat/completions", &self.url_secrets)
    }
}

/// Checks an endpoint as written, the one way for targets and judges, when the file is
/// loaded: its `base_url` when written (whether one must be is the file's rule), the URL
/// credentials, the key variable and the headers. `owner` names the target or judge in
/// messages. With `require_vars` (a command about to send) every variable named must hold
/// a value; without (lint, dry runs, audits) only the file itself is checked. Returns the
/// base URL without its trailing `/`, and the credentials.
pub fn check(
    src: &SourceText,
    owner: &str,
    doc: EndpointDoc,
    require_vars: bool,
) -> Result<(Option<String>, Credentials), ConfigError> {
    let url_secrets = UrlSecrets {
        userinfo_env: doc.userinfo_env,
        query_env: doc.query_env,
    };
    let base_url = match &doc.base_url {
        Some(url) => Some(super::url::check_base_url(
            src,
            owner,
            url,
            &url_secrets,
            require_vars,
        )?),
        None => None,
    };
    if let Some(env) = &doc.api_key_env
        && require_vars
        && !env_is_set(env.get_ref())
    {
        let var = env.get_ref();
        return Err(src.invalid(
            env.span(),
            format!("environment variable {var} (api_key_env of {owner}) is not set or empty"),
            unset_fix(var, &format!("api_key_env from {owner}")),
        ));
    }
    super::headers::validate(src, owner, &doc.headers, &doc.headers_env, require_vars)?;
    let credentials = Credentials {
        url_secrets,
        api_key_env: doc.api_key_env.map(Spanned::into_inner),
        headers: doc.headers,
        headers_env: doc.headers_env,
    };
    Ok((base_url, credentials))
}
