//! JSON Schema for checks, the judge's rubric schema and tests: a thin adapter over the
//! `jsonschema` crate (drafts 4 to 2020-12, chosen by `$schema`, 2020-12 when absent).
//!
//! Two choices are turnbench's, not the crate's defaults:
//! - Formats are asserted, not only annotated: a check that names `"format": "date"` means
//!   it. The asserted formats are the crate's; a format it does not know is refused when the
//!   schema is compiled, never ignored, so a typo cannot pass every answer.
//! - Nothing is fetched: the crate is built without its HTTP and file resolvers, and a
//!   `$ref` to anything outside the schema (and the bundled meta-schemas) is refused when
//!   the schema is compiled, with the fix.

use std::fmt;

use jsonschema::{Retrieve, Uri, Validator};
use serde_json::Value;

/// A compiled schema.
#[derive(Debug)]
pub struct JsonSchema {
    validator: Validator,
}

/// Why a schema does not compile, and where in it (a JSON pointer into the schema, "" for
/// the whole schema or when the crate does not say).
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaError {
    pub location: String,
    pub problem: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.location.is_empty() {
            f.write_str(&self.problem)
        } else {
            write!(f, "at #{}: {}", self.location, self.problem)
        }
    }
}

impl std::error::Error for SchemaError {}

/// One violation: the instance's JSON pointer ("" for the whole instance) and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub pointer: String,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "{pointer}: {}", self.message)
    }
}

/// The retriever the crate asks for any resource outside the schema: it refuses, naming
/// the fix, so a check never depends on a network or a file the check does not name.
struct NoRemote;

impl Retrieve for NoRemote {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!(
            "remote $ref {uri} is not fetched (schemas are never loaded over the network or \
             from other files); copy that schema into this one's \"$defs\" and refer to it as \
             \"#/$defs/name\""
        )
        .into())
    }
}

impl JsonSchema {
    /// Compiles a schema, asserting formats and refusing unknown formats and remote `$ref`s.
    pub fn compile(schema: &Value) -> Result<JsonSchema, SchemaError> {
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .should_ignore_unknown_formats(false)
            .with_retriever(NoRemote)
            .build(schema)
            .map_err(|e| SchemaError {
                location: e.instance_path().as_str().to_owned(),
                problem: e.to_string(),
            })?;
        Ok(JsonSchema { validator })
    }

    /// Whether `instance` validates; stops at the first violation.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }

    /// Every violation of `instance`, in evaluation order; empty when it validates.
    pub fn violations(&self, instance: &Value) -> Vec<Violation> {
        self.validator
            .iter_errors(instance)
            .map(|e| Violation {
                pointer: e.instance_path().as_str().to_owned(),
                message: e.to_string(),
            })
            .collect()
    }
}
