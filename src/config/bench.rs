//! `bench.toml`: what `collect` runs — targets, scenarios, repeats, limits, request parameters.
//!
//! Keys are never read from this file: a target names the environment variable that holds
//! its key (`api_key_env`), and an unset variable is an error before any request is sent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::error::{ConfigError, SourceText};
use super::keys::FileKind;

/// Request parameters; a target's table overrides the run's defaults field by field.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RequestParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Sent as JSON, e.g. `{ type = "json_object" }`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<serde_json::Value>,
    /// Streaming (default true). Non-streaming turns have no TTFT or TTFA.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Send `stream_options.include_usage` (default true); some servers reject it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_usage: Option<bool>,
    /// Arbitrary extra JSON fields merged into the request body.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl RequestParams {
    /// `self` with every field that `over` sets replaced.
    pub fn merged(&self, over: &RequestParams) -> RequestParams {
        let mut extra = self.extra.clone();
        extra.extend(over.extra.clone());
        RequestParams {
            temperature: over.temperature.or(self.temperature),
            top_p: over.top_p.or(self.top_p),
            // The two limits are alternatives (providers take one or the other): a target
            // that names one does not also inherit the other.
            max_tokens: match over.max_completion_tokens {
                Some(_) => over.max_tokens,
                None => over.max_tokens.or(self.max_tokens),
            },
            max_completion_tokens: match over.max_tokens {
                Some(_) => over.max_completion_tokens,
                None => over.max_completion_tokens.or(self.max_completion_tokens),
            },
            reasoning_effort: over
                .reasoning_effort
                .clone()
                .or(self.reasoning_effort.clone()),
            response_format: over
                .response_format
                .clone()
                .or(self.response_format.clone()),
            stream: over.stream.or(self.stream),
            include_usage: over.include_usage.or(self.include_usage),
            extra,
        }
    }

    pub fn stream(&self) -> bool {
        self.stream.unwrap_or(true)
    }

    pub fn include_usage(&self) -> bool {
        self.include_usage.unwrap_or(true)
    }
}

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    pub input: f64,
    #[serde(default)]
    pub cached: Option<f64>,
    pub output: f64,
}

/// Retries are off by default (one attempt per turn), as published benchmarks do.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    /// Total attempts per turn, the first included.
    #[serde(default = "one")]
    pub attempts: u32,
    #[serde(default = "default_backoff_ms")]
    pub backoff_ms: u64,
    /// Wait what a 429/503 `Retry-After` header says (capped at `max_wait_ms`).
    #[serde(default = "yes")]
    pub honour_retry_after: bool,
    #[serde(default = "default_max_wait_ms")]
    pub max_wait_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: 1,
            backoff_ms: default_backoff_ms(),
            honour_retry_after: true,
            max_wait_ms: default_max_wait_ms(),
        }
    }
}

fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn default_backoff_ms() -> u64 {
    1000
}
fn default_max_wait_ms() -> u64 {
    60_000
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BenchDoc {
    name: String,
    #[serde(default)]
    seed: u64,
    /// Where this bench collects from (default: the host name); stored with each run.
    #[serde(default)]
    collector: Option<Spanned<String>>,
    #[serde(default = "one")]
    repeats: u32,
    #[serde(default = "default_scenarios")]
    scenarios: PathBuf,
    /// Run only these scenario ids (default: all in the folder).
    #[serde(default)]
    only: Option<Spanned<Vec<String>>>,
    #[serde(default = "default_timeout")]
    turn_timeout_s: f64,
    #[serde(default = "default_concurrency")]
    concurrency: usize,
    #[serde(default = "default_per_target")]
    per_target_concurrency: usize,
    /// Scale every scenario pause (0 = no pauses).
    #[serde(default = "one_f")]
    pause_scale: f64,
    #[serde(default)]
    request: RequestParams,
    #[serde(default)]
    retry: RetryPolicy,
    /// What `replay` adds (rounds, pauses, breaks); unused by `collect`.
    #[serde(default)]
    replay: super::replay::ReplaySettings,
    /// The report's defaults (`run`, and `report --config`); unused by `collect`.
    #[serde(default)]
    report: ReportDoc,
    #[serde(rename = "target")]
    targets: Spanned<Vec<Spanned<TargetDoc>>>,
}

fn default_scenarios() -> PathBuf {
    "scenarios".into()
}
fn default_timeout() -> f64 {
    120.0
}
fn default_concurrency() -> usize {
    8
}
fn default_per_target() -> usize {
    2
}
fn one_f() -> f64 {
    1.0
}

/// `[report]`: what a report of this bench shows by default; a flag overrides it.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ReportDoc {
    /// As `--slo` takes it: `ttft=500ms,e2e=3s`.
    slo: Option<Spanned<String>>,
}

super::endpoint::with_endpoint_keys! {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct TargetDoc {
        provider: String,
        model: String,
        label: Option<String>,
        #[serde(default)]
        request: RequestParams,
        price: Option<Prices>,
        #[serde(default)]
        replay: super::replay::TargetReplay,
    }
}

/// A resolved `bench.toml`. Serialises without secrets (it is stored with the run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchConfig {
    pub name: String,
    pub seed: u64,
    pub repeats: u32,
    pub scenarios_dir: PathBuf,
    pub only: Option<Vec<String>>,
    /// Where `only` is written, for errors about unknown scenario ids.
    #[serde(skip)]
    pub only_at: Option<(PathBuf, usize)>,
    pub turn_timeout_s: f64,
    pub concurrency: usize,
    pub per_target_concurrency: usize,
    pub pause_scale: f64,
    pub retry: RetryPolicy,
    /// Left out of the stored settings when not set, so a collect's settings are the same
    /// with or without it.
    #[serde(skip_serializing_if = "super::replay::ReplaySettings::is_default")]
    pub replay: super::replay::ReplaySettings,
    pub targets: Vec<TargetConfig>,
    /// `[report] slo`: goodput's objectives when `--slo` is not given. Not a collection
    /// setting: left out of the stored settings (a run's identity does not change with it).
    #[serde(skip)]
    pub report_slo: Option<super::slo::Slo>,
    /// `collector`: where the runs are collected from (`--collector` overrides it; default
    /// [`host_collector`]). Not a collection setting: stored in `runs.collector`, never in
    /// the settings, so a run resumed elsewhere keeps its settings.
    #[serde(skip)]
    pub collector: Option<String>,
}

/// A provider, the model id it is sent, and the label cells group by.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetConfig {
    pub provider: String,
    pub model: String,
    pub label: String,
    /// As written in the file, checked to hold no credential (see [`super::url`]).
    pub base_url: String,
    /// The key, header and URL-credential variables, and the literal headers.
    #[serde(flatten)]
    pub credentials: super::endpoint::Credentials,
    pub request: RequestParams,
    pub price: Option<Prices>,
    #[serde(skip_serializing_if = "super::replay::TargetReplay::is_default")]
    pub replay: super::replay::TargetReplay,
    /// Stands in for `base_url` in the stored settings and target identity, for an
    /// endpoint whose address changes every run (the built-in mock's random port), so that
    /// `--resume` recognises the run.
    #[serde(skip)]
    pub stable_url: Option<String>,
}

impl TargetConfig {
    /// The host part of `base_url` (for blinding and display), or of `stable_url`.
    pub fn host(&self) -> String {
        host_of(self.stable_url.as_deref().unwrap_or(&self.base_url))
    }
}

/// The host (and port) of a URL, without any user-info.
pub fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
        .to_string()
}

impl BenchConfig {
    /// Where this bench's runs are collected from: `collector` (or `--collector`), else the
    /// host name.
    pub fn collector_or_host(&self) -> String {
        self.collector.clone().unwrap_or_else(host_collector)
    }

    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::from_source(&SourceText::read(path)?)
    }

    pub fn from_source(src: &SourceText) -> Result<Self, ConfigError> {
        Self::parse(src, true)
    }

    /// Everything `from_source` validates except that the key variables are set: for
    /// `lint`, which judges the file, not the environment it will run in.
    pub fn from_source_without_keys(src: &SourceText) -> Result<Self, ConfigError> {
        Self::parse(src, false)
    }

    fn parse(src: &SourceText, require_keys: bool) -> Result<Self, ConfigError> {
        let doc: BenchDoc = src.parse(FileKind::Bench)?;
        let base = src.path.parent().unwrap_or(Path::new("."));
        if doc.targets.get_ref().is_empty() {
            return Err(src.invalid(
                doc.targets.span(),
                "no [[target]] entries",
                "add a [[target]] with provider, model and base_url",
            ));
        }
        check_numbers(src, &doc)?;
        let mut targets = Vec::new();
        for t in doc.targets.into_inner() {
            let (target, span) = target_config(src, t, &doc.request, require_keys)?;
            if targets
                .iter()
                .any(|o: &TargetConfig| o.provider == target.provider && o.label == target.label)
            {
                return Err(src.invalid(
                    span,
                    format!(
                        "target {} / {} appears twice",
                        target.provider, target.label
                    ),
                    "give one of them another `label`",
                ));
            }
            targets.push(target);
        }
        let only_at = doc
            .only
            .as_ref()
            .map(|o| (src.path.clone(), src.line_of(o.span().start)));
        let report_slo = match &doc.report.slo {
            Some(text) => Some(super::slo::Slo::parse(text.get_ref()).map_err(|e| {
                src.invalid(
                    text.span(),
                    format!("[report] slo: `{}`: {}", e.part, e.problem),
                    super::slo::FIX,
                )
            })?),
            None => None,
        };
        let collector = match doc.collector {
            Some(name) => Some(collector_name(name.get_ref()).map_err(|problem| {
                src.invalid(name.span(), format!("collector: {problem}"), COLLECTOR_FIX)
            })?),
            None => None,
        };
        Ok(BenchConfig {
            report_slo,
            collector,
            only_at,
            name: doc.name,
            seed: doc.seed,
            repeats: doc.repeats,
            scenarios_dir: base.join(doc.scenarios),
            only: doc.only.map(Spanned::into_inner),
            turn_timeout_s: doc.turn_timeout_s,
            concurrency: doc.concurrency,
            per_target_concurrency: doc.per_target_concurrency,
            pause_scale: doc.pause_scale,
            retry: doc.retry,
            replay: doc.replay,
            targets,
        })
    }
}

/// What a bad collector name is told.
pub const COLLECTOR_FIX: &str =
    "name the collecting machine with letters, digits, `.`, `-`, `_` or `:` (e.g. \"eu-west-1\")";

/// A collector name as given, trimmed; refused when empty, longer than 100 characters, or
/// holding anything but letters, digits, `.`, `-`, `_`, `:` (a `,` would split the
/// report's `--collector a,b`).
pub fn collector_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    if name.is_empty() {
        return Err("is empty".into());
    }
    if name.chars().count() > 100 {
        return Err("is longer than 100 characters".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | ':')))
    {
        return Err(format!("`{name}` holds {c:?}"));
    }
    Ok(name.to_string())
}

/// The collector a run records when neither `--collector` nor `collector =` names one:
/// the host name (`/proc/sys/kernel/hostname`, else `$HOSTNAME`, else `$COMPUTERNAME`),
/// else "unknown".
pub fn host_collector() -> String {
    let from_file = std::fs::read_to_string("/proc/sys/kernel/hostname").ok();
    let from_env = || {
        std::env::var("HOSTNAME")
            .ok()
            .or_else(|| std::env::var("COMPUTERNAME").ok())
    };
    from_file
        .into_iter()
        .chain(from_env())
        .find_map(|h| collector_name(&h).ok())
        .unwrap_or_else(|| "unknown".to_string())
}

/// The run's numbers in range: counts and the timeout above 0, the pause scale 0 or more,
/// and the `[replay]` table's own rules.
fn check_numbers(src: &SourceText, doc: &BenchDoc) -> Result<(), ConfigError> {
    // The key's path, for its meaning and range in the fix; its name, for its line.
    let positive = |v: f64, path: &[&str]| -> Result<(), ConfigError> {
        let what = path.last().copied().unwrap_or_default();
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(src.out_of_range(
                FileKind::Bench,
                path,
                src.key_line(what),
                format!("{what} must be a positive number"),
            ))
        }
    };
    positive(doc.turn_timeout_s, &["turn_timeout_s"])?;
    positive(doc.concurrency as f64, &["concurrency"])?;
    positive(
        doc.per_target_concurrency as f64,
        &["per_target_concurrency"],
    )?;
    positive(doc.repeats as f64, &["repeats"])?;
    positive(doc.retry.attempts as f64, &["retry", "attempts"])?;
    if !(doc.pause_scale.is_finite() && doc.pause_scale >= 0.0) {
        return Err(src.out_of_range(
            FileKind::Bench,
            &["pause_scale"],
            src.key_line("pause_scale"),
            "pause_scale must be 0 or more",
        ));
    }
    if let Err(problem) = doc.replay.check() {
        // The key's line inside the [replay] table (else the table's, else 1).
        let lines: Vec<&str> = src.text.lines().collect();
        let table = lines.iter().position(|l| l.trim() == "[replay]");
        let line = table.map_or(1, |t| {
            lines
                .iter()
                .skip(t)
                .position(|l| {
                    l.trim_start()
                        .strip_prefix(problem.key)
                        .is_some_and(|r| r.trim_start().starts_with('='))
                })
                .map_or(t + 1, |i| t + i + 1)
        });
        return Err(src.out_of_range(
            FileKind::Bench,
            &["replay", problem.key],
            line,
            problem.message,
        ));
    }
    Ok(())
}

/// One target, checked (its endpoint, with its variables when keys are required), with
/// the file's request parameters under its own; and where its `base_url` stands, to point
/// at when it appears twice.
fn target_config(
    src: &SourceText,
    t: Spanned<TargetDoc>,
    request: &RequestParams,
    require_keys: bool,
) -> Result<(TargetConfig, std::ops::Range<usize>), ConfigError> {
    let table = t.span();
    let mut t = t.into_inner();
    let owner = format!("{} / {}", t.provider, t.model);
    let endpoint = t.take_endpoint();
    let span = endpoint
        .base_url
        .as_ref()
        .map_or(table.clone(), |u| u.span());
    let (url, credentials) = super::endpoint::check(src, &owner, endpoint, require_keys)?;
    let Some(base_url) = url else {
        return Err(src.invalid(
            table,
            format!("target {owner} has no base_url"),
            "add base_url = \"https://.../v1\" to this [[target]]",
        ));
    };
    let label = t.label.unwrap_or_else(|| t.model.clone());
    let target = TargetConfig {
        provider: t.provider,
        model: t.model,
        label,
        base_url,
        credentials,
        request: request.merged(&t.request),
        price: t.price,
        replay: t.replay,
        stable_url: None,
    };
    Ok((target, span))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(text: &str) -> SourceText {
        SourceText {
            path: "bench.toml".into(),
            text: text.to_string(),
        }
    }

    #[test]
    fn a_collector_is_read_checked_and_left_out_of_the_settings() {
        let cfg = BenchConfig::from_source(&src(&OK.replacen(
            "seed = 7",
            "seed = 7\ncollector = \" eu-west-1 \"",
            1,
        )))
        .unwrap();
        assert_eq!(cfg.collector.as_deref(), Some("eu-west-1"));
        assert_eq!(cfg.collector_or_host(), "eu-west-1");
        let settings = serde_json::to_string(&cfg).unwrap();
        assert!(!settings.contains("eu-west-1"), "{settings}");
        let err = BenchConfig::from_source(&src(&OK.replacen(
            "seed = 7",
            "seed = 7\ncollector = \"a,b\"",
            1,
        )))
        .unwrap_err()
        .to_string();
        assert!(err.contains("collector") && err.contains("fix:"), "{err}");
        assert!(collector_name("").is_err());
        assert!(!host_collector().is_empty());
    }

    const OK: &str = r#"
name = "t"
seed = 7
repeats = 2

[request]
temperature = 0.2
max_tokens = 512

[[target]]
provider = "acme"
model = "acme/glm-5.3-flash"
label = "glm-5.3-flash"
base_url = "http://127.0.0.1:9/v1/"
request = { temperature = 0.0, extra = { top_k = 20 } }
price = { input = 0.5, cached = 0.1, output = 2.0 }
"#;

    #[test]
    fn target_overrides_defaults_field_by_field() {
        let cfg = BenchConfig::from_source(&src(OK)).unwrap();
        let t = &cfg.targets[0];
        assert_eq!(t.request.temperature, Some(0.0));
        assert_eq!(t.request.max_tokens, Some(512));
        assert_eq!(t.request.extra["top_k"], serde_json::json!(20));
        assert_eq!(t.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(t.host(), "127.0.0.1:9");
        assert_eq!(t.label, "glm-5.3-flash");
    }

    #[test]
    fn a_target_limit_replaces_the_other_kind_of_default_limit() {
        let text = OK.replace(
            "request = { temperature = 0.0, extra = { top_k = 20 } }",
            "request = { max_completion_tokens = 64 }",
        );
        let cfg = BenchConfig::from_source(&src(&text)).unwrap();
        assert_eq!(cfg.targets[0].request.max_completion_tokens, Some(64));
        assert_eq!(cfg.targets[0].request.max_tokens, None);
        let cfg = BenchConfig::from_source(&src(OK)).unwrap();
        assert_eq!(cfg.targets[0].request.max_tokens, Some(512));
    }

    #[test]
    fn unset_key_variable_is_an_error_naming_its_line() {
        let text = OK.replace(
            "price =",
            "api_key_env = \"TURNBENCH_TEST_SURELY_UNSET\"\nprice =",
        );
        let err = BenchConfig::from_source(&src(&text))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("bench.toml:16:"), "{err}");
        assert!(err.contains("TURNBENCH_TEST_SURELY_UNSET"), "{err}");
    }

    #[test]
    fn unknown_request_parameter_is_rejected() {
        let err = BenchConfig::from_source(&src(&OK.replace("max_tokens", "max_tokns")))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("bench.toml:8:"), "{err}");
    }

    #[test]
    fn zero_concurrency_is_rejected() {
        let err = BenchConfig::from_source(&src(&OK.replace("repeats = 2", "concurrency = 0")))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("bench.toml:4:"), "{err}");
    }

    #[test]
    fn an_empty_key_variable_is_refused_like_an_unset_one() {
        // SAFETY: tests in this module do not read this variable concurrently.
        unsafe { std::env::set_var("TURNBENCH_TEST_EMPTY_KEY", "") };
        let text = OK.replace(
            "price =",
            "api_key_env = \"TURNBENCH_TEST_EMPTY_KEY\"\nprice =",
        );
        let err = BenchConfig::from_source(&src(&text))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("TURNBENCH_TEST_EMPTY_KEY") && err.contains("not set or empty"),
            "{err}"
        );
        assert!(BenchConfig::from_source_without_keys(&src(&text)).is_ok());
    }

    #[test]
    fn header_values_are_sent_but_never_serialised() {
        // SAFETY: tests in this module do not read this variable concurrently.
        unsafe { std::env::set_var("TURNBENCH_TEST_HEADER_KEY", "hdr-env-secret") };
        let text = OK.replace(
            "price =",
            "headers = { \"x-team\" = \"hdr-file-secret\" }\nheaders_env = { \"x-api-key\" = \"TURNBENCH_TEST_HEADER_KEY\" }\nprice =",
        );
        let cfg = BenchConfig::from_source(&src(&text)).unwrap();
        let sent = cfg.targets[0].credentials.header_values();
        assert!(sent.contains(&("x-team".into(), "hdr-file-secret".into())));
        assert!(sent.contains(&("x-api-key".into(), "hdr-env-secret".into())));
        let json = serde_json::to_string(&cfg).unwrap();
        assert!(
            !json.contains("hdr-file-secret") && !json.contains("hdr-env-secret"),
            "{json}"
        );
        assert!(
            json.contains("x-team") && json.contains("TURNBENCH_TEST_HEADER_KEY"),
            "{json}"
        );
        let unset = text.replace("TURNBENCH_TEST_HEADER_KEY", "TURNBENCH_TEST_SURELY_UNSET_H");
        let err = BenchConfig::from_source(&src(&unset))
            .unwrap_err()
            .to_string();
        assert!(err.contains("TURNBENCH_TEST_SURELY_UNSET_H"), "{err}");
        let bad = text.replace("x-team", "x team");
        let err = BenchConfig::from_source(&src(&bad))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not a valid HTTP header name") && !err.contains("hdr-file-secret"),
            "{err}"
        );
    }

    #[test]
    fn url_credentials_come_from_variables_and_only_their_names_are_serialised() {
        let creds = "userinfo_env = \"TB_BENCH_URL_INFO\"\nquery_env = { key = \"TB_BENCH_URL_KEY\" }\nprice =";
        let text = OK.replace("price =", creds);
        let settings = |key: &str, text: &str| {
            // SAFETY: tests in this module do not read these variables concurrently.
            unsafe {
                std::env::set_var("TB_BENCH_URL_INFO", "u:url-pw-1");
                std::env::set_var("TB_BENCH_URL_KEY", key);
            }
            let cfg = BenchConfig::from_source(&src(text)).unwrap();
            assert_eq!(cfg.targets[0].host(), "127.0.0.1:9");
            serde_json::to_string(&cfg).unwrap()
        };
        let a = settings("url-key-a", &text);
        // A new secret value is the same settings (and hash); a new address is not.
        assert_eq!(a, settings("url-key-b", &text));
        assert_ne!(a, settings("url-key-a", &text.replace(":9/v1/", ":9/v2/")));
        assert!(!a.contains("url-key-a") && !a.contains("url-pw-1"), "{a}");
        assert!(
            a.contains("TB_BENCH_URL_INFO") && a.contains("TB_BENCH_URL_KEY"),
            "{a}"
        );
        // Without URL credentials, the settings read as before they existed.
        let plain = serde_json::to_string(&BenchConfig::from_source(&src(OK)).unwrap()).unwrap();
        assert!(
            !plain.contains("query_env") && !plain.contains("userinfo_env"),
            "{plain}"
        );
        let unset = text.replace("TB_BENCH_URL_KEY", "TB_BENCH_SURELY_UNSET_Q");
        let err = BenchConfig::from_source(&src(&unset))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("TB_BENCH_SURELY_UNSET_Q") && err.contains("bench.toml:17:"),
            "{err}"
        );
    }

    #[test]
    fn host_of_leaves_user_info_out() {
        assert_eq!(host_of("http://u:pw@h:1/v1?k=2"), "h:1");
        assert_eq!(host_of("https://h?key=x"), "h");
    }

    #[test]
    fn serialised_config_has_no_key_value() {
        // SAFETY: tests in this module do not read this variable concurrently.
        unsafe { std::env::set_var("TURNBENCH_TEST_KEY_A", "sk-secret-value") };
        let text = OK.replace("price =", "api_key_env = \"TURNBENCH_TEST_KEY_A\"\nprice =");
        let cfg = BenchConfig::from_source(&src(&text)).unwrap();
        assert_eq!(
            cfg.targets[0].credentials.api_key().as_deref(),
            Some("sk-secret-value")
        );
        let json = serde_json::to_string(&cfg).unwrap();
        assert!(!json.contains("sk-secret-value"));
        assert!(json.contains("TURNBENCH_TEST_KEY_A"));
    }
}
