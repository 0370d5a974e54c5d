-- turnbench store, migration 003: rule-based check definitions and their results.
-- A result is keyed by (conversation, check definition); a definition is one version of
-- one check (scenario, check id, definition hash), so an edited check is a new definition
-- and the results of the old one stay. Which definitions are current is decided by the
-- checks files of the day, not stored. Nothing here is ever deleted.

CREATE TABLE check_definitions (
    id         INTEGER PRIMARY KEY,
    scenario   TEXT NOT NULL,             -- scenario id, as in conversations.scenario
    check_id   TEXT NOT NULL,             -- the check's `id` in checks/<scenario>.toml
    hash       TEXT NOT NULL,             -- blake3 of the definition (and of its schema file)
    kind       TEXT NOT NULL,
    tag        TEXT NOT NULL,             -- json_validity, required_fields, retained_constraint,
                                          -- superseded_instruction, format, custom
    definition TEXT NOT NULL,             -- JSON of the [[check]] table, keys sorted
    first_seen TEXT NOT NULL,             -- RFC 3339, UTC
    UNIQUE (scenario, check_id, hash)
);

-- One `turnbench check` invocation: when its results were computed.
CREATE TABLE check_runs (
    id           INTEGER PRIMARY KEY,
    checks_dir   TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    ended_at     TEXT
);

CREATE TABLE check_results (
    conversation_id INTEGER NOT NULL REFERENCES conversations(id),
    definition_id   INTEGER NOT NULL REFERENCES check_definitions(id),
    passed          INTEGER CHECK (passed IN (0, 1)),  -- NULL: not scored
    detail          TEXT,                 -- why it failed or was not scored; NULL when passed
    check_run_id    INTEGER NOT NULL REFERENCES check_runs(id),
    PRIMARY KEY (conversation_id, definition_id)
) WITHOUT ROWID;
