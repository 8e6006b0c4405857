//! SQL of the secrets vault: one `secret` row per path in a namespace (scope + owner), its
//! sealed versions in `secret_version`. Nothing here sees a plaintext value.

use sqlx::Row;
use sqlx::any::AnyRow;

use crate::db::{Tx, now_millis};
use crate::model::Sealed;

/// Most versions kept per secret; the oldest beyond this are dropped on update.
pub const MAX_VERSIONS: i64 = 100;

/// A secret's row (no value).
#[derive(Debug, Clone)]
pub struct SecretRow {
    /// Row id; part of every version's associated data.
    pub id: String,
    /// The path.
    pub path: String,
    /// Latest version number.
    pub current_version: i64,
    /// Who created it.
    pub created_by: String,
    /// Epoch ms.
    pub created_at: i64,
    /// Epoch ms of the latest version.
    pub updated_at: i64,
}

/// A sealed version.
#[derive(Debug, Clone)]
pub struct VersionRow {
    /// Its number, from 1.
    pub version: i64,
    /// The sealed `{"data", "metadata"}`.
    pub sealed: Sealed,
    /// Epoch ms.
    pub created_at: i64,
}

const COLUMNS: &str = "id, path, current_version, created_by, created_at, updated_at";

fn secret_row(r: &AnyRow) -> Result<SecretRow, sqlx::Error> {
    Ok(SecretRow {
        id: r.try_get(0)?,
        path: r.try_get(1)?,
        current_version: r.try_get(2)?,
        created_by: r.try_get(3)?,
        created_at: r.try_get(4)?,
        updated_at: r.try_get(5)?,
    })
}

/// The secret at `path` in the namespace, if any.
pub async fn find(
    tx: &mut Tx,
    scope: &str,
    owner_id: &str,
    path: &str,
) -> Result<Option<SecretRow>, sqlx::Error> {
    let sql =
        format!("SELECT {COLUMNS} FROM secret WHERE scope = $1 AND owner_id = $2 AND path = $3");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(scope.to_owned())
        .bind(owner_id.to_owned())
        .bind(path.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(secret_row).transpose()
}

/// Inserts a new secret at version 1 (without its version row; see [`insert_version`]).
/// A taken path is a unique violation.
pub async fn insert(
    tx: &mut Tx,
    account_id: &str,
    scope: &str,
    owner_id: &str,
    path: &str,
    user_id: &str,
) -> Result<SecretRow, sqlx::Error> {
    let id = uuid::Uuid::new_v4().to_string();
    let now = now_millis();
    sqlx::query(
        "INSERT INTO secret (id, account_id, scope, owner_id, path, current_version, created_by, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $7)",
    )
    .bind(id.clone())
    .bind(account_id.to_owned())
    .bind(scope.to_owned())
    .bind(owner_id.to_owned())
    .bind(path.to_owned())
    .bind(user_id.to_owned())
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(SecretRow {
        id,
        path: path.to_owned(),
        current_version: 1,
        created_by: user_id.to_owned(),
        created_at: now,
        updated_at: now,
    })
}

/// Takes the next version number of a secret. The `UPDATE` locks the row, so concurrent
/// updates of one secret queue up and each gets its own number.
pub async fn next_version(tx: &mut Tx, id: &str) -> Result<Option<i64>, sqlx::Error> {
    let row = sqlx::query(
        "UPDATE secret SET current_version = current_version + 1, updated_at = $1 \
         WHERE id = $2 RETURNING current_version",
    )
    .bind(now_millis())
    .bind(id.to_owned())
    .fetch_optional(&mut **tx)
    .await?;
    row.map(|r| r.try_get(0)).transpose()
}

/// Stores a sealed version.
pub async fn insert_version(
    tx: &mut Tx,
    secret_id: &str,
    version: i64,
    sealed: &Sealed,
    user_id: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO secret_version (secret_id, version, key_id, nonce, ciphertext, created_by, \
         created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(secret_id.to_owned())
    .bind(version)
    .bind(sealed.key_id.clone())
    .bind(sealed.nonce.clone())
    .bind(sealed.ciphertext.clone())
    .bind(user_id.to_owned())
    .bind(now_millis())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Drops versions older than the newest [`MAX_VERSIONS`], except those a deployment ran
/// with (a rollback needs them; `slipway platform prune` decides when those go).
pub async fn prune(tx: &mut Tx, secret_id: &str, current: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "DELETE FROM secret_version WHERE secret_id = $1 AND version <= $2 AND NOT EXISTS (\
         SELECT 1 FROM secret s JOIN deployment d ON d.app_id = s.owner_id \
         JOIN deployment_secret ds ON ds.deployment_id = d.id \
         WHERE s.id = secret_version.secret_id AND s.scope = 'app' \
         AND ds.secret_path = s.path AND ds.version = secret_version.version)",
    )
    .bind(secret_id.to_owned())
    .bind(current - MAX_VERSIONS)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// One stored version of an app secret, for the retention pass (no value).
#[derive(Debug, Clone)]
pub struct AppSecretVersion {
    /// The secret's row id.
    pub secret_id: String,
    /// The app.
    pub app_id: String,
    /// The path.
    pub path: String,
    /// The secret's latest version.
    pub current_version: i64,
    /// This version.
    pub version: i64,
}

/// Every stored version of every app secret.
pub async fn app_secret_versions(tx: &mut Tx) -> Result<Vec<AppSecretVersion>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT s.id, s.owner_id, s.path, s.current_version, v.version FROM secret s \
         JOIN secret_version v ON v.secret_id = s.id WHERE s.scope = 'app' \
         ORDER BY s.owner_id, s.path, v.version",
    )
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(AppSecretVersion {
                secret_id: r.try_get(0)?,
                app_id: r.try_get(1)?,
                path: r.try_get(2)?,
                current_version: r.try_get(3)?,
                version: r.try_get(4)?,
            })
        })
        .collect()
}

/// Deletes one version of a secret.
pub async fn delete_version(tx: &mut Tx, secret_id: &str, version: i64) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM secret_version WHERE secret_id = $1 AND version = $2")
        .bind(secret_id.to_owned())
        .bind(version)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// One version of a secret.
pub async fn version(
    tx: &mut Tx,
    secret_id: &str,
    version: i64,
) -> Result<Option<VersionRow>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT version, key_id, nonce, ciphertext, created_at FROM secret_version \
         WHERE secret_id = $1 AND version = $2",
    )
    .bind(secret_id.to_owned())
    .bind(version)
    .fetch_optional(&mut **tx)
    .await?;
    row.map(|r| {
        Ok(VersionRow {
            version: r.try_get(0)?,
            sealed: super::sealed(&r, 1)?,
            created_at: r.try_get(4)?,
        })
    })
    .transpose()
}

/// The version numbers a secret still has, oldest first.
pub async fn version_numbers(tx: &mut Tx, secret_id: &str) -> Result<Vec<i64>, sqlx::Error> {
    let rows =
        sqlx::query("SELECT version FROM secret_version WHERE secret_id = $1 ORDER BY version")
            .bind(secret_id.to_owned())
            .fetch_all(&mut **tx)
            .await?;
    rows.iter().map(|r| r.try_get(0)).collect()
}

/// Up to `limit` secrets of a namespace whose path starts with `prefix`, in path order,
/// after `after`.
pub async fn list(
    tx: &mut Tx,
    scope: &str,
    owner_id: &str,
    prefix: &str,
    after: &str,
    limit: u32,
) -> Result<Vec<SecretRow>, sqlx::Error> {
    // `substr` rather than LIKE: `_` is a legal path character and a LIKE wildcard.
    let sql = format!(
        "SELECT {COLUMNS} FROM secret WHERE scope = $1 AND owner_id = $2 \
         AND substr(path, 1, CAST($3 AS INTEGER)) = $4 AND path > $5 ORDER BY path LIMIT $6"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(scope.to_owned())
        .bind(owner_id.to_owned())
        .bind(i32::try_from(prefix.chars().count()).unwrap_or(i32::MAX))
        .bind(prefix.to_owned())
        .bind(after.to_owned())
        .bind(i64::from(limit))
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(secret_row).collect()
}

/// Every secret of a namespace (deploy-time injection), in path order.
pub async fn all_of(
    tx: &mut Tx,
    scope: &str,
    owner_id: &str,
) -> Result<Vec<SecretRow>, sqlx::Error> {
    list(tx, scope, owner_id, "", "", u32::MAX).await
}

/// Deletes a secret and every version.
pub async fn delete(tx: &mut Tx, secret_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM secret_version WHERE secret_id = $1")
        .bind(secret_id.to_owned())
        .execute(&mut **tx)
        .await?;
    sqlx::query("DELETE FROM secret WHERE id = $1")
        .bind(secret_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Deletes every app secret of `app_id` (the app is being deleted).
pub async fn delete_app_secrets(tx: &mut Tx, app_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "DELETE FROM secret_version WHERE secret_id IN \
         (SELECT id FROM secret WHERE scope = 'app' AND owner_id = $1)",
    )
    .bind(app_id.to_owned())
    .execute(&mut **tx)
    .await?;
    sqlx::query("DELETE FROM secret WHERE scope = 'app' AND owner_id = $1")
        .bind(app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Every sealed version of every secret (key rotation): `(secret_id, version, sealed)`.
pub async fn all_sealed(tx: &mut Tx) -> Result<Vec<(String, i64, Sealed)>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT secret_id, version, key_id, nonce, ciphertext FROM secret_version \
         ORDER BY secret_id, version",
    )
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, super::sealed(r, 2)?)))
        .collect()
}

/// The master key ids stored versions were sealed with.
pub async fn key_ids_in_use(tx: &mut Tx) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query("SELECT DISTINCT key_id FROM secret_version")
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(|r| r.try_get(0)).collect()
}

/// Takes a secret's row lock until the transaction ends (a no-op update, portable), so a
/// delete and a concurrent update of one secret run one after the other.
pub async fn lock(tx: &mut Tx, secret_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE secret SET updated_at = updated_at WHERE id = $1")
        .bind(secret_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Replaces a version's sealed value (key rotation).
pub async fn reseal(
    tx: &mut Tx,
    secret_id: &str,
    version: i64,
    sealed: &Sealed,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE secret_version SET key_id = $1, nonce = $2, ciphertext = $3 \
         WHERE secret_id = $4 AND version = $5",
    )
    .bind(sealed.key_id.clone())
    .bind(sealed.nonce.clone())
    .bind(sealed.ciphertext.clone())
    .bind(secret_id.to_owned())
    .bind(version)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
