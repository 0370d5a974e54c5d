//! `turnbench export conversations`: stored conversations in the exchange format, one line
//! each, streamed from one query in (conversation, turn) order, so memory holds one
//! conversation at a time. What import reads, export writes: a round trip keeps them.
//!
//! Each turn becomes its prompt messages followed by its assistant message; messages after
//! the last answer (`trailing`) close the line. Not in the format, so not exported:
//! attempts, pauses, start offsets, request ids, chunk offsets, visible-token counts.

mod scores;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, Row, named_params};

use crate::exchange::{ConversationLine, MessageLine, Role, TimingLine, UsageLine};
use crate::store::StoreError;
use crate::store::records::Message;

/// Which conversations to export; every filter given must match.
#[derive(Debug, Clone, Default)]
pub struct ExportFilter {
    /// A run id (a number) or a run name (every run of that name).
    pub run: Option<String>,
    pub provider: Option<String>,
    /// The model label (what cells group by).
    pub model: Option<String>,
    pub scenario: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    pub filter: ExportFilter,
    /// Add `checks` and `judgments` to every line.
    pub with_scores: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportSummary {
    pub conversations: u64,
    pub turns: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("--run {run}: no run with this id or name in the store\n  fix: use one of: {known}")]
    NoSuchRun { run: String, known: String },
    #[error("{path}: cannot write: {source}", path = .path.display())]
    Create { path: PathBuf, source: io::Error },
    #[error("writing the export: {0}")]
    Write(#[source] io::Error),
    #[error(
        "conversation {uid}: stored {column} is not valid JSON ({source}); the store is damaged"
    )]
    Corrupt {
        uid: String,
        column: &'static str,
        source: serde_json::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ExportError {
    /// The reader went away (`| head`): not an error for a command-line tool.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, ExportError::Write(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

impl From<rusqlite::Error> for ExportError {
    fn from(e: rusqlite::Error) -> Self {
        ExportError::Store(StoreError::Sql(e))
    }
}

/// Writes every matching conversation to `out`, one JSON line each, oldest first.
/// Conversations without any turn (interrupted before their first answer) have nothing
/// to show and are left out.
pub fn export_conversations(
    conn: &Connection,
    opts: &ExportOptions,
    out: &mut dyn Write,
) -> Result<ExportSummary, ExportError> {
    let f = &opts.filter;
    let (run_id, run_name) = match &f.run {
        None => (None, None),
        Some(run) => resolve_run(conn, run)?,
    };
    let mut stmt = conn.prepare(
        "SELECT c.id, c.uid, t.provider, t.model, t.label, c.scenario, c.repeat, c.outcome,
                c.trailing,
                u.prompt, u.answer, u.reasoning, u.finish_reason, u.outcome, u.error,
                u.http_status, u.ttft_ms, u.ttfa_ms, u.e2e_ms, u.prompt_tokens,
                u.completion_tokens, u.cached_tokens, u.reasoning_tokens
         FROM conversations c
         JOIN targets t ON t.id = c.target_id
         JOIN turns u ON u.conversation_id = c.id
         WHERE (:run_id IS NULL OR c.run_id = :run_id)
           AND (:run_name IS NULL OR c.run_id IN (SELECT id FROM runs WHERE name = :run_name))
           AND (:provider IS NULL OR t.provider = :provider)
           AND (:label IS NULL OR t.label = :label)
           AND (:scenario IS NULL OR c.scenario = :scenario)
         ORDER BY c.id, u.idx",
    )?;
    let mut rows = stmt.query(named_params! {
        ":run_id": run_id,
        ":run_name": run_name,
        ":provider": f.provider,
        ":label": f.model,
        ":scenario": f.scenario,
    })?;
    let mut summary = ExportSummary::default();
    let mut current: Option<Pending> = None;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        if current.as_ref().is_none_or(|p| p.id != id) {
            if let Some(done) = current.take() {
                write_line(conn, done, opts.with_scores, out, &mut summary)?;
            }
            current = Some(start_line(id, row)?);
        }
        let pending = current.as_mut().expect("set above");
        push_turn(pending, row)?;
        summary.turns += 1;
    }
    if let Some(done) = current.take() {
        write_line(conn, done, opts.with_scores, out, &mut summary)?;
    }
    out.flush().map_err(ExportError::Write)?;
    Ok(summary)
}

/// Exports to a file, written beside it first and renamed at the end, so a failed export
/// never leaves half a file under the name asked for.
pub fn export_to_file(
    conn: &Connection,
    opts: &ExportOptions,
    path: &Path,
) -> Result<ExportSummary, ExportError> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let create = |source| ExportError::Create {
        path: path.to_path_buf(),
        source,
    };
    let file = File::create(&partial).map_err(create)?;
    let mut out = BufWriter::with_capacity(1 << 16, file);
    let result = export_conversations(conn, opts, &mut out).and_then(|summary| {
        out.into_inner()
            .map_err(|e| ExportError::Write(e.into_error()))?
            .sync_all()
            .map_err(ExportError::Write)?;
        std::fs::rename(&partial, path).map_err(create)?;
        Ok(summary)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result
}

/// A run id when `run` is a number, else a run name; an unknown one is an error.
fn resolve_run(conn: &Connection, run: &str) -> Result<(Option<i64>, Option<String>), ExportError> {
    let exists: bool = match run.parse::<i64>() {
        Ok(id) => conn.query_row(
            "SELECT EXISTS(SELECT 1 FROM runs WHERE id = ?1)",
            [id],
            |r| r.get(0),
        )?,
        Err(_) => conn.query_row(
            "SELECT EXISTS(SELECT 1 FROM runs WHERE name = ?1)",
            [run],
            |r| r.get(0),
        )?,
    };
    if !exists {
        let mut stmt =
            conn.prepare("SELECT id, name, source FROM runs ORDER BY id DESC LIMIT 10")?;
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
        return Err(ExportError::NoSuchRun {
            run: run.to_string(),
            known: if known.is_empty() {
                "(the store has no runs yet)".into()
            } else {
                known.join(", ")
            },
        });
    }
    Ok(match run.parse::<i64>() {
        Ok(id) => (Some(id), None),
        Err(_) => (None, Some(run.to_string())),
    })
}

/// A conversation being assembled from its rows.
struct Pending {
    id: i64,
    line: ConversationLine,
    trailing: Option<String>,
}

fn start_line(id: i64, row: &Row) -> Result<Pending, ExportError> {
    let model: String = row.get(3)?;
    let label: String = row.get(4)?;
    Ok(Pending {
        id,
        line: ConversationLine {
            id: Some(row.get(1)?),
            provider: Some(row.get(2)?),
            label: (label != model).then_some(label),
            model: Some(model),
            scenario: row.get(5)?,
            repeat: Some(row.get(6)?),
            outcome: Some(row.get(7)?),
            ..Default::default()
        },
        trailing: row.get(8)?,
    })
}

fn push_turn(p: &mut Pending, row: &Row) -> Result<(), ExportError> {
    let prompt: String = row.get(9)?;
    append_messages(&mut p.line, &prompt, "turns.prompt")?;
    let timing = TimingLine {
        ttft_ms: row.get(16)?,
        ttfa_ms: row.get(17)?,
        e2e_ms: row.get(18)?,
    };
    let usage = UsageLine {
        prompt_tokens: row.get(19)?,
        completion_tokens: row.get(20)?,
        cached_tokens: row.get(21)?,
        reasoning_tokens: row.get(22)?,
    };
    p.line.messages.push(MessageLine {
        role: Role::Assistant,
        content: row.get(10)?,
        reasoning: row.get(11)?,
        finish_reason: row.get(12)?,
        outcome: Some(row.get(13)?),
        error: row.get(14)?,
        http_status: row.get(15)?,
        timing: (!timing.is_empty()).then_some(timing),
        usage: (!usage.is_empty()).then_some(usage),
    });
    Ok(())
}

/// Appends stored `[{role, content}]` JSON as messages.
fn append_messages(
    line: &mut ConversationLine,
    json: &str,
    column: &'static str,
) -> Result<(), ExportError> {
    let corrupt = |source| ExportError::Corrupt {
        uid: line.id.clone().unwrap_or_default(),
        column,
        source,
    };
    let messages: Vec<Message> = serde_json::from_str(json).map_err(corrupt)?;
    for m in messages {
        let role = match m.role.as_str() {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            other => {
                return Err(corrupt(serde::de::Error::custom(format!(
                    "unknown role {other:?}"
                ))));
            }
        };
        line.messages.push(MessageLine::text(role, m.content));
    }
    Ok(())
}

fn write_line(
    conn: &Connection,
    mut p: Pending,
    with_scores: bool,
    out: &mut dyn Write,
    summary: &mut ExportSummary,
) -> Result<(), ExportError> {
    if let Some(trailing) = p.trailing.take() {
        append_messages(&mut p.line, &trailing, "conversations.trailing")?;
    }
    if with_scores {
        p.line.checks = Some(scores::checks_for(conn, p.id)?);
        p.line.judgments = Some(scores::judgments_for(conn, p.id)?);
    }
    serde_json::to_writer(&mut *out, &p.line).map_err(|e| ExportError::Write(e.into()))?;
    out.write_all(b"\n").map_err(ExportError::Write)?;
    summary.conversations += 1;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{ImportOptions, import_reader};

    const LINES: &str = r#"{"id":"a","provider":"acme","model":"m1","label":"M one","scenario":"s1","repeat":1,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Q"},{"role":"assistant","content":"A","timing":{"ttft_ms":1.5,"e2e_ms":9}},{"role":"user","content":"bye"}]}
{"id":"b","provider":"nimbus","model":"m2","scenario":"s2","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":null,"outcome":"timeout","error":"no answer in 30 s"}]}
"#;

    fn store_with_lines() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = crate::store::open(&dir.path().join("t.db")).unwrap();
        import_reader(
            &mut conn,
            Path::new("lines.jsonl"),
            Box::new(io::Cursor::new(LINES.as_bytes().to_vec())),
            None,
            &ImportOptions::default(),
            &mut |r| panic!("{r}"),
        )
        .unwrap();
        (dir, conn)
    }

    fn export(conn: &Connection, opts: &ExportOptions) -> String {
        let mut out = Vec::new();
        export_conversations(conn, opts, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn writes_what_was_imported() {
        let (_dir, conn) = store_with_lines();
        let text = export(&conn, &ExportOptions::default());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            r#"{"id":"a","provider":"acme","model":"m1","label":"M one","scenario":"s1","repeat":1,"outcome":"completed","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Q"},{"role":"assistant","content":"A","outcome":"ok","timing":{"ttft_ms":1.5,"e2e_ms":9.0}},{"role":"user","content":"bye"}]}"#
        );
        assert_eq!(
            lines[1],
            r#"{"id":"b","provider":"nimbus","model":"m2","scenario":"s2","repeat":1,"outcome":"timeout","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":null,"outcome":"timeout","error":"no answer in 30 s"}]}"#
        );
    }

    #[test]
    fn filters_select_conversations() {
        let (_dir, conn) = store_with_lines();
        let only = |filter: ExportFilter| {
            let text = export(
                &conn,
                &ExportOptions {
                    filter,
                    with_scores: false,
                },
            );
            text.lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].clone())
                .collect::<Vec<_>>()
        };
        let f =
            |provider: Option<&str>, model: Option<&str>, scenario: Option<&str>| ExportFilter {
                run: None,
                provider: provider.map(Into::into),
                model: model.map(Into::into),
                scenario: scenario.map(Into::into),
            };
        assert_eq!(only(f(Some("nimbus"), None, None)), ["b"]);
        assert_eq!(only(f(None, Some("M one"), None)), ["a"]);
        assert_eq!(only(f(None, Some("m1"), None)).len(), 0); // label, not model id
        assert_eq!(only(f(None, None, Some("s2"))), ["b"]);
        let by_run = |run: &str| ExportFilter {
            run: Some(run.into()),
            ..Default::default()
        };
        assert_eq!(only(by_run("1")).len(), 2);
        assert_eq!(only(by_run("lines.jsonl")).len(), 2);
        let err = export_conversations(
            &conn,
            &ExportOptions {
                filter: by_run("7"),
                with_scores: false,
            },
            &mut Vec::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("1 (lines.jsonl, import)"), "{err}");
    }

    #[test]
    fn scores_are_empty_when_nothing_was_scored() {
        let (_dir, conn) = store_with_lines();
        let opts = ExportOptions {
            with_scores: true,
            ..Default::default()
        };
        let text = export(&conn, &opts);
        assert!(
            text.lines()
                .all(|l| l.ends_with(r#""checks":[],"judgments":[]}"#)),
            "{text}"
        );
    }
}
