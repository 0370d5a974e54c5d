//! Definition files: parse and validate. Every error names the file, the line and the fix.

pub mod embedded;
pub mod endpoint;
pub mod error;
pub mod headers;
pub mod named_list;
pub mod scenario;
pub mod slo;
pub mod url;

pub use error::{ConfigError, SourceText};
pub use scenario::{Scenario, ScenarioTurn};
pub mod bench;
pub use bench::{BenchConfig, Prices, RequestParams, RetryPolicy, TargetConfig};
pub mod judge;
pub mod keys;
pub mod replay;
pub mod rubric;
pub use judge::{BenchTargetNames, JudgeEndpoint, JudgeSettings, Sample, Variation};
pub use replay::{Breaks, CacheHint, ReplaySettings, TargetReplay};
pub use rubric::Rubric;
