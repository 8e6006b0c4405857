//! Talking to a Slipway platform: where it is ([`Endpoint`]) and which environments the user
//! signed in to ([`credentials`]), what its HTTPS clients trust ([`trust`]), a blocking HTTP
//! client with retries for transient failures ([`Client`]), and the app, build, secrets and
//! sharing tools built on it, each failing with a [`ToolError`]; the account's people, invites, tokens and single sign-on ([`people`], [`tokens`],
//! [`join`], [`sso`]). Every call returns a typed result, or, for a tool that is one API
//! request, a [`OneCall`] that makes one (run by [`Client::run`], or awaited in-process); the
//! platform's answers are typed as the platform defines them (`model.rs` holds those several
//! tools share).

mod answer;
mod apps;
mod build;
pub mod builds;
mod client;
pub mod credentials;
pub mod domains;
mod endpoint;
mod error;
pub mod fsutil;
pub mod git;
pub mod grants;
pub mod history;
pub mod jobs;
pub mod join;
#[cfg(test)]
mod layers;
pub mod local;
mod model;
pub mod notifications;
mod one_call;
mod pack;
pub mod people;
pub mod resources;
mod secrets;
mod sharing;
pub mod sso;
pub mod stream;
pub mod tokens;
pub mod trust;
mod url;

pub use apps::read_app_file;
pub use apps::{
    APP_FILE, AdvisoryDb, AppFile, AppIdArgs, AppList, AppLogs, AppSummary, CancelBuildArgs,
    CancelledBuild, DeletedApp, GetLogsArgs, LifecycleChange, ListAppsArgs, LogEntry, LogKind,
    Package, RegisterAppArgs, RegisteredApp, Sbom, ScanReport, Vulnerability, VulnerabilityReport,
    cancel_build, delete_app, disable_app, enable_app, get_app, get_app_logs, get_app_status,
    get_build_scan_report, list_apps, register_app,
};
pub use build::{
    BuildAppArgs, BuildAppResult, BuildMode, BuiltImages, build_app, build_app_with_progress,
};
pub use build::{Files as ProjectFiles, upload_services};
pub use client::{Client, fetch_text};
pub use endpoint::{ENV_TOKEN, ENV_URL, Endpoint, Sending, Transport};
pub use error::{FailedBuilds, ToolError};
pub use join::{Joined, accept_invite};
pub use model::{
    App, AppState, AppStatus, Build, BuildStatus, Limits, ServiceState, ServiceStatus, human_bytes,
};
pub use one_call::OneCall;
pub use people::{
    AccountRole, Me, ToolCallReport, audit, invite, list_invites, list_people, me, remove_person,
    report_tool_call, revoke_invite, set_role,
};
pub use secrets::{
    DeleteSecretArgs, DeletedSecret, EntryRequest, EntryStatus, GetSecretArgs, ListSecretsArgs,
    SecretEntry, SecretInfo, SecretList, SecretType, SecretValue, SecretWritten, ShareSecretArgs,
    SharedSecret, WriteSecretArgs, ask_for_value, cancel_entry_request, create_secret,
    delete_secret, entry_request, get_secret, list_secrets, share_secret, typed_by_person,
    update_secret,
};
pub use sharing::{
    AccountArgs, AccountUser, AccountUsers, AppPermissions, AppRole, GrantableRoles, Permission,
    RoleArgs, RoleChange, grant_app_role, list_account_users, list_app_permissions,
    list_grantable_roles, revoke_app_role, whoami,
};
pub use slipway_server::token::Token;
pub use sso::{SsoSignIn, SsoStatus, SsoToken, sso_status};
pub use tokens::{
    NewToken, TokenInfo, TokenScope, Tokens, create_token, list_tokens, revoke_token,
};
