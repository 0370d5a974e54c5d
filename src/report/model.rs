//! What a report holds: every figure with its n, every interval with its level, every
//! simulated figure marked. Exporters format this and compute nothing; the JSON format
//! writes it as it is (schema: `docs/report.schema.json`). Times are milliseconds.
//!
//! Definitions of every figure: `docs/metrics.md`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::figure::{Figure, Unit};

/// A 95 % interval (or the level in `Meta::bootstrap`): the statistics' own type.
pub use crate::stats::Interval;

/// The version of the JSON shape; bumped when a field changes meaning or goes.
pub const SCHEMA: &str = "turnbench-report/2";

/// The JSON format writes it as it is (`crate::export::json`), the per-conversation rows
/// last, one a line.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub meta: Meta,
    /// The decision first: what each headline states, with its sentence, its claims and
    /// whether it is established.
    pub headlines: Vec<Headline>,
    /// One per provider × model label, ordered by model label, then provider.
    pub cells: Vec<Cell>,
    /// The figure the tables order each label's cells by (`--sort`).
    pub sort: SortBy,
    /// Indices into `cells`: grouped by model label, each label's cells ordered by `sort`.
    pub order: Vec<usize>,
    /// Same order as `cells`: each cell's conversation-latency percentiles against the
    /// fastest provider of its label.
    pub vs_fastest: Vec<VsFastest>,
    /// Rule-based checks: pass rates by tag per cell.
    pub checks: ChecksSection,
    /// CONSTRAINTS ACROSS TURNS: per provider × model label × check tag, the pass rate at
    /// each turn, survival, forgetting and recovery (`crate::report::survival`).
    pub constraint_survival: Vec<super::survival::ConstraintSurvival>,
    /// CONSISTENCY ACROSS REPEATS: per provider × model label, identical answers and
    /// agreeing check verdicts of repeats sent the same request, and the spread of their
    /// task success (`crate::report::consistency`).
    pub consistency: Vec<super::consistency::Consistency>,
    /// One per (rubric, judge, simulated or real) with current judgments.
    pub judges: Vec<JudgeSection>,
    /// How far the judges can be trusted: agreement between replicates of one judge and
    /// between the judges of a panel, per criterion (empty without replicates or a panel).
    pub agreement: Vec<AgreementSection>,
    /// Pairwise comparisons against a baseline (`turnbench judge --pairwise`), one per
    /// rubric × judge; empty without them.
    pub pairwise: Vec<PairwiseSection>,
    /// Each judge's reference-anchor check (`turnbench judge --anchors`), one per rubric ×
    /// judge with anchor judgments.
    pub anchors: Vec<AnchorSection>,
    /// Rank agreement between judge criteria and the checks that test the same thing.
    pub check_agreement: Vec<CheckAgreement>,
    /// Each judge's agreement with the human labels (`turnbench label import`), one per
    /// judge × rubric: weighted Cohen's κ per criterion and for `completed`. `None` when
    /// the selection has no human labels (never an empty or zero figure).
    pub human_agreement: Option<Vec<HumanAgreementSection>>,
    /// One card per judge × rubric whose scores or pairwise verdicts the report shows
    /// (`crate::report::judge_card`).
    pub judge_card: Vec<JudgeCard>,
    /// What the report could not show and what to run to get it.
    pub notes: Vec<String>,
    /// The efficient frontier of each model label: the cells no other cell of the label
    /// beats on both quality and conversation p50 by an established margin
    /// (`crate::report::frontier`). Empty when no label has two cells with both figures.
    pub frontier: Vec<FrontierLabel>,
    /// CONTEXT OVERFLOW: the cells whose conversations outgrew the server's context window
    /// (`context_overflow`), at which turn, and the model labels that overflow at one
    /// provider but not at another; `None` when no conversation overflowed
    /// (`crate::report::overflow`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_overflow: Option<ContextOverflowSection>,
    /// Replayed agent sessions (`turnbench replay`), when the selection holds any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<super::replay::ReplaySection>,
    /// Each cell run by run: with `--trend`, or whenever the selection spans several runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trend: Option<Trend>,
    /// The selected run(s) against a baseline (`--baseline-run`, `--baseline-window`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// TTFT BY TURN: per cell, TTFT p50 at each turn index and the slope of TTFT on prompt
    /// tokens (`crate::report::ttft_by_turn`).
    pub ttft_by_turn: Vec<TtftByTurn>,
    /// GOODPUT (`--slo`): per cell, the turns and conversations that met every bound;
    /// absent without `--slo`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub goodput: Vec<Goodput>,
    /// Per-conversation rows, built one at a time as they are written; present only when
    /// asked for. The JSON format writes them itself, last, one compact row a line
    /// (`crate::export::json`).
    #[serde(skip)]
    pub conversations: Option<super::rows::ConversationRows>,
    /// One row per scenario × cell (`crate::report::matrix`).
    pub matrix: Vec<super::matrix::MatrixRow>,
    /// Conversations shown in full (`--conversations`): the HTML drill-down views. Not in
    /// the JSON (`turnbench show --format json` writes one).
    #[serde(skip)]
    pub drilldown: super::drilldown::Drilldown,
}

impl Report {
    /// Whether any figure in the report comes from a simulated provider or judge.
    pub fn any_simulated(&self) -> bool {
        self.meta.simulated_providers
            || self.judges.iter().any(|j| j.simulated)
            || self.pairwise.iter().any(|p| p.simulated)
    }

    /// Where the cell `provider / label` stands in `order` (the cell tables' order,
    /// `--sort`); after every shown cell when it is not one.
    pub fn rank_of(&self, provider: &str, label: &str) -> usize {
        self.order
            .iter()
            .position(|&i| {
                self.cells
                    .get(i)
                    .is_some_and(|c| c.provider == provider && c.model == label)
            })
            .unwrap_or(usize::MAX)
    }

    /// The judge whose mean score stands for quality where one figure must (the quality
    /// chart, the frontier): the first real judge, else the first.
    pub fn primary_judge(&self) -> Option<(usize, &JudgeSection)> {
        primary_judge(&self.judges)
    }

    /// GOODPUT of a cell (`provider`, model `label`), under `--slo`.
    pub fn goodput_of(&self, provider: &str, label: &str) -> Option<&Goodput> {
        self.goodput
            .iter()
            .find(|g| g.provider == provider && g.label == label)
    }

    /// TTFT BY TURN of a cell (`provider`, model `label`).
    pub fn ttft_by_turn_of(&self, provider: &str, label: &str) -> Option<&TtftByTurn> {
        self.ttft_by_turn
            .iter()
            .find(|x| x.provider == provider && x.label == label)
    }

    /// A cell's place on its label's efficient frontier; `None` when the label has none or
    /// the cell is not in it.
    pub fn frontier_place(&self, provider: &str, model: &str) -> Option<FrontierPlace> {
        let f = self.frontier.iter().find(|f| f.model == model)?;
        match f.cells.iter().find(|c| c.provider == provider) {
            Some(c) => Some(FrontierPlace::On(c.why)),
            None => f
                .off
                .iter()
                .any(|o| o.provider == provider)
                .then_some(FrontierPlace::Off),
        }
    }
}

/// [`Report::primary_judge`] over the judge sections, before the report is whole.
pub fn primary_judge(judges: &[JudgeSection]) -> Option<(usize, &JudgeSection)> {
    judges
        .iter()
        .enumerate()
        .find(|(_, s)| !s.simulated)
        .or_else(|| judges.iter().enumerate().next())
}

#[derive(Debug, Clone, Serialize)]
pub struct Meta {
    pub store: String,
    pub generated_at: String,
    pub tool_version: String,
    pub runs: Vec<RunCard>,
    pub filters: Filters,
    /// Distinct scenarios among the selected conversations.
    pub scenarios: usize,
    pub providers: usize,
    pub models: usize,
    /// Current check definitions (over every scenario with a checks file).
    pub check_definitions: usize,
    /// Turns slower than this (E2E, ms) are not usable; `None`: no SLA.
    pub sla_ms: Option<f64>,
    pub bootstrap: BootstrapInfo,
    pub percentiles: &'static str,
    /// Some cells were served by the built-in mock provider.
    pub simulated_providers: bool,
}

/// A run as its card shows it: the store's row, as it is.
pub use crate::store::facts::RunFact as RunCard;

#[derive(Debug, Clone, Default, Serialize)]
pub struct Filters {
    pub run: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub scenario: Option<String>,
    pub rubric: Option<String>,
    pub judge: Option<String>,
    /// `--collector`: only runs collected by these.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub collector: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BootstrapInfo {
    pub resamples: usize,
    pub seed: u64,
    pub level: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HeadlineKind {
    /// The fastest provider of a model by conversation p50.
    LatencyP50,
    /// The fastest provider of a model by conversation p95.
    LatencyP95,
    Reliability,
    QualityChecks,
    QualityJudge,
    /// The provider of a model label that least lets go of a requirement it met:
    /// constraint retention across turns (CONSTRAINTS ACROSS TURNS).
    ConstraintRetention,
    /// A model label whose conversations outgrew the context at some providers and not at
    /// others (CONTEXT OVERFLOW): a finding about the providers' windows, not a claim
    /// tested on samples (an overflow is decided by the prompt's size, not by chance).
    ContextOverflow,
    /// A model label's efficient frontier: the cells a chooser picks from (no other cell
    /// is established both faster and better).
    Frontier,
    /// The provider of a model label whose turns most often meet every `--slo` bound.
    Goodput,
    /// The provider of a model label whose TTFT grows least with the prompt (TTFT BY
    /// TURN's slope on prompt tokens).
    TtftSlope,
    /// Something a reader must know: truncation, reasoning that used the budget, filters.
    Flag,
    /// A change against the baseline run(s): a regression or improvement the data
    /// establish, or that none is established.
    Change,
}

/// A headline: what it states ([`Said`]), the claims behind it, and its sentence, written
/// from those when the report is built (`crate::report::sentences`); every format prints
/// that sentence.
#[derive(Debug, Clone, Serialize)]
pub struct Headline {
    pub kind: HeadlineKind,
    /// The model label a comparison is within, when it is.
    pub model: Option<String>,
    /// The sentence every format prints.
    pub text: String,
    /// What the sentence states, with `family` where there is one (the JSON states it
    /// through `text` and `family`).
    #[serde(skip)]
    pub said: Said,
    /// `Some(true)`: the data establish the headline's lead; `Some(false)`: they do not.
    pub established: Option<bool>,
    pub simulated: bool,
    /// The comparisons behind the sentence, adjusted together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family: Option<Family>,
}

/// What a headline states: the names and figures its sentence is rendered from.
#[derive(Debug, Clone)]
pub enum Said {
    /// The fastest provider of a model label at a percentile: its figure (ms) over `n`
    /// completed conversations.
    Fastest {
        q: u32,
        label: String,
        provider: String,
        ms: f64,
        n: usize,
    },
    /// A cell's conversations (`provider / model label`): the most reliable of its label
    /// when the headline has a family, else the label's only cell.
    Reliability {
        cell: String,
        completed: u64,
        attempted: u64,
        rate: Rate,
        failures: BTreeMap<String, u64>,
    },
    /// The task-success leader (`provider / model label`) and its rate.
    TaskSuccess { leader: String, rate: Rate },
    /// The goodput leader (`provider / model label`): its turns that met every bound of
    /// `slo` (as `--slo` writes it).
    Goodput {
        leader: String,
        rate: Rate,
        slo: String,
    },
    /// The leader by TTFT slope on prompt tokens (`provider / model label`): its slope
    /// (ms per 1,000 prompt tokens) with its interval, over `turns` turns of
    /// `conversations` conversations.
    TtftSlope {
        leader: String,
        slope: Estimate,
        turns: usize,
        conversations: usize,
    },
    /// The retention leader (`provider / model label`): of `held_before` consecutive
    /// scored turns where a check held first, `held_again` where it held again.
    Retention {
        leader: String,
        held_again: u64,
        held_before: u64,
        rate: Rate,
    },
    /// A judge's leader by mean score, over the `n` of `attempted` conversations scored.
    JudgeMean {
        rubric: String,
        judge: String,
        simulated: bool,
        leader: String,
        mean: Option<Estimate>,
        all_equal: bool,
        n: usize,
        attempted: u64,
    },
    /// A cell's truncation, content filtering and retries.
    CellFlags { cell: String, flags: Flags },
    /// A model label's efficient frontier.
    Frontier(FrontierLabel),
    /// A model label that outgrew the context at some providers and not at others.
    ContextOverflow(OverflowContrast),
    /// A judge that failed its reference anchors.
    Anchors(AnchorSection),
    /// Cells served by the built-in mock: `all`, or those marked.
    Simulated { all: bool },
    /// An established change of `selected` against `baseline`.
    Change {
        change: Box<Change>,
        selected: String,
        baseline: String,
    },
    /// The comparison with the baseline, summed up.
    Baseline {
        selected: String,
        baseline: String,
        regressions: usize,
        improvements: usize,
        comparisons: usize,
        cells: usize,
        alpha: f64,
        /// Cells in one side only, not compared.
        alone: usize,
    },
}

/// What a claim compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimStatistic {
    /// Conversation-latency p50 over the paired slots: compared as the ratio a / b.
    LatencyP50Ratio,
    /// Conversation-latency p95 over the paired slots: compared as the ratio a / b.
    LatencyP95Ratio,
    /// Task success (completed and every current check passed) per attempted conversation
    /// over the paired slots: compared as the difference a − b.
    TaskSuccessDifference,
    /// A judge's mean score over slots both cells completed and the judge scored:
    /// compared as the difference a − b.
    JudgeMeanDifference,
    /// A candidate's pairwise net verdict against the baseline (+1 win, 0 tie, −1 loss),
    /// tested against 0.
    PairwiseNet,
    /// Conversations completed per attempted over the paired slots: compared as the
    /// difference a − b.
    SuccessDifference,
    /// Constraint retention (a check that held at one scored turn holds again at the
    /// next: 1 − the forgetting ratio), a conversation's share over its checks, over the
    /// paired slots: compared as the difference a − b.
    RetentionDifference,
    /// Goodput under `--slo`: a conversation's share of turns that met every bound, over
    /// the paired slots: compared as the difference a − b.
    GoodputDifference,
    /// TTFT's slope on prompt tokens (ms per 1,000), each conversation's own least-squares
    /// slope over its turns, over the paired slots: compared as the difference a − b
    /// (lower is better).
    TtftSlopeDifference,
}

impl ClaimStatistic {
    /// What the statistic's figures are: how every format writes its values, differences
    /// and margins.
    pub fn scale(self) -> Scale {
        match self {
            ClaimStatistic::LatencyP50Ratio | ClaimStatistic::LatencyP95Ratio => Scale::Ratio,
            ClaimStatistic::SuccessDifference
            | ClaimStatistic::TaskSuccessDifference
            | ClaimStatistic::RetentionDifference
            | ClaimStatistic::GoodputDifference => Scale::Share,
            ClaimStatistic::JudgeMeanDifference | ClaimStatistic::PairwiseNet => Scale::Score,
            ClaimStatistic::TtftSlopeDifference => Scale::Slope,
        }
    }

    /// Whether a higher figure is better: quality and reliability yes, latency and its
    /// growth with the prompt no.
    pub fn higher_is_better(self) -> bool {
        !matches!(
            self,
            ClaimStatistic::LatencyP50Ratio
                | ClaimStatistic::LatencyP95Ratio
                | ClaimStatistic::TtftSlopeDifference
        )
    }
}

/// What a claim's figures are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Latency in ms, compared as a ratio a / b.
    Ratio,
    /// A share of conversations (or of turn pairs), compared as a difference in points.
    Share,
    /// A score (or a net verdict), compared as a difference.
    Score,
    /// A slope in ms per 1,000 prompt tokens, compared as a difference.
    Slope,
}

/// A headline family: every comparison that the headline's sentence could rest on,
/// adjusted together so that the chance of any false "established" in it is at most
/// `alpha` (`docs/metrics.md`, "Claims").
#[derive(Debug, Clone, Serialize)]
pub struct Family {
    pub statistic: ClaimStatistic,
    /// Comparisons made (Holm's m): every pair of the family's cells, or every candidate.
    pub comparisons: usize,
    /// Cells in the family.
    pub cells: usize,
    /// `holm`.
    pub method: &'static str,
    /// Family-wise error rate.
    pub alpha: f64,
    /// The cell the headline is about (`provider / model label`): the best by its own
    /// figure; `None` when no cell has one.
    pub leader: Option<String>,
    /// The leader against every other cell (pairwise: every candidate against the baseline),
    /// the next best first: the headline names the first.
    pub claims: Vec<Claim>,
    /// The family's cells ranked by their own figure, best first (empty for pairwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<Member>,
    /// Every other pair of the family (neither side the leader), the better-ranked cell as
    /// `a`, in rank order: with `claims`, the whole family the adjustment covered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<Claim>,
}

/// A cell of a family, with its own figure (what the tables show and the ranking uses).
#[derive(Debug, Clone, Serialize)]
pub struct Member {
    /// `provider / model label`.
    pub cell: String,
    pub provider: String,
    /// ms for latency, a share for task success, completion and retention, a score for a
    /// judge mean.
    pub figure: Option<f64>,
    /// Conversations with a value for the statistic (latency: completed; task success and
    /// completion: attempted; a judge: scored; retention: with a scored turn pair).
    pub n: usize,
}

/// One comparison, as every format states it.
#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    /// `provider / model label` of the two sides: `a` is the family's leader (pairwise: the
    /// candidate), `b` the cell it is compared with (pairwise: the baseline).
    pub a: String,
    pub b: String,
    /// Paired slots both sides hold (pairs of scenario, repeat and run order).
    pub n: usize,
    /// Scenarios holding those pairs (the clusters resampled and flipped).
    pub scenarios: usize,
    /// Pairs needed before anything is established (from the calibration).
    pub needed: usize,
    /// Each side's statistic over the pairs (ms for latency, a share for task success, a
    /// score for the judge, the net verdict for pairwise with `b_value` 0).
    pub a_value: Option<f64>,
    pub b_value: Option<f64>,
    /// Latency: a / b; otherwise a − b.
    pub estimate: Option<f64>,
    /// The interval of `estimate` at `level`; `None` without spread or without enough
    /// scenarios to bound it.
    pub interval: Option<Interval>,
    /// Confidence level of the interval after the family's adjustment.
    pub level: f64,
    /// Unadjusted two-sided p-value of the cluster sign-flip test.
    pub p_value: Option<f64>,
    /// Holm-adjusted p-value.
    pub adjusted_p: f64,
    pub established: bool,
    /// Why not established, when it is not: too few pairs, too few scenarios, or the
    /// interval holds no difference.
    pub reason: Option<Shortfall>,
    /// Whether the two sides are equivalent within the margin `--margin` names for the
    /// statistic (two one-sided tests); present only for the leader's comparisons of a
    /// statistic given a margin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equivalence: Option<EquivalenceClaim>,
}

/// Why a claim is not established. Written into the JSON as its sentence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shortfall {
    /// Fewer pairs than the calibration requires.
    TooFewPairs { n: usize, needed: usize },
    /// The pairs come from one scenario: no test.
    OneScenario { n: usize },
    /// Pooled runs, too few to bound how runs vary.
    TooFewRuns { runs: usize, needed: usize },
    /// Every scenario agrees, and still their number cannot reach the family's level.
    TooFewScenarios { scenarios: usize, p: f64 },
    /// The test does not reject no difference at the family's level.
    NoDifference,
    /// A latency percentile's sign-flip test reaches the level, but its bootstrap interval
    /// at that level still holds no difference: a claim needs both.
    IntervalHoldsNone,
}

impl Shortfall {
    /// The whole reason, as the family tables and the JSON state it.
    pub fn sentence(&self) -> String {
        match *self {
            Shortfall::TooFewPairs { n, needed } => {
                format!("too few pairs: {n} of the {needed} needed")
            }
            Shortfall::OneScenario { n } => {
                format!("its {n} pairs come from one scenario: a comparison needs two")
            }
            Shortfall::TooFewRuns { runs, needed } => format!(
                "its pairs pool {runs} runs, and a run's conditions are shared by all its \
                 conversations: at least {needed} runs are needed to bound how runs vary"
            ),
            Shortfall::TooFewScenarios { scenarios, p } => format!(
                "{scenarios} scenarios cannot establish it in a family this size: their smallest \
                 p-value, {}, adjusted for the family's comparisons, stays above {:.0} %; more \
                 scenarios can",
                crate::figure::p_value(p),
                crate::stats::inference::FAMILY_ALPHA * 100.0
            ),
            Shortfall::NoDifference => "the data hold no difference at the family's level".into(),
            Shortfall::IntervalHoldsNone => "the sign-flip test reaches the family's level, but \
                 the interval at that level still holds no difference: a claim needs both"
                .into(),
        }
    }

    /// A few words for a headline or a table cell: `too few pairs (9/10)`.
    pub fn brief(&self) -> String {
        match *self {
            Shortfall::TooFewPairs { n, needed } => format!("too few pairs ({n}/{needed})"),
            Shortfall::OneScenario { .. } => "one scenario".into(),
            Shortfall::TooFewRuns { runs, .. } => format!("too few runs ({runs})"),
            Shortfall::TooFewScenarios { scenarios, .. } => {
                format!("too few scenarios ({scenarios})")
            }
            Shortfall::NoDifference | Shortfall::IntervalHoldsNone => {
                "interval holds no difference".into()
            }
        }
    }
}

impl std::fmt::Display for Shortfall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.sentence())
    }
}

impl Serialize for Shortfall {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.sentence())
    }
}

/// An equivalence claim (`--margin`): two one-sided tests at the family's level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EquivalenceClaim {
    /// The margin on the claim's scale: a difference of shares (0.05 for 5 points) or of
    /// scores; for a latency ratio the relative margin m, equivalent meaning a ratio
    /// between 1/(1 + m) and 1 + m.
    pub margin: f64,
    /// The interval lies inside the margin: established equivalent.
    pub established: bool,
    /// The interval at confidence 1 − 2α/m (α 5 %, m the equivalence tests of the family),
    /// on the claim's scale; `None` with too few pairs or nothing to bound.
    pub interval: Option<Interval>,
}

/// A proportion with its n and (when n > 0) a 95 % interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Rate {
    pub k: u64,
    pub n: u64,
    pub value: Option<f64>,
    pub interval: Option<Interval>,
}

impl Rate {
    /// The share as a figure in percent, with its interval; `None` without a value.
    pub fn figure(&self) -> Option<Figure> {
        self.value.map(|v| Figure::percent(v).within(self.interval))
    }
}

/// A percentile or mean with the interval its n allows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub value: f64,
    /// `None` when too few values lie beyond the percentile to bound it (see
    /// `docs/metrics.md`), or when intervals were not asked for.
    pub interval: Option<Interval>,
    /// Too few values lie beyond the percentile to bound it (the tables then print its n):
    /// written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub too_few: bool,
}

impl Estimate {
    /// The estimate as a figure in `unit`, with its interval.
    pub fn figure(&self, unit: Unit) -> Figure {
        Figure::new(self.value, unit).within(self.interval)
    }
}

/// p50 / p95 / p99 of one quantity, with n. Empty when n is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Percentiles {
    pub n: usize,
    pub p50: Option<Estimate>,
    pub p95: Option<Estimate>,
    pub p99: Option<Estimate>,
}

/// A median with its n.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Median {
    pub n: usize,
    pub value: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub provider: String,
    /// The model label cells group by.
    pub model: String,
    /// The model ids sent to the provider under this label.
    pub model_ids: Vec<String>,
    pub simulated: bool,
    pub reliability: Reliability,
    /// Sum of turn E2E per completed conversation (pauses excluded).
    pub conversation_latency: Percentiles,
    /// The same with retries and backoff included (first send to final answer per turn);
    /// only when some turn needed more than one attempt.
    pub conversation_wall: Option<Percentiles>,
    /// Conversation latency at every whole percentile 0, 1, …, 100 (101 values, ms; empty
    /// when n is 0): the empirical distribution, for curves.
    pub latency_curve: Vec<f64>,
    pub turns: TurnStats,
    pub usable: Rate,
    pub checks: CellChecks,
    pub cache: Cache,
    pub cost: Cost,
    pub flags: Flags,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Reliability {
    /// Conversations that count for their slots, interrupted ones aside.
    pub attempted: u64,
    pub completed: u64,
    /// Stopped by Ctrl-C and never redone: in no denominator.
    pub interrupted: u64,
    /// Ended by turnbench's own failure (`internal_error`), never the provider's: in no
    /// denominator.
    pub internal_errors: u64,
    /// completed / attempted, Wilson 95 % interval.
    pub success: Rate,
    /// Failed conversations by the class of the turn that ended them.
    pub failures: BTreeMap<String, u64>,
    pub turns_sent: u64,
    /// Turns `ok`, or `truncated` with visible text.
    pub turns_answered: u64,
}

/// Failures by class as tables and sentences write them, the most frequent first:
/// `3 timeout, 1 http_5xx`.
pub fn failure_text(failures: &BTreeMap<String, u64>) -> String {
    let mut v: Vec<(&String, &u64)> = failures.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter()
        .map(|(class, n)| format!("{n} {class}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Per-turn figures over the turns of completed conversations.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TurnStats {
    pub ttft: Percentiles,
    pub ttfa: Percentiles,
    pub e2e: Percentiles,
    /// Output tokens per second of decoding: tokens / (E2E − TTFT).
    pub decode_tps: Median,
    /// Visible answer tokens (o200k_base) per answer.
    pub visible_tokens: Median,
    /// Answers whose visible tokens could not be known (never counted as 0).
    pub visible_tokens_missing: u64,
    /// Inter-token latency: the gaps between consecutive answer- or reasoning-bearing SSE
    /// events, pooled over the turns (`docs/metrics.md`).
    pub itl_ms: Itl,
    /// Time per output token: (E2E − TTFT) ÷ (output tokens − 1), per turn of ≥ 2 tokens.
    pub tpot_ms: Tpot,
}

/// Inter-token latency of a cell: p50 / p95 / p99 of every gap of its measured turns
/// pooled (n gaps). Turns whose stored offsets cannot say which events bore text
/// (imported, not streamed, or stored before migration 012) have none: counted in
/// `turns_unmeasured`, never as 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Itl {
    /// Gaps pooled.
    pub n: usize,
    pub p50: Option<Estimate>,
    pub p95: Option<Estimate>,
    pub p99: Option<Estimate>,
    /// Turns whose gaps are in `n`.
    pub turns: usize,
    /// Turns without known event offsets and kinds.
    pub turns_unmeasured: u64,
}

/// TTFT BY TURN of one cell, over the turns of its completed conversations with TTFT
/// known.
#[derive(Debug, Clone, Serialize)]
pub struct TtftByTurn {
    /// The model label.
    pub label: String,
    pub provider: String,
    pub simulated: bool,
    /// TTFT p50 at each turn index (1-based) that has one.
    pub turns: Vec<TtftAtTurn>,
    /// Least-squares slope of TTFT (ms) on prompt tokens within conversations (each its own
    /// intercept), per 1,000 tokens; `None`
    /// without reported prompt tokens that vary.
    pub slope_ms_per_1k_prompt_tokens: Option<f64>,
    /// Its 95 % interval, cluster-robust by conversation (CR1, t with clusters − 1 df);
    /// `None` from fewer than two conversations.
    pub interval: Option<Interval>,
    /// Turns and conversations behind the slope.
    pub slope_n: usize,
    pub slope_conversations: usize,
}

/// TTFT at one turn index: its median over n turns.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TtftAtTurn {
    pub turn: u32,
    pub n: usize,
    pub p50: Option<f64>,
}

/// GOODPUT of one cell under `--slo` (`crate::report::goodput`): of the turns sent in its
/// attempted conversations (a failed turn counts as sent and not met), those that met
/// every bound; of its attempted conversations, those that completed with every turn met.
#[derive(Debug, Clone, Serialize)]
pub struct Goodput {
    /// The model label.
    pub label: String,
    pub provider: String,
    pub simulated: bool,
    /// The bounds (ms).
    pub slo: crate::config::slo::Slo,
    pub turns: u64,
    pub turns_met: u64,
    /// turns_met ÷ turns; its interval: cluster-robust over scenarios, widened to hold
    /// Wilson's (as usable turns).
    pub rate: Option<f64>,
    pub interval: Option<Interval>,
    /// Turns not met because a bounded figure was not measured (no TTFT, no event offsets).
    pub turns_unmeasured: u64,
    pub conversations: u64,
    pub conversations_met: u64,
    /// conversations_met ÷ conversations, Wilson interval.
    pub conversation_rate: Option<f64>,
    pub conversation_interval: Option<Interval>,
}

/// Time per output token of a cell: the median over its turns of ≥ 2 output tokens with
/// TTFT and E2E known (n turns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Tpot {
    pub n: usize,
    pub p50: Option<Estimate>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct CellChecks {
    /// Task success: attempted conversations that completed and passed every current check
    /// ÷ attempted conversations of scenarios with checks (a failed conversation counts as
    /// not meeting the bar), Wilson interval. The quality headline ranks this.
    pub task_success: Rate,
    /// Current check results passed / scored, over *completed* conversations only (the
    /// checks of a failed conversation are "not scored"): a survivors' figure. The interval
    /// is cluster-robust over scenarios, never narrower than Wilson's over conversations.
    pub pass: Rate,
    pub not_scored: u64,
    /// By tag: passed, failed, not scored.
    pub by_tag: BTreeMap<String, TagTally>,
    /// Selected conversations with a checks file but no current results yet.
    pub unchecked_conversations: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TagTally {
    pub passed: u64,
    pub failed: u64,
    pub not_scored: u64,
}

impl TagTally {
    pub fn scored(&self) -> u64 {
        self.passed + self.failed
    }

    pub fn rate(&self) -> Option<f64> {
        (self.scored() > 0).then(|| self.passed as f64 / self.scored() as f64)
    }
}

/// Prompt caching, over turns after the first that report cached tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Cache {
    /// Turns after the first whose provider reported cached tokens; 0: "not reported".
    pub turns_reported: u64,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    /// cached / prompt; `None` when not reported.
    pub hit_rate: Option<f64>,
    /// Of those turns, how many had less than 10 % of the prompt cached.
    pub cold_turns: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Cost {
    /// The target's prices are known.
    pub priced: bool,
    /// Turns whose usage let them be priced, of `turns_sent`.
    pub turns_priced: u64,
    pub total_usd: Option<f64>,
    /// total / completed conversations (failed ones' tokens are paid too).
    pub per_success_usd: Option<f64>,
    /// total / priced turns × 1,000.
    pub per_1000_turns_usd: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Flags {
    /// Turns that ended with `finish_reason: length`.
    pub truncated_turns: u64,
    /// Of those, with reasoning and no visible answer: reasoning used the budget.
    pub reasoning_used_budget: u64,
    /// Turns that ended with `finish_reason: content_filter`.
    pub content_filtered_turns: u64,
    /// Turns that needed more than one attempt (retries on).
    pub retried_turns: u64,
}

/// One model label's efficient frontier: which cells are on it and why, which are off it
/// and who beats them. Quality is the primary judge's mean score when the report has a
/// judge ([`Report::primary_judge`]), else task success; speed is conversation p50; "beats"
/// is an established claim of the label's headline families, both ways at once.
#[derive(Debug, Clone, Serialize)]
pub struct FrontierLabel {
    /// The model label.
    pub model: String,
    /// The quality statistic: `judge_mean_difference` or `task_success_difference`.
    pub quality: ClaimStatistic,
    /// With a judge: `rubric · judge` (simulated or not as the judge is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// On the frontier, fastest first.
    pub cells: Vec<FrontierCell>,
    /// Off it: each with the cells established both faster and better.
    pub off: Vec<OffFrontier>,
    pub simulated: bool,
    /// The headline's sentence.
    pub text: String,
}

/// A cell on the frontier and why: it leads on speed, on quality, or no cell beats it on
/// both.
#[derive(Debug, Clone, Serialize)]
pub struct FrontierCell {
    pub provider: String,
    /// `provider / model label`.
    pub cell: String,
    pub why: FrontierWhy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FrontierWhy {
    /// The label's fastest by conversation p50 (and best on quality too).
    FastestAndBest,
    /// The label's fastest by conversation p50.
    Fastest,
    /// The label's best on quality.
    BestQuality,
    /// Neither, but no cell is established both faster and better.
    NotBeaten,
}

impl FrontierWhy {
    /// As the JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            FrontierWhy::FastestAndBest => "fastest_and_best",
            FrontierWhy::Fastest => "fastest",
            FrontierWhy::BestQuality => "best_quality",
            FrontierWhy::NotBeaten => "not_beaten",
        }
    }
}

/// A cell's place on its label's frontier ([`Report::frontier_place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontierPlace {
    On(FrontierWhy),
    /// Beaten on both by another cell.
    Off,
}

/// A cell off the frontier: `beaten_by` are established both faster and better.
#[derive(Debug, Clone, Serialize)]
pub struct OffFrontier {
    pub provider: String,
    pub cell: String,
    /// Providers (of the same label).
    pub beaten_by: Vec<String>,
}

/// CONTEXT OVERFLOW: conversations that outgrew the context window a provider serves a
/// model with. A property of the workload and of the provider's window, not a serving fault.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ContextOverflowSection {
    /// One per cell with a conversation ended by `context_overflow`, in the cells' order.
    pub cells: Vec<OverflowFlag>,
    /// Model labels whose conversations outgrew the context at some providers but, as far
    /// as they went, not at others.
    pub contrasts: Vec<OverflowContrast>,
}

/// A cell whose conversations outgrew the context: how many, at which turn, and the sizes
/// the server stated.
#[derive(Debug, Clone, Serialize)]
pub struct OverflowFlag {
    pub provider: String,
    /// The model label.
    pub model: String,
    pub simulated: bool,
    /// Conversations that ended in `context_overflow`, of `attempted`.
    pub conversations: u64,
    pub attempted: u64,
    /// Replayed agent sessions (`turnbench replay`): a turn is the session's turn.
    pub replay: bool,
    /// Turn (1-based) → conversations that overflowed at it.
    pub turns: BTreeMap<u32, u64>,
    /// Replayed sessions only: each overflowed pass's session, round and turn (1-based),
    /// ordered by session then round.
    pub sessions: Vec<SessionTurn>,
    /// Median prompt tokens the server stated, over the `prompt_stated` conversations
    /// whose server stated it; `None` when none did.
    pub prompt_tokens: Option<f64>,
    pub prompt_stated: u64,
    /// The context window the server stated (the most common value, the largest of
    /// equally common ones), over `window_stated` conversations; `None` when none did.
    pub window_tokens: Option<i64>,
    pub window_stated: u64,
    /// Distinct windows stated, ascending (more than one: the provider served several).
    pub windows: Vec<i64>,
    /// The flag's sentence, every format prints it.
    pub text: String,
}

/// One replayed session's pass that outgrew the context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionTurn {
    pub session: String,
    pub round: u32,
    /// 1-based: the session's turn.
    pub turn: u32,
}

/// A model label that outgrows the context at some providers and not at others.
#[derive(Debug, Clone, Serialize)]
pub struct OverflowContrast {
    pub model: String,
    /// Providers where it overflowed.
    pub overflows_at: Vec<OverflowSide>,
    /// Providers where no conversation overflowed though some went at least as far as
    /// the earliest overflow turn above.
    pub fits_at: Vec<OverflowSide>,
    /// The sentence every format prints.
    pub text: String,
}

/// One provider of an [`OverflowContrast`].
#[derive(Debug, Clone, Serialize)]
pub struct OverflowSide {
    pub provider: String,
    /// Conversations that ended in `context_overflow`, of `attempted`.
    pub overflowed: u64,
    pub attempted: u64,
    /// Overflowing side: the earliest overflow turn; fitting side: the furthest turn any
    /// of its conversations answered (1-based).
    pub turn: u32,
    /// The window the server stated, when it did (overflowing side only).
    pub window_tokens: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ChecksSection {
    /// Tags that occur among current results, in a fixed order.
    pub tags: Vec<String>,
    /// Same order as `Report::cells`.
    pub cells: Vec<CellChecks>,
}

/// One rubric × judge (real and simulated apart).
#[derive(Debug, Clone, Serialize)]
pub struct JudgeSection {
    /// `id@version`.
    pub rubric: String,
    pub judge: String,
    pub judge_model: String,
    pub simulated: bool,
    /// The rubric's criteria, as they occur in scores.
    pub criteria: Vec<String>,
    /// Same order as `Report::cells` (a cell with no judgment has n = 0).
    pub cells: Vec<JudgeCell>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct JudgeCell {
    /// Conversations with at least one scored judgment.
    pub n: usize,
    /// Attempted conversations of the cell: the scores cover `n` of them (failed ones are
    /// never judged).
    pub attempted: u64,
    /// Every scored conversation's overall score is the same: no interval, and the tables
    /// say "all n equal" rather than print [x, x].
    pub all_equal: bool,
    /// Scored judgments (replicates counted).
    pub judgments: u64,
    pub unparseable: u64,
    pub judge_errors: u64,
    /// Mean over conversations of each conversation's mean criterion score (replicates
    /// averaged first); a cluster-robust t interval over scenarios (none when every score is
    /// the same or one scenario holds them all).
    pub overall: Option<Estimate>,
    pub criteria: BTreeMap<String, Estimate>,
    /// Mean absolute difference of overall scores between replicates of one conversation,
    /// over conversations with two or more scored replicates; `None` without replicates.
    pub replicate_spread: Option<f64>,
    pub replicate_conversations: usize,
    /// Share of scored judgments that say the task was completed.
    pub judged_completed: Rate,
}

/// Spearman's ρ, over conversations, between one criterion's judge score and the pass rate
/// of the checks with the tags it speaks to.
#[derive(Debug, Clone, Serialize)]
pub struct CheckAgreement {
    /// `id@version`.
    pub rubric: String,
    pub judge: String,
    pub judge_model: String,
    pub simulated: bool,
    pub criterion: String,
    pub tags: Vec<String>,
    /// Conversations with both a score and a scored check of those tags.
    pub n: usize,
    /// `None` when either side does not vary.
    pub rho: Option<f64>,
    /// Bootstrap over conversations.
    pub interval: Option<Interval>,
    pub verdict: String,
}

/// A judge's reference-anchor check: does it score each scenario's reference conversation
/// above the variants its defects spoil?
#[derive(Debug, Clone, Serialize)]
pub struct AnchorSection {
    /// `id@version`.
    pub rubric: String,
    pub judge: String,
    pub judge_model: String,
    pub simulated: bool,
    /// Scenarios whose reference was scored.
    pub scenarios: usize,
    /// (reference, spoiled variant) pairs both scored.
    pub pairs: u64,
    /// Pairs in which the reference scored strictly higher (Wilson interval).
    pub above: Rate,
    pub ties: u64,
    pub below: u64,
    /// Spoiled variants (or their reference) without a score: in no pair.
    pub unscored: u64,
    /// The lower end of `above`'s interval is above 50 %.
    pub passed: bool,
}

/// Pairwise verdicts of one rubric × judge against a baseline.
#[derive(Debug, Clone, Serialize)]
pub struct PairwiseSection {
    /// Every candidate's net verdict tested against 0, adjusted together (Holm).
    pub family: Option<Family>,
    /// `id@version`.
    pub rubric: String,
    pub judge: String,
    pub judge_model: String,
    pub simulated: bool,
    /// The baseline's cells, `provider / model label`.
    pub baseline: Vec<String>,
    /// Pairs with both positions judged, scored or not.
    pub pairs: u64,
    /// Of those, pairs with an unscored ask (unparseable or judge error): in no rate.
    pub unscored: u64,
    /// Pairs judged in one position only (the swapped ask missing): in no verdict, and
    /// not in `pairs`.
    pub one_position: u64,
    /// Scored pairs whose verdict did not change with position (Wilson interval).
    pub consistency: Rate,
    /// Scored pairs in which the transcript shown first won in both orders.
    pub first_position_wins: u64,
    /// One per candidate cell.
    pub cells: Vec<PairwiseCell>,
}

/// A candidate cell against the baseline: rates over its scored pairs, intervals by
/// bootstrap over pairs. An inconsistent verdict counts as a tie.
#[derive(Debug, Clone, Serialize)]
pub struct PairwiseCell {
    pub provider: String,
    pub model: String,
    pub simulated: bool,
    /// Scored pairs.
    pub n: u64,
    pub win: Rate,
    pub tie: Rate,
    pub loss: Rate,
    /// Of the ties, how many were inconsistent verdicts.
    pub inconsistent: u64,
    pub consistency: Rate,
    /// Mean of +1 (win), 0 (tie), −1 (loss) with its cluster-robust interval at the
    /// section's adjusted level (none without spread): the candidate is better (or worse)
    /// than the baseline only when the section's family establishes it.
    pub net: Option<Estimate>,
    /// `better`, `worse`, or `not established`.
    pub verdict: String,
}

/// Whose agreement an [`AgreementSection`] measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AgreementKind {
    /// The replicates of one judge (self-agreement).
    Replicates,
    /// The judges of a panel, each by its first scored replicate.
    Judges,
}

/// Agreement for one rubric: between replicates of one judge, or between judges.
#[derive(Debug, Clone, Serialize)]
pub struct AgreementSection {
    /// `id@version`.
    pub rubric: String,
    pub kind: AgreementKind,
    /// The judge (replicates) or the panel's judges, each `id (model)`.
    pub judges: Vec<String>,
    /// Any of those judges is simulated.
    pub simulated: bool,
    /// The coders compared: replicates, or judges.
    pub coders: usize,
    /// Replicates: what their prompts varied and the temperature, from the judge's current
    /// settings ("criteria order, label, nonce at temperature 0"); `None` between judges.
    pub varied: Option<String>,
    pub criteria: Vec<CriterionAgreement>,
}

/// One judge's agreement with the people who labelled the same conversations under one
/// rubric (`crate::report::human_agreement`).
#[derive(Debug, Clone, Serialize)]
pub struct HumanAgreementSection {
    /// The judge's id (`judges` of the JUDGE tables).
    pub judge: String,
    pub judge_model: String,
    /// `id@version`.
    pub rubric: String,
    /// The judge is simulated (the mock judge).
    pub simulated: bool,
    /// The raters whose labels are the reference, each `human:<rater>`.
    pub raters: Vec<String>,
    /// Per criterion in name order, then `completed`.
    pub agreement: Vec<HumanCriterionAgreement>,
}

/// Weighted Cohen's κ between a judge and the human labels on one criterion (quadratic
/// weights on the rubric's scale), or on `completed` (on yes/no: the unweighted κ).
#[derive(Debug, Clone, Serialize)]
pub struct HumanCriterionAgreement {
    /// A criterion id, or `completed`.
    pub criterion: String,
    /// Conversations both the judge and a person scored.
    pub n: usize,
    /// `None` when undefined: fewer than 2 conversations, or no variation at all.
    pub weighted_kappa: Option<f64>,
    /// Bootstrap over conversations, at the report's level; `None` below 5 conversations.
    pub interval: Option<Interval>,
}

/// Krippendorff's α (ordinal) of one criterion's scores.
#[derive(Debug, Clone, Serialize)]
pub struct CriterionAgreement {
    pub criterion: String,
    /// `None` when undefined: fewer than 2 pairable scores, or no variation at all.
    pub alpha: Option<f64>,
    /// Bootstrap over conversations, at the report's level.
    pub interval: Option<Interval>,
    /// Conversations with at least two scores (pairable units).
    pub n: usize,
    /// Scores in those conversations (pairable values).
    pub values: usize,
}

/// The selected run(s) against a baseline, cell by cell: each change a claim over the
/// (scenario version, repeat) slots both sides hold, every claim of every cell adjusted
/// together (Holm, family-wise [`Comparison::alpha`]): `docs/metrics.md`, "Runs over time".
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The runs compared (ids), newest last.
    pub runs: Vec<i64>,
    /// The baseline's runs (ids).
    pub baseline_runs: Vec<i64>,
    /// What the baseline is, as the report names it: `run 1`, `runs 1, 2 (the 7d before run 3)`.
    pub baseline: String,
    /// Comparisons made (Holm's m): every statistic of every cell both sides hold.
    pub comparisons: usize,
    /// `holm`.
    pub method: &'static str,
    pub alpha: f64,
    /// Established regressions among the changes.
    pub regressions: usize,
    pub improvements: usize,
    pub changes: Vec<Change>,
    /// Cells (`provider / model label`) only the selected runs hold, and only the baseline:
    /// listed, never compared.
    pub only_selected: Vec<String>,
    pub only_baseline: Vec<String>,
    /// What was left out of the pairs and why: scenario versions one side does not hold,
    /// runs whose settings differ.
    pub left_out: Vec<String>,
}

/// What a change says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeVerdict {
    /// Established, and worse than the baseline.
    Regressed,
    /// Established, and better than the baseline.
    Improved,
    /// The data do not establish a change (too few pairs, or the interval holds none).
    NoEstablishedChange,
}

/// One statistic of one cell against the baseline. The claim's `a` is the selected run(s),
/// `b` the baseline; `a_value`/`b_value` each side's statistic over the pairs.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// `provider / model label`.
    pub cell: String,
    pub provider: String,
    pub model: String,
    pub statistic: ClaimStatistic,
    /// For a judge mean: the rubric and judge (`rubric@1 by judge`).
    pub judge: Option<String>,
    /// Conversations of the cell on each side (attempted), before pairing.
    pub selected_n: u64,
    pub baseline_n: u64,
    pub claim: Claim,
    pub verdict: ChangeVerdict,
    pub simulated: bool,
}

/// Each cell run by run (`docs/report.md`, "Runs over time").
#[derive(Debug, Clone, Serialize)]
pub struct Trend {
    /// `--trend` asked for it (CSV then writes these rows instead of the cells).
    #[serde(skip)]
    pub asked: bool,
    /// Runs in the selection.
    pub runs: usize,
    /// Points whose run stands apart from the window.
    pub apart: usize,
    /// One per run × cell, in cell order, then run order.
    pub points: Vec<TrendPoint>,
}

/// One cell in one run.
#[derive(Debug, Clone, Serialize)]
pub struct TrendPoint {
    pub run: i64,
    /// The run's start, RFC 3339 (the chart's x).
    pub started_at: String,
    /// Where the run was collected from; absent when it records none (imports, older runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collector: Option<String>,
    /// `provider / model label`.
    pub cell: String,
    pub provider: String,
    pub model: String,
    /// Completed per attempted in this run, with its Wilson interval.
    pub success: Rate,
    /// Conversation p50 of this run's completed conversations, with its order-statistic
    /// interval (from 6 conversations).
    pub conversation_p50: Option<Estimate>,
    /// Completed conversations with a latency: the p50's n.
    pub latency_n: usize,
    /// This run's p50 interval and the window's (the pooled cell's) do not meet.
    pub apart: bool,
    pub simulated: bool,
}

/// The figure that orders the cells of each model label in the tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum SortBy {
    /// Conversation latency p50, fastest first.
    #[default]
    P50,
    /// Conversation latency p95, fastest first.
    P95,
    /// Conversation latency p99, fastest first.
    P99,
    /// Conversation success (completed ÷ attempted), highest first.
    Success,
    /// The primary judge's mean score (the first real judge, else the first), highest
    /// first; task success without a judge.
    Quality,
}

impl SortBy {
    /// How the order reads after the figure's name.
    pub fn order_word(self) -> &'static str {
        match self {
            SortBy::P50 | SortBy::P95 | SortBy::P99 => " (fastest first)",
            SortBy::Success | SortBy::Quality => " (highest first)",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SortBy::P50 => "p50",
            SortBy::P95 => "p95",
            SortBy::P99 => "p99",
            SortBy::Success => "success",
            SortBy::Quality => "quality",
        }
    }
}

/// One cell's conversation-latency percentiles against the fastest of its model label.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VsFastest {
    pub p50: Option<Delta>,
    pub p95: Option<Delta>,
    pub p99: Option<Delta>,
}

/// A cell's percentile against the fastest provider's same percentile within its label.
#[derive(Debug, Clone, Serialize)]
pub struct Delta {
    /// The fastest provider of the label by this percentile.
    pub fastest: String,
    /// This cell is that provider.
    pub is_fastest: bool,
    /// This cell's percentile − the fastest one's (ms): 0 for the fastest.
    pub difference_ms: f64,
    /// This cell's percentile ÷ the fastest one's: 1 for the fastest.
    pub ratio: f64,
    /// Slots both cells completed (the pairs of the headline's comparison); `None` for the
    /// fastest itself and for p99 (no paired comparison).
    pub pairs: Option<usize>,
    /// Pairs the calibration requires before an interval is shown.
    pub needed: Option<usize>,
    /// The ratio this cell ÷ the fastest over those pairs.
    pub paired_ratio: Option<f64>,
    /// The interval of `paired_ratio` at `level`; `None` below the calibration minimums
    /// (pairs, 3 scenarios), without spread, for p99 and for the fastest.
    pub interval: Option<Interval>,
    /// The confidence level of `interval` (Holm-adjusted within the headline family).
    pub level: Option<f64>,
    /// The headline family establishes the fastest's lead over this cell.
    pub established: Option<bool>,
}

// The judge card (`crate::report::judge_card` builds it).

/// What the card concludes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Trusted,
    Flagged,
    Failed,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Trusted => "trusted",
            Verdict::Flagged => "flagged",
            Verdict::Failed => "failed",
        }
    }
}

/// One judge × rubric (simulated and real apart).
#[derive(Debug, Clone, Serialize)]
pub struct JudgeCard {
    pub judge: String,
    /// `id@version`.
    pub rubric: String,
    pub judge_model: String,
    pub simulated: bool,
    /// The judge's model family: its settings' `family`, else from its model id
    /// (`crate::config::judge::FAMILIES`); `None` when neither says.
    pub family: Option<String>,
    /// The reference-anchor check (`turnbench judge --anchors`); `None`: never run.
    pub anchors: Option<AnchorSection>,
    /// The control answers of the anchor suite; `None`: never run.
    pub controls: Option<Vec<Control>>,
    /// `None`: no scored conversation with a counted final answer.
    pub length_bias: Option<LengthBias>,
    /// `None`: the judge ran no pairwise comparison on this rubric.
    pub position: Option<Position>,
    /// `None`: no human labels for this rubric.
    pub human_agreement: Option<Vec<HumanAgreement>>,
    /// Cells the judge scored whose model label or id is of its family; `None`: the judge's
    /// family is unknown.
    pub self_family: Option<Vec<SelfFamilyCell>>,
    pub verdict: Verdict,
    /// Why, one sentence each: the rules that failed or flagged first, then what passed and
    /// what was not checked.
    pub reasons: Vec<String>,
}

/// One control of the anchor suite (`padding`, `null`): its pairs and whether its rule held.
#[derive(Debug, Clone, Serialize)]
pub struct Control {
    pub name: String,
    /// Scenarios with the control and what it is compared with both scored.
    pub pairs: u64,
    /// Pairs in which the control's rule held.
    pub held: u64,
    /// held / pairs; `None` when pairs is 0.
    pub rate: Option<f64>,
    /// Wilson 95 % interval of `rate`, `[lo, hi]`.
    #[serde(serialize_with = "Interval::pair")]
    pub interval: Option<Interval>,
    /// The rule, in words.
    pub rule: String,
    pub passed: bool,
}

/// Rank correlation, within scenarios, of a final answer's visible tokens with the judge's
/// mean score ([`stats::spearman_within_groups`]), beside the same for the checks.
#[derive(Debug, Clone, Serialize)]
pub struct LengthBias {
    /// Conversations in strata with two or more scored (what ρ rests on).
    pub n: usize,
    /// Strata of two or more: conversations of one scenario with the same checks failed.
    pub strata: usize,
    /// `None`: no scenario where both length and score vary.
    pub rho: Option<f64>,
    /// 95 %, Fisher z, conversations independent given their scenario, `[lo, hi]`; `None`
    /// with too few.
    #[serde(serialize_with = "Interval::pair")]
    pub interval: Option<Interval>,
    /// The interval excludes 0.
    pub established: bool,
    /// The checks over the same conversations: `None` without check results.
    pub checks: Option<ChecksBesideLength>,
}

/// Whether longer answers were also better by the rules: the checks' pass rate over the
/// conversations of [`LengthBias`], and the same within-scenario ρ of length with each
/// conversation's check pass rate.
#[derive(Debug, Clone, Serialize)]
pub struct ChecksBesideLength {
    /// Check results passed and scored over those conversations.
    pub passed: u64,
    pub scored: u64,
    pub pass_rate: Option<f64>,
    /// Wilson 95 % interval of `pass_rate`, `[lo, hi]`.
    #[serde(serialize_with = "Interval::pair")]
    pub pass_interval: Option<Interval>,
    /// Conversations with a check result in scenarios with two or more.
    pub n: usize,
    pub rho: Option<f64>,
    #[serde(serialize_with = "Interval::pair")]
    pub interval: Option<Interval>,
    pub established: bool,
}

/// Position bias of a pairwise judge (both orders of each pair asked).
#[derive(Debug, Clone, Serialize)]
pub struct Position {
    /// Scored pairs.
    pub n: u64,
    /// Pairs whose verdict did not change with the order.
    pub consistent: u64,
    /// consistent / n; `None` when n is 0.
    pub rate: Option<f64>,
    /// Wilson 95 % interval of `rate`, `[lo, hi]`.
    #[serde(serialize_with = "Interval::pair")]
    pub interval: Option<Interval>,
    /// Pairs in which the transcript shown first won in both orders.
    pub first_position_wins: u64,
}

/// The judge against human labels on one criterion (filled by the label stage's figures).
#[derive(Debug, Clone, Serialize)]
pub struct HumanAgreement {
    pub criterion: String,
    pub n: usize,
    pub weighted_kappa: Option<f64>,
    #[serde(serialize_with = "Interval::pair")]
    pub interval: Option<Interval>,
}

/// A cell the judge scored whose model label or id is of the judge's own family.
#[derive(Debug, Clone, Serialize)]
pub struct SelfFamilyCell {
    /// `provider / label`.
    pub cell: String,
    pub family: String,
}
