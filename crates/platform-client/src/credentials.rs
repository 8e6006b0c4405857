//! Where `slipway login` keeps a platform's URL and token, and how tools find them again.
//!
//! The URL of each environment is in `config.json` in the config directory
//! (`$SLIPWAY_CONFIG_DIR`, else `$XDG_CONFIG_HOME/slipway`, else `~/.config/slipway`). The
//! token goes to the OS keyring (service `slipway`, account = the environment). A machine
//! without a keyring service (a headless Linux without a Secret Service on D-Bus), or
//! `SLIPWAY_TOKEN_STORE=file`, keeps the token in `tokens/<environment>` in the config
//! directory instead, readable by its owner only (0600); `slipway login` says which it used.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::fsutil::atomic_write;

const SERVICE: &str = "slipway";

/// `config.json`.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Config {
    #[serde(default)]
    environments: BTreeMap<String, EnvironmentConfig>,
}

#[derive(Debug, Serialize, Deserialize)]
struct EnvironmentConfig {
    url: String,
    /// The care services' base URL, when the environment has them (the desktop signs in to
    /// both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    care_url: Option<String>,
    /// The care services' namespace segment (default `care`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    care_namespace: Option<String>,
    /// A PEM bundle of the private CA the environment's servers use (`slipway login
    /// --ca-file`), trusted for its URLs only (see [`crate::trust`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ca_file: Option<PathBuf>,
}

/// Where a token was stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenStore {
    /// The OS keyring.
    Keyring,
    /// The 0600 file at this path.
    File(PathBuf),
}

/// The config directory.
pub fn config_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SLIPWAY_CONFIG_DIR") {
        return PathBuf::from(dir);
    }
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .unwrap_or_else(|| PathBuf::from("."))
        .join("slipway")
}

fn config_path() -> PathBuf {
    config_dir().join("config.json")
}

fn token_path(environment: &str) -> PathBuf {
    config_dir().join("tokens").join(environment)
}

fn read_config() -> Result<Config, ToolError> {
    let path = config_path();
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| ToolError::invalid_args(format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(e) => Err(ToolError::io("read", &path, &e)),
    }
}

/// Refuses an environment name that is not 1-63 letters, digits, `-` or `_`: the name becomes
/// a file name and a token-store account, and the care client names drafts by it too.
pub fn check_environment(environment: &str) -> Result<(), ToolError> {
    let ok = !environment.is_empty()
        && environment.len() <= 63
        && environment
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(ToolError::invalid(
            "environment",
            format!("{environment:?} must be 1-63 letters, digits, '-' or '_'"),
        ))
    }
}

/// Saves `url` for `environment` and stores `token`; returns where the token went.
pub fn login(environment: &str, url: &str, token: &str) -> Result<TokenStore, ToolError> {
    check_environment(environment)?;
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ToolError::invalid(
            "url",
            format!("{url:?} must start with http:// or https://"),
        ));
    }
    if token.trim().is_empty() {
        return Err(ToolError::invalid("token", "must not be empty"));
    }
    let store = store_token(environment, token.trim())?;
    let mut config = read_config()?;
    let url = url.trim_end_matches('/').to_owned();
    match config.environments.get_mut(environment) {
        // A login keeps the care settings the desktop saved for the environment, and the CA
        // saved for it while the server stays the same (another server's CA is not kept).
        Some(existing) => {
            if crate::url::origin(&existing.url) != crate::url::origin(&url) {
                existing.ca_file = None;
            }
            existing.url = url;
        }
        None => {
            config.environments.insert(
                environment.to_owned(),
                EnvironmentConfig {
                    url,
                    care_url: None,
                    care_namespace: None,
                    ca_file: None,
                },
            );
        }
    }
    write_config(&config)?;
    Ok(store)
}

fn write_config(config: &Config) -> Result<(), ToolError> {
    let text = serde_json::to_string_pretty(config)
        .map_err(|e| ToolError::Internal(e.to_string()))?
        + "\n";
    let path = config_path();
    atomic_write(&path, text.as_bytes()).map_err(|e| ToolError::io("write", &path, &e))
}

/// Stores `token` under `account` (an environment's name, [`care_account`] of one, or another
/// secret of the desktop under a name with a `.`, such as the care drafts' key).
pub(crate) fn store_token(account: &str, token: &str) -> Result<TokenStore, ToolError> {
    store(account, token, false)
}

/// Stores a secret that must stay where it is read from: like [`store_token`], except that a
/// keyring which runs but refuses (locked, its unlock prompt dismissed) is an error rather than
/// a reason to write the file, which would then shadow the keyring's entry for good.
pub fn store_token_strictly(account: &str, token: &str) -> Result<TokenStore, ToolError> {
    store(account, token, true)
}

fn store(account: &str, token: &str, strict: bool) -> Result<TokenStore, ToolError> {
    let forced_file = std::env::var("SLIPWAY_TOKEN_STORE").is_ok_and(|v| v == "file");
    if !forced_file {
        match keyring::Entry::new(SERVICE, account).and_then(|e| e.set_password(token)) {
            Ok(()) => {
                let _ = std::fs::remove_file(token_path(account));
                return Ok(TokenStore::Keyring);
            }
            Err(e) if strict && !no_keyring_service(&e) => {
                return Err(ToolError::Internal(format!(
                    "the keyring refused the secret: {e}"
                )));
            }
            Err(_) => {}
        }
    }
    let path = token_path(account);
    let dir = path.parent().unwrap_or(&path);
    std::fs::create_dir_all(dir).map_err(|e| ToolError::io("create", dir, &e))?;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    crate::fsutil::atomic_write_secret(&path, token.as_bytes())
        .map_err(|e| ToolError::io("write", &path, &e))?;
    Ok(TokenStore::File(path))
}

/// The URL and token `slipway login` saved for `environment`, if any.
pub fn saved(environment: &str) -> Result<Option<(String, String)>, ToolError> {
    check_environment(environment)?;
    let Some(env) = read_config()?.environments.remove(environment) else {
        return Ok(None);
    };
    match read_token(environment) {
        Some((token, _)) => Ok(Some((env.url, token))),
        None => Err(ToolError::NotConfigured(format!(
            "environment {environment:?} has a URL ({}) but no stored token; run `slipway login` again",
            env.url
        ))),
    }
}

/// Which care token an account holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CareRole {
    /// Care staff: enrollment and missing information.
    Staff,
    /// Care admin: users and permissions.
    Admin,
}

/// The keyring account (and token file name) of an environment's care token. Environment
/// names have no `.`, so these never collide with one.
fn care_account(environment: &str, role: CareRole) -> String {
    match role {
        CareRole::Staff => format!("{environment}.care-staff"),
        CareRole::Admin => format!("{environment}.care-admin"),
    }
}

/// The token stored under `account`: the 0600 file first (it is only there when the keyring
/// was not), then the keyring; `None` when neither has one, or it cannot be read.
pub(crate) fn read_token(account: &str) -> Option<(String, TokenStore)> {
    look_up_token(account).ok().flatten()
}

/// The same, telling "there is none" (`Ok(None)`: no file, and the keyring has no entry or no
/// keyring service runs) from "it cannot be read now" (`Err`: the keyring is locked, its
/// unlock prompt was dismissed, the file is unreadable), for a secret that must not be made
/// anew while the old one is only out of reach.
pub fn look_up_token(account: &str) -> Result<Option<(String, TokenStore)>, String> {
    let path = token_path(account);
    match std::fs::read_to_string(&path) {
        Ok(token) => return Ok(Some((token.trim().to_owned(), TokenStore::File(path)))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("could not read {}: {e}", path.display())),
    }
    match keyring::Entry::new(SERVICE, account).and_then(|e| e.get_password()) {
        Ok(token) => Ok(Some((token, TokenStore::Keyring))),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) if no_keyring_service(&e) => Ok(None),
        Err(e) => Err(format!("the keyring could not be read: {e}")),
    }
}

/// Whether a keyring error means no keyring service runs here (no D-Bus session, no Secret
/// Service on it): the file is where such a secret lives then. A locked keyring, or one
/// whose unlock prompt was dismissed, is `NoStorageAccess` instead.
fn no_keyring_service(e: &keyring::Error) -> bool {
    matches!(e, keyring::Error::PlatformFailure(_))
}

/// Forgets the token under `account` in both stores.
fn forget_token(account: &str) -> Result<(), ToolError> {
    let path = token_path(account);
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(ToolError::io("remove", &path, &e)),
    }
    if let Ok(entry) = keyring::Entry::new(SERVICE, account) {
        match entry.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => {}
            // No keyring service here: nothing can be in it.
            Err(keyring::Error::PlatformFailure(_) | keyring::Error::NoStorageAccess(_)) => {}
            Err(e) => {
                return Err(ToolError::Internal(format!(
                    "could not remove the token from the keyring: {e}"
                )));
            }
        }
    }
    Ok(())
}

/// A remote environment as the desktop signs in to it: the platform, and optionally the care
/// services, with their tokens.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteEnvironment {
    /// The environment's name (1-63 letters, digits, `-`, `_`).
    pub name: String,
    /// The platform's base URL.
    pub platform_url: String,
    /// The platform token.
    pub platform_token: String,
    /// The care services' base URL (none: the environment has no care services).
    #[serde(default)]
    pub care_url: Option<String>,
    /// The care namespace segment (default `care`).
    #[serde(default)]
    pub care_namespace: Option<String>,
    /// The care staff token.
    #[serde(default)]
    pub care_token: Option<String>,
    /// The care admin token.
    #[serde(default)]
    pub care_admin_token: Option<String>,
}

fn check_url(field: &str, url: &str) -> Result<String, ToolError> {
    let url = url.trim();
    if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
        return Err(ToolError::invalid(
            field,
            format!("{url:?} must be an http:// or https:// URL"),
        ));
    }
    Ok(url.trim_end_matches('/').to_owned())
}

fn blank_to_none(value: Option<&String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

impl RemoteEnvironment {
    /// Checks every field, naming the first that breaks its rule; returns the environment
    /// with URLs and tokens trimmed and empty optional fields as `None`.
    pub fn checked(&self) -> Result<Self, ToolError> {
        check_environment(&self.name)?;
        let platform_url = check_url("platform_url", &self.platform_url)?;
        if self.platform_token.trim().is_empty() {
            return Err(ToolError::invalid("platform_token", "must not be empty"));
        }
        let care_url = match blank_to_none(self.care_url.as_ref()) {
            Some(url) => Some(check_url("care_url", &url)?),
            None => None,
        };
        let care_token = blank_to_none(self.care_token.as_ref());
        let care_admin_token = blank_to_none(self.care_admin_token.as_ref());
        if care_url.is_none() && (care_token.is_some() || care_admin_token.is_some()) {
            return Err(ToolError::invalid(
                "care_url",
                "is needed for the care tokens: the care services' base URL",
            ));
        }
        let care_namespace = blank_to_none(self.care_namespace.as_ref());
        if let Some(ns) = &care_namespace
            && !ns
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(ToolError::invalid(
                "care_namespace",
                format!("{ns:?} must be letters, digits, '-' or '_' (one path segment)"),
            ));
        }
        Ok(Self {
            name: self.name.clone(),
            platform_url,
            platform_token: self.platform_token.trim().to_owned(),
            care_url,
            care_namespace,
            care_token,
            care_admin_token,
        })
    }
}

/// Saves a remote environment: its URLs in `config.json`, its tokens in the keyring (or the
/// 0600 files where there is none). Care tokens left out are forgotten, so what is stored is
/// what was signed in with. Returns where the tokens went.
pub fn sign_in(env: &RemoteEnvironment) -> Result<TokenStore, ToolError> {
    let env = env.checked()?;
    let store = store_token(&env.name, &env.platform_token)?;
    for (role, token) in [
        (CareRole::Staff, &env.care_token),
        (CareRole::Admin, &env.care_admin_token),
    ] {
        let account = care_account(&env.name, role);
        match token {
            Some(t) => {
                store_token(&account, t)?;
            }
            None => forget_token(&account)?,
        }
    }
    let mut config = read_config()?;
    // The CA a `slipway login --ca-file` saved stays with the environment.
    let ca_file = config
        .environments
        .get(&env.name)
        .and_then(|e| e.ca_file.clone());
    config.environments.insert(
        env.name.clone(),
        EnvironmentConfig {
            url: env.platform_url.clone(),
            care_url: env.care_url.clone(),
            care_namespace: env.care_namespace.clone(),
            ca_file,
        },
    );
    write_config(&config)?;
    Ok(store)
}

/// Saves `ca_file` (absolute, checked by [`crate::trust::add_ca_file`]) as the CA bundle of
/// `environment`, which must have been logged in to.
pub fn set_ca_file(environment: &str, ca_file: &Path) -> Result<(), ToolError> {
    let mut config = read_config()?;
    let Some(saved) = config.environments.get_mut(environment) else {
        return Err(ToolError::NotFound(format!(
            "no environment {environment:?} (log in first)"
        )));
    };
    saved.ca_file = Some(ca_file.to_path_buf());
    write_config(&config)
}

/// The CA bundles saved for environments whose platform or care URL is the server of `url`.
/// A config that cannot be read gives none (the request then fails on trust and says so).
pub fn saved_ca_files(url: &str) -> Vec<PathBuf> {
    let Some(target) = crate::url::origin(url) else {
        return Vec::new();
    };
    let Ok(config) = read_config() else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = Vec::new();
    for env in config.environments.values() {
        let Some(ca_file) = &env.ca_file else {
            continue;
        };
        let same = std::iter::once(&env.url)
            .chain(env.care_url.as_ref())
            .any(|u| crate::url::origin(u).as_ref() == Some(&target));
        if same && !files.contains(ca_file) {
            files.push(ca_file.clone());
        }
    }
    files
}

/// Signs out of `environment`: forgets its tokens in both stores. Its URLs stay, so signing in
/// again asks only for the tokens.
pub fn sign_out(environment: &str) -> Result<(), ToolError> {
    check_environment(environment)?;
    forget_token(environment)?;
    forget_token(&care_account(environment, CareRole::Staff))?;
    forget_token(&care_account(environment, CareRole::Admin))
}

/// A saved environment as a list shows it (never a token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SavedEnvironment {
    /// Its name.
    pub name: String,
    /// The platform's URL.
    pub platform_url: String,
    /// The care services' URL, if any.
    pub care_url: Option<String>,
    /// The care namespace, if not the default.
    pub care_namespace: Option<String>,
    /// Whether a platform token is stored (signed in).
    pub signed_in: bool,
    /// Where the platform token is: `keyring`, or the file's path; null when signed out.
    pub token_store: Option<String>,
}

impl TokenStore {
    /// How a screen names the store.
    pub fn describe(&self) -> String {
        match self {
            TokenStore::Keyring => "keyring".to_owned(),
            TokenStore::File(path) => path.display().to_string(),
        }
    }
}

/// Every saved environment, by name.
pub fn environments() -> Result<Vec<SavedEnvironment>, ToolError> {
    Ok(read_config()?
        .environments
        .into_iter()
        .map(|(name, env)| {
            let store = read_token(&name).map(|(_, store)| store);
            SavedEnvironment {
                signed_in: store.is_some(),
                token_store: store.as_ref().map(TokenStore::describe),
                platform_url: env.url,
                care_url: env.care_url,
                care_namespace: env.care_namespace,
                name,
            }
        })
        .collect())
}

/// A care service: `(base URL, namespace, staff token, admin token)`, as
/// `slipway_care_client::configured` gives it from the process environment.
pub type CareService = (String, String, Option<String>, Option<String>);

/// A signed-in environment's care service; `None` when the environment has no care URL.
pub fn saved_care(environment: &str) -> Result<Option<CareService>, ToolError> {
    check_environment(environment)?;
    let Some(env) = read_config()?.environments.remove(environment) else {
        return Ok(None);
    };
    let Some(url) = env.care_url else {
        return Ok(None);
    };
    let token = |role| read_token(&care_account(environment, role)).map(|(t, _)| t);
    Ok(Some((
        url,
        env.care_namespace.unwrap_or_else(|| "care".to_owned()),
        token(CareRole::Staff),
        token(CareRole::Admin),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(name: &str) -> RemoteEnvironment {
        RemoteEnvironment {
            name: name.into(),
            platform_url: "http://127.0.0.1:8700/".into(),
            platform_token: " tok ".into(),
            care_url: Some("http://127.0.0.1:8787".into()),
            care_token: Some("staff-tok".into()),
            ..RemoteEnvironment::default()
        }
    }

    #[test]
    fn each_broken_rule_names_its_field() {
        let cases: Vec<(RemoteEnvironment, &str)> = vec![
            (remote("a b"), "environment"),
            (
                RemoteEnvironment {
                    platform_url: "ftp://x".into(),
                    ..remote("ok")
                },
                "platform_url",
            ),
            (
                RemoteEnvironment {
                    platform_token: "  ".into(),
                    ..remote("ok")
                },
                "platform_token",
            ),
            (
                RemoteEnvironment {
                    care_url: Some("care.example".into()),
                    ..remote("ok")
                },
                "care_url",
            ),
            (
                RemoteEnvironment {
                    care_url: None,
                    ..remote("ok")
                },
                "care_url",
            ),
            (
                RemoteEnvironment {
                    care_namespace: Some("a/b".into()),
                    ..remote("ok")
                },
                "care_namespace",
            ),
        ];
        for (env, field) in cases {
            assert_eq!(env.checked().unwrap_err().field(), Some(field), "{env:?}");
        }
        let ok = remote("staging").checked().unwrap();
        assert_eq!(ok.platform_url, "http://127.0.0.1:8700");
        assert_eq!(ok.platform_token, "tok");
        assert_eq!(ok.care_admin_token, None);
    }
}
