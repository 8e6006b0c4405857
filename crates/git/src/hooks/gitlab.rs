//! GitLab's `Push Hook` and `Merge Request Hook` payloads.

use serde::Deserialize;

use super::{Event, HookError, PullAction, bad};

#[derive(Deserialize)]
struct MergeRequestEvent {
    object_attributes: MergeRequest,
}

#[derive(Deserialize)]
struct MergeRequest {
    iid: u64,
    #[serde(default)]
    action: String,
    target_branch: String,
    last_commit: LastCommit,
    /// Present on an `update` that pushed commits.
    #[serde(default)]
    oldrev: Option<String>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    source_project_id: Option<u64>,
    #[serde(default)]
    target_project_id: Option<u64>,
}

#[derive(Deserialize)]
struct LastCommit {
    id: String,
}

pub(super) fn event(name: &str, body: &[u8]) -> Result<Event, HookError> {
    match name {
        "Push Hook" => super::push(name, body),
        "Merge Request Hook" => {
            let m: MergeRequestEvent = serde_json::from_slice(body).map_err(|e| bad(name, &e))?;
            let mr = m.object_attributes;
            let action = match mr.action.as_str() {
                "open" | "reopen" => PullAction::Opened,
                "update" if mr.oldrev.is_some() => PullAction::Updated,
                "close" | "merge" => PullAction::Closed,
                other => PullAction::Other(other.to_owned()),
            };
            Ok(Event::PullRequest {
                from_fork: match (mr.source_project_id, mr.target_project_id) {
                    (Some(source), Some(target)) => source != target,
                    _ => true,
                },
                number: mr.iid,
                action,
                head_sha: mr.last_commit.id,
                base_branch: mr.target_branch,
                title: mr.title,
            })
        }
        other => Ok(Event::Other(other.to_owned())),
    }
}
