//! A blocking HTTP client for the platform API that retries transient failures.
//!
//! Blocking keeps the toolkit callable from plain code (the CLI); an async transport runs a
//! tool call on a blocking thread, unless the tool is one request ([`OneCall`], awaited).

use std::time::Duration;

use reqwest::Method;
use reqwest::blocking::{Client as Http, RequestBuilder, Response};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::answer::read_answer;
use crate::answer::{Answer, read};
use crate::endpoint::Endpoint;
use crate::error::ToolError;
use crate::one_call::OneCall;

/// How many times a request is sent at most when the failure is transient.
pub const MAX_ATTEMPTS: u32 = 3;

/// The platform client.
#[derive(Debug, Clone)]
pub struct Client {
    endpoint: Endpoint,
    http: Http,
}

/// The HTTP client whose request builders in-process endpoints use (they never send through
/// it): made once, as making one starts a thread.
static BUILDER: std::sync::OnceLock<Http> = std::sync::OnceLock::new();

impl Client {
    /// Sends `call` (with the client's retries) and makes its result.
    pub fn run<R>(&self, call: OneCall<R>) -> Result<R, ToolError> {
        let answer = self.json(call.method, &call.path, call.body.as_ref())?;
        (call.finish)(answer.body)
    }

    /// A client for `endpoint`.
    pub fn new(endpoint: Endpoint) -> Result<Self, ToolError> {
        if endpoint.transport.is_some() {
            let http = BUILDER.get_or_init(Http::new).clone();
            return Ok(Self { endpoint, http });
        }
        let http = crate::trust::client_builder(&endpoint.url)?
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(300))
            .build()
            .map_err(|e| ToolError::Internal(format!("HTTP client: {e}")))?;
        Ok(Self { endpoint, http })
    }

    /// The platform's base URL.
    pub fn base_url(&self) -> &str {
        &self.endpoint.url
    }

    /// Sends a JSON request (or none) and parses the JSON answer.
    pub fn json(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Answer, ToolError> {
        self.send(|| {
            let req = self.request(method.clone(), path);
            match body {
                Some(b) => req.json(b),
                None => req,
            }
        })
    }

    /// [`Client::json`], reading the answer as `T`: the platform's answers have types, and
    /// the tools pass them on typed, so an answer of another shape is found here (an internal
    /// error naming what did not fit) rather than as a missing key somewhere downstream.
    pub fn typed<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<T, ToolError> {
        read_answer(self.json(method, path, body)?.body)
    }

    /// Sends raw bytes with a content type.
    pub fn bytes(
        &self,
        path: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Result<Answer, ToolError> {
        self.send(|| {
            self.request(Method::POST, path)
                .header("content-type", content_type)
                .body(body.clone())
        })
    }

    /// Opens a long-lived GET (a Server-Sent Events stream): no overall timeout, the caller
    /// reads the body as it arrives. A refusal is the same error [`Client::json`] gives.
    pub fn open_stream(
        &self,
        path: &str,
        last_event_id: Option<&str>,
    ) -> Result<Response, ToolError> {
        if self.endpoint.transport.is_some() {
            return Err(ToolError::Unavailable(
                "a live stream is not available inside the platform's tool server".into(),
            ));
        }
        let mut request = self
            .request(Method::GET, path)
            .header("accept", "text/event-stream")
            // The server sends a keep-alive comment every 15 s; a silent hour is a dead link.
            .timeout(Duration::from_secs(3600));
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().map_err(|e| {
            ToolError::Unavailable(format!(
                "the platform at {} did not answer: {}",
                self.endpoint.url,
                crate::trust::describe_send_error(&self.endpoint.url, &e)
            ))
        })?;
        if response.status().is_success() {
            return Ok(response);
        }
        // Not a success, so `answer` maps it to its error.
        match self.answer(response, 1) {
            Err(e) => Err(e),
            Ok(_) => Err(ToolError::Internal("the stream was refused".into())),
        }
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.endpoint.url))
            .bearer_auth(&self.endpoint.token)
    }

    /// Sends with back-off (0.5 s, 1 s) on timeouts, connection failures, 502, 503 and 504.
    fn send(&self, build: impl Fn() -> RequestBuilder) -> Result<Answer, ToolError> {
        if let Some(transport) = &self.endpoint.transport {
            let request = build()
                .build()
                .map_err(|e| ToolError::Internal(format!("a request to the platform: {e}")))?;
            let (status, body) = transport
                .send(in_process(&request)?)
                .map_err(ToolError::Unavailable)?;
            let status = reqwest::StatusCode::from_u16(status)
                .map_err(|e| ToolError::Internal(format!("the platform's answer: {e}")))?;
            return read(status, &String::from_utf8_lossy(&body), 1);
        }
        let mut attempt = 0;
        loop {
            attempt += 1;
            let outcome = build().send();
            let transient = match &outcome {
                // A refused certificate is refused again: say so at once.
                Err(e) if crate::trust::is_untrusted_certificate(e) => false,
                Err(e) => e.is_timeout() || e.is_connect() || e.is_request(),
                Ok(r) => matches!(r.status().as_u16(), 502..=504),
            };
            if transient && attempt < MAX_ATTEMPTS {
                std::thread::sleep(Duration::from_millis(500 * u64::from(attempt)));
                continue;
            }
            return match outcome {
                Err(e) if crate::trust::is_untrusted_certificate(&e) => {
                    Err(ToolError::Unavailable(crate::trust::describe_send_error(
                        &self.endpoint.url,
                        &e,
                    )))
                }
                Err(e) => Err(ToolError::Unavailable(format!(
                    "the platform at {} did not answer after {attempt} attempt(s): {}",
                    self.endpoint.url,
                    crate::trust::describe_send_error(&self.endpoint.url, &e)
                ))),
                Ok(response) => self.answer(response, attempt),
            };
        }
    }

    fn answer(&self, response: Response, attempts: u32) -> Result<Answer, ToolError> {
        let status = response.status();
        let text = response.text().unwrap_or_default();
        read(status, &text, attempts)
    }
}

/// `request` as an in-process transport takes it: the route's path and query, the headers
/// (the bearer token among them), the body.
fn in_process(request: &reqwest::blocking::Request) -> Result<http::Request<Vec<u8>>, ToolError> {
    let url = request.url();
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    let body = request
        .body()
        .and_then(|b| b.as_bytes())
        .map(<[u8]>::to_vec)
        .unwrap_or_default();
    let mut built = http::Request::builder()
        .method(request.method().as_str())
        .uri(target);
    for (name, value) in request.headers() {
        built = built.header(name.as_str(), value.as_bytes());
    }
    built
        .body(body)
        .map_err(|e| ToolError::Internal(format!("a request to the platform: {e}")))
}

/// Fetches a presigned URL (a log) without a token.
pub fn fetch_text(url: &str) -> Result<String, ToolError> {
    let response = crate::trust::client_builder(url)?
        .build()
        .and_then(|http| http.get(url).send())
        .map_err(|e| {
            ToolError::Unavailable(format!(
                "{url}: {}",
                crate::trust::describe_send_error(url, &e)
            ))
        })?;
    if !response.status().is_success() {
        return Err(ToolError::PermissionDenied(format!(
            "{url} answered {}",
            response.status()
        )));
    }
    response
        .text()
        .map_err(|e| ToolError::Unavailable(e.to_string()))
}
