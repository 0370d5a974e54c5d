//! The report's sections as plain tables of text, shared by the terminal, Markdown and
//! HTML formats: each of those only says how a title, a header, a row and a footnote look.
//! Figures are formatted here once (seconds or milliseconds as the header says, rates in
//! %, intervals in brackets), so every format prints the same digits.

use crate::figure::{Figure, Unit, percent, usd};
use crate::report::model::{
    AgreementKind, AgreementSection, Cell, CriterionAgreement, Estimate, HumanAgreementSection,
    JudgeSection, PairwiseSection, Percentiles, Report, TagTally,
};

pub use super::text_table::{Align, Row, Table, thousands};
use crate::report::keys::{JudgeKey, RowKey, TableKey};
use crate::report::simulated::{HEADER_MARK, Marks, name_mark as sim, title_mark};

use Align::{Left as L, Right as R};

fn cell_name(c: &Cell, m: Marks) -> String {
    format!("{} / {}{}", c.provider, c.model, m.row(c.simulated))
}

/// A row of one cell, keyed by it and flagged as its figures are.
fn cell_row(t: &mut Table, c: &Cell, cells: Vec<String>) {
    t.push(RowKey::Cell(c.key()), c.simulated, cells);
}

/// A rate in % with its interval: `86.7 % [70.3, 94.7]`.
fn pct(r: &crate::report::model::Rate) -> String {
    r.figure().map_or("-".into(), |f| f.to_string())
}

/// Seconds with two decimals, and its interval: `8.26 [7.90, 8.70]` (the header names
/// the unit); its n where its n allows no interval.
fn seconds(e: Option<Estimate>, n: usize) -> String {
    let Some(e) = e else { return "-".into() };
    let f = e.figure(Unit::Seconds).bare();
    if e.too_few {
        f.n(n).to_string()
    } else {
        f.to_string()
    }
}

fn ms(e: Option<Estimate>) -> String {
    e.map_or("-".into(), |e| {
        Figure::new(e.value, Unit::Millis).bare().to_string()
    })
}

/// A judge cell's overall mean: with its interval, or saying that every score was the same
/// (never a zero-width [x, x]).
fn judge_mean(j: &crate::report::model::JudgeCell) -> String {
    match (j.overall, j.all_equal) {
        (Some(e), true) if e.interval.is_none() => {
            format!("{} (all {} equal)", e.figure(Unit::Score), j.n)
        }
        (e, _) => estimate_2(e.as_ref()),
    }
}

/// A rate in percent with its interval and n: `91.7 % [64.6, 98.5] (n 12)`.
fn pct_n(r: &crate::report::model::Rate) -> String {
    match r.figure() {
        Some(f) if r.n > 0 => f.n(r.n).to_string(),
        _ => "-".into(),
    }
}

fn estimate_2(e: Option<&Estimate>) -> String {
    e.map_or("-".into(), |e| e.figure(Unit::Score).to_string())
}

fn tag_text(t: &TagTally) -> String {
    let rate = t.rate().map_or("-".into(), percent);
    if t.not_scored > 0 {
        format!("{rate} ({}, {} ns)", t.scored(), t.not_scored)
    } else {
        format!("{rate} ({})", t.scored())
    }
}

/// Every table of the report, in reading order.
pub fn tables(r: &Report) -> Vec<Table> {
    let m = Marks::of(r);
    let mut out = super::over_time_tables::comparison(r);
    cells_by_model(r, m, &mut out);
    out.push(quality(r, m));
    out.push(per_turn(r, m));
    out.extend(super::latency_tables::ttft_by_turn(r));
    out.extend(super::latency_tables::goodput(r));
    out.push(reliability(r, m));
    out.extend(context_overflow(r, m));
    out.push(cache_and_cost(r, m));
    out.extend(super::over_time_tables::trend(r));
    if !r.checks.tags.is_empty() {
        out.push(by_tag(r, m));
    }
    out.extend(super::survival_tables::tables(r));
    out.extend(super::consistency_tables::tables(r));
    for s in &r.judges {
        out.push(judge(r, s, m));
    }
    out.extend(agreement(&r.agreement, m));
    for p in &r.pairwise {
        out.push(pairwise(p, m));
    }
    if !r.anchors.is_empty() {
        out.push(anchors(r, m));
    }
    if !r.check_agreement.is_empty() {
        out.push(check_agreement(r, m));
    }
    if let Some(h) = &r.human_agreement {
        out.push(human_agreement(h, m));
    }
    out.extend(super::judge_card_tables::tables(r));
    out.extend(super::replay_tables::tables(r));
    out.retain(|t| !t.rows.is_empty());
    out
}

fn cells_by_model(r: &Report, m: Marks, out: &mut Vec<Table>) {
    let mut labels: Vec<&str> = r.cells.iter().map(|c| c.model.as_str()).collect();
    labels.dedup();
    let last = labels.len().saturating_sub(1);
    // The report's order (grouped by label, sorted by `--sort`); every cell once even if
    // the order is missing some.
    let mut order: Vec<usize> = r
        .order
        .iter()
        .copied()
        .filter(|&i| i < r.cells.len())
        .collect();
    order.extend((0..r.cells.len()).filter(|i| !r.order.contains(i)));
    for (k, label) in labels.into_iter().enumerate() {
        let mut t = Table::new(
            TableKey::Cells {
                model: label.to_string(),
            },
            format!("CELLS · {label}"),
            Some(format!(
                "by {}{} · conversation latency of completed conversations (s) · Δ vs fastest % [paired interval, Holm-adjusted] · success [95 % interval]",
                r.sort.name(),
                r.sort.order_word(),
            )),
            &[
                ("provider", L),
                ("n", R),
                ("done", R),
                ("success", R),
                ("fail", R),
                ("p50 s", R),
                ("Δ p50 %", R),
                ("p95 s", R),
                ("Δ p95 %", R),
                ("p99 s", R),
                ("Δ p99 %", R),
            ],
        )
        .simulated(m.all);
        for &i in order.iter().filter(|&&i| r.cells[i].model == label) {
            let c = &r.cells[i];
            let p = &c.conversation_latency;
            let d = r.vs_fastest.get(i);
            cell_row(
                &mut t,
                c,
                vec![
                    format!("{}{}", c.provider, m.row(c.simulated)),
                    c.reliability.attempted.to_string(),
                    c.reliability.completed.to_string(),
                    pct(&c.reliability.success),
                    fail_pct(&c.reliability.success),
                    seconds(p.p50, p.n),
                    delta(d.and_then(|d| d.p50.as_ref())),
                    seconds(p.p95, p.n),
                    delta(d.and_then(|d| d.p95.as_ref())),
                    seconds(p.p99, p.n),
                    delta(d.and_then(|d| d.p99.as_ref())),
                ],
            );
        }
        if k == last {
            t.footnotes.push(
                "n: conversations attempted (failed ones included, interrupted ones aside); done: completed; fail: not completed. \
                 Latency: completed conversations only; intervals are distribution-free, from order \
                 statistics, and exist from 6 values for p50, 59 for p95, 299 for p99: below that \
                 a percentile shows its n instead."
                    .into(),
            );
            t.footnotes.push(
                "Δ vs fastest: this provider's percentile over the fastest provider's of the same model label, \
                 as % slower (0: the fastest). Its interval is paired: the ratio over the (scenario, repeat) slots \
                 both completed, cluster bootstrap over scenarios, at the headline family's Holm-adjusted level; \
                 [—]: no interval, so the difference is not established by this column: fewer pairs than the \
                 calibration needs (p50 10, p95 40), fewer than 3 scenarios, no spread, or p99 (no calibrated \
                 paired comparison). Sort: --sort p50|p95|p99 (fastest first), success|quality (highest first)."
                    .into(),
            );
        }
        out.push(t);
    }
}

/// Failed share (not completed ÷ attempted) in %: `6.7 %`.
fn fail_pct(r: &crate::report::model::Rate) -> String {
    if r.n == 0 {
        return "-".into();
    }
    percent((r.n - r.k.min(r.n)) as f64 / r.n as f64)
}

/// Δ vs fastest as `+12 [+5, +20]` (the header says %), `0` for the fastest, `+12 [—]`
/// without an interval.
fn delta(d: Option<&crate::report::vs_fastest::Delta>) -> String {
    let Some(d) = d else { return "-".into() };
    if d.is_fastest {
        return "0".into();
    }
    let f = Figure::new(d.ratio, Unit::Change).bare();
    match d.interval {
        Some(i) => f.within(Some(i)).to_string(),
        None => format!("{f} [—]"),
    }
}

fn quality(r: &Report, m: Marks) -> Table {
    let judge = r.primary_judge();
    let judge_head = match judge {
        Some((_, s)) => format!("judge{}", if s.simulated { HEADER_MARK } else { "" }),
        None => "judge".into(),
    };
    let mut t = Table::new(
        TableKey::Quality,
        "QUALITY",
        Some(
            "task success, usable turns and checks passed, judge mean score [95 % interval]".into(),
        ),
        &[
            ("cell", L),
            ("task success", R),
            ("usable", R),
            ("checks (completed)", R),
            (&judge_head, R),
            ("judged / attempted", R),
        ],
    )
    .simulated(m.all);
    for (i, c) in r.cells.iter().enumerate() {
        let j = judge.and_then(|(_, s)| s.cells.get(i));
        cell_row(
            &mut t,
            c,
            vec![
                cell_name(c, m),
                pct_n(&c.checks.task_success),
                pct(&c.usable),
                pct(&c.checks.pass),
                j.map_or("-".into(), judge_mean),
                j.map_or("-".into(), |j| format!("{} / {}", j.n, j.attempted)),
            ],
        );
    }
    let mut usable =
        "usable: HTTP success, a complete stream, a non-empty answer, an accepted finish \
         reason and the structure its checks demand"
            .to_string();
    if let Some(sla) = r.meta.sla_ms {
        usable.push_str(&format!(", within --sla-ms {sla:.0} E2E"));
    }
    usable.push_str(
        " (of turns sent). task success: completed and every current check passed, per \
         attempted conversation (a failed one counts as not meeting the bar; n attempted). \
         checks: current check results passed ÷ scored, over completed conversations only.",
    );
    t.footnotes.push(usable);
    if let Some((_, s)) = judge {
        t.footnotes.push(format!(
            "judge: {} by {}{}: mean over conversations of each judgment's criteria averaged; judged: conversations scored.",
            s.rubric,
            s.judge,
            sim(s.simulated),
        ));
    }
    t
}

fn pcts(p: &Percentiles) -> [String; 3] {
    [ms(p.p50), ms(p.p95), ms(p.p99)]
}

fn per_turn(r: &Report, m: Marks) -> Table {
    let mut t = Table::new(
        TableKey::PerTurn,
        "PER TURN",
        Some("turns of completed conversations (ms; decode in output tokens/s)".into()),
        &[
            ("cell", L),
            ("turns", R),
            ("TTFT p50", R),
            ("p95", R),
            ("p99", R),
            ("TTFA p50", R),
            ("p95", R),
            ("E2E p50", R),
            ("p95", R),
            ("p99", R),
            ("tok/s", R),
            ("vis tok", R),
            ("ITL n", R),
            ("ITL p50", R),
            ("p95", R),
            ("p99", R),
            ("TPOT p50", R),
        ],
    )
    .simulated(m.all);
    let mut unmeasured = 0;
    for c in &r.cells {
        let s = &c.turns;
        unmeasured += s.itl_ms.turns_unmeasured;
        if s.e2e.n == 0 && s.visible_tokens.n == 0 {
            continue;
        }
        let [a, b, d] = pcts(&s.ttft);
        let [e, f, _] = pcts(&s.ttfa);
        let [g, h, i] = pcts(&s.e2e);
        cell_row(
            &mut t,
            c,
            vec![
                cell_name(c, m),
                s.e2e.n.max(s.visible_tokens.n).to_string(),
                a,
                b,
                d,
                e,
                f,
                g,
                h,
                i,
                s.decode_tps.value.map_or("-".into(), |v| {
                    Figure::new(v, Unit::TokensPerSecond).bare().to_string()
                }),
                s.visible_tokens
                    .value
                    .map_or("-".into(), |v| format!("{v:.0}")),
                s.itl_ms.n.to_string(),
                ms(s.itl_ms.p50),
                ms(s.itl_ms.p95),
                ms(s.itl_ms.p99),
                ms(s.tpot_ms.p50),
            ],
        );
    }
    t.footnotes.push(
        "TTFT: first reasoning or answer text; TTFA: first visible answer text; E2E: end of stream. \
         tok/s: median of output tokens ÷ (E2E − TTFT); vis tok: median visible answer tokens (o200k_base)."
            .into(),
    );
    t.footnotes.push(itl_note());
    if unmeasured > 0 {
        t.footnotes.push(format!(
            "ITL: {unmeasured} turns have no stored event offsets and kinds (imported, not streamed, \
             or collected before store migration 012): no ITL for them, never 0."
        ));
    }
    t
}

/// What ITL and TPOT are.
fn itl_note() -> String {
    "ITL: gaps between consecutive answer- or reasoning-bearing stream events, pooled over \
     the turns (ITL n: gaps); TPOT: median of (E2E − TTFT) ÷ (output tokens − 1) over the \
     turns of ≥ 2 output tokens (their n: tpot_ms.n in JSON)."
        .to_string()
}

fn reliability(r: &Report, m: Marks) -> Table {
    let mut t = Table::new(
        TableKey::Reliability,
        "RELIABILITY",
        Some("conversations and turns".into()),
        &[
            ("cell", L),
            ("attempted", R),
            ("completed", R),
            ("interrupted", R),
            ("turns answered", R),
            ("failures by class", L),
        ],
    )
    .simulated(m.all);
    for c in &r.cells {
        let rel = &c.reliability;
        cell_row(
            &mut t,
            c,
            vec![
                cell_name(c, m),
                rel.attempted.to_string(),
                rel.completed.to_string(),
                rel.interrupted.to_string(),
                format!("{}/{}", rel.turns_answered, rel.turns_sent),
                if rel.failures.is_empty() {
                    "-".into()
                } else {
                    crate::report::model::failure_text(&rel.failures)
                },
            ],
        );
    }
    t.footnotes.push(
        "A failed turn ends its conversation; failed conversations stay in every denominator and never in latency."
            .into(),
    );
    t
}

/// CONTEXT OVERFLOW: each cell whose conversations outgrew the server's context window, at
/// which turn and with the sizes the server stated; the labels that overflow at one provider
/// but not another under it. Nothing when no conversation overflowed.
fn context_overflow(r: &Report, m: Marks) -> Option<Table> {
    let s = r.context_overflow.as_ref()?;
    let mut t = Table::new(
        TableKey::ContextOverflow,
        "CONTEXT OVERFLOW",
        Some("conversations that outgrew the context window the provider serves the model with; sizes as the server stated them (tokens)".into()),
        &[
            ("cell", L),
            ("overflowed", R),
            ("at turn", L),
            ("prompt", R),
            ("window", R),
        ],
    )
    .simulated(m.all);
    for f in &s.cells {
        let key = crate::report::keys::CellKey::new(&f.provider, &f.model);
        let turns: Vec<String> = if f.replay {
            f.sessions
                .iter()
                .map(|x| format!("{} r{}: {}", x.session, x.round, x.turn))
                .collect()
        } else {
            f.turns
                .iter()
                .map(|(turn, n)| {
                    if f.turns.len() == 1 {
                        turn.to_string()
                    } else {
                        format!("{turn} ({n})")
                    }
                })
                .collect()
        };
        t.push(
            RowKey::Cell(key),
            f.simulated,
            vec![
                format!(
                    "{} / {}{}{}",
                    f.provider,
                    f.model,
                    if f.replay { " (replay)" } else { "" },
                    m.row(f.simulated)
                ),
                format!("{}/{}", f.conversations, f.attempted),
                turns.join(", "),
                f.prompt_tokens.map_or("-".into(), |p| {
                    format!("{} (n {})", thousands(p.round() as u64), f.prompt_stated)
                }),
                f.window_tokens.map_or("-".into(), |w| thousands(w as u64)),
            ],
        );
    }
    t.footnotes.extend(s.cells.iter().map(|f| f.text.clone()));
    t.footnotes
        .extend(s.contrasts.iter().map(|c| c.text.clone()));
    t.footnotes.push(
        "A context overflow (class context_overflow) is the workload outgrowing the window this provider serves the model with, not a serving fault; it is never retried and stays in every denominator (RELIABILITY). at turn: the turn (1-based; for a replayed session, the session's turn) that overflowed, with how many conversations where they differ; prompt: median prompt tokens the server stated, over n; window: the context window it stated."
            .into(),
    );
    Some(t)
}

fn cache_and_cost(r: &Report, m: Marks) -> Table {
    let mut t = Table::new(
        TableKey::CacheAndCost,
        "CACHE AND COST",
        Some("turns after the first; USD from the run's prices".into()),
        &[
            ("cell", L),
            ("cache hit", R),
            ("cold turns", R),
            ("per success", R),
            ("per 1k turns", R),
            ("turns priced", R),
        ],
    )
    .simulated(m.all);
    for c in &r.cells {
        let k = &c.cache;
        let (hit, cold) = match k.hit_rate {
            Some(h) => (
                format!("{} ({})", percent(h), k.turns_reported),
                k.cold_turns.to_string(),
            ),
            None => ("not reported".into(), "-".into()),
        };
        let (per_success, per_k, priced) = if c.cost.priced {
            (
                usd(c.cost.per_success_usd),
                usd(c.cost.per_1000_turns_usd),
                format!("{}/{}", c.cost.turns_priced, c.reliability.turns_sent),
            )
        } else {
            ("no price".into(), "no price".into(), "-".into())
        };
        cell_row(
            &mut t,
            c,
            vec![cell_name(c, m), hit, cold, per_success, per_k, priced],
        );
    }
    t.footnotes.push(
        "cache hit: cached ÷ prompt tokens (n turns reporting); cold: < 10 % cached. \
         per success: all priced turns' cost ÷ completed conversations."
            .into(),
    );
    t
}

fn by_tag(r: &Report, m: Marks) -> Table {
    let mut columns: Vec<(&str, Align)> = vec![("cell", L)];
    columns.extend(r.checks.tags.iter().map(|t| (t.as_str(), R)));
    let mut t = Table::new(
        TableKey::QualityByTag,
        "QUALITY BY TAG",
        Some("check pass rate (n scored; ns: not scored)".into()),
        &columns,
    )
    .simulated(m.all);
    t.footnotes.push(
        "Current check definitions only; checks of conversations that did not complete are not scored."
            .into(),
    );
    for (c, checks) in r.cells.iter().zip(&r.checks.cells) {
        if checks.by_tag.is_empty() {
            continue;
        }
        let mut row = vec![cell_name(c, m)];
        row.extend(
            r.checks
                .tags
                .iter()
                .map(|tag| checks.by_tag.get(tag).map_or("-".into(), tag_text)),
        );
        cell_row(&mut t, c, row);
    }
    t
}

fn judge(r: &Report, s: &JudgeSection, m: Marks) -> Table {
    let anchors = r
        .anchors
        .iter()
        .find(|a| a.rubric == s.rubric && a.judge == s.judge && a.simulated == s.simulated);
    let mut t = Table::new(
        TableKey::Judge(s.key()),
        format!("JUDGE · {} by {} ({})", s.rubric, s.judge, s.judge_model),
        Some(format!(
            "{}mean score [95 % interval] over conversations",
            match anchors {
                Some(a) if !a.passed => format!(
                    "FAILED REFERENCE ANCHORS ({} of {} references above): not evidence · ",
                    a.above.k, a.pairs
                ),
                Some(a) => format!(
                    "anchors passed ({} of {} references above) · ",
                    a.above.k, a.pairs
                ),
                None => String::new(),
            }
        )),
        &[
            ("cell", L),
            ("criterion", L),
            ("mean", R),
            ("n", R),
            ("unscored", R),
            ("replicate spread", R),
        ],
    )
    .simulated(s.simulated || m.all);
    // The cells this judge's card flags as of its own model family.
    let own_family: Vec<&str> = r
        .judge_card
        .iter()
        .filter(|k| {
            k.rubric == s.rubric
                && k.judge == s.judge
                && k.simulated == s.simulated
                && k.judge_model == s.judge_model
        })
        .flat_map(|k| k.self_family.iter().flatten())
        .map(|f| f.cell.as_str())
        .collect();
    for (c, j) in r.cells.iter().zip(&s.cells) {
        if j.n == 0 && j.unparseable + j.judge_errors == 0 {
            continue;
        }
        let name = if own_family.contains(&format!("{} / {}", c.provider, c.model).as_str()) {
            format!("{} (judge's own family)", cell_name(c, m))
        } else {
            cell_name(c, m)
        };
        let unscored = format!("{} unparseable, {} errors", j.unparseable, j.judge_errors);
        let spread = j.replicate_spread.map_or("-".into(), |s| {
            format!(
                "{} ({} conv.)",
                Figure::new(s, Unit::Score),
                j.replicate_conversations
            )
        });
        let simulated = c.simulated || s.simulated;
        t.push(
            RowKey::Cell(c.key()),
            simulated,
            vec![
                name,
                "overall".into(),
                judge_mean(j),
                format!("{} of {} attempted", j.n, j.attempted),
                unscored,
                spread,
            ],
        );
        for (name, e) in &j.criteria {
            let key = RowKey::CellCriterion {
                cell: c.key(),
                criterion: name.clone(),
            };
            t.push(
                key,
                simulated,
                vec![
                    String::new(),
                    name.clone(),
                    estimate_2(Some(e)),
                    j.n.to_string(),
                    String::new(),
                    String::new(),
                ],
            );
        }
    }
    t.footnotes.push(
        "Replicates of a conversation are averaged first; spread: mean |difference| between replicates of one conversation."
            .into(),
    );
    t
}

fn check_agreement(r: &Report, m: Marks) -> Table {
    let mut t = Table::new(
        TableKey::ChecksJudge,
        "CHECKS × JUDGE",
        Some("Spearman's ρ over conversations: criterion score vs pass rate of the checks with its tags [95 % interval]".into()),
        &[
            ("judge", L),
            ("criterion", L),
            ("tags", L),
            ("n conv.", R),
            ("ρ", R),
            ("reading", L),
        ],
    )
    .simulated(r.check_agreement.iter().any(|c| c.simulated) || m.all);
    for c in &r.check_agreement {
        let key = RowKey::Criterion {
            judge: Some(c.key()),
            criterion: c.criterion.clone(),
        };
        t.push(
            key,
            c.simulated,
            vec![
                format!("{} · {}{}", c.rubric, c.judge, sim(c.simulated)),
                c.criterion.clone(),
                c.tags.join(", "),
                c.n.to_string(),
                c.rho.map_or("-".into(), |v| {
                    Figure::new(v, Unit::Signed).within(c.interval).to_string()
                }),
                c.verdict.clone(),
            ],
        );
    }
    t.footnotes.push(
        "n conv.: conversations with both a score for the criterion (replicates averaged) and a scored check of its tags. Criteria compared: correction_handling ~ superseded_instruction, state_tracking ~ retained_constraint, instruction_following ~ both, final_answer_usability ~ json_validity, required_fields, format.".into(),
    );
    t
}

/// JUDGE × HUMAN LABELS: one row per judge × criterion (and `completed`).
fn human_agreement(sections: &[HumanAgreementSection], m: Marks) -> Table {
    let mut t = Table::new(
        TableKey::HumanAgreement,
        "JUDGE × HUMAN LABELS",
        Some("weighted Cohen's κ (quadratic) of each judge with the people's labels [95 % interval over conversations]".into()),
        &[
            ("judge", L),
            ("raters", L),
            ("criterion", L),
            ("n conv.", R),
            ("κ", R),
        ],
    )
    .simulated(sections.iter().any(|s| s.simulated) || m.all);
    for s in sections {
        let judge = JudgeKey {
            rubric: s.rubric.clone(),
            judge: s.judge.clone(),
            judge_model: s.judge_model.clone(),
            simulated: s.simulated,
        };
        for (i, a) in s.agreement.iter().enumerate() {
            t.push(
                RowKey::Criterion {
                    judge: Some(judge.clone()),
                    criterion: a.criterion.clone(),
                },
                s.simulated,
                vec![
                    if i == 0 {
                        format!("{} · {}{}", s.rubric, s.judge, sim(s.simulated))
                    } else {
                        String::new()
                    },
                    if i == 0 {
                        s.raters.join(", ")
                    } else {
                        String::new()
                    },
                    a.criterion.clone(),
                    a.n.to_string(),
                    a.weighted_kappa.map_or("-".into(), |v| {
                        Figure::new(v, Unit::Signed).within(a.interval).to_string()
                    }),
                ],
            );
        }
    }
    if sections.is_empty() {
        t.footnotes.push(
            "human labels are stored, but no judge has scored their rubric for the selected conversations: run `turnbench judge` with it".into(),
        );
    }
    t.footnotes.push(
        "A judge's score is its mean over replicates, the people's the mean over raters; completed compares the shares that said yes (one each: the unweighted κ). κ near 1: the judge scores as people do; near 0: no better than chance. See docs/judge.md \"Human labels\".".into(),
    );
    t
}

fn anchors(r: &Report, m: Marks) -> Table {
    let mut t = Table::new(
        TableKey::ReferenceAnchors,
        "REFERENCE ANCHORS",
        Some("does each judge score the reference conversation above the variants its defects spoil?".into()),
        &[
            ("judge", L),
            ("rubric", L),
            ("pairs", R),
            ("above %", R),
            ("tied", R),
            ("below", R),
            ("check", L),
        ],
    )
    .simulated(r.anchors.iter().any(|a| a.simulated) || m.all);
    for a in &r.anchors {
        t.push(
            RowKey::Judge(a.key()),
            a.simulated,
            vec![
                format!("{} ({}){}", a.judge, a.judge_model, sim(a.simulated)),
                a.rubric.clone(),
                a.pairs.to_string(),
                pct(&a.above),
                a.ties.to_string(),
                a.below.to_string(),
                if a.passed { "passed" } else { "FAILED" }.into(),
            ],
        );
    }
    t.footnotes.push(
        "A pair is one scenario's reference conversation and one variant a [[defect]] of its checks file spoils, compared by the judge's mean criterion score; passed: the reference is strictly above in more than 50 % of pairs at the lower end of the Wilson 95 % interval (ties count against)."
            .into(),
    );
    t
}

fn pairwise(p: &PairwiseSection, m: Marks) -> Table {
    let mut t = Table::new(
        TableKey::Pairwise(p.key()),
        format!("PAIRWISE · {} by {} ({})", p.rubric, p.judge, p.judge_model),
        Some(format!(
            "against {} · % of pairs [95 % interval over pairs]",
            p.baseline.join(", ")
        )),
        &[
            ("cell", L),
            ("pairs", R),
            ("win", R),
            ("tie", R),
            ("loss", R),
            ("consistent", R),
            ("vs baseline", L),
        ],
    )
    .simulated(p.simulated || m.all);
    for c in &p.cells {
        let net = c.net.map_or("-".into(), |e| {
            format!("{} (net {})", c.verdict, e.figure(Unit::Signed))
        });
        t.push(
            RowKey::Cell(c.key()),
            c.simulated || p.simulated,
            vec![
                format!("{} / {}{}", c.provider, c.model, m.row(c.simulated)),
                c.n.to_string(),
                pct(&c.win),
                format!("{} ({} inconsistent)", pct(&c.tie), c.inconsistent),
                pct(&c.loss),
                pct(&c.consistency),
                net,
            ],
        );
    }
    t.footnotes.push(format!(
        "Each pair (same run, scenario, repeat) asked twice, the baseline shown first and then second; a verdict that changes with position is inconsistent and counts as a tie. Position consistency over all {} scored pairs: {}{}. Net: win +1, tie 0, loss −1, averaged; better or worse only when its interval excludes 0.",
        p.consistency.n,
        pct(&p.consistency),
        if p.unscored > 0 {
            format!("; {} pairs unscored (in no rate)", p.unscored)
        } else {
            String::new()
        }
    ));
    if p.one_position > 0 {
        t.footnotes.push(format!(
            "{} pairs judged in one position only (the swapped ask is missing): in no verdict; run the same `turnbench judge --pairwise` again to ask the other.",
            p.one_position
        ));
    }
    t
}

/// One table per agreement section; the reading guide under the last.
fn agreement(sections: &[AgreementSection], m: Marks) -> Vec<Table> {
    let mut out: Vec<Table> = sections
        .iter()
        .map(|s| {
            let between = match s.kind {
                AgreementKind::Replicates => format!(
                    "{} replicates of {}{}",
                    s.coders,
                    s.judges.join(", "),
                    s.varied
                        .as_deref()
                        .map_or(String::new(), |v| format!(" (varying {v})"))
                ),
                AgreementKind::Judges => {
                    let people = s.judges.iter().any(|j| crate::store::labels::is_human(j));
                    let who = if people { "raters" } else { "judges" };
                    format!("{} {who}: {}", s.coders, s.judges.join(", "))
                }
            };
            let mut t = Table::new(
                TableKey::Agreement {
                    rubric: s.rubric.clone(),
                    kind: s.kind,
                },
                format!("JUDGE AGREEMENT · {} · {between}", s.rubric),
                Some("Krippendorff's α (ordinal) [95 % interval over conversations]".into()),
                &[
                    ("criterion", L),
                    ("α", R),
                    ("n conv.", R),
                    ("scores", R),
                    ("reading", L),
                ],
            )
            .simulated(s.simulated || m.all);
            for c in &s.criteria {
                let key = RowKey::Criterion {
                    judge: None,
                    criterion: c.criterion.clone(),
                };
                t.push(
                    key,
                    s.simulated,
                    vec![
                        c.criterion.clone(),
                        alpha_text(c),
                        c.n.to_string(),
                        c.values.to_string(),
                        alpha_reading(c).into(),
                    ],
                );
            }
            t
        })
        .collect();
    if let Some(last) = out.last_mut() {
        last.footnotes.push(
            "α: 1 perfect agreement, 0 what chance gives; Krippendorff's thresholds 0.8 (reliable) and 0.667 (tentative conclusions only), read off the interval's lower end. n conv.: conversations scored at least twice; replicates vary what should not matter (criteria order, label, nonce) or sample at temperature > 0; between judges, each judge's first scored replicate.".into(),
        );
    }
    out
}

fn alpha_text(c: &CriterionAgreement) -> String {
    match (c.alpha, c.interval) {
        (Some(a), i) => Figure::new(a, Unit::Score).within(i).to_string(),
        (None, _) if c.values >= 2 => "undefined".into(),
        (None, _) => "-".into(),
    }
}

fn alpha_reading(c: &CriterionAgreement) -> &'static str {
    match (c.alpha, c.interval) {
        (None, _) if c.values >= 2 => "no variation in the scores",
        (None, _) => "too few scores",
        (Some(_), None) => "too few conversations for an interval",
        (Some(_), Some(i)) if i.lo >= 0.8 => "reliable",
        (Some(_), Some(i)) if i.lo >= 0.667 => "tentative",
        (Some(_), Some(i)) if i.hi < 0.667 => "unreliable",
        (Some(_), Some(_)) => "not established (interval spans 0.667)",
    }
}

/// The one-line run card: store, runs, when, how many providers and models.
pub fn run_line(r: &Report) -> String {
    let m = &r.meta;
    let runs = match m.runs.as_slice() {
        [] => "no runs".to_string(),
        [one] => format!(
            "run {} \"{}\"{} ({}{})",
            one.id,
            one.name,
            collected_on(one),
            one.source,
            one.definitions
                .as_ref()
                .map_or(String::new(), |d| format!(", scenarios {d}"))
        ),
        many => format!(
            "runs {}",
            many.iter()
                .map(|r| format!("{} \"{}\"{}", r.id, r.name, collected_on(r)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let date = m.generated_at.get(..10).unwrap_or(&m.generated_at);
    format!(
        "turnbench report · store {} · {runs} · {date} · {} × {}{}",
        m.store,
        plural(m.providers, "provider"),
        plural(m.models, "model"),
        title_mark(r.any_simulated())
    )
}

/// " on NAME" for a run that records its collector (docs/store.md); nothing otherwise.
fn collected_on(run: &crate::report::model::RunCard) -> String {
    run.collector
        .as_ref()
        .map_or(String::new(), |c| format!(" on {c}"))
}

/// The second card line: scenarios, checks, judges, statistics.
pub fn scope_line(r: &Report) -> String {
    let m = &r.meta;
    let judges = if r.judges.is_empty() {
        "no judge".to_string()
    } else {
        r.judges
            .iter()
            .map(|s| {
                format!(
                    "judge {} by \"{}\" ({})",
                    s.rubric,
                    s.judge,
                    if s.simulated { "simulated" } else { "real" }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{} scenarios · {judges} · checks {} definitions · intervals {:.0} %; claims paired by scenario, Holm per headline; agreement bootstrap {} resamples, seeded",
        m.scenarios,
        m.check_definitions,
        m.bootstrap.level * 100.0,
        thousands(m.bootstrap.resamples as u64)
    )
}

/// Headlines grouped under a short name: the model label for latency, else the kind.
pub fn headline_groups(r: &Report) -> Vec<(String, Vec<String>)> {
    use crate::report::model::HeadlineKind as K;
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for h in &r.headlines {
        let group = match h.kind {
            K::LatencyP50 | K::LatencyP95 => h.model.clone().unwrap_or_default(),
            K::Reliability => match &h.model {
                Some(label) => format!("reliability · {label}"),
                None => "reliability across models".into(),
            },
            K::QualityChecks | K::QualityJudge | K::ConstraintRetention => match &h.model {
                Some(label) => format!("quality · {label}"),
                None => "quality across models".into(),
            },
            K::ContextOverflow => "context overflow".into(),
            K::Frontier => match &h.model {
                Some(label) => format!("quality × speed · {label}"),
                None => "quality × speed".into(),
            },
            K::TtftSlope => match &h.model {
                Some(label) => format!("TTFT as the prompt grows · {label}"),
                None => "TTFT as the prompt grows across models".into(),
            },
            K::Goodput => match &h.model {
                Some(label) => format!("goodput · {label}"),
                None => "goodput across models".into(),
            },
            K::Flag => "flags".into(),
            K::Change => "against the baseline".into(),
        };
        match out.last_mut() {
            Some((g, lines)) if *g == group => lines.push(h.text.clone()),
            _ => out.push((group, vec![h.text.clone()])),
        }
    }
    out
}

/// `1 model`, `3 models`.
fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
