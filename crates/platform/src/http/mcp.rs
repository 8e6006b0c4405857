//! `/mcp`: the platform's tool server for AI assistants (Streamable HTTP, protocol 2026-07-28
//! and the versions before it), with the tools of `slipway mcp` that need no files on the
//! caller's machine (docs/mcp.md).
//!
//! Before the MCP service (`slipway_mcp::remote`) sees a request, this layer:
//! - checks `Host` and `Origin` against the platform's own names (`--public-url` and
//!   loopback): a page that rebinds a name to the platform gets a 403, not a tool;
//! - authenticates the bearer token, or answers 401 with `WWW-Authenticate` naming the
//!   protected resource metadata (RFC 9728, served at
//!   `/.well-known/oauth-protected-resource/mcp`);
//! - refuses a `tools/call` the token's scope does not allow with 403 `insufficient_scope`
//!   (RFC 6750), before anything runs;
//! - hands the service the caller: their token's scope, the toolsets asked for
//!   (`?toolsets=apps,logs`), and an endpoint that carries each tool's API request to this
//!   very router in-process (so a tool call is checked exactly as the same request from the
//!   CLI would be), and writes every tool call into the account's audit.

use futures_util::FutureExt as _;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use super::AppState;
use super::error::ApiError;

/// Where the platform is reached, for the allow-lists and the metadata's addresses.
#[derive(Debug, Clone)]
pub(crate) struct McpSettings {
    /// `--public-url`, without a trailing slash.
    public_url: Option<String>,
    /// Whether the API is served over TLS (the scheme of an address made from `Host`).
    tls: bool,
    /// Host names a request may name: loopback's, and the public URL's (made once: every
    /// request is checked against them).
    hosts: Vec<String>,
    /// Browser origins a request may come from: loopback's on any port, the public URL's.
    origins: Vec<String>,
}

impl McpSettings {
    pub(crate) fn new(public_url: Option<&str>, tls: bool) -> Self {
        let public_url = public_url.map(|u| u.trim_end_matches('/').to_owned());
        let public = public_url.as_deref().and_then(|u| url::Url::parse(u).ok());
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
            .map(str::to_owned)
            .to_vec();
        let mut origins: Vec<String> = [
            "http://localhost:*",
            "http://127.0.0.1:*",
            "https://localhost:*",
            "https://127.0.0.1:*",
        ]
        .map(str::to_owned)
        .to_vec();
        if let Some(url) = &public {
            if let Some(host) = url.host_str() {
                hosts.push(host.trim_matches(['[', ']']).to_ascii_lowercase());
            }
            origins.push(url.origin().ascii_serialization());
        }
        Self {
            public_url,
            tls,
            hosts,
            origins,
        }
    }

    /// Whether browsers reach the platform over HTTPS (its cookies are then `Secure`).
    pub(crate) fn secure(&self) -> bool {
        self.tls
            || self
                .public_url
                .as_deref()
                .is_some_and(|u| u.starts_with("https://"))
    }

    /// The platform's base address: the public URL, or the one the request came to.
    pub(crate) fn base(&self, headers: &HeaderMap) -> String {
        if let Some(url) = &self.public_url {
            return url.clone();
        }
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("localhost");
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{host}")
    }
}

impl Default for McpSettings {
    fn default() -> Self {
        Self::new(None, false)
    }
}

/// `/mcp` and its protected resource metadata.
pub(crate) fn router(state: AppState, api: Router) -> Router {
    let settings = Arc::clone(state.mcp_settings());
    let service = slipway_mcp::remote::service(
        settings.hosts.clone(),
        settings.origins.clone(),
        tokio_util::sync::CancellationToken::new(),
    );
    let mcp = Mcp {
        audit: Arc::new(AuditQueue::new(state.db().clone())),
        in_process_key: HeaderValue::from_str(state.in_process_key())
            .expect("the in-process key is a UUID, a valid header value"),
        state,
        service,
        api,
        settings,
    };
    Router::new()
        .route("/mcp", any(serve))
        .route(METADATA_PATH, get(metadata))
        // RFC 9728 §3.1: a client that knows only the server's origin asks here.
        .route("/.well-known/oauth-protected-resource", get(metadata))
        // Shared: the state is cloned for every request.
        .with_state(Arc::new(mcp))
}

/// The protected resource metadata of `/mcp`.
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

struct Mcp {
    state: AppState,
    service: slipway_mcp::remote::Service,
    /// The API router, which tools' requests go to in-process.
    api: Router,
    settings: Arc<McpSettings>,
    /// Where tool calls' audit entries wait for their write.
    audit: Arc<AuditQueue>,
    /// The process's in-process key as a header value, made once.
    in_process_key: HeaderValue,
}

/// `GET /.well-known/oauth-protected-resource/mcp` (RFC 9728).
async fn metadata(State(mcp): State<Arc<Mcp>>, headers: HeaderMap) -> Response {
    let base = mcp.settings.base(&headers);
    (
        [(header::CACHE_CONTROL, "max-age=3600")],
        axum::Json(json!({
            "resource": format!("{base}/mcp"),
            "resource_name": "Slipway",
            "authorization_servers": [base],
            "scopes_supported": slipway_identity::oauth::SCOPES,
            "bearer_methods_supported": ["header"],
            "resource_documentation": format!("{base}/v1/openapi.json"),
        })),
    )
        .into_response()
}

async fn serve(State(mcp): State<Arc<Mcp>>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    if let Err(refused) = check_origin(&mcp.settings, &parts.headers) {
        return refused;
    }
    let token = match super::bearer(&parts.headers) {
        Ok(token) => token,
        Err(e) => return unauthorized(&mcp.settings, &parts.headers, e),
    };
    let caller = match mcp.state.caller_of_tool_server(&parts.headers).await {
        Ok(caller) => caller,
        Err(e) if e.status() == StatusCode::UNAUTHORIZED => {
            return unauthorized(&mcp.settings, &parts.headers, e);
        }
        Err(e) => return e.into_response(),
    };
    let toolsets = match toolsets(parts.uri.query()) {
        Ok(sets) => sets,
        Err(e) => return e.into_response(),
    };
    let bytes = match axum::body::to_bytes(body, slipway_mcp::remote::MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(_) => return ApiError::PayloadTooLarge.into_response(),
    };
    let offer = slipway_mcp::Offer {
        door: slipway_mcp::Door::Remote,
        toolsets: toolsets.clone(),
        scope: Some(caller.scope.clone()),
    };
    // A token of its person's whole right is never refused for its scope: no need to read
    // the message twice.
    if !caller.scope.is_full()
        && let Some(tool) = called_tool(&bytes)
        && let Err(slipway_mcp::Withheld::Scope(why)) = offer.check(&tool)
    {
        return insufficient_scope(&tool, &why);
    }
    let Some(who) = serde_json::to_string(&caller)
        .ok()
        .and_then(|json| HeaderValue::from_str(&json).ok())
    else {
        return ApiError::Internal("the caller is not a header value".into()).into_response();
    };
    let endpoint = slipway_mcp::Endpoint::new("http://platform.invalid", token.expose())
        .with_transport(Arc::new(InProcess {
            api: mcp.api.clone(),
            runtime: tokio::runtime::Handle::current(),
            key: mcp.in_process_key.clone(),
            caller: who,
            host: parts.headers.get(header::HOST).cloned(),
        }));
    parts.extensions.insert(slipway_mcp::RemoteCaller {
        endpoint,
        scope: caller.scope.clone(),
        toolsets,
        audit: Some(audit(mcp.audit.clone(), caller)),
    });
    let request = Request::from_parts(parts, Body::from(bytes));
    let Ok(response) = mcp.service.clone().oneshot(request).await;
    response.map(Body::new)
}

/// `Host` must name this platform, and a browser's `Origin` must be one of its own.
#[allow(
    clippy::result_large_err,
    reason = "the refusal is the response itself"
)]
fn check_origin(settings: &McpSettings, headers: &HeaderMap) -> Result<(), Response> {
    let forbidden = |what: &str| {
        ApiError::PermissionDenied(format!(
            "{what} is not this platform's; set --public-url to the address clients use"
        ))
        .into_response()
    };
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(host_name)
        .unwrap_or_default();
    if !settings.hosts.contains(&host) {
        return Err(forbidden("the Host header"));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        if !origin_allowed(settings, origin) {
            return Err(forbidden("the Origin header"));
        }
    }
    Ok(())
}

/// A `Host` value's name, lower-case, without its port or IPv6 brackets.
fn host_name(raw: &str) -> String {
    let raw = raw.trim();
    let name = if let Some(rest) = raw.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        raw.rsplit_once(':').map_or(raw, |(name, _)| name)
    };
    name.to_ascii_lowercase()
}

fn origin_allowed(settings: &McpSettings, origin: &str) -> bool {
    let Ok(url) = url::Url::parse(origin) else {
        return false;
    };
    let serialized = url.origin().ascii_serialization();
    settings.origins.iter().any(|allowed| {
        match allowed.strip_suffix(":*") {
            // Any port of a loopback origin.
            Some(prefix) => {
                serialized == prefix
                    || serialized
                        .strip_prefix(prefix)
                        .is_some_and(|rest| rest.starts_with(':'))
            }
            None => *allowed == serialized,
        }
    })
}

/// `?toolsets=apps,logs`: `None` without it.
fn toolsets(query: Option<&str>) -> Result<Option<Vec<slipway_mcp::Toolset>>, ApiError> {
    let Some(query) = query else {
        return Ok(None);
    };
    for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
        if name == "toolsets" {
            return slipway_mcp::Toolset::parse_list(&value)
                .map(Some)
                .map_err(|rule| ApiError::invalid("toolsets", rule));
        }
    }
    Ok(None)
}

/// The tool a JSON-RPC `tools/call` request names (a batch or anything else: none).
fn called_tool(body: &Bytes) -> Option<String> {
    let message: Value = serde_json::from_slice(body).ok()?;
    if message.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    Some(message.pointer("/params/name")?.as_str()?.to_owned())
}

/// 401 with the header that leads a client to the metadata (MCP authorization, RFC 9728 §5.1).
fn unauthorized(settings: &McpSettings, headers: &HeaderMap, error: ApiError) -> Response {
    let mut response = error.into_response();
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    let value = format!(
        r#"Bearer resource_metadata="{}{METADATA_PATH}""#,
        settings.base(headers)
    );
    if let Ok(value) = HeaderValue::from_str(&value) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// 403 for a tool the token's scope does not allow (RFC 6750 §3.1).
fn insufficient_scope(tool: &str, why: &str) -> Response {
    let mut response = ApiError::Identity(slipway_identity::IdentityError::InsufficientScope(
        format!("{tool}: {why}"),
    ))
    .into_response();
    let value = format!(
        r#"Bearer error="insufficient_scope", error_description="{}""#,
        why.replace('"', "'")
    );
    if let Ok(value) = HeaderValue::from_str(&value) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// Writes each tool call into the account's audit: who, which client, which tool, which app,
/// how it ended (never an argument's value). Through the [`AuditQueue`]: a call that changes
/// something is answered once its entry is committed; one that only reads is answered at once
/// and its entry follows in the next batch.
fn audit(queue: Arc<AuditQueue>, caller: crate::model::Caller) -> slipway_mcp::Audit {
    Arc::new(move |call: slipway_mcp::ToolCallRecord| {
        let (queue, caller) = (Arc::clone(&queue), caller.clone());
        Box::pin(async move {
            let detail = format!(
                "app {}; client {}; {}",
                call.app_id.as_deref().unwrap_or("none"),
                call.client.as_deref().unwrap_or("unnamed"),
                call.error.as_deref().unwrap_or("success"),
            );
            let done = slipway_identity::tokens::Done {
                caller,
                action: slipway_identity::audit::Action::ToolCalled,
                subject: call.tool,
                detail,
            };
            queue.record(done, !call.read_only).await;
        })
    })
}

/// Tool calls' audit entries, written by one task in batches: every entry waiting when a
/// write begins shares its transaction, so under load a commit serves many calls instead of
/// one each (on SQLite, where every write is serialised, that is most of a call's cost).
pub(crate) struct AuditQueue {
    db: crate::db::Db,
    sender: std::sync::OnceLock<tokio::sync::mpsc::UnboundedSender<Queued>>,
}

/// An entry, and who waits for its commit.
type Queued = (
    slipway_identity::tokens::Done,
    Option<tokio::sync::oneshot::Sender<()>>,
);

/// Most entries in one transaction.
const AUDIT_BATCH: usize = 256;
/// How long entries no caller waits for (reads') wait for others to share their commit: under
/// load a commit then serves tens of calls rather than a few. An entry a caller waits for
/// (a change's) ends the wait at once.
const AUDIT_GATHER: std::time::Duration = std::time::Duration::from_millis(10);

impl AuditQueue {
    pub(crate) fn new(db: crate::db::Db) -> Self {
        Self {
            db,
            sender: std::sync::OnceLock::new(),
        }
    }

    /// Queues `done`; with `wait`, returns once it is committed (or its write failed, which
    /// is logged).
    async fn record(&self, done: slipway_identity::tokens::Done, wait: bool) {
        let sender = self.sender.get_or_init(|| {
            let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
            tokio::spawn(write_batches(self.db.clone(), receiver));
            sender
        });
        let (tell, told) = tokio::sync::oneshot::channel();
        if sender.send((done, wait.then_some(tell))).is_err() {
            tracing::error!("the audit writer has stopped: a tool call was not recorded");
            return;
        }
        if wait {
            let _ = told.await;
        }
    }
}

/// The writer: takes what waits (up to [`AUDIT_BATCH`], gathering reads' entries for up to
/// [`AUDIT_GATHER`]), writes it in one transaction, tells the waiting callers; ends when every
/// sender is gone and the queue is empty.
async fn write_batches(
    db: crate::db::Db,
    mut receiver: tokio::sync::mpsc::UnboundedReceiver<Queued>,
) {
    let mut batch = Vec::with_capacity(AUDIT_BATCH);
    while receiver.recv_many(&mut batch, AUDIT_BATCH).await > 0 {
        gather(&mut receiver, &mut batch).await;
        let (entries, waiting): (Vec<_>, Vec<_>) = batch.drain(..).unzip();
        if slipway_identity::tokens::record(&db, &entries)
            .await
            .is_err()
        {
            // One bad entry must not take the others with it: each on its own.
            for entry in entries {
                if let Err(e) =
                    slipway_identity::tokens::record(&db, std::slice::from_ref(&entry)).await
                {
                    tracing::error!(error = %e, tool = %entry.subject, "could not record a tool call in the audit");
                }
            }
        }
        for tell in waiting.into_iter().flatten() {
            let _ = tell.send(());
        }
    }
}

/// Adds to `batch` what arrives within [`AUDIT_GATHER`] while no caller waits in it (and it
/// is not full).
async fn gather(
    receiver: &mut tokio::sync::mpsc::UnboundedReceiver<Queued>,
    batch: &mut Vec<Queued>,
) {
    let someone_waits = |batch: &[Queued]| batch.iter().any(|(_, tell)| tell.is_some());
    let deadline = tokio::time::sleep(AUDIT_GATHER);
    tokio::pin!(deadline);
    while !someone_waits(batch) && batch.len() < AUDIT_BATCH {
        let room = AUDIT_BATCH - batch.len();
        tokio::select! {
            () = &mut deadline => return,
            received = receiver.recv_many(batch, room) => {
                // Every sender gone: write what there is.
                if received == 0 {
                    return;
                }
            }
        }
    }
}

/// Carries a tool's API request to the platform's router without a network.
struct InProcess {
    api: Router,
    runtime: tokio::runtime::Handle,
    /// The process's key, which lets an assistant's token through and vouches for `caller`
    /// (see `AppState::begin_as`).
    key: HeaderValue,
    /// The caller `/mcp` authenticated, as JSON.
    caller: HeaderValue,
    /// The `/mcp` request's `Host`: the address the platform gives back (a secret's page)
    /// is the one the assistant reached.
    host: Option<HeaderValue>,
}

impl slipway_mcp::Transport for InProcess {
    fn send(&self, request: axum::http::Request<Vec<u8>>) -> Result<(u16, Vec<u8>), String> {
        // Called from the tool's blocking thread, never from an async one. The request runs
        // as a task of the runtime, and this thread waits once for its answer: run here, every
        // database statement's wait would put this thread to sleep and wake it again (most of
        // a tool call's cost, measured), where the runtime's workers go on with other requests
        // meanwhile.
        let answer = self.runtime.spawn(self.send_async(request));
        self.runtime
            .block_on(answer)
            .map_err(|e| format!("the platform's request stopped: {e}"))?
    }

    fn send_async(&self, mut request: axum::http::Request<Vec<u8>>) -> slipway_mcp::Sending {
        let headers = request.headers_mut();
        headers.insert(super::IN_PROCESS_HEADER, self.key.clone());
        headers.insert(super::IN_PROCESS_CALLER_HEADER, self.caller.clone());
        if let Some(host) = &self.host {
            headers.insert(header::HOST, host.clone());
        }
        let api = self.api.clone();
        Box::pin(async move {
            // Awaited inside the `/mcp` request's own task: a handler that panics must end
            // this call with an error (audited like any), not that task, as a spawned task's
            // panic would (the blocking path's `JoinError`).
            let answer = std::panic::AssertUnwindSafe(api.oneshot(request.map(Body::from)))
                .catch_unwind()
                .await
                .map_err(|_| "the platform's request stopped: it panicked".to_owned())?;
            let Ok(response) = answer;
            let status = response.status().as_u16();
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .map_err(|e| format!("reading the platform's answer: {e}"))?;
            Ok((status, body.to_vec()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_lose_ports_and_brackets() {
        assert_eq!(host_name("LocalHost:8700"), "localhost");
        assert_eq!(host_name("[::1]:8700"), "::1");
        assert_eq!(host_name("slipway.example.org"), "slipway.example.org");
    }

    #[test]
    fn origins_are_the_platforms_own() {
        let s = McpSettings::new(Some("https://slipway.example.org/"), true);
        assert!(origin_allowed(&s, "https://slipway.example.org"));
        assert!(origin_allowed(&s, "http://localhost:5173"));
        assert!(origin_allowed(&s, "http://127.0.0.1"));
        assert!(!origin_allowed(&s, "https://evil.example"));
        assert!(!origin_allowed(&s, "http://localhost.evil.example:80"));
        assert!(!origin_allowed(&s, "null"));
        assert!(s.hosts.contains(&"slipway.example.org".to_owned()));
    }

    #[test]
    fn only_tool_calls_name_a_tool() {
        let call = Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_app"}}"#,
        );
        assert_eq!(called_tool(&call).as_deref(), Some("delete_app"));
        let list = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        assert_eq!(called_tool(&list), None);
        assert_eq!(called_tool(&Bytes::from_static(b"[")), None);
    }
}
