-- turnbench store, migration 002: blind LLM-judge results.
-- Rubrics and judge settings are stored as judged (content, never a key); each judgment
-- row is keyed by a hash of judge model + parameters, template text, rubric content,
-- blinded transcript and replicate index. Rows are never deleted: a `judge_error` is kept
-- as history and retried by the next run; `ok` and `unparseable` are final for their key.
-- Depends on 001 only (conversations), not on 002.

CREATE TABLE IF NOT EXISTS rubrics (
    id        INTEGER PRIMARY KEY,
    rubric_id TEXT NOT NULL,
    version   INTEGER NOT NULL,
    hash      TEXT NOT NULL,              -- blake3 of the content JSON
    title     TEXT NOT NULL,
    content   TEXT NOT NULL,              -- JSON of the rubric (criteria, scale, anchors)
    UNIQUE (rubric_id, version)           -- an edited rubric must be a new version
);

CREATE TABLE IF NOT EXISTS judges (
    id        INTEGER PRIMARY KEY,
    judge_id  TEXT NOT NULL,
    model     TEXT NOT NULL,
    host      TEXT NOT NULL,              -- the judge's own host, or builtin-mock
    simulated INTEGER NOT NULL,           -- 1: a mock judge; its results are simulated
    settings  TEXT NOT NULL,              -- JSON: parameters, system text, sampling; no key
    template  TEXT NOT NULL,              -- prompt template text
    hash      TEXT NOT NULL UNIQUE        -- of all of the above
);

CREATE TABLE IF NOT EXISTS judgments (
    id                INTEGER PRIMARY KEY,
    key               TEXT NOT NULL,
    conversation_id   INTEGER NOT NULL REFERENCES conversations(id),
    rubric_ref        INTEGER NOT NULL REFERENCES rubrics(id),
    judge_ref         INTEGER NOT NULL REFERENCES judges(id),
    rubric_id         TEXT NOT NULL,
    rubric_version    INTEGER NOT NULL,
    judge_id          TEXT NOT NULL,
    replicate         INTEGER NOT NULL,   -- 1-based
    label             TEXT NOT NULL,      -- the opaque label the judge saw
    status            TEXT NOT NULL CHECK (status IN ('ok', 'unparseable', 'judge_error')),
    scores            TEXT,               -- JSON {criterion: integer}; only when ok
    completed         INTEGER,            -- 0/1; only when ok
    rationale         TEXT,
    raw_output        TEXT,               -- the judge's last answer, as received
    error             TEXT,               -- why each ask failed, or the HTTP error
    asks              INTEGER NOT NULL,   -- 1 + re-asks after unusable answers
    attempts          INTEGER NOT NULL,   -- HTTP attempts over all asks (retries included)
    http_status       INTEGER,            -- of the last attempt
    latency_ms        REAL,               -- first send to last answer, backoff included
    prompt_tokens     INTEGER,            -- summed over asks; NULL when never reported
    completion_tokens INTEGER,
    simulated         INTEGER NOT NULL,
    invocation        TEXT NOT NULL,      -- start time of the `turnbench judge` run
    seq               INTEGER NOT NULL,   -- position in that run's seeded call order
    created_at        TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS judgments_done
    ON judgments (conversation_id, key) WHERE status <> 'judge_error';
CREATE INDEX IF NOT EXISTS judgments_conversation ON judgments (conversation_id, rubric_id);
