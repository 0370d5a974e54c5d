-- turnbench store, migration 012: what each SSE event carried, beside when it came.
-- `chunk_offsets` (001) holds one u32 LE offset in µs per SSE event, whatever the event
-- carried: a role-only delta, a finish, usage and `[DONE]` among the text. `chunk_kinds`
-- holds one byte per offset, in the same order: 0 nothing measured as output (role,
-- finish, usage, `[DONE]`, an error), 1 answer text, 2 reasoning text, 3 a tool call's name
-- or arguments. Inter-token latency is read from the offsets of kinds 1 and 2. NULL: not
-- known (turns collected before this migration, imported or non-streamed turns).
ALTER TABLE turns ADD COLUMN chunk_kinds BLOB;

-- turn_facts (011), with the offsets and their kinds at the end: every other column as it
-- was. replay_turn_facts (007) reads `f.*` and so has them too.
DROP VIEW turn_facts;
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
       u.reasoning,
       u.overflow_prompt_tokens,
       u.overflow_window_tokens,
       u.overflow_completion_tokens,
       u.chunk_offsets,
       u.chunk_kinds
FROM turns u
JOIN conversations c ON c.id = u.conversation_id
JOIN targets t ON t.id = c.target_id;
