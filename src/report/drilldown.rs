//! Which conversations the report shows in full (`--conversations`), and reading them.
//!
//! - `failed` (the default): every conversation that did not complete, failed a check, or
//!   scored in the lowest band of some judge criterion, plus one passing example per cell
//!   for contrast. The lowest band comes from the rubric's scale (see [`lowest_band`]): the
//!   minimum on scales of up to five steps (≤ 1 on 1–5), the bottom fifth on wider ones.
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
    /// Failed, failed a check, or in a judge criterion's lowest band (from its rubric's
    /// scale); and one passing example per cell.
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
    /// The conversations behind the rows of the report's tables (a failure class, a judge
    /// criterion's lowest band), per cell: which have a view in this file, how many not.
    pub behind: Vec<Behind>,
}

/// The conversations behind one row of a report table.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Behind {
    /// Which table: `None` the failure classes (RELIABILITY); `Some` the judge section of
    /// a criterion's lowest band.
    pub judge: Option<BehindJudge>,
    /// The cell, `provider / label`.
    pub cell: String,
    /// The failure class, or the criterion.
    pub what: String,
    /// For a criterion: the lowest band's upper bound (a score at or below it).
    pub band: Option<i64>,
    /// Conversations in the report behind the row.
    pub total: u64,
    /// Those with a view in this file: (uid, `scenario #repeat`).
    pub shown: Vec<(String, String)>,
}

/// A judge section, as the JUDGE table names it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct BehindJudge {
    /// `id@version`.
    pub rubric: String,
    pub judge: String,
    pub judge_model: String,
    pub simulated: bool,
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

/// When a rubric's scale is not stored (it always is): 1, the usual minimum.
const LOWEST_BAND: i64 = 1;

/// The lowest band of a scale `min..=max`: a score at or below `min + (max − min) / 5`
/// (rounded down). The minimum alone on scales of up to five steps (1–5, 0–4, 1–3); the
/// bottom fifth of the span on wider ones (≤ 2 on 0–10 and 1–10, ≤ 20 on 0–100).
pub fn lowest_band(min: i64, max: i64) -> i64 {
    min + (max.saturating_sub(min)).max(0) / 5
}

/// Each judge section's lowest band, from its rubric's stored scale.
fn bands(conn: &rusqlite::Connection, facts: &Facts) -> Result<Vec<i64>, StoreError> {
    let scales = detail::rubric_scales(conn)?;
    Ok(facts
        .judges
        .sections
        .iter()
        .map(|s| {
            scales
                .get(&s.rubric)
                .map_or(LOWEST_BAND, |&(min, max)| lowest_band(min, max))
        })
        .collect())
}

/// Whether conversation `i` failed: did not complete, failed a check, or scored in the
/// lowest band of a judge criterion.
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

/// What the drill-down reads from the store: each judge section's lowest band, the views
/// of the conversations chosen (chosen from the facts already loaded) and which those are.
#[derive(Debug, Default)]
pub(super) struct DrilldownRead {
    mode: ConversationViews,
    cap: usize,
    eligible: u64,
    left_out: u64,
    bands: Vec<i64>,
    views: Vec<ConversationDetail>,
    /// By conversation index: has a view.
    shown: Vec<bool>,
}

/// Chooses the conversations to show from the loaded facts and reads them in full.
pub(super) fn read(
    conn: &rusqlite::Connection,
    facts: &Facts,
    mode: ConversationViews,
    cap: usize,
) -> Result<DrilldownRead, StoreError> {
    let mut d = DrilldownRead {
        mode,
        cap,
        ..DrilldownRead::default()
    };
    if mode == ConversationViews::None {
        return Ok(d);
    }
    d.bands = bands(conn, facts)?;
    let band = |section: usize| d.bands.get(section).copied().unwrap_or(LOWEST_BAND);
    let mut low = vec![false; facts.convs.len()];
    for j in &facts.judges.judgments {
        if j.status == JudgmentStatus::Ok
            && j.scores.iter().any(|(_, s)| *s <= band(j.section))
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
    d.shown = vec![false; facts.convs.len()];
    for i in chosen {
        if let Some(c) = facts.convs.get(i)
            && let Some(view) = detail::conversation(conn, c.id)?
        {
            d.views.push(view);
            if let Some(s) = d.shown.get_mut(i) {
                *s = true;
            }
        }
    }
    Ok(d)
}

/// The drill-down from what was read: the views, and the conversations behind each row.
pub(super) fn select(facts: &Facts, read: DrilldownRead) -> Drilldown {
    let behind = if read.mode == ConversationViews::None {
        Vec::new()
    } else {
        let band = |section: usize| read.bands.get(section).copied().unwrap_or(LOWEST_BAND);
        behind(facts, &read.shown, &band)
    };
    Drilldown {
        mode: read.mode,
        cap: read.cap,
        eligible: read.eligible,
        left_out: read.left_out,
        views: read.views,
        behind,
    }
}

/// The conversations behind each failure class and each criterion's lowest band, per
/// cell, in the order of the tables (cells; sections, criteria, cells).
fn behind(facts: &Facts, shown: &[bool], band: &dyn Fn(usize) -> i64) -> Vec<Behind> {
    use std::collections::BTreeMap;
    let cell_name = |cell: usize| facts.cell_name(cell);
    let count = |b: &mut Behind, i: usize| {
        b.total += 1;
        if shown.get(i).copied().unwrap_or(false)
            && let Some(c) = facts.convs.get(i)
        {
            let scenario = c
                .scenario
                .and_then(|k| facts.scenarios.get(k))
                .map_or("no scenario", String::as_str);
            b.shown
                .push((c.uid.clone(), format!("{scenario} #{}", c.repeat)));
        }
    };
    let mut failures: BTreeMap<(usize, &str), Behind> = BTreeMap::new();
    for (i, c) in facts.convs.iter().enumerate() {
        // As the RELIABILITY table counts them: turnbench's own failures are in no class.
        if let Some(class) = c
            .outcome
            .failure()
            .filter(|&f| f != crate::outcome::TurnOutcome::InternalError)
        {
            let b = failures
                .entry((c.cell, class.as_str()))
                .or_insert_with(|| Behind {
                    cell: cell_name(c.cell),
                    what: class.as_str().to_string(),
                    ..Behind::default()
                });
            count(b, i);
        }
    }
    let mut low: BTreeMap<(usize, usize, usize), Behind> = BTreeMap::new();
    let mut seen: std::collections::HashSet<(usize, usize, usize)> = Default::default();
    for j in &facts.judges.judgments {
        if j.status != JudgmentStatus::Ok {
            continue;
        }
        let Some(c) = facts.convs.get(j.conv) else {
            continue;
        };
        for &(criterion, score) in &j.scores {
            // One count per conversation, whatever its replicates.
            if score > band(j.section) || !seen.insert((j.section, criterion, j.conv)) {
                continue;
            }
            let b = low
                .entry((j.section, criterion, c.cell))
                .or_insert_with(|| Behind {
                    judge: facts.judges.sections.get(j.section).map(|k| BehindJudge {
                        rubric: k.rubric.clone(),
                        judge: k.judge.clone(),
                        judge_model: k.judge_model.clone(),
                        simulated: k.simulated,
                    }),
                    cell: cell_name(c.cell),
                    what: facts
                        .judges
                        .criteria
                        .get(criterion)
                        .cloned()
                        .unwrap_or_default(),
                    band: Some(band(j.section)),
                    ..Behind::default()
                });
            count(b, j.conv);
        }
    }
    failures.into_values().chain(low.into_values()).collect()
}

#[cfg(test)]
mod tests {
    use super::lowest_band;

    #[test]
    fn the_lowest_band_is_the_minimum_on_narrow_scales_and_the_bottom_fifth_on_wide_ones() {
        assert_eq!(lowest_band(1, 5), 1);
        assert_eq!(lowest_band(0, 4), 0);
        assert_eq!(lowest_band(1, 3), 1);
        assert_eq!(lowest_band(0, 10), 2);
        assert_eq!(lowest_band(1, 10), 2);
        assert_eq!(lowest_band(0, 100), 20);
        assert_eq!(lowest_band(-2, 2), -2);
        assert_eq!(lowest_band(3, 3), 3);
    }
}
