//! An app's Restate server, for its devfile's `durable` block: one `restate-server` per app
//! (its journals, state and timers in its own directory), sized for a small machine, with
//! telemetry off, its ingress and admin API on loopback ports of their own. After each
//! deploy the platform registers the durable service's endpoint with it ([`register`]).
//!
//! Restate is licensed BSL 1.1: running it for an organisation's own apps is permitted; offering
//! it to third parties as a hosted service is not (docs/resources.md says so).

use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde::Deserialize;

use crate::error::ServiceError;
use crate::process::{
    Launch, ServerProcess, find_program, free_port, pid_file, secret_file, stop_leftover,
};
use crate::spec::{Credentials, ResourceSpec};

/// How the program is found when missing.
const HOW: &str = "scripts/dev installs it (npm @restatedev/restate-server)";

/// The configuration an app's server runs with: RocksDB held to 256 MiB and 4 partitions
/// (its defaults assume 2 GiB and 24), the SQL query engine to 64 MiB, no outbound telemetry,
/// every listener on loopback.
pub(crate) fn config(
    credentials: &Credentials,
    fabric_port: u16,
    retention: Option<&str>,
) -> String {
    // The durable block's retention, for journals and workflow results alike.
    let retention = retention.map_or_else(String::new, |r| {
        format!(
            "default-journal-retention = \"{r}\"\ndefault-workflow-completion-retention = \"{r}\"\n"
        )
    });
    format!(
        "# Written by the Slipway platform for one app's durable workflows; rewritten on each start.\n\
         cluster-name = \"slipway\"\nnode-name = \"slipway\"\n\
         default-num-partitions = 4\nrocksdb-total-memory-size = \"256 MiB\"\n\
         disable-telemetry = true\nlog-format = \"compact\"\nlog-disable-ansi-codes = true\n\
         {retention}\
         bind-address = \"127.0.0.1:{fabric_port}\"\n\
         [ingress]\nbind-address = \"127.0.0.1:{ingress}\"\n\
         [admin]\nbind-address = \"127.0.0.1:{admin}\"\n\
         [admin.query-engine]\nmemory-size = \"64 MiB\"\n",
        ingress = credentials.port,
        admin = credentials.database,
    )
}

/// New credentials: loopback ports for the ingress and (in `database`) the admin API.
pub(crate) fn new_credentials() -> Result<Credentials, ServiceError> {
    Ok(Credentials {
        engine: crate::spec::Engine::Restate,
        host: "127.0.0.1".into(),
        port: free_port()?,
        user: String::new(),
        password: String::new(),
        database: free_port()?.to_string(),
    })
}

/// Starts the app's server in `dir` and waits until its admin API answers.
pub(crate) async fn start(
    dir: &Path,
    spec: &ResourceSpec,
    credentials: &Credentials,
) -> Result<ServerProcess, ServiceError> {
    let program = find_program("restate-server", HOW)?;
    std::fs::create_dir_all(dir)?;
    // The node-to-node port, internal to the one node, kept so the node's address holds.
    let fabric_file = dir.join("fabric.port");
    let fabric_port = match std::fs::read_to_string(&fabric_file)
        .ok()
        .and_then(|t| t.trim().parse().ok())
    {
        Some(port) => port,
        None => {
            let port = free_port()?;
            std::fs::write(&fabric_file, port.to_string())?;
            port
        }
    };
    let conf = dir.join("restate.toml");
    secret_file(
        &conf,
        &config(credentials, fabric_port, spec.retention.as_deref()),
    )?;
    stop_leftover(
        &pid_file(&dir.join("server.log")),
        "restate-server",
        Signal::SIGTERM,
    )
    .await;
    let args = vec![
        "--config-file".into(),
        conf.display().to_string(),
        "--base-dir".into(),
        dir.join("data").display().to_string(),
        "--no-logo".into(),
    ];
    let server = ServerProcess::start(Launch::own(
        &spec.key,
        format!("restate {}", spec.key.slug()),
        program,
        args,
        dir,
        credentials.port,
    ))
    .await?;
    wait_admin(&credentials.admin_url()).await?;
    Ok(server)
}

async fn wait_admin(admin: &str) -> Result<(), ServiceError> {
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let healthy = client
            .get(format!("{admin}/health"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if healthy {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(ServiceError::Start {
                server: "restate".into(),
                reason: "its admin API did not answer within 60s".into(),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What registering a deployment answers.
#[derive(Debug, Deserialize)]
pub struct Registered {
    /// The deployment's id at Restate (`dp_…`).
    pub id: String,
    /// The services it serves.
    #[serde(default)]
    pub services: Vec<RegisteredService>,
}

/// One service of a registered deployment.
#[derive(Debug, Deserialize)]
pub struct RegisteredService {
    /// Its name (`SupportAgent`).
    pub name: String,
}

/// Registers the endpoint `uri` (the durable service's new instance) with the server whose
/// admin API is `admin`, replacing a registration of the same services (`force`): Restate
/// discovers the handlers and routes new invocations to it. HTTP/2 first (hypercorn, the
/// durable-agent template's server, speaks it and Restate then streams); an endpoint that
/// speaks HTTP/1.1 only (uvicorn, the durable overlay's) is registered in Restate's
/// request-response mode.
pub async fn register(admin: &str, uri: &str) -> Result<Registered, ServiceError> {
    match register_as(admin, uri, false).await {
        Ok(registered) => Ok(registered),
        Err(h2) => register_as(admin, uri, true)
            .await
            .map_err(|h1| ServiceError::Refused {
                server: "restate",
                action: format!("register the deployment at {uri}"),
                reason: format!("over HTTP/2: {h2}; over HTTP/1.1: {h1}"),
            }),
    }
}

async fn register_as(admin: &str, uri: &str, http1: bool) -> Result<Registered, String> {
    let response = reqwest::Client::new()
        .post(format!("{admin}/deployments"))
        .header("content-type", "application/json")
        .body(serde_json::json!({"uri": uri, "force": true, "use_http_11": http1}).to_string())
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    let text = response.text().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("{status}: {text}"));
    }
    serde_json::from_str(&text).map_err(|e| format!("unexpected answer: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_keeps_every_listener_on_loopback_and_applies_the_retention() {
        let c = Credentials {
            engine: crate::spec::Engine::Restate,
            host: "127.0.0.1".into(),
            port: 18080,
            user: String::new(),
            password: String::new(),
            database: "19070".into(),
        };
        let text = config(&c, 15122, Some("7d"));
        for line in [
            "bind-address = \"127.0.0.1:15122\"",
            "bind-address = \"127.0.0.1:18080\"",
            "bind-address = \"127.0.0.1:19070\"",
            "disable-telemetry = true",
            "default-journal-retention = \"7d\"",
            "default-workflow-completion-retention = \"7d\"",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert!(!config(&c, 15122, None).contains("retention"));
    }
}
