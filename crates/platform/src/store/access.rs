//! Access control: resources (an app's resource has the app's UUID as id) and the roles
//! users hold on them. A user sees an app only through a role on its resource, and only
//! inside the user's own account.

use sqlx::Row;

use crate::db::{Tx, now_millis};
use crate::model::Role;

/// Creates the access-control resource `id` of `kind` in `account_id`.
pub async fn create_resource(
    tx: &mut Tx,
    id: &str,
    kind: &str,
    account_id: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO acl_resource (id, kind, account_id, created_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(id.to_owned())
    .bind(kind.to_owned())
    .bind(account_id.to_owned())
    .bind(now_millis())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Gives `user_id` the role `role` on resource `resource_id`.
pub async fn grant(
    tx: &mut Tx,
    resource_id: &str,
    user_id: &str,
    role: Role,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO acl_grant (resource_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(resource_id.to_owned())
    .bind(user_id.to_owned())
    .bind(role.as_str())
    .bind(now_millis())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The strongest role `user_id` holds on `resource_id` inside `account_id`, if any.
pub async fn role_of(
    tx: &mut Tx,
    resource_id: &str,
    user_id: &str,
    account_id: &str,
) -> Result<Option<Role>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT g.role FROM acl_grant g JOIN acl_resource r ON r.id = g.resource_id \
         WHERE g.resource_id = $1 AND g.user_id = $2 AND r.account_id = $3",
    )
    .bind(resource_id.to_owned())
    .bind(user_id.to_owned())
    .bind(account_id.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    let mut best = None;
    for row in rows {
        let name: String = row.try_get(0)?;
        best = best.max(Role::parse(&name));
    }
    Ok(best)
}

/// A grant as `list_app_permissions` shows it.
#[derive(Debug, Clone, serde::Serialize, PartialEq, Eq)]
pub struct Permission {
    /// The user's UUID.
    pub user_id: String,
    /// E-mail address.
    pub email: String,
    /// Display name.
    pub name: String,
    /// `owner`, `editor` or `viewer`.
    pub role: String,
}

/// Every grant on a resource, strongest role first, then by e-mail.
pub async fn list_grants(tx: &mut Tx, resource_id: &str) -> Result<Vec<Permission>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT g.user_id, u.email, u.name, g.role FROM acl_grant g \
         JOIN account_user u ON u.id = g.user_id WHERE g.resource_id = $1",
    )
    .bind(resource_id.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    let mut out = rows
        .iter()
        .map(|r| {
            Ok(Permission {
                user_id: r.try_get(0)?,
                email: r.try_get(1)?,
                name: r.try_get(2)?,
                role: r.try_get(3)?,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    out.sort_by(|a, b| {
        Role::parse(&b.role)
            .cmp(&Role::parse(&a.role))
            .then_with(|| a.email.cmp(&b.email))
    });
    Ok(out)
}

/// Makes `role` the one role `user_id` holds on `resource_id` (replacing any other).
pub async fn set_role(
    tx: &mut Tx,
    resource_id: &str,
    user_id: &str,
    role: Role,
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM acl_grant WHERE resource_id = $1 AND user_id = $2")
        .bind(resource_id.to_owned())
        .bind(user_id.to_owned())
        .execute(&mut **tx)
        .await?;
    grant(tx, resource_id, user_id, role).await
}

/// Removes `role` from `user_id` on `resource_id`; false when it was not held.
pub async fn revoke(
    tx: &mut Tx,
    resource_id: &str,
    user_id: &str,
    role: Role,
) -> Result<bool, sqlx::Error> {
    let done =
        sqlx::query("DELETE FROM acl_grant WHERE resource_id = $1 AND user_id = $2 AND role = $3")
            .bind(resource_id.to_owned())
            .bind(user_id.to_owned())
            .bind(role.as_str())
            .execute(&mut **tx)
            .await?;
    Ok(done.rows_affected() > 0)
}

/// Takes the resource's row lock until the transaction ends (a no-op update: portable, where
/// `SELECT … FOR UPDATE` is not).
pub async fn lock_resource(tx: &mut Tx, resource_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE acl_resource SET created_at = created_at WHERE id = $1")
        .bind(resource_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// How many users hold the owner role on a resource.
pub async fn owner_count(tx: &mut Tx, resource_id: &str) -> Result<i64, sqlx::Error> {
    let row =
        sqlx::query("SELECT COUNT(*) FROM acl_grant WHERE resource_id = $1 AND role = 'owner'")
            .bind(resource_id.to_owned())
            .fetch_one(&mut **tx)
            .await?;
    row.try_get(0)
}

/// An app whose only owner is the person being removed.
#[derive(Debug, Clone)]
pub struct SoleOwnership {
    /// The app's UUID (also its resource's id).
    pub app_id: String,
    /// The app's name.
    pub name: String,
}

/// The resources on which `user_id` holds the owner role.
pub async fn owned(tx: &mut Tx, user_id: &str) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT resource_id FROM acl_grant WHERE user_id = $1 AND role = 'owner' \
         ORDER BY resource_id",
    )
    .bind(user_id.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    rows.iter().map(|r| r.try_get(0)).collect()
}

/// The apps of which `user_id` is the only owner (lock them first: [`owned`]).
pub async fn solely_owned(tx: &mut Tx, user_id: &str) -> Result<Vec<SoleOwnership>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT a.id, a.name FROM acl_grant g JOIN app a ON a.id = g.resource_id \
         WHERE g.user_id = $1 AND g.role = 'owner' AND (SELECT COUNT(*) FROM acl_grant o \
         WHERE o.resource_id = g.resource_id AND o.role = 'owner') = 1 ORDER BY a.name",
    )
    .bind(user_id.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(SoleOwnership {
                app_id: r.try_get(0)?,
                name: r.try_get(1)?,
            })
        })
        .collect()
}

/// Removes every role `user_id` holds on any resource.
pub async fn revoke_all(tx: &mut Tx, user_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM acl_grant WHERE user_id = $1")
        .bind(user_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Removes a resource and every grant on it.
pub async fn delete_resource(tx: &mut Tx, resource_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM acl_grant WHERE resource_id = $1")
        .bind(resource_id.to_owned())
        .execute(&mut **tx)
        .await?;
    sqlx::query("DELETE FROM acl_resource WHERE id = $1")
        .bind(resource_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_rank_and_round_trip() {
        assert!(Role::Owner > Role::Editor && Role::Editor > Role::Viewer);
        for r in [Role::Viewer, Role::Editor, Role::Owner] {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert_eq!(Role::parse("admin"), None);
    }
}
