//! A webhook delivery: verified with the app's secret before anything in it is read,
//! recorded by its delivery id (a redelivery queues nothing), and turned into a deploy
//! waiting on the source (a push to the source's branch) or a reason it is ignored, in
//! words the forge's delivery log shows the person.

use slipway_api::git::HookOutcome;
use slipway_git::{Event, HookError, PullAction};

use super::GitSources;
use crate::store::git as store;

/// Why a delivery is refused.
#[derive(Debug, thiserror::Error)]
pub enum HookRefusal {
    /// The app has no git source (or no such app).
    #[error("the app has no git source")]
    NoSource,
    /// Not signed with the app's secret, or not a forge's delivery at all (401).
    #[error("{0}")]
    Unverified(HookError),
    /// A signed payload that is not the event it says (400).
    #[error("{0}")]
    Unreadable(HookError),
    /// The source's secret cannot be opened.
    #[error("{0}")]
    Sealed(String),
    /// The database.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

impl GitSources {
    /// Acts on one delivery for `app_id`.
    pub async fn receive(
        &self,
        app_id: &str,
        headers: &axum::http::HeaderMap,
        body: &[u8],
    ) -> Result<HookOutcome, HookRefusal> {
        // Verified in a read transaction: an unsigned flood never queues for the writer.
        let mut read = self.inner.db.begin_read().await?;
        let row = store::get(&mut read, app_id)
            .await?
            .ok_or(HookRefusal::NoSource)?;
        read.commit().await?;
        let secret = self
            .secrets(&row)
            .map_err(HookRefusal::Sealed)?
            .webhook_secret;
        let delivery = slipway_git::hooks::read(headers, body, &secret).map_err(|e| match e {
            // No forge's headers at all is no signature either.
            HookError::Unsigned(_) | HookError::BadSignature(_) | HookError::UnknownSender => {
                HookRefusal::Unverified(e)
            }
            other => HookRefusal::Unreadable(other),
        })?;
        let mut tx = self.inner.db.begin_write().await?;
        // Read again under the writer: disconnected (or reconnected) meanwhile.
        let Some(row) = store::get(&mut tx, app_id)
            .await?
            .filter(|now| now.created_at == row.created_at)
        else {
            return Err(HookRefusal::NoSource);
        };
        if let Some(id) = &delivery.id
            && !store::first_delivery(&mut tx, app_id, id).await?
        {
            tx.commit().await?;
            return Ok(HookOutcome::Ignored(format!(
                "delivery {id} was received before; a redelivery deploys nothing again"
            )));
        }
        let sender = delivery.sender;
        let (outcome, teardown) = self.act(&mut tx, &row, delivery).await?;
        tx.commit().await?;
        if let Some(teardown) = teardown {
            self.finish_teardown(teardown);
        }
        if matches!(outcome, HookOutcome::Queued(_)) {
            tracing::info!(app_id, sender = sender.name(), "git push queued a deploy");
            self.wake();
        }
        Ok(outcome)
    }

    /// What a verified, first-seen delivery does to `row`'s source, in `tx`; a closed pull
    /// request's preview to clean once committed.
    async fn act(
        &self,
        tx: &mut crate::db::Tx,
        row: &crate::store::git::GitSourceRow,
        delivery: slipway_git::Delivery,
    ) -> Result<(HookOutcome, Option<crate::teardown::Teardown>), HookRefusal> {
        let app_id = row.app_id.as_str();
        let mut teardown = None;
        let outcome = match delivery.event {
            Event::Ping => HookOutcome::Ignored(format!(
                "ping: the hook works; pushes to {} deploy",
                row.branch
            )),
            Event::Push {
                branch: Some(branch),
                deleted: false,
                refname,
                sha,
            } if branch == row.branch => {
                store::set_pending(tx, app_id, &refname, Some(&sha), "push").await?;
                HookOutcome::Queued(format!(
                    "push of {} to {branch}: fetching, building and deploying it",
                    short(&sha)
                ))
            }
            Event::Push {
                branch: Some(branch),
                deleted: true,
                ..
            } => HookOutcome::Ignored(format!(
                "branch {branch} was deleted; the running deployment keeps serving"
            )),
            Event::Push {
                branch: Some(branch),
                ..
            } => HookOutcome::Ignored(format!("push to {branch}; this app deploys {}", row.branch)),
            Event::Push { refname, .. } => HookOutcome::Ignored(format!(
                "push to {refname}, not a branch; this app deploys {}",
                row.branch
            )),
            Event::PullRequest { .. } if row.preview_of.is_some() => HookOutcome::Ignored(
                "this is a preview's hook; pull requests go to its app's hook".into(),
            ),
            Event::PullRequest {
                number,
                action,
                base_branch,
                ..
            } if base_branch != row.branch => HookOutcome::Ignored(format!(
                "pull request #{number} {} into {base_branch}; previews are of pull requests into {}",
                action_name(&action),
                row.branch
            )),
            Event::PullRequest {
                number,
                from_fork: true,
                ..
            } => HookOutcome::Ignored(format!(
                "pull request #{number} comes from a fork (or does not say where from): its code \
                 is not the repository's, so it gets no preview"
            )),
            Event::PullRequest {
                number,
                action,
                head_sha,
                title,
                ..
            } => {
                let handled = self
                    .pull_request(
                        tx,
                        row,
                        &super::previews::PullRequest {
                            sender: delivery.sender,
                            number,
                            action: &action,
                            head_sha: &head_sha,
                            title: &title,
                        },
                    )
                    .await?;
                teardown = handled.deleted;
                handled.outcome
            }
            Event::Other(name) => HookOutcome::Ignored(format!(
                "{name} events deploy nothing; send push events (and pull requests) to this hook"
            )),
        };
        Ok((outcome, teardown))
    }
}

fn action_name(action: &PullAction) -> &str {
    match action {
        PullAction::Opened => "opened",
        PullAction::Updated => "updated",
        PullAction::Closed => "closed",
        PullAction::Other(name) => name,
    }
}

/// A commit id as people read it.
pub(crate) fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}
