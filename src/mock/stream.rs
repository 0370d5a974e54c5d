//! The mock's streamed responses: planned pieces sent on time, faults injected mid-stream,
//! and the moment each timed piece is handed to the connection recorded for the timing
//! benchmark (stamped when hyper pulls it from the body, right before the socket write).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tokio::sync::mpsc;

use super::plan::{Fault, Piece, PieceKind, Plan};
use super::{MockState, Served, sleep_to, usage_json};

/// Which timed moment a frame carries, if any.
#[derive(Clone, Copy, PartialEq)]
enum Mark {
    None,
    FirstText,
    Done,
}

type Frame = (Result<Bytes, std::io::Error>, Mark);

pub(super) struct SseStream<'a> {
    pub id: &'a str,
    pub model: &'a str,
    pub include_usage: bool,
    pub stall_ms: f64,
    /// A gateway's (field, provider), put at the top level of every chunk.
    pub served_field: Option<(&'a str, &'a str)>,
}

/// Records what was served when the body is dropped: after the last byte, or when the
/// client goes away mid-stream.
struct Recorder {
    state: Arc<MockState>,
    served: Option<Served>,
    arrived: Instant,
}

impl Recorder {
    fn mark(&mut self, mark: Mark) {
        let ms = self.arrived.elapsed().as_secs_f64() * 1000.0;
        if let Some(s) = &mut self.served {
            match mark {
                Mark::FirstText => s.sent_ttft_ms = Some(ms),
                Mark::Done => s.sent_e2e_ms = Some(ms),
                Mark::None => {}
            }
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(s) = self.served.take() {
            self.state.record(s);
        }
    }
}

impl SseStream<'_> {
    pub fn respond(
        &self,
        plan: Plan,
        arrived: Instant,
        state: Arc<MockState>,
        served: Served,
    ) -> Response {
        let (tx, rx) = mpsc::channel::<Frame>(64);
        // Everything before the delta is the same in every chunk of this response.
        // (A &str always serialises to JSON: the expects below cannot fail.)
        let gateway = match self.served_field {
            Some((field, provider)) => format!(
                "{}:{},",
                serde_json::to_string(field).expect("string"),
                serde_json::to_string(provider).expect("string")
            ),
            None => String::new(),
        };
        let prefix = format!(
            "data: {{\"id\":\"{}\",{gateway}\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":{},\"choices\":[{{\"index\":0,\"delta\":",
            self.id,
            serde_json::to_string(self.model).expect("string")
        );
        let writer = Writer {
            prefix,
            id: self.id.to_string(),
            model: self.model.to_string(),
            include_usage: self.include_usage,
            stall_ms: self.stall_ms,
            tx,
        };
        tokio::spawn(async move { writer.send_plan(&plan, arrived).await });

        let recorder = Recorder {
            state,
            served: Some(served),
            arrived,
        };
        let stream = futures_util::stream::unfold((rx, recorder), |(mut rx, mut rec)| async move {
            let (item, mark) = rx.recv().await?;
            rec.mark(mark);
            Some((item, (rx, rec)))
        });
        let mut resp = Body::from_stream(stream).into_response();
        let h = resp.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        if let Ok(v) = HeaderValue::from_str(self.id) {
            h.insert("x-request-id", v);
        }
        resp
    }
}

struct Writer {
    prefix: String,
    id: String,
    model: String,
    include_usage: bool,
    stall_ms: f64,
    tx: mpsc::Sender<Frame>,
}

impl Writer {
    fn delta(&self, field: &str, text: &str) -> Bytes {
        // A &str always serialises to JSON.
        let text = serde_json::to_string(text).expect("string");
        Bytes::from(format!(
            "{}{{\"{field}\":{text}}},\"finish_reason\":null}}]}}\n\n",
            self.prefix
        ))
    }

    async fn send(&self, bytes: Bytes, mark: Mark) -> bool {
        self.tx.send((Ok(bytes), mark)).await.is_ok()
    }

    async fn send_plan(&self, plan: &Plan, arrived: Instant) {
        let content_pieces = plan
            .pieces
            .iter()
            .filter(|p| {
                matches!(
                    p.kind,
                    PieceKind::Content(_) | PieceKind::ToolArguments { .. }
                )
            })
            .count();
        let midway = content_pieces / 2;
        let mut content_sent = 0;
        let mut first_text = true;
        for Piece { at_ms, kind } in &plan.pieces {
            sleep_to(arrived, *at_ms).await;
            if matches!(
                kind,
                PieceKind::Content(_) | PieceKind::ToolArguments { .. }
            ) {
                if content_sent == midway && self.inject(plan.fault).await {
                    return;
                }
                content_sent += 1;
            }
            let (bytes, mark) = match kind {
                PieceKind::Role => (
                    Bytes::from(format!(
                        "{}{{\"role\":\"assistant\",\"content\":null}},\"finish_reason\":null}}]}}\n\n",
                        self.prefix
                    )),
                    Mark::None,
                ),
                PieceKind::Reasoning(t) => (self.delta(plan.reasoning_field, t), Mark::FirstText),
                PieceKind::Content(t) => (self.delta("content", t), Mark::FirstText),
                PieceKind::ToolStart { .. } | PieceKind::ToolArguments { .. } => {
                    let delta = super::tools::delta(kind).unwrap_or_default();
                    let bytes = Bytes::from(format!(
                        "{}{delta},\"finish_reason\":null}}]}}\n\n",
                        self.prefix
                    ));
                    (bytes, Mark::FirstText)
                }
            };
            let mark = if mark == Mark::FirstText && first_text {
                first_text = false;
                Mark::FirstText
            } else {
                Mark::None
            };
            if !self.send(bytes, mark).await {
                return; // the client went away
            }
            if plan.fault == Some(Fault::Stall) {
                // Hold the connection open, sending nothing, until the client gives up.
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs_f64(self.stall_ms / 1000.0)) => {}
                    _ = self.tx.closed() => {}
                }
                return;
            }
        }
        sleep_to(arrived, plan.end_ms).await;
        let finish = Bytes::from(format!(
            "{}{{}},\"finish_reason\":\"{}\"}}]}}\n\n",
            self.prefix, plan.finish_reason
        ));
        self.send(finish, Mark::None).await;
        if self.include_usage {
            let usage = json!({
                "id": self.id, "object": "chat.completion.chunk", "created": 0, "model": self.model,
                "choices": [], "usage": usage_json(plan)
            });
            self.send(Bytes::from(format!("data: {usage}\n\n")), Mark::None)
                .await;
        }
        self.send(Bytes::from_static(b"data: [DONE]\n\n"), Mark::Done)
            .await;
    }

    /// Mid-answer faults; true when the response ends here.
    async fn inject(&self, fault: Option<Fault>) -> bool {
        match fault {
            Some(Fault::StreamCut) => {
                let _ = self
                    .tx
                    .send((Err(std::io::Error::other("mock: stream cut")), Mark::None))
                    .await;
                true
            }
            Some(Fault::Malformed) => {
                let broken =
                    Bytes::from_static(b"data: {\"choices\":[{\"delta\":{\"content\":\"oops\"\n\n");
                self.send(broken, Mark::None).await;
                false
            }
            Some(Fault::ErrorAfter200) => {
                let err = json!({"error": {"message": "mock: generation failed", "type": "server_error", "code": 500}});
                self.send(Bytes::from(format!("data: {err}\n\n")), Mark::None)
                    .await;
                self.send(Bytes::from_static(b"data: [DONE]\n\n"), Mark::None)
                    .await;
                true
            }
            _ => false,
        }
    }
}
