//! The built-in mock's forgetful provider (`sim-burst`, src/mock/forget.rs) collected over a
//! scripted scenario and checked through the CLI: the detail stated at turn 2 is lost more
//! often at later turns than at turn 2, and once lost it tends to stay lost. Counts come
//! from the store's turn verdicts (`current_check_turn_results`).

use std::collections::BTreeMap;

use crate::common::*;
use turnbench::mock::MockConfig;

const SCENARIO: &str = r#"id = "ticket"
category = "developer"
system = "Keep the ticket code in every answer."

[[turn]]
user = "Open a ticket for the outage."
reference = "Ticket opened."

[[turn]]
user = "Its code is ZX-42: mention it in every answer from now on."
reference = "Noted, ZX-42."

[[turn]]
user = "Who owns it?"
reference = "ZX-42 is owned by the platform team."

[[turn]]
user = "What is its priority?"
reference = "ZX-42 is P1."

[[turn]]
user = "When is it due?"
reference = "ZX-42 is due Friday."

[[turn]]
user = "Summarise it."
reference = "ZX-42: P1, platform team, due Friday."
"#;

const CHECKS: &str = r#"scenario = "ticket"

[[check]]
id = "code-kept"
kind = "contains"
tag = "retained_constraint"
from_turn = 2
text = "ZX-42"
"#;

#[test]
fn the_forgetful_provider_loses_a_detail_more_often_at_later_turns_and_keeps_it_lost() {
    let project = Project::new(&[("ticket", SCENARIO)]);
    std::fs::create_dir_all(project.path("checks")).unwrap();
    project.write("checks/ticket.toml", CHECKS);
    let mut config = MockConfig::builtin();
    config.time_scale = 0.0;
    config.profiles.retain(|p| p.model == "sim-burst");
    let mock = Mock::start(config, Some(&project.path("scenarios")));
    let bench = format!(
        "name = \"forget\"\nseed = 3\nrepeats = 60\npause_scale = 0\n{}",
        target("sim-burst", "sim-burst", &mock.url(), "")
    );
    let bench_path = project.write("bench.toml", &bench);
    project.run_ok(&["collect", "-q", "--config", bench_path.to_str().unwrap()]);
    project.run_ok(&["check", "-q"]);

    let conn = project.conn();
    let verdicts: Vec<(i64, i64, bool)> = rows(
        &conn,
        "SELECT conversation_id, turn, passed FROM current_check_turn_results
         WHERE check_id = 'code-kept' ORDER BY conversation_id, turn",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    );
    let completed = count(
        &conn,
        "SELECT COUNT(*) FROM conversations WHERE outcome = 'completed'",
    );
    assert!(completed >= 50, "{completed} completed");
    let mut lost: BTreeMap<i64, usize> = BTreeMap::new();
    let mut scored: BTreeMap<i64, usize> = BTreeMap::new();
    // Consecutive turns of one conversation: (lost at t, lost at t + 1).
    let (mut held_then, mut held_then_lost, mut lost_then, mut lost_then_lost) = (0, 0, 0, 0);
    for (i, &(conversation, turn, passed)) in verdicts.iter().enumerate() {
        *scored.entry(turn).or_default() += 1;
        *lost.entry(turn).or_default() += usize::from(!passed);
        if let Some(&(c, t, next)) = verdicts.get(i + 1)
            && c == conversation
            && t == turn + 1
        {
            if passed {
                held_then += 1;
                held_then_lost += usize::from(!next);
            } else {
                lost_then += 1;
                lost_then_lost += usize::from(!next);
            }
        }
    }
    assert_eq!(
        scored.keys().copied().collect::<Vec<_>>(),
        [2, 3, 4, 5, 6],
        "the check is scored at turns 2 to 6"
    );
    for t in [2, 3, 4, 5, 6] {
        assert_eq!(scored[&t] as i64, completed, "turn {t}");
    }
    let at = |t: i64| lost[&t];
    assert!(
        at(4) > at(2) && at(5) > at(2) && at(6) > at(2),
        "lost by turn: {lost:?}"
    );
    assert!(at(6) > 2 * at(2).max(1), "lost by turn: {lost:?}");
    // The conversation views mark the turn where the check first failed: `show` (text and
    // JSON) and the HTML report's view of a conversation that lost the detail.
    let (uid, first): (String, i64) = conn
        .query_row(
            "SELECT c.uid, MIN(v.turn) FROM current_check_turn_results v
             JOIN conversations c ON c.id = v.conversation_id
             WHERE v.check_id = 'code-kept' AND v.passed = 0
             GROUP BY c.id ORDER BY MIN(v.turn) DESC, c.id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let (text, _) = project.run_ok(&["show", &uid]);
    assert!(
        text.contains(&format!(
            "code-kept  retained_constraint  first failed at turn {first}"
        )),
        "{text}"
    );
    let at = text.find(&format!("\nturn {first}\n")).unwrap();
    assert!(
        text[..at].matches("first failed here").count() == 0,
        "{text}"
    );
    assert!(
        text[at..].contains("first failed here: code-kept"),
        "{text}"
    );
    let (json, _) = project.run_ok(&["show", &uid, "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["checks"][0]["first_failed_turn"], first);
    let (html, _) = project.run_ok(&["report", "--format", "html", "--conversations", "all"]);
    assert!(
        html.contains(&format!("-t{first}\">turn {first}</a>")),
        "the checks list links the turn"
    );
    assert!(html.contains("first failed here: code-kept"));

    // Once lost, it stays lost more often than a held detail gets lost.
    assert!(lost_then > 0 && held_then > 0);
    let stays = lost_then_lost as f64 / lost_then as f64;
    let goes = held_then_lost as f64 / held_then as f64;
    assert!(
        stays > 0.5 && stays > 2.0 * goes,
        "stays lost {lost_then_lost}/{lost_then}, gets lost {held_then_lost}/{held_then}"
    );
}
