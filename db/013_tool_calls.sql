-- turnbench store, migration 013: the tool calls an answer made, for every stage. One model
-- call is one turn: an answer that only called tools is a turn (outcome `ok`, `answer`
-- NULL) whose calls are kept here, as a JSON array in OpenAI's chat shape
-- `[{"id", "type": "function", "function": {"name", "arguments"}}]` (`arguments` the JSON
-- text as given). NULL: the answer called no tool (every turn stored before this
-- migration, whose importer refused tool calls). A tool result is a `tool` message of the
-- next turn's `prompt`, with the `tool_call_id` of the call it answers.
ALTER TABLE turns ADD COLUMN tool_calls TEXT;
