//! `turnbench import` and `turnbench export conversations` through the built binary:
//! round trip, idempotency, every kind of bad line, --strict, a SIGKILL mid-import; the
//! ShareGPT and request/response log formats, JSON array files, and the defaults that let
//! checks score plain transcripts (import → check → report).

use crate::synthetic;

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use turnbench::exit::Exit;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/transcripts.jsonl");

pub(crate) fn turnbench(db: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_turnbench"));
    cmd.arg("--db").arg(db).arg("--quiet");
    cmd
}

pub(crate) fn run(cmd: &mut Command) -> (i32, String, String) {
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

pub(crate) fn import(db: &Path, files: &[&Path]) -> (i32, String, String) {
    run(turnbench(db).arg("import").args(files))
}

pub(crate) fn export(db: &Path, args: &[&str]) -> String {
    let (code, out, err) = run(turnbench(db).args(["export", "conversations"]).args(args));
    assert_eq!(code, 0, "{err}");
    out
}

pub(crate) fn count(db: &Path, sql: &str) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

pub(crate) fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
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
    assert_eq!(
        code,
        Exit::SomeFailed.code(),
        "a rejected line sets the exit code\n{err}"
    );
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
    assert_eq!(code, Exit::Error.code());
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
    assert_eq!(code, Exit::Error.code());
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
    assert_eq!(code, Exit::Error.code());
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

const SHAREGPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sharegpt.jsonl");
const SHAREGPT_ARRAY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sharegpt-array.json");
const OPENAI_LOG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/openai-log.jsonl");

/// One stored turn as the tests compare it.
#[derive(Debug, PartialEq)]
struct StoredTurn {
    /// The roles of its prompt's messages, and the last one's text.
    roles: Vec<String>,
    last_prompt: String,
    answer: Option<String>,
    reasoning: Option<String>,
    finish_reason: Option<String>,
    outcome: String,
    ttft_ms: Option<f64>,
    e2e_ms: Option<f64>,
    /// Prompt, completion, cached and reasoning tokens.
    usage: [Option<i64>; 4],
}

/// Uids of the stored conversations, in the order they were stored.
fn uids(db: &Path) -> Vec<String> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT uid FROM conversations ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn stored_turns(db: &Path, uid: &str) -> Vec<StoredTurn> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT u.prompt, u.answer, u.reasoning, u.finish_reason, u.outcome, u.ttft_ms,
                    u.e2e_ms, u.prompt_tokens, u.completion_tokens, u.cached_tokens,
                    u.reasoning_tokens
             FROM turns u JOIN conversations c ON c.id = u.conversation_id
             WHERE c.uid = ?1 ORDER BY u.idx",
        )
        .unwrap();
    stmt.query_map([uid], |r| {
        let prompt: serde_json::Value = serde_json::from_str(&r.get::<_, String>(0)?).unwrap();
        let messages = prompt.as_array().unwrap();
        Ok(StoredTurn {
            roles: messages
                .iter()
                .map(|m| m["role"].as_str().unwrap().to_string())
                .collect(),
            last_prompt: messages.last().map_or(String::new(), |m| {
                m["content"].as_str().unwrap().to_string()
            }),
            answer: r.get(1)?,
            reasoning: r.get(2)?,
            finish_reason: r.get(3)?,
            outcome: r.get(4)?,
            ttft_ms: r.get(5)?,
            e2e_ms: r.get(6)?,
            usage: [r.get(7)?, r.get(8)?, r.get(9)?, r.get(10)?],
        })
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// (provider, model, scenario) of a stored conversation.
fn target_of(db: &Path, uid: &str) -> (String, String, Option<String>) {
    Connection::open(db)
        .unwrap()
        .query_row(
            "SELECT t.provider, t.model, c.scenario FROM conversations c
             JOIN targets t ON t.id = c.target_id WHERE c.uid = ?1",
            [uid],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
}

/// A turn of text only: no finish reason, timing or usage.
fn plain_turn(roles: &[&str], last_prompt: &str, answer: &str) -> StoredTurn {
    StoredTurn {
        roles: roles.iter().map(|r| r.to_string()).collect(),
        last_prompt: last_prompt.to_string(),
        answer: Some(answer.to_string()),
        reasoning: None,
        finish_reason: None,
        outcome: "ok".to_string(),
        ttft_ms: None,
        e2e_ms: None,
        usage: [None; 4],
    }
}

#[test]
fn sharegpt_lines_import_with_their_roles_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, out, err) = import(&db, &[Path::new(SHAREGPT)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "sharegpt.jsonl: 3 imported (6 turns), 0 already present, 0 rejected → run 1; read as sharegpt 3"
        ),
        "{out}"
    );
    let uids = uids(&db);
    assert_eq!(uids.len(), 3);
    assert_eq!(
        (uids[0].as_str(), uids[1].len(), uids[2].as_str()),
        ("sharegpt-haiku-1", 32, "glaive-weather-7"),
        "given ids are kept, the other is a content hash"
    );
    assert_eq!(
        target_of(&db, "sharegpt-haiku-1"),
        ("unknown".into(), "vicuna-13b-v1.5".into(), None)
    );
    assert_eq!(
        stored_turns(&db, "sharegpt-haiku-1"),
        [
            plain_turn(
                &["user"],
                "Write a haiku about a cache miss.",
                "Cold line, far away;\nthe core waits on memory.\nSilence, then the load."
            ),
            plain_turn(
                &["user"],
                "Now one about a cache hit, same form.",
                "Warm line, close at hand;\nthe answer is already there.\nNo wait, only work."
            ),
        ]
    );
    // `system` is the first message; `user`/`assistant` spellings map like human/gpt.
    let support = stored_turns(&db, &uids[1]);
    assert_eq!(support.len(), 2);
    assert_eq!(support[0].roles, ["system", "user"]);
    assert!(
        support[0]
            .answer
            .as_deref()
            .unwrap()
            .starts_with("E1042 means")
    );
    // An observation is a tool message in the next turn's prompt.
    let weather = stored_turns(&db, "glaive-weather-7");
    assert_eq!(weather[1].roles, ["tool"]);
    assert!(weather[1].last_prompt.contains("\"rain_mm\": 6"));
    assert!(
        weather[1]
            .answer
            .as_deref()
            .unwrap()
            .starts_with("Yes: 6 mm")
    );
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM conversations WHERE outcome = 'completed'"
        ),
        3
    );

    let (code, out, _) = import(&db, &[Path::new(SHAREGPT)]);
    assert_eq!(code, 0);
    assert!(
        out.contains(
            "0 imported (0 turns), 3 already present, 0 rejected (nothing new); read as sharegpt 3"
        ),
        "{out}"
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM turns"), 6);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM runs"), 1);
}

#[test]
fn a_sharegpt_json_array_is_read_record_by_record() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, out, err) = import(&db, &[Path::new(SHAREGPT_ARRAY)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("sharegpt-array.json: 3 imported (4 turns), 0 already present, 0 rejected → run 1; read as sharegpt 3"),
        "{out}"
    );
    assert_eq!(uids(&db), ["ds-0001", "ds-0002", "ds-0003"]);
    assert_eq!(
        stored_turns(&db, "ds-0002"),
        [
            plain_turn(&["system", "user"], "Capital of Australia?", "Canberra."),
            plain_turn(&["user"], "And of New Zealand?", "Wellington."),
        ]
    );
    assert_eq!(
        target_of(&db, "ds-0003").1,
        "llama-3.1-8b-instruct",
        "a record's model"
    );
    let (code, out, _) = import(&db, &[Path::new(SHAREGPT_ARRAY)]);
    assert_eq!(code, 0);
    assert!(
        out.contains("0 imported (0 turns), 3 already present"),
        "{out}"
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM turns"), 4);
}

/// A pretty-printed array with a bad record (2), then a missing comma after record 3.
const BAD_ARRAY: &str = r#"[
  {"id": "a1", "conversations": [{"from": "human", "value": "Q1"}, {"from": "gpt", "value": "A1"}]},
  {"id": "a2",
   "conversations": [{"from": "human", "value": "Q2"},
                     {"from": "robot", "value": "A2"}]},
  {"id": "a3", "conversations": [{"from": "human", "value": "Q3"}, {"from": "gpt", "value": "A3"}]}
  {"id": "a4", "conversations": [{"from": "human", "value": "Q4"}, {"from": "gpt", "value": "A4"}]}
]
"#;

#[test]
fn a_bad_array_record_is_named_by_line_and_number() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    write(dir.path(), "bad.json", BAD_ARRAY);
    let (code, out, err) = run(turnbench(&db)
        .current_dir(dir.path())
        .args(["import", "bad.json"]));
    assert_eq!(code, Exit::SomeFailed.code(), "{err}");
    let rejected: Vec<&str> = err.lines().filter(|l| l.starts_with("rejected ")).collect();
    assert_eq!(rejected.len(), 2, "{err}");
    assert!(
        rejected[0].starts_with(
            "rejected bad.json:3: record 2: conversations[1].from: unknown role \"robot\"; expected human or user (user)"
        ),
        "{err}"
    );
    assert_eq!(
        rejected[1],
        "rejected bad.json:7: expected `,` or `]` after record 3 (which starts on line 6), \
         found `{`; nothing after it was read"
    );
    assert!(
        out.contains("bad.json: 2 imported (2 turns), 0 already present, 2 rejected → run 1; read as sharegpt 2"),
        "{out}"
    );
    assert_eq!(uids(&db), ["a1", "a3"]);

    // --strict: the first bad record is the error, and nothing of the file is stored.
    let strict_db = dir.path().join("strict.db");
    let (code, _, err) = run(turnbench(&strict_db)
        .current_dir(dir.path())
        .args(["import", "--strict", "bad.json"]));
    assert_eq!(code, Exit::Error.code());
    assert!(
        err.contains("bad.json:3: record 2: conversations[1].from: unknown role \"robot\""),
        "{err}"
    );
    assert!(
        err.contains("--strict: nothing from bad.json was stored"),
        "{err}"
    );
    assert_eq!(count(&strict_db, "SELECT COUNT(*) FROM conversations"), 0);
}

#[test]
fn request_response_logs_import_their_history_and_answer() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (code, out, err) = import(&db, &[Path::new(OPENAI_LOG)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("openai-log.jsonl: 3 imported (4 turns), 0 already present, 0 rejected → run 1; read as openai-log 3"),
        "{out}"
    );
    let uids = uids(&db);
    assert_eq!(uids[0], "litellm-7f3a");
    // The model is the response's; timings from LiteLLM's start/first token/end times.
    assert_eq!(
        target_of(&db, "litellm-7f3a"),
        ("unknown".into(), "gpt-4o-mini-2024-07-18".into(), None)
    );
    assert_eq!(
        stored_turns(&db, "litellm-7f3a"),
        [StoredTurn {
            roles: vec!["system".into(), "user".into()],
            last_prompt: "Count orders per day in the orders table (created_at is a timestamp)."
                .into(),
            answer: Some(
                "SELECT date(created_at) AS day, COUNT(*) AS orders FROM orders GROUP BY day ORDER BY day;"
                    .into()
            ),
            reasoning: None,
            finish_reason: Some("stop".into()),
            outcome: "ok".into(),
            ttft_ms: Some(305.0),
            e2e_ms: Some(895.0),
            usage: [Some(41), Some(22), Some(0), None],
        }]
    );
    // The history's answer is a turn of its own, without timings; the final answer has
    // the log's reasoning, timings (ttft_ms, latency_ms) and usage.
    let factors = stored_turns(&db, &uids[1]);
    assert_eq!(factors[0], plain_turn(&["user"], "Is 221 prime?", "No."));
    assert_eq!(
        factors[1],
        StoredTurn {
            roles: vec!["user".into()],
            last_prompt: "Show the factors.".into(),
            answer: Some("221 = 13 × 17.".into()),
            reasoning: Some("Try small primes: 221/13 = 17.".into()),
            finish_reason: Some("stop".into()),
            outcome: "ok".into(),
            ttft_ms: Some(812.0),
            e2e_ms: Some(2140.5),
            usage: [Some(30), Some(48), None, Some(39)],
        }
    );
    assert_eq!(target_of(&db, &uids[1]).1, "deepseek-r1-0528");
    // Cut at the length limit, no timing fields: truncated, and the timings stay NULL.
    let cut = stored_turns(&db, &uids[2]);
    assert_eq!(cut.len(), 1);
    assert_eq!(
        (cut[0].finish_reason.as_deref(), cut[0].outcome.as_str()),
        (Some("length"), "truncated")
    );
    assert_eq!((cut[0].ttft_ms, cut[0].e2e_ms), (None, None));
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM turns WHERE ttft_ms = 0 OR ttfa_ms = 0 OR e2e_ms = 0"
        ),
        0
    );

    let (code, out, _) = import(&db, &[Path::new(OPENAI_LOG)]);
    assert_eq!(code, 0);
    assert!(
        out.contains("0 imported (0 turns), 3 already present, 0 rejected (nothing new); read as openai-log 3"),
        "{out}"
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM turns"), 4);
}

/// One good record of each shape, then a malformed one of each.
const MIXED: &[&str] = &[
    r#"{"id":"tb","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#,
    r#"{"id":"sg","conversations":[{"from":"human","value":"Q"},{"from":"gpt","value":"A"}]}"#,
    r#"{"id":"log","request":{"messages":[{"role":"user","content":"Q"}]},"response":{"choices":[{"message":{"content":"A"},"finish_reason":"stop"}]}}"#,
    r#"{"id":"sg-bad","conversations":[{"from":"human","value":"Q"},{"from":"robot","value":"A"}]}"#,
    r#"{"id":"log-bad","request":{"messages":[{"role":"user","content":"Q"}]},"response":{"object":"chat.completion"}}"#,
    r#"{"id":"log-late","request":{"messages":[{"role":"user","content":"Q"}]},"response":{"choices":[{"message":{"content":"A"}}]},"startTime":1746093602,"endTime":1746093600}"#,
    r#"{"id":"tb-bad","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A","timing":{"e2e_ms":-1}}]}"#,
];

#[test]
fn auto_reads_each_shape_and_names_the_bad_record_of_each() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    write(dir.path(), "mixed.jsonl", &(MIXED.join("\n") + "\n"));
    let (code, out, err) = run(turnbench(&db)
        .current_dir(dir.path())
        .args(["import", "mixed.jsonl"]));
    assert_eq!(code, Exit::SomeFailed.code(), "{err}");
    let rejected: Vec<&str> = err.lines().filter(|l| l.starts_with("rejected ")).collect();
    let expected = [
        "rejected mixed.jsonl:4: conversations[1].from: unknown role \"robot\";",
        "rejected mixed.jsonl:5: response: no \"choices\"; expected an OpenAI chat completion",
        "rejected mixed.jsonl:6: endTime: 2000 ms before startTime",
        "rejected mixed.jsonl:7: messages[1].timing.e2e_ms: -1 is negative",
    ];
    assert_eq!(rejected.len(), expected.len(), "{err}");
    for (line, want) in rejected.iter().zip(expected) {
        assert!(
            line.starts_with(want),
            "expected {want:?}\n     got {line:?}"
        );
    }
    assert!(
        out.contains("mixed.jsonl: 3 imported (3 turns), 0 already present, 4 rejected → run 1; read as turnbench 1, sharegpt 1, openai-log 1"),
        "{out}"
    );
    assert_eq!(uids(&db), ["tb", "sg", "log"]);

    // An explicit format reads its own shape and refuses the others, saying what they are.
    let only = dir.path().join("only.db");
    let (code, out, err) = run(turnbench(&only).current_dir(dir.path()).args([
        "import",
        "--format",
        "sharegpt",
        "mixed.jsonl",
    ]));
    assert_eq!(code, Exit::SomeFailed.code());
    assert!(
        err.contains(
            "rejected mixed.jsonl:1: not a sharegpt record: it has a \"messages\" array, the \
             turnbench shape, where sharegpt needs a \"conversations\" array; import with \
             --format turnbench (or --format auto)"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "rejected mixed.jsonl:3: not a sharegpt record: it has a \"response\" object (with \
             the \"request\"), the openai-log shape"
        ),
        "{err}"
    );
    assert!(
        out.contains("1 imported (1 turn), 0 already present, 6 rejected"),
        "{out}"
    );
    assert_eq!(uids(&only), ["sg"]);
    let (code, _, err) = run(turnbench(&only).args(["import", "--format", "jsonl", "x"]));
    assert_eq!(code, Exit::Error.code(), "a usage error");
    assert!(
        err.contains(
            "unknown format \"jsonl\"; expected one of auto, turnbench, sharegpt, openai-log"
        ),
        "{err}"
    );
}

#[test]
fn one_conversation_read_from_two_formats_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let share = write(
        dir.path(),
        "share.jsonl",
        r#"{"system":"S","conversations":[{"from":"human","value":"Hi"},{"from":"gpt","value":"Hello"}]}"#,
    );
    let chat = write(
        dir.path(),
        "chat.jsonl",
        r#"{"messages":[{"role":"system","content":"S"},{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}]}"#,
    );
    let log = write(
        dir.path(),
        "log.jsonl",
        r#"{"request":{"messages":[{"role":"system","content":"S"},{"role":"user","content":"Hi"}]},"response":{"choices":[{"message":{"role":"assistant","content":"Hello"}}]}}"#,
    );
    let (_, out, _) = import(&db, &[&share, &chat, &log]);
    assert!(out.contains("share.jsonl: 1 imported"), "{out}");
    assert!(
        out.contains("chat.jsonl: 0 imported (0 turns), 1 already present"),
        "{out}"
    );
    assert!(
        out.contains("log.jsonl: 0 imported (0 turns), 1 already present"),
        "{out}"
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM conversations"), 1);
}

#[test]
fn flags_fill_in_what_records_leave_out_and_never_change_what_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let file = write(
        dir.path(),
        "chats.jsonl",
        concat!(
            r#"{"id":"plain","messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A"}]}"#,
            "\n",
            r#"{"id":"own","provider":"nimbus","scenario":"its-own","conversations":[{"from":"human","value":"Q"},{"from":"gpt","value":"A"}]}"#,
            "\n",
            r#"{"id":"logged","request":{"model":"req-model","messages":[{"role":"user","content":"Q"}]},"response":{"choices":[{"message":{"content":"A"}}]}}"#,
            "\n",
        ),
    );
    let (code, _, err) = run(turnbench(&db)
        .args([
            "import",
            "--scenario",
            "support",
            "--provider",
            "acme",
            "--model",
            "m1",
        ])
        .arg(&file));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        target_of(&db, "plain"),
        ("acme".into(), "m1".into(), Some("support".into()))
    );
    assert_eq!(
        target_of(&db, "own"),
        ("nimbus".into(), "m1".into(), Some("its-own".into())),
        "a record's own fields win"
    );
    assert_eq!(
        target_of(&db, "logged"),
        ("acme".into(), "req-model".into(), Some("support".into())),
        "a log's model is its own"
    );
    // Again with another scenario: nothing new, nothing changed.
    let (code, out, _) = run(turnbench(&db)
        .args(["import", "--scenario", "other"])
        .arg(&file));
    assert_eq!(code, 0);
    assert!(
        out.contains("3 already present, 0 rejected (nothing new)"),
        "{out}"
    );
    assert_eq!(target_of(&db, "plain").2.as_deref(), Some("support"));
    let (code, _, err) = run(turnbench(&db)
        .args(["import", "--scenario", " "])
        .arg(&file));
    assert_eq!(code, Exit::Error.code(), "a usage error");
    assert!(err.contains("empty; leave the flag out instead"), "{err}");
}

const SUPPORT_SCENARIO: &str = r#"id = "support-e1042"
category = "business"
title = "Explain a deploy error, then answer as JSON"
system = "You are a support agent for Acme Cloud."

[[turn]]
user = "My deploy failed with error E1042. What does it mean?"
reference = "E1042 means the build image exceeded the 2 GB size limit."

[[turn]]
user = "Reply as JSON only: {\"code\": ..., \"limit_gb\": ...}"
reference = "{\"code\": \"E1042\", \"limit_gb\": 2}"
"#;

const SUPPORT_CHECKS: &str = r#"scenario = "support-e1042"

[[check]]
id = "names-the-limit"
kind = "contains"
tag = "required_fields"
turn = 1
text = "2 GB"

[[check]]
id = "final-json"
kind = "json_valid"
tag = "json_validity"

[[check]]
id = "final-limit"
kind = "field_equals"
tag = "required_fields"
pointer = "/limit_gb"
value = 2
"#;

/// Two saved OpenAI-format chats with no provider, model or scenario: one right, one wrong
/// on every check.
const SAVED_CHATS: &str = concat!(
    r#"{"messages":[{"role":"system","content":"You are a support agent for Acme Cloud."},{"role":"user","content":"My deploy failed with error E1042. What does it mean?"},{"role":"assistant","content":"E1042 means the build image exceeded the 2 GB size limit."},{"role":"user","content":"Reply as JSON only: {\"code\": ..., \"limit_gb\": ...}"},{"role":"assistant","content":"{\"code\": \"E1042\", \"limit_gb\": 2}"}]}"#,
    "\n",
    r#"{"messages":[{"role":"system","content":"You are a support agent for Acme Cloud."},{"role":"user","content":"My deploy failed with error E1042. What does it mean?"},{"role":"assistant","content":"E1042 is a quota error."},{"role":"user","content":"Reply as JSON only: {\"code\": ..., \"limit_gb\": ...}"},{"role":"assistant","content":"Sure! {\"code\": \"E1042\", \"limit_gb\": 4}"}]}"#,
    "\n",
);

/// Issue 19: `--scenario` gives plain transcripts the scenario their checks are written
/// for, so that `check` scores them and `report` shows the results.
#[test]
fn a_scenario_for_plain_transcripts_lets_their_checks_score_them() {
    let project = crate::common::Project::new(&[("support-e1042", SUPPORT_SCENARIO)]);
    std::fs::create_dir(project.path("checks")).unwrap();
    project.write("checks/support-e1042.toml", SUPPORT_CHECKS);
    project.write("chats.jsonl", SAVED_CHATS);
    let check = ["check", "--checks", "checks", "--scenarios", "scenarios"];

    // Without --scenario the chats carry none: no checks file applies to them.
    let bare = crate::common::Project::new(&[]);
    bare.write("chats.jsonl", SAVED_CHATS);
    bare.run_ok(&["import", "chats.jsonl"]);
    let (out, _) = bare.run_ok(&[
        "check",
        "--checks",
        project.path("checks").to_str().unwrap(),
    ]);
    assert!(
        out.contains("no checks file     2   conversations skipped"),
        "{out}"
    );

    let (out, _) = project.run_ok(&["import", "chats.jsonl", "--scenario", "support-e1042"]);
    assert!(
        out.contains("chats.jsonl: 2 imported (4 turns), 0 already present, 0 rejected → run 1; read as turnbench 2"),
        "{out}"
    );
    let (out, _) = project.run_ok(&check);
    assert!(
        out.contains(
            "checked 2 conversations against 1 checks files (3 current check definitions)"
        ),
        "{out}"
    );
    assert!(
        out.contains("evaluated now      6   3 passed, 3 failed"),
        "{out}"
    );
    assert!(
        out.contains("unknown / unknown   50.0 %         6"),
        "{out}"
    );

    // The blind judge scores them too (the built-in simulated judge and rubric, by name:
    // this project has no judges/ or rubrics/ folder).
    let (out, _) = project.run_ok(&[
        "judge",
        "--judge",
        "judges/mock.toml",
        "--rubric",
        "rubrics/multiturn-quality.toml",
        "--sample",
        "all",
    ]);
    assert!(out.contains("multiturn-quality"), "{out}");

    // The report shows them per conversation, under the scenario, with the failing checks
    // and the judge's scores.
    let (json, _) = project.run_ok(&["report", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let conversations = report["conversations"].as_array().unwrap();
    for c in conversations {
        let judged: Vec<&str> = c["judgments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["status"].as_str().unwrap())
            .collect();
        assert_eq!(judged, ["ok"], "{c}");
    }
    let seen: Vec<(&str, &str, &str, serde_json::Value)> = conversations
        .iter()
        .map(|c| {
            (
                c["provider"].as_str().unwrap(),
                c["model"].as_str().unwrap(),
                c["scenario"].as_str().unwrap(),
                c["checks"].clone(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "unknown",
                "unknown",
                "support-e1042",
                serde_json::json!({"passed": 3, "failed": 0, "not_scored": 0, "failed_checks": []})
            ),
            (
                "unknown",
                "unknown",
                "support-e1042",
                serde_json::json!({"passed": 0, "failed": 3, "not_scored": 0,
                    "failed_checks": ["names-the-limit", "final-json", "final-limit"]})
            ),
        ]
    );
    let (text, _) = project.run_ok(&["report"]);
    assert!(text.contains("QUALITY BY TAG"), "{text}");
    assert!(
        text.contains("unknown / unknown     50.0 % (2)       50.0 % (4)"),
        "{text}"
    );
}
