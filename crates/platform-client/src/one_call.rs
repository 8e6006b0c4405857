//! A tool that is exactly one API request, described before it is sent.
//!
//! Most tools ask the platform once and shape its answer. Described as a value, such a call
//! runs the blocking way ([`crate::Client::run`]: the CLI, the desktop, the local tool server) or is
//! awaited on an in-process transport ([`OneCall::send_in_process`]: the platform's own tool
//! server), where the blocking way would hand every call to a thread of its own and back,
//! which costs more than the API request itself (measured: BENCHMARKS.md, "Assistants' tool
//! calls").

use http::header::{AUTHORIZATION, CONTENT_TYPE};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::answer::{read, read_answer};
use crate::endpoint::Endpoint;
use crate::error::ToolError;

/// How a call makes its result of the platform's answer.
type Finish<R> = Box<dyn FnOnce(Value) -> Result<R, ToolError> + Send>;

/// One API request and how its answer becomes the tool's result `R`.
pub struct OneCall<R> {
    pub(crate) method: Method,
    /// The route's path and query.
    pub(crate) path: String,
    pub(crate) body: Option<Value>,
    pub(crate) finish: Finish<R>,
}

impl<R> std::fmt::Debug for OneCall<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OneCall")
            .field("method", &self.method)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl<R: DeserializeOwned + 'static> OneCall<R> {
    /// `method path` with a JSON `body` (or none), its answer read as `R`.
    pub fn new(method: Method, path: String, body: Option<Value>) -> Self {
        Self {
            method,
            path,
            body,
            finish: Box::new(read_answer::<R>),
        }
    }
}

impl<R: 'static> OneCall<R> {
    /// The same request, its result made into an `S` by `shape`.
    #[must_use]
    pub fn map<S>(self, shape: impl FnOnce(R) -> S + Send + 'static) -> OneCall<S> {
        self.and_then(|result| Ok(shape(result)))
    }

    /// The same request, its result made into an `S` by `shape`, which may fail.
    #[must_use]
    pub fn and_then<S>(
        self,
        shape: impl FnOnce(R) -> Result<S, ToolError> + Send + 'static,
    ) -> OneCall<S> {
        let finish = self.finish;
        OneCall {
            method: self.method,
            path: self.path,
            body: self.body,
            finish: Box::new(move |answer| finish(answer).and_then(shape)),
        }
    }

    /// Sends it through `endpoint`'s in-process transport, awaited: the same request and the
    /// same errors as [`crate::Client::run`] gives on an in-process endpoint (one attempt: no
    /// network to retry).
    pub async fn send_in_process(self, endpoint: &Endpoint) -> Result<R, ToolError> {
        let Some(transport) = &endpoint.transport else {
            return Err(ToolError::Internal(
                "only an in-process endpoint takes a call this way".into(),
            ));
        };
        let mut request = http::Request::builder()
            .method(self.method.as_str())
            .uri(&self.path)
            .header(AUTHORIZATION, format!("Bearer {}", endpoint.token));
        let body = match &self.body {
            Some(body) => {
                request = request.header(CONTENT_TYPE, "application/json");
                serde_json::to_vec(body)
                    .map_err(|e| ToolError::Internal(format!("a request to the platform: {e}")))?
            }
            None => Vec::new(),
        };
        let request = request
            .body(body)
            .map_err(|e| ToolError::Internal(format!("a request to the platform: {e}")))?;
        let (status, body) = transport
            .send_async(request)
            .await
            .map_err(ToolError::Unavailable)?;
        let status = StatusCode::from_u16(status)
            .map_err(|e| ToolError::Internal(format!("the platform's answer: {e}")))?;
        let answer = read(status, &String::from_utf8_lossy(&body), 1)?;
        (self.finish)(answer.body)
    }
}
