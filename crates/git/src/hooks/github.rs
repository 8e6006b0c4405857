//! GitHub's `push` and `pull_request` events.

use super::{Event, HookError, PullAction};

fn action(name: &str) -> PullAction {
    match name {
        "opened" | "reopened" => PullAction::Opened,
        "synchronize" => PullAction::Updated,
        "closed" => PullAction::Closed,
        other => PullAction::Other(other.to_owned()),
    }
}

pub(super) fn event(name: &str, body: &[u8]) -> Result<Event, HookError> {
    match name {
        "ping" => Ok(Event::Ping),
        "push" => super::push(name, body),
        "pull_request" => super::pull_request(name, body, action),
        other => Ok(Event::Other(other.to_owned())),
    }
}
