//! `turnbench show CONVERSATION`: one stored conversation in full, as the HTML report's
//! conversation view shows it.

use anyhow::{Result, bail};

use super::Global;
use crate::exit::Exit;
use crate::export::conversation_view::text_view;

/// Show one stored conversation in full: identity, outcome, every turn (messages, answer,
/// timings, tokens, finish reason, error), its checks with their explanations and the
/// judges' scores and rationales.
///
/// Transcript text is made inert: control characters are shown, never acted on.
#[derive(clap::Args)]
pub struct ShowArgs {
    /// A conversation's uid or numeric id.
    conversation: String,
    /// text (default) or json.
    #[arg(long, short, default_value = "text")]
    format: String,
}

impl ShowArgs {
    pub fn run(self, global: &Global) -> Result<Exit> {
        if !global.db.exists() {
            bail!(
                "{}: no store here\n  fix: pass --db with the store that holds the conversation",
                global.db.display()
            );
        }
        // The command opens the store and reads the one conversation from it, as a view
        // shows it; the report's own door to the store (`report::load`) is not involved.
        let conn = crate::store::open(&global.db)?;
        let Some(c) = crate::store::detail::find(&conn, &self.conversation)? else {
            bail!(
                "no conversation {:?} in {}\n  fix: pass a conversation's uid or numeric id (the HTML report's views and `turnbench export conversations` name them)",
                self.conversation,
                global.db.display()
            );
        };
        match self.format.as_str() {
            "text" | "terminal" => print!("{}", text_view(&c)),
            "json" => println!("{}", serde_json::to_string_pretty(&c)?),
            other => bail!("--format {other}: no such format\n  fix: use text or json"),
        }
        Ok(Exit::Success)
    }
}
