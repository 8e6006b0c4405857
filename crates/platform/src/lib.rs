//! The Slipway platform server (`slipway platform serve`): accounts, bearer tokens, apps and
//! image builds behind a versioned HTTP API (`/v1/…`), over SQLite (default, a file in the
//! data directory) or PostgreSQL. Images are stored content-addressed and signed
//! ([`image::verify_image`] checks one before it runs). Succeeded builds deploy on the
//! process runtime ([`deploy`]); a gateway routes `<service>.<app>.localhost` to them
//! ([`gateway`]); build and runtime logs are served through presigned URLs ([`logs`]).
//!
//! Entry points: [`serve`] for the CLI (config → pool → migrate → bootstrap → serve);
//! [`prepare`] + [`router`] / [`spawn`] for tests that bind their own socket; [`add_user`]
//! and [`add_account`] for `slipway platform user add` and friends.

pub mod apps;
mod bootstrap;
mod config;
pub mod data_dir;
mod db;
pub mod deploy;
pub mod domains;
pub mod embedded;
mod error;
pub mod gateway;
pub mod gitsource;
pub mod http;
pub mod jobs;
mod layers;
pub mod logs;
pub mod model;
pub mod notifications;
mod pagination;
pub mod policy;
pub mod resources;
pub mod retention;
mod store;
pub mod teardown;
pub mod vault;

use std::future::Future;
use std::path::Path;

pub use config::{
    BuilderKind, DomainSettings, GatewayMode, Liveness, OidcSettings, PlatformConfig, Retries,
    RuntimeKind,
};
pub use data_dir::{BOOTSTRAP_TOKEN_FILE, SQLITE_FILE};
pub use db::Backend;
pub use error::PlatformError;
pub use http::{AppState, router};
pub use model::AppStatus;
pub use model::Token;
pub use pagination::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};
pub use slipway_acme::{AcmeConfig, issuer::LETS_ENCRYPT};
/// The resource limits and the quantities they are written in (the CLI's default-limit
/// flags).
pub use slipway_devfile::quantity;
/// A person just created with their token in clear (`slipway platform user add`).
pub use slipway_identity::people::NewPerson as NewUser;
/// Base images for machines without a registry (`slipway platform images import`).
pub use slipway_runtime::base_image;
pub use slipway_runtime::build::trust::BuildCaBundle;
pub use slipway_runtime::runtime::Limits;

use db::Db;
use jobs::Runner;
use model::AccountRole;

/// Opens the database named by `data_dir` / `database_url` and runs the migrations.
async fn open(data_dir: &Path, database_url: Option<&str>) -> Result<Db, PlatformError> {
    let url = config::database_url(data_dir, database_url)?;
    std::fs::create_dir_all(data_dir).map_err(|e| {
        PlatformError::Config(format!(
            "cannot create data directory {}: {e}",
            data_dir.display()
        ))
    })?;
    db::open(&url).await
}

/// Connects, migrates, creates the first account and its token file if needed, starts the
/// build runner (which marks builds a previous run left unfinished as failed), binds the
/// gateway, and starts the deployer (which brings back the apps that were RUNNING); returns
/// the state the router needs. [`serve`] uses it, and so do tests that bind their own socket.
pub async fn prepare(config: &PlatformConfig) -> Result<AppState, PlatformError> {
    // Before anything else: a second server on the same data directory is refused before it
    // can touch the running one's builds, files or database.
    let lock = data_dir::lock(&config.data_dir)?;
    // A wrong --build-ca-bundle FILE stops the start before any state is touched, rather
    // than failing every build; the default (the host's bundle) never does.
    let ca_bundle = jobs::resolve_ca_bundle(&config.build_ca_bundle, config.builder)?;
    // Next, so a container engine that cannot run anything stops the start before any
    // state is touched.
    let runtime = select_runtime(config).await?;
    tracing::info!(runtime = runtime.name(), "runtime backend ready");
    let db = open(&config.data_dir, config.database_url.as_deref()).await?;
    tracing::info!(backend = ?db.backend(), "database ready");
    let boot = bootstrap::ensure(&db, &config.data_dir).await?;
    tracing::info!(token_file = %boot.token_file.display(), "owner token file ready");
    let (built_tx, built_rx) = tokio::sync::mpsc::unbounded_channel();
    let runner = Runner::start(
        db.clone(),
        &config.data_dir,
        config.builder,
        built_tx,
        config.advisory_db.clone(),
        ca_bundle,
        config.runtime == RuntimeKind::Container,
    )
    .await?;
    let signer = logs::presign::UrlSigner::load_or_create(&config.data_dir)?;
    let vault = vault::Vault::open(&config.data_dir, config.vault_key_file.as_deref())?;
    vault.check_against(&db).await?;
    let gateway = match config.gateway_listen {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
                PlatformError::Config(format!("cannot bind the gateway on {addr}: {e}"))
            })?;
            tracing::info!(local = %listener.local_addr()?, "gateway listening");
            Some(listener)
        }
        None => None,
    };
    let gateway_port = gateway
        .as_ref()
        .and_then(|l| l.local_addr().ok())
        .map(|a| a.port());
    let deployer = deploy::Deployer::new(
        db.clone(),
        &config.data_dir,
        runtime.clone(),
        vault.clone(),
        deploy::Settings {
            health_timeout: config.health_timeout,
            liveness: config.liveness,
            gateway_port,
            default_limits: config.default_limits,
            urls: config.url_scheme(),
            resources: resources::Resources::new(
                db.clone(),
                vault.clone(),
                std::sync::Arc::new(slipway_services::Services::new(
                    slipway_services::ServicesConfig {
                        dir: config.data_dir.join(data_dir::SERVICES_DIR),
                        postgres_url: config.services_postgres_url.clone(),
                    },
                )),
                runtime,
            ),
        },
    );
    deployer.resume().await?;
    deployer.listen(built_rx);
    let notifier = notifications::Notifier::new(db.clone(), vault.clone(), config.notify_retries);
    notifier.start();
    if let Some(tls) = &config.tls {
        notifier.watch_certificate(tls.cert.clone(), config.certificate_check);
    }
    let sso = single_sign_on(config, &boot.account_id)?;
    let (domains, public) = custom_domains(config, &db, &vault).await?;
    Ok(AppState::new(
        db,
        runner,
        deployer,
        signer,
        vault,
        lock,
        http::Gateways {
            gateway,
            domains,
            public,
        },
    )
    .with_sso(sso)
    .with_mcp(
        config
            .public_url
            .as_deref()
            .or(config.oidc.as_ref().map(|o| o.public_url.as_str())),
        config.tls.is_some(),
    )
    .with_notifier(notifier)
    .with_git_worker())
}

/// Binds the custom domains' listeners (`--gateway-http-listen`, `--gateway-https-listen`),
/// reads the domains and their certificates, and starts the certificate worker.
async fn custom_domains(
    config: &PlatformConfig,
    db: &db::Db,
    vault: &vault::Vault,
) -> Result<(domains::Domains, http::PublicListeners), PlatformError> {
    let settings = &config.domains;
    if let Some(file) = &settings.acme.ca_file {
        std::fs::read(file).map_err(|e| {
            PlatformError::Config(format!("--acme-ca-file {}: {e}", file.display()))
        })?;
    }
    let domains = domains::Domains::new(
        db.clone(),
        vault.clone(),
        settings.clone(),
        config.public_domain.as_deref(),
    )?;
    let bind = |flag: &'static str, addr: Option<std::net::SocketAddr>| async move {
        match addr {
            None => Ok(None),
            Some(addr) => {
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|e| PlatformError::Config(format!("{flag} {addr}: {e}")))?;
                tracing::info!(local = %listener.local_addr()?, flag, "custom-domain gateway listening");
                Ok::<_, PlatformError>(Some(listener))
            }
        }
    };
    let public = http::PublicListeners {
        http: bind("--gateway-http-listen", settings.http_listen).await?,
        https: bind("--gateway-https-listen", settings.https_listen).await?,
    };
    let port = |l: &Option<tokio::net::TcpListener>| {
        l.as_ref()
            .and_then(|l| l.local_addr().ok())
            .map(|a| a.port())
    };
    domains.set_ports(port(&public.http), port(&public.https));
    // The operator's certificate covers names without one of their own from the start; the
    // server that serves it (watched, reloaded) replaces this copy when it starts serving.
    if let Some(files) = &config.tls {
        let tls = slipway_server::tls::Tls::load(files.clone())
            .map_err(|e| PlatformError::Config(e.to_string()))?;
        domains.set_operator(Some(tls));
    }
    domains.reload().await?;
    domains.start_worker();
    Ok((domains, public))
}

/// The relying party `--oidc-*` configures, checked now so a wrong flag stops the start.
fn single_sign_on(
    config: &PlatformConfig,
    account_id: &str,
) -> Result<Option<std::sync::Arc<slipway_identity::oidc::Sso>>, PlatformError> {
    let Some(oidc) = &config.oidc else {
        return Ok(None);
    };
    let secret = std::fs::read_to_string(&oidc.client_secret_file).map_err(|e| {
        PlatformError::Config(format!(
            "--oidc-client-secret-file {}: {e}",
            oidc.client_secret_file.display()
        ))
    })?;
    let secret = secret.trim();
    if secret.is_empty() {
        return Err(PlatformError::Config(format!(
            "--oidc-client-secret-file {} is empty",
            oidc.client_secret_file.display()
        )));
    }
    let public_url = url::Url::parse(&oidc.public_url)
        .map_err(|e| PlatformError::Config(format!("--public-url {}: {e}", oidc.public_url)))?;
    let sso = slipway_identity::oidc::Sso::new(slipway_identity::oidc::OidcConfig {
        public_url,
        issuer: oidc.issuer.clone(),
        client_id: oidc.client_id.clone(),
        client_secret: secret.to_owned(),
        allowed_domains: oidc.allowed_domains.clone(),
        account_id: account_id.to_owned(),
    })
    .map_err(PlatformError::Config)?;
    tracing::info!(issuer = %oidc.issuer, "single sign-on configured");
    Ok(Some(std::sync::Arc::new(sso)))
}

/// The runtime backend `--runtime` asks for: `auto` and `process` run services as processes;
/// `container` first proves the engine can run a container, and stops the start with what
/// was tried when it cannot (before any deployment is resumed).
async fn select_runtime(
    config: &PlatformConfig,
) -> Result<std::sync::Arc<dyn slipway_runtime::runtime::Runtime>, PlatformError> {
    match config.runtime {
        RuntimeKind::Auto | RuntimeKind::Process => Ok(std::sync::Arc::new(
            slipway_runtime::process::ProcessRuntime::new(&config.data_dir),
        )),
        RuntimeKind::Container => {
            let data_dir = config.data_dir.clone();
            let engine = config.container_engine.clone();
            let opened = tokio::task::spawn_blocking(move || {
                slipway_runtime::container::ContainerRuntime::open(&data_dir, engine.as_deref())
            })
            .await
            .map_err(|e| PlatformError::Config(format!("the container probe panicked: {e}")))?;
            match opened {
                Ok(runtime) => Ok(std::sync::Arc::new(runtime)),
                Err(message) => Err(PlatformError::Config(format!(
                    "--runtime container: {message}"
                ))),
            }
        }
    }
}

/// Serves the API on an already bound listener, and the gateway on its own, until
/// `shutdown` completes; then stops deployed services and builds and closes the database
/// pool.
pub async fn spawn(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), PlatformError> {
    spawn_with_tls(listener, state, None, shutdown).await
}

/// [`spawn`], over HTTPS when `tls` is given: the API and the gateway share the certificate
/// (which then names the platform's host and the apps' host names, a wildcard for
/// `--public-domain`).
pub async fn spawn_with_tls(
    listener: tokio::net::TcpListener,
    state: AppState,
    tls: Option<slipway_server::tls::Tls>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), PlatformError> {
    // Live log streams end, and both listeners stop, when `shutdown` completes.
    let stop = state.shutting_down().clone();
    tokio::spawn(stop.after(shutdown));
    if tls.is_some() {
        // The served (watched) certificate replaces the copy `prepare` loaded.
        state.domains().set_operator(tls.clone());
    }
    let gateway = state.take_gateway().map(|gateway_listener| {
        let app = gateway::router(
            state.deployer().clone(),
            state.domains().clone(),
            gateway::Listener::Gateway { tls: tls.is_some() },
        );
        let over_tls = tls.clone();
        let stopped = stop.begun();
        tokio::spawn(async move {
            match over_tls {
                Some(tls) => {
                    slipway_server::serve::serve_tls(gateway_listener, tls, app, stopped).await
                }
                None => gateway::serve(gateway_listener, None, app, stopped).await,
            }
        })
    });
    let public = state.take_public_listeners();
    let mut public_tasks = Vec::new();
    if let Some(listener) = public.http {
        let app = gateway::router(
            state.deployer().clone(),
            state.domains().clone(),
            gateway::Listener::PublicHttp,
        );
        public_tasks.push(tokio::spawn(gateway::serve(
            listener,
            None,
            app,
            stop.begun(),
        )));
    }
    if let Some(listener) = public.https {
        let config = state
            .domains()
            .certificates()
            .server_config()
            .map_err(|e| PlatformError::Config(format!("--gateway-https-listen: {e}")))?;
        let app = gateway::router(
            state.deployer().clone(),
            state.domains().clone(),
            gateway::Listener::PublicHttps,
        );
        public_tasks.push(tokio::spawn(gateway::serve(
            listener,
            Some(std::sync::Arc::new(config)),
            app,
            stop.begun(),
        )));
    }
    let served =
        slipway_server::serve::serve_maybe_tls(listener, tls, router(state.clone()), stop.begun())
            .await;
    // The API stopped (on an error too): the gateways and the certificate worker stop with it.
    stop.begin();
    state.domains().stop_worker();
    state.git().stop_worker();
    for task in public_tasks {
        if let Ok(Err(e)) = task.await {
            tracing::error!(error = %e, "custom-domain gateway failed");
        }
    }
    if let Some(task) = gateway
        && let Ok(Err(e)) = task.await
    {
        tracing::error!(error = %e, "gateway failed");
    }
    state.close().await;
    served.map_err(PlatformError::Io)
}

/// `slipway platform serve`: config → pool → migrate → bootstrap → serve, until Ctrl-C or
/// SIGTERM. With [`PlatformConfig::tls`] it serves HTTPS; the certificate files are checked
/// before anything else starts (the order of [`slipway_server::serve::run`]).
pub async fn serve(config: PlatformConfig) -> Result<(), PlatformError> {
    slipway_server::serve::run(
        config.listen,
        config.tls.clone(),
        prepare(&config),
        |on| async move {
            tracing::info!(local = %on.local, https = on.tls.is_some(), gateway = ?on.state.gateway_addr(), "platform server listening");
            let shutdown = slipway_server::serve::shutdown_signal();
            spawn_with_tls(on.listener, on.state, on.tls, shutdown).await
        },
    )
    .await
}

/// Tells the platform's notification channels that a backup of it failed (`backup.failed`,
/// to whole-account subscriptions): the event is written into its database, and the running
/// server (or the next one to start) sends it. Nothing is created for a data directory that
/// holds no platform; a database that cannot be reached is logged (the backup's own error
/// says why it failed).
pub async fn tell_backup_failed(data_dir: &Path, database_url: Option<&str>, reason: &str) {
    if database_url.is_none() && !data_dir.join(SQLITE_FILE).is_file() {
        return;
    }
    let url = match config::database_url(data_dir, database_url) {
        Ok(url) => url,
        Err(e) => {
            tracing::warn!(error = %e, "cannot tell the platform that its backup failed");
            return;
        }
    };
    match db::open(&url).await {
        Ok(db) => {
            notifications::events::enqueue_now(
                &db,
                slipway_api::notifications::EventKind::BackupFailed,
                None,
                None,
                Some(reason),
            )
            .await;
            db.close().await;
        }
        Err(e) => tracing::warn!(error = %e, "cannot tell the platform that its backup failed"),
    }
}

/// `slipway platform user add`: adds a member to the first account (creating that account and
/// its bootstrap token on a fresh data directory) and returns the new user with its token, the
/// only time the token exists in clear. Print it as JSON: `{"id","email","name","token"}`.
pub async fn add_user(
    data_dir: &Path,
    database_url: Option<&str>,
    email: &str,
    name: &str,
) -> Result<NewUser, PlatformError> {
    let email = slipway_identity::rules::parse_email(email.trim())?;
    let name = slipway_identity::rules::parse_user_name(name)?;
    let db = open(data_dir, database_url).await?;
    let account_id = bootstrap::default_account(&db, data_dir).await?;
    let mut tx = db.begin_write().await?;
    let user = slipway_identity::people::create(
        &mut tx,
        &account_id,
        &email,
        &name,
        AccountRole::Member,
        "made by slipway platform user add",
    )
    .await?;
    tx.commit().await?;
    db.close().await;
    tracing::info!(user_id = %user.id, "account member added");
    Ok(user)
}

/// `slipway platform vault rotate-key`: re-seals every secret version under a fresh master
/// key (see [`vault::rotate_key`]); the server must be stopped.
pub async fn rotate_vault_key(
    data_dir: &Path,
    database_url: Option<&str>,
    key_file: Option<&Path>,
) -> Result<vault::Rotation, PlatformError> {
    let db = open(data_dir, database_url).await?;
    let result = vault::rotate_key(&db, data_dir, &vault::key_path(data_dir, key_file)).await;
    db.close().await;
    result
}

/// `slipway platform prune`: keeps what the newest `keep` deployments of each app need and
/// removes older images and app-secret versions (see [`retention`]); the server must be
/// stopped.
pub async fn prune(
    data_dir: &Path,
    database_url: Option<&str>,
    keep: usize,
    dry_run: bool,
) -> Result<retention::RetentionReport, PlatformError> {
    let db = open(data_dir, database_url).await?;
    let result = retention::prune(&db, data_dir, keep, dry_run).await;
    db.close().await;
    result
}

/// Creates a new, separate account (a tenant that sees nothing of the others) with one owner
/// user, and returns that user with its token.
pub async fn add_account(
    data_dir: &Path,
    database_url: Option<&str>,
    account_name: &str,
    email: &str,
    name: &str,
) -> Result<NewUser, PlatformError> {
    let email = slipway_identity::rules::parse_email(email.trim())?;
    let name = slipway_identity::rules::parse_user_name(name)?;
    let account_name = account_name.trim();
    if account_name.is_empty() {
        return Err(PlatformError::InvalidInput {
            field: "account_name",
            message: "must not be empty".into(),
        });
    }
    let db = open(data_dir, database_url).await?;
    let mut tx = db.begin_write().await?;
    let account_id = slipway_identity::people::create_account(&mut tx, account_name).await?;
    let user = slipway_identity::people::create(
        &mut tx,
        &account_id,
        &email,
        &name,
        AccountRole::Admin,
        "made by slipway platform account add",
    )
    .await?;
    tx.commit().await?;
    db.close().await;
    tracing::info!(user_id = %user.id, "account created");
    Ok(user)
}
