//! Per-conversation rows for the JSON format, built one at a time from the report's facts
//! while they are written: a report over 250,000 conversations never holds them all.

use std::sync::Arc;

use std::collections::BTreeMap;

use serde::Serialize;

use super::load::{Facts, JudgmentStatus, is_usable};

/// The selected conversations, as rows, built one at a time (`range`); the JSON format
/// writes them (`crate::export::json`).
#[derive(Debug, Clone)]
pub struct ConversationRows {
    facts: Arc<Facts>,
    sla_ms: Option<f64>,
    /// Each conversation's judgments (indexes into the facts' judgments).
    judgments: Arc<Vec<Vec<usize>>>,
}

impl ConversationRows {
    pub(super) fn new(facts: Arc<Facts>, sla_ms: Option<f64>) -> ConversationRows {
        let mut judgments = vec![Vec::new(); facts.convs.len()];
        for (i, j) in facts.judges.judgments.iter().enumerate() {
            if let Some(list) = judgments.get_mut(j.conv) {
                list.push(i);
            }
        }
        ConversationRows {
            facts,
            sla_ms,
            judgments: Arc::new(judgments),
        }
    }

    pub fn len(&self) -> usize {
        self.facts.convs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.facts.convs.is_empty()
    }

    /// The rows of a range of positions (clamped to the rows there are), in order.
    pub fn range(
        &self,
        positions: std::ops::Range<usize>,
    ) -> impl Iterator<Item = ConversationRow<'_>> {
        (positions.start..positions.end.min(self.facts.convs.len())).map(|i| self.row(i))
    }

    fn row(&self, i: usize) -> ConversationRow<'_> {
        let f = &*self.facts;
        let c = &f.convs[i];
        let cell = &f.cells[c.cell];
        let turns = &f.turns[c.first_turn..c.first_turn + c.n_turns];
        let known = |v: f64| v.is_finite().then_some(v);
        ConversationRow {
            id: c.id,
            uid: &c.uid,
            run_id: c.run_id,
            provider: &cell.provider,
            model: &cell.label,
            scenario: c
                .scenario
                .and_then(|s| f.scenarios.get(s))
                .map(String::as_str),
            repeat: c.repeat,
            outcome: c.outcome.as_str(),
            latency_ms: known(c.latency_ms),
            turns: turns
                .iter()
                .map(|t| TurnRow {
                    outcome: t.outcome.as_str(),
                    finish_reason: t.finish.as_str(),
                    ttft_ms: known(t.ttft),
                    ttfa_ms: known(t.ttfa),
                    e2e_ms: known(t.e2e),
                    usable: is_usable(t, self.sla_ms),
                })
                .collect(),
            checks: f
                .checks
                .per_conv
                .get(i)
                .and_then(Option::as_ref)
                .map(|k| ConversationChecks {
                    passed: u64::from(k.passed),
                    failed: u64::from(k.failed),
                    not_scored: u64::from(k.not_scored),
                    failed_checks: k
                        .failed_defs
                        .iter()
                        .filter_map(|d| f.checks.definitions.get(d))
                        .map(|d| d.check_id.as_str())
                        .collect(),
                }),
            judgments: self
                .judgments
                .get(i)
                .into_iter()
                .flatten()
                .filter_map(|&j| f.judges.judgments.get(j))
                .map(|j| {
                    let key = &f.judges.sections[j.section];
                    ConversationJudgment {
                        rubric: &key.rubric,
                        judge: &key.judge,
                        simulated: key.simulated,
                        replicate: j.replicate,
                        status: match j.status {
                            JudgmentStatus::Ok => "ok",
                            JudgmentStatus::Unparseable => "unparseable",
                            JudgmentStatus::JudgeError => "judge_error",
                        },
                        scores: j
                            .scores
                            .iter()
                            .filter_map(|(c, s)| {
                                f.judges.criteria.get(*c).map(|n| (n.as_str(), *s))
                            })
                            .collect(),
                    }
                })
                .collect(),
        }
    }
}

/// One conversation, for the JSON format; borrowed from the report's facts, built one at a
/// time as it is written (see [`ConversationRows`]).
#[derive(Debug, Clone, Serialize)]
pub struct ConversationRow<'a> {
    pub id: i64,
    pub uid: &'a str,
    pub run_id: i64,
    pub provider: &'a str,
    pub model: &'a str,
    pub scenario: Option<&'a str>,
    pub repeat: u32,
    pub outcome: &'static str,
    pub latency_ms: Option<f64>,
    pub turns: Vec<TurnRow>,
    pub checks: Option<ConversationChecks<'a>>,
    pub judgments: Vec<ConversationJudgment<'a>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TurnRow {
    pub outcome: &'static str,
    pub finish_reason: Option<&'static str>,
    pub ttft_ms: Option<f64>,
    pub ttfa_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    pub usable: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConversationChecks<'a> {
    pub passed: u64,
    pub failed: u64,
    pub not_scored: u64,
    /// Ids of the checks that failed.
    pub failed_checks: Vec<&'a str>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConversationJudgment<'a> {
    pub rubric: &'a str,
    pub judge: &'a str,
    pub simulated: bool,
    pub replicate: i64,
    pub status: &'static str,
    pub scores: BTreeMap<&'a str, i64>,
}
