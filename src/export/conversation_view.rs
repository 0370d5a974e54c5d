//! One conversation in full, as HTML (the report's drill-down views, reached by
//! `#c-UID`) and as text (`turnbench show`). Formatting only: the data is
//! `crate::store::detail::ConversationDetail`. Every string from a transcript is escaped
//! in HTML and made inert on a terminal (control characters shown, not acted on).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use super::svg::esc;
use super::terminal_inert;
use crate::exchange::ToolCallLine;
use crate::report::drilldown::{Behind, ConversationViews, Drilldown};
use crate::report::keys::TableKey;
use crate::store::detail::{
    CheckDetail, ConversationDetail, PairwiseAsk, PairwiseDetail, Sent, TurnDetail,
};

/// Styles of the conversation views, added to the report's own.
pub const STYLE: &str = r#"
.conv{border:1px solid var(--line);border-radius:6px;padding:4px 14px 10px;margin:14px 0;scroll-margin-top:12px}
.conv:target{border-color:#0969da;box-shadow:0 0 0 3px #b6e3ff}
.conv h3{font-size:16px;margin:8px 0 4px}
.conv h4{font-size:14px;margin:12px 0 4px}
.oc{font-size:12px;font-weight:600;padding:0 6px;border-radius:3px;margin-left:6px;background:#eaeef2}
.oc.bad{background:#ffebe9;color:#a40e26}.oc.good{background:#dafbe1;color:var(--ok)}
.msg{white-space:pre-wrap;word-break:break-word;font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--soft);border-radius:4px;padding:6px 8px;margin:4px 0;max-height:28em;overflow:auto}
.msg.ans{background:#fff;border:1px solid var(--line)}
.msg.call{background:#fff;border:1px dashed var(--line)}
.role{font-size:12px;color:var(--muted);font-weight:600}
.tm{font-size:12.5px;color:var(--muted);margin:2px 0}
.err{color:#a40e26;font-size:13px;white-space:pre-wrap}
.ff{color:#a40e26;font-size:13px;font-weight:600;margin:2px 0}
td.why{white-space:pre-wrap;word-break:break-word;min-width:18em;max-width:46em}
td.fc{white-space:normal;min-width:16em}
td.lo{white-space:normal;min-width:10em}td.uid{white-space:normal;word-break:break-all;min-width:8em;font-size:12.5px}
td.sc{white-space:normal;min-width:12em;max-width:22em}
.turn{border-top:1px dashed var(--line);margin-top:8px}
details.behind{font-size:13px;margin:6px 0}details.behind summary{color:var(--muted);cursor:pointer}
ul.behind{margin:4px 0;padding-left:20px}ul.behind li{margin:2px 0;overflow-wrap:anywhere}
"#;

fn ms(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or("-".to_string(), |v| format!("{v:.0} ms"))
}

fn count(v: Option<i64>) -> String {
    v.map_or("-".to_string(), |v| v.to_string())
}

fn verdict(passed: Option<bool>) -> &'static str {
    match passed {
        Some(true) => "pass",
        Some(false) => "FAIL",
        None => "not scored",
    }
}

/// The fragment id of a conversation's view: `c-` and its uid.
pub fn anchor(uid: &str) -> String {
    format!("c-{uid}")
}

fn cell_name(c: &ConversationDetail) -> String {
    format!(
        "{} / {}{}",
        c.provider,
        c.label,
        crate::report::simulated::name_mark(c.simulated)
    )
}

fn timing_line(t: &TurnDetail) -> String {
    let mut s = format!(
        "pause before {} · TTFT {} · TTFA {} · E2E {} · tokens: prompt {}, completion {}, reasoning {}, cached {} · finish {} · outcome {}",
        ms(t.pause_ms),
        ms(t.ttft_ms),
        ms(t.ttfa_ms),
        ms(t.e2e_ms),
        count(t.prompt_tokens),
        count(t.completion_tokens),
        count(t.reasoning_tokens),
        count(t.cached_tokens),
        t.finish_reason.as_deref().unwrap_or("-"),
        t.outcome
    );
    if let Some(a) = t.attempts.filter(|a| *a > 1) {
        let _ = write!(s, " · {a} attempts");
    }
    if let Some(h) = t.http_status {
        let _ = write!(s, " · HTTP {h}");
    }
    s
}

fn explanation(k: &CheckDetail) -> String {
    let mut s = k.detail.clone().unwrap_or_default();
    if k.passed == Some(false)
        && let Some(d) = &k.description
    {
        if !s.is_empty() {
            s.push('\n');
        }
        let _ = write!(s, "expected: {d}");
    }
    s
}

/// The conversations section of the HTML report: an index linking to each view, then the
/// views. Nothing when the mode is `none`.
pub fn html_section(h: &mut String, d: &Drilldown) {
    if d.mode == ConversationViews::None {
        return;
    }
    let _ = write!(
        h,
        "<section id=\"conversations\"><h2>Conversations</h2><p class=\"fn\">{}</p>",
        esc(&format!(
            "{} conversation views (--conversations {}{}): {} selected{}. Each view shows every turn, the checks with their explanations and the judges' scores and rationales; a link ending in #c-UID opens one.",
            d.views.len(),
            mode_name(d.mode),
            if d.mode == ConversationViews::Failed {
                ": failed, failed a check, or scored in a judge criterion's lowest band; plus one passing example per cell"
            } else {
                ""
            },
            d.eligible,
            if d.left_out > 0 {
                format!(", {} left out over the cap of {}", d.left_out, d.cap)
            } else {
                String::new()
            }
        ))
    );
    if let Some(note) = d.cap_note() {
        let _ = write!(h, "<p class=\"fn\">{}</p>", esc(&note));
    }
    if d.views.is_empty() {
        h.push_str("</section>\n");
        return;
    }
    h.push_str(
        "<div class=\"tw\"><table><caption>Conversations shown in full</caption><thead><tr>\
         <th scope=\"col\">cell</th><th scope=\"col\">scenario</th><th class=\"r\" scope=\"col\">repeat</th>\
         <th scope=\"col\">outcome</th><th scope=\"col\">failed checks</th><th scope=\"col\">lowest judge scores</th>\
         <th scope=\"col\">view</th></tr></thead><tbody>",
    );
    let low = lowest_scores(d);
    for c in &d.views {
        let a = esc(&anchor(&c.uid));
        let failed: Vec<String> = c
            .checks
            .iter()
            .filter(|k| k.passed == Some(false))
            .map(|k| format!("<a href=\"#{a}-checks\">{}</a>", esc(&k.check_id)))
            .collect();
        let scores = low.get(c.uid.as_str()).map_or_else(
            || "-".to_string(),
            |v| {
                v.iter()
                    .map(|x| format!("<a href=\"#{a}-judge\">{}</a>", esc(x)))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        );
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"r\">{}</td><td>{}</td><td class=\"fc\">{}</td><td class=\"lo\">{scores}</td><td class=\"uid\"><a href=\"#{a}\">{}</a></td></tr>",
            esc(&cell_name(c)),
            esc(c.scenario.as_deref().unwrap_or("-")),
            c.repeat,
            esc(&c.outcome),
            if failed.is_empty() {
                "-".to_string()
            } else {
                failed.join(", ")
            },
            esc(&c.uid)
        );
    }
    h.push_str("</tbody></table></div>");
    let shown: HashSet<&str> = d.views.iter().map(|c| c.uid.as_str()).collect();
    for c in &d.views {
        html_view(h, c, &shown);
    }
    h.push_str("</section>\n");
}

/// Per conversation with a view: the judge criteria it scored in the lowest band of
/// (`criterion ≤ band`), the reason a passing conversation can be among the views.
fn lowest_scores(d: &Drilldown) -> HashMap<&str, Vec<String>> {
    let mut out: HashMap<&str, Vec<String>> = HashMap::new();
    for b in d.behind.iter().filter(|b| b.judge.is_some()) {
        let label = match b.band {
            Some(band) => format!("{} ≤ {band}", b.what),
            None => b.what.clone(),
        };
        for (uid, _) in &b.shown {
            let v = out.entry(uid.as_str()).or_default();
            if !v.contains(&label) {
                v.push(label.clone());
            }
        }
    }
    out
}

/// Under a report table: the conversations behind its rows (a failure class, a judge
/// criterion's lowest band), per cell, each uid a link to its view in this file, and how
/// many have none here. Nothing when the file has no views or the table has no such rows.
/// The rows are found by the table's key ([`Behind::table`]), never by its title.
pub fn behind_table(h: &mut String, table: &TableKey, d: &Drilldown) {
    if d.mode == ConversationViews::None {
        return;
    }
    let rows: Vec<&Behind> = d.behind.iter().filter(|b| b.table() == *table).collect();
    let Some(first) = rows.first() else {
        return;
    };
    let _ = write!(
        h,
        "<details class=\"behind\" open><summary>{}</summary><ul class=\"behind\">",
        esc(if first.judge.is_some() {
            "Conversations behind the lowest scores: each criterion's lowest band, per cell"
        } else {
            "Conversations behind the failures: each failure class, per cell"
        })
    );
    for b in rows {
        let what = match b.band {
            Some(band) => format!("{} ≤ {band}", b.what),
            None => b.what.clone(),
        };
        let links: Vec<String> = b
            .shown
            .iter()
            .map(|(u, name)| {
                format!(
                    "<a href=\"#{}\" title=\"{}\">{}</a>",
                    esc(&anchor(u)),
                    esc(u),
                    esc(name)
                )
            })
            .collect();
        let missing = b.total.saturating_sub(b.shown.len() as u64);
        let _ = write!(
            h,
            "<li>{} · {}: {}{}{}</li>",
            esc(&b.cell),
            esc(&what),
            b.total,
            if links.is_empty() {
                String::new()
            } else {
                format!(" — {}", links.join(", "))
            },
            if missing > 0 {
                esc(&format!(
                    " ({missing} without a view here: --conversations {}, cap {}; `turnbench show CONVERSATION` prints one)",
                    mode_name(d.mode),
                    d.cap
                ))
            } else {
                String::new()
            }
        );
    }
    h.push_str("</ul></details>");
}

fn mode_name(m: ConversationViews) -> &'static str {
    match m {
        ConversationViews::Failed => "failed",
        ConversationViews::All => "all",
        ConversationViews::None => "none",
    }
}

/// One conversation's view: `<article id="c-UID">`: its heading, identity, checks,
/// judgments, pairwise verdicts and turns. `shown`: the uids with a view in the same file
/// (a pairwise opponent is linked only when it has one).
pub fn html_view(h: &mut String, c: &ConversationDetail, shown: &HashSet<&str>) {
    let a = esc(&anchor(&c.uid));
    html_heading(h, c, &a);
    html_identity(h, c);
    html_checks(h, c, &a);
    html_judgments(h, c, &a);
    html_pairwise(h, c, &a, shown);
    for t in &c.turns {
        html_turn(h, t, &a, &first_failed_at(c, t.turn));
    }
    h.push_str("</article>\n");
}

fn html_heading(h: &mut String, c: &ConversationDetail, a: &str) {
    let failed = c.checks.iter().filter(|k| k.passed == Some(false)).count();
    let good = c.outcome == "completed" && failed == 0;
    let _ = write!(
        h,
        "<article class=\"conv\" id=\"{a}\"><h3>{} · {} · repeat {}<span class=\"oc {}\">{}</span></h3>",
        esc(&cell_name(c)),
        esc(c.scenario.as_deref().unwrap_or("no scenario")),
        c.repeat,
        if good { "good" } else { "bad" },
        esc(&if failed > 0 {
            format!("{}, {failed} checks failed", outcome_text(c))
        } else {
            outcome_text(c)
        })
    );
}

/// The conversation's outcome, and for a failed one the turn that ended it:
/// `context_overflow at turn 4`.
fn outcome_text(c: &ConversationDetail) -> String {
    let ended = c
        .turns
        .iter()
        .rev()
        .find(|t| t.outcome == c.outcome && t.outcome != "ok")
        .map(|t| t.turn);
    match ended {
        Some(turn) if c.outcome != "completed" && c.outcome != "interrupted" => {
            format!("{} at turn {turn}", c.outcome)
        }
        _ => c.outcome.clone(),
    }
}

fn html_identity(h: &mut String, c: &ConversationDetail) {
    let _ = write!(
        h,
        "<dl class=\"card\"><dt>uid</dt><dd>{}</dd><dt>conversation</dt><dd>{}{}</dd><dt>run</dt><dd>{} \"{}\"</dd><dt>model</dt><dd>{}</dd></dl>",
        esc(&c.uid),
        c.id,
        if c.counts {
            ""
        } else {
            " (interrupted; redone by a later conversation)"
        },
        c.run_id,
        esc(&c.run_name),
        esc(&c.model)
    );
}

fn html_checks(h: &mut String, c: &ConversationDetail, a: &str) {
    let _ = write!(h, "<h4 id=\"{a}-checks\">Checks</h4>");
    if c.checks.is_empty() {
        h.push_str("<p class=\"fn\">no current check results for this conversation</p>");
        return;
    }
    h.push_str("<div class=\"tw\"><table><thead><tr><th scope=\"col\">verdict</th><th scope=\"col\">check</th><th scope=\"col\">tag</th><th scope=\"col\">first failed</th><th scope=\"col\">explanation</th></tr></thead><tbody>");
    for k in &c.checks {
        // The turn is linked to its place in this view.
        let first = match k.first_failed_turn {
            Some(t) => format!("<a href=\"#{a}-t{t}\">turn {t}</a>"),
            None => "-".to_string(),
        };
        let _ = write!(
            h,
            "<tr><td><span class=\"oc {}\">{}</span></td><td>{}</td><td>{}</td><td>{first}</td><td class=\"why\">{}</td></tr>",
            match k.passed {
                Some(true) => "good",
                Some(false) => "bad",
                None => "",
            },
            verdict(k.passed),
            esc(&k.check_id),
            esc(&k.tag),
            esc(&explanation(k))
        );
    }
    h.push_str("</tbody></table></div>");
}

fn judge_name(judge: &str, model: &str, simulated: bool) -> String {
    format!(
        "{judge} ({model}{})",
        if simulated { ", simulated" } else { "" }
    )
}

fn html_judgments(h: &mut String, c: &ConversationDetail, a: &str) {
    if c.judgments.is_empty() {
        return;
    }
    let _ = write!(h, "<h4 id=\"{a}-judge\">Judgments</h4>");
    h.push_str("<div class=\"tw\"><table><thead><tr><th scope=\"col\">rubric</th><th scope=\"col\">judge</th><th class=\"r\" scope=\"col\">replicate</th><th scope=\"col\">status</th><th scope=\"col\">scores</th><th scope=\"col\">rationale</th></tr></thead><tbody>");
    for j in &c.judgments {
        let scores: Vec<String> = j.scores.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"r\">{}</td><td>{}</td><td class=\"sc\">{}</td><td class=\"why\">{}</td></tr>",
            esc(&format!("{}@{}", j.rubric, j.rubric_version)),
            esc(&judge_name(&j.judge, &j.judge_model, j.simulated)),
            j.replicate,
            esc(&j.status),
            esc(&scores.join(", ")),
            esc(j.rationale.as_deref().or(j.error.as_deref()).unwrap_or("-"))
        );
    }
    h.push_str("</tbody></table></div>");
}

/// A pair's verdict from this conversation's side, in words.
fn pair_verdict(p: &PairwiseDetail) -> String {
    match (p.verdict.as_deref(), p.consistent) {
        (None, _) => "not scored (both positions not yet judged ok)".to_string(),
        (Some(_), Some(false)) => {
            "tie (inconsistent: the verdict changed with the position)".to_string()
        }
        (Some("this"), _) => "this conversation better".to_string(),
        (Some("opponent"), _) => "the opponent better".to_string(),
        (Some(v), _) => v.to_string(),
    }
}

/// One ask's answer: the winner by position and from this conversation's side.
fn ask_answer(k: &PairwiseAsk) -> String {
    match (&k.winner, &k.preferred) {
        (Some(w), Some(p)) => format!("{w} ({p})"),
        _ => k.status.clone(),
    }
}

fn html_pairwise(h: &mut String, c: &ConversationDetail, a: &str, shown: &HashSet<&str>) {
    if c.pairwise.is_empty() {
        return;
    }
    let _ = write!(h, "<h4 id=\"{a}-pairwise\">Pairwise verdicts</h4>");
    h.push_str("<div class=\"tw\"><table><thead><tr><th scope=\"col\">as</th><th scope=\"col\">against</th><th scope=\"col\">rubric · judge</th><th scope=\"col\">verdict</th><th scope=\"col\">this shown: winner</th><th scope=\"col\">rationale</th></tr></thead><tbody>");
    for p in &c.pairwise {
        let against = if shown.contains(p.opponent_uid.as_str()) {
            format!(
                "{} <a href=\"#{}\">{}</a>",
                esc(&p.opponent_cell),
                esc(&anchor(&p.opponent_uid)),
                esc(&p.opponent_uid)
            )
        } else {
            format!("{} {}", esc(&p.opponent_cell), esc(&p.opponent_uid))
        };
        let rows = p.asks.len().max(1);
        let _ = write!(
            h,
            "<tr><td rowspan=\"{rows}\">{}</td><td rowspan=\"{rows}\" class=\"sc\">{against}</td><td rowspan=\"{rows}\" class=\"sc\">{}</td><td rowspan=\"{rows}\" class=\"sc\">{}</td>",
            esc(&p.role),
            esc(&format!(
                "{}@{} · {}",
                p.rubric,
                p.rubric_version,
                judge_name(&p.judge, &p.judge_model, p.simulated)
            )),
            esc(&pair_verdict(p))
        );
        if p.asks.is_empty() {
            h.push_str("<td>-</td><td>-</td></tr>");
        }
        for (i, k) in p.asks.iter().enumerate() {
            if i > 0 {
                h.push_str("<tr>");
            }
            let _ = write!(
                h,
                "<td>{}: {}</td><td class=\"why\">{}</td></tr>",
                if k.position == "A" {
                    "first (A)"
                } else {
                    "second (B)"
                },
                esc(&ask_answer(k)),
                esc(k.rationale.as_deref().or(k.error.as_deref()).unwrap_or("-"))
            );
        }
    }
    h.push_str("</tbody></table></div>");
}

/// The checks whose first failing answer is that of `turn`, in the checks' order.
fn first_failed_at(c: &ConversationDetail, turn: i64) -> Vec<&str> {
    c.checks
        .iter()
        .filter(|k| k.first_failed_turn == Some(turn))
        .map(|k| k.check_id.as_str())
        .collect()
}

/// Where a check first failed, as the checks list says it: `turn N`, or `-`.
fn first_failed(k: &CheckDetail) -> String {
    k.first_failed_turn
        .map_or_else(|| "-".to_string(), |t| format!("turn {t}"))
}

/// One turn: what was sent, the answer, the reasoning, timing, the error, and the checks
/// that first failed on this answer (`first_failed`).
fn html_turn(h: &mut String, t: &TurnDetail, a: &str, first_failed: &[&str]) {
    let _ = write!(
        h,
        "<div class=\"turn\" id=\"{a}-t{}\"><h4>Turn {}</h4>",
        t.turn, t.turn
    );
    for m in &t.sent {
        let _ = write!(
            h,
            "<div class=\"role\">{}</div><div class=\"msg\">{}</div>",
            esc(&sent_role(m)),
            esc(&m.content)
        );
    }
    h.push_str("<div class=\"role\">assistant</div>");
    match &t.answer {
        Some(ans) => {
            let _ = write!(h, "<div class=\"msg ans\">{}</div>", esc(ans));
        }
        None if !t.tool_calls.is_empty() => {}
        None => h.push_str("<p class=\"fn\">no answer</p>"),
    }
    for call in &t.tool_calls {
        let _ = write!(
            h,
            "<div class=\"role\">{}</div><div class=\"msg call\">{}</div>",
            esc(&call_head(call)),
            esc(&call.function.arguments)
        );
    }
    if let Some(r) = t.reasoning.as_deref().filter(|r| !r.is_empty()) {
        let _ = write!(
            h,
            "<details><summary class=\"role\">reasoning ({} characters)</summary><div class=\"msg\">{}</div></details>",
            r.chars().count(),
            esc(r)
        );
    }
    let _ = write!(h, "<p class=\"tm\">{}</p>", esc(&timing_line(t)));
    if !first_failed.is_empty() {
        let _ = write!(
            h,
            "<p class=\"ff\">first failed here: {}</p>",
            esc(&first_failed.join(", "))
        );
    }
    if let Some(e) = &t.error {
        let _ = write!(h, "<p class=\"err\">error: {}</p>", esc(e));
    }
    h.push_str("</div>");
}

/// A sent message's role, and for a tool result the call it answers: `tool (call_1)`.
fn sent_role(m: &Sent) -> String {
    match &m.tool_call_id {
        Some(id) => format!("{} ({id})", m.role),
        None => m.role.clone(),
    }
}

/// A tool call's heading: `tool call get_weather (call_1)`; its arguments follow.
fn call_head(call: &ToolCallLine) -> String {
    match &call.id {
        Some(id) => format!("tool call {} ({id})", call.function.name),
        None => format!("tool call {}", call.function.name),
    }
}

/// Transcript text for a terminal: each line made inert, indented.
fn block(out: &mut String, indent: &str, text: &str) {
    for line in text.split('\n') {
        let _ = writeln!(out, "{indent}{}", terminal_inert(line));
    }
}

/// The pairwise verdicts, as text: one line per pair, one per ask with its rationale.
fn text_pairwise(o: &mut String, c: &ConversationDetail) {
    let t = |s: &str| terminal_inert(s).into_owned();
    if !c.pairwise.is_empty() {
        o.push_str("\npairwise verdicts\n");
    }
    for p in &c.pairwise {
        let _ = writeln!(
            o,
            "  as {} against {} {} · {}@{} by {}: {}",
            t(&p.role),
            t(&p.opponent_cell),
            t(&p.opponent_uid),
            t(&p.rubric),
            p.rubric_version,
            t(&judge_name(&p.judge, &p.judge_model, p.simulated)),
            pair_verdict(p)
        );
        for k in &p.asks {
            let _ = writeln!(
                o,
                "    this shown {}: winner {}",
                k.position,
                t(&ask_answer(k))
            );
            if let Some(r) = k.rationale.as_deref().or(k.error.as_deref()) {
                block(o, "        ", r);
            }
        }
    }
}

/// The same view as text, for `turnbench show`.
pub fn text_view(c: &ConversationDetail) -> String {
    let mut o = String::new();
    text_header(&mut o, c);
    text_checks(&mut o, c);
    text_judgments(&mut o, c);
    text_pairwise(&mut o, c);
    for turn in &c.turns {
        text_turn(&mut o, c, turn);
    }
    o
}

/// Text can carry terminal escapes: shown inert.
fn t(s: &str) -> String {
    terminal_inert(s).into_owned()
}

/// Which conversation, where it ran and how it ended.
fn text_header(o: &mut String, c: &ConversationDetail) {
    let _ = writeln!(o, "conversation {}  uid {}", c.id, t(&c.uid));
    let _ = writeln!(
        o,
        "cell        {}  (model {})",
        t(&cell_name(c)),
        t(&c.model)
    );
    let _ = writeln!(
        o,
        "scenario    {}, repeat {}",
        t(c.scenario.as_deref().unwrap_or("-")),
        c.repeat
    );
    let _ = writeln!(o, "run         {} \"{}\"", c.run_id, t(&c.run_name));
    let _ = writeln!(
        o,
        "outcome     {}{}",
        t(&outcome_text(c)),
        if c.counts {
            ""
        } else {
            " (interrupted; redone by a later conversation)"
        }
    );
}

/// Its current check results, a failure explained.
fn text_checks(o: &mut String, c: &ConversationDetail) {
    o.push_str("\nchecks\n");
    if c.checks.is_empty() {
        o.push_str("  no current check results\n");
    }
    for k in &c.checks {
        let _ = writeln!(
            o,
            "  {:<10}  {}  {}{}",
            verdict(k.passed),
            t(&k.check_id),
            t(&k.tag),
            if k.first_failed_turn.is_some() {
                format!("  first failed at {}", first_failed(k))
            } else {
                String::new()
            }
        );
        if k.passed != Some(true) {
            block(o, "              ", &explanation(k));
        }
    }
}

/// Its judgments, each with its rationale (or error).
fn text_judgments(o: &mut String, c: &ConversationDetail) {
    if !c.judgments.is_empty() {
        o.push_str("\njudgments\n");
    }
    for j in &c.judgments {
        let scores: Vec<String> = j.scores.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(
            o,
            "  {}@{} by {} ({}{}), replicate {}: {} {}",
            t(&j.rubric),
            j.rubric_version,
            t(&j.judge),
            t(&j.judge_model),
            if j.simulated { ", simulated" } else { "" },
            j.replicate,
            t(&j.status),
            t(&scores.join(", "))
        );
        if let Some(r) = j.rationale.as_deref().or(j.error.as_deref()) {
            block(o, "      ", r);
        }
    }
}

/// One turn: what was sent, the answer and its tool calls, timings, failures.
fn text_turn(o: &mut String, c: &ConversationDetail, turn: &TurnDetail) {
    let _ = writeln!(o, "\nturn {}", turn.turn);
    for m in &turn.sent {
        let _ = writeln!(o, "  {}:", t(&sent_role(m)));
        block(o, "    ", &m.content);
    }
    o.push_str("  assistant:\n");
    let no_answer = if turn.tool_calls.is_empty() {
        "(no answer)"
    } else {
        "(no text: tool calls only)"
    };
    block(o, "    ", turn.answer.as_deref().unwrap_or(no_answer));
    for call in &turn.tool_calls {
        let _ = writeln!(o, "  {}:", t(&call_head(call)));
        block(o, "    ", &call.function.arguments);
    }
    if let Some(r) = turn.reasoning.as_deref().filter(|r| !r.is_empty()) {
        let _ = writeln!(
            o,
            "  (reasoning: {} characters, shown with --format json)",
            r.chars().count()
        );
    }
    let _ = writeln!(o, "  {}", t(&timing_line(turn)));
    let first = first_failed_at(c, turn.turn);
    if !first.is_empty() {
        let _ = writeln!(o, "  first failed here: {}", t(&first.join(", ")));
    }
    if let Some(e) = &turn.error {
        let _ = writeln!(o, "  error: {}", t(e));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::detail::JudgmentDetail;

    const EVIL: &str = "<script>alert(1)</script><img src=x onerror=alert(2)></details><a href=\"javascript:alert(3)\">x</a>\u{1b}[2J";

    fn hostile() -> ConversationDetail {
        ConversationDetail {
            id: 1,
            uid: "u\"><script>alert(0)</script>".into(),
            run_id: 1,
            run_name: EVIL.into(),
            provider: EVIL.into(),
            model: EVIL.into(),
            label: EVIL.into(),
            simulated: false,
            scenario: Some(EVIL.into()),
            repeat: 1,
            outcome: "completed".into(),
            counts: true,
            turns: vec![TurnDetail {
                turn: 1,
                sent: vec![Sent {
                    role: EVIL.into(),
                    content: EVIL.into(),
                    tool_call_id: Some(EVIL.into()),
                }],
                answer: Some(EVIL.into()),
                tool_calls: vec![ToolCallLine::function(Some(EVIL.into()), EVIL, EVIL.into())],
                reasoning: None,
                outcome: "ok".into(),
                finish_reason: Some(EVIL.into()),
                error: Some(EVIL.into()),
                http_status: None,
                attempts: Some(1),
                pause_ms: None,
                ttft_ms: Some(1.0),
                ttfa_ms: None,
                e2e_ms: Some(2.0),
                prompt_tokens: None,
                completion_tokens: None,
                reasoning_tokens: None,
                cached_tokens: None,
            }],
            checks: vec![CheckDetail {
                check_id: EVIL.into(),
                kind: "contains".into(),
                tag: EVIL.into(),
                passed: Some(false),
                detail: Some(EVIL.into()),
                description: Some(EVIL.into()),
                first_failed_turn: Some(1),
            }],
            judgments: vec![JudgmentDetail {
                rubric: EVIL.into(),
                rubric_version: 1,
                judge: EVIL.into(),
                judge_model: EVIL.into(),
                simulated: true,
                replicate: 1,
                status: "ok".into(),
                scores: vec![(EVIL.into(), 1)],
                rationale: Some(EVIL.into()),
                error: None,
            }],
            pairwise: vec![PairwiseDetail {
                role: "candidate".into(),
                opponent_id: 2,
                opponent_uid: EVIL.into(),
                opponent_cell: EVIL.into(),
                rubric: EVIL.into(),
                rubric_version: 1,
                judge: EVIL.into(),
                judge_model: EVIL.into(),
                simulated: true,
                asks: vec![PairwiseAsk {
                    position: "A".into(),
                    status: "ok".into(),
                    winner: Some("A".into()),
                    preferred: Some("this".into()),
                    rationale: Some(EVIL.into()),
                    error: None,
                }],
                consistent: None,
                verdict: None,
            }],
        }
    }

    #[test]
    fn every_transcript_text_is_escaped_in_html() {
        let d = Drilldown {
            mode: ConversationViews::Failed,
            cap: 1,
            eligible: 1,
            left_out: 0,
            views: vec![hostile()],
            behind: vec![],
        };
        let mut h = String::new();
        html_section(&mut h, &d);
        for tag in [
            "<script",
            "<img",
            "</details>",
            "<a href=\"javascript",
            "\u{1b}",
        ] {
            assert!(!h.contains(tag), "{tag} in {h}");
        }
        // Check explanations, descriptions and judge rationales are all there, as text.
        assert!(h.matches("&lt;script&gt;alert(1)&lt;/script&gt;").count() >= 15);
        assert!(h.contains("Pairwise verdicts"));
        assert!(h.contains("expected: &lt;script&gt;"));
        assert!(h.contains("id=\"c-u&quot;&gt;&lt;script&gt;alert(0)&lt;/script&gt;\""));
        // A tool call (name, id, arguments) and the call a tool result answers, as text.
        assert!(h.contains("<div class=\"role\">tool call &lt;script&gt;alert(1)"));
        assert!(h.contains("<div class=\"msg call\">&lt;script&gt;alert(1)"));
    }

    #[test]
    fn each_check_is_marked_at_the_turn_where_it_first_failed() {
        let mut c = hostile();
        c.uid = "u1".into();
        c.checks[0].check_id = "code-kept".into();
        let mut second = c.turns[0].clone();
        second.turn = 2;
        c.turns.push(second);
        c.checks[0].first_failed_turn = Some(2);
        let mut passing = c.checks[0].clone();
        passing.check_id = "ends-done".into();
        passing.passed = Some(true);
        passing.first_failed_turn = None;
        c.checks.push(passing);
        let mut h = String::new();
        html_view(&mut h, &c, &HashSet::new());
        // The checks list links the turn; the turn names the check, and only that turn.
        assert!(
            h.contains("<td><a href=\"#c-u1-t2\">turn 2</a></td>"),
            "{h}"
        );
        let turn2 = &h[h.find("id=\"c-u1-t2\"").unwrap()..];
        let turn1 = &h[h.find("id=\"c-u1-t1\"").unwrap()..h.find("id=\"c-u1-t2\"").unwrap()];
        assert!(
            turn2.contains("first failed here: code-kept</p>"),
            "{turn2}"
        );
        assert!(!turn1.contains("first failed here"), "{turn1}");
        assert!(!h.contains("first failed here: code-kept, ends-done"));
        let text = text_view(&c);
        assert!(text.contains("code-kept  "), "{text}");
        assert!(text.contains("first failed at turn 2"), "{text}");
        let at = text.find("\nturn 2").unwrap();
        assert!(
            text[at..].contains("first failed here: code-kept\n"),
            "{text}"
        );
        assert!(!text[..at].contains("first failed here"), "{text}");
    }

    #[test]
    fn the_lists_behind_a_table_are_escaped_and_say_what_is_left_out() {
        use crate::report::drilldown::BehindJudge;
        let d = Drilldown {
            mode: ConversationViews::Failed,
            cap: 1,
            eligible: 3,
            left_out: 2,
            views: vec![hostile()],
            behind: vec![
                Behind {
                    judge: None,
                    cell: EVIL.into(),
                    what: "timeout".into(),
                    band: None,
                    total: 3,
                    shown: vec![(EVIL.into(), EVIL.into())],
                },
                Behind {
                    judge: Some(BehindJudge {
                        rubric: "r@1".into(),
                        judge: "j".into(),
                        judge_model: "m".into(),
                        simulated: false,
                    }),
                    cell: "p / m".into(),
                    what: EVIL.into(),
                    band: Some(2),
                    total: 1,
                    shown: vec![],
                },
            ],
        };
        let mut h = String::new();
        behind_table(&mut h, &TableKey::Reliability, &d);
        assert!(!h.contains("<script") && !h.contains("<img"), "{h}");
        assert!(
            h.contains("timeout: 3 — <a href=\"#c-&lt;script&gt;"),
            "{h}"
        );
        assert!(h.contains("2 without a view here: --conversations failed, cap 1"));
        let mut h = String::new();
        let judge = d.behind[1].judge.as_ref().map(BehindJudge::key).unwrap();
        behind_table(&mut h, &TableKey::Judge(judge.clone()), &d);
        assert!(h.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{h}");
        assert!(h.contains(" ≤ 2: 1 (1 without a view here"), "{h}");
        assert!(!h.contains("<script"));
        let mut h = String::new();
        behind_table(&mut h, &TableKey::CacheAndCost, &d);
        assert!(h.is_empty());
        // The same judge simulated is another section: its table has none of these rows.
        let mut h = String::new();
        let other = TableKey::Judge(crate::report::keys::JudgeKey {
            simulated: true,
            ..judge
        });
        behind_table(&mut h, &other, &d);
        assert!(h.is_empty());
    }

    #[test]
    fn the_text_view_keeps_control_characters_off_the_terminal() {
        let t = text_view(&hostile());
        assert!(!t.contains('\u{1b}'));
        assert!(t.contains("\\u{1b}[2J"));
        assert!(t.contains("FAIL"));
        assert!(t.contains("expected: <script>"));
        assert!(t.contains("pairwise verdicts"));
        assert!(t.contains("  tool call <script>alert(1)</script>"), "{t}");
    }
}
