//! A redis-server of a resource's own: a cache (a memory cap, least-recently-used eviction,
//! its keys saved only when its server stops, so a platform restart keeps them while a
//! crash of the server itself may not) or an in-memory database (append-only file synced on every write, never
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
        "maxmemory-policy allkeys-lru\nappendonly no\nsave \"\"\nshutdown-on-sigterm save\n"
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
    ServerProcess::start(Launch::own(
        &spec.key,
        format!("redis {}", spec.key.slug()),
        program,
        vec![conf.display().to_string()],
        dir,
        credentials.port,
    ))
    .await
}

/// Where a resource's configuration is.
pub(crate) fn conf_path(dir: &Path) -> PathBuf {
    dir.join("redis.conf")
}

/// The directory of an append-only server's files (Redis 7's default `appenddirname`).
pub(crate) const AOF_DIR: &str = "appendonlydir";
/// The list of those files, which the server reads first.
pub(crate) const MANIFEST: &str = "appendonly.aof.manifest";
/// A snapshot stored as the base of the append-only files (Redis 7 takes an RDB base).
pub(crate) const RESTORED_BASE: &str = "appendonly.aof.1.base.rdb";

/// The manifest of append-only files that are one snapshot and nothing after it.
pub(crate) fn restored_manifest() -> String {
    format!("file {RESTORED_BASE} seq 1 type b\n")
}

/// The in-memory databases under `services_dir` (their slugs and directories): the
/// servers whose configuration keeps an append-only file.
pub(crate) fn persistent(services_dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(services_dir.join("redis")) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            std::fs::read_to_string(conf_path(&e.path()))
                .is_ok_and(|c| c.lines().any(|l| l == "appendonly yes"))
        })
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
        .collect();
    out.sort();
    out
}

/// The port and password a resource's server was started with (from its configuration).
pub(crate) fn reach(dir: &Path) -> Option<(u16, String)> {
    let conf = std::fs::read_to_string(conf_path(dir)).ok()?;
    let value = |key: &str| {
        conf.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ').map(str::to_owned))
    };
    Some((value("port")?.parse().ok()?, value("requirepass")?))
}
