//! `turnbench check`: every check of every stored conversation whose scenario has a checks
//! file, computed once per (conversation, check definition) and stored.
//!
//! Three kinds of thread, joined by bounded channels so memory stays flat however many
//! conversations the store holds:
//! - one reader with its own connection pages through conversations in id order (a keyset
//!   scan), reads which current results each already has, and the answers of those that
//!   still miss some;
//! - evaluators (one per core by default) judge the missing checks; each answer's JSON is
//!   parsed once for all checks of its conversation;
//! - the calling thread owns the writing connection and stores each batch of results in
//!   one transaction, so a crash or Ctrl-C loses at most the batch in flight and a re-run
//!   computes only what is missing.
//!
//! A conversation that did not complete is never passed or failed: each of its checks is
//! stored as not scored (passed NULL) with the reason.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use rusqlite::Connection;

use super::definition::{CheckSet, Tag};
use super::evaluate::{Answers, TurnVerdict};
use super::suite_lint::scope_errors;
use crate::config::{ConfigError, Scenario};
use crate::outcome::ConversationOutcome;
use crate::store::StoreError;
use crate::store::checks::{
    CheckDefinitionRecord, CheckResultRecord, CheckTurnRecord, ConversationHead, StoredVerdict,
    answers_between, conversation_heads_after, conversations_by_scenario, finish_check_run,
    finish_turn_verdicts_backfill, insert_check_results, insert_check_run,
    insert_check_turn_results, link_check_definition, results_between, target_names,
    turn_verdicts_pending, upsert_check_definition,
};

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Problems found in the checks files before anything was evaluated.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<ConfigError>),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "{}: no checks folder\n  fix: pass --checks DIR (a folder of checks files, one per scenario)",
        .0.display()
    )]
    NoChecksFolder(PathBuf),
    #[error(
        "{}: no store here\n  fix: run `turnbench collect` (or import) first, or pass --db with the store to check",
        .0.display()
    )]
    NoStore(PathBuf),
    /// `--explain` was pointed at a store that is not there.
    #[error(
        "{}: no store here\n  fix: pass --db with the store that holds the conversation",
        .0.display()
    )]
    NoStoreToExplain(PathBuf),
    #[error(
        "no conversation {key:?} in {}\n  fix: pass a conversation's numeric id or its uid (the `id` and `uid` columns of `conversations`)",
        db.display()
    )]
    NoConversation { key: String, db: PathBuf },
    #[error(
        "conversation {0} has no scenario, so no checks apply\n  fix: explain a conversation collected from a scenario, or import it with one"
    )]
    NoScenario(i64),
    #[error(
        "{}: no checks file for scenario {scenario:?}\n  fix: write one, or pass --checks DIR with the folder that has it",
        path.display()
    )]
    NoChecksFile { path: PathBuf, scenario: String },
    #[error("a check thread stopped: {0}")]
    Thread(String),
}

pub struct CheckOptions {
    pub db: PathBuf,
    pub checks_dir: PathBuf,
    /// When it is a folder, every checks file is validated against its scenario there
    /// first (a `turn` past the scenario's end could never be scored).
    pub scenarios_dir: Option<PathBuf>,
    /// Evaluator threads; 0 = one per available core.
    pub threads: usize,
    /// Conversations per page read and per batch written.
    pub page_size: usize,
    pub progress: bool,
    /// The label of this stage in a longer run (`[2/4 check]`), shown on the bar.
    pub stage: Option<String>,
}

impl CheckOptions {
    pub fn new(db: PathBuf, checks_dir: PathBuf) -> Self {
        CheckOptions {
            db,
            checks_dir,
            scenarios_dir: None,
            threads: 0,
            page_size: 256,
            progress: false,
            stage: None,
        }
    }
}

/// Results counted by verdict.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub passed: u64,
    pub failed: u64,
    pub not_scored: u64,
}

impl Tally {
    pub fn add(&mut self, passed: Option<bool>) {
        match passed {
            Some(true) => self.passed += 1,
            Some(false) => self.failed += 1,
            None => self.not_scored += 1,
        }
    }

    pub fn merge(&mut self, other: &Tally) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.not_scored += other.not_scored;
    }

    /// Passed or failed: the denominator of the pass rate.
    pub fn scored(&self) -> u64 {
        self.passed + self.failed
    }

    pub fn total(&self) -> u64 {
        self.scored() + self.not_scored
    }

    /// Passed / scored; `None` when nothing was scored.
    pub fn pass_rate(&self) -> Option<f64> {
        (self.scored() > 0).then(|| self.passed as f64 / self.scored() as f64)
    }
}

/// Current results by tag and by target id.
#[derive(Debug, Default, Clone)]
struct Tallies {
    by_tag: BTreeMap<Tag, Tally>,
    by_target: HashMap<i64, Tally>,
}

impl Tallies {
    fn add(&mut self, tag: Tag, target_id: i64, passed: Option<bool>) {
        self.by_tag.entry(tag).or_default().add(passed);
        self.by_target.entry(target_id).or_default().add(passed);
    }

    fn merge(&mut self, other: &Tallies) {
        for (tag, t) in &other.by_tag {
            self.by_tag.entry(*tag).or_default().merge(t);
        }
        for (target, t) in &other.by_target {
            self.by_target.entry(*target).or_default().merge(t);
        }
    }
}

/// What a check run did, and the pass rates of every current result in the store.
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    pub check_run_id: i64,
    /// Checks files loaded, and their checks (the current definitions).
    pub check_files: usize,
    pub definitions: usize,
    /// Stored conversations whose scenario has a checks file.
    pub conversations: u64,
    /// Of those, how many did not complete (their checks are not scored).
    pub incomplete: u64,
    /// Stored conversations whose scenario has no checks file (or no scenario).
    pub without_checks: u64,
    /// Results computed and stored by this run.
    pub evaluated: Tally,
    /// Current results found already stored.
    pub already_current: u64,
    /// Turn verdicts stored by this run: with each new result, and for results stored
    /// before turn verdicts were (`db/009_check_turns.sql`).
    pub turn_verdicts: u64,
    /// Results stored before turn verdicts were, given theirs now from the stored answers.
    pub turns_filled: u64,
    /// Such results whose answers, checked again now, give another verdict than the one
    /// stored (a kind's code changed under the same definition): left without turn
    /// verdicts rather than contradicting their stored result.
    pub turns_unfillable: u64,
    /// Stored results of definitions that are no longer current (kept, not counted).
    pub older_results: u64,
    /// Every current result (stored before or now), by tag and by target.
    pub by_tag: BTreeMap<Tag, Tally>,
    /// By (provider, label): one model served under different ids is one row.
    pub by_target: BTreeMap<(String, String), Tally>,
    pub elapsed: Duration,
}

/// A conversation that misses some current results.
struct Pending {
    id: i64,
    target_id: i64,
    set: usize,
    outcome: ConversationOutcome,
    turn_count: u32,
    /// Indexes into the set's checks.
    missing: Vec<usize>,
    /// Checks whose stored scored result lacks its turn verdicts (stored before migration
    /// 009), with that stored verdict.
    fill: Vec<(usize, bool)>,
    /// Filled only for completed conversations.
    answers: Vec<Option<String>>,
}

struct Batch {
    rows: Vec<CheckResultRecord>,
    turns: Vec<CheckTurnRecord>,
    filled: u64,
    unfillable: u64,
    tallies: Tallies,
    conversations: u64,
}

/// What the reader learned about results already stored.
#[derive(Default)]
struct ReaderTotals {
    conversations: u64,
    incomplete: u64,
    already_current: u64,
    older_results: u64,
    tallies: Tallies,
}

/// The current definition of each check: its row id, by (checks file, check index).
struct Definitions {
    ids: Vec<Vec<i64>>,
    /// Row id → (checks file, check index), for current definitions only.
    current: HashMap<i64, (usize, usize)>,
    set_of_scenario: HashMap<String, usize>,
}

/// Loads the checks files, checks every stored conversation that misses results, and
/// reports. Failed checks are results, not errors.
pub fn run_checks(opts: &CheckOptions) -> Result<CheckReport, CheckError> {
    let started = Instant::now();
    let sets = load_checks(opts)?;
    let mut conn = crate::store::open(&opts.db)?;
    let check_run_id = insert_check_run(&conn, &opts.checks_dir.display().to_string())?;
    let defs = store_definitions(&mut conn, check_run_id, &sets)?;
    let (to_check, without_checks) = count_conversations(&conn, &defs)?;
    let bar = crate::progress::bar(
        to_check,
        opts.progress,
        "conversations",
        opts.stage.as_deref(),
    );
    let fill_turns = turn_verdicts_pending(&conn)?;
    let (totals, written, mut tallies) = check_all(
        opts,
        &sets,
        &defs,
        &mut conn,
        check_run_id,
        fill_turns,
        &bar,
    )?;
    bar.finish_and_clear();
    finish_check_run(&conn, check_run_id)?;
    if fill_turns {
        finish_turn_verdicts_backfill(&conn)?;
    }
    tallies.merge(&totals.tallies);
    let by_target = by_target_name(&conn, &tallies)?;
    Ok(CheckReport {
        check_run_id,
        check_files: sets.len(),
        definitions: defs.current.len(),
        conversations: totals.conversations,
        incomplete: totals.incomplete,
        without_checks,
        evaluated: written.evaluated,
        already_current: totals.already_current,
        turn_verdicts: written.turn_verdicts,
        turns_filled: written.filled,
        turns_unfillable: written.unfillable,
        older_results: totals.older_results,
        by_tag: tallies.by_tag,
        by_target,
        elapsed: started.elapsed(),
    })
}

/// The checks files, validated against their scenarios when the scenarios are at hand;
/// and a store to check.
fn load_checks(opts: &CheckOptions) -> Result<Vec<CheckSet>, CheckError> {
    if !crate::config::embedded::is_dir(&opts.checks_dir) {
        return Err(CheckError::NoChecksFolder(opts.checks_dir.clone()));
    }
    let sets = CheckSet::load_dir(&opts.checks_dir)?;
    validate_against_scenarios(&sets, opts.scenarios_dir.as_deref())?;
    if !opts.db.exists() {
        return Err(CheckError::NoStore(opts.db.clone()));
    }
    Ok(sets)
}

/// Stored conversations whose scenario has a checks file, and those whose has none.
fn count_conversations(conn: &Connection, defs: &Definitions) -> Result<(u64, u64), CheckError> {
    let mut to_check = 0;
    let mut without_checks = 0;
    for (scenario, n) in conversations_by_scenario(conn)? {
        match scenario {
            Some(s) if defs.set_of_scenario.contains_key(&s) => to_check += n,
            _ => without_checks += n,
        }
    }
    Ok((to_check, without_checks))
}

/// What the writer stored.
#[derive(Default)]
struct Written {
    evaluated: Tally,
    turn_verdicts: u64,
    filled: u64,
    unfillable: u64,
}

/// The reader, the evaluators and the writer (this thread), joined by bounded channels;
/// the reader's totals, what was stored now, and the tallies of the results stored now.
/// With `fill_turns`, results stored before turn verdicts were get theirs too.
fn check_all(
    opts: &CheckOptions,
    sets: &[CheckSet],
    defs: &Definitions,
    conn: &mut Connection,
    check_run_id: i64,
    fill_turns: bool,
    bar: &ProgressBar,
) -> Result<(ReaderTotals, Written, Tallies), CheckError> {
    let threads = if opts.threads == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        opts.threads
    };
    let page_size = opts.page_size.max(1);
    let (page_tx, page_rx) = sync_channel::<Vec<Pending>>(threads * 2);
    let page_rx = Arc::new(Mutex::new(page_rx));
    let (batch_tx, batch_rx) = sync_channel::<Batch>(threads * 2);
    let mut written = Written::default();
    let mut tallies = Tallies::default();
    let (reader, write) = std::thread::scope(|scope| {
        let reader_bar = bar.clone();
        let reader = std::thread::Builder::new()
            .name("turnbench-check-read".into())
            .spawn_scoped(scope, move || {
                let pages = Pages {
                    sets,
                    defs,
                    page_size,
                    fill_turns,
                };
                read_pages(&opts.db, &pages, page_tx, reader_bar)
            })
            // Spawning fails only when the OS cannot create a thread at all; nothing useful can go on then.
            .expect("spawn reader");
        for _ in 0..threads {
            let page_rx = Arc::clone(&page_rx);
            let batch_tx = batch_tx.clone();
            std::thread::Builder::new()
                .name("turnbench-check-eval".into())
                .spawn_scoped(scope, move || evaluate_pages(sets, defs, page_rx, batch_tx))
                // As above: thread creation failing is an out-of-resources abort, not input.
                .expect("spawn evaluator");
        }
        // Only the evaluators hold these now: when they stop, the channels close.
        drop(page_rx);
        drop(batch_tx);
        let write = write_batches(
            conn,
            check_run_id,
            batch_rx,
            bar,
            &mut written,
            &mut tallies,
        );
        let reader = reader
            .join()
            .map_err(|_| CheckError::Thread("the store reader panicked".into()));
        (reader, write)
    });
    // The write error first: a reader stopped by a closed channel is its consequence.
    write?;
    Ok((reader??, written, tallies))
}

/// The tallies per target, by (provider, label).
fn by_target_name(
    conn: &Connection,
    tallies: &Tallies,
) -> Result<BTreeMap<(String, String), Tally>, CheckError> {
    let names = target_names(conn)?;
    let mut by_target: BTreeMap<(String, String), Tally> = BTreeMap::new();
    for (id, tally) in &tallies.by_target {
        let key = names.get(id).map_or_else(
            || (format!("target {id}"), String::new()),
            |t| (t.provider.clone(), t.label.clone()),
        );
        by_target.entry(key).or_default().merge(tally);
    }
    Ok(by_target)
}

fn validate_against_scenarios(
    sets: &[CheckSet],
    scenarios_dir: Option<&std::path::Path>,
) -> Result<(), CheckError> {
    let Some(dir) = scenarios_dir.filter(|d| crate::config::embedded::is_dir(d)) else {
        return Ok(());
    };
    let scenarios = Scenario::load_dir(dir)?;
    let errors: Vec<ConfigError> = sets
        .iter()
        .filter_map(|set| {
            let scenario = scenarios.iter().find(|s| s.id == set.scenario)?;
            Some(scope_errors(set, scenario))
        })
        .flatten()
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CheckError::Invalid(errors))
    }
}

/// Stores every current definition (new ones get a row; known ones keep theirs) and links
/// each to this check run, which makes them the current definitions of their scenarios.
fn store_definitions(
    conn: &mut Connection,
    check_run_id: i64,
    sets: &[CheckSet],
) -> Result<Definitions, StoreError> {
    let tx = conn.transaction()?;
    let mut ids = Vec::with_capacity(sets.len());
    let mut current = HashMap::new();
    let mut set_of_scenario = HashMap::new();
    for (s, set) in sets.iter().enumerate() {
        set_of_scenario.insert(set.scenario.clone(), s);
        let mut set_ids = Vec::with_capacity(set.checks.len());
        for (c, check) in set.checks.iter().enumerate() {
            let json = check.definition.to_string();
            let id = upsert_check_definition(
                &tx,
                &CheckDefinitionRecord {
                    scenario: &set.scenario,
                    check_id: &check.id,
                    hash: &check.definition_hash,
                    kind: &check.kind,
                    tag: check.tag.as_str(),
                    definition_json: &json,
                },
            )?;
            link_check_definition(&tx, check_run_id, id)?;
            set_ids.push(id);
            current.insert(id, (s, c));
        }
        ids.push(set_ids);
    }
    tx.commit()?;
    Ok(Definitions {
        ids,
        current,
        set_of_scenario,
    })
}

/// What the reader pages through, and whether it looks for results without turn verdicts.
struct Pages<'a> {
    sets: &'a [CheckSet],
    defs: &'a Definitions,
    page_size: usize,
    fill_turns: bool,
}

/// The reader: pages of conversations → what each misses → evaluators.
fn read_pages(
    db: &std::path::Path,
    pages: &Pages<'_>,
    out: SyncSender<Vec<Pending>>,
    bar: ProgressBar,
) -> Result<ReaderTotals, CheckError> {
    let Pages {
        sets,
        defs,
        page_size,
        fill_turns,
    } = *pages;
    let conn = crate::store::open(db)?;
    let mut totals = ReaderTotals::default();
    let mut heads: Vec<ConversationHead> = Vec::with_capacity(page_size);
    // Per conversation of the page: which current checks it already has, and how.
    let mut present: Vec<Vec<Present>> = Vec::with_capacity(page_size);
    let mut after = 0;
    loop {
        heads.clear();
        conversation_heads_after(&conn, after, page_size, &mut heads)?;
        let (Some(first), Some(last)) = (heads.first(), heads.last()) else {
            break;
        };
        let (first, last) = (first.id, last.id);
        after = last;
        let sets_of: Vec<Option<usize>> = heads
            .iter()
            .map(|h| {
                h.scenario
                    .as_deref()
                    .and_then(|s| defs.set_of_scenario.get(s).copied())
            })
            .collect();
        present.clear();
        present.extend(
            sets_of
                .iter()
                .map(|s| vec![Present::No; s.map_or(0, |s| sets[s].checks.len())]),
        );
        let page = Page {
            heads: &heads,
            sets_of: &sets_of,
            fill_turns,
        };
        page.note_stored(&conn, (first, last), sets, defs, &mut present, &mut totals)?;
        let mut pending = page.pending(sets, &present, &mut totals, &bar);
        read_answers(&conn, &mut pending)?;
        if !pending.is_empty() && out.send(pending).is_err() {
            // The evaluators or the writer stopped; the writer reports why.
            break;
        }
    }
    Ok(totals)
}

/// A page of conversations, each with its checks file (if its scenario has one).
struct Page<'a> {
    heads: &'a [ConversationHead],
    sets_of: &'a [Option<usize>],
    fill_turns: bool,
}

/// Whether a conversation has the current result of a check.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Present {
    No,
    Yes,
    /// Stored and scored (this verdict) but without turn verdicts: they are to be filled.
    WithoutTurns(bool),
}

impl Page<'_> {
    /// Marks the current results the page's conversations already have (and counts them
    /// in the tallies); results of older definitions are only counted.
    fn note_stored(
        &self,
        conn: &Connection,
        (first, last): (i64, i64),
        sets: &[CheckSet],
        defs: &Definitions,
        present: &mut [Vec<Present>],
        totals: &mut ReaderTotals,
    ) -> Result<(), StoreError> {
        results_between(conn, first, last, self.fill_turns, |r: StoredVerdict| {
            let Ok(i) = self
                .heads
                .binary_search_by_key(&r.conversation_id, |h| h.id)
            else {
                return;
            };
            match defs.current.get(&r.definition_id) {
                Some(&(s, c)) if self.sets_of[i] == Some(s) => {
                    present[i][c] = match r.passed {
                        Some(passed) if r.lacks_turns => Present::WithoutTurns(passed),
                        _ => Present::Yes,
                    };
                    totals.already_current += 1;
                    totals
                        .tallies
                        .add(sets[s].checks[c].tag, self.heads[i].target_id, r.passed);
                }
                _ => totals.older_results += 1,
            }
        })
    }

    /// The page's conversations that miss current checks, which ones; those missing none
    /// are done now.
    fn pending(
        &self,
        sets: &[CheckSet],
        present: &[Vec<Present>],
        totals: &mut ReaderTotals,
        bar: &ProgressBar,
    ) -> Vec<Pending> {
        let mut pending: Vec<Pending> = Vec::new();
        for (i, head) in self.heads.iter().enumerate() {
            let Some(s) = self.sets_of[i] else { continue };
            totals.conversations += 1;
            if !head.outcome.is_completed() {
                totals.incomplete += 1;
            }
            let missing: Vec<usize> = (0..sets[s].checks.len())
                .filter(|&c| present[i][c] == Present::No)
                .collect();
            let fill: Vec<(usize, bool)> = (0..sets[s].checks.len())
                .filter_map(|c| match present[i][c] {
                    Present::WithoutTurns(passed) => Some((c, passed)),
                    _ => None,
                })
                .collect();
            if missing.is_empty() && fill.is_empty() {
                bar.inc(1);
                continue;
            }
            pending.push(Pending {
                id: head.id,
                target_id: head.target_id,
                set: s,
                outcome: head.outcome,
                turn_count: head.turn_count,
                missing,
                fill,
                answers: Vec::new(),
            });
        }
        pending
    }
}

/// The answers of the pending conversations that completed (the others are not scored
/// and cost no answer reads).
fn read_answers(conn: &Connection, pending: &mut [Pending]) -> Result<(), StoreError> {
    let needs_answers = |p: &Pending| p.outcome.is_completed();
    let (Some(lo), Some(hi)) = (
        pending.iter().find(|p| needs_answers(p)).map(|p| p.id),
        pending
            .iter()
            .rev()
            .find(|p| needs_answers(p))
            .map(|p| p.id),
    ) else {
        return Ok(());
    };
    answers_between(conn, lo, hi, |conversation, idx, answer| {
        let Ok(i) = pending.binary_search_by_key(&conversation, |p| p.id) else {
            return;
        };
        let p = &mut pending[i];
        if !needs_answers(p) {
            return;
        }
        if p.answers.len() <= idx {
            p.answers.resize(idx + 1, None);
        }
        p.answers[idx] = answer.map(str::to_string);
    })
}

/// An evaluator: pages in, batches of results out.
fn evaluate_pages(
    sets: &[CheckSet],
    defs: &Definitions,
    pages: Arc<Mutex<Receiver<Vec<Pending>>>>,
    out: SyncSender<Batch>,
) {
    loop {
        let page = {
            let Ok(rx) = pages.lock() else { return };
            match rx.recv() {
                Ok(page) => page,
                Err(_) => return,
            }
        };
        let batch = evaluate_page(sets, defs, page);
        if out.send(batch).is_err() {
            return;
        }
    }
}

fn evaluate_page(sets: &[CheckSet], defs: &Definitions, page: Vec<Pending>) -> Batch {
    let rows_needed = page.iter().map(|p| p.missing.len()).sum();
    let mut batch = Batch {
        rows: Vec::with_capacity(rows_needed),
        turns: Vec::with_capacity(rows_needed),
        filled: 0,
        unfillable: 0,
        tallies: Tallies::default(),
        conversations: page.len() as u64,
    };
    for p in &page {
        let set = &sets[p.set];
        let ids = &defs.ids[p.set];
        if !p.outcome.is_completed() {
            let reason = not_completed(p.outcome, p.turn_count);
            for &c in &p.missing {
                batch.rows.push(CheckResultRecord {
                    conversation_id: p.id,
                    definition_id: ids[c],
                    passed: None,
                    detail: Some(reason.clone()),
                });
                batch.tallies.add(set.checks[c].tag, p.target_id, None);
            }
            continue;
        }
        let answers = Answers::new(p.answers.iter().map(Option::as_deref));
        for &c in &p.missing {
            let check = &set.checks[c];
            let judged = check.judge_by_turn(&answers);
            batch.tallies.add(check.tag, p.target_id, judged.passed);
            batch.push_turns(p.id, ids[c], judged.turns);
            batch.rows.push(CheckResultRecord {
                conversation_id: p.id,
                definition_id: ids[c],
                passed: judged.passed,
                detail: (!judged.detail.is_empty()).then_some(judged.detail),
            });
        }
        for &(c, stored) in &p.fill {
            let judged = set.checks[c].judge_by_turn(&answers);
            if judged.passed == Some(stored) {
                batch.filled += 1;
                batch.push_turns(p.id, ids[c], judged.turns);
            } else {
                batch.unfillable += 1;
            }
        }
    }
    batch
}

impl Batch {
    fn push_turns(&mut self, conversation_id: i64, definition_id: i64, turns: Vec<TurnVerdict>) {
        self.turns
            .extend(turns.into_iter().map(|t| CheckTurnRecord {
                conversation_id,
                definition_id,
                turn: t.turn,
                passed: t.failure.is_none(),
                detail: t.failure,
            }));
    }
}

/// Why the checks of a conversation that did not complete are not scored.
pub fn not_completed(outcome: ConversationOutcome, turns: u32) -> String {
    format!("not scored: the conversation did not complete ({outcome}; {turns} turns stored)")
}

/// The writer: one transaction per batch.
fn write_batches(
    conn: &mut Connection,
    check_run_id: i64,
    batches: Receiver<Batch>,
    bar: &ProgressBar,
    written: &mut Written,
    tallies: &mut Tallies,
) -> Result<(), CheckError> {
    for batch in batches {
        let tx = conn.transaction().map_err(StoreError::from)?;
        insert_check_results(&tx, check_run_id, &batch.rows)?;
        written.turn_verdicts += insert_check_turn_results(&tx, &batch.turns)? as u64;
        tx.commit().map_err(StoreError::from)?;
        for row in &batch.rows {
            written.evaluated.add(row.passed);
        }
        written.filled += batch.filled;
        written.unfillable += batch.unfillable;
        tallies.merge(&batch.tallies);
        bar.inc(batch.conversations);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_rates_count_only_scored_results() {
        let mut t = Tally::default();
        assert_eq!(t.pass_rate(), None);
        for p in [Some(true), Some(true), Some(false), None] {
            t.add(p);
        }
        assert_eq!((t.scored(), t.total()), (3, 4));
        assert_eq!(t.pass_rate(), Some(2.0 / 3.0));
        let mut u = Tally::default();
        u.merge(&t);
        u.merge(&t);
        assert_eq!(
            u,
            Tally {
                passed: 4,
                failed: 2,
                not_scored: 2
            }
        );
    }

    #[test]
    fn not_completed_names_the_outcome() {
        let reason = not_completed("http_5xx".parse().unwrap(), 3);
        assert!(reason.contains("did not complete (http_5xx; 3 turns stored)"));
    }
}
