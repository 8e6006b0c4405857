//! An app's deployment history, the diff of two deployments, a rollback's acceptance and the
//! diagnosis of an app, as `GET /v1/apps/{app_id}/deployments`, `…/diff`, `POST …/rollback`
//! and `GET …/diagnosis` answer them.

use serde::{Deserialize, Serialize};

use crate::status::{AppStatus, DeploymentCause, DeploymentStatus, ServiceStatus};

/// A secret path and the version a service was given (never a value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretVersion {
    /// The secret's path.
    pub path: String,
    /// The version.
    pub version: i64,
}

/// What one service of a deployment ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServiceRun {
    /// The service.
    pub service: String,
    /// The build whose image it ran.
    pub build_id: String,
    /// The image's manifest digest.
    pub image_digest: String,
    /// Its status.
    pub status: ServiceStatus,
    /// The app secrets it was given, with their versions.
    pub secrets: Vec<SecretVersion>,
}

/// One deployment in the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Deployment {
    /// The deployment's UUID.
    pub id: String,
    /// Its status.
    pub status: DeploymentStatus,
    /// Why it failed or stopped.
    pub reason: Option<String>,
    /// Why it was started.
    pub cause: DeploymentCause,
    /// The user who started it (null for a build or a restart).
    pub started_by: Option<String>,
    /// The deployment a rollback went back to.
    pub rollback_of: Option<String>,
    /// `sha256:…` of the devfile it ran.
    pub devfile_digest: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339, when it became RUNNING or FAILED.
    pub finished_at: Option<String>,
    /// What each service ran.
    pub services: Vec<ServiceRun>,
    /// The commit it was built from, when its builds came from the app's git source.
    #[serde(default)]
    pub commit: Option<crate::git::GitCommit>,
}

/// One page of an app's deployments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct History {
    /// Newest first.
    pub deployments: Vec<Deployment>,
    /// Pass as `next_page_token` for the next page; null on the last.
    pub next_page_token: Option<String>,
}

/// A rollback the platform accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RollbackAccepted {
    /// The deployment being deployed again.
    pub rollback_of: String,
    /// What happens next.
    pub message: String,
}

/// An image that differs between two deployments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImageChange {
    /// The service.
    pub service: String,
    /// Its image digest in the older deployment (null: the service is new).
    pub from: Option<String>,
    /// Its image digest in the newer one (null: the service is gone).
    pub to: Option<String>,
}

/// A secret whose version differs between two deployments (paths and versions only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretChange {
    /// The service that received it.
    pub service: String,
    /// The secret's path.
    pub path: String,
    /// The version the older deployment gave (null: not given).
    pub from_version: Option<i64>,
    /// The version the newer one gave (null: not given).
    pub to_version: Option<i64>,
}

/// The devfile lines that changed, as a unified diff (`-` removed, `+` added lines with
/// three lines of context).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DevfileChange {
    /// Whether the text differs at all.
    pub changed: bool,
    /// The unified diff, empty when unchanged.
    pub diff: String,
}

/// What changed from one deployment to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeploymentDiff {
    /// The older deployment.
    pub from: String,
    /// The newer deployment.
    pub to: String,
    /// Images that changed.
    pub images: Vec<ImageChange>,
    /// The devfile.
    pub devfile: DevfileChange,
    /// Secrets whose version changed.
    pub secrets: Vec<SecretChange>,
}

/// A service of the latest deployment that is not healthy, with the end of its log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FailingService {
    /// The service.
    pub service: String,
    /// Its status.
    pub status: ServiceStatus,
    /// The last lines of its runtime log.
    pub log_tail: String,
}

/// The app's newest build, when it failed, with the end of its log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FailedBuild {
    /// The build.
    pub build_id: String,
    /// The service it built.
    pub service: String,
    /// Why it failed.
    pub error: Option<String>,
    /// The last lines of the build log.
    pub log_tail: String,
}

/// The app's devfile, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DevfileFindings {
    /// No errors.
    pub valid: bool,
    /// Errors, each with its path and line.
    pub errors: Vec<String>,
    /// Warnings, likewise.
    pub warnings: Vec<String>,
}

/// Why an app is where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Diagnosis {
    /// The app.
    pub app_id: String,
    /// Its status.
    pub status: AppStatus,
    /// The reason of the latest deployment that failed or stopped, if it is the latest.
    pub reason: Option<String>,
    /// The latest deployment.
    pub deployment_id: Option<String>,
    /// Its services that are not healthy, with their log tails.
    pub failing_services: Vec<FailingService>,
    /// The newest build, when it failed.
    pub failed_build: Option<FailedBuild>,
    /// The app's devfile, checked.
    pub devfile: Option<DevfileFindings>,
    /// The last deployment that ran well (became RUNNING) before the latest one.
    pub last_good_deployment_id: Option<String>,
    /// What changed from that one to the latest.
    pub changes_since_last_good: Option<DeploymentDiff>,
    /// The commit the latest deployment was built from (a git source's deploy).
    #[serde(default)]
    pub commit: Option<crate::git::GitCommit>,
}
