//! `turnbench replay` through the binary: the same prompts and pauses for every target,
//! content-block sessions sending what their OpenAI twins send, the mock's cache kept or
//! dropped across breaks by retention, breaks outside latency, SIGKILL then `--resume`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use turnbench::mock::Profile;

fn repo(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .display()
        .to_string()
}

/// (session, round, idx) → (prompt_hash, recorded pause, break) per provider.
type Sent = BTreeMap<(String, i64, i64), BTreeMap<String, (String, f64, f64)>>;

fn sent(project: &Project) -> Sent {
    let mut out = Sent::new();
    for (session, round, idx, provider, hash, pause, brk) in rows(
        &project.conn(),
        "SELECT session_id, round, idx, provider, prompt_hash, recorded_pause_ms, break_ms
         FROM replay_turn_facts",
        [],
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, f64>(5)?,
                r.get::<_, f64>(6)?,
            ))
        },
    ) {
        out.entry((session, round, idx))
            .or_default()
            .insert(provider, (hash, pause, brk));
    }
    out
}

#[test]
fn every_target_gets_the_same_prompts_and_pauses_and_block_twins_send_the_same() {
    let openai = Project::new(&[]);
    let sessions = repo("sessions/agent-sessions.jsonl");
    let (stdout, _) = openai.run_ok(&[
        "replay",
        "-q",
        "--sessions",
        &sessions,
        "--pause-scale",
        "0",
    ]);
    assert!(stdout.contains("sim-swift / glm-sim"), "{stdout}");
    let a = sent(&openai);
    // 25 recorded turns; a pass a fault ended early sends fewer.
    assert!(a.len() <= 25 && a.len() >= 20, "{}", a.len());
    let mut hashes = BTreeSet::new();
    let mut full = 0;
    for (turn, by_target) in &a {
        let values: BTreeSet<String> = by_target
            .values()
            .map(|(h, p, b)| format!("{h} {p} {b}"))
            .collect();
        assert_eq!(
            values.len(),
            1,
            "{turn:?} differs across targets: {by_target:?}"
        );
        full += usize::from(by_target.len() == 4);
        hashes.insert(by_target.values().next().unwrap().0.clone());
    }
    assert!(full >= 15, "most turns reached all four targets ({full})");
    assert_eq!(hashes.len(), a.len(), "every turn sends its own prompt");
    // Recorded pauses are read from the timestamps (the first turn of a session has none).
    assert!(a.iter().any(|(_, t)| t.values().next().unwrap().1 > 0.0));
    assert!(
        a.iter()
            .filter(|((_, _, idx), _)| *idx == 0)
            .all(|(_, t)| t.values().next().unwrap().1 == 0.0)
    );

    // The content-block twin of the same sessions: the same requests, byte for byte.
    let blocks = Project::new(&[]);
    blocks.run_ok(&[
        "replay",
        "-q",
        "--sessions",
        &repo("tests/fixtures/sessions-blocks.jsonl"),
        "--pause-scale",
        "0",
    ]);
    let b = sent(&blocks);
    let first = |s: &Sent| -> BTreeMap<(String, i64, i64), (String, f64, f64)> {
        s.iter()
            .filter_map(|(k, v)| Some((k.clone(), v.get("sim-swift")?.clone())))
            .collect()
    };
    let (fa, fb) = (first(&a), first(&b));
    let common: Vec<_> = fa.keys().filter(|k| fb.contains_key(*k)).collect();
    assert!(common.len() >= 20);
    for k in common {
        assert_eq!(fa[k], fb[k], "{k:?}");
    }
    // Stored like any conversation: the conversations and turns agree with the replay rows.
    let conn = openai.conn();
    let passes: i64 = conn
        .query_row("SELECT COUNT(*) FROM replay_passes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(passes, 16);
    let mismatched: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM conversations c JOIN replay_passes p ON p.conversation_id = c.id
             WHERE c.turn_count <> (SELECT COUNT(*) FROM replay_turns r WHERE r.conversation_id = c.id)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(mismatched, 0);

    // Each answer's tool calls, as the mock streamed them, are the turn's `tool_calls`
    // (what `export conversations` and `show` read), in the replay's own rows' order.
    type Calls = BTreeMap<(i64, i64), Vec<(String, String)>>;
    let mut replayed = Calls::new();
    for (c, t, name, args) in rows(
        &conn,
        "SELECT conversation_id, turn_idx, name, arguments FROM replay_tool_calls
         ORDER BY conversation_id, turn_idx, call_idx",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    ) {
        replayed.entry((c, t)).or_default().push((name, args));
    }
    let mut stored = Calls::new();
    for (c, t, json) in rows(
        &conn,
        "SELECT t.conversation_id, t.idx, t.tool_calls FROM turns t
         JOIN replay_passes p ON p.conversation_id = t.conversation_id
         WHERE t.tool_calls IS NOT NULL",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?)),
    ) {
        let calls: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
        for call in &calls {
            assert!(
                call["id"].as_str().is_some_and(|id| !id.is_empty()),
                "{json}"
            );
            assert_eq!(call["type"], "function", "{json}");
        }
        let calls = calls.iter().map(|call| {
            let f = &call["function"];
            (
                f["name"].as_str().unwrap().to_string(),
                f["arguments"].as_str().unwrap().to_string(),
            )
        });
        stored.insert((c, t), calls.collect());
    }
    assert!(replayed.len() >= 4, "the mock called tools: {replayed:?}");
    assert_eq!(stored, replayed);

    // The report's replay section: valid against the schema, counts as the store says.
    let (json, _) = openai.run_ok(&["report", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let errors = crate::common::schema_violations(&report);
    assert!(errors.is_empty(), "{errors:#?}");
    let cells = report["replay"]["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4);
    for cell in cells {
        let provider = cell["provider"].as_str().unwrap();
        let (turns, answered_later, reported): (i64, i64, i64) = conn
            .query_row(
                "SELECT COUNT(*),
                        SUM(idx > 0 AND outcome IN ('ok', 'truncated')),
                        SUM(idx > 0 AND outcome IN ('ok', 'truncated') AND cached_tokens IS NOT NULL)
                 FROM replay_turn_facts WHERE provider = ?1",
                [provider],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(cell["reliability"]["turns_sent"], turns, "{provider}");
        assert_eq!(cell["cache"]["turns_reported"], reported, "{provider}");
        assert_eq!(cell["simulated"], true);
        if provider == "sim-burst" {
            // Reports no cached tokens: "not reported", never 0 %.
            assert_eq!(reported, 0);
            assert!(cell["cache"]["hit_rate"].is_null());
        } else {
            assert_eq!(reported, answered_later, "{provider}");
            assert!(cell["cache"]["hit_rate"].as_f64().unwrap() > 0.5);
        }
        assert!(cell["tools"]["turns_with_calls"].as_u64().unwrap() > 0);
        assert_eq!(
            cell["switches"].is_null(),
            provider != "sim-flaky",
            "{provider}"
        );
    }
    // CSV: the replay columns appended to each cell's row, as in JSON.
    let (csv, _) = openai.run_ok(&["report", "--format", "csv"]);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields.len(), header.len(), "{line}");
        let cell = cells
            .iter()
            .find(|c| c["provider"] == fields[col("provider")])
            .unwrap();
        assert_eq!(
            fields[col("replay_turns")],
            cell["reliability"]["turns_sent"].to_string()
        );
        assert_eq!(
            fields[col("replay_tool_turns")],
            cell["tools"]["turns_with_calls"].to_string()
        );
    }
    let (text, _) = openai.run_ok(&["report"]);
    for section in [
        "REPLAY CACHE · SIMULATED",
        "REPLAY CACHE AFTER A BREAK",
        "REPLAY SPEED",
        "REPLAY COST",
        "REPLAY TOOL CALLS AND RELIABILITY",
    ] {
        assert!(text.contains(section), "{section}: {text}");
    }
    assert!(text.contains("not reported"), "sim-burst's cache: {text}");
}

/// Two short sessions with timestamps a few seconds apart, six turns each.
fn small_sessions() -> String {
    let mut lines = String::new();
    for s in 0..2 {
        let mut messages =
            vec![serde_json::json!({"role": "system", "content": "You fix code. ".repeat(120)})];
        for t in 0..6 {
            messages.push(serde_json::json!({"role": "user", "content": format!("step {t} of session {s}: ") + &"context ".repeat(40),
                "timestamp": format!("2025-01-01T00:{:02}:00Z", t * 2)}));
            messages.push(
                serde_json::json!({"role": "assistant", "content": format!("done {t}"),
                "timestamp": format!("2025-01-01T00:{:02}:30Z", t * 2)}),
            );
        }
        lines.push_str(
            &serde_json::json!({"id": format!("s{s}"), "messages": messages}).to_string(),
        );
        lines.push('\n');
    }
    lines
}

#[test]
fn the_cache_survives_a_break_only_within_retention_and_breaks_are_never_latency() {
    // Simulated time at 1/1000: a 10-minute break is 0.6 s; "keeps" holds a prefix an
    // hour (3.6 s), "drops" five minutes (0.3 s).
    let mut keeps = Profile::quick("keeps", 2.0, 0.5);
    keeps.cache_retention_s = Some(3600.0);
    let mut drops = Profile::quick("drops", 2.0, 0.5);
    drops.cache_retention_s = Some(300.0);
    let mut config = profiles(vec![keeps, drops]);
    config.time_scale = 0.001;
    let mock = Mock::start(config, None);
    let project = Project::new(&[]);
    let sessions = project.write("sessions.jsonl", &small_sessions());
    let bench = format!(
        "name = \"cache\"\nseed = 3\n[replay]\npause_scale = 0.001\nbreaks = \"0.5:600-600\"\nsessions_in_flight = 2\n{}{}",
        target("a", "keeps", &mock.url(), ""),
        target("b", "drops", &mock.url(), "")
    );
    let bench = project.write("bench.toml", &bench);
    project.run_ok(&[
        "replay",
        "-q",
        "--config",
        bench.to_str().unwrap(),
        "--sessions",
        sessions.to_str().unwrap(),
    ]);
    let facts = rows(
        &project.conn(),
        "SELECT f.provider, f.idx, f.break_ms, t.pause_ms, f.cached_tokens, f.prompt_tokens,
                t.start_ms, t.e2e_ms
         FROM replay_turn_facts f
         JOIN turns t ON t.conversation_id = f.conversation_id AND t.idx = f.idx
         ORDER BY f.provider, f.session_id, f.idx",
        [],
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, f64>(2)?,
                r.get::<_, f64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, f64>(6)?,
                r.get::<_, f64>(7)?,
            ))
        },
    );
    assert_eq!(facts.len(), 2 * 2 * 6);
    let share = |provider: &str, after_break: bool| {
        let picked: Vec<_> = facts
            .iter()
            .filter(|f| f.0 == provider && f.1 > 0 && (f.2 > 0.0) == after_break)
            .collect();
        assert!(!picked.is_empty(), "{provider} {after_break}");
        picked.iter().map(|f| f.4).sum::<i64>() as f64
            / picked.iter().map(|f| f.5).sum::<i64>() as f64
    };
    // Without a break both keep the conversation's prefix; after a 10-minute break only
    // the profile that keeps it an hour still has it.
    assert!(share("a", false) > 0.7, "{}", share("a", false));
    assert!(share("b", false) > 0.7, "{}", share("b", false));
    assert!(share("a", true) > 0.7, "{}", share("a", true));
    assert!(share("b", true) < 0.05, "{}", share("b", true));
    // The first turn of a pass is cold for both.
    assert!(facts.iter().filter(|f| f.1 == 0).all(|f| f.4 == 0));
    // A break is slept before the turn and is in no latency: the turn starts at least the
    // pause after the previous one ended, and its E2E is far below the 0.6 s slept.
    for w in facts.windows(2) {
        let (prev, this) = (&w[0], &w[1]);
        if prev.0 != this.0 || this.1 != prev.1 + 1 {
            continue;
        }
        assert!(
            this.6 - (prev.6 + prev.7) >= this.3 - 1.0,
            "{prev:?} → {this:?}"
        );
        if this.2 > 0.0 {
            // The recorded pause (90 s, capped at 60) and the 600 s break, at 1/1000.
            assert!((this.3 - 660.0).abs() < 1e-6, "{this:?}");
            assert!(this.7 < 300.0, "{this:?}");
        }
    }
}

#[test]
fn sigkill_mid_replay_then_resume_completes_every_pass_once() {
    let mut slow = Profile::quick("slow", 5.0, 1.0);
    slow.cache_retention_s = Some(60.0);
    let mock = Mock::start(
        profiles(vec![slow.clone(), Profile::quick("quick", 5.0, 1.0)]),
        None,
    );
    let project = Project::new(&[]);
    let sessions = project.write("sessions.jsonl", &small_sessions());
    // Every turn waits 30 ms (a 30 s break at 1/1000): a pass takes about 0.2 s.
    let bench = format!(
        "name = \"kill\"\nseed = 1\n[replay]\nrounds = 3\npause_scale = 0.001\nbreaks = \"1:30-30\"\nsessions_in_flight = 1\n{}{}",
        target("a", "slow", &mock.url(), ""),
        target("b", "quick", &mock.url(), "")
    );
    let bench = project.write("bench.toml", &bench);
    let spawn = |resume: bool| {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("turnbench"));
        cmd.current_dir(project.dir.path())
            .arg("--db")
            .arg(project.db())
            .args(["replay", "-q", "--config"])
            .arg(&bench)
            .arg("--sessions")
            .arg(&sessions)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if resume {
            cmd.arg("--resume");
        }
        cmd.spawn().unwrap()
    };
    let stored = || -> i64 {
        project
            .conn()
            .query_row("SELECT COUNT(*) FROM replay_passes", [], |r| r.get(0))
            .unwrap_or(0)
    };
    let mut child = spawn(false);
    let start = Instant::now();
    while !(project.db().exists() && stored() >= 3) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "replay ended too early"
        );
        assert!(start.elapsed() < Duration::from_secs(60), "no progress");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = stored();
    assert!(before < 12, "the kill landed mid-run ({before})");

    let out = spawn(true).wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let conn = project.conn();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(
        count("SELECT COUNT(*) FROM conversations WHERE outcome <> 'interrupted'"),
        2 * 2 * 3
    );
    assert_eq!(
        count(
            "SELECT COUNT(*) FROM (SELECT 1 FROM conversations WHERE outcome <> 'interrupted'
             GROUP BY target_id, scenario, repeat HAVING COUNT(*) > 1)"
        ),
        0,
        "no pass stored twice"
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM runs"),
        1,
        "resume reuses the run"
    );
    assert_eq!(count("SELECT COUNT(*) FROM replay_runs"), 1);
    assert_eq!(
        count(
            "SELECT COUNT(*) FROM conversations c
             WHERE turn_count <> (SELECT COUNT(*) FROM replay_turns r WHERE r.conversation_id = c.id)"
        ),
        0
    );
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
}

#[test]
fn a_gateway_named_in_a_field_is_read_and_a_switch_starts_cold() {
    let mut gw = Profile::quick("gw", 1.0, 0.2);
    gw.cache_retention_s = Some(3600.0);
    gw.gateway = Some(turnbench::mock::cache::Gateway {
        providers: vec!["up-a".into(), "up-b".into()],
        switch_rate: 0.4,
        header: "x-upstream".into(),
        field: Some("provider".into()),
    });
    let mock = Mock::start(profiles(vec![gw]), None);
    let project = Project::new(&[]);
    let sessions = project.write("sessions.jsonl", &small_sessions());
    let bench = format!(
        "name = \"gw\"\nseed = 9\n[replay]\nrounds = 3\npause_scale = 0\n{}",
        target(
            "gateway",
            "gw",
            &mock.url(),
            "replay = { served_by_field = \"provider\", cache_hint = \"header:x-session-affinity\" }"
        )
    );
    let bench = project.write("bench.toml", &bench);
    project.run_ok(&[
        "replay",
        "-q",
        "--config",
        bench.to_str().unwrap(),
        "--sessions",
        sessions.to_str().unwrap(),
    ]);
    // The pass id went in the header the target asked for, the same for a pass's turns.
    let served = mock.server.served();
    let hints: BTreeSet<String> = served
        .iter()
        .filter_map(|s| {
            s.headers
                .iter()
                .find(|(k, _)| k == "x-session-affinity")
                .map(|(_, v)| v.clone())
        })
        .collect();
    assert_eq!(served.len(), 2 * 3 * 6);
    assert_eq!(hints.len(), 2 * 3, "one hint per pass: {hints:?}");
    assert!(hints.iter().all(|h| h.starts_with('s') && h.contains('#')));

    let facts = rows(
        &project.conn(),
        "SELECT served_by, previous_served_by, cached_tokens, idx FROM replay_turn_facts",
        [],
        |r| {
            Ok((
                r.get::<_, Option<String>>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
            ))
        },
    );
    assert_eq!(facts.len(), 36);
    assert!(
        facts
            .iter()
            .all(|f| matches!(f.0.as_deref(), Some("up-a" | "up-b")))
    );
    let switches: Vec<_> = facts
        .iter()
        .filter(|f| f.1.is_some() && f.0 != f.1)
        .collect();
    assert!(!switches.is_empty());
    // The cache is per upstream: a turn moved to the other one finds nothing cached
    // unless that upstream saw the prefix before (then it is a hit, never a miss counted
    // as a switch). Turns that stayed keep their prefix.
    assert!(
        facts
            .iter()
            .filter(|f| f.3 > 0 && f.1.is_some() && f.0 == f.1)
            .all(|f| f.2 > 0)
    );
    assert!(switches.iter().any(|f| f.2 == 0));
    let (json, _) = project.run_ok(&["report", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let s = &report["replay"]["cells"][0]["switches"];
    assert_eq!(s["switches"], switches.len());
    assert_eq!(s["providers"], serde_json::json!(["up-a", "up-b"]));
}

#[test]
fn on_the_wire_every_target_receives_the_same_request_but_its_model() {
    // The mock logs every request body it receives.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.jsonl");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(async {
        turnbench::mock::MockServer::start(
            profiles(vec![
                Profile::quick("a", 1.0, 0.2),
                Profile::quick("b", 1.0, 0.2),
            ]),
            &[],
            "127.0.0.1:0".parse().unwrap(),
            Some(&log),
        )
        .await
        .unwrap()
    });
    let project = Project::new(&[]);
    let bench = format!(
        "name = \"wire\"\nseed = 4\n[request]\ntemperature = 0.3\n[replay]\nrounds = 2\npause_scale = 0\n{}{}",
        target("acme", "a", &server.base_url(), ""),
        target("zeta", "b", &server.base_url(), "")
    );
    let bench = project.write("bench.toml", &bench);
    project.run_ok(&[
        "replay",
        "-q",
        "--config",
        bench.to_str().unwrap(),
        "--sessions",
        &repo("sessions/agent-sessions.jsonl"),
    ]);
    // (pass id, messages sent) → the bodies without their model, per model.
    let mut sent: BTreeMap<(String, usize), BTreeMap<String, String>> = BTreeMap::new();
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        let mut body: serde_json::Value = serde_json::from_str(line).unwrap();
        let model = body["model"].as_str().unwrap().to_string();
        body.as_object_mut().unwrap().remove("model");
        let pass = body["user"].as_str().unwrap().to_string();
        let n = body["messages"].as_array().unwrap().len();
        assert!(body["tools"].is_array() && body["stream"] == true);
        sent.entry((pass, n))
            .or_default()
            .insert(model, body.to_string());
    }
    // Four sessions, two rounds: 8 passes of 25 recorded turns between them.
    let passes: BTreeSet<&String> = sent.keys().map(|(p, _)| p).collect();
    assert_eq!(passes.len(), 8);
    assert_eq!(sent.len(), 2 * 25);
    for (turn, by_model) in &sent {
        assert_eq!(by_model.len(), 2, "{turn:?}");
        let bodies: BTreeSet<&String> = by_model.values().collect();
        assert_eq!(bodies.len(), 1, "{turn:?} differs between targets");
    }
    // Each round salts its own system prompt: the same turn differs between rounds.
    let first_system = |round: &str| {
        sent.iter()
            .find(|((p, _), _)| p.starts_with("fix-negative-stock#") && p.contains(round))
            .map(|(_, b)| {
                let body: serde_json::Value =
                    serde_json::from_str(b.values().next().unwrap()).unwrap();
                body["messages"][0]["content"].as_str().unwrap().to_string()
            })
            .unwrap()
    };
    let (one, two) = (first_system("#1-"), first_system("#2-"));
    assert!(one.starts_with("[session ") && two.starts_with("[session "));
    assert_ne!(one, two);
}

#[test]
fn dry_run_shows_each_first_request_and_sends_nothing() {
    let project = Project::new(&[]);
    let bench = format!(
        "name = \"dry\"\n[replay]\nrounds = 2\n{}{}",
        target(
            "acme",
            "m1",
            "http://127.0.0.1:9/v1",
            "api_key_env = \"TURNBENCH_DRY_REPLAY_KEY\"\nheaders_env = { \"x-org\" = \"TURNBENCH_DRY_REPLAY_ORG\" }\nreplay = { cache_hint = \"header:x-session-affinity\", served_by_field = \"provider\" }"
        ),
        target("zeta", "m2", "http://127.0.0.1:9/v1", "")
    );
    let bench = project.write("bench.toml", &bench);
    let out = project
        .cmd(&[
            "replay",
            "--dry-run",
            "--config",
            bench.to_str().unwrap(),
            "--sessions",
            &repo("sessions/agent-sessions.jsonl"),
        ])
        .env("TURNBENCH_DRY_REPLAY_KEY", "sk-very-secret-value")
        .env("TURNBENCH_DRY_REPLAY_ORG", "org-secret-value")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("2 targets × 4 sessions (25 turns) × 2 rounds = 100 requests"),
        "{text}"
    );
    assert!(text.contains("POST http://127.0.0.1:9/v1/chat/completions"));
    assert!(text.contains("$TURNBENCH_DRY_REPLAY_KEY (set)"));
    assert!(text.contains("x-org"), "header names are shown: {text}");
    assert!(text.contains(
        "cache hint header:x-session-affinity; serving provider: response field provider"
    ));
    assert!(text.contains("[session SALT]") && text.contains("\"read_file\""));
    // The user-field hint goes in the body of the target that asks for it.
    assert!(text.contains("\"user\": \"fix-negative-stock#1-SALT\""));
    assert!(!text.contains("sk-very-secret-value") && !text.contains("org-secret-value"));
    assert!(!project.db().exists(), "no store touched");
}

#[test]
fn replayed_sessions_are_not_judged() {
    let project = Project::new(&[]);
    project.run_ok(&[
        "replay",
        "-q",
        "--sessions",
        &repo("sessions/agent-sessions.jsonl"),
        "--pause-scale",
        "0",
    ]);
    let out = project
        .cmd(&[
            "judge",
            "--judge",
            &repo("judges/mock.toml"),
            "--rubric",
            &repo("rubrics/multiturn-quality.toml"),
            "--scenarios",
            &repo("scenarios"),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "no completed conversation to judge (replayed agent sessions are not judged)"
        ),
        "{stderr}"
    );
    let judged: i64 = project
        .conn()
        .query_row("SELECT COUNT(*) FROM judgments", [], |r| r.get(0))
        .unwrap();
    assert_eq!(judged, 0);
    // The report does not send the reader to stages that have nothing to score here.
    let (report, _) = project.run_ok(&["report"]);
    assert!(
        report.contains("replayed agent sessions only: checks and the judge do not score them"),
        "{report}"
    );
    assert!(!report.contains("no judgments yet"), "{report}");
    assert!(!report.contains("no check results yet"), "{report}");
}
