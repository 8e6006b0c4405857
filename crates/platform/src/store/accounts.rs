//! Accounts and their users. An account is the tenant boundary: nothing of one account is
//! visible to another. Each account has one owner user it was created with; more users are
//! added as members (`slipway platform user add`).

use serde::Serialize;

use super::tokens::store_token;
use crate::db::{Tx, now_millis};
use crate::error::PlatformError;
use crate::model::AccountRole;
use crate::model::{TOKEN_PREFIX, Token};

/// Longest accepted e-mail address (RFC 5321's path limit).
pub const EMAIL_MAX: usize = 254;
/// Longest accepted user name.
pub const USER_NAME_MAX: usize = 200;

/// A user just created, with the only copy of its token in clear. This is what
/// `slipway platform user add` prints as JSON: `{"id", "email", "name", "token"}`.
#[derive(Debug, Clone, Serialize)]
pub struct NewUser {
    /// The user's UUID.
    pub id: String,
    /// The e-mail address, as given (trimmed).
    pub email: String,
    /// The display name, as given (trimmed).
    pub name: String,
    /// The bearer token in clear; only its hash is stored.
    #[serde(serialize_with = "expose_token")]
    pub token: Token,
}

fn expose_token<S: serde::Serializer>(token: &Token, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(token.expose())
}

/// Checks an e-mail address: one `@` with text on both sides, no whitespace, at most 254
/// characters. Deliverability is not checked; the address is an identifier here.
pub fn parse_email(raw: &str) -> Result<String, PlatformError> {
    let email = raw.trim();
    let invalid = |message: &str| PlatformError::InvalidInput {
        field: "email",
        message: message.to_owned(),
    };
    if email.is_empty() {
        return Err(invalid("must not be empty"));
    }
    if email.chars().count() > EMAIL_MAX {
        return Err(invalid("must be at most 254 characters"));
    }
    if email.chars().any(char::is_whitespace) {
        return Err(invalid("must not contain whitespace"));
    }
    match email.split_once('@') {
        Some((local, domain))
            if !local.is_empty() && !domain.is_empty() && !domain.contains('@') =>
        {
            Ok(email.to_owned())
        }
        _ => Err(invalid("must have the form local@domain")),
    }
}

/// Checks a user name: not blank, at most 200 characters.
pub fn parse_user_name(raw: &str) -> Result<String, PlatformError> {
    let name = raw.trim();
    if name.is_empty() {
        return Err(PlatformError::InvalidInput {
            field: "name",
            message: "must not be empty".into(),
        });
    }
    if name.chars().count() > USER_NAME_MAX {
        return Err(PlatformError::InvalidInput {
            field: "name",
            message: "must be at most 200 characters".into(),
        });
    }
    Ok(name.to_owned())
}

/// Creates an account; returns its UUID.
pub async fn create_account(tx: &mut Tx, name: &str) -> Result<String, PlatformError> {
    let id = uuid::Uuid::new_v4().to_string();
    sqlx::query("INSERT INTO account (id, name, created_at) VALUES ($1, $2, $3)")
        .bind(id.clone())
        .bind(name.to_owned())
        .bind(now_millis())
        .execute(&mut **tx)
        .await?;
    Ok(id)
}

/// Creates a user of `account_id` with a fresh token. `email` and `name` must already have
/// passed [`parse_email`] and [`parse_user_name`].
pub async fn create_user(
    tx: &mut Tx,
    account_id: &str,
    email: &str,
    name: &str,
    role: AccountRole,
) -> Result<NewUser, PlatformError> {
    let id = uuid::Uuid::new_v4().to_string();
    let inserted = sqlx::query(
        "INSERT INTO account_user (id, account_id, email, name, account_role, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(id.clone())
    .bind(account_id.to_owned())
    .bind(email.to_owned())
    .bind(name.to_owned())
    .bind(role.as_str())
    .bind(now_millis())
    .execute(&mut **tx)
    .await;
    match inserted {
        Err(e) if super::is_unique_violation(&e) => {
            return Err(PlatformError::EmailTaken(email.to_owned()));
        }
        other => other?,
    };
    let token = new_token()?;
    store_token(tx, &id, &token).await?;
    Ok(NewUser {
        id,
        email: email.to_owned(),
        name: name.to_owned(),
        token,
    })
}

/// A fresh token, or an error when the operating system has no randomness to give.
pub fn new_token() -> Result<Token, PlatformError> {
    Token::generate(TOKEN_PREFIX)
        .map_err(|e| PlatformError::Io(std::io::Error::other(format!("no OS randomness: {e}"))))
}

/// A user as the sharing endpoints show it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Member {
    /// The user's UUID.
    pub id: String,
    /// E-mail address.
    pub email: String,
    /// Display name.
    pub name: String,
}

fn member_row(r: &sqlx::any::AnyRow) -> Result<Member, sqlx::Error> {
    use sqlx::Row as _;
    Ok(Member {
        id: r.try_get(0)?,
        email: r.try_get(1)?,
        name: r.try_get(2)?,
    })
}

/// The member of `account_id` that `ident` names: a user UUID, or an e-mail address
/// (compared without regard to case). `None` when no member of this account matches.
pub async fn find_member(
    tx: &mut Tx,
    account_id: &str,
    ident: &str,
) -> Result<Option<Member>, sqlx::Error> {
    let ident = ident.trim();
    let row = match uuid::Uuid::parse_str(ident) {
        Ok(id) => {
            sqlx::query(
                "SELECT id, email, name FROM account_user WHERE account_id = $1 AND id = $2",
            )
            .bind(account_id.to_owned())
            .bind(id.to_string())
            .fetch_optional(&mut **tx)
            .await?
        }
        Err(_) => {
            sqlx::query(
                "SELECT id, email, name FROM account_user \
                 WHERE account_id = $1 AND lower(email) = lower($2)",
            )
            .bind(account_id.to_owned())
            .bind(ident.to_owned())
            .fetch_optional(&mut **tx)
            .await?
        }
    };
    row.as_ref().map(member_row).transpose()
}

/// Every member of an account, by e-mail.
pub async fn list_members(tx: &mut Tx, account_id: &str) -> Result<Vec<Member>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT id, email, name FROM account_user WHERE account_id = $1 ORDER BY email, id",
    )
    .bind(account_id.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    rows.iter().map(member_row).collect()
}

/// Whether `user_id` is the owner of its account (the user the account was created with).
pub async fn is_account_owner(tx: &mut Tx, user_id: &str) -> Result<bool, sqlx::Error> {
    use sqlx::Row as _;
    let row = sqlx::query("SELECT account_role FROM account_user WHERE id = $1")
        .bind(user_id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    match row {
        Some(r) => Ok(r.try_get::<String, _>(0)? == AccountRole::Owner.as_str()),
        None => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_rules() {
        assert_eq!(parse_email(" ada@example.org ").unwrap(), "ada@example.org");
        for bad in ["", "ada", "@example.org", "ada@", "a b@c", "a@b@c"] {
            assert!(parse_email(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(parse_email(&format!("{}@x.org", "a".repeat(250))).is_err());
    }

    #[test]
    fn user_name_rules() {
        assert_eq!(parse_user_name(" Ada ").unwrap(), "Ada");
        assert!(parse_user_name("  ").is_err());
        assert!(parse_user_name(&"n".repeat(201)).is_err());
    }

    #[test]
    fn new_user_json_carries_the_token_in_clear() {
        let user = NewUser {
            id: "u".into(),
            email: "e@x".into(),
            name: "n".into(),
            token: Token::from_string("slw_abc".into()),
        };
        let json = serde_json::to_value(&user).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"id": "u", "email": "e@x", "name": "n", "token": "slw_abc"})
        );
    }
}
