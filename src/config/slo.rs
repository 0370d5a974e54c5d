//! `--slo` (and `[report] slo` in bench.toml): per-request service-level objectives for
//! goodput (`crate::report::goodput`), as vLLM's `--goodput` and NVIDIA AIPerf take them.
//!
//! `ttft=500ms,tpot=50ms,itl_p95=100ms,e2e=3s`, any subset: each bound is a duration with
//! its unit (`ms` or `s`); a turn meets the objective when every given figure is at or below
//! its bound.

use std::fmt;

use serde::Serialize;

/// The bounds given, in ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Slo {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<f64>,
    /// The turn's own 95th percentile of its inter-token gaps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub itl_p95_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<f64>,
}

const NAMES: [&str; 4] = ["ttft", "tpot", "itl_p95", "e2e"];

/// A malformed `--slo`: the part and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct SloError {
    pub part: String,
    pub problem: String,
}

/// How to write the objectives, for an error about them.
pub const FIX: &str = "give NAME=DURATION pairs separated by commas, any of ttft, tpot, \
                       itl_p95 and e2e, each a duration above 0 with its unit: \
                       ttft=500ms,tpot=50ms,itl_p95=100ms,e2e=3s";

impl fmt::Display for SloError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--slo: `{}`: {}\n  fix: {FIX}", self.part, self.problem)
    }
}

impl std::error::Error for SloError {}

impl Slo {
    /// Whether any bound is given.
    pub fn any(&self) -> bool {
        [self.ttft_ms, self.tpot_ms, self.itl_p95_ms, self.e2e_ms]
            .iter()
            .any(Option::is_some)
    }

    /// The bounds as the command line writes them: `ttft=500ms,e2e=3000ms`.
    pub fn text(&self) -> String {
        let mut parts = Vec::new();
        for (name, v) in
            NAMES
                .iter()
                .zip([self.ttft_ms, self.tpot_ms, self.itl_p95_ms, self.e2e_ms])
        {
            if let Some(v) = v {
                parts.push(format!("{name}={v}ms"));
            }
        }
        parts.join(",")
    }

    /// Parses `NAME=DURATION[,NAME=DURATION…]`.
    pub fn parse(text: &str) -> Result<Slo, SloError> {
        use super::named_list::{parts, positive, set_once};
        let mut slo = Slo::default();
        let list =
            parts(text, "NAME=DURATION").map_err(|(part, problem)| SloError { part, problem })?;
        for p in list {
            let bad = |problem: String| SloError {
                part: p.text.to_string(),
                problem,
            };
            let (name, value) = (p.name, p.value);
            if !NAMES.contains(&name) {
                return Err(bad(format!(
                    "no bound `{name}` (ttft, tpot, itl_p95 or e2e)"
                )));
            }
            let (number, scale) = if let Some(v) = value.strip_suffix("ms") {
                (v.trim(), 1.0)
            } else if let Some(v) = value.strip_suffix('s') {
                (v.trim(), 1000.0)
            } else {
                return Err(bad(format!(
                    "`{value}` has no unit: write {name}={value}ms (or seconds: {value}s)"
                )));
            };
            let v = positive(number, "a bound").map_err(bad)?;
            let slot = match name {
                "ttft" => &mut slo.ttft_ms,
                "tpot" => &mut slo.tpot_ms,
                "itl_p95" => &mut slo.itl_p95_ms,
                _ => &mut slo.e2e_ms,
            };
            set_once(slot, v * scale, name).map_err(bad)?;
        }
        Ok(slo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_reads_in_ms_or_s() {
        let s = Slo::parse("ttft=500ms, tpot=50ms,itl_p95=0.1s,e2e=3s").unwrap();
        assert_eq!(
            s,
            Slo {
                ttft_ms: Some(500.0),
                tpot_ms: Some(50.0),
                itl_p95_ms: Some(100.0),
                e2e_ms: Some(3000.0),
            }
        );
        assert_eq!(s.text(), "ttft=500ms,tpot=50ms,itl_p95=100ms,e2e=3000ms");
        let one = Slo::parse("e2e=1500ms").unwrap();
        assert!(one.any() && one.ttft_ms.is_none() && !Slo::default().any());
    }

    #[test]
    fn a_malformed_slo_names_the_part() {
        let cases = [
            ("ttft=500ms,p99=3ms", "p99=3ms", "no bound `p99`"),
            ("ttft=500", "ttft=500", "no unit"),
            ("e2e=-3s", "e2e=-3s", "above 0"),
            ("tpot=0ms", "tpot=0ms", "above 0"),
            ("tpot=fastms", "tpot=fastms", "not a number"),
            ("ttft", "ttft", "not NAME=DURATION"),
            ("e2e=1s,e2e=2s", "e2e=2s", "given twice"),
        ];
        for (text, part, problem) in cases {
            let e = Slo::parse(text).unwrap_err();
            assert_eq!(e.part, part, "{text}");
            assert!(e.problem.contains(problem), "{text}: {}", e.problem);
            assert!(e.to_string().contains("fix:"), "{e}");
        }
    }
}
