-- turnbench store, migration 005: a judge whose scores can be trusted — pairwise
-- comparisons against a baseline, each asked twice with the positions swapped.
--
-- One row per ask, as for single judgments: keyed by a hash of the judge's settings, the
-- rubric's content and the two blinded transcripts in the order shown. Rows are never
-- deleted; `judge_error` and `unparseable` rows are history and the key is asked again.

CREATE TABLE pairwise_judgments (
    id                INTEGER PRIMARY KEY,
    key               TEXT NOT NULL,
    baseline_id       INTEGER NOT NULL REFERENCES conversations(id),
    candidate_id      INTEGER NOT NULL REFERENCES conversations(id),
    rubric_ref        INTEGER NOT NULL REFERENCES rubrics(id),
    judge_ref         INTEGER NOT NULL REFERENCES judges(id),
    rubric_id         TEXT NOT NULL,
    rubric_version    INTEGER NOT NULL,
    judge_id          TEXT NOT NULL,
    -- Where the baseline's transcript was shown: 'A' (first) or 'B' (second).
    baseline_position TEXT NOT NULL CHECK (baseline_position IN ('A', 'B')),
    status            TEXT NOT NULL CHECK (status IN ('ok', 'unparseable', 'judge_error')),
    -- The answer as given, by position; only when ok.
    winner            TEXT CHECK (winner IN ('A', 'B', 'tie')),
    -- The same answer read through the positions; only when ok.
    preferred         TEXT CHECK (preferred IN ('baseline', 'candidate', 'tie')),
    rationale         TEXT,
    raw_output        TEXT,
    error             TEXT,
    asks              INTEGER NOT NULL,
    attempts          INTEGER NOT NULL,
    http_status       INTEGER,
    latency_ms        REAL,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    simulated         INTEGER NOT NULL,
    invocation        TEXT NOT NULL,
    seq               INTEGER NOT NULL,
    created_at        TEXT NOT NULL
);
CREATE INDEX pairwise_judgments_key ON pairwise_judgments (candidate_id, key);

-- current_pairwise_judgments: per (baseline, candidate, rubric, judge, position) the ask
-- that counts, by the rule of current_judgments: the rubric's highest version; for each
-- judge id (real and simulated apart) the settings of its newest pairwise judgment; the
-- newest `ok` row, else the newest row.
CREATE VIEW current_pairwise_judgments AS
WITH latest_rubric AS (
    SELECT r.id FROM rubrics r
    WHERE r.version = (SELECT MAX(r2.version) FROM rubrics r2 WHERE r2.rubric_id = r.rubric_id)),
latest_judge AS (
    SELECT p.judge_ref AS id FROM pairwise_judgments p
    WHERE p.id IN (SELECT MAX(k.id) FROM pairwise_judgments k GROUP BY k.judge_id, k.simulated)),
ranked AS (
    SELECT p.*, ROW_NUMBER() OVER (
               PARTITION BY p.baseline_id, p.candidate_id, p.rubric_ref, p.judge_ref,
                            p.baseline_position
               ORDER BY (p.status = 'ok') DESC, p.id DESC) AS pick
    FROM pairwise_judgments p
    WHERE p.rubric_ref IN (SELECT id FROM latest_rubric)
      AND p.judge_ref IN (SELECT id FROM latest_judge))
SELECT ranked.id AS pairwise_judgment_id,
       ranked.baseline_id,
       ranked.candidate_id,
       ranked.rubric_ref,
       ranked.judge_ref,
       ranked.rubric_id,
       ranked.rubric_version,
       ranked.judge_id,
       judges.model AS judge_model,
       ranked.simulated,
       ranked.baseline_position,
       ranked.status,
       ranked.winner,
       ranked.preferred,
       ranked.rationale,
       ranked.key,
       ranked.created_at
FROM ranked JOIN judges ON judges.id = ranked.judge_ref
WHERE ranked.pick = 1;

-- pairwise_verdicts: one row per (baseline, candidate, rubric, judge) whose two asks (the
-- baseline shown first, then second) are both current. `scored`: both asks ok.
-- `consistent`: both read the same through the positions. `verdict`: that reading when
-- consistent; a verdict that changes with position is inconsistent and counts as a tie;
-- NULL when not scored.
CREATE VIEW pairwise_verdicts AS
SELECT a.baseline_id,
       a.candidate_id,
       a.rubric_id,
       a.rubric_version,
       a.judge_id,
       a.judge_model,
       a.simulated,
       a.preferred AS baseline_first,
       b.preferred AS baseline_second,
       (a.status = 'ok' AND b.status = 'ok') AS scored,
       CASE WHEN a.status = 'ok' AND b.status = 'ok'
            THEN (a.preferred = b.preferred) END AS consistent,
       CASE WHEN a.status <> 'ok' OR b.status <> 'ok' THEN NULL
            WHEN a.preferred = b.preferred THEN a.preferred
            ELSE 'tie' END AS verdict
FROM current_pairwise_judgments a
JOIN current_pairwise_judgments b
  ON b.baseline_id = a.baseline_id AND b.candidate_id = a.candidate_id
 AND b.rubric_ref = a.rubric_ref AND b.judge_ref = a.judge_ref
WHERE a.baseline_position = 'A' AND b.baseline_position = 'B';

-- Reference anchors (`turnbench judge --anchors`): the judge's sanity run scores each
-- scenario's reference conversation (the scenario's user turns with its reference answers)
-- and the spoiled variants its checks file's `[[defect]]` tables make of it. Not stored
-- conversations: each row names its scenario and variant. Keyed like judgments.
CREATE TABLE anchor_judgments (
    id                INTEGER PRIMARY KEY,
    key               TEXT NOT NULL,
    scenario          TEXT NOT NULL,
    -- NULL: the reference conversation; else the name of the defect that spoiled it.
    defect            TEXT,
    rubric_ref        INTEGER NOT NULL REFERENCES rubrics(id),
    judge_ref         INTEGER NOT NULL REFERENCES judges(id),
    rubric_id         TEXT NOT NULL,
    rubric_version    INTEGER NOT NULL,
    judge_id          TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('ok', 'unparseable', 'judge_error')),
    scores            TEXT,               -- JSON {criterion: integer}; only when ok
    completed         INTEGER,
    rationale         TEXT,
    raw_output        TEXT,
    error             TEXT,
    asks              INTEGER NOT NULL,
    attempts          INTEGER NOT NULL,
    http_status       INTEGER,
    latency_ms        REAL,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    simulated         INTEGER NOT NULL,
    invocation        TEXT NOT NULL,
    seq               INTEGER NOT NULL,
    created_at        TEXT NOT NULL
);
CREATE INDEX anchor_judgments_key ON anchor_judgments (key);

-- current_anchor_judgments: per (scenario, variant, rubric, judge) the ask that counts, by
-- the rule of current_judgments.
CREATE VIEW current_anchor_judgments AS
WITH latest_rubric AS (
    SELECT r.id FROM rubrics r
    WHERE r.version = (SELECT MAX(r2.version) FROM rubrics r2 WHERE r2.rubric_id = r.rubric_id)),
latest_judge AS (
    SELECT a.judge_ref AS id FROM anchor_judgments a
    WHERE a.id IN (SELECT MAX(k.id) FROM anchor_judgments k GROUP BY k.judge_id, k.simulated)),
ranked AS (
    SELECT a.*, ROW_NUMBER() OVER (
               PARTITION BY a.scenario, COALESCE(a.defect, ''), a.rubric_ref, a.judge_ref
               ORDER BY (a.status = 'ok') DESC, a.id DESC) AS pick
    FROM anchor_judgments a
    WHERE a.rubric_ref IN (SELECT id FROM latest_rubric)
      AND a.judge_ref IN (SELECT id FROM latest_judge))
SELECT ranked.id AS anchor_judgment_id,
       ranked.scenario,
       ranked.defect,
       ranked.rubric_id,
       ranked.rubric_version,
       ranked.judge_id,
       judges.model AS judge_model,
       ranked.simulated,
       ranked.status,
       ranked.scores,
       ranked.rationale,
       ranked.key,
       ranked.created_at
FROM ranked JOIN judges ON judges.id = ranked.judge_ref
WHERE ranked.pick = 1;

-- current_judges: for each judge id (real and simulated apart) the settings of its newest
-- judgment — the judge current_judgments reads — so a report can say what its replicates
-- varied (`settings` JSON: `vary`, `request.temperature`).
CREATE VIEW current_judges AS
SELECT j.judge_id,
       j.simulated,
       judges.model,
       judges.host,
       judges.settings
FROM judgments j JOIN judges ON judges.id = j.judge_ref
WHERE j.id IN (SELECT MAX(k.id) FROM judgments k GROUP BY k.judge_id, k.simulated);
