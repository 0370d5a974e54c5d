//! The audit: before anything is sent, every planned prompt's transcript parts (the
//! blinded messages — never the judge's own template or rubric, whose words are not the
//! transcript's) are scanned for names a judge must not see, by code that shares nothing
//! with the redaction but the term list and the shipped name list: plain substring
//! search over folded text, with its own, stricter reading of context. What it finds is
//! what redaction missed.
//!
//! It looks for:
//! - every redaction term that redaction uses everywhere (targets' names and hosts, the
//!   `redact` setting, and with `builtin_redactions` the shipped distinctive names), as a
//!   whole word;
//! - names that are ordinary words (`together`, `meta`) where they plainly identify:
//!   "Together AI", "together.ai", "trained by Meta", "This is Grok";
//! - the shipped vendor and family names in a self-identification ("I'm Kimi", "Kimi
//!   here.", "我是通义千问"), whatever `builtin_redactions` says;
//! - self-identification phrasing with any capitalised name: "As a Zorblax model".
//!
//! A hit is reported with its term, why it counts and the text around it.

use super::blind::{REDACTED, Term, TermOrigin, TermScope};
use super::names::{self, fold, is_latin_letter};

/// Why an audit hit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeakKind {
    /// A redaction term (or shipped name) found where it identifies.
    Term(TermOrigin),
    /// Self-identification phrasing with a name.
    SelfIdentification,
}

impl LeakKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LeakKind::Term(origin) => origin.as_str(),
            LeakKind::SelfIdentification => "self-identification",
        }
    }
}

/// A name found in a transcript part of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leak {
    pub term: String,
    pub kind: LeakKind,
    /// The surrounding text, lower-cased, on one line.
    pub context: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// Every whole-word occurrence.
    Everywhere,
    /// Where an ordinary word plainly names a maker.
    Identifying,
    /// In a self-identification only.
    SelfIdentification,
}

#[derive(Debug, Clone)]
struct Entry {
    term: String,
    folded: String,
    rule: Rule,
    ordinary: bool,
    kind: LeakKind,
}

/// What the audit looks for.
#[derive(Debug, Clone)]
pub struct AuditList {
    entries: Vec<Entry>,
}

impl AuditList {
    /// The redaction terms, read for what they are, plus the shipped names: everywhere
    /// with `builtin`, in self-identifications always.
    pub fn new(terms: &[Term], builtin: bool) -> Self {
        let mut entries: Vec<Entry> = Vec::new();
        let mut add = |term: &str, rule: Rule, ordinary: bool, kind: LeakKind| {
            let folded = fold(term);
            if folded.chars().count() >= 2 && !entries.iter().any(|e| e.folded == folded) {
                entries.push(Entry {
                    term: term.to_string(),
                    folded,
                    rule,
                    ordinary,
                    kind,
                });
            }
        };
        for t in terms.iter().filter(|t| t.origin != TermOrigin::VendorList) {
            let rule = match t.scope {
                TermScope::Anywhere => Rule::Everywhere,
                TermScope::WhereIdentifying => Rule::Identifying,
                TermScope::SelfIdentification => Rule::SelfIdentification,
            };
            add(&t.text, rule, t.ordinary, LeakKind::Term(t.origin));
        }
        for (name, ordinary) in names::shipped().names() {
            let rule = match (builtin, ordinary) {
                (true, false) => Rule::Everywhere,
                (true, true) => Rule::Identifying,
                (false, _) => Rule::SelfIdentification,
            };
            add(name, rule, ordinary, LeakKind::Term(TermOrigin::VendorList));
        }
        AuditList { entries }
    }
}

/// Every hit in one transcript part.
pub fn audit(text: &str, list: &AuditList) -> Vec<Leak> {
    // "[redacted]" is what redaction left: blank it so no term is read inside it.
    let blanked = text.replace(REDACTED, &" ".repeat(REDACTED.len()));
    let lower = fold(&blanked);
    let mut hits: Vec<(usize, usize, Leak)> = Vec::new();
    for entry in &list.entries {
        for (at, _) in lower.match_indices(entry.folded.as_str()) {
            let end = at + entry.folded.len();
            let target = entry.kind == LeakKind::Term(TermOrigin::Target);
            // A target's name glued into a compound ("GroqCloud", "TogetherAI").
            let glued = target
                && !standalone(&lower, at, end)
                && glued_name(&blanked, &lower, at, end, entry.ordinary);
            if !glued && !standalone(&lower, at, end) {
                continue;
            }
            // Capitalised, or in a script without case.
            let capitalised = !blanked[at..].chars().next().is_some_and(char::is_lowercase);
            let named_self = (capitalised || !entry.ordinary) && introduced(&lower, at, end);
            let hit = match entry.rule {
                Rule::Everywhere => true,
                Rule::Identifying => {
                    glued
                        || named_self
                        || plainly_names_maker(&lower, at, end)
                        || (target && names_where_it_ran(&blanked, &lower, at, end))
                }
                Rule::SelfIdentification => named_self,
            };
            if hit {
                let leak = Leak {
                    term: entry.term.clone(),
                    kind: entry.kind,
                    context: context(&lower, at, end),
                };
                hits.push((at, end, leak));
            }
        }
    }
    // One report per place: the longest name found there ("acme-cloud", not also "acme").
    hits.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut leaks: Vec<Leak> = Vec::new();
    let mut covered = 0;
    for (_, end, leak) in hits {
        if end > covered {
            leaks.push(leak);
            covered = end;
        }
    }
    leaks.extend(ai_self_descriptions(&blanked, &lower));
    leaks
}

/// Not inside a longer Latin word or number.
fn standalone(lower: &str, at: usize, end: usize) -> bool {
    let Some(first) = lower[at..end].chars().next() else {
        return false;
    };
    let last = lower[at..end].chars().last().unwrap_or(first);
    let prev = lower[..at].chars().last();
    let next = lower[end..].chars().next();
    let glued = |edge: char, other: Option<char>| {
        other.is_some_and(|o| {
            (is_latin_letter(edge) && is_latin_letter(o))
                || (edge.is_ascii_digit() && o.is_ascii_digit())
        })
    };
    !glued(first, prev) && !glued(last, next)
}

/// "i am X", "i'm X", "this is X", "my name is X", "我是X", or "X here." opening a
/// sentence.
fn introduced(lower: &str, at: usize, end: usize) -> bool {
    let before = &lower[..at];
    let latin = ["i am ", "i'm ", "this is ", "my name is "];
    let by_lead = latin.iter().any(|lead| {
        before
            .strip_suffix(lead)
            .is_some_and(|rest| rest.chars().last().is_none_or(|c| !c.is_alphanumeric()))
    }) || before.ends_with("我是");
    let after = &lower[end..];
    let here = [" here,", " here.", " here!", " here:"]
        .iter()
        .any(|h| after.starts_with(h))
        && (before.is_empty()
            || before.ends_with(". ")
            || before.ends_with("! ")
            || before.ends_with("? ")
            || before.ends_with('\n'));
    by_lead || here
}

/// "X ai", "x api", a version ("phi-3", "grok 2"), "x labs", "x inc", a hostname ("x.ai", "api.x.xyz"), "trained by x",
/// "developed by x".
fn plainly_names_maker(lower: &str, at: usize, end: usize) -> bool {
    let after = &lower[end..];
    let vendor_word = [
        " ai", "-ai", " api", " labs", " inc", ".ai", ".com", ".io", ".net", ".org", ".xyz", ".dev",
    ]
    .iter()
    .any(|w| {
        after
            .strip_prefix(w)
            .is_some_and(|rest| !rest.chars().next().is_some_and(char::is_alphanumeric))
    });
    let versioned = after
        .strip_prefix([' ', '-'])
        .unwrap_or(after)
        .starts_with(|c: char| c.is_ascii_digit());
    let before = &lower[..at];
    let authored = [
        "trained by ",
        "developed by ",
        "created by ",
        "built by ",
        "made by ",
    ]
    .iter()
    .any(|w| before.ends_with(w));
    vendor_word || versioned || authored
}

/// A target's name saying where an answer ran: "via x", "hosted on x", "served by x",
/// "running on x" in any case; "on X", "from X", "using X" capitalised; "x's api";
/// "x-hosted".
fn names_where_it_ran(text: &str, lower: &str, at: usize, end: usize) -> bool {
    let list = names::shipped();
    let before = &lower[..at];
    let after_lead = |lead: &str| {
        before
            .strip_suffix(' ')
            .and_then(|b| b.strip_suffix(lead))
            .is_some_and(|rest| rest.chars().last().is_none_or(|c| !c.is_alphanumeric()))
    };
    let capitalised = text[at..].chars().next().is_some_and(|c| c.is_uppercase());
    let led = list.hosting_lead_ins.iter().any(|l| after_lead(l))
        || (capitalised && list.capitalised_lead_ins.iter().any(|l| after_lead(l)));
    let after = &lower[end..];
    let next_word = |rest: &str| -> String {
        rest.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '+')
            .collect()
    };
    let possessive = ["'s ", "’s ", "' ", "’ "]
        .iter()
        .filter_map(|p| after.strip_prefix(p))
        .any(|rest| list.identifies_after(&next_word(rest)));
    let suffixed = after
        .strip_prefix('-')
        .is_some_and(|rest| list.is_identifying_suffix(&next_word(rest)));
    led || possessive || suffixed
}

/// Glued only after its end, to a capital that follows a lower-case letter (a
/// distinctive name: "GroqCloud") or to a vendor word ("groqcloud", "togetherai").
fn glued_name(text: &str, lower: &str, at: usize, end: usize, ordinary: bool) -> bool {
    if lower[..at]
        .chars()
        .last()
        .is_some_and(char::is_alphanumeric)
    {
        return false;
    }
    let tail: String = lower[end..]
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect();
    let camel = !ordinary
        && text[..end].chars().last().is_some_and(char::is_lowercase)
        && text[end..].chars().next().is_some_and(char::is_uppercase);
    !tail.is_empty()
        && (camel || (tail.chars().count() >= 2 && names::shipped().identifies_after(&tail)))
}

/// "As a Zorblax model", "as an Acme assistant", "I'm Zorblax, an AI assistant", "a model
/// developed by Quuxco": a
/// capitalised name, not a generic word, in phrasing that says it is an AI.
fn ai_self_descriptions(text: &str, lower: &str) -> Vec<Leak> {
    const AS_A: &[&str] = &[
        " model",
        " assistant",
        " ai",
        " language model",
        " llm",
        " chatbot",
    ];
    const NAMED: &[&str] = &[", an ai", ", a language model", ", a large language model"];
    const ANY: &[&str] = &[""];
    let mut leaks = Vec::new();
    for (lead, follows) in [
        ("as a ", AS_A),
        ("as an ", AS_A),
        ("i'm ", NAMED),
        ("i am ", NAMED),
        ("i was trained by ", ANY),
        ("i was developed by ", ANY),
        ("i was created by ", ANY),
        ("model trained by ", ANY),
        ("model developed by ", ANY),
        ("model created by ", ANY),
        ("assistant developed by ", ANY),
        ("assistant created by ", ANY),
    ] {
        for (at, _) in lower.match_indices(lead) {
            if lower[..at]
                .chars()
                .last()
                .is_some_and(char::is_alphanumeric)
            {
                continue;
            }
            let from = at + lead.len();
            if let Some(word) = capitalised_name(&text[from..]) {
                let rest = &lower[from + word.len()..];
                let says_ai = follows.iter().any(|w| {
                    rest.strip_prefix(w)
                        .is_some_and(|r| !r.chars().next().is_some_and(char::is_alphanumeric))
                });
                if says_ai {
                    leaks.push(Leak {
                        term: word.to_string(),
                        kind: LeakKind::SelfIdentification,
                        context: context(lower, at, from + word.len()),
                    });
                }
            }
        }
    }
    leaks
}

/// The word that starts `text` when it reads as a name: capitalised, two characters or
/// more, not a generic word ("AI", "Large", "Sorry").
fn capitalised_name(text: &str) -> Option<&str> {
    let word = text.split(char::is_whitespace).next()?;
    let word = word.trim_end_matches([',', '.', ';', ':']);
    let upper = word.chars().next().is_some_and(|c| c.is_ascii_uppercase());
    let head = word.split(['-', '.', '_']).next().unwrap_or(word);
    (upper && word.chars().count() >= 2 && !names::shipped().is_generic(head)).then_some(word)
}

fn context(lower: &str, at: usize, end: usize) -> String {
    let mut from = at.saturating_sub(40);
    while !lower.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = (end + 40).min(lower.len());
    while !lower.is_char_boundary(to) {
        to -= 1;
    }
    lower[from..to].replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::blind::{Identity, redaction_terms};

    /// A provider's name where it says where an answer ran is a leak, in any case; the
    /// same words in prose are not.
    #[test]
    fn flags_a_provider_after_on_via_served_by_hosted_on() {
        let target = |provider: &str| Identity {
            provider: provider.into(),
            model: "m-1".into(),
            label: "m-1".into(),
            host: None,
        };
        let terms = redaction_terms(&[target("together"), target("groq")], &[], false);
        let list = AuditList::new(&terms, false);
        for leak in [
            "I run on Together.",
            "answers via together today",
            "Served by TOGETHER.",
            "hosted on together, at night",
            "running on together",
            "Together's API",
            "a Together-hosted model",
            "TogetherAI",
            "I am m-1 on groq.",
            "via Groq",
            "GroqCloud",
        ] {
            assert!(!audit(leak, &list).is_empty(), "missed {leak:?}");
        }
        for prose in [
            "Taken together, it works.",
            "We spent it on fireworks and got together on Friday.",
            "counting on together time",
            "Togetherness",
        ] {
            assert!(audit(prose, &list).is_empty(), "flagged {prose:?}");
        }
    }
}
