//! The built-in definitions: the shipped bench, scenarios, checks, rubrics, judge settings
//! and templates, replay sessions and examples, compiled into the binary (build.rs lists
//! every file of those folders). They live under the virtual folder `<built-in>`: a path
//! there is read from the binary, so every loader works on them unchanged and every error
//! names its file, such as `<built-in>/checks/biz-policy-faq.toml:3`.
//!
//! Where a command's definitions come from, in order ([`resolve_dir`], [`resolve_file`]):
//! the path the user names, then the conventional name in the current directory, then the
//! built-in set; the command says which it used ([`describe`]).

use std::path::{Path, PathBuf};

/// The virtual folder of the built-in definitions.
pub const ROOT: &str = "<built-in>";

/// `turnbench --version`: the package version and the commit it was built from.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("TURNBENCH_COMMIT"),
    ")"
);

/// (path relative to the checkout, text), sorted by path.
static FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// Every built-in file: (path relative to `<built-in>`, text), sorted by path.
pub fn files() -> &'static [(&'static str, &'static str)] {
    FILES
}

/// `<built-in>/rel`.
pub fn path(rel: &str) -> PathBuf {
    Path::new(ROOT).join(rel)
}

/// The part of `path` under `<built-in>`, with `/` separators; `None` for a real path.
/// `.` and `..` are resolved (`<built-in>/examples/../scenarios` is `scenarios`).
fn relative(path: &Path) -> Option<String> {
    use std::path::Component;
    let rel = path.strip_prefix(ROOT).ok()?;
    let mut parts: Vec<String> = Vec::new();
    for c in rel.components() {
        match c {
            Component::ParentDir => {
                parts.pop();
            }
            Component::Normal(name) => parts.push(name.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    Some(parts.join("/"))
}

/// Is `path` in the built-in set (a file or a folder of it)?
pub fn is_builtin(path: &Path) -> bool {
    path.starts_with(ROOT)
}

/// The text of a built-in file; `None` for a real path or a name the set does not have.
pub fn read(path: &Path) -> Option<&'static str> {
    let rel = relative(path)?;
    FILES
        .binary_search_by(|(p, _)| (*p).cmp(rel.as_str()))
        .ok()
        .and_then(|i| FILES.get(i))
        .map(|(_, text)| *text)
}

/// The files directly in a built-in folder, sorted; `None` for a real path or a folder
/// the set does not have.
pub fn list(dir: &Path) -> Option<Vec<PathBuf>> {
    let rel = relative(dir)?;
    let prefix = if rel.is_empty() {
        String::new()
    } else {
        format!("{rel}/")
    };
    let found: Vec<PathBuf> = FILES
        .iter()
        .filter_map(|(p, _)| p.strip_prefix(prefix.as_str()))
        .filter(|name| !name.contains('/'))
        .map(|name| dir.join(name))
        .collect();
    (!found.is_empty()).then_some(found)
}

/// A folder on disk, or a folder of the built-in set.
pub fn is_dir(path: &Path) -> bool {
    if is_builtin(path) {
        list(path).is_some()
    } else {
        path.is_dir()
    }
}

/// A file on disk, or a file of the built-in set.
pub fn is_file(path: &Path) -> bool {
    if is_builtin(path) {
        read(path).is_some()
    } else {
        path.is_file()
    }
}

/// How a command names where its definitions came from: `built-in v0.1.0` for the
/// built-in set, one of its folders or its bench (`built-in v0.1.0 judges/mock.toml` for
/// another of its files), else the path.
pub fn describe(path: &Path) -> String {
    let version = env!("CARGO_PKG_VERSION");
    match relative(path) {
        Some(rel) if rel.contains('/') => format!("built-in v{version} {rel}"),
        Some(_) => format!("built-in v{version}"),
        None => path.display().to_string(),
    }
}

/// A definitions folder: the one named (used as named: a missing folder is the loader's
/// error), else `conventional` in the current directory when it is there, else the
/// built-in one.
pub fn resolve_dir(named: Option<&Path>, conventional: &str) -> PathBuf {
    match named {
        Some(dir) => dir.to_path_buf(),
        None if Path::new(conventional).is_dir() => PathBuf::from(conventional),
        None => path(conventional),
    }
}

/// A definition file given on the command line (`--judge judges/default.toml`,
/// `--rubric multiturn-quality`): the file when it is on disk, else the built-in file of
/// that path, or of that name in `folder` (with `.toml` added when it has no extension).
/// A name found nowhere is returned as given, for the loader to report.
pub fn resolve_file(arg: &Path, folder: &str) -> PathBuf {
    if arg.exists() || is_builtin(arg) {
        return arg.to_path_buf();
    }
    let mut candidates = vec![path(&arg.to_string_lossy())];
    if let Some(name) = arg.file_name() {
        let mut name = PathBuf::from(name);
        if name.extension().is_none() {
            name.set_extension("toml");
        }
        candidates.push(Path::new(ROOT).join(folder).join(name));
    }
    candidates
        .into_iter()
        .find(|c| read(c).is_some())
        .unwrap_or_else(|| arg.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_set_holds_every_shipped_definition() {
        let on_disk = |dir: &str| {
            let mut names: Vec<String> =
                std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect();
            names.sort();
            names
        };
        for dir in ["scenarios", "checks", "rubrics", "judges", "sessions"] {
            let listed: Vec<String> = list(&path(dir))
                .unwrap()
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect();
            assert_eq!(listed, on_disk(dir), "{dir}");
        }
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("judges/mock.toml"))
                .unwrap();
        assert_eq!(read(&path("judges/mock.toml")), Some(text.as_str()));
        assert!(read(&path("bench.toml")).is_some());
    }

    #[test]
    fn real_paths_and_unknown_names_are_not_built_in() {
        assert_eq!(read(Path::new("judges/mock.toml")), None);
        assert_eq!(read(&path("judges/nope.toml")), None);
        assert_eq!(list(&path("nope")), None);
        // A folder is not a file, and a file's name is not a prefix match.
        assert_eq!(read(&path("judges")), None);
        assert_eq!(list(&path("judges/mock.toml")), None);
        assert!(is_dir(&path("scenarios")) && !is_file(&path("scenarios")));
        // A bench's `scenarios = "../scenarios"` resolves inside the set.
        assert!(is_dir(&path("examples/../scenarios")));
    }

    #[test]
    fn a_file_argument_falls_back_to_the_built_in_file_of_that_name() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("mine.toml");
        std::fs::write(&real, "").unwrap();
        assert_eq!(resolve_file(&real, "judges"), real);
        // Not on disk: the built-in file of that name in the folder.
        let missing = dir.path().join("judges/default.toml");
        assert_eq!(
            resolve_file(&missing, "judges"),
            path("judges/default.toml")
        );
        assert_eq!(
            resolve_file(Path::new("multiturn-quality"), "rubrics"),
            path("rubrics/multiturn-quality.toml")
        );
        let nowhere = Path::new("rubrics/nope.toml");
        assert_eq!(resolve_file(nowhere, "rubrics"), nowhere);
    }

    #[test]
    fn descriptions_name_the_version_or_the_path() {
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(describe(Path::new(ROOT)), format!("built-in v{v}"));
        assert_eq!(describe(&path("scenarios")), format!("built-in v{v}"));
        assert_eq!(describe(&path("bench.toml")), format!("built-in v{v}"));
        assert_eq!(
            describe(&path("judges/mock.toml")),
            format!("built-in v{v} judges/mock.toml")
        );
        assert_eq!(describe(Path::new("my/scenarios")), "my/scenarios");
    }
}
