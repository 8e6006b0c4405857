//! People, invites, the audit and tokens (docs/people.md): each command is one call into
//! `slipway_platform_client` on the platform the window uses (the remote environment in
//! use, the configured platform, or the embedded one), its typed answer rendered for the
//! window as the tools' results are. Joining with an invite and signing in with single
//! sign-on end like `sign_in`: the token is stored (OS keyring, or a 0600 file) and the window
//! uses the environment. Refusals are results naming their field (`{success: false, field,
//! error}`), as the tools' are.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use slipway_platform_client::credentials::{self, RemoteEnvironment};
use slipway_platform_client::{AccountRole, Endpoint, Me, grants, join, people, sso, tokens};
use slipway_toolkit::ToolError;

use super::env::SignedInto;
use super::run::{blocking, off_thread, with_client};
use super::selection::Selection;
use super::tools::{CommandError, Tools};

/// How long the window waits for the browser to come back from the SSO provider.
const SSO_WAIT: Duration = Duration::from_secs(5 * 60);

/// A days field as the form sends it (a number, or the text typed; null or empty: the
/// platform's default), or an error naming `expires_in_days`. The toolkit checks the range.
pub fn days_arg(value: Option<&Value>) -> Result<Option<u32>, ToolError> {
    let not_whole = || ToolError::invalid("expires_in_days", "must be a whole number of days");
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(not_whole),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => s.trim().parse().map(Some).map_err(|_| not_whole()),
        Some(_) => Err(not_whole()),
    }
}

/// Whether the window's platform is this computer's embedded one and it has not started:
/// no remote environment in use, none configured, and none running on its data directory.
fn local_platform_idle(selection: &Selection) -> bool {
    selection.current().is_none()
        && matches!(Endpoint::from_env(None), Err(ToolError::NotConfigured(_)))
        && slipway_platform::embedded::running(&slipway_platform::embedded::default_data_dir())
            .is_none()
}

/// Who the window's person is, or (the embedded platform not started) which role they will
/// have.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum WhoAnswer {
    /// The platform's answer.
    Known(Me),
    /// The embedded platform has not started: its first person's role.
    NotStarted {
        /// Always admin (the window acts with the bootstrap token).
        role: AccountRole,
        /// Always false.
        started: bool,
    },
}

/// Who the window's person is on its platform: `{id, email, name, role}`. With `lazy`, the
/// embedded platform is not started for the question: until something starts it, the answer
/// is its first person's role (`admin`, docs/people.md: the window acts with the embedded
/// platform's bootstrap token) with `started: false`.
#[tauri::command]
pub async fn me(
    tools: tauri::State<'_, Tools>,
    selection: tauri::State<'_, Arc<Selection>>,
    lazy: Option<bool>,
) -> Result<Value, CommandError> {
    let selection = Arc::clone(&selection);
    let runner = tools.runner();
    blocking(move || {
        if lazy == Some(true) && local_platform_idle(&selection) {
            return Ok(WhoAnswer::NotStarted {
                role: AccountRole::Admin,
                started: false,
            });
        }
        people::me(&runner.client()?).map(WhoAnswer::Known)
    })
    .await
}

/// The account's people.
#[tauri::command]
pub async fn people_list(tools: tauri::State<'_, Tools>) -> Result<Value, CommandError> {
    with_client(tools.runner(), people::list_people).await
}

/// Invites `email` (admins): the answer holds the code, shown once, and the join link.
#[tauri::command]
pub async fn people_invite(
    tools: tauri::State<'_, Tools>,
    email: String,
    role: Option<String>,
    expires_in_days: Option<Value>,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| {
        let days = days_arg(expires_in_days.as_ref())?;
        let role = role.as_deref().map(str::trim).filter(|r| !r.is_empty());
        people::invite(c, &email, role, days)
    })
    .await
}

/// The pending invites (admins), never their codes.
#[tauri::command]
pub async fn people_invites(tools: tauri::State<'_, Tools>) -> Result<Value, CommandError> {
    with_client(tools.runner(), people::list_invites).await
}

/// Revokes a pending invite (admins).
#[tauri::command]
pub async fn people_revoke_invite(
    tools: tauri::State<'_, Tools>,
    id: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| people::revoke_invite(c, &id)).await
}

/// Gives person `id` (UUID or e-mail) the account role `role` (admins).
#[tauri::command]
pub async fn people_set_role(
    tools: tauri::State<'_, Tools>,
    id: String,
    role: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| people::set_role(c, &id, &role)).await
}

/// Removes person `id` (admins): their tokens stop at once; apps they alone owned pass to
/// the caller.
#[tauri::command]
pub async fn people_remove(
    tools: tauri::State<'_, Tools>,
    id: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| people::remove_person(c, &id)).await
}

/// One page of the account's audit, newest first (admins).
#[tauri::command]
pub async fn people_audit(
    tools: tauri::State<'_, Tools>,
    page_token: Option<String>,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| {
        people::audit(c, page_token.as_deref())
    })
    .await
}

/// The caller's own tokens (`current` marks the window's).
#[tauri::command]
pub async fn tokens_list(tools: tauri::State<'_, Tools>) -> Result<Value, CommandError> {
    with_client(tools.runner(), tokens::list_tokens).await
}

/// Makes a token; its secret is in this answer only.
#[tauri::command]
pub async fn tokens_create(
    tools: tauri::State<'_, Tools>,
    name: String,
    expires_in_days: Option<Value>,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| {
        let days = days_arg(expires_in_days.as_ref())?;
        tokens::create_token(c, &name, days, &tokens::TokenScope::FULL)
    })
    .await
}

/// Revokes one of the caller's tokens.
#[tauri::command]
pub async fn tokens_revoke(
    tools: tauri::State<'_, Tools>,
    id: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| tokens::revoke_token(c, &id)).await
}

/// The assistants the caller let act for them through the platform's `/mcp`.
#[tauri::command]
pub async fn grants_list(tools: tauri::State<'_, Tools>) -> Result<Value, CommandError> {
    with_client(tools.runner(), grants::list_grants).await
}

/// Approves the assistant's sign-in whose page shows `code`, read-only or not, with secret
/// values or not (`None`: as the page asked).
#[tauri::command]
pub async fn grants_approve(
    tools: tauri::State<'_, Tools>,
    code: String,
    read_only: Option<bool>,
    secrets: Option<bool>,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| {
        let asked = grants::find_request(c, &code)?.asked;
        let scope = grants::TokenScope {
            read_only: read_only.unwrap_or(asked.read_only),
            apps: asked.apps,
            secrets: secrets.unwrap_or(asked.secrets),
        };
        grants::approve_request(c, &code, Some(&scope))
    })
    .await
}

/// Revokes a grant: the assistant's next request is refused.
#[tauri::command]
pub async fn grants_revoke(
    tools: tauri::State<'_, Tools>,
    id: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| grants::revoke_grant(c, &id)).await
}

/// The environment's name and platform URL, checked by a sign-in's rules (errors name
/// `environment` and `url`, the fields of the join and SSO forms) before an invite's
/// one-time code is spent or a browser opened. Returns them trimmed.
pub fn checked_target(environment: &str, url: &str) -> Result<(String, String), ToolError> {
    let target = RemoteEnvironment {
        name: environment.trim().to_owned(),
        platform_url: url.to_owned(),
        // Never stored: the real token comes from the platform once these checks pass.
        platform_token: "not yet".to_owned(),
        ..RemoteEnvironment::default()
    }
    .checked();
    match target {
        Ok(t) => Ok((t.name, t.platform_url)),
        Err(e) if e.field() == Some("platform_url") => {
            let message = e.to_string();
            let rule = message.strip_prefix("platform_url: ").unwrap_or(&message);
            Err(ToolError::invalid("url", rule))
        }
        Err(e) => Err(e),
    }
}

/// Stores `token` for environment `name` on the platform at `url` as `slipway login` does (a
/// care URL saved for the environment is kept) and says where it went.
fn save(name: &str, url: &str, token: &str) -> Result<String, ToolError> {
    Ok(credentials::login(name, url, token)?.describe())
}

/// Switches the window to the environment just saved, and answers `done` (or why not).
async fn use_saved(
    selection: tauri::State<'_, Arc<Selection>>,
    done: Result<SignedInto, ToolError>,
) -> Value {
    let outcome = match done {
        Ok(done) => super::env::use_environment(selection, Some(done.name.clone()))
            .await
            .map(|()| done)
            .map_err(ToolError::Internal),
        Err(e) => Err(e),
    };
    slipway_toolkit::render(&outcome)
}

/// Accepts an invite on the platform at `url` as `name`, stores the token it gives for
/// `environment` and uses it. `code` may be the whole `slipway://invite/…` link; its URL
/// is used when `url` is empty.
#[tauri::command]
pub async fn join_with_invite(
    selection: tauri::State<'_, Arc<Selection>>,
    url: String,
    code: String,
    name: Option<String>,
    environment: String,
) -> Result<Value, CommandError> {
    let done = off_thread(move || {
        let (code, url) = match join::parse_invite_link(&code) {
            Some((code, linked)) if url.trim().is_empty() => (code, linked),
            Some((code, _)) => (code, url),
            None => (code, url),
        };
        let (environment, url) = checked_target(&environment, &url)?;
        let name = name.as_deref().filter(|n| !n.trim().is_empty());
        let joined = join::accept_invite(&url, &code, name)?;
        let store = save(&environment, &url, joined.token.expose())?;
        Ok(SignedInto {
            name: environment,
            email: joined.email,
            role: Some(joined.role),
            token_store: store,
        })
    })
    .await?;
    Ok(use_saved(selection, done).await)
}

/// Whether the platform at `url` signs people in with single sign-on: `{enabled, issuer}`.
#[tauri::command]
pub async fn sso_status(url: String) -> Result<Value, CommandError> {
    blocking(move || sso::sso_status(&url)).await
}

/// Signs in to the platform at `url` with single sign-on: opens its sign-in page in the
/// system browser, waits for the browser to come back (up to 5 minutes), stores the token for
/// `environment` and uses it.
#[tauri::command]
pub async fn sso_sign_in(
    selection: tauri::State<'_, Arc<Selection>>,
    url: String,
    environment: String,
) -> Result<Value, CommandError> {
    let done = off_thread(move || {
        let (environment, url) = checked_target(&environment, &url)?;
        let attempt = sso::begin(&url)?;
        super::browser::open_url(attempt.sign_in_url().to_owned())
            .map_err(|e| ToolError::Unavailable(format!("the sign-in page did not open: {e}")))?;
        let signed = attempt.wait(SSO_WAIT)?;
        let store = save(&environment, &url, signed.token.expose())?;
        Ok(SignedInto {
            name: environment,
            email: signed.email,
            role: None,
            token_store: store,
        })
    })
    .await?;
    Ok(use_saved(selection, done).await)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn days_are_whole_numbers_as_typed_or_the_default() {
        assert_eq!(days_arg(None).unwrap(), None);
        assert_eq!(days_arg(Some(&json!(null))).unwrap(), None);
        assert_eq!(days_arg(Some(&json!(""))).unwrap(), None);
        assert_eq!(days_arg(Some(&json!(7))).unwrap(), Some(7));
        assert_eq!(days_arg(Some(&json!(" 14 "))).unwrap(), Some(14));
        for bad in [
            json!(1.5),
            json!(-3),
            json!("ten"),
            json!("2.5"),
            json!(true),
        ] {
            let e = days_arg(Some(&bad)).expect_err(&bad.to_string());
            assert_eq!(e.field(), Some("expires_in_days"), "{bad}");
            assert!(e.to_string().contains("whole number"), "{e}");
        }
    }

    #[test]
    fn the_join_and_sso_targets_are_checked_on_their_fields() {
        assert_eq!(
            checked_target(" team ", "http://127.0.0.1:8700/").unwrap(),
            ("team".to_owned(), "http://127.0.0.1:8700".to_owned())
        );
        let e = checked_target("team", "localhost:8700").unwrap_err();
        assert_eq!(e.field(), Some("url"));
        assert!(e.to_string().starts_with("url: "), "{e}");
        let e = checked_target("my team", "http://127.0.0.1:8700").unwrap_err();
        assert_eq!(e.field(), Some("environment"));
    }
}
