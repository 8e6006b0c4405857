//! Lifecycle states, each with the one spelling it is stored and shown with.

use serde::Serialize;

/// Lifecycle state of an app. The spec names `deploying`, `RUNNING`, `FAILED` and
/// `suspended` (with its spelling); `registered` is the state of an app that has a name,
/// principal and access control but has never been built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum AppStatus {
    /// Registered, never built or deployed.
    #[serde(rename = "registered")]
    Registered,
    /// A deployment is starting.
    #[serde(rename = "deploying")]
    Deploying,
    /// Every service answers its health check.
    #[serde(rename = "RUNNING")]
    Running,
    /// A service exits repeatedly or never became healthy.
    #[serde(rename = "FAILED")]
    Failed,
    /// Disabled: processes stopped, app kept.
    #[serde(rename = "suspended")]
    Suspended,
}

impl AppStatus {
    /// The stored (and displayed) spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AppStatus::Registered => "registered",
            AppStatus::Deploying => "deploying",
            AppStatus::Running => "RUNNING",
            AppStatus::Failed => "FAILED",
            AppStatus::Suspended => "suspended",
        }
    }

    /// The status a stored spelling stands for.
    pub fn parse(raw: &str) -> Option<Self> {
        [
            AppStatus::Registered,
            AppStatus::Deploying,
            AppStatus::Running,
            AppStatus::Failed,
            AppStatus::Suspended,
        ]
        .into_iter()
        .find(|s| s.as_str() == raw)
    }
}

/// Where a build job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BuildStatus {
    /// Waiting for a free build slot.
    Queued,
    /// Running.
    InProgress,
    /// Finished with an image.
    Succeeded,
    /// Finished without an image; `error` says why.
    Failed,
    /// Stopped by a cancel request.
    Cancelled,
}

impl BuildStatus {
    /// The stored (and displayed) spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            BuildStatus::Queued => "queued",
            BuildStatus::InProgress => "in_progress",
            BuildStatus::Succeeded => "succeeded",
            BuildStatus::Failed => "failed",
            BuildStatus::Cancelled => "cancelled",
        }
    }

    /// The status a stored spelling stands for.
    pub fn parse(raw: &str) -> Option<Self> {
        [
            BuildStatus::Queued,
            BuildStatus::InProgress,
            BuildStatus::Succeeded,
            BuildStatus::Failed,
            BuildStatus::Cancelled,
        ]
        .into_iter()
        .find(|s| s.as_str() == raw)
    }

    /// True once the job can no longer change.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            BuildStatus::Succeeded | BuildStatus::Failed | BuildStatus::Cancelled
        )
    }
}

/// Status of a deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum DeploymentStatus {
    /// Starting its services.
    #[serde(rename = "deploying")]
    Deploying,
    /// Every service healthy; serving.
    #[serde(rename = "RUNNING")]
    Running,
    /// Never became healthy; `reason` says why.
    #[serde(rename = "FAILED")]
    Failed,
    /// Stopped by a disable or a delete.
    #[serde(rename = "stopped")]
    Stopped,
    /// Replaced by a newer healthy deployment.
    #[serde(rename = "superseded")]
    Superseded,
}

impl DeploymentStatus {
    /// Every status.
    pub const ALL: [DeploymentStatus; 5] = [
        DeploymentStatus::Deploying,
        DeploymentStatus::Running,
        DeploymentStatus::Failed,
        DeploymentStatus::Stopped,
        DeploymentStatus::Superseded,
    ];

    /// The stored (and displayed) spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DeploymentStatus::Deploying => "deploying",
            DeploymentStatus::Running => "RUNNING",
            DeploymentStatus::Failed => "FAILED",
            DeploymentStatus::Stopped => "stopped",
            DeploymentStatus::Superseded => "superseded",
        }
    }

    /// The status a stored spelling stands for.
    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == raw)
    }
}

/// Why a deployment was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeploymentCause {
    /// A build of the app succeeded.
    Build,
    /// The app was enabled again.
    Enable,
    /// A user went back to an earlier deployment.
    Rollback,
    /// The server restarted and brought back what ran.
    Restart,
}

impl DeploymentCause {
    /// Every cause.
    pub const ALL: [DeploymentCause; 4] = [
        DeploymentCause::Build,
        DeploymentCause::Enable,
        DeploymentCause::Rollback,
        DeploymentCause::Restart,
    ];

    /// The stored (and displayed) spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DeploymentCause::Build => "build",
            DeploymentCause::Enable => "enable",
            DeploymentCause::Rollback => "rollback",
            DeploymentCause::Restart => "restart",
        }
    }

    /// The cause a stored spelling stands for.
    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == raw)
    }
}

/// Status of one service of a deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceStatus {
    /// Not started yet (waiting for its dependencies).
    Pending,
    /// Started, not yet healthy.
    Starting,
    /// Answered its health check.
    Healthy,
    /// Exited repeatedly or never became healthy.
    Failed,
    /// Stopped.
    Stopped,
}

impl ServiceStatus {
    /// Every status.
    pub const ALL: [ServiceStatus; 5] = [
        ServiceStatus::Pending,
        ServiceStatus::Starting,
        ServiceStatus::Healthy,
        ServiceStatus::Failed,
        ServiceStatus::Stopped,
    ];

    /// The stored (and displayed) spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceStatus::Pending => "pending",
            ServiceStatus::Starting => "starting",
            ServiceStatus::Healthy => "healthy",
            ServiceStatus::Failed => "failed",
            ServiceStatus::Stopped => "stopped",
        }
    }

    /// The status a stored spelling stands for.
    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_reads_back_from_its_spelling() {
        for s in DeploymentStatus::ALL {
            assert_eq!(DeploymentStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for s in ServiceStatus::ALL {
            assert_eq!(ServiceStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert_eq!(DeploymentStatus::parse("running"), None);
    }
}
