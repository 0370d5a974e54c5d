//! `turnbench replay`: recorded agent sessions replayed against every target.

pub mod session;
