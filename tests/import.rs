//! `turnbench import` and `turnbench export conversations` through the built binary:
//! round trip, idempotency, every kind of bad line, --strict, a SIGKILL mid-import.

#[path = "support/synthetic.rs"]
mod synthetic;

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rusqlite::Connection;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/transcripts.jsonl");

fn turnbench(db: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_turnbench"));
    cmd.arg("--db").arg(db).arg("--quiet");
    cmd
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("run turnbench");
    (
        status.code().unwrap_or(-1),
        String::from_utf8(stdout).unwrap(),
        String::from_utf8(stderr).unwrap(),
    )
}

fn import(db: &Path, files: &[&Path]) -> (i32, String, String) {
    run(turnbench(db).arg("import").args(files))
}

fn export(db: &Path, args: &[&str]) -> String {
    let (code, out, err) = run(turnbench(db).args(["export", "conversations"]).args(args));
    assert_eq!(code, 0, "{err}");
    out
}

fn count(db: &Path, sql: &str) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn round_trip_keeps_conversations_identical() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first.db"), dir.path().join("second.db"));
    let (code, out, err) = import(&first, &[Path::new(SAMPLE)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("5 imported (9 turns), 0 already present, 0 rejected"),
        "{out}"
    );

    let exported = export(&first, &[]);
    assert_eq!(exported.lines().count(), 5);
    let file = write(dir.path(), "exported.jsonl", &exported);
    let (code, _, err) = import(&second, &[&file]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        export(&second, &[]),
        exported,
        "import → export → import changed something"
    );

    // The same rows, column for column (ids aside, which each store assigns).
    let turns = |db: &Path| -> Vec<String> {
        let conn = Connection::open(db).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT json_array(c.uid, c.scenario, c.repeat, c.outcome, c.latency_ms,
                     c.turn_count, c.trailing, t.provider, t.model, t.label, u.idx, u.prompt,
                     u.answer, u.reasoning, u.finish_reason, u.http_status, u.outcome, u.error,
                     u.ttft_ms, u.ttfa_ms, u.e2e_ms, u.prompt_tokens, u.completion_tokens,
                     u.cached_tokens, u.reasoning_tokens)
                 FROM conversations c JOIN targets t ON t.id = c.target_id
                 JOIN turns u ON u.conversation_id = c.id ORDER BY c.uid, u.idx",
            )
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(turns(&first), turns(&second));

    // The export imported back into its own store adds nothing.
    let (code, out, _) = import(&first, &[&file]);
    assert_eq!(code, 0);
    assert!(
        out.contains("0 imported (0 turns), 5 already present, 0 rejected (nothing new)"),
        "{out}"
    );

    // --out writes the same bytes as standard output.
    let out_file = dir.path().join("out.jsonl");
    export(&first, &["--out", out_file.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), exported);
}

#[test]
fn importing_twice_adds_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    import(&db, &[Path::new(SAMPLE)]);
    let rows = |db: &Path| {
        [
            count(db, "SELECT COUNT(*) FROM runs"),
            count(db, "SELECT COUNT(*) FROM targets"),
            count(db, "SELECT COUNT(*) FROM conversations"),
            count(db, "SELECT COUNT(*) FROM turns"),
        ]
    };
    let before = rows(&db);
    assert_eq!(before, [1, 4, 5, 9]);
    let (code, out, err) = import(&db, &[Path::new(SAMPLE)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("0 imported (0 turns), 5 already present, 0 rejected (nothing new)"),
        "{out}"
    );
    assert_eq!(
        rows(&db),
        before,
        "a second import must not add a run either"
    );
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM runs WHERE source = 'import' AND name = 'transcripts.jsonl' AND ended_at IS NOT NULL"
        ),
        1
    );
}

#[test]
fn sample_imports_with_defaults_and_derived_outcomes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    import(&db, &[Path::new(SAMPLE)]);
    let lines: Vec<serde_json::Value> = export(&db, &[])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let plain = &lines[4]; // the plain OpenAI chat line
    assert_eq!(plain["provider"], "unknown");
    assert_eq!(plain["model"], "unknown");
    assert_eq!(plain["outcome"], "completed");
    assert_eq!(plain["id"].as_str().unwrap().len(), 32);
    assert_eq!(lines[1]["outcome"], "rate_limited");
    assert_eq!(lines[1]["messages"][4]["http_status"], 429);
    assert_eq!(lines[2]["outcome"], "completed"); // truncated with text, then finished
    assert_eq!(lines[2]["messages"][1]["outcome"], "truncated");
    assert_eq!(lines[3]["label"], "Qwen3 32B");
    // Unknown values stay NULL, never 0.
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM turns WHERE e2e_ms IS NULL"),
        1
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM turns WHERE e2e_ms = 0"), 0);
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM conversations WHERE latency_ms IS NOT NULL"
        ),
        3
    );
}

/// Import counts each answer's visible tokens as collect does (o200k_base over the answer as
/// stored, whitespace-only ones too; no answer, no count), and the run names the tokenizer.
#[test]
fn import_stores_visible_tokens_as_collect_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, _, err) = import(&db, &[Path::new(SAMPLE)]);
    assert_eq!(code, 0, "{err}");
    let conn = Connection::open(&db).unwrap();
    let turns: Vec<(Option<String>, Option<i64>)> = conn
        .prepare("SELECT answer, visible_tokens FROM turns ORDER BY conversation_id, idx")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(turns.iter().any(|(a, _)| a.is_none()), "a failed turn");
    for (answer, visible) in &turns {
        assert_eq!(*visible, answer.as_deref().map(turnbench::tokens::count));
    }
    let tokenizer: String = conn
        .query_row(
            "SELECT tokenizer FROM runs WHERE source = 'import'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tokenizer, turnbench::tokens::TOKENIZER);
    let space = write(
        dir.path(),
        "space.jsonl",
        r#"{"id":"ws","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"  ","outcome":"ok"}]}"#,
    );
    let (code, _, err) = import(&db, &[&space]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        count(
            &db,
            "SELECT visible_tokens FROM turns JOIN conversations c ON c.id = conversation_id WHERE c.uid = 'ws'"
        ),
        turnbench::tokens::count("  ")
    );
}

/// Line number, then what the message must say (field and problem).
const BAD_LINES: &[(usize, &str, &str)] = &[
    (
        2,
        "<html>not json</html>",
        "bad.jsonl:2: not JSON: expected value (column 1)",
    ),
    (
        3,
        r#"{"messages": "hello"}"#,
        "bad.jsonl:3: messages: wrong type: string \"hello\", expected an array",
    ),
    (
        4,
        r#"{"repeat": "two", "messages": [{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#,
        "bad.jsonl:4: repeat: wrong type: string \"two\"",
    ),
    (
        5,
        r#"{"id": "empty", "messages": []}"#,
        "bad.jsonl:5: messages: no messages",
    ),
    (
        6,
        r#"{"provider": "acme"}"#,
        "bad.jsonl:6: messages: missing",
    ),
    (
        7,
        r#"{"messages": [{"role":"user","content":"Q"},{"role":"developer","content":"42"}]}"#,
        "bad.jsonl:7: messages[1].role: unknown role \"developer\"",
    ),
    (
        8,
        r#"{"messages": [{"role":"user","content":"Q"},{"role":"assistant","content":"A","timing":{"ttft_ms":10,"e2e_ms":-5}}]}"#,
        "bad.jsonl:8: messages[1].timing.e2e_ms: -5 is negative",
    ),
    (
        9,
        r#"{"messages": [{"role":"user","content":"Q"},{"role":"assistant","content":"A","outcome":"fine"}]}"#,
        "bad.jsonl:9: messages[1].outcome: unknown outcome \"fine\"",
    ),
    (
        10,
        r#"{"messages": [{"role":"user","content":"Q"},{"role":"assistant","content":null,"outcome":"timeout"},{"role":"user","content":"Q2"},{"role":"assistant","content":"A2"}]}"#,
        "bad.jsonl:10: messages[1].outcome: this turn failed (timeout)",
    ),
    (
        11,
        r#"{"messages": [{"role":"user","content":"Q"},"#,
        "bad.jsonl:11: not JSON: EOF while parsing",
    ),
    (
        12,
        r#"{"messages": [{"role":"user","content":"Q"},{"role":"assistant","content":"A","usage":{"prompt_tokens":"many"}}]}"#,
        "bad.jsonl:12: messages[1].usage.prompt_tokens: wrong type: string \"many\"",
    ),
    (
        13,
        r#"{"outcome": "done", "messages": [{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#,
        "bad.jsonl:13: outcome: unknown outcome \"done\"",
    ),
    (
        14,
        r#"{"messages": [{"role":"user","content":"Q"}]}"#,
        "bad.jsonl:14: messages: no assistant message",
    ),
    (
        16,
        r#"[{"role":"user","content":"Q"}]"#,
        "bad.jsonl:16: expected a JSON object (one conversation per line or array element), found an array",
    ),
    (
        17,
        r#"{"messages": [{"role":"user","content":"Q"},{"role":"assistant","content":"A","timing":{"e2e_ms":"slow"}}]}"#,
        "bad.jsonl:17: messages[1].timing.e2e_ms: wrong type: string \"slow\", expected a number",
    ),
];

const GOOD_FIRST: &str = r#"{"id": "good-1", "messages": [{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#;
const GOOD_LAST: &str = r#"{"id": "good-2", "provider": "acme", "messages": [{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#;

fn bad_file(dir: &Path) -> PathBuf {
    let mut lines = vec![GOOD_FIRST.to_string()];
    for (n, text, _) in BAD_LINES {
        while lines.len() + 1 < *n {
            lines.push(String::new()); // a blank line: skipped, still counted
        }
        lines.push(text.to_string());
    }
    lines.push(GOOD_LAST.to_string());
    write(dir, "bad.jsonl", &(lines.join("\n") + "\n"))
}

#[test]
fn every_bad_line_is_named_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let file = bad_file(dir.path());
    let (code, out, err) = run(turnbench(&db)
        .current_dir(dir.path())
        .args(["import", "bad.jsonl"]));
    assert_eq!(code, 1, "a rejected line sets the exit code\n{err}");
    let rejected: Vec<&str> = err.lines().filter(|l| l.starts_with("rejected ")).collect();
    assert_eq!(rejected.len(), BAD_LINES.len(), "{err}");
    for ((_, _, expected), line) in BAD_LINES.iter().zip(&rejected) {
        assert!(
            line.starts_with(&format!("rejected {expected}")),
            "expected {expected:?}\n     got {line:?}"
        );
    }
    assert!(
        out.contains(&format!(
            "bad.jsonl: 2 imported (2 turns), 0 already present, {} rejected",
            BAD_LINES.len()
        )),
        "{out}"
    );
    // Nothing of a bad line reached the store: only the two good conversations.
    let conn = Connection::open(&db).unwrap();
    let uids: Vec<String> = conn
        .prepare("SELECT uid FROM conversations ORDER BY uid")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(uids, ["good-1", "good-2"]);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM turns"), 2);
    drop(file);
}

#[test]
fn strict_stops_at_the_first_bad_line_with_nothing_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    bad_file(dir.path());
    let good = write(dir.path(), "good.jsonl", &format!("{GOOD_FIRST}\n"));
    let (code, out, err) = run(turnbench(&db).current_dir(dir.path()).args([
        "import",
        "--strict",
        "good.jsonl",
        "bad.jsonl",
        "never-read.jsonl",
    ]));
    assert_eq!(code, 1);
    assert!(out.contains("good.jsonl: 1 imported"), "{out}");
    assert!(err.contains("bad.jsonl:2: not JSON"), "{err}");
    assert!(
        err.contains("--strict: nothing from bad.jsonl was stored"),
        "{err}"
    );
    assert!(
        !err.contains("never-read"),
        "strict stops the whole command: {err}"
    );
    // good-1 came from good.jsonl; bad.jsonl's own good lines (good-2) are not stored.
    assert_eq!(count(&db, "SELECT COUNT(*) FROM conversations"), 1);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM runs"), 1);
    drop(good);
}

#[test]
fn unreadable_file_is_reported_and_the_others_still_import() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let missing = dir.path().join("missing.jsonl");
    let folder = dir.path().join("a-folder.jsonl");
    std::fs::create_dir(&folder).unwrap();
    let (code, out, err) = import(&db, &[&missing, &folder, Path::new(SAMPLE)]);
    assert_eq!(code, 1);
    assert!(err.contains("missing.jsonl: cannot read"), "{err}");
    assert!(err.contains("a-folder.jsonl:1: read failed"), "{err}");
    assert!(out.contains("5 imported"), "{out}");
}

#[test]
fn export_filters_and_scores() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    import(&db, &[Path::new(SAMPLE)]);
    let ids = |args: &[&str]| -> Vec<String> {
        export(&db, args)
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(
        ids(&["--provider", "acme"]),
        ["acme-glm-cursor-1", "acme-glm-invoice-2"]
    );
    assert_eq!(ids(&["--model", "Qwen3 32B"]).len(), 1);
    assert_eq!(
        ids(&[
            "--scenario",
            "dev-cursor-pagination",
            "--provider",
            "nimbus"
        ]),
        ["nimbus-scout-cursor-1"]
    );
    assert_eq!(ids(&["--run", "transcripts.jsonl"]).len(), 5);
    assert_eq!(ids(&["--run", "1"]).len(), 5);
    let scored = export(&db, &["--with-scores", "--provider", "acme"]);
    for line in scored.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["checks"], serde_json::json!([]));
        assert_eq!(v["judgments"], serde_json::json!([]));
    }
    let (code, _, err) = run(turnbench(&db).args(["export", "conversations", "--run", "nope"]));
    assert_eq!(code, 1);
    assert!(err.contains("--run nope: no run"), "{err}");
    assert!(err.contains("1 (transcripts.jsonl, import)"), "{err}");
}

#[test]
fn export_to_a_closed_pipe_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let file = dir.path().join("big.jsonl");
    let mut out = BufWriter::new(std::fs::File::create(&file).unwrap());
    synthetic::write_transcripts(&mut out, 2_000, 4).unwrap();
    out.flush().unwrap();
    drop(out);
    let (code, _, err) = import(&db, &[&file]);
    assert_eq!(code, 0, "{err}");
    let mut child = turnbench(&db)
        .args(["export", "conversations"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap(); // then the reader is dropped, like `| head -1`
    let out = child.wait_with_output().unwrap();
    assert!(first.starts_with("{\"id\":\"synthetic-0\""), "{first}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sigkill_mid_import_leaves_a_consistent_store_and_a_rerun_completes_it() {
    const CONVERSATIONS: u64 = 60_000;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let file = dir.path().join("large.jsonl");
    let mut out = BufWriter::new(std::fs::File::create(&file).unwrap());
    let turns = synthetic::write_transcripts(&mut out, CONVERSATIONS, 4).unwrap();
    out.flush().unwrap();
    drop(out);

    let mut child = turnbench(&db)
        .arg("import")
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once some groups of conversations are committed, well before the end.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let stored = Connection::open(&db)
            .and_then(|c| {
                c.query_row("SELECT COUNT(*) FROM conversations", [], |r| {
                    r.get::<_, i64>(0)
                })
            })
            .unwrap_or(0);
        if stored >= 10_000 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "import ended before it could be killed"
        );
        assert!(Instant::now() < deadline, "import made no progress");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let conn = Connection::open(&db).unwrap();
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    let stored: i64 = conn
        .query_row("SELECT COUNT(*) FROM conversations", [], |r| r.get(0))
        .unwrap();
    assert!(
        stored > 0 && (stored as u64) < CONVERSATIONS,
        "killed mid-import: {stored} stored"
    );
    let partial: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM conversations c
             WHERE c.turn_count <> (SELECT COUNT(*) FROM turns u WHERE u.conversation_id = c.id)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(partial, 0, "every stored conversation is whole");
    let unfinished: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM runs WHERE ended_at IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(unfinished, 1, "the killed run stays as history, unfinished");
    drop(conn);

    let (code, out, err) = import(&db, &[&file]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!(
            "{} imported ({} turns), {stored} already present, 0 rejected",
            CONVERSATIONS - stored as u64,
            turns - stored as u64 * 4
        )),
        "{out}"
    );
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM conversations"),
        CONVERSATIONS as i64
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM turns"), turns as i64);
}

#[test]
fn collected_conversations_survive_export_and_import() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    write(
        &scenarios,
        "demo.toml",
        "id = \"demo\"\ncategory = \"developer\"\nsystem = \"Be brief.\"\n\n\
         [[turn]]\nuser = \"Write a haiku about caches.\"\nreference = \"Warm lines stay near\"\n\n\
         [[turn]]\nuser = \"Now as JSON.\"\n",
    );
    let (collected, imported) = (
        dir.path().join("collected.db"),
        dir.path().join("imported.db"),
    );
    let (code, _, err) = run(turnbench(&collected)
        .args(["collect", "--repeats", "1", "--scenarios"])
        .arg(&scenarios));
    assert_eq!(code, 0, "{err}");
    let exported = export(&collected, &[]);
    assert_eq!(exported.lines().count(), 4);
    let file = write(dir.path(), "collected.jsonl", &exported);
    let (code, _, err) = import(&imported, &[&file]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(export(&imported, &[]), exported);
    // Into the store it came from: nothing new.
    let (_, out, _) = import(&collected, &[&file]);
    assert!(out.contains("4 already present"), "{out}");
    // A new conversation of a scenario that store knows is linked to it.
    let fresh = write(
        dir.path(),
        "fresh.jsonl",
        r#"{"id":"fresh","scenario":"demo","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#,
    );
    import(&collected, &[&fresh]);
    assert_eq!(
        count(
            &collected,
            "SELECT COUNT(*) FROM conversations c JOIN scenarios s ON s.id = c.scenario_ref WHERE c.uid = 'fresh' AND s.scenario_id = 'demo'"
        ),
        1
    );
    assert_eq!(
        count(
            &imported,
            "SELECT COUNT(*) FROM conversations WHERE scenario_ref IS NOT NULL"
        ),
        0,
        "a store without the scenario keeps only its id"
    );
    let (code, out, err) = run(turnbench(&imported)
        .args(["import", "-"])
        .stdin(std::fs::File::open(&file).unwrap()));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("-: 0 imported (0 turns), 4 already present"),
        "{out}"
    );
}
