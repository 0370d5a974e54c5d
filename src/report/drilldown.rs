//! Which conversations the report shows in full (`--conversations`), and reading them.
//!
//! - `failed` (the default): every conversation that did not complete, failed a check, or
//!   got the lowest score (1) on some judge criterion, plus one passing example per cell
//!   for contrast.
//! - `all`: every selected conversation.
//! - `none`: no conversation views.
//!
//! At most `cap` conversations are shown (the failing ones first, by id); the rest are
//! counted in a note that says how to see them. The selection uses the facts already
//! loaded; only the chosen conversations are read in full (`crate::store::detail`).

use serde::Serialize;

use super::load::{Facts, JudgmentStatus};
use crate::store::StoreError;
use crate::store::detail::{self, ConversationDetail};

/// `--conversations`: which conversations get a full view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ConversationViews {
    /// Failed, failed a check, or lowest judge score; and one passing example per cell.
    #[default]
    Failed,
    /// Every selected conversation.
    All,
    /// None.
    None,
}

/// The default cap: a report of a million turns stays a few megabytes.
pub const DEFAULT_CAP: usize = 300;

/// The conversations shown in full, and what was left out.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Drilldown {
    pub mode: ConversationViews,
    pub cap: usize,
    /// Conversations the mode asks for (passing examples not counted).
    pub eligible: u64,
    /// Of those, how many have no view (over the cap).
    pub left_out: u64,
    pub views: Vec<ConversationDetail>,
}

impl Drilldown {
    /// The note a reader sees when views were left out, naming the count and the command.
    pub fn cap_note(&self) -> Option<String> {
        (self.left_out > 0).then(|| {
            format!(
                "{} of {} conversations selected by --conversations {} have no view here (the cap is {}): \
                 `turnbench show CONVERSATION` prints any one of them; narrow the report with \
                 --scenario / --provider / --model, or raise --conversations-cap",
                self.left_out,
                self.eligible,
                match self.mode {
                    ConversationViews::Failed => "failed",
                    ConversationViews::All => "all",
                    ConversationViews::None => "none",
                },
                self.cap
            )
        })
    }
}

/// Whether conversation `i` failed: did not complete, failed a check, or got a judge's
/// lowest score (1) on a criterion.
fn failing(facts: &Facts, i: usize, low: &[bool]) -> bool {
    let Some(c) = facts.convs.get(i) else {
        return false;
    };
    !c.outcome.is_completed()
        || facts
            .checks
            .per_conv
            .get(i)
            .and_then(Option::as_ref)
            .is_some_and(|k| k.failed > 0)
        || low.get(i).copied().unwrap_or(false)
}

pub(super) fn select(
    conn: &rusqlite::Connection,
    facts: &Facts,
    mode: ConversationViews,
    cap: usize,
) -> Result<Drilldown, StoreError> {
    let mut d = Drilldown {
        mode,
        cap,
        ..Drilldown::default()
    };
    if mode == ConversationViews::None {
        return Ok(d);
    }
    let mut low = vec![false; facts.convs.len()];
    for j in &facts.judges.judgments {
        if j.status == JudgmentStatus::Ok
            && j.scores.iter().any(|(_, s)| *s <= 1)
            && let Some(l) = low.get_mut(j.conv)
        {
            *l = true;
        }
    }
    let mut chosen: Vec<usize> = Vec::new();
    let mut example_of_cell = vec![false; facts.cells.len()];
    for i in 0..facts.convs.len() {
        let fails = failing(facts, i, &low);
        if mode == ConversationViews::All || fails {
            d.eligible += 1;
            if chosen.len() < cap {
                chosen.push(i);
            } else {
                d.left_out += 1;
            }
        }
    }
    if mode == ConversationViews::Failed {
        for i in 0..facts.convs.len() {
            let cell = facts.convs.get(i).map_or(usize::MAX, |c| c.cell);
            if let Some(seen) = example_of_cell.get_mut(cell)
                && !*seen
                && !failing(facts, i, &low)
            {
                *seen = true;
                chosen.push(i);
            }
        }
        chosen.sort_unstable();
    }
    for i in chosen {
        if let Some(c) = facts.convs.get(i)
            && let Some(view) = detail::conversation(conn, c.id)?
        {
            d.views.push(view);
        }
    }
    Ok(d)
}
