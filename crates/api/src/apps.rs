//! Apps as the platform answers them: an app (`GET /v1/apps/{app_id}`), an app in a list
//! (`GET /v1/apps`) and what its deployment is doing (`GET /v1/apps/{app_id}/status`).
//!
//! The platform names an app's id `id`; the tools name it `app_id`, as every other tool
//! argument and result does. So the id stays with each side and everything else is written
//! once here and flattened into both.

use serde::{Deserialize, Serialize};

use crate::status::{AppStatus, ServiceStatus};

/// An app as a list shows it: everything but its id, description and devfile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppListing {
    /// Unique machine-readable name.
    pub name: String,
    /// Human-readable name.
    pub display_name: String,
    /// Lifecycle state.
    pub status: AppStatus,
    /// The app's URL; null until deployed.
    pub url: Option<String>,
    /// False while disabled.
    pub enabled: bool,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// RFC 3339, UTC.
    pub updated_at: String,
}

/// An app as `GET /v1/apps/{app_id}` and `POST /v1/apps` show it, but for its id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppDetails {
    /// What a list shows too.
    #[serde(flatten)]
    pub listing: AppListing,
    /// Description, empty when none was given.
    pub description: String,
    /// The devfile of the last build; null until built.
    pub devfile: Option<String>,
    /// Its backing resources (`managedInfra`), attached and detached.
    #[serde(default)]
    pub resources: Vec<ResourceInfo>,
    /// Its volumes (as its last built devfile declares them).
    #[serde(default)]
    pub volumes: Vec<VolumeInfo>,
}

/// What an app's deployment is doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppState {
    /// The app's UUID.
    pub app_id: String,
    /// Lifecycle state.
    pub status: AppStatus,
    /// False while disabled.
    pub enabled: bool,
    /// The primary service's URL once deployed; null before, or without a gateway.
    pub app_url: Option<String>,
    /// Why the latest deployment failed; null otherwise.
    pub reason: Option<String>,
    /// The deployment shown: the serving one while RUNNING, else the latest.
    pub deployment_id: Option<String>,
    /// Its services.
    pub services: Vec<ServiceState>,
    /// Its backing resources (`managedInfra`), attached and detached.
    #[serde(default)]
    pub resources: Vec<ResourceInfo>,
    /// Its volumes (as its last built devfile declares them).
    #[serde(default)]
    pub volumes: Vec<VolumeInfo>,
}

/// One service of the deployment an [`AppState`] shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServiceState {
    /// The service name.
    pub name: String,
    /// Its status.
    pub status: ServiceStatus,
    /// Where it answers: `http://127.0.0.1:<port>` (the `ports` gateway mode),
    /// `http://<service>.<app>.localhost:<gateway port>` (`hosts`) or
    /// `https://<service>.<app>.<domain>`; null for a service without a public endpoint.
    pub url: Option<String>,
    /// Its resource limits and whether the runtime enforces them.
    pub limits: Limits,
    /// The build whose image it runs.
    pub build_id: String,
    /// When it first started (RFC 3339), if it did.
    pub started_at: Option<String>,
    /// When it first answered its health check, if it did.
    pub healthy_at: Option<String>,
}

/// A service's resource limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Limits {
    /// `512Mi`; null when unlimited.
    pub memory: Option<String>,
    /// `500m`; null when unlimited.
    pub cpu: Option<String>,
    /// True on the container runtime, which applies them.
    pub enforced: bool,
}

/// One backing resource of an app (`managedInfra`), as the platform reports it: never a
/// credential, only the names of the variables that carry them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResourceInfo {
    /// `relationalDatabase`, `cache` or `inMemoryDatabase`.
    pub kind: String,
    /// Its name in the devfile.
    pub name: String,
    /// `postgres`, `mysql`, `redis` or `memcached`.
    pub engine: String,
    /// `attached` (declared by the current devfile) or `detached` (no longer declared; its
    /// data is kept until it is destroyed).
    pub state: String,
    /// The memory cap of a cache or in-memory database, in MiB, when the devfile sets one.
    pub memory_mb: Option<u64>,
    /// The data it holds, in bytes, when its server runs; null otherwise.
    pub size_bytes: Option<u64>,
    /// The environment variables it gives every service of the app (empty when detached).
    pub variables: Vec<String>,
}

/// One volume of an app (a devfile `volume` component), as the platform reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VolumeInfo {
    /// The component's name.
    pub name: String,
    /// The size the devfile declares (`1Gi`); null when it declares none.
    pub size: Option<String>,
    /// True when it starts empty on each deploy.
    pub ephemeral: bool,
    /// The bytes its files take now.
    pub used_bytes: u64,
    /// Where each service mounts it: `service:/path`.
    pub mounts: Vec<String>,
}

/// A resource's credentials, as the platform reveals them to an app's editors and owners.
/// `Debug` leaves the password and the URL (which carries it) out.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResourceCredentials {
    /// Its kind.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its engine.
    pub engine: String,
    /// The connection URL, password included.
    pub url: String,
    /// Host.
    pub host: String,
    /// Port.
    pub port: u16,
    /// User (empty for redis).
    pub user: String,
    /// Password.
    pub password: String,
    /// Database (empty for caches).
    pub database: String,
}

impl std::fmt::Debug for ResourceCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceCredentials")
            .field("kind", &self.kind)
            .field("name", &self.name)
            .field("host", &self.host)
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}
