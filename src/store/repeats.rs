//! The repeats of one scenario, read for CONSTRAINTS ACROSS TURNS' consistency part
//! (`crate::report::consistency`): conversations that count, of one run, one target (its
//! provider, model id, label, host and request parameters: what the request carries
//! besides its messages), one scenario id and one stored scenario version, when there are
//! at least two of them.
//!
//! Texts never leave this module: each turn's prompt (the messages it added to the history)
//! and its answer are replaced by a number that is equal for two repeats of the group exactly
//! when the stored texts are byte-equal. What the report derives from that (a request is the
//! scenario's messages plus the earlier answers) is the report's.
//!
//! The groups form as the report reads the selected conversations ([`Repeats`], from
//! `conversation_facts` with each one's stored scenario version); their check results, turn
//! verdicts and turns come from the report's one pass over those tables, the turns' texts
//! as identities (`super::facts::turns`, [`super::facts::TurnTexts`], for every
//! conversation with a scenario), which [`number_texts`] numbers group by group.

use std::collections::HashMap;

use super::facts::{ConversationFact, TextId, TurnTexts};
use crate::outcome::{ConversationOutcome, TurnOutcome};

/// The repeats of one scenario in one run on one target (two or more).
#[derive(Debug, Clone, PartialEq)]
pub struct RepeatGroup {
    pub provider: String,
    /// The model label (what cells group by).
    pub label: String,
    pub simulated: bool,
    pub scenario: String,
    pub members: Vec<Repeat>,
}

/// One repeat of a [`RepeatGroup`], in repeat order.
#[derive(Debug, Clone, PartialEq)]
pub struct Repeat {
    pub conversation_id: i64,
    pub repeat: u32,
    pub outcome: ConversationOutcome,
    /// The stored turns, in order (index 0 is scenario turn 1).
    pub turns: Vec<RepeatTurn>,
    /// Current turn verdicts: (scenario turn, 1-based; check definition id; passed).
    pub verdicts: Vec<(u32, i64, bool)>,
    /// Current conversation-level check results: (passed, scored); `None` when no current
    /// check result of this conversation was scored.
    pub checks: Option<(u32, u32)>,
}

/// One stored turn: its texts as numbers equal exactly when the texts are byte-equal within
/// the group (their identities are: [`super::facts::TextId`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepeatTurn {
    /// The messages this turn added to the history (`turns.prompt`, as stored).
    pub prompt: u32,
    /// The visible answer (`turns.answer`); `None` when nothing arrived.
    pub answer: Option<u32>,
    pub outcome: TurnOutcome,
    /// Whether the answer has visible text (`turns.has_answer`).
    pub has_answer: bool,
}

/// Where a group's conversations ran: run, target, stored scenario version (−1: none);
/// with the scenario id, a group's identity.
type GroupKey = (i64, i64, i64);

/// Every group of repeats among the selected conversations that count (see the module's
/// text), formed as the report's pass over them ([`super::facts::conversations`]) hands each
/// on ([`Repeats::add`]): who belongs where, without texts, verdicts or check results. The
/// report's own pass over check results and turn verdicts fills those in
/// (`crate::report::load`), and [`number_texts`] the turns.
#[derive(Debug, Default)]
pub struct Repeats {
    groups: Vec<(GroupKey, RepeatGroup)>,
    /// Per (run, target, version), the groups of each scenario id (almost always one).
    found: HashMap<GroupKey, Vec<usize>>,
}

impl Repeats {
    /// Takes one selected conversation that counts; one without a scenario repeats nothing.
    pub fn add(&mut self, c: &ConversationFact) {
        let Some(scenario) = c.scenario else {
            return;
        };
        let key: GroupKey = (c.run_id, c.target_id, c.scenario_ref.unwrap_or(-1));
        let same = self.found.entry(key).or_default();
        let groups = &mut self.groups;
        let at = match same
            .iter()
            .copied()
            .find(|&g| groups.get(g).is_some_and(|(_, x)| x.scenario == scenario))
        {
            Some(g) => g,
            None => {
                groups.push((
                    key,
                    RepeatGroup {
                        provider: c.provider.to_string(),
                        label: c.label.to_string(),
                        simulated: c.simulated,
                        scenario: scenario.to_string(),
                        members: Vec::new(),
                    },
                ));
                same.push(groups.len() - 1);
                groups.len() - 1
            }
        };
        if let Some((_, g)) = groups.get_mut(at) {
            g.members.push(Repeat {
                conversation_id: c.id,
                repeat: c.repeat,
                outcome: c.outcome,
                turns: Vec::new(),
                verdicts: Vec::new(),
                checks: None,
            });
        }
    }

    /// The groups of two or more, by label, provider, scenario, run, target and version,
    /// each group's members by repeat (then id).
    pub fn groups(self) -> Vec<RepeatGroup> {
        let mut groups = self.groups;
        groups.retain(|(_, g)| g.members.len() >= 2);
        groups.sort_by(|(x, a), (y, b)| {
            (&a.label, &a.provider, &a.scenario, x).cmp(&(&b.label, &b.provider, &b.scenario, y))
        });
        groups
            .into_iter()
            .map(|(_, mut g)| {
                g.members
                    .sort_unstable_by_key(|m| (m.repeat, m.conversation_id));
                g
            })
            .collect()
    }
}

/// Each distinct text's number. A [`TextId`] is a digest already: its first 8 bytes are the
/// hash ([`DigestHasher`]).
type Numbers = HashMap<TextId, u32, std::hash::BuildHasherDefault<DigestHasher>>;

/// Hashes a digest as its first 8 bytes (what `Hash` for `[u8; 16]` writes after the
/// length prefix): no mixing is needed for bytes that are uniform already.
#[derive(Default)]
struct DigestHasher(u64);

impl std::hash::Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8).take(1) {
            let mut b = [0; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.0 ^= u64::from_le_bytes(b);
        }
    }
}

/// One stored turn of a repeat, as the report's pass over the turns read it.
#[derive(Debug, Clone, Copy)]
pub struct MemberTurn {
    /// 0-based, as stored.
    pub idx: u32,
    pub texts: TurnTexts,
    pub outcome: TurnOutcome,
    pub has_answer: bool,
}

/// Fills in each member's turns from `turns_of(k)` (the k-th member's stored turns in
/// order), each distinct prompt and answer of the group numbered in reading order. A gap
/// in a member's stored turns ends them: nothing after it is comparable.
pub fn number_texts<I: IntoIterator<Item = MemberTurn>>(
    g: &mut RepeatGroup,
    turns_of: impl Fn(usize) -> I,
) {
    let mut prompts: Numbers = HashMap::default();
    let mut answers: Numbers = HashMap::default();
    let number = |map: &mut Numbers, id: TextId| {
        let next = u32::try_from(map.len()).unwrap_or(u32::MAX);
        *map.entry(id).or_insert(next)
    };
    for (k, m) in g.members.iter_mut().enumerate() {
        m.turns.clear();
        for t in turns_of(k) {
            if usize::try_from(t.idx).ok() != Some(m.turns.len()) {
                break;
            }
            m.turns.push(RepeatTurn {
                prompt: number(&mut prompts, t.texts.prompt),
                answer: t.texts.answer.map(|a| number(&mut answers, a)),
                outcome: t.outcome,
                has_answer: t.has_answer,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::facts::{FactFilter, Selection};
    use rusqlite::Connection;

    /// A store with `rows` (run, provider, scenario, repeat, [(prompt, answer)]).
    type Row<'a> = (i64, &'a str, &'a str, u32, &'a [(&'a str, Option<&'a str>)]);

    fn store(rows: &[Row]) -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open(&dir.path().join("t.db")).unwrap();
        for run in [1, 2] {
            conn.execute(
                "INSERT INTO runs (id, name, source, settings, settings_hash, tool_version, started_at)
                 VALUES (?1, 'r', 'import', '{}', 'h', 'v', '2026-01-01T00:00:00Z')",
                [run],
            )
            .unwrap();
        }
        for (i, p) in ["a", "b"].iter().enumerate() {
            conn.execute(
                "INSERT INTO targets (id, provider, model, label, key) VALUES (?1, ?2, 'm', 'm', ?2)",
                rusqlite::params![i as i64 + 1, p],
            )
            .unwrap();
        }
        for (i, (run, provider, scenario, repeat, turns)) in rows.iter().enumerate() {
            let target = if *provider == "a" { 1 } else { 2 };
            let id = i as i64 + 1;
            conn.execute(
                "INSERT INTO conversations (id, uid, run_id, target_id, scenario, repeat, outcome, turn_count)
                 VALUES (?1, ?1, ?2, ?3, ?4, ?5, 'completed', ?6)",
                rusqlite::params![id, run, target, scenario, repeat, turns.len() as i64],
            )
            .unwrap();
            for (idx, (prompt, answer)) in turns.iter().enumerate() {
                conn.execute(
                    "INSERT INTO turns (conversation_id, idx, prompt, answer, outcome, has_answer)
                     VALUES (?1, ?2, ?3, ?4, 'ok', ?5)",
                    rusqlite::params![id, idx as i64, prompt, answer, answer.is_some()],
                )
                .unwrap();
            }
        }
        (dir, conn)
    }

    #[test]
    fn groups_are_run_target_and_scenario_and_texts_become_equal_numbers() {
        let (_dir, conn) = store(&[
            (1, "a", "s", 1, &[("p1", Some("x")), ("p2", Some("y"))]),
            (1, "a", "s", 2, &[("p1", Some("x")), ("p2", Some("z"))]),
            // Alone in its run, target or scenario: no group.
            (2, "a", "s", 1, &[("p1", Some("x"))]),
            (1, "b", "s", 1, &[("p1", Some("x"))]),
            (1, "a", "t", 1, &[("p1", Some("x"))]),
            (1, "a", "s", 3, &[("p1", Some("y")), ("p2", None)]),
        ]);
        let sel = Selection::resolve(&conn, &FactFilter::default()).unwrap();
        let mut repeats = Repeats::default();
        crate::store::facts::conversations(&conn, &sel, |c| repeats.add(c)).unwrap();
        let mut groups = repeats.groups();
        // The texts come from the facts' pass over the turns, for every conversation with a
        // scenario; each member's are its own.
        let mut read: Vec<(i64, MemberTurn)> = Vec::new();
        crate::store::facts::turns(&conn, &sel, 0..=100, true, |t| {
            if let Some(texts) = t.texts {
                read.push((
                    t.conversation_id,
                    MemberTurn {
                        idx: t.idx,
                        texts,
                        outcome: t.outcome.unwrap_or(TurnOutcome::Ok),
                        has_answer: t.has_answer,
                    },
                ));
            }
        })
        .unwrap();
        // Every turn of a conversation with a scenario: six of members, three of others.
        assert_eq!(read.len(), 9, "{read:?}");
        for g in &mut groups {
            let ids: Vec<i64> = g.members.iter().map(|m| m.conversation_id).collect();
            number_texts(g, |k| {
                read.iter()
                    .filter(|(c, _)| Some(c) == ids.get(k))
                    .map(|(_, t)| *t)
                    .collect::<Vec<_>>()
            });
        }
        assert_eq!(groups.len(), 1, "{groups:#?}");
        let g = &groups[0];
        assert_eq!((g.provider.as_str(), g.scenario.as_str()), ("a", "s"));
        let repeats: Vec<u32> = g.members.iter().map(|m| m.repeat).collect();
        assert_eq!(repeats, [1, 2, 3]);
        let texts = |m: &Repeat| -> Vec<(u32, Option<u32>)> {
            m.turns.iter().map(|t| (t.prompt, t.answer)).collect()
        };
        // Prompts p1, p2 → 0, 1; answers x, y, z → 0, 1, 2 in reading order.
        assert_eq!(texts(&g.members[0]), [(0, Some(0)), (1, Some(1))]);
        assert_eq!(texts(&g.members[1]), [(0, Some(0)), (1, Some(2))]);
        assert_eq!(texts(&g.members[2]), [(0, Some(1)), (1, None)]);
        assert!(!g.members[2].turns[1].has_answer);
    }
}
