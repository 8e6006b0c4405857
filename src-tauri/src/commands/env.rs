//! The environment the window works in: this computer (the embedded platform and care
//! service, or the platform the process environment configures), or a named remote
//! environment the user signed in to. Tokens live in the OS keyring, or in 0600 files where
//! there is none (`slipway_platform_client::credentials`, the same store as `slipway
//! login`); the header says which.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use slipway_platform_client::credentials::{self, RemoteEnvironment, SavedEnvironment};
use slipway_platform_client::{AccountRole, Client, Endpoint, whoami};
use slipway_toolkit::ToolError;

use super::care::Care;
use super::selection::Selection;
use super::tools::Tools;

/// What the header shows.
#[derive(Debug, Serialize)]
pub struct Environment {
    /// Short name: `Embedded`, `Configured`, or the remote environment's name.
    pub name: String,
    /// True for a remote environment the user signed in to.
    pub remote: bool,
    /// One sentence on what runs where.
    pub description: String,
    /// Who is signed in, to the platform and to care.
    pub signed_in: String,
    /// Where the tokens are kept (remote environments): the keyring, or a 0600 file.
    pub token_store: Option<String>,
    /// First start with nothing configured: show the welcome.
    pub welcome: bool,
    /// The embedded platform's data directory.
    pub platform_dir: String,
    /// The embedded care service's data directory.
    pub care_dir: String,
    /// The view the window opens on, when its user chose one (care staff: the worklist).
    pub home: Option<String>,
}

const WELCOMED: &str = "welcomed";
/// The file naming the view the window opens on.
const HOME_VIEW: &str = "home-view";
/// The views a user may choose to open the window on: the care staff's worklist (the others
/// open on the developer's first view, or the welcome).
const HOME_VIEWS: &[&str] = &["worklist"];

/// The view the window opens on, if its user chose one.
fn home_view(dir: &std::path::Path) -> Option<String> {
    let chosen = std::fs::read_to_string(dir.join(HOME_VIEW)).ok()?;
    let chosen = chosen.trim();
    HOME_VIEWS.contains(&chosen).then(|| chosen.to_owned())
}

/// How the header names a token store.
fn store_note(store: &str) -> String {
    if store == "keyring" {
        "tokens in the OS keyring".to_owned()
    } else {
        format!("tokens in {store} (readable by you only; no OS keyring service here)")
    }
}

/// The environment, read from the same settings the commands use.
#[tauri::command]
pub async fn environment(
    care: tauri::State<'_, Arc<Care>>,
    tools: tauri::State<'_, Tools>,
    selection: tauri::State<'_, Arc<Selection>>,
) -> Result<Environment, String> {
    let care = Arc::clone(&care);
    let runner = tools.runner();
    let selection = Arc::clone(&selection);
    tauri::async_runtime::spawn_blocking(move || {
        let platform_dir = slipway_platform::embedded::default_data_dir()
            .display()
            .to_string();
        let care_dir = care.embedded_dir().display().to_string();
        if let Some(name) = selection.current() {
            let saved = credentials::environments()
                .unwrap_or_default()
                .into_iter()
                .find(|e| e.name == name);
            let who = runner.client().and_then(|c| whoami(&c));
            let platform_who = match who {
                Ok(me) => format!("{} <{}>", me.name, me.email),
                Err(e) => format!("not signed in ({e})"),
            };
            return Environment {
                description: match &saved {
                    Some(s) => format!(
                        "platform at {}{}",
                        s.platform_url,
                        s.care_url
                            .as_ref()
                            .map(|c| format!(", care at {c}"))
                            .unwrap_or_else(|| ", no care services".into())
                    ),
                    None => "no longer saved".into(),
                },
                token_store: saved
                    .and_then(|s| s.token_store)
                    .map(|store| store_note(&store)),
                signed_in: format!("{platform_who} · care: {}", care.staff_name()),
                name,
                remote: true,
                welcome: false,
                platform_dir,
                care_dir,
                home: home_view(&care.data_dir()),
            };
        }
        let platform = Endpoint::from_env(None).ok();
        let embedded = platform.is_none() && !care.is_configured();
        let platform_who = match &platform {
            Some(p) => format!("platform {}", p.url),
            None => "you (owner of the local platform)".to_owned(),
        };
        Environment {
            name: if embedded { "Embedded" } else { "Configured" }.to_owned(),
            remote: false,
            description: match &platform {
                None => {
                    "the platform and the care services run on this computer, started on first use"
                        .into()
                }
                Some(p) => format!("platform at {}", p.url),
            },
            signed_in: format!("{platform_who} · care: {}", care.staff_name()),
            token_store: None,
            welcome: embedded && !care.data_dir().join(WELCOMED).exists(),
            platform_dir,
            care_dir,
            home: home_view(&care.data_dir()),
        }
    })
    .await
    .map_err(|e| e.to_string())
}

/// Chooses the view the window opens on (`None`: the default again).
#[tauri::command]
pub fn set_home_view(
    care: tauri::State<'_, Arc<Care>>,
    view: Option<String>,
) -> Result<(), String> {
    let file = care.data_dir().join(HOME_VIEW);
    match view.as_deref() {
        None => match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("could not forget the start view: {e}"))
            }
            _ => Ok(()),
        },
        Some(v) if HOME_VIEWS.contains(&v) => {
            slipway_platform_client::fsutil::atomic_write(&file, v.as_bytes())
                .map_err(|e| format!("could not remember the start view: {e}"))
        }
        Some(v) => Err(format!(
            "view: the window cannot open on {v:?}; it opens on one of: {}",
            HOME_VIEWS.join(", ")
        )),
    }
}

/// Remembers that the welcome was seen.
#[tauri::command]
pub fn dismiss_welcome(care: tauri::State<'_, Arc<Care>>) -> Result<(), String> {
    slipway_platform_client::fsutil::atomic_write(&care.data_dir().join(WELCOMED), b"")
        .map_err(|e| format!("could not remember the welcome: {e}"))
}

/// The saved environments and the one in use.
#[derive(Debug, Serialize)]
pub struct Environments {
    /// The remote environment in use; null for this computer.
    pub current: Option<String>,
    /// Every saved environment (never a token).
    pub saved: Vec<SavedEnvironment>,
}

/// The saved environments and the one in use.
#[tauri::command]
pub async fn environments(
    selection: tauri::State<'_, Arc<Selection>>,
) -> Result<Environments, String> {
    let selection = Arc::clone(&selection);
    tauri::async_runtime::spawn_blocking(move || {
        Ok(Environments {
            current: selection.current(),
            saved: credentials::environments().map_err(|e| e.to_string())?,
        })
    })
    .await
    .map_err(|e| e.to_string())?
}

/// Checks a remote environment (every field, then the platform token against the platform
/// itself and the care URL and tokens against the care service), saves it with its tokens
/// and switches to it. Refusals are results naming their field (`{success: false, field,
/// error}`), and nothing is saved.
#[tauri::command]
pub async fn sign_in(
    selection: tauri::State<'_, Arc<Selection>>,
    environment: Value,
) -> Result<Value, String> {
    let selection = Arc::clone(&selection);
    tauri::async_runtime::spawn_blocking(move || {
        let result = serde_json::from_value::<RemoteEnvironment>(environment)
            .map_err(|e| ToolError::invalid_args(e.to_string()))
            .and_then(|env| env.checked())
            .and_then(|env| {
                let me = Client::new(Endpoint::new(
                    env.platform_url.as_str(),
                    env.platform_token.as_str(),
                ))
                .and_then(|c| whoami(&c))
                .map_err(|e| refused(&env.platform_url, e))?;
                slipway_care_client::sign_in::check(&env)?;
                let store = credentials::sign_in(&env)?;
                Ok((env, me, store))
            });
        let outcome = match result {
            Ok((env, me, store)) => {
                selection.set(Some(env.name.clone()))?;
                Ok(SignedInto {
                    name: env.name,
                    email: me.email,
                    role: None,
                    token_store: store_note(&store.describe()),
                })
            }
            Err(e) => Err(e),
        };
        Ok(slipway_toolkit::render(&outcome))
    })
    .await
    .map_err(|e| e.to_string())?
}

/// What the window is told once it signed in to an environment (with a token, an invite or
/// single sign-on) and uses it, rendered as the tools' results are.
#[derive(Debug, Serialize)]
pub(crate) struct SignedInto {
    /// The environment, now in use.
    pub(crate) name: String,
    /// Whose the token is.
    pub(crate) email: String,
    /// Their account role, when the platform said (an accepted invite does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) role: Option<AccountRole>,
    /// Where the token is kept, in words.
    pub(crate) token_store: String,
}

/// A failed token check, placed on the field the user can fix.
fn refused(url: &str, e: ToolError) -> ToolError {
    let text = e.to_string();
    // The client says "refused the token" for a 401 (and 403 for a token without access).
    if text.contains("refused the token") || matches!(e, ToolError::PermissionDenied(_)) {
        ToolError::invalid(
            "platform_token",
            format!("the platform at {url} refused this token (401)"),
        )
    } else {
        ToolError::invalid(
            "platform_url",
            format!("no Slipway platform answered at {url}: {text}"),
        )
    }
}

/// Switches to a saved, signed-in environment, or to this computer (`name` null).
#[tauri::command]
pub async fn use_environment(
    selection: tauri::State<'_, Arc<Selection>>,
    name: Option<String>,
) -> Result<(), String> {
    let selection = Arc::clone(&selection);
    tauri::async_runtime::spawn_blocking(move || {
        if let Some(n) = &name {
            let saved = credentials::environments().map_err(|e| e.to_string())?;
            match saved.iter().find(|e| &e.name == n) {
                None => return Err(format!("no environment {n:?} is saved")),
                Some(e) if !e.signed_in => {
                    return Err(format!("sign in to {n:?} first: it has no stored token"));
                }
                Some(_) => {}
            }
        }
        selection.set(name)
    })
    .await
    .map_err(|e| e.to_string())?
}

/// Signs out of `name`: its tokens are forgotten (keyring and files); its URLs stay. When it
/// was in use, the window goes back to this computer.
#[tauri::command]
pub async fn sign_out(
    selection: tauri::State<'_, Arc<Selection>>,
    name: String,
) -> Result<(), String> {
    let selection = Arc::clone(&selection);
    tauri::async_runtime::spawn_blocking(move || {
        credentials::sign_out(&name).map_err(|e| e.to_string())?;
        if selection.current().as_deref() == Some(name.as_str()) {
            selection.set(None)?;
        }
        Ok(())
    })
    .await
    .map_err(|e| e.to_string())?
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn whatever_follows_the_environment_hears_each_time_it_is_set() {
        let dir = tempfile::tempdir().unwrap();
        let selection = Selection::load(dir.path());
        let heard = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&heard);
        selection.on_set(move || {
            counter.fetch_add(1, Ordering::Relaxed);
        });
        selection.set(Some("staging".into())).unwrap();
        assert_eq!(selection.current().as_deref(), Some("staging"));
        selection.set(None).unwrap();
        assert_eq!(heard.load(Ordering::Relaxed), 2);
        assert_eq!(Selection::load(dir.path()).current(), None);
    }
}
