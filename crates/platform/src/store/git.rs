//! `git_source` and `git_delivery` (migration 0011): each app's git source with its sealed
//! credential and webhook secret, the deploy waiting to be fetched, what the last attempt
//! did; and the webhook deliveries already acted on.

use sqlx::Row;

use crate::db::{Tx, now_millis};
use crate::model::Sealed;

/// A git source as stored.
#[derive(Debug, Clone)]
pub struct GitSourceRow {
    /// The app.
    pub app_id: String,
    /// The repository's address.
    pub repo_url: String,
    /// The branch that deploys.
    pub branch: String,
    /// The devfile's directory (`""`: the root).
    pub path: String,
    /// none, token, deploy_key.
    pub auth: String,
    /// The deploy key's public half.
    pub deploy_key: Option<String>,
    /// The credential and the webhook secret, sealed together.
    pub sealed: Sealed,
    /// Polling interval in seconds.
    pub poll_seconds: Option<i64>,
    /// The deploy waiting: the ref to fetch.
    pub pending_ref: Option<String>,
    /// The commit the event named (the ref's tip is what is built).
    pub pending_sha: Option<String>,
    /// push, poll, manual, connect.
    pub pending_trigger: Option<String>,
    /// When it was asked for (epoch ms): it is cleared only if still the same.
    pub pending_at: Option<i64>,
    /// The commit last built.
    pub last: Option<LastCommit>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When polling last asked (epoch ms).
    pub polled_at: Option<i64>,
    /// Pull requests with a preview at once, at most.
    pub max_previews: i64,
    /// For a preview: the app whose pull request it builds, and the request's number.
    pub preview_of: Option<(String, i64)>,
    /// Who connected it.
    pub created_by: String,
    /// Epoch ms.
    pub created_at: i64,
}

/// A commit as builds, deployments and sources remember it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastCommit {
    /// Full id.
    pub sha: String,
    /// Branch or ref.
    pub branch: String,
    /// Author's name.
    pub author: String,
    /// First line of the message.
    pub subject: String,
}

/// What connecting stores.
pub struct NewSource<'a> {
    /// The app.
    pub app_id: &'a str,
    /// The address.
    pub repo_url: &'a str,
    /// The branch.
    pub branch: &'a str,
    /// The directory.
    pub path: &'a str,
    /// none, token, deploy_key.
    pub auth: &'a str,
    /// The public key.
    pub deploy_key: Option<&'a str>,
    /// Credential and webhook secret.
    pub sealed: &'a Sealed,
    /// Polling.
    pub poll_seconds: Option<i64>,
    /// Previews at once, at most.
    pub max_previews: i64,
    /// Who.
    pub created_by: &'a str,
}

macro_rules! select {
    ($rest:literal) => {
        concat!(
            "SELECT app_id, repo_url, branch, path, auth, deploy_key, key_id, nonce, ciphertext, \
             poll_seconds, pending_ref, pending_sha, pending_trigger, pending_at, last_sha, \
             last_branch, last_author, last_subject, last_error, polled_at, created_by, \
             created_at, max_previews, preview_of, preview_number FROM git_source ",
            $rest
        )
    };
}

fn row(r: &sqlx::any::AnyRow) -> Result<GitSourceRow, sqlx::Error> {
    let last = match (
        r.try_get::<Option<String>, _>(14)?,
        r.try_get::<Option<String>, _>(15)?,
    ) {
        (Some(sha), Some(branch)) => Some(LastCommit {
            sha,
            branch,
            author: r.try_get::<Option<String>, _>(16)?.unwrap_or_default(),
            subject: r.try_get::<Option<String>, _>(17)?.unwrap_or_default(),
        }),
        _ => None,
    };
    Ok(GitSourceRow {
        app_id: r.try_get(0)?,
        repo_url: r.try_get(1)?,
        branch: r.try_get(2)?,
        path: r.try_get(3)?,
        auth: r.try_get(4)?,
        deploy_key: r.try_get(5)?,
        sealed: super::sealed(r, 6)?,
        poll_seconds: r.try_get(9)?,
        pending_ref: r.try_get(10)?,
        pending_sha: r.try_get(11)?,
        pending_trigger: r.try_get(12)?,
        pending_at: r.try_get(13)?,
        last,
        last_error: r.try_get(18)?,
        polled_at: r.try_get(19)?,
        created_by: r.try_get(20)?,
        created_at: r.try_get(21)?,
        max_previews: r.try_get(22)?,
        preview_of: match (
            r.try_get::<Option<String>, _>(23)?,
            r.try_get::<Option<i64>, _>(24)?,
        ) {
            (Some(app), Some(n)) => Some((app, n)),
            _ => None,
        },
    })
}

/// The app's source.
pub async fn get(tx: &mut Tx, app_id: &str) -> Result<Option<GitSourceRow>, sqlx::Error> {
    let r = sqlx::query(select!("WHERE app_id = $1"))
        .bind(app_id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    r.as_ref().map(row).transpose()
}

/// The previews of `parent`'s pull requests, by number.
pub async fn previews(tx: &mut Tx, parent: &str) -> Result<Vec<GitSourceRow>, sqlx::Error> {
    let rows = sqlx::query(select!("WHERE preview_of = $1 ORDER BY preview_number"))
        .bind(parent.to_owned())
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(row).collect()
}

/// The app ids of `parent`'s previews.
pub async fn previews_of(tx: &mut Tx, parent: &str) -> Result<Vec<String>, sqlx::Error> {
    Ok(previews(tx, parent)
        .await?
        .into_iter()
        .map(|r| r.app_id)
        .collect())
}

/// The preview of `parent`'s pull request `number`.
pub async fn preview(
    tx: &mut Tx,
    parent: &str,
    number: i64,
) -> Result<Option<GitSourceRow>, sqlx::Error> {
    let r = sqlx::query(select!("WHERE preview_of = $1 AND preview_number = $2"))
        .bind(parent.to_owned())
        .bind(number)
        .fetch_optional(&mut **tx)
        .await?;
    r.as_ref().map(row).transpose()
}

/// The source of a new preview app: `parent`'s repository and credential (sealed for the
/// preview), building `refname` (the pull request's head) at once.
pub async fn insert_preview(
    tx: &mut Tx,
    app_id: &str,
    parent: &GitSourceRow,
    sealed: &Sealed,
    number: i64,
    refname: &str,
    sha: &str,
) -> Result<(), sqlx::Error> {
    let now = now_millis();
    sqlx::query(
        "INSERT INTO git_source (app_id, repo_url, branch, path, auth, deploy_key, key_id, \
         nonce, ciphertext, poll_seconds, pending_ref, pending_sha, pending_trigger, pending_at, \
         max_previews, preview_of, preview_number, created_by, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, $10, $11, 'pull_request', $12, 0, \
         $13, $14, $15, $12, $12)",
    )
    .bind(app_id.to_owned())
    .bind(parent.repo_url.clone())
    .bind(parent.branch.clone())
    .bind(parent.path.clone())
    .bind(parent.auth.clone())
    .bind(parent.deploy_key.clone())
    .bind(sealed.key_id.clone())
    .bind(sealed.nonce.clone())
    .bind(sealed.ciphertext.clone())
    .bind(refname.to_owned())
    .bind(sha.to_owned())
    .bind(now)
    .bind(parent.app_id.clone())
    .bind(number)
    .bind(parent.created_by.clone())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Every source (the worker's pass: pending deploys and due polls).
pub async fn all(tx: &mut Tx) -> Result<Vec<GitSourceRow>, sqlx::Error> {
    let rows = sqlx::query(select!("ORDER BY app_id"))
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(row).collect()
}

/// Connects (or reconnects, replacing everything but the last commit) the app's source,
/// with a first deploy of `branch` pending.
pub async fn upsert(tx: &mut Tx, new: &NewSource<'_>) -> Result<(), sqlx::Error> {
    let now = now_millis();
    sqlx::query("DELETE FROM git_source WHERE app_id = $1")
        .bind(new.app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    sqlx::query(
        "INSERT INTO git_source (app_id, repo_url, branch, path, auth, deploy_key, key_id, \
         nonce, ciphertext, poll_seconds, pending_ref, pending_sha, pending_trigger, pending_at, \
         max_previews, created_by, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULL, 'connect', $12, $14, $13, \
         $12, $12)",
    )
    .bind(new.app_id.to_owned())
    .bind(new.repo_url.to_owned())
    .bind(new.branch.to_owned())
    .bind(new.path.to_owned())
    .bind(new.auth.to_owned())
    .bind(new.deploy_key.map(str::to_owned))
    .bind(new.sealed.key_id.clone())
    .bind(new.sealed.nonce.clone())
    .bind(new.sealed.ciphertext.clone())
    .bind(new.poll_seconds)
    .bind(format!("refs/heads/{}", new.branch))
    .bind(now)
    .bind(new.created_by.to_owned())
    .bind(new.max_previews)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Disconnects the app's source and forgets its deliveries. Whether there was one.
pub async fn delete(tx: &mut Tx, app_id: &str) -> Result<bool, sqlx::Error> {
    sqlx::query("DELETE FROM git_delivery WHERE app_id = $1")
        .bind(app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    let done = sqlx::query("DELETE FROM git_source WHERE app_id = $1")
        .bind(app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Asks for a deploy of `refname` (replacing one still waiting: the newer push wins). Its
/// `pending_at` only grows, even within a millisecond, so the worker never clears a newer
/// deploy as the one it served.
pub async fn set_pending(
    tx: &mut Tx,
    app_id: &str,
    refname: &str,
    sha: Option<&str>,
    trigger: &str,
) -> Result<i64, sqlx::Error> {
    let now = now_millis();
    sqlx::query(
        "UPDATE git_source SET pending_ref = $1, pending_sha = $2, pending_trigger = $3, \
         pending_at = CASE WHEN pending_at >= $4 THEN pending_at + 1 ELSE $4 END, \
         updated_at = $4 WHERE app_id = $5",
    )
    .bind(refname.to_owned())
    .bind(sha.map(str::to_owned))
    .bind(trigger.to_owned())
    .bind(now)
    .bind(app_id.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(now)
}

/// Records an attempt's outcome and clears the deploy it served, unless a newer one was
/// asked for meanwhile (`pending_at` changed): that one stays for the next pass.
pub async fn finish_attempt(
    tx: &mut Tx,
    app_id: &str,
    pending_at: Option<i64>,
    built: Option<&LastCommit>,
    error: Option<&str>,
) -> Result<(), sqlx::Error> {
    let now = now_millis();
    if let Some(at) = pending_at {
        sqlx::query(
            "UPDATE git_source SET pending_ref = NULL, pending_sha = NULL, \
             pending_trigger = NULL, pending_at = NULL WHERE app_id = $1 AND pending_at = $2",
        )
        .bind(app_id.to_owned())
        .bind(at)
        .execute(&mut **tx)
        .await?;
    }
    if let Some(c) = built {
        sqlx::query(
            "UPDATE git_source SET last_sha = $1, last_branch = $2, last_author = $3, \
             last_subject = $4 WHERE app_id = $5",
        )
        .bind(c.sha.clone())
        .bind(c.branch.clone())
        .bind(c.author.clone())
        .bind(c.subject.clone())
        .bind(app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    }
    sqlx::query("UPDATE git_source SET last_error = $1, updated_at = $2 WHERE app_id = $3")
        .bind(error.map(str::to_owned))
        .bind(now)
        .bind(app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Records that polling asked the repository now.
pub async fn polled(tx: &mut Tx, app_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE git_source SET polled_at = $1 WHERE app_id = $2")
        .bind(now_millis())
        .bind(app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Records a delivery; false when it was recorded before (a redelivery).
pub async fn first_delivery(
    tx: &mut Tx,
    app_id: &str,
    delivery_id: &str,
) -> Result<bool, sqlx::Error> {
    // One statement, so two copies of a delivery arriving at once cannot both pass.
    let done = sqlx::query(
        "INSERT INTO git_delivery (app_id, delivery_id, received_at) VALUES ($1, $2, $3) \
         ON CONFLICT (app_id, delivery_id) DO NOTHING",
    )
    .bind(app_id.to_owned())
    .bind(delivery_id.to_owned())
    .bind(now_millis())
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Every sealed credential, by app (key rotation).
pub async fn all_sealed(tx: &mut Tx) -> Result<Vec<(String, Sealed)>, sqlx::Error> {
    let rows =
        sqlx::query("SELECT app_id, key_id, nonce, ciphertext FROM git_source ORDER BY app_id")
            .fetch_all(&mut **tx)
            .await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, super::sealed(r, 1)?)))
        .collect()
}

/// Replaces a sealed credential in place (key rotation).
pub async fn reseal(tx: &mut Tx, app_id: &str, sealed: &Sealed) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE git_source SET key_id = $1, nonce = $2, ciphertext = $3 WHERE app_id = $4")
        .bind(sealed.key_id.clone())
        .bind(sealed.nonce.clone())
        .bind(sealed.ciphertext.clone())
        .bind(app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The master key ids the credentials were sealed with.
pub async fn key_ids_in_use(tx: &mut Tx) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query("SELECT DISTINCT key_id FROM git_source")
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(|r| r.try_get(0)).collect()
}
