//! Gitea's and Forgejo's `push` and `pull_request` events: GitHub's shape, with their own
//! action names (`synchronized`).

use super::{Event, HookError, PullAction};

fn action(name: &str) -> PullAction {
    match name {
        "opened" | "reopened" => PullAction::Opened,
        "synchronized" | "synchronize" => PullAction::Updated,
        "closed" => PullAction::Closed,
        other => PullAction::Other(other.to_owned()),
    }
}

pub(super) fn event(name: &str, body: &[u8]) -> Result<Event, HookError> {
    match name {
        "push" => super::push(name, body),
        "pull_request" => super::pull_request(name, body, action),
        other => Ok(Event::Other(other.to_owned())),
    }
}
