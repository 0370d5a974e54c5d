//! The formats a schema may assert. Dates and times follow RFC 3339 (`full-date`,
//! `date-time`, `full-time`) with real calendar checks; `email` is a pragmatic
//! `local@domain`; addresses use `std::net`; `uri` is an absolute RFC 3986 URI, checked for
//! its scheme, its characters and its authority. Only strings are checked: a format says
//! nothing about a number.

use std::net::{Ipv4Addr, Ipv6Addr};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Date,
    DateTime,
    Time,
    Email,
    Uuid,
    Ipv4,
    Ipv6,
    Hostname,
    Uri,
}

const ALL: [Format; 9] = [
    Format::Date,
    Format::DateTime,
    Format::Time,
    Format::Email,
    Format::Uuid,
    Format::Ipv4,
    Format::Ipv6,
    Format::Hostname,
    Format::Uri,
];

/// The supported format names, as written in a schema.
pub const NAMES: [&str; 9] = [
    "date",
    "date-time",
    "time",
    "email",
    "uuid",
    "ipv4",
    "ipv6",
    "hostname",
    "uri",
];

impl Format {
    pub(super) fn parse(name: &str) -> Option<Format> {
        ALL.into_iter().find(|f| f.name() == name)
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Format::Date => "date",
            Format::DateTime => "date-time",
            Format::Time => "time",
            Format::Email => "email",
            Format::Uuid => "uuid",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
            Format::Hostname => "hostname",
            Format::Uri => "uri",
        }
    }

    pub(super) fn accepts(self, text: &str) -> bool {
        match self {
            Format::Date => is_date(text),
            Format::DateTime => is_date_time(text),
            Format::Time => is_time(text),
            Format::Email => is_email(text),
            Format::Uuid => is_uuid(text),
            Format::Ipv4 => text.parse::<Ipv4Addr>().is_ok(),
            Format::Ipv6 => text.parse::<Ipv6Addr>().is_ok(),
            Format::Hostname => is_hostname(text),
            Format::Uri => is_uri(text),
        }
    }
}

/// The value of ASCII digits, `None` if any byte is not one.
fn digits(bytes: &[u8]) -> Option<u32> {
    bytes.iter().try_fold(0u32, |n, b| {
        b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
    })
}

/// RFC 3339 `full-date`: `YYYY-MM-DD`, a day that exists.
fn is_date(text: &str) -> bool {
    let [y @ .., b'-', m0, m1, b'-', d0, d1] = text.as_bytes() else {
        return false;
    };
    let (Some(year), Some(month), Some(day)) = (
        (y.len() == 4).then(|| digits(y)).flatten(),
        digits(&[*m0, *m1]),
        digits(&[*d0, *d1]),
    ) else {
        return false;
    };
    (1..=12).contains(&month)
        && (1..=crate::timestamp::days_in_month(year.into(), month.into()))
            .contains(&i64::from(day))
}

/// RFC 3339 `date-time`: a `full-date`, `T` (or `t`), a `full-time`.
fn is_date_time(text: &str) -> bool {
    match (text.get(..10), text.get(10..11), text.get(11..)) {
        (Some(date), Some("T" | "t"), Some(time)) => is_date(date) && is_time(time),
        _ => false,
    }
}

/// RFC 3339 `full-time`: `HH:MM:SS`, optional fraction, then `Z` or `±HH:MM`. A leap
/// second (`:60`) only where it is 23:59 in UTC.
fn is_time(text: &str) -> bool {
    let [h0, h1, b':', m0, m1, b':', s0, s1, rest @ ..] = text.as_bytes() else {
        return false;
    };
    let (Some(hour), Some(minute), Some(second)) = (
        digits(&[*h0, *h1]),
        digits(&[*m0, *m1]),
        digits(&[*s0, *s1]),
    ) else {
        return false;
    };
    let rest = match rest {
        [b'.', fraction @ ..] => {
            let end = fraction
                .iter()
                .position(|b| !b.is_ascii_digit())
                .unwrap_or(fraction.len());
            if end == 0 {
                return false;
            }
            fraction.get(end..).unwrap_or_default()
        }
        _ => rest,
    };
    let Some(offset) = offset_minutes(rest) else {
        return false;
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let utc = (i64::from(hour * 60 + minute) - offset).rem_euclid(24 * 60);
    second < 60 || utc == 23 * 60 + 59
}

/// A `time-offset` in minutes east of UTC: `Z`, `z` or `±HH:MM`.
fn offset_minutes(text: &[u8]) -> Option<i64> {
    match text {
        [b'Z' | b'z'] => Some(0),
        [sign @ (b'+' | b'-'), h0, h1, b':', m0, m1] => {
            let hours = digits(&[*h0, *h1]).filter(|h| *h <= 23)?;
            let minutes = digits(&[*m0, *m1]).filter(|m| *m <= 59)?;
            let total = i64::from(hours * 60 + minutes);
            Some(if *sign == b'-' { -total } else { total })
        }
        _ => None,
    }
}

/// 8-4-4-4-12 hexadecimal digits, either case.
fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, len)| g.len() == len && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// An RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens, 1–63
/// characters each, at most 253 in all (a final dot allowed).
fn is_hostname(text: &str) -> bool {
    let name = text.strip_suffix('.').unwrap_or(text);
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// A pragmatic `local@domain`: a dot-atom local part (RFC 5322 `atext` and inner single
/// dots, at most 64 characters) and a host name or an address literal (`[192.0.2.1]`,
/// `[IPv6:2001:db8::1]`). Quoted local parts and non-ASCII addresses are refused.
fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else {
        return false;
    };
    let atext = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~".contains(&b);
    let local_ok = (1..=64).contains(&local.len())
        && local
            .split('.')
            .all(|atom| !atom.is_empty() && atom.bytes().all(atext));
    let domain_ok = match domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        Some(literal) => match literal.strip_prefix("IPv6:") {
            Some(v6) => v6.parse::<Ipv6Addr>().is_ok(),
            None => literal.parse::<Ipv4Addr>().is_ok(),
        },
        None => is_hostname(domain) && !domain.ends_with('.'),
    };
    local_ok && domain_ok
}

/// An absolute URI (RFC 3986): a scheme, ":", then a non-empty rest of URI characters
/// (percent-escapes well formed; `[` `]` only around an IPv6 host), and an authority, when
/// there is one, with a numeric port.
fn is_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let scheme_ok = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    if !scheme_ok || rest.is_empty() || rest.matches('#').count() > 1 {
        return false;
    }
    let allowed = |b: u8| b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&b);
    if !rest.bytes().all(allowed) || !percent_escapes_ok(rest) {
        return false;
    }
    match rest.strip_prefix("//") {
        Some(after) => {
            let end = after.find(['/', '?', '#']).unwrap_or(after.len());
            let (authority, tail) = after.split_at(end);
            is_authority(authority) && !tail.contains(['[', ']'])
        }
        None => !rest.contains(['[', ']']),
    }
}

fn percent_escapes_ok(text: &str) -> bool {
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex = (bytes.next(), bytes.next());
            if !matches!(hex, (Some(x), Some(y)) if x.is_ascii_hexdigit() && y.is_ascii_hexdigit())
            {
                return false;
            }
        }
    }
    true
}

/// `[userinfo@]host[:port]`: the host a name (or empty) or `[IPv6]`, the port digits.
fn is_authority(authority: &str) -> bool {
    let host_port = match authority.rsplit_once('@') {
        Some((userinfo, host_port)) => {
            if userinfo.contains(['[', ']']) {
                return false;
            }
            host_port
        }
        None => authority,
    };
    let (host, port) = match host_port.strip_prefix('[') {
        Some(literal) => match literal.split_once(']') {
            Some((ip, after)) => {
                if !ip.starts_with(['v', 'V']) && ip.parse::<Ipv6Addr>().is_err() {
                    return false;
                }
                match after {
                    "" => ("", None),
                    _ => match after.strip_prefix(':') {
                        Some(port) => ("", Some(port)),
                        None => return false,
                    },
                }
            }
            None => return false,
        },
        None => match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        },
    };
    !host.contains(['[', ']', ':']) && port.is_none_or(|p| p.bytes().all(|b| b.is_ascii_digit()))
}
