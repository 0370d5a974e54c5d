//! Pairwise judgments: a candidate conversation against a baseline conversation of the same
//! scenario and repeat, asked twice with the positions swapped (`db/005_judge_trust.sql`).
//! Written one ask at a time by the judge stage; read through the `pairwise_verdicts` view.

use std::collections::HashSet;

use rusqlite::{Connection, Transaction};

use super::StoreError;
use super::judgments::{JudgeCall, insert_sql};
use super::writer_task::Storable;

/// Where a transcript was shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Position {
    A,
    B,
}

impl Position {
    pub fn as_str(self) -> &'static str {
        match self {
            Position::A => "A",
            Position::B => "B",
        }
    }
}

/// A judge's answer to "which is better", by position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Winner {
    Position(Position),
    Tie,
}

impl Winner {
    pub fn as_str(self) -> &'static str {
        match self {
            Winner::Position(p) => p.as_str(),
            Winner::Tie => "tie",
        }
    }
}

/// An answer read through the positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Preferred {
    Baseline,
    Candidate,
    Tie,
}

impl Preferred {
    pub fn as_str(self) -> &'static str {
        match self {
            Preferred::Baseline => "baseline",
            Preferred::Candidate => "candidate",
            Preferred::Tie => "tie",
        }
    }

    /// What `winner` says when the baseline was shown at `baseline_position`.
    pub fn of(winner: Winner, baseline_position: Position) -> Preferred {
        match winner {
            Winner::Tie => Preferred::Tie,
            Winner::Position(p) if p == baseline_position => Preferred::Baseline,
            Winner::Position(_) => Preferred::Candidate,
        }
    }

    fn parse(s: &str) -> Option<Preferred> {
        match s {
            "baseline" => Some(Preferred::Baseline),
            "candidate" => Some(Preferred::Candidate),
            "tie" => Some(Preferred::Tie),
            _ => None,
        }
    }
}

/// One pairwise ask, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct PairwiseRecord {
    pub key: String,
    pub baseline_id: i64,
    pub candidate_id: i64,
    pub baseline_position: Position,
    /// Only when `ok`.
    pub winner: Option<Winner>,
    pub call: JudgeCall,
}

/// Writes an ask; an `ok` one already stored for the same key wins (returns false).
pub fn insert_pairwise(conn: &Connection, j: &PairwiseRecord) -> Result<bool, StoreError> {
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        insert_sql(
            "pairwise_judgments",
            "baseline_id, candidate_id, baseline_position, winner, preferred",
            ":baseline, :candidate, :position, :winner, :preferred",
            "NOT EXISTS (SELECT 1 FROM pairwise_judgments
                           WHERE candidate_id = :candidate AND key = :key AND status = 'ok')",
        )
    });
    let mut stmt = conn.prepare_cached(&SQL)?;
    let winner = j.winner.map(Winner::as_str);
    let preferred = j
        .winner
        .map(|w| Preferred::of(w, j.baseline_position).as_str());
    let position = j.baseline_position.as_str();
    let now = super::now_rfc3339();
    let own: [(&str, &dyn rusqlite::ToSql); 7] = [
        (":key", &j.key),
        (":baseline", &j.baseline_id),
        (":candidate", &j.candidate_id),
        (":position", &position),
        (":winner", &winner),
        (":preferred", &preferred),
        (":now", &now),
    ];
    let params: Vec<_> = own.into_iter().chain(j.call.params()).collect();
    Ok(stmt.execute(&*params)? == 1)
}

impl Storable for PairwiseRecord {
    const THREAD: &'static str = "turnbench-pairwise";

    fn insert(&self, tx: &Transaction) -> Result<bool, StoreError> {
        insert_pairwise(tx, self)
    }
}

/// (candidate id, key) of every scored pairwise ask: a re-run does not ask them again.
pub fn final_pairwise_keys(conn: &Connection) -> Result<HashSet<(i64, String)>, StoreError> {
    let mut stmt =
        conn.prepare("SELECT candidate_id, key FROM pairwise_judgments WHERE status = 'ok'")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Which pair, by which judge on which rubric: the columns `pairwise_verdicts` and the
/// one-position query share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairKey {
    pub baseline_id: i64,
    pub candidate_id: i64,
    /// `id@version`.
    pub rubric: String,
    pub judge_id: String,
    pub judge_model: String,
    pub simulated: bool,
}

/// The columns both queries select first, in this order.
const PAIR_KEY_COLUMNS: &str =
    "baseline_id, candidate_id, rubric_id, rubric_version, judge_id, judge_model, simulated";

impl PairKey {
    /// Reads the [`PAIR_KEY_COLUMNS`] at the start of a row.
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<PairKey> {
        Ok(PairKey {
            baseline_id: r.get(0)?,
            candidate_id: r.get(1)?,
            rubric: format!("{}@{}", r.get::<_, String>(2)?, r.get::<_, i64>(3)?),
            judge_id: r.get(4)?,
            judge_model: r.get(5)?,
            simulated: r.get(6)?,
        })
    }
}

/// One row of `pairwise_verdicts`.
#[derive(Debug, Clone, PartialEq)]
pub struct PairwiseVerdict {
    pub pair: PairKey,
    /// Both asks scored.
    pub scored: bool,
    /// Both asks read the same through the positions (`None` unless scored).
    pub consistent: Option<bool>,
    /// The reading when consistent, a tie when not (`None` unless scored).
    pub verdict: Option<Preferred>,
    /// What each ask preferred: with the baseline shown first (position A), and shown
    /// second (position B); `None` for an unscored ask.
    pub baseline_first: Option<Preferred>,
    pub baseline_second: Option<Preferred>,
}

impl PairwiseVerdict {
    /// Both asks scored and each chose the transcript shown first: the position, not the
    /// transcripts, decided.
    pub fn first_position_won_both(&self) -> bool {
        self.scored
            && self.baseline_first == Some(Preferred::Baseline)
            && self.baseline_second == Some(Preferred::Candidate)
    }
}

/// Every current pairwise verdict, ordered by rubric, judge, candidate.
pub fn pairwise_verdicts(conn: &Connection) -> Result<Vec<PairwiseVerdict>, StoreError> {
    super::all(
        conn,
        &format!(
        "SELECT {PAIR_KEY_COLUMNS}, scored, consistent, verdict, baseline_first, baseline_second
         FROM pairwise_verdicts
         ORDER BY rubric_id, rubric_version, judge_id, simulated, candidate_id"
    ),
        [],
        |r| {
            let verdict: Option<String> = r.get(9)?;
            Ok(PairwiseVerdict {
                pair: PairKey::read(r)?,
                scored: r.get(7)?,
                consistent: r.get(8)?,
                verdict: verdict.as_deref().and_then(Preferred::parse),
                baseline_first: r
                    .get::<_, Option<String>>(10)?
                    .as_deref()
                    .and_then(Preferred::parse),
                baseline_second: r
                    .get::<_, Option<String>>(11)?
                    .as_deref()
                    .and_then(Preferred::parse),
            })
        },
    )
}

/// Every current pair with one position judged (the other ask never made or not current):
/// in no verdict, counted apart.
pub fn one_position_pairs(conn: &Connection) -> Result<Vec<PairKey>, StoreError> {
    super::all(
        conn,
        &format!(
            "SELECT {PAIR_KEY_COLUMNS}
         FROM current_pairwise_judgments
         GROUP BY baseline_id, candidate_id, rubric_ref, judge_ref
         HAVING COUNT(DISTINCT baseline_position) = 1
         ORDER BY rubric_id, rubric_version, judge_id, simulated, candidate_id"
        ),
        [],
        PairKey::read,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_winner_is_read_through_the_position() {
        use Position::{A, B};
        assert_eq!(Preferred::of(Winner::Position(A), A), Preferred::Baseline);
        assert_eq!(Preferred::of(Winner::Position(A), B), Preferred::Candidate);
        assert_eq!(Preferred::of(Winner::Tie, B), Preferred::Tie);
    }
}
