-- turnbench store, migration 007: visible tokens counted once, where turns are written; the
-- read model's plans at a million turns (docs/store.md, "Query plans").
--
-- Before this migration `turnbench import` stored no visible-token count (NULL), so every
-- report counted every imported answer again with o200k_base. Import now counts as collect
-- and replay do. SQL cannot count o200k tokens: this migration records that the store's
-- NULL counts are still to be filled, and the next open by turnbench (`store::open`,
-- src/store/backfill.rs) counts them in Rust, commits, and removes the record: once. A count
-- that stays NULL after that (a row written by other means) is "missing" to the report.
CREATE TABLE store_backfills (
    name  TEXT PRIMARY KEY,               -- what is still to fill: `visible_tokens`
    since TEXT NOT NULL                   -- when the migration asked for it
);
INSERT INTO store_backfills (name, since)
VALUES ('visible_tokens', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

-- The runs a selection holds are found through their conversations by run, not by a scan
-- of every conversation.
CREATE INDEX conversations_run ON conversations (run_id);

-- replay_turn_facts (006), unchanged but for its joins: CROSS JOIN keeps replay_turns the
-- outer loop, so the view reads the replayed turns and looks their facts up, where the
-- planner had scanned every stored turn to find the (few, or no) replayed ones.
DROP VIEW replay_turn_facts;
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
CROSS JOIN replay_passes p ON p.conversation_id = r.conversation_id
CROSS JOIN turn_facts f ON f.conversation_id = r.conversation_id AND f.idx = r.idx;
