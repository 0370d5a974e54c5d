//! `Retry-After`: delay-seconds or an HTTP date (RFC 9110 §10.2.3), as servers send either.
//! Dates are read by `httpdate` in all three forms RFC 9110 §5.6.7 has a recipient accept:
//! the IMF-fixdate and the obsolete RFC 850 and asctime forms.

use std::time::{Duration, SystemTime};

/// How long to wait, given the header value and the current time; `None` when unreadable.
/// A value too large for a [`Duration`] (`1e20`) is read as the longest one: the retry
/// policy caps every wait at `max_wait_ms` anyway, and a provider's header must never
/// reach a panic (`Duration::from_secs_f64` panics on overflow). A date in the past is no
/// wait at all.
pub fn parse(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        if !(secs.is_finite() && secs >= 0.0) {
            return None;
        }
        return Some(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use super::*;

    /// 2015-10-21 07:27:50 UTC.
    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_445_412_470)
    }

    #[test]
    fn seconds() {
        assert_eq!(parse("2", now()), Some(Duration::from_secs(2)));
        assert_eq!(parse(" 0.5 ", now()), Some(Duration::from_millis(500)));
        assert_eq!(parse("-3", now()), None);
        assert_eq!(parse("soon", now()), None);
    }

    #[test]
    fn the_three_date_forms_of_rfc_9110() {
        let ten = Some(Duration::from_secs(10));
        // IMF-fixdate, the form a sender must use.
        assert_eq!(parse("Wed, 21 Oct 2015 07:28:00 GMT", now()), ten);
        // The obsolete RFC 850 form (two-digit year) and asctime's, which a recipient
        // must still accept.
        assert_eq!(parse("Wednesday, 21-Oct-15 07:28:00 GMT", now()), ten);
        assert_eq!(parse("Wed Oct 21 07:28:00 2015", now()), ten);
        assert_eq!(parse(" Wed Oct 21 07:28:00 2015 ", now()), ten);
        // A date already past is no wait.
        assert_eq!(
            parse("Wed, 21 Oct 2015 07:00:00 GMT", now()),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse("Wednesday, 21-Oct-15 07:00:00 GMT", now()),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn malformed_dates_are_unreadable() {
        assert_eq!(parse("Wed, 21 Foo 2015 07:28:00 GMT", now()), None);
        assert_eq!(parse("Wed, 21 Oct 2015 07:28:00 UTC", now()), None);
        assert_eq!(parse("Wed, 32 Oct 2015 07:28:00 GMT", now()), None);
        assert_eq!(parse("Wednesday, 21-Oct-2015 07:28:00 GMT", now()), None);
        assert_eq!(parse("Wed Oct 21 07:28:00", now()), None);
        assert_eq!(parse("2015-10-21T07:28:00Z", now()), None);
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
        assert_eq!(parse("Wed, 21 Oct 2015 07:28:00 GMT\u{0}", now), None);
        assert_eq!(parse("Wed, 21 Oct 2015 07:28:00 GMTé", now), None);
    }
}
