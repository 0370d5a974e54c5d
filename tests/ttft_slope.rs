//! TTFT's growth with the prompt as a headline family (issue 36): per model label, the
//! provider whose TTFT grows least per 1,000 prompt tokens against every other, paired by
//! slot, through the CLI on an imported store of the 15 shipped scenarios, in JSON (schema
//! valid), Markdown and the terminal; and a store too small to establish it says so.

use std::path::{Path, PathBuf};

use serde_json::Value;
use turnbench::config::Scenario;

use crate::common::*;
use crate::paired::{self, Provider};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// `cached` pays nothing for the history, `partial` 20 ms and `uncached` 60 ms per 1,000
/// prompt tokens; their TTFT otherwise varies by scenario and conversation (±10 %).
fn store(scenarios: usize, repeats: u32) -> Project {
    let all = Scenario::load_dir(&repo("scenarios")).unwrap();
    let fresh = |_: usize, _: u32| false;
    let providers = [
        Provider {
            name: "cached",
            speed: 1.0,
            stale: &fresh,
            ttft_per_1k: 0.0,
        },
        Provider {
            name: "partial",
            speed: 1.0,
            stale: &fresh,
            ttft_per_1k: 20.0,
        },
        Provider {
            name: "uncached",
            speed: 1.0,
            stale: &fresh,
            ttft_per_1k: 60.0,
        },
    ];
    let lines = paired::lines(&all[..scenarios.min(all.len())], &providers, repeats, 36);
    let project = Project::new(&[]);
    let file = project.write("t.jsonl", &lines);
    import_and_check(&project, &file);
    project
}

fn slope_headline(r: &Value) -> &Value {
    let h = r["headlines"].as_array().unwrap();
    let slope: Vec<&Value> = h.iter().filter(|h| h["kind"] == "ttft_slope").collect();
    assert_eq!(slope.len(), 1, "{h:#?}");
    slope[0]
}

#[test]
fn the_provider_whose_ttft_grows_least_leads_an_established_family() {
    let project = store(15, 2);
    let (out, _) = project.run_ok(&["report", "--format", "json"]);
    let r: Value = serde_json::from_str(&out).unwrap();
    let errors = schema_violations(&r);
    assert!(errors.is_empty(), "{errors:#?}");
    // The table's slopes: the planted growth (the ±10 % noise does not grow with the
    // prompt), within 15 %, or within 3 ms where it is 0.
    let rows = r["ttft_by_turn"].as_array().unwrap();
    for (provider, planted) in [("cached", 0.0), ("partial", 20.0), ("uncached", 60.0)] {
        let row = rows.iter().find(|x| x["provider"] == provider).unwrap();
        let slope = row["slope_ms_per_1k_prompt_tokens"].as_f64().unwrap();
        assert!(
            (slope - planted).abs() <= (0.15 * planted).max(3.0),
            "{provider}: {slope}"
        );
    }
    let h = slope_headline(&r);
    assert_eq!(h["model"], "glm-5.3-flash");
    assert_eq!(h["established"], true, "{h:#}");
    let f = &h["family"];
    assert_eq!(f["statistic"], "ttft_slope_difference");
    assert_eq!(f["leader"], "cached / glm-5.3-flash");
    assert_eq!(f["comparisons"], 3);
    // The leader's claims, the closest first: against partial (−20), then uncached (−60),
    // each difference within 15 % of the planted one and established.
    let claims = f["claims"].as_array().unwrap();
    let against: Vec<(&str, f64)> = claims
        .iter()
        .map(|c| (c["b"].as_str().unwrap(), c["estimate"].as_f64().unwrap()))
        .collect();
    assert_eq!(against.len(), 2, "{claims:#?}");
    for ((b, estimate), (name, planted)) in against.iter().zip([
        ("partial / glm-5.3-flash", -20.0),
        ("uncached / glm-5.3-flash", -60.0),
    ]) {
        assert_eq!(*b, name);
        assert!((estimate / planted - 1.0).abs() <= 0.15, "{b}: {estimate}");
    }
    assert!(
        claims.iter().all(|c| c["established"] == true),
        "{claims:#?}"
    );
    let text = h["text"].as_str().unwrap();
    assert!(
        text.starts_with("TTFT per 1k prompt tokens (ms) on glm-5.3-flash: cached ")
            && text.contains("vs next partial")
            && text.contains("2 of 2 leads established"),
        "{text}"
    );
    // Markdown prints the same sentence under the label's group, and the family's table;
    // the terminal the group.
    let (md, _) = project.run_ok(&["report", "--format", "md"]);
    assert!(
        md.contains(&format!(
            "**TTFT as the prompt grows · glm-5.3-flash**: {}",
            text.replace('[', "\\[").replace(']', "\\]")
        )),
        "{md}"
    );
    assert!(
        md.contains("FAMILY · TTFT per 1k prompt tokens (ms) on glm-5.3-flash"),
        "{md}"
    );
    let (terminal, _) = project.run_ok(&["report"]);
    assert!(
        terminal.contains(
            "  TTFT as the prompt grows · glm-5.3-flash\n  · TTFT per 1k prompt tokens (ms) on"
        ),
        "{terminal}"
    );
}

#[test]
fn too_few_conversations_establish_no_slope_difference() {
    let project = store(3, 2);
    let (out, _) = project.run_ok(&["report", "--format", "json"]);
    let r: Value = serde_json::from_str(&out).unwrap();
    let h = slope_headline(&r);
    assert_eq!(h["established"], false, "{h:#}");
    let text = h["text"].as_str().unwrap();
    assert!(
        text.contains("not established: too few pairs (6/10)"),
        "{text}"
    );
}
