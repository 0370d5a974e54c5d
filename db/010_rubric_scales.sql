-- turnbench store, migration 010: each stored rubric's score scale in the read model, so a
-- reader (the report's judge means, a user's own sqlite3) bounds a mean by the scale its
-- scores were given on without parsing the rubric's JSON.
CREATE VIEW rubric_scales AS
SELECT r.rubric_id, r.version AS rubric_version,
       CAST(json_extract(r.content, '$.scale.min') AS INTEGER) AS scale_min,
       CAST(json_extract(r.content, '$.scale.max') AS INTEGER) AS scale_max
FROM rubrics r
WHERE json_extract(r.content, '$.scale.min') IS NOT NULL
  AND json_extract(r.content, '$.scale.max') IS NOT NULL;
