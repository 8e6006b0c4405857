//! The HTTP client the `openidconnect` crate talks to the provider with: the workspace's
//! reqwest, which follows no redirect (a token endpoint that redirects is refused, so the
//! client secret goes nowhere else) and gives up after ten seconds.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use openidconnect::{AsyncHttpClient, HttpRequest, HttpResponse};

/// A failure to reach the provider.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct HttpError(String);

/// reqwest behind `openidconnect`'s client trait.
#[derive(Debug, Clone)]
pub(crate) struct Http(reqwest::Client);

impl Http {
    pub(crate) fn new() -> Result<Self, String> {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .build()
            .map(Http)
            .map_err(|e| e.to_string())
    }
}

impl<'c> AsyncHttpClient<'c> for Http {
    type Error = HttpError;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let url = parts.uri.to_string();
            let mut req = self.0.request(parts.method, &url).body(body);
            for (name, value) in &parts.headers {
                req = req.header(name, value);
            }
            let answer = req.send().await.map_err(|e| HttpError(innermost(&e)))?;
            let status = answer.status();
            let headers = answer.headers().clone();
            let body = answer.bytes().await.map_err(|e| HttpError(innermost(&e)))?;
            let mut response = HttpResponse::new(body.to_vec());
            *response.status_mut() = status;
            *response.headers_mut() = headers;
            Ok(response)
        })
    }
}

/// The innermost cause ("Connection refused"), which says more than reqwest's outer text.
fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    format!("{e}: {cause}")
}
