//! The load generator's HTTP client: each client task owns one HTTP/1.1 keep-alive
//! connection (hyper's connection API, as reqwest uses underneath, without its pool, URL
//! parsing and redirect handling per request), and requests are cheap to make (a prepared
//! body is a reference-counted `Bytes`). The load generator shares the two cores with the
//! service, so every microsecond it spends is one the service does not get; this keeps its
//! share small without changing what the service receives.

use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request};

/// A request to send.
pub type Req = Request<Full<Bytes>>;

/// Makes request number `i`.
pub type Make = Arc<dyn Fn(usize) -> Req + Send + Sync>;

/// `GET path` with the bench's bearer token.
pub fn get(addr: SocketAddr, path: &str) -> Req {
    request(addr, Method::GET, path, Bytes::new())
}

/// `POST path` of a JSON `body` with the bench's bearer token.
pub fn post(addr: SocketAddr, path: &str, body: Bytes) -> Req {
    let mut req = request(addr, Method::POST, path, body);
    req.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    req
}

fn request(addr: SocketAddr, method: Method, path: &str, body: Bytes) -> Req {
    let mut req = Request::new(Full::new(body));
    *req.method_mut() = method;
    *req.uri_mut() = path.parse().expect("path");
    let headers = req.headers_mut();
    headers.insert(
        HOST,
        HeaderValue::from_str(&addr.to_string()).expect("host"),
    );
    headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer demo-staff"));
    req
}

/// One keep-alive connection to the service.
pub struct Conn {
    addr: SocketAddr,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl Conn {
    /// A connection to `addr` (opened at the first request).
    pub fn new(addr: SocketAddr) -> Self {
        Self { addr, sender: None }
    }

    async fn open(addr: SocketAddr) -> Option<SendRequest<Full<Bytes>>> {
        let stream = tokio::net::TcpStream::connect(addr).await.ok()?;
        stream.set_nodelay(true).ok()?;
        let io = hyper_util::rt::TokioIo::new(stream);
        let (sender, connection) = hyper::client::conn::http1::handshake(io).await.ok()?;
        tokio::spawn(connection);
        Some(sender)
    }

    /// Sends `req` and reads its whole answer; whether it was a success (2xx). A connection
    /// that failed is opened again for the next request.
    pub async fn exchange(&mut self, req: Req) -> bool {
        if self.sender.as_ref().is_none_or(SendRequest::is_closed) {
            self.sender = Self::open(self.addr).await;
        }
        let Some(sender) = self.sender.as_mut() else {
            return false;
        };
        if sender.ready().await.is_err() {
            self.sender = None;
            return false;
        }
        let Ok(response) = sender.send_request(req).await else {
            self.sender = None;
            return false;
        };
        let ok = response.status().is_success();
        ok && response.into_body().collect().await.is_ok()
    }
}
