//! `turnbench check --explain CONVERSATION`: each current check of one stored conversation,
//! its verdict and why. Stored results are shown as stored; a check without a stored
//! result yet is judged on the spot and marked so (nothing is written).

use std::fmt::Write;
use std::path::Path;

use super::definition::{Check, CheckSet, Scope};
use super::evaluate::Answers;
use super::scoring::{CheckError, Tally, not_completed};
use crate::store::checks::{
    ConversationHead, conversation_answers, find_conversation, results_of_conversation,
    target_names,
};

pub fn explain(db: &Path, checks_dir: &Path, key: &str) -> Result<String, CheckError> {
    if !db.exists() {
        return Err(CheckError::NoStoreToExplain(db.to_path_buf()));
    }
    let conn = crate::store::open(db)?;
    let head = find_conversation(&conn, key)?.ok_or_else(|| CheckError::NoConversation {
        key: key.to_string(),
        db: db.to_path_buf(),
    })?;
    let scenario = head
        .scenario
        .clone()
        .ok_or(CheckError::NoScenario(head.id))?;
    let path = checks_dir.join(format!("{scenario}.toml"));
    if !path.is_file() {
        return Err(CheckError::NoChecksFile { path, scenario });
    }
    let set = CheckSet::load(&path)?;
    let stored = results_of_conversation(&conn, head.id)?;
    let target = target_names(&conn)?.remove(&head.target_id).map_or_else(
        || format!("target {}", head.target_id),
        |t| format!("{} / {} (model {})", t.provider, t.label, t.model),
    );
    let answers = if head.outcome.is_completed() {
        conversation_answers(&conn, head.id)?
    } else {
        Vec::new()
    };
    let live = Answers::new(answers.iter().map(Option::as_deref));

    let mut out = String::new();
    let _ = writeln!(out, "conversation {}  uid {}", head.id, head.uid);
    let _ = writeln!(out, "target      {target}");
    let _ = writeln!(
        out,
        "scenario    {scenario}, repeat {}: {}, {} turns",
        head.repeat, head.outcome, head.turn_count
    );
    let _ = writeln!(
        out,
        "checks      {}, {} current definitions\n",
        path.display(),
        set.checks.len()
    );
    let id_width = set.checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
    let mut tally = Tally::default();
    let mut unstored = 0;
    for check in &set.checks {
        let found = stored
            .iter()
            .rev()
            .find(|r| r.check_id == check.id && r.hash == check.definition_hash);
        let (passed, detail, note) = match found {
            Some(r) => (r.passed, r.detail.clone().unwrap_or_default(), ""),
            None => {
                unstored += 1;
                let (passed, detail) = judge_now(check, &head, &live);
                (passed, detail, "  (not stored yet)")
            }
        };
        tally.add(passed);
        write_check(&mut out, check, passed, &detail, note, id_width);
    }
    let older = stored
        .iter()
        .filter(|r| {
            !set.checks
                .iter()
                .any(|c| c.id == r.check_id && c.definition_hash == r.hash)
        })
        .count();
    write_totals(&mut out, set.checks.len(), &tally, unstored, older);
    Ok(out)
}

/// A check with no stored result, judged now: on the answers of a completed
/// conversation, else not scored with the reason.
fn judge_now(check: &Check, head: &ConversationHead, live: &Answers) -> (Option<bool>, String) {
    if head.outcome.is_completed() {
        check.judge(live)
    } else {
        (None, not_completed(head.outcome, head.turn_count))
    }
}

/// One check's line (verdict, id, tag, scope) and, unless it passed, why: a line per
/// failing turn and what was expected.
fn write_check(
    out: &mut String,
    check: &Check,
    passed: Option<bool>,
    detail: &str,
    note: &str,
    id_width: usize,
) {
    let verdict = match passed {
        Some(true) => "pass",
        Some(false) => "FAIL",
        None => "not scored",
    };
    let scope = match check.scope {
        Scope::Final => "final answer".to_string(),
        Scope::Turn(n) => format!("turn {n}"),
        Scope::FromTurn(n) => format!("from turn {n}"),
    };
    let _ = writeln!(
        out,
        "  {verdict:<10}  {:<id_width$}  {:<22}  {scope}{note}",
        check.id,
        check.tag.as_str()
    );
    if passed != Some(true) {
        // One line per failing turn (a from_turn check joins them with "; turn ").
        for (i, line) in detail.split("; turn ").enumerate() {
            let lead = if i == 0 { "" } else { "turn " };
            let _ = writeln!(out, "  {:<10}  {lead}{line}", "");
        }
        if let (Some(false), Some(description)) = (passed, &check.description) {
            let _ = writeln!(out, "  {:<10}  expected: {description}", "");
        }
    }
}

/// The closing line: the tally, what was judged now, and older results left out.
fn write_totals(out: &mut String, checks: usize, tally: &Tally, unstored: usize, older: usize) {
    let _ = write!(
        out,
        "\n{checks} checks: {} passed, {} failed, {} not scored",
        tally.passed, tally.failed, tally.not_scored
    );
    if unstored > 0 {
        let _ = write!(
            out,
            "; {unstored} judged now, not stored (run `turnbench check` to store them)"
        );
    }
    if older > 0 {
        let _ = write!(
            out,
            "; {older} stored results of older definitions not shown"
        );
    }
    out.push('\n');
}
