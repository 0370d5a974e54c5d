-- turnbench store, migration 008: runs over time (`turnbench report --baseline-run`,
-- `--since`, `--trend`).
--
-- conversation_versions: which version (content hash) of its scenario each conversation
-- ran. A run compared with a baseline is compared only on the scenario versions both hold:
-- an edited scenario is another task. `scenario_version` is NULL for a conversation linked
-- to no stored scenario (an import that names none the store knows).
CREATE VIEW conversation_versions AS
SELECT f.conversation_id,
       f.run_id,
       f.provider,
       f.label,
       f.scenario,
       f.counts,
       s.hash AS scenario_version
FROM conversation_facts f
JOIN conversations c ON c.id = f.conversation_id
LEFT JOIN scenarios s ON s.id = c.scenario_ref;
