//! Figures as every output prints them, formatted here once: a value in its unit, its
//! interval in brackets after it (`86.7 % [70.3, 94.7]`), its n in parentheses
//! (`(n 12)`). The report's tables and sentences, the replay tables, the runs-over-time
//! tables and `turnbench check`'s summary all format through this module, so one figure
//! reads the same in the terminal, Markdown, HTML and every summary.
//!
//! The rules, one per unit:
//! - a share prints in percent with one decimal, whole at the ends of the scale: `97.8 %`,
//!   `100 %`, `0 %`; its interval's ends follow the same rule and carry no unit;
//! - milliseconds print as seconds with two decimals (`8.26 s`), whole (`812 ms`), or as a
//!   person reads a duration (seconds from 1 s up, else milliseconds);
//! - a score or mean has two decimals (`4.20`);
//! - a difference is signed, with a true minus (`−`) and never a `−0`: points of a share
//!   with one decimal (`+25.0 points`), a change in percent whole or, when it and its
//!   interval stay within ±10, with one decimal (`+77 %`, `+0.4 %`), a score with two;
//! - US dollars with five decimals below a cent, else three (`$0.00042`, `$1.250`).
//!
//! Pure text from numbers: nothing here knows the report, so every layer can use it.

use std::fmt;

use crate::stats::Interval;

/// What a figure's number measures, and so how it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A share (0–1), printed in percent: `86.7 %`.
    Percent,
    /// Milliseconds printed as seconds with two decimals: `8.26 s`.
    Seconds,
    /// Milliseconds, whole: `812 ms`.
    Millis,
    /// Milliseconds as a person reads them: [`Unit::Seconds`] from 1 s up, else
    /// [`Unit::Millis`] (the interval follows the value's unit).
    Duration,
    /// A score, mean or coefficient on its own scale, two decimals: `4.20`.
    Score,
    /// A signed number on its own scale (a difference of scores, a correlation, a net
    /// verdict), two decimals: `+0.40`.
    Signed,
    /// A signed difference of shares (0–1) in percentage points: `+25.0 points`.
    Points,
    /// A signed relative change (a ratio − 1), in percent: `+77 %`, `+0.4 %`.
    Change,
    /// Output tokens per second, whole: `81 t/s`.
    TokensPerSecond,
    /// US dollars: `$1.250`.
    Usd,
    /// A slope of milliseconds on prompt tokens, signed, one decimal: `+50.0 ms per 1k
    /// prompt tokens`.
    MsPer1k,
}

/// One figure: a value in its unit, with the interval and n it carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    pub value: f64,
    pub unit: Unit,
    /// (lo, hi) in the value's own scale (a share for [`Unit::Percent`], ms for durations,
    /// a ratio for [`Unit::Change`]).
    pub interval: Option<Interval>,
    pub n: Option<u64>,
    /// Print the unit after the value; `false` in a column whose header names it.
    pub with_unit: bool,
}

impl Figure {
    pub fn new(value: f64, unit: Unit) -> Figure {
        Figure {
            value,
            unit,
            interval: None,
            n: None,
            with_unit: true,
        }
    }

    /// A share in percent.
    pub fn percent(share: f64) -> Figure {
        Figure::new(share, Unit::Percent)
    }

    /// With its interval, when it has one.
    pub fn within(mut self, interval: Option<Interval>) -> Figure {
        self.interval = interval;
        self
    }

    /// With its n.
    pub fn n(mut self, n: impl TryInto<u64>) -> Figure {
        self.n = n.try_into().ok();
        self
    }

    /// Without the unit: for a column whose header names it.
    pub fn bare(mut self) -> Figure {
        self.with_unit = false;
        self
    }

    /// The number alone, in the unit `shown` (a duration's value chooses it).
    fn number(&self, x: f64, shown: Unit) -> String {
        match shown {
            Unit::Percent => ends_whole(x * 100.0),
            Unit::Seconds => format!("{:.2}", x / 1000.0),
            Unit::Millis | Unit::TokensPerSecond => format!("{x:.0}"),
            Unit::Score => format!("{x:.2}"),
            Unit::Signed => signed(x, 2),
            Unit::Points => signed(x * 100.0, 1),
            Unit::MsPer1k => signed(x, 1),
            Unit::Change => signed((x - 1.0) * 100.0, self.change_digits()),
            Unit::Usd if x < 0.01 => format!("${x:.5}"),
            Unit::Usd => format!("${x:.3}"),
            Unit::Duration => unreachable!("a duration is shown in seconds or ms"),
        }
    }

    /// A change in whole percent, or to a tenth when it and its interval all stay within
    /// ±10 %.
    fn change_digits(&self) -> usize {
        let within = |r: f64| ((r - 1.0) * 100.0).abs() < 10.0;
        let small =
            within(self.value) && self.interval.is_none_or(|i| within(i.lo) && within(i.hi));
        usize::from(small)
    }

    /// The unit the figure is shown in: a duration's value chooses seconds or ms.
    fn shown(&self) -> Unit {
        match self.unit {
            Unit::Duration if self.value.abs() >= 1000.0 => Unit::Seconds,
            Unit::Duration => Unit::Millis,
            u => u,
        }
    }
}

fn suffix(u: Unit) -> &'static str {
    match u {
        Unit::Percent | Unit::Change => " %",
        Unit::Seconds => " s",
        Unit::Millis => " ms",
        Unit::Points => " points",
        Unit::TokensPerSecond => " t/s",
        Unit::MsPer1k => " ms per 1k prompt tokens",
        Unit::Duration | Unit::Score | Unit::Signed | Unit::Usd => "",
    }
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self.shown();
        f.write_str(&self.number(self.value, shown))?;
        if self.with_unit {
            f.write_str(suffix(shown))?;
        }
        if let Some(Interval { lo, hi }) = self.interval {
            write!(
                f,
                " [{}, {}]",
                self.number(lo, shown),
                self.number(hi, shown)
            )?;
        }
        if let Some(n) = self.n {
            write!(f, " (n {n})")?;
        }
        Ok(())
    }
}

/// One decimal, whole at the ends of a 0–100 scale: `97.8`, `100`, `0`.
fn ends_whole(p: f64) -> String {
    if (0.05..99.95).contains(&p) {
        format!("{p:.1}")
    } else {
        format!("{p:.0}")
    }
}

/// Signed with `digits` decimals, a true minus, and no `−0`: a change that rounds to
/// nothing prints as `+0`.
pub fn signed(x: f64, digits: usize) -> String {
    let t = format!("{x:+.digits$}");
    let zero = t
        .trim_start_matches(['+', '-'])
        .chars()
        .all(|c| c == '0' || c == '.');
    if zero {
        t.replacen('-', "+", 1)
    } else {
        t.replace('-', "−")
    }
}

/// 1000 as `1,000`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A share in percent: `86.7 %`.
pub fn percent(share: f64) -> String {
    Figure::percent(share).to_string()
}

/// A share in percent with its interval: `86.7 % [70.3, 94.7]`; `-` without a value.
pub fn rate(share: Option<f64>, interval: Option<Interval>) -> String {
    share.map_or("-".into(), |v| {
        Figure::percent(v).within(interval).to_string()
    })
}

/// Milliseconds as a person reads them: `8.26 s`, `812 ms`.
pub fn duration(ms: f64) -> String {
    Figure::new(ms, Unit::Duration).to_string()
}

/// US dollars, `-` without a price.
pub fn usd(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| Figure::new(v, Unit::Usd).to_string())
}

/// A p-value as a reader takes it: two significant digits, `< 0.001` below.
pub fn p_value(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else if p < 0.01 {
        format!("{p:.3}")
    } else {
        format!("{p:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(lo: f64, hi: f64) -> Interval {
        Interval { lo, hi }
    }

    #[test]
    fn a_rate_reads_the_same_everywhere() {
        assert_eq!(
            rate(Some(0.867), Some(iv(0.703, 0.947))),
            "86.7 % [70.3, 94.7]"
        );
        assert_eq!(rate(Some(1.0), Some(iv(0.758, 1.0))), "100 % [75.8, 100]");
        assert_eq!(rate(Some(0.9997), None), "100 %");
        assert_eq!(rate(Some(0.0), None), "0 %");
        assert_eq!(rate(None, None), "-");
        assert_eq!(percent(0.9777), "97.8 %");
        assert_eq!(
            Figure::percent(0.917)
                .within(Some(iv(0.646, 0.985)))
                .n(12)
                .to_string(),
            "91.7 % [64.6, 98.5] (n 12)"
        );
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(8260.0), "8.26 s");
        assert_eq!(duration(812.4), "812 ms");
        let p50 = Figure::new(8260.0, Unit::Seconds).within(Some(iv(7900.0, 8700.0)));
        assert_eq!(p50.to_string(), "8.26 s [7.90, 8.70]");
        assert_eq!(p50.bare().to_string(), "8.26 [7.90, 8.70]");
        assert_eq!(
            Figure::new(8260.0, Unit::Duration)
                .within(Some(iv(7900.0, 8700.0)))
                .to_string(),
            "8.26 s [7.90, 8.70]"
        );
        assert_eq!(
            Figure::new(9340.0, Unit::Seconds).bare().n(12).to_string(),
            "9.34 (n 12)"
        );
    }

    #[test]
    fn differences_are_signed_with_a_true_minus_and_no_minus_zero() {
        let change = |r, i| Figure::new(r, Unit::Change).within(i).to_string();
        assert_eq!(change(1.77, Some(iv(1.61, 1.93))), "+77 % [+61, +93]");
        assert_eq!(
            change(0.99996, Some(iv(0.994, 1.013))),
            "+0.0 % [−0.6, +1.3]"
        );
        assert_eq!(
            Figure::new(-0.3, Unit::Points)
                .within(Some(iv(-0.451, -0.149)))
                .to_string(),
            "−30.0 points [−45.1, −14.9]"
        );
        assert_eq!(
            Figure::new(0.5, Unit::Signed)
                .within(Some(iv(0.12, 0.88)))
                .to_string(),
            "+0.50 [+0.12, +0.88]"
        );
        assert_eq!(signed(-0.0001, 1), "+0.0");
    }

    #[test]
    fn money_scores_and_p_values() {
        assert_eq!(usd(Some(0.00042)), "$0.00042");
        assert_eq!(usd(Some(1.25)), "$1.250");
        assert_eq!(usd(None), "-");
        assert_eq!(Figure::new(4.2, Unit::Score).to_string(), "4.20");
        assert_eq!(
            Figure::new(81.4, Unit::TokensPerSecond).to_string(),
            "81 t/s"
        );
        assert_eq!(p_value(0.0004), "< 0.001");
        assert_eq!(p_value(0.004), "0.004");
        assert_eq!(p_value(0.5), "0.50");
    }
}
