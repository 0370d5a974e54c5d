//! Calibration of the report's claims: runs the report's own inference
//! (`turnbench::stats::inference`) on simulated stores with a known truth and prints, per
//! claim kind, truth and n (conversations per cell), the rate of "established", the rate of
//! claims the wrong way round, and the coverage of the cell intervals the report prints.
//! Every figure is simulated. Run:
//!
//!     cargo bench --bench calibration                    # 1,000 stores per row
//!     CALIBRATION_STORES=200 cargo bench --bench calibration
//!     CALIBRATION_ONLY=ttft-slope cargo bench --bench calibration   # those rows alone
//!
//! Deterministic (fixed seeds): the same build prints the same table.

use std::time::Instant;

use turnbench::stats::calibration::{Truth, table, ttft_slope_table};

fn main() {
    let stores: usize = std::env::var("CALIBRATION_STORES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000);
    let start = Instant::now();
    // `CALIBRATION_ONLY=ttft-slope`: the TTFT-slope rows alone (a few seconds).
    let only_slope = std::env::var("CALIBRATION_ONLY").is_ok_and(|v| v == "ttft-slope");
    let rows = if only_slope {
        ttft_slope_table(stores, turnbench::stats::DEFAULT_SEED)
    } else {
        table(stores, turnbench::stats::DEFAULT_SEED)
    };
    println!(
        "SIMULATED: {stores} stores per row, 3 cells each, n conversations per cell in min(n, 10) \
         scenarios (pooled-run rows: 10 scenarios × runs, a shock per run and cell of σ 0.3); \
         Holm over the 3 pairs, family-wise 5 %"
    );
    println!(
        "| claim | truth | noise σ | n per cell | runs | established | wrong way | cell interval coverage (n) | comparison interval coverage (n) |"
    );
    println!("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in rows {
        let truth = match r.truth {
            Truth::Identical => "identical (false claims)".to_string(),
            Truth::Gap(g) if r.claim.starts_with("latency") => format!("{g}× gap (power)"),
            Truth::Gap(g) if r.claim == "run vs baseline" => {
                format!("one cell {g}× slower (power)")
            }
            Truth::Gap(g)
                if r.claim == "task success"
                    || r.claim == "constraint retention"
                    || r.claim == "reliability" =>
            {
                format!("+{:.0} points (power)", g * 100.0)
            }
            Truth::Gap(g) if r.claim == "TTFT slope" => {
                format!("{g} ms per 1k prompt tokens lower (power)")
            }
            Truth::Gap(g) => format!("+{g} (power)"),
        };
        let sigma = r.sigma.map_or("-".to_string(), |s| format!("{s}"));
        let coverage = r.coverage.map_or("- (0)".to_string(), |c| {
            format!("{:.1} % ({})", c * 100.0, r.intervals)
        });
        let comparison = r.comparison_coverage.map_or("- (0)".to_string(), |c| {
            format!("{:.1} % ({})", c * 100.0, r.comparisons)
        });
        println!(
            "| {} | {} | {} | {} | {} | {:.1} % | {:.1} % | {} | {} |",
            r.claim,
            truth,
            sigma,
            r.n,
            r.runs.unwrap_or(1),
            r.established * 100.0,
            r.wrong_way * 100.0,
            coverage,
            comparison
        );
    }
    if only_slope {
        return;
    }
    println!();
    println!(
        "SIMULATED: equivalence (--margin), two cells, one comparison (two one-sided tests at \
         5 % each: the least conservative family the report forms), {stores} stores per row, \
         n conversations per cell in min(n, 10) scenarios"
    );
    println!("| claim | margin | true difference | n per cell | declared equivalent |");
    println!("| --- | --- | --- | ---: | ---: |");
    for r in
        turnbench::stats::calibration::equivalence_table(stores, turnbench::stats::DEFAULT_SEED)
    {
        let margin = if r.claim.starts_with("latency") {
            format!("±{:.0} %", r.margin * 100.0)
        } else {
            format!("±{:.0} points", r.margin * 100.0)
        };
        let truth = if r.at_margin {
            "at the margin (false \"equivalent\")"
        } else {
            "none (power)"
        };
        println!(
            "| {} | {margin} | {truth} | {} | {:.1} % |",
            r.claim,
            r.n,
            r.equivalent * 100.0
        );
    }
    println!();
    println!(
        "SIMULATED: the judge card's length-bias rule (within-scenario Spearman ρ, Fisher z with \
         t at df − 2, \"established\" when the 95 % interval excludes 0), {stores} stores per row"
    );
    println!(
        "| bias (points per SD of log length) | scenarios | conversations per scenario | established | with an interval | wrong way |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in
        turnbench::stats::calibration::length_bias_table(stores, turnbench::stats::DEFAULT_SEED)
    {
        println!(
            "| {} | {} | {} | {:.1} % | {:.1} % | {:.1} % |",
            r.bias,
            r.scenarios,
            r.per_scenario,
            r.established * 100.0,
            r.with_interval * 100.0,
            r.wrong_way * 100.0
        );
    }
    eprintln!("calibration: {:.1} s", start.elapsed().as_secs_f64());
}
