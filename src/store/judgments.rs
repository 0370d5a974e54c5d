//! What the judge stage reads (targets, completed conversations, visible messages) and
//! writes (rubrics, judge settings, judgments; `db/002_judgments.sql`). Plain functions
//! over `&Connection`; while a run lasts, judgments go through the [`StoreWriter`] thread
//! that owns the connection.
//!
//! [`StoreWriter`]: super::StoreWriter

use std::collections::{BTreeMap, HashSet};

use rusqlite::{Connection, OptionalExtension, Transaction};

use super::StoreError;
use super::writer_task::Storable;
use crate::chat::Message;

/// A target's names, for blinding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetNames {
    pub provider: String,
    pub model: String,
    pub label: String,
    pub host: Option<String>,
}

pub fn target_names(conn: &Connection) -> Result<Vec<TargetNames>, StoreError> {
    super::all(
        conn,
        "SELECT provider, model, label, host FROM targets ORDER BY id",
        [],
        |r| Ok(row!(r => TargetNames { provider, model, label, host })),
    )
}

/// A completed conversation, as sampling needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletedConversation {
    pub id: i64,
    pub uid: String,
    pub run_id: i64,
    pub provider: String,
    pub label: String,
    pub scenario: Option<String>,
    pub repeat: u32,
}

/// Every completed scripted conversation, in storage order. Replayed agent sessions
/// (`replay_passes`) are left out: their recorded history is not the target's own
/// conversation, so a conversation rubric has nothing of the target's to grade there.
pub fn completed_conversations(
    conn: &Connection,
) -> Result<Vec<CompletedConversation>, StoreError> {
    super::all(
        conn,
        "SELECT c.id, c.uid, c.run_id, t.provider, t.label, c.scenario, c.repeat
         FROM conversations c JOIN targets t ON t.id = c.target_id
         WHERE c.outcome = 'completed'
           AND NOT EXISTS (SELECT 1 FROM replay_passes p WHERE p.conversation_id = c.id)
         ORDER BY c.id",
        [],
        |r| {
            Ok(row!(r => CompletedConversation {
                id, uid, run_id, provider, label, scenario, repeat
            }))
        },
    )
}

/// A message as stored, before blinding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VisibleMessage {
    pub role: String,
    /// `None` when a turn failed before any text arrived.
    pub content: Option<String>,
    pub reasoning: Option<String>,
}

/// The conversation's messages in order: each turn's prompt messages, then its answer;
/// then any trailing messages. Nothing else (no timing, ids, outcomes).
pub fn visible_messages(
    conn: &Connection,
    conversation_id: i64,
) -> Result<Vec<VisibleMessage>, StoreError> {
    let mut out = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT prompt, answer, reasoning FROM turns WHERE conversation_id = ?1 ORDER BY idx",
    )?;
    let mut rows = stmt.query([conversation_id])?;
    let plain = |m: Message| VisibleMessage {
        role: m.role,
        content: Some(m.content),
        reasoning: None,
    };
    while let Some(r) = rows.next()? {
        let prompt: String = r.get(0)?;
        let prompt: Vec<Message> = serde_json::from_str(&prompt).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
        })?;
        out.extend(prompt.into_iter().map(plain));
        out.push(VisibleMessage {
            role: "assistant".into(),
            content: r.get(1)?,
            reasoning: r.get(2)?,
        });
    }
    let trailing: Option<String> = conn
        .query_row(
            "SELECT trailing FROM conversations WHERE id = ?1",
            [conversation_id],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    if let Some(t) = trailing
        && let Ok(msgs) = serde_json::from_str::<Vec<Message>>(&t)
    {
        out.extend(msgs.into_iter().map(plain));
    }
    Ok(out)
}

/// The content hash stored for a rubric id and version, if any (read only).
pub fn stored_rubric_hash(
    conn: &Connection,
    rubric_id: &str,
    version: u32,
) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT hash FROM rubrics WHERE rubric_id = ?1 AND version = ?2",
            rusqlite::params![rubric_id, version],
            |r| r.get(0),
        )
        .optional()?)
}

/// How storing a rubric went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RubricRow {
    Stored(i64),
    /// The same id and version is stored with other content.
    Conflict {
        stored_hash: String,
    },
}

pub fn upsert_rubric(
    conn: &Connection,
    rubric_id: &str,
    version: u32,
    hash: &str,
    title: &str,
    content: &str,
) -> Result<RubricRow, StoreError> {
    if let Some((id, stored_hash)) = conn
        .query_row(
            "SELECT id, hash FROM rubrics WHERE rubric_id = ?1 AND version = ?2",
            rusqlite::params![rubric_id, version],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
        )
        .optional()?
    {
        return Ok(if stored_hash == hash {
            RubricRow::Stored(id)
        } else {
            RubricRow::Conflict { stored_hash }
        });
    }
    conn.execute(
        "INSERT INTO rubrics (rubric_id, version, hash, title, content)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        rusqlite::params![rubric_id, version, hash, title, content],
    )?;
    Ok(RubricRow::Stored(conn.last_insert_rowid()))
}

/// Judge settings as stored: never a key.
pub struct NewJudge<'a> {
    pub judge_id: &'a str,
    pub model: &'a str,
    pub host: &'a str,
    pub simulated: bool,
    pub settings_json: &'a str,
    pub template: &'a str,
}

pub fn upsert_judge(conn: &Connection, j: &NewJudge) -> Result<i64, StoreError> {
    let hash = super::content_key(&[
        j.judge_id,
        j.model,
        j.host,
        if j.simulated { "1" } else { "0" },
        j.settings_json,
        j.template,
    ]);
    let select = "SELECT id FROM judges WHERE hash = ?1";
    super::id_or_insert(conn, select, [&hash], || {
        conn.execute(
            "INSERT INTO judges (judge_id, model, host, simulated, settings, template, hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            rusqlite::params![
                j.judge_id,
                j.model,
                j.host,
                j.simulated,
                j.settings_json,
                j.template,
                hash
            ],
        )
    })
}

/// (conversation id, key) of every judgment that is final (`ok` or `unparseable`).
pub fn final_keys(conn: &Connection) -> Result<HashSet<(i64, String)>, StoreError> {
    let mut stmt =
        conn.prepare("SELECT conversation_id, key FROM judgments WHERE status = 'ok'")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgmentStatus {
    Ok,
    /// The judge answered, but never in the rubric's shape (after every re-ask).
    Unparseable,
    /// The judge could not be reached or kept failing (after every retry).
    JudgeError,
}

impl JudgmentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JudgmentStatus::Ok => "ok",
            JudgmentStatus::Unparseable => "unparseable",
            JudgmentStatus::JudgeError => "judge_error",
        }
    }
}

impl rusqlite::ToSql for JudgmentStatus {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

/// What asking a judge came to, whatever it was asked (one conversation, a pair, an
/// anchor): who judged on which rubric, how the ask went and what came back. Every judgment
/// table stores these columns alike ([`CALL_COLUMNS`]).
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeCall {
    pub rubric_ref: i64,
    pub judge_ref: i64,
    pub rubric_id: String,
    pub rubric_version: u32,
    pub judge_id: String,
    pub status: JudgmentStatus,
    pub rationale: Option<String>,
    pub raw_output: Option<String>,
    pub error: Option<String>,
    pub asks: u32,
    pub attempts: u32,
    pub http_status: Option<u16>,
    pub latency_ms: Option<f64>,
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub simulated: bool,
    pub invocation: String,
    pub seq: u32,
}

/// The columns of a [`JudgeCall`] in `judgments`, `pairwise_judgments` and
/// `anchor_judgments`, and their placeholders, in the same order.
const CALL_COLUMNS: &str = "rubric_ref, judge_ref, rubric_id, rubric_version, judge_id, status,
    rationale, raw_output, error, asks, attempts, http_status, latency_ms, prompt_tokens,
    completion_tokens, simulated, invocation, seq";
const CALL_VALUES: &str = ":rubric_ref, :judge_ref, :rubric_id, :rubric_version, :judge_id,
    :status, :rationale, :raw, :error, :asks, :attempts, :http_status, :latency,
    :prompt_tokens, :completion_tokens, :simulated, :invocation, :seq";

/// `INSERT INTO table (key, own columns, the call's columns, created_at) SELECT ... WHERE
/// keep`: one judgment row, written only when `keep` holds.
pub(super) fn insert_sql(table: &str, own_columns: &str, own_values: &str, keep: &str) -> String {
    format!(
        "INSERT INTO {table} (key, {own_columns}, {CALL_COLUMNS}, created_at)
         SELECT :key, {own_values}, {CALL_VALUES}, :now
         WHERE {keep}"
    )
}

impl JudgeCall {
    /// The call's parameters for [`insert_sql`]'s placeholders.
    pub(super) fn params(&self) -> [(&'static str, &dyn rusqlite::ToSql); 18] {
        [
            (":rubric_ref", &self.rubric_ref),
            (":judge_ref", &self.judge_ref),
            (":rubric_id", &self.rubric_id),
            (":rubric_version", &self.rubric_version),
            (":judge_id", &self.judge_id),
            (":status", &self.status),
            (":rationale", &self.rationale),
            (":raw", &self.raw_output),
            (":error", &self.error),
            (":asks", &self.asks),
            (":attempts", &self.attempts),
            (":http_status", &self.http_status),
            (":latency", &self.latency_ms),
            (":prompt_tokens", &self.prompt_tokens),
            (":completion_tokens", &self.completion_tokens),
            (":simulated", &self.simulated),
            (":invocation", &self.invocation),
            (":seq", &self.seq),
        ]
    }
}

/// Scores as stored: a JSON object of criterion → integer.
pub(super) fn scores_json(scores: &Option<BTreeMap<String, i64>>) -> Option<String> {
    // A map of strings to integers: serialising it cannot fail.
    scores
        .as_ref()
        .map(|s| serde_json::to_string(s).expect("scores serialise"))
}

/// One judgment, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgmentRecord {
    pub key: String,
    pub conversation_id: i64,
    pub replicate: u32,
    pub label: String,
    /// Only when `ok`.
    pub scores: Option<BTreeMap<String, i64>>,
    pub completed: Option<bool>,
    pub call: JudgeCall,
    /// Asked again under `judge --rejudge`: stored even beside a scored row for its key
    /// (the newest scored row is the one `current_judgments` reads).
    pub rejudge: bool,
}

/// Writes a judgment; a scored (`ok`) one already stored for the same key wins (returns
/// false), unless this one was asked again on purpose (`rejudge`). Unparseable and failed
/// judgments are not results: they are kept as history and the key is asked again by the
/// next run.
pub fn insert_judgment(conn: &Connection, j: &JudgmentRecord) -> Result<bool, StoreError> {
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        insert_sql(
            "judgments",
            "conversation_id, replicate, label, scores, completed",
            ":conv, :replicate, :label, :scores, :completed",
            ":rejudge OR NOT EXISTS (SELECT 1 FROM judgments
                           WHERE conversation_id = :conv AND key = :key AND status = 'ok')",
        )
    });
    let mut stmt = conn.prepare_cached(&SQL)?;
    let scores = scores_json(&j.scores);
    let now = super::now_rfc3339();
    let own: [(&str, &dyn rusqlite::ToSql); 8] = [
        (":key", &j.key),
        (":conv", &j.conversation_id),
        (":replicate", &j.replicate),
        (":label", &j.label),
        (":scores", &scores),
        (":completed", &j.completed),
        (":rejudge", &j.rejudge),
        (":now", &now),
    ];
    let params: Vec<_> = own.into_iter().chain(j.call.params()).collect();
    Ok(stmt.execute(&*params)? == 1)
}

/// The judge's records: a judgment that loses to a final one already stored adds no row.
impl Storable for JudgmentRecord {
    const THREAD: &'static str = "turnbench-judgments";

    fn insert(&self, tx: &Transaction) -> Result<bool, StoreError> {
        insert_judgment(tx, self)
    }
}

/// A stored judgment, for reports and exports.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgmentRow {
    pub conversation_id: i64,
    pub rubric_id: String,
    pub rubric_version: u32,
    pub judge_id: String,
    pub replicate: u32,
    pub status: String,
    pub scores: Option<BTreeMap<String, i64>>,
    pub completed: Option<bool>,
    pub rationale: Option<String>,
    pub simulated: bool,
}

/// Every current judgment (`current_judgments`), in storage order.
pub fn read_judgments(conn: &Connection) -> Result<Vec<JudgmentRow>, StoreError> {
    super::all(
        conn,
        "SELECT conversation_id, rubric_id, rubric_version, judge_id, replicate, status, scores,
                completed, rationale, simulated
         FROM current_judgments ORDER BY judgment_id",
        [],
        |r| {
            let scores: Option<String> = r.get(6)?;
            Ok(JudgmentRow {
                conversation_id: r.get(0)?,
                rubric_id: r.get(1)?,
                rubric_version: r.get(2)?,
                judge_id: r.get(3)?,
                replicate: r.get(4)?,
                status: r.get(5)?,
                scores: scores.and_then(|s| serde_json::from_str(&s).ok()),
                completed: r.get(7)?,
                rationale: r.get(8)?,
                simulated: r.get(9)?,
            })
        },
    )
}

/// Current judgments of one rubric version and one judge (real and simulated apart), as
/// the `current_judgments` view counts them: scored, unparseable and failed, why the
/// unscored ones are, and the mean of each criterion over the scored ones.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgmentSummary {
    pub rubric_id: String,
    pub rubric_version: u32,
    pub judge_id: String,
    pub judge_model: String,
    pub simulated: bool,
    pub scored: u64,
    pub unparseable: u64,
    pub judge_error: u64,
    /// (status, reason) → judgments, for the unscored ones.
    pub reasons: BTreeMap<(String, String), u64>,
    /// (criterion, mean, n) over scored judgments, criteria in name order.
    pub means: Vec<(String, f64, u64)>,
}

/// One [`JudgmentSummary`] per rubric version × judge in `current_judgments`. `reason`
/// names why an unscored judgment is (from its status and stored error text).
pub fn judgment_summary(
    conn: &Connection,
    reason: impl Fn(&str, Option<&str>) -> String,
) -> Result<Vec<JudgmentSummary>, StoreError> {
    let mut out: Vec<JudgmentSummary> = Vec::new();
    let mut stmt = conn.prepare(
        "SELECT rubric_id, rubric_version, judge_id, judge_model, simulated, status, error, scores
         FROM current_judgments
         ORDER BY rubric_id, rubric_version, judge_id, simulated",
    )?;
    let mut rows = stmt.query([])?;
    let mut sums: Vec<BTreeMap<String, (f64, u64)>> = Vec::new();
    while let Some(r) = rows.next()? {
        let (rubric_id, rubric_version, judge_id, judge_model, simulated): (
            String,
            u32,
            String,
            String,
            bool,
        ) = (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?);
        let same = out.last().is_some_and(|t| {
            (&t.rubric_id, t.rubric_version, &t.judge_id, t.simulated)
                == (&rubric_id, rubric_version, &judge_id, simulated)
        });
        if !same {
            out.push(JudgmentSummary {
                rubric_id,
                rubric_version,
                judge_id,
                judge_model,
                simulated,
                scored: 0,
                unparseable: 0,
                judge_error: 0,
                reasons: BTreeMap::new(),
                means: Vec::new(),
            });
            sums.push(BTreeMap::new());
        }
        let (Some(t), Some(sum)) = (out.last_mut(), sums.last_mut()) else {
            continue; // pushed above when empty
        };
        let status: String = r.get(5)?;
        let error: Option<String> = r.get(6)?;
        match status.as_str() {
            "ok" => {
                t.scored += 1;
                let scores: Option<String> = r.get(7)?;
                let parsed: BTreeMap<String, i64> = scores
                    .and_then(|s| serde_json::from_str(&s).ok())
                    .unwrap_or_default();
                for (criterion, v) in parsed {
                    let e = sum.entry(criterion).or_insert((0.0, 0));
                    e.0 += v as f64;
                    e.1 += 1;
                }
                continue;
            }
            "unparseable" => t.unparseable += 1,
            _ => t.judge_error += 1,
        }
        let why = reason(&status, error.as_deref());
        *t.reasons.entry((status, why)).or_insert(0) += 1;
    }
    for (t, sum) in out.iter_mut().zip(sums) {
        t.means = sum
            .into_iter()
            .map(|(c, (total, n))| (c, total / n as f64, n))
            .collect();
    }
    Ok(out)
}

/// A judge's model family as its settings wrote it (`family = "…"`), for the judge card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeFamily {
    pub judge_id: String,
    pub model: String,
    pub simulated: bool,
    /// `None`: not written (the card derives it from the model id).
    pub family: Option<String>,
}

/// The family written in the latest stored settings of each judge × model × simulated.
pub fn judge_families(conn: &Connection) -> Result<Vec<JudgeFamily>, StoreError> {
    super::all(
        conn,
        "SELECT judge_id, model, simulated, json_extract(settings, '$.family')
         FROM judges
         WHERE id IN (SELECT MAX(id) FROM judges GROUP BY judge_id, model, simulated)
         ORDER BY judge_id, model, simulated",
        [],
        |r| {
            Ok(JudgeFamily {
                judge_id: r.get(0)?,
                model: r.get(1)?,
                simulated: r.get(2)?,
                family: r.get::<_, Option<String>>(3).ok().flatten(),
            })
        },
    )
}

/// What replicates of each current judge varied, from `current_judges`: judge id,
/// simulated, and a phrase such as "criteria order, label, nonce at temperature 0" (or
/// "nothing at temperature 0" for settings stored before replicates varied).
pub fn replicate_variation(conn: &Connection) -> Result<Vec<(String, bool, String)>, StoreError> {
    let mut stmt = conn.prepare("SELECT judge_id, simulated, settings FROM current_judges")?;
    let rows = stmt.query_map([], |r| {
        let settings: String = r.get(2)?;
        Ok((r.get(0)?, r.get(1)?, settings))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (judge, simulated, settings): (String, bool, String) = row?;
        let json: serde_json::Value = serde_json::from_str(&settings).unwrap_or_default();
        let varied: Vec<&str> = json["vary"]
            .as_array()
            .map(|v| {
                v.iter()
                    .filter_map(|x| x.as_str())
                    .map(|x| match x {
                        "order" => "criteria order",
                        other => other,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let temperature = json["request"]["temperature"].as_f64().unwrap_or(0.0);
        let what = if varied.is_empty() {
            "nothing".to_string()
        } else {
            varied.join(", ")
        };
        out.push((
            judge,
            simulated,
            format!("{what} at temperature {temperature}"),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(conv: i64, key: &str, status: JudgmentStatus) -> JudgmentRecord {
        JudgmentRecord {
            key: key.into(),
            conversation_id: conv,
            replicate: 1,
            label: "transcript-x".into(),
            scores: (status == JudgmentStatus::Ok).then(|| BTreeMap::from([("a".into(), 3)])),
            completed: (status == JudgmentStatus::Ok).then_some(true),
            call: JudgeCall {
                rubric_ref: 1,
                judge_ref: 1,
                rubric_id: "r".into(),
                rubric_version: 1,
                judge_id: "j".into(),
                status,
                rationale: None,
                raw_output: Some("{}".into()),
                error: None,
                asks: 1,
                attempts: 1,
                http_status: Some(200),
                latency_ms: Some(12.5),
                prompt_tokens: None,
                completion_tokens: None,
                simulated: true,
                invocation: "now".into(),
                seq: 1,
            },
            rejudge: false,
        }
    }

    fn store_with_conversation() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open(&dir.path().join("t.db")).unwrap();
        conn.execute_batch(
            "INSERT INTO runs (id, name, source, settings, settings_hash, tool_version, started_at)
               VALUES (1, 'r', 'collect', '{}', 'h', 'v', 'now');
             INSERT INTO targets (id, provider, model, label, host, key)
               VALUES (1, 'acme', 'glm', 'glm', '127.0.0.1:1', 'k');
             INSERT INTO conversations (id, uid, run_id, target_id, scenario, repeat, outcome, turn_count, trailing)
               VALUES (1, 'u1', 1, 1, 's', 1, 'completed', 2, '[{\"role\":\"user\",\"content\":\"bye\"}]');
             INSERT INTO turns (conversation_id, idx, prompt, answer, reasoning, outcome, request_id, e2e_ms)
               VALUES (1, 0, '[{\"role\":\"system\",\"content\":\"sys\"},{\"role\":\"user\",\"content\":\"hi\"}]', 'hello', 'hmm', 'ok', 'req-1', 12.0),
                      (1, 1, '[{\"role\":\"user\",\"content\":\"more\"}]', NULL, NULL, 'timeout', NULL, NULL);
             INSERT INTO rubrics (id, rubric_id, version, hash, title, content) VALUES (1, 'r', 1, 'h', 'r', '{}');
             INSERT INTO judges (id, judge_id, model, host, simulated, settings, template, hash)
               VALUES (1, 'j', 'm', 'h', 1, '{}', 't', 'jh');",
        )
        .unwrap();
        (dir, conn)
    }

    #[test]
    fn visible_messages_are_prompts_answers_and_trailing_only() {
        let (_dir, conn) = store_with_conversation();
        let msgs = visible_messages(&conn, 1).unwrap();
        let roles: Vec<_> = msgs.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(
            roles,
            ["system", "user", "assistant", "user", "assistant", "user"]
        );
        assert_eq!(msgs[2].content.as_deref(), Some("hello"));
        assert_eq!(msgs[2].reasoning.as_deref(), Some("hmm"));
        assert_eq!(msgs[4].content, None);
        assert_eq!(msgs[5].content.as_deref(), Some("bye"));
    }

    #[test]
    fn failures_are_retried_but_scored_judgments_are_kept_once() {
        let (_dir, conn) = store_with_conversation();
        assert!(insert_judgment(&conn, &record(1, "k", JudgmentStatus::JudgeError)).unwrap());
        assert!(insert_judgment(&conn, &record(1, "k", JudgmentStatus::Unparseable)).unwrap());
        assert!(final_keys(&conn).unwrap().is_empty());
        assert!(insert_judgment(&conn, &record(1, "k", JudgmentStatus::Ok)).unwrap());
        assert!(!insert_judgment(&conn, &record(1, "k", JudgmentStatus::Unparseable)).unwrap());
        assert!(!insert_judgment(&conn, &record(1, "k", JudgmentStatus::Ok)).unwrap());
        assert_eq!(
            final_keys(&conn).unwrap(),
            HashSet::from([(1, "k".to_string())])
        );
        // Every row stays; the scored one is what reports read.
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM judgments", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 3);
        let rows = read_judgments(&conn).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].status, "ok");
        assert_eq!(rows[0].scores.as_ref().unwrap()["a"], 3);
        // Asked again on purpose: a fresh row beside the scored one.
        let mut again = record(1, "k", JudgmentStatus::Ok);
        again.rejudge = true;
        again.scores = Some(BTreeMap::from([("a".into(), 5)]));
        assert!(insert_judgment(&conn, &again).unwrap());
        let rows = read_judgments(&conn).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            rows[0].scores.as_ref().unwrap()["a"],
            5,
            "the newest scored row counts"
        );
    }

    #[test]
    fn an_edited_rubric_under_the_same_version_is_a_conflict() {
        let (_dir, conn) = store_with_conversation();
        assert_eq!(
            upsert_rubric(&conn, "q", 1, "h1", "q", "{}").unwrap(),
            upsert_rubric(&conn, "q", 1, "h1", "q", "{}").unwrap()
        );
        assert_eq!(
            upsert_rubric(&conn, "q", 1, "h2", "q", "{}").unwrap(),
            RubricRow::Conflict {
                stored_hash: "h1".into()
            }
        );
        assert!(matches!(
            upsert_rubric(&conn, "q", 2, "h2", "q", "{}").unwrap(),
            RubricRow::Stored(_)
        ));
    }
}
