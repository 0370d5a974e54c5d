//! The client against byte-exact responses of real OpenAI-compatible servers, served over
//! loopback by a raw TCP server that writes each response in awkward pieces.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use turnbench::chat::Message;
use turnbench::client::{Client, Endpoint, Reply};
use turnbench::config::RequestParams;
use turnbench::outcome::TurnOutcome;

/// Serves one request: `head` (status line and headers), then `pieces` with small pauses.
fn serve_once(head: &'static str, pieces: Vec<&'static [u8]>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut sock, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(sock.try_clone().unwrap());
        let mut len = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        sock.write_all(head.as_bytes()).unwrap();
        for p in pieces {
            sock.write_all(p).unwrap();
            sock.flush().unwrap();
            std::thread::sleep(Duration::from_millis(3));
        }
        // Dropping the socket closes the connection: the end of a close-delimited body.
    });
    format!("http://{addr}/v1")
}

fn send(base: &str, stream: bool) -> Reply {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let endpoint = Endpoint {
        url: format!("{base}/chat/completions").into(),
        model: "m".into(),
        api_key: None,
        headers: vec![],
        params: RequestParams {
            stream: Some(stream),
            ..Default::default()
        },
    };
    rt.block_on(async {
        let client = Client::new().unwrap();
        let msgs = [Message::new("user", "hi")];
        client
            .send(&endpoint, &msgs, Duration::from_secs(5))
            .await
            .0
    })
}

const SSE: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";

#[test]
fn crlf_comments_multiline_usage_chunk_and_no_done() {
    let base = serve_once(
        SSE,
        vec![
            b": OPENROUTER PROCESSING\r\n\r\n",
            b"data: {\"id\":\"gen-1\",\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\r\n\r\n",
            b"data: {\"choices\":[{\"delta\":{\"reasoning\":\"think \"}}]}\r\n\r\ndata: {\"choi",
            b"ces\":[{\"delta\":{\"content\":\"Hel\"}}]}\r\n\r\n",
            b"data: {\"choices\":[{\"delta\":\r\ndata: {\"content\":\"lo\"}}]}\r\n\r\n",
            b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            b"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4,\"completion_tokens_details\":{\"reasoning_tokens\":2}}}",
        ],
    );
    let t = send(&base, true);
    assert_eq!(t.outcome(), TurnOutcome::Ok, "{:?}", t.error);
    assert_eq!(t.answer.as_deref(), Some("Hello"));
    assert_eq!(t.reasoning.as_deref(), Some("think "));
    assert_eq!(t.usage.completion_tokens, Some(4));
    assert_eq!(t.usage.reasoning_tokens, Some(2));
    assert_eq!(t.usage.cached_tokens, None, "not reported is not zero");
    assert_eq!(t.request_id.as_deref(), Some("gen-1"));
    let (ttft, ttfa, e2e) = (t.ttft_ms.unwrap(), t.ttfa_ms.unwrap(), t.e2e_ms.unwrap());
    // The reasoning delta and the first answer text are written 3 ms apart, but a loaded
    // machine can deliver both in one read: then they share a clock reading (seen once in
    // a full CI-size run), so TTFT ≤ TTFA, not <.
    assert!(ttft <= ttfa && ttfa <= e2e, "{ttft} {ttfa} {e2e}");
    assert_eq!(
        t.chunk_offsets_us.len(),
        6,
        "one offset per SSE event, comments excluded"
    );
}

#[test]
fn error_object_after_200_fails_even_when_done_follows() {
    let base = serve_once(
        SSE,
        vec![
            b"data: {\"choices\":[{\"delta\":{\"content\":\"partial\"}}]}\n\n",
            b"data: {\"error\":{\"message\":\"model overloaded\",\"type\":\"server_error\",\"code\":503}}\n\n",
            b"data: [DONE]\n\n",
        ],
    );
    let t = send(&base, true);
    assert_eq!(t.outcome(), TurnOutcome::Http5xx);
    assert!(t.error.as_deref().unwrap().contains("model overloaded"));
    assert_eq!(
        t.answer.as_deref(),
        Some("partial"),
        "text before the error is kept"
    );
}

#[test]
fn llama_cpp_error_field_is_not_dropped() {
    let base = serve_once(
        SSE,
        vec![b"error: {\"code\":400,\"message\":\"context too long\",\"type\":\"invalid_request_error\"}\n\n"],
    );
    let t = send(&base, true);
    assert_eq!(t.outcome(), TurnOutcome::Http4xx);
    assert!(t.error.as_deref().unwrap().contains("context too long"));
}

#[test]
fn think_tags_inline_and_a_cut_stream() {
    let base = serve_once(
        SSE,
        vec![
            b"data: {\"choices\":[{\"delta\":{\"content\":\"<think>plan\"}}]}\n\n",
            b"data: {\"choices\":[{\"delta\":{\"content\":\"</think>\\n\\nAns\"}}]}\n\n",
        ],
    );
    let t = send(&base, true);
    assert_eq!(
        t.outcome(),
        TurnOutcome::StreamCut,
        "closed before a finish"
    );
    assert_eq!(t.answer.as_deref(), Some("Ans"));
    assert_eq!(t.reasoning.as_deref(), Some("plan"));
}

#[test]
fn empty_200_stream_and_plain_json_to_a_streaming_request() {
    let t = send(&serve_once(SSE, vec![]), true);
    assert_eq!(t.outcome(), TurnOutcome::StreamCut);

    let json_head =
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";
    let t = send(
        &serve_once(
            json_head,
            vec![
                b"{\"choices\":[{\"message\":{\"content\":\"whole\"},\"finish_reason\":\"stop\"}]}",
            ],
        ),
        true,
    );
    assert_eq!(t.outcome(), TurnOutcome::Ok);
    assert_eq!(t.answer.as_deref(), Some("whole"));
    // A whole body has no first token: neither TTFT nor TTFA; E2E is the body read.
    assert_eq!((t.ttft_ms, t.ttfa_ms), (None, None));
    assert!(t.e2e_ms.is_some_and(|e| e > 0.0));
}

#[test]
fn http_errors_keep_status_and_body() {
    let head = "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after: 2\r\nconnection: close\r\n\r\n";
    let t = send(
        &serve_once(head, vec![b"{\"error\":{\"message\":\"slow down\"}}"]),
        true,
    );
    assert_eq!(t.outcome(), TurnOutcome::RateLimited);
    assert_eq!(t.http_status, Some(429));
    assert!(t.error.as_deref().unwrap().contains("slow down"));
}

#[test]
fn refused_connection_is_a_connect_error() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let t = send(&format!("http://127.0.0.1:{port}/v1"), true);
    assert_eq!(t.outcome(), TurnOutcome::ConnectError);
}

#[test]
fn error_null_and_error_event_with_null_data_fail_the_turn_without_a_panic() {
    for body in [
        &b"error: null\n\n"[..],
        b"error:\n\n",
        b"event: error\ndata: null\n\n",
        b"event: error\ndata: \n\n",
    ] {
        let t = send(&serve_once(SSE, vec![body]), true);
        assert_eq!(
            t.outcome(),
            TurnOutcome::Http5xx,
            "{:?}",
            String::from_utf8_lossy(body)
        );
        assert!(t.error.as_deref().unwrap().contains("after HTTP 200"));
    }
}

#[test]
fn string_error_codes_after_200_classify_by_code_and_type() {
    let cases: [(&'static [u8], TurnOutcome); 4] = [
        // Seen from a real gateway, streamed after a 200.
        (
            b"data: {\"error\":{\"type\":\"rate_limit_error\",\"code\":\"rate_limit_exceeded\"}}\n\n",
            TurnOutcome::RateLimited,
        ),
        (
            b"data: {\"error\":{\"message\":\"Rate limit reached\",\"code\":\"rate_limit_exceeded\"}}\n\n",
            TurnOutcome::RateLimited,
        ),
        (
            b"data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n",
            TurnOutcome::Http5xx,
        ),
        (
            // A request that outgrew the context is its own class (issue 40).
            b"data: {\"error\":{\"message\":\"too long\",\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\"}}\n\n",
            TurnOutcome::ContextOverflow,
        ),
    ];
    for (body, class) in cases {
        let t = send(&serve_once(SSE, vec![body]), true);
        assert_eq!(t.outcome(), class, "{}", String::from_utf8_lossy(body));
    }
}

#[test]
fn content_filter_is_kept_as_its_finish_reason_and_flagged() {
    let base = serve_once(
        SSE,
        vec![
            b"data: {\"choices\":[{\"delta\":{\"content\":\"Part of an answer\"}}]}\n\n",
            b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"content_filter\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4,\"cached_tokens\":8}}\n\n",
            b"data: [DONE]\n\n",
        ],
    );
    let t = send(&base, true);
    assert_eq!(t.outcome(), TurnOutcome::Ok);
    assert_eq!(t.finish_reason.as_deref(), Some("content_filter"));
    assert!(t.error.as_deref().unwrap().contains("content_filter"));
    // Moonshot-style usage: cached_tokens at the top level.
    assert_eq!(t.usage.cached_tokens, Some(8));
}

#[test]
fn a_pooled_connection_closed_by_the_server_is_retried_once_on_a_fresh_one() {
    use crate::common::{Reply, Scripted, answer_sse};
    // Every connection answers its first request and keeps the connection open, then hangs
    // up on the next request without a byte: the race a server's idle timeout causes.
    let server = Scripted::start(|req| {
        if req.on_connection == 0 {
            let body = String::from_utf8(answer_sse("fine", "stop")).unwrap();
            let (_, sse_body) = body.split_once("\r\n\r\n").unwrap();
            Reply::KeepAlive(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{sse_body}",
                    sse_body.len()
                )
                .into_bytes(),
            )
        } else {
            Reply::Hangup
        }
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let endpoint = Endpoint {
        url: format!("{}/chat/completions", server.url()).into(),
        model: "m".into(),
        api_key: None,
        headers: vec![],
        params: RequestParams::default(),
    };
    rt.block_on(async {
        let client = Client::new().unwrap();
        let msgs = [Message::new("user", "hi")];
        for turn in 0..3 {
            let (t, _) = client.send(&endpoint, &msgs, Duration::from_secs(5)).await;
            assert_eq!(t.outcome(), TurnOutcome::Ok, "turn {turn}: {:?}", t.error);
            assert_eq!(t.answer.as_deref(), Some("fine"));
        }
    });
}
