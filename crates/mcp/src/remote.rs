//! The platform's tool server over Streamable HTTP: the rmcp tower service the platform
//! mounts at `/mcp`, stateless (protocol 2026-07-28 has no sessions; older clients are
//! answered one request at a time too, as JSON where nothing streams), with its Host and
//! Origin allow-lists. Who the caller is, and whether they may come in at all, is the
//! platform's to decide before a request reaches it (see [`crate::RemoteCaller`]).

use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use crate::SlipwayServer;

/// The service to mount.
pub type Service = StreamableHttpService<SlipwayServer, NeverSessionManager>;

/// The largest request body read (a devfile's content is the largest argument).
pub const MAX_BODY: usize = 1024 * 1024;

/// The service, accepting `Host` values in `hosts` (`name` or `name:port`) and browser
/// `Origin`s in `origins` (`scheme://host:port`; a request without an Origin passes, as
/// non-browser clients send none), and stopping when `stop` is cancelled.
pub fn service(
    hosts: Vec<String>,
    origins: Vec<String>,
    stop: tokio_util::sync::CancellationToken,
) -> Service {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY)
        .with_cancellation_token(stop);
    StreamableHttpService::new(
        || Ok(SlipwayServer::remote()),
        std::sync::Arc::new(NeverSessionManager::default()),
        config,
    )
}
