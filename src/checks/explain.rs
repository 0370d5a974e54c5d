//! `turnbench check --explain CONVERSATION`: each current check of one stored conversation,
//! its verdict and why. Stored results are shown as stored; a check without a stored
//! result yet is judged on the spot and marked so (nothing is written).

use std::fmt::Write;
use std::path::Path;

use super::definition::{Check, CheckSet, Scope};
use super::evaluate::{Answers, TurnVerdict};
use super::scoring::{CheckError, Tally, not_completed};
use crate::store::checks::{
    ConversationHead, conversation_answers, find_conversation, results_of_conversation,
    target_names, turn_results_of_conversation,
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
    let stored_turns = turn_results_of_conversation(&conn, head.id)?;
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
        let (passed, detail, turns, note) = match found {
            Some(r) => {
                let turns = stored_turns
                    .iter()
                    .filter(|t| t.check_id == check.id && t.hash == check.definition_hash)
                    .map(|t| TurnVerdict {
                        turn: t.turn,
                        failure: (!t.passed).then(|| t.detail.clone().unwrap_or_default()),
                    })
                    .collect();
                (r.passed, r.detail.clone().unwrap_or_default(), turns, "")
            }
            None => {
                unstored += 1;
                let (passed, detail, turns) = judge_now(check, &head, &live);
                (passed, detail, turns, "  (not stored yet)")
            }
        };
        tally.add(passed);
        write_check(&mut out, check, passed, &detail, note, id_width);
        if let Some(line) = turn_line(&turns) {
            let _ = writeln!(out, "  {:<10}  {line}", "");
        }
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
fn judge_now(
    check: &Check,
    head: &ConversationHead,
    live: &Answers,
) -> (Option<bool>, String, Vec<TurnVerdict>) {
    if head.outcome.is_completed() {
        let judged = check.judge_by_turn(live);
        (judged.passed, judged.detail, judged.turns)
    } else {
        (
            None,
            not_completed(head.outcome, head.turn_count),
            Vec::new(),
        )
    }
}

/// A check that read more than one answer, turn by turn: `turns 2 pass · 3 FAIL · 4 pass`,
/// then when it was first lost and whether it came back (`first failed at turn 3, held
/// again at turn 4`). `None` for a check of one answer (its verdict line says it all).
fn turn_line(turns: &[TurnVerdict]) -> Option<String> {
    if turns.len() < 2 {
        return None;
    }
    let verdicts: Vec<String> = turns
        .iter()
        .map(|t| format!("{} {}", t.turn, if t.passed() { "pass" } else { "FAIL" }))
        .collect();
    let mut line = format!("turns {}", verdicts.join(" · "));
    if let Some(first) = turns.iter().position(|t| !t.passed()) {
        let _ = write!(line, ": first failed at turn {}", turns[first].turn);
        if let Some(back) = turns[first..].iter().find(|t| t.passed()) {
            let _ = write!(line, ", held again at turn {}", back.turn);
        }
    }
    Some(line)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(pattern: &[(u32, bool)]) -> Vec<TurnVerdict> {
        pattern
            .iter()
            .map(|&(turn, passed)| TurnVerdict {
                turn,
                failure: (!passed).then(|| "why".to_string()),
            })
            .collect()
    }

    #[test]
    fn the_turn_line_names_where_a_check_was_lost_and_regained() {
        assert_eq!(turn_line(&verdicts(&[(5, false)])), None);
        assert_eq!(
            turn_line(&verdicts(&[(2, true), (3, true), (4, true)])).as_deref(),
            Some("turns 2 pass · 3 pass · 4 pass")
        );
        assert_eq!(
            turn_line(&verdicts(&[(2, true), (3, false), (4, true), (5, false)])).as_deref(),
            Some(
                "turns 2 pass · 3 FAIL · 4 pass · 5 FAIL: first failed at turn 3, held again at turn 4"
            )
        );
        assert_eq!(
            turn_line(&verdicts(&[(2, true), (3, false), (4, false)])).as_deref(),
            Some("turns 2 pass · 3 FAIL · 4 FAIL: first failed at turn 3")
        );
    }
}
