//! # turnbench
//!
//! Measures LLM inference providers the way a sequential, multi-turn agent feels them.
//!
//! ## Layout
//! - [`config`]: definition files (bench, scenarios), parsed and validated.
pub mod config;
pub mod outcome;
pub mod store;
