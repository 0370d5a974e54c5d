//! `turnbench merge` through the binary, on stores the built-in mock filled: two stores
//! collected by two collect processes (collectors east and west, overlapping scenarios,
//! each checked and judged, with anchors, controls, pairwise judgments and a human label)
//! merge into a store whose report is the report of one store holding both runs; merging
//! again adds nothing; a planted conflict is refused and changes nothing; kill -9 during a
//! merge leaves the target as it was or complete; an older store merges upgraded.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rusqlite::Connection;
use serde_json::Value;

use crate::common::Project;

const JUDGE: [&str; 4] = [
    "--judge",
    "judges/mock.toml",
    "--rubric",
    "rubrics/multiturn-quality.toml",
];

/// A project with no `scenarios/` (the built-in scenarios are the anchors' references)
/// and one folder per collector holding the scenarios it runs.
fn project(sets: &[(&str, &[&str])]) -> Project {
    let p = Project::new(&[]);
    std::fs::remove_dir(p.path("scenarios")).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (dir, ids) in sets {
        std::fs::create_dir(p.path(dir)).unwrap();
        for id in *ids {
            let file = format!("{id}.toml");
            std::fs::copy(repo.join("scenarios").join(&file), p.path(dir).join(&file)).unwrap();
        }
    }
    p
}

/// `turnbench --db DB ARGS` in the project folder.
fn tb(p: &Project, db: &str, args: &[&str]) -> std::process::Output {
    Command::new(assert_cmd::cargo::cargo_bin("turnbench"))
        .current_dir(p.dir.path())
        .arg("--db")
        .arg(p.path(db))
        .args(args)
        .output()
        .unwrap()
}

fn tb_ok(p: &Project, db: &str, args: &[&str]) -> String {
    let out = tb(p, db, args);
    assert!(
        out.status.success(),
        "turnbench --db {db} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Collects the scenarios of `dir` as `collector` into `db`, then checks and judges it.
fn collect_checked_judged(p: &Project, db: &str, collector: &str, dir: &str) {
    tb_ok(
        p,
        db,
        &[
            "collect",
            "-q",
            "--collector",
            collector,
            "--scenarios",
            dir,
            "--repeats",
            "1",
        ],
    );
    tb_ok(p, db, &["check", "-q"]);
    tb_ok(p, db, &[&["judge", "-q"][..], &JUDGE].concat());
}

/// Anchors and controls, pairwise judgments against sim-swift, and one human label.
fn judge_more(p: &Project, db: &str, rater: &str) {
    tb_ok(p, db, &[&["judge", "-q", "--anchors"][..], &JUDGE].concat());
    let pairwise = ["judge", "-q", "--pairwise", "--baseline", "sim-swift"];
    tb_ok(p, db, &[&pairwise[..], &JUDGE].concat());
    let (uid, scores): (String, String) = Connection::open(p.path(db))
        .unwrap()
        .query_row(
            "SELECT c.uid, j.scores FROM current_judgments j
             JOIN conversations c ON c.id = j.conversation_id
             WHERE j.status = 'ok' ORDER BY c.id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let label = serde_json::json!({
        "conversation": uid, "rater": rater, "rubric": "multiturn-quality@1",
        "scores": serde_json::from_str::<Value>(&scores).unwrap(), "completed": true,
    });
    let file = format!("{rater}.jsonl");
    p.write(&file, &format!("{label}\n"));
    tb_ok(p, db, &["label", "import", &file]);
}

/// A consistent copy of a store (its WAL included).
fn copy_store(p: &Project, from: &str, to: &str) {
    let target = p.path(to);
    Connection::open(p.path(from))
        .unwrap()
        .execute("VACUUM INTO ?1", [target.to_str().unwrap()])
        .unwrap();
}

/// Every table's row count, by name.
fn counts(path: &Path) -> Vec<(String, i64)> {
    let conn = Connection::open(path).unwrap();
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    names
        .into_iter()
        .map(|n| {
            let c = conn
                .query_row(&format!("SELECT COUNT(*) FROM \"{n}\""), [], |r| r.get(0))
                .unwrap();
            (n, c)
        })
        .collect()
}

fn integrity(path: &Path) -> String {
    Connection::open(path)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

/// The JSON report of east's and west's runs, without what differs between two files
/// holding the same facts: `meta.store` (the file's path), `meta.generated_at` (when it
/// was read), and store-local row ids — a run's id is replaced by its collector and start,
/// a conversation's id removed (its `uid` stays).
fn report(p: &Project, db: &str) -> Value {
    let args = [
        "report",
        "--format",
        "json",
        "--collector",
        "east,west",
        "--seed",
        "7",
    ];
    let mut r: Value = serde_json::from_str(&tb_ok(p, db, &args)).unwrap();
    let meta = r["meta"].as_object_mut().unwrap();
    meta.remove("store");
    meta.remove("generated_at");
    let mut runs = std::collections::BTreeMap::new();
    for run in meta["runs"].as_array_mut().unwrap() {
        let name = format!("{}@{}", run["collector"], run["started_at"]);
        runs.insert(run["id"].as_i64().unwrap(), name.clone());
        run["id"] = Value::String(name);
    }
    let run_name = |v: &mut Value| {
        let id = v.as_i64().unwrap();
        *v = Value::String(runs[&id].clone());
    };
    for point in r["trend"]["points"].as_array_mut().into_iter().flatten() {
        run_name(&mut point["run"]);
    }
    for c in r["conversations"].as_array_mut().unwrap() {
        c.as_object_mut().unwrap().remove("id");
        run_name(&mut c["run_id"]);
    }
    r
}

/// Each source's summary: table → (rows, added, already present); `all` for the sum.
fn tallies(summary: &str) -> Vec<std::collections::BTreeMap<String, [u64; 3]>> {
    let mut out = Vec::new();
    for line in summary.lines() {
        if line.starts_with("merged ") {
            out.push(std::collections::BTreeMap::new());
            continue;
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        let nums: Vec<u64> = parts
            .iter()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        if let (Some(table), [n, added, present], Some(last)) =
            (parts.first(), nums.as_slice(), out.last_mut())
        {
            last.insert(table.to_string(), [*n, *added, *present]);
        }
    }
    out
}

#[test]
fn two_collectors_merge_into_the_report_of_one_store_and_a_conflict_changes_nothing() {
    let p = project(&[
        ("east", &["biz-policy-faq", "struct-invoice-extraction"]),
        (
            "west",
            &["struct-invoice-extraction", "dev-cursor-pagination"],
        ),
        ("north", &["biz-support-triage"]),
    ]);
    // east.db: east's run. both.db: a copy of it, then west's run collected, checked and
    // judged into it: one store holding both runs, made without merge.
    collect_checked_judged(&p, "east.db", "east", "east");
    judge_more(&p, "east.db", "ann");
    copy_store(&p, "east.db", "both.db");
    collect_checked_judged(&p, "both.db", "west", "west");
    judge_more(&p, "both.db", "bob");
    // north.db, merged first, puts other rows before theirs: every id is remapped.
    collect_checked_judged(&p, "north.db", "north", "north");
    let merge = |into: &str, sources: &[&str]| -> std::process::Output {
        let paths: Vec<String> = sources
            .iter()
            .map(|s| p.path(s).display().to_string())
            .collect();
        let into = p.path(into).display().to_string();
        let mut args: Vec<&str> = vec!["merge"];
        args.extend(paths.iter().map(String::as_str));
        args.extend(["--into", into.as_str()]);
        tb(&p, "unused.db", &args)
    };
    let out = merge("merged.db", &["north.db", "east.db", "both.db"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = String::from_utf8_lossy(&out.stdout).into_owned();
    let t = tallies(&first);
    assert_eq!(t.len(), 3, "{first}");
    let (east, both) = (&t[1], &t[2]);
    for table in [
        "runs",
        "conversations",
        "turns",
        "check_results",
        "judgments",
    ] {
        let [n, added, _] = east[table];
        assert!(
            n > 0 && added == n,
            "east's {table}, new after north's: {first}"
        );
        // both.db holds east's rows (present) and west's (added).
        let [n, added, present] = both[table];
        assert!(
            added > 0 && present == east[table][0] && n == added + present,
            "{table}: {first}"
        );
    }
    for table in ["anchor_judgments", "pairwise_judgments"] {
        assert!(east[table][1] > 0, "{table}: {first}");
    }
    assert_eq!(integrity(&p.path("merged.db")), "ok");

    assert_eq!(report(&p, "merged.db"), report(&p, "both.db"));
    let card = tb_ok(
        &p,
        "merged.db",
        &["report", "--collector", "east", "--collector", "west"],
    );
    assert!(
        card.contains("on east") && card.contains("on west"),
        "{card}"
    );
    assert!(!card.contains("on north"), "{card}");

    // Again: nothing added, nothing lost.
    let before = counts(&p.path("merged.db"));
    let out = merge("merged.db", &["north.db", "east.db", "both.db"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let again = String::from_utf8_lossy(&out.stdout).into_owned();
    let t = tallies(&again);
    assert_eq!(t.len(), 3, "{again}");
    for [n, added, present] in t.iter().flat_map(|s| s.values()) {
        assert!(*added == 0 && n == present, "{again}");
    }
    assert_eq!(counts(&p.path("merged.db")), before);

    // A planted conflict: one of east's answers edited in a copy of both.db. Merged into
    // a copy of east.db, west's run (new there) would come first; the conflict refuses
    // the whole source.
    copy_store(&p, "both.db", "edited.db");
    let uid: String = Connection::open(p.path("edited.db"))
        .unwrap()
        .query_row(
            "SELECT c.uid FROM conversations c JOIN runs r ON r.id = c.run_id
             WHERE r.collector = 'east' AND c.outcome = 'completed' ORDER BY c.id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    Connection::open(p.path("edited.db"))
        .unwrap()
        .execute(
            "UPDATE turns SET answer = 'edited' WHERE idx = 0
             AND conversation_id = (SELECT id FROM conversations WHERE uid = ?1)",
            [&uid],
        )
        .unwrap();
    copy_store(&p, "east.db", "target.db");
    let before = counts(&p.path("target.db"));
    let out = merge("target.db", &["edited.db"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for part in [
        "edited.db",
        "target.db",
        "turns",
        &uid,
        "answer",
        "\"edited\"",
        "fix:",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
    assert_eq!(counts(&p.path("target.db")), before);
    assert_eq!(integrity(&p.path("target.db")), "ok");
}

/// A large source: `base.db`'s conversations copied `times` times over (new uids and
/// repeats), with their turns, straight in SQL.
fn amplify(path: &Path, times: i64) {
    let mut conn = Connection::open(path).unwrap();
    let cols = |table: &str, skip: &[&str]| -> String {
        let mut stmt = conn
            .prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
            .unwrap();
        let all: Vec<String> = stmt
            .query_map([table], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        all.into_iter()
            .filter(|c| !skip.contains(&c.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let conv_cols = cols("conversations", &["id", "uid", "repeat"]);
    let turn_cols = cols("turns", &["conversation_id"]);
    let tx = conn.transaction().unwrap();
    let ids: Vec<i64> = tx
        .prepare("SELECT id FROM conversations")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for k in 1..=times {
        for &id in &ids {
            tx.execute(
                &format!(
                    "INSERT INTO conversations (uid, repeat, {conv_cols})
                     SELECT uid || '-copy-' || ?1, repeat + ?1, {conv_cols}
                     FROM conversations WHERE id = ?2"
                ),
                [k, id],
            )
            .unwrap();
            let new = tx.last_insert_rowid();
            tx.execute(
                &format!(
                    "INSERT INTO turns (conversation_id, {turn_cols})
                     SELECT ?1, {turn_cols} FROM turns WHERE conversation_id = ?2"
                ),
                [new, id],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
}

#[test]
fn kill_9_during_a_merge_leaves_the_target_as_it_was_or_complete() {
    let p = project(&[("one", &["biz-policy-faq"])]);
    tb_ok(
        &p,
        "base.db",
        &[
            "collect",
            "-q",
            "--collector",
            "k",
            "--scenarios",
            "one",
            "--repeats",
            "1",
        ],
    );
    copy_store(&p, "base.db", "big.db");
    amplify(&p.path("big.db"), 2500);
    // The target before: base.db's rows (which big.db also holds).
    let before = counts(&p.path("base.db"));
    copy_store(&p, "base.db", "complete.db");
    let big = p.path("big.db").display().to_string();
    let into = |db: &str| -> Vec<String> {
        vec![
            "merge".into(),
            big.clone(),
            "--into".into(),
            p.path(db).display().to_string(),
        ]
    };
    let args = into("complete.db");
    tb_ok(
        &p,
        "unused.db",
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let complete = counts(&p.path("complete.db"));
    assert_ne!(before, complete);

    // Killed once the merge's transaction has begun, after a growing delay, until a
    // merge ends before its kill: every state seen is one of the two.
    let mut killed_before_end = 0;
    for (i, delay_ms) in [0u64, 20, 80, 250, 800, 2500, 8000].into_iter().enumerate() {
        let db = format!("kill-{i}.db");
        copy_store(&p, "base.db", &db);
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("turnbench"))
            .current_dir(p.dir.path())
            .args(into(&db))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        while !line.starts_with("merging") {
            line.clear();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "merge ended before it began"
            );
        }
        std::thread::sleep(Duration::from_millis(delay_ms));
        let ended = child.try_wait().unwrap().is_some();
        if !ended {
            child.kill().unwrap(); // SIGKILL on Unix
        }
        let status = child.wait().unwrap();
        let path: PathBuf = p.path(&db);
        assert_eq!(integrity(&path), "ok", "delay {delay_ms} ms");
        let now = counts(&path);
        assert!(
            now == before || now == complete,
            "delay {delay_ms} ms: {now:?}"
        );
        if now == before {
            killed_before_end += 1;
        }
        if ended {
            assert!(status.success());
            assert_eq!(now, complete);
            break;
        }
    }
    assert!(killed_before_end > 0, "no kill landed during the merge");
}

#[test]
fn a_store_of_an_older_schema_merges_upgraded_and_is_not_written() {
    let p = project(&[]);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/store-v2-before-migration-names.db");
    std::fs::copy(&fixture, p.path("old.db")).unwrap();
    let bytes = std::fs::read(p.path("old.db")).unwrap();
    let out = tb_ok(
        &p,
        "unused.db",
        &[
            "merge",
            p.path("old.db").to_str().unwrap(),
            "--into",
            p.path("new.db").to_str().unwrap(),
        ],
    );
    assert!(out.contains("read upgraded from schema version 2"), "{out}");
    assert_eq!(std::fs::read(p.path("old.db")).unwrap(), bytes);
    let upgraded = p.path("upgraded.db");
    std::fs::copy(&fixture, &upgraded).unwrap();
    drop(turnbench::store::open(&upgraded).unwrap());
    let of = |path: &Path, sql: &str| -> i64 {
        Connection::open(path)
            .unwrap()
            .query_row(sql, [], |r| r.get(0))
            .unwrap()
    };
    for sql in [
        "SELECT COUNT(*) FROM conversation_facts WHERE counts",
        "SELECT COUNT(*) FROM turns",
        "SELECT COUNT(*) FROM judgments",
    ] {
        assert_eq!(of(&p.path("new.db"), sql), of(&upgraded, sql), "{sql}");
    }
}
