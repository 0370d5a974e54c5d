//! Unit tests of the validator, and its agreement with Python's `jsonschema`.

use serde_json::{Value, json};

use super::{JsonSchema, Violation};

fn compile(schema: Value) -> JsonSchema {
    JsonSchema::compile(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"))
}

fn load_error(schema: Value) -> String {
    match JsonSchema::compile(&schema) {
        Ok(_) => panic!("{schema} compiled"),
        Err(e) => e.to_string(),
    }
}

fn listed(schema: &JsonSchema, instance: Value) -> Vec<String> {
    schema
        .violations(&instance)
        .iter()
        .map(Violation::to_string)
        .collect()
}

/// Every case of `tests/fixtures/schema_cases.json` (see `tests/support/schema_reference.py`):
/// the verdict is Python's, or turnbench's own where the case says why it deviates.
#[test]
fn agrees_with_python_jsonschema() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/schema_cases.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let fixture: Value = serde_json::from_str(&text).unwrap();
    let schemas: Vec<(String, JsonSchema)> = fixture["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                compile(s["schema"].clone()),
            )
        })
        .collect();
    let instances = fixture["instances"].as_array().unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    let mut disagreements = Vec::new();
    let mut deviations = 0;
    for case in cases {
        let (name, schema) = &schemas[case["schema"].as_u64().unwrap() as usize];
        let expected = match case.get("turnbench") {
            Some(ours) => {
                deviations += 1;
                assert!(
                    case["why"].as_str().is_some_and(|w| !w.is_empty()),
                    "{case}"
                );
                ours.as_bool().unwrap()
            }
            None => case["valid"].as_bool().unwrap(),
        };
        let instance = &instances[case["instance"].as_u64().unwrap() as usize];
        let valid = schema.is_valid(instance);
        let violations = schema.violations(instance);
        assert_eq!(
            valid,
            violations.is_empty(),
            "{name}: {instance}: {violations:?}"
        );
        if valid != expected {
            disagreements.push(format!(
                "{name}: {instance} -> {valid}, expected {expected} {violations:?}"
            ));
        }
    }
    assert!(cases.len() > 1500, "{}", cases.len());
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    assert!(deviations < 30, "{deviations}");
}

#[test]
fn each_violation_names_its_pointer_and_what_is_wrong() {
    let schema = compile(json!({
        "type": "object",
        "required": ["id", "items"],
        "additionalProperties": false,
        "properties": {
            "id": {"type": "string"},
            "due": {"type": "string", "format": "date"},
            "items": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true},
            "n": {"minimum": 3, "multipleOf": 2},
            "o": {"oneOf": [{}, {"type": "number"}]},
            "names": {"propertyNames": {"maxLength": 1}, "dependentRequired": {"a": ["b"]}}
        }
    }));
    let found = listed(
        &schema,
        json!({"id": 7, "items": [1, "two", 1], "a/b~": 1, "due": "2025-02-29", "n": 1.5,
               "o": 1, "names": {"a": 1, "cc": 2}}),
    );
    assert_eq!(
        found,
        [
            r#"(root): additional properties are not allowed ("a/b~" unexpected)"#,
            r#"/due: "2025-02-29" is not a valid date"#,
            r#"/id: 7 is not of type "string""#,
            "/items: items 0 and 2 are equal (uniqueItems)",
            r#"/items/1: "two" is not of type "integer""#,
            "/n: 1.5 is less than the minimum 3",
            "/n: 1.5 is not a multiple of 2",
            r#"/names: property "b" is required when "a" is present"#,
            r#"/names: property name "cc" does not match propertyNames"#,
            "/o: matches more than one schema of oneOf (#0 and #1)",
        ]
    );
    let missing = listed(&schema, json!({}));
    assert_eq!(
        missing,
        [
            r#"(root): required property "id" is missing"#,
            r#"(root): required property "items" is missing"#
        ]
    );
    assert!(!schema.is_valid(&json!({})));
    assert!(schema.is_valid(&json!({"id": "a", "items": [1, 2], "n": 4})));
}

#[test]
fn pointers_escape_slash_and_tilde() {
    let schema = compile(json!({"additionalProperties": {"type": "integer"}}));
    assert_eq!(
        listed(&schema, json!({"a/b~c": "x"})),
        [r#"/a~1b~0c: "x" is not of type "integer""#]
    );
}

#[test]
fn long_values_are_cut_short_in_messages() {
    let schema = compile(json!({"const": "short"}));
    let long = "x".repeat(500);
    let message = &schema.violations(&json!(long))[0].message;
    assert!(message.len() < 100, "{message}");
    assert!(message.contains("..."), "{message}");
}

#[test]
fn unsupported_keywords_are_load_errors_listing_the_supported_ones() {
    for keyword in [
        "$dynamicRef",
        "unevaluatedProperties",
        "dependencies",
        "$anchor",
        "x-custom",
    ] {
        let err = load_error(json!({"properties": {"a": {keyword: "x"}}}));
        assert!(
            err.starts_with(&format!(
                "at #/properties/a: keyword \"{keyword}\" is not supported"
            )),
            "{err}"
        );
        assert!(err.contains("(supported: type, enum, const,"), "{err}");
    }
}

#[test]
fn unknown_formats_are_load_errors_listing_the_supported_ones() {
    let err = load_error(json!({"format": "dat"}));
    assert_eq!(
        err,
        "at #/format: format \"dat\" is not supported (supported: date, date-time, time, \
         email, uuid, ipv4, ipv6, hostname, uri)"
    );
}

#[test]
fn bad_values_and_references_are_load_errors() {
    let cases = [
        (
            json!({"type": "strin"}),
            "at #/type: \"strin\" is not a type",
        ),
        (json!({"type": []}), "at #/type: must be a type name"),
        (
            json!({"minLength": -1}),
            "at #/minLength: must be a non-negative integer",
        ),
        (
            json!({"maxItems": 1.5}),
            "at #/maxItems: must be a non-negative integer",
        ),
        (
            json!({"multipleOf": 0}),
            "at #/multipleOf: must be a number greater than 0",
        ),
        (
            json!({"required": [1]}),
            "at #/required: must be an array of strings",
        ),
        (json!({"enum": "A"}), "at #/enum: must be an array"),
        (
            json!({"uniqueItems": 1}),
            "at #/uniqueItems: must be a boolean",
        ),
        (
            json!({"allOf": []}),
            "at #/allOf: must be a non-empty array of schemas",
        ),
        (
            json!({"items": [{}]}),
            "at #/items: items must be one schema in draft 2020-12",
        ),
        (
            json!({"properties": {"a": 1}}),
            "at #/properties/a: a schema must be an object or a boolean",
        ),
        (json!([]), "a schema must be an object or a boolean"),
        (
            json!({"pattern": "(?=a)b"}),
            "at #/pattern: pattern \"(?=a)b\" does not compile: look-around",
        ),
        (
            json!({"pattern": "(a)\\1"}),
            "at #/pattern: pattern \"(a)\\\\1\" does not compile: backreferences",
        ),
        (
            json!({"patternProperties": {"[": {}}}),
            "at #/patternProperties/[: pattern \"[\" does not compile",
        ),
        (
            json!({"$ref": "other.json#/a"}),
            "at #/$ref: $ref \"other.json#/a\": remote and relative",
        ),
        (
            json!({"$ref": "#node"}),
            "at #/$ref: $ref \"#node\": anchors are not supported",
        ),
        (
            json!({"$ref": "#/$defs/missing"}),
            "at #/$ref: $ref \"#/$defs/missing\": it points at nothing",
        ),
        (
            json!({"$ref": "#/a%zz"}),
            "at #/$ref: $ref \"#/a%zz\": bad percent-encoding",
        ),
        (json!({"$ref": 1}), "at #/$ref: $ref must be a string"),
        (
            json!({"properties": {"a": {"$id": "x"}}}),
            "at #/properties/a: $id is supported only at the root",
        ),
        (json!({"title": 1}), "at #/title: must be a string"),
    ];
    for (schema, start) in cases {
        let err = load_error(schema.clone());
        assert!(err.starts_with(start), "{schema}: {err}");
    }
}

#[test]
fn a_reference_cycle_that_never_descends_is_a_load_error() {
    for schema in [
        json!({"$ref": "#"}),
        json!({"$defs": {"a": {"$ref": "#/$defs/a"}}}),
        json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [true, {"$ref": "#/$defs/a"}]}}}),
        json!({"$defs": {"a": {"not": {"$ref": "#/$defs/a"}}}}),
        json!({"$defs": {"a": {"if": true, "then": {"$ref": "#/$defs/a"}}}}),
    ] {
        let err = load_error(schema.clone());
        assert!(err.contains("a cycle of $ref"), "{schema}: {err}");
    }
    // Recursion through a part of the instance ends with the instance.
    let tree =
        compile(json!({"properties": {"kids": {"items": {"$ref": "#"}}}, "required": ["v"]}));
    assert!(tree.is_valid(&json!({"v": 1, "kids": [{"v": 2, "kids": []}]})));
    assert_eq!(
        listed(&tree, json!({"v": 1, "kids": [{"kids": [{}]}]})),
        [
            r#"/kids/0: required property "v" is missing"#,
            r#"/kids/0/kids/0: required property "v" is missing"#
        ]
    );
}

/// A value nested `depth` arrays deep, built in code (JSON text stops at 128 levels).
fn nested(depth: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

#[test]
fn deep_instances_and_schemas_end_with_an_error_not_an_overflow() {
    let schema = compile(json!({"items": {"$ref": "#"}}));
    assert!(schema.is_valid(&nested(100)));
    let deep = nested(5_000);
    assert!(!schema.is_valid(&deep));
    let found = schema.violations(&deep);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].message.contains("nested deeper than 256"),
        "{found:?}"
    );
    // Equality and uniqueness on deep values stop too.
    let unique = compile(json!({"uniqueItems": true, "const": [[1]]}));
    assert!(!unique.is_valid(&Value::Array(vec![nested(5_000), nested(5_000)])));

    let mut deep_schema = json!({"type": "integer"});
    for _ in 0..200 {
        deep_schema = json!({"items": deep_schema});
    }
    let err = load_error(deep_schema);
    assert!(
        err.contains("subschemas nested deeper than 128 levels"),
        "{err}"
    );
    // Forget the deep values iteratively: dropping them recursively could overflow.
    std::mem::forget(deep);
}

#[test]
fn a_long_reference_chain_compiles_without_deep_recursion() {
    let mut defs = serde_json::Map::new();
    for i in 0..20_000 {
        defs.insert(
            format!("d{i}"),
            json!({"$ref": format!("#/$defs/d{}", i + 1)}),
        );
    }
    defs.insert("d20000".into(), json!({"type": "integer"}));
    let schema = compile(json!({"$defs": defs, "$ref": "#/$defs/d0"}));
    // A reference to a reference is followed once, when compiling.
    assert!(schema.is_valid(&json!(1)));
    assert_eq!(
        listed(&schema, json!("1")),
        [r#"(root): "1" is not of type "integer""#]
    );
}

#[test]
fn patterns_mean_what_ecma_262_says() {
    let cases = [
        ("^\\d+$", "123", true),
        ("^\\d+$", "\u{661}\u{662}", false),
        ("^\\w+$", "\u{e9}t\u{e9}", false),
        ("^\\s$", "\u{feff}", true),
        ("^\\s$", "\u{85}", false),
        ("^a.c$", "a\nc", false),
        ("^a.c$", "a\u{2028}c", false),
        ("^[^]$", "\n", true),
        ("^[]$", "", false),
        ("^\\cJ$", "\n", true),
        ("^\\0$", "\0", true),
        ("^[\\b]$", "\u{8}", true),
        ("\\bcat\\b", "\u{e9}cat", true),
        ("^[a&&b]$", "&", true),
        ("^[a~~b]$", "~", true),
        ("^(?<y>\\d{4})$", "2025", true),
        ("^\\/$", "/", true),
        ("^a$", "a\n", false),
    ];
    for (pattern, text, expected) in cases {
        let schema = compile(json!({"pattern": pattern}));
        assert_eq!(
            schema.is_valid(&json!(text)),
            expected,
            "{pattern:?} on {text:?}"
        );
    }
}

#[test]
fn uniqueness_by_hash_agrees_with_pairwise() {
    let schema = compile(json!({"uniqueItems": true}));
    let mut items: Vec<Value> = (0..100)
        .map(|i| json!({"n": i, "list": [i, i + 1]}))
        .collect();
    assert!(schema.is_valid(&Value::Array(items.clone())));
    items.push(json!({"list": [7.0, 8], "n": 7.0}));
    assert_eq!(
        listed(&schema, Value::Array(items)),
        ["(root): items 7 and 100 are equal (uniqueItems)"]
    );
    let mixed: Vec<Value> = (0..40)
        .map(|i| {
            if i % 2 == 0 {
                json!(i)
            } else {
                json!(i % 3 == 0)
            }
        })
        .collect();
    assert!(!schema.is_valid(&Value::Array(mixed)));
}
