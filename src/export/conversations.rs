//! `turnbench export conversations`: stored conversations in the exchange format
//! (`crate::exchange`), one JSON line each, streamed from the read model one conversation
//! at a time, so memory stays flat. What import reads, export writes: a round trip keeps
//! them. Interrupted attempts that a later conversation redid are written too, with
//! `superseded_by` naming the one that counts.
//!
//! Not in the format, so not exported: attempts, pauses, start offsets, request ids, chunk
//! offsets, visible-token counts.

use std::io::Write;

use rusqlite::Connection;

use super::{ExportError, Exporter, FormatOptions};
use crate::store::facts::{Selection, conversation_lines};

/// What to stream: the selected conversations of a store, with or without scores.
pub struct ConversationSource {
    pub conn: Connection,
    pub selection: Selection,
    /// Add each conversation's current check results and judgments.
    pub with_scores: bool,
}

/// The counts of a finished export.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportSummary {
    pub conversations: u64,
    pub turns: u64,
}

impl ConversationSource {
    /// Calls `f` with every line, oldest first; returns what was written.
    pub fn for_each(
        &self,
        f: impl FnMut(crate::exchange::ConversationLine) -> Result<(), ExportError>,
    ) -> Result<ExportSummary, ExportError> {
        let (conversations, turns) =
            conversation_lines(&self.conn, &self.selection, self.with_scores, f)?;
        Ok(ExportSummary {
            conversations,
            turns,
        })
    }

    /// How many conversations and turns the selection holds (for the closing line).
    pub fn count(&self) -> Result<ExportSummary, ExportError> {
        self.for_each(|_| Ok(()))
    }
}

/// JSON Lines in the exchange format.
pub struct Jsonl;

impl Exporter<ConversationSource> for Jsonl {
    fn write(
        &self,
        data: &ConversationSource,
        _opts: &FormatOptions,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        data.for_each(|line| {
            serde_json::to_writer(&mut *out, &line)?;
            out.write_all(b"\n")?;
            Ok(())
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::path::Path;

    use super::*;
    use crate::import::{ImportOptions, import_reader};
    use crate::store::facts::FactFilter;

    const LINES: &str = r#"{"id":"a","provider":"acme","model":"m1","label":"M one","scenario":"s1","repeat":1,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Q"},{"role":"assistant","content":"A","timing":{"ttft_ms":1.5,"e2e_ms":9}},{"role":"user","content":"bye"}]}
{"id":"b","provider":"nimbus","model":"m2","scenario":"s2","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":null,"outcome":"timeout","error":"no answer in 30 s"}]}
"#;

    fn store_with_lines() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = crate::store::open(&db(&dir)).unwrap();
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

    fn db(dir: &tempfile::TempDir) -> std::path::PathBuf {
        dir.path().join("t.db")
    }

    fn export(path: &Path, filter: FactFilter, with_scores: bool) -> String {
        let conn = crate::store::open(path).unwrap();
        let source = ConversationSource {
            selection: Selection::resolve(&conn, &filter).unwrap(),
            conn,
            with_scores,
        };
        let mut out = Vec::new();
        Jsonl
            .write(&source, &FormatOptions::default(), &mut out)
            .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn writes_what_was_imported() {
        let (dir, _conn) = store_with_lines();
        let text = export(&db(&dir), FactFilter::default(), false);
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
        let (dir, conn) = store_with_lines();
        let only = |filter: FactFilter| {
            export(&db(&dir), filter, false)
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].clone())
                .collect::<Vec<_>>()
        };
        let f = |provider: Option<&str>, label: Option<&str>, scenario: Option<&str>| FactFilter {
            run: None,
            provider: provider.map(Into::into),
            label: label.map(Into::into),
            scenario: scenario.map(Into::into),
            run_ids: None,
        };
        assert_eq!(only(f(Some("nimbus"), None, None)), ["b"]);
        assert_eq!(only(f(None, Some("M one"), None)), ["a"]);
        assert_eq!(only(f(None, Some("m1"), None)).len(), 0); // label, not model id
        assert_eq!(only(f(None, None, Some("s2"))), ["b"]);
        let by_run = |run: &str| FactFilter {
            run: Some(run.into()),
            ..Default::default()
        };
        assert_eq!(only(by_run("1")).len(), 2);
        assert_eq!(only(by_run("lines.jsonl")).len(), 2);
        let err = Selection::resolve(&conn, &by_run("7"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("1 (lines.jsonl, import)"), "{err}");
    }

    #[test]
    fn scores_are_empty_when_nothing_was_scored() {
        let (dir, _conn) = store_with_lines();
        let text = export(&db(&dir), FactFilter::default(), true);
        assert!(
            text.lines()
                .all(|l| l.ends_with(r#""checks":[],"judgments":[]}"#)),
            "{text}"
        );
    }

    #[test]
    fn scores_carry_the_current_results_and_the_judge_detail() {
        let (dir, conn) = store_with_lines();
        conn.execute_batch(
            "INSERT INTO check_runs (id, checks_dir, tool_version, started_at) VALUES (1, 'c', '0', 't');
             INSERT INTO check_definitions (id, scenario, check_id, hash, kind, tag, definition, first_seen)
               VALUES (1, 's1', 'json-valid', 'h1', 'json_valid', 'json_validity', '{}', 't'),
                      (2, 's1', 'no-old-date', 'h2', 'not_contains', 'superseded_instruction', '{}', 't'),
                      (3, 's1', 'json-valid', 'h3', 'json_valid', 'json_validity', '{}', 't');
             INSERT INTO check_run_definitions (check_run_id, definition_id) VALUES (1, 2), (1, 3);
             INSERT INTO check_results (conversation_id, definition_id, passed, detail, check_run_id)
               VALUES (1, 1, 0, 'old definition failed', 1),
                      (1, 2, NULL, 'not scored', 1),
                      (1, 3, 1, NULL, 1);
             INSERT INTO rubrics (id, rubric_id, version, hash, title, content)
               VALUES (1, 'quality', 2, 'h', 'Q', '{}');
             INSERT INTO judges (id, judge_id, model, host, simulated, settings, template, hash)
               VALUES (1, 'j1', 'jm', 'builtin-mock', 1, '{}', 't', 'jh');
             INSERT INTO judgments (key, conversation_id, rubric_ref, judge_ref, rubric_id,
                 rubric_version, judge_id, replicate, label, status, scores, completed, rationale,
                 raw_output, error, asks, attempts, simulated, invocation, seq, created_at)
               VALUES ('k1', 1, 1, 1, 'quality', 2, 'j1', 1, 'A', 'judge_error', NULL, NULL, NULL,
                       NULL, 'HTTP 500', 1, 4, 1, 'i1', 0, 't1'),
                      ('k1', 1, 1, 1, 'quality', 2, 'j1', 1, 'A', 'ok',
                       '{\"accuracy\": 4, \"clarity\": 5}', 1, 'fine', '{\"scores\":{}}', NULL,
                       1, 1, 1, 'i2', 0, 't2'),
                      ('k2', 1, 1, 1, 'quality', 2, 'j1', 2, 'A', 'unparseable', NULL, NULL, NULL,
                       'I think it is good', 'no JSON object', 3, 3, 1, 'i2', 1, 't2');",
        )
        .unwrap();
        let text = export(&db(&dir), FactFilter::default(), true);
        let line: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let checks = line["checks"].as_array().unwrap();
        assert_eq!(checks.len(), 2, "one entry per current check: {checks:?}");
        assert_eq!(checks[0]["id"], "json-valid");
        assert_eq!(checks[0]["passed"], true, "the edited definition's result");
        assert_eq!(checks[1]["passed"], serde_json::Value::Null);
        let judgments = line["judgments"].as_array().unwrap();
        assert_eq!(
            judgments.len(),
            2,
            "the retried error is history: {judgments:?}"
        );
        assert_eq!(judgments[0]["rubric"], "quality@2");
        assert_eq!(judgments[0]["status"], "ok");
        assert_eq!(judgments[0]["simulated"], true);
        assert_eq!(judgments[0]["scores"]["clarity"], 5);
        assert_eq!(judgments[1]["status"], "unparseable");
        assert_eq!(judgments[1]["raw_output"], "I think it is good");
        assert_eq!(judgments[1]["error"], "no JSON object");
    }
}
