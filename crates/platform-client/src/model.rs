//! The platform's answers that more than one tool passes on, typed as the platform server
//! defines them (`crates/platform/src/http/`): an app, its status and a build. The tools'
//! result types embed these, so a result's JSON Schema (the registry's `output_schema`) names
//! every field. The lifecycle states are `slipway-api`'s, the types the platform itself
//! writes; the answers' shapes are not in that crate yet, so they are mirrored here (the
//! toolkit must not depend on the platform server), and the toolkit's tests read them from a
//! real platform.

use serde::{Deserialize, Serialize};
pub use slipway_api::{AppStatus, BuildStatus, ServiceStatus};
use slipway_server::token::Token;

/// Defines an enum whose every variant has one spelling, written once next to it: how it
/// reads and writes in JSON and how it is shown. For the words of the platform's answers that
/// `slipway-api` does not hold (yet): a log's kind, an account role.
macro_rules! spelled_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident = $spelling:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
        )]
        pub enum $name {
            $( $(#[$variant_meta])* #[serde(rename = $spelling)] $variant, )+
        }

        impl $name {
            /// The platform's spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $spelling, )+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }
    };
}

pub(crate) use spelled_enum;

/// An app as `GET /v1/apps/{app_id}` and `POST /v1/apps` answer it. The platform calls the
/// id `id`; the tools call it `app_id`, as every other tool argument and result does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct App {
    /// The app's UUID.
    #[serde(rename(serialize = "app_id", deserialize = "id"), alias = "app_id")]
    pub app_id: String,
    /// Unique machine-readable name.
    pub name: String,
    /// Human-readable name.
    pub display_name: String,
    /// Description, empty when none was given.
    pub description: String,
    /// Lifecycle state.
    pub status: AppStatus,
    /// The app's URL; null until deployed.
    pub url: Option<String>,
    /// The devfile of the last build; null until built.
    pub devfile: Option<String>,
    /// False while disabled.
    pub enabled: bool,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// RFC 3339, UTC.
    pub updated_at: String,
}

/// What an app's deployment is doing, as `GET /v1/apps/{app_id}/status` (and enabling or
/// disabling it) answers.
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
}

/// One service of the deployment an [`AppState`] shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServiceState {
    /// The service name.
    pub name: String,
    /// Its status.
    pub status: ServiceStatus,
    /// Where it answers; null for a service without a public endpoint.
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

/// A build job as the platform shows it (`GET /v1/builds/{id}`, a cancel, a page of builds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Build {
    /// The build's UUID.
    pub build_id: String,
    /// The app's UUID.
    pub app_id: String,
    /// The service built.
    pub service: String,
    /// Where the job is.
    pub status: BuildStatus,
    /// `native` or `buildah`.
    pub builder: String,
    /// `slipway.local/<app>/<service>@sha256:…` when succeeded, else null.
    pub image_uri: Option<String>,
    /// Why it failed or was cancelled, else null.
    pub error: Option<String>,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// RFC 3339, UTC; null while queued.
    pub started_at: Option<String>,
    /// RFC 3339, UTC; null until finished.
    pub finished_at: Option<String>,
    /// The build log (its end), only when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// True when `log` holds only the end of a longer log; only with `log`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_truncated: Option<bool>,
}

/// A secret the platform shows once (a new token, an invite's code): in clear in JSON, and
/// a [`Token`] in Rust, whose `Debug` hides it.
pub(crate) mod secret {
    use super::Token;

    /// Writes the token in clear.
    pub(crate) fn serialize<S: serde::Serializer>(token: &Token, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(token.expose())
    }

    /// Reads a token written in clear.
    pub(crate) fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Token, D::Error> {
        <String as serde::Deserialize>::deserialize(d).map(Token::from_string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_app_reads_the_platforms_id_and_shows_app_id() {
        let platform = json!({"id": "a", "name": "n", "display_name": "N", "description": "",
            "status": "RUNNING", "url": null, "devfile": null, "enabled": true,
            "created_at": "t", "updated_at": "t"});
        let app: App = serde_json::from_value(platform).unwrap();
        assert_eq!(app.status, AppStatus::Running);
        let shown = serde_json::to_value(&app).unwrap();
        assert_eq!(shown["app_id"], "a");
        assert!(shown.get("id").is_none());
        assert_eq!(serde_json::from_value::<App>(shown).unwrap(), app);
        assert_eq!(BuildStatus::InProgress.to_string(), "in_progress");
    }
}
