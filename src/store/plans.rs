//! The query plans of the report's reads (docs/store.md, "Query plans"): each pass over a
//! big table is one the figures need, and everything else is found by key. turnbench never
//! runs ANALYZE, so SQLite plans from the schema alone: an empty store's plan is a big one's.

use rusqlite::{Connection, Params};

use super::facts::{self, FactFilter, Selection};

fn plan(conn: &Connection, sql: &str, params: impl Params) -> Vec<String> {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    stmt.query_map(params, |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The plan's full passes over a table (`SCAN x`, not `SCAN x USING … INDEX`'s cousins).
/// `SCAN json_each`, the list of run ids a window selects (`--since`, `--runs`, a
/// baseline), is a list subquery read once, like `SCAN runs`, and is asserted apart.
fn scans(plan: &[String]) -> Vec<&str> {
    plan.iter()
        .map(|l| l.as_str())
        .filter(|l| l.starts_with("SCAN ") && !l.starts_with("SCAN json_each VIRTUAL TABLE"))
        .collect()
}

/// Whether the run-id list is read as a list subquery (once), not per row.
fn run_ids_listed_once(plan: &[String]) -> bool {
    plan.iter().any(|l| l.starts_with("LIST SUBQUERY"))
        && plan
            .iter()
            .filter(|l| l.starts_with("SCAN json_each"))
            .count()
            == 1
}

fn store() -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let conn = super::open(&dir.path().join("t.db")).unwrap();
    (dir, conn)
}

#[test]
fn the_report_passes_once_over_turns_and_conversations_and_finds_the_rest_by_key() {
    let (_dir, conn) = store();
    let sel = Selection::resolve(&conn, &FactFilter::default()).unwrap();
    let params = sel.params();
    // `SCAN runs`: the list of runs named by `--run NAME`, evaluated once.
    let mut ranged: Vec<(&str, &dyn rusqlite::ToSql)> = params.to_vec();
    ranged.push((":lo", &1));
    ranged.push((":hi", &100));
    // The turns of a range of conversations: a range of the primary key of `turns`, in its
    // order, with or without their texts (the repeats' identities come from the same
    // pass), never a lookup of each turn's conversation (migration 016)...
    let range: [(&str, &dyn rusqlite::ToSql); 2] = [(":lo", &1), (":hi", &100)];
    for texts in [false, true] {
        let turns = plan(&conn, &facts::turns_sql(texts), &range[..]);
        assert_eq!(scans(&turns), Vec::<&str>::new(), "{turns:#?}");
        assert!(
            turns.iter().any(|l| l.starts_with(
                "SEARCH turns USING PRIMARY KEY (conversation_id>? AND conversation_id<?)"
            )),
            "{turns:#?}"
        );
        assert!(!sorted(&turns), "{turns:#?}");
        assert!(!turns.iter().any(|l| l.contains("SEARCH c ")), "{turns:#?}");
    }
    // ... whose conversations come from a range of theirs, selected once.
    let whose = plan(&conn, &facts::turn_conversations_sql(), &ranged[..]);
    assert_eq!(scans(&whose), ["SCAN runs"], "{whose:#?}");
    assert!(run_ids_listed_once(&whose), "{whose:#?}");
    assert!(
        whose
            .iter()
            .any(|l| l.starts_with("SEARCH c USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)")),
        "{whose:#?}"
    );
    assert!(!sorted(&whose), "{whose:#?}");
    let conversations = plan(&conn, &facts::conversations_sql(), &params[..]);
    assert_eq!(
        scans(&conversations),
        ["SCAN c", "SCAN runs"],
        "{conversations:#?}"
    );
    assert!(run_ids_listed_once(&conversations), "{conversations:#?}");
    let runs = plan(&conn, &facts::runs_sql(), &params[..]);
    assert!(!scans(&runs).contains(&"SCAN c"), "{runs:#?}");
    assert!(
        runs.iter()
            .any(|l| l.contains("USING INDEX conversations_run (run_id=?)")),
        "{runs:#?}"
    );
}

#[test]
fn check_results_are_read_by_a_range_of_their_key() {
    let (_dir, conn) = store();
    let results = plan(&conn, facts::CHECK_RESULTS_SQL, [1, 100]);
    assert!(!scans(&results).contains(&"SCAN r"), "{results:#?}");
    assert!(
        results.iter().any(|l| l
            .starts_with("SEARCH r USING PRIMARY KEY (conversation_id>? AND conversation_id<?)")),
        "{results:#?}"
    );
    assert!(!sorted(&results), "{results:#?}");
}

/// Whether rows are sorted after they are read: the key's order is the order asked for.
/// (The current definitions' grouping, a small list read once, may use its own B-tree.)
fn sorted(plan: &[String]) -> bool {
    plan.iter()
        .any(|l| l.contains("TEMP B-TREE") && l.contains("ORDER BY"))
}

#[test]
fn turn_verdicts_are_read_by_a_range_of_their_key() {
    let (_dir, conn) = store();
    let results = plan(&conn, facts::CHECK_TURN_RESULTS_SQL, [1, 100]);
    assert!(!scans(&results).contains(&"SCAN t"), "{results:#?}");
    assert!(
        results.iter().any(|l| l
            .starts_with("SEARCH t USING PRIMARY KEY (conversation_id>? AND conversation_id<?)")),
        "{results:#?}"
    );
    // In (conversation, check, turn) order as the key holds them (migration 015).
    assert!(!sorted(&results), "{results:#?}");
}

#[test]
fn replayed_turns_drive_their_view_and_collected_turns_are_never_scanned_for_them() {
    let (_dir, conn) = store();
    let sel = Selection::resolve(&conn, &FactFilter::default()).unwrap();
    let replay = plan(
        &conn,
        &super::replay::replay_turn_facts_sql(),
        &sel.params()[..],
    );
    assert_eq!(scans(&replay).first(), Some(&"SCAN r"), "{replay:#?}");
    assert!(!scans(&replay).contains(&"SCAN turns"), "{replay:#?}");
    assert!(
        replay
            .contains(&"SEARCH turns USING PRIMARY KEY (conversation_id=? AND idx=?)".to_string()),
        "{replay:#?}"
    );
}

#[test]
fn repeats_are_grouped_from_the_one_pass_over_conversations() {
    let (_dir, conn) = store();
    let sel = Selection::resolve(&conn, &FactFilter::default()).unwrap();
    // Each row brings its scenario version (what a group of repeats is keyed by besides run,
    // target and scenario): no second pass joined with conversations, no lookup of each.
    assert!(facts::conversations_sql().contains("scenario_ref"));
    let conversations = plan(&conn, &facts::conversations_sql(), &sel.params()[..]);
    assert_eq!(
        scans(&conversations),
        ["SCAN c", "SCAN runs"],
        "{conversations:#?}"
    );
    assert!(
        !conversations.iter().any(|l| l.contains("SEARCH c ")),
        "{conversations:#?}"
    );
    // Grouped and ordered in Rust: no temporary B-tree for a window or an ORDER BY.
    assert!(
        !conversations.iter().any(|l| l.contains("TEMP B-TREE")),
        "{conversations:#?}"
    );
}

#[test]
fn a_window_of_runs_finds_its_conversations_by_run_not_by_a_pass() {
    let (_dir, conn) = store();
    let ids = "[3,4]".to_string();
    let plan = plan(
        &conn,
        facts::RUNS_CONVERSATION_IDS_SQL,
        rusqlite::named_params! {":run_id": None::<i64>, ":run_name": None::<String>, ":run_ids": ids},
    );
    // `SCAN runs` is the runs table's few rows; the conversations are searched run by run.
    assert!(
        !scans(&plan)
            .iter()
            .any(|l| l.starts_with("SCAN conversations")),
        "{plan:#?}"
    );
    assert!(
        plan.iter()
            .any(|l| l.starts_with("SEARCH conversations USING")
                && l.contains("INDEX conversations_run (run_id=?)")),
        "{plan:#?}"
    );
}
