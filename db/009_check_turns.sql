-- turnbench store, migration 009: a check's verdict on each answer in its scope, so the
-- report can say at which turn a requirement was lost and whether it came back.
--
-- A check scoped `from_turn = N` reads every answer of turn N on, `turn = N` that one, an
-- unscoped check the final answer. `check_results` keeps one verdict per (conversation,
-- definition), derived from these: passed iff every turn in scope passed. Only answered
-- turns of scored conversations have a row here; nothing is ever deleted.
CREATE TABLE check_turn_results (
    conversation_id INTEGER NOT NULL REFERENCES conversations(id),
    definition_id   INTEGER NOT NULL REFERENCES check_definitions(id),
    turn            INTEGER NOT NULL CHECK (turn >= 1),   -- the scenario turn (1-based) whose answer was checked
    passed          INTEGER NOT NULL CHECK (passed IN (0, 1)),
    detail          TEXT,                 -- why that answer failed; NULL when it passed
    PRIMARY KEY (conversation_id, definition_id, turn)
) WITHOUT ROWID;

-- Stores checked before this migration have conversation verdicts without turn verdicts.
-- SQL cannot run a check: the next `turnbench check` (it has the checks files) fills the
-- turn verdicts of every scored current result from the stored answers, then removes this
-- record (src/checks/scoring.rs). The conversation verdicts are not touched.
INSERT INTO store_backfills (name, since)
SELECT 'check_turn_verdicts', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE EXISTS (SELECT 1 FROM check_results WHERE passed IS NOT NULL);

-- current_check_turn_results: the turn verdicts of current definitions (as
-- current_check_results has their conversation verdicts), one row per answered turn in
-- the check's scope. A (conversation, check) pair "held" at a turn when `passed` = 1.
CREATE VIEW current_check_turn_results AS
SELECT t.conversation_id, d.id AS definition_id, d.scenario, d.check_id, d.kind, d.tag,
       t.turn, t.passed, t.detail
FROM check_turn_results t
JOIN check_definitions d ON d.id = t.definition_id
WHERE t.definition_id IN (SELECT definition_id FROM current_check_definitions);
