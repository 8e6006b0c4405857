//! Webhooks from GitHub, GitLab and Gitea/Forgejo: which forge sent a delivery (from its
//! headers), whether it is signed with the app's secret the way that forge signs
//! (HMAC-SHA256 of the body for GitHub and Gitea/Forgejo, the shared token for GitLab), and
//! what it says: a push to a branch, a pull request opened, updated or closed, a ping, or
//! something the platform ignores (by name, so the answer can say so).
//!
//! Nothing is read from a body before its signature is checked.

mod gitea;
mod github;
mod gitlab;

use hmac::{Hmac, KeyInit as _, Mac as _};
use http::HeaderMap;
use sha2::Sha256;

/// Which forge sent a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sender {
    /// GitHub (and GitHub Enterprise Server).
    GitHub,
    /// GitLab.
    GitLab,
    /// Gitea or Forgejo.
    Gitea,
}

impl Sender {
    /// The forge's name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::GitHub => "GitHub",
            Self::GitLab => "GitLab",
            Self::Gitea => "Gitea/Forgejo",
        }
    }

    /// The ref a pull request's head commit is published under on this forge.
    pub fn pull_ref(self, number: u64) -> String {
        match self {
            Self::GitLab => format!("refs/merge-requests/{number}/head"),
            Self::GitHub | Self::Gitea => format!("refs/pull/{number}/head"),
        }
    }
}

/// One verified delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Who sent it.
    pub sender: Sender,
    /// The forge's id of the delivery, the same when it is delivered again.
    pub id: Option<String>,
    /// What it says.
    pub event: Event,
}

/// What a delivery says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The forge checking the hook works.
    Ping,
    /// Commits pushed to a ref.
    Push {
        /// The branch (`None`: a tag or another kind of ref).
        branch: Option<String>,
        /// The full ref pushed.
        refname: String,
        /// The commit the ref points at now.
        sha: String,
        /// The ref was deleted.
        deleted: bool,
    },
    /// A pull (merge) request changed.
    PullRequest {
        /// Its number (GitLab's `iid`).
        number: u64,
        /// What happened to it.
        action: PullAction,
        /// Its head commit.
        head_sha: String,
        /// The branch it merges into.
        base_branch: String,
        /// Its title.
        title: String,
        /// Its head is in another repository (a fork), or the payload does not say where:
        /// its code is anyone's, so it gets no preview.
        from_fork: bool,
    },
    /// Any other event, by the forge's name for it.
    Other(String),
}

/// What happened to a pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullAction {
    /// Opened or reopened.
    Opened,
    /// New commits pushed to it.
    Updated,
    /// Closed or merged.
    Closed,
    /// Anything else (labels, edits, reviews), by the forge's name.
    Other(String),
}

/// Why a delivery is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    /// No forge's event header.
    #[error(
        "not a webhook delivery of GitHub, GitLab or Gitea/Forgejo (no X-GitHub-Event, X-Gitlab-Event, X-Gitea-Event or X-Forgejo-Event header)"
    )]
    UnknownSender,
    /// The signature header is missing.
    #[error("{0} is missing: the delivery is not signed with the app's webhook secret")]
    Unsigned(&'static str),
    /// The signature does not match the body and the app's secret.
    #[error("{0} does not match: the delivery is not signed with the app's webhook secret")]
    BadSignature(&'static str),
    /// A verified body that is not the event it says.
    #[error("the {event} payload cannot be read: {reason}")]
    BadPayload {
        /// The event's name.
        event: String,
        /// What was wrong.
        reason: String,
    },
}

/// A header's value as text ("" when absent or not text).
pub(crate) fn header<'h>(headers: &'h HeaderMap, name: &str) -> &'h str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .trim()
}

/// Verifies and reads a delivery with the app's `secret`.
pub fn read(headers: &HeaderMap, body: &[u8], secret: &str) -> Result<Delivery, HookError> {
    // Gitea and Forgejo also send X-GitHub-Event for compatibility: they are asked first.
    let (sender, event) = if !header(headers, "x-gitea-event").is_empty() {
        (Sender::Gitea, header(headers, "x-gitea-event"))
    } else if !header(headers, "x-forgejo-event").is_empty() {
        (Sender::Gitea, header(headers, "x-forgejo-event"))
    } else if !header(headers, "x-gitlab-event").is_empty() {
        (Sender::GitLab, header(headers, "x-gitlab-event"))
    } else if !header(headers, "x-github-event").is_empty() {
        (Sender::GitHub, header(headers, "x-github-event"))
    } else {
        return Err(HookError::UnknownSender);
    };
    match sender {
        Sender::GitHub => {
            verify_hmac(
                headers,
                "x-hub-signature-256",
                Some("sha256="),
                body,
                secret,
            )?;
            Ok(Delivery {
                sender,
                id: non_empty(header(headers, "x-github-delivery")),
                event: github::event(event, body)?,
            })
        }
        Sender::Gitea => {
            let name = if headers.contains_key("x-forgejo-signature") {
                "x-forgejo-signature"
            } else {
                "x-gitea-signature"
            };
            verify_hmac(headers, name, None, body, secret)?;
            let id = non_empty(header(headers, "x-gitea-delivery"))
                .or_else(|| non_empty(header(headers, "x-forgejo-delivery")));
            Ok(Delivery {
                sender,
                id,
                event: gitea::event(event, body)?,
            })
        }
        Sender::GitLab => {
            verify_token(headers, secret)?;
            // Idempotency-Key stays the same when GitLab retries; older GitLab sends only
            // the event's UUID.
            let id = non_empty(header(headers, "idempotency-key"))
                .or_else(|| non_empty(header(headers, "x-gitlab-event-uuid")));
            Ok(Delivery {
                sender,
                id,
                event: gitlab::event(event, body)?,
            })
        }
    }
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.chars().take(200).collect())
}

/// The HMAC-SHA256 of `body` under `secret`, hex (what a GitHub or Gitea sender writes).
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = <Hmac<Sha256>>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

fn verify_hmac(
    headers: &HeaderMap,
    name: &'static str,
    prefix: Option<&str>,
    body: &[u8],
    secret: &str,
) -> Result<(), HookError> {
    let value = header(headers, name);
    if value.is_empty() {
        return Err(HookError::Unsigned(display(name)));
    }
    let hex_sig = match prefix {
        Some(p) => value.strip_prefix(p).unwrap_or(""),
        None => value,
    };
    let sig = hex::decode(hex_sig).map_err(|_| HookError::BadSignature(display(name)))?;
    let mut mac = <Hmac<Sha256>>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(body);
    mac.verify_slice(&sig)
        .map_err(|_| HookError::BadSignature(display(name)))
}

/// GitLab's shared token, compared in constant time (as an HMAC of both sides).
fn verify_token(headers: &HeaderMap, secret: &str) -> Result<(), HookError> {
    const NAME: &str = "x-gitlab-token";
    let given = header(headers, NAME);
    if given.is_empty() {
        return Err(HookError::Unsigned(display(NAME)));
    }
    let mut mac = <Hmac<Sha256>>::new_from_slice(b"slipway gitlab token").expect("any key length");
    mac.update(secret.as_bytes());
    let expected = mac.finalize().into_bytes();
    let mut mac = <Hmac<Sha256>>::new_from_slice(b"slipway gitlab token").expect("any key length");
    mac.update(given.as_bytes());
    mac.verify_slice(&expected)
        .map_err(|_| HookError::BadSignature(display(NAME)))
}

/// A header's name as the forges' documentation writes it.
fn display(name: &str) -> &'static str {
    match name {
        "x-hub-signature-256" => "X-Hub-Signature-256",
        "x-gitea-signature" => "X-Gitea-Signature",
        "x-forgejo-signature" => "X-Forgejo-Signature",
        _ => "X-Gitlab-Token",
    }
}

/// The branch a full ref names (`refs/heads/x` → `x`).
pub(crate) fn branch_of(refname: &str) -> Option<String> {
    refname.strip_prefix("refs/heads/").map(str::to_owned)
}

/// The all-zero id a forge writes for a deleted ref.
pub(crate) fn is_zero(sha: &str) -> bool {
    !sha.is_empty() && sha.bytes().all(|b| b == b'0')
}

/// A push payload as all three forges write it: the ref, the commit it points at now, and
/// (GitHub) whether it was deleted; the others write the all-zero id for a deletion.
#[derive(serde::Deserialize)]
struct Push {
    #[serde(rename = "ref")]
    refname: String,
    after: String,
    #[serde(default)]
    deleted: bool,
}

/// Reads a push payload of event `name`.
pub(crate) fn push(name: &str, body: &[u8]) -> Result<Event, HookError> {
    let p: Push = serde_json::from_slice(body).map_err(|e| bad(name, &e))?;
    Ok(Event::Push {
        branch: branch_of(&p.refname),
        deleted: p.deleted || is_zero(&p.after),
        refname: p.refname,
        sha: p.after,
    })
}

/// A pull request payload in GitHub's shape (Gitea and Forgejo write the same), its action
/// read by `action` (the forges name "new commits" differently).
#[derive(serde::Deserialize)]
struct PullRequestEvent {
    action: String,
    number: u64,
    pull_request: PullRequestBody,
}

#[derive(serde::Deserialize)]
struct PullRequestBody {
    head: Head,
    base: Base,
    #[serde(default)]
    title: String,
}

#[derive(serde::Deserialize)]
struct Head {
    sha: String,
    #[serde(default)]
    repo: Option<Repo>,
}

#[derive(serde::Deserialize)]
struct Base {
    #[serde(rename = "ref")]
    refname: String,
    #[serde(default)]
    repo: Option<Repo>,
}

#[derive(serde::Deserialize)]
struct Repo {
    full_name: String,
}

/// Reads a GitHub-shaped pull request payload of event `name`.
pub(crate) fn pull_request(
    name: &str,
    body: &[u8],
    action: fn(&str) -> PullAction,
) -> Result<Event, HookError> {
    let p: PullRequestEvent = serde_json::from_slice(body).map_err(|e| bad(name, &e))?;
    let from_fork = match (&p.pull_request.head.repo, &p.pull_request.base.repo) {
        (Some(head), Some(base)) => head.full_name != base.full_name,
        _ => true,
    };
    Ok(Event::PullRequest {
        from_fork,
        number: p.number,
        action: action(&p.action),
        head_sha: p.pull_request.head.sha,
        base_branch: p.pull_request.base.refname,
        title: p.pull_request.title,
    })
}

pub(crate) fn bad(event: &str, e: &serde_json::Error) -> HookError {
    HookError::BadPayload {
        event: event.to_owned(),
        reason: e.to_string(),
    }
}

#[cfg(test)]
mod tests;
