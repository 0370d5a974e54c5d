//! Context overflow: a request longer than the window the server serves the model with.
//! A property of the workload and of the provider's configured window, not a serving
//! fault, so it is its own class (`context_overflow`), whatever status or stream it came
//! in. Servers say it in many dialects; each is recognised here from the error's text (a
//! body, an error object, a bare message), and the sizes the server stated are kept.
//!
//! | server | how it says it |
//! | --- | --- |
//! | OpenAI | 400, `code: context_length_exceeded`, "maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens" |
//! | vLLM | 400, "maximum context length is 4096 tokens. However, you requested 4603 tokens (3603 in the messages, 1000 in the completion)" |
//! | llama.cpp | 400 `exceed_context_size_error` with `n_prompt_tokens` and `n_ctx`; or 200, then "Context size has been exceeded." in the stream |
//! | SGLang | "The input (5000 tokens) is longer than the model's context length (4096 tokens)" |
//! | TGI | 422, "`inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`" |
//! | Anthropic, gateways before it | "prompt is too long: 210344 tokens > 200000 maximum" |

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::ContextSizes;

/// Phrases (lower case) that say the request outgrew the model's context, one or more per
/// dialect. A message with none of them is never an overflow.
const SAID: &[&str] = &[
    "context_length_exceeded",
    "context_window_exceeded",
    "exceed_context_size_error",
    "context size has been exceeded",
    "exceeds the available context size",
    "maximum context length",
    "longer than the model's context length",
    "longer than the maximum context length",
    "prompt is too long",
    "`inputs` tokens + `max_new_tokens` must be",
    "inputs tokens + max_new_tokens must be",
    "exceeds the model's context window",
    "exceeds the context window",
];

/// Whether this error text (a body, a message, an error object's JSON) says the request
/// outgrew the context; with what it said about sizes.
pub fn recognise(text: &str) -> Option<ContextSizes> {
    let lower = text.to_ascii_lowercase();
    if !SAID.iter().any(|p| lower.contains(p)) {
        return None;
    }
    let mut sizes = sizes_in_text(text);
    // llama.cpp states them as fields of its error object.
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let err = value
            .get("error")
            .filter(|e| e.is_object())
            .unwrap_or(&value);
        let field = |k: &str| err.get(k).and_then(Value::as_i64);
        sizes.prompt_tokens = sizes.prompt_tokens.or(field("n_prompt_tokens"));
        sizes.window_tokens = sizes.window_tokens.or(field("n_ctx"));
    }
    Some(sizes)
}

/// [`recognise`] over an error value: its JSON text (an object's fields and message, or a
/// bare string).
pub fn recognise_value(err: &Value) -> Option<ContextSizes> {
    match err {
        Value::String(s) => recognise(s),
        other => recognise(&other.to_string()),
    }
}

/// One size pattern: which size its first capture is.
enum Size {
    Prompt,
    Window,
    Completion,
}

/// Sizes as the dialects word them; the first pattern that matches a size wins.
static PATTERNS: LazyLock<Vec<(Size, Regex)>> = LazyLock::new(|| {
    let p = |size, re: &str| (size, Regex::new(re).expect("a valid pattern"));
    vec![
        // OpenAI, vLLM: "maximum context length is 8192 tokens".
        p(Size::Window, r"(?i)maximum context length is (\d+)"),
        // vLLM: "(3603 in the messages, 1000 in the completion)".
        p(Size::Prompt, r"(?i)(\d+) in the messages"),
        p(Size::Completion, r"(?i)(\d+) in the completion"),
        // OpenAI: "your messages resulted in 9120 tokens".
        p(Size::Prompt, r"(?i)messages resulted in (\d+) tokens"),
        // vLLM ≥ 0.10: "your request has 4603 input tokens".
        p(Size::Prompt, r"(?i)request has (\d+) input tokens"),
        // vLLM: "'max_tokens' or 'max_completion_tokens' is too large: 1000".
        p(
            Size::Completion,
            r"(?i)max_completion_tokens'? is too large: (\d+)",
        ),
        // SGLang: "The input (5000 tokens) is longer than the model's context length (4096 tokens)".
        p(Size::Prompt, r"(?i)input \((\d+) tokens\) is longer"),
        p(Size::Window, r"(?i)context length \((\d+) tokens\)"),
        // llama.cpp: "request (4200 tokens) exceeds the available context size (4096 tokens)".
        p(Size::Prompt, r"(?i)request \((\d+) tokens\) exceeds"),
        p(Size::Window, r"(?i)available context size \((\d+) tokens\)"),
        // TGI: "must be <= 4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`".
        p(Size::Window, r"(?i)max_new_tokens`? must be <= (\d+)"),
        p(Size::Prompt, r"(?i)given: (\d+) `?inputs`? tokens"),
        p(Size::Completion, r"(?i)and (\d+) `?max_new_tokens`?"),
        // Anthropic: "prompt is too long: 210344 tokens > 200000 maximum".
        p(Size::Prompt, r"(?i)prompt is too long: (\d+) tokens"),
        p(Size::Window, r"(?i)tokens > (\d+) maximum"),
    ]
});

fn sizes_in_text(text: &str) -> ContextSizes {
    let mut sizes = ContextSizes::default();
    for (size, re) in PATTERNS.iter() {
        let slot = match size {
            Size::Prompt => &mut sizes.prompt_tokens,
            Size::Window => &mut sizes.window_tokens,
            Size::Completion => &mut sizes.completion_tokens,
        };
        if slot.is_some() {
            continue;
        }
        *slot = re
            .captures(text)
            .and_then(|c| c.get(1))
            .and_then(|m| m.as_str().parse().ok());
    }
    sizes
}

/// What the server said about sizes, for a turn's error: "; the server said: prompt 9,120
/// tokens, window 8,192" (empty when it said none).
pub fn sizes_text(sizes: &ContextSizes) -> String {
    let mut parts = Vec::new();
    if let Some(p) = sizes.prompt_tokens {
        parts.push(format!("prompt {p} tokens"));
    }
    if let Some(c) = sizes.completion_tokens {
        parts.push(format!("completion {c} tokens requested"));
    }
    if let Some(w) = sizes.window_tokens {
        parts.push(format!("window {w} tokens"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" [the server said: {}]", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(p: Option<i64>, w: Option<i64>, c: Option<i64>) -> Option<ContextSizes> {
        Some(ContextSizes {
            prompt_tokens: p,
            window_tokens: w,
            completion_tokens: c,
        })
    }

    #[test]
    fn every_dialect_is_recognised_with_its_sizes() {
        let cases = [
            (
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
                sizes(Some(9120), Some(8192), None),
            ),
            (
                r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 4603 tokens (3603 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
                sizes(Some(3603), Some(4096), Some(1000)),
            ),
            (
                r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4200,"n_ctx":4096}}"#,
                sizes(Some(4200), Some(4096), None),
            ),
            (
                r#"{"code":500,"message":"Context size has been exceeded.","type":"server_error"}"#,
                sizes(None, None, None),
            ),
            (
                r#"{"object":"error","message":"The input (5000 tokens) is longer than the model's context length (4096 tokens).","type":"BadRequestError","code":400}"#,
                sizes(Some(5000), Some(4096), None),
            ),
            (
                r#"{"error":"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`","error_type":"validation"}"#,
                sizes(Some(4000), Some(4096), Some(200)),
            ),
            (
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210344 tokens > 200000 maximum"}}"#,
                sizes(Some(210344), Some(200000), None),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(recognise(text), want, "{text}");
        }
    }

    #[test]
    fn other_errors_are_not_overflows() {
        for text in [
            r#"{"error":{"message":"Invalid API key","type":"invalid_request_error"}}"#,
            r#"{"error":{"message":"Rate limit reached for requests","code":"rate_limit_exceeded"}}"#,
            "upstream connect error",
            r#"{"error":{"message":"max_tokens must be at least 1"}}"#,
            "",
        ] {
            assert_eq!(recognise(text), None, "{text}");
        }
    }
}
