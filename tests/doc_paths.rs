//! Docs that match the code: every repository path the README, BENCHMARKS.md, docs/ (every
//! page, subfolders included), the CI script or a source file names exists; every relative
//! link between the pages resolves, to a heading when it names one, and so does every
//! section a page or a source file cites by name (`docs/metrics.md, "Claims"`); no source
//! file or page cites a document the repository does not hold; every flag a page gives a
//! turnbench command is one of that command's flags (its `--help`); and docs/store.md names
//! every table and view the migrations create, and every column of every view. A renamed
//! or removed file, a moved page or heading, a renamed flag, a new table or column fails
//! here, not in a reader's hands.

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
/// with a file extension, or a folder written with its trailing slash (`src/judge/`).
/// Placeholders (`db/NNN_name.sql`) and globs are not paths.
fn named_paths(text: &str) -> Vec<String> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?:^|[^\w/.-])((?:src|tests|benches|db|docs)/(?:[\w./-]*\.(?:rs|sql|json|md|py|toml|sh)\b|(?:[\w-]+/)+))",
        )
        .unwrap()
    });
    RE.captures_iter(text)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str().to_string())
        .filter(|p| !p.contains("NNN") && !p.contains('*'))
        .collect()
}

/// The README and every page under docs/, subfolders included.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    files("docs", "md", &mut pages);
    pages
}

/// The relative targets of a Markdown line's links (`[text](target)`), each with its
/// anchor if it has one (`report.md#formats`: `("report.md", Some("formats"))`); an
/// in-page anchor (`#here`) has an empty file. No URL.
fn relative_links(line: &str) -> Vec<(String, Option<String>)> {
    static RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\]\(([^)\s]+)\)").unwrap());
    RE.captures_iter(line)
        .map(|c| c[1].to_string())
        .filter(|t| !t.contains("://") && !t.starts_with("mailto:"))
        .map(|t| match t.split_once('#') {
            Some((file, anchor)) => (file.to_string(), Some(anchor.to_string())),
            None => (t, None),
        })
        .collect()
}

/// The anchors GitHub gives a page's headings: lower case, spaces to `-`, every character
/// but letters, digits, `-` and `_` dropped; a repeated heading gets `-1`, `-2`, ….
fn anchors(page: &str) -> Vec<String> {
    let (mut seen, mut raw): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    let mut fence = false;
    for line in page.lines() {
        if line.starts_with("```") {
            fence = !fence;
        }
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        if fence {
            continue;
        }
        let slug: String = heading
            .trim_start_matches('#')
            .trim()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                '-' | '_' => Some(c),
                c if c.is_alphanumeric() => Some(c.to_lowercase().next().unwrap_or(c)),
                _ => None,
            })
            .collect();
        let repeats = raw.iter().filter(|s| **s == slug).count();
        raw.push(slug.clone());
        seen.push(if repeats == 0 {
            slug
        } else {
            format!("{slug}-{repeats}")
        });
    }
    seen
}

#[test]
fn every_path_the_docs_name_exists() {
    let mut sources = pages();
    sources.push(PathBuf::from("BENCHMARKS.md"));
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
            // The design notes live outside the repository: a source file or a page cites
            // what a reader of the repository can open.
            if !source.starts_with("BENCHMARKS.md")
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
fn every_relative_link_between_pages_resolves() {
    let pages = pages();
    // Pages in subfolders of docs/ are read too.
    assert!(
        pages.iter().any(|p| p.starts_with("docs/commands")),
        "{pages:?}"
    );
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(repo().join(page)).unwrap();
        let dir = page.parent().unwrap_or(Path::new(""));
        for (i, line) in text.lines().enumerate() {
            for (file, anchor) in relative_links(line) {
                let target = if file.is_empty() {
                    page.clone()
                } else {
                    dir.join(&file)
                };
                let Ok(linked) = std::fs::read_to_string(repo().join(&target)) else {
                    if !repo().join(&target).is_dir() {
                        broken.push(format!("{}:{}: {file}", page.display(), i + 1));
                    }
                    continue;
                };
                if let Some(anchor) = anchor
                    && target.extension().is_some_and(|x| x == "md")
                    && !anchors(&linked).contains(&anchor)
                {
                    broken.push(format!(
                        "{}:{}: {file}#{anchor} (no such heading)",
                        page.display(),
                        i + 1
                    ));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

/// The sections a line cites by name: `docs/metrics.md, "Claims"`,
/// `docs/store.md ("Query plans")`, `BENCHMARKS.md "Build"` — the page and the quoted name.
fn cited_sections(line: &str) -> Vec<(String, String)> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"((?:docs/[\w/.-]+|BENCHMARKS)\.md)`?(?:,\s*\(?|\s+\(?|\s*\()"([^"]+)""#)
            .unwrap()
    });
    RE.captures_iter(line)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

/// A page's headings as written, without the `#`s and backticks.
fn headings(page: &str) -> Vec<String> {
    let mut fence = false;
    let mut out = Vec::new();
    for line in page.lines() {
        if line.starts_with("```") {
            fence = !fence;
        } else if !fence && line.starts_with('#') {
            out.push(line.trim_start_matches('#').trim().replace('`', ""));
        }
    }
    out
}

#[test]
fn every_section_the_docs_and_sources_cite_exists() {
    let mut sources = pages();
    sources.push(PathBuf::from("BENCHMARKS.md"));
    files("src", "rs", &mut sources);
    let mut missing = Vec::new();
    let mut cited = 0;
    for source in &sources {
        let text = std::fs::read_to_string(repo().join(source)).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            for (page, name) in cited_sections(line) {
                cited += 1;
                let Ok(target) = std::fs::read_to_string(repo().join(&page)) else {
                    continue; // a missing page fails every_path_the_docs_name_exists
                };
                let name = name.replace('`', "");
                if !headings(&target).iter().any(|h| h.starts_with(&name)) {
                    missing.push(format!(
                        "{}:{}: {page} has no section \"{name}\"",
                        source.display(),
                        i + 1
                    ));
                }
            }
        }
    }
    assert!(cited > 10, "{cited} citations found");
    assert!(
        missing.is_empty(),
        "cited but absent:\n{}",
        missing.join("\n")
    );
}

/// The flags a page gives a turnbench command: in `turnbench [--db F] [-q] CMD …` up to
/// the end of the command (a backtick, a pipe, a comment or the line's end), each flag with
/// its command.
fn command_flags(line: &str) -> Vec<(String, String)> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"turnbench(?:\s+(?:--db\s+\S+|-q|--quiet))*\s+(run|collect|replay|import|check|lint|judge|report|show|init|mock|completions|man|export)\b([^`|#]*)",
        )
        .unwrap()
    });
    static FLAG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?:^|\s|\[)(--[a-z][a-z-]*)").unwrap());
    let mut out = Vec::new();
    for c in RE.captures_iter(line) {
        for f in FLAG.captures_iter(&c[2]) {
            out.push((c[1].to_string(), f[1].to_string()));
        }
    }
    out
}

#[test]
fn every_flag_the_docs_give_a_command_is_one_of_its_flags() {
    let help = |cmd: &str| {
        let mut args: Vec<&str> = cmd.split_whitespace().collect();
        if cmd == "export" {
            args.push("conversations");
        }
        args.push("--help");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_turnbench"))
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.success(), "turnbench {args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let global = help("");
    let mut helps = std::collections::HashMap::new();
    let mut wrong = Vec::new();
    let mut seen = 0;
    for page in pages() {
        let text = std::fs::read_to_string(repo().join(&page)).unwrap();
        for (i, line) in text.lines().enumerate() {
            for (cmd, flag) in command_flags(line) {
                seen += 1;
                let text = helps.entry(cmd.clone()).or_insert_with(|| help(&cmd));
                let known = |h: &str| {
                    h.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                        .any(|w| w == flag)
                };
                if !known(text) && !known(&global) {
                    wrong.push(format!(
                        "{}:{}: turnbench {cmd} has no {flag}",
                        page.display(),
                        i + 1
                    ));
                }
            }
        }
    }
    assert!(seen > 50, "{seen} flags found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The tables and the views the migrations in db/ create, in order, each once.
fn created(kind: &str) -> Vec<String> {
    let re = Regex::new(&format!(
        r"(?i)\bCREATE\s+{kind}\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)"
    ))
    .unwrap();
    let mut sql = Vec::new();
    files("db", "sql", &mut sql);
    sql.sort();
    let mut names = Vec::new();
    for file in sql {
        let text = std::fs::read_to_string(repo().join(file)).unwrap();
        for c in re.captures_iter(&text) {
            if !names.contains(&c[1].to_string()) {
                names.push(c[1].to_string());
            }
        }
    }
    names
}

/// The lines of a `## heading` section of a page, up to the next `## `.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| l.trim() != heading)
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .collect()
}

#[test]
fn the_store_page_names_every_table_and_view_the_migrations_create() {
    let page = std::fs::read_to_string(repo().join("docs/store.md")).unwrap();
    let tables = created("TABLE");
    let views = created("VIEW");
    assert!(
        tables.len() >= 20 && views.len() >= 11,
        "{tables:?} {views:?}"
    );

    // Each view has its own heading under "## Views": "### `name` — what it holds".
    let view_headings: Vec<String> = section(&page, "## Views")
        .into_iter()
        .filter_map(|l| l.strip_prefix("### `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect();
    let mut wrong: Vec<String> = views
        .iter()
        .filter(|v| !view_headings.contains(v))
        .map(|v| format!("view `{v}` has no `### `{v}`` heading under \"## Views\""))
        .collect();
    // … and the page documents no view that no migration creates.
    wrong.extend(
        view_headings
            .iter()
            .filter(|h| !views.contains(h))
            .map(|h| format!("\"## Views\" documents `{h}`, which no db/*.sql creates")),
    );

    // Each table is named, in backticks, under "## Tables".
    let listed = section(&page, "## Tables").join("\n");
    wrong.extend(
        tables
            .iter()
            .filter(|t| !listed.contains(&format!("`{t}`")))
            .map(|t| format!("table `{t}` is not named under \"## Tables\"")),
    );
    assert!(wrong.is_empty(), "docs/store.md:\n{}", wrong.join("\n"));
}

/// Each view's columns, in a store made by applying db/*.sql in order.
fn view_columns() -> Vec<(String, Vec<String>)> {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    let mut sql = Vec::new();
    files("db", "sql", &mut sql);
    sql.sort();
    for file in &sql {
        let text = std::fs::read_to_string(repo().join(file)).unwrap();
        conn.execute_batch(&text)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name")
        .unwrap();
    let views: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    views
        .into_iter()
        .map(|v| {
            let mut stmt = conn
                .prepare(&format!("SELECT name FROM pragma_table_info('{v}')"))
                .unwrap();
            let columns = stmt
                .query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            (v, columns)
        })
        .collect()
}

#[test]
fn the_store_page_names_every_column_of_every_view() {
    let page = std::fs::read_to_string(repo().join("docs/store.md")).unwrap();
    let views = view_columns();
    assert!(views.len() >= 11, "{views:?}");
    let extends_re = Regex::new(r"Every column of `(\w+)`").unwrap();
    let mut wrong = Vec::new();
    for (view, columns) in views {
        // The view's own section: from its heading to the next heading of any level.
        let heading = format!("### `{view}`");
        let text: String = page
            .lines()
            .skip_while(|l| !l.starts_with(&heading))
            .skip(1)
            .take_while(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        // A view that extends another says so ("Every column of `turn_facts`").
        let extends: Vec<&str> = extends_re
            .captures_iter(&text)
            .map(|c| c.get(1).unwrap().as_str())
            .collect();
        for column in columns {
            let named = text.contains(&format!("`{column}`"));
            let inherited = extends.iter().any(|base| {
                page.lines()
                    .skip_while(|l| !l.starts_with(&format!("### `{base}`")))
                    .skip(1)
                    .take_while(|l| !l.starts_with('#'))
                    .any(|l| l.contains(&format!("`{column}`")))
            });
            if !named && !inherited {
                wrong.push(format!("`{view}`.`{column}`"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/store.md does not name these view columns:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn paths_are_found_where_docs_write_them() {
    assert_eq!(
        named_paths("see `src/export/scores.rs`, docs/metrics.md (\"Claims\") and db/NNN_x.sql"),
        ["src/export/scores.rs", "docs/metrics.md"]
    );
    assert_eq!(
        named_paths("`src/judge/` and (src/store/), not src/x"),
        ["src/judge/", "src/store/"]
    );
    assert!(named_paths("../shared/DESIGN.md and checks/ID.toml").is_empty());
    assert_eq!(
        relative_links("[a](../store.md#views), [b](https://x.org/a.md), [c](#here), [d](run.md)"),
        [
            ("../store.md".to_string(), Some("views".to_string())),
            (String::new(), Some("here".to_string())),
            ("run.md".to_string(), None)
        ]
    );
    assert_eq!(
        cited_sections(
            r#"see docs/metrics.md, "Claims"; `docs/store.md` ("Query plans"), BENCHMARKS.md "Build" and ("docs/checks.md"), "x""#
        ),
        [
            ("docs/metrics.md".to_string(), "Claims".to_string()),
            ("docs/store.md".to_string(), "Query plans".to_string()),
            ("BENCHMARKS.md".to_string(), "Build".to_string())
        ]
    );
    assert_eq!(
        command_flags(
            "`turnbench --db x.db report --since 72h [--trend]` and turnbench import - --strict | jq --raw # --no"
        ),
        [
            ("report".to_string(), "--since".to_string()),
            ("report".to_string(), "--trend".to_string()),
            ("import".to_string(), "--strict".to_string())
        ]
    );
    assert_eq!(
        anchors(
            "# `turnbench show CONVERSATION`\n## Scenarios × cells: the matrix\n## In\n```\n# not a heading\n```\n## In short\n## In short"
        ),
        [
            "turnbench-show-conversation",
            "scenarios--cells-the-matrix",
            "in",
            "in-short",
            "in-short-1"
        ]
    );
}

/// Cargo.toml's `license` expression names each licence the crate is offered under; each
/// has its text beside it (LICENSE-MIT, LICENSE-APACHE), as `cargo package` and users expect.
#[test]
fn every_licence_cargo_toml_names_has_its_text_in_the_repository() {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let expr = manifest
        .lines()
        .find_map(|l| l.strip_prefix("license = "))
        .expect("Cargo.toml has a license line")
        .trim_matches('"');
    let ids: Vec<&str> = expr.split(" OR ").collect();
    assert_eq!(
        ids,
        ["MIT", "Apache-2.0"],
        "the licence expression changed: {expr}"
    );
    for (id, file, first) in [
        (
            "MIT",
            "LICENSE-MIT",
            "Permission is hereby granted, free of charge",
        ),
        ("Apache-2.0", "LICENSE-APACHE", "Apache License"),
    ] {
        let text = std::fs::read_to_string(repo().join(file))
            .unwrap_or_else(|e| panic!("{id} is offered in Cargo.toml but {file} is missing: {e}"));
        assert!(text.contains(first), "{file} does not hold the {id} text");
    }
    let apache = std::fs::read_to_string(repo().join("LICENSE-APACHE")).unwrap();
    assert!(
        apache.contains("Version 2.0, January 2004")
            && apache.contains("END OF TERMS AND CONDITIONS")
    );
}
