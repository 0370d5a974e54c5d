//! # turnbench
//!
//! Measures LLM inference providers the way a sequential, multi-turn agent feels them.
//!
//! ## Layout
//! - [`config`]: definition files (bench, scenarios), parsed and validated.
//! - [`exchange`]: the JSON Lines exchange format shared by import and export.
//! - [`import`]: transcript files into the store (streaming, validated, idempotent).
//! - [`export`]: stored conversations out in the exchange format.
pub mod cli;
pub mod client;
pub mod collect;
pub mod config;
pub mod exchange;
pub mod export;
pub mod import;
pub mod mock;
pub mod outcome;
pub mod store;
pub mod tokens;
