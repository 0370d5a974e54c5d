//! Docs that match the code: every repository path the README, BENCHMARKS.md, docs/, the
//! CI script or a source file names exists, and no source file cites a document the repository does
//! not hold. A renamed or removed file fails here, not in a reader's hands.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` (relative to the repository) ending in `ext`.
fn files(dir: &str, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(repo().join(dir)) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let rel = path.strip_prefix(repo()).unwrap().to_path_buf();
        if path.is_dir() {
            files(rel.to_str().unwrap(), ext, out);
        } else if path.extension().is_some_and(|x| x == ext) {
            out.push(rel);
        }
    }
}

/// The repository paths a text names: `src/…`, `tests/…`, `benches/…`, `db/…`, `docs/…`
/// with a file extension. Placeholders (`db/NNN_name.sql`) and globs are not paths.
fn named_paths(text: &str) -> Vec<String> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?:^|[^\w/.-])((?:src|tests|benches|db|docs)/[\w./-]*\.(?:rs|sql|json|md|py|toml|sh))\b",
        )
        .unwrap()
    });
    RE.captures_iter(text)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str().to_string())
        .filter(|p| !p.contains("NNN") && !p.contains('*'))
        .collect()
}

#[test]
fn every_path_the_docs_name_exists() {
    let mut sources = vec![PathBuf::from("README.md"), PathBuf::from("BENCHMARKS.md")];
    files("docs", "md", &mut sources);
    files("src", "rs", &mut sources);
    sources.push(PathBuf::from(".ci/run"));
    // (tests/ and benches/ hold paths as data — a session's files — and are not read.)
    assert!(sources.len() > 50, "{sources:?}");
    let mut missing = Vec::new();
    for source in &sources {
        let text = std::fs::read_to_string(repo().join(source)).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            for p in named_paths(line) {
                if !repo().join(&p).exists() {
                    missing.push(format!("{}:{}: {p}", source.display(), i + 1));
                }
            }
            // The design notes live outside the repository: a source file cites what a
            // reader of the repository can open.
            if source.starts_with("src")
                && line.contains("DESIGN.md")
                && !Path::new("DESIGN.md").exists()
            {
                missing.push(format!("{}:{}: DESIGN.md", source.display(), i + 1));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "named but absent:\n{}",
        missing.join("\n")
    );
}

#[test]
fn paths_are_found_where_docs_write_them() {
    assert_eq!(
        named_paths("see `src/export/scores.rs`, docs/metrics.md (\"Claims\") and db/NNN_x.sql"),
        ["src/export/scores.rs", "docs/metrics.md"]
    );
    assert!(named_paths("../shared/DESIGN.md and checks/ID.toml").is_empty());
}
