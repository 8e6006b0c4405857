//! A build job as `GET /v1/builds/{build_id}`, its cancel and a page of an app's builds show
//! it.

use serde::{Deserialize, Serialize};

use crate::status::BuildStatus;

/// A build job as the platform shows it.
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
    /// The build log (its end), only when asked for (`?log=true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// True when `log` holds only the end of a longer log; only with `log`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_truncated: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_without_its_log_writes_no_log_fields_and_reads_back() {
        let build = Build {
            build_id: "b".into(),
            app_id: "a".into(),
            service: "web".into(),
            status: BuildStatus::Queued,
            builder: "native".into(),
            image_uri: None,
            error: None,
            created_at: "t".into(),
            started_at: None,
            finished_at: None,
            log: None,
            log_truncated: None,
        };
        let shown = serde_json::to_value(&build).unwrap();
        assert!(shown.get("log").is_none() && shown.get("log_truncated").is_none());
        assert!(shown["image_uri"].is_null());
        assert_eq!(serde_json::from_value::<Build>(shown).unwrap(), build);
    }
}
