//! Shared pieces for integration tests: an in-process mock on 127.0.0.1:0, project
//! folders in temp dirs, the binary, and store queries.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use rusqlite::Connection;
use turnbench::mock::{MockConfig, MockServer, Profile};

/// A mock server with its own runtime, so tests can block on the binary meanwhile.
pub struct Mock {
    pub server: MockServer,
    _rt: tokio::runtime::Runtime,
}

impl Mock {
    pub fn start(config: MockConfig, scenarios_dir: Option<&Path>) -> Mock {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let scenarios = scenarios_dir
            .map(|d| turnbench::config::Scenario::load_dir(d).unwrap())
            .unwrap_or_default();
        let server = rt.block_on(async {
            MockServer::start(config, &scenarios, "127.0.0.1:0".parse().unwrap(), None)
                .await
                .unwrap()
        });
        Mock { server, _rt: rt }
    }

    pub fn url(&self) -> String {
        self.server.base_url()
    }
}

pub fn profiles(list: Vec<Profile>) -> MockConfig {
    MockConfig {
        seed: 11,
        profiles: list,
        time_scale: 1.0,
    }
}

/// A temp project: `scenarios/` with the given files, and room for bench.toml and the db.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    pub fn new(scenarios: &[(&str, &str)]) -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("scenarios")).unwrap();
        for (id, text) in scenarios {
            std::fs::write(dir.path().join(format!("scenarios/{id}.toml")), text).unwrap();
        }
        Project { dir }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path(rel);
        std::fs::write(&p, text).unwrap();
        p
    }

    pub fn db(&self) -> PathBuf {
        self.path("turnbench.db")
    }

    /// `turnbench --db <project db> ARGS` run in the project folder.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::cargo_bin("turnbench").unwrap();
        c.current_dir(self.dir.path())
            .arg("--db")
            .arg(self.db())
            .args(args);
        c
    }

    /// Runs `turnbench ARGS`, asserts it succeeded (showing its stderr if not), and
    /// returns (stdout, stderr).
    pub fn run_ok(&self, args: &[&str]) -> (String, String) {
        let out = self.cmd(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "turnbench {args:?} failed: {stderr}");
        (String::from_utf8_lossy(&out.stdout).to_string(), stderr)
    }

    pub fn conn(&self) -> Connection {
        Connection::open(self.db()).unwrap()
    }
}

/// A two-turn scenario whose second turn pauses `pause` ms.
pub fn two_turn_scenario(id: &str, pause: u64) -> String {
    format!(
        r#"id = "{id}"
category = "developer"
system = "You are terse."

[[turn]]
user = "First task for {id}: list three prime numbers."
reference = "2, 3, 5"

[[turn]]
user = "Correction for {id}: return them as a JSON array."
pause_ms = [{pause}, {pause}]
reference = "[2, 3, 5]"
"#
    )
}

/// One `[[target]]` table.
pub fn target(provider: &str, model: &str, url: &str, extra: &str) -> String {
    format!(
        "\n[[target]]\nprovider = \"{provider}\"\nmodel = \"{model}\"\nbase_url = \"{url}\"\n{extra}\n"
    )
}

/// Every row of a query, mapped by `f`.
pub fn rows<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    f: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
) -> Vec<T> {
    let mut stmt = conn.prepare(sql).unwrap();
    stmt.query_map(params, f)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

pub fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// A request as the scripted server read it.
pub struct ScriptedRequest {
    pub model: String,
    /// 0 for the first request on its connection, 1 for the next (keep-alive), …
    pub on_connection: usize,
    pub headers: String,
    /// The request body as JSON (null when it was not JSON).
    pub body: serde_json::Value,
}

/// What the scripted server does with a request.
pub enum Reply {
    /// These bytes (status line, headers, body), then the connection closes.
    Close(Vec<u8>),
    /// These bytes, and the connection stays open for the next request (keep-alive).
    KeepAlive(Vec<u8>),
    /// Close the connection without answering.
    Hangup,
    /// Each piece written at its offset from the moment the request was read (sleeping
    /// until then, so delays do not add up), then the connection closes.
    Paced(Vec<(std::time::Duration, Vec<u8>)>),
}

/// A raw HTTP/1.1 server on 127.0.0.1 that answers each request by its model with
/// byte-exact responses: the dialects and faults of real servers, reproduced.
pub struct Scripted {
    pub addr: std::net::SocketAddr,
}

impl Scripted {
    pub fn start(script: impl Fn(&ScriptedRequest) -> Reply + Send + Sync + 'static) -> Scripted {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let script = std::sync::Arc::new(script);
        std::thread::spawn(move || {
            for sock in listener.incoming() {
                let Ok(mut sock) = sock else { continue };
                let script = script.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(sock.try_clone().unwrap());
                    for on_connection in 0.. {
                        let mut head = String::new();
                        let mut len = 0;
                        loop {
                            let mut line = String::new();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            if let Some(v) =
                                line.to_ascii_lowercase().strip_prefix("content-length:")
                            {
                                len = v.trim().parse().unwrap_or(0);
                            }
                            if line == "\r\n" {
                                break;
                            }
                            head.push_str(&line);
                        }
                        let mut body = vec![0; len];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        let json: serde_json::Value =
                            serde_json::from_slice(&body).unwrap_or_default();
                        let req = ScriptedRequest {
                            model: json["model"].as_str().unwrap_or_default().to_string(),
                            on_connection,
                            headers: head,
                            body: json,
                        };
                        match script(&req) {
                            Reply::Close(bytes) => {
                                let _ = sock.write_all(&bytes);
                                return;
                            }
                            Reply::KeepAlive(bytes) => {
                                if sock.write_all(&bytes).is_err() {
                                    return;
                                }
                            }
                            Reply::Hangup => return,
                            Reply::Paced(pieces) => {
                                let _ = sock.set_nodelay(true);
                                let t0 = std::time::Instant::now();
                                for (at, bytes) in pieces {
                                    let due = t0 + at;
                                    std::thread::sleep(
                                        due.saturating_duration_since(std::time::Instant::now()),
                                    );
                                    if sock.write_all(&bytes).is_err() {
                                        return;
                                    }
                                }
                                return;
                            }
                        }
                    }
                });
            }
        });
        Scripted { addr }
    }

    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
}

/// An event-stream response of these `data:` payloads, closed after the last.
pub fn sse(events: &[&str]) -> Vec<u8> {
    let mut out = String::from(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
    );
    for e in events {
        out.push_str(&format!("data: {e}\n\n"));
    }
    out.into_bytes()
}

/// A response with a status line, extra header lines and a body, with its length.
pub fn http(status: &str, headers: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{headers}\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A streamed answer of `text` that finishes with `finish`.
pub fn answer_sse(text: &str, finish: &str) -> Vec<u8> {
    let delta = serde_json::json!({"choices":[{"delta":{"content":text}}]}).to_string();
    let end = format!(r#"{{"choices":[{{"delta":{{}},"finish_reason":"{finish}"}}]}}"#);
    sse(&[&delta, &end, "[DONE]"])
}

/// Judge settings for `model` served at `base_url` (id = the model's name), with the
/// repository's prompt template; `body` is the rest of the file (counts, `[retry]`).
pub fn judge_toml(base_url: &str, model: &str, body: &str) -> String {
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("judges/prompt.md");
    format!(
        "id = \"{model}\"\nbase_url = \"{base_url}\"\nmodel = \"{model}\"\ntemplate = \"{}\"\n{body}",
        template.display()
    )
}

/// `turnbench --db DB --quiet ARGS` in `dir`, off the async runtime (a test's mock keeps
/// serving meanwhile): its output.
pub async fn turnbench_quiet<S: AsRef<std::ffi::OsStr>>(
    dir: &Path,
    db: &Path,
    args: &[S],
) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_turnbench"));
    cmd.current_dir(dir)
        .arg("--db")
        .arg(db)
        .arg("--quiet")
        .args(args);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

/// Where `report` breaks docs/report.schema.json, one line per violation (empty: valid):
/// the shape other tools read, checked by the same validator the `json_schema` check uses.
pub fn schema_violations(report: &serde_json::Value) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/report.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    turnbench::checks::JsonSchema::compile(&schema)
        .unwrap()
        .violations(report)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Imports `file` into the project's store and checks it with the shipped suite (the
/// shipped checks against the shipped scenarios).
pub fn import_and_check(project: &Project, file: &Path) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    project.run_ok(&["import", file.to_str().unwrap()]);
    project.run_ok(&[
        "check",
        "--checks",
        repo.join("checks").to_str().unwrap(),
        "--scenarios",
        repo.join("scenarios").to_str().unwrap(),
    ]);
}
