//! `slipway platform serve`, `user add`, `vault rotate-key` and `prune`: flags → the
//! platform library.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::data_dir::platform_data_dir;

#[derive(Debug, Subcommand)]
pub enum PlatformCommand {
    /// Serve the platform's versioned HTTP API (/v1/…).
    Serve(Box<ServeArgs>),
    /// Run the local platform (the one the desktop app and the MCP server start when no
    /// platform is configured; `slipway build --start-platform` starts it in the background)
    /// in the foreground until Ctrl-C; `--stop` stops a running one.
    Local(LocalArgs),
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
    /// Base images for builds on machines that cannot pull them.
    Images {
        #[command(subcommand)]
        command: ImagesCommand,
    },
    /// Write an encrypted archive (age, passphrase) of the database, keys, images and logs,
    /// while the server goes on serving; prints its size and how long it took.
    Backup(crate::backup::PlatformBackupArgs),
    /// Restore an archive into a new data directory (and a new, empty PostgreSQL database),
    /// after checking all of it; a refusal writes nothing.
    Restore(crate::backup::PlatformRestoreArgs),
}

#[derive(Debug, Subcommand)]
pub enum ImagesCommand {
    /// Put an image the platform cannot pull into the local image storage buildah and podman
    /// share, under the name a Dockerfile's FROM uses, and print {"image","id","source"}.
    /// FILE is an OCI archive, a docker archive, or a root file system tarball (plain or
    /// compressed), told apart by its contents.
    Import(ImportArgs),
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The archive or tarball.
    file: PathBuf,
    /// The name a Dockerfile's FROM uses (python:3.12-slim is stored as
    /// docker.io/library/python:3.12-slim, which that FROM resolves to).
    #[arg(long)]
    tag: String,
    /// For a root file system: an environment entry NAME=value (repeatable; PATH defaults to
    /// the usual one).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// For a root file system: the default command.
    #[arg(long)]
    cmd: Option<String>,
}

#[derive(Debug, Args)]
pub struct LocalArgs {
    /// Stop the local platform that runs (and the apps it deployed) instead.
    #[arg(long)]
    stop: bool,
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
    /// `postgres://…` of a PostgreSQL server for the apps' databases (a role that may create
    /// roles and databases), instead of the cluster the platform runs itself.
    #[arg(long, value_name = "URL")]
    services_postgres_url: Option<String>,
    /// Image builder: auto (what the runtime runs: native for processes when the devfile has a
    /// build command; buildah for containers, native when a FROM image is missing), buildah, or
    /// native.
    #[arg(long, default_value = "auto")]
    builder: slipway_platform::BuilderKind,
    /// Where the host-routed app gateway listens: http://<service>.<app>.localhost:<port>
    /// (browsers and curl resolve *.localhost names).
    #[arg(long, default_value = "127.0.0.1:8780")]
    gateway_listen: SocketAddr,
    /// How apps' URLs look: ports (each public service also answers on a loopback port of its
    /// own, http://127.0.0.1:<port>, which every HTTP client reaches) or hosts (only the
    /// host-routed gateway's *.localhost names).
    #[arg(long, default_value = "ports", value_name = "MODE")]
    gateway_mode: slipway_platform::GatewayMode,
    /// A domain your DNS and TLS proxy point at the gateway: apps' URLs become
    /// https://<service>.<app>.<domain>, routed by Host.
    #[arg(long, value_name = "DOMAIN", value_parser = public_domain)]
    public_domain: Option<String>,
    /// Directory of OSV JSON advisories the image scans match packages against.
    #[arg(long)]
    advisory_db: Option<PathBuf>,
    /// How long a new deployment may take to become healthy before it is FAILED.
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
    health_timeout: u64,
    /// After a deployment is RUNNING, how often each service's health path is checked.
    #[arg(long, default_value_t = 10, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    health_interval: u64,
    /// Failed health checks in a row that restart a RUNNING service.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    health_failures: u32,
    /// Restarts for failed health checks, with no healthy check between them, after which the
    /// deployment is FAILED as crash-looping.
    #[arg(long, default_value_t = 3)]
    health_restarts: u32,
    /// How long after a failed notification delivery it is tried again (four times as long
    /// after each further failure, at most an hour).
    #[arg(long, default_value_t = 30, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    notify_retry_after: u64,
    /// Attempts before a notification delivery is failed for good.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=20))]
    notify_attempts: u32,
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
    /// The memory limit of a service whose devfile sets no memoryLimit (a quantity such as
    /// 512Mi, or none). Applied by the container runtime.
    #[arg(long, default_value = "1Gi", value_name = "QUANTITY", value_parser = memory_limit)]
    default_memory_limit: Limit,
    /// The CPU limit of a service whose devfile sets no cpuLimit (500m, 2, or none).
    #[arg(long, default_value = "none", value_name = "QUANTITY", value_parser = cpu_limit)]
    default_cpu_limit: Limit,
    /// The CA bundle Dockerfile builds trust while they run (mounted read-only, never part of
    /// the image), so package registries work behind a TLS-inspecting proxy: system (the
    /// host's bundle: $SSL_CERT_FILE, else the distribution's usual file — an unusable
    /// $SSL_CERT_FILE is passed over with a warning; none found means none), none, or a file
    /// of PEM certificates (the start fails if it cannot serve), such as the public roots with
    /// the proxy's CA appended.
    #[arg(long, value_name = "FILE|system|none", default_value = "system")]
    build_ca_bundle: slipway_platform::BuildCaBundle,
    /// The platform's address as people's browsers and assistants reach it, for example
    /// https://slipway.example.org: single sign-on returns to <URL>/auth/oidc/callback, and
    /// the tool server at <URL>/mcp accepts requests for this name (and loopback) only.
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// Sign people in with this OpenID Connect provider (its issuer URL; discovery is under
    /// it). Needs --public-url, --oidc-client-id and --oidc-client-secret-file.
    #[arg(
        long,
        value_name = "URL",
        requires_all = ["public_url", "oidc_client_id", "oidc_client_secret_file"]
    )]
    oidc_issuer: Option<String>,
    /// The client id registered at the provider.
    #[arg(long, value_name = "ID", requires = "oidc_issuer")]
    oidc_client_id: Option<String>,
    /// A file holding the client secret (never the secret itself: a command line is
    /// visible to every user of the machine).
    #[arg(long, value_name = "FILE", requires = "oidc_issuer")]
    oidc_client_secret_file: Option<PathBuf>,
    /// E-mail domains whose verified addresses may join as members without an invite,
    /// comma-separated (example.org,example.com). Without it only existing people and people
    /// with a pending invite may sign in.
    #[arg(long, value_name = "DOMAINS", requires = "oidc_issuer", value_parser = allowed_domains)]
    oidc_allowed_domains: Option<Domains>,
    #[command(flatten)]
    tls: crate::tls_args::TlsArgs,
    /// Serve custom domains (`slipway domains add`) over plain HTTP here, usually 0.0.0.0:80:
    /// ACME's HTTP-01 challenges, then a redirect to HTTPS once a domain has its certificate.
    /// Without it (and --gateway-https-listen) no custom domain is served.
    #[arg(long, value_name = "ADDR")]
    gateway_http_listen: Option<SocketAddr>,
    /// Serve custom domains over HTTPS here, usually 0.0.0.0:443: each domain's certificate
    /// by SNI (else --tls-cert's), HTTP/2 and HTTP/1.1.
    #[arg(long, value_name = "ADDR")]
    gateway_https_listen: Option<SocketAddr>,
    /// The ACME directory custom domains' certificates are issued by (Let's Encrypt unless
    /// told; its staging directory or a company's step-ca work too).
    #[arg(long, value_name = "URL", default_value = slipway_platform::LETS_ENCRYPT)]
    acme_directory: String,
    /// The contact address the CA sends expiry and policy notices to.
    #[arg(long, value_name = "EMAIL")]
    acme_email: Option<String>,
    /// A PEM root certificate that alone is trusted for the ACME directory's HTTPS (a private
    /// CA such as step-ca).
    #[arg(long, value_name = "FILE")]
    acme_ca_file: Option<PathBuf>,
    /// The DNS server asked whether a custom domain points at this platform (IP[:PORT]); the
    /// system's resolver by default. For split-horizon DNS.
    #[arg(long, value_name = "IP[:PORT]", value_parser = dns_server)]
    dns_resolver: Option<SocketAddr>,
}

/// `--dns-resolver`: an address, port 53 unless given.
fn dns_server(text: &str) -> Result<SocketAddr, String> {
    text.parse::<SocketAddr>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(|ip| SocketAddr::new(ip, 53)))
        .map_err(|_| format!("{text:?} is not an IP address with an optional port (192.0.2.53 or 192.0.2.53:5353)"))
}

/// `--oidc-allowed-domains`, checked as the flag is read.
#[derive(Debug, Clone)]
struct Domains(Vec<String>);

fn allowed_domains(text: &str) -> Result<Domains, String> {
    slipway_identity::oidc::OidcConfig::parse_domains(text).map(Domains)
}

fn public_domain(text: &str) -> Result<String, String> {
    let domain = text.trim_end_matches('.').to_ascii_lowercase();
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if domain.len() <= 253 && domain.contains('.') && domain.split('.').all(label_ok) {
        Ok(domain)
    } else {
        Err(format!(
            "{text:?} is not a domain name (dot-separated labels of letters, digits and '-', for example apps.example.org)"
        ))
    }
}

/// A limit flag's value: a number, or none.
#[derive(Debug, Clone, Copy)]
struct Limit(Option<u64>);

fn memory_limit(text: &str) -> Result<Limit, String> {
    if text == "none" {
        return Ok(Limit(None));
    }
    slipway_platform::quantity::memory_bytes(text)
        .map(|b| Limit(Some(b)))
        .ok_or_else(|| {
            format!("{text:?} is not a memory quantity (for example 512Mi or 1Gi) or none")
        })
}

fn cpu_limit(text: &str) -> Result<Limit, String> {
    if text == "none" {
        return Ok(Limit(None));
    }
    slipway_platform::quantity::cpu_millis(text)
        .map(|m| Limit(Some(m)))
        .ok_or_else(|| format!("{text:?} is not a CPU quantity (for example 500m or 2) or none"))
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

impl ServeArgs {
    /// The flags as the platform's configuration.
    fn into_config(self) -> slipway_platform::PlatformConfig {
        let args = self;
        // (`args` rather than `self`: the fields read as the flags they are.)
        let mut config =
            slipway_platform::PlatformConfig::new(args.listen, platform_data_dir(args.data_dir));
        config.database_url = args.database_url;
        config.services_postgres_url = args.services_postgres_url;
        config.builder = args.builder;
        config.advisory_db = args.advisory_db;
        config.gateway_listen = Some(args.gateway_listen);
        config.health_timeout = std::time::Duration::from_secs(args.health_timeout);
        config.liveness = slipway_platform::Liveness {
            interval: std::time::Duration::from_secs(args.health_interval),
            failures: args.health_failures,
            restarts: args.health_restarts,
        };
        config.notify_retries = slipway_platform::Retries {
            first: std::time::Duration::from_secs(args.notify_retry_after),
            attempts: args.notify_attempts,
        };
        config.vault_key_file = args.vault_key_file;
        config.runtime = args.runtime;
        config.container_engine = args.container_engine;
        config.default_limits = slipway_platform::Limits {
            memory_bytes: args.default_memory_limit.0,
            cpu_millis: args.default_cpu_limit.0,
        };
        config.build_ca_bundle = args.build_ca_bundle;
        config.gateway_mode = args.gateway_mode;
        config.public_domain = args.public_domain;
        config.tls = args.tls.files();
        config.domains = slipway_platform::DomainSettings {
            http_listen: args.gateway_http_listen,
            https_listen: args.gateway_https_listen,
            acme: slipway_platform::AcmeConfig {
                directory: args.acme_directory,
                email: args.acme_email,
                ca_file: args.acme_ca_file,
            },
            dns_resolver: args.dns_resolver,
        };
        config.public_url = args.public_url.clone();
        config.oidc = match (
            args.public_url,
            args.oidc_issuer,
            args.oidc_client_id,
            args.oidc_client_secret_file,
        ) {
            (Some(public_url), Some(issuer), Some(client_id), Some(client_secret_file)) => {
                Some(slipway_platform::OidcSettings {
                    public_url,
                    issuer,
                    client_id,
                    client_secret_file,
                    allowed_domains: args.oidc_allowed_domains.map(|d| d.0).unwrap_or_default(),
                })
            }
            _ => None,
        };
        config
    }
}

pub fn run(command: PlatformCommand) -> ExitCode {
    crate::logging::init_tracing();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = match command {
        PlatformCommand::Local(args) => return crate::local_platform::run(args.stop),
        PlatformCommand::Backup(args) => {
            return crate::backup::finish(runtime.block_on(crate::backup::platform_backup(args)));
        }
        PlatformCommand::Restore(args) => {
            return crate::backup::finish(runtime.block_on(crate::backup::platform_restore(args)));
        }
        PlatformCommand::Serve(args) => {
            let config = args.into_config();
            runtime
                .block_on(slipway_platform::serve(config))
                .map(|()| None)
        }
        PlatformCommand::User {
            command: UserCommand::Add(args),
        } => runtime
            .block_on(slipway_platform::add_user(
                &platform_data_dir(args.data_dir),
                args.database_url.as_deref(),
                &args.email,
                &args.name,
            ))
            .map(|user| serde_json::to_string(&user).ok()),
        PlatformCommand::Vault {
            command: VaultCommand::RotateKey(args),
        } => runtime
            .block_on(slipway_platform::rotate_vault_key(
                &platform_data_dir(args.data_dir),
                args.database_url.as_deref(),
                args.vault_key_file.as_deref(),
            ))
            .map(|rotation| serde_json::to_string(&rotation).ok()),
        PlatformCommand::Prune(args) => runtime
            .block_on(slipway_platform::prune(
                &platform_data_dir(args.data_dir),
                args.database_url.as_deref(),
                args.keep,
                args.dry_run,
            ))
            .map(|report| serde_json::to_string_pretty(&report).ok()),
        PlatformCommand::Images {
            command: ImagesCommand::Import(args),
        } => slipway_platform::base_image::import(
            &args.file,
            &args.tag,
            &slipway_platform::base_image::RootFsConfig {
                env: args.env,
                cmd: args.cmd,
            },
        )
        .map(|imported| serde_json::to_string(&imported).ok())
        .map_err(|e| slipway_platform::PlatformError::Config(e.to_string())),
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
