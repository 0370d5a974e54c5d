//! Issue 10, "Hardening": each numbered item, through the binary against the mock or a
//! scripted loopback server, with a real SQLite file.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::*;
use turnbench::exit::Exit;
use turnbench::mock::Profile;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Item 1 (and 13, 16): a `Retry-After: 1e20` on a 429 once panicked inside the client and
/// lost the conversation with exit code 0.
#[test]
fn a_huge_retry_after_is_a_stored_rate_limit_and_the_exit_code_says_so() {
    let server = Scripted::start(|_| {
        Reply::Close(http(
            "429 Too Many Requests",
            "retry-after: 1e20\r\nconnection: close\r\n",
            r#"{"error":{"message":"slow down","type":"rate_limit_error"}}"#,
        ))
    });
    let project = Project::new(&[("alpha", &two_turn_scenario("alpha", 0))]);
    let bench = format!(
        "name = \"huge\"\nrepeats = 3\nconcurrency = 1\nper_target_concurrency = 1\n[retry]\nattempts = 2\nbackoff_ms = 1\nmax_wait_ms = 20\n{}",
        target("acme", "m", &server.url(), "")
    );
    let bench_path = project.write("bench.toml", &bench);
    let out = project
        .cmd(&["collect", "--config", bench_path.to_str().unwrap()])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(Exit::SomeFailed.code()),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert!(stdout(&out).contains("rate_limited 3"), "{}", stdout(&out));
    assert!(stderr(&out).contains("3 failed"), "{}", stderr(&out));
    let conn = project.conn();
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM conversations WHERE outcome = 'rate_limited'"
        ),
        3
    );
    let error: String = conn
        .query_row("SELECT error FROM turns LIMIT 1", [], |r| r.get(0))
        .unwrap();
    assert!(error.contains("Retry-After: 1e20"), "{error}");
    // The wait was capped by max_wait_ms: two attempts, the second after 20 ms.
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM attempts WHERE attempt = 2 AND waited_ms = 20"
        ),
        3
    );
    // Item 16: the run records the tokenizer that counted its visible tokens.
    let tokenizer: String = conn
        .query_row("SELECT tokenizer FROM runs", [], |r| r.get(0))
        .unwrap();
    assert!(
        tokenizer.starts_with("o200k_base (tiktoken-rs 0."),
        "{tokenizer}"
    );
}

/// Where any of `secrets` occurs: in a file of the project (but the files named in
/// `written_in`, which hold them on purpose), or in the stdout or stderr of `outputs`.
fn secrets_found(
    project: &Project,
    outputs: &[std::process::Output],
    secrets: &[&str],
    written_in: &[&str],
) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(project.dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if written_in.iter().any(|f| path.ends_with(f)) {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap_or_default();
        for secret in secrets {
            if bytes.windows(secret.len()).any(|w| w == secret.as_bytes()) {
                found.push(format!("{} in {}", secret, path.display()));
            }
        }
    }
    for out in outputs {
        for text in [stdout(out), stderr(out)] {
            for secret in secrets {
                if text.contains(secret) {
                    found.push(format!("{secret} in output"));
                }
            }
        }
    }
    found
}

/// Item 2: header values reach the provider and nothing else: not the store, the output,
/// the dry run, the judge's rows or an export.
#[test]
fn header_secrets_never_reach_the_store_logs_or_exports() {
    let file_secret = "hdr-file-secret-5b1e9d";
    let env_secret = "hdr-env-secret-8c2f4a";
    let mut judge_profile = Profile::quick("mock-judge", 1.0, 0.0);
    judge_profile.judge = Some(Default::default());
    let mock = Mock::start(
        profiles(vec![Profile::quick("m", 1.0, 0.2), judge_profile]),
        None,
    );
    let project = Project::new(&[("alpha", &two_turn_scenario("alpha", 0))]);
    let bench = format!(
        "name = \"secrets\"\nrepeats = 2\n{}",
        target(
            "acme",
            "m",
            &mock.url(),
            &format!(
                "headers = {{ \"x-team\" = \"{file_secret}\" }}\nheaders_env = {{ \"x-api-key\" = \"TB_TEST_HDR_KEY\" }}"
            )
        )
    );
    let bench_path = project.write("bench.toml", &bench);
    let judge = project.write(
        "judge.toml",
        &format!(
            "base_url = \"{}\"\nmodel = \"mock-judge\"\ntemplate = \"{}\"\nheaders_env = {{ \"x-api-key\" = \"TB_TEST_HDR_KEY\" }}\nheaders = {{ \"x-team\" = \"{file_secret}\" }}\n",
            mock.url(),
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("judges/prompt.md")
                .display()
        ),
    );
    let rubric = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rubrics/support-tone.toml");
    let mut outputs = Vec::new();
    for args in [
        vec![
            "collect",
            "--dry-run",
            "--config",
            bench_path.to_str().unwrap(),
        ],
        vec!["collect", "--config", bench_path.to_str().unwrap()],
        vec![
            "judge",
            "--judge",
            judge.to_str().unwrap(),
            "--rubric",
            rubric.to_str().unwrap(),
            "--dry-run",
        ],
        vec![
            "judge",
            "--judge",
            judge.to_str().unwrap(),
            "--rubric",
            rubric.to_str().unwrap(),
        ],
        vec![
            "export",
            "conversations",
            "--with-scores",
            "--out",
            "all.jsonl",
        ],
        vec!["export", "conversations", "--with-scores"],
    ] {
        let out = project
            .cmd(&args)
            .env("TB_TEST_HDR_KEY", env_secret)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        outputs.push(out);
    }
    // The provider and the judge got both headers on every request.
    let served = mock.server.served();
    assert!(served.len() >= 4, "{}", served.len());
    for s in &served {
        assert!(
            s.headers.contains(&("x-team".into(), file_secret.into())),
            "{:?}",
            s.headers
        );
        assert!(
            s.headers.contains(&("x-api-key".into(), env_secret.into())),
            "{:?}",
            s.headers
        );
    }
    let dry = stdout(&outputs[0]);
    assert!(
        dry.contains("x-api-key (from $TB_TEST_HDR_KEY, set)") && dry.contains("x-team"),
        "{dry}"
    );
    drop(project.conn()); // checkpoint the WAL into the file as well
    let found = secrets_found(
        &project,
        &outputs,
        &[file_secret, env_secret],
        &["bench.toml", "judge.toml"],
    );
    assert!(found.is_empty(), "secrets found: {found:?}");
    // Names are kept: the run says which headers it sent and where their values came from.
    let settings: String = project
        .conn()
        .query_row("SELECT settings FROM runs", [], |r| r.get(0))
        .unwrap();
    assert!(
        settings.contains("x-team") && settings.contains("TB_TEST_HDR_KEY"),
        "{settings}"
    );
}

/// Issue 24: credentials in a URL (user-info and a `key` query parameter, both from the
/// environment) reach the provider and nothing else: not the store, the output of collect,
/// judge and replay (dry runs included), a connection error quoting the URL, the exports
/// or the reports.
#[test]
fn url_secrets_never_reach_the_store_output_exports_or_reports() {
    let (user, pass, key) = ("tbuser-7f3a", "tbpass-91c2e", "tbq-secret-4d8b");
    let secrets = [user, pass, key];
    let env = [
        ("TB_URL_USERINFO", format!("{user}:{pass}")),
        ("TB_URL_KEY", key.to_string()),
    ];
    let mut judge_profile = Profile::quick("mock-judge", 1.0, 0.0);
    judge_profile.judge = Some(Default::default());
    let mock = Mock::start(
        profiles(vec![Profile::quick("m", 1.0, 0.2), judge_profile]),
        None,
    );
    let project = Project::new(&[("alpha", &two_turn_scenario("alpha", 0))]);
    let creds = "userinfo_env = \"TB_URL_USERINFO\"\nquery_env = { key = \"TB_URL_KEY\" }";
    let url = format!("{}?api-version=7", mock.url());
    let bench = project.write(
        "bench.toml",
        &format!(
            "name = \"url-secrets\"\nrepeats = 2\n[replay]\npause_scale = 0\nbreaks = \"none\"\n{}",
            target("acme", "m", &url, creds)
        ),
    );
    // Nothing listens on port 1: the connection error quotes the URL it could not reach.
    let dead = project.write(
        "dead.toml",
        &format!(
            "name = \"url-dead\"\n{}",
            target("gone", "m", "http://127.0.0.1:1/v1?api-version=7", creds)
        ),
    );
    let judge = project.write(
        "judge.toml",
        &format!(
            "base_url = \"{url}\"\nmodel = \"mock-judge\"\ntemplate = \"{}\"\n{creds}\n",
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("judges/prompt.md")
                .display()
        ),
    );
    let sessions = project.write(
        "sessions.jsonl",
        &format!(
            "{}\n",
            serde_json::json!({"id": "s0", "messages": [
                {"role": "user", "content": "list three primes"},
                {"role": "assistant", "content": "2, 3, 5"}]})
        ),
    );
    let rubric = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rubrics/support-tone.toml");
    let (bench, dead, judge, sessions, rubric) = (
        bench.to_str().unwrap(),
        dead.to_str().unwrap(),
        judge.to_str().unwrap(),
        sessions.to_str().unwrap(),
        rubric.to_str().unwrap(),
    );
    let mut outputs = Vec::new();
    for args in [
        vec!["collect", "--dry-run", "--config", bench],
        vec!["collect", "--config", bench],
        vec!["collect", "--resume", "--config", bench],
        vec!["collect", "--config", dead],
        vec!["judge", "--judge", judge, "--rubric", rubric, "--dry-run"],
        vec!["judge", "--judge", judge, "--rubric", rubric],
        vec![
            "replay",
            "--dry-run",
            "--config",
            bench,
            "--sessions",
            sessions,
        ],
        vec!["replay", "--config", bench, "--sessions", sessions],
        vec![
            "export",
            "conversations",
            "--with-scores",
            "--out",
            "all.jsonl",
        ],
        vec!["export", "conversations", "--with-scores"],
        vec!["report", "--format", "html", "--out", "report.html"],
        vec!["report", "--format", "json"],
        vec!["report", "--format", "md"],
    ] {
        let out = project.cmd(&args).envs(env.clone()).output().unwrap();
        // The dead target's collect fails its turns (exit code 2), as it should.
        let expected = if args.contains(&dead) { 2 } else { 0 };
        assert_eq!(
            out.status.code(),
            Some(expected),
            "{args:?}: {}",
            stderr(&out)
        );
        outputs.push(out);
    }
    // The provider and the judge got both credentials on every request, the literal
    // parameter kept beside them.
    let served = mock.server.served();
    assert!(served.len() >= 6, "{}", served.len());
    for s in &served {
        let query = s.query.as_deref().unwrap_or_default();
        assert!(
            query.contains(&format!("key={key}")) && query.contains("api-version=7"),
            "{query}"
        );
        assert!(
            s.auth.as_deref().is_some_and(|a| a.starts_with("Basic ")),
            "{:?}",
            s.auth
        );
    }
    let dry = stdout(&outputs[0]);
    assert!(
        dry.contains("?api-version=7&key=***")
            && dry.contains("***@127.0.0.1")
            && dry.contains("query_env \"key\" from $TB_URL_KEY (set)"),
        "{dry}"
    );
    // The connection error was stored, quoting the URL masked.
    let conn = project.conn();
    let error: String = conn
        .query_row(
            "SELECT t.error FROM turns t JOIN conversations c ON c.id = t.conversation_id
             JOIN targets g ON g.id = c.target_id WHERE g.provider = 'gone' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(error.contains("key=***"), "{error}");
    // Resume recognised the run: one collect run for the bench (and one replay run).
    let runs = rows(
        &conn,
        "SELECT name, EXISTS (SELECT 1 FROM replay_runs p WHERE p.run_id = runs.id)
         FROM runs WHERE source = 'collect' ORDER BY id",
        [],
        |r| Ok((r.get::<_, String>(0)?, r.get::<_, bool>(1)?)),
    );
    let collected = runs
        .iter()
        .filter(|(n, replay)| n == "url-secrets" && !replay)
        .count();
    assert_eq!(collected, 1, "{runs:?}");
    let settings: String = conn
        .query_row(
            "SELECT settings FROM runs WHERE name = 'url-dead'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        settings.contains("TB_URL_KEY") && settings.contains("api-version=7"),
        "{settings}"
    );
    drop(conn); // checkpoint the WAL into the file as well
    let found = secrets_found(&project, &outputs, &secrets, &[]);
    assert!(found.is_empty(), "secrets found: {found:?}");
    assert!(project.path("report.html").exists() && project.path("all.jsonl").exists());
}

/// Issue 24: a credential written in a `base_url` is refused, naming the file, the line
/// and the fix, without repeating the credential.
#[test]
fn a_literal_secret_in_a_url_is_refused_without_being_repeated() {
    let project = Project::new(&[("alpha", &two_turn_scenario("alpha", 0))]);
    let bench = project.write(
        "bench.toml",
        &format!(
            "name = \"lit\"\n{}",
            target("acme", "m", "http://bob:tblit-pass-33@127.0.0.1:1/v1", "")
        ),
    );
    let judge = project.write(
        "judge.toml",
        "base_url = \"https://judge.example/v1?api_key=tblit-key-44\"\nmodel = \"j\"\ntemplate = \"t.md\"\n",
    );
    project.write("t.md", "{{transcript}}");
    let rubric = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rubrics/support-tone.toml");
    for (args, line, fix) in [
        (
            vec!["collect", "--dry-run", "--config", bench.to_str().unwrap()],
            "bench.toml:6:",
            "userinfo_env",
        ),
        (
            vec![
                "judge",
                "--judge",
                judge.to_str().unwrap(),
                "--rubric",
                rubric.to_str().unwrap(),
                "--dry-run",
            ],
            "judge.toml:1:",
            "query_env = { \"api_key\" = ",
        ),
    ] {
        let out = project.cmd(&args).output().unwrap();
        let err = stderr(&out);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(err.contains(line) && err.contains(fix), "{err}");
        for secret in ["tblit-pass-33", "tblit-key-44"] {
            assert!(
                !err.contains(secret) && !stdout(&out).contains(secret),
                "{err}"
            );
        }
    }
    assert!(!project.db().exists() || count(&project.conn(), "SELECT COUNT(*) FROM runs") == 0);
}

/// A project collected from the mock (two scenarios, two repeats), with a judge profile.
fn collected_for_judging() -> (Mock, Project, std::path::PathBuf) {
    let mut real_judge = Profile::quick("glm-judge", 1.0, 0.0);
    real_judge.judge = Some(Default::default());
    let mock = Mock::start(
        profiles(vec![
            Profile::quick("m", 1.0, 0.2),
            Profile::quick("mock-judge", 1.0, 0.0),
            real_judge,
        ]),
        None,
    );
    let project = Project::new(&[
        ("alpha", &two_turn_scenario("alpha", 0)),
        ("beta", &two_turn_scenario("beta", 0)),
    ]);
    let bench = format!(
        "name = \"j\"\nrepeats = 2\n{}",
        target("acme", "m", &mock.url(), "")
    );
    let bench_path = project.write("bench.toml", &bench);
    project.run_ok(&["collect", "-q", "--config", bench_path.to_str().unwrap()]);
    let rubric = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rubrics/support-tone.toml");
    (mock, project, rubric)
}

fn judge_file(project: &Project, name: &str, head: &str) -> String {
    let template = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("judges/prompt.md");
    project
        .write(
            &format!("{name}.toml"),
            &format!(
                "id = \"j\"\n{head}\ntemplate = \"{}\"\nsystem = \"Judge.\"\n[retry]\nattempts = 1\n",
                template.display()
            ),
        )
        .to_str()
        .unwrap()
        .to_string()
}

/// Item 4: a simulated run with the same judge id, model and settings as a real judge
/// once made the real run send nothing and keep the simulated scores.
#[test]
fn a_simulated_judge_never_stands_in_for_a_real_one() {
    let (mock, project, rubric) = collected_for_judging();
    let rubric = rubric.to_str().unwrap();
    let simulated = judge_file(
        &project,
        "sim",
        "builtin_mock = true\nmodel = \"glm-judge\"",
    );
    let real = judge_file(
        &project,
        "real",
        &format!("base_url = \"{}\"\nmodel = \"glm-judge\"", mock.url()),
    );
    project.run_ok(&["judge", "-q", "--judge", &simulated, "--rubric", rubric]);
    let sent = |mock: &Mock| {
        mock.server
            .served()
            .iter()
            .filter(|s| s.nominal_ttft_ms.is_none())
            .count()
    };
    let before = sent(&mock);
    let (out, _) = project.run_ok(&["judge", "-q", "--judge", &real, "--rubric", rubric]);
    assert_eq!(sent(&mock) - before, 2, "the real judge is asked: {out}");
    let conn = project.conn();
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM judgments WHERE simulated = 0 AND status = 'ok'"
        ),
        2
    );
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM current_judgments WHERE simulated = 0"
        ),
        2
    );
    assert!(
        out.contains("j (glm-judge)") && out.contains("j (glm-judge, simulated)"),
        "{out}"
    );
}

/// Item 12: `--rejudge` asks scored judgments again (beside the old rows), `--conversation`
/// narrows the selection, and the summary ends with the table of current judgments.
#[test]
fn rejudge_asks_again_and_the_summary_is_a_table() {
    let (mock, project, rubric) = collected_for_judging();
    let rubric = rubric.to_str().unwrap();
    let judge = judge_file(
        &project,
        "mockj",
        &format!("base_url = \"{}\"\nmodel = \"mock-judge\"", mock.url()),
    );
    let sent = |mock: &Mock| {
        mock.server
            .served()
            .iter()
            .filter(|s| s.nominal_ttft_ms.is_none())
            .count()
    };
    let base = sent(&mock);
    let (first, _) = project.run_ok(&["judge", "--judge", &judge, "--rubric", rubric]);
    assert_eq!(sent(&mock) - base, 2);
    assert!(first.contains("current judgments"), "{first}");
    let row = first
        .lines()
        .find(|l| l.starts_with("support-tone@1"))
        .unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cols[cols.len() - 3..], ["2", "0", "0"], "{first}");
    assert!(first.contains("mean"), "{first}");
    let (again, _) = project.run_ok(&["judge", "--judge", &judge, "--rubric", rubric]);
    assert_eq!(
        sent(&mock) - base,
        2,
        "a plain re-run sends nothing: {again}"
    );
    let (re, _) = project.run_ok(&["judge", "--judge", &judge, "--rubric", rubric, "--rejudge"]);
    assert_eq!(sent(&mock) - base, 4, "{re}");
    assert!(re.contains("--rejudge"), "{re}");
    let conn = project.conn();
    assert_eq!(count(&conn, "SELECT COUNT(*) FROM judgments"), 4);
    assert_eq!(count(&conn, "SELECT COUNT(*) FROM current_judgments"), 2);
    let id: i64 = conn
        .query_row("SELECT MIN(conversation_id) FROM judgments", [], |r| {
            r.get(0)
        })
        .unwrap();
    project.run_ok(&[
        "judge",
        "--judge",
        &judge,
        "--rubric",
        rubric,
        "--rejudge",
        "--conversation",
        &id.to_string(),
    ]);
    assert_eq!(sent(&mock) - base, 5);
    let out = project
        .cmd(&[
            "judge",
            "--judge",
            &judge,
            "--rubric",
            rubric,
            "--conversation",
            "nope",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--conversation nope"),
        "{}",
        stderr(&out)
    );
}

/// Item 12: a re-ask that ends in judge_error keeps the answer the judge gave before it,
/// and the summary says why judgments are unscored.
#[test]
fn a_failed_reask_keeps_the_earlier_raw_answer() {
    let (_mock, project, rubric) = collected_for_judging();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let server = Scripted::start(move |_| {
        if seen.fetch_add(1, Ordering::SeqCst).is_multiple_of(2) {
            let body = serde_json::json!({
                "choices": [{"message": {"role": "assistant", "content": "I think it was fine overall."},
                             "finish_reason": "stop"}]
            });
            Reply::Close(http("200 OK", "connection: close\r\n", &body.to_string()))
        } else {
            Reply::Close(http(
                "500 Internal Server Error",
                "connection: close\r\n",
                r#"{"error":{"message":"down"}}"#,
            ))
        }
    });
    let judge = judge_file(
        &project,
        "flaky",
        &format!(
            "base_url = \"{}\"\nmodel = \"flaky\"\nconcurrency = 1",
            server.url()
        ),
    );
    let out = project
        .cmd(&[
            "judge",
            "--judge",
            &judge,
            "--rubric",
            rubric.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(Exit::SomeFailed.code()),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("unscored: 2"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("judge_error: http_5xx 2"),
        "{}",
        stdout(&out)
    );
    let conn = project.conn();
    let raws: Vec<Option<String>> =
        rows(&conn, "SELECT raw_output FROM judgments", [], |r| r.get(0));
    assert_eq!(raws.len(), 2);
    for raw in raws {
        assert_eq!(raw.as_deref(), Some("I think it was fine overall."));
    }
}

/// Item 17: an error prints its cause once.
#[test]
fn an_error_prints_its_cause_once() {
    let project = Project::new(&[]);
    for args in [
        vec!["import", "missing.jsonl"],
        vec!["collect", "--config", "missing.toml"],
        vec!["judge", "--judge", "missing.toml", "--rubric", "r.toml"],
    ] {
        let out = project.cmd(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        assert_eq!(
            err.matches("No such file or directory").count(),
            1,
            "{args:?}: {err}"
        );
    }
    // A usage error is a setup error: exit 1 (2 means "finished, with failures").
    let out = project
        .cmd(&["collect", "--no-such-flag"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

/// Item 17: `--dry-run` prints each target's first request body exactly, however long.
#[test]
fn the_dry_run_prints_the_exact_body() {
    let long = "Design the pagination. ".repeat(20);
    let scenario = format!(
        "id = \"alpha\"\ncategory = \"developer\"\nsystem = \"{long}\"\n[[turn]]\nuser = \"{long}!\"\n"
    );
    let project = Project::new(&[("alpha", &scenario)]);
    let bench = format!(
        "name = \"dry\"\n{}",
        target("acme", "m", "http://127.0.0.1:9/v1", "")
    );
    let bench_path = project.write("bench.toml", &bench);
    let (text, _) = project.run_ok(&[
        "collect",
        "--dry-run",
        "--config",
        bench_path.to_str().unwrap(),
    ]);
    assert!(text.contains(&format!("\"{long}!\"")), "{text}");
    assert!(!text.contains('…'), "{text}");
}

/// Item 18: an empty key variable is refused like an unset one, before any request.
#[test]
fn an_empty_key_variable_is_refused_before_any_request() {
    let mock = Mock::start(profiles(vec![Profile::quick("m", 1.0, 0.2)]), None);
    let project = Project::new(&[("alpha", &two_turn_scenario("alpha", 0))]);
    let bench = format!(
        "name = \"k\"\n{}",
        target(
            "acme",
            "m",
            &mock.url(),
            "api_key_env = \"TB_TEST_EMPTY_KEY\""
        )
    );
    let bench_path = project.write("bench.toml", &bench);
    let out = project
        .cmd(&["collect", "--config", bench_path.to_str().unwrap()])
        .env("TB_TEST_EMPTY_KEY", "")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("TB_TEST_EMPTY_KEY") && stderr(&out).contains("not set or empty")
    );
    assert!(mock.server.served().is_empty());
}

/// Item 18: `judge --dry-run` and `--audit` neither create nor upgrade a store.
#[test]
fn judge_dry_run_and_audit_leave_the_store_alone() {
    let project = Project::new(&[]);
    let judge = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("judges/mock.toml");
    let rubric = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rubrics/support-tone.toml");
    let args = |mode: &'static str| {
        vec![
            "judge".to_string(),
            "--judge".into(),
            judge.display().to_string(),
            "--rubric".into(),
            rubric.display().to_string(),
            mode.into(),
        ]
    };
    for mode in ["--dry-run", "--audit"] {
        let a = args(mode);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = project.cmd(&refs).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(stderr(&out).contains("no such store"), "{}", stderr(&out));
        assert!(!project.db().exists(), "{mode} created a store");
    }
    // An older store is read as it is: planned in a copy, the file left untouched.
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/store-v2-before-migration-names.db"),
        project.db(),
    )
    .unwrap();
    let before = std::fs::read(project.db()).unwrap();
    for mode in ["--dry-run", "--audit"] {
        let a = args(mode);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = project.cmd(&refs).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", stderr(&out));
        assert_eq!(
            std::fs::read(project.db()).unwrap(),
            before,
            "{mode} changed the store"
        );
    }
    let version: i64 = project
        .conn()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, 2);
}

/// Items 2, 5, 12, 13, 15, 17: what changed is documented where a user looks.
#[test]
fn the_readme_documents_what_changed() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    for needle in [
        "`only`",
        "headers_env",
        "--rejudge",
        "wall_ms",
        "internal_error",
        "content_filter",
        "keep-alive",
        "tokenizer",
        "Exit codes",
        "cached_tokens",
    ] {
        assert!(readme.contains(needle), "README does not mention {needle}");
    }
}

/// Issue 31: a bench's target and a judge name their endpoint with the same keys, checked
/// by one function when the file is loaded. The same mistake in either file is the same
/// error (its file, its line, the same message and fix) before anything is sent; a dry
/// run, which sends nothing, needs no variable; `lint` reads both the same way.
#[test]
fn the_same_endpoint_mistake_in_a_bench_and_a_judge_is_the_same_error_at_load() {
    let project = Project::new(&[("alpha", &two_turn_scenario("alpha", 0))]);
    project.write("t.md", "{{criteria}}\n{{transcript}}\n");
    let rubric = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rubrics/support-tone.toml");
    let rubric = rubric.to_str().unwrap();
    // What a message says once its file, line and endpoint's name are taken out.
    let said = |err: &str, at: &str, owner: &str| -> String {
        let start = err.find(at).unwrap_or_else(|| panic!("no {at} in {err}"));
        err[start + at.len()..]
            .trim_end()
            .replace(owner, "<endpoint>")
    };
    for (mistake, var) in [
        ("api_key_env = \"TB_SAME_UNSET_KEY\"", "TB_SAME_UNSET_KEY"),
        (
            "headers_env = { \"x-api-key\" = \"TB_SAME_UNSET_HDR\" }",
            "TB_SAME_UNSET_HDR",
        ),
        (
            "query_env = { key = \"TB_SAME_UNSET_Q\" }",
            "TB_SAME_UNSET_Q",
        ),
    ] {
        project.write(
            "bench.toml",
            &format!(
                "name = \"same\"\n{}",
                target("acme", "m", "http://127.0.0.1:9/v1", mistake)
            ),
        );
        project.write(
            "judge.toml",
            &format!(
                "base_url = \"http://127.0.0.1:9/v1\"\nmodel = \"j\"\ntemplate = \"t.md\"\n{mistake}\n"
            ),
        );
        let collect = project
            .cmd(&["collect", "--config", "bench.toml"])
            .output()
            .unwrap();
        let judge = ["judge", "--judge", "judge.toml", "--rubric", rubric];
        let judged = project.cmd(&judge).output().unwrap();
        for out in [&collect, &judged] {
            assert_eq!(out.status.code(), Some(1), "{mistake}: {}", stderr(out));
            assert!(stderr(out).contains(var), "{}", stderr(out));
        }
        let bench_says = said(&stderr(&collect), "bench.toml:7:", "acme / m");
        let judge_says = said(&stderr(&judged), "judge.toml:4:", "judge judge");
        assert_eq!(bench_says, judge_says, "{mistake}");
        assert!(bench_says.contains("not set or empty") && bench_says.contains("\n  fix: export"));
        assert!(!project.db().exists(), "{mistake}: a store was made");

        // Sending nothing needs no variable.
        let dry = project
            .cmd(&["collect", "--config", "bench.toml", "--dry-run"])
            .output()
            .unwrap();
        assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
        let dry = project
            .cmd(&[&judge[..], &["--dry-run"]].concat())
            .output()
            .unwrap();
        assert!(
            !stderr(&dry).contains("not set or empty"),
            "{}",
            stderr(&dry)
        );
    }

    // A header name no HTTP request can carry, found by `lint` in both files alike.
    std::fs::create_dir(project.path("judges")).unwrap();
    let bad = "headers = { \"x team\" = \"blue\" }";
    project.write(
        "bench.toml",
        &format!(
            "name = \"same\"\n{}",
            target("acme", "m", "http://127.0.0.1:9/v1", bad)
        ),
    );
    project.write(
        "judges/judge.toml",
        &format!(
            "base_url = \"http://127.0.0.1:9/v1\"\nmodel = \"j\"\ntemplate = \"t.md\"\n{bad}\n"
        ),
    );
    project.write("judges/t.md", "{{criteria}}\n{{transcript}}\n");
    let out = project.cmd(&["lint"]).output().unwrap();
    let err = format!("{}{}", stdout(&out), stderr(&out));
    assert_ne!(out.status.code(), Some(0), "{err}");
    let bench_says = said(&err, "bench.toml:7:", "acme / m");
    let judge_says = said(&err, "judge.toml:4:", "judge judge");
    let first = |s: &str| s.lines().take(2).collect::<Vec<_>>().join("\n");
    assert_eq!(first(&bench_says), first(&judge_says), "{err}");
    assert!(
        first(&bench_says).contains("not a valid HTTP header name"),
        "{err}"
    );
}
