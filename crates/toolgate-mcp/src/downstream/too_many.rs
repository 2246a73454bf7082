//! too_many: the HTTP side of a rate limit (SEP-3304's binding). A `tools/call` over a limit is
//! answered by the call stage ([`crate::downstream::call`]) with the JSON-RPC error `-32023`;
//! over HTTP that answer also goes with status 429 and `Retry-After`, so that a proxy or an
//! HTTP client that reads no JSON-RPC backs off too.
//!
//! rmcp writes the answer, as JSON or as the first event of an event stream, after it has
//! chosen status 200. This layer holds the response of a `tools/call` until its first message
//! and, when that message is the rate-limit error, answers 429 with it instead (JSON); any
//! other response goes on as it was, its first bytes first. Only `tools/call` requests are
//! held, and only when some limit is configured: a long-lived stream
//! (`subscriptions/listen`, `GET`) never waits here.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use futures_util::StreamExt;
use serde_json::Value;

use crate::gateway::Gateway;
use crate::rate::RATE_LIMITED;

/// Around the MCP endpoints, inside the body limits (the body is already read whole).
pub(crate) async fn guard(State(gateway): State<Gateway>, request: Request, next: Next) -> Response {
    if gateway.current().limits.is_empty() || request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, crate::limits::MAX_MESSAGE_BYTES).await else {
        return next.run(Request::from_parts(parts, Body::empty())).await;
    };
    let is_call = serde_json::from_slice::<Value>(&bytes).is_ok_and(|v| v["method"] == "tools/call");
    let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    if is_call { as_too_many(response).await } else { response }
}

/// `response`, or 429 with its message when its first message is the rate-limit error.
async fn as_too_many(response: Response) -> Response {
    let kind = response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let (json, events) = (kind.starts_with("application/json"), kind.starts_with("text/event-stream"));
    if !json && !events {
        return response;
    }
    let (parts, body) = response.into_parts();
    let mut stream = body.into_data_stream();
    let mut seen: Vec<u8> = Vec::new();
    let first = loop {
        let message = if json { complete_json(&seen) } else { first_event_data(&seen) };
        if message.is_some() {
            break message;
        }
        match stream.next().await {
            Some(Ok(chunk)) => seen.extend_from_slice(&chunk),
            _ => break None,
        }
    };
    if let Some((message, retry_after_ms)) = first.and_then(|m| limited(&m).map(|ms| (m, ms))) {
        let mut answer = Response::new(Body::from(message.to_string()));
        *answer.status_mut() = StatusCode::TOO_MANY_REQUESTS;
        let headers = answer.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let seconds = retry_after_ms.div_ceil(1000).max(1);
        headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        return answer;
    }
    let head = futures_util::stream::once(async move { Ok::<Bytes, axum::Error>(Bytes::from(seen)) });
    Response::from_parts(parts, Body::from_stream(head.chain(stream)))
}

/// The retry-after milliseconds of a JSON-RPC rate-limit error (SEP-3304).
fn limited(message: &Value) -> Option<u64> {
    let error = message.get("error")?;
    (error.get("code")?.as_i64()? == i64::from(RATE_LIMITED))
        .then(|| error.pointer("/data/retryAfterMs").and_then(Value::as_u64).unwrap_or(1000))
}

/// The whole JSON body, once it has all arrived.
fn complete_json(seen: &[u8]) -> Option<Value> {
    serde_json::from_slice(seen).ok()
}

/// The message of the first event of an event stream that carries one (priming events carry
/// none), once that event is complete.
fn first_event_data(seen: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(seen).ok()?;
    let text = text.replace("\r\n", "\n");
    let mut rest = text.as_str();
    while let Some((event, after)) = rest.split_once("\n\n") {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        let data = data.join("\n");
        if !data.trim().is_empty() {
            return serde_json::from_str(&data).ok().or(Some(Value::Null));
        }
        rest = after;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_event_with_data_is_read_once_complete() {
        let priming = b"id: 0\nretry: 3000\ndata:\n\n";
        assert_eq!(first_event_data(priming), None, "a priming event carries no message");
        let partial = b"id: 0\ndata:\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,";
        assert_eq!(first_event_data(partial), None, "not complete yet");
        let whole = b"id: 0\ndata:\n\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32023,\"message\":\"m\",\"data\":{\"retryAfterMs\":2500}}}\r\n\r\n";
        let message = first_event_data(whole).unwrap();
        assert_eq!(limited(&message), Some(2500));
        let result = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(limited(&result), None);
    }
}
