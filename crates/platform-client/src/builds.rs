//! An app's build history and one build's log (not among the spec's 26 tools: the desktop's
//! app view shows them; `get_build_scan_report` gives each build's scan).

use reqwest::Method;
use serde::{Deserialize, Serialize};

use crate::apps::{encode, uuid_arg};
use crate::client::Client;
use crate::error::ToolError;
use crate::model::Build;

/// One page of an app's builds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BuildPage {
    /// Newest first.
    pub builds: Vec<Build>,
    /// Pass as `page_token` for the next page; null on the last.
    pub next_page_token: Option<String>,
}

/// One page of the app's builds, newest first.
pub fn list(
    client: &Client,
    app_id: &str,
    page_size: u32,
    page_token: Option<&str>,
) -> Result<BuildPage, ToolError> {
    let id = uuid_arg("app_id", app_id)?;
    let mut path = format!("/v1/apps/{id}/builds?page_size={page_size}");
    if let Some(token) = page_token.filter(|t| !t.is_empty()) {
        path.push_str(&format!("&next_page_token={}", encode(token)));
    }
    client.typed(Method::GET, &path, None)
}

/// One build with its log (the end of a long one; `log_truncated` says so).
pub fn with_log(client: &Client, build_id: &str) -> Result<Build, ToolError> {
    let id = uuid_arg("build_id", build_id)?;
    client.typed(Method::GET, &format!("/v1/builds/{id}?log=true"), None)
}
