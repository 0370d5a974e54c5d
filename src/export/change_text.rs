//! A run-against-baseline change in words: what the statistic is called, each side's value,
//! the change with its interval and the verdict. The report model carries the numbers
//! ([`Change`]); the headline sentence (`headline.rs`) and the AGAINST THE BASELINE table
//! (`over_time_tables.rs`) render them here, through the one figure formatter.

use crate::figure::{Figure, Unit, duration, percent};
use crate::report::model::{Change, ChangeVerdict, ClaimStatistic};

/// What a statistic is called in a sentence.
pub(super) fn statistic_name(c: &Change) -> String {
    match c.statistic {
        ClaimStatistic::SuccessDifference => "success".into(),
        ClaimStatistic::LatencyP50Ratio => "conversation p50".into(),
        ClaimStatistic::LatencyP95Ratio => "conversation p95".into(),
        ClaimStatistic::TaskSuccessDifference => "task success".into(),
        ClaimStatistic::JudgeMeanDifference => {
            format!("judge mean ({})", c.judge.as_deref().unwrap_or("?"))
        }
        ClaimStatistic::PairwiseNet => "pairwise net".into(),
    }
}

/// A side's value as the sentence prints it: ms as durations, shares in %, scores as they are.
pub(super) fn value_text(c: &Change, v: Option<f64>) -> String {
    let Some(v) = v else { return "-".into() };
    match c.statistic {
        ClaimStatistic::LatencyP50Ratio | ClaimStatistic::LatencyP95Ratio => duration(v),
        ClaimStatistic::SuccessDifference | ClaimStatistic::TaskSuccessDifference => percent(v),
        _ => Figure::new(v, Unit::Score).to_string(),
    }
}

/// The change and its interval: `+77 % [+61, +93]` for a latency ratio (`+0.4 % [−0.6,
/// +1.3]` when it is small), `−30.0 points [−45.1, −14.9]` for a share, `+0.50 [+0.12,
/// +0.88]` for a score.
pub(super) fn change_text(c: &Change) -> String {
    let Some(e) = c.claim.estimate else {
        return "-".into();
    };
    let unit = match c.statistic {
        ClaimStatistic::LatencyP50Ratio | ClaimStatistic::LatencyP95Ratio => Unit::Change,
        ClaimStatistic::SuccessDifference | ClaimStatistic::TaskSuccessDifference => Unit::Points,
        _ => Unit::Signed,
    };
    Figure::new(e, unit)
        .within(c.claim.interval.map(|i| i.bounds()))
        .to_string()
}

/// The verdict in words, with why a change is not established.
pub(super) fn verdict_text(c: &Change) -> String {
    match c.verdict {
        ChangeVerdict::Regressed => "regressed".into(),
        ChangeVerdict::Improved => "improved".into(),
        ChangeVerdict::NoEstablishedChange => match &c.claim.reason {
            Some(r) => format!("no established change ({r})"),
            None => "no established change".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{ChangeVerdict, Claim, Interval};

    fn change(statistic: ClaimStatistic, estimate: f64, interval: Option<(f64, f64)>) -> Change {
        Change {
            cell: "p / m".into(),
            provider: "p".into(),
            model: "m".into(),
            statistic,
            judge: None,
            selected_n: 30,
            baseline_n: 30,
            claim: Claim {
                a: "run 2".into(),
                b: "run 1".into(),
                n: 30,
                scenarios: 15,
                needed: 10,
                a_value: Some(1310.0),
                b_value: Some(742.0),
                estimate: Some(estimate),
                interval: interval.map(|(lo, hi)| Interval { lo, hi }),
                level: 0.99,
                p_value: Some(0.001),
                adjusted_p: 0.01,
                established: true,
                reason: None,
            },
            verdict: ChangeVerdict::Regressed,
            simulated: false,
        }
    }

    #[test]
    fn changes_read_in_their_units() {
        let p50 = change(ClaimStatistic::LatencyP50Ratio, 1.77, Some((1.61, 1.93)));
        assert_eq!(change_text(&p50), "+77 % [+61, +93]");
        assert_eq!(value_text(&p50, p50.claim.b_value), "742 ms");
        assert_eq!(value_text(&p50, p50.claim.a_value), "1.31 s");
        let tiny = change(
            ClaimStatistic::LatencyP50Ratio,
            0.99996,
            Some((0.994, 1.013)),
        );
        assert_eq!(change_text(&tiny), "+0.0 % [−0.6, +1.3]");
        let share = change(
            ClaimStatistic::TaskSuccessDifference,
            -0.3,
            Some((-0.451, -0.149)),
        );
        assert_eq!(change_text(&share), "−30.0 points [−45.1, −14.9]");
        let none = change(ClaimStatistic::SuccessDifference, 0.0, None);
        assert_eq!(change_text(&none), "+0.0 points");
        let mut judge = change(ClaimStatistic::JudgeMeanDifference, 0.5, Some((0.12, 0.88)));
        judge.judge = Some("helpfulness@1 by mock".into());
        assert_eq!(change_text(&judge), "+0.50 [+0.12, +0.88]");
        assert_eq!(statistic_name(&judge), "judge mean (helpfulness@1 by mock)");
    }
}
