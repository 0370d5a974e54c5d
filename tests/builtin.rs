//! The offline defaults a new user starts with: `collect` with no config, and `mock`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::*;
use turnbench::chat::Message;
use turnbench::client::{Client, Endpoint};
use turnbench::config::{RequestParams, Scenario};
use turnbench::outcome::TurnOutcome;

fn real_scenario(id: &str) -> String {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{id}.toml"));
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn collect_without_config_runs_four_simulated_targets_offline() {
    let ids = ["biz-policy-faq", "struct-invoice-extraction"];
    let texts: Vec<String> = ids.iter().map(|id| real_scenario(id)).collect();
    let project = Project::new(&[(ids[0], &texts[0]), (ids[1], &texts[1])]);
    let (stdout, _) = project.run_ok(&["collect", "--repeats", "1"]);
    for name in [
        "sim-swift / glm-sim",
        "sim-burst / glm-sim",
        "sim-flaky / glm-sim",
        "sim-thinker / glm-sim",
    ] {
        assert!(stdout.contains(name), "{stdout}");
    }
    let conn = project.conn();
    assert_eq!(count(&conn, "SELECT COUNT(*) FROM conversations"), 4 * 2);
    // The mock answered the fast target's first turn with the scenario's reference.
    let scenario = Scenario::load(&project.path(&format!("scenarios/{}.toml", ids[0]))).unwrap();
    let answer: String = conn
        .query_row(
            "SELECT tu.answer FROM turns tu JOIN conversations c ON c.id = tu.conversation_id
             JOIN targets t ON t.id = c.target_id
             WHERE t.model = 'sim-swift' AND c.scenario = ?1 AND tu.idx = 0",
            [ids[0]],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(Some(answer), scenario.turns[0].reference);
    // The reasoning target's reasoning is stored apart from its answer.
    assert!(
        count(
            &conn,
            "SELECT COUNT(*) FROM turns tu JOIN conversations c ON c.id = tu.conversation_id
             JOIN targets t ON t.id = c.target_id
             WHERE t.model = 'sim-thinker' AND tu.reasoning IS NOT NULL AND tu.reasoning_tokens = 80"
        ) > 0
    );
}

#[test]
fn collect_without_scenarios_here_uses_the_built_in_ones_and_says_so() {
    let project = Project::new(&[]);
    std::fs::remove_dir(project.path("scenarios")).unwrap();
    let (stdout, _) = project.run_ok(&["collect", "--dry-run"]);
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        stdout.contains(&format!(
            "definitions: bench built-in v{version}; scenarios built-in v{version}"
        )),
        "{stdout}"
    );
    let shipped =
        std::fs::read_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"))
            .unwrap()
            .count();
    assert!(
        stdout.contains(&format!("4 targets × {shipped} scenarios")),
        "{stdout}"
    );
    // A folder named on the command line is used as named: a missing one is an error.
    let out = project
        .cmd(&["collect", "--scenarios", "nowhere"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nowhere: no scenario folder") && err.contains("fix:"),
        "{err}"
    );
}

#[test]
fn mock_command_serves_reference_answers_on_its_port() {
    let project = Project::new(&[("biz-policy-faq", &real_scenario("biz-policy-faq"))]);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("turnbench"))
        .current_dir(project.dir.path())
        .args([
            "mock",
            "--port",
            &port.to_string(),
            "--scenarios",
            "scenarios",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.contains(&format!("http://127.0.0.1:{port}/v1")),
        "{line}"
    );
    assert!(line.contains("1 scenarios"), "{line}");

    let scenario = Scenario::load(&project.path("scenarios/biz-policy-faq.toml")).unwrap();
    let mut messages = Vec::new();
    if let Some(system) = &scenario.system {
        messages.push(Message::new("system", system.clone()));
    }
    messages.push(Message::new("user", scenario.turns[0].user.clone()));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let endpoint = Endpoint {
        url: format!("http://127.0.0.1:{port}/v1/chat/completions").into(),
        model: "sim-swift".into(),
        api_key: None,
        headers: vec![],
        params: RequestParams::default(),
    };
    let turn = rt.block_on(async {
        let client = Client::new().unwrap();
        // sim-swift refuses 0.2 % of requests: a retry of the same request gets a new draw.
        for _ in 0..5 {
            let (t, _) = client
                .send(&endpoint, &messages, Duration::from_secs(30))
                .await;
            if t.outcome() != TurnOutcome::RateLimited {
                return t;
            }
        }
        panic!("rate limited five times");
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(turn.outcome(), TurnOutcome::Ok, "{:?}", turn.error);
    assert_eq!(turn.answer, scenario.turns[0].reference);
}

#[test]
fn the_builtin_run_resumes_although_its_mock_port_changes() {
    let project = Project::new(&[("biz-policy-faq", &real_scenario("biz-policy-faq"))]);
    project
        .cmd(&["collect", "-q", "--repeats", "1"])
        .assert()
        .success();
    let (_, err) = project.run_ok(&["collect", "--repeats", "1", "--resume"]);
    assert!(
        err.contains("0 conversations run, 4 already stored"),
        "{err}"
    );
    let conn = project.conn();
    assert_eq!(count(&conn, "SELECT COUNT(*) FROM targets"), 4);
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM targets WHERE host = 'builtin-mock'"
        ),
        4
    );
}

/// Copies a folder of the repository into the project.
fn copy_dir(project: &Project, name: &str, only: Option<&str>) {
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    std::fs::create_dir_all(project.path(name)).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_str().unwrap().to_string();
        if only.is_none_or(|o| file.starts_with(o)) {
            std::fs::copy(&path, project.path(&format!("{name}/{file}"))).unwrap();
        }
    }
}

#[test]
fn the_whole_pipeline_offline_collect_check_judge_export() {
    let id = "biz-policy-faq";
    let project = Project::new(&[(id, &real_scenario(id))]);
    copy_dir(&project, "checks", Some(id));
    copy_dir(&project, "rubrics", None);
    copy_dir(&project, "judges", None);
    project
        .cmd(&["collect", "-q", "--repeats", "1"])
        .assert()
        .success();
    project.cmd(&["check", "-q"]).assert().success();
    project
        .cmd(&[
            "judge",
            "-q",
            "--judge",
            "judges/mock.toml",
            "--rubric",
            "rubrics/multiturn-quality.toml",
        ])
        .assert()
        .success();
    let (exported, _) = project.run_ok(&["export", "conversations", "--with-scores"]);
    let lines: Vec<serde_json::Value> = exported
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "one conversation per simulated target");
    let checks_file =
        turnbench::checks::CheckSet::load(&project.path(&format!("checks/{id}.toml"))).unwrap();
    for line in &lines {
        let checks = line["checks"].as_array().unwrap();
        assert_eq!(checks.len(), checks_file.checks.len(), "every check, once");
        if line["outcome"] == "completed" {
            assert!(checks.iter().all(|c| c["passed"].is_boolean()));
            let judgments = line["judgments"].as_array().unwrap();
            assert_eq!(judgments.len(), 1);
            assert_eq!(judgments[0]["rubric"], "multiturn-quality@1");
            assert_eq!(judgments[0]["status"], "ok");
            assert_eq!(judgments[0]["scores"].as_object().unwrap().len(), 5);
        } else {
            assert!(checks.iter().all(|c| c["passed"].is_null()), "not scored");
        }
    }
}
