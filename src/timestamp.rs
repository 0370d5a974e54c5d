//! RFC 3339 timestamps read from user files (recorded sessions), to milliseconds since the
//! Unix epoch. Only what RFC 3339 allows: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`
//! (`t`, `z` and a space for `T` accepted, as the RFC notes).

/// The (year, month, day) of a count of days since 1970-01-01 (Hinnant's algorithm; the
/// inverse of the days count `parse_rfc3339_ms` uses).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Milliseconds since the epoch as a UTC clock reading for a chart's axis: `14:05`, or
/// `12-04 14:05` with the date.
pub fn utc_minutes(ms: i64, with_date: bool) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let clock = format!("{:02}:{:02}", rem / 3600, rem / 60 % 60);
    if with_date {
        let (_, m, d) = civil_from_days(days);
        format!("{m:02}-{d:02} {clock}")
    } else {
        clock
    }
}

/// Milliseconds since 1970-01-01T00:00:00Z, or `None` when the text is not RFC 3339.
pub fn parse_rfc3339_ms(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = b.get(from..from + len)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(part.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let at = |i: usize, c: &[u8]| b.get(i).is_some_and(|x| c.contains(x));
    if !(at(4, b"-") && at(7, b"-") && at(10, b"Tt ") && at(13, b":") && at(16, b":")) {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut i = 19;
    let mut millis = 0;
    if at(i, b".") {
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        for k in 0..3 {
            millis = millis * 10 + if k < digits { num(i + 1 + k, 1)? } else { 0 };
        }
        i += 1 + digits;
    }
    let offset_min = match b.get(i) {
        Some(b'Z' | b'z') if b.len() == i + 1 => 0,
        Some(sign @ (b'+' | b'-')) if b.len() == i + 6 && at(i + 3, b":") => {
            let (h, m) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let minutes = h * 60 + m;
            if *sign == b'-' { -minutes } else { minutes }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second.min(59) - offset_min * 60;
    Some(secs * 1000 + millis)
}

/// Days in a month (1–12) of a proleptic Gregorian year: the one calendar rule, for
/// every date turnbench reads (RFC 3339 times here, JSON Schema `date` formats).
pub fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a proleptic Gregorian date; Howard Hinnant's algorithm. Shared
/// with the HTTP-date reader of `Retry-After`.
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_readings_invert_the_parse() {
        let ms = parse_rfc3339_ms("2024-02-29T12:34:56.789Z").unwrap();
        assert_eq!(utc_minutes(ms, false), "12:34");
        assert_eq!(utc_minutes(ms, true), "02-29 12:34");
        assert_eq!(utc_minutes(0, true), "01-01 00:00");
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_423), (2025, 12, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn reads_utc_offsets_and_fractions() {
        // Reference values: python3 -c "import datetime as d;
        //   print(int(d.datetime.fromisoformat('2024-02-29T12:34:56.789+00:00').timestamp()*1000))"
        assert_eq!(parse_rfc3339_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339_ms("2024-02-29T12:34:56.789Z"),
            Some(1_709_210_096_789)
        );
        assert_eq!(
            parse_rfc3339_ms("2024-02-29T14:34:56.789123+02:00"),
            Some(1_709_210_096_789)
        );
        assert_eq!(
            parse_rfc3339_ms("2024-02-29t07:04:56.7-05:30"),
            Some(1_709_210_096_700)
        );
        assert_eq!(
            parse_rfc3339_ms("1969-12-31T23:59:59Z"),
            Some(-1000),
            "before the epoch"
        );
    }

    #[test]
    fn refuses_what_is_not_rfc3339() {
        for bad in [
            "",
            "2024-02-30T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00.Z",
            "2024-01-01T00:00:00+0100",
            "2024-01-01",
            "1700000000",
            "2024-01-01T00:00:00Zjunk",
            "２024-01-01T00:00:00Z",
        ] {
            assert_eq!(parse_rfc3339_ms(bad), None, "{bad}");
        }
    }
}
