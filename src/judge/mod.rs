//! `turnbench judge`: scores stored conversations with an LLM judge that never learns who
//! answered.
//!
//! - [`blind`]: visible messages only, names redacted where they identify, delimiters the
//!   text cannot forge; [`names`]: the shipped vendor and model-family list.
//! - [`audit`]: an independent scan of the transcript parts for what redaction missed.
//! - [`prompt`]: the template rendered with rubric, opaque label and transcript.
//! - [`parse`]: strict JSON, else the last object; every criterion inside the scale.
//! - [`cache`]: judgment keys and the seeded call order.
//!
//! This module plans (sample, blind, key, order), audits, and runs the calls: concurrency
//! from the settings, HTTP retries from the client (Retry-After honoured), re-asks after
//! unusable answers, and each judgment written as soon as it ends by one writer thread.
//! Only keys without a final judgment are sent, so a re-run sends only what is new.

pub mod anchor_run;
pub mod audit;
pub mod blind;
pub mod cache;
pub mod names;
pub mod pairwise;
pub mod parse;
pub mod prompt;
pub mod schema;
pub mod vary;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use crate::chat::Message;
use crate::client::{Client, Endpoint};
use crate::config::{BenchTargetNames, ConfigError, JudgeEndpoint, JudgeSettings, Rubric, Sample};
use crate::figure::thousands;
use crate::outcome::TurnOutcome;
use crate::store::anchor_judgments::AnchorRecord;
use crate::store::judgments::{
    CompletedConversation, JudgeCall, JudgmentRecord, JudgmentStatus, JudgmentSummary, NewJudge,
    RubricRow, completed_conversations, final_keys, stored_rubric_hash, target_names, upsert_judge,
    upsert_rubric, visible_messages,
};
use crate::store::pairwise::PairwiseRecord;
use crate::store::writer_task::Storable;
use crate::store::{StoreError, StoreWriter};
use audit::{AuditList, Leak};
use blind::{Identity, Redactor, Term, blind, redaction_terms};
use futures_util::FutureExt;
use parse::parse_verdict;

#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `--conversation` names no completed conversation.
    #[error(
        "--conversation {0}: no completed conversation has this id or uid\n  fix: pick one from `turnbench export conversations` (only completed conversations are judged)"
    )]
    UnknownConversation(String),
    /// The rubric's id and version are stored with other content.
    #[error(
        "rubric {id} version {version} is already stored with other content\n  fix: raise `version` in the rubric file (an edited rubric is a new version)"
    )]
    RubricChanged { id: String, version: u32 },
    /// The store holds no completed conversation to judge.
    #[error(
        "{}: no completed conversation to judge (replayed agent sessions are not judged)\n  fix: run `turnbench collect` (or import transcripts) into this --db first", db.display()
    )]
    NothingToJudge { db: PathBuf },
    /// `--anchors` found no reference conversation.
    #[error(
        "--anchors: no reference conversation to judge\n  fix: point --scenarios at scenarios with reference answers"
    )]
    NoAnchors,
    /// `--pairwise`: no slot where the baseline and another target both completed.
    #[error(
        "{}: no scenario and repeat in which baseline {baseline} and another target both completed\n  fix: collect both into one run (pairs are made within a run, scenario and repeat)", db.display()
    )]
    NoPairs { db: PathBuf, baseline: String },
    /// `--baseline` names no stored provider or model label.
    #[error(
        "--baseline {baseline}: no completed conversation has this provider or model label\n  fix: use one of: {known}"
    )]
    UnknownBaseline { baseline: String, known: String },
    /// `--baseline` names several targets in one slot.
    #[error(
        "--baseline {baseline}: run {run}, scenario {scenario}, repeat {repeat} has {count} baseline conversations for {provider} {label}; which one to compare with is ambiguous\n  fix: name one target: a provider that serves one model, or a model label served by one provider"
    )]
    AmbiguousBaseline {
        baseline: String,
        run: i64,
        scenario: String,
        repeat: u32,
        count: usize,
        provider: String,
        label: String,
    },
    /// The settings name the built-in mock judge, and nobody handed its URL down.
    #[error(
        "the settings name the built-in mock judge, but none was started for this run\n  fix: run `turnbench judge` or `turnbench run`, which start it"
    )]
    MockJudgeNotStarted,
    /// The HTTP client could not be built.
    #[error("HTTP client: {0}")]
    HttpClient(String),
    /// The built-in mock judge could not start (it listens on 127.0.0.1).
    #[error("the built-in mock judge could not start: {0}")]
    MockJudge(String),
}

/// What `turnbench judge` was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Audit, then send what is not judged yet.
    Judge,
    /// Print the prompts that would be sent; send nothing.
    DryRun,
    /// Scan every prompt for redaction terms; send nothing.
    Audit,
}

#[derive(Clone)]
pub struct JudgeOptions {
    pub db: PathBuf,
    /// Settings with command-line overrides applied.
    pub settings: JudgeSettings,
    pub rubric: Rubric,
    /// Targets of a bench.toml, whose names are redacted too (besides the store's).
    pub bench_targets: Vec<BenchTargetNames>,
    pub mode: Mode,
    pub quiet: bool,
    /// Which judgments to ask for, and whether to ask again those already scored.
    pub selection: JudgmentScope,
    /// Where the built-in mock judge answers (its base URL, `…/v1`), when the settings
    /// name it (`builtin_mock = true`): whoever runs this stage starts it and hands the
    /// address down; the stage itself starts no server.
    pub mock_url: Option<String>,
    /// The label of this stage in a longer run (`[3/4 judge]`), shown on the bar.
    pub stage: Option<String>,
}

/// Which judgments a run asks for, beyond the settings' sample and replicates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JudgmentScope {
    /// Only these conversations (ids or uids); empty: the settings' sample. A named
    /// conversation is judged whether or not the sample would pick it, if it completed.
    pub conversations: Vec<String>,
    /// Ask every selected judgment again, even one already scored: each fresh answer is
    /// stored beside the old rows, and the newest scored one is what reports read.
    pub rejudge: bool,
    /// Pairwise mode against this baseline (a provider or a model label as stored):
    /// [`pairwise`].
    pub pairwise: Option<String>,
    /// The reference-anchor sanity run: these conversations instead of stored ones
    /// ([`anchor_run`]).
    pub anchors: Option<Vec<anchor_run::AnchorInput>>,
}

/// One judgment to obtain: a sampled conversation × a replicate.
#[derive(Debug, Clone)]
pub struct PlannedJudgment {
    pub conversation_id: i64,
    pub label: String,
    pub replicate: u32,
    pub key: String,
    /// The exact messages of the first ask.
    pub messages: Vec<Message>,
    /// Already judged (a scored judgment for this key is stored) and not to be asked again.
    pub cached: bool,
    /// A pairwise ask: what it compares (`conversation_id` is the candidate).
    pub pair: Option<pairwise::PairSubject>,
    /// A reference-anchor ask (`conversation_id` is 0: no stored conversation).
    pub anchor: Option<anchor_run::AnchorSubject>,
}

/// Everything a run would send, in call order.
#[derive(Debug)]
pub struct JudgePlan {
    pub sampled: usize,
    pub items: Vec<PlannedJudgment>,
    pub terms: Vec<Term>,
    /// What the audit found in the sampled transcripts (one entry per conversation and
    /// hit, whatever the replicates).
    pub leaks: Vec<AuditLeak>,
    /// The `response_format` sent with every ask (a schema built from the rubric with
    /// `response_format = "rubric_schema"`).
    pub response_format: Option<serde_json::Value>,
}

impl JudgePlan {
    pub fn pending(&self) -> impl Iterator<Item = &PlannedJudgment> {
        self.items.iter().filter(|i| !i.cached)
    }
}

/// A name found in the transcript of a planned prompt.
#[derive(Debug, Clone)]
pub struct AuditLeak {
    pub conversation_id: i64,
    pub leak: Leak,
}

/// What a judge run did.
#[derive(Debug, Default)]
pub struct JudgeReport {
    pub sampled: usize,
    pub planned: usize,
    pub cached: usize,
    pub launched: usize,
    /// HTTP requests sent (retries and re-asks included).
    pub requests: u64,
    pub by_status: BTreeMap<&'static str, u64>,
    pub leaks: Vec<AuditLeak>,
    pub elapsed: Duration,
    pub interrupted: bool,
    pub simulated: bool,
    /// Judgments the store refused (a full disk, …), with the reason; the run stopped
    /// sending at the first.
    pub store_failures: Vec<String>,
    /// `--rejudge`: scored judgments were asked again.
    pub rejudged: bool,
    /// `--pairwise`: against this baseline.
    pub pairwise: Option<String>,
    /// `--anchors`: the reference-anchor sanity run.
    pub anchors: bool,
    /// The server refused the response format (HTTP 4xx/5xx naming it): one line with the
    /// fix.
    pub format_refused: Option<String>,
    /// Judge prompts that outgrew the judge's context (`context_overflow`): each one's
    /// size and what the judge's server said.
    pub overflows: Vec<OverflowedPrompt>,
}

/// A judge prompt the judge's server refused as longer than its context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverflowedPrompt {
    /// The prompt's size in o200k_base tokens (every message sent, as sent).
    pub o200k_tokens: i64,
    /// What the judge's server said about sizes, when it said it.
    pub server: crate::client::ContextSizes,
}

impl JudgeReport {
    pub fn count(&self, status: JudgmentStatus) -> u64 {
        self.by_status.get(status.as_str()).copied().unwrap_or(0)
    }
}

/// Picks the conversations to judge, in storage order: with [`Sample::First`], the first
/// completed repeat of each run × target cell × scenario; with [`Sample::All`], all.
pub fn sample(convs: &[CompletedConversation], how: Sample) -> Vec<&CompletedConversation> {
    if how == Sample::All {
        return convs.iter().collect();
    }
    let mut first: HashMap<(i64, &str, &str, &str), &CompletedConversation> = HashMap::new();
    for c in convs {
        // Imported conversations without a scenario are each their own group.
        let scenario = c.scenario.as_deref().unwrap_or(c.uid.as_str());
        let slot = first
            .entry((c.run_id, &c.provider, &c.label, scenario))
            .or_insert(c);
        if (c.repeat, c.id) < (slot.repeat, slot.id) {
            *slot = c;
        }
    }
    let mut chosen: Vec<_> = first.into_values().collect();
    chosen.sort_by_key(|c| c.id);
    chosen
}

/// Samples, blinds, keys and orders every judgment. Reads only: the rubric and judge rows
/// are written by [`record_definitions`] when calls are about to be sent, so a dry run or
/// an audit leaves the store as it was.
pub fn plan(
    conn: &rusqlite::Connection,
    settings: &JudgeSettings,
    rubric: &Rubric,
    bench_targets: &[BenchTargetNames],
    selection: &JudgmentScope,
) -> Result<JudgePlan, JudgeError> {
    if let Some(stored_hash) = rubric_conflict(conn, rubric)? {
        return Err(rubric_conflict_error(rubric, &stored_hash));
    }
    let mut planned = if let Some(baseline) = &selection.pairwise {
        pairwise::plan(conn, settings, rubric, bench_targets, baseline)?
    } else if let Some(inputs) = &selection.anchors {
        anchor_run::plan(conn, settings, rubric, inputs)?
    } else {
        plan_single(conn, settings, rubric, bench_targets, selection)?
    };
    planned.response_format =
        schema::request_format(settings, rubric, selection.pairwise.is_some());
    Ok(planned)
}

/// Single judgments of stored conversations: the sample × replicates.
fn plan_single(
    conn: &rusqlite::Connection,
    settings: &JudgeSettings,
    rubric: &Rubric,
    bench_targets: &[BenchTargetNames],
    selection: &JudgmentScope,
) -> Result<JudgePlan, JudgeError> {
    let judge_hash = cache::judge_hash(settings);
    let (terms, redactor, audit_list) = blinding(conn, settings, bench_targets)?;
    let mut leaks = Vec::new();

    let done = if selection.rejudge {
        Default::default()
    } else {
        final_keys(conn)?
    };
    let convs = completed_conversations(conn)?;
    let chosen = if selection.conversations.is_empty() {
        sample(&convs, settings.sample)
    } else {
        select(&convs, &selection.conversations)?
    };
    let mut items = Vec::new();
    for c in &chosen {
        let visible = visible_messages(conn, c.id)?;
        let transcript = blind(&visible, &redactor, settings.include_reasoning);
        // The transcript parts only: the template and rubric are the judge's own words.
        for m in &transcript.messages {
            leaks.extend(
                audit::audit(&m.content, &audit_list)
                    .into_iter()
                    .map(|leak| AuditLeak {
                        conversation_id: c.id,
                        leak,
                    }),
            );
        }
        for replicate in 1..=settings.replicates {
            let inputs =
                vary::replicate_inputs(&settings.vary, rubric, &transcript, &c.uid, replicate);
            let messages =
                prompt::build_messages(settings, &inputs.shown, &inputs.transcript, &inputs.label);
            let key = match &inputs.variation {
                None => cache::judgment_key(&judge_hash, rubric, &transcript.text, replicate),
                Some(v) => cache::varied_judgment_key(
                    &judge_hash,
                    rubric,
                    &inputs.transcript.text,
                    replicate,
                    v,
                ),
            };
            items.push((
                cache::order_key(settings.seed, &c.uid, replicate),
                PlannedJudgment {
                    conversation_id: c.id,
                    label: inputs.label,
                    replicate,
                    cached: done.contains(&(c.id, key.clone())),
                    key,
                    messages,
                    pair: None,
                    anchor: None,
                },
            ));
        }
    }
    items.sort_by_key(|(order, _)| *order);
    Ok(JudgePlan {
        sampled: chosen.len(),
        items: items.into_iter().map(|(_, i)| i).collect(),
        terms,
        leaks,
        response_format: None,
    })
}

/// The redaction terms (from the store's targets, a bench.toml's, the settings and the
/// shipped list), the redactor and the independent audit's list.
fn blinding(
    conn: &rusqlite::Connection,
    settings: &JudgeSettings,
    bench_targets: &[BenchTargetNames],
) -> Result<(Vec<Term>, Redactor, AuditList), JudgeError> {
    let mut identities: Vec<Identity> = target_names(conn)?
        .into_iter()
        .map(|t| Identity {
            provider: t.provider,
            model: t.model,
            label: t.label,
            host: t.host,
        })
        .collect();
    identities.extend(bench_targets.iter().map(|t| Identity {
        provider: t.provider.clone(),
        model: t.model.clone(),
        label: t.label.clone(),
        host: Some(t.host.clone()),
    }));
    let terms = redaction_terms(&identities, &settings.redact, settings.builtin_redactions);
    let redactor = Redactor::new(terms.clone());
    let audit_list = AuditList::new(&terms, settings.builtin_redactions);
    Ok((terms, redactor, audit_list))
}

/// The conversations named on the command line (id or uid), each a completed one.
fn select<'c>(
    convs: &'c [CompletedConversation],
    wanted: &[String],
) -> Result<Vec<&'c CompletedConversation>, JudgeError> {
    let mut chosen: Vec<&CompletedConversation> = Vec::new();
    for w in wanted {
        let found = convs
            .iter()
            .find(|c| c.uid == *w || w.parse::<i64>().is_ok_and(|id| id == c.id));
        match found {
            Some(c) if !chosen.iter().any(|o| o.id == c.id) => chosen.push(c),
            Some(_) => {}
            None => {
                return Err(JudgeError::UnknownConversation(w.to_string()));
            }
        }
    }
    chosen.sort_by_key(|c| c.id);
    Ok(chosen)
}

/// The stored hash of this rubric id and version when its content differs.
fn rubric_conflict(
    conn: &rusqlite::Connection,
    rubric: &Rubric,
) -> Result<Option<String>, JudgeError> {
    let stored = stored_rubric_hash(conn, &rubric.id, rubric.version)?;
    Ok(stored.filter(|h| *h != rubric.content_hash()))
}

fn rubric_conflict_error(rubric: &Rubric, _stored_hash: &str) -> JudgeError {
    JudgeError::RubricChanged {
        id: rubric.id.clone(),
        version: rubric.version,
    }
}

/// Stores the rubric and the judge settings (once each); returns their row ids.
pub fn record_definitions(
    conn: &rusqlite::Connection,
    settings: &JudgeSettings,
    rubric: &Rubric,
) -> Result<(i64, i64), JudgeError> {
    let rubric_ref = match upsert_rubric(
        conn,
        &rubric.id,
        rubric.version,
        &rubric.content_hash(),
        &rubric.title,
        &rubric.content_json(),
    )? {
        RubricRow::Stored(id) => id,
        RubricRow::Conflict { stored_hash } => {
            return Err(rubric_conflict_error(rubric, &stored_hash));
        }
    };
    let judge_hash = cache::judge_hash(settings);
    let settings_json = serde_json::json!({
        "request": settings.request,
        "system": settings.system,
        "include_reasoning": settings.include_reasoning,
        "redact": settings.redact,
        "builtin_redactions": settings.builtin_redactions,
        "names_version": names::shipped().version,
        "vary": settings.vary,
        "header_names": settings.credentials.headers.keys().chain(settings.credentials.headers_env.keys()).collect::<Vec<_>>(),
        "judge_hash": judge_hash,
    });
    // Written only when set, so that settings without it store what they stored before.
    let mut settings_json = settings_json;
    if let (Some(family), Some(map)) = (&settings.family, settings_json.as_object_mut()) {
        map.insert("family".into(), family.clone().into());
    }
    let settings_json = settings_json.to_string();
    let judge_ref = upsert_judge(
        conn,
        &NewJudge {
            judge_id: &settings.id,
            model: &settings.model,
            host: &settings.host(),
            simulated: settings.simulated,
            settings_json: &settings_json,
            template: &settings.template.text,
        },
    )?;
    Ok((rubric_ref, judge_ref))
}

/// The exact prompts that would be sent, with a header line each (the header is for the
/// reader; only what follows it is sent).
pub fn format_dry_run(plan: &JudgePlan, settings: &JudgeSettings) -> String {
    let pending: Vec<_> = plan.pending().collect();
    let mut out = String::new();
    let sim = if settings.simulated {
        " (simulated)"
    } else {
        ""
    };
    if let Some(format) = &plan.response_format {
        // Constant JSON values: serialising cannot fail.
        let pretty = serde_json::to_string_pretty(format).unwrap_or_default();
        out.push_str(&format!(
            "=== response_format sent with every prompt ({}) ===\n{pretty}\n",
            settings.response_format.as_str()
        ));
    }
    for (n, item) in pending.iter().enumerate() {
        let size = format!(
            " · {} o200k tokens",
            thousands(prompt_tokens(&item.messages) as u64)
        );
        out.push_str(&match &item.pair {
            None if item.anchor.is_some() => format!(
                "=== anchor prompt {}/{} · scenario {} · {} · model {}{sim}{size} ===\n",
                n + 1,
                pending.len(),
                item.anchor.as_ref().map_or("", |a| a.scenario.as_str()),
                item.anchor
                    .as_ref()
                    .and_then(|a| a.defect.as_deref())
                    .map_or("reference".to_string(), |d| {
                        match crate::store::anchor_judgments::ControlKind::of(Some(d)) {
                            Some(c) => format!("control {}", c.name()),
                            None => format!("spoiled by {d}"),
                        }
                    }),
                settings.model,
            ),
            None => format!(
                "=== judge prompt {}/{} · conversation {} · {} · replicate {} · model {}{sim}{size} ===\n",
                n + 1,
                pending.len(),
                item.conversation_id,
                item.label,
                item.replicate,
                settings.model,
            ),
            Some(p) => format!(
                "=== pairwise prompt {}/{} · conversation {} against baseline {} · baseline shown as {} · model {}{sim}{size} ===\n",
                n + 1,
                pending.len(),
                p.candidate_id,
                p.baseline_id,
                p.baseline_position.as_str(),
                settings.model,
            ),
        });
        for m in &item.messages {
            out.push_str(&format!("--- {} ---\n{}\n", m.role, m.content));
        }
    }
    out
}

/// Plans, audits and (in [`Mode::Judge`]) sends. A leak found by the audit stops a run
/// before anything is sent.
pub async fn judge(
    opts: &JudgeOptions,
    interrupts: tokio::sync::mpsc::Receiver<()>,
) -> Result<(JudgeReport, JudgePlan), JudgeError> {
    // A dry run or an audit reads the store as it is: never creates, upgrades or writes it.
    let conn = if opts.mode == Mode::Judge {
        crate::store::open(&opts.db)?
    } else {
        crate::store::open_unchanged(&opts.db)?
    };
    let plan = plan(
        &conn,
        &opts.settings,
        &opts.rubric,
        &opts.bench_targets,
        &opts.selection,
    )?;
    if plan.sampled == 0 {
        return Err(match &opts.selection.pairwise {
            None if opts.selection.anchors.is_some() => JudgeError::NoAnchors,
            None => JudgeError::NothingToJudge {
                db: opts.db.clone(),
            },
            Some(b) => JudgeError::NoPairs {
                db: opts.db.clone(),
                baseline: b.clone(),
            },
        });
    }
    let mut report = JudgeReport {
        sampled: plan.sampled,
        planned: plan.items.len(),
        cached: plan.items.iter().filter(|i| i.cached).count(),
        leaks: plan.leaks.clone(),
        simulated: opts.settings.simulated,
        rejudged: opts.selection.rejudge,
        pairwise: opts.selection.pairwise.clone(),
        anchors: opts.selection.anchors.is_some(),
        ..Default::default()
    };
    if opts.mode != Mode::Judge || !report.leaks.is_empty() {
        return Ok((report, plan));
    }
    let started = Instant::now();
    run_calls(opts, &plan, conn, &mut report, interrupts).await?;
    report.elapsed = started.elapsed();
    Ok((report, plan))
}

/// Shared, read-only state of the calls.
struct CallContext {
    client: Client,
    endpoint: Endpoint,
    timeout: Duration,
    settings: JudgeSettings,
    rubric: Rubric,
    rubric_ref: i64,
    judge_ref: i64,
    invocation: String,
    /// The judge's own answer is echoed back on a re-ask: redacted like everything else.
    redactor: Redactor,
    /// `--rejudge`: records are stored beside any scored row for their key.
    rejudge: bool,
    /// Set by the first call the server refused naming the response format.
    format_refused: std::sync::OnceLock<String>,
}

/// What every call of a run shares: the client, the endpoint (the mock judge's URL when
/// the settings name it), the definitions' rows in the store, the redactor.
fn call_context(
    opts: &JudgeOptions,
    plan: &JudgePlan,
    conn: &rusqlite::Connection,
) -> Result<CallContext, JudgeError> {
    let settings = &opts.settings;
    let base_url = match &settings.endpoint {
        JudgeEndpoint::Url(u) => u.clone(),
        JudgeEndpoint::BuiltinMock => opts
            .mock_url
            .clone()
            .ok_or(JudgeError::MockJudgeNotStarted)?,
    };
    let endpoint = Endpoint {
        url: settings.request_url(&base_url),
        model: settings.model.clone(),
        api_key: settings.credentials.api_key(),
        headers: settings.credentials.header_values(),
        params: crate::config::RequestParams {
            response_format: plan.response_format.clone(),
            ..settings.request.clone()
        },
    };
    let (rubric_ref, judge_ref) = {
        let tx = conn
            .unchecked_transaction()
            .map_err(|e| JudgeError::Store(e.into()))?;
        let refs = record_definitions(&tx, settings, &opts.rubric)?;
        tx.commit().map_err(|e| JudgeError::Store(e.into()))?;
        refs
    };
    let client = Client::new().map_err(|e| JudgeError::HttpClient(e.to_string()))?;
    Ok(CallContext {
        client,
        endpoint,
        timeout: Duration::from_secs_f64(settings.timeout_s),
        settings: settings.clone(),
        rubric: opts.rubric.clone(),
        rubric_ref,
        judge_ref,
        invocation: crate::store::now_rfc3339(),
        redactor: Redactor::new(plan.terms.clone()),
        rejudge: opts.selection.rejudge,
        format_refused: std::sync::OnceLock::new(),
    })
}

async fn run_calls(
    opts: &JudgeOptions,
    plan: &JudgePlan,
    conn: rusqlite::Connection,
    report: &mut JudgeReport,
    mut interrupts: tokio::sync::mpsc::Receiver<()>,
) -> Result<(), JudgeError> {
    let settings = &opts.settings;
    let ctx = Arc::new(call_context(opts, plan, &conn)?);

    let writer = StoreWriter::<Answer>::spawn(conn)?;
    let mut store_failed = writer.failed();
    let sink = writer.sender();
    let pending: Vec<PlannedJudgment> = plan.pending().cloned().collect();
    let progress = crate::progress::bar(
        pending.len() as u64,
        !opts.quiet,
        "judgments",
        opts.stage.as_deref(),
    );
    let unscored_so_far = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let permits = Arc::new(Semaphore::new(settings.concurrency));
    let mut tasks = tokio::task::JoinSet::new();
    let mut interrupted = false;
    let mut stopped_by_store = false;
    for (seq, item) in pending.into_iter().enumerate() {
        if *store_failed.borrow() {
            stopped_by_store = true;
            break;
        }
        // Taken before the task starts, so calls go out in the planned order.
        let permit = tokio::select! {
            // The semaphore is never closed: acquiring fails only on a closed one.
            p = permits.clone().acquire_owned() => p.expect("semaphore open"),
            // A closed channel (no Ctrl-C handler) disables this branch, never stops a run.
            Some(()) = interrupts.recv() => { interrupted = true; break; }
            // The store refused a judgment: stop paying for calls whose answers may be lost.
            Ok(()) = store_failed.wait_for(|f| *f).map(|r| r.map(|_| ())) => {
                stopped_by_store = true;
                break;
            }
        };
        report.launched += 1;
        let (ctx, sink, progress) = (ctx.clone(), sink.clone(), progress.clone());
        let unscored = unscored_so_far.clone();
        tasks.spawn(async move {
            let (record, overflow) = judge_one(&ctx, item, seq as u32 + 1).await;
            let this = u64::from(record.status() != JudgmentStatus::Ok);
            let n = unscored.fetch_add(this, std::sync::atomic::Ordering::Relaxed) + this;
            progress.set_message(format!("{n} unscored · last: {}", record.status().as_str()));
            let outcome = (record.status(), record.attempts(), overflow);
            // A closed writer has already reported why; the launcher stops on it.
            let _ = sink.send(record).await;
            progress.inc(1);
            drop(permit);
            outcome
        });
    }
    if interrupted {
        progress.println("interrupt: finishing judge calls in flight; nothing new starts");
    }
    if stopped_by_store {
        progress.println("store: a judgment could not be written; no new judge call starts");
    }
    while let Some(done) = tasks.join_next().await {
        match done {
            Ok((status, attempts, overflow)) => {
                *report.by_status.entry(status.as_str()).or_insert(0) += 1;
                report.requests += u64::from(attempts);
                report.overflows.extend(overflow);
            }
            // judge_one never panics on a judge's answer (the client turns a panic into
            // a failed call); a task that still failed is reported, never silent.
            Err(e) => eprintln!("judge: a judgment task failed: {e}"),
        }
    }
    progress.finish_and_clear();
    drop(sink);
    let written = writer.finish()?;
    report.store_failures = written
        .failed
        .iter()
        .map(|(j, e)| format!("{}: not stored: {e}", j.describe()))
        .collect();
    report.interrupted = interrupted;
    report.format_refused = ctx.format_refused.get().cloned();
    Ok(())
}

/// One judgment: ask, re-ask after unusable answers, and never make up a score.
/// A prompt that outgrew the judge's context comes back beside the record, for the summary.
async fn judge_one(
    ctx: &CallContext,
    item: PlannedJudgment,
    seq: u32,
) -> (Answer, Option<OverflowedPrompt>) {
    let started = Instant::now();
    let mut call = new_call(ctx, seq);
    let (verdict, overflow) = ask_until_usable(ctx, &item, &mut call).await;
    call.latency_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
    (into_answer(item, call, verdict, ctx.rejudge), overflow)
}

/// A prompt's size in o200k_base tokens: every message's text as sent.
pub fn prompt_tokens(messages: &[Message]) -> i64 {
    messages
        .iter()
        .map(|m| crate::tokens::count(&m.content))
        .sum()
}

/// The stored facts of one judgment before its first ask: a judge error until an answer
/// proves otherwise.
fn new_call(ctx: &CallContext, seq: u32) -> JudgeCall {
    JudgeCall {
        rubric_ref: ctx.rubric_ref,
        judge_ref: ctx.judge_ref,
        rubric_id: ctx.rubric.id.clone(),
        rubric_version: ctx.rubric.version,
        judge_id: ctx.settings.id.clone(),
        status: JudgmentStatus::JudgeError,
        rationale: None,
        raw_output: None,
        error: None,
        asks: 0,
        attempts: 0,
        http_status: None,
        latency_ms: None,
        prompt_tokens: None,
        completion_tokens: None,
        simulated: ctx.settings.simulated,
        invocation: ctx.invocation.clone(),
        seq,
    }
}

/// What the judge's usable answer said: scores (single, anchor) or a winner (pairwise).
#[derive(Default)]
struct UsableAnswer {
    scores: Option<BTreeMap<String, i64>>,
    completed: Option<bool>,
    winner: Option<crate::store::pairwise::Winner>,
}

/// Asks, and re-asks after an unusable answer (the answer and the problem echoed back),
/// up to the settings' re-asks; fills in `call` (status, raw output, errors, counts). A
/// prompt that outgrew the judge's context is a `judge_error` whose error says the
/// prompt's size; it comes back as well.
async fn ask_until_usable(
    ctx: &CallContext,
    item: &PlannedJudgment,
    call: &mut JudgeCall,
) -> (UsableAnswer, Option<OverflowedPrompt>) {
    let mut overflow = None;
    let s = &ctx.settings;
    let mut messages = item.messages.clone();
    let mut problems: Vec<String> = Vec::new();
    let mut verdict = UsableAnswer::default();
    // The judge's last usable-or-not answer: a later ask that fails with no answer (an
    // HTTP error after a re-ask) keeps it as the raw output.
    let mut last_raw: Option<String> = None;
    loop {
        call.asks += 1;
        let asks = call.asks;
        let (turn, _) = ctx
            .client
            .send_with_retries(&ctx.endpoint, &messages, ctx.timeout, &s.retry, asks - 1)
            .await;
        call.attempts += turn.attempts.max(1);
        add_tokens(&mut call.prompt_tokens, turn.usage.prompt_tokens);
        add_tokens(&mut call.completion_tokens, turn.usage.completion_tokens);
        call.http_status = turn.http_status;
        let answered = matches!(
            turn.outcome(),
            TurnOutcome::Ok | TurnOutcome::Truncated | TurnOutcome::EmptyAnswer
        );
        if !answered {
            if let Some(hint) =
                schema::refusal_hint(s, turn.http_status, turn.error.as_deref().unwrap_or(""))
            {
                let _ = ctx.format_refused.set(hint);
            }
            // The judge failed, not the conversation: nothing about it is touched.
            let size = if turn.outcome() == TurnOutcome::ContextOverflow {
                let o200k_tokens = prompt_tokens(&messages);
                overflow = Some(OverflowedPrompt {
                    o200k_tokens,
                    server: turn.context.unwrap_or_default(),
                });
                format!("; the judge prompt is {o200k_tokens} o200k tokens")
            } else {
                String::new()
            };
            problems.push(format!(
                "ask {asks}: {}{size} ({})",
                turn.error.as_deref().unwrap_or("no detail"),
                turn.outcome()
            ));
            call.status = JudgmentStatus::JudgeError;
            call.raw_output = last_raw.or(turn.result.answer);
            break;
        }
        let raw = turn.result.answer.unwrap_or_default();
        match read_answer(ctx, item, &raw, call, &mut verdict) {
            Ok(()) => {
                call.status = JudgmentStatus::Ok;
                call.raw_output = Some(raw);
                break;
            }
            Err(problem) => {
                problems.push(format!("ask {asks}: {problem}"));
                if asks > s.reasks {
                    call.status = JudgmentStatus::Unparseable;
                    call.raw_output = Some(raw);
                    break;
                }
                messages.push(Message::new(
                    "assistant",
                    blind::neutralise(&ctx.redactor.redact(&raw)),
                ));
                messages.push(match item.pair {
                    None => prompt::reask_message(&problem, &ctx.rubric),
                    Some(_) => pairwise::reask_message(&problem),
                });
                last_raw = Some(raw);
            }
        }
    }
    call.error = (!problems.is_empty()).then(|| problems.join("; "));
    (verdict, overflow)
}

fn add_tokens(sum: &mut Option<i64>, v: Option<i64>) {
    if let Some(v) = v {
        *sum = Some(sum.unwrap_or(0) + v);
    }
}

/// Parses one answer (a verdict, or a preference for a pair) into `verdict` and the
/// rationale into `call`; the problem, in words, when it is unusable.
fn read_answer(
    ctx: &CallContext,
    item: &PlannedJudgment,
    raw: &str,
    call: &mut JudgeCall,
    verdict: &mut UsableAnswer,
) -> Result<(), String> {
    match &item.pair {
        None => parse_verdict(raw, &ctx.rubric)
            .map(|v| {
                verdict.scores = Some(v.scores);
                verdict.completed = Some(v.completed);
                call.rationale = Some(v.rationale);
            })
            .map_err(|p| p.to_string()),
        Some(_) => pairwise::parse_preference(raw)
            .map(|p| {
                verdict.winner = Some(p.winner);
                call.rationale = Some(p.rationale);
            })
            .map_err(|p| p.to_string()),
    }
}

/// The record to store: an anchor's, a pair's or a conversation's.
fn into_answer(
    item: PlannedJudgment,
    call: JudgeCall,
    verdict: UsableAnswer,
    rejudge: bool,
) -> Answer {
    let UsableAnswer {
        scores,
        completed,
        winner,
    } = verdict;
    let key = item.key;
    if let Some(anchor) = item.anchor {
        return Answer::Anchor(AnchorRecord {
            key,
            scenario: anchor.scenario,
            defect: anchor.defect,
            scores,
            completed,
            call,
        });
    }
    match item.pair {
        None => Answer::Single(JudgmentRecord {
            key,
            conversation_id: item.conversation_id,
            replicate: item.replicate,
            label: item.label,
            scores,
            completed,
            call,
            rejudge,
        }),
        Some(pair) => Answer::Pair(PairwiseRecord {
            key,
            baseline_id: pair.baseline_id,
            candidate_id: pair.candidate_id,
            baseline_position: pair.baseline_position,
            winner: winner.filter(|_| call.status == JudgmentStatus::Ok),
            call,
        }),
    }
}

/// A finished ask, single or pairwise, on its way to the store's one writer.
#[derive(Debug)]
enum Answer {
    Single(JudgmentRecord),
    Pair(PairwiseRecord),
    Anchor(AnchorRecord),
}

impl Answer {
    fn status(&self) -> JudgmentStatus {
        match self {
            Answer::Single(r) => r.call.status,
            Answer::Pair(r) => r.call.status,
            Answer::Anchor(r) => r.call.status,
        }
    }

    fn attempts(&self) -> u32 {
        match self {
            Answer::Single(r) => r.call.attempts,
            Answer::Pair(r) => r.call.attempts,
            Answer::Anchor(r) => r.call.attempts,
        }
    }

    fn describe(&self) -> String {
        match self {
            Answer::Single(j) => format!(
                "judgment of conversation {} ({} v{}, judge {}, replicate {}; {})",
                j.conversation_id,
                j.call.rubric_id,
                j.call.rubric_version,
                j.call.judge_id,
                j.replicate,
                j.call.status.as_str()
            ),
            Answer::Pair(j) => format!(
                "pairwise judgment of conversation {} against baseline {} ({} v{}, judge {}, baseline shown {}; {})",
                j.candidate_id,
                j.baseline_id,
                j.call.rubric_id,
                j.call.rubric_version,
                j.call.judge_id,
                j.baseline_position.as_str(),
                j.call.status.as_str()
            ),
            Answer::Anchor(j) => format!(
                "anchor judgment of scenario {} ({}; {} v{}, judge {}; {})",
                j.scenario,
                j.defect.as_deref().unwrap_or("reference"),
                j.call.rubric_id,
                j.call.rubric_version,
                j.call.judge_id,
                j.call.status.as_str()
            ),
        }
    }
}

impl Storable for Answer {
    const THREAD: &'static str = "turnbench-judgments";

    fn insert(&self, tx: &rusqlite::Transaction) -> Result<bool, StoreError> {
        match self {
            Answer::Single(r) => r.insert(tx),
            Answer::Pair(r) => r.insert(tx),
            Answer::Anchor(r) => r.insert(tx),
        }
    }
}

/// The closing lines of a pairwise run: the verdicts of this rubric and judge as reports
/// read them (`pairwise_verdicts`).
pub fn format_pairwise_summary(
    settings: &JudgeSettings,
    rubric: &Rubric,
    verdicts: &[crate::store::pairwise::PairwiseVerdict],
) -> String {
    use crate::store::pairwise::Preferred;
    let rubric_key = format!("{}@{}", rubric.id, rubric.version);
    let this: Vec<_> = verdicts
        .iter()
        .filter(|v| {
            let p = &v.pair;
            p.rubric == rubric_key && p.judge_id == settings.id && p.simulated == settings.simulated
        })
        .collect();
    let scored: Vec<_> = this.iter().filter(|v| v.scored).collect();
    let count = |p: Preferred| scored.iter().filter(|v| v.verdict == Some(p)).count();
    let consistent = scored.iter().filter(|v| v.consistent == Some(true)).count();
    format!(
        "pairwise verdicts (as reports read them): {} pairs with both positions judged, {} scored; position-consistent {consistent} of {}; candidate better {}, tie {} (inconsistent ones included), baseline better {}\n",
        this.len(),
        scored.len(),
        scored.len(),
        count(Preferred::Candidate),
        count(Preferred::Tie),
        count(Preferred::Baseline),
    )
}

/// Why a judgment is unscored, in a few words: for `judge_error`, the class of the last
/// failed call (`http_5xx`, `rate_limited`, `timeout`…); for `unparseable`, the kind of
/// the last unusable answer. Read from the stored error text ("ask N: …; ask M: …").
pub fn unscored_reason(status: &str, error: Option<&str>) -> String {
    let last = error
        .and_then(|e| e.rsplit("; ask ").next())
        .unwrap_or_default();
    if status == JudgmentStatus::Unparseable.as_str() {
        return parse::ParseFailure::kind_of(last).to_string();
    }
    // A failed call ends with its class in parentheses: "… (http_5xx)".
    last.rsplit_once('(')
        .and_then(|(_, class)| class.strip_suffix(')'))
        .filter(|class| class.parse::<TurnOutcome>().is_ok())
        .map_or_else(|| "judge call failed".to_string(), str::to_string)
}

/// What to say when judge prompts outgrew the judge's context: how long they were, what
/// the server said, and what to do. Empty when none did.
pub fn overflow_advice(overflows: &[OverflowedPrompt], settings: &JudgeSettings) -> String {
    let (Some(min), Some(max)) = (
        overflows.iter().map(|o| o.o200k_tokens).min(),
        overflows.iter().map(|o| o.o200k_tokens).max(),
    ) else {
        return String::new();
    };
    let size = if min == max {
        format!("{} o200k tokens", thousands(max as u64))
    } else {
        format!(
            "{}–{} o200k tokens",
            thousands(min as u64),
            thousands(max as u64)
        )
    };
    let window = overflows
        .iter()
        .filter_map(|o| o.server.window_tokens)
        .max()
        .map_or(String::new(), |w| {
            format!(
                "; the judge's server said its window is {} tokens",
                thousands(w as u64)
            )
        });
    let reasoning = if settings.include_reasoning {
        ", or `include_reasoning = false` in the judge file (the transcripts carry the answers' reasoning)"
    } else {
        ""
    };
    format!(
        "context_overflow: {} outgrew judge {}'s context (model {}): the prompts were {size}{window}\n  \
         fix: a judge served with a larger context window{reasoning}, or a shorter transcript rendering (a shorter `template`); \
         `turnbench judge --dry-run` prints each prompt's size before anything is sent\n",
        match overflows.len() {
            1 => "1 judge prompt".to_string(),
            n => format!("{n} judge prompts"),
        },
        settings.id,
        settings.model,
    )
}

/// The closing summary of a run: what was sent and how it ended, the judgments left
/// unscored and why, then the table of current judgments per rubric and judge (read from
/// the store's `current_judgments` view, as reports read it).
pub fn format_summary(
    report: &JudgeReport,
    settings: &JudgeSettings,
    rubric: &Rubric,
    table: &[JudgmentSummary],
) -> String {
    let mut out = format!(
        "judge {} ({}{}) · rubric {} v{}: {}; {}\n",
        settings.id,
        settings.model,
        if report.simulated { ", simulated" } else { "" },
        rubric.id,
        rubric.version,
        match &report.pairwise {
            None if report.anchors => format!(
                "{} reference-anchor conversations (references and their spoiled variants)",
                report.planned
            ),
            None => format!(
                "{} conversations sampled × {} replicates = {} judgments",
                report.sampled, settings.replicates, report.planned
            ),
            Some(baseline) => format!(
                "{} pairs against baseline {baseline} × 2 positions = {} pairwise judgments",
                report.sampled, report.planned
            ),
        },
        if report.rejudged {
            "--rejudge: every one asked again".to_string()
        } else {
            format!("{} already judged", report.cached)
        },
    );
    if report.launched > 0 || report.cached < report.planned {
        out.push_str(&format!(
            "sent {} judgments ({} requests) in {:.1} s: ok {}, unparseable {}, judge_error {}{}\n",
            report.launched,
            report.requests,
            report.elapsed.as_secs_f64(),
            report.count(JudgmentStatus::Ok),
            report.count(JudgmentStatus::Unparseable),
            report.count(JudgmentStatus::JudgeError),
            if report.interrupted {
                " — interrupted; run again to finish"
            } else {
                ""
            }
        ));
    }
    out.push_str(&overflow_advice(&report.overflows, settings));
    if report.pairwise.is_some() || report.anchors {
        return out;
    }
    let this: Vec<&JudgmentSummary> = table
        .iter()
        .filter(|t| {
            t.rubric_id == rubric.id
                && t.rubric_version == rubric.version
                && t.judge_id == settings.id
                && t.simulated == settings.simulated
        })
        .collect();
    let unscored: u64 = this.iter().map(|t| t.unparseable + t.judge_error).sum();
    if unscored > 0 {
        let reasons: Vec<String> = this
            .iter()
            .flat_map(|t| t.reasons.iter())
            .map(|((status, why), n)| format!("{status}: {why} {n}"))
            .collect();
        out.push_str(&format!(
            "unscored: {unscored} judgments of this rubric and judge ({}); a plain re-run asks them again\n",
            reasons.join(", ")
        ));
    }
    out.push_str(&format_current(table));
    out
}

/// The table of current judgments per rubric and judge, with each criterion's mean.
fn format_current(table: &[JudgmentSummary]) -> String {
    let mut out = String::new();
    if !table.is_empty() {
        out.push_str("\ncurrent judgments (as reports read them):\n");
        out.push_str(&format!(
            "{:<28} {:<34} {:>6} {:>11} {:>11}\n",
            "rubric", "judge", "scored", "unparseable", "judge_error"
        ));
        for t in table {
            let judge = format!(
                "{} ({}{})",
                t.judge_id,
                t.judge_model,
                if t.simulated { ", simulated" } else { "" }
            );
            out.push_str(&format!(
                "{:<28} {:<34} {:>6} {:>11} {:>11}\n",
                format!("{}@{}", t.rubric_id, t.rubric_version),
                judge,
                t.scored,
                t.unparseable,
                t.judge_error
            ));
            for (criterion, mean, n) in &t.means {
                out.push_str(&format!("    {criterion:<40} mean {mean:>5.2}  n {n}\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(id: i64, run: i64, label: &str, scenario: &str, repeat: u32) -> CompletedConversation {
        CompletedConversation {
            id,
            uid: format!("u{id}"),
            run_id: run,
            provider: "p".into(),
            label: label.into(),
            scenario: Some(scenario.into()),
            repeat,
        }
    }

    #[test]
    fn unscored_reasons_are_short_and_groupable() {
        assert_eq!(
            unscored_reason(
                "judge_error",
                Some("ask 1: HTTP 500: internal error (http_5xx)")
            ),
            "http_5xx"
        );
        assert_eq!(
            unscored_reason(
                "judge_error",
                Some(
                    "ask 1: the answer holds no JSON object; ask 2: HTTP 429: slow (rate_limited)"
                )
            ),
            "rate_limited"
        );
        assert_eq!(
            unscored_reason(
                "unparseable",
                Some(
                    "ask 1: score for `a` is 9, outside 1..5; ask 3: criterion `b` is missing from `scores`"
                )
            ),
            "a criterion missing"
        );
        assert_eq!(unscored_reason("judge_error", None), "judge call failed");
    }

    #[test]
    fn first_sample_takes_the_lowest_completed_repeat_per_cell_and_scenario() {
        let convs = vec![
            conv(1, 1, "a", "s1", 2),
            conv(2, 1, "a", "s1", 1),
            conv(3, 1, "b", "s1", 3),
            conv(4, 1, "a", "s2", 1),
            conv(5, 2, "a", "s1", 1),
        ];
        let ids: Vec<i64> = sample(&convs, Sample::First).iter().map(|c| c.id).collect();
        assert_eq!(ids, vec![2, 3, 4, 5]);
        assert_eq!(sample(&convs, Sample::All).len(), 5);
    }
}
