//! Judge settings (`judges/*.toml`) and their prompt templates.
//!
//! ```toml
//! id = "default"                          # optional; default: the file's stem
//! base_url = "https://api.openai.com/v1"  # or `builtin_mock = true` (no network, no key)
//! model = "gpt-4.1-mini"
//! api_key_env = "JUDGE_API_KEY"           # the key is read from this variable, never stored
//! template = "prompt.md"                  # relative to this file; {{placeholders}}
//! pairwise_template = "pairwise.md"       # optional; default: the shipped judges/pairwise.md
//! system = "You are an impartial evaluator."   # optional system message
//! sample = "first"                        # or "all" (every completed repeat)
//! replicates = 1                          # judgments per conversation
//! vary = ["order", "label", "nonce"]      # what replicates 2.. vary (default: all three)
//! seed = 0                                # order of judge calls
//! concurrency = 8
//! timeout_s = 120
//! reasks = 2                              # re-asks after unparseable output
//! include_reasoning = false               # show reasoning text to the judge
//! redact = ["Acme Cloud"]                 # more terms to redact (case-insensitive)
//! builtin_redactions = true               # the built-in list of model family names
//! simulated = false                       # label results simulated (implied for mocks)
//! family = "gpt"                          # optional; default: from the model id (FAMILIES)
//! [request]                               # temperature 0 and non-streaming by default
//! response_format = "rubric_schema"       # or "json_object", "none", or a table sent as written
//! [retry]                                 # HTTP retries; Retry-After honoured
//! attempts = 4
//! ```
//!
//! The key's value never enters a settings value: only the variable's name does, and it is
//! looked up when requests are built.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::bench::{RequestParams, RetryPolicy};
use super::error::{ConfigError, SourceText};
use super::keys::FileKind;
use super::scenario::valid_id;

/// Which stored conversations a judge run scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sample {
    /// The first completed repeat of each target × scenario.
    First,
    /// Every completed conversation.
    All,
}

impl std::str::FromStr for Sample {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "first" => Ok(Sample::First),
            "all" => Ok(Sample::All),
            _ => Err(format!("unknown sample {s:?}; expected first or all")),
        }
    }
}

/// What replicates after the first vary, so that they measure something even at
/// temperature 0: things a judge's verdict should not depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variation {
    /// The order of the rubric's criteria in the prompt (seeded per conversation and
    /// replicate).
    Order,
    /// The opaque label the transcript is introduced by.
    Label,
    /// The nonce in the transcript's delimiters.
    Nonce,
}

impl Variation {
    pub fn as_str(self) -> &'static str {
        match self {
            Variation::Order => "order",
            Variation::Label => "label",
            Variation::Nonce => "nonce",
        }
    }
}

/// What a judge is asked to answer in: `[request] response_format` of its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseFormat {
    /// Nothing sent: the prompt alone asks for JSON.
    None,
    /// `{"type": "json_object"}`: any JSON object.
    JsonObject,
    /// `{"type": "json_schema", "json_schema": {…}}` built from the rubric: every
    /// criterion an integer of its scale, `completed`, `rationale`, nothing else.
    RubricSchema,
    /// A table written in the settings, sent as written.
    AsWritten,
}

impl ResponseFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseFormat::None => "none",
            ResponseFormat::JsonObject => "json_object",
            ResponseFormat::RubricSchema => "rubric_schema",
            ResponseFormat::AsWritten => "as written",
        }
    }
}

/// The pairwise prompt a judge's settings name (`pairwise_template`), checked to hold
/// both transcripts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairwiseTemplate {
    pub path: PathBuf,
    pub text: String,
}

/// The placeholders a pairwise template must hold.
pub const PAIRWISE_REQUIRED: [&str; 3] = ["transcript_a", "transcript_b", "criteria"];

/// Where judge requests go.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum JudgeEndpoint {
    /// An OpenAI-compatible base URL (`…/v1`).
    Url(String),
    /// The built-in mock judge, started in-process for the run.
    BuiltinMock,
}

/// Resolved judge settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeSettings {
    pub id: String,
    pub path: PathBuf,
    pub endpoint: JudgeEndpoint,
    pub model: String,
    /// The key, header and URL-credential variables, and the literal headers: checked
    /// when the settings were loaded, as a bench's targets are.
    #[serde(flatten)]
    pub credentials: super::endpoint::Credentials,
    /// Without `response_format`, which [`ResponseFormat`] describes (a table written in
    /// the file, or `{"type": "json_object"}`, stays here and is sent as it is).
    pub request: RequestParams,
    pub response_format: ResponseFormat,
    /// Line of `response_format` (1 when absent), for the hint after a refused request.
    #[serde(skip)]
    pub response_format_line: usize,
    pub retry: RetryPolicy,
    pub system: Option<String>,
    pub template_path: PathBuf,
    pub template: PromptTemplate,
    /// `None`: the shipped `judges/pairwise.md`.
    pub pairwise_template: Option<PairwiseTemplate>,
    pub sample: Sample,
    pub replicates: u32,
    /// What replicates 2.. vary (sorted, no duplicates); replicate 1 is always the plain
    /// prompt.
    pub vary: Vec<Variation>,
    /// Line of `vary` (1 when absent), for the "replicates measure nothing" error.
    #[serde(skip)]
    pub vary_line: usize,
    pub seed: u64,
    pub concurrency: usize,
    pub timeout_s: f64,
    pub reasks: u32,
    pub include_reasoning: bool,
    pub redact: Vec<String>,
    pub builtin_redactions: bool,
    /// Results are labelled simulated: set in the file, or implied by the built-in mock
    /// or a model named `mock-…`.
    pub simulated: bool,
    /// The version of the simulated judge's grading logic (`mock::grade::GRADER_VERSION`),
    /// part of every judgment key so that a new grader's judgments replace the old ones.
    /// Never read from the file: set by whoever starts the mock judge for this judge (the
    /// settings' own stage does not know the mock).
    pub grader_version: Option<u32>,
    /// The model family the judge belongs to, as written (`family = "…"`); `None`: derived
    /// from the model id by [`family_of`] where it is read (the judge card).
    pub family: Option<String>,
}

/// Model families by the start of a model id (lower case, after the last `/`), first match
/// wins: the judge card flags a cell whose model is of its judge's family (docs/judge.md,
/// "The judge card"). A model id no row matches has no family (never flagged).
pub const FAMILIES: &[(&str, &str)] = &[
    ("gpt-", "gpt"),
    ("gpt4", "gpt"),
    ("chatgpt", "gpt"),
    ("o1", "gpt"),
    ("o3", "gpt"),
    ("o4", "gpt"),
    ("claude", "claude"),
    ("gemini", "gemini"),
    ("gemma", "gemini"),
    ("llama", "llama"),
    ("meta-llama", "llama"),
    ("deepseek", "deepseek"),
    ("qwen", "qwen"),
    ("qwq", "qwen"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("ministral", "mistral"),
    ("codestral", "mistral"),
    ("magistral", "mistral"),
    ("phi-", "phi"),
    ("command", "cohere"),
    ("grok", "grok"),
    ("kimi", "kimi"),
    ("glm", "glm"),
];

/// The family of a model id by [`FAMILIES`]: `gpt-4.1-mini` → `gpt`, `o3-mini` → `gpt`,
/// `meta-llama/Llama-3.3-70B` → `llama`, `deepseek-chat` → `deepseek`. The `o1`/`o3`/`o4`
/// rows match only the whole id or the id followed by `-` (so `o3-mini`, not `o300`).
pub fn family_of(model: &str) -> Option<&'static str> {
    let last = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    FAMILIES.iter().find_map(|&(prefix, family)| {
        let short = prefix.len() == 2 && prefix.starts_with('o');
        let hit = if short {
            last == prefix || last.starts_with(&format!("{prefix}-"))
        } else {
            last.starts_with(prefix)
        };
        hit.then_some(family)
    })
}

impl JudgeSettings {
    /// The URL judge requests go to: `base` (the settings' base URL, or the built-in
    /// mock's) with the URL credentials of the settings read now (the mock takes none).
    pub fn request_url(&self, base: &str) -> super::url::SecretUrl {
        match &self.endpoint {
            JudgeEndpoint::Url(_) => self.credentials.request_url(base),
            JudgeEndpoint::BuiltinMock => super::endpoint::Credentials::default().request_url(base),
        }
    }

    /// The judge's host, or `builtin-mock`.
    pub fn host(&self) -> String {
        match &self.endpoint {
            JudgeEndpoint::Url(url) => super::bench::host_of(url),
            JudgeEndpoint::BuiltinMock => "builtin-mock".to_string(),
        }
    }
}

super::endpoint::with_endpoint_keys! {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct JudgeDoc {
        id: Option<Spanned<String>>,
        #[serde(default)]
        builtin_mock: bool,
        model: Spanned<String>,
        template: Spanned<String>,
        pairwise_template: Option<Spanned<String>>,
        system: Option<String>,
        #[serde(default = "first")]
        sample: Sample,
        #[serde(default = "one")]
        replicates: Spanned<u32>,
        vary: Option<Spanned<Vec<Variation>>>,
        #[serde(default)]
        seed: u64,
        #[serde(default = "default_concurrency")]
        concurrency: Spanned<usize>,
        #[serde(default = "default_timeout")]
        timeout_s: Spanned<f64>,
        #[serde(default = "default_reasks")]
        reasks: u32,
        #[serde(default)]
        include_reasoning: bool,
        #[serde(default)]
        redact: Vec<Spanned<String>>,
        #[serde(default = "yes")]
        builtin_redactions: bool,
        #[serde(default)]
        simulated: bool,
        family: Option<Spanned<String>>,
        #[serde(default)]
        request: RequestParams,
        #[serde(default = "default_retry")]
        retry: RetryPolicy,
    }
}

fn first() -> Sample {
    Sample::First
}
fn one() -> Spanned<u32> {
    Spanned::new(0..0, 1)
}
fn yes() -> bool {
    true
}
fn default_concurrency() -> Spanned<usize> {
    Spanned::new(0..0, 8)
}
fn default_timeout() -> Spanned<f64> {
    Spanned::new(0..0, 120.0)
}
fn default_reasks() -> u32 {
    2
}
fn default_retry() -> RetryPolicy {
    // Judging is not a latency measurement: retry transient faults by default.
    RetryPolicy {
        attempts: 4,
        ..RetryPolicy::default()
    }
}

/// The settings' `id`, else the file's stem.
fn judge_id(src: &SourceText, doc: &JudgeDoc, path: &Path) -> Result<String, ConfigError> {
    Ok(match &doc.id {
        Some(id) => {
            if !valid_id(id.get_ref()) {
                return Err(src.invalid(
                    id.span(),
                    format!("judge id {:?} is not a slug", id.get_ref()),
                    "use a short slug such as \"gpt-judge\"",
                ));
            }
            id.get_ref().clone()
        }
        None => path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("judge")
            .to_string(),
    })
}

/// A URL, or the built-in mock judge: exactly one of them; the endpoint checked as every
/// endpoint is ([`super::endpoint::check`]).
fn endpoint(
    src: &SourceText,
    doc: &mut JudgeDoc,
    id: &str,
    require_vars: bool,
) -> Result<(JudgeEndpoint, super::endpoint::Credentials), ConfigError> {
    let written = doc.take_endpoint();
    match (&written.base_url, doc.builtin_mock) {
        (Some(url), true) => {
            return Err(src.invalid(
                url.span(),
                "both base_url and builtin_mock are set",
                "keep one: base_url for a real judge, builtin_mock = true for the mock",
            ));
        }
        (None, false) => {
            return Err(src.invalid(
                doc.model.span(),
                "no base_url",
                "set base_url = \"https://.../v1\", or builtin_mock = true",
            ));
        }
        _ => {}
    }
    let owner = format!("judge {id}");
    let (url, credentials) = super::endpoint::check(src, &owner, written, require_vars)?;
    Ok((
        url.map_or(JudgeEndpoint::BuiltinMock, JudgeEndpoint::Url),
        credentials,
    ))
}

/// The model named, counts positive, at least one attempt.
fn check_values(src: &SourceText, doc: &JudgeDoc) -> Result<(), ConfigError> {
    if doc.model.get_ref().trim().is_empty() {
        return Err(src.invalid(doc.model.span(), "empty model", "name the judge model"));
    }
    // The fix: the key's meaning and range (`config::keys`).
    let in_range = |ok: bool, span: std::ops::Range<usize>, what: &str, range: &str| {
        if ok {
            Ok(())
        } else {
            Err(src.out_of_range(
                FileKind::Judge,
                &[what],
                src.line_of(span.start),
                format!("{what} must be {range}"),
            ))
        }
    };
    in_range(
        *doc.replicates.get_ref() >= 1,
        doc.replicates.span(),
        "replicates",
        "at least 1",
    )?;
    in_range(
        *doc.concurrency.get_ref() >= 1,
        doc.concurrency.span(),
        "concurrency",
        "at least 1",
    )?;
    let t = *doc.timeout_s.get_ref();
    in_range(
        t.is_finite() && t > 0.0,
        doc.timeout_s.span(),
        "timeout_s",
        "above 0",
    )?;
    if doc.retry.attempts == 0 {
        return Err(src.out_of_range(
            FileKind::Judge,
            &["retry", "attempts"],
            src.key_line("attempts"),
            "retry attempts must be at least 1 (1: no retries)",
        ));
    }
    Ok(())
}

/// `family`, when written: a slug, lower case.
fn family(
    src: &SourceText,
    family: Option<Spanned<String>>,
) -> Result<Option<String>, ConfigError> {
    let Some(f) = family else { return Ok(None) };
    let name = f.get_ref().trim().to_ascii_lowercase();
    if !valid_id(&name) {
        return Err(src.invalid(
            f.span(),
            format!("family {:?} is not a slug", f.get_ref()),
            "name the family as docs/judge.md's table does, e.g. family = \"gpt\"",
        ));
    }
    Ok(Some(name))
}

/// The settings' own redaction terms, trimmed; each at least 2 characters.
fn redact_terms(src: &SourceText, doc: &JudgeDoc) -> Result<Vec<String>, ConfigError> {
    let mut redact = Vec::new();
    for term in &doc.redact {
        if term.get_ref().trim().chars().count() < 2 {
            return Err(src.invalid(
                term.span(),
                format!(
                    "redaction term {:?} is shorter than 2 characters",
                    term.get_ref()
                ),
                "write the whole name to redact",
            ));
        }
        redact.push(term.get_ref().trim().to_string());
    }
    Ok(redact)
}

/// The pairwise template, when named: read beside the settings, with every placeholder
/// a pairwise prompt needs.
fn pairwise_template(
    src: &SourceText,
    doc: &JudgeDoc,
    base: &Path,
) -> Result<Option<PairwiseTemplate>, ConfigError> {
    Ok(match &doc.pairwise_template {
        None => None,
        Some(name) => {
            let path = base.join(name.get_ref());
            let text = SourceText::read(&path).map_err(|e| match e {
                ConfigError::Read { error, .. } => src.invalid(
                    name.span(),
                    format!("cannot read pairwise template {}: {error}", path.display()),
                    "name a template file relative to this settings file (see judges/pairwise.md)",
                ),
                other => other,
            })?;
            for required in PAIRWISE_REQUIRED {
                if !text.text.contains(&format!("{{{{{required}}}}}")) {
                    return Err(ConfigError::invalid(
                        &path,
                        1,
                        format!("the pairwise template has no {{{{{required}}}}}"),
                        format!(
                            "add {{{{{required}}}}} where the judge should read it (see judges/pairwise.md)"
                        ),
                    ));
                }
            }
            Some(PairwiseTemplate {
                path,
                text: text.text,
            })
        }
    })
}

/// The `response_format` of `[request]`: a name turned into what is sent, or a table sent
/// as written.
fn response_format(
    src: &SourceText,
    request: &mut RequestParams,
    response_format_line: usize,
) -> Result<ResponseFormat, ConfigError> {
    Ok(match request.response_format.take() {
        None => ResponseFormat::None,
        Some(serde_json::Value::String(name)) => match name.as_str() {
            "rubric_schema" => ResponseFormat::RubricSchema,
            "json_object" => {
                request.response_format = Some(serde_json::json!({"type": "json_object"}));
                ResponseFormat::JsonObject
            }
            "none" => ResponseFormat::None,
            other => {
                return Err(ConfigError::invalid(
                    &src.path,
                    response_format_line,
                    format!("unknown response_format {other:?}"),
                    "write \"rubric_schema\" (a JSON schema built from the rubric), \"json_object\", \"none\", or a table sent as written",
                ));
            }
        },
        Some(table) => {
            let format = if table == serde_json::json!({"type": "json_object"}) {
                ResponseFormat::JsonObject
            } else {
                ResponseFormat::AsWritten
            };
            request.response_format = Some(table);
            format
        }
    })
}

impl JudgeSettings {
    /// Reads the settings and the template file they name, with every variable the
    /// endpoint names set (for a command about to send).
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::read(path, true)
    }

    /// [`JudgeSettings::load`] without requiring the endpoint's variables: for `lint`,
    /// dry runs and audits, which send nothing.
    pub fn load_without_keys(path: &Path) -> Result<Self, ConfigError> {
        Self::read(path, false)
    }

    fn read(path: &Path, require_vars: bool) -> Result<Self, ConfigError> {
        let src = SourceText::read(path)?;
        let mut doc: JudgeDoc = src.parse(FileKind::Judge)?;
        let id = judge_id(&src, &doc, path)?;
        let (endpoint, credentials) = endpoint(&src, &mut doc, &id, require_vars)?;
        check_values(&src, &doc)?;
        let t = *doc.timeout_s.get_ref();
        let redact = redact_terms(&src, &doc)?;

        let base = path.parent().unwrap_or(Path::new("."));
        let template_path = base.join(doc.template.get_ref());
        let template_src = SourceText::read(&template_path).map_err(|e| match e {
            ConfigError::Read { error, .. } => src.invalid(
                doc.template.span(),
                format!("cannot read template {}: {error}", template_path.display()),
                "name a template file relative to this settings file",
            ),
            other => other,
        })?;
        let template = PromptTemplate::parse(&template_src)?;
        let pairwise_template = pairwise_template(&src, &doc, base)?;

        // A judge scores best when it does not improvise, and the parser wants one body.
        let mut request = doc.request;
        let response_format_line = src.key_line("response_format");
        let response_format = response_format(&src, &mut request, response_format_line)?;
        request.temperature = request.temperature.or(Some(0.0));
        request.stream = request.stream.or(Some(false));
        // The mock's judge models are named `mock-judge…`; a served mock is still a mock.
        let simulated = doc.simulated
            || endpoint == JudgeEndpoint::BuiltinMock
            || doc.model.get_ref().starts_with("mock-");
        let settings = JudgeSettings {
            id,
            path: path.to_path_buf(),
            endpoint,
            model: doc.model.into_inner(),
            credentials,
            request,
            response_format,
            response_format_line,
            retry: doc.retry,
            system: doc.system.map(|s| s.trim().to_string()),
            template_path,
            template,
            pairwise_template,
            sample: doc.sample,
            replicates: doc.replicates.into_inner(),
            vary_line: doc.vary.as_ref().map_or(1, |v| src.line_of(v.span().start)),
            vary: {
                let mut v = doc.vary.map_or_else(
                    || vec![Variation::Order, Variation::Label, Variation::Nonce],
                    Spanned::into_inner,
                );
                v.sort_unstable();
                v.dedup();
                v
            },
            seed: doc.seed,
            concurrency: doc.concurrency.into_inner(),
            timeout_s: t,
            reasks: doc.reasks,
            include_reasoning: doc.include_reasoning,
            redact,
            builtin_redactions: doc.builtin_redactions,
            simulated,
            grader_version: None,
            family: family(&src, doc.family)?,
        };
        settings.check_replicates()?;
        Ok(settings)
    }

    /// Replicates at temperature 0 that vary nothing send one prompt several times: they
    /// would report perfect self-agreement that measures nothing. Called after loading and
    /// again after command-line overrides.
    pub fn check_replicates(&self) -> Result<(), ConfigError> {
        let temperature = self.request.temperature.unwrap_or(0.0);
        if self.replicates > 1 && self.vary.is_empty() && temperature == 0.0 {
            return Err(ConfigError::invalid(
                &self.path,
                self.vary_line,
                format!(
                    "{} replicates at temperature 0 with `vary = []` send the same prompt {} times: their agreement would measure nothing",
                    self.replicates, self.replicates
                ),
                "vary what should not matter (vary = [\"order\", \"label\", \"nonce\"], the default), or set [request] temperature above 0, or use replicates = 1",
            ));
        }
        Ok(())
    }
}

/// The names in a bench.toml's targets, for blinding only. Read leniently: the file's
/// other settings are not validated, and its key variables need not be set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchTargetNames {
    pub provider: String,
    pub model: String,
    pub label: String,
    pub host: String,
}

#[derive(Deserialize)]
struct BenchNamesDoc {
    #[serde(rename = "target", default)]
    targets: Vec<BenchTargetDoc>,
}

#[derive(Deserialize)]
struct BenchTargetDoc {
    provider: String,
    model: String,
    label: Option<String>,
    base_url: String,
}

impl BenchTargetNames {
    /// The names of a loaded bench's targets (their real hosts, as requests name them).
    pub fn of(cfg: &super::BenchConfig) -> Vec<Self> {
        cfg.targets
            .iter()
            .map(|t| BenchTargetNames {
                provider: t.provider.clone(),
                model: t.model.clone(),
                label: t.label.clone(),
                host: super::bench::host_of(t.base_url.trim_end_matches('/')),
            })
            .collect()
    }

    pub fn load(path: &Path) -> Result<Vec<Self>, ConfigError> {
        let doc: BenchNamesDoc = SourceText::read(path)?.parse(FileKind::Bench)?;
        Ok(doc
            .targets
            .into_iter()
            .map(|t| BenchTargetNames {
                label: t.label.unwrap_or_else(|| t.model.clone()),
                host: super::bench::host_of(t.base_url.trim_end_matches('/')),
                provider: t.provider,
                model: t.model,
            })
            .collect())
    }
}

/// A named placeholder in a prompt template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Placeholder {
    /// The opaque label of the transcript.
    Label,
    RubricTitle,
    /// The rubric's description (empty when it has none).
    RubricDescription,
    ScaleMin,
    ScaleMax,
    /// Every criterion: id, question and anchors.
    Criteria,
    CompletedQuestion,
    /// The JSON shape to answer with, criteria ids filled in.
    OutputFormat,
    /// One machine-readable line: `rubric-spec: {"criteria":[…],"min":…,"max":…}`.
    RubricSpec,
    /// The delimited, blinded transcript.
    Transcript,
    /// The exact lines that open and close the transcript.
    TranscriptBegin,
    TranscriptEnd,
}

impl Placeholder {
    pub const ALL: [Placeholder; 12] = [
        Placeholder::Label,
        Placeholder::RubricTitle,
        Placeholder::RubricDescription,
        Placeholder::ScaleMin,
        Placeholder::ScaleMax,
        Placeholder::Criteria,
        Placeholder::CompletedQuestion,
        Placeholder::OutputFormat,
        Placeholder::RubricSpec,
        Placeholder::Transcript,
        Placeholder::TranscriptBegin,
        Placeholder::TranscriptEnd,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Placeholder::Label => "label",
            Placeholder::RubricTitle => "rubric_title",
            Placeholder::RubricDescription => "rubric_description",
            Placeholder::ScaleMin => "scale_min",
            Placeholder::ScaleMax => "scale_max",
            Placeholder::Criteria => "criteria",
            Placeholder::CompletedQuestion => "completed_question",
            Placeholder::OutputFormat => "output_format",
            Placeholder::RubricSpec => "rubric_spec",
            Placeholder::Transcript => "transcript",
            Placeholder::TranscriptBegin => "transcript_begin",
            Placeholder::TranscriptEnd => "transcript_end",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Segment {
    Text(String),
    Slot(Placeholder),
}

/// A template split into literal text and placeholders, so that rendering is one pass and
/// text substituted in (a transcript that contains `{{criteria}}`) is never expanded again.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptTemplate {
    /// The file's text, hashed into judgment keys.
    pub text: String,
    pub segments: Vec<Segment>,
}

impl PromptTemplate {
    pub fn parse(src: &SourceText) -> Result<Self, ConfigError> {
        let text = &src.text;
        let mut segments = Vec::new();
        let mut rest = 0;
        let mut literal = String::new();
        while let Some(open) = text[rest..].find("{{").map(|o| o + rest) {
            literal.push_str(&text[rest..open]);
            let Some(close) = text[open + 2..].find("}}").map(|c| c + open + 2) else {
                return Err(src.invalid(
                    open..open,
                    "`{{` without a closing `}}`",
                    "close the placeholder, e.g. {{transcript}}",
                ));
            };
            let name = text[open + 2..close].trim();
            let Some(p) = Placeholder::ALL.into_iter().find(|p| p.name() == name) else {
                let known: Vec<_> = Placeholder::ALL.iter().map(|p| p.name()).collect();
                return Err(src.invalid(
                    open..close,
                    format!("unknown placeholder {{{{{name}}}}}"),
                    format!("use one of: {}", known.join(", ")),
                ));
            };
            if !literal.is_empty() {
                segments.push(Segment::Text(std::mem::take(&mut literal)));
            }
            segments.push(Segment::Slot(p));
            rest = close + 2;
        }
        literal.push_str(&text[rest..]);
        if !literal.is_empty() {
            segments.push(Segment::Text(literal));
        }
        for required in [Placeholder::Transcript, Placeholder::Criteria] {
            if !segments.contains(&Segment::Slot(required)) {
                return Err(ConfigError::invalid(
                    &src.path,
                    1,
                    format!("the template has no {{{{{}}}}}", required.name()),
                    format!(
                        "add {{{{{}}}}} where the judge should read it",
                        required.name()
                    ),
                ));
            }
        }
        Ok(PromptTemplate {
            text: text.clone(),
            segments,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_come_from_the_model_id() {
        for (model, family) in [
            ("gpt-4.1-mini", Some("gpt")),
            ("o3-mini", Some("gpt")),
            ("o1", Some("gpt")),
            ("o300", None),
            ("openai/gpt-4o", Some("gpt")),
            ("claude-3-5-sonnet-latest", Some("claude")),
            ("gemini-2.5-pro", Some("gemini")),
            ("meta-llama/Llama-3.3-70B-Instruct", Some("llama")),
            ("deepseek-chat", Some("deepseek")),
            ("Qwen/Qwen2.5-72B-Instruct", Some("qwen")),
            ("mixtral-8x7b", Some("mistral")),
            ("mistral-large", Some("mistral")),
            ("mock-judge", None),
            ("", None),
        ] {
            assert_eq!(family_of(model), family, "{model}");
        }
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    const TEMPLATE: &str = "Rate {{ label }}.\n{{criteria}}\n{{transcript}}\n";

    #[test]
    fn loads_settings_with_judge_defaults() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "t.md", TEMPLATE);
        let p = write(
            dir.path(),
            "gpt.toml",
            "base_url = \"https://api.example.com/v1/\"\nmodel = \"m\"\ntemplate = \"t.md\"\n",
        );
        let s = JudgeSettings::load(&p).unwrap();
        assert_eq!(s.id, "gpt");
        assert_eq!(
            s.endpoint,
            JudgeEndpoint::Url("https://api.example.com/v1".into())
        );
        assert_eq!(s.request.temperature, Some(0.0));
        assert!(!s.request.stream());
        assert_eq!(s.sample, Sample::First);
        assert_eq!(s.retry.attempts, 4);
        assert!(!s.simulated);
        assert_eq!(s.host(), "api.example.com");
        assert_eq!(
            s.template.segments[1],
            Segment::Slot(Placeholder::Label),
            "{:?}",
            s.template.segments
        );
    }

    #[test]
    fn builtin_mock_is_simulated_and_excludes_base_url() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "t.md", TEMPLATE);
        let p = write(
            dir.path(),
            "m.toml",
            "builtin_mock = true\nmodel = \"mock-judge\"\ntemplate = \"t.md\"\n",
        );
        assert!(JudgeSettings::load(&p).unwrap().simulated);
        let p = write(
            dir.path(),
            "m.toml",
            "builtin_mock = true\nbase_url = \"http://x/v1\"\nmodel = \"m\"\ntemplate = \"t.md\"\n",
        );
        let err = JudgeSettings::load(&p).unwrap_err().to_string();
        assert!(err.contains("m.toml:2:"), "{err}");
    }

    #[test]
    fn unset_key_is_reported_at_load_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "t.md", TEMPLATE);
        let text = "base_url = \"http://x/v1\"\nmodel = \"m\"\ntemplate = \"t.md\"\napi_key_env = \"TURNBENCH_TEST_UNSET_JUDGE_KEY\"\n";
        let p = write(dir.path(), "j.toml", text);
        let err = JudgeSettings::load(&p).unwrap_err().to_string();
        assert!(err.contains("j.toml:4:"), "{err}");
        assert!(err.contains("TURNBENCH_TEST_UNSET_JUDGE_KEY"), "{err}");
        assert!(JudgeSettings::load_without_keys(&p).is_ok());
        // SAFETY: no other test reads this variable.
        unsafe { std::env::set_var("TURNBENCH_TEST_EMPTY_JUDGE_KEY", " ") };
        let p = write(
            dir.path(),
            "j.toml",
            &text.replace("UNSET_JUDGE_KEY", "EMPTY_JUDGE_KEY"),
        );
        let err = JudgeSettings::load(&p).unwrap_err().to_string();
        assert!(err.contains("or empty"), "{err}");
    }

    #[test]
    fn template_errors_name_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let base = "base_url = \"http://x/v1\"\nmodel = \"m\"\ntemplate = \"t.md\"\n";
        let p = write(dir.path(), "j.toml", base);
        write(dir.path(), "t.md", "ok\n\n{{criteria}} {{transcrip}}\n");
        let err = JudgeSettings::load(&p).unwrap_err().to_string();
        assert!(err.contains("t.md:3:"), "{err}");
        assert!(err.contains("transcrip"), "{err}");
        write(dir.path(), "t.md", "{{criteria}}\n");
        let err = JudgeSettings::load(&p).unwrap_err().to_string();
        assert!(err.contains("{{transcript}}"), "{err}");
        write(dir.path(), "t.md", "{{criteria}}\n{{transcript");
        let err = JudgeSettings::load(&p).unwrap_err().to_string();
        assert!(err.contains("t.md:2:"), "{err}");
        std::fs::remove_file(dir.path().join("t.md")).unwrap();
        let err = JudgeSettings::load(&p).unwrap_err().to_string();
        assert!(err.contains("j.toml:3:"), "{err}");
    }

    #[test]
    fn response_format_names_a_kind_or_is_sent_as_written() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "t.md", TEMPLATE);
        let base = "base_url = \"http://x/v1\"\nmodel = \"m\"\ntemplate = \"t.md\"\n[request]\n";
        let load = |line: &str| {
            let p = write(dir.path(), "j.toml", &format!("{base}{line}\n"));
            JudgeSettings::load(&p)
        };
        let s = load("response_format = \"rubric_schema\"").unwrap();
        assert_eq!(
            (
                s.response_format,
                s.request.response_format,
                s.response_format_line
            ),
            (ResponseFormat::RubricSchema, None, 5)
        );
        for line in [
            "response_format = \"json_object\"",
            "response_format = { type = \"json_object\" }",
        ] {
            let s = load(line).unwrap();
            assert_eq!(s.response_format, ResponseFormat::JsonObject);
            assert_eq!(
                s.request.response_format,
                Some(serde_json::json!({"type": "json_object"}))
            );
        }
        assert_eq!(
            load("response_format = \"none\"").unwrap().response_format,
            ResponseFormat::None
        );
        assert_eq!(load("").unwrap().response_format, ResponseFormat::None);
        let s = load("response_format = { type = \"text\" }").unwrap();
        assert_eq!(s.response_format, ResponseFormat::AsWritten);
        let err = load("response_format = \"schema\"")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("j.toml:5:") && err.contains("rubric_schema"),
            "{err}"
        );
    }

    #[test]
    fn zero_replicates_and_short_terms_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "t.md", TEMPLATE);
        let base = "base_url = \"http://x/v1\"\nmodel = \"m\"\ntemplate = \"t.md\"\n";
        let p = write(dir.path(), "j.toml", &format!("{base}replicates = 0\n"));
        let err = JudgeSettings::load(&p).unwrap_err().to_string();
        assert!(err.contains("j.toml:4:"), "{err}");
        let p = write(dir.path(), "j.toml", &format!("{base}redact = [\"x\"]\n"));
        let err = JudgeSettings::load(&p).unwrap_err().to_string();
        assert!(err.contains("j.toml:4:"), "{err}");
    }

    #[test]
    fn replicates_must_vary_something_or_sample() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "t.md", TEMPLATE);
        let base =
            "base_url = \"http://x/v1\"\nmodel = \"m\"\ntemplate = \"t.md\"\nreplicates = 3\n";
        // Default: everything varies.
        let p = write(dir.path(), "j.toml", base);
        let s = JudgeSettings::load(&p).unwrap();
        assert_eq!(
            s.vary,
            vec![Variation::Order, Variation::Label, Variation::Nonce]
        );
        // Nothing varied at temperature 0: refused, naming the line.
        let p = write(dir.path(), "j.toml", &format!("{base}vary = []\n"));
        let err = JudgeSettings::load(&p).unwrap_err().to_string();
        assert!(err.contains("j.toml:5:"), "{err}");
        assert!(err.contains("measure nothing"), "{err}");
        // Sampling instead of varying is fine; so is one replicate.
        let p = write(
            dir.path(),
            "j.toml",
            &format!("{base}vary = []\n[request]\ntemperature = 0.7\n"),
        );
        assert!(JudgeSettings::load(&p).is_ok());
        let p = write(
            dir.path(),
            "j.toml",
            &format!("{base}vary = [\"nonce\", \"order\", \"nonce\"]\n"),
        );
        assert_eq!(
            JudgeSettings::load(&p).unwrap().vary,
            vec![Variation::Order, Variation::Nonce]
        );
        let p = write(
            dir.path(),
            "j.toml",
            &format!("{base}vary = [\"colour\"]\n"),
        );
        assert!(JudgeSettings::load(&p).is_err());
    }
}
