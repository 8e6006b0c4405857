//! The platform API's vocabulary: the words and shapes the platform server answers with and
//! its clients (the toolkit's tools, the CLI, the desktop) read, written once. The server
//! serialises these types and the clients deserialise the same ones, so a state or a field
//! cannot be spelled one way on one side and another way on the other, and a tool's output
//! schema is generated from the type the platform itself writes.
//!
//! Plain data (serde and schemars only): no I/O, no HTTP, no database, so the server, the
//! clients and a future remote tool server can all depend on it.

// First, so its `spelled_enum!` is in scope in the modules after it.
#[macro_use]
pub mod status;

pub mod apps;
pub mod builds;
pub mod deployments;
pub mod domains;
pub mod git;
pub mod jobs;
pub mod notifications;
pub mod people;
pub mod tokens;

pub use apps::{
    AppDetails, AppListing, AppState, Limits, ResourceCredentials, ResourceInfo, ServiceState,
    VolumeInfo,
};
pub use builds::Build;
pub use people::{AccountRole, AuditEntry, AuditPage, Person, PersonRef};
pub use status::{AppStatus, BuildStatus, DeploymentCause, DeploymentStatus, ServiceStatus};
pub use tokens::{GrantInfo, TokenInfo, TokenScope};
