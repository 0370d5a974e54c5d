-- turnbench store, migration 004: the read model, and the facts it needs.
--
-- Every reader (report, export, a user's own sqlite3) reads these views; the definitions of
-- "which conversation counts for a slot", "current check result" and "current judgment"
-- live here and nowhere else. docs/store.md describes each view and its columns;
-- docs/metrics.md says how the report computes its figures from them.

-- A redone conversation supersedes the interrupted one(s) of its slot (run, target,
-- scenario, repeat): the older row stays as history and points at the one that counts.
ALTER TABLE conversations ADD COLUMN superseded_by INTEGER REFERENCES conversations(id);
UPDATE conversations AS old SET superseded_by = (
    SELECT MAX(new.id) FROM conversations new
    WHERE new.run_id = old.run_id AND new.target_id = old.target_id
      AND new.scenario = old.scenario AND new.repeat = old.repeat AND new.id > old.id)
WHERE old.outcome = 'interrupted' AND old.scenario IS NOT NULL;
-- The writer finds a slot's interrupted history through this (small) index.
CREATE INDEX conversations_interrupted
    ON conversations (run_id, target_id, scenario, repeat) WHERE outcome = 'interrupted';

-- Wall time of a turn from the first attempt's send to the final answer: retries and
-- backoff included. NULL where not measured (imports); equal to e2e_ms for one attempt.
ALTER TABLE turns ADD COLUMN wall_ms REAL;

-- The tokenizer that counted visible tokens for this run (name and version).
ALTER TABLE runs ADD COLUMN tokenizer TEXT;

-- Failed judgments (unparseable, judge_error) are not results: a plain re-run retries
-- them, and `judge --rejudge` adds fresh rows beside old ones. Which row counts is the
-- current_judgments view's business, so a key is no longer unique.
DROP INDEX IF EXISTS judgments_done;
CREATE INDEX judgments_key ON judgments (conversation_id, key);

-- Which check definitions each `turnbench check` run loaded: the current definitions of a
-- scenario are those the newest run that loaded its checks file loaded.
CREATE TABLE check_run_definitions (
    check_run_id  INTEGER NOT NULL REFERENCES check_runs(id),
    definition_id INTEGER NOT NULL REFERENCES check_definitions(id),
    PRIMARY KEY (check_run_id, definition_id)
) WITHOUT ROWID;
-- Stores checked before this migration: the newest definition of each check, as the
-- newest check run's.
INSERT INTO check_run_definitions (check_run_id, definition_id)
SELECT (SELECT MAX(id) FROM check_runs), MAX(d.id)
FROM check_definitions d
WHERE EXISTS (SELECT 1 FROM check_runs)
GROUP BY d.scenario, d.check_id;

-- conversation_facts: every stored conversation with its target and run. `counts` is 1 for
-- the one conversation that counts for its slot (not superseded), 0 for history.
-- `simulated` is 1 for targets served by the built-in mock provider (host `builtin-mock`):
-- their figures are simulated and are labelled so wherever they appear.
CREATE VIEW conversation_facts AS
SELECT c.id            AS conversation_id,
       c.uid,
       c.run_id,
       r.name          AS run_name,
       r.source        AS run_source,
       c.target_id,
       t.provider,
       t.model,
       t.label,
       t.host,
       IFNULL(t.host, '') = 'builtin-mock' AS simulated,
       t.prices,
       c.scenario,
       c.repeat,
       c.outcome,
       c.outcome = 'completed' AS completed,
       c.superseded_by IS NULL AS counts,
       c.superseded_by,
       c.turn_count,
       c.latency_ms,
       c.started_at,
       c.ended_at,
       c.trailing
FROM conversations c
JOIN targets t ON t.id = c.target_id
JOIN runs r ON r.id = c.run_id;

-- Whether a turn has visible answer text, and reasoning, stored beside its measured facts
-- (the writer sets both): a reader of facts then never evaluates the text itself. (An
-- index holding the measured facts apart from the text would make a million-turn scan
-- ~0.2 s instead of ~1 s, but costs imports nearly half their speed: measured, left out.)
ALTER TABLE turns ADD COLUMN has_answer INTEGER;
ALTER TABLE turns ADD COLUMN has_reasoning INTEGER;
UPDATE turns SET has_answer = (answer IS NOT NULL AND length(trim(answer)) > 0),
                 has_reasoning = (reasoning IS NOT NULL AND length(reasoning) > 0);

-- turn_facts: every stored turn with the identity of its conversation. Times in ms;
-- NULL means not measured or not reported, never 0.
CREATE VIEW turn_facts AS
SELECT u.conversation_id,
       u.idx,
       c.run_id,
       c.target_id,
       t.provider,
       t.label,
       c.scenario,
       c.repeat,
       c.outcome       AS conversation_outcome,
       c.superseded_by IS NULL AS counts,
       u.outcome,
       u.finish_reason,
       u.http_status,
       u.error,
       u.attempts,
       u.pause_ms,
       u.ttft_ms,
       u.ttfa_ms,
       u.e2e_ms,
       COALESCE(u.wall_ms, u.e2e_ms) AS wall_ms,
       u.prompt_tokens,
       u.completion_tokens,
       u.reasoning_tokens,
       u.cached_tokens,
       u.visible_tokens,
       u.has_answer,
       u.has_reasoning,
       u.prompt,
       u.answer,
       u.reasoning
FROM turns u
JOIN conversations c ON c.id = u.conversation_id
JOIN targets t ON t.id = c.target_id;

-- current_check_definitions: for each scenario, the definitions loaded by the newest
-- `turnbench check` run that loaded that scenario's checks file.
CREATE VIEW current_check_definitions AS
WITH newest AS (
    SELECT d.scenario, MAX(l.check_run_id) AS check_run_id
    FROM check_run_definitions l JOIN check_definitions d ON d.id = l.definition_id
    GROUP BY d.scenario)
SELECT d.id AS definition_id, d.scenario, d.check_id, d.hash, d.kind, d.tag, d.definition
FROM newest n
JOIN check_run_definitions l ON l.check_run_id = n.check_run_id
JOIN check_definitions d ON d.id = l.definition_id AND d.scenario = n.scenario;

-- current_check_results: the stored results of current definitions. `passed` NULL: not
-- scored (the conversation did not complete); a conversation with no row for a current
-- definition has not been checked against it yet.
-- (`IN (SELECT …)` is evaluated once, as a small list: joining the view directly would let
-- SQLite re-run its grouping for every one of millions of results.)
CREATE VIEW current_check_results AS
SELECT r.conversation_id, d.id AS definition_id, d.scenario, d.check_id, d.kind, d.tag,
       r.passed, r.detail, r.check_run_id
FROM check_results r
JOIN check_definitions d ON d.id = r.definition_id
WHERE r.definition_id IN (SELECT definition_id FROM current_check_definitions);

-- current_judgments: per (conversation, rubric, judge, replicate) the judgment that counts.
-- Current rubric: its highest version. Current judge: for each judge id, real and
-- simulated apart, the settings of its newest judgment. Among that judge's rows: the
-- newest `ok`, else the newest row (unparseable or judge_error: counted as such, no score).
CREATE VIEW current_judgments AS
WITH latest_rubric AS (
    SELECT r.id FROM rubrics r
    WHERE r.version = (SELECT MAX(r2.version) FROM rubrics r2 WHERE r2.rubric_id = r.rubric_id)),
latest_judge AS (
    SELECT j.judge_ref AS id FROM judgments j
    WHERE j.id IN (SELECT MAX(k.id) FROM judgments k GROUP BY k.judge_id, k.simulated)),
ranked AS (
    SELECT j.*, ROW_NUMBER() OVER (
               PARTITION BY j.conversation_id, j.rubric_ref, j.judge_ref, j.replicate
               ORDER BY (j.status = 'ok') DESC, j.id DESC) AS pick
    FROM judgments j
    WHERE j.rubric_ref IN (SELECT id FROM latest_rubric)
      AND j.judge_ref IN (SELECT id FROM latest_judge))
SELECT ranked.id AS judgment_id,
       ranked.conversation_id,
       ranked.rubric_id,
       ranked.rubric_version,
       ranked.judge_id,
       judges.model    AS judge_model,
       judges.host     AS judge_host,
       ranked.simulated,
       ranked.replicate,
       ranked.label,
       ranked.status,
       ranked.scores,
       ranked.completed,
       ranked.rationale,
       ranked.raw_output,
       ranked.error,
       ranked.key,
       ranked.created_at
FROM ranked JOIN judges ON judges.id = ranked.judge_ref
WHERE ranked.pick = 1;
