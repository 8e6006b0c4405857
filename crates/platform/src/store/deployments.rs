//! Deployments: one row per attempt to run an app's images (`deploying` → `RUNNING` |
//! `FAILED`, later `superseded` or `stopped`) and one row per service of it (`pending` →
//! `starting` → `healthy` | `failed`, later `stopped`). The app's own status is kept on the
//! app row; these rows say which images ran, when, and why a deployment failed.

use sqlx::Row;
use sqlx::any::AnyRow;

use crate::db::{Tx, now_millis};
use crate::model::{DeploymentCause, DeploymentStatus, ServiceStatus};

/// One deployment as stored.
#[derive(Debug, Clone)]
pub struct DeploymentRecord {
    /// The deployment's UUID.
    pub id: String,
    /// Its app.
    pub app_id: String,
    /// Where it is.
    pub status: DeploymentStatus,
    /// Why it failed or stopped.
    pub reason: Option<String>,
    /// The devfile it runs.
    pub devfile: String,
    /// Epoch milliseconds.
    pub created_at: i64,
    /// Epoch milliseconds when it became RUNNING or FAILED.
    pub finished_at: Option<i64>,
    /// Why it was started.
    pub cause: DeploymentCause,
    /// The user who started it (none for a build or a restart).
    pub started_by: Option<String>,
    /// SHA-256 of the devfile text (`sha256:` + hex); none for deployments recorded before
    /// the history existed.
    pub devfile_digest: Option<String>,
    /// The deployment a rollback went back to.
    pub rollback_of: Option<String>,
    /// The commit its builds came from (a git source's deploy).
    pub commit: Option<super::git::LastCommit>,
}

/// Why and by whom a deployment is started.
#[derive(Debug, Clone)]
pub struct Origin {
    /// Why.
    pub cause: DeploymentCause,
    /// Who (a user id), when a user asked.
    pub started_by: Option<String>,
    /// The deployment a rollback goes back to.
    pub rollback_of: Option<String>,
}

/// An app secret a service of a deployment was given, and its version (never its value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretUse {
    /// The service.
    pub service: String,
    /// The secret's path.
    pub path: String,
    /// The version it received.
    pub version: i64,
}

/// One service of a deployment as stored.
#[derive(Debug, Clone)]
pub struct ServiceRecord {
    /// The service name.
    pub service: String,
    /// The build whose image it runs.
    pub build_id: String,
    /// `sha256:…` of that image's manifest.
    pub manifest_digest: String,
    /// Where it is.
    pub status: ServiceStatus,
    /// Epoch milliseconds of its first start.
    pub started_at: Option<i64>,
    /// Epoch milliseconds of its first healthy answer.
    pub healthy_at: Option<i64>,
}

/// An image a new deployment runs for one service.
#[derive(Debug, Clone)]
pub struct NewService {
    /// The service name.
    pub service: String,
    /// The build that made the image.
    pub build_id: String,
    /// The manifest digest.
    pub manifest_digest: String,
}

const COLUMNS: &str = "id, app_id, status, reason, devfile, created_at, finished_at, cause, \
                       started_by, devfile_digest, rollback_of, commit_sha, commit_branch, \
                       commit_author, commit_subject";

/// A stored status spelling as its enum; an unknown one is a decode error.
fn decode<T>(raw: String, parse: fn(&str) -> Option<T>) -> Result<T, sqlx::Error> {
    parse(&raw).ok_or_else(|| sqlx::Error::Decode(format!("unknown status {raw:?}").into()))
}

/// An app's deployments, newest first.
const HISTORY: super::AppHistory<DeploymentRecord> = super::AppHistory {
    table: "deployment",
    columns: COLUMNS,
    read: record,
};

fn record(row: &AnyRow) -> Result<DeploymentRecord, sqlx::Error> {
    Ok(DeploymentRecord {
        id: row.try_get(0)?,
        app_id: row.try_get(1)?,
        status: decode(row.try_get(2)?, DeploymentStatus::parse)?,
        reason: row.try_get(3)?,
        devfile: row.try_get(4)?,
        created_at: row.try_get(5)?,
        finished_at: row.try_get(6)?,
        cause: decode(row.try_get(7)?, DeploymentCause::parse)?,
        started_by: row.try_get(8)?,
        devfile_digest: row.try_get(9)?,
        rollback_of: row.try_get(10)?,
        commit: commit_at(row, 11)?,
    })
}

/// The commit columns from `first` on (sha, branch, author, subject), when set.
pub(crate) fn commit_at(
    row: &AnyRow,
    first: usize,
) -> Result<Option<super::git::LastCommit>, sqlx::Error> {
    let sha: Option<String> = row.try_get(first)?;
    Ok(match sha {
        Some(sha) => Some(super::git::LastCommit {
            sha,
            branch: row
                .try_get::<Option<String>, _>(first + 1)?
                .unwrap_or_default(),
            author: row
                .try_get::<Option<String>, _>(first + 2)?
                .unwrap_or_default(),
            subject: row
                .try_get::<Option<String>, _>(first + 3)?
                .unwrap_or_default(),
        }),
        None => None,
    })
}

/// `sha256:` and the hex SHA-256 of a devfile's text.
pub fn devfile_digest(devfile: &str) -> String {
    use sha2::Digest as _;
    let hash = sha2::Sha256::digest(devfile.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Creates a `deploying` deployment with its services `pending`; returns its id.
pub async fn create(
    tx: &mut Tx,
    app_id: &str,
    devfile: &str,
    services: &[NewService],
    origin: &Origin,
) -> Result<String, sqlx::Error> {
    let id = uuid::Uuid::new_v4().to_string();
    let now = now_millis();
    sqlx::query(
        "INSERT INTO deployment (id, app_id, status, reason, devfile, created_at, finished_at, \
         updated_at, cause, started_by, devfile_digest, rollback_of) \
         VALUES ($1, $2, $3, NULL, $4, $5, NULL, $5, $6, $7, $8, $9)",
    )
    .bind(id.clone())
    .bind(app_id.to_owned())
    .bind(DeploymentStatus::Deploying.as_str())
    .bind(devfile.to_owned())
    .bind(now)
    .bind(origin.cause.as_str())
    .bind(origin.started_by.clone())
    .bind(devfile_digest(devfile))
    .bind(origin.rollback_of.clone())
    .execute(&mut **tx)
    .await?;
    for s in services {
        sqlx::query(
            "INSERT INTO deployment_service (deployment_id, service, build_id, manifest_digest, \
             status, port, started_at, healthy_at) VALUES ($1, $2, $3, $4, $5, NULL, NULL, NULL)",
        )
        .bind(id.clone())
        .bind(s.service.clone())
        .bind(s.build_id.clone())
        .bind(s.manifest_digest.clone())
        .bind(ServiceStatus::Pending.as_str())
        .execute(&mut **tx)
        .await?;
    }
    // The commit its builds came from: the first service's build's (one upload or one
    // fetched commit builds every service).
    if let Some(first) = services.first() {
        sqlx::query(
            "UPDATE deployment SET \
             commit_sha = (SELECT b.commit_sha FROM build b WHERE b.id = $1), \
             commit_branch = (SELECT b.commit_branch FROM build b WHERE b.id = $1), \
             commit_author = (SELECT b.commit_author FROM build b WHERE b.id = $1), \
             commit_subject = (SELECT b.commit_subject FROM build b WHERE b.id = $1) \
             WHERE id = $2",
        )
        .bind(first.build_id.clone())
        .bind(id.clone())
        .execute(&mut **tx)
        .await?;
    }
    Ok(id)
}

/// Records a deployment that failed before anything could run (a git source's fetch, its
/// devfile or its build failed): `FAILED` with the reason and the commit, no services.
pub async fn record_failed(
    tx: &mut Tx,
    app_id: &str,
    devfile: &str,
    reason: &str,
    commit: Option<&super::git::LastCommit>,
) -> Result<String, sqlx::Error> {
    let id = uuid::Uuid::new_v4().to_string();
    let now = now_millis();
    sqlx::query(
        "INSERT INTO deployment (id, app_id, status, reason, devfile, created_at, finished_at, \
         updated_at, cause, started_by, devfile_digest, rollback_of, commit_sha, commit_branch, \
         commit_author, commit_subject) \
         VALUES ($1, $2, $3, $4, $5, $6, $6, $6, $7, NULL, $8, NULL, $9, $10, $11, $12)",
    )
    .bind(id.clone())
    .bind(app_id.to_owned())
    .bind(DeploymentStatus::Failed.as_str())
    .bind(reason.to_owned())
    .bind(devfile.to_owned())
    .bind(now)
    .bind(DeploymentCause::Build.as_str())
    .bind(devfile_digest(devfile))
    .bind(commit.map(|c| c.sha.clone()))
    .bind(commit.map(|c| c.branch.clone()))
    .bind(commit.map(|c| c.author.clone()))
    .bind(commit.map(|c| c.subject.clone()))
    .execute(&mut **tx)
    .await?;
    Ok(id)
}

/// Records that `service` of deployment `id` was given version `version` of app secret
/// `path`.
pub async fn record_secret(
    tx: &mut Tx,
    id: &str,
    service: &str,
    path: &str,
    version: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO deployment_secret (deployment_id, service, secret_path, version) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(id.to_owned())
    .bind(service.to_owned())
    .bind(path.to_owned())
    .bind(version)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The app secrets (and versions) every service of deployment `id` was given, by service
/// then path.
pub async fn secrets_of(tx: &mut Tx, id: &str) -> Result<Vec<SecretUse>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT service, secret_path, version FROM deployment_secret WHERE deployment_id = $1 \
         ORDER BY service, secret_path",
    )
    .bind(id.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(SecretUse {
                service: r.try_get(0)?,
                path: r.try_get(1)?,
                version: r.try_get(2)?,
            })
        })
        .collect()
}

/// Deployment `id` of app `app_id`, if it exists.
pub async fn get(
    tx: &mut Tx,
    app_id: &str,
    id: &str,
) -> Result<Option<DeploymentRecord>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM deployment WHERE id = $1 AND app_id = $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id.to_owned())
        .bind(app_id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(record).transpose()
}

/// Up to `limit` deployments of `app_id`, newest first, older than the cursor
/// `(created_at, id)` when one is given.
pub async fn page_of_app(
    tx: &mut Tx,
    app_id: &str,
    before: Option<(i64, String)>,
    limit: u32,
) -> Result<Vec<DeploymentRecord>, sqlx::Error> {
    HISTORY.page(tx, app_id, before, limit).await
}

/// Every deployment of `app_id`, newest first.
pub async fn of_app_newest_first(
    tx: &mut Tx,
    app_id: &str,
) -> Result<Vec<DeploymentRecord>, sqlx::Error> {
    HISTORY.newest_first(tx, app_id).await
}

/// The services of deployment `id`, in name order.
pub async fn services(tx: &mut Tx, id: &str) -> Result<Vec<ServiceRecord>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT service, build_id, manifest_digest, status, started_at, healthy_at \
         FROM deployment_service WHERE deployment_id = $1 ORDER BY service",
    )
    .bind(id.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(ServiceRecord {
                service: r.try_get(0)?,
                build_id: r.try_get(1)?,
                manifest_digest: r.try_get(2)?,
                status: decode(r.try_get(3)?, ServiceStatus::parse)?,
                started_at: r.try_get(4)?,
                healthy_at: r.try_get(5)?,
            })
        })
        .collect()
}

/// Records that a service started on `port` (the first start sets `started_at`).
pub async fn service_started(
    tx: &mut Tx,
    id: &str,
    service: &str,
    port: Option<u16>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE deployment_service SET status = $1, port = $2, \
         started_at = COALESCE(started_at, $3) WHERE deployment_id = $4 AND service = $5",
    )
    .bind(ServiceStatus::Starting.as_str())
    .bind(port.map(i64::from))
    .bind(now_millis())
    .bind(id.to_owned())
    .bind(service.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Sets a service's status (`healthy` also records `healthy_at`).
pub async fn set_service_status(
    tx: &mut Tx,
    id: &str,
    service: &str,
    new_status: ServiceStatus,
) -> Result<(), sqlx::Error> {
    let healthy_at = (new_status == ServiceStatus::Healthy).then(now_millis);
    sqlx::query(
        "UPDATE deployment_service SET status = $1, healthy_at = COALESCE(healthy_at, $2) \
         WHERE deployment_id = $3 AND service = $4",
    )
    .bind(new_status.as_str())
    .bind(healthy_at)
    .bind(id.to_owned())
    .bind(service.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Moves deployment `id` to `new_status` with `reason`; services that are not `failed` follow
/// (`healthy` for RUNNING, `stopped` otherwise). `finished_at` is set on RUNNING and FAILED.
pub async fn finish(
    tx: &mut Tx,
    id: &str,
    new_status: DeploymentStatus,
    reason: Option<&str>,
) -> Result<(), sqlx::Error> {
    let now = now_millis();
    let finished = matches!(
        new_status,
        DeploymentStatus::Running | DeploymentStatus::Failed
    )
    .then_some(now);
    sqlx::query(
        "UPDATE deployment SET status = $1, reason = COALESCE($2, reason), \
         finished_at = COALESCE(finished_at, $3), updated_at = $4 WHERE id = $5",
    )
    .bind(new_status.as_str())
    .bind(reason.map(str::to_owned))
    .bind(finished)
    .bind(now)
    .bind(id.to_owned())
    .execute(&mut **tx)
    .await?;
    if new_status != DeploymentStatus::Running {
        sqlx::query(
            "UPDATE deployment_service SET status = $1 WHERE deployment_id = $2 AND status <> $3",
        )
        .bind(ServiceStatus::Stopped.as_str())
        .bind(id.to_owned())
        .bind(ServiceStatus::Failed.as_str())
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Marks every `RUNNING` or `deploying` deployment of `app_id` except `keep` as
/// `new_status` (`superseded` after a newer one is healthy, `stopped` on disable).
pub async fn retire_others(
    tx: &mut Tx,
    app_id: &str,
    keep: Option<&str>,
    new_status: DeploymentStatus,
    reason: Option<&str>,
) -> Result<(), sqlx::Error> {
    let rows = sqlx::query("SELECT id FROM deployment WHERE app_id = $1 AND status IN ($2, $3)")
        .bind(app_id.to_owned())
        .bind(DeploymentStatus::Running.as_str())
        .bind(DeploymentStatus::Deploying.as_str())
        .fetch_all(&mut **tx)
        .await?;
    for row in rows {
        let id: String = row.try_get(0)?;
        if Some(id.as_str()) != keep {
            finish(tx, &id, new_status, reason).await?;
        }
    }
    Ok(())
}

/// At start-up: deployments a stop or crash left `deploying` become `FAILED` with `reason`;
/// returns the ids of the apps concerned.
pub async fn fail_unfinished(tx: &mut Tx, reason: &str) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query("SELECT id, app_id FROM deployment WHERE status = $1")
        .bind(DeploymentStatus::Deploying.as_str())
        .fetch_all(&mut **tx)
        .await?;
    let mut apps = Vec::new();
    for row in rows {
        let id: String = row.try_get(0)?;
        finish(tx, &id, DeploymentStatus::Failed, Some(reason)).await?;
        apps.push(row.try_get(1)?);
    }
    Ok(apps)
}

/// The `RUNNING` deployments of enabled apps (what a restart brings back), oldest first.
pub async fn running_of_enabled_apps(tx: &mut Tx) -> Result<Vec<DeploymentRecord>, sqlx::Error> {
    let sql = "SELECT d.id, d.app_id, d.status, d.reason, d.devfile, d.created_at, \
               d.finished_at, d.cause, d.started_by, d.devfile_digest, d.rollback_of, \
               d.commit_sha, d.commit_branch, d.commit_author, d.commit_subject \
               FROM deployment d JOIN app a ON a.id = d.app_id \
               WHERE d.status = $1 AND a.enabled = 1 ORDER BY d.created_at, d.id";
    let rows = sqlx::query(sql)
        .bind(DeploymentStatus::Running.as_str())
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(record).collect()
}

/// Deletes every deployment of `app_id` with its service rows.
pub async fn delete_for_app(tx: &mut Tx, app_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "DELETE FROM deployment_secret WHERE deployment_id IN \
         (SELECT id FROM deployment WHERE app_id = $1)",
    )
    .bind(app_id.to_owned())
    .execute(&mut **tx)
    .await?;
    sqlx::query(
        "DELETE FROM deployment_service WHERE deployment_id IN \
         (SELECT id FROM deployment WHERE app_id = $1)",
    )
    .bind(app_id.to_owned())
    .execute(&mut **tx)
    .await?;
    sqlx::query("DELETE FROM deployment WHERE app_id = $1")
        .bind(app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}
