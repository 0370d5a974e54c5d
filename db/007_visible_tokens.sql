-- turnbench store, migration 007: visible tokens counted once, where turns are written.
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

