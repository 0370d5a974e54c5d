//! `turnbench label import`: human labels into the store, as judgments of the judge
//! `human:<rater>` (`crate::store::labels`), so that agreement figures can include people
//! and the report can say how far each judge agrees with them.
//!
//! A file is JSON Lines, one label a line:
//! `{"conversation": "<uid or id>", "rater": "<name>", "rubric": "<id>@<version>",
//! "scores": {criterion: integer}, "completed": true|false}` (and an optional
//! `"rationale"`). Each line is checked the way a judge's answer is (the rubric's own
//! [`crate::config::Rubric::check_scores`]: every criterion, no other, integers on the
//! scale); a bad line is reported by `file:line` with what to fix and skipped, the others
//! are stored. The whole file is one transaction.
//!
//! Idempotent: a label equal to the current one for its conversation, rater and rubric
//! version adds nothing; a changed one is stored beside it and becomes current (history
//! is kept, as for every result). One file may label a conversation once per rater and
//! rubric version: a second line for it is refused (which of the two was meant?).
//!
//! The rubric of `id@version` is the one stored (what the judges judged against), else the
//! one of that id and version in the rubrics folder, which is then stored.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::{Map, Value};

use crate::config::{ConfigError, Rubric};
use crate::jsonl::{LineProblem, Lines, Place, Rejection};
use crate::store::StoreError;
use crate::store::checks::find_conversation;
use crate::store::judgments::{RubricRow, upsert_rubric};
use crate::store::labels::{LabelRecord, LabelWrite, rater_ref, stored_rubric, write_label};

#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    #[error("{path}: cannot read: {error}\n  fix: check the path", path = .path.display())]
    Open {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(
        "{path}:{line}: read failed: {error}\n  nothing from this file was stored; import it again",
        path = .path.display()
    )]
    Read {
        path: PathBuf,
        line: u64,
        error: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for LabelError {
    fn from(e: rusqlite::Error) -> Self {
        LabelError::Store(StoreError::Sql(e))
    }
}

/// What importing one file did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSummary {
    pub path: PathBuf,
    /// First labels for their conversation, rater and rubric version.
    pub added: u64,
    /// Labels that changed the current one (the old one kept as history).
    pub replaced: u64,
    /// Labels equal to the current one: nothing written.
    pub unchanged: u64,
    pub rejected: u64,
}

impl fmt::Display for LabelSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} label{} added, {} replaced, {} unchanged, {} rejected",
            self.path.display(),
            self.added,
            if self.added == 1 { "" } else { "s" },
            self.replaced,
            self.unchanged,
            self.rejected
        )?;
        if self.added + self.replaced == 0 && self.rejected == 0 && self.unchanged > 0 {
            f.write_str(" (nothing new)")?;
        }
        Ok(())
    }
}

/// Where rubrics named by labels are looked for when the store has not got them.
#[derive(Debug, Clone)]
pub struct LabelOptions {
    pub rubrics_dir: PathBuf,
}

/// Imports one labels file; each bad line goes to `report` and is skipped.
pub fn import_labels(
    conn: &mut Connection,
    path: &Path,
    opts: &LabelOptions,
    report: &mut dyn FnMut(&Rejection),
) -> Result<LabelSummary, LabelError> {
    let file = File::open(path).map_err(|error| LabelError::Open {
        path: path.to_path_buf(),
        error,
    })?;
    let mut lines = Lines::new(BufReader::new(file));
    let tx = conn.transaction()?;
    let invocation = crate::store::now_rfc3339();
    let mut rubrics = Rubrics::new(&opts.rubrics_dir);
    let mut summary = LabelSummary {
        path: path.to_path_buf(),
        ..LabelSummary::default()
    };
    // (conversation id, rater, rubric ref) → the line that labelled it in this file.
    let mut seen: HashMap<(i64, String, i64), u64> = HashMap::new();
    loop {
        let (number, text) = match lines.next_line() {
            Ok(Some((n, t))) => (n, t.to_vec()),
            Ok(None) => break,
            Err(error) => {
                return Err(LabelError::Read {
                    path: path.to_path_buf(),
                    line: lines.number,
                    error,
                });
            }
        };
        let checked = read_line(&tx, &text, &mut rubrics).and_then(|label| {
            let key = (label.conversation_id, label.rater.clone(), label.rubric_ref);
            match seen.get(&key) {
                Some(first) => Err(LineProblem::new(
                    "conversation",
                    format!(
                        "line {first} already labels this conversation for rater {:?} and rubric {}@{}; fix: keep one of the two lines",
                        label.rater, label.rubric_id, label.rubric_version
                    ),
                )),
                None => {
                    seen.insert(key, number);
                    Ok(label)
                }
            }
        });
        match checked {
            Ok(label) => {
                let record = LabelRecord {
                    conversation_id: label.conversation_id,
                    rater_ref: rater_ref(&tx, &label.rater)?,
                    rater: label.rater,
                    rubric_ref: label.rubric_ref,
                    rubric_id: label.rubric_id,
                    rubric_version: label.rubric_version,
                    scores: label.scores,
                    completed: label.completed,
                    rationale: label.rationale,
                    source: format!("{}:{number}", path.display()),
                    invocation: invocation.clone(),
                    line: u32::try_from(number).unwrap_or(u32::MAX),
                };
                match write_label(&tx, &record)? {
                    LabelWrite::Added => summary.added += 1,
                    LabelWrite::Replaced => summary.replaced += 1,
                    LabelWrite::Unchanged => summary.unchanged += 1,
                }
            }
            Err(problem) => {
                summary.rejected += 1;
                report(&Rejection {
                    path: path.to_path_buf(),
                    place: Place::line(number),
                    problem,
                });
            }
        }
    }
    tx.commit()?;
    Ok(summary)
}

/// One line, checked.
struct Label {
    conversation_id: i64,
    rater: String,
    rubric_ref: i64,
    rubric_id: String,
    rubric_version: u32,
    scores: BTreeMap<String, i64>,
    completed: bool,
    rationale: Option<String>,
}

const KEYS: [&str; 6] = [
    "conversation",
    "rater",
    "rubric",
    "scores",
    "completed",
    "rationale",
];

fn read_line(conn: &Connection, text: &[u8], rubrics: &mut Rubrics) -> Result<Label, LineProblem> {
    let object = match serde_json::from_slice::<Value>(text) {
        Ok(Value::Object(o)) => o,
        Ok(_) => {
            return Err(LineProblem::new(
                "",
                "not a JSON object; fix: write one {\"conversation\", \"rater\", \"rubric\", \"scores\", \"completed\"} object a line",
            ));
        }
        Err(e) => {
            return Err(LineProblem::new(
                "",
                format!("not JSON ({e}); fix: write one JSON object a line"),
            ));
        }
    };
    if let Some(extra) = object.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(LineProblem::new(
            extra.as_str(),
            format!("not a field of a label; fix: use only {}", KEYS.join(", ")),
        ));
    }
    let conversation_id = conversation(conn, &object)?;
    let rater = rater(&object)?;
    let (rubric_id, rubric_version) = rubric_name(&object)?;
    let (rubric_ref, rubric) = rubrics.get(conn, &rubric_id, rubric_version)?;
    let scores = object
        .get("scores")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            LineProblem::new(
                "scores",
                "missing or not an object; fix: give {criterion: integer} for every criterion of the rubric",
            )
        })?;
    let scores = rubric.check_scores(scores).map_err(|p| {
        let criteria: Vec<&str> = rubric.criteria.iter().map(|c| c.id.as_str()).collect();
        LineProblem::new(
            "scores",
            format!(
                "{p}; fix: score each of {} with an integer from {} to {}",
                criteria.join(", "),
                rubric.scale.min,
                rubric.scale.max
            ),
        )
    })?;
    let completed = object
        .get("completed")
        .and_then(Value::as_bool)
        .ok_or_else(|| LineProblem::new("completed", "missing or not true/false; fix: answer the rubric's completed question with true or false"))?;
    let rationale = match object.get("rationale") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(LineProblem::new(
                "rationale",
                "not a string; fix: write it as text, or leave it out",
            ));
        }
    };
    Ok(Label {
        conversation_id,
        rater,
        rubric_ref,
        rubric_id,
        rubric_version,
        scores,
        completed,
        rationale,
    })
}

fn conversation(conn: &Connection, object: &Map<String, Value>) -> Result<i64, LineProblem> {
    let key = match object.get("conversation") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(Value::Number(n)) if n.is_i64() => n.to_string(),
        _ => {
            return Err(LineProblem::new(
                "conversation",
                "missing or empty; fix: give the conversation's uid or id (`turnbench export conversations` lists them)",
            ));
        }
    };
    match find_conversation(conn, &key) {
        Ok(Some(head)) => Ok(head.id),
        Ok(None) => Err(LineProblem::new(
            "conversation",
            format!(
                "{key:?} is not in this store; fix: use a uid or id of a stored conversation, or import its transcript first"
            ),
        )),
        Err(e) => Err(LineProblem::new(
            "conversation",
            format!("the store could not be read ({e})"),
        )),
    }
}

fn rater(object: &Map<String, Value>) -> Result<String, LineProblem> {
    match object.get("rater").and_then(Value::as_str).map(str::trim) {
        Some(r) if !r.is_empty() && !r.chars().any(char::is_control) => Ok(r.to_string()),
        _ => Err(LineProblem::new(
            "rater",
            "missing or empty; fix: name the person who labelled, e.g. \"ana\" (stored as judge human:ana)",
        )),
    }
}

fn rubric_name(object: &Map<String, Value>) -> Result<(String, u32), LineProblem> {
    let Some(name) = object.get("rubric").and_then(Value::as_str) else {
        return Err(LineProblem::new(
            "rubric",
            "missing or not a string; fix: name the rubric and its version, e.g. \"multiturn-quality@1\"",
        ));
    };
    let Some((id, version)) = name.rsplit_once('@') else {
        return Err(LineProblem::new(
            "rubric",
            format!("{name:?} names no version; fix: write {name}@<version>, e.g. {name}@1"),
        ));
    };
    match version.parse::<u32>() {
        Ok(v) if v >= 1 && !id.is_empty() => Ok((id.to_string(), v)),
        _ => Err(LineProblem::new(
            "rubric",
            format!(
                "{name:?}: the version is not a positive integer; fix: write <id>@<version>, e.g. {id}@1"
            ),
        )),
    }
}

/// Rubrics by id and version, each looked up once: the store's, else the folder's.
struct Rubrics {
    dir: PathBuf,
    /// The folder's rubrics, read on first need; the error when it could not be read.
    folder: Option<Result<Vec<Rubric>, String>>,
    found: HashMap<(String, u32), Result<(i64, Rubric), LineProblem>>,
}

impl Rubrics {
    fn new(dir: &Path) -> Rubrics {
        Rubrics {
            dir: dir.to_path_buf(),
            folder: None,
            found: HashMap::new(),
        }
    }

    fn get(
        &mut self,
        conn: &Connection,
        id: &str,
        version: u32,
    ) -> Result<(i64, Rubric), LineProblem> {
        let key = (id.to_string(), version);
        if let Some(found) = self.found.get(&key) {
            return found.clone();
        }
        let found = self.look_up(conn, id, version);
        self.found.insert(key, found.clone());
        found
    }

    fn look_up(
        &mut self,
        conn: &Connection,
        id: &str,
        version: u32,
    ) -> Result<(i64, Rubric), LineProblem> {
        let store_problem = |e: StoreError| {
            LineProblem::new("rubric", format!("the store could not be read ({e})"))
        };
        if let Some((row, content)) = stored_rubric(conn, id, version).map_err(store_problem)? {
            return Rubric::from_content_json(&content)
                .map(|r| (row, r))
                .ok_or_else(|| {
                    LineProblem::new(
                        "rubric",
                        format!("{id}@{version} is stored, but its content is not a rubric this turnbench reads"),
                    )
                });
        }
        let dir = self.dir.clone();
        let folder = self.folder.get_or_insert_with(|| load_dir(&dir));
        let rubrics = match folder {
            Ok(r) => r,
            Err(e) => {
                return Err(LineProblem::new(
                    "rubric",
                    format!("{id}@{version} is not in the store, and {e}"),
                ));
            }
        };
        let Some(rubric) = rubrics
            .iter()
            .find(|r| r.id == id && r.version == version)
            .cloned()
        else {
            let known: Vec<String> = rubrics
                .iter()
                .map(|r| format!("{}@{}", r.id, r.version))
                .collect();
            return Err(LineProblem::new(
                "rubric",
                format!(
                    "{id}@{version} is neither in the store nor in {} (which has {}); fix: name one of those, or pass --rubrics with the folder that has it",
                    crate::config::embedded::describe(&dir),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        };
        match upsert_rubric(
            conn,
            &rubric.id,
            rubric.version,
            &rubric.content_hash(),
            &rubric.title,
            &rubric.content_json(),
        )
        .map_err(store_problem)?
        {
            RubricRow::Stored(row) => Ok((row, rubric)),
            RubricRow::Conflict { .. } => Err(LineProblem::new(
                "rubric",
                format!("{id}@{version} is stored with other content"),
            )),
        }
    }
}

/// Every rubric in `dir` (on disk or built in); a file that does not load is an error
/// naming it.
fn load_dir(dir: &Path) -> Result<Vec<Rubric>, String> {
    let describe = |e: ConfigError| format!("{} could not be read: {e}", dir.display());
    crate::config::scenario::toml_files(dir)
        .map_err(describe)?
        .iter()
        .map(|p| Rubric::load(p).map_err(describe))
        .collect()
}
