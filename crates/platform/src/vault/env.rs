//! App secrets as a service's environment at deploy time. A service whose devfile component
//! lists `attributes.secrets` gets those app secrets (a listed path that does not exist
//! fails the deployment, naming it); a service that lists none gets every app secret. Each
//! key of a secret's latest `data` becomes one variable: the key itself when it is already a
//! valid name (`[A-Za-z_][A-Za-z0-9_]*`), else upper-cased with every other character turned
//! into `_`. When two secrets share a key, the later path (in listed order, or path order)
//! wins. `PORT` and the `<DEP>_URL` variables the platform sets are never overridden.
//! Every injection is recorded in the audit trail (action `inject`, by `platform-deployer`).

use std::collections::BTreeMap;

use super::Vault;
use super::payload::env_text;
use crate::db::Db;
use crate::store::{apps, audit, secrets};

/// The audit trail's `user_id` for deploy-time reads.
pub const DEPLOYER: &str = "platform-deployer";

/// An environment variable name for a secret's key.
pub fn variable_name(key: &str) -> String {
    let valid = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        return key.to_owned();
    }
    let mut name = slipway_services::binding::upper_snake(key);
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

/// What a service receives from the app's secrets: its environment variables, and the
/// secret paths with the versions they came from (what the deployment records).
#[derive(Debug, Default)]
pub struct ServiceSecrets {
    /// `(variable, value)` pairs.
    pub env: Vec<(String, String)>,
    /// `(path, version)` of every secret used.
    pub used: Vec<(String, i64)>,
}

/// The variables a service of `app_id` receives from the app's secrets (`wanted`: the
/// service's `secrets` attribute, empty for all), at their latest versions, or, for a
/// rollback, exactly the `pinned` paths at the recorded versions. The error is the reason
/// the deployment fails.
pub async fn for_service(
    db: &Db,
    vault: &Vault,
    app_id: &str,
    service: &str,
    wanted: &[String],
    pinned: Option<&BTreeMap<String, i64>>,
) -> Result<ServiceSecrets, String> {
    let failure = |e: sqlx::Error| format!("cannot read the app's secrets: {e}");
    let mut tx = db.begin_write().await.map_err(failure)?;
    let account_id = apps::account_of(&mut tx, app_id)
        .await
        .map_err(failure)?
        .ok_or_else(|| "the app was deleted".to_owned())?;
    let all = secrets::all_of(&mut tx, "app", app_id)
        .await
        .map_err(failure)?;
    let chosen: Vec<(&secrets::SecretRow, i64)> = if let Some(pinned) = pinned {
        let mut out = Vec::new();
        // The binding is the deployer's to give, at its current version.
        for (path, version) in pinned
            .iter()
            .filter(|(p, _)| !p.starts_with(super::owned::PLATFORM_PREFIX))
        {
            let secret = all.iter().find(|s| s.path == *path).ok_or_else(|| {
                format!(
                    "app secret {path:?} (version {version}) that this deployment ran with was \
                     deleted"
                )
            })?;
            out.push((secret, *version));
        }
        out
    } else if wanted.is_empty() {
        // The platform's own secrets (resource credentials and bindings) are given to
        // each service explicitly by the deployer.
        all.iter()
            .filter(|s| !s.path.starts_with(super::owned::PLATFORM_PREFIX))
            .map(|s| (s, s.current_version))
            .collect()
    } else {
        let mut out = Vec::new();
        for path in wanted {
            match all.iter().find(|s| s.path == *path) {
                Some(s) => out.push((s, s.current_version)),
                None => {
                    return Err(format!(
                        "service {service} lists app secret {path:?} in attributes.secrets, \
                         but the app has no secret at that path; create it (create_secret with \
                         secret_type app) or remove it from the devfile"
                    ));
                }
            }
        }
        out
    };
    let mut vars = BTreeMap::new();
    let mut used = Vec::new();
    for (secret, version) in &chosen {
        let row = secrets::version(&mut tx, &secret.id, *version)
            .await
            .map_err(failure)?
            .ok_or_else(|| {
                format!(
                    "version {version} of app secret {:?} is gone (only the newest versions \
                     are kept)",
                    secret.path
                )
            })?;
        used.push((secret.path.clone(), row.version));
        let content = vault
            .open_content(&secret.id, row.version, &row.sealed)
            .map_err(|e| format!("app secret {:?}: {e}", secret.path))?;
        for (key, value) in &content.data {
            vars.insert(variable_name(key), env_text(value));
        }
        audit::record(
            &mut tx,
            &audit::Entry {
                account_id: account_id.clone(),
                user_id: DEPLOYER.to_owned(),
                action: "inject",
                scope: "app".to_owned(),
                app_id: Some(app_id.to_owned()),
                path: Some(secret.path.clone()),
                version: Some(row.version),
                outcome: "success".to_owned(),
            },
        )
        .await
        .map_err(failure)?;
    }
    tx.commit().await.map_err(failure)?;
    Ok(ServiceSecrets {
        env: vars.into_iter().collect(),
        used,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_valid_variable_names() {
        assert_eq!(variable_name("DATABASE_URL"), "DATABASE_URL");
        assert_eq!(variable_name("password"), "password");
        assert_eq!(variable_name("api-key"), "API_KEY");
        assert_eq!(variable_name("db.user"), "DB_USER");
        assert_eq!(variable_name("1token"), "_1TOKEN");
    }
}
