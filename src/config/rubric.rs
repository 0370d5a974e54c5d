//! Rubric files (`rubrics/*.toml`): what a blind judge scores and how.
//!
//! ```toml
//! id = "multiturn-quality"          # slug; with `version` it names the rubric in the store
//! version = 1                       # raise it whenever the content changes
//! title = "Multi-turn task quality"
//! description = "Optional text shown to the judge before the criteria."
//! scale = { min = 1, max = 5 }      # integers; every score must fall inside
//!
//! [[criterion]]
//! id = "correctness"                # the JSON key the judge answers under
//! question = "Is the final answer correct?"
//! anchors = { 1 = "Wrong.", 3 = "Partly right.", 5 = "Fully right." }
//!
//! [completed]                       # the yes/no "task completed" decision
//! question = "Could the user use the final answer as it is?"
//! ```
//!
//! The content (not the file's text) is hashed into every judgment key, so comments and
//! layout can change freely; a content change under an unchanged version is refused by the
//! store, which is how "an edited rubric is a new version" is kept.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::error::{ConfigError, SourceText};
use super::keys::FileKind;
use super::scenario::valid_id;

/// What is wrong with an answer's scores ([`Rubric::check_scores`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScoreProblem {
    #[error("criterion `{0}` is missing from `scores`")]
    MissingCriterion(String),
    #[error("`scores` has `{0}`, which is not a criterion of this rubric")]
    UnknownCriterion(String),
    #[error("score for `{criterion}` is {value}, not an integer")]
    NotInteger { criterion: String, value: String },
    #[error("score for `{criterion}` is {value}, outside {min}..{max}")]
    OutOfRange {
        criterion: String,
        value: i64,
        min: i64,
        max: i64,
    },
}

/// A validated rubric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rubric {
    pub id: String,
    pub version: u32,
    pub title: String,
    pub description: Option<String>,
    pub scale: Scale,
    pub criteria: Vec<Criterion>,
    pub completed: CompletedDecision,
}

/// Inclusive integer scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scale {
    pub min: i64,
    pub max: i64,
}

impl Scale {
    pub fn contains(&self, v: i64) -> bool {
        (self.min..=self.max).contains(&v)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Criterion {
    pub id: String,
    pub question: String,
    /// What a score means, by score; at least the scale's ends.
    pub anchors: BTreeMap<i64, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompletedDecision {
    pub question: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RubricDoc {
    id: Spanned<String>,
    version: Spanned<i64>,
    title: Option<String>,
    description: Option<String>,
    scale: Spanned<Scale>,
    #[serde(rename = "criterion")]
    criteria: Option<Spanned<Vec<CriterionDoc>>>,
    completed: Option<CompletedDecision>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CriterionDoc {
    id: Spanned<String>,
    question: Spanned<String>,
    anchors: Spanned<BTreeMap<String, String>>,
}

impl Rubric {
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::from_source(&SourceText::read(path)?)
    }

    pub fn from_source(src: &SourceText) -> Result<Self, ConfigError> {
        let doc: RubricDoc = src.parse(FileKind::Rubric)?;
        let id = doc.id.get_ref().clone();
        if !valid_id(&id) {
            return Err(src.invalid(
                doc.id.span(),
                format!("rubric id {id:?} has characters other than a-z, 0-9, '-', '_', '.'"),
                "use a short slug such as \"multiturn-quality\"",
            ));
        }
        let version = *doc.version.get_ref();
        if !(1..=i64::from(u32::MAX)).contains(&version) {
            return Err(src.invalid(
                doc.version.span(),
                format!("version {version} is not a positive integer"),
                "start at version = 1 and raise it whenever the rubric changes",
            ));
        }
        let scale = *doc.scale.get_ref();
        if scale.min >= scale.max {
            return Err(src.invalid(
                doc.scale.span(),
                format!("scale min {} is not below max {}", scale.min, scale.max),
                "write e.g. scale = { min = 1, max = 5 }",
            ));
        }
        let docs = doc.criteria.map(Spanned::into_inner).unwrap_or_default();
        if docs.is_empty() {
            return Err(ConfigError::invalid(
                &src.path,
                1,
                "a rubric needs at least one [[criterion]]",
                "add [[criterion]] tables with id, question and anchors",
            ));
        }
        let mut criteria: Vec<Criterion> = Vec::new();
        for c in docs {
            let criterion = criterion(src, c, scale, &criteria)?;
            criteria.push(criterion);
        }
        let Some(completed) = doc.completed.filter(|c| !c.question.trim().is_empty()) else {
            return Err(ConfigError::invalid(
                &src.path,
                src.text.lines().count().max(1),
                "the rubric has no [completed] question",
                "add [completed] with question = \"Was the task completed ...?\"",
            ));
        };
        Ok(Rubric {
            title: doc.title.unwrap_or_else(|| id.clone()),
            id,
            version: version as u32,
            description: doc.description.map(|d| d.trim().to_string()),
            scale,
            criteria,
            completed,
        })
    }

    /// The scores of one answer, checked against this rubric: every criterion present as an
    /// integer inside the scale, and no other key. What a judge's answer and a human label
    /// must both satisfy (`crate::judge::parse`, `crate::label`): a score is never invented,
    /// defaulted, rounded or clamped.
    pub fn check_scores(
        &self,
        scores: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<BTreeMap<String, i64>, ScoreProblem> {
        let mut parsed = BTreeMap::new();
        for c in &self.criteria {
            let v = scores
                .get(&c.id)
                .ok_or_else(|| ScoreProblem::MissingCriterion(c.id.clone()))?;
            let n = integral(v).ok_or_else(|| ScoreProblem::NotInteger {
                criterion: c.id.clone(),
                value: v.to_string(),
            })?;
            if !self.scale.contains(n) {
                return Err(ScoreProblem::OutOfRange {
                    criterion: c.id.clone(),
                    value: n,
                    min: self.scale.min,
                    max: self.scale.max,
                });
            }
            parsed.insert(c.id.clone(), n);
        }
        if let Some(extra) = scores.keys().find(|k| !parsed.contains_key(*k)) {
            return Err(ScoreProblem::UnknownCriterion(extra.clone()));
        }
        Ok(parsed)
    }

    /// A rubric from the content JSON the store keeps ([`Rubric::content_json`]); `None`
    /// when the text is not one (a store written by hand).
    pub fn from_content_json(text: &str) -> Option<Rubric> {
        let r: Rubric = serde_json::from_str(text).ok()?;
        (r.scale.min < r.scale.max && !r.criteria.is_empty()).then_some(r)
    }

    /// Canonical JSON of the content: what the store keeps and the cache key hashes.
    pub fn content_json(&self) -> String {
        serde_json::to_string(self).expect("rubric serialises")
    }

    /// blake3 of [`Rubric::content_json`], 16 hex digits.
    pub fn content_hash(&self) -> String {
        blake3::hash(self.content_json().as_bytes()).to_hex()[..16].to_string()
    }
}

fn valid_criterion_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// One criterion, checked: a plain id not used by an `earlier` one, a question, and an
/// anchor for each end of the scale (every anchor keyed by a score on it).
fn criterion(
    src: &SourceText,
    c: CriterionDoc,
    scale: Scale,
    earlier: &[Criterion],
) -> Result<Criterion, ConfigError> {
    let cid = c.id.get_ref().clone();
    if !valid_criterion_id(&cid) {
        return Err(src.invalid(
            c.id.span(),
            format!("criterion id {cid:?} is not a plain identifier"),
            "use lower-case letters, digits and '_', e.g. \"state_tracking\"",
        ));
    }
    if earlier.iter().any(|o| o.id == cid) {
        return Err(src.invalid(
            c.id.span(),
            format!("criterion {cid:?} appears twice"),
            "give every criterion its own id",
        ));
    }
    if c.question.get_ref().trim().is_empty() {
        return Err(src.invalid(
            c.question.span(),
            format!("criterion {cid:?} has an empty question"),
            "write the question the judge answers with a score",
        ));
    }
    let mut anchors = BTreeMap::new();
    for (k, text) in c.anchors.get_ref() {
        let score = k.trim().parse::<i64>().ok().filter(|s| scale.contains(*s));
        let Some(score) = score else {
            return Err(src.invalid(
                c.anchors.span(),
                format!(
                    "criterion {cid:?}: anchor {k:?} is not an integer from {} to {}",
                    scale.min, scale.max
                ),
                "key anchors by score, e.g. anchors = { 1 = \"...\", 5 = \"...\" }",
            ));
        };
        anchors.insert(score, text.trim().to_string());
    }
    for end in [scale.min, scale.max] {
        if !anchors.contains_key(&end) {
            return Err(src.invalid(
                c.anchors.span(),
                format!("criterion {cid:?} has no anchor for score {end}"),
                format!(
                    "say what {} and {} mean (and any score between)",
                    scale.min, scale.max
                ),
            ));
        }
    }
    Ok(Criterion {
        id: cid,
        question: c.question.into_inner().trim().to_string(),
        anchors,
    })
}

/// A JSON number that is an integer: `4`, and `4.0` as many OpenAI-compatible servers
/// write integral numbers (JSON itself does not tell them apart, and JSON Schema's
/// `integer` accepts both). `4.5` and the string `"4"` are not: a string is not a
/// number, and a score is never rounded.
fn integral(v: &serde_json::Value) -> Option<i64> {
    v.as_i64().or_else(|| {
        let f = v.as_f64()?;
        // Beyond 2^53 a float no longer names one integer.
        (f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0).then_some(f as i64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_integral_number_is_an_integer_and_nothing_else_is() {
        use serde_json::json;
        assert_eq!(integral(&json!(4)), Some(4));
        assert_eq!(integral(&json!(4.0)), Some(4));
        assert_eq!(integral(&json!(-2.0)), Some(-2));
        assert_eq!(integral(&json!(4.5)), None);
        assert_eq!(integral(&json!("4")), None);
        assert_eq!(integral(&json!(1e300)), None);
        assert_eq!(integral(&json!(null)), None);
    }

    fn src(text: &str) -> SourceText {
        SourceText {
            path: "rubrics/r.toml".into(),
            text: text.to_string(),
        }
    }

    const OK: &str = r#"
id = "r"
version = 2
scale = { min = 1, max = 5 }

[[criterion]]
id = "correctness"
question = "Is it right?"
anchors = { 1 = "wrong", 3 = "partly", 5 = "right" }

[[criterion]]
id = "state_tracking"
question = "Does it keep state?"
anchors = { 1 = "no", 5 = "yes" }

[completed]
question = "Done?"
"#;

    #[test]
    fn parses_criteria_anchors_and_scale() {
        let r = Rubric::from_source(&src(OK)).unwrap();
        assert_eq!(r.version, 2);
        assert_eq!(r.scale, Scale { min: 1, max: 5 });
        assert_eq!(r.criteria.len(), 2);
        assert_eq!(r.criteria[0].anchors[&3], "partly");
        assert_eq!(r.title, "r");
    }

    #[test]
    fn content_hash_ignores_comments_but_not_content() {
        let a = Rubric::from_source(&src(OK)).unwrap();
        let b = Rubric::from_source(&src(&format!("# note\n{OK}"))).unwrap();
        let c = Rubric::from_source(&src(&OK.replace("Is it right?", "Is it correct?"))).unwrap();
        assert_eq!(a.content_hash(), b.content_hash());
        assert_ne!(a.content_hash(), c.content_hash());
    }

    #[test]
    fn anchor_outside_scale_names_its_line() {
        let err = Rubric::from_source(&src(&OK.replace("3 = \"partly\"", "7 = \"partly\"")))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("rubrics/r.toml:9:"), "{err}");
        assert!(err.contains("fix:"), "{err}");
    }

    #[test]
    fn missing_end_anchor_is_rejected() {
        let err = Rubric::from_source(&src(&OK.replace(", 5 = \"yes\"", "")))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("rubrics/r.toml:14:"), "{err}");
        assert!(err.contains("score 5"), "{err}");
    }

    #[test]
    fn duplicate_criterion_and_bad_scale_are_rejected() {
        let err = Rubric::from_source(&src(&OK.replace("state_tracking", "correctness")))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("rubrics/r.toml:12:"), "{err}");
        let err = Rubric::from_source(&src(&OK.replace("max = 5", "max = 1")))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("rubrics/r.toml:4:"), "{err}");
    }

    #[test]
    fn missing_completed_question_is_rejected() {
        let text = OK.replace("[completed]\nquestion = \"Done?\"\n", "");
        let err = Rubric::from_source(&src(&text)).unwrap_err().to_string();
        assert!(err.contains("[completed]"), "{err}");
    }

    #[test]
    fn unknown_key_names_its_line() {
        let err = Rubric::from_source(&src(&OK.replace("question = \"Done?\"", "ask = 1")))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("rubrics/r.toml:17:"), "{err}");
    }
}
