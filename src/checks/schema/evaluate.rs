//! Evaluation of an instance against a compiled schema. One walk serves both uses: on the
//! fast path nothing is recorded and the walk stops at the first violation; when
//! collecting, every violation is recorded with the instance's JSON pointer. Subschemas
//! whose result only decides (`anyOf`, `oneOf`, `not`, `if`, `contains`) are always
//! evaluated on the fast path, and their keyword reports one violation.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::number::{compare, equal, hash, is_integer, is_multiple};
use super::{JsonSchema, Keyword, Node, NodeId, ROOT, Shape, Violation};

/// Schemas applied inside one another deeper than this stop with a violation: instances
/// read as JSON are at most 128 deep, so only a pathological schema or value gets here.
const MAX_DEPTH: usize = 256;

/// Arrays up to this long are checked for `uniqueItems` pair by pair, longer ones by hash.
const PAIRWISE_UNIQUE: usize = 16;

#[derive(Clone, Copy)]
enum Segment<'v> {
    Key(&'v str),
    Index(usize),
}

struct Evaluation<'s, 'v> {
    nodes: &'s [Node],
    path: Vec<Segment<'v>>,
    /// `None` on the fast path: stop at the first violation, record nothing.
    found: Option<Vec<Violation>>,
    depth: usize,
}

pub(super) fn is_valid(schema: &JsonSchema, instance: &Value) -> bool {
    Evaluation::new(&schema.nodes, None, 0).node(ROOT, instance)
}

pub(super) fn violations(schema: &JsonSchema, instance: &Value) -> Vec<Violation> {
    let mut evaluation = Evaluation::new(&schema.nodes, Some(Vec::new()), 0);
    let valid = evaluation.node(ROOT, instance);
    let mut found = evaluation.found.unwrap_or_default();
    if !valid && found.is_empty() {
        // Every failing keyword records; this only guards the two answers agreeing.
        found.push(Violation {
            pointer: String::new(),
            message: "does not validate".into(),
        });
    }
    found
}

/// A value for a violation message: compact JSON, cut short.
fn brief(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 60 {
        text
    } else {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    }
}

fn quoted(name: &str) -> String {
    Value::from(name).to_string()
}

impl<'s, 'v> Evaluation<'s, 'v> {
    fn new(nodes: &'s [Node], found: Option<Vec<Violation>>, depth: usize) -> Self {
        Evaluation {
            nodes,
            path: Vec::new(),
            found,
            depth,
        }
    }

    fn fast(&self) -> bool {
        self.found.is_none()
    }

    /// Records a violation at the current pointer (when collecting); always `false`.
    fn fail(&mut self, message: impl FnOnce() -> String) -> bool {
        if self.found.is_some() {
            let violation = Violation {
                pointer: self.pointer(),
                message: message(),
            };
            self.found.get_or_insert_with(Vec::new).push(violation);
        }
        false
    }

    fn pointer(&self) -> String {
        let mut pointer = String::new();
        for segment in &self.path {
            pointer.push('/');
            match segment {
                Segment::Key(key) => pointer.push_str(&key.replace('~', "~0").replace('/', "~1")),
                Segment::Index(i) => pointer.push_str(&i.to_string()),
            }
        }
        pointer
    }

    fn node(&mut self, id: NodeId, value: &'v Value) -> bool {
        let nodes = self.nodes;
        match nodes.get(id.0) {
            Some(Node::Bool(true)) => true,
            Some(Node::Bool(false)) | None => {
                self.fail(|| "no value is allowed here (the schema is false)".into())
            }
            Some(Node::Keywords(keywords)) => {
                if self.depth >= MAX_DEPTH {
                    return self.fail(|| {
                        format!("schemas nested deeper than {MAX_DEPTH} levels; not evaluated")
                    });
                }
                self.depth += 1;
                let mut valid = true;
                for keyword in keywords {
                    if !self.keyword(keyword, value) {
                        valid = false;
                        if self.fast() {
                            break;
                        }
                    }
                }
                self.depth -= 1;
                valid
            }
        }
    }

    /// `value` against the subschema on the fast path, whatever the mode: it only decides.
    fn holds(&mut self, id: NodeId, value: &'v Value) -> bool {
        let saved = self.found.take();
        let valid = self.node(id, value);
        self.found = saved;
        valid
    }

    /// The subschema applied to a part of the instance, with its pointer.
    fn child(&mut self, segment: Segment<'v>, id: NodeId, value: &'v Value) -> bool {
        if self.fast() {
            // Nothing is recorded, so the pointer is not needed.
            return self.node(id, value);
        }
        self.path.push(segment);
        let valid = self.node(id, value);
        self.path.pop();
        valid
    }

    fn keyword(&mut self, keyword: &'s Keyword, value: &'v Value) -> bool {
        match keyword {
            Keyword::Type(types) => {
                types.accepts(value)
                    || self.fail(|| format!("{} is not of type {types}", brief(value)))
            }
            Keyword::Const(expected) => {
                equal(value, expected)
                    || self.fail(|| format!("{} is not {}", brief(value), brief(expected)))
            }
            Keyword::Enum(options) => {
                options.iter().any(|o| equal(value, o))
                    || self.fail(|| {
                        let list = Value::from(options.clone());
                        format!("{} is not one of {}", brief(value), brief(&list))
                    })
            }
            Keyword::Ref(id) => self.node(*id, value),
            Keyword::AllOf(ids) => self.all_of(ids, value),
            Keyword::AnyOf(ids) => {
                ids.iter().any(|id| self.holds(*id, value))
                    || self.fail(|| format!("matches none of the {} schemas of anyOf", ids.len()))
            }
            Keyword::OneOf(ids) => self.one_of(ids, value),
            Keyword::Not(id) => {
                !self.holds(*id, value) || self.fail(|| "matches the schema of not".into())
            }
            Keyword::Condition {
                test,
                then,
                otherwise,
            } => match if self.holds(*test, value) {
                then
            } else {
                otherwise
            } {
                Some(branch) => self.node(*branch, value),
                None => true,
            },
            _ => match value {
                Value::Object(map) => self.object(keyword, map, value),
                Value::Array(items) => self.array(keyword, items),
                Value::String(text) => self.string(keyword, text),
                Value::Number(n) => self.number(keyword, n),
                Value::Null | Value::Bool(_) => true,
            },
        }
    }

    fn all_of(&mut self, ids: &[NodeId], value: &'v Value) -> bool {
        let mut valid = true;
        for id in ids {
            if !self.node(*id, value) {
                valid = false;
                if self.fast() {
                    break;
                }
            }
        }
        valid
    }

    #[inline(never)]
    fn one_of(&mut self, ids: &[NodeId], value: &'v Value) -> bool {
        let mut matched = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            if self.holds(*id, value) {
                matched.push(i);
                if matched.len() == 2 {
                    break;
                }
            }
        }
        match matched.as_slice() {
            [_] => true,
            [] => self.fail(|| format!("matches none of the {} schemas of oneOf", ids.len())),
            [first, second, ..] => self
                .fail(|| format!("matches more than one schema of oneOf (#{first} and #{second})")),
        }
    }

    #[inline(never)]
    fn object(
        &mut self,
        keyword: &'s Keyword,
        map: &'v Map<String, Value>,
        value: &'v Value,
    ) -> bool {
        match keyword {
            Keyword::Shape(shape) => self.shape(shape, map),
            Keyword::DependentRequired(rules) => {
                let mut valid = true;
                for (name, needed) in rules {
                    if map.contains_key(name) {
                        valid &= self.required(needed, map, Some(name));
                        if !valid && self.fast() {
                            break;
                        }
                    }
                }
                valid
            }
            Keyword::MinProperties(min) => {
                map.len() as u64 >= *min
                    || self.fail(|| format!("has {} properties, fewer than {min}", map.len()))
            }
            Keyword::MaxProperties(max) => {
                map.len() as u64 <= *max
                    || self.fail(|| format!("has {} properties, more than {max}", map.len()))
            }
            Keyword::PropertyNames(id) => self.property_names(*id, map),
            Keyword::DependentSchemas(rules) => {
                let mut valid = true;
                for (name, id) in rules {
                    if map.contains_key(name) {
                        valid &= self.node(*id, value);
                        if !valid && self.fast() {
                            break;
                        }
                    }
                }
                valid
            }
            _ => true,
        }
    }

    /// `required` (or, with `because`, `dependentRequired`): one violation per missing name.
    fn required(
        &mut self,
        names: &[String],
        map: &Map<String, Value>,
        because: Option<&str>,
    ) -> bool {
        let mut valid = true;
        for name in names {
            if !map.contains_key(name) {
                valid = false;
                self.fail(|| match because {
                    None => format!("required property {} is missing", quoted(name)),
                    Some(by) => format!(
                        "property {} is required when {} is present",
                        quoted(name),
                        quoted(by)
                    ),
                });
                if self.fast() {
                    break;
                }
            }
        }
        valid
    }

    /// One pass over the members: each one's own subschema, the patterns it matches, else
    /// `additionalProperties`; and the required names counted on the way.
    fn shape(&mut self, shape: &'s Shape, map: &'v Map<String, Value>) -> bool {
        let refused = matches!(
            shape.additional.and_then(|id| self.nodes.get(id.0)),
            Some(Node::Bool(false))
        );
        let mut valid = true;
        if !self.fast() {
            // Collecting: what concerns the object itself first, then its members.
            valid &= self.members_missing_or_refused(shape, map, refused);
        } else if map.len() < shape.required {
            return false;
        }
        let mut required = 0;
        let mut cursor = 0;
        for (key, member) in map {
            let name = shape.find(key, &mut cursor);
            required += usize::from(name.is_some_and(|n| n.required));
            let mut known = false;
            if let Some(id) = name.and_then(|n| n.node) {
                known = true;
                valid &= self.child(Segment::Key(key), id, member);
            }
            for (pattern, id) in &shape.patterns {
                if pattern.regex.is_match(key) {
                    known = true;
                    valid &= self.child(Segment::Key(key), *id, member);
                }
            }
            match shape.additional {
                Some(id) if !known && !refused => {
                    valid &= self.child(Segment::Key(key), id, member);
                }
                Some(_) if !known => valid = false,
                _ => {}
            }
            if !valid && self.fast() {
                return false;
            }
        }
        valid && required == shape.required
    }

    /// The required names missing and the members `additionalProperties: false` refuses,
    /// recorded.
    #[inline(never)]
    fn members_missing_or_refused(
        &mut self,
        shape: &Shape,
        map: &Map<String, Value>,
        refused: bool,
    ) -> bool {
        let names: Vec<String> = shape
            .names
            .iter()
            .filter(|n| n.required)
            .map(|n| n.name.clone())
            .collect();
        let mut valid = self.required(&names, map, None);
        if refused {
            let unexpected: Vec<String> = map
                .keys()
                .filter(|key| {
                    shape.find(key, &mut 0).is_none_or(|n| n.node.is_none())
                        && !shape.patterns.iter().any(|(p, _)| p.regex.is_match(key))
                })
                .map(|key| quoted(key))
                .collect();
            if !unexpected.is_empty() {
                valid = self.fail(|| {
                    format!(
                        "additional properties are not allowed ({} unexpected)",
                        unexpected.join(", ")
                    )
                });
            }
        }
        valid
    }

    #[inline(never)]
    fn property_names(&mut self, id: NodeId, map: &Map<String, Value>) -> bool {
        let mut valid = true;
        for key in map.keys() {
            let name = Value::String(key.clone());
            // Its own walk: the name is not a part of the instance, so it has no pointer.
            if !Evaluation::new(self.nodes, None, self.depth).node(id, &name) {
                valid = false;
                self.fail(|| format!("property name {} does not match propertyNames", quoted(key)));
                if self.fast() {
                    break;
                }
            }
        }
        valid
    }

    #[inline(never)]
    fn array(&mut self, keyword: &'s Keyword, items: &'v [Value]) -> bool {
        match keyword {
            Keyword::MinItems(min) => {
                items.len() as u64 >= *min
                    || self.fail(|| format!("has {} items, fewer than {min}", items.len()))
            }
            Keyword::MaxItems(max) => {
                items.len() as u64 <= *max
                    || self.fail(|| format!("has {} items, more than {max}", items.len()))
            }
            Keyword::UniqueItems => match duplicate(items) {
                None => true,
                Some((i, j)) => self.fail(|| format!("items {i} and {j} are equal (uniqueItems)")),
            },
            Keyword::PrefixItems(ids) => {
                self.each(items.iter().zip(ids.iter().copied()).enumerate())
            }
            Keyword::Items { node, skip } => self.each(
                items
                    .iter()
                    .enumerate()
                    .skip(*skip)
                    .map(|(i, item)| (i, (item, *node))),
            ),
            Keyword::Contains { node, min, max } => self.contains(*node, *min, *max, items),
            _ => true,
        }
    }

    fn each(&mut self, pairs: impl Iterator<Item = (usize, (&'v Value, NodeId))>) -> bool {
        let mut valid = true;
        for (i, (item, id)) in pairs {
            valid &= self.child(Segment::Index(i), id, item);
            if !valid && self.fast() {
                break;
            }
        }
        valid
    }

    #[inline(never)]
    fn contains(&mut self, id: NodeId, min: u64, max: Option<u64>, items: &'v [Value]) -> bool {
        let mut count = 0u64;
        for item in items {
            if max.is_none() && count >= min {
                break;
            }
            if self.holds(id, item) {
                count += 1;
            }
        }
        if count < min {
            return self.fail(|| match (min, count) {
                (1, _) => "no item matches the schema of contains".into(),
                _ => format!("{count} items match the schema of contains, fewer than {min}"),
            });
        }
        match max {
            Some(max) if count > max => {
                self.fail(|| format!("{count} items match the schema of contains, more than {max}"))
            }
            _ => true,
        }
    }

    #[inline(never)]
    fn string(&mut self, keyword: &'s Keyword, text: &str) -> bool {
        match keyword {
            // A character is 1 to 4 bytes: the byte length often decides alone.
            Keyword::MinLength(min) if text.len() as u64 >= min.saturating_mul(4) => true,
            Keyword::MaxLength(max) if text.len() as u64 <= *max => true,
            Keyword::MinLength(min) => {
                let length = text.chars().count() as u64;
                length >= *min
                    || self.fail(|| {
                        format!(
                            "{} has {length} characters, fewer than {min}",
                            brief_str(text)
                        )
                    })
            }
            Keyword::MaxLength(max) => {
                let length = text.chars().count() as u64;
                length <= *max
                    || self.fail(|| {
                        format!(
                            "{} has {length} characters, more than {max}",
                            brief_str(text)
                        )
                    })
            }
            Keyword::Pattern(pattern) => {
                pattern.regex.is_match(text)
                    || self.fail(|| {
                        format!(
                            "{} does not match {}",
                            brief_str(text),
                            quoted(&pattern.source)
                        )
                    })
            }
            Keyword::Format(format) => {
                format.accepts(text)
                    || self.fail(|| format!("{} is not a valid {}", brief_str(text), format.name()))
            }
            _ => true,
        }
    }

    #[inline(never)]
    fn number(&mut self, keyword: &'s Keyword, n: &Number) -> bool {
        let (valid, relation, bound) = match keyword {
            Keyword::Minimum(b) => (
                compare(n, b) != Some(Ordering::Less),
                "less than the minimum",
                b,
            ),
            Keyword::Maximum(b) => (
                compare(n, b) != Some(Ordering::Greater),
                "greater than the maximum",
                b,
            ),
            Keyword::ExclusiveMinimum(b) => (
                compare(n, b) == Some(Ordering::Greater),
                "not greater than the exclusive minimum",
                b,
            ),
            Keyword::ExclusiveMaximum(b) => (
                compare(n, b) == Some(Ordering::Less),
                "not less than the exclusive maximum",
                b,
            ),
            Keyword::MultipleOf(b) => (is_multiple(n, b), "not a multiple of", b),
            _ => return true,
        };
        valid || self.fail(|| format!("{n} is {relation} {bound}"))
    }
}

fn brief_str(text: &str) -> String {
    brief(&Value::from(text))
}

/// The first pair of equal items (by JSON equality), if any.
fn duplicate(items: &[Value]) -> Option<(usize, usize)> {
    if items.len() <= PAIRWISE_UNIQUE {
        for (j, b) in items.iter().enumerate() {
            if let Some(i) = items.iter().take(j).position(|a| equal(a, b)) {
                return Some((i, j));
            }
        }
        return None;
    }
    let mut seen: HashMap<u64, Vec<usize>> = HashMap::with_capacity(items.len());
    for (j, b) in items.iter().enumerate() {
        let bucket = seen.entry(hash(b)).or_default();
        if let Some(&i) = bucket
            .iter()
            .find(|&&i| items.get(i).is_some_and(|a| equal(a, b)))
        {
            return Some((i, j));
        }
        bucket.push(j);
    }
    None
}

impl super::Types {
    pub(super) fn accepts(self, value: &Value) -> bool {
        match value {
            // Whether it is an integer matters only when `number` is not accepted anyway.
            Value::Number(n) if self.0 & Self::NUMBER == 0 => {
                self.0 & Self::INTEGER != 0 && is_integer(n)
            }
            other => self.0 & Self::of(other) != 0,
        }
    }
}
