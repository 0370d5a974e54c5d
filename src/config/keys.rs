//! What each key of a definition file means and what it takes: one table, read when a
//! parser error (a wrong type, a value out of a type's range) or a range check names a
//! key, so that every such error carries the key's meaning, its accepted values and a fix.
//!
//! A key is known by its file's kind and its path in the file, tables and arrays of tables
//! by their TOML names (`target.price.input`, `criterion.anchors`, `check.pointer`); `*`
//! stands for any one key (the fault names of a mock profile). A key missing here still
//! gets a fix from its type ([`super::error`]); `tests::every_key_is_in_the_table` keeps the
//! table whole for every file but mock profiles.

/// The kinds of definition file, each with its own keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// `bench.toml` and any `--config`/`--bench` file: the run and its `[[target]]`s.
    Bench,
    /// `scenarios/*.toml`.
    Scenario,
    /// `rubrics/*.toml`.
    Rubric,
    /// `judges/*.toml`.
    Judge,
    /// `checks/*.toml`, the kinds' own keys included.
    Checks,
    /// A mock provider's profiles (`turnbench mock --profiles`).
    Mock,
}

/// One key: what it is for and what it takes (the accepted values or range).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyDoc {
    pub kind: FileKind,
    pub path: &'static str,
    pub means: &'static str,
    pub takes: &'static str,
}

const fn k(kind: FileKind, path: &'static str, means: &'static str, takes: &'static str) -> KeyDoc {
    KeyDoc {
        kind,
        path,
        means,
        takes,
    }
}

use FileKind::{Bench as B, Checks as C, Judge as J, Mock as M, Rubric as R, Scenario as S};

const WHOLE_1: &str = "a whole number, 1 or more";
const WHOLE_0: &str = "a whole number, 0 or more";
const STRING: &str = "a quoted string";
const BOOL: &str = "true or false";
const SHARE: &str = "a number from 0 to 1 (e.g. 0.05)";
const ENV: &str = "a quoted environment variable name (e.g. \"OPENAI_API_KEY\")";
const ENV_MAP: &str = "a table of name = \"VARIABLE\" (e.g. { x-api-key = \"MY_KEY\" })";
const POINTER: &str = "a quoted JSON pointer (e.g. \"/items/0/id\")";
const TURN: &str = "a turn number, 1 or more (the scenario's first turn is 1)";
const PRICE: &str = "a number of USD, 0 or more (e.g. 0.60)";

/// Request parameters, under `prefix` (`request`, `target.request`).
#[rustfmt::skip]
macro_rules! request_keys {
    ($kind:expr, $prefix:literal) => {
        [
            k($kind, concat!($prefix, ".temperature"), "the sampling temperature sent", "a number, 0 or more (e.g. 0.7)"),
            k($kind, concat!($prefix, ".top_p"), "the nucleus-sampling share sent", "a number from 0 to 1"),
            k($kind, concat!($prefix, ".max_tokens"), "the answer's token limit sent as max_tokens", WHOLE_1),
            k($kind, concat!($prefix, ".max_completion_tokens"), "the answer's token limit sent as max_completion_tokens (instead of max_tokens)", WHOLE_1),
            k($kind, concat!($prefix, ".reasoning_effort"), "the reasoning effort sent", "a quoted string the server knows (e.g. \"low\", \"medium\", \"high\")"),
            k($kind, concat!($prefix, ".response_format"), "the response format sent", "a table sent as written (e.g. { type = \"json_object\" })"),
            k($kind, concat!($prefix, ".stream"), "whether answers stream (non-streamed turns have no TTFT)", BOOL),
            k($kind, concat!($prefix, ".include_usage"), "whether stream_options.include_usage is sent", BOOL),
            k($kind, concat!($prefix, ".extra"), "the extra JSON fields merged into the request body", "a table of field = value"),
        ]
    };
}

/// The retry table of a bench or judge file.
#[rustfmt::skip]
macro_rules! retry_keys {
    ($kind:expr) => {
        [
            k($kind, "retry.attempts", "the number of attempts per request, the first included", WHOLE_1),
            k($kind, "retry.backoff_ms", "the wait before a retry, in milliseconds", WHOLE_0),
            k($kind, "retry.honour_retry_after", "whether a Retry-After header sets the wait", BOOL),
            k($kind, "retry.max_wait_ms", "the longest wait a Retry-After header may ask, in milliseconds", WHOLE_0),
        ]
    };
}

/// The endpoint keys of a bench's target or a judge file, under `prefix`.
#[rustfmt::skip]
macro_rules! endpoint_keys {
    ($kind:expr, $prefix:literal) => {
        [
            k($kind, concat!($prefix, "base_url"), "the OpenAI-compatible endpoint requests go to", "a quoted URL ending in the API's root (e.g. \"https://api.example.com/v1\")"),
            k($kind, concat!($prefix, "api_key_env"), "the environment variable holding the API key (never the key itself)", ENV),
            k($kind, concat!($prefix, "headers"), "the extra request headers, with literal values", "a table of header = \"value\""),
            k($kind, concat!($prefix, "headers_env"), "the request headers whose values come from environment variables", ENV_MAP),
            k($kind, concat!($prefix, "userinfo_env"), "the environment variable holding the URL's user:password", ENV),
            k($kind, concat!($prefix, "query_env"), "the query parameters whose values come from environment variables", ENV_MAP),
        ]
    };
}

#[rustfmt::skip]
const BENCH: &[KeyDoc] = &[
    k(B, "name", "the bench's name, stored with each run", STRING),
    k(B, "seed", "the seed of the run's random draws (pauses, order)", WHOLE_0),
    k(B, "collector", "where this bench collects from, stored with each run (default: the host name; `--collector` overrides it)", "a quoted name of letters, digits, ., -, _ or : (e.g. \"eu-west-1\")"),
    k(B, "repeats", "the number of conversations per target × scenario", WHOLE_1),
    k(B, "scenarios", "the scenario folder, relative to this file", "a quoted path (e.g. \"scenarios\")"),
    k(B, "only", "the scenario ids to run (default: every scenario in the folder)", "a list of quoted scenario ids (e.g. [\"dev-cursor-pagination\"])"),
    k(B, "turn_timeout_s", "the time one turn may take, request to end of stream, in seconds", "a number above 0 (e.g. 120)"),
    k(B, "concurrency", "the number of conversations in flight overall", WHOLE_1),
    k(B, "per_target_concurrency", "the number of conversations in flight per target", WHOLE_1),
    k(B, "pause_scale", "the share of the scenarios' user pauses slept (0: none)", "a number, 0 or more (e.g. 1.0)"),
    k(B, "request", "the request parameters every target is sent", "a [request] table"),
    k(B, "retry", "how a failed request is retried", "a [retry] table"),
    k(B, "replay", "what `turnbench replay` adds", "a [replay] table"),
    k(B, "report", "what a report of this bench shows by default (`run`, `report --config`)", "a [report] table"),
    k(B, "report.slo", "goodput's per-turn objectives when `--slo` is not given", "a quoted list of NAME=DURATION (e.g. \"ttft=500ms,e2e=3s\")"),
    k(B, "target", "the endpoints and models sent to", "[[target]] tables, each with provider, model and base_url"),
];

#[rustfmt::skip]
const TARGET: &[KeyDoc] = &[
    k(B, "target.provider", "who serves the target (its rows in the report)", STRING),
    k(B, "target.model", "the model id sent in each request", STRING),
    k(B, "target.label", "the model name the report groups by (default: model)", STRING),
    k(B, "target.price", "the target's prices, USD per million tokens", "a table { input = …, output = … } (cached optional)"),
    k(B, "target.price.input", "the price in USD per million input tokens", PRICE),
    k(B, "target.price.cached", "the price in USD per million cached input tokens", PRICE),
    k(B, "target.price.output", "the price in USD per million output tokens", PRICE),
    k(B, "target.request", "the request parameters of this target, over the [request] table", "a table (e.g. { temperature = 0.7 })"),
    k(B, "target.replay", "how replay reaches this target", "a table (e.g. { cache_hint = \"user\" })"),
    k(B, "target.replay.cache_hint", "how replay tells the target which requests belong to one conversation", "\"user\", \"none\" or \"header:NAME\" (e.g. \"header:x-session-affinity\")"),
    k(B, "target.replay.served_by_header", "the response header in which a gateway names the provider that served", "a quoted header name"),
    k(B, "target.replay.served_by_field", "the top-level response field in which a gateway names the provider that served", "a quoted field name (e.g. \"provider\")"),
];

#[rustfmt::skip]
const REPLAY: &[KeyDoc] = &[
    k(B, "replay.rounds", "the number of passes over every session per target", WHOLE_1),
    k(B, "replay.sessions_in_flight", "the number of sessions in flight per target", WHOLE_1),
    k(B, "replay.pause_cap_s", "the longest recorded pause slept, in seconds", "a number, 0 or more"),
    k(B, "replay.pause_scale", "the share of each pause and break slept (0: none)", "a number, 0 or more"),
    k(B, "replay.breaks", "the idle breaks before some turns", "\"none\" or \"SHARE:MIN-MAX\" in seconds (e.g. \"0.15:60-1200\")"),
];

#[rustfmt::skip]
const SCENARIO: &[KeyDoc] = &[
    k(S, "id", "the scenario's id, equal to the file's name", "a quoted slug of a-z, 0-9, '-', '_', '.'"),
    k(S, "category", "the scenario's category, free text", "a quoted string (e.g. \"developer\")"),
    k(S, "title", "the scenario's title", STRING),
    k(S, "system", "the system message sent first", STRING),
    k(S, "turn", "the user turns, in order", "[[turn]] tables, each with user"),
    k(S, "turn.user", "what the user says at this turn", STRING),
    k(S, "turn.pause_ms", "the simulated user pause before this turn, drawn in a range of milliseconds", "[min, max], whole numbers with min ≤ max (e.g. [800, 2500])"),
    k(S, "turn.reference", "a careful answer to this turn (the mock answers with it; checks self-test on it)", STRING),
];

#[rustfmt::skip]
const RUBRIC: &[KeyDoc] = &[
    k(R, "id", "the rubric's id; with version it names the rubric in the store", "a quoted slug of a-z, 0-9, '-', '_', '.'"),
    k(R, "version", "the rubric's version, raised whenever its content changes", WHOLE_1),
    k(R, "title", "the rubric's title, shown to the judge", STRING),
    k(R, "description", "the text shown to the judge before the criteria", STRING),
    k(R, "scale", "the integer scores every criterion takes", "a table { min = 1, max = 5 } with min < max"),
    k(R, "scale.min", "the lowest score", "a whole number below max"),
    k(R, "scale.max", "the highest score", "a whole number above min"),
    k(R, "criterion", "what the judge scores", "[[criterion]] tables, each with id, question and anchors"),
    k(R, "criterion.id", "the JSON key the judge answers this criterion under", "a quoted name of [a-z][a-z0-9_]*"),
    k(R, "criterion.question", "the question the judge answers with a score", STRING),
    k(R, "criterion.anchors", "what a score means, by score (the scale's ends at least)", "a table of score = \"text\" (e.g. { 1 = \"Wrong.\", 5 = \"Right.\" })"),
    k(R, "completed", "the yes/no task-completed decision", "a [completed] table with question"),
    k(R, "completed.question", "the yes/no question of the completed decision", STRING),
];

#[rustfmt::skip]
const JUDGE: &[KeyDoc] = &[
    k(J, "id", "the judge's id in the store (default: the file's name)", "a quoted slug (e.g. \"gpt-judge\")"),
    k(J, "builtin_mock", "whether the built-in mock judge answers, started in-process", BOOL),
    k(J, "model", "the judge model sent in each request", STRING),
    k(J, "template", "the prompt template, relative to this file", "a quoted path (e.g. \"judge.md\")"),
    k(J, "pairwise_template", "the --pairwise prompt template, relative to this file", "a quoted path"),
    k(J, "system", "the judge's system message", STRING),
    k(J, "sample", "which stored conversations are judged", "\"first\" (the first completed repeat of each cell × scenario) or \"all\""),
    k(J, "replicates", "the number of judgments per conversation", WHOLE_1),
    k(J, "vary", "what replicates after the first vary", "a list of \"order\", \"label\", \"nonce\" (e.g. [\"order\", \"label\", \"nonce\"])"),
    k(J, "seed", "the seed of the call order and of what replicates vary", WHOLE_0),
    k(J, "concurrency", "the number of judge calls in flight", WHOLE_1),
    k(J, "timeout_s", "the time one judge request may take, in seconds", "a number above 0 (e.g. 120)"),
    k(J, "reasks", "the number of re-asks after an answer that is not rubric-shaped JSON", WHOLE_0),
    k(J, "include_reasoning", "whether stored reasoning text is shown to the judge", BOOL),
    k(J, "redact", "the extra terms redacted from what the judge reads", "a list of quoted terms, each 2 characters or more"),
    k(J, "builtin_redactions", "whether the shipped list of vendors and model families is redacted too", BOOL),
    k(J, "simulated", "whether results are labelled simulated", BOOL),
    k(J, "family", "the judge model's family, for self-preference (default: from the model id)", "a quoted family name (e.g. \"gpt\")"),
    k(J, "request", "the request parameters sent to the judge", "a [request] table"),
    k(J, "retry", "how a failed judge request is retried", "a [retry] table"),
    k(J, "request.response_format", "what the judge is asked to answer in", "\"rubric_schema\", \"json_object\", \"none\", or a table sent as written"),
];

#[rustfmt::skip]
const CHECKS: &[KeyDoc] = &[
    k(C, "scenario", "the scenario these checks are for, equal to the file's name", "a quoted scenario id"),
    k(C, "check", "the checks", "[[check]] tables, each with id, kind and tag"),
    k(C, "check.id", "the check's id, unique in this file", "a quoted slug of a-z, 0-9, '-', '_', '.'"),
    k(C, "check.kind", "what the check tests", "a quoted kind name (docs/checks.md lists the 16)"),
    k(C, "check.tag", "what the check's failures count as", "\"json_validity\", \"required_fields\", \"retained_constraint\", \"superseded_instruction\" or \"format\""),
    k(C, "check.description", "what the check tests, in words, shown when it fails", STRING),
    k(C, "check.turn", "the one turn the check applies to (default: the last)", TURN),
    k(C, "check.from_turn", "the first turn of the turns the check applies to, each to pass", TURN),
    k(C, "check.allow_fence", "whether JSON inside a ``` code fence is read", BOOL),
    k(C, "check.pointer", "the JSON field the check reads", POINTER),
    k(C, "check.pointers", "the JSON fields that must be present", "a list of quoted JSON pointers (e.g. [\"/id\", \"/items\"])"),
    k(C, "check.non_empty", "whether the fields must also be non-empty", BOOL),
    k(C, "check.value", "the value the field must equal", "a TOML value (string, number, boolean, list or table)"),
    k(C, "check.values", "the values allowed", "a list of values (e.g. [\"open\", \"closed\"])"),
    k(C, "check.pattern", "the regular expression looked for", "a quoted regular expression (use '...' to keep backslashes)"),
    k(C, "check.text", "the text looked for", "a quoted string, or a list of them where the kind searches for several"),
    k(C, "check.case_sensitive", "whether case matters", BOOL),
    k(C, "check.whole_word", "whether a match must be a whole word", BOOL),
    k(C, "check.schema", "the JSON Schema the answer must validate against", "a quoted JSON Schema (use '''...''')"),
    k(C, "check.schema_file", "a file holding the JSON Schema, relative to this file", "a quoted path"),
    k(C, "check.max", "the longest answer allowed, in the kind's unit", WHOLE_0),
    k(C, "defect", "the checks' self-tests: changes to the reference conversation and the checks each must fail", "[[defect]] tables, each with name and fails"),
    k(C, "defect.fails", "the ids of exactly the checks the defect must fail", "a list of quoted check ids"),
    k(C, "defect.name", "the defect's name, unique in this file", STRING),
    k(C, "defect.turn", "the reference turn the defect changes (default: the last)", TURN),
    k(C, "defect.replace", "a change to the reference answer", "[\"from\", \"to\"] with a non-empty \"from\""),
    k(C, "defect.answer", "a whole answer replacing the reference answer", STRING),
];

#[rustfmt::skip]
const MOCK: &[KeyDoc] = &[
    k(M, "seed", "the seed of the mock's draws", WHOLE_0),
    k(M, "time_scale", "the share of every delay served", "a number above 0 (e.g. 0.1)"),
    k(M, "profile", "the models the mock serves", "[[profile]] tables, each with model, ttft_ms and gap_ms"),
    k(M, "profile.model", "the model id this profile answers", STRING),
    k(M, "profile.ttft_ms", "the delay to the first token, in milliseconds", "a table such as { dist = \"fixed\", ms = 200 }"),
    k(M, "profile.gap_ms", "the delay between chunks, in milliseconds", "a table such as { dist = \"fixed\", ms = 20 }"),
    k(M, "profile.slowdown", "the extra delay per turn, in milliseconds", "a table such as { dist = \"fixed\", ms = 50 }"),
    k(M, "profile.reasoning_words", "the reasoning words before each answer", WHOLE_0),
    k(M, "profile.words_per_chunk", "the words per streamed chunk", WHOLE_1),
    k(M, "profile.identity", "the name the model gives itself", STRING),
    k(M, "profile.stall_ms", "how long a stall lasts, in milliseconds", "a number, 0 or more"),
    k(M, "profile.cache_retention_s", "how long a prompt stays cached, in seconds", "a number, 0 or more"),
    k(M, "profile.faults.*", "the share of requests that meet this fault", SHARE),
    k(M, "profile.defects.*", "the share of answers with this defect", SHARE),
    k(M, "profile.judge.*", "the share of judge answers with this defect", SHARE),
    k(M, "profile.tools.call_rate", "the share of turns answered with a tool call", SHARE),
    k(M, "profile.tools.max_calls", "the most tool calls in one answer", WHOLE_1),
    k(M, "profile.tools.bad_arguments", "the share of tool calls with bad arguments", SHARE),
    k(M, "profile.tools.unknown_name", "the share of tool calls naming an unknown tool", SHARE),
    k(M, "profile.tools.chars_per_delta", "the characters of tool arguments per streamed delta", WHOLE_1),
];

/// Every key with a known meaning, in one list.
pub fn all() -> impl Iterator<Item = &'static KeyDoc> {
    const REQ_B: &[KeyDoc] = &request_keys!(B, "request");
    const REQ_T: &[KeyDoc] = &request_keys!(B, "target.request");
    const REQ_J: &[KeyDoc] = &request_keys!(J, "request");
    const RETRY_B: &[KeyDoc] = &retry_keys!(B);
    const RETRY_J: &[KeyDoc] = &retry_keys!(J);
    const END_T: &[KeyDoc] = &endpoint_keys!(B, "target.");
    const END_J: &[KeyDoc] = &endpoint_keys!(J, "");
    let lists: [&'static [KeyDoc]; 15] = [
        BENCH, TARGET, REPLAY, REQ_B, REQ_T, RETRY_B, END_T, SCENARIO, RUBRIC,
        // The judge's own response_format entry comes before the shared one.
        JUDGE, REQ_J, RETRY_J, END_J, CHECKS, MOCK,
    ];
    lists.into_iter().flatten()
}

/// The key at `path` (its table and key names, array indices left out) in a file of
/// `kind`: an exact entry, else one whose `*` stands for the last name.
pub fn find(kind: FileKind, path: &[&str]) -> Option<&'static KeyDoc> {
    let dotted = path.join(".");
    let wild = path
        .split_last()
        .map(|(_, parents)| {
            parents
                .iter()
                .chain(["*"].iter())
                .copied()
                .collect::<Vec<_>>()
        })
        .map(|p| p.join("."));
    all()
        .filter(|d| d.kind == kind)
        .find(|d| d.path == dotted)
        .or_else(|| {
            let wild = wild?;
            all().find(|d| d.kind == kind && d.path == wild)
        })
}

/// The fix for a value of a key: what the key is for and what it takes.
pub fn fix_for(doc: &KeyDoc) -> String {
    let key = doc.path.rsplit('.').next().unwrap_or(doc.path);
    format!("`{key}`: {}; set it to {}", doc.means, doc.takes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_by_kind_and_path() {
        let repeats = find(B, &["repeats"]).unwrap();
        assert_eq!(repeats.takes, WHOLE_1);
        assert_eq!(
            fix_for(repeats),
            "`repeats`: the number of conversations per target × scenario; set it to a whole number, 1 or more"
        );
        assert_eq!(
            find(J, &["concurrency"]).unwrap().means,
            "the number of judge calls in flight"
        );
        assert!(find(B, &["target", "price", "input"]).is_some());
        assert_eq!(
            find(M, &["profile", "faults", "stall"]).unwrap().takes,
            SHARE
        );
        assert!(find(S, &["repeats"]).is_none());
        // The judge's response_format is its own entry, not the bench's.
        assert!(
            find(J, &["request", "response_format"])
                .unwrap()
                .takes
                .contains("rubric_schema")
        );
    }

    #[test]
    fn no_key_is_listed_twice() {
        let mut seen = std::collections::HashSet::new();
        for d in all() {
            let dup = (d.kind, d.path) == (J, "request.response_format");
            assert!(
                seen.insert((d.kind, d.path)) || dup,
                "{:?} {}",
                d.kind,
                d.path
            );
        }
    }
}
