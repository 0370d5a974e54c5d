//! Typed reads of the read model (`db/004_read_model.sql`): the views every reader uses —
//! the report, the conversations export, and anyone's own `sqlite3`. What counts for a slot,
//! and which check results and judgments are current, is decided by the views, never here.
//!
//! Readers stream: each function calls `f` once per row, in a stated order, so memory is
//! the caller's choice.

use rusqlite::{Connection, Row, named_params};

use super::StoreError;
use crate::chat::Message;
use crate::exchange::{
    CheckLine, ContextLine, ConversationLine, JudgmentLine, MessageLine, Role, TimingLine,
    UsageLine,
};
use crate::outcome::{ConversationOutcome, TurnOutcome};

/// Which conversations to read; every filter given must match.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FactFilter {
    /// A run id (a number) or a run name (every run of that name).
    pub run: Option<String>,
    pub provider: Option<String>,
    /// The model label (what cells group by).
    pub label: Option<String>,
    pub scenario: Option<String>,
    /// Exactly these runs (ids), on top of `run`: a window or list the report resolved
    /// (`--since`, `--last`, `--runs`, a baseline).
    pub run_ids: Option<Vec<i64>>,
}

/// A filter checked against the store: a run given by id or name exists.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    run_id: Option<i64>,
    run_name: Option<String>,
    provider: Option<String>,
    label: Option<String>,
    scenario: Option<String>,
    /// The run ids as a JSON array (read by `json_each`).
    run_ids: Option<String>,
}

/// The SQL condition of a [`Selection`] over a view with `run_id`, `provider`, `label` and
/// `scenario` columns; bound with [`Selection::params`].
pub(crate) const SELECTED: &str = "(:run_id IS NULL OR run_id = :run_id)
    AND (:run_name IS NULL OR run_id IN (SELECT id FROM runs WHERE name = :run_name))
    AND (:provider IS NULL OR provider = :provider)
    AND (:label IS NULL OR label = :label)
    AND (:scenario IS NULL OR scenario = :scenario)
    AND (:run_ids IS NULL OR run_id IN (SELECT value FROM json_each(:run_ids)))";

/// [`SELECTED`] over the view aliased `c` in a join.
const SELECTED_C: &str = "(:run_id IS NULL OR c.run_id = :run_id)
    AND (:run_name IS NULL OR c.run_id IN (SELECT id FROM runs WHERE name = :run_name))
    AND (:provider IS NULL OR c.provider = :provider)
    AND (:label IS NULL OR c.label = :label)
    AND (:scenario IS NULL OR c.scenario = :scenario)
    AND (:run_ids IS NULL OR c.run_id IN (SELECT value FROM json_each(:run_ids)))";

impl Selection {
    /// Checks the run filter against the store; an unknown run is an error that lists the
    /// runs there are.
    pub fn resolve(conn: &Connection, filter: &FactFilter) -> Result<Selection, StoreError> {
        let (run_id, run_name) = match &filter.run {
            None => (None, None),
            Some(run) => match run.parse::<i64>() {
                Ok(id) => (Some(id), None),
                Err(_) => (None, Some(run.clone())),
            },
        };
        if let Some(run) = &filter.run {
            let exists: bool = conn.query_row(
                "SELECT EXISTS(SELECT 1 FROM runs WHERE id = ?1 OR name = ?2)",
                rusqlite::params![run_id, run_name],
                |r| r.get(0),
            )?;
            if !exists {
                return Err(StoreError::NoSuchRun {
                    run: run.clone(),
                    known: known_runs(conn)?,
                });
            }
        }
        Ok(Selection {
            run_id,
            run_name,
            provider: filter.provider.clone(),
            label: filter.label.clone(),
            scenario: filter.scenario.clone(),
            run_ids: filter.run_ids.as_ref().map(|ids| {
                let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
                format!("[{}]", ids.join(","))
            }),
        })
    }

    pub(crate) fn params(&self) -> [(&'static str, &dyn rusqlite::ToSql); 6] {
        [
            (":run_id", &self.run_id),
            (":run_name", &self.run_name),
            (":provider", &self.provider),
            (":label", &self.label),
            (":scenario", &self.scenario),
            (":run_ids", &self.run_ids),
        ]
    }
}

/// A run as the choice of runs sees it (`turnbench report --since`, `--baseline-run` …).
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: i64,
    pub name: String,
    pub settings_hash: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    /// Where it was collected from (`runs.collector`); `None` for imports and older runs.
    pub collector: Option<String>,
}

/// Every run in the store that holds a conversation, oldest first.
pub fn run_rows(conn: &Connection) -> Result<Vec<RunRow>, StoreError> {
    super::all(
        conn,
        "SELECT id, name, settings_hash, started_at, collector FROM runs
         WHERE EXISTS (SELECT 1 FROM conversations WHERE run_id = runs.id)
         ORDER BY id",
        [],
        |r| Ok(row!(r => RunRow { id, name, settings_hash, started_at, collector })),
    )
}

/// The version (content hash) of the scenario each selected conversation that counts ran,
/// from `conversation_versions`; `None` for a conversation linked to no stored scenario.
pub fn scenario_versions(
    conn: &Connection,
    sel: &Selection,
    mut f: impl FnMut(i64, Option<String>),
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT conversation_id, scenario_version FROM conversation_versions
         WHERE counts AND {SELECTED} ORDER BY conversation_id"
    ))?;
    let mut rows = stmt.query(&sel.params()[..])?;
    while let Some(r) = rows.next()? {
        f(r.get(0)?, r.get(1)?);
    }
    Ok(())
}

fn known_runs(conn: &Connection) -> Result<String, StoreError> {
    let mut stmt = conn.prepare("SELECT id, name, source FROM runs ORDER BY id DESC LIMIT 10")?;
    let known: Vec<String> = stmt
        .query_map([], |r| {
            Ok(format!(
                "{} ({}, {})",
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?
            ))
        })?
        .collect::<Result<_, _>>()?;
    Ok(if known.is_empty() {
        "(the store has no runs yet)".into()
    } else {
        known.join(", ")
    })
}

// The report's reads, as SQL: their query plans are asserted in `store::plans` and shown in
// docs/store.md ("Query plans").

/// The runs holding a selected conversation: found through `conversations_run`.
pub(crate) fn runs_sql() -> String {
    format!(
        "SELECT id, name, source, seed, settings_hash, tool_version, tokenizer, started_at, ended_at,
                json_extract(settings, '$.bench.scenarios_dir'), collector
         FROM runs
         WHERE EXISTS (SELECT 1 FROM conversation_facts WHERE run_id = runs.id AND {SELECTED})
         ORDER BY id"
    )
}

/// Every selected conversation that counts: one pass over `conversations`.
pub(crate) fn conversations_sql() -> String {
    format!(
        "SELECT conversation_id, uid, run_id, target_id, provider, model, label, simulated,
                prices, scenario, repeat, outcome, turn_count, latency_ms, scenario_ref
         FROM conversation_facts WHERE counts AND {SELECTED} ORDER BY conversation_id"
    )
}

/// Every turn's measured facts, never its text, of a range of conversation ids: one pass
/// over `turns` in key order, without its conversation (read apart:
/// [`turn_conversations_sql`]). With `texts`, each turn's prompt and answer as well
/// (columns 17 and 18).
pub(crate) fn turns_sql(texts: bool) -> String {
    format!(
        "SELECT conversation_id, idx, outcome, finish_reason, attempts, ttft_ms, ttfa_ms,
                e2e_ms, wall_ms, prompt_tokens, completion_tokens, cached_tokens,
                visible_tokens, has_answer, has_reasoning, chunk_offsets, chunk_kinds{}
         FROM turn_rows WHERE conversation_id BETWEEN :lo AND :hi
         ORDER BY conversation_id, idx",
        if texts { ", prompt, answer" } else { "" }
    )
}

/// The selected conversations that count of a range of ids, with their target, whether
/// they completed and whether they have a scenario: whose turns [`turns`] hands on.
pub(crate) fn turn_conversations_sql() -> String {
    format!(
        "SELECT conversation_id, target_id, completed, scenario IS NOT NULL
         FROM conversation_facts
         WHERE counts AND {SELECTED} AND conversation_id BETWEEN :lo AND :hi
         ORDER BY conversation_id"
    )
}

/// Current check results of a range of conversations: a range of the primary key.
pub(crate) const CHECK_RESULTS_SQL: &str =
    "SELECT conversation_id, definition_id, passed FROM current_check_results
     WHERE conversation_id BETWEEN ?1 AND ?2 ORDER BY conversation_id";

/// Current turn verdicts of the conversations in an id range, each (conversation, check)
/// pair's turns in order.
pub(crate) const CHECK_TURN_RESULTS_SQL: &str =
    "SELECT conversation_id, definition_id, turn, passed FROM current_check_turn_results
     WHERE conversation_id BETWEEN ?1 AND ?2 ORDER BY conversation_id, definition_id, turn";

/// Current judgments matching a filter. Human labels (`human:<rater>`) pass a judge
/// filter: they are what a judge is compared with, not another judge.
pub(crate) const JUDGMENTS_SQL: &str =
    "SELECT conversation_id, rubric_id, rubric_version, judge_id, judge_model, simulated,
            replicate, status, scores, completed
     FROM current_judgments
     WHERE (:rubric IS NULL OR rubric_id = :rubric)
       AND (:judge IS NULL OR judge_id = :judge OR judge_id LIKE 'human:%')
     ORDER BY conversation_id, rubric_id, judge_id, simulated, replicate";

/// A run, as its card in a report shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunFact {
    pub id: i64,
    pub name: String,
    pub source: String,
    pub seed: Option<i64>,
    pub settings_hash: String,
    pub tool_version: String,
    pub tokenizer: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// Where the run's scenarios came from (a collect's `scenarios_dir`, as the report
    /// names it: a folder, or "built-in v…"); `None` for other runs.
    pub definitions: Option<String>,
    /// Where the run was collected from (`runs.collector`); absent for imports and runs
    /// stored before migration 014.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collector: Option<String>,
}

/// The runs that hold at least one selected conversation, oldest first.
pub fn runs(conn: &Connection, sel: &Selection) -> Result<Vec<RunFact>, StoreError> {
    super::all(conn, &runs_sql(), &sel.params()[..], |r| {
        Ok(row!(r => RunFact {
            id, name, source, seed, settings_hash, tool_version, tokenizer, started_at, ended_at,
            definitions, collector,
        }))
    })
}

/// One conversation that counts for its slot (`conversation_facts WHERE counts`). Strings
/// are borrowed from the row being read: copy what you keep.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationFact<'r> {
    pub id: i64,
    pub uid: &'r str,
    pub run_id: i64,
    pub target_id: i64,
    pub provider: &'r str,
    pub model: &'r str,
    pub label: &'r str,
    pub simulated: bool,
    /// The target's prices as stored (JSON, USD per million tokens), if any.
    pub prices: Option<&'r str>,
    pub scenario: Option<&'r str>,
    pub repeat: u32,
    pub outcome: ConversationOutcome,
    pub turn_count: u32,
    /// Sum of the turns' E2E; completed conversations with every E2E known only.
    pub latency_ms: Option<f64>,
    /// The stored scenario version it ran (`scenarios.id`), if linked to one.
    pub scenario_ref: Option<i64>,
}

/// Calls `f` for every selected conversation that counts for its slot, by id.
pub fn conversations(
    conn: &Connection,
    sel: &Selection,
    mut f: impl FnMut(&ConversationFact),
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare(&conversations_sql())?;
    let mut rows = stmt.query(&sel.params()[..])?;
    while let Some(r) = rows.next()? {
        let needed = |i| {
            text(r, i).and_then(|t| {
                t.ok_or_else(|| {
                    rusqlite::Error::InvalidColumnType(
                        i,
                        "NULL".into(),
                        rusqlite::types::Type::Null,
                    )
                })
            })
        };
        f(&ConversationFact {
            id: r.get(0)?,
            uid: needed(1)?,
            run_id: r.get(2)?,
            target_id: r.get(3)?,
            provider: needed(4)?,
            model: needed(5)?,
            label: needed(6)?,
            simulated: r.get(7)?,
            prices: text(r, 8)?,
            scenario: text(r, 9)?,
            repeat: r.get(10)?,
            outcome: r.get(11)?,
            turn_count: r.get(12)?,
            latency_ms: r.get(13)?,
            scenario_ref: r.get(14)?,
        });
    }
    Ok(())
}

/// One turn's measured facts (`turn_facts`), without its text. Strings are borrowed from
/// the row being read: copy what you keep.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnFact<'r> {
    pub conversation_id: i64,
    /// 0-based.
    pub idx: u32,
    pub outcome: Option<TurnOutcome>,
    pub finish_reason: Option<&'r str>,
    pub attempts: u32,
    pub ttft_ms: Option<f64>,
    pub ttfa_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    /// First attempt's send to the final answer (retries and backoff included).
    pub wall_ms: Option<f64>,
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub cached_tokens: Option<i64>,
    pub visible_tokens: Option<i64>,
    pub has_answer: bool,
    pub has_reasoning: bool,
    /// Offsets (µs from the send) of the SSE events that bore answer or reasoning text, in
    /// arrival order; `None` when not known (`super::records::text_offsets`).
    pub text_offsets_us: Option<&'r [u32]>,
    /// Its conversation's target (`targets.id`).
    pub target_id: i64,
    /// Whether its conversation completed (`conversation_facts.completed`).
    pub conversation_completed: bool,
    /// The turn's texts as identities, for the conversations asked for ([`turns`]).
    pub texts: Option<TurnTexts>,
}

/// A text as the report compares it without holding it: its 128-bit XXH3 digest, equal for
/// byte-equal texts (two different texts share one with probability about 2⁻¹²⁸). Never
/// stored and never a security boundary: only this process compares it, so a fast
/// non-cryptographic hash serves (BLAKE3 here took ~9 % of a 1 M-turn report's CPU).
pub type TextId = [u8; 16];

/// The identity of `bytes`.
pub fn text_id(bytes: &[u8]) -> TextId {
    xxhash_rust::xxh3::xxh3_128(bytes).to_le_bytes()
}

/// The position of `id` in `sorted` (ascending by `key`), moving `at` forward to it: rows
/// read in the same order find theirs in one pass. `None`: not there (or behind `at`).
pub(crate) fn seek<T>(
    sorted: &[T],
    key: impl Fn(&T) -> i64,
    at: &mut usize,
    id: i64,
) -> Option<usize> {
    while sorted.get(*at).is_some_and(|x| key(x) < id) {
        *at += 1;
    }
    sorted.get(*at).filter(|x| key(x) == id).map(|_| *at)
}

/// One turn's texts as identities: the messages it added to the history (`turns.prompt`)
/// and its visible answer (`None` when nothing arrived).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnTexts {
    pub prompt: TextId,
    pub answer: Option<TextId>,
}

/// Column `i` as a blob borrowed from the row (`None` for NULL); any other type is a
/// damaged store.
fn blob<'r>(r: &'r Row<'_>, i: usize) -> rusqlite::Result<Option<&'r [u8]>> {
    r.get_ref(i)?.as_blob_or_null().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Blob, e.into())
    })
}

/// Column `i`'s bytes, text or blob, borrowed from the row (`None` for NULL), never
/// checked for UTF-8: for what only hashes them.
fn bytes<'r>(r: &'r Row<'_>, i: usize) -> rusqlite::Result<Option<&'r [u8]>> {
    r.get_ref(i)?.as_bytes_or_null().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
    })
}

/// Column `i` as text borrowed from the row, not copied; text that is not UTF-8 is a
/// damaged store.
pub(super) fn text<'r>(r: &'r Row<'_>, i: usize) -> rusqlite::Result<Option<&'r str>> {
    r.get_ref(i)?.as_str_or_null().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
    })
}

/// Calls `f` for every turn of the selected conversations that count whose conversation
/// id is in `ids`, in (conversation, turn) order: a range of the primary key, so that two
/// readers can each take a half. Measured facts are read, and nothing is allocated per
/// turn; `with_texts`, the turns' texts too for conversations with a scenario (the ones
/// that can be repeats: `super::repeats`), handed on as identities ([`TurnTexts`]) in the
/// same pass: texts never leave the store.
pub fn turns(
    conn: &Connection,
    sel: &Selection,
    ids: std::ops::RangeInclusive<i64>,
    with_texts: bool,
    mut f: impl FnMut(&TurnFact),
) -> Result<(), StoreError> {
    let (lo, hi) = ids.into_inner();
    // Which conversations' turns count, from the read model's one definition of that; the
    // turns come in the same (id) order and are matched to them as they come.
    let mut params: Vec<(&str, &dyn rusqlite::ToSql)> = sel.params().to_vec();
    params.push((":lo", &lo));
    params.push((":hi", &hi));
    let convs: Vec<(i64, i64, bool, bool)> = {
        let mut stmt = conn.prepare(&turn_conversations_sql())?;
        let rows = stmt.query_map(&params[..], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
        rows.collect::<Result<_, _>>()?
    };
    let mut stmt = conn.prepare(&turns_sql(with_texts))?;
    let mut next_conv = 0;
    let mut rows = stmt.query(rusqlite::named_params! {":lo": lo, ":hi": hi})?;
    let mut offsets = Vec::new();
    while let Some(r) = rows.next()? {
        let conversation_id: i64 = r.get(0)?;
        let Some(&(_, target_id, completed, has_scenario)) =
            seek(&convs, |c| c.0, &mut next_conv, conversation_id).and_then(|i| convs.get(i))
        else {
            continue;
        };
        let known = super::records::text_offsets(blob(r, 15)?, blob(r, 16)?, &mut offsets);
        let outcome = match text(r, 2)? {
            None => None,
            Some(o) => Some(o.parse::<TurnOutcome>().map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(2, rusqlite::types::Type::Text, e.into())
            })?),
        };
        f(&TurnFact {
            conversation_id,
            idx: r.get(1)?,
            outcome,
            finish_reason: text(r, 3)?,
            attempts: r.get(4)?,
            ttft_ms: r.get(5)?,
            ttfa_ms: r.get(6)?,
            e2e_ms: r.get(7)?,
            wall_ms: r.get(8)?,
            prompt_tokens: r.get(9)?,
            completion_tokens: r.get(10)?,
            cached_tokens: r.get(11)?,
            visible_tokens: r.get(12)?,
            // Set by the writer for every turn; a row written by other means (SQL by
            // hand) is judged by its outcome: an `ok` turn has visible text.
            has_answer: r
                .get::<_, Option<bool>>(13)?
                .unwrap_or(outcome == Some(TurnOutcome::Ok)),
            has_reasoning: r.get::<_, Option<bool>>(14)?.unwrap_or(false),
            text_offsets_us: known.then_some(&offsets[..]),
            target_id,
            conversation_completed: completed,
            texts: if with_texts && has_scenario {
                Some(texts(r)?)
            } else {
                None
            },
        });
    }
    Ok(())
}

/// The row's texts as identities.
fn texts(r: &Row<'_>) -> rusqlite::Result<TurnTexts> {
    // Identities of the stored bytes: the texts are never read as text here, so they are
    // not checked for UTF-8 (the check cost more CPU than the hash).
    Ok(TurnTexts {
        prompt: text_id(bytes(r, 17)?.unwrap_or_default()),
        answer: bytes(r, 18)?.map(text_id),
    })
}

/// What the server said about sizes on each of these turns (conversation id, 0-based
/// index), in order: the `overflow_*` columns of `turn_facts`, each turn found by its
/// primary key. A turn not found, or one the server said nothing about, has no sizes.
pub fn overflow_sizes(
    conn: &Connection,
    turns: &[(i64, u32)],
) -> Result<Vec<crate::client::ContextSizes>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT overflow_prompt_tokens, overflow_window_tokens, overflow_completion_tokens
         FROM turn_facts WHERE conversation_id = ?1 AND idx = ?2",
    )?;
    let mut out = Vec::with_capacity(turns.len());
    for &(id, idx) in turns {
        let mut rows = stmt.query(rusqlite::params![id, idx])?;
        out.push(match rows.next()? {
            Some(r) => crate::client::ContextSizes {
                prompt_tokens: r.get(0)?,
                window_tokens: r.get(1)?,
                completion_tokens: r.get(2)?,
            },
            None => crate::client::ContextSizes::default(),
        });
    }
    Ok(out)
}

/// A current check definition (`current_check_definitions`).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckDefinitionFact {
    pub id: i64,
    pub scenario: String,
    pub check_id: String,
    pub kind: String,
    pub tag: String,
    /// The `[[check]]` table as JSON; its `turn` / `from_turn` give the scope.
    pub definition: String,
}

pub fn check_definitions(conn: &Connection) -> Result<Vec<CheckDefinitionFact>, StoreError> {
    super::all(
        conn,
        "SELECT definition_id, scenario, check_id, kind, tag, definition
         FROM current_check_definitions ORDER BY scenario, check_id",
        [],
        |r| Ok(row!(r => CheckDefinitionFact { id, scenario, check_id, kind, tag, definition })),
    )
}

/// The range of ids that holds every selected conversation (`None` when there is none), to
/// read by ranges of the key and split a long read into parts: the selected runs' range
/// when the selection names runs (`--since 72h` over a year of runs reads its runs' rows,
/// not every row of the store), else the store's.
pub fn conversation_ids(
    conn: &Connection,
    sel: &Selection,
) -> Result<Option<std::ops::RangeInclusive<i64>>, StoreError> {
    let names_runs = sel.run_id.is_some() || sel.run_name.is_some() || sel.run_ids.is_some();
    let (lo, hi): (Option<i64>, Option<i64>) = if names_runs {
        conn.query_row(
            RUNS_CONVERSATION_IDS_SQL,
            rusqlite::named_params! {
                ":run_id": sel.run_id,
                ":run_name": sel.run_name,
                ":run_ids": sel.run_ids,
            },
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
    } else {
        conn.query_row("SELECT MIN(id), MAX(id) FROM conversations", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
    };
    Ok(lo.zip(hi).map(|(lo, hi)| lo..=hi))
}

/// The id range of the conversations of the runs a selection names, found through
/// `conversations_run` run by run.
pub(crate) const RUNS_CONVERSATION_IDS_SQL: &str = "SELECT MIN(id), MAX(id) FROM conversations
     WHERE run_id IN (SELECT id FROM runs
                      WHERE (:run_id IS NULL OR id = :run_id)
                        AND (:run_name IS NULL OR name = :run_name)
                        AND (:run_ids IS NULL OR id IN (SELECT value FROM json_each(:run_ids))))";

/// Calls `f(conversation_id, definition_id, passed)` for every current check result of the
/// conversations with ids in `conversations`, by conversation. `passed` is `None` when the
/// check was not scored.
pub fn check_results(
    conn: &Connection,
    conversations: std::ops::RangeInclusive<i64>,
    mut f: impl FnMut(i64, i64, Option<bool>),
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare(CHECK_RESULTS_SQL)?;
    let mut rows = stmt.query([conversations.start(), conversations.end()])?;
    while let Some(r) = rows.next()? {
        f(r.get(0)?, r.get(1)?, r.get(2)?);
    }
    Ok(())
}

/// Calls `f(conversation_id, definition_id, turn, passed)` for every current turn verdict
/// (`current_check_turn_results`) of the conversations in `conversations`, by conversation,
/// check, turn.
pub fn check_turn_results(
    conn: &Connection,
    conversations: std::ops::RangeInclusive<i64>,
    mut f: impl FnMut(i64, i64, i64, bool),
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare(CHECK_TURN_RESULTS_SQL)?;
    let mut rows = stmt.query([conversations.start(), conversations.end()])?;
    while let Some(r) = rows.next()? {
        f(r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
    }
    Ok(())
}

/// A current judgment (`current_judgments`).
#[derive(Debug, Clone, PartialEq)]
pub struct JudgmentFact {
    pub conversation_id: i64,
    pub rubric_id: String,
    pub rubric_version: i64,
    pub judge_id: String,
    pub judge_model: String,
    pub simulated: bool,
    pub replicate: i64,
    /// `ok`, `unparseable` or `judge_error`.
    pub status: String,
    /// Criterion → score; empty unless `ok`.
    pub scores: Vec<(String, i64)>,
    pub completed: Option<bool>,
}

/// Which judgments to read: every filter given must match.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgmentFilter {
    pub rubric: Option<String>,
    pub judge: Option<String>,
}

/// Each stored rubric's score scale, `id@version` → (min, max), from the `rubric_scales`
/// view.
pub fn rubric_scales(
    conn: &Connection,
) -> Result<std::collections::HashMap<String, (i64, i64)>, StoreError> {
    super::all(
        conn,
        "SELECT rubric_id || '@' || rubric_version, scale_min, scale_max FROM rubric_scales",
        [],
        |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))),
    )
}

/// Calls `f` for every current judgment matching `filter`, by conversation, rubric, judge,
/// replicate.
pub fn judgments(
    conn: &Connection,
    filter: &JudgmentFilter,
    mut f: impl FnMut(JudgmentFact),
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare(JUDGMENTS_SQL)?;
    let mut rows = stmt.query(named_params! {":rubric": filter.rubric, ":judge": filter.judge})?;
    while let Some(r) = rows.next()? {
        f(judgment(r)?);
    }
    Ok(())
}

fn judgment(r: &Row) -> Result<JudgmentFact, StoreError> {
    let scores: Option<String> = r.get(8)?;
    let scores = match scores {
        None => Vec::new(),
        Some(text) => serde_json::from_str::<std::collections::BTreeMap<String, i64>>(&text)
            .map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(8, rusqlite::types::Type::Text, e.into())
            })?
            .into_iter()
            .collect(),
    };
    Ok(JudgmentFact {
        conversation_id: r.get(0)?,
        rubric_id: r.get(1)?,
        rubric_version: r.get(2)?,
        judge_id: r.get(3)?,
        judge_model: r.get(4)?,
        simulated: r.get(5)?,
        replicate: r.get(6)?,
        status: r.get(7)?,
        scores,
        completed: r.get(9)?,
    })
}

/// Rubric ids and judge ids that have current judgments (for "no judgments for X" notes).
pub fn judged_rubrics_and_judges(
    conn: &Connection,
) -> Result<(Vec<String>, Vec<String>), StoreError> {
    let list =
        |sql: &str| -> Result<Vec<String>, StoreError> { super::all(conn, sql, [], |r| r.get(0)) };
    Ok((
        list("SELECT DISTINCT rubric_id FROM judgments ORDER BY rubric_id")?,
        list("SELECT DISTINCT judge_id FROM judgments ORDER BY judge_id")?,
    ))
}

/// Calls `f` with every selected conversation (superseded ones too, marked) in the
/// exchange format, oldest first, one at a time: its messages (each turn's prompt, then its
/// answer with timing and usage), trailing messages, and with `with_scores` its current
/// check results and judgments. Conversations without any turn are left out. `f` may stop
/// the walk with an error of its own.
pub fn conversation_lines<E: From<StoreError>>(
    conn: &Connection,
    sel: &Selection,
    with_scores: bool,
    mut f: impl FnMut(ConversationLine) -> Result<(), E>,
) -> Result<(u64, u64), E> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT c.conversation_id, c.uid, c.provider, c.model, c.label, c.scenario, c.repeat,
                    c.outcome, c.trailing,
                    (SELECT uid FROM conversations s WHERE s.id = c.superseded_by),
                    u.prompt, u.answer, u.reasoning, u.finish_reason, u.outcome, u.error,
                    u.http_status, u.ttft_ms, u.ttfa_ms, u.e2e_ms, u.prompt_tokens,
                    u.completion_tokens, u.cached_tokens, u.reasoning_tokens,
                    u.overflow_prompt_tokens, u.overflow_window_tokens,
                    u.overflow_completion_tokens,
                    (SELECT t.tool_calls FROM turns t
                      WHERE t.conversation_id = u.conversation_id AND t.idx = u.idx)
             FROM conversation_facts c JOIN turn_facts u ON u.conversation_id = c.conversation_id
             WHERE {SELECTED_C}
             ORDER BY c.conversation_id, u.idx"
        ))
        .map_err(StoreError::from)?;
    let mut rows = stmt.query(&sel.params()[..]).map_err(StoreError::from)?;
    let (mut conversations, mut turns) = (0, 0);
    let mut current: Option<(i64, ConversationLine, Option<String>)> = None;
    while let Some(row) = rows.next().map_err(StoreError::from)? {
        let id: i64 = row.get(0).map_err(StoreError::from)?;
        if current.as_ref().is_none_or(|(c, ..)| *c != id) {
            if let Some((done, line, trailing)) = current.take() {
                f(finish_line(conn, done, line, trailing, with_scores)?)?;
                conversations += 1;
            }
            current = Some(start_line(id, row)?);
        }
        if let Some((_, line, _)) = current.as_mut() {
            push_turn(line, row)?;
        }
        turns += 1;
    }
    if let Some((done, line, trailing)) = current.take() {
        f(finish_line(conn, done, line, trailing, with_scores)?)?;
        conversations += 1;
    }
    Ok((conversations, turns))
}

fn start_line(id: i64, row: &Row) -> Result<(i64, ConversationLine, Option<String>), StoreError> {
    let model: String = row.get(3)?;
    let label: String = row.get(4)?;
    let outcome: ConversationOutcome = row.get(7)?;
    Ok((
        id,
        ConversationLine {
            id: Some(row.get(1)?),
            provider: Some(row.get(2)?),
            label: (label != model).then_some(label),
            model: Some(model),
            scenario: row.get(5)?,
            repeat: Some(row.get(6)?),
            outcome: Some(outcome.to_string()),
            superseded_by: row.get(9)?,
            ..Default::default()
        },
        row.get(8)?,
    ))
}

fn push_turn(line: &mut ConversationLine, row: &Row) -> Result<(), StoreError> {
    let prompt: String = row.get(10)?;
    append_messages(line, &prompt, "turns.prompt")?;
    let timing = TimingLine {
        ttft_ms: row.get(17)?,
        ttfa_ms: row.get(18)?,
        e2e_ms: row.get(19)?,
    };
    let usage = UsageLine {
        prompt_tokens: row.get(20)?,
        completion_tokens: row.get(21)?,
        cached_tokens: row.get(22)?,
        reasoning_tokens: row.get(23)?,
    };
    let context = ContextLine {
        prompt_tokens: row.get(24)?,
        window_tokens: row.get(25)?,
        completion_tokens: row.get(26)?,
    };
    let outcome: TurnOutcome = row.get(14)?;
    let tool_calls = match row.get::<_, Option<String>>(27)? {
        Some(json) => Some(
            serde_json::from_str(&json).map_err(|e| StoreError::Corrupt {
                uid: line.id.clone().unwrap_or_default(),
                column: "turns.tool_calls",
                problem: e.to_string(),
            })?,
        ),
        None => None,
    };
    line.messages.push(MessageLine {
        role: Role::Assistant,
        content: row.get(11)?,
        reasoning: row.get(12)?,
        finish_reason: row.get(13)?,
        outcome: Some(outcome.to_string()),
        error: row.get(15)?,
        http_status: row.get(16)?,
        timing: (!timing.is_empty()).then_some(timing),
        usage: (!usage.is_empty()).then_some(usage),
        context: (!context.is_empty()).then_some(context),
        tool_calls,
        tool_call_id: None,
        refusal: false,
        function_call: false,
        audio: false,
    });
    Ok(())
}

/// Appends stored `[{role, content}]` JSON as messages.
fn append_messages(
    line: &mut ConversationLine,
    json: &str,
    column: &'static str,
) -> Result<(), StoreError> {
    let corrupt = |problem: String| StoreError::Corrupt {
        uid: line.id.clone().unwrap_or_default(),
        column,
        problem,
    };
    let messages: Vec<Message> = serde_json::from_str(json).map_err(|e| corrupt(e.to_string()))?;
    for m in messages {
        let Some(role) = Role::parse(&m.role) else {
            return Err(corrupt(format!("unknown role {:?}", m.role)));
        };
        let mut message = MessageLine::text(role, m.content);
        message.tool_call_id = m.tool_call_id;
        line.messages.push(message);
    }
    Ok(())
}

fn finish_line(
    conn: &Connection,
    id: i64,
    mut line: ConversationLine,
    trailing: Option<String>,
    with_scores: bool,
) -> Result<ConversationLine, StoreError> {
    if let Some(trailing) = trailing {
        append_messages(&mut line, &trailing, "conversations.trailing")?;
    }
    if with_scores {
        line.checks = Some(checks_for(conn, id)?);
        line.judgments = Some(judgments_for(conn, id)?);
    }
    Ok(line)
}

/// The conversation's current check results (`current_check_results`).
fn checks_for(conn: &Connection, conversation_id: i64) -> Result<Vec<CheckLine>, StoreError> {
    super::all(
        conn,
        "SELECT check_id, tag, passed, detail FROM current_check_results
         WHERE conversation_id = ?1 ORDER BY check_id",
        [conversation_id],
        |r| Ok(row!(r => CheckLine { id, tag, passed, detail })),
    )
}

/// The conversation's current judgments (`current_judgments`): a `judge_error` that a
/// later run retried successfully is history, not exported. `rubric` is `id@version`.
fn judgments_for(conn: &Connection, conversation_id: i64) -> Result<Vec<JudgmentLine>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT rubric_id || '@' || rubric_version, judge_id, simulated, replicate, status,
                scores, completed, rationale, raw_output, error
         FROM current_judgments WHERE conversation_id = ?1
         ORDER BY rubric_id, rubric_version, judge_id, simulated, replicate",
    )?;
    let mut rows = stmt.query([conversation_id])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let scores: Option<String> = r.get(5)?;
        let scores = match scores {
            None => Default::default(),
            Some(text) => serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                uid: conversation_id.to_string(),
                column: "judgments.scores",
                problem: e.to_string(),
            })?,
        };
        out.push(JudgmentLine {
            rubric: r.get(0)?,
            judge: r.get(1)?,
            simulated: r.get(2)?,
            replicate: r.get(3)?,
            status: r.get(4)?,
            scores,
            completed: r.get(6)?,
            rationale: r.get(7)?,
            raw_output: r.get(8)?,
            error: r.get(9)?,
        });
    }
    Ok(out)
}
