//! Comma-separated `NAME=VALUE` lists, as `--slo` and `--margin` take them: the parts, a
//! positive number, a name given once. Each list names its own names, units and errors.

/// One `NAME=VALUE` part, trimmed, with the part as written for errors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Part<'a> {
    pub text: &'a str,
    pub name: &'a str,
    pub value: &'a str,
}

/// The parts of `text`; the first one without `=` is `Err((part, problem))`, the problem
/// naming the `shape` expected (`NAME=DURATION`).
pub fn parts<'a>(text: &'a str, shape: &str) -> Result<Vec<Part<'a>>, (String, String)> {
    text.split(',')
        .map(str::trim)
        .map(|part| match part.split_once('=') {
            Some((name, value)) => Ok(Part {
                text: part,
                name: name.trim(),
                value: value.trim(),
            }),
            None => Err((part.to_string(), format!("not {shape}"))),
        })
        .collect()
}

/// `number` as a finite number above 0, or why not (`what` names it: "a bound").
pub fn positive(number: &str, what: &str) -> Result<f64, String> {
    let v: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("`{number}` is not a number"))?;
    if v <= 0.0 {
        return Err(format!("{what} must be above 0, not {number}"));
    }
    Ok(v)
}

/// Sets `slot` to `v`, or says that `name` is given twice.
pub fn set_once(slot: &mut Option<f64>, v: f64, name: &str) -> Result<(), String> {
    if slot.is_some() {
        return Err(format!("`{name}` is given twice"));
    }
    *slot = Some(v);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_numbers_and_names_given_once() {
        let p = parts(" a = 1 ,b=2ms", "NAME=VALUE").unwrap();
        assert_eq!(
            p,
            [
                Part {
                    text: "a = 1",
                    name: "a",
                    value: "1"
                },
                Part {
                    text: "b=2ms",
                    name: "b",
                    value: "2ms"
                }
            ]
        );
        assert_eq!(
            parts("a=1,b", "NAME=VALUE"),
            Err(("b".into(), "not NAME=VALUE".into()))
        );
        assert_eq!(positive("2.5", "a bound"), Ok(2.5));
        assert_eq!(positive("x", "a bound"), Err("`x` is not a number".into()));
        assert_eq!(
            positive("inf", "a bound"),
            Err("`inf` is not a number".into())
        );
        assert_eq!(
            positive("0", "a bound"),
            Err("a bound must be above 0, not 0".into())
        );
        let mut slot = None;
        assert_eq!(set_once(&mut slot, 1.0, "a"), Ok(()));
        assert_eq!(slot, Some(1.0));
        assert_eq!(
            set_once(&mut slot, 2.0, "a"),
            Err("`a` is given twice".into())
        );
    }
}
