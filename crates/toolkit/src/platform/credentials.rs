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
use std::path::PathBuf;

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

fn check_environment(environment: &str) -> Result<(), ToolError> {
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
    config.environments.insert(
        environment.to_owned(),
        EnvironmentConfig {
            url: url.trim_end_matches('/').to_owned(),
        },
    );
    let text = serde_json::to_string_pretty(&config)
        .map_err(|e| ToolError::Internal(e.to_string()))?
        + "\n";
    let path = config_path();
    atomic_write(&path, text.as_bytes()).map_err(|e| ToolError::io("write", &path, &e))?;
    Ok(store)
}

fn store_token(environment: &str, token: &str) -> Result<TokenStore, ToolError> {
    let forced_file = std::env::var("SLIPWAY_TOKEN_STORE").is_ok_and(|v| v == "file");
    if !forced_file {
        let keyring = keyring::Entry::new(SERVICE, environment).and_then(|e| e.set_password(token));
        if keyring.is_ok() {
            let _ = std::fs::remove_file(token_path(environment));
            return Ok(TokenStore::Keyring);
        }
    }
    let path = token_path(environment);
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
    let path = token_path(environment);
    if let Ok(token) = std::fs::read_to_string(&path) {
        return Ok(Some((env.url, token.trim().to_owned())));
    }
    match keyring::Entry::new(SERVICE, environment).and_then(|e| e.get_password()) {
        Ok(token) => Ok(Some((env.url, token))),
        Err(_) => Err(ToolError::NotConfigured(format!(
            "environment {environment:?} has a URL ({}) but no stored token; run `slipway login` again",
            env.url
        ))),
    }
}
