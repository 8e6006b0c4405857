//! The Slipway platform server (`slipway platform serve`): accounts, bearer tokens, apps and
//! image builds behind a versioned HTTP API (`/v1/…`), over SQLite (default, a file in the
//! data directory) or PostgreSQL. Images are stored content-addressed and signed
//! ([`image::verify_image`] checks one before it runs). Deployments, logs and the gateway
//! come later.
//!
//! Entry points: [`serve`] for the CLI (config → pool → migrate → bootstrap → serve);
//! [`prepare`] + [`router`] / [`spawn`] for tests that bind their own socket; [`add_user`]
//! and [`add_account`] for `slipway platform user add` and friends.

mod auth;
mod bootstrap;
pub mod build;
mod config;
mod db;
mod error;
pub mod http;
pub mod image;
mod pagination;
mod store;

use std::future::Future;
use std::path::Path;

pub use auth::Token;
pub use config::{BOOTSTRAP_TOKEN_FILE, Backend, BuilderKind, PlatformConfig, SQLITE_FILE};
pub use error::PlatformError;
pub use http::{AppState, router};
pub use pagination::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};
pub use store::accounts::NewUser;
pub use store::apps::AppStatus;

use build::runner::Runner;
use db::Db;
use store::accounts::{self, AccountRole};

/// Opens the database named by `data_dir` / `database_url` and runs the migrations.
async fn open(data_dir: &Path, database_url: Option<&str>) -> Result<Db, PlatformError> {
    let url = config::database_url(data_dir, database_url)?;
    std::fs::create_dir_all(data_dir).map_err(|e| {
        PlatformError::Config(format!(
            "cannot create data directory {}: {e}",
            data_dir.display()
        ))
    })?;
    let db = Db::connect(&url).await?;
    db.migrate().await?;
    Ok(db)
}

/// Connects, migrates, creates the first account and its token file if needed, and starts
/// the build runner (which marks builds a previous run left unfinished as failed); returns
/// the state the router needs. [`serve`] uses it, and so do tests that bind their own socket.
pub async fn prepare(config: &PlatformConfig) -> Result<AppState, PlatformError> {
    let db = open(&config.data_dir, config.database_url.as_deref()).await?;
    tracing::info!(backend = ?db.backend(), "database ready");
    let boot = bootstrap::ensure(&db, &config.data_dir).await?;
    tracing::info!(token_file = %boot.token_file.display(), "owner token file ready");
    let runner = Runner::start(db.clone(), &config.data_dir, config.builder).await?;
    Ok(AppState::new(db, runner))
}

/// Serves the API on an already bound listener until `shutdown` completes, then closes the
/// database pool.
pub async fn spawn(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), PlatformError> {
    let served = axum::serve(listener, router(state.clone()))
        .with_graceful_shutdown(shutdown)
        .await;
    state.close().await;
    served.map_err(PlatformError::Io)
}

/// `slipway platform serve`: config → pool → migrate → bootstrap → serve, until Ctrl-C or
/// SIGTERM.
pub async fn serve(config: PlatformConfig) -> Result<(), PlatformError> {
    let state = prepare(&config).await?;
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let local = listener.local_addr()?;
    tracing::info!(%local, "platform server listening");
    spawn(listener, state, shutdown_signal()).await
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
    let email = accounts::parse_email(email)?;
    let name = accounts::parse_user_name(name)?;
    let db = open(data_dir, database_url).await?;
    let account_id = bootstrap::default_account(&db, data_dir).await?;
    let mut tx = db.begin_write().await?;
    let user =
        accounts::create_user(&mut tx, &account_id, &email, &name, AccountRole::Member).await?;
    tx.commit().await?;
    db.close().await;
    tracing::info!(user_id = %user.id, "account member added");
    Ok(user)
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
    let email = accounts::parse_email(email)?;
    let name = accounts::parse_user_name(name)?;
    let account_name = account_name.trim();
    if account_name.is_empty() {
        return Err(PlatformError::InvalidInput {
            field: "account_name",
            message: "must not be empty".into(),
        });
    }
    let db = open(data_dir, database_url).await?;
    let mut tx = db.begin_write().await?;
    let account_id = accounts::create_account(&mut tx, account_name).await?;
    let user =
        accounts::create_user(&mut tx, &account_id, &email, &name, AccountRole::Owner).await?;
    tx.commit().await?;
    db.close().await;
    tracing::info!(user_id = %user.id, "account created");
    Ok(user)
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down");
}
