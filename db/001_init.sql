-- turnbench store, version 1: runs, targets, scenarios, conversations, turns, attempts.
-- Raw facts only (offsets in ms from a monotonic clock, outcomes as text); statistics are
-- computed by the report. NULL means "not reported", never 0.

CREATE TABLE runs (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    source        TEXT NOT NULL CHECK (source IN ('collect', 'import')),
    seed          INTEGER,
    settings      TEXT NOT NULL,          -- JSON of the resolved settings; never a key
    settings_hash TEXT NOT NULL,
    tool_version  TEXT NOT NULL,
    started_at    TEXT NOT NULL,          -- RFC 3339, UTC
    ended_at      TEXT
);

CREATE TABLE targets (
    id        INTEGER PRIMARY KEY,
    provider  TEXT NOT NULL,
    model     TEXT NOT NULL,              -- the id sent to the provider
    label     TEXT NOT NULL,              -- what cells group by
    host      TEXT,
    params    TEXT NOT NULL DEFAULT '{}', -- JSON request parameters and headers' names
    prices    TEXT,                       -- JSON, USD per million tokens
    key       TEXT NOT NULL UNIQUE        -- hash of all of the above
);

CREATE TABLE scenarios (
    id          INTEGER PRIMARY KEY,
    scenario_id TEXT NOT NULL,
    hash        TEXT NOT NULL,
    category    TEXT,
    title       TEXT,
    content     TEXT NOT NULL,            -- JSON of the scenario as run
    UNIQUE (scenario_id, hash)
);

CREATE TABLE conversations (
    id           INTEGER PRIMARY KEY,
    uid          TEXT NOT NULL UNIQUE,    -- stable identity (import: id or content hash; collect: one per attempt)
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    target_id    INTEGER NOT NULL REFERENCES targets(id),
    scenario     TEXT,                    -- scenario id; links checks
    scenario_ref INTEGER REFERENCES scenarios(id),
    repeat       INTEGER NOT NULL,
    outcome      TEXT NOT NULL,           -- completed, interrupted, or the failing turn's class
    started_at   TEXT,
    ended_at     TEXT,
    latency_ms   REAL,                    -- sum of turns' E2E; completed only
    turn_count   INTEGER NOT NULL,
    trailing     TEXT                     -- JSON messages after the last answer (imports)
);
-- One stored result per collect slot; interrupted attempts stay as history.
CREATE UNIQUE INDEX conversations_slot
    ON conversations (run_id, target_id, scenario, repeat) WHERE outcome <> 'interrupted';
CREATE INDEX conversations_target ON conversations (target_id, scenario);

CREATE TABLE turns (
    conversation_id   INTEGER NOT NULL REFERENCES conversations(id),
    idx               INTEGER NOT NULL,   -- 0-based
    prompt            TEXT NOT NULL,      -- JSON [{role, content}] added to the history before this answer
    answer            TEXT,               -- visible answer; NULL when nothing arrived
    reasoning         TEXT,
    finish_reason     TEXT,
    http_status       INTEGER,
    outcome           TEXT NOT NULL,
    error             TEXT,
    attempts          INTEGER NOT NULL DEFAULT 1,
    pause_ms          REAL,               -- simulated user pause before the turn; never latency
    start_ms          REAL,               -- request start, offset from the conversation's start
    ttft_ms           REAL,
    ttfa_ms           REAL,
    e2e_ms            REAL,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    reasoning_tokens  INTEGER,
    cached_tokens     INTEGER,
    visible_tokens    INTEGER,            -- o200k_base count of the answer
    request_id        TEXT,
    chunk_offsets     BLOB,               -- u32 LE microseconds from request start, one per SSE event
    PRIMARY KEY (conversation_id, idx)
) WITHOUT ROWID;

-- Every attempt of a turn when a retry policy is on (the last one is the turn itself).
CREATE TABLE attempts (
    conversation_id INTEGER NOT NULL REFERENCES conversations(id),
    turn_idx        INTEGER NOT NULL,
    attempt         INTEGER NOT NULL,     -- 1-based
    outcome         TEXT NOT NULL,
    http_status     INTEGER,
    error           TEXT,
    e2e_ms          REAL,
    waited_ms       REAL,                 -- backoff before this attempt
    PRIMARY KEY (conversation_id, turn_idx, attempt)
) WITHOUT ROWID;
