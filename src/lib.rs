//! # turnbench
//!
//! Measures LLM inference providers the way a sequential, multi-turn agent feels them.
//!
//! ## Layout
//! - [`config`]: definition files (bench, scenarios), parsed and validated.
//! - [`checks`]: rule-based checks per scenario (`checks/*.toml`): load, lint, evaluate.
pub mod checks;
pub mod config;
