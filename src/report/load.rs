//! Reads the read model into compact, in-memory facts: conversations first (they decide
//! what is selected), then turns on one thread while check results and judgments are read
//! on another, each with its own read-only connection (WAL lets readers run side by side);
//! then, once each conversation's cell is known, the checks' turn verdicts, tallied per
//! cell × tag as they are read (never held one by one).
//!
//! Strings repeated on every row (scenarios, tags, criteria) are interned; a turn is a few
//! numbers, with NaN or `u32::MAX` for "not known" (never 0), so a million turns fit in
//! tens of megabytes.

use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use super::survival::Tally;
use crate::config::Prices;
use crate::outcome::{ConversationOutcome, TurnOutcome};
use crate::stats::{self, histogram::Histogram};
use crate::store::StoreError;
use crate::store::facts::{
    self, CheckDefinitionFact, ConversationFact, JudgmentFact, JudgmentFilter, RunFact, Selection,
    TurnFact,
};
use crate::store::repeats::{MemberTurn, Repeat, RepeatGroup, Repeats};

/// "Not reported" for a token count.
pub(super) const NO_COUNT: u32 = u32::MAX;

/// One provider × model label.
#[derive(Debug, Clone)]
pub(super) struct CellKey {
    pub provider: String,
    pub label: String,
    pub model_ids: BTreeSet<String>,
    pub simulated: bool,
}

impl Facts {
    /// A cell as every table and claim names it: `provider / label` (empty for an index
    /// out of range).
    pub(super) fn cell_name(&self, cell: usize) -> String {
        self.cells
            .get(cell)
            .map_or(String::new(), |k| format!("{} / {}", k.provider, k.label))
    }
}

#[derive(Debug, Clone)]
pub(super) struct Conv {
    pub id: i64,
    pub uid: String,
    pub cell: usize,
    pub run_id: i64,
    /// Index into [`Facts::scenarios`]; `None` for a conversation without a scenario.
    pub scenario: Option<usize>,
    pub repeat: u32,
    pub outcome: ConversationOutcome,
    /// NaN unless completed with every E2E known.
    pub latency_ms: f64,
    pub prices: Option<Prices>,
    /// Its turns are `turns[first_turn .. first_turn + n_turns]`.
    pub first_turn: usize,
    pub n_turns: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Finish {
    Stop,
    Length,
    ContentFilter,
    ToolCalls,
    Other,
    Missing,
}

impl Finish {
    fn of(reason: Option<&str>) -> Finish {
        match reason {
            None => Finish::Missing,
            Some("stop") => Finish::Stop,
            Some("length") => Finish::Length,
            Some("content_filter") => Finish::ContentFilter,
            Some("tool_calls") => Finish::ToolCalls,
            Some(_) => Finish::Other,
        }
    }

    pub fn as_str(self) -> Option<&'static str> {
        match self {
            Finish::Stop => Some("stop"),
            Finish::Length => Some("length"),
            Finish::ContentFilter => Some("content_filter"),
            Finish::ToolCalls => Some("tool_calls"),
            Finish::Other => Some("other"),
            Finish::Missing => None,
        }
    }
}

#[derive(Debug, Clone)]
pub(super) struct Turn {
    pub outcome: TurnOutcome,
    pub finish: Finish,
    pub has_answer: bool,
    pub has_reasoning: bool,
    pub attempts: u32,
    pub ttft: f64,
    pub ttfa: f64,
    pub e2e: f64,
    pub wall: f64,
    pub prompt_tokens: u32,
    pub cached_tokens: u32,
    pub completion_tokens: u32,
    pub visible_tokens: u32,
    /// Some structure check (json_validity, required_fields, format) covering this turn
    /// failed.
    pub structure_failed: bool,
    /// How many inter-token gaps it has (text-bearing SSE events − 1); [`NO_COUNT`] when
    /// not known (no offsets or no kinds stored), never an empty measurement.
    pub gap_count: u32,
    /// The 95th percentile of its own gaps, ms; NaN without a gap.
    pub itl_p95: f32,
}

#[cfg(test)]
impl Turn {
    /// A test turn that answered (`stop`, one attempt, 100 prompt tokens, nothing cached,
    /// no gaps known) with these timings and counts.
    pub fn sample(ttft: f64, e2e: f64, completion: u32, visible: u32) -> Turn {
        Turn {
            outcome: TurnOutcome::Ok,
            finish: Finish::Stop,
            has_answer: true,
            has_reasoning: false,
            attempts: 1,
            ttft,
            ttfa: ttft,
            e2e,
            wall: e2e,
            prompt_tokens: 100,
            cached_tokens: NO_COUNT,
            completion_tokens: completion,
            visible_tokens: visible,
            structure_failed: false,
            gap_count: NO_COUNT,
            itl_p95: f32::NAN,
        }
    }
}

/// What a current check definition says about the report.
#[derive(Debug, Clone)]
pub(super) struct Definition {
    pub check_id: String,
    pub tag: usize,
    /// Whether its tag demands structure (a failure makes the turn unusable).
    pub structural: bool,
    pub scope: Scope,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    Final,
    Turn(usize),
    FromTurn(usize),
}

/// Current check results of one conversation.
#[derive(Debug, Clone, Default)]
pub(super) struct ConvChecks {
    pub passed: u32,
    pub failed: u32,
    pub not_scored: u32,
    /// Definitions that failed (ids into [`CheckFacts::definitions`]).
    pub failed_defs: Vec<i64>,
    /// Per tag index: passed, failed, not scored.
    pub by_tag: Vec<[u32; 3]>,
}

#[derive(Debug, Default)]
pub(super) struct CheckFacts {
    pub definitions: HashMap<i64, Definition>,
    pub tags: Vec<String>,
    /// Scenarios with current definitions.
    pub scenarios: BTreeSet<String>,
    /// By conversation index; `None`: no current result stored.
    pub per_conv: Vec<Option<ConvChecks>>,
    /// The turn verdicts (`current_check_turn_results`) of the selected conversations,
    /// tallied per (cell, tag index) as they are read: a million-turn store holds millions
    /// of verdicts, and CONSTRAINTS ACROSS TURNS needs only these counts.
    pub turn_tallies: BTreeMap<TallyKey, Tally>,
    /// By conversation index, over all its checks: consecutive scored turns (t, t′) of one
    /// check where it held at t, and of those, where it held again at t′ (the paired
    /// retention claim, `super::headlines`).
    pub kept: Vec<Kept>,
}

/// One conversation's held-then-scored transitions and how many held again.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Kept {
    pub held_before: u32,
    pub held_again: u32,
}

/// One scored or failed judgment, interned.
#[derive(Debug, Clone)]
pub(super) struct Judgment {
    pub conv: usize,
    pub section: usize,
    pub replicate: i64,
    pub status: JudgmentStatus,
    /// (criterion index, score).
    pub scores: Vec<(usize, i64)>,
    pub completed: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JudgmentStatus {
    Ok,
    Unparseable,
    JudgeError,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct SectionKey {
    pub rubric: String,
    pub judge: String,
    pub simulated: bool,
    pub judge_model: String,
}

/// The judges' current judgments, and apart from them the human labels (judge
/// `human:<rater>`, `crate::store::labels`): people are never a judge section of the
/// JUDGE tables or the headlines; agreement reads both.
#[derive(Debug, Default)]
pub(super) struct JudgeFacts {
    pub sections: Vec<SectionKey>,
    /// Criterion names, shared by judges and people.
    pub criteria: Vec<String>,
    pub judgments: Vec<Judgment>,
    /// One per rater × rubric; a human judgment's `section` indexes this.
    pub human_sections: Vec<SectionKey>,
    pub human_judgments: Vec<Judgment>,
    /// Each rubric's score scale (`id@version` → min, max): judge means stay inside it.
    pub scales: HashMap<String, (i64, i64)>,
}

#[derive(Debug, Default)]
pub(super) struct Facts {
    pub runs: Vec<RunFact>,
    pub cells: Vec<CellKey>,
    pub scenarios: Vec<String>,
    pub convs: Vec<Conv>,
    pub turns: Vec<Turn>,
    /// Each target's cell (`targets.id`, index into `cells`).
    pub targets: Vec<(i64, usize)>,
    /// Per cell, the inter-token gaps (µs) of its completed conversations' turns, counted
    /// as they were read: memory follows the cells, not the SSE events.
    pub itl: Vec<Histogram>,
    pub checks: CheckFacts,
    pub judges: JudgeFacts,
    /// Answers stored without a visible-token count (written by other means than collect,
    /// replay or import): "missing" in the medians, never counted here.
    pub uncounted: u64,
}

/// Reads the facts; and, `with_repeats`, the repeats' members (CONSISTENCY ACROSS
/// REPEATS) with their texts' numbers, check results and turn verdicts from the same pass
/// over those tables.
pub(super) fn load(
    db: &Path,
    conn: &rusqlite::Connection,
    sel: &Selection,
    judgment_filter: &JudgmentFilter,
    with_repeats: bool,
) -> Result<(Facts, Vec<RepeatGroup>), super::ReportError> {
    let definitions = facts::check_definitions(conn)?;
    let mut checks = check_definitions(definitions);
    let (lo, hi) = facts::conversation_ids(conn, sel)?.map_or((0, -1), |r| r.into_inner());
    let mid = lo + (hi - lo) / 2;

    // Readers at once, each with its own connection (WAL lets readers run side by side):
    // the check results and the turns (the largest tables) each in two halves of the
    // conversation ids; and here the conversations (grouping the repeats as they come),
    // then the judgments. They meet by conversation id. With the repeats, the turns' texts
    // come as identities from the same pass, for every conversation with a scenario (which
    // are repeats is known only once every conversation is read). The turn verdicts are
    // read after (in two halves): beside the turns, the repeats' verdicts and texts would
    // be held at once (+48 MB at 1 M turns) for no gain in time.
    let (here, turns, low, high) = std::thread::scope(|s| {
        let checks = &checks;
        let low = s.spawn(move || read_check_results(db, checks, lo..=mid));
        let high = s.spawn(move || read_check_results(db, checks, mid + 1..=hi));
        let turns = s.spawn(move || turns_in_halves(db, sel, with_repeats, (lo, mid, hi)));
        let here = conversations_and_judgments(conn, sel, judgment_filter, with_repeats);
        let turns = turns.join().map_err(|_| panicked("turn"))??;
        let low = low.join().map_err(|_| panicked("check"))??;
        let high = high.join().map_err(|_| panicked("check"))??;
        Ok::<_, super::ReportError>((here?, turns, low, high))
    })?;
    let (mut f, index, judges, mut repeats) = here;
    checks.per_conv = vec![None; index.ids.len()];
    let mut at = 0;
    for (id, c) in low.into_iter().chain(high) {
        if let Some(conv) = index.seek(&mut at, id) {
            checks.per_conv[conv] = Some(c);
        }
    }
    let TurnsRead {
        turns,
        spans,
        uncounted,
        itl,
        texts,
    } = turns;
    let members = members_by_id(&repeats, &index);
    number_repeats(&mut repeats, &members, &texts);
    drop(texts);
    f.turns = turns;
    f.itl = vec![Histogram::new(); f.cells.len()];
    for (target, gaps) in itl {
        if let Some(&(_, cell)) = f.targets.iter().find(|(t, _)| *t == target) {
            f.itl[cell].add(&gaps);
        }
    }
    let mut at = 0;
    for (id, first, n) in spans {
        if let Some(conv) = index.seek(&mut at, id) {
            f.convs[conv].first_turn = first;
            f.convs[conv].n_turns = n;
        }
    }
    f.uncounted = uncounted;
    let mut repeated = vec![false; index.ids.len()];
    for m in &members {
        if let Some(flag) = m.position.and_then(|i| repeated.get_mut(i)) {
            *flag = true;
        }
    }
    let verdicts = tally_turn_verdicts(db, &checks, &f.convs, &index, &repeated, (lo, mid, hi))?;
    checks.turn_tallies = verdicts.tallies;
    checks.kept = verdicts.kept;
    // By conversation position, ascending, as the members come.
    let mut of_repeats = verdicts.of_repeats.into_iter().peekable();
    for member in &members {
        let (Some(i), Some(m)) = (member.position, member.of(&mut repeats)) else {
            continue;
        };
        while of_repeats.next_if(|(c, _)| *c < i).is_some() {}
        m.verdicts = of_repeats
            .next_if(|(c, _)| *c == i)
            .map(|(_, v)| v)
            .unwrap_or_default();
        m.checks = checks.per_conv[i]
            .as_ref()
            .map(|c| (c.passed, c.passed + c.failed))
            .filter(|&(_, scored)| scored > 0);
    }
    f.checks = checks;
    f.judges = judges;
    mark_structure_failures(&mut f);
    Ok((f, repeats))
}

/// A reader thread that panicked (a bug), as the report's error.
pub(super) fn panicked(what: &str) -> super::ReportError {
    super::ReportError::Thread(format!("the {what} reader panicked"))
}

/// The turns of the conversation ids `lo..=hi`, in two halves side by side; `with_texts`,
/// the texts of those with a scenario kept as identities.
fn turns_in_halves(
    db: &Path,
    sel: &Selection,
    with_texts: bool,
    (lo, mid, hi): (i64, i64, i64),
) -> Result<TurnsRead, super::ReportError> {
    let (low, high) = std::thread::scope(|s| {
        let high = s.spawn(move || read_turns(db, sel, mid + 1..=hi, with_texts));
        (read_turns(db, sel, lo..=mid, with_texts), high.join())
    });
    let high = high.map_err(|_| panicked("turn"))?;
    Ok(join_turns(low?, high?))
}

/// The selected conversations (with their cells, scenarios and prices), their groups of
/// repeats (`with_repeats`; else none) and their judgments: what the calling thread reads
/// while the others read turns and checks.
fn conversations_and_judgments(
    conn: &rusqlite::Connection,
    sel: &Selection,
    judgment_filter: &JudgmentFilter,
    with_repeats: bool,
) -> Result<(Facts, Index, JudgeFacts, Vec<RepeatGroup>), StoreError> {
    let mut f = Facts {
        runs: facts::runs(conn, sel)?,
        ..Facts::default()
    };
    // Per target, looked up once: its cell and prices.
    let mut targets: HashMap<i64, (usize, Option<Prices>)> = HashMap::new();
    let mut scenarios: HashMap<String, usize> = HashMap::new();
    let mut repeats = Repeats::default();
    facts::conversations(conn, sel, |c: &ConversationFact| {
        if with_repeats {
            repeats.add(c);
        }
        let (cell, prices) = *targets
            .entry(c.target_id)
            .or_insert_with(|| target_cell(&mut f.cells, c));
        let scenario = c.scenario.map(|s| match scenarios.get(s) {
            Some(&i) => i,
            None => {
                f.scenarios.push(s.to_string());
                scenarios.insert(s.to_string(), f.scenarios.len() - 1);
                f.scenarios.len() - 1
            }
        });
        f.convs.push(Conv {
            id: c.id,
            uid: c.uid.to_string(),
            cell,
            run_id: c.run_id,
            scenario,
            repeat: c.repeat,
            outcome: c.outcome,
            latency_ms: c.latency_ms.unwrap_or(f64::NAN),
            prices,
            first_turn: 0,
            n_turns: 0,
        });
    })?;
    f.targets = targets.iter().map(|(&t, &(cell, _))| (t, cell)).collect();
    order_cells(&mut f);
    let index = Index {
        ids: f.convs.iter().map(|c| c.id).collect(),
    };
    let judges = read_judgments(conn, judgment_filter, &index)?;
    Ok((f, index, judges, repeats.groups()))
}

/// A new target's cell (found, else added) and its prices.
fn target_cell(cells: &mut Vec<CellKey>, c: &ConversationFact) -> (usize, Option<Prices>) {
    let cell = match cells
        .iter()
        .position(|k| k.provider == c.provider && k.label == c.label)
    {
        Some(i) => i,
        None => {
            cells.push(CellKey {
                provider: c.provider.to_string(),
                label: c.label.to_string(),
                model_ids: BTreeSet::new(),
                simulated: false,
            });
            cells.len() - 1
        }
    };
    let key = &mut cells[cell];
    key.simulated |= c.simulated;
    key.model_ids.insert(c.model.to_string());
    // Stored by collect from a validated bench file; unreadable prices are no prices.
    let prices = c
        .prices
        .and_then(|p| serde_json::from_str::<Prices>(p).ok());
    (cell, prices)
}

/// Cells read by model label, then provider; conversations follow their cell.
fn order_cells(f: &mut Facts) {
    let mut order: Vec<usize> = (0..f.cells.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&f.cells[a], &f.cells[b]);
        (&x.label, &x.provider).cmp(&(&y.label, &y.provider))
    });
    let mut rank = vec![0; order.len()];
    for (new, &old) in order.iter().enumerate() {
        rank[old] = new;
    }
    for c in &mut f.convs {
        c.cell = rank[c.cell];
    }
    for (_, cell) in &mut f.targets {
        *cell = rank[*cell];
    }
    f.cells = order.iter().map(|&i| f.cells[i].clone()).collect();
}

/// A repeat of a group, where it stands: its conversation id, its group and place in it
/// (`repeats[group].members[k]`), and its position among the selected conversations.
struct Member {
    id: i64,
    group: usize,
    k: usize,
    position: Option<usize>,
}

impl Member {
    fn of<'r>(&self, repeats: &'r mut [RepeatGroup]) -> Option<&'r mut Repeat> {
        repeats.get_mut(self.group)?.members.get_mut(self.k)
    }
}

/// The repeats' members in conversation id order, matched to the conversations, their
/// verdicts and their texts by cursors that only move forward (a search per member missed
/// the cache at every step).
fn members_by_id(repeats: &[RepeatGroup], index: &Index) -> Vec<Member> {
    let mut by_id: Vec<(i64, usize, usize)> = repeats
        .iter()
        .enumerate()
        .flat_map(|(g, group)| {
            (group.members.iter().enumerate()).map(move |(k, m)| (m.conversation_id, g, k))
        })
        .collect();
    by_id.sort_unstable();
    let mut at = 0;
    by_id
        .into_iter()
        .map(|(id, group, k)| Member {
            id,
            group,
            k,
            position: index.seek(&mut at, id),
        })
        .collect()
}

/// Numbers the texts of every group of `repeats` from `texts` (by conversation id; the
/// members `by_id`: [`members_by_id`]), the groups shared out over the cores: each group
/// is numbered on its own.
fn number_repeats(repeats: &mut [RepeatGroup], by_id: &[Member], texts: &[(i64, MemberTurn)]) {
    // Each member's run of `texts` (they come by conversation id), found by walking the
    // members in id order beside them: a search per member missed the cache at every step.
    let mut spans: Vec<Vec<std::ops::Range<usize>>> = repeats
        .iter()
        .map(|g| vec![0..0; g.members.len()])
        .collect();
    let mut at = 0;
    for m in by_id {
        let Some(from) = facts::seek(texts, |t| t.0, &mut at, m.id) else {
            continue;
        };
        let n = texts.get(from..).unwrap_or_default();
        let n = n.iter().take_while(|t| t.0 == m.id).count();
        if let Some(span) = spans.get_mut(m.group).and_then(|s| s.get_mut(m.k)) {
            *span = from..from + n;
        }
    }
    repeats
        .par_iter_mut()
        .zip(spans.par_iter())
        .for_each(|(g, spans)| {
            crate::store::repeats::number_texts(g, |k| {
                let span = spans.get(k).cloned().unwrap_or_default();
                texts.get(span).unwrap_or_default().iter().map(|(_, t)| *t)
            })
        });
}

/// The turns, each conversation's (id, first turn, turn count), answers without a count,
/// and per target the inter-token gaps of its completed conversations.
struct TurnsRead {
    turns: Vec<Turn>,
    spans: Vec<(i64, usize, usize)>,
    uncounted: u64,
    itl: Vec<(i64, Histogram)>,
    /// The turns that may be repeats' (of conversations with a scenario): (conversation
    /// id, turn), in (conversation, turn) order.
    texts: Vec<(i64, MemberTurn)>,
}

/// The selected conversations' ids, ascending: rows that come by conversation are matched
/// to their conversation by a cursor that only moves forward.
pub(super) struct Index {
    ids: Vec<i64>,
}

impl Index {
    /// The position of conversation `id`, moving `at` forward to it; a row out of order
    /// falls back to a binary search. `None`: not a selected conversation.
    fn seek(&self, at: &mut usize, id: i64) -> Option<usize> {
        facts::seek(&self.ids, |&x| x, at, id).or_else(|| self.ids.binary_search(&id).ok())
    }
}

/// Every turn of the selected conversations, with each conversation's span.
/// The turns of two ranges of conversation ids, the lower first, as one read.
fn join_turns(low: TurnsRead, high: TurnsRead) -> TurnsRead {
    let TurnsRead {
        mut turns,
        mut spans,
        uncounted,
        mut itl,
        mut texts,
    } = low;
    texts.extend(high.texts);
    let offset = turns.len();
    turns.extend(high.turns);
    itl.extend(high.itl);
    spans.extend(
        high.spans
            .into_iter()
            .map(|(id, first, n)| (id, first + offset, n)),
    );
    TurnsRead {
        turns,
        spans,
        uncounted: uncounted + high.uncounted,
        itl,
        texts,
    }
}

/// A turn's gaps between consecutive text-bearing events (offsets in µs): their count and
/// 95th percentile (ms), each counted into `pooled` (µs) when it is given. `scratch` is
/// reused from turn to turn.
fn turn_gaps(
    offsets: &[u32],
    scratch: &mut Vec<f32>,
    mut pooled: Option<&mut Histogram>,
) -> (u32, f32) {
    scratch.clear();
    for w in offsets.windows(2) {
        let gap = w[1].saturating_sub(w[0]);
        if let Some(h) = pooled.as_deref_mut() {
            h.record(u64::from(gap));
        }
        scratch.push(gap as f32 / 1000.0);
    }
    let count = u32::try_from(scratch.len()).unwrap_or(u32::MAX);
    let p95 = stats::percentiles_in_place_f32(scratch, &[95.0])
        .and_then(|q| q.first().copied())
        .map_or(f32::NAN, |v| v as f32);
    (count, p95)
}

/// The turns of the conversations whose ids are in `ids` (`with_texts`: see
/// [`facts::turns`]).
fn read_turns(
    db: &Path,
    sel: &Selection,
    ids: std::ops::RangeInclusive<i64>,
    with_texts: bool,
) -> Result<TurnsRead, StoreError> {
    let conn = crate::store::open_read_only(db)?;
    let mut turns = Vec::new();
    let mut spans: Vec<(i64, usize, usize)> = Vec::new();
    let mut uncounted = 0;
    let mut itl: Vec<(i64, Histogram)> = Vec::new();
    let mut scratch = Vec::new();
    let mut texts = Vec::new();
    let count = |v: Option<i64>| v.and_then(|v| u32::try_from(v).ok()).unwrap_or(NO_COUNT);
    facts::turns(&conn, sel, ids, with_texts, |t: &TurnFact| {
        let outcome = t.outcome.unwrap_or(TurnOutcome::Ok);
        if let Some(x) = t.texts {
            texts.push((
                t.conversation_id,
                MemberTurn {
                    idx: t.idx,
                    texts: x,
                    outcome,
                    has_answer: t.has_answer,
                },
            ));
        }
        match spans.last_mut() {
            Some((id, _, n)) if *id == t.conversation_id => *n += 1,
            _ => spans.push((t.conversation_id, turns.len(), 1)),
        }
        uncounted += u64::from(t.has_answer && t.visible_tokens.is_none());
        let (gap_count, itl_p95) = match t.text_offsets_us {
            None => (NO_COUNT, f32::NAN),
            Some(offsets) => {
                let pooled = t
                    .conversation_completed
                    .then(|| target_gaps(&mut itl, t.target_id));
                turn_gaps(offsets, &mut scratch, pooled)
            }
        };
        turns.push(Turn {
            outcome,
            finish: Finish::of(t.finish_reason),
            has_answer: t.has_answer,
            has_reasoning: t.has_reasoning,
            attempts: t.attempts,
            ttft: t.ttft_ms.unwrap_or(f64::NAN),
            ttfa: t.ttfa_ms.unwrap_or(f64::NAN),
            e2e: t.e2e_ms.unwrap_or(f64::NAN),
            wall: t.wall_ms.unwrap_or(f64::NAN),
            prompt_tokens: count(t.prompt_tokens),
            cached_tokens: count(t.cached_tokens),
            completion_tokens: count(t.completion_tokens),
            visible_tokens: count(t.visible_tokens),
            structure_failed: false,
            gap_count,
            itl_p95,
        });
    })?;
    Ok(TurnsRead {
        turns,
        spans,
        uncounted,
        itl,
        texts,
    })
}

/// The gaps counted so far for `target`'s turns (a new histogram on its first). Targets are
/// few and their conversations come together: the last one is found first.
fn target_gaps(itl: &mut Vec<(i64, Histogram)>, target: i64) -> &mut Histogram {
    let at = match itl.iter().rposition(|(t, _)| *t == target) {
        Some(i) => i,
        None => {
            itl.push((target, Histogram::new()));
            itl.len() - 1
        }
    };
    &mut itl[at].1
}

/// Tags in the order reports show them; tags not listed here follow, by name.
pub const TAG_ORDER: [&str; 6] = [
    "json_validity",
    "required_fields",
    "retained_constraint",
    "superseded_instruction",
    "format",
    "custom",
];

/// Tags whose failure means the answer lacks the structure its turn demands.
const STRUCTURAL_TAGS: [&str; 3] = ["json_validity", "required_fields", "format"];

/// The current definitions, their tags and scopes; results come apart, by range.
fn check_definitions(definitions: Vec<CheckDefinitionFact>) -> CheckFacts {
    let mut out = CheckFacts::default();
    let mut tags: Vec<String> = definitions.iter().map(|d| d.tag.clone()).collect();
    tags.sort_by_key(|t| {
        (
            TAG_ORDER
                .iter()
                .position(|o| o == t)
                .unwrap_or(TAG_ORDER.len()),
            t.clone(),
        )
    });
    tags.dedup();
    for d in definitions {
        out.scenarios.insert(d.scenario.clone());
        let tag = tags.iter().position(|t| *t == d.tag).unwrap_or(0);
        out.definitions.insert(
            d.id,
            Definition {
                check_id: d.check_id,
                tag,
                structural: STRUCTURAL_TAGS.contains(&d.tag.as_str()),
                scope: scope_of(&d.definition),
            },
        );
    }
    out.tags = tags;
    out
}

/// The current check results of the conversations with ids in `ids`, each conversation's
/// tallied: (conversation id, its results), by id.
fn read_check_results(
    db: &Path,
    checks: &CheckFacts,
    ids: std::ops::RangeInclusive<i64>,
) -> Result<Vec<(i64, ConvChecks)>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let conn = crate::store::open_read_only(db)?;
    let n_tags = checks.tags.len();
    // Definitions by id in a vector: millions of results are looked up without hashing.
    let mut by_id: Vec<Option<&Definition>> = Vec::new();
    for (&id, d) in &checks.definitions {
        if let Ok(i) = usize::try_from(id) {
            if by_id.len() <= i {
                by_id.resize(i + 1, None);
            }
            by_id[i] = Some(d);
        }
    }
    let mut out: Vec<(i64, ConvChecks)> = Vec::new();
    facts::check_results(&conn, ids, |conversation_id, definition_id, passed| {
        let Some(def) = usize::try_from(definition_id)
            .ok()
            .and_then(|d| by_id.get(d).copied().flatten())
        else {
            return;
        };
        if out.last().is_none_or(|(c, _)| *c != conversation_id) {
            out.push((
                conversation_id,
                ConvChecks {
                    by_tag: vec![[0; 3]; n_tags],
                    ..ConvChecks::default()
                },
            ));
        }
        let Some((_, c)) = out.last_mut() else { return };
        let slot = match passed {
            Some(true) => {
                c.passed += 1;
                0
            }
            Some(false) => {
                c.failed += 1;
                c.failed_defs.push(definition_id);
                1
            }
            None => {
                c.not_scored += 1;
                2
            }
        };
        if let Some(t) = c.by_tag.get_mut(def.tag) {
            t[slot] += 1;
        }
    })?;
    Ok(out)
}

/// (cell, tag index): what a turn verdict is tallied under.
type TallyKey = (usize, usize);

/// (conversation id, definition id): one (conversation, check) pair as stored.
type PairId = (i64, i64);

/// A turn verdict of a repeat: (turn, definition id, passed).
type Verdict = (u32, i64, bool);

/// What the pass over the turn verdicts keeps: tallies, retention pairs, and the verdicts
/// themselves of the conversations that have repeats.
#[derive(Debug, Default)]
struct TurnVerdicts {
    tallies: BTreeMap<TallyKey, Tally>,
    kept: Vec<Kept>,
    /// By conversation index (ascending: rows come by conversation id, and the index is in
    /// id order), for the conversations marked repeated: (turn, definition id, passed), in
    /// the order read (by definition, then turn).
    of_repeats: Vec<(usize, Vec<Verdict>)>,
}

/// The turn verdicts of the selected conversations tallied per (cell, tag): two readers,
/// one per half of the conversation ids, as for the check results. Those of conversations
/// `repeated` (by index) are kept one by one too.
fn tally_turn_verdicts(
    db: &Path,
    checks: &CheckFacts,
    convs: &[Conv],
    index: &Index,
    repeated: &[bool],
    (lo, mid, hi): (i64, i64, i64),
) -> Result<TurnVerdicts, super::ReportError> {
    if checks.definitions.is_empty() || convs.is_empty() {
        return Ok(TurnVerdicts {
            kept: vec![Kept::default(); convs.len()],
            ..TurnVerdicts::default()
        });
    }
    let read = |ids| read_turn_verdicts(db, checks, convs, index, repeated, ids);
    let (low, high) = std::thread::scope(|s| {
        let low = s.spawn(move || read(lo..=mid));
        let high = s.spawn(move || read(mid + 1..=hi));
        let low = low.join().map_err(|_| panicked("turn verdict"))??;
        let high = high.join().map_err(|_| panicked("turn verdict"))??;
        Ok::<_, super::ReportError>((low, high))
    })?;
    let mut all = low;
    for (key, t) in high.tallies {
        all.tallies.entry(key).or_default().merge(&t);
    }
    for (k, h) in all.kept.iter_mut().zip(high.kept) {
        k.held_before += h.held_before;
        k.held_again += h.held_again;
    }
    all.of_repeats.extend(high.of_repeats);
    Ok(all)
}

/// The turn verdicts of the selected conversations with ids in `ids`, tallied per (cell,
/// tag index), and kept one by one for the conversations `repeated`. Rows come by
/// conversation, definition, turn: each (conversation, check) pair's verdicts are
/// consecutive and are added as one pair.
fn read_turn_verdicts(
    db: &Path,
    checks: &CheckFacts,
    convs: &[Conv],
    index: &Index,
    repeated: &[bool],
    ids: std::ops::RangeInclusive<i64>,
) -> Result<TurnVerdicts, StoreError> {
    let mut out: BTreeMap<TallyKey, Tally> = BTreeMap::new();
    let mut kept = vec![Kept::default(); convs.len()];
    let mut of_repeats: Vec<(usize, Vec<Verdict>)> = Vec::new();
    if ids.is_empty() {
        return Ok(TurnVerdicts {
            tallies: out,
            kept,
            of_repeats,
        });
    }
    let conn = crate::store::open_read_only(db)?;
    // The pair being read: (conversation id, definition id), its (conversation index,
    // (cell, tag)), its verdicts.
    let mut pair: Option<(PairId, Option<(usize, TallyKey)>)> = None;
    // The conversation index of the pair being read, when its verdicts are kept one by one.
    let mut keep: Option<usize> = None;
    let mut verdicts: Vec<(u32, bool)> = Vec::new();
    let mut at = 0;
    let mut flush = |key: Option<(usize, TallyKey)>, verdicts: &mut Vec<(u32, bool)>| {
        if let Some((conv, key)) = key {
            // add_pair leaves the verdicts in turn order.
            out.entry(key).or_default().add_pair(verdicts);
            if let Some(k) = kept.get_mut(conv) {
                for w in verdicts.windows(2) {
                    if let [(_, true), (_, again)] = w {
                        k.held_before += 1;
                        k.held_again += u32::from(*again);
                    }
                }
            }
        }
        verdicts.clear();
    };
    facts::check_turn_results(&conn, ids, |conversation, definition, turn, passed| {
        if pair.is_none_or(|(p, _)| p != (conversation, definition)) {
            if let Some((_, key)) = pair {
                flush(key, &mut verdicts);
            }
            let conv = index.seek(&mut at, conversation);
            keep = conv.filter(|&c| repeated.get(c).copied().unwrap_or(false));
            let cell = conv.and_then(|c| convs.get(c)).map(|c| c.cell);
            let tag = checks.definitions.get(&definition).map(|d| d.tag);
            let key = conv.zip(cell.zip(tag));
            pair = Some(((conversation, definition), key));
        }
        // The table allows only turns from 1 on.
        if let Ok(turn) = u32::try_from(turn) {
            verdicts.push((turn, passed));
            if let Some(c) = keep {
                match of_repeats.last_mut() {
                    Some((last, v)) if *last == c => v.push((turn, definition, passed)),
                    _ => of_repeats.push((c, vec![(turn, definition, passed)])),
                }
            }
        }
    })?;
    if let Some((_, key)) = pair {
        flush(key, &mut verdicts);
    }
    Ok(TurnVerdicts {
        tallies: out,
        kept,
        of_repeats,
    })
}

/// The scope a stored definition covers: its `turn` or `from_turn` (1-based), else the
/// final answer.
fn scope_of(definition_json: &str) -> Scope {
    let v: serde_json::Value = serde_json::from_str(definition_json).unwrap_or_default();
    let number = |key: &str| {
        v.get(key)
            .and_then(serde_json::Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| *n >= 1)
    };
    match (number("turn"), number("from_turn")) {
        (Some(t), _) => Scope::Turn(t - 1),
        (None, Some(f)) => Scope::FromTurn(f - 1),
        (None, None) => Scope::Final,
    }
}

/// A failed structure check makes the turns it covers unusable.
fn mark_structure_failures(f: &mut Facts) {
    for (conv, checks) in f.convs.iter().zip(&f.checks.per_conv) {
        let Some(checks) = checks else { continue };
        for def in checks
            .failed_defs
            .iter()
            .filter_map(|d| f.checks.definitions.get(d))
            .filter(|d| d.structural)
        {
            let last = conv.n_turns.saturating_sub(1);
            let covered = match def.scope {
                Scope::Final => last..conv.n_turns,
                Scope::Turn(t) => t..(t + 1).min(conv.n_turns),
                Scope::FromTurn(t) => t..conv.n_turns,
            };
            for t in covered {
                if let Some(turn) = f.turns.get_mut(conv.first_turn + t) {
                    turn.structure_failed = true;
                }
            }
        }
    }
}

fn read_judgments(
    conn: &rusqlite::Connection,
    filter: &JudgmentFilter,
    index: &Index,
) -> Result<JudgeFacts, StoreError> {
    let mut at = 0;
    let mut out = JudgeFacts {
        scales: facts::rubric_scales(conn)?,
        ..JudgeFacts::default()
    };
    let mut sections: HashMap<SectionKey, usize> = HashMap::new();
    let mut human_sections: HashMap<SectionKey, usize> = HashMap::new();
    let mut criteria: HashMap<String, usize> = HashMap::new();
    facts::judgments(conn, filter, |j: JudgmentFact| {
        let Some(conv) = index.seek(&mut at, j.conversation_id) else {
            return;
        };
        let human = crate::store::labels::is_human(&j.judge_id);
        let key = SectionKey {
            rubric: format!("{}@{}", j.rubric_id, j.rubric_version),
            judge: j.judge_id,
            simulated: j.simulated,
            judge_model: j.judge_model,
        };
        let (known, list) = if human {
            (&mut human_sections, &mut out.human_sections)
        } else {
            (&mut sections, &mut out.sections)
        };
        let section = *known.entry(key.clone()).or_insert_with(|| {
            list.push(key);
            list.len() - 1
        });
        let scores = j
            .scores
            .into_iter()
            .map(|(name, score)| {
                let i = *criteria.entry(name.clone()).or_insert_with(|| {
                    out.criteria.push(name);
                    out.criteria.len() - 1
                });
                (i, score)
            })
            .collect();
        let judgment = Judgment {
            conv,
            section,
            replicate: j.replicate,
            status: match j.status.as_str() {
                "ok" => JudgmentStatus::Ok,
                "unparseable" => JudgmentStatus::Unparseable,
                _ => JudgmentStatus::JudgeError,
            },
            scores,
            completed: j.completed,
        };
        if human {
            out.human_judgments.push(judgment);
        } else {
            out.judgments.push(judgment);
        }
    })?;
    Ok(out)
}

/// A turn a product could use: HTTP success, a complete stream and a non-empty answer
/// (outcome `ok`), an accepted finish reason, the structure its checks demand, and E2E
/// within the SLA when one is set.
pub(super) fn is_usable(t: &Turn, sla_ms: Option<f64>) -> bool {
    // A turn that ended in tool calls answered with them: it has no text to show.
    t.outcome == TurnOutcome::Ok
        && (t.has_answer || t.finish == Finish::ToolCalls)
        && matches!(t.finish, Finish::Stop | Finish::ToolCalls | Finish::Missing)
        && !t.structure_failed
        && sla_ms.is_none_or(|sla| t.e2e <= sla)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_come_from_the_stored_definition() {
        assert_eq!(scope_of(r#"{"id":"a","kind":"json_valid"}"#), Scope::Final);
        assert_eq!(scope_of(r#"{"turn":2}"#), Scope::Turn(1));
        assert_eq!(scope_of(r#"{"from_turn":3}"#), Scope::FromTurn(2));
        assert_eq!(scope_of("not json"), Scope::Final);
        assert_eq!(scope_of(r#"{"turn":0}"#), Scope::Final);
    }
}
