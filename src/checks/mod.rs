//! Rule-based checks: `checks/<scenario-id>.toml` files, compiled once, evaluated against a
//! conversation's answers; and the `check` stage that stores a result per (conversation,
//! check definition) ([`run_checks`], [`explain`]).
//!
//! ```toml
//! scenario = "dev-cursor-pagination"   # must equal the file stem
//!
//! [[check]]
//! id = "final-json-valid"              # unique in the file; a-z 0-9 - _ .
//! kind = "json_valid"                  # one of `kind_names()`
//! tag = "json_validity"                # json_validity, required_fields, retained_constraint,
//!                                      # superseded_instruction, format, custom
//! description = "..."                  # optional
//! # scope: absent = final answer; turn = N = that turn only; from_turn = N = every turn from N
//! allow_fence = false                  # the kind's own fields
//!
//! [[defect]]                           # self-tests, see `defect`
//! name = "old-page-size-back"
//! replace = ["50", "20"]
//! fails = ["no-page-size-20"]
//! ```
//!
//! Kind fields: `json_valid` {allow_fence}; `json_schema` {schema | schema_file, allow_fence};
//! `required_fields` {pointers, non_empty, allow_fence}; `field_equals` {pointer, value,
//! allow_fence}; `field_matches` {pointer, pattern, case_sensitive, allow_fence};
//! `field_one_of` {pointer, values, allow_fence}; `contains`/`not_contains` {text (string or
//! list), case_sensitive, whole_word}; `regex`/`not_regex` {pattern, case_sensitive,
//! whole_word}; `max_words`/`max_chars`/`max_lines` {max}; `one_of` {values,
//! case_sensitive}; `starts_with`/`ends_with` {text, case_sensitive}. Text rules ignore case
//! unless `case_sensitive = true`. TOML has no null: to require a null field, use
//! `json_schema` with `{"type": "null"}`.

mod answer_json;
mod defect;
mod definition;
mod evaluate;
mod explain;
mod kinds;
pub mod schema;
mod scoring;
mod suite_lint;
mod summary;
mod toml_json;

pub use answer_json::read_json;
pub use defect::{Defect, DefectChange};
pub use definition::{Check, CheckSet, Scope, Tag};
pub use evaluate::{Answers, CheckVerdict, Judged, TurnVerdict};
pub use explain::explain;
pub use kinds::kind_names;
pub use schema::{JsonSchema, SchemaError, Violation};
pub use scoring::{CheckError, CheckOptions, CheckReport, Tally, not_completed, run_checks};
pub use suite_lint::{lint, lint_against, scope_errors};
pub use summary::{format_report, rate_cell, rate_table};
