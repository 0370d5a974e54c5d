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
