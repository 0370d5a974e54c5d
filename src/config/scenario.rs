//! Scenario files (`scenarios/*.toml`): one fixed multi-turn workflow each.
//!
//! ```toml
//! id = "dev-cursor-pagination"      # must equal the file stem
//! category = "developer"            # free text; the suite uses developer, business, structured
//! title = "Cursor pagination for an orders API"
//! system = "You are a senior backend engineer."   # optional
//!
//! [[turn]]
//! user = "Design ..."
//! pause_ms = [800, 2500]            # optional simulated user pause before this turn
//! reference = "A careful answer"    # optional; the mock provider answers with it
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::error::{ConfigError, SourceText};
use super::keys::FileKind;

/// One scenario, validated. `hash` versions it: an edited prompt is a new scenario version.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    pub id: String,
    pub category: String,
    pub title: String,
    pub system: Option<String>,
    pub turns: Vec<ScenarioTurn>,
    /// blake3 of what the provider is sent (system + user turns); reference answers and
    /// pauses do not change it.
    pub hash: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScenarioTurn {
    pub user: String,
    /// Inclusive range in milliseconds; `None` means no pause.
    pub pause_ms: Option<(u64, u64)>,
    pub reference: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioDoc {
    id: Spanned<String>,
    category: String,
    title: Option<String>,
    system: Option<String>,
    #[serde(rename = "turn")]
    turns: Spanned<Vec<TurnDoc>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnDoc {
    user: Spanned<String>,
    pause_ms: Option<Spanned<Vec<u64>>>,
    reference: Option<String>,
}

impl Scenario {
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::from_source(&SourceText::read(path)?)
    }

    pub fn from_source(src: &SourceText) -> Result<Self, ConfigError> {
        let doc: ScenarioDoc = src.parse(FileKind::Scenario)?;
        let stem = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let id = doc.id.get_ref().clone();
        if !valid_id(&id) {
            return Err(src.invalid(
                doc.id.span(),
                format!("scenario id {id:?} has characters other than a-z, 0-9, '-', '_', '.'"),
                "use a short slug such as \"dev-cursor-pagination\"",
            ));
        }
        if id != stem {
            return Err(src.invalid(
                doc.id.span(),
                format!("scenario id {id:?} differs from the file name {stem:?}"),
                format!("rename the file to {id}.toml or set id = \"{stem}\""),
            ));
        }
        if doc.turns.get_ref().is_empty() {
            return Err(src.invalid(
                doc.turns.span(),
                "a scenario needs at least one [[turn]]",
                "add [[turn]] tables with a `user` message each",
            ));
        }
        let mut turns = Vec::new();
        for turn in doc.turns.into_inner() {
            if turn.user.get_ref().trim().is_empty() {
                return Err(src.invalid(
                    turn.user.span(),
                    "empty user message",
                    "write the user's message for this turn",
                ));
            }
            let pause_ms = match turn.pause_ms {
                None => None,
                Some(p) => match p.get_ref().as_slice() {
                    [lo, hi] if lo <= hi => Some((*lo, *hi)),
                    _ => {
                        return Err(src.invalid(
                            p.span(),
                            "pause_ms must be [min, max] with min <= max",
                            "write e.g. pause_ms = [500, 2000]",
                        ));
                    }
                },
            };
            turns.push(ScenarioTurn {
                user: turn.user.into_inner(),
                pause_ms,
                reference: turn.reference,
            });
        }
        let hash = prompt_hash(doc.system.as_deref(), &turns);
        Ok(Scenario {
            title: doc.title.unwrap_or_else(|| id.clone()),
            id,
            category: doc.category,
            system: doc.system,
            turns,
            hash,
        })
    }

    /// Loads every `*.toml` in `dir`, sorted by id. Duplicate ids are an error.
    pub fn load_dir(dir: &Path) -> Result<Vec<Scenario>, ConfigError> {
        let mut scenarios = Vec::new();
        for path in toml_files(dir)? {
            scenarios.push(Scenario::load(&path)?);
        }
        scenarios.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(scenarios)
    }
}

fn prompt_hash(system: Option<&str>, turns: &[ScenarioTurn]) -> String {
    let mut h = blake3::Hasher::new();
    // Length-prefixed fields, so that no two different scenarios hash alike.
    let mut field = |s: &str| {
        h.update(&(s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    field(system.unwrap_or("\u{0}none"));
    for t in turns {
        field(&t.user);
    }
    h.finalize().to_hex()[..16].to_string()
}

pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c))
}

/// The `*.toml` files directly in `dir` (on disk or built in), sorted by name.
pub fn toml_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, ConfigError> {
    if super::embedded::is_builtin(dir) {
        let files = super::embedded::list(dir).ok_or_else(|| ConfigError::Read {
            path: dir.to_path_buf(),
            error: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the built-in definitions have no such folder",
            ),
        })?;
        return Ok(files
            .into_iter()
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect());
    }
    let entries = std::fs::read_dir(dir).map_err(|error| ConfigError::Read {
        path: dir.to_path_buf(),
        error,
    })?;
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(name: &str, text: &str) -> SourceText {
        SourceText {
            path: format!("scenarios/{name}.toml").into(),
            text: text.to_string(),
        }
    }

    const OK: &str = r#"
id = "demo"
category = "developer"
system = "Be brief."

[[turn]]
user = "Write a haiku."
pause_ms = [100, 200]
reference = "Autumn moonlight"

[[turn]]
user = "Now in JSON."
"#;

    #[test]
    fn parses_turns_pauses_and_references() {
        let s = Scenario::from_source(&src("demo", OK)).unwrap();
        assert_eq!(s.turns.len(), 2);
        assert_eq!(s.turns[0].pause_ms, Some((100, 200)));
        assert_eq!(s.turns[1].pause_ms, None);
        assert_eq!(s.turns[0].reference.as_deref(), Some("Autumn moonlight"));
        assert_eq!(s.title, "demo");
    }

    #[test]
    fn hash_follows_prompts_not_references() {
        let a = Scenario::from_source(&src("demo", OK)).unwrap();
        let b = Scenario::from_source(&src("demo", &OK.replace("Autumn", "Spring"))).unwrap();
        let c = Scenario::from_source(&src("demo", &OK.replace("haiku", "limerick"))).unwrap();
        assert_eq!(a.hash, b.hash);
        assert_ne!(a.hash, c.hash);
    }

    #[test]
    fn id_must_match_file_name() {
        let err = Scenario::from_source(&src("other", OK))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("scenarios/other.toml:2:"), "{err}");
        assert!(err.contains("fix:"), "{err}");
    }

    #[test]
    fn reversed_pause_names_line() {
        let err = Scenario::from_source(&src("demo", &OK.replace("[100, 200]", "[300, 200]")))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("scenarios/demo.toml:8:"), "{err}");
    }

    #[test]
    fn unknown_key_in_turn_names_line() {
        let err = Scenario::from_source(&src("demo", &OK.replace("reference =", "answer =")))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("scenarios/demo.toml:9:"), "{err}");
        assert!(err.contains("answer"), "{err}");
    }
}
