//! Who may sign in with single sign-on: a person who exists (matched by the provider's
//! subject once linked, else by e-mail), a person with a pending invite (the sign-in accepts
//! it), or a verified address in an allowed domain (joins as member). Anyone else is
//! refused with the reason, and nothing is created.

use crate::error::IdentityError;
use crate::invites;
use crate::model::AccountRole;
use crate::people;
use crate::rules;
use crate::store::people::{self as rows, PersonRow};
use slipway_server::db::Tx;

/// What the provider vouched for, from the verified ID token.
#[derive(Debug, Clone)]
pub(crate) struct Identity {
    pub issuer: String,
    pub subject: String,
    pub email: Option<String>,
    pub email_verified: Option<bool>,
    pub name: Option<String>,
}

/// How a sign-in was let in.
#[derive(Debug, Clone)]
pub(crate) struct Admitted {
    pub person: PersonRow,
    /// For the audit: "existing person", "accepted an invite", "domain example.org may join".
    pub how: String,
}

/// Decides, inside the caller's transaction. `Ok(Err(reason))` is a refusal.
pub(crate) async fn admit(
    tx: &mut Tx,
    who: &Identity,
    allowed_domains: &[String],
    account_id: &str,
) -> Result<Result<Admitted, String>, IdentityError> {
    if let Some(person) = rows::find_by_subject(tx, &who.issuer, &who.subject).await?
        && person.removed_at.is_none()
    {
        return Ok(Ok(Admitted {
            person,
            how: "a person linked to this provider account".into(),
        }));
    }
    let Some(email) = who
        .email
        .as_deref()
        .map(str::trim)
        .filter(|e| !e.is_empty())
    else {
        return Ok(Err(
            "the identity provider sent no e-mail address; Slipway needs one (ask for the 'email' scope to be allowed)".into(),
        ));
    };
    if who.email_verified != Some(true) {
        return Ok(Err(format!(
            "the identity provider has not verified {email}; verify it there, then sign in again"
        )));
    }
    let email = match rules::parse_email(email) {
        Ok(e) => e,
        Err(_) => {
            return Ok(Err(format!(
                "{email:?} is not an e-mail address Slipway accepts"
            )));
        }
    };
    let name = who
        .name
        .as_deref()
        .and_then(|n| rules::parse_user_name(n).ok())
        .unwrap_or_else(|| rules::default_name(&email));
    if let Some(person) = rows::find_by_email(tx, &email).await? {
        if let Some((issuer, subject)) = rows::subject_of(tx, &person.id).await?
            && (issuer != who.issuer || subject != who.subject)
        {
            return Ok(Err(format!(
                "{email} belongs to a Slipway person who signs in with another provider account; ask an admin"
            )));
        }
        rows::link_subject(tx, &person.id, &who.issuer, &who.subject).await?;
        return Ok(Ok(Admitted {
            person,
            how: "an existing person".into(),
        }));
    }
    if let Some(invite) = invites::pending_for(tx, &email).await?.into_iter().next() {
        let person = invites::join(tx, &invite, &name, "by signing in with SSO").await?;
        rows::link_subject(tx, &person.id, &who.issuer, &who.subject).await?;
        return Ok(Ok(Admitted {
            person,
            how: "accepted a pending invite".into(),
        }));
    }
    let domain = email
        .rsplit('@')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if rows::was_removed(tx, &email).await? {
        return Ok(Err(format!(
            "{email} was removed from this Slipway; an admin can invite you again"
        )));
    }
    if allowed_domains.contains(&domain) {
        let person = people::insert(tx, account_id, &email, &name, AccountRole::Member).await?;
        rows::link_subject(tx, &person.id, &who.issuer, &who.subject).await?;
        return Ok(Ok(Admitted {
            person,
            how: format!("joined as member: the domain {domain} may join"),
        }));
    }
    let domains = if allowed_domains.is_empty() {
        String::new()
    } else {
        format!(", and {domain} is not among the domains that may join")
    };
    Ok(Err(format!(
        "{email} is not a member of this Slipway and has no pending invite{domains}; ask an admin of your team to invite you"
    )))
}
