//! CONTEXT OVERFLOW: which cells' conversations outgrew the context window their provider
//! serves the model with (turn class `context_overflow`), at which turn, with the sizes the
//! server stated; and each model label that overflows at one provider but, as far as its
//! conversations went, not at another: a finding about the provider's configured window,
//! not about the model.
//!
//! Overflowed conversations stay in every denominator (RELIABILITY counts them under their
//! class); this section only says what they were. Definitions: `docs/reliability.md`,
//! "Context overflow".

use std::collections::{BTreeMap, HashSet};

use super::load::Facts;
use super::model::{
    Cell, ContextOverflowSection, Headline, HeadlineKind, OverflowContrast, OverflowFlag,
    OverflowSide, Said, SessionTurn,
};
use crate::client::ContextSizes;
use crate::figure::thousands;
use crate::outcome::TurnOutcome;
use crate::store::StoreError;

/// The sizes each overflowed conversation's server stated, by conversation index: read
/// once, for those conversations only (their last turn, by primary key).
#[derive(Debug, Default)]
pub(super) struct OverflowRead {
    sizes: BTreeMap<usize, ContextSizes>,
}

/// Whether this conversation ended in `context_overflow`.
fn overflowed(c: &super::load::Conv) -> bool {
    c.outcome.failure() == Some(TurnOutcome::ContextOverflow)
}

pub(super) fn read(conn: &rusqlite::Connection, facts: &Facts) -> Result<OverflowRead, StoreError> {
    let which: Vec<usize> = (0..facts.convs.len())
        .filter(|&i| overflowed(&facts.convs[i]) && facts.convs[i].n_turns > 0)
        .collect();
    let keys: Vec<(i64, u32)> = which
        .iter()
        .map(|&i| {
            let c = &facts.convs[i];
            (c.id, (c.n_turns - 1) as u32)
        })
        .collect();
    let sizes = crate::store::facts::overflow_sizes(conn, &keys)?;
    Ok(OverflowRead {
        sizes: which.into_iter().zip(sizes).collect(),
    })
}

/// The section; `None` when no selected conversation overflowed. `replay`: the replayed
/// turns, whose conversations are sessions (their turn is the session's turn).
pub(super) fn section(
    facts: &Facts,
    cells: &[Cell],
    read: &OverflowRead,
    replay: &[crate::store::replay::ReplayTurnFact],
) -> Option<ContextOverflowSection> {
    let replayed: HashSet<i64> = replay.iter().map(|t| t.conversation_id).collect();
    let flags: Vec<(usize, OverflowFlag)> = (0..facts.cells.len())
        .filter_map(|cell| flag(facts, cells, read, &replayed, cell).map(|f| (cell, f)))
        .collect();
    if flags.is_empty() {
        return None;
    }
    let contrasts = contrasts(facts, cells, &flags);
    Some(ContextOverflowSection {
        cells: flags.into_iter().map(|(_, f)| f).collect(),
        contrasts,
    })
}

/// A headline per contrast (a model label that overflows at one provider and not at
/// another), placed before the flags: the reader learns it where the findings are, not only
/// in the section.
pub(super) fn headlines(
    section: Option<&ContextOverflowSection>,
    cells: &[Cell],
    out: &mut Vec<Headline>,
) {
    let Some(section) = section else {
        return;
    };
    // Simulated when any provider it names is served by the built-in mock.
    let simulated = |c: &OverflowContrast| {
        c.overflows_at.iter().chain(&c.fits_at).any(|side| {
            cells.iter().any(|cell| {
                cell.model == c.model && cell.provider == side.provider && cell.simulated
            })
        })
    };
    let lines = section.contrasts.iter().map(|c| Headline {
        kind: HeadlineKind::ContextOverflow,
        model: Some(c.model.clone()),
        text: String::new(),
        said: Said::ContextOverflow(c.clone()),
        established: None,
        simulated: simulated(c),
        family: None,
    });
    super::headlines::before_flags(out, lines.collect());
}

/// One cell's flag, when any of its conversations overflowed.
fn flag(
    facts: &Facts,
    cells: &[Cell],
    read: &OverflowRead,
    replayed: &HashSet<i64>,
    cell: usize,
) -> Option<OverflowFlag> {
    let key = facts.cells.get(cell)?;
    let mut turns: BTreeMap<u32, u64> = BTreeMap::new();
    let mut sessions = Vec::new();
    let (mut prompts, mut windows) = (Vec::new(), Vec::new());
    let mut replay = false;
    for (i, c) in facts.convs.iter().enumerate() {
        if c.cell != cell || !overflowed(c) {
            continue;
        }
        let turn = c.n_turns.max(1) as u32;
        *turns.entry(turn).or_insert(0) += 1;
        if replayed.contains(&c.id) {
            replay = true;
            sessions.push(SessionTurn {
                session: c
                    .scenario
                    .and_then(|s| facts.scenarios.get(s))
                    .cloned()
                    .unwrap_or_default(),
                round: c.repeat,
                turn,
            });
        }
        let sizes = read.sizes.get(&i).copied().unwrap_or_default();
        prompts.extend(sizes.prompt_tokens.map(|p| p as f64));
        windows.extend(sizes.window_tokens);
    }
    let conversations: u64 = turns.values().sum();
    if conversations == 0 {
        return None;
    }
    sessions.sort_by(|a, b| (&a.session, a.round).cmp(&(&b.session, b.round)));
    let mut flag = OverflowFlag {
        provider: key.provider.clone(),
        model: key.label.clone(),
        simulated: key.simulated,
        conversations,
        attempted: cells.get(cell).map_or(0, |c| c.reliability.attempted),
        replay,
        turns,
        sessions,
        prompt_tokens: crate::stats::median(&prompts),
        prompt_stated: prompts.len() as u64,
        window_tokens: most_common(&windows),
        window_stated: windows.len() as u64,
        windows: {
            let mut w = windows.clone();
            w.sort_unstable();
            w.dedup();
            w
        },
        text: String::new(),
    };
    flag.text = flag_text(&flag);
    Some(flag)
}

/// The most common value, the largest of equally common ones.
fn most_common(values: &[i64]) -> Option<i64> {
    let mut counts: BTreeMap<i64, usize> = BTreeMap::new();
    for &v in values {
        *counts.entry(v).or_insert(0) += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)))
        .map(|(v, _)| v)
}

/// A count of tokens as a sentence gives it: `8,192`; with `≈`, rounded to hundreds from
/// 1,000 (`≈ 7,900`).
fn tokens(n: f64, approx: bool) -> String {
    let n = n.max(0.0);
    if approx {
        let r = if n >= 1000.0 {
            (n / 100.0).round() * 100.0
        } else {
            n.round()
        };
        format!("≈ {}", thousands(r as u64))
    } else {
        thousands(n.round() as u64)
    }
}

/// "at turn 4", or "at turns 3–5 (most at 4)".
fn turns_text(turns: &BTreeMap<u32, u64>) -> String {
    let (Some((&first, _)), Some((&last, _))) = (turns.first_key_value(), turns.last_key_value())
    else {
        return String::new();
    };
    if first == last {
        return format!("at turn {first}");
    }
    let mode = turns
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map_or(first, |(&t, _)| t);
    format!("at turns {first}–{last} (most at {mode})")
}

/// "(prompt ≈ 7,900 tokens; the server's window 8,192)", as far as the server said.
fn sizes_text(f: &OverflowFlag) -> String {
    let prompt = f.prompt_tokens.map(|p| {
        let of = if f.prompt_stated > 1 {
            format!(", median of {}", f.prompt_stated)
        } else {
            String::new()
        };
        format!("prompt {} tokens{of}", tokens(p, true))
    });
    let window = f.window_tokens.map(|w| {
        let mut s = format!("the server's window {}", tokens(w as f64, false));
        if f.windows.len() > 1 {
            let all: Vec<String> = f.windows.iter().map(|w| thousands(*w as u64)).collect();
            s.push_str(&format!(
                " (it stated {}: {})",
                f.windows.len(),
                all.join(", ")
            ));
        }
        s
    });
    match (prompt, window) {
        (None, None) => "(the server stated no sizes)".into(),
        (Some(p), None) => format!("({p}; the server stated no window)"),
        (None, Some(w)) => format!("({w}; it stated no prompt size)"),
        (Some(p), Some(w)) => format!("({p}; {w})"),
    }
}

fn flag_text(f: &OverflowFlag) -> String {
    let cell = format!("{} / {}", f.provider, f.model);
    if !f.replay {
        return format!(
            "{cell}: {} of {} conversations outgrew the context {} {}",
            f.conversations,
            f.attempted,
            turns_text(&f.turns),
            sizes_text(f)
        );
    }
    const SHOWN: usize = 3;
    let mut where_: Vec<String> = f
        .sessions
        .iter()
        .take(SHOWN)
        .map(|s| {
            format!(
                "session {} (round {}) at turn {}",
                s.session, s.round, s.turn
            )
        })
        .collect();
    if f.sessions.len() > SHOWN {
        where_.push(format!("{} more", f.sessions.len() - SHOWN));
    }
    format!(
        "{cell} (replayed sessions): {} of {} passes outgrew the context: {} {}",
        f.conversations,
        f.attempted,
        where_.join(", "),
        sizes_text(f)
    )
}

/// Each model label that overflowed at some providers and not at others whose
/// conversations answered at least the earliest overflow turn.
fn contrasts(
    facts: &Facts,
    cells: &[Cell],
    flags: &[(usize, OverflowFlag)],
) -> Vec<OverflowContrast> {
    let mut labels: Vec<&str> = flags.iter().map(|(_, f)| f.model.as_str()).collect();
    labels.dedup();
    let mut out = Vec::new();
    for label in labels {
        let over: Vec<OverflowSide> = flags
            .iter()
            .filter(|(_, f)| f.model == label)
            .map(|(_, f)| OverflowSide {
                provider: f.provider.clone(),
                overflowed: f.conversations,
                attempted: f.attempted,
                turn: f.turns.keys().next().copied().unwrap_or(1),
                window_tokens: f.window_tokens,
            })
            .collect();
        let earliest = over.iter().map(|s| s.turn).min().unwrap_or(1);
        let fits: Vec<OverflowSide> = (0..facts.cells.len())
            .filter(|&i| facts.cells[i].label == label && !flags.iter().any(|(c, _)| *c == i))
            .filter_map(|i| {
                let furthest = furthest_answered(facts, i);
                (furthest >= earliest).then(|| OverflowSide {
                    provider: facts.cells[i].provider.clone(),
                    overflowed: 0,
                    attempted: cells.get(i).map_or(0, |c| c.reliability.attempted),
                    turn: furthest,
                    window_tokens: None,
                })
            })
            .collect();
        if fits.is_empty() {
            continue;
        }
        let text = contrast_text(label, &over, &fits);
        out.push(OverflowContrast {
            model: label.to_string(),
            overflows_at: over,
            fits_at: fits,
            text,
        });
    }
    out
}

/// The furthest turn (1-based) any conversation of this cell answered: all of a
/// completed one's turns, all but the last of a failed one's.
fn furthest_answered(facts: &Facts, cell: usize) -> u32 {
    facts
        .convs
        .iter()
        .filter(|c| c.cell == cell)
        .map(|c| {
            let n = c.n_turns as u32;
            if c.outcome.is_completed() {
                n
            } else {
                n.saturating_sub(1)
            }
        })
        .max()
        .unwrap_or(0)
}

fn contrast_text(label: &str, over: &[OverflowSide], fits: &[OverflowSide]) -> String {
    let over: Vec<String> = over
        .iter()
        .map(|s| {
            let window = s.window_tokens.map_or(String::new(), |w| {
                format!("; window {}", thousands(w as u64))
            });
            format!(
                "{} ({} of {} conversations, from turn {}{window})",
                s.provider, s.overflowed, s.attempted, s.turn
            )
        })
        .collect();
    let fits: Vec<String> = fits
        .iter()
        .map(|s| {
            format!(
                "{} (0 of {}, answered up to turn {})",
                s.provider, s.attempted, s.turn
            )
        })
        .collect();
    format!(
        "{label} outgrew the context at {} but not at {}",
        over.join(" and "),
        fits.join(" and ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_and_sizes_read_as_a_sentence() {
        let mut turns = BTreeMap::new();
        turns.insert(4, 12);
        assert_eq!(turns_text(&turns), "at turn 4");
        turns.insert(3, 2);
        turns.insert(5, 1);
        assert_eq!(turns_text(&turns), "at turns 3–5 (most at 4)");
        assert_eq!(tokens(7_912.0, true), "≈ 7,900");
        assert_eq!(tokens(812.4, true), "≈ 812");
        assert_eq!(tokens(8_192.0, false), "8,192");
        assert_eq!(most_common(&[4096, 8192, 8192]), Some(8192));
        assert_eq!(most_common(&[4096, 8192]), Some(8192));
        assert_eq!(most_common(&[]), None);
    }
}
