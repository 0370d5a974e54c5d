//! The integration tests, as one test binary: each file beside this one is a module here
//! (`cargo test --test integration check::` runs tests/check.rs). One binary links the crate
//! and its dependencies once instead of once per file, which keeps a clean CI build's disk
//! and link time small. tests/examples.rs stays a binary of its own: it sets environment
//! variables, which no other thread of a process may read at the same time.

mod common;
#[path = "support/legibility.rs"]
mod legibility;
#[path = "support/paired.rs"]
mod paired;
#[path = "support/synthetic.rs"]
mod synthetic;
#[path = "support/width.rs"]
mod width;

mod builtin;
mod check;
mod client_dialects;
mod collect_faults;
mod collect_resume;
mod collect_runs;
mod config_keys;
mod constraints_across_turns;
mod context_overflow;
mod doc_paths;
mod equivalence;
mod exit_codes;
mod forgetful_mock;
mod frontier;
mod hardening;
mod import;
mod import_formats;
mod import_traces;
mod install;
mod judge;
mod judge_card;
mod labels;
mod merge;
mod over_time;
mod properties;
mod recipes;
mod reliability;
mod repeats_consistency;
mod replay;
mod report;
mod report_defaults;
mod report_keys;
mod report_width;
mod run;
mod scenario_suite;
mod schema_suite;
mod third_party;
mod tool_calls_shown;
mod ttft_slope;
mod viewer;
