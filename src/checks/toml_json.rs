//! TOML values as JSON: how checks compare expected values written in TOML with answers,
//! and how a definition's canonical text (its hash) is made.

use std::collections::BTreeMap;

/// A TOML value as JSON, with object keys sorted so that equal tables give equal text.
/// Datetimes and non-finite floats, which JSON lacks, become their TOML text.
pub(crate) fn toml_to_json(value: &toml::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        toml::Value::String(s) => J::String(s.clone()),
        toml::Value::Integer(i) => J::Number((*i).into()),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(J::Number)
            .unwrap_or_else(|| J::String(f.to_string())),
        toml::Value::Boolean(b) => J::Bool(*b),
        toml::Value::Datetime(d) => J::String(d.to_string()),
        toml::Value::Array(items) => J::Array(items.iter().map(toml_to_json).collect()),
        toml::Value::Table(table) => {
            let sorted: BTreeMap<&String, J> =
                table.iter().map(|(k, v)| (k, toml_to_json(v))).collect();
            J::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
    }
}
