//! `pattern` and `patternProperties`: ECMA-262 regexes, searched unanchored, compiled with
//! the `regex` crate. The classes whose meaning differs are translated so they mean what
//! ECMA-262 says: `\d` `\w` `\b` are ASCII, `\s` is ECMA white space and line terminators,
//! `.` stops at line terminators. What the crate cannot run (look-around, backreferences)
//! is a load error naming the pattern.

use regex::Regex;

/// ECMA-262 `WhiteSpace` and `LineTerminator`, as the inside of a class.
const SPACE: &str = r"\t\n\x0B\x0C\r\x20\xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
const DIGIT: &str = "0-9";
const WORD: &str = "0-9A-Za-z_";

pub(super) fn compile(source: &str) -> Result<Regex, String> {
    Regex::new(&translate(source)).map_err(|e| {
        let text = e.to_string();
        let why = text.lines().last().unwrap_or_default();
        let why = why.strip_prefix("error: ").unwrap_or(why);
        format!(
            "pattern {source:?} does not compile: {why} (patterns run on the regex crate: \
             no look-around, no backreferences)"
        )
    })
}

/// The pattern in the `regex` crate's syntax, with ECMA-262 meanings.
fn translate(source: &str) -> String {
    let mut out = String::with_capacity(source.len() + 16);
    let mut chars = source.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped) => escape(escaped, in_class, &mut chars, &mut out),
                None => out.push('\\'),
            },
            '[' if in_class => out.push_str(r"\["),
            '[' => {
                let negated = chars.next_if_eq(&'^').is_some();
                if chars.next_if_eq(&']').is_some() {
                    // ECMA-262: `[]` matches nothing, `[^]` anything.
                    out.push_str(if negated {
                        r"(?s:.)"
                    } else {
                        r"[^\x00-\x{10FFFF}]"
                    });
                } else {
                    in_class = true;
                    out.push_str(if negated { "[^" } else { "[" });
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            // Set operators of the regex crate (`&&`, `~~`, `--`) are plain text in ECMA-262.
            '&' | '~' if in_class => {
                out.push('\\');
                out.push(c);
            }
            '-' if in_class && chars.peek() == Some(&'-') => out.push_str(r"\-"),
            '.' if !in_class => out.push_str(r"[^\n\r\x{2028}\x{2029}]"),
            _ => out.push(c),
        }
    }
    out
}

/// One escape (`\` already read) in the crate's syntax.
fn escape(
    escaped: char,
    in_class: bool,
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    out: &mut String,
) {
    let class = |inside: &str| {
        if in_class {
            inside.to_string()
        } else {
            format!("[{inside}]")
        }
    };
    let text = match escaped {
        'd' => class(DIGIT),
        'w' => class(WORD),
        's' => class(SPACE),
        'D' => format!("[^{DIGIT}]"),
        'W' => format!("[^{WORD}]"),
        'S' => format!("[^{SPACE}]"),
        'b' if in_class => r"\x08".to_string(),
        'b' => r"(?-u:\b)".to_string(),
        'B' => r"(?-u:\B)".to_string(),
        '0' if !chars.peek().is_some_and(char::is_ascii_digit) => r"\x00".to_string(),
        'c' => match chars.next_if(char::is_ascii_alphabetic) {
            Some(letter) => format!(r"\x{:02X}", u32::from(letter) % 32),
            None => r"\\c".to_string(),
        },
        other => format!("\\{other}"),
    };
    out.push_str(&text);
}
