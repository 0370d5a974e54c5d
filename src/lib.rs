//! # turnbench
//!
//! Measures LLM inference providers the way a sequential, multi-turn agent feels them.
//!
//! ## Layout
//! - [`config`]: definition files (bench, scenarios), parsed and validated.
pub mod cli;
pub mod client;
pub mod collect;
pub mod config;
pub mod mock;
pub mod outcome;
pub mod store;
pub mod tokens;
