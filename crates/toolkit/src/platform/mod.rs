//! Talking to a Slipway platform: where it is ([`Endpoint`]), a blocking HTTP client with
//! retries for transient failures ([`Client`]), and the app-management tools built on it.

mod apps;
mod build;
mod client;
pub mod credentials;
mod endpoint;
pub mod local;
mod pack;

pub use apps::{
    APP_FILE, AppFile, AppIdArgs, CancelBuildArgs, GetLogsArgs, ListAppsArgs, RegisterAppArgs,
    cancel_build, delete_app, disable_app, enable_app, get_app, get_app_logs, get_app_status,
    get_build_scan_report, list_apps, register_app,
};
pub use build::{BuildAppArgs, build_app, build_app_with_progress};
pub use client::{Client, fetch_text};
pub use endpoint::{ENV_TOKEN, ENV_URL, Endpoint};
