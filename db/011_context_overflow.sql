-- turnbench store, migration 011: what a server said about sizes when it refused a request
-- that outgrew the model's context (turn outcome `context_overflow`). NULL: the server did
-- not say (or the turn did not overflow), never 0.
ALTER TABLE turns ADD COLUMN overflow_prompt_tokens INTEGER;     -- the prompt, as the server counted it
ALTER TABLE turns ADD COLUMN overflow_window_tokens INTEGER;     -- the context window it serves the model with
ALTER TABLE turns ADD COLUMN overflow_completion_tokens INTEGER; -- the completion room the request asked for

-- turn_facts (004), with those three columns at the end: every
-- other column as it was. replay_turn_facts (007) reads `f.*` and so has them too.
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
       u.overflow_completion_tokens
FROM turns u
JOIN conversations c ON c.id = u.conversation_id
JOIN targets t ON t.id = c.target_id;
