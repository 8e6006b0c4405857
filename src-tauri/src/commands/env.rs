//! The environment the window works in: embedded (everything on this computer) or
//! configured, who is signed in, and whether to show the first-start welcome.

use std::sync::Arc;

use serde::Serialize;

use super::care::Care;

/// What the header shows.
#[derive(Debug, Serialize)]
pub struct Environment {
    /// Short name: `Embedded` or `Configured`.
    pub name: &'static str,
    /// One sentence on what runs where.
    pub description: String,
    /// Who is signed in, to the platform and to care.
    pub signed_in: String,
    /// First start with nothing configured: show the welcome.
    pub welcome: bool,
    /// The embedded platform's data directory.
    pub platform_dir: String,
    /// The embedded care service's data directory.
    pub care_dir: String,
}

const WELCOMED: &str = "welcomed";

/// The environment, read from the same settings the commands use.
#[tauri::command]
pub async fn environment(care: tauri::State<'_, Arc<Care>>) -> Result<Environment, String> {
    let care = Arc::clone(&care);
    tauri::async_runtime::spawn_blocking(move || {
        let platform = slipway_toolkit::platform::Endpoint::from_env(None).ok();
        let embedded = platform.is_none() && !care.is_configured();
        let platform_who = match &platform {
            Some(p) => format!("platform {}", p.url),
            None => "you (owner of the local platform)".to_owned(),
        };
        Environment {
            name: if embedded { "Embedded" } else { "Configured" },
            description: match &platform {
                None => {
                    "the platform and the care services run on this computer, started on first use"
                        .into()
                }
                Some(p) => format!("platform at {}", p.url),
            },
            signed_in: format!("{platform_who} · care: {}", care.staff_name()),
            welcome: embedded && !care.data_dir().join(WELCOMED).exists(),
            platform_dir: slipway_platform::embedded::default_data_dir()
                .display()
                .to_string(),
            care_dir: care.embedded_dir().display().to_string(),
        }
    })
    .await
    .map_err(|e| e.to_string())
}

/// Remembers that the welcome was seen.
#[tauri::command]
pub fn dismiss_welcome(care: tauri::State<'_, Arc<Care>>) -> Result<(), String> {
    slipway_toolkit::fsutil::atomic_write(&care.data_dir().join(WELCOMED), b"")
        .map_err(|e| format!("could not remember the welcome: {e}"))
}
