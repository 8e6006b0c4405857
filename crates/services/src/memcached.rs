//! A memcached of a resource's own, with memcached's ASCII-protocol authentication (`-Y`):
//! a client must send the resource's user and password before any command, so another
//! app's credentials are refused. UDP is off; it listens on loopback only.

use std::path::Path;

use nix::sys::signal::Signal;

use crate::error::ServiceError;
use crate::process::{Launch, ServerProcess, find_program, secret_file, stop_leftover};
use crate::spec::{Credentials, ResourceSpec};

/// Writes the credentials file and starts the server.
pub(crate) async fn start(
    dir: &Path,
    spec: &ResourceSpec,
    credentials: &Credentials,
) -> Result<ServerProcess, ServiceError> {
    let program = find_program("memcached", "memcached")?;
    std::fs::create_dir_all(dir)?;
    let auth = dir.join("auth");
    secret_file(
        &auth,
        &format!("{}:{}\n", credentials.user, credentials.password),
    )?;
    let pid = dir.join("memcached.pid");
    stop_leftover(&pid, "memcached", Signal::SIGTERM).await;
    let mut args = vec![
        "--listen=127.0.0.1".to_owned(),
        format!("--port={}", credentials.port),
        "--udp-port=0".to_owned(),
        format!("--memory-limit={}", spec.memory_mb()),
        format!("--auth-file={}", auth.display()),
        format!("--pidfile={}", pid.display()),
    ];
    if nix::unistd::geteuid().is_root() {
        // memcached refuses to run as root unless told whom to run as.
        args.push("--user=root".to_owned());
    }
    ServerProcess::start(Launch::own(
        &spec.key,
        format!("memcached {}", spec.key.slug()),
        program,
        args,
        dir,
        credentials.port,
    ))
    .await
}
