//! The audit trail of secret operations: who (user id), what (action, scope, app, path,
//! version), when, and how it ended. Never a value.

use serde::Serialize;
use sqlx::Row;

use crate::db::{Tx, now_millis, rfc3339};

/// One audit entry to record.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The caller's account.
    pub account_id: String,
    /// The caller (or `platform-deployer` for deploy-time reads).
    pub user_id: String,
    /// `create`, `get`, `list`, `update`, `delete`, `share` or `inject`.
    pub action: &'static str,
    /// `user`, `app` or `shared`.
    pub scope: String,
    /// The app of an app secret.
    pub app_id: Option<String>,
    /// The path (for a list: the prefix).
    pub path: Option<String>,
    /// The version written or read.
    pub version: Option<i64>,
    /// `success`, or the error code (`permission_denied`, `not_found`, `already_exists`, …).
    pub outcome: String,
}

/// An audit entry as `GET /v1/secrets/audit` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct View {
    /// Entry id.
    pub id: String,
    /// Who.
    pub user_id: String,
    /// What.
    pub action: String,
    /// Scope of the secret.
    pub secret_type: String,
    /// App of an app secret.
    pub app_id: Option<String>,
    /// Path (or list prefix).
    pub secret_path: Option<String>,
    /// Version concerned.
    pub version: Option<i64>,
    /// How it ended.
    pub outcome: String,
    /// RFC 3339, UTC.
    pub at: String,
    #[serde(skip)]
    pub(crate) at_millis: i64,
}

/// Records `entry`.
pub async fn record(tx: &mut Tx, entry: &Entry) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO secret_audit (id, account_id, user_id, action, scope, app_id, path, version, \
         outcome, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(entry.account_id.clone())
    .bind(entry.user_id.clone())
    .bind(entry.action)
    .bind(entry.scope.clone())
    .bind(entry.app_id.clone())
    .bind(entry.path.clone())
    .bind(entry.version)
    .bind(entry.outcome.clone())
    .bind(now_millis())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Up to `limit` entries `viewer` may see, newest first, older than `before` (`(at, id)`):
/// their own entries; and, for the account's owner (`account_owner`), everyone's entries on
/// shared secrets and on the secrets of apps the owner holds a role on — never another
/// member's user-scope entries (their paths are private too).
pub async fn list(
    tx: &mut Tx,
    account_id: &str,
    viewer: &str,
    account_owner: bool,
    before: Option<(i64, String)>,
    limit: u32,
) -> Result<Vec<View>, sqlx::Error> {
    let (at, id) = before.unwrap_or((i64::MAX, String::new()));
    let rows = sqlx::query(
        "SELECT id, user_id, action, scope, app_id, path, version, outcome, at FROM secret_audit \
         WHERE account_id = $1 AND (user_id = $2 OR ($6 = 1 AND (scope = 'shared' \
         OR (scope = 'app' AND app_id IN (SELECT resource_id FROM acl_grant WHERE user_id = $2))))) \
         AND (at < $3 OR (at = $3 AND id < $4)) \
         ORDER BY at DESC, id DESC LIMIT $5",
    )
    .bind(account_id.to_owned())
    .bind(viewer.to_owned())
    .bind(at)
    .bind(id)
    .bind(i64::from(limit))
    .bind(i64::from(account_owner))
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| {
            let at: i64 = r.try_get(8)?;
            Ok(View {
                id: r.try_get(0)?,
                user_id: r.try_get(1)?,
                action: r.try_get(2)?,
                secret_type: r.try_get(3)?,
                app_id: r.try_get(4)?,
                secret_path: r.try_get(5)?,
                version: r.try_get(6)?,
                outcome: r.try_get(7)?,
                at: rfc3339(at),
                at_millis: at,
            })
        })
        .collect()
}
