//! # turnbench
//!
//! Measures LLM inference providers the way a sequential, multi-turn agent feels them.
//! Data flows one way: definition files → `collect` (or `import`) → the SQLite store →
//! scoring stages → report. Stages never call each other; they share the pieces below them.
//!
//! ## Layout
//! - [`cli`]: argument parsing and dispatch only.
//! - [`collect`]: the collect stage: scenarios × targets × repeats, pauses.
//! - [`replay`]: the replay stage: recorded agent sessions (read, converted, validated)
//!   replayed against every target with their tools, pauses, breaks and salts.
//! - [`launcher`]: what collect and replay share: resume, the launcher, Ctrl-C, the writer.
//! - [`jsonl`]: JSON Lines input with line numbers and the problem with a line.
//! - [`timestamp`]: RFC 3339 times read from user files.
//! - [`checks`]: rule-based checks per scenario (`checks/*.toml`): load, lint, evaluate;
//!   the `check` stage storing one result per (conversation, check definition), `--explain`;
//!   `checks::schema`, the adapter over the `jsonschema` crate that `json_schema` uses.
//! - [`project_lint`]: `turnbench lint`, the list of linters over every definition file.
//! - [`import`]: transcript files into the store (streaming, validated, idempotent): the
//!   exchange format, ShareGPT and request/response logs, as JSON Lines or a JSON array.
//! - [`label`]: `turnbench label import`: human labels into the store as judgments of
//!   `human:<rater>`, checked against the rubric like a judge's answer.
//! - [`export`]: stored conversations out in the exchange format.
//! - [`exchange`]: the JSON Lines exchange format shared by import and export.
//! - [`exit`]: the exit status vocabulary every command returns, one meaning per code.
//! - [`figure`]: how a figure prints (value, unit, interval, n), once for every format.
//! - [`judge`]: the blind LLM judge — blinding, prompts, parsing, cache keys, the run;
//!   panels, varied replicates, pairwise comparison, reference anchors.
//! - [`judge_panel`]: judging as `turnbench judge` and `turnbench run` both do it: a panel
//!   of judge × rubric jobs audited before any sends, the mock judges started, the jobs run
//!   (orchestration, beside `run`: it sequences the judge stage, never another stage).
//! - [`anchor_suite`]: the reference-anchor conversations (scenario references and the variants
//!   their checks' defects spoil) that a judge's sanity run scores.
//! - [`chat`]: the chat message every layer names (client, store, mock, judge).
//! - [`client`]: OpenAI-compatible requests, the SSE reader, answer/reasoning/timing reader.
//! - [`store`]: SQLite migrations (`db/*.sql`), typed writes and reads, the writer thread.
//! - [`config`]: definition files (bench, scenarios, rubrics, judge settings), parsed and
//!   validated; the built-in set compiled into the binary (`config::embedded`) and where a
//!   command's definitions come from (named, the current directory, else built in).
//! - [`draw`]: seeded draws stable across dependency upgrades (pauses, breaks, the mock).
//! - [`init`]: `turnbench init`, an editable project from the built-in definitions.
//! - [`mock`]: the simulated OpenAI-compatible provider, and the mock judge (`mock::judge`).
//! - [`outcome`]: the turn and conversation outcome vocabulary.
//! - [`progress`]: progress bars (terminal only, never with `--quiet`).
//! - [`report`]: `turnbench report`: cells of provider × model with latency, reliability
//!   and quality, headlines and their intervals (formatted by [`export`]).
//! - [`run`]: `turnbench run`: the orchestrator of collect → check → judge → report; starts
//!   the shared services (the built-in mock) and hands endpoints to the stages;
//!   `run::builtin`: which bench a command runs and the mock that serves simulated targets.
//! - [`stats`]: percentiles, intervals, bootstrap, agreement: pure functions.
//! - [`tokens`]: visible-token counting (o200k_base).
pub mod anchor_suite;
pub mod chat;
pub mod checks;
pub mod cli;
pub mod client;
pub mod collect;
pub mod config;
pub mod draw;
pub mod exchange;
pub mod exit;
pub mod export;
pub mod figure;
pub mod import;
pub mod init;
pub mod jsonl;
pub mod judge;
pub mod judge_panel;
pub mod label;
pub mod launcher;
pub mod mock;
pub mod outcome;
pub mod progress;
pub mod project_lint;
pub mod replay;
pub mod report;
pub mod run;
pub mod stats;
pub mod store;
pub mod timestamp;
pub mod tokens;
