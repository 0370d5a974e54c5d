//! Credentials carried by an endpoint's URL: user-info (`https://user:pass@host/v1`) or a
//! query parameter (`?key=…`), as some gateways and providers authenticate.
//!
//! Like keys and header values, they come only from environment variables:
//! `userinfo_env = "ACME_USERINFO"` (the variable holds `user:password`) and
//! `query_env = { key = "GEMINI_KEY" }` (parameter name → variable). A `base_url` that
//! writes user-info or a secret-looking query parameter (see [`SECRET_PARAMS`]) literally
//! is refused, with the file, the line and the fix: a definition file is shared and
//! copied, and the store keeps the URL as written.
//!
//! The URL a request is sent to is a [`SecretUrl`]: it shows itself only masked
//! ([`mask`]: `***@host`, `key=***`), and scrubs its secrets from error messages.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use toml::Spanned;

use super::error::{ConfigError, SourceText};
use super::headers::{env_is_set, unset_fix};

/// Query parameters whose values are taken as secrets (compared case-insensitively).
pub const SECRET_PARAMS: [&str; 11] = [
    "key",
    "api_key",
    "api-key",
    "apikey",
    "token",
    "access_token",
    "sig",
    "signature",
    "code",
    "secret",
    "password",
];

/// What stands in for a secret wherever a URL is shown.
const MASK: &str = "***";

fn is_secret_param(name: &str) -> bool {
    SECRET_PARAMS.iter().any(|p| p.eq_ignore_ascii_case(name))
}

/// Where a URL's credentials come from: variable names only, which are stored (as
/// `headers_env` is); the values are read when requests are built.
#[derive(Debug, Clone, PartialEq, Default, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UrlSecrets {
    /// The variable holding the URL's user-info, `user:password` (or a lone token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub userinfo_env: Option<String>,
    /// Query parameter name → the variable holding its value.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub query_env: BTreeMap<String, String>,
}

impl UrlSecrets {
    pub fn is_empty(&self) -> bool {
        self.userinfo_env.is_none() && self.query_env.is_empty()
    }

    /// Every variable, with what it is for and the key that names it (for messages and
    /// the dry run).
    fn vars(&self) -> impl Iterator<Item = (String, &'static str, &str)> {
        self.userinfo_env
            .iter()
            .map(|v| ("userinfo_env".to_string(), "userinfo_env", v.as_str()))
            .chain(
                self.query_env
                    .iter()
                    .map(|(p, v)| (format!("query_env {p:?}"), "query_env", v.as_str())),
            )
    }

    /// How the dry run shows them: variable names and whether each is set; never a value.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .vars()
            .map(|(what, _, var)| {
                let state = if env_is_set(var) { "set" } else { "NOT SET" };
                format!("{what} from ${var} ({state})")
            })
            .collect();
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        }
    }
}

/// `url` with its credentials masked: user-info becomes `***@`, and the value of each
/// secret-looking query parameter (or one named in `also`) becomes `***`. Works on any
/// text, URL or not, and never fails. The one masking function: everything that shows a
/// URL goes through it.
pub fn mask(url: &str, also: &[&str]) -> String {
    let (before_frag, frag) = match url.find('#') {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    let (head, query) = match before_frag.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (before_frag, None),
    };
    let mut out = match head.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find('/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(end);
            let host = match authority.rfind('@') {
                Some(at) => format!("{MASK}{}", &authority[at..]),
                None => authority.to_string(),
            };
            format!("{scheme}://{host}{path}")
        }
        None => head.to_string(),
    };
    if let Some(q) = query {
        let pairs: Vec<String> = q
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _))
                    if is_secret_param(&decode(k)) || also.contains(&decode(k).as_str()) =>
                {
                    format!("{k}={MASK}")
                }
                _ => pair.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out.push_str(frag);
    out
}

/// A query parameter's name as sent (percent-decoded, `+` as space).
fn decode(name: &str) -> String {
    reqwest::Url::parse(&format!("http://x/?{name}="))
        .ok()
        .and_then(|u| u.query_pairs().next().map(|(k, _)| k.into_owned()))
        .unwrap_or_else(|| name.to_string())
}

/// Checks a `base_url` as written in a definition file: an http(s) URL with no user-info
/// and no secret-looking query parameter, and (when `require_env`) every variable of
/// `secrets` set. Returns the URL without its trailing `/`. Messages show the URL masked.
pub fn check_base_url(
    src: &SourceText,
    owner: &str,
    url: &Spanned<String>,
    secrets: &UrlSecrets,
    require_env: bool,
) -> Result<String, ConfigError> {
    let written = url.get_ref().trim_end_matches('/');
    let shown = mask(written, &[]);
    let parsed = match reqwest::Url::parse(written) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => u,
        _ => {
            return Err(src.invalid(
                url.span(),
                format!("base_url {shown:?} of {owner} is not an http(s) URL"),
                "write the endpoint's base, e.g. \"https://api.together.ai/v1\"",
            ));
        }
    };
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(src.invalid(
            url.span(),
            format!(
                "base_url {shown:?} of {owner} writes credentials (user-info) in the file; they would be stored and shared with it"
            ),
            "remove `user:password@` from base_url, export it in a variable (e.g. ACME_USERINFO=user:password) and add userinfo_env = \"ACME_USERINFO\"",
        ));
    }
    if let Some((name, _)) = parsed.query_pairs().find(|(k, _)| is_secret_param(k)) {
        return Err(src.invalid(
            url.span(),
            format!(
                "base_url {shown:?} of {owner} writes the secret-looking query parameter {name:?} in the file; it would be stored and shared with it"
            ),
            format!(
                "remove {name}=… from base_url, export its value in a variable (e.g. ACME_KEY) and add query_env = {{ {name:?} = \"ACME_KEY\" }}"
            ),
        ));
    }
    for (name, var) in &secrets.query_env {
        if parsed.query_pairs().any(|(k, _)| k == name.as_str()) {
            return Err(src.invalid(
                url.span(),
                format!("query parameter {name:?} of {owner} is in both base_url and query_env"),
                "keep one of them",
            ));
        }
        if name.is_empty() {
            return Err(ConfigError::invalid(
                &src.path,
                src.key_line("query_env"),
                format!("query_env of {owner} names an empty parameter (variable {var})"),
                "name the parameter, e.g. query_env = { key = \"ACME_KEY\" }",
            ));
        }
    }
    for (what, key, var) in secrets.vars() {
        if require_env && !env_is_set(var) {
            return Err(ConfigError::invalid(
                &src.path,
                src.key_line(key),
                format!("environment variable {var} ({what} of {owner}) is not set or empty"),
                unset_fix(var, &format!("it from {key}")),
            ));
        }
    }
    Ok(written.to_string())
}

/// The URL a request is sent to, credentials included. It never shows them: `Display`
/// and `Debug` mask them, and [`SecretUrl::scrub`] removes them from any text (an error
/// message quoting the URL). Only [`SecretUrl::expose`] gives the real URL, to send.
#[derive(Clone, PartialEq)]
pub struct SecretUrl {
    url: String,
    /// Query parameters whose values came from the environment: masked whatever their name.
    env_params: Vec<String>,
    /// Every secret as it may appear in text: raw and as encoded in the URL.
    secrets: Vec<String>,
}

impl SecretUrl {
    /// `base` (checked by [`check_base_url`]) with `path` appended to its path, the
    /// user-info and the query parameters of `secrets` read from the environment now. A
    /// variable unset or empty is the `Err` (its name), for the caller's message.
    pub fn build(base: &str, path: &str, secrets: &UrlSecrets) -> Result<Self, String> {
        Self::compose(base, path, secrets, true)
    }

    /// [`SecretUrl::build`], leaving out a credential whose variable is unset or empty
    /// (checked when the file was loaded, emptied since): the request then goes without
    /// it, never with a made-up value.
    pub fn build_lenient(base: &str, path: &str, secrets: &UrlSecrets) -> Self {
        // Not strict: no variable is an error.
        Self::compose(base, path, secrets, false)
            .unwrap_or_else(|_| SecretUrl::from(format!("{base}/{path}")))
    }

    fn compose(base: &str, path: &str, secrets: &UrlSecrets, strict: bool) -> Result<Self, String> {
        let (head, query) = match base.split_once('?') {
            Some((h, q)) => (h, Some(q)),
            None => (base, None),
        };
        let mut text = format!("{}/{path}", head.trim_end_matches('/'));
        if let Some(q) = query {
            text.push('?');
            text.push_str(q);
        }
        let Ok(mut url) = reqwest::Url::parse(&text) else {
            // Not a URL (a base not checked at load): sent as it is, to fail as a
            // connection error; still shown masked.
            return Ok(SecretUrl::from(text));
        };
        // A variable's value; unset or empty is `None`, or the `Err` when strict.
        let read = |var: &str| match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Ok(Some(v)),
            _ if strict => Err(var.to_string()),
            _ => Ok(None),
        };
        let mut raw = Vec::new();
        if let Some(var) = &secrets.userinfo_env
            && let Some(info) = read(var)?
        {
            let (user, pass) = match info.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (info.as_str(), None),
            };
            // Only a URL that cannot have user-info (no host) refuses; http(s) always can.
            let _ = url.set_username(user);
            let _ = url.set_password(pass);
            raw.extend([user.to_string(), pass.unwrap_or_default().to_string()]);
        }
        for (name, var) in &secrets.query_env {
            let Some(value) = read(var)? else { continue };
            url.query_pairs_mut().append_pair(name, &value);
            raw.push(value);
        }
        let mut out = SecretUrl::from(url.to_string());
        out.env_params = secrets.query_env.keys().cloned().collect();
        out.secrets.extend(raw);
        out.settle();
        Ok(out)
    }

    /// The real URL, credentials included: for the HTTP client only.
    pub fn expose(&self) -> &str {
        &self.url
    }

    /// `text` with every secret of this URL replaced by `***`, and any URL in it masked.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.replace(&self.url, &self.to_string());
        for s in &self.secrets {
            out = out.replace(s.as_str(), MASK);
        }
        out
    }

    /// Adds the secrets as they appear in the URL (percent-encoded), longest first so
    /// that scrubbing one never leaves part of another; drops empty ones.
    fn settle(&mut self) {
        if let Ok(u) = reqwest::Url::parse(&self.url) {
            self.secrets.push(u.username().to_string());
            self.secrets.extend(u.password().map(str::to_string));
            if let Some(q) = u.query() {
                for pair in q.split('&') {
                    if let Some((k, v)) = pair.split_once('=')
                        && (is_secret_param(&decode(k)) || self.env_params.contains(&decode(k)))
                    {
                        self.secrets.push(v.to_string());
                    }
                }
            }
        }
        // A secret of one or two characters is no secret, and scrubbing it would mangle
        // every message.
        self.secrets.retain(|s| s.len() >= 3);
        self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        self.secrets.dedup();
    }
}

impl From<String> for SecretUrl {
    /// A URL that may hold credentials of its own (user-info, secret-looking parameters).
    fn from(url: String) -> Self {
        let mut out = SecretUrl {
            url,
            env_params: Vec::new(),
            secrets: Vec::new(),
        };
        out.settle();
        out
    }
}

impl From<&str> for SecretUrl {
    fn from(url: &str) -> Self {
        SecretUrl::from(url.to_string())
    }
}

impl fmt::Display for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let also: Vec<&str> = self.env_params.iter().map(String::as_str).collect();
        f.write_str(&mask(&self.url, &also))
    }
}

impl fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretUrl({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_hides_user_info_and_secret_parameters_only() {
        assert_eq!(
            mask("http://u:pw@h:1/v1?key=S&api-version=2&Token=T#f", &[]),
            "http://***@h:1/v1?key=***&api-version=2&Token=***#f"
        );
        assert_eq!(mask("https://h/v1?x=1", &["x"]), "https://h/v1?x=***");
        assert_eq!(mask("https://h/v1", &[]), "https://h/v1");
        assert_eq!(mask("not a url?sig=abc", &[]), "not a url?sig=***");
        for p in SECRET_PARAMS {
            assert_eq!(
                mask(&format!("http://h/?{p}=zz"), &[]),
                format!("http://h/?{p}=***")
            );
        }
    }

    #[test]
    fn a_built_url_carries_the_secrets_and_shows_none() {
        // SAFETY: no other test reads these variables.
        unsafe {
            std::env::set_var("TB_URL_TEST_INFO", "alice:pa ss/word");
            std::env::set_var("TB_URL_TEST_Q", "q-secret&x");
        }
        let secrets = UrlSecrets {
            userinfo_env: Some("TB_URL_TEST_INFO".into()),
            query_env: [("region-token".to_string(), "TB_URL_TEST_Q".to_string())].into(),
        };
        let u =
            SecretUrl::build("http://h:9/v1?api-version=2", "chat/completions", &secrets).unwrap();
        let real = reqwest::Url::parse(u.expose()).unwrap();
        assert_eq!(real.path(), "/v1/chat/completions");
        assert_eq!(real.username(), "alice");
        let pairs: Vec<_> = real.query_pairs().collect();
        assert!(
            pairs.contains(&("region-token".into(), "q-secret&x".into())),
            "{pairs:?}"
        );
        assert!(
            pairs.contains(&("api-version".into(), "2".into())),
            "{pairs:?}"
        );
        let shown = format!("{u} {u:?}");
        assert!(
            !shown.contains("alice") && !shown.contains("pa") && !shown.contains("q-secret"),
            "{shown}"
        );
        assert!(shown.contains("api-version=2"), "{shown}");
        let err = format!(
            "error sending request for url ({}): alice pa ss/word q-secret&x",
            u.expose()
        );
        let scrubbed = u.scrub(&err);
        assert!(
            !scrubbed.contains("alice")
                && !scrubbed.contains("pa ss")
                && !scrubbed.contains("q-secret"),
            "{scrubbed}"
        );
        let missing = UrlSecrets {
            userinfo_env: Some("TB_URL_TEST_SURELY_UNSET".into()),
            ..Default::default()
        };
        assert_eq!(
            SecretUrl::build("http://h/v1", "x", &missing).unwrap_err(),
            "TB_URL_TEST_SURELY_UNSET"
        );
    }

    fn check(url: &str) -> Result<String, String> {
        let src = SourceText {
            path: "bench.toml".into(),
            text: format!("name = \"n\"\nbase_url = \"{url}\"\n"),
        };
        let spanned = Spanned::new(24..25, url.to_string());
        check_base_url(&src, "acme / m", &spanned, &UrlSecrets::default(), true)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn literal_credentials_are_refused_without_being_repeated() {
        for url in [
            "http://bob:LITERAL-PW@h/v1",
            "http://LITERAL-PW@h/v1",
            "https://h/v1?API_KEY=LITERAL-PW",
            "https://h/v1?x=1&sig=LITERAL-PW",
        ] {
            let err = check(url).unwrap_err();
            assert!(err.starts_with("bench.toml:2:"), "{err}");
            assert!(err.contains("fix:") && err.contains("_env"), "{err}");
            assert!(!err.contains("LITERAL-PW"), "{err}");
        }
        assert_eq!(
            check("https://h/v1/?api-version=2").unwrap(),
            "https://h/v1/?api-version=2"
        );
        assert_eq!(check("https://h/v1/").unwrap(), "https://h/v1");
        assert!(check("ftp://h/v1").is_err());
    }
}
