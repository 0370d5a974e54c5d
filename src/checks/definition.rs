//! Loading one checks file into a [`CheckSet`]: the shared fields of every `[[check]]`, the
//! kind's own fields (handed to the kind's builder), scopes, tags and definition hashes.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::defect::{Defect, DefectDoc};
use super::kinds::{self, KindFields, Rule};
use super::toml_json::toml_to_json;
use crate::config::keys::FileKind;
use crate::config::scenario::{toml_files, valid_id};
use crate::config::{ConfigError, SourceText};

/// What a check measures; the report groups pass rates by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tag {
    JsonValidity,
    RequiredFields,
    RetainedConstraint,
    SupersededInstruction,
    Format,
    Custom,
}

impl Tag {
    pub const ALL: [Tag; 6] = [
        Tag::JsonValidity,
        Tag::RequiredFields,
        Tag::RetainedConstraint,
        Tag::SupersededInstruction,
        Tag::Format,
        Tag::Custom,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Tag::JsonValidity => "json_validity",
            Tag::RequiredFields => "required_fields",
            Tag::RetainedConstraint => "retained_constraint",
            Tag::SupersededInstruction => "superseded_instruction",
            Tag::Format => "format",
            Tag::Custom => "custom",
        }
    }

    pub fn parse(name: &str) -> Option<Tag> {
        Tag::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which answers a check reads. Turns are 1-based, as written in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The last answer of the conversation.
    Final,
    /// That turn's answer only.
    Turn(usize),
    /// Every answer from that turn on; each must pass.
    FromTurn(usize),
}

/// One check, compiled.
#[derive(Debug)]
pub struct Check {
    pub id: String,
    pub kind: String,
    pub tag: Tag,
    pub description: Option<String>,
    pub scope: Scope,
    /// The `[[check]]` table as JSON with sorted keys: what `definition_hash` hashes.
    pub definition: serde_json::Value,
    /// blake3 hex of `definition` (and of a schema file's content): an edited check is a
    /// new definition, so its stored results are told apart from the old ones.
    pub definition_hash: String,
    /// Line of the check's table, and of its `turn`/`from_turn` (the table's when absent).
    pub line: usize,
    pub scope_line: usize,
    pub(crate) rule: Box<dyn Rule>,
}

/// The checks of one scenario, from `checks/<scenario-id>.toml`.
#[derive(Debug)]
pub struct CheckSet {
    pub scenario: String,
    pub path: PathBuf,
    pub scenario_line: usize,
    pub checks: Vec<Check>,
    pub defects: Vec<Defect>,
}

/// First pass over the file with the whole-file parser: syntax, unknown top-level keys and
/// the defects. Checks are read again with spans (see `Check::build`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckFileDoc {
    scenario: Spanned<String>,
    #[serde(default)]
    check: Vec<toml::Table>,
    #[serde(default)]
    defect: Vec<Spanned<DefectDoc>>,
}

/// The fields every check has, whatever its kind.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckHead {
    id: Spanned<String>,
    kind: Spanned<String>,
    tag: Spanned<String>,
    description: Option<String>,
    turn: Option<Spanned<i64>>,
    from_turn: Option<Spanned<i64>>,
}

const HEAD_KEYS: [&str; 6] = ["id", "kind", "tag", "description", "turn", "from_turn"];

impl CheckSet {
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::from_source(&SourceText::read(path)?)
    }

    /// Loads every `*.toml` in `dir`, sorted by scenario id.
    pub fn load_dir(dir: &Path) -> Result<Vec<CheckSet>, ConfigError> {
        let mut sets = Vec::new();
        for path in toml_files(dir)? {
            sets.push(CheckSet::load(&path)?);
        }
        sets.sort_by(|a, b| a.scenario.cmp(&b.scenario));
        Ok(sets)
    }

    pub fn from_source(src: &SourceText) -> Result<Self, ConfigError> {
        let doc: CheckFileDoc = src.parse(FileKind::Checks)?;
        let scenario = doc.scenario.get_ref().clone();
        let stem = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if !valid_id(&scenario) {
            return Err(src.invalid(
                doc.scenario.span(),
                format!(
                    "scenario id {scenario:?} has characters other than a-z, 0-9, '-', '_', '.'"
                ),
                "write the id of a scenario in scenarios/, such as \"dev-cursor-pagination\"",
            ));
        }
        if scenario != stem {
            return Err(src.invalid(
                doc.scenario.span(),
                format!("scenario {scenario:?} differs from the file name {stem:?}"),
                format!("name the checks file after its scenario: checks/{scenario}.toml"),
            ));
        }
        let root = DeTable::parse(&src.text).map_err(|e| src.toml_error(e))?;
        let tables = match root.get_ref().get("check").map(|v| v.get_ref()) {
            Some(DeValue::Array(items)) => items.to_vec(),
            _ => Vec::new(),
        };
        let mut checks: Vec<Check> = Vec::new();
        let mut ids = HashSet::new();
        for (table, owned) in tables.into_iter().zip(&doc.check) {
            let (check, id_span) = Check::build(src, table, owned)?;
            if !ids.insert(check.id.clone()) {
                return Err(src.invalid(
                    id_span,
                    format!("check id {:?} is used twice in this file", check.id),
                    "give every check its own id",
                ));
            }
            checks.push(check);
        }
        let mut defects: Vec<Defect> = Vec::new();
        for doc in doc.defect {
            let defect = Defect::from_doc(src, doc, &ids)?;
            if defects.iter().any(|d| d.name == defect.name) {
                return Err(ConfigError::invalid(
                    &src.path,
                    defect.line,
                    format!("defect name {:?} is used twice in this file", defect.name),
                    "give every defect its own name",
                ));
            }
            defects.push(defect);
        }
        Ok(CheckSet {
            scenario,
            path: src.path.clone(),
            scenario_line: src.line_of(doc.scenario.span().start),
            checks,
            defects,
        })
    }
}

impl Check {
    /// Builds one check from its spanned table (for errors) and its owned copy (for the
    /// hash). Returns the id's span too, for the duplicate-id error.
    fn build(
        src: &SourceText,
        table: Spanned<DeValue<'_>>,
        owned: &toml::Table,
    ) -> Result<(Check, std::ops::Range<usize>), ConfigError> {
        let span = table.span();
        let DeValue::Table(mut rest) = table.into_inner() else {
            return Err(src.invalid(span, "a check must be a table", "write [[check]]"));
        };
        for (key, example) in [
            ("id", "id = \"final-json-valid\""),
            ("kind", "kind = \"json_valid\""),
            ("tag", "tag = \"json_validity\""),
        ] {
            if rest.get(key).is_none() {
                let known = match key {
                    "kind" => format!(" (kinds: {})", kinds::names()),
                    "tag" => format!(" (tags: {})", tag_names()),
                    _ => String::new(),
                };
                return Err(src.invalid(
                    span,
                    format!("this [[check]] has no `{key}`"),
                    format!("add {example}{known}"),
                ));
            }
        }
        let mut head_table = DeTable::new();
        for key in HEAD_KEYS {
            if let Some((k, v)) = rest.remove_entry(key) {
                head_table.insert(k, v);
            }
        }
        let head: CheckHead = src.deserialize(
            toml::de::Deserializer::from(Spanned::new(span.clone(), head_table)),
            FileKind::Checks,
            &["check"],
        )?;

        let id = head.id.get_ref().clone();
        if !valid_id(&id) {
            return Err(src.invalid(
                head.id.span(),
                format!("check id {id:?} has characters other than a-z, 0-9, '-', '_', '.'"),
                "use a short slug such as \"final-json-valid\"",
            ));
        }
        let tag = Tag::parse(head.tag.get_ref()).ok_or_else(|| {
            src.invalid(
                head.tag.span(),
                format!("unknown tag {:?}", head.tag.get_ref()),
                format!("use one of: {}", tag_names()),
            )
        })?;
        let (scope, scope_span) = scope_of(src, &head, &span)?;
        let kind = head.kind.get_ref().clone();
        let build = kinds::find(&kind).ok_or_else(|| {
            src.invalid(
                head.kind.span(),
                format!("unknown check kind {kind:?}"),
                format!("use one of: {}", kinds::names()),
            )
        })?;
        let mut fields = KindFields::new(src, Spanned::new(span.clone(), rest));
        let rule = build(&mut fields)?;

        let definition = toml_to_json(&toml::Value::Table(owned.clone()));
        let mut hasher = blake3::Hasher::new();
        hasher.update(definition.to_string().as_bytes());
        if !fields.extra.is_empty() {
            // A separator that JSON text never contains keeps table and file apart.
            hasher.update(b"\0");
            hasher.update(&fields.extra);
        }
        let check = Check {
            id,
            kind,
            tag,
            description: head.description,
            scope,
            definition,
            definition_hash: hasher.finalize().to_hex().to_string(),
            line: src.line_of(span.start),
            scope_line: src.line_of(scope_span.start),
            rule,
        };
        Ok((check, head.id.span()))
    }
}

fn scope_of(
    src: &SourceText,
    head: &CheckHead,
    table_span: &std::ops::Range<usize>,
) -> Result<(Scope, std::ops::Range<usize>), ConfigError> {
    let turn_number = |value: &Spanned<i64>, key: &str| {
        usize::try_from(*value.get_ref())
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| {
                src.invalid(
                    value.span(),
                    format!("{key} = {} is not a turn number", value.get_ref()),
                    format!("turns count from 1: write {key} = 1 for the first turn"),
                )
            })
    };
    match (&head.turn, &head.from_turn) {
        (Some(_), Some(from)) => Err(src.invalid(
            from.span(),
            "a check has either `turn` or `from_turn`, not both",
            "keep `turn = N` for that turn only, or `from_turn = N` for every turn from N on",
        )),
        (Some(t), None) => Ok((Scope::Turn(turn_number(t, "turn")?), t.span())),
        (None, Some(f)) => Ok((Scope::FromTurn(turn_number(f, "from_turn")?), f.span())),
        (None, None) => Ok((Scope::Final, table_span.clone())),
    }
}

fn tag_names() -> String {
    Tag::ALL.map(Tag::as_str).join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<CheckSet, ConfigError> {
        CheckSet::from_source(&SourceText {
            path: "checks/demo.toml".into(),
            text: text.to_string(),
        })
    }

    fn error(text: &str) -> String {
        load(text).unwrap_err().to_string()
    }

    const OK: &str = r#"scenario = "demo"

[[check]]
id = "final-json"
kind = "json_valid"
tag = "json_validity"

[[check]]
id = "no-old-size"
kind = "not_contains"
tag = "superseded_instruction"
from_turn = 3
text = "page_size=20"
"#;

    #[test]
    fn loads_checks_with_scopes_and_lines() {
        let set = load(OK).unwrap();
        assert_eq!(set.scenario, "demo");
        let [a, b] = &set.checks[..] else { panic!() };
        assert_eq!(
            (a.scope, a.tag, a.line),
            (Scope::Final, Tag::JsonValidity, 3)
        );
        assert_eq!(
            (b.scope, b.tag, b.line, b.scope_line),
            (Scope::FromTurn(3), Tag::SupersededInstruction, 8, 12)
        );
        assert_eq!(b.definition["text"], "page_size=20");
    }

    #[test]
    fn hash_follows_the_definition() {
        let hash = |text: &str| load(text).unwrap().checks[1].definition_hash.clone();
        let base = hash(OK);
        assert_eq!(base.len(), 64);
        assert_eq!(
            base,
            hash(&OK.replace(
                "from_turn = 3\ntext",
                "text = \"page_size=20\"\nfrom_turn = 3\n#text"
            ))
        );
        assert_ne!(base, hash(&OK.replace("page_size=20", "page_size = 20")));
        assert_ne!(base, hash(&OK.replace("from_turn = 3", "turn = 3")));
        // Key order and comments do not matter; every value does, the id included.
        let first = |text: &str| load(text).unwrap().checks[0].definition_hash.clone();
        assert_ne!(first(OK), first(&OK.replace("final-json", "final-json-2")));
    }

    #[test]
    fn unknown_kind_lists_the_kinds() {
        let err = error(&OK.replace("\"json_valid\"", "\"json_vaild\""));
        assert!(
            err.starts_with("checks/demo.toml:5: unknown check kind \"json_vaild\""),
            "{err}"
        );
        assert!(
            err.contains("fix: use one of: json_valid, json_schema"),
            "{err}"
        );
    }

    #[test]
    fn unknown_tag_lists_the_tags() {
        let err = error(&OK.replace("\"json_validity\"", "\"validity\""));
        assert!(
            err.starts_with("checks/demo.toml:6: unknown tag \"validity\""),
            "{err}"
        );
        assert!(err.contains("retained_constraint"), "{err}");
    }

    #[test]
    fn missing_kind_points_at_the_check() {
        let err = error(&OK.replace("kind = \"json_valid\"\n", ""));
        assert!(
            err.starts_with("checks/demo.toml:3: this [[check]] has no `kind`"),
            "{err}"
        );
        assert!(
            err.contains("fix: add kind = \"json_valid\" (kinds: json_valid,"),
            "{err}"
        );
    }

    #[test]
    fn turn_and_from_turn_together_are_refused() {
        let err = error(&OK.replace("from_turn = 3", "turn = 2\nfrom_turn = 3"));
        assert!(
            err.starts_with("checks/demo.toml:13: a check has either `turn` or `from_turn`"),
            "{err}"
        );
        let err = error(&OK.replace("from_turn = 3", "from_turn = 0"));
        assert!(
            err.starts_with("checks/demo.toml:12: from_turn = 0 is not a turn number"),
            "{err}"
        );
    }

    #[test]
    fn duplicate_ids_and_wrong_file_name() {
        let err = error(&OK.replace("no-old-size", "final-json"));
        assert!(
            err.starts_with("checks/demo.toml:9: check id \"final-json\" is used twice"),
            "{err}"
        );
        let err = error(&OK.replace("scenario = \"demo\"", "scenario = \"other\""));
        assert!(
            err.starts_with("checks/demo.toml:1: scenario \"other\" differs"),
            "{err}"
        );
    }

    #[test]
    fn wrong_types_and_unknown_keys_name_their_line() {
        let err = error(&OK.replace("from_turn = 3", "from_turn = \"3\""));
        assert!(err.starts_with("checks/demo.toml:12:"), "{err}");
        let err = error(&OK.replace("from_turn = 3", "colour = 3"));
        assert!(
            err.starts_with("checks/demo.toml:12:") && err.contains("colour"),
            "{err}"
        );
        let err = error(&format!("{OK}\nextra = 1\n"));
        assert!(err.contains("extra"), "{err}");
    }

    #[test]
    fn defects_must_name_existing_checks() {
        let text = format!(
            "{OK}\n[[defect]]\nname = \"d\"\nreplace = [\"a\", \"b\"]\nfails = [\"nope\"]\n"
        );
        let err = error(&text);
        assert!(
            err.starts_with("checks/demo.toml:18: defect names check \"nope\""),
            "{err}"
        );
        let text = format!("{OK}\n[[defect]]\nname = \"d\"\nfails = []\n");
        assert!(error(&text).starts_with("checks/demo.toml:15: a defect needs exactly one of"));
    }

    #[test]
    fn schema_file_is_read_relative_and_hashed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("demo.toml");
        let text = "scenario = \"demo\"\n[[check]]\nid = \"s\"\nkind = \"json_schema\"\ntag = \"format\"\nschema_file = \"s.json\"\n";
        std::fs::write(&path, text).unwrap();
        std::fs::write(dir.path().join("s.json"), r#"{"type": "object"}"#).unwrap();
        let first = CheckSet::load(&path).unwrap().checks[0]
            .definition_hash
            .clone();
        std::fs::write(dir.path().join("s.json"), r#"{"type": "array"}"#).unwrap();
        let second = CheckSet::load(&path).unwrap();
        assert_ne!(first, second.checks[0].definition_hash);
        let verdict = second.checks[0].evaluate(&[Some("{}")]);
        assert_eq!(verdict.passed, Some(false));
    }
}
