//! # turnbench
//!
//! Measures LLM inference providers the way a sequential, multi-turn agent feels them.
//!
//! ## Layout
//! - [`config`]: definition files (bench, scenarios, rubrics, judge settings), parsed and
//!   validated.
//! - [`judge`]: the blind LLM judge — blinding, prompts, parsing, cache keys, the run.
//! - [`mock`]: the simulated provider, and the mock judge (`mock::judge`).
pub mod cli;
pub mod client;
pub mod collect;
pub mod config;
pub mod judge;
pub mod mock;
pub mod outcome;
pub mod store;
pub mod tokens;
