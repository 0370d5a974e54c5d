//! The compiler: a schema document into an arena of nodes, one [`Keyword`] per validating
//! keyword. `$ref` is resolved to a local JSON pointer once, here; a cycle of references
//! that never descends into the instance is refused, since it would never end.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::format::{self, Format};
use super::pattern;
use super::{JsonSchema, Keyword, Name, Node, NodeId, Pattern, ROOT, SchemaError, Shape, Types};

/// Every keyword a schema may hold: the validating ones, then the annotations (accepted,
/// ignored). Anything else is a load error naming it.
pub const KEYWORDS: &[&str] = &[
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "items",
    "prefixItems",
    "contains",
    "minContains",
    "maxContains",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$defs",
    "definitions",
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
];

/// The keywords compiled together into one [`Shape`].
const SHAPE: [&str; 4] = [
    "properties",
    "patternProperties",
    "additionalProperties",
    "required",
];

/// Subschemas nested deeper than this are refused (the compiler recurses once per level).
const MAX_DEPTH: usize = 128;

enum Slot {
    /// Referenced by a `$ref`, not compiled yet.
    Pending,
    Compiling,
    Done(Node),
}

struct Compiler<'s> {
    root: &'s Value,
    slots: Vec<Slot>,
    /// Each node's location in the document, a JSON pointer ("" is the root).
    locations: Vec<String>,
    by_location: HashMap<String, NodeId>,
    /// References to compile once the traversal is over: (target, its node).
    pending: Vec<(&'s Value, NodeId)>,
}

pub(super) fn compile(schema: &Value) -> Result<JsonSchema, SchemaError> {
    let mut c = Compiler {
        root: schema,
        slots: Vec::new(),
        locations: Vec::new(),
        by_location: HashMap::new(),
        pending: Vec::new(),
    };
    let root = c.subschema(schema, String::new(), 0)?;
    debug_assert_eq!(root, ROOT);
    while let Some((value, id)) = c.pending.pop() {
        if matches!(c.slots.get(id.0), Some(Slot::Pending)) {
            let location = c.locations.get(id.0).cloned().unwrap_or_default();
            c.fill(id, value, &location, 0)?;
        }
    }
    check_cycles(&c)?;
    let mut nodes: Vec<Node> = c
        .slots
        .into_iter()
        .map(|slot| match slot {
            Slot::Done(node) => node,
            // Unreachable: every slot is filled above.
            Slot::Pending | Slot::Compiling => Node::Bool(false),
        })
        .collect();
    skip_bare_references(&mut nodes);
    Ok(JsonSchema { nodes })
}

/// Points every subschema that is only a `$ref` (`{"$ref": "#/$defs/time"}`) straight at
/// its target, which saves a step per use. Runs after `check_cycles`, so chains end.
fn skip_bare_references(nodes: &mut [Node]) {
    let next = |id: NodeId| match nodes.get(id.0) {
        Some(Node::Keywords(keywords)) => match keywords.as_slice() {
            [Keyword::Ref(next)] => Some(*next),
            _ => None,
        },
        _ => None,
    };
    // Each chain is walked once: what it ends at is kept for every node on it.
    let mut target: Vec<Option<NodeId>> = vec![None; nodes.len()];
    for start in 0..nodes.len() {
        let mut chain = vec![NodeId(start)];
        let mut end = NodeId(start);
        while let Some(step) = next(end) {
            if let Some(known) = target.get(step.0).copied().flatten() {
                end = known;
                break;
            }
            chain.push(step);
            end = step;
            if chain.len() > nodes.len() {
                break; // a cycle, which `check_cycles` has refused
            }
        }
        for id in chain {
            if let Some(slot) = target.get_mut(id.0) {
                slot.get_or_insert(end);
            }
        }
    }
    for node in nodes.iter_mut() {
        if let Node::Keywords(keywords) = node {
            for keyword in keywords.iter_mut() {
                for id in subschemas_mut(keyword) {
                    *id = target.get(id.0).copied().flatten().unwrap_or(*id);
                }
            }
        }
    }
}

/// Every subschema a keyword holds, to rewrite.
fn subschemas_mut(keyword: &mut Keyword) -> Vec<&mut NodeId> {
    match keyword {
        Keyword::Ref(id) | Keyword::Not(id) | Keyword::PropertyNames(id) => vec![id],
        Keyword::Items { node, .. } | Keyword::Contains { node, .. } => vec![node],
        Keyword::AllOf(ids)
        | Keyword::AnyOf(ids)
        | Keyword::OneOf(ids)
        | Keyword::PrefixItems(ids) => ids.iter_mut().collect(),
        Keyword::DependentSchemas(named) => named.iter_mut().map(|(_, id)| id).collect(),
        Keyword::Condition {
            test,
            then,
            otherwise,
        } => std::iter::once(test)
            .chain(then.as_mut())
            .chain(otherwise.as_mut())
            .collect(),
        Keyword::Shape(shape) => {
            let Shape {
                names,
                patterns,
                additional,
                ..
            } = &mut **shape;
            names
                .iter_mut()
                .filter_map(|n| n.node.as_mut())
                .chain(patterns.iter_mut().map(|(_, id)| id))
                .chain(additional.as_mut())
                .collect()
        }
        _ => Vec::new(),
    }
}

fn error(location: &str, problem: impl Into<String>) -> SchemaError {
    SchemaError {
        location: location.to_string(),
        problem: problem.into(),
    }
}

/// `location` extended by one token, escaped as JSON pointers are (`~0`, `~1`).
fn child(location: &str, token: &str) -> String {
    format!("{location}/{}", token.replace('~', "~0").replace('/', "~1"))
}

impl<'s> Compiler<'s> {
    /// The node of the subschema at `location`, compiled once however often it is reached.
    fn subschema(
        &mut self,
        value: &'s Value,
        location: String,
        depth: usize,
    ) -> Result<NodeId, SchemaError> {
        if depth > MAX_DEPTH {
            return Err(error(
                &location,
                format!("subschemas nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        let id = match self.by_location.get(&location) {
            Some(&id) if matches!(self.slots.get(id.0), Some(Slot::Pending)) => id,
            Some(&id) => return Ok(id),
            None => self.reserve(location.clone()),
        };
        self.fill(id, value, &location, depth)?;
        Ok(id)
    }

    fn reserve(&mut self, location: String) -> NodeId {
        let id = NodeId(self.slots.len());
        self.slots.push(Slot::Pending);
        self.locations.push(location.clone());
        self.by_location.insert(location, id);
        id
    }

    fn fill(
        &mut self,
        id: NodeId,
        value: &'s Value,
        location: &str,
        depth: usize,
    ) -> Result<(), SchemaError> {
        if let Some(slot) = self.slots.get_mut(id.0) {
            *slot = Slot::Compiling;
        }
        let node = match value {
            Value::Bool(b) => Node::Bool(*b),
            Value::Object(map) => Node::Keywords(self.keywords(map, location, depth)?),
            _ => return Err(error(location, "a schema must be an object or a boolean")),
        };
        if let Some(slot) = self.slots.get_mut(id.0) {
            *slot = Slot::Done(node);
        }
        Ok(())
    }

    /// A schema object's keywords, cheapest first (so `is_valid` fails early).
    fn keywords(
        &mut self,
        map: &'s Map<String, Value>,
        location: &str,
        depth: usize,
    ) -> Result<Vec<Keyword>, SchemaError> {
        if let Some(unknown) = map.keys().find(|k| !KEYWORDS.contains(&k.as_str())) {
            return Err(error(
                location,
                format!(
                    "keyword {unknown:?} is not supported (supported: {})",
                    KEYWORDS.join(", ")
                ),
            ));
        }
        if map.contains_key("$id") && !location.is_empty() {
            return Err(error(
                location,
                "$id is supported only at the root (inside, it would change what \"#\" means)",
            ));
        }
        let mut keywords = Vec::new();
        if SHAPE.iter().any(|k| map.contains_key(*k)) {
            keywords.push(self.shape(map, location, depth + 1)?);
        }
        for (key, value) in map {
            if SHAPE.contains(&key.as_str()) {
                continue;
            }
            let here = child(location, key);
            let keyword = match assertion(key, value).map_err(|p| error(&here, p))? {
                Some(keyword) => Some(keyword),
                None => self.applicator(map, key, value, &here, depth)?,
            };
            keywords.extend(keyword);
        }
        keywords.sort_by_key(rank);
        Ok(keywords)
    }

    /// The keywords holding subschemas (and `$ref`); `None` for the others.
    fn applicator(
        &mut self,
        map: &'s Map<String, Value>,
        key: &str,
        value: &'s Value,
        here: &str,
        depth: usize,
    ) -> Result<Option<Keyword>, SchemaError> {
        let depth = depth + 1;
        Ok(Some(match key {
            "propertyNames" => Keyword::PropertyNames(self.at(value, here, depth)?),
            "dependentSchemas" => Keyword::DependentSchemas(self.schema_map(value, here, depth)?),
            "prefixItems" => Keyword::PrefixItems(self.schema_list(value, here, depth)?),
            "items" if value.is_array() => {
                return Err(error(
                    here,
                    "items must be one schema in draft 2020-12 (a list of schemas is prefixItems)",
                ));
            }
            "items" => Keyword::Items {
                node: self.at(value, here, depth)?,
                skip: map
                    .get("prefixItems")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len),
            },
            "contains" => self.contains(map, value, here, depth)?,
            "allOf" => Keyword::AllOf(self.schema_list(value, here, depth)?),
            "anyOf" => Keyword::AnyOf(self.schema_list(value, here, depth)?),
            "oneOf" => Keyword::OneOf(self.schema_list(value, here, depth)?),
            "not" => Keyword::Not(self.at(value, here, depth)?),
            "if" => self.condition(map, value, here, depth)?,
            "then" | "else" => {
                // Compiled (so errors and references in them count); applied by `if`.
                self.at(value, here, depth)?;
                return Ok(None);
            }
            "$ref" => Keyword::Ref(self.reference(value, here)?),
            "$defs" | "definitions" => {
                self.schema_map(value, here, depth)?;
                return Ok(None);
            }
            _ => return Ok(None),
        }))
    }

    fn at(&mut self, value: &'s Value, here: &str, depth: usize) -> Result<NodeId, SchemaError> {
        self.subschema(value, here.to_string(), depth)
    }

    /// An object whose values are schemas (`properties`, `$defs`, ...).
    fn schema_map(
        &mut self,
        value: &'s Value,
        here: &str,
        depth: usize,
    ) -> Result<Vec<(String, NodeId)>, SchemaError> {
        let map = value
            .as_object()
            .ok_or_else(|| error(here, "must be an object whose values are schemas"))?;
        let mut compiled = Vec::with_capacity(map.len());
        for (name, schema) in map {
            let id = self.subschema(schema, child(here, name), depth)?;
            compiled.push((name.clone(), id));
        }
        Ok(compiled)
    }

    /// A non-empty array of schemas (`allOf`, `prefixItems`, ...).
    fn schema_list(
        &mut self,
        value: &'s Value,
        here: &str,
        depth: usize,
    ) -> Result<Vec<NodeId>, SchemaError> {
        let list = value
            .as_array()
            .filter(|l| !l.is_empty())
            .ok_or_else(|| error(here, "must be a non-empty array of schemas"))?;
        let mut compiled = Vec::with_capacity(list.len());
        for (i, schema) in list.iter().enumerate() {
            compiled.push(self.subschema(schema, child(here, &i.to_string()), depth)?);
        }
        Ok(compiled)
    }

    /// `properties`, `patternProperties`, `additionalProperties` and `required` as one
    /// [`Shape`].
    fn shape(
        &mut self,
        map: &'s Map<String, Value>,
        location: &str,
        depth: usize,
    ) -> Result<Keyword, SchemaError> {
        let mut names: Vec<Name> = Vec::new();
        if let Some(value) = map.get("properties") {
            for (name, id) in self.schema_map(value, &child(location, "properties"), depth)? {
                names.push(Name {
                    name,
                    node: Some(id),
                    required: false,
                });
            }
        }
        let mut patterns = Vec::new();
        if let Some(value) = map.get("patternProperties") {
            let here = child(location, "patternProperties");
            for (source, id) in self.schema_map(value, &here, depth)? {
                patterns.push((compile_pattern(&source, &child(&here, &source))?, id));
            }
        }
        let additional = match map.get("additionalProperties") {
            Some(value) => Some(self.at(value, &child(location, "additionalProperties"), depth)?),
            None => None,
        };
        if let Some(value) = map.get("required") {
            let required = strings(value).map_err(|p| error(&child(location, "required"), p))?;
            for name in required {
                match names.iter_mut().find(|n| n.name == name) {
                    Some(known) => known.required = true,
                    None => names.push(Name {
                        name,
                        node: None,
                        required: true,
                    }),
                }
            }
        }
        names.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Keyword::Shape(Box::new(Shape {
            required: names.iter().filter(|n| n.required).count(),
            names,
            patterns,
            additional,
        })))
    }

    fn contains(
        &mut self,
        map: &'s Map<String, Value>,
        value: &'s Value,
        here: &str,
        depth: usize,
    ) -> Result<Keyword, SchemaError> {
        let node = self.at(value, here, depth)?;
        // minContains and maxContains are checked as assertions of their own (their type);
        // here they are only read.
        let min = map.get("minContains").and_then(count).unwrap_or(1);
        let max = map.get("maxContains").and_then(count);
        Ok(Keyword::Contains { node, min, max })
    }

    fn condition(
        &mut self,
        map: &'s Map<String, Value>,
        value: &'s Value,
        here: &str,
        depth: usize,
    ) -> Result<Keyword, SchemaError> {
        let test = self.at(value, here, depth)?;
        let parent = here.strip_suffix("/if").unwrap_or(here);
        let mut branch = |key: &str| match map.get(key) {
            Some(schema) => self.subschema(schema, child(parent, key), depth).map(Some),
            None => Ok(None),
        };
        let then = branch("then")?;
        let otherwise = branch("else")?;
        Ok(Keyword::Condition {
            test,
            then,
            otherwise,
        })
    }

    /// The node a `$ref` names: `#` or `#/json/pointer` (percent-encoded or not) into this
    /// document.
    fn reference(&mut self, value: &Value, here: &str) -> Result<NodeId, SchemaError> {
        let text = value
            .as_str()
            .ok_or_else(|| error(here, "$ref must be a string"))?;
        let unsupported = |why: &str| {
            error(
                here,
                format!(
                    "$ref {text:?}: {why} (supported: \"#\", \"#/$defs/name\" and other local JSON pointers)"
                ),
            )
        };
        let fragment = text
            .strip_prefix('#')
            .ok_or_else(|| unsupported("remote and relative references are not supported"))?;
        let pointer =
            percent_decode(fragment).ok_or_else(|| unsupported("bad percent-encoding"))?;
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(unsupported("anchors are not supported"));
        }
        let mut target = self.root;
        let mut location = String::new();
        for token in pointer.split('/').skip(1) {
            let token =
                unescape(token).ok_or_else(|| unsupported("\"~\" must be \"~0\" or \"~1\""))?;
            target = step(target, &token).ok_or_else(|| unsupported("it points at nothing"))?;
            location = child(&location, &token);
        }
        if let Some(&id) = self.by_location.get(&location) {
            return Ok(id);
        }
        let id = self.reserve(location);
        self.pending.push((target, id));
        Ok(id)
    }
}

/// One step of a JSON pointer: a member, or an array element by index (digits, no leading
/// zero).
fn step<'v>(value: &'v Value, token: &str) -> Option<&'v Value> {
    match value {
        Value::Object(map) => map.get(token),
        Value::Array(items) => {
            let canonical = token == "0" || !token.starts_with('0');
            if canonical && token.bytes().all(|b| b.is_ascii_digit()) {
                items.get(token.parse::<usize>().ok()?)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// A JSON pointer token unescaped (`~1` is "/", `~0` is "~"); `None` for a stray "~".
fn unescape(token: &str) -> Option<String> {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// `%XX` sequences decoded (a URI fragment); `None` when malformed or not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        if b == b'%' {
            let (hex, tail) = (rest.get(..2)?, rest.get(2..)?);
            let hex = std::str::from_utf8(hex).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = tail;
        } else {
            bytes.push(b);
        }
    }
    String::from_utf8(bytes).ok()
}

/// A non-negative integer (`2.0` counts, as the meta-schema says).
fn count(value: &Value) -> Option<u64> {
    match value.as_u64() {
        Some(n) => Some(n),
        None => value
            .as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1.8e19)
            .map(|f| f as u64),
    }
}

fn compile_pattern(source: &str, here: &str) -> Result<Pattern, SchemaError> {
    let regex = pattern::compile(source).map_err(|e| error(here, e))?;
    Ok(Pattern {
        source: source.to_string(),
        regex,
    })
}

/// The keywords that hold no subschema; `Ok(None)` for the others. Errors are bare problems.
fn assertion(key: &str, value: &Value) -> Result<Option<Keyword>, String> {
    let counted = || count(value).ok_or_else(|| "must be a non-negative integer".to_string());
    let number = || match value {
        Value::Number(n) => Ok(n.clone()),
        _ => Err("must be a number".to_string()),
    };
    Ok(Some(match key {
        "type" => Keyword::Type(types(value)?),
        "const" => Keyword::Const(value.clone()),
        "enum" => Keyword::Enum(value.as_array().cloned().ok_or("must be an array")?),
        "dependentRequired" => Keyword::DependentRequired(dependent_required(value)?),
        "minProperties" => Keyword::MinProperties(counted()?),
        "maxProperties" => Keyword::MaxProperties(counted()?),
        "minItems" => Keyword::MinItems(counted()?),
        "maxItems" => Keyword::MaxItems(counted()?),
        "minLength" => Keyword::MinLength(counted()?),
        "maxLength" => Keyword::MaxLength(counted()?),
        "minContains" | "maxContains" => {
            counted()?;
            return Ok(None);
        }
        "uniqueItems" => match value {
            Value::Bool(true) => Keyword::UniqueItems,
            Value::Bool(false) => return Ok(None),
            _ => return Err("must be a boolean".into()),
        },
        "minimum" => Keyword::Minimum(number()?),
        "maximum" => Keyword::Maximum(number()?),
        "exclusiveMinimum" => Keyword::ExclusiveMinimum(number()?),
        "exclusiveMaximum" => Keyword::ExclusiveMaximum(number()?),
        "multipleOf" => match number()? {
            n if n.as_f64().is_some_and(|f| f > 0.0) => Keyword::MultipleOf(n),
            _ => return Err("must be a number greater than 0".into()),
        },
        "pattern" => {
            let source = value.as_str().ok_or("must be a string")?;
            Keyword::Pattern(Pattern {
                source: source.to_string(),
                regex: pattern::compile(source)?,
            })
        }
        "format" => Keyword::Format(format_of(value)?),
        _ => return annotation(key, value),
    }))
}

/// The annotations: checked for their type where a wrong one means a mistake, then ignored.
fn annotation(key: &str, value: &Value) -> Result<Option<Keyword>, String> {
    match key {
        "$schema" | "$id" | "$comment" | "title" | "description" | "contentMediaType"
        | "contentEncoding"
            if !value.is_string() =>
        {
            Err("must be a string".into())
        }
        "deprecated" | "readOnly" | "writeOnly" if !value.is_boolean() => {
            Err("must be a boolean".into())
        }
        "examples" if !value.is_array() => Err("must be an array".into()),
        _ => Ok(None),
    }
}

fn types(value: &Value) -> Result<Types, String> {
    let names: Vec<&Value> = match value {
        Value::Array(list) if !list.is_empty() => list.iter().collect(),
        Value::String(_) => vec![value],
        _ => return Err("must be a type name or a non-empty array of them".into()),
    };
    let mut bits = 0u8;
    for name in names {
        let bit = name.as_str().and_then(Types::bit).ok_or_else(|| {
            let known: Vec<&str> = Types::NAMES.iter().map(|(n, _)| *n).collect();
            format!("{name} is not a type (types: {})", known.join(", "))
        })?;
        bits |= bit;
    }
    Ok(Types(bits))
}

fn strings(value: &Value) -> Result<Vec<String>, String> {
    value
        .as_array()
        .and_then(|list| {
            list.iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| "must be an array of strings".to_string())
}

fn dependent_required(value: &Value) -> Result<Vec<(String, Vec<String>)>, String> {
    let map = value
        .as_object()
        .ok_or("must be an object of arrays of strings")?;
    map.iter()
        .map(|(name, list)| Ok((name.clone(), strings(list)?)))
        .collect()
}

fn format_of(value: &Value) -> Result<Format, String> {
    let name = value.as_str().ok_or("must be a string")?;
    Format::parse(name).ok_or_else(|| {
        format!(
            "format {name:?} is not supported (supported: {})",
            format::NAMES.join(", ")
        )
    })
}

/// Evaluation order: cheap assertions before subschemas, so the fast path fails early.
fn rank(keyword: &Keyword) -> u8 {
    match keyword {
        Keyword::Type(_) => 0,
        Keyword::Const(_) | Keyword::Enum(_) => 1,
        Keyword::MinProperties(_)
        | Keyword::MaxProperties(_)
        | Keyword::DependentRequired(_)
        | Keyword::MinItems(_)
        | Keyword::MaxItems(_)
        | Keyword::MinLength(_)
        | Keyword::MaxLength(_) => 2,
        Keyword::Minimum(_)
        | Keyword::Maximum(_)
        | Keyword::ExclusiveMinimum(_)
        | Keyword::ExclusiveMaximum(_)
        | Keyword::MultipleOf(_)
        | Keyword::Format(_) => 3,
        Keyword::Pattern(_) | Keyword::UniqueItems => 4,
        Keyword::Shape(_)
        | Keyword::PropertyNames(_)
        | Keyword::DependentSchemas(_)
        | Keyword::PrefixItems(_)
        | Keyword::Items { .. }
        | Keyword::Contains { .. } => 5,
        Keyword::Ref(_)
        | Keyword::AllOf(_)
        | Keyword::AnyOf(_)
        | Keyword::OneOf(_)
        | Keyword::Not(_)
        | Keyword::Condition { .. } => 6,
    }
}

/// The subschemas a keyword applies to the same instance (not to a part of it).
fn in_place(keyword: &Keyword) -> Vec<NodeId> {
    match keyword {
        Keyword::Ref(id) | Keyword::Not(id) => vec![*id],
        Keyword::AllOf(ids) | Keyword::AnyOf(ids) | Keyword::OneOf(ids) => ids.clone(),
        Keyword::DependentSchemas(named) => named.iter().map(|(_, id)| *id).collect(),
        Keyword::Condition {
            test,
            then,
            otherwise,
        } => std::iter::once(*test)
            .chain(*then)
            .chain(*otherwise)
            .collect(),
        _ => Vec::new(),
    }
}

/// Refuses a cycle of in-place subschemas (`{"$defs": {"a": {"$ref": "#/$defs/a"}}}`): it
/// would recurse forever on any instance. Iterative, so a long chain cannot overflow.
fn check_cycles(c: &Compiler<'_>) -> Result<(), SchemaError> {
    let edges: Vec<Vec<NodeId>> = c
        .slots
        .iter()
        .map(|slot| match slot {
            Slot::Done(Node::Keywords(keywords)) => keywords.iter().flat_map(in_place).collect(),
            _ => Vec::new(),
        })
        .collect();
    // 0: unseen, 1: on the current path, 2: done.
    let mut state = vec![0u8; edges.len()];
    for start in 0..edges.len() {
        if state.get(start) != Some(&0) {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        state[start] = 1;
        while let Some((node, next)) = stack.pop() {
            let Some(&NodeId(target)) = edges.get(node).and_then(|e| e.get(next)) else {
                state[node] = 2;
                continue;
            };
            stack.push((node, next + 1));
            match state.get(target) {
                Some(0) => {
                    state[target] = 1;
                    stack.push((target, 0));
                }
                Some(1) => {
                    let at = c.locations.get(target).map_or("", String::as_str);
                    return Err(error(
                        at,
                        "a cycle of $ref (or allOf/anyOf/oneOf/not/if) that never descends into \
                         the instance: it would never end",
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
}
