//! Judge-agreement statistics at report scale: Krippendorff's α (ordinal) with its
//! bootstrap interval (1,000 resamples of conversations, as the report runs it) over N
//! conversations scored by 3 replicates on a 1–5 scale, and Spearman's ρ with its bootstrap
//! over N (score, pass rate) pairs. Run:
//!
//!     cargo bench --bench agreement                 # N = 1,000, 10,000 and 50,000
//!     AGREEMENT_SIZES=2000 cargo bench --bench agreement
//!
//! Prints figures; asserts nothing (these machines are shared and noisy).

use std::time::Instant;

use turnbench::stats::{Bootstrap, bootstrap_spearman, krippendorff_alpha_ordinal_bootstrap};

/// A small deterministic generator (SplitMix64): the data need only be the same each run.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn main() {
    let sizes: Vec<usize> = std::env::var("AGREEMENT_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 50_000]);
    let boot = Bootstrap::default();
    println!(
        "{:>8}  {:>22}  {:>10}  {:>22}  {:>10}",
        "N", "alpha (3 replicates)", "time", "spearman rho", "time"
    );
    for n in sizes {
        let mut g = Gen(n as u64);
        // A true score per conversation, each replicate off by one step now and then.
        let truth: Vec<i64> = (0..n).map(|_| 1 + g.below(5) as i64).collect();
        let rows: Vec<Vec<Option<f64>>> = (0..3)
            .map(|_| {
                truth
                    .iter()
                    .map(|&t| {
                        let off = match g.below(10) {
                            0 => -1,
                            1 => 1,
                            _ => 0,
                        };
                        Some((t + off).clamp(1, 5) as f64)
                    })
                    .collect()
            })
            .collect();
        let started = Instant::now();
        let alpha = krippendorff_alpha_ordinal_bootstrap(&rows, &boot);
        let alpha_time = started.elapsed();
        let x: Vec<f64> = truth.iter().map(|&t| t as f64).collect();
        let y: Vec<f64> = truth
            .iter()
            .map(|&t| (t as f64 / 5.0 + g.below(100) as f64 / 250.0).min(1.0))
            .collect();
        let started = Instant::now();
        let rho = bootstrap_spearman(&x, &y, &boot);
        let rho_time = started.elapsed();
        let a = alpha.map_or("-".to_string(), |e| {
            let i = e
                .interval
                .map_or("-".into(), |i| format!("[{:.3}, {:.3}]", i.lo, i.hi));
            format!("{:.3} {i}", e.alpha)
        });
        let r = rho.map_or("-".to_string(), |i| format!("[{:.3}, {:.3}]", i.lo, i.hi));
        println!(
            "{n:>8}  {a:>22}  {:>8.2} s  {r:>22}  {:>8.2} s",
            alpha_time.as_secs_f64(),
            rho_time.as_secs_f64()
        );
    }
}
