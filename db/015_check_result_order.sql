-- turnbench store, migration 015: the current check results come in their key's order.
--
-- current_check_results and current_check_turn_results named their `definition_id` from
-- the joined definition (`d.id`). The value is the same as the result's own, but SQLite
-- cannot order by it from the results' primary key: reading a range of conversations
-- "ORDER BY conversation_id, definition_id, turn" sorted every conversation's rows in a
-- temporary B-tree (at 1 M turns, 490,000 turn verdicts read and sorted in 0.19 s of CPU;
-- 0.09 s in key order; BENCHMARKS.md "Report at scale"). The views now name the results' own column; every column, its name and its
-- value are as before.
DROP VIEW current_check_results;
CREATE VIEW current_check_results AS
SELECT r.conversation_id, r.definition_id, d.scenario, d.check_id, d.kind, d.tag,
       r.passed, r.detail, r.check_run_id
FROM check_results r
JOIN check_definitions d ON d.id = r.definition_id
WHERE r.definition_id IN (SELECT definition_id FROM current_check_definitions);

DROP VIEW current_check_turn_results;
CREATE VIEW current_check_turn_results AS
SELECT t.conversation_id, t.definition_id, d.scenario, d.check_id, d.kind, d.tag,
       t.turn, t.passed, t.detail
FROM check_turn_results t
JOIN check_definitions d ON d.id = t.definition_id
WHERE t.definition_id IN (SELECT definition_id FROM current_check_definitions);
