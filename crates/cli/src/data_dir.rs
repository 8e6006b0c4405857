//! The servers' default data directories, as their commands (`platform …`, `care …`) and the
//! backups of them (`backup`) all resolve them. A leaf both sides use: while the helpers lived
//! in `platform` and `care`, `backup` used those modules and they used `backup` back (for
//! their backup subcommands).

use std::path::PathBuf;

/// The per-user data directory: `$XDG_DATA_HOME/slipway` or `~/.local/share/slipway`.
pub fn user_data_dir() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."))
        .join("slipway")
}

/// The platform's data directory: `--data-dir`, else `platform` in the user's.
pub fn platform_data_dir(arg: Option<PathBuf>) -> PathBuf {
    arg.unwrap_or_else(|| user_data_dir().join("platform"))
}

/// The care service's data directory: `--data-dir`, else `care` in the user's.
pub fn care_data_dir(arg: Option<PathBuf>) -> PathBuf {
    arg.unwrap_or_else(|| user_data_dir().join("care"))
}
