//! Gitea's and Forgejo's `push` and `pull_request` payloads: GitHub's shape, with their own
//! action names (`synchronized`).

use serde::Deserialize;

use super::github::PullRequest;
use super::{Event, HookError, PullAction, bad, branch_of};

#[derive(Deserialize)]
struct Push {
    #[serde(rename = "ref")]
    refname: String,
    after: String,
}

#[derive(Deserialize)]
struct PullRequestEvent {
    action: String,
    number: u64,
    pull_request: PullRequest,
}

pub(super) fn event(name: &str, body: &[u8]) -> Result<Event, HookError> {
    match name {
        "push" => {
            let p: Push = serde_json::from_slice(body).map_err(|e| bad(name, &e))?;
            Ok(Event::Push {
                branch: branch_of(&p.refname),
                deleted: super::is_zero(&p.after),
                refname: p.refname,
                sha: p.after,
            })
        }
        "pull_request" => {
            let p: PullRequestEvent = serde_json::from_slice(body).map_err(|e| bad(name, &e))?;
            let action = match p.action.as_str() {
                "opened" | "reopened" => PullAction::Opened,
                "synchronized" | "synchronize" => PullAction::Updated,
                "closed" => PullAction::Closed,
                other => PullAction::Other(other.to_owned()),
            };
            Ok(Event::PullRequest {
                number: p.number,
                action,
                head_sha: p.pull_request.head.sha,
                base_branch: p.pull_request.base.refname,
                title: p.pull_request.title,
            })
        }
        other => Ok(Event::Other(other.to_owned())),
    }
}
