//! `PlatformConfig`: what `slipway platform serve` is told on its command line, and which
//! database that selects.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::PlatformError;
use slipway_runtime::build::trust::BuildCaBundle;

/// How long a starting service has to answer its health check unless `--health-timeout`
/// says otherwise.
pub const DEFAULT_HEALTH_TIMEOUT: Duration = Duration::from_secs(120);

/// Everything the platform server needs to start.
#[derive(Debug, Clone)]
pub struct PlatformConfig {
    /// Address to listen on (`--listen`), for example `127.0.0.1:8700`.
    pub listen: SocketAddr,
    /// Directory for the default SQLite file and the bootstrap token (`--data-dir`).
    pub data_dir: PathBuf,
    /// `postgres://…` to use PostgreSQL instead of the SQLite file (`--database-url`);
    /// `sqlite://…` is accepted too.
    pub database_url: Option<String>,
    /// Which image builder runs build jobs (`--builder auto|buildah|native`).
    pub builder: BuilderKind,
    /// Address of the gateway that serves deployed apps by host name
    /// (`--gateway-listen`); `None` runs no gateway (apps then have no URL). The default,
    /// `127.0.0.1:0`, takes a free port chosen at start and logged.
    pub gateway_listen: Option<SocketAddr>,
    /// How long a starting service has to answer its health check
    /// (`--health-timeout SECONDS`; default 120 s).
    pub health_timeout: Duration,
    /// How a RUNNING deployment's services are watched after the switch (`--health-interval`,
    /// `--health-failures`, `--health-restarts`).
    pub liveness: Liveness,
    /// A directory of OSV JSON advisories that build scans check the image's packages
    /// against (`--advisory-db DIR`); `None` makes every scan say that none is configured.
    pub advisory_db: Option<PathBuf>,
    /// The vault's master key file (`--vault-key-file`); `None` uses `DATA_DIR/vault.key`,
    /// created (mode 0600) on first start.
    pub vault_key_file: Option<PathBuf>,
    /// Which runtime backend runs deployed services (`--runtime auto|process|container`).
    pub runtime: RuntimeKind,
    /// The container engine's CLI for the `container` runtime (`--container-engine`, a name
    /// on `PATH` or a path); `None` takes `podman`, else `docker`, whichever runs.
    pub container_engine: Option<PathBuf>,
    /// Limits for services whose devfile sets no `memoryLimit` / `cpuLimit`
    /// (`--default-memory-limit`, default 1Gi; `--default-cpu-limit`, default none). Applied
    /// by the container runtime.
    pub default_limits: slipway_runtime::runtime::Limits,
    /// The CA bundle builds running a Dockerfile get as the image's trusted roots while they
    /// run (`--build-ca-bundle FILE|none`; by default the host's system bundle), so package
    /// registries work behind TLS-inspecting proxies; never part of the built image.
    pub build_ca_bundle: BuildCaBundle,
    /// How apps are reached (`--gateway-mode ports|hosts`; default `ports`, which every
    /// client resolves). See [`GatewayMode`].
    pub gateway_mode: GatewayMode,
    /// A domain the user's DNS and TLS proxy serve for the gateway (`--public-domain`): apps
    /// are then `https://<service>.<app>.<domain>`, routed by `Host`, whatever the mode.
    pub public_domain: Option<String>,
    /// Single sign-on with an OpenID Connect provider (`--public-url`, `--oidc-*`); `None`
    /// signs people in with tokens and invites only.
    pub oidc: Option<OidcSettings>,
    /// The platform's address as people and assistants reach it (`--public-url`): what
    /// `/mcp` accepts as its Host and Origin besides loopback, and the address its metadata
    /// names. Single sign-on returns to it too.
    pub public_url: Option<String>,
    /// Serve the API and the gateway over HTTPS with this certificate and key
    /// (`--tls-cert`, `--tls-key`), re-read on `SIGHUP` and when the files change.
    pub tls: Option<slipway_server::tls::TlsFiles>,
    /// An external PostgreSQL server for apps' relational databases
    /// (`--services-postgres-url`, a role that may create roles and databases) instead of
    /// the cluster the platform runs itself.
    pub services_postgres_url: Option<String>,
    /// When failed notification deliveries are tried again (`--notify-retry-after`,
    /// `--notify-attempts`).
    pub notify_retries: Retries,
    /// How often the TLS certificate (`--tls-cert`) is checked for its expiry (hourly; tests
    /// shorten it). Within 14 days of it, `certificate.expiring` is told at most once a day.
    pub certificate_check: Duration,
    /// Custom domains (docs/domains.md): the public gateway's listeners and the CA.
    pub domains: DomainSettings,
}

/// Where custom domains are served and who certifies them (`--gateway-http-listen`,
/// `--gateway-https-listen`, `--acme-*`, `--dns-resolver`).
#[derive(Debug, Clone, Default)]
pub struct DomainSettings {
    /// Plain HTTP for custom domains (`--gateway-http-listen`, `0.0.0.0:80` in production):
    /// ACME's HTTP-01 answers, the redirect to HTTPS once a certificate exists, and the app
    /// until then. `None` (the default) serves no custom domain and issues nothing.
    pub http_listen: Option<SocketAddr>,
    /// HTTPS for custom domains (`--gateway-https-listen`, `0.0.0.0:443`): each domain's
    /// certificate by SNI, else the operator's `--tls-cert`; HTTP/2 and HTTP/1.1.
    pub https_listen: Option<SocketAddr>,
    /// The CA (`--acme-directory`, `--acme-email`, `--acme-ca-file`); Let's Encrypt by default.
    pub acme: slipway_acme::AcmeConfig,
    /// The DNS server asked whether a domain points here (`--dns-resolver IP[:PORT]`); the
    /// system's resolver when `None`. For split-horizon DNS, and the tests' DNS server.
    pub dns_resolver: Option<SocketAddr>,
}

/// What `--public-url --oidc-issuer --oidc-client-id --oidc-client-secret-file
/// [--oidc-allowed-domains]` configure (docs/people.md).
#[derive(Debug, Clone)]
pub struct OidcSettings {
    /// The platform's address as browsers reach it (`--public-url`).
    pub public_url: String,
    /// The provider's issuer URL (`--oidc-issuer`).
    pub issuer: String,
    /// The client id registered at the provider (`--oidc-client-id`).
    pub client_id: String,
    /// The file holding the client secret (`--oidc-client-secret-file`): a secret never
    /// goes on a command line, where `ps` shows it.
    pub client_secret_file: PathBuf,
    /// E-mail domains whose verified addresses join as members (`--oidc-allowed-domains`).
    pub allowed_domains: Vec<String>,
}

/// How apps' URLs look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlScheme {
    /// `http://127.0.0.1:<port>`, one port per public service (the default).
    LoopbackPorts,
    /// `http://<service>.<app>.localhost:<gateway port>`, routed by `Host` (browsers, curl);
    /// `https://` when the gateway serves TLS (`--tls-cert`).
    LocalHosts {
        /// The gateway serves HTTPS.
        https: bool,
    },
    /// `https://<service>.<app>.<domain>`, routed by `Host` behind the user's TLS proxy.
    Domain(String),
}

/// How deployed apps are reached (`--gateway-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GatewayMode {
    /// Each public service also answers on a loopback port of its own:
    /// `http://127.0.0.1:<port>` (the default: every HTTP client on a plain machine reaches
    /// it).
    #[default]
    Ports,
    /// Only the host-routed gateway: `http://<service>.<app>.localhost:<gateway port>`
    /// (browsers and curl resolve `*.localhost`; the system resolver of a stock Debian or
    /// macOS does not).
    Hosts,
}

impl std::str::FromStr for GatewayMode {
    type Err = PlatformError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "ports" => Ok(GatewayMode::Ports),
            "hosts" => Ok(GatewayMode::Hosts),
            other => Err(PlatformError::Config(format!(
                "--gateway-mode must be ports or hosts, not {other:?}"
            ))),
        }
    }
}

impl PlatformConfig {
    /// How apps' URLs look under this configuration.
    pub fn url_scheme(&self) -> UrlScheme {
        match (&self.public_domain, self.gateway_mode) {
            (Some(domain), _) => UrlScheme::Domain(domain.clone()),
            (None, GatewayMode::Ports) => UrlScheme::LoopbackPorts,
            (None, GatewayMode::Hosts) => UrlScheme::LocalHosts {
                https: self.tls.is_some(),
            },
        }
    }
}

/// The health check after a deployment is RUNNING: every `interval`, each service with an
/// endpoint is probed at its `healthPath`; `failures` failed probes in a row restart it (with
/// the supervisor's back-off); `restarts` such restarts with no healthy probe between them
/// make the deployment FAILED as crash-looping, with the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Liveness {
    /// Between two probes of a service (`--health-interval SECONDS`; 10 s).
    pub interval: Duration,
    /// Failed probes in a row that restart a service (`--health-failures`; 3).
    pub failures: u32,
    /// Restarts without recovery after which the service is given up on
    /// (`--health-restarts`; 3).
    pub restarts: u32,
}

impl Default for Liveness {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(10),
            failures: 3,
            restarts: 3,
        }
    }
}

/// When failed deliveries are tried again: `first` after the first failure, four times as
/// long after each further one (at most an hour), `attempts` in all
/// (`--notify-retry-after`, `--notify-attempts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retries {
    /// The wait after the first failed attempt (30 s).
    pub first: Duration,
    /// Attempts before a delivery is failed for good (6: the last about 1 h 40 min after
    /// the first).
    pub attempts: u32,
}

impl Default for Retries {
    fn default() -> Self {
        Self {
            first: Duration::from_secs(30),
            attempts: 6,
        }
    }
}

impl Retries {
    /// The wait after failed attempt number `attempt` (1 for the first).
    pub fn after(&self, attempt: u32) -> Duration {
        let factor = 4u32.saturating_pow(attempt.saturating_sub(1));
        self.first
            .saturating_mul(factor)
            .min(Duration::from_secs(3600).max(self.first))
    }
}

/// The memory limit of a service whose devfile sets none.
pub const DEFAULT_MEMORY_LIMIT: u64 = 1 << 30;

impl PlatformConfig {
    /// A configuration on the default SQLite database under `data_dir`.
    pub fn new(listen: SocketAddr, data_dir: impl Into<PathBuf>) -> Self {
        Self {
            listen,
            data_dir: data_dir.into(),
            database_url: None,
            builder: BuilderKind::Auto,
            gateway_listen: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
            health_timeout: DEFAULT_HEALTH_TIMEOUT,
            liveness: Liveness::default(),
            advisory_db: None,
            vault_key_file: None,
            runtime: RuntimeKind::Auto,
            container_engine: None,
            default_limits: slipway_runtime::runtime::Limits {
                memory_bytes: Some(DEFAULT_MEMORY_LIMIT),
                cpu_millis: None,
            },
            build_ca_bundle: BuildCaBundle::System,
            gateway_mode: GatewayMode::Ports,
            public_domain: None,
            oidc: None,
            public_url: None,
            tls: None,
            services_postgres_url: None,
            notify_retries: Retries::default(),
            certificate_check: Duration::from_secs(3600),
            domains: DomainSettings::default(),
        }
    }
}

/// The runtime backend chosen on the command line (`--runtime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RuntimeKind {
    /// `process` (the default): containers are chosen explicitly, since an engine that is
    /// installed may still be unable to run anything (no daemon, no privileges).
    #[default]
    Auto,
    /// Services run as process groups on this host.
    Process,
    /// Services run as containers of podman or docker; the server refuses to start when the
    /// engine cannot run a container.
    Container,
}

impl RuntimeKind {
    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeKind::Auto => "auto",
            RuntimeKind::Process => "process",
            RuntimeKind::Container => "container",
        }
    }
}

impl std::fmt::Display for RuntimeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RuntimeKind {
    type Err = PlatformError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(RuntimeKind::Auto),
            "process" => Ok(RuntimeKind::Process),
            "container" => Ok(RuntimeKind::Container),
            other => Err(PlatformError::Config(format!(
                "--runtime must be auto, process or container, not {other:?}"
            ))),
        }
    }
}

/// The image builder chosen on the command line (`--builder`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BuilderKind {
    /// `buildah` when it is on `PATH` and runs, else `native` (the default).
    #[default]
    Auto,
    /// Builds each service's Dockerfile with `buildah build --isolation chroot`.
    Buildah,
    /// Runs the devfile's build command and packs the result as an OCI image.
    Native,
}

impl BuilderKind {
    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            BuilderKind::Auto => "auto",
            BuilderKind::Buildah => "buildah",
            BuilderKind::Native => "native",
        }
    }
}

impl std::fmt::Display for BuilderKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for BuilderKind {
    type Err = PlatformError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(BuilderKind::Auto),
            "buildah" => Ok(BuilderKind::Buildah),
            "native" => Ok(BuilderKind::Native),
            other => Err(PlatformError::Config(format!(
                "--builder must be auto, buildah or native, not {other:?}"
            ))),
        }
    }
}

use crate::db::Backend;

/// The database URL actually used: the given one, or the SQLite file under `data_dir`.
pub fn database_url(data_dir: &Path, database_url: Option<&str>) -> Result<String, PlatformError> {
    match database_url {
        Some(url) if Backend::from_url(url).is_ok() => Ok(url.to_owned()),
        Some(_) => Err(PlatformError::Config(
            "--database-url must start with postgres://, postgresql:// or sqlite:".into(),
        )),
        None => Ok(format!(
            "sqlite://{}",
            data_dir.join(crate::data_dir::SQLITE_FILE).display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_a_sqlite_file_in_the_data_dir() {
        let url = database_url(Path::new("/srv/slipway"), None).unwrap();
        assert_eq!(url, "sqlite:///srv/slipway/platform.sqlite3");
        assert_eq!(Backend::from_url(&url).unwrap(), Backend::Sqlite);
    }

    #[test]
    fn builder_kinds_parse_and_print() {
        for kind in [BuilderKind::Auto, BuilderKind::Buildah, BuilderKind::Native] {
            assert_eq!(kind.as_str().parse::<BuilderKind>().unwrap(), kind);
        }
        assert!("docker".parse::<BuilderKind>().is_err());
        assert_eq!(BuilderKind::default(), BuilderKind::Auto);
    }

    #[test]
    fn runtime_kinds_parse_and_print() {
        for kind in [
            RuntimeKind::Auto,
            RuntimeKind::Process,
            RuntimeKind::Container,
        ] {
            assert_eq!(kind.as_str().parse::<RuntimeKind>().unwrap(), kind);
        }
        assert!("docker".parse::<RuntimeKind>().is_err());
        assert_eq!(RuntimeKind::default(), RuntimeKind::Auto);
    }

    #[test]
    fn postgres_urls_are_recognised_and_others_refused() {
        let pg = "postgres://u:p@127.0.0.1/db";
        assert_eq!(database_url(Path::new("."), Some(pg)).unwrap(), pg);
        assert_eq!(Backend::from_url(pg).unwrap(), Backend::Postgres);
        assert!(database_url(Path::new("."), Some("mysql://x")).is_err());
    }
}
