//! The HTTP layer: shared state, the `/v1` router, bearer authentication inside the request's
//! transaction, JSON body reading, and request logging (method, path, status and time only —
//! never headers, bodies or query strings, so tokens cannot reach a log).

pub mod apps;
pub mod builds;
pub(crate) mod cookies;
pub mod deployments;
pub mod domains;
pub(crate) mod entry_requests;
pub mod error;
pub mod extract;
pub mod git;
pub mod jobs;
pub mod logs;
pub(crate) mod mcp;
pub mod metrics;
pub mod notifications;
pub(crate) mod oauth;
pub mod openapi;
pub mod people;
pub mod prebuilt;
pub mod resources;
pub mod scan;
pub(crate) mod secret_page;
pub mod secrets;
pub mod sharing;
pub mod sso;
pub mod status;
pub mod tokens;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::HeaderMap;
use axum::routing::get;
use serde_json::{Map, Value};

use crate::db::Backend;
use crate::db::{Db, Tx};
use crate::deploy::Deployer;
use crate::jobs::Runner;
use crate::logs::presign::UrlSigner;
use crate::model::Caller;
use crate::model::Token;
use crate::vault::Vault;
use error::ApiError;

/// Largest accepted JSON body; app metadata is small.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// What every handler shares: the database pool, the build runner, the deployer, the log
/// URL signer, and the gateway's listener until [`crate::spawn`] serves it.
#[derive(Clone, Debug)]
pub struct AppState {
    db: Db,
    runner: Runner,
    deployer: Deployer,
    signer: UrlSigner,
    vault: Vault,
    /// The data directory's lock, released when the last clone of the state goes.
    _lock: Arc<crate::data_dir::DataDirLock>,
    gateway: Arc<Mutex<Option<tokio::net::TcpListener>>>,
    gateway_addr: Option<SocketAddr>,
    /// Begun when the server begins to shut down, so live log streams (which never end by
    /// themselves) end and let the graceful shutdown finish.
    shutting_down: slipway_server::serve::ShuttingDown,
    /// Single sign-on, when `--oidc-*` configured it.
    sso: Option<Arc<slipway_identity::oidc::Sso>>,
    /// The requests by route template and the `/metrics` exposition.
    metrics: slipway_server::metrics::Metrics,
    /// The notification worker's handle and "send a test" (set by [`crate::prepare`]).
    notifier: Option<crate::notifications::Notifier>,
    /// Custom domains: routes, certificates, the worker's wake-up.
    domains: crate::domains::Domains,
    /// The custom domains' listeners (plain, TLS) until [`crate::spawn`] serves them.
    public: Arc<Mutex<PublicListeners>>,
    /// Git sources: connecting, webhook deliveries, the worker that fetches and queues.
    git: crate::gitsource::GitSources,
    /// Where `/mcp` is reached from (its Host and Origin allow-lists). Shared, as the state
    /// is cloned for every request.
    mcp: Arc<mcp::McpSettings>,
    /// Marks the API requests `/mcp`'s tools make in-process ([`IN_PROCESS_HEADER`]): random
    /// per process, so no request from outside can carry it.
    in_process_key: Arc<str>,
    /// The pages waiting for a person to type a secret's value.
    entry_requests: entry_requests::EntryRequests,
}

/// The header an in-process request carries the process's key in.
pub(crate) const IN_PROCESS_HEADER: &str = "x-slipway-in-process";
/// The caller (JSON) an in-process request carries beside [`IN_PROCESS_HEADER`], so that the
/// token `/mcp` has just authenticated is not looked up again.
pub(crate) const IN_PROCESS_CALLER_HEADER: &str = "x-slipway-in-process-caller";

/// The gateways' listeners and the custom domains they serve, made at start.
#[derive(Debug)]
pub(crate) struct Gateways {
    /// `--gateway-listen`.
    pub gateway: Option<tokio::net::TcpListener>,
    /// Custom domains: routes, certificates, the worker's wake-up.
    pub domains: crate::domains::Domains,
    /// The custom domains' listeners.
    pub public: PublicListeners,
}

/// The custom domains' listeners, bound at start.
#[derive(Debug, Default)]
pub(crate) struct PublicListeners {
    /// `--gateway-http-listen`.
    pub http: Option<tokio::net::TcpListener>,
    /// `--gateway-https-listen`.
    pub https: Option<tokio::net::TcpListener>,
}

impl AppState {
    pub(crate) fn new(
        db: Db,
        runner: Runner,
        deployer: Deployer,
        signer: UrlSigner,
        vault: Vault,
        lock: crate::data_dir::DataDirLock,
        gateways: Gateways,
    ) -> Self {
        let Gateways {
            gateway,
            domains,
            public,
        } = gateways;
        let gateway_addr = gateway.as_ref().and_then(|l| l.local_addr().ok());
        let git = crate::gitsource::GitSources::new(
            db.clone(),
            vault.clone(),
            runner.clone(),
            deployer.clone(),
        );
        Self {
            git,
            db,
            runner,
            deployer,
            signer,
            vault,
            _lock: Arc::new(lock),
            gateway: Arc::new(Mutex::new(gateway)),
            shutting_down: slipway_server::serve::ShuttingDown::default(),
            gateway_addr,
            sso: None,
            notifier: None,
            metrics: slipway_server::metrics::Metrics::new(),
            domains,
            public: Arc::new(Mutex::new(public)),
            mcp: Arc::new(mcp::McpSettings::default()),
            in_process_key: uuid::Uuid::new_v4().to_string().into(),
            entry_requests: entry_requests::EntryRequests::default(),
        }
    }

    /// Whether a request came from `/mcp`'s tools, in-process.
    fn in_process(&self, headers: &HeaderMap) -> bool {
        headers
            .get(IN_PROCESS_HEADER)
            .is_some_and(|v| v.as_bytes() == self.in_process_key.as_bytes())
    }

    /// The caller an in-process request carries (as `/mcp` authenticated it), believed only
    /// with this process's key beside it.
    fn in_process_caller(&self, headers: &HeaderMap) -> Option<Caller> {
        if !self.in_process(headers) {
            return None;
        }
        serde_json::from_slice(headers.get(IN_PROCESS_CALLER_HEADER)?.as_bytes()).ok()
    }

    /// The key in-process requests carry.
    pub(crate) fn in_process_key(&self) -> &str {
        &self.in_process_key
    }

    /// With `/mcp` reached at `public_url` (and loopback), over TLS or not.
    pub(crate) fn with_mcp(mut self, public_url: Option<&str>, tls: bool) -> Self {
        self.mcp = Arc::new(mcp::McpSettings::new(public_url, tls));
        self
    }

    pub(crate) fn mcp(&self) -> &mcp::McpSettings {
        &self.mcp
    }

    pub(crate) fn mcp_settings(&self) -> &Arc<mcp::McpSettings> {
        &self.mcp
    }

    /// The pages waiting for a person to type a secret's value.
    pub(crate) fn entry_requests(&self) -> &entry_requests::EntryRequests {
        &self.entry_requests
    }

    /// The state with single sign-on (or without, for `None`).
    pub(crate) fn with_sso(mut self, sso: Option<Arc<slipway_identity::oidc::Sso>>) -> Self {
        self.sso = sso;
        self
    }

    /// With the notifier (its worker started).
    pub(crate) fn with_notifier(mut self, notifier: crate::notifications::Notifier) -> Self {
        self.notifier = Some(notifier);
        self
    }

    /// With the git sources' worker started.
    pub(crate) fn with_git_worker(self) -> Self {
        self.git.start_worker();
        self
    }

    /// Takes the custom domains' listeners (once, to serve them).
    pub(crate) fn take_public_listeners(&self) -> PublicListeners {
        std::mem::take(&mut *self.public.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Git sources.
    pub fn git(&self) -> &crate::gitsource::GitSources {
        &self.git
    }

    /// Custom domains.
    pub fn domains(&self) -> &crate::domains::Domains {
        &self.domains
    }

    /// The notifier.
    pub(crate) fn notifier(&self) -> Result<&crate::notifications::Notifier, ApiError> {
        self.notifier
            .as_ref()
            .ok_or_else(|| ApiError::Internal("notifications are not running".into()))
    }

    /// Single sign-on, when configured.
    pub(crate) fn sso(&self) -> Option<&slipway_identity::oidc::Sso> {
        self.sso.as_deref()
    }

    /// The build runner.
    pub(crate) fn runner(&self) -> &Runner {
        &self.runner
    }

    /// The deployer.
    pub(crate) fn deployer(&self) -> &Deployer {
        &self.deployer
    }

    /// The log URL signer.
    pub(crate) fn signer(&self) -> &UrlSigner {
        &self.signer
    }

    /// The secrets vault.
    pub(crate) fn vault(&self) -> &Vault {
        &self.vault
    }

    /// The database pool.
    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    /// The request metrics and the exposition.
    pub(crate) fn metrics(&self) -> &slipway_server::metrics::Metrics {
        &self.metrics
    }

    /// What live streams end on, and the listeners stop on: the server's shutdown.
    pub(crate) fn shutting_down(&self) -> &slipway_server::serve::ShuttingDown {
        &self.shutting_down
    }

    /// Where the gateway listens (`None` without a gateway).
    pub fn gateway_addr(&self) -> Option<SocketAddr> {
        self.gateway_addr
    }

    /// The gateway's listener, once (the server takes it to serve it).
    pub(crate) fn take_gateway(&self) -> Option<tokio::net::TcpListener> {
        self.gateway.lock().ok().and_then(|mut g| g.take())
    }

    /// The database backend in use.
    pub fn backend(&self) -> Backend {
        self.db.backend()
    }

    /// Stops every deployed service (each process group gets SIGTERM, then SIGKILL after a
    /// grace; the next start brings RUNNING apps back), stops running builds (their processes
    /// are killed; the next start marks them failed) and closes the database pool (after the server stopped).
    pub async fn close(&self) {
        if let Some(notifier) = &self.notifier {
            notifier.stop().await;
        }
        self.deployer.shutdown().await;
        self.runner.shutdown().await;
        self.db.close().await;
    }

    /// Opens the request's one transaction and authenticates the caller inside it, so the
    /// caller's rows cannot change between the check and the work. 401 without a known token.
    pub(crate) async fn begin_as(
        &self,
        headers: &HeaderMap,
        access: Access,
    ) -> Result<(Tx, Caller), ApiError> {
        self.begin_for(headers, access).await
    }

    /// The caller of a request to the tool server (`/mcp`), where assistants' tokens work.
    pub(crate) async fn caller_of_tool_server(
        &self,
        headers: &HeaderMap,
    ) -> Result<Caller, ApiError> {
        let token = bearer(headers)?;
        // The token's lookup is one statement: it needs no transaction around it, and on
        // SQLite it runs on this thread (see `authenticate_alone`).
        let known = slipway_identity::tokens::authenticate_alone(&self.db, &token).await?;
        self.touch_later(known.touch);
        Ok(known.caller)
    }

    /// Records a token's last use beside the request, never inside it: a reading request
    /// stays a read, and a failed record loses a figure, not the request.
    fn touch_later(&self, touch: Option<slipway_identity::tokens::Touch>) {
        if let Some(touch) = touch {
            let db = self.db.clone();
            tokio::spawn(async move { slipway_identity::tokens::touch(&db, touch).await });
        }
    }

    async fn begin_for(
        &self,
        headers: &HeaderMap,
        access: Access,
    ) -> Result<(Tx, Caller), ApiError> {
        let token = bearer(headers)?;
        let mut tx = match access {
            Access::Read => self.db.begin_read().await?,
            Access::Write | Access::AuditedRead => self.db.begin_write().await?,
        };
        // `/mcp` authenticated the token of its tools' in-process requests a moment ago.
        let known = match self.in_process_caller(headers) {
            Some(caller) => slipway_identity::tokens::Authenticated {
                caller,
                touch: None,
            },
            None => slipway_identity::tokens::authenticate(&mut tx, &token).await?,
        };
        // An assistant's token works at the tool server only: there, and in the API requests
        // its tools make in-process (which carry this process's key), nowhere else.
        if known.caller.grant.is_some() && !self.in_process(headers) {
            return Err(slipway_identity::IdentityError::WrongAudience(format!(
                "{}/mcp",
                self.mcp.base(headers)
            ))
            .into());
        }
        if access == Access::Write {
            // Every request that changes something says so here, so a read-only token is
            // refused before any of it runs (the app endpoints ask the policy again, by
            // action).
            known.caller.require_writes("this request")?;
        }
        self.touch_later(known.touch);
        Ok((tx, known.caller))
    }
}

/// Whether a request only reads or also writes (SQLite takes its write lock up front).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Reads only.
    Read,
    /// Writes.
    Write,
    /// Reads that record that they read (a secret's value): a write transaction, but a
    /// read-only token may make it.
    AuditedRead,
}

/// The `(method, path)` of every API route, as written in the OpenAPI document. A test
/// keeps this list, the router and the document in step.
pub const ROUTES: &[(&str, &str)] = &[
    ("get", "/v1/apps"),
    ("post", "/v1/apps"),
    ("get", "/v1/apps/{app_id}"),
    ("delete", "/v1/apps/{app_id}"),
    ("get", "/v1/apps/{app_id}/status"),
    ("get", "/v1/apps/{app_id}/resources"),
    (
        "get",
        "/v1/apps/{app_id}/resources/{kind}/{name}/credentials",
    ),
    ("post", "/v1/apps/{app_id}/resources/{kind}/{name}/rotate"),
    ("delete", "/v1/apps/{app_id}/resources/{kind}/{name}"),
    ("get", "/v1/apps/{app_id}/domains"),
    ("post", "/v1/apps/{app_id}/domains"),
    ("get", "/v1/apps/{app_id}/domains/{name}"),
    ("delete", "/v1/apps/{app_id}/domains/{name}"),
    ("get", "/v1/apps/{app_id}/git"),
    ("put", "/v1/apps/{app_id}/git"),
    ("delete", "/v1/apps/{app_id}/git"),
    ("post", "/v1/apps/{app_id}/git/deploy"),
    ("get", "/v1/apps/{app_id}/previews"),
    ("post", "/v1/hooks/git/{app_id}"),
    ("get", "/v1/apps/{app_id}/jobs"),
    ("get", "/v1/apps/{app_id}/jobs/{job}/runs"),
    ("post", "/v1/apps/{app_id}/jobs/{job}/run"),
    ("get", "/v1/apps/{app_id}/jobs/{job}/runs/{run_id}/log"),
    ("get", "/v1/notifications/events"),
    ("get", "/v1/account/notifications/channels"),
    ("post", "/v1/account/notifications/channels"),
    ("delete", "/v1/account/notifications/channels/{channel}"),
    ("post", "/v1/account/notifications/channels/{channel}/test"),
    ("get", "/v1/account/notifications/subscriptions"),
    ("post", "/v1/account/notifications/subscriptions"),
    ("delete", "/v1/account/notifications/subscriptions/{id}"),
    ("get", "/v1/account/notifications/deliveries"),
    ("post", "/v1/apps/{app_id}/disable"),
    ("post", "/v1/apps/{app_id}/enable"),
    ("get", "/v1/apps/{app_id}/logs"),
    ("get", "/v1/apps/{app_id}/logs/stream"),
    ("get", "/v1/logs/builds/{build_id}"),
    ("get", "/v1/logs/deployments/{deployment_id}/{service}"),
    ("post", "/v1/apps/{app_id}/builds"),
    ("get", "/v1/apps/{app_id}/builds"),
    ("get", "/v1/builds/{build_id}"),
    ("post", "/v1/builds/{build_id}/cancel"),
    ("post", "/v1/builds"),
    ("post", "/v1/apps/{app_id}/builds/prebuilt"),
    ("get", "/v1/builds/{build_id}/scan"),
    ("get", "/v1/signing-key"),
    ("get", "/v1/openapi.json"),
    ("get", "/v1/secrets"),
    ("post", "/v1/secrets"),
    ("get", "/v1/secrets/entry"),
    ("put", "/v1/secrets/entry"),
    ("delete", "/v1/secrets/entry"),
    ("post", "/v1/secrets/share"),
    ("get", "/v1/secrets/audit"),
    ("post", "/v1/secrets/entry-requests"),
    ("get", "/v1/secrets/entry-requests/{id}"),
    ("delete", "/v1/secrets/entry-requests/{id}"),
    ("get", "/v1/apps/{app_id}/grantable-roles"),
    ("get", "/v1/apps/{app_id}/permissions"),
    ("post", "/v1/apps/{app_id}/permissions"),
    ("post", "/v1/apps/{app_id}/permissions/revoke"),
    ("get", "/v1/account/users"),
    ("patch", "/v1/account/users/{id}"),
    ("delete", "/v1/account/users/{id}"),
    ("get", "/v1/account/me"),
    ("get", "/v1/account/invites"),
    ("post", "/v1/account/invites"),
    ("delete", "/v1/account/invites/{id}"),
    ("post", "/v1/invites/accept"),
    ("get", "/v1/account/audit"),
    ("post", "/v1/account/audit/tool-calls"),
    ("get", "/v1/oauth/requests/{code}"),
    ("post", "/v1/oauth/requests/{code}/approve"),
    ("post", "/v1/oauth/requests/{code}/deny"),
    ("get", "/v1/grants"),
    ("delete", "/v1/grants/{id}"),
    ("get", "/v1/tokens"),
    ("post", "/v1/tokens"),
    ("delete", "/v1/tokens/{id}"),
    ("get", "/v1/auth/sso"),
    ("get", "/auth/oidc/start"),
    ("get", "/auth/oidc/callback"),
    ("post", "/auth/oidc/exchange"),
    ("get", "/v1/apps/{app_id}/deployments"),
    ("get", "/v1/apps/{app_id}/deployments/{deployment_id}"),
    ("get", "/v1/apps/{app_id}/deployments/{deployment_id}/diff"),
    ("post", "/v1/apps/{app_id}/rollback"),
    ("get", "/v1/apps/{app_id}/diagnosis"),
    ("get", "/metrics"),
];

/// The application: `/v1/…`, `/v1/openapi.json`, `/health`, `/metrics` and `/mcp` (whose
/// tools call the rest in-process); every request is counted by its route template.
pub fn router(state: AppState) -> Router {
    let routes = api_routes();
    // What `/mcp`'s tools reach in-process: the same routes, without a second request log
    // line and a second count (the `/mcp` request has both, and its tool call its own line).
    let in_process = routes
        .clone()
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state.clone());
    let api = state
        .metrics()
        .track(slipway_server::http::finish(routes, MAX_BODY_BYTES))
        .with_state(state.clone());
    let mcp = mcp::router(state.clone(), in_process);
    let mcp = slipway_server::http::finish(mcp, slipway_mcp::remote::MAX_BODY);
    api.merge(state.metrics().track(mcp))
}

/// Everything but `/mcp`.
fn api_routes() -> Router<AppState> {
    let v1 = apps::router()
        .merge(builds::router())
        .merge(prebuilt::router())
        .merge(scan::router())
        .merge(status::router())
        .merge(deployments::router())
        .merge(domains::router())
        .merge(git::router())
        .merge(logs::router())
        .merge(secrets::router())
        .merge(entry_requests::router())
        .merge(resources::router())
        .merge(jobs::router())
        .merge(notifications::router())
        .merge(sharing::router())
        .merge(people::router())
        .merge(tokens::router())
        .merge(oauth::v1_router())
        .merge(sso::v1_router())
        .route("/openapi.json", get(openapi::serve));
    Router::new()
        .nest("/v1", v1)
        .merge(sso::router())
        .merge(oauth::router())
        .merge(secret_page::router())
        .route("/health", get(slipway_server::http::health))
        .route("/metrics", get(metrics::serve))
        .fallback(|| async { ApiError::NoRoute })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
}

/// The bearer token of a request, or 401.
fn bearer(headers: &HeaderMap) -> Result<Token, ApiError> {
    slipway_server::http::bearer(headers).ok_or(ApiError::Unauthenticated)
}

/// The body as a JSON object, or 413 / 400.
pub(crate) fn json_object(
    body: Result<Bytes, BytesRejection>,
) -> Result<Map<String, Value>, ApiError> {
    let bytes = slipway_server::http::body_bytes(body)?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::InvalidBody(
            "the body must be a JSON object".into(),
        )),
        Err(e) => Err(ApiError::InvalidBody(format!(
            "the body is not valid JSON: {e}"
        ))),
    }
}
