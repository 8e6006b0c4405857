//! `account_user` rows. A removed person keeps their row (`removed_at` set) so history still
//! names them, but gives up their e-mail address (kept in `removed_email`) and sign-in link;
//! every query of the living filters on `removed_at IS NULL`.

use sqlx::Row;
use sqlx::any::AnyRow;

use crate::model::AccountRole;
use slipway_server::db::Tx;

/// A person's row.
#[derive(Debug, Clone)]
pub(crate) struct PersonRow {
    pub id: String,
    pub account_id: String,
    pub email: String,
    pub name: String,
    pub role: AccountRole,
    pub created_at: i64,
    pub last_active_at: Option<i64>,
    pub removed_at: Option<i64>,
}

const COLUMNS: &str =
    "id, account_id, email, name, account_role, created_at, last_active_at, removed_at";

fn row(r: &AnyRow) -> Result<PersonRow, sqlx::Error> {
    let role: String = r.try_get(4)?;
    Ok(PersonRow {
        id: r.try_get(0)?,
        account_id: r.try_get(1)?,
        email: r.try_get(2)?,
        name: r.try_get(3)?,
        role: crate::model::role_from_stored(&role),
        created_at: r.try_get(5)?,
        last_active_at: r.try_get(6)?,
        removed_at: r.try_get(7)?,
    })
}

/// Inserts a person; `Err` with a unique violation when the e-mail is taken.
pub(crate) async fn insert(tx: &mut Tx, person: &PersonRow) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO account_user (id, account_id, email, name, account_role, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(person.id.clone())
    .bind(person.account_id.clone())
    .bind(person.email.clone())
    .bind(person.name.clone())
    .bind(person.role.as_str())
    .bind(person.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The living person of `account_id` that `ident` names: a UUID, or an e-mail address in
/// any case.
pub(crate) async fn find_active(
    tx: &mut Tx,
    account_id: &str,
    ident: &str,
) -> Result<Option<PersonRow>, sqlx::Error> {
    let ident = ident.trim();
    let by_id = uuid::Uuid::parse_str(ident).is_ok();
    let sql = if by_id {
        format!(
            "SELECT {COLUMNS} FROM account_user \
             WHERE account_id = $1 AND id = $2 AND removed_at IS NULL"
        )
    } else {
        format!(
            "SELECT {COLUMNS} FROM account_user \
             WHERE account_id = $1 AND lower(email) = lower($2) AND removed_at IS NULL"
        )
    };
    let ident = if by_id {
        ident.to_ascii_lowercase()
    } else {
        ident.to_owned()
    };
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id.to_owned())
        .bind(ident)
        .fetch_optional(&mut **tx)
        .await?
        .as_ref()
        .map(row)
        .transpose()
}

/// The person with this e-mail in any account, living or removed.
pub(crate) async fn find_by_email(
    tx: &mut Tx,
    email: &str,
) -> Result<Option<PersonRow>, sqlx::Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM account_user WHERE lower(email) = lower($1)"
    )))
    .bind(email.to_owned())
    .fetch_optional(&mut **tx)
    .await?
    .as_ref()
    .map(row)
    .transpose()
}

/// The person by UUID, living or removed.
pub(crate) async fn find_by_id(tx: &mut Tx, id: &str) -> Result<Option<PersonRow>, sqlx::Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM account_user WHERE id = $1"
    )))
    .bind(id.to_owned())
    .fetch_optional(&mut **tx)
    .await?
    .as_ref()
    .map(row)
    .transpose()
}

/// The living person linked to this OpenID Connect subject.
pub(crate) async fn find_by_subject(
    tx: &mut Tx,
    issuer: &str,
    subject: &str,
) -> Result<Option<PersonRow>, sqlx::Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM account_user WHERE oidc_issuer = $1 AND oidc_subject = $2"
    )))
    .bind(issuer.to_owned())
    .bind(subject.to_owned())
    .fetch_optional(&mut **tx)
    .await?
    .as_ref()
    .map(row)
    .transpose()
}

/// The OpenID Connect subject a person is linked to, if any.
pub(crate) async fn subject_of(
    tx: &mut Tx,
    id: &str,
) -> Result<Option<(String, String)>, sqlx::Error> {
    let r = sqlx::query("SELECT oidc_issuer, oidc_subject FROM account_user WHERE id = $1")
        .bind(id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    Ok(match r {
        Some(r) => match (r.try_get(0)?, r.try_get(1)?) {
            (Some(issuer), Some(subject)) => Some((issuer, subject)),
            _ => None,
        },
        None => None,
    })
}

/// Links a person to an OpenID Connect subject.
pub(crate) async fn link_subject(
    tx: &mut Tx,
    id: &str,
    issuer: &str,
    subject: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE account_user SET oidc_issuer = $1, oidc_subject = $2 WHERE id = $3")
        .bind(issuer.to_owned())
        .bind(subject.to_owned())
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The account's living people, by e-mail.
pub(crate) async fn list_active(
    tx: &mut Tx,
    account_id: &str,
) -> Result<Vec<PersonRow>, sqlx::Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM account_user WHERE account_id = $1 AND removed_at IS NULL \
         ORDER BY email, id"
    )))
    .bind(account_id.to_owned())
    .fetch_all(&mut **tx)
    .await?
    .iter()
    .map(row)
    .collect()
}

/// How many living admins the account has.
pub(crate) async fn count_admins(tx: &mut Tx, account_id: &str) -> Result<i64, sqlx::Error> {
    sqlx::query(
        "SELECT COUNT(*) FROM account_user WHERE account_id = $1 AND removed_at IS NULL \
         AND account_role IN ('admin', 'owner')",
    )
    .bind(account_id.to_owned())
    .fetch_one(&mut **tx)
    .await?
    .try_get(0)
}

/// Sets a person's account role.
pub(crate) async fn set_role(tx: &mut Tx, id: &str, role: AccountRole) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE account_user SET account_role = $1 WHERE id = $2")
        .bind(role.as_str())
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Marks a person removed: their address moves to `removed_email` (a new invite to it makes
/// a new person) and their single sign-on link goes.
pub(crate) async fn mark_removed(tx: &mut Tx, id: &str, now: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE account_user SET removed_at = $1, removed_email = email, \
         email = 'removed+' || id || '@removed.invalid', oidc_issuer = NULL, \
         oidc_subject = NULL WHERE id = $2",
    )
    .bind(now)
    .bind(id.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Whether someone with this address was removed (in any account).
pub(crate) async fn was_removed(tx: &mut Tx, email: &str) -> Result<bool, sqlx::Error> {
    Ok(
        sqlx::query("SELECT id FROM account_user WHERE lower(removed_email) = lower($1)")
            .bind(email.to_owned())
            .fetch_optional(&mut **tx)
            .await?
            .is_some(),
    )
}

/// Records that a person was active at `now` (to the minute: callers skip it within one).
pub(crate) async fn touch(tx: &mut Tx, id: &str, now: i64) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE account_user SET last_active_at = $1 WHERE id = $2")
        .bind(now)
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Creates an account; the caller picks its id.
pub(crate) async fn insert_account(
    tx: &mut Tx,
    id: &str,
    name: &str,
    now: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO account (id, name, created_at) VALUES ($1, $2, $3)")
        .bind(id.to_owned())
        .bind(name.to_owned())
        .bind(now)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// On PostgreSQL, locks the account's row until the transaction ends, so two admins changing
/// roles at once cannot both see another admin and leave none (SQLite's writers are serial).
pub(crate) async fn lock_account(tx: &mut Tx, account_id: &str) -> Result<(), sqlx::Error> {
    if tx.backend() == slipway_server::db::Backend::Postgres {
        sqlx::query("SELECT id FROM account WHERE id = $1 FOR UPDATE")
            .bind(account_id.to_owned())
            .fetch_optional(&mut **tx)
            .await?;
    }
    Ok(())
}
