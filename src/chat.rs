//! A chat message, the one shape every layer names: the client sends them, the store keeps
//! them, the mock provider and the judge read them. It sits below all of them and imports
//! nothing of the crate, so the mock need not import the store to name one.

use serde::{Deserialize, Serialize};

/// A visible chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    pub content: String,
    /// A `tool` message: the id of the call it answers, when the transcript named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn new(role: &str, content: impl Into<String>) -> Self {
        Message {
            role: role.to_string(),
            content: content.into(),
            tool_call_id: None,
        }
    }
}
