-- Replayed agent sessions (turnbench replay). A replay run is a run like collect's
-- (runs.source 'collect': it called providers) with a row in replay_runs; each pass of a
-- session against a target is a conversation (scenario = the session id, repeat = the
-- round), each recorded assistant turn a turn. These tables hold what only a replay
-- knows. NULL means not reported, never 0.

CREATE TABLE replay_runs (
    run_id        INTEGER PRIMARY KEY REFERENCES runs(id),
    sessions      TEXT NOT NULL,          -- the sessions file as given
    sessions_hash TEXT NOT NULL,          -- blake3 of the sessions as read
    pause_cap_ms  REAL NOT NULL,          -- recorded pauses longer than this were cut to it
    pause_scale   REAL NOT NULL,          -- every pause and break was slept at this share
    break_share   REAL NOT NULL,          -- share of turns after the first with a break
    break_min_ms  REAL NOT NULL,
    break_max_ms  REAL NOT NULL,
    clock_scale   REAL NOT NULL DEFAULT 1 -- the providers' clock ÷ real time: 1, or the
                                          -- built-in mock's time scale
);

-- One row per replayed pass (conversation).
CREATE TABLE replay_passes (
    conversation_id INTEGER PRIMARY KEY REFERENCES conversations(id),
    session_id      TEXT NOT NULL,
    round           INTEGER NOT NULL,     -- 1-based
    salt            TEXT NOT NULL,        -- put before the system prompt, new each pass
    cache_hint      TEXT NOT NULL         -- none, user or header:<name>
);

-- One row per replayed turn, beside its row in turns.
CREATE TABLE replay_turns (
    conversation_id INTEGER NOT NULL REFERENCES conversations(id),
    idx             INTEGER NOT NULL,     -- the turn (turns.idx)
    message_idx     INTEGER NOT NULL,     -- the recorded assistant message it replays
    prompt_hash     TEXT NOT NULL,        -- blake3 of the messages and tools sent, salt excluded
    pause_ms        REAL NOT NULL,        -- recorded pause before the turn, capped (not scaled)
    break_ms        REAL NOT NULL,        -- seeded idle break before the turn, 0 if none (not scaled)
    served_by       TEXT,                 -- the provider a gateway named, if it did
    recorded_tools  TEXT,                 -- JSON array of the recorded call names, NULL if none
    PRIMARY KEY (conversation_id, idx)
) WITHOUT ROWID;

-- Every tool call an answer made.
CREATE TABLE replay_tool_calls (
    conversation_id INTEGER NOT NULL REFERENCES conversations(id),
    turn_idx        INTEGER NOT NULL,
    call_idx        INTEGER NOT NULL,     -- the call's index in the answer
    name            TEXT NOT NULL,
    arguments       TEXT NOT NULL,
    arguments_parse INTEGER NOT NULL,     -- the arguments parse as a JSON object
    name_offered    INTEGER NOT NULL,     -- the name is one of the session's tools
    PRIMARY KEY (conversation_id, turn_idx, call_idx)
) WITHOUT ROWID;

-- replay_turn_facts: every replayed turn with its measured facts (turn_facts) and what the
-- replay knows: pause and break before it, the serving provider and whether it changed
-- since the pass's previous turn, its tool calls (how many, all valid, first call's name
-- agreeing with the recorded first call's).
CREATE VIEW replay_turn_facts AS
SELECT f.*,
       p.session_id,
       p.round,
       r.message_idx,
       r.prompt_hash,
       r.pause_ms      AS recorded_pause_ms,
       r.break_ms,
       -- The break as the provider's clock saw it: slept (× pause_scale), in its time.
       r.break_ms * (SELECT rr.pause_scale / rr.clock_scale FROM replay_runs rr
                     WHERE rr.run_id = f.run_id) AS break_seen_ms,
       r.served_by,
       (SELECT prev.served_by FROM replay_turns prev
         WHERE prev.conversation_id = r.conversation_id AND prev.idx < r.idx
         ORDER BY prev.idx DESC LIMIT 1) AS previous_served_by,
       r.recorded_tools,
       (SELECT COUNT(*) FROM replay_tool_calls c
         WHERE c.conversation_id = r.conversation_id AND c.turn_idx = r.idx) AS tool_calls,
       (SELECT MIN(c.arguments_parse AND c.name_offered) FROM replay_tool_calls c
         WHERE c.conversation_id = r.conversation_id AND c.turn_idx = r.idx) AS tool_calls_valid,
       (SELECT c.name FROM replay_tool_calls c
         WHERE c.conversation_id = r.conversation_id AND c.turn_idx = r.idx
         ORDER BY c.call_idx LIMIT 1) AS first_tool
FROM replay_turns r
JOIN replay_passes p ON p.conversation_id = r.conversation_id
JOIN turn_facts f ON f.conversation_id = r.conversation_id AND f.idx = r.idx;
