//! People of an account: listing them, changing their account role, removing them, and
//! creating the first ones (the bootstrap admin, `slipway platform user add`). The last admin
//! of an account can never be demoted or removed.

use crate::audit::{self, Action};
use crate::error::IdentityError;
use crate::model::{AccountRole, Caller, Person, PersonRef};
use crate::rules;
use crate::store::people::{self as rows, PersonRow};
use crate::store::{invites as invite_rows, is_unique_violation, tokens as token_rows};
use crate::tokens::{self, NewToken};
use slipway_server::clock::{now_millis, rfc3339};
use slipway_server::db::Tx;
use slipway_server::token::Token;

impl From<PersonRow> for Person {
    fn from(r: PersonRow) -> Self {
        Person {
            id: r.id,
            email: r.email,
            name: r.name,
            role: r.role,
            joined_at: rfc3339(r.created_at),
            last_active_at: r.last_active_at.map(rfc3339),
        }
    }
}

/// The account's people (anyone in it may list them: sharing needs it), by e-mail.
pub async fn list(tx: &mut Tx, account_id: &str) -> Result<Vec<Person>, IdentityError> {
    Ok(rows::list_active(tx, account_id)
        .await?
        .into_iter()
        .map(Person::from)
        .collect())
}

/// The living person of `account_id` that `ident` (a UUID or an e-mail, any case) names.
pub async fn find(
    tx: &mut Tx,
    account_id: &str,
    ident: &str,
) -> Result<Option<Person>, IdentityError> {
    Ok(rows::find_active(tx, account_id, ident)
        .await?
        .map(Person::from))
}

/// The caller as a person.
pub async fn me(tx: &mut Tx, caller: &Caller) -> Result<Person, IdentityError> {
    rows::find_by_id(tx, &caller.user_id)
        .await?
        .map(Person::from)
        .ok_or(IdentityError::Unauthenticated)
}

/// Whether `user_id` is a living admin (read now, not from the request's start).
pub async fn is_admin(tx: &mut Tx, user_id: &str) -> Result<bool, IdentityError> {
    Ok(rows::find_by_id(tx, user_id)
        .await?
        .is_some_and(|p| p.removed_at.is_none() && p.role == AccountRole::Admin))
}

/// Checks the caller is an admin as of now, holding the account's lock (on PostgreSQL), so a
/// request that began before the caller was demoted or removed cannot still manage people.
pub async fn require_admin(
    tx: &mut Tx,
    caller: &Caller,
    what: &'static str,
) -> Result<(), IdentityError> {
    if !caller.is_admin() {
        return Err(IdentityError::AdminOnly(what));
    }
    rows::lock_account(tx, &caller.account_id).await?;
    if !is_admin(tx, &caller.user_id).await? {
        return Err(IdentityError::AdminOnly(what));
    }
    Ok(())
}

/// The target of an admin's change: checks the caller is an admin and the person exists.
async fn target(
    tx: &mut Tx,
    caller: &Caller,
    ident: &str,
    what: &'static str,
) -> Result<PersonRow, IdentityError> {
    require_admin(tx, caller, what).await?;
    rows::find_active(tx, &caller.account_id, ident)
        .await?
        .ok_or_else(|| IdentityError::PersonNotFound(ident.trim().to_owned()))
}

/// Refuses when `person` is the account's only admin.
async fn keep_an_admin(tx: &mut Tx, person: &PersonRow) -> Result<(), IdentityError> {
    if person.role == AccountRole::Admin && rows::count_admins(tx, &person.account_id).await? <= 1 {
        return Err(IdentityError::LastAdmin(person.email.clone()));
    }
    Ok(())
}

/// `PATCH /v1/account/users/{id}`: sets a person's account role (admins only).
pub async fn set_role(
    tx: &mut Tx,
    caller: &Caller,
    ident: &str,
    role: &str,
) -> Result<Person, IdentityError> {
    if !caller.is_admin() {
        return Err(IdentityError::AdminOnly("change account roles"));
    }
    let role = rules::parse_account_role(role)?;
    let mut person = target(tx, caller, ident, "change account roles").await?;
    if person.role == role {
        return Ok(person.into());
    }
    if role == AccountRole::Member {
        keep_an_admin(tx, &person).await?;
    }
    rows::set_role(tx, &person.id, role).await?;
    let actor = tokens::actor(tx, caller).await?;
    if role == AccountRole::Member {
        revoke_invites_of(tx, &person, &actor, "its admin became a member").await?;
    }
    audit::record(
        tx,
        &caller.account_id,
        Some(&actor),
        Action::RoleChanged,
        &person.email,
        &format!("{} → {}", person.role.as_str(), role.as_str()),
    )
    .await?;
    person.role = role;
    Ok(person.into())
}

/// The first step of `DELETE /v1/account/users/{id}`: the person an admin may remove. The
/// platform then takes away their app roles (handing solely owned apps to the caller) and
/// calls [`remove`], all in one transaction.
pub async fn removal(tx: &mut Tx, caller: &Caller, ident: &str) -> Result<Person, IdentityError> {
    let person = target(tx, caller, ident, "remove people").await?;
    keep_an_admin(tx, &person).await?;
    if person.id == caller.user_id {
        return Err(IdentityError::RemoveSelf);
    }
    Ok(person.into())
}

/// An app that passed to the admin who removed its only owner.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TransferredApp {
    /// The app's UUID.
    pub app_id: String,
    /// Its name.
    pub name: String,
}

/// Removes `person` (found by [`removal`]): their tokens stop working at once, they are
/// listed nowhere, and the audit records it with the apps that passed to the caller.
pub async fn remove(
    tx: &mut Tx,
    caller: &Caller,
    person: &Person,
    transferred: &[TransferredApp],
) -> Result<(), IdentityError> {
    token_rows::delete_all(tx, &person.id).await?;
    let actor = tokens::actor(tx, caller).await?;
    let row = rows::find_by_id(tx, &person.id)
        .await?
        .ok_or_else(|| IdentityError::PersonNotFound(person.email.clone()))?;
    revoke_invites_of(tx, &row, &actor, "its admin was removed").await?;
    rows::mark_removed(tx, &person.id, now_millis()).await?;
    let detail = match transferred.len() {
        0 => "their tokens were revoked and their app roles removed".to_owned(),
        n => format!(
            "their tokens were revoked, their app roles removed, and {n} app(s) they alone owned passed to {}",
            actor.email
        ),
    };
    audit::record(
        tx,
        &caller.account_id,
        Some(&actor),
        Action::PersonRemoved,
        &person.email,
        &detail,
    )
    .await?;
    for app in transferred {
        audit::record(
            tx,
            &caller.account_id,
            Some(&actor),
            Action::AppOwnershipTransferred,
            &person.email,
            &format!(
                "app {} ({}) now owned by {}",
                app.name, app.app_id, actor.email
            ),
        )
        .await?;
    }
    Ok(())
}

/// Revokes the pending invites `inviter` made (they no longer may invite), recording each.
async fn revoke_invites_of(
    tx: &mut Tx,
    inviter: &PersonRow,
    actor: &PersonRef,
    why: &str,
) -> Result<(), IdentityError> {
    let now = now_millis();
    for invite in invite_rows::pending_by_inviter(tx, &inviter.id, now).await? {
        invite_rows::revoke(tx, &invite.account_id, &invite.id, now).await?;
        let detail = format!("invited by {}; {why}", inviter.email);
        audit::record(
            tx,
            &invite.account_id,
            Some(actor),
            Action::InviteRevoked,
            &invite.email,
            &detail,
        )
        .await?;
    }
    Ok(())
}

/// A person just created with their first token, the only time it exists in clear. This is
/// what `slipway platform user add` prints as JSON: `{"id", "email", "name", "token"}`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NewPerson {
    /// UUID.
    pub id: String,
    /// E-mail, as given (trimmed).
    pub email: String,
    /// Name, as given (trimmed).
    pub name: String,
    /// The bearer token in clear; only its hash is stored.
    #[serde(serialize_with = "crate::tokens::expose")]
    pub token: Token,
}

/// Creates an account; returns its UUID.
pub async fn create_account(tx: &mut Tx, name: &str) -> Result<String, IdentityError> {
    let id = uuid::Uuid::new_v4().to_string();
    rows::insert_account(tx, &id, name, now_millis()).await?;
    Ok(id)
}

/// Creates a person of `account_id` with a token without an end (the operator hands it over
/// by hand): the bootstrap admin and `slipway platform user add`.
pub async fn create(
    tx: &mut Tx,
    account_id: &str,
    email: &str,
    name: &str,
    role: AccountRole,
    token_name: &str,
) -> Result<NewPerson, IdentityError> {
    let email = rules::parse_email(email)?;
    let name = rules::parse_user_name(name)?;
    let row = insert(tx, account_id, &email, &name, role).await?;
    let NewToken { token, .. } = tokens::issue_unlimited(tx, &row.id, token_name).await?;
    Ok(NewPerson {
        id: row.id,
        email,
        name,
        token,
    })
}

/// Inserts a new person; 409 when the e-mail belongs to someone.
pub(crate) async fn insert(
    tx: &mut Tx,
    account_id: &str,
    email: &str,
    name: &str,
    role: AccountRole,
) -> Result<PersonRow, IdentityError> {
    let row = PersonRow {
        id: uuid::Uuid::new_v4().to_string(),
        account_id: account_id.to_owned(),
        email: email.to_owned(),
        name: name.to_owned(),
        role,
        created_at: now_millis(),
        last_active_at: None,
        removed_at: None,
    };
    match rows::insert(tx, &row).await {
        Err(e) if is_unique_violation(&e) => Err(IdentityError::AlreadyMember(email.to_owned())),
        other => other.map(|()| row).map_err(IdentityError::from),
    }
}

/// A person ref for audit entries.
pub(crate) fn person_ref(row: &PersonRow) -> PersonRef {
    PersonRef {
        id: row.id.clone(),
        email: row.email.clone(),
    }
}
