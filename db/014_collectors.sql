-- turnbench store, migration 014: where a run was collected from.
--
-- runs.collector: the name the collecting machine gave (`--collector NAME`, `collector =`
-- in bench.toml; default: its host name). NULL for a run stored before this migration and
-- for an import (a file's conversations were collected elsewhere, by whoever wrote it).
-- `turnbench merge` brings runs of many collectors into one store; `turnbench report
-- --collector NAME` reads some of them. conversation_facts shows it as its last column.
ALTER TABLE runs ADD COLUMN collector TEXT;

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
       r.collector
FROM conversations c
JOIN targets t ON t.id = c.target_id
JOIN runs r ON r.id = c.run_id;
