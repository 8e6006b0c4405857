//! Health probes: `GET <healthPath>` on a service's port, 2xx or 3xx within
//! [`PROBE_TIMEOUT`] is healthy. Also the one plain HTTP/1 client the gateway proxies with.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, header};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// Longest one probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The HTTP client of probes and of the gateway.
pub type HttpClient = Client<HttpConnector, Body>;

/// A new client (connection pooling per host:port).
pub fn client() -> HttpClient {
    let mut connector = HttpConnector::new();
    connector.set_connect_timeout(Some(PROBE_TIMEOUT));
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(30))
        .build(connector)
}

/// Whether `http://127.0.0.1:<port><path>` answers 2xx or 3xx.
pub async fn probe(client: &HttpClient, port: u16, path: &str) -> bool {
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    let Ok(request) = Request::get(format!("http://127.0.0.1:{port}{path}"))
        .header(header::HOST, format!("127.0.0.1:{port}"))
        .header(header::USER_AGENT, "slipway-health-probe")
        .body(Body::empty())
    else {
        return false;
    };
    match tokio::time::timeout(PROBE_TIMEOUT, client.request(request)).await {
        Ok(Ok(response)) => {
            let status = response.status();
            status.is_success() || status.is_redirection()
        }
        _ => false,
    }
}
