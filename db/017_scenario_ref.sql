-- turnbench store, migration 017: each conversation's stored scenario version in
-- conversation_facts.
--
-- conversation_facts.scenario_ref: the stored scenario version the conversation ran
-- (conversations.scenario_ref, a scenarios.id; NULL for one linked to no stored scenario),
-- as its last column. Repeats of a scenario are grouped by run, target, scenario and version; with the
-- version here, the report groups them from the one pass over conversation_facts it makes
-- anyway, instead of a second pass joined with conversations (BENCHMARKS.md "Report at
-- scale"). Every other column, its name, position and value are as before.
DROP VIEW conversation_facts;
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
       c.trailing,
       r.collector,
       c.scenario_ref
FROM conversations c
JOIN targets t ON t.id = c.target_id
JOIN runs r ON r.id = c.run_id;
