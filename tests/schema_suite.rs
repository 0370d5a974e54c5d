//! The official JSON-Schema-Test-Suite, draft 2020-12 (vendored in
//! `tests/fixtures/json-schema-test-suite/`, see its README), run through the `json_schema`
//! check kind: each test group becomes a checks file with one `json_schema` check, loaded as
//! `turnbench check` loads it, and each test's data is the answer it judges.
//!
//! Every group that does not need a remote reference must load, and every test must agree
//! with the suite, except the cases listed in [`EXCEPTIONS`] with the reason. A sample also
//! goes through the binary, `turnbench import` and `turnbench check`, into a real store.
//! Python `jsonschema`'s verdicts on turnbench's own schemas (`tests/fixtures/schema_cases.json`)
//! are a second, independent reference.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use turnbench::checks::{CheckSet, JsonSchema};
use turnbench::config::SourceText;

const SUITE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/json-schema-test-suite/draft2020-12"
);

/// Where the suite serves its remote documents: a group whose schema needs one is refused
/// when it loads (turnbench never fetches a `$ref`), and is skipped and counted.
const REMOTE: &str = "http://localhost:1234/";

/// Why a listed case differs from the suite.
const ANNOTATION: &str = "turnbench asserts formats (docs/checks.md); the suite's default \
                          treats `format` as an annotation only";

/// (file, group, test) whose verdict differs from the suite's by turnbench's choice.
const EXCEPTIONS: &[(&str, &str, &str, &str)] = &[
    (
        "format.json",
        "email format",
        "invalid email string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "idn-email format",
        "invalid idn-email string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "regex format",
        "invalid regex string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "ipv4 format",
        "invalid ipv4 string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "ipv6 format",
        "invalid ipv6 string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "idn-hostname format",
        "invalid idn-hostname string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "hostname format",
        "invalid hostname string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "date format",
        "invalid date string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "date-time format",
        "invalid date-time string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "time format",
        "invalid time string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "json-pointer format",
        "invalid json-pointer string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "relative-json-pointer format",
        "invalid relative-json-pointer string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "iri format",
        "invalid iri string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "iri-reference format",
        "invalid iri-reference string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "uri format",
        "invalid uri string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "uri-reference format",
        "invalid uri-reference string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "uri-template format",
        "invalid uri-template string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "uuid format",
        "invalid uuid string is only an annotation by default",
        ANNOTATION,
    ),
    (
        "format.json",
        "duration format",
        "invalid duration string is only an annotation by default",
        ANNOTATION,
    ),
];

/// Groups refused when they load by turnbench's choice (each of their tests is counted as
/// a listed exception): an unknown format is an error, so that a typo never passes every answer.
const REFUSED_GROUPS: &[(&str, &str, &str)] = &[(
    "unknown.json",
    "unknown format",
    "turnbench refuses a format it does not assert when the check loads (docs/checks.md); \
     the suite ignores unknown formats",
)];

struct Group {
    file: String,
    description: String,
    schema: Value,
    tests: Vec<(String, Value, bool)>,
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// Every group of the vendored suite: draft2020-12/*.json, then optional/format/*.json.
fn groups() -> Vec<Group> {
    let root = Path::new(SUITE);
    let mut files = json_files(root);
    files.extend(json_files(&root.join("optional/format")));
    let mut groups = Vec::new();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        for g in read(&path).as_array().unwrap() {
            let tests = g["tests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    (
                        t["description"].as_str().unwrap().to_owned(),
                        t["data"].clone(),
                        t["valid"].as_bool().unwrap(),
                    )
                })
                .collect();
            groups.push(Group {
                file: file.clone(),
                description: g["description"].as_str().unwrap().to_owned(),
                schema: g["schema"].clone(),
                tests,
            });
        }
    }
    groups
}

/// A checks file holding the group's schema as one `json_schema` check. The schema is
/// written as a TOML basic string: JSON's string escapes are all TOML ones.
fn checks_file(scenario: &str, schema: &Value) -> String {
    let schema = serde_json::to_string(&schema.to_string()).unwrap();
    format!(
        "scenario = \"{scenario}\"\n\n[[check]]\nid = \"suite\"\nkind = \"json_schema\"\n\
         tag = \"format\"\nschema = {schema}\n"
    )
}

fn load(scenario: &str, schema: &Value) -> Result<CheckSet, String> {
    CheckSet::from_source(&SourceText {
        path: format!("checks/{scenario}.toml").into(),
        text: checks_file(scenario, schema),
    })
    .map_err(|e| e.to_string())
}

#[test]
fn the_official_suite_agrees_through_the_check_kind() {
    let groups = groups();
    let (mut run, mut agreed, mut excepted, mut refused) = (0, 0, 0, 0);
    let (mut remote_groups, mut remote_tests) = (0, 0);
    let mut seen: Vec<(&str, &str, &str)> = Vec::new();
    let mut failures = Vec::new();
    for g in &groups {
        let where_ = format!("{} / {}", g.file, g.description);
        let set = match load("suite", &g.schema) {
            Ok(set) => set,
            Err(e) if e.contains(REMOTE) => {
                assert!(e.contains("fix:"), "{where_}: {e}");
                remote_groups += 1;
                remote_tests += g.tests.len();
                continue;
            }
            Err(e) => {
                match REFUSED_GROUPS
                    .iter()
                    .find(|(f, d, _)| *f == g.file && *d == g.description)
                {
                    Some(&(f, d, _)) => {
                        seen.push((f, d, ""));
                        refused += g.tests.len();
                    }
                    None => failures.push(format!("{where_}: does not load: {e}")),
                }
                continue;
            }
        };
        let check = &set.checks[0];
        for (description, data, valid) in &g.tests {
            let answer = data.to_string();
            let verdict = check.evaluate(&[Some(&answer)]);
            run += 1;
            if verdict.passed == Some(*valid) {
                agreed += 1;
                continue;
            }
            let listed = EXCEPTIONS.iter().find(|(f, gr, t, _)| {
                *f == g.file && *gr == g.description && *t == description.as_str()
            });
            match listed {
                Some(&(f, gr, t, _)) => {
                    seen.push((f, gr, t));
                    excepted += 1;
                }
                None => failures.push(format!(
                    "{where_} / {description}: {answer} -> {:?}, the suite says {valid} ({})",
                    verdict.passed, verdict.detail
                )),
            }
        }
    }
    println!(
        "JSON-Schema-Test-Suite draft2020-12: {} groups; {run} tests run through json_schema: \
         {agreed} agree, {excepted} differ as listed in EXCEPTIONS ({} listed); {refused} \
         tests of {} groups refused at load as listed in REFUSED_GROUPS; {remote_groups} \
         groups ({remote_tests} tests) skipped as needing a remote reference",
        groups.len(),
        EXCEPTIONS.len(),
        REFUSED_GROUPS.len()
    );
    assert!(
        failures.is_empty(),
        "{} disagreements with the suite:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // A listed exception that no longer happens is stale: the list says only what is true.
    for (f, g, t, _) in EXCEPTIONS {
        assert!(
            seen.contains(&(f, g, t)),
            "listed but agrees: {f} / {g} / {t}"
        );
    }
    for (f, g, _) in REFUSED_GROUPS {
        assert!(seen.contains(&(f, g, "")), "listed but loads: {f} / {g}");
    }
    // The suite is all there, and what is skipped is only what needs a remote.
    assert!(
        groups.len() > 350 && run > 1500,
        "{} groups, {run} tests",
        groups.len()
    );
    assert!(remote_groups < 40, "{remote_groups} groups need a remote");
}

/// A sample of the suite — every group of three files — through the binary: each group a
/// scenario with its checks file, each test an imported conversation whose answer is the
/// test's data, `turnbench check` storing one verdict per conversation.
#[test]
fn a_sample_agrees_through_import_and_check() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("checks")).unwrap();
    let sample = [
        "unevaluatedProperties.json",
        "anchor.json",
        "date-time.json",
    ];
    let mut lines = Vec::new();
    let mut expected = Vec::new();
    for (n, g) in groups()
        .iter()
        .filter(|g| sample.contains(&g.file.as_str()))
        .enumerate()
    {
        let scenario = format!("suite-{n}");
        if let Err(e) = load(&scenario, &g.schema) {
            assert!(e.contains(REMOTE), "{e}");
            continue; // a remote reference; the test above counts those
        }
        std::fs::write(
            dir.path().join(format!("checks/{scenario}.toml")),
            checks_file(&scenario, &g.schema),
        )
        .unwrap();
        for (i, (description, data, valid)) in g.tests.iter().enumerate() {
            let id = format!("{scenario}-{i}");
            let conversation = serde_json::json!({
                "id": id,
                "scenario": scenario,
                "messages": [
                    {"role": "user", "content": description},
                    {"role": "assistant", "content": data.to_string()},
                ],
            });
            lines.push(conversation.to_string());
            expected.push((
                id,
                *valid,
                format!("{} / {} / {description}", g.file, g.description),
            ));
        }
    }
    assert!(expected.len() > 100, "{}", expected.len());
    std::fs::write(dir.path().join("suite.jsonl"), lines.join("\n") + "\n").unwrap();
    let db = dir.path().join("t.db");
    for args in [&["import", "suite.jsonl"][..], &["check"][..]] {
        let out = Command::new(env!("CARGO_BIN_EXE_turnbench"))
            .current_dir(dir.path())
            .arg("--db")
            .arg(&db)
            .arg("--quiet")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "turnbench {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT r.passed FROM check_results r
             JOIN conversations c ON c.id = r.conversation_id WHERE c.uid = ?1",
        )
        .unwrap();
    let mut wrong = Vec::new();
    for (uid, valid, name) in &expected {
        let passed: Vec<Option<bool>> = stmt
            .query_map([uid], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        if passed != [Some(*valid)] {
            wrong.push(format!("{name}: stored {passed:?}, the suite says {valid}"));
        }
    }
    println!(
        "through import + check: {} tests of {} files",
        expected.len(),
        sample.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Cases of `tests/fixtures/schema_cases.json` where the crate differs from Python and the
/// fixture records no reason: (schema name, instance as JSON, why).
const PYTHON_DIFFERS: &[(&str, &str, &str)] = &[
    ("multipleOf 0.01", "19.99", MULTIPLE),
    ("multipleOf 0.01", "0.07", MULTIPLE),
    ("multipleOf 0.1", "0.3", MULTIPLE),
    ("multipleOf tiny", "1e+308", MULTIPLE),
    ("multipleOf tiny", "0.0003", MULTIPLE),
    ("multipleOf tiny", "12.3456", MULTIPLE),
    (
        "format hostname",
        "\"example.com.\"",
        "the crate refuses the trailing dot of a fully qualified name; Python's fqdn allows it",
    ),
];

const MULTIPLE: &str = "the crate decides multipleOf on the decimal values written (19.99 is \
                        1999 × 0.01); Python divides binary floats (19.99 / 0.01 = 1998.9999999999998)";

/// Python `jsonschema`'s verdicts (format checkers on) on turnbench's own schemas and
/// answers, generated by `tests/support/schema_reference.py`.
#[test]
fn agrees_with_python_jsonschema_on_turnbench_schemas() {
    let fixture =
        read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema_cases.json"));
    let schemas: Vec<(&str, Result<JsonSchema, String>)> = fixture["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                JsonSchema::compile(&s["schema"]).map_err(|e| e.to_string()),
            )
        })
        .collect();
    let instances = fixture["instances"].as_array().unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    let mut disagreements = Vec::new();
    let (mut recorded, mut listed) = (0, 0);
    for case in cases {
        let (name, schema) = &schemas[case["schema"].as_u64().unwrap() as usize];
        let schema = match schema {
            Ok(s) => s,
            Err(e) => {
                disagreements.push(format!("{name}: does not compile: {e}"));
                continue;
            }
        };
        let instance = &instances[case["instance"].as_u64().unwrap() as usize];
        let python = case["valid"].as_bool().unwrap();
        let valid = schema.is_valid(instance);
        let violations = schema.violations(instance);
        assert_eq!(
            valid,
            violations.is_empty(),
            "{name}: {instance}: {violations:?}"
        );
        if valid == python {
            continue;
        }
        // Where Python is wrong the case records the verdict and why (its `re` is not
        // ECMA-262, its email check wants only an "@", it refuses leap seconds, ...).
        if case.get("turnbench").and_then(Value::as_bool) == Some(valid) {
            recorded += 1;
            continue;
        }
        let shown = instance.to_string();
        if PYTHON_DIFFERS
            .iter()
            .any(|(n, i, _)| n == name && *i == shown)
        {
            listed += 1;
            continue;
        }
        disagreements.push(format!(
            "{name}: {instance} -> {valid}, Python says {python}"
        ));
    }
    disagreements.dedup();
    println!(
        "Python jsonschema reference: {} cases, {recorded} differ where the case records why, \
         {listed} listed in PYTHON_DIFFERS",
        cases.len()
    );
    assert_eq!(
        listed,
        PYTHON_DIFFERS.len(),
        "a listed case agrees with Python now"
    );
    assert!(cases.len() > 1500, "{}", cases.len());
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}
