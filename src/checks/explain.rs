//! `turnbench check --explain CONVERSATION`: each current check of one stored conversation,
//! its verdict and why. Stored results are shown as stored; a check without a stored
//! result yet is judged on the spot and marked so (nothing is written).

use std::fmt::Write;
use std::path::Path;

use super::definition::{CheckSet, Scope};
use super::evaluate::Answers;
use super::run::{CheckError, Tally, not_completed};
use crate::store::checks::{
    conversation_answers, find_conversation, results_of_conversation, target_names,
};

pub fn explain(db: &Path, checks_dir: &Path, key: &str) -> Result<String, CheckError> {
    if !db.exists() {
        return Err(CheckError::Setup(format!(
            "{}: no store here\n  fix: pass --db with the store that holds the conversation",
            db.display()
        )));
    }
    let conn = crate::store::open(db)?;
    let head = find_conversation(&conn, key)?.ok_or_else(|| {
        CheckError::Setup(format!(
            "no conversation {key:?} in {}\n  fix: pass a conversation's numeric id or its uid (the `id` and `uid` columns of `conversations`)",
            db.display()
        ))
    })?;
    let scenario = head.scenario.clone().ok_or_else(|| {
        CheckError::Setup(format!(
            "conversation {} has no scenario, so no checks apply\n  fix: explain a conversation collected from a scenario, or import it with one",
            head.id
        ))
    })?;
    let path = checks_dir.join(format!("{scenario}.toml"));
    if !path.is_file() {
        return Err(CheckError::Setup(format!(
            "{}: no checks file for scenario {scenario:?}\n  fix: write one, or pass --checks DIR with the folder that has it",
            path.display()
        )));
    }
    let set = CheckSet::load(&path)?;
    let stored = results_of_conversation(&conn, head.id)?;
    let target = target_names(&conn)?.remove(&head.target_id).map_or_else(
        || format!("target {}", head.target_id),
        |t| format!("{} / {} (model {})", t.provider, t.label, t.model),
    );

    let completed = head.outcome.is_completed();
    let answers = if completed {
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
                let (passed, detail) = if completed {
                    check.judge(&live)
                } else {
                    (None, not_completed(head.outcome, head.turn_count))
                };
                (passed, detail, "  (not stored yet)")
            }
        };
        tally.add(passed);
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
    let older = stored
        .iter()
        .filter(|r| {
            !set.checks
                .iter()
                .any(|c| c.id == r.check_id && c.definition_hash == r.hash)
        })
        .count();
    let _ = write!(
        out,
        "\n{} checks: {} passed, {} failed, {} not scored",
        set.checks.len(),
        tally.passed,
        tally.failed,
        tally.not_scored
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
    Ok(out)
}
