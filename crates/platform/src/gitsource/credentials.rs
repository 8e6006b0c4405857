//! What a source seals (its credential and its webhook secret, as one JSON document bound to
//! the app), and connecting: the request checked field by field, a deploy key or a webhook
//! secret made, everything stored with a first deploy waiting.

use serde::{Deserialize, Serialize};
use slipway_api::git::GitAuth;
use slipway_git::{Credential, DeployKey, RemoteUrl, Transport};

use super::GitSources;
use crate::store::git::{self as store, GitSourceRow, NewSource};

/// The sealed part of a source.
#[derive(Serialize, Deserialize)]
pub struct Secrets {
    /// The token or the deploy key's private half.
    pub credential: Option<String>,
    /// What the forge signs deliveries with.
    pub webhook_secret: String,
}

/// A connect request, as the API received it.
pub struct ConnectRequest {
    /// The repository's address.
    pub repo_url: String,
    /// The branch (default `main`).
    pub branch: Option<String>,
    /// The devfile's directory (default the root).
    pub path: Option<String>,
    /// How to read it (default: `token` when one is given, `deploy_key` for an SSH address,
    /// else `none`).
    pub auth: Option<GitAuth>,
    /// The token (`auth: token`).
    pub token: Option<String>,
    /// Polling interval, seconds.
    pub poll_interval_seconds: Option<i64>,
    /// Previews at once, at most.
    pub max_previews: Option<i64>,
}

impl std::fmt::Debug for ConnectRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectRequest")
            .field("repo_url", &self.repo_url)
            .field("branch", &self.branch)
            .field("path", &self.path)
            .field("auth", &self.auth)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}

/// A connect refused: the field and the rule.
#[derive(Debug, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConnectError {
    /// The request field.
    pub field: &'static str,
    /// The rule.
    pub message: String,
}

fn refuse(field: &'static str, message: impl Into<String>) -> ConnectError {
    ConnectError {
        field,
        message: message.into(),
    }
}

/// The shortest and longest polling intervals.
pub const POLL_RANGE: std::ops::RangeInclusive<i64> = 10..=86_400;
/// How many previews an app may have at once: the range, and the default.
pub const PREVIEWS_RANGE: std::ops::RangeInclusive<i64> = 0..=20;
/// See [`PREVIEWS_RANGE`].
pub const DEFAULT_PREVIEWS: i64 = 5;

/// The longest token taken.
pub const MAX_TOKEN: usize = 4096;

/// The rule of a token as the API documents it.
pub const TOKEN_PATTERN: &str = "^[!-~]+$";

fn token_ok(t: &str) -> bool {
    (1..=MAX_TOKEN).contains(&t.len()) && t.bytes().all(|b| (b'!'..=b'~').contains(&b))
}

/// A connect request that passed every rule.
pub struct Checked {
    remote: RemoteUrl,
    branch: String,
    path: String,
    auth: GitAuth,
    token: Option<String>,
    poll: Option<i64>,
    max_previews: i64,
}

/// Checks every field before anything is made or stored.
pub fn check(req: ConnectRequest) -> Result<Checked, ConnectError> {
    let remote = RemoteUrl::parse(&req.repo_url).map_err(|e| refuse("repo_url", e.to_string()))?;
    let branch = req.branch.unwrap_or_else(|| "main".to_owned());
    slipway_git::remote::check_branch(&branch).map_err(|m| refuse("branch", m))?;
    let path = req.path.unwrap_or_default();
    slipway_git::remote::check_path(&path).map_err(|m| refuse("path", m))?;
    let auth = req.auth.unwrap_or(match (&req.token, remote.transport()) {
        (Some(_), _) => GitAuth::Token,
        (None, Transport::Ssh) => GitAuth::DeployKey,
        (None, Transport::Http) => GitAuth::None,
    });
    match (auth, remote.transport(), &req.token) {
        (GitAuth::Token, Transport::Http, Some(t)) if token_ok(t) => {}
        (GitAuth::Token, Transport::Http, Some(_)) => {
            return Err(refuse(
                "token",
                format!(
                    "must be an access token of 1 to {MAX_TOKEN} printable ASCII characters without spaces"
                ),
            ));
        }
        (GitAuth::Token, Transport::Http, None) => {
            return Err(refuse("token", "is required with auth: token"));
        }
        (GitAuth::Token | GitAuth::None, Transport::Ssh, _) => {
            return Err(refuse(
                "auth",
                "an ssh address is read with a deploy key (auth: deploy_key)",
            ));
        }
        (GitAuth::DeployKey, Transport::Http, _) => {
            return Err(refuse(
                "auth",
                "a deploy key is for ssh addresses; an https address takes a token or none",
            ));
        }
        (_, _, Some(_)) => {
            return Err(refuse("token", "is only taken with auth: token"));
        }
        _ => {}
    }
    if let Some(p) = req.poll_interval_seconds
        && !POLL_RANGE.contains(&p)
    {
        return Err(refuse(
            "poll_interval_seconds",
            format!(
                "must be from {} to {} seconds",
                POLL_RANGE.start(),
                POLL_RANGE.end()
            ),
        ));
    }
    let max_previews = req.max_previews.unwrap_or(DEFAULT_PREVIEWS);
    if !PREVIEWS_RANGE.contains(&max_previews) {
        return Err(refuse(
            "max_previews",
            format!(
                "must be from {} to {}",
                PREVIEWS_RANGE.start(),
                PREVIEWS_RANGE.end()
            ),
        ));
    }
    Ok(Checked {
        max_previews,
        remote,
        branch,
        path,
        auth,
        token: req.token,
        poll: req.poll_interval_seconds,
    })
}

/// What connecting made, shown once to whoever connected.
pub struct Connected {
    /// The stored row.
    pub row: GitSourceRow,
    /// The webhook secret.
    pub webhook_secret: String,
}

/// Why connecting failed after the checks.
#[derive(Debug, thiserror::Error)]
pub enum ConnectFailure {
    /// ssh-keygen failed.
    #[error("{0}")]
    Key(#[from] slipway_git::GitError),
    /// Sealing failed.
    #[error("sealing the credential: {0}")]
    Seal(String),
    /// The database.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

impl GitSources {
    /// Stores `checked` as `app_id`'s source (replacing one), with a first deploy waiting.
    pub async fn connect(
        &self,
        tx: &mut crate::db::Tx,
        app_id: &str,
        app_name: &str,
        user_id: &str,
        checked: Checked,
    ) -> Result<Connected, ConnectFailure> {
        let key = match checked.auth {
            GitAuth::DeployKey => {
                Some(DeployKey::generate(&format!("slipway deploy key for {app_name}")).await?)
            }
            _ => None,
        };
        let secrets = Secrets {
            credential: key
                .as_ref()
                .map(|k| k.private.clone())
                .or(checked.token.clone()),
            webhook_secret: crate::vault::random_secret("whsec_"),
        };
        let plain =
            serde_json::to_vec(&secrets).map_err(|e| ConnectFailure::Seal(e.to_string()))?;
        let sealed = self
            .inner
            .vault
            .seal_git(app_id, &plain)
            .map_err(|e| ConnectFailure::Seal(e.to_string()))?;
        store::upsert(
            tx,
            &NewSource {
                app_id,
                repo_url: checked.remote.as_str(),
                branch: &checked.branch,
                path: &checked.path,
                auth: checked.auth.as_str(),
                deploy_key: key.as_ref().map(|k| k.public.as_str()),
                sealed: &sealed,
                poll_seconds: checked.poll,
                max_previews: checked.max_previews,
                created_by: user_id,
            },
        )
        .await?;
        let row = store::get(tx, app_id)
            .await?
            .ok_or(ConnectFailure::Database(sqlx::Error::RowNotFound))?;
        self.remove_cache(app_id);
        Ok(Connected {
            row,
            webhook_secret: secrets.webhook_secret,
        })
    }

    /// Opens a source's sealed part.
    pub fn secrets(&self, row: &GitSourceRow) -> Result<Secrets, String> {
        let plain = self
            .inner
            .vault
            .open_git(&row.app_id, &row.sealed)
            .map_err(|e| format!("the source's credential cannot be opened: {e}"))?;
        serde_json::from_slice(&plain).map_err(|e| format!("the source's credential: {e}"))
    }

    /// The credential git uses for `row`.
    pub(super) fn credential(&self, row: &GitSourceRow) -> Result<Credential, String> {
        let secrets = self.secrets(row)?;
        Ok(match (GitAuth::parse(&row.auth), secrets.credential) {
            (Some(GitAuth::Token), Some(t)) => Credential::Token(t),
            (Some(GitAuth::DeployKey), Some(k)) => Credential::SshKey(k),
            _ => Credential::None,
        })
    }
}
