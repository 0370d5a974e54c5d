//! Numbers as JSON Schema compares them — by value and exactly (`1 == 1.0`; an integer is
//! never rounded through `f64` to compare it with a float) — and JSON equality built on
//! that, where `true` is not `1`.

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::{Number, Value};

#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

fn num(n: &Number) -> Num {
    if let Some(i) = n.as_i64() {
        Num::Int(i128::from(i))
    } else if let Some(u) = n.as_u64() {
        Num::Int(i128::from(u))
    } else {
        Num::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// Beyond this, no `f64` equals an integer that JSON parsing produced (at most `u64::MAX`),
/// and casts to `i128` stay exact below it.
const INT_RANGE: f64 = 1e38;

/// `i` against `f`, exactly.
fn compare_int_float(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // Below 2^53 an integer is exactly an `f64`: one float comparison decides.
    if i.unsigned_abs() <= 1 << 53 {
        return (i as f64).partial_cmp(&f);
    }
    if f >= INT_RANGE {
        return Some(Ordering::Less);
    }
    if f <= -INT_RANGE {
        return Some(Ordering::Greater);
    }
    let whole = f.trunc();
    // Exact: `whole` is an integer of magnitude below 2^127.
    Some(i.cmp(&(whole as i128)).then_with(|| {
        let rest = f - whole;
        if rest > 0.0 {
            Ordering::Less
        } else if rest < 0.0 {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }))
}

/// `a` against `b` by value; `None` only for a NaN, which JSON cannot hold.
pub(super) fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    match (num(a), num(b)) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
        (Num::Int(x), Num::Float(y)) => compare_int_float(x, y),
        (Num::Float(x), Num::Int(y)) => compare_int_float(y, x).map(Ordering::reverse),
    }
}

/// An integer, or a float with no fractional part (`1.0` is an integer in JSON Schema).
pub(super) fn is_integer(n: &Number) -> bool {
    match num(n) {
        Num::Int(_) => true,
        Num::Float(f) => is_whole(f),
    }
}

/// Whether a finite `f` has no fractional part, from its bits (`fract` is a libm call, and
/// this runs for every float a schema types).
fn is_whole(f: f64) -> bool {
    let bits = f.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i64 - 1023;
    match exponent {
        1024 => false,         // infinite or NaN
        52.. => true,          // no bits below the point
        ..0 => bits << 1 == 0, // below 1: only zero (either sign)
        e => bits & ((1u64 << (52 - e)) - 1) == 0,
    }
}

fn as_f64(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    }
}

/// `multipleOf`: exact for integers; for a float divisor the quotient must be whole (as
/// most implementations do, so 0.3 is not a multiple of 0.1 in binary floating point),
/// falling back to an exact remainder when the quotient overflows.
pub(super) fn is_multiple(x: &Number, divisor: &Number) -> bool {
    match (num(x), num(divisor)) {
        (Num::Int(a), Num::Int(b)) => b != 0 && a % b == 0,
        (Num::Float(a), Num::Int(b)) => a % (b as f64) == 0.0,
        (a, Num::Float(b)) => {
            let a = as_f64(a);
            let quotient = a / b;
            if quotient.is_finite() {
                is_whole(quotient)
            } else {
                a % b == 0.0
            }
        }
    }
}

/// Values nested deeper than this are compared and hashed only down to it (JSON read by
/// `serde_json` stops at 128 levels, so only a value built in code gets there).
const MAX_DEPTH: usize = 256;

/// JSON equality: numbers by value, arrays in order, objects by members; `true != 1`.
#[inline]
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // The common case (`const`, `enum` of strings), without the recursion.
        (Value::String(x), Value::String(y)) => x == y,
        _ => equal_within(a, b, 0),
    }
}

fn equal_within(a: &Value, b: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let depth = depth + 1;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| equal_within(x, y, depth))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| equal_within(v, w, depth)))
        }
        _ => a == b,
    }
}

/// A hash agreeing with [`equal`]: equal values hash alike (`1` and `1.0` included).
pub(super) fn hash(value: &Value) -> u64 {
    let mut h = DefaultHasher::new();
    feed(value, &mut h, 0);
    h.finish()
}

fn feed(value: &Value, h: &mut DefaultHasher, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let depth = depth + 1;
    match value {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => {
            2u8.hash(h);
            match num(n) {
                Num::Int(i) => i.hash(h),
                Num::Float(f) if is_whole(f) && f.abs() < INT_RANGE => (f as i128).hash(h),
                Num::Float(f) => f.to_bits().hash(h),
            }
        }
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(items) => {
            (4u8, items.len()).hash(h);
            items.iter().for_each(|item| feed(item, h, depth));
        }
        Value::Object(map) => {
            (5u8, map.len()).hash(h);
            // Order-free, whatever order the map keeps.
            let sum = map.iter().fold(0u64, |sum, (k, v)| {
                let mut entry = DefaultHasher::new();
                k.hash(&mut entry);
                feed(v, &mut entry, depth);
                sum.wrapping_add(entry.finish())
            });
            sum.hash(h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_by_their_bits_agree_with_fract() {
        let values = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1.5,
            2.0,
            3.0000000000000004,
            1e15 + 0.5,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            1e300,
            -1e300,
            5e-324,
            f64::MIN_POSITIVE,
            0.1,
            123456.0,
            -7.25,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for f in values {
            assert_eq!(is_whole(f), f.is_finite() && f.fract() == 0.0, "{f:e}");
        }
    }

    #[test]
    fn integers_and_floats_compare_exactly() {
        let n = |v: serde_json::Value| match v {
            Value::Number(n) => n,
            _ => unreachable!(),
        };
        let big = n(serde_json::json!(9007199254740993u64));
        let float = n(serde_json::json!(9007199254740992.0));
        assert_eq!(compare(&big, &float), Some(Ordering::Greater));
        assert_eq!(compare(&float, &big), Some(Ordering::Less));
        let one = n(serde_json::json!(1));
        assert_eq!(
            compare(&one, &n(serde_json::json!(1.0))),
            Some(Ordering::Equal)
        );
        assert_eq!(
            compare(&one, &n(serde_json::json!(0.5))),
            Some(Ordering::Greater)
        );
        let max = n(serde_json::json!(u64::MAX));
        assert_eq!(
            compare(&max, &n(serde_json::json!(1.8446744073709552e19))),
            Some(Ordering::Less)
        );
    }
}
