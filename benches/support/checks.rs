//! The checks the at-scale benches run over the synthetic transcripts: two per scenario, a
//! text one and a structural (`format`) one that some answers fail, so that usable turns
//! differ from answered ones. One copy for every benchmark.

use std::path::Path;

/// Writes `scenario-00.toml` … for `scenarios` scenarios into `dir`.
pub fn write_checks(dir: &Path, scenarios: u64) {
    std::fs::create_dir_all(dir).unwrap();
    for s in 0..scenarios {
        std::fs::write(
            dir.join(format!("scenario-{s:02}.toml")),
            format!(
                "scenario = \"scenario-{s:02}\"\n\n\
                 [[check]]\nid = \"mentions-cache\"\nkind = \"contains\"\ntag = \"retained_constraint\"\ntext = \"cache\"\n\n\
                 [[check]]\nid = \"brief\"\nkind = \"max_words\"\ntag = \"format\"\nmax = 55\n"
            ),
        )
        .unwrap();
    }
}
