//! Pull requests' previews: a request opened against the branch a source deploys gets an app
//! of its own, `<app>-pr-<n>`, with the source's repository and credential, the same people
//! and roles as its app, and its own resources (a new app's), built from the request's head
//! and rebuilt on every push to it; when the request is closed or merged the preview is
//! deleted with its data. At most the source's `max_previews` at once.

use slipway_api::git::HookOutcome;
use slipway_devfile::APP_NAME_MAX;
use slipway_git::{PullAction, Sender};

use super::GitSources;
use super::events::short;
use crate::model::{AccountRole, Caller, Role};
use crate::store::git::{self as store, GitSourceRow};
use crate::store::{access, apps};
use crate::teardown::Teardown;

/// A pull request event, as the source's hook received it.
pub struct PullRequest<'a> {
    /// Its forge (which ref its head is published under).
    pub sender: Sender,
    /// Its number.
    pub number: u64,
    /// What happened.
    pub action: &'a PullAction,
    /// Its head commit.
    pub head_sha: &'a str,
    /// Its title.
    pub title: &'a str,
}

/// What handling a pull request did: the answer, and a preview to clean once committed.
pub struct Handled {
    /// The hook's answer.
    pub outcome: HookOutcome,
    /// A closed request's preview, its rows deleted.
    pub deleted: Option<Teardown>,
}

fn answer(outcome: HookOutcome) -> Handled {
    Handled {
        outcome,
        deleted: None,
    }
}

/// The name of `parent`'s preview of pull request `number` (the parent's name shortened so
/// the whole stays an app name).
pub fn preview_name(parent: &str, number: u64) -> String {
    let suffix = format!("-pr-{number}");
    let keep = APP_NAME_MAX.saturating_sub(suffix.len());
    let base: String = parent.chars().take(keep).collect();
    format!("{}{suffix}", base.trim_end_matches('-'))
}

impl GitSources {
    /// Opens, updates or deletes the preview of `pr` for the source `row` in `tx`.
    pub(super) async fn pull_request(
        &self,
        tx: &mut crate::db::Tx,
        row: &GitSourceRow,
        pr: &PullRequest<'_>,
    ) -> Result<Handled, sqlx::Error> {
        let number = i64::try_from(pr.number).unwrap_or(i64::MAX);
        let existing = store::preview(tx, &row.app_id, number).await?;
        match (pr.action, existing) {
            (PullAction::Closed, Some(preview)) => {
                let name = app_name(tx, &preview.app_id).await?;
                let deleted = crate::teardown::delete_rows(tx, &preview.app_id).await?;
                Ok(Handled {
                    outcome: HookOutcome::Queued(format!(
                        "pull request #{} closed: its preview {name} is deleted with its data",
                        pr.number
                    )),
                    deleted,
                })
            }
            (PullAction::Closed, None) => Ok(answer(HookOutcome::Ignored(format!(
                "pull request #{} closed; it had no preview",
                pr.number
            )))),
            (PullAction::Opened | PullAction::Updated, Some(preview)) => {
                let refname = pr.sender.pull_ref(pr.number);
                store::set_pending(
                    tx,
                    &preview.app_id,
                    &refname,
                    Some(pr.head_sha),
                    "pull_request",
                )
                .await?;
                let name = app_name(tx, &preview.app_id).await?;
                Ok(answer(HookOutcome::Queued(format!(
                    "pull request #{}: rebuilding its preview {name} at {}",
                    pr.number,
                    short(pr.head_sha)
                ))))
            }
            (PullAction::Opened | PullAction::Updated, None) => self.open(tx, row, pr).await,
            (PullAction::Other(action), _) => Ok(answer(HookOutcome::Ignored(format!(
                "pull request #{} {action}: only opened, new commits and closed change its preview",
                pr.number
            )))),
        }
    }

    /// A new preview app for `pr`, its source building the request's head at once.
    async fn open(
        &self,
        tx: &mut crate::db::Tx,
        row: &GitSourceRow,
        pr: &PullRequest<'_>,
    ) -> Result<Handled, sqlx::Error> {
        let count = store::previews(tx, &row.app_id).await?.len();
        if i64::try_from(count).unwrap_or(i64::MAX) >= row.max_previews {
            return Ok(answer(HookOutcome::Ignored(if row.max_previews == 0 {
                format!(
                    "pull request #{}: this app builds no previews (max_previews is 0)",
                    pr.number
                )
            } else {
                format!(
                    "pull request #{}: the app already has {count} previews, its most \
                     (max_previews); close one or raise it",
                    pr.number
                )
            })));
        }
        let (Some(parent), Some(account_id)) = (
            apps::get(tx, &row.app_id).await?,
            apps::account_of(tx, &row.app_id).await?,
        ) else {
            return Ok(answer(HookOutcome::Ignored("the app is gone".into())));
        };
        let name = preview_name(&parent.name, pr.number);
        let display: String = format!("{} · PR #{}: {}", parent.display_name, pr.number, pr.title)
            .chars()
            .take(crate::apps::DISPLAY_NAME_MAX)
            .collect();
        let Ok(new) = crate::apps::check(
            &name,
            &display,
            Some(&format!(
                "The preview of pull request #{} of {}; deleted when the request closes.",
                pr.number, parent.name
            )),
        ) else {
            return Ok(answer(HookOutcome::Ignored(format!(
                "pull request #{}: {name} is not an app name",
                pr.number
            ))));
        };
        let caller = Caller {
            user_id: row.created_by.clone(),
            account_id,
            role: AccountRole::Member,
            token_id: String::new(),
            scope: slipway_api::TokenScope::FULL,
            grant: None,
        };
        let preview = match apps::register(tx, &caller, &new).await {
            Ok(app) => app,
            Err(e) if crate::store::is_unique_violation(&e) => {
                return Ok(answer(HookOutcome::Ignored(format!(
                    "pull request #{}: an app named {name} exists already (not this app's preview)",
                    pr.number
                ))));
            }
            Err(e) => return Err(e),
        };
        // The same people, with the same roles, as the app.
        for grant in access::list_grants(tx, &row.app_id).await? {
            if grant.user_id != caller.user_id
                && let Some(role) = Role::parse(&grant.role)
            {
                access::grant(tx, &preview.id, &grant.user_id, role).await?;
            }
        }
        // The parent's credential, with a webhook secret of the preview's own: the preview's
        // owner need not be an owner of the app, whose secret is for its owners.
        let sealed = self
            .secrets(row)
            .ok()
            .map(|s| super::credentials::Secrets {
                credential: s.credential,
                webhook_secret: crate::vault::random_secret("whsec_"),
            })
            .and_then(|s| serde_json::to_vec(&s).ok())
            .and_then(|plain| self.inner.vault.seal_git(&preview.id, &plain).ok());
        let Some(sealed) = sealed else {
            return Err(sqlx::Error::Protocol(
                "the source's credential cannot be sealed for its preview".into(),
            ));
        };
        let refname = pr.sender.pull_ref(pr.number);
        store::insert_preview(
            tx,
            &preview.id,
            row,
            &sealed,
            i64::try_from(pr.number).unwrap_or(i64::MAX),
            &refname,
            pr.head_sha,
        )
        .await?;
        tracing::info!(app_id = %row.app_id, preview = %preview.id, number = pr.number, "preview opened");
        Ok(answer(HookOutcome::Queued(format!(
            "pull request #{}: building its preview {name} at {}",
            pr.number,
            short(pr.head_sha)
        ))))
    }

    /// Cleans what a deleted preview left (its processes, data, builds), in the background.
    pub(super) fn finish_teardown(&self, teardown: Teardown) {
        let me = self.clone();
        tokio::spawn(async move {
            teardown.finish(&me.inner.deployer, &me.inner.runner).await;
        });
    }
}

async fn app_name(tx: &mut crate::db::Tx, id: &str) -> Result<String, sqlx::Error> {
    Ok(apps::get(tx, id)
        .await?
        .map_or_else(|| id.to_owned(), |a| a.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_names_stay_app_names() {
        assert_eq!(preview_name("shop", 7), "shop-pr-7");
        let long = "a".repeat(63);
        let name = preview_name(&long, 12345);
        assert_eq!(name.len(), 63);
        assert!(name.ends_with("-pr-12345"));
        assert!(slipway_devfile::AppName::parse(&name).is_ok());
        let dashed = format!("{}-b", "a".repeat(53));
        assert!(slipway_devfile::AppName::parse(&preview_name(&dashed, 1)).is_ok());
    }
}
