//! Build jobs: one row per service per uploaded context, moving queued → in_progress →
//! succeeded | failed | cancelled. Every transition is a conditional `UPDATE` on the status it
//! leaves, so a cancel and a finishing job can race without one overwriting the other.

use sqlx::Row;
use sqlx::any::AnyRow;

use crate::db::{Tx, now_millis};
use crate::model::BuildStatus;

/// One build job as stored.
#[derive(Debug, Clone)]
pub struct BuildRecord {
    /// The build's UUID.
    pub id: String,
    /// The app it builds.
    pub app_id: String,
    /// The service (devfile container component) it builds.
    pub service: String,
    /// Where the job is.
    pub status: BuildStatus,
    /// `native` or `buildah`.
    pub builder: String,
    /// The devfile text of the upload.
    pub devfile: String,
    /// The uploaded context file's id (a file under `DATA_DIR/contexts`).
    pub context_id: String,
    /// `zstd` or `gzip`.
    pub context_encoding: String,
    /// `slipway.local/<app>/<service>@sha256:…` once succeeded.
    pub image_uri: Option<String>,
    /// `sha256:…` of the image manifest once succeeded.
    pub manifest_digest: Option<String>,
    /// Why the job failed or was cancelled.
    pub error: Option<String>,
    /// Epoch milliseconds.
    pub created_at: i64,
    /// Epoch milliseconds, once running.
    pub started_at: Option<i64>,
    /// Epoch milliseconds, once finished.
    pub finished_at: Option<i64>,
}

/// What creating a job needs.
#[derive(Debug, Clone)]
pub struct NewBuild<'a> {
    /// The app.
    pub app_id: &'a str,
    /// The service.
    pub service: &'a str,
    /// `native` or `buildah`.
    pub builder: &'a str,
    /// The devfile text.
    pub devfile: &'a str,
    /// The stored context's id.
    pub context_id: &'a str,
    /// `zstd` or `gzip`.
    pub context_encoding: &'a str,
    /// The requesting user.
    pub created_by: &'a str,
}

const COLUMNS: &str = "id, app_id, service, status, builder, devfile, context_id, \
                       context_encoding, image_uri, manifest_digest, error, created_at, \
                       started_at, finished_at";

/// An app's builds, newest first.
const HISTORY: super::AppHistory<BuildRecord> = super::AppHistory {
    table: "build",
    columns: COLUMNS,
    read: record,
};

fn record(row: &AnyRow) -> Result<BuildRecord, sqlx::Error> {
    let status: String = row.try_get(3)?;
    Ok(BuildRecord {
        id: row.try_get(0)?,
        app_id: row.try_get(1)?,
        service: row.try_get(2)?,
        status: BuildStatus::parse(&status).ok_or_else(|| {
            sqlx::Error::Decode(format!("unknown build status {status:?}").into())
        })?,
        builder: row.try_get(4)?,
        devfile: row.try_get(5)?,
        context_id: row.try_get(6)?,
        context_encoding: row.try_get(7)?,
        image_uri: row.try_get(8)?,
        manifest_digest: row.try_get(9)?,
        error: row.try_get(10)?,
        created_at: row.try_get(11)?,
        started_at: row.try_get(12)?,
        finished_at: row.try_get(13)?,
    })
}

/// Creates a queued job and returns its id.
pub async fn insert(tx: &mut Tx, new: &NewBuild<'_>) -> Result<String, sqlx::Error> {
    let id = uuid::Uuid::new_v4().to_string();
    let now = now_millis();
    sqlx::query(
        "INSERT INTO build (id, app_id, service, status, builder, devfile, context_id, \
         context_encoding, created_by, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)",
    )
    .bind(id.clone())
    .bind(new.app_id.to_owned())
    .bind(new.service.to_owned())
    .bind(BuildStatus::Queued.as_str())
    .bind(new.builder.to_owned())
    .bind(new.devfile.to_owned())
    .bind(new.context_id.to_owned())
    .bind(new.context_encoding.to_owned())
    .bind(new.created_by.to_owned())
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(id)
}

/// The job `id`, whoever may see it (callers check the app's visibility).
pub async fn get(tx: &mut Tx, id: &str) -> Result<Option<BuildRecord>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM build WHERE id = $1");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(record).transpose()
}

/// queued → in_progress. False when the job is no longer queued (cancelled meanwhile).
pub async fn start(tx: &mut Tx, id: &str) -> Result<bool, sqlx::Error> {
    let now = now_millis();
    let done = sqlx::query(
        "UPDATE build SET status = $1, started_at = $2, updated_at = $2 \
         WHERE id = $3 AND status = $4",
    )
    .bind(BuildStatus::InProgress.as_str())
    .bind(now)
    .bind(id.to_owned())
    .bind(BuildStatus::Queued.as_str())
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// How a running job ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// An image was stored and signed.
    Succeeded {
        /// `slipway.local/<app>/<service>@sha256:…`.
        image_uri: String,
        /// `sha256:…` of the manifest.
        manifest_digest: String,
        /// The builder that made it (`--builder auto` may fall back from buildah to native,
        /// and a sync extends only native images, so the record says which one did).
        builder: String,
    },
    /// No image; the reason.
    Failed(String),
}

/// in_progress → succeeded | failed. False when the job is no longer running (cancelled, or
/// marked failed by a restart).
pub async fn finish(tx: &mut Tx, id: &str, outcome: &Outcome) -> Result<bool, sqlx::Error> {
    let (status, uri, digest, error, builder) = match outcome {
        Outcome::Succeeded {
            image_uri,
            manifest_digest,
            builder,
        } => (
            BuildStatus::Succeeded,
            Some(image_uri.clone()),
            Some(manifest_digest.clone()),
            None,
            Some(builder.clone()),
        ),
        Outcome::Failed(reason) => (BuildStatus::Failed, None, None, Some(reason.clone()), None),
    };
    let now = now_millis();
    let done = sqlx::query(
        "UPDATE build SET status = $1, image_uri = $2, manifest_digest = $3, error = $4, \
         finished_at = $5, updated_at = $5, builder = COALESCE($8, builder) \
         WHERE id = $6 AND status = $7",
    )
    .bind(status.as_str())
    .bind(uri)
    .bind(digest)
    .bind(error)
    .bind(now)
    .bind(id.to_owned())
    .bind(BuildStatus::InProgress.as_str())
    .bind(builder)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// queued | in_progress → cancelled. False when the job had already finished.
pub async fn cancel(tx: &mut Tx, id: &str, reason: &str) -> Result<bool, sqlx::Error> {
    let now = now_millis();
    let done = sqlx::query(
        "UPDATE build SET status = $1, error = $2, finished_at = $3, updated_at = $3 \
         WHERE id = $4 AND status IN ($5, $6)",
    )
    .bind(BuildStatus::Cancelled.as_str())
    .bind(reason.to_owned())
    .bind(now)
    .bind(id.to_owned())
    .bind(BuildStatus::Queued.as_str())
    .bind(BuildStatus::InProgress.as_str())
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Marks every queued or running job failed with `reason` (at start-up, nothing can still be
/// running) and returns their ids.
pub async fn fail_unfinished(tx: &mut Tx, reason: &str) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query("SELECT id FROM build WHERE status IN ($1, $2) ORDER BY id")
        .bind(BuildStatus::Queued.as_str())
        .bind(BuildStatus::InProgress.as_str())
        .fetch_all(&mut **tx)
        .await?;
    let ids = rows
        .iter()
        .map(|r| r.try_get::<String, _>(0))
        .collect::<Result<Vec<_>, _>>()?;
    let now = now_millis();
    sqlx::query(
        "UPDATE build SET status = $1, error = $2, finished_at = $3, updated_at = $3 \
         WHERE status IN ($4, $5)",
    )
    .bind(BuildStatus::Failed.as_str())
    .bind(reason.to_owned())
    .bind(now)
    .bind(BuildStatus::Queued.as_str())
    .bind(BuildStatus::InProgress.as_str())
    .execute(&mut **tx)
    .await?;
    Ok(ids)
}

/// Every job of `app_id` (to stop and forget them when the app is deleted).
pub async fn ids_of_app(tx: &mut Tx, app_id: &str) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query("SELECT id FROM build WHERE app_id = $1")
        .bind(app_id.to_owned())
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(|r| r.try_get::<String, _>(0)).collect()
}

/// Every job of `app_id`, newest first (the latest build of each service is the first of
/// its service).
pub async fn of_app_newest_first(
    tx: &mut Tx,
    app_id: &str,
) -> Result<Vec<BuildRecord>, sqlx::Error> {
    HISTORY.newest_first(tx, app_id).await
}

/// One page of `app_id`'s jobs, newest first: at most `limit`, all older than `before`
/// (`(created_at, id)` of the last one of the page before).
pub async fn page_of_app(
    tx: &mut Tx,
    app_id: &str,
    before: Option<(i64, String)>,
    limit: u32,
) -> Result<Vec<BuildRecord>, sqlx::Error> {
    HISTORY.page(tx, app_id, before, limit).await
}

/// `(build id, service)` of the newest build of each service of `app_id` (what a live log
/// stream follows; polled, so it reads two columns, not every build).
pub async fn latest_per_service(
    tx: &mut Tx,
    app_id: &str,
) -> Result<Vec<(String, String)>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT b.id, b.service FROM build b WHERE b.app_id = $1 AND NOT EXISTS (\
         SELECT 1 FROM build n WHERE n.app_id = b.app_id AND n.service = b.service \
         AND (n.created_at > b.created_at OR (n.created_at = b.created_at AND n.id > b.id))) \
         ORDER BY b.service",
    )
    .bind(app_id.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect()
}

/// The `builder` recorded for a sync build (`POST …/builds?sync=true`): the new sources as
/// one layer over the newest succeeded build of the service.
pub const SYNC_BUILDER: &str = "sync";

/// The newest succeeded build of `service` of `app_id` that is not a sync build: what a sync
/// build extends (always the last full build, so sync layers never pile up).
pub async fn latest_full_build(
    tx: &mut Tx,
    app_id: &str,
    service: &str,
) -> Result<Option<BuildRecord>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM build WHERE app_id = $1 AND service = $2 AND status = 'succeeded' \
         AND builder <> '{SYNC_BUILDER}' ORDER BY created_at DESC, id DESC LIMIT 1"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(app_id.to_owned())
        .bind(service.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(record).transpose()
}

/// Records the commit a queued job builds (a git source's deploy).
pub async fn set_commit(
    tx: &mut Tx,
    id: &str,
    commit: &super::git::LastCommit,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE build SET commit_sha = $1, commit_branch = $2, commit_author = $3, \
         commit_subject = $4 WHERE id = $5",
    )
    .bind(commit.sha.clone())
    .bind(commit.branch.clone())
    .bind(commit.author.clone())
    .bind(commit.subject.clone())
    .bind(id.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Deletes every job of `app_id`.
pub async fn delete_for_app(tx: &mut Tx, app_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM build WHERE app_id = $1")
        .bind(app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Whether a job that has not finished still needs the context `context_id`.
pub async fn context_in_use(tx: &mut Tx, context_id: &str) -> Result<bool, sqlx::Error> {
    let row =
        sqlx::query("SELECT COUNT(*) FROM build WHERE context_id = $1 AND status IN ($2, $3)")
            .bind(context_id.to_owned())
            .bind(BuildStatus::Queued.as_str())
            .bind(BuildStatus::InProgress.as_str())
            .fetch_one(&mut **tx)
            .await?;
    Ok(row.try_get::<i64, _>(0)? > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_and_know_when_they_are_final() {
        for s in [
            BuildStatus::Queued,
            BuildStatus::InProgress,
            BuildStatus::Succeeded,
            BuildStatus::Failed,
            BuildStatus::Cancelled,
        ] {
            assert_eq!(BuildStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert!(!BuildStatus::InProgress.is_finished());
        assert!(BuildStatus::Cancelled.is_finished());
    }
}
