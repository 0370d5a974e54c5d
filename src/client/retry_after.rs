//! `Retry-After`: delay-seconds or an HTTP date (RFC 9110), as servers send either.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::timestamp::days_from_civil;

/// How long to wait, given the header value and the current time; `None` when unreadable.
/// A value too large for a [`Duration`] (`1e20`) is read as the longest one: the retry
/// policy caps every wait at `max_wait_ms` anyway, and a provider's header must never
/// reach a panic (`Duration::from_secs_f64` panics on overflow).
pub fn parse(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        if !(secs.is_finite() && secs >= 0.0) {
            return None;
        }
        return Some(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX));
    }
    let at = http_date_secs(value)?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs() as i64;
    Some(Duration::from_secs(at.saturating_sub(now).max(0) as u64))
}

/// Seconds since the epoch of an IMF-fixdate such as `Wed, 21 Oct 2015 07:28:00 GMT`.
fn http_date_secs(s: &str) -> Option<i64> {
    let rest = s.split_once(", ")?.1;
    let parts: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m == month)? as i64 + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, sec] = hms.as_slice() else {
        return None;
    };
    // Out-of-range fields are unreadable, not arithmetic overflows.
    let in_range = (1..=31).contains(&day)
        && (1..=9999).contains(&year)
        && (0..24).contains(h)
        && (0..60).contains(m)
        && (0..=60).contains(sec);
    if !in_range {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(1_445_412_470); // 2015-10-21 07:27:50 UTC
        assert_eq!(parse("2", now), Some(Duration::from_secs(2)));
        assert_eq!(parse(" 0.5 ", now), Some(Duration::from_millis(500)));
        assert_eq!(
            parse("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse("Wed, 21 Oct 2015 07:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse("-3", now), None);
        assert_eq!(parse("soon", now), None);
        assert_eq!(parse("Wed, 21 Foo 2015 07:28:00 GMT", now), None);
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 2, 29), 11_016);
    }

    #[test]
    fn huge_or_odd_values_never_panic() {
        let now = UNIX_EPOCH;
        assert_eq!(parse("1e20", now), Some(Duration::MAX));
        assert_eq!(parse("1e308", now), Some(Duration::MAX));
        assert_eq!(parse("NaN", now), None);
        assert_eq!(parse("inf", now), None);
        assert_eq!(parse("-0", now), Some(Duration::ZERO));
        assert_eq!(parse("Wed, 21 Oct 99999999999 07:28:00 GMT", now), None);
        assert_eq!(parse("Wed, 21 Oct 2015 99999999999:28:00 GMT", now), None);
    }
}
