//! Opening a service's URL in the user's browser.
//!
//! Not Tauri's opener plugin: it starts the browser with this process's environment, which
//! holds the settings [`crate::relaunch_lean`] added for our own window (no JavaScript JIT,
//! no GDK OpenGL, no DMA-BUF renderer). A WebKit-based browser would inherit them and run
//! slower. Here the launcher (`xdg-open` and the others the `open` crate knows) gets the
//! environment the user started Slipway with.

use std::process::{Command, Stdio};

/// Why a URL was not opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The text does not parse as a URL.
    #[error("url: not a URL ({0})")]
    NotAUrl(String),
    /// A scheme other than http or https.
    #[error("url: only http and https URLs open in the browser, not {0}:")]
    Scheme(String),
    /// No launcher (`xdg-open` and the like) could be started.
    #[error("no program could open the URL: {0}")]
    NoLauncher(String),
}

impl serde::Serialize for OpenError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// The URL, if it is one the window may open: `http` or `https` only (never `file:` or a
/// custom scheme a page could be tricked into passing).
pub fn checked_url(url: &str) -> Result<tauri::Url, OpenError> {
    let parsed = tauri::Url::parse(url).map_err(|e| OpenError::NotAUrl(e.to_string()))?;
    match parsed.scheme() {
        "http" | "https" => Ok(parsed),
        other => Err(OpenError::Scheme(other.to_owned())),
    }
}

/// The launchers for `url`, each with the variables in `added` (the window's own settings)
/// taken out of its environment.
pub fn launchers(url: &tauri::Url, added: &[String]) -> Vec<Command> {
    open::commands(url.as_str())
        .into_iter()
        .map(|mut command| {
            for key in added {
                command.env_remove(key);
            }
            command.env_remove(crate::LEAN_ENV_MARKER);
            command
        })
        .collect()
}

/// Opens an `http`/`https` URL in the system's browser. Returns once a launcher started;
/// a thread reaps it when it exits.
#[tauri::command]
pub fn open_url(url: String) -> Result<(), OpenError> {
    let url = checked_url(&url)?;
    let mut failures = Vec::new();
    for mut command in launchers(&url, &crate::lean_env_added()) {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // Its own process group: a Ctrl-C in the terminal that started Slipway does not
        // reach the browser.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        match command.spawn() {
            Ok(mut child) => {
                std::thread::spawn(move || child.wait());
                return Ok(());
            }
            Err(e) => failures.push(format!("{:?}: {e}", command.get_program())),
        }
    }
    Err(OpenError::NoLauncher(if failures.is_empty() {
        "none is known on this system".into()
    } else {
        failures.join("; ")
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The launcher gets none of the window's own settings, and only those: a variable the
    /// user set is theirs to keep.
    #[test]
    fn launchers_get_the_environment_without_the_window_settings() {
        let url = checked_url("http://127.0.0.1:8123/").unwrap();
        let added = vec!["JSC_useJIT".to_owned(), "GDK_GL".to_owned()];
        let launchers = launchers(&url, &added);
        assert!(!launchers.is_empty(), "a launcher is known on Linux");
        for command in &launchers {
            let removed: Vec<String> = command
                .get_envs()
                .filter(|(_, v)| v.is_none())
                .map(|(k, _)| k.to_string_lossy().into_owned())
                .collect();
            for key in ["JSC_useJIT", "GDK_GL", crate::LEAN_ENV_MARKER] {
                assert!(removed.iter().any(|k| k == key), "{key} kept: {removed:?}");
            }
            assert!(
                !removed
                    .iter()
                    .any(|k| k == "WEBKIT_DISABLE_DMABUF_RENDERER"),
                "a variable not added by Slipway is kept: {removed:?}"
            );
        }
    }

    #[test]
    fn only_http_and_https_urls_are_opened() {
        assert!(checked_url("http://127.0.0.1:8123/").is_ok());
        assert!(checked_url("https://orders.example.com/health").is_ok());
        for (bad, says) in [
            ("file:///etc/passwd", "not file:"),
            ("javascript:alert(1)", "not javascript:"),
            ("localhost:8000", "not localhost:"),
            ("not a url", "url: not a URL"),
        ] {
            let e = checked_url(bad).expect_err(bad).to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
