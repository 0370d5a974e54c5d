-- turnbench store, migration 016: a turn's own facts, apart from its conversation's.
--
-- turn_rows: every stored turn as turn_facts gives it, without the columns turn_facts takes
-- from the turn's conversation and target (run, target, provider, label, scenario,
-- repeat, conversation outcome, counts). For a reader that holds the conversations already
-- (read from conversation_facts, which says which of them count and are selected): the
-- report reads a million turns without looking up each one's conversation and target
-- (BENCHMARKS.md "Report at scale"). turn_facts is now turn_rows joined with them: every
-- column, its name and its value are as before, and "wall" is defined once, here.
CREATE VIEW turn_rows AS
SELECT conversation_id,
       idx,
       outcome,
       finish_reason,
       http_status,
       error,
       attempts,
       pause_ms,
       ttft_ms,
       ttfa_ms,
       e2e_ms,
       COALESCE(wall_ms, e2e_ms) AS wall_ms,
       prompt_tokens,
       completion_tokens,
       reasoning_tokens,
       cached_tokens,
       visible_tokens,
       has_answer,
       has_reasoning,
       prompt,
       answer,
       reasoning,
       overflow_prompt_tokens,
       overflow_window_tokens,
       overflow_completion_tokens,
       chunk_offsets,
       chunk_kinds
FROM turns;

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
       u.wall_ms,
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
FROM turn_rows u
JOIN conversations c ON c.id = u.conversation_id
JOIN targets t ON t.id = c.target_id;
