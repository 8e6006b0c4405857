//! A redis-server of a resource's own: a cache (a memory cap, least-recently-used eviction,
//! no persistence) or an in-memory database (append-only file synced on every write, never
//! evicts, so an acknowledged write survives a `kill -9` of the server). Both require the
//! resource's password and listen on loopback only.

use std::path::{Path, PathBuf};

use nix::sys::signal::Signal;

use crate::error::ServiceError;
use crate::process::{Launch, ServerProcess, find_program, secret_file, stop_leftover};
use crate::spec::{Credentials, ResourceSpec};

/// The configuration file a resource's server runs with, in its directory.
pub(crate) fn config(dir: &Path, spec: &ResourceSpec, credentials: &Credentials) -> String {
    let persistence = if spec.is_cache() {
        "maxmemory-policy allkeys-lru\nappendonly no\nsave \"\"\n"
    } else {
        "maxmemory-policy noeviction\nappendonly yes\nappendfsync always\nsave 60 1\n"
    };
    format!(
        "# Written by the Slipway platform for one resource; rewritten on each deploy.\n\
         bind 127.0.0.1\nport {port}\nprotected-mode yes\nrequirepass {password}\n\
         dir {dir}\npidfile {pid}\ndaemonize no\nlogfile \"\"\nmaxmemory {mb}mb\n{persistence}",
        port = credentials.port,
        password = credentials.password,
        dir = dir.display(),
        pid = dir.join("redis.pid").display(),
        mb = spec.memory_mb(),
    )
}

/// Writes the configuration (readable by its owner only: it holds the password) and starts
/// the server, stopping one an earlier run of the platform left behind.
pub(crate) async fn start(
    dir: &Path,
    spec: &ResourceSpec,
    credentials: &Credentials,
) -> Result<ServerProcess, ServiceError> {
    let program = find_program("redis-server", "redis-server")?;
    std::fs::create_dir_all(dir)?;
    let conf = conf_path(dir);
    secret_file(&conf, &config(dir, spec, credentials))?;
    stop_leftover(&dir.join("redis.pid"), "redis-server", Signal::SIGTERM).await;
    ServerProcess::start(Launch {
        name: format!("redis {}", spec.key.slug()),
        program,
        args: vec![conf.display().to_string()],
        log: dir.join("server.log"),
        user: None,
        stop_signal: Signal::SIGTERM,
        port: credentials.port,
    })
    .await
}

/// Where a resource's configuration is.
pub(crate) fn conf_path(dir: &Path) -> PathBuf {
    dir.join("redis.conf")
}
