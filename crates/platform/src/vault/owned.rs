//! App secrets the platform itself writes and reads: the credentials of an app's backing
//! resources and the variables they bind (under [`PLATFORM_PREFIX`]). They are ordinary
//! versioned app secrets (sealed, audited on injection, listed to the app's editors), so a
//! deployment records which version it ran with; the platform is their only writer.

use serde_json::{Map, Value};

use super::{Content, Vault};
use crate::db::Tx;
use crate::store::secrets;

/// The path prefix of the secrets the platform manages. A service's "every app secret"
/// leaves these out: the deployer gives each service its binding explicitly.
pub const PLATFORM_PREFIX: &str = "slipway/";

/// The user id recorded as the writer of platform-managed secrets.
pub const WRITER: &str = "platform-resources";

/// The latest `data` of the app secret at `path`, with its version; `None` when there is none.
pub async fn read(
    tx: &mut Tx,
    vault: &Vault,
    app_id: &str,
    path: &str,
) -> Result<Option<(Map<String, Value>, i64)>, String> {
    let failure = |e: sqlx::Error| format!("cannot read app secret {path:?}: {e}");
    let Some(row) = secrets::find(tx, "app", app_id, path)
        .await
        .map_err(failure)?
    else {
        return Ok(None);
    };
    let Some(version) = secrets::version(tx, &row.id, row.current_version)
        .await
        .map_err(failure)?
    else {
        return Ok(None);
    };
    let content = vault
        .open_content(&row.id, version.version, &version.sealed)
        .map_err(|e| format!("app secret {path:?}: {e}"))?;
    Ok(Some((content.data, version.version)))
}

/// Writes `data` as the next version of the app secret at `path` (version 1 when new);
/// returns the version.
pub async fn write(
    tx: &mut Tx,
    vault: &Vault,
    account_id: &str,
    app_id: &str,
    path: &str,
    data: Map<String, Value>,
) -> Result<i64, String> {
    let failure = |e: sqlx::Error| format!("cannot write app secret {path:?}: {e}");
    let content = Content {
        data,
        metadata: Map::new(),
    };
    let (id, version) = match secrets::find(tx, "app", app_id, path)
        .await
        .map_err(failure)?
    {
        Some(row) => {
            let version = secrets::next_version(tx, &row.id)
                .await
                .map_err(failure)?
                .ok_or_else(|| format!("app secret {path:?} vanished"))?;
            (row.id, version)
        }
        None => {
            let row = secrets::insert(tx, account_id, "app", app_id, path, WRITER)
                .await
                .map_err(failure)?;
            (row.id, 1)
        }
    };
    let sealed = vault
        .seal(&id, version, &content)
        .map_err(|e| format!("cannot seal app secret {path:?}: {e}"))?;
    secrets::insert_version(tx, &id, version, &sealed, WRITER)
        .await
        .map_err(failure)?;
    secrets::prune(tx, &id, version).await.map_err(failure)?;
    Ok(version)
}

/// Deletes the app secret at `path`, if there is one.
pub async fn remove(tx: &mut Tx, app_id: &str, path: &str) -> Result<(), String> {
    let failure = |e: sqlx::Error| format!("cannot delete app secret {path:?}: {e}");
    if let Some(row) = secrets::find(tx, "app", app_id, path)
        .await
        .map_err(failure)?
    {
        secrets::delete(tx, &row.id).await.map_err(failure)?;
    }
    Ok(())
}
