//! `slipway platform serve`, `user add`, `vault rotate-key` and `prune`: flags → the
//! platform library.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum PlatformCommand {
    /// Serve the platform's versioned HTTP API (/v1/…).
    Serve(ServeArgs),
    /// Manage the account's users.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Manage the secrets vault.
    Vault {
        #[command(subcommand)]
        command: VaultCommand,
    },
    /// Remove images and app-secret versions the newest N deployments of each app do not
    /// need (stop the server first) and print what was removed as JSON.
    Prune(PruneArgs),
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// The platform's data directory.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// `postgres://…` when the platform uses PostgreSQL.
    #[arg(long)]
    database_url: Option<String>,
    /// How many deployments of each app keep their images and secret versions (a rollback
    /// to any of them stays possible).
    #[arg(long, default_value_t = slipway_platform::retention::DEFAULT_KEEP, value_name = "N")]
    keep: usize,
    /// Report what would be removed without removing it.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Debug, Subcommand)]
pub enum VaultCommand {
    /// Re-encrypt every secret version under a fresh master key (stop the server first) and
    /// print {"key_id","versions"}.
    RotateKey(RotateKeyArgs),
}

#[derive(Debug, Args)]
pub struct RotateKeyArgs {
    /// The platform's data directory.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// `postgres://…` when the platform uses PostgreSQL.
    #[arg(long)]
    database_url: Option<String>,
    /// The master key file, when the server is given one (default: DATA_DIR/vault.key).
    #[arg(long)]
    vault_key_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Add a member to the account and print {"id","email","name","token"} (the token is shown once).
    Add(UserAddArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8700")]
    listen: SocketAddr,
    /// Where the database (SQLite), the bootstrap token and platform files live.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// `postgres://…` to use PostgreSQL instead of SQLite.
    #[arg(long)]
    database_url: Option<String>,
    /// Image builder: auto (buildah when it runs here, else native), buildah, or native.
    #[arg(long, default_value = "auto")]
    builder: slipway_platform::BuilderKind,
    /// Where the app gateway listens; apps are reached at http://<service>.<app>.localhost:<port>.
    #[arg(long, default_value = "127.0.0.1:8780")]
    gateway_listen: SocketAddr,
    /// Directory of OSV JSON advisories the image scans match packages against.
    #[arg(long)]
    advisory_db: Option<PathBuf>,
    /// How long a new deployment may take to become healthy before it is FAILED.
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
    health_timeout: u64,
    /// The vault's master key file (created with mode 0600 when missing). Default:
    /// DATA_DIR/vault.key. Keep it out of database backups.
    #[arg(long)]
    vault_key_file: Option<PathBuf>,
    /// How deployed services run: auto (= process), process (process groups on this host), or
    /// container (podman or docker; the server refuses to start when the engine cannot run a
    /// container, and says what it tried).
    #[arg(long, default_value = "auto")]
    runtime: slipway_platform::RuntimeKind,
    /// The container engine for --runtime container: a name on PATH or a path (default: podman,
    /// else docker, whichever runs).
    #[arg(long, value_name = "PROGRAM")]
    container_engine: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct UserAddArgs {
    /// The platform's data directory.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// `postgres://…` when the platform uses PostgreSQL.
    #[arg(long)]
    database_url: Option<String>,
    /// The user's e-mail address (unique).
    #[arg(long)]
    email: String,
    /// The user's display name.
    #[arg(long)]
    name: String,
}

fn data_dir(arg: Option<PathBuf>) -> PathBuf {
    arg.unwrap_or_else(|| crate::care::user_data_dir().join("platform"))
}

pub fn run(command: PlatformCommand) -> ExitCode {
    crate::init_tracing();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = match command {
        PlatformCommand::Serve(args) => {
            let mut config =
                slipway_platform::PlatformConfig::new(args.listen, data_dir(args.data_dir));
            config.database_url = args.database_url;
            config.builder = args.builder;
            config.advisory_db = args.advisory_db;
            config.gateway_listen = Some(args.gateway_listen);
            config.health_timeout = std::time::Duration::from_secs(args.health_timeout);
            config.vault_key_file = args.vault_key_file;
            config.runtime = args.runtime;
            config.container_engine = args.container_engine;
            runtime
                .block_on(slipway_platform::serve(config))
                .map(|()| None)
        }
        PlatformCommand::User {
            command: UserCommand::Add(args),
        } => runtime
            .block_on(slipway_platform::add_user(
                &data_dir(args.data_dir),
                args.database_url.as_deref(),
                &args.email,
                &args.name,
            ))
            .map(|user| serde_json::to_string(&user).ok()),
        PlatformCommand::Vault {
            command: VaultCommand::RotateKey(args),
        } => runtime
            .block_on(slipway_platform::rotate_vault_key(
                &data_dir(args.data_dir),
                args.database_url.as_deref(),
                args.vault_key_file.as_deref(),
            ))
            .map(|rotation| serde_json::to_string(&rotation).ok()),
        PlatformCommand::Prune(args) => runtime
            .block_on(slipway_platform::prune(
                &data_dir(args.data_dir),
                args.database_url.as_deref(),
                args.keep,
                args.dry_run,
            ))
            .map(|report| serde_json::to_string_pretty(&report).ok()),
    };
    match outcome {
        Ok(Some(json)) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Ok(None) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
