//! HTTP plumbing both servers put around their routes: one log line per request, the bearer
//! token of a request, the body limit and the `/health` answer. Each service keeps its own
//! error type and maps [`BodyError`] and a missing token into it.

use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::Response;

use crate::token::Token;

/// Wraps a service's routes in what every request gets: bodies over `body_limit` bytes are
/// refused (handlers see a [`BodyError::TooLarge`]) and each request is logged by
/// [`log_requests`]. Call it before `with_state`.
pub fn finish<S: Clone + Send + Sync + 'static>(router: Router<S>, body_limit: usize) -> Router<S> {
    router
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(middleware::from_fn(log_requests))
}

/// The answer of `GET …/health`.
pub async fn health() -> &'static str {
    "ok"
}

/// Logs one line per request: a generated request id (also sent back as `x-request-id`),
/// the method, the path, the status and the time taken. Never headers, bodies or query
/// strings, so neither tokens nor patient data nor secrets can reach a log this way.
pub async fn log_requests(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = uuid::Uuid::new_v4();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let mut response = next.run(req).await;
    if let Ok(v) = HeaderValue::from_str(&id.to_string()) {
        response.headers_mut().insert("x-request-id", v);
    }
    tracing::info!(
        request_id = %id,
        %method,
        %path,
        status = response.status().as_u16(),
        elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        "request"
    );
    response
}

/// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or
/// `None` when there is none or it is empty.
pub fn bearer(headers: &HeaderMap) -> Option<Token> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty())
        .then(|| Token::from_string(token.to_owned()))
}

/// The response of a failed request, as both services send one: `body` with `status`;
/// a server fault is logged with `loggable` (which must say what failed without quoting
/// values: database texts can hold patient data or secrets), never with the body; a 401
/// says `WWW-Authenticate: Bearer`.
pub fn error_response(
    status: StatusCode,
    body: impl serde::Serialize,
    loggable: impl FnOnce() -> String,
) -> Response {
    use axum::response::IntoResponse as _;
    if status.is_server_error() {
        tracing::error!(status = status.as_u16(), error = %loggable(), "request failed");
    }
    let mut response = (status, axum::Json(body)).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// The status and JSON body of an answer (for tests of error mapping; a body that is not
/// JSON reads as `Null`).
pub async fn json_of(answer: impl axum::response::IntoResponse) -> (StatusCode, serde_json::Value) {
    let response = answer.into_response();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap_or_default();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}

/// For tests of a service's error mapping: the JSON body of `fault`, a server fault whose
/// detail holds `secret`, once checked that it is a 500 that does not quote the detail (the
/// service then checks its own wire shape).
///
/// # Panics
///
/// When the answer is not a 500 or its body holds `secret`.
pub async fn fault_body(
    fault: impl axum::response::IntoResponse,
    secret: &str,
) -> serde_json::Value {
    let (status, body) = json_of(fault).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    assert!(
        !body.to_string().contains(secret),
        "a fault's detail reached its answer: {body}"
    );
    body
}

/// Why a request body could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// Over the body limit (answer 413).
    #[error("the request body is too large")]
    TooLarge,
    /// Cut off or otherwise unreadable (answer 400).
    #[error("the request body could not be read")]
    Unreadable,
}

/// The body bytes of a `Result<Bytes, BytesRejection>` extractor.
pub fn body_bytes(body: Result<Bytes, BytesRejection>) -> Result<Bytes, BodyError> {
    body.map_err(|r| {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            BodyError::TooLarge
        } else {
            BodyError::Unreadable
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn bearer_tokens_are_read_and_malformed_headers_refused() {
        assert_eq!(
            bearer(&headers("Bearer abc")).map(|t| t.expose().to_owned()),
            Some("abc".into())
        );
        assert_eq!(
            bearer(&headers("bearer  abc ")).map(|t| t.expose().to_owned()),
            Some("abc".into())
        );
        for bad in ["Basic abc", "Bearer", "Bearer   ", "abc"] {
            assert!(bearer(&headers(bad)).is_none(), "{bad}");
        }
        assert!(bearer(&HeaderMap::new()).is_none());
    }

    #[tokio::test]
    #[should_panic(expected = "a fault's detail reached its answer")]
    async fn a_fault_answer_quoting_its_detail_fails_the_check() {
        let leaky = (
            StatusCode::INTERNAL_SERVER_ERROR,
            axum::Json(serde_json::json!({ "message": "row P-1 broke" })),
        );
        fault_body(leaky, "P-1").await;
    }

    /// A client error is never described for the log (only server faults are), and only a
    /// 401 asks for a bearer token; the body is the service's, as it is.
    #[tokio::test]
    async fn error_responses_keep_the_body_and_ask_401s_for_a_token() {
        let body = serde_json::json!({ "any": "shape" });
        for (status, challenge) in [
            (StatusCode::BAD_REQUEST, None),
            (StatusCode::UNAUTHORIZED, Some("Bearer")),
            (StatusCode::NOT_FOUND, None),
            (StatusCode::INTERNAL_SERVER_ERROR, None),
        ] {
            let response = error_response(status, &body, || {
                assert!(status.is_server_error(), "{status} described for the log");
                "what failed".to_owned()
            });
            let header = response.headers().get(header::WWW_AUTHENTICATE);
            assert_eq!(header.and_then(|v| v.to_str().ok()), challenge, "{status}");
            assert_eq!(json_of(response).await, (status, body.clone()));
        }
    }
}
