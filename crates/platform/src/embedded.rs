//! An in-process platform for the desktop app and the MCP server when no platform is
//! configured, so everything works out of the box: the same server as `slipway platform
//! serve` (SQLite, `auto` builder, the process runtime), on its own thread and runtime so
//! blocking callers can use it, listening on a free loopback port with its gateway on
//! another. Its data lives under [`default_data_dir`], so apps, secrets and images survive
//! restarts of the program that embeds it; [`Lazy`] starts it on first use only.
//!
//! Two programs may want it at once (the desktop app and an MCP server): the first one starts
//! it and writes its URL to `DATA_DIR/embedded-url`; the second, finding the data directory
//! held, uses that running platform instead of starting its own.

use std::path::{Path, PathBuf};

use slipway_server::first_use::{FirstUse, Started};

use crate::config::PlatformConfig;
use crate::data_dir::{BOOTSTRAP_TOKEN_FILE, EMBEDDED_URL_FILE as URL_FILE};
use crate::error::PlatformError;

/// Where an embedded platform keeps its data: `$XDG_DATA_HOME/slipway/embedded-platform`
/// (else `~/.local/share/slipway/embedded-platform`). Separate from `slipway platform
/// serve`'s default directory, so the two never contend for the same database and key file.
pub fn default_data_dir() -> PathBuf {
    slipway_server::file::user_data_dir().join("embedded-platform")
}

/// A running embedded platform. Dropping it stops the server and every app it deployed.
#[derive(Debug)]
pub struct Embedded {
    server: slipway_server::background::Background,
    token: String,
    data_dir: PathBuf,
}

impl Embedded {
    /// Starts a platform on `data_dir` and returns once it listens.
    pub fn start(data_dir: &Path) -> Result<Self, PlatformError> {
        let data_dir = data_dir.to_path_buf();
        let config = PlatformConfig::new(([127, 0, 0, 1], 0).into(), data_dir.clone());
        let listen = config.listen;
        let server = slipway_server::background::Background::serve(
            "embedded-platform",
            listen,
            move || async move { crate::prepare(&config).await },
            crate::spawn,
        )
        .map_err(|e| PlatformError::Config(format!("the embedded platform: {e}")))?;
        let url = server.url().to_owned();
        let token = std::fs::read_to_string(data_dir.join(BOOTSTRAP_TOKEN_FILE))?
            .trim()
            .to_owned();
        crate::data_dir::write_secret_line(
            &data_dir.join(URL_FILE),
            &format!("{url} {}", std::process::id()),
        )?;
        tracing::info!(%url, data_dir = %data_dir.display(), "embedded platform started");
        Ok(Self {
            server,
            token,
            data_dir,
        })
    }

    /// The base URL of its API.
    pub fn url(&self) -> &str {
        self.server.url()
    }

    /// The bearer token of its first owner (the user of this machine).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Where its data lives.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Stops the server (and its deployed apps) and waits for it.
    pub fn stop(&mut self) {
        if self.server.stop() {
            let _ = std::fs::remove_file(self.data_dir.join(URL_FILE));
        }
    }
}

impl Drop for Embedded {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An embedded platform started on first use, then shared.
#[derive(Debug)]
pub struct Lazy(FirstUse<Embedded>);

impl Lazy {
    /// Nothing runs until [`Lazy::endpoint`] is first called.
    pub fn new(data_dir: PathBuf) -> Self {
        Self(FirstUse::new("the embedded platform", data_dir))
    }

    /// `(url, token)` of the platform, starting it on the first call. The error says what
    /// went wrong and how to use a platform server instead.
    pub fn endpoint(&self) -> Result<(String, String), String> {
        self.0
            .get_or_start(start, |e| (e.url().to_owned(), e.token().to_owned()))
    }

    /// Stops the platform if it was started.
    pub fn shutdown(&self) {
        if let Some(mut embedded) = self.0.take() {
            embedded.stop();
        }
    }
}

/// Uses the platform another program runs on `data_dir`, else starts one here.
fn start(data_dir: &Path) -> Result<Started<Embedded, (String, String)>, String> {
    if let Some(running) = running_elsewhere(data_dir) {
        return Ok(Started::Elsewhere(running));
    }
    let started = Embedded::start(data_dir);
    if started.is_err() {
        // Another program may be starting it right now: give it a moment to say where.
        for _ in 0..50 {
            if let Some(running) = running_elsewhere(data_dir) {
                return Ok(Started::Elsewhere(running));
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }
    let started = started.map_err(|e| {
        format!(
            "no platform is configured and the embedded one could not start on {}: {e}. \
             Start one with `slipway platform serve` and set SLIPWAY_PLATFORM_URL and \
             SLIPWAY_TOKEN, or run `slipway login`",
            data_dir.display()
        )
    })?;
    Ok(Started::Here(started))
}

/// `(url, token)` of an embedded platform another program runs on `data_dir` (see
/// [`running`]).
fn running_elsewhere(data_dir: &Path) -> Option<(String, String)> {
    running(data_dir).map(|r| (r.url, r.token))
}

/// An embedded platform some program runs: the desktop app, an MCP server or `slipway
/// platform local`.
#[derive(Clone, PartialEq, Eq)]
pub struct Running {
    /// The base URL of its API.
    pub url: String,
    /// The bearer token of its first owner (never logged: `Debug` hides it).
    pub token: String,
    /// The process that runs it.
    pub pid: u32,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("url", &self.url)
            .field("token", &"<redacted>")
            .field("pid", &self.pid)
            .finish()
    }
}

/// The embedded platform that runs on `data_dir`, if one does: its URL file (`"<url> <pid>"`)
/// names a process that is alive and an address that accepts connections. A file a crash left
/// behind (dead process) is ignored, so the owner's token is never sent to whatever listens
/// on that port now.
pub fn running(data_dir: &Path) -> Option<Running> {
    let text = std::fs::read_to_string(data_dir.join(URL_FILE)).ok()?;
    let (url, pid) = text.trim().split_once(' ')?;
    let pid: u32 = pid.parse().ok()?;
    if !Path::new(&format!("/proc/{pid}")).exists() {
        return None;
    }
    let url = url.to_owned();
    let addr: std::net::SocketAddr = url.strip_prefix("http://")?.parse().ok()?;
    std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(1)).ok()?;
    let token = std::fs::read_to_string(data_dir.join(BOOTSTRAP_TOKEN_FILE)).ok()?;
    Some(Running {
        url,
        token: token.trim().to_owned(),
        pid,
    })
}

impl Drop for Lazy {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_once_is_shared_by_a_second_user_and_stops() {
        let dir = tempfile::tempdir().unwrap();
        let first = Lazy::new(dir.path().to_path_buf());
        let (url, token) = first.endpoint().expect("the embedded platform starts");
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        assert_eq!(first.endpoint().unwrap(), (url.clone(), token.clone()));
        // A second program on the same data directory uses the running one.
        let second = Lazy::new(dir.path().to_path_buf());
        assert_eq!(second.endpoint().unwrap(), (url.clone(), token.clone()));
        first.shutdown();
        assert!(!dir.path().join(URL_FILE).exists());
        let addr = url.trim_start_matches("http://");
        assert!(std::net::TcpStream::connect(addr).is_err(), "stopped");
        // Restarting on the same directory keeps the owner's token.
        let again = Lazy::new(dir.path().to_path_buf());
        assert_eq!(again.endpoint().unwrap().1, token);
    }
}
