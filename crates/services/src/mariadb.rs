//! The MariaDB server the platform runs (Debian's mariadb-server) for `engine: mysql`: each
//! resource gets a database and a user of its own, granted that database only, so another
//! app's user is refused on it. The platform administers it over the server's Unix socket
//! as the operating-system user it runs as (MariaDB's `unix_socket` authentication).

use std::path::{Path, PathBuf};

use nix::sys::signal::Signal;

use crate::error::ServiceError;
use crate::process::{
    Launch, ServerProcess, find_program, free_port, read_port, run, secret_file, stop_leftover,
};
use crate::spec::{Credentials, Engine};

/// The shared server.
#[derive(Debug)]
pub(crate) struct Mariadb {
    client: PathBuf,
    socket: PathBuf,
    admin_user: String,
    port: u16,
    /// The server, when this process runs it.
    server: Option<ServerProcess>,
}

/// The server's data directory under the services directory.
const DIR: &str = "mariadb";

/// Whether the platform has made its MariaDB server under `services_dir`.
pub(crate) fn has_server(services_dir: &Path) -> bool {
    services_dir.join(DIR).join("mysql").is_dir()
}

/// Whom the platform administers the server as (`unix_socket` authentication).
fn admin_user() -> String {
    if nix::unistd::geteuid().is_root() {
        return "root".to_owned();
    }
    nix::unistd::User::from_uid(nix::unistd::geteuid())
        .ok()
        .flatten()
        .map_or_else(|| "root".to_owned(), |u| u.name)
}

impl Mariadb {
    /// The platform's server under `services_dir`, made on first use, then started.
    pub async fn local(services_dir: &Path) -> Result<Self, ServiceError> {
        let server_bin = find_program("mariadbd", "mariadb-server")?;
        let install = find_program("mariadb-install-db", "mariadb-server")?;
        let client = find_program("mariadb", "mariadb-client")?;
        let dir = services_dir.join(DIR);
        let port_file = services_dir.join("mariadb.port");
        let root = nix::unistd::geteuid().is_root();
        if !dir.join("mysql").exists() {
            std::fs::create_dir_all(&dir)?;
            let mut args = vec![
                "--no-defaults".to_owned(),
                format!("--datadir={}", dir.display()),
                "--auth-root-authentication-method=socket".to_owned(),
                "--skip-test-db".to_owned(),
            ];
            if root {
                args.push("--user=root".to_owned());
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run(&install, &args, None, None, &[])
                .await
                .map_err(|reason| ServiceError::Start {
                    server: "mariadb".into(),
                    reason: format!("mariadb-install-db failed: {reason}"),
                })?;
            secret_file(&port_file, &free_port()?.to_string())?;
        }
        let port = read_port(&port_file)?;
        let socket = dir.join("mysqld.sock");
        let pid = dir.join("mariadbd.pid");
        stop_leftover(&pid, "mariadbd", Signal::SIGTERM).await;
        let mut args = vec![
            "--no-defaults".to_owned(),
            format!("--datadir={}", dir.display()),
            format!("--port={port}"),
            "--bind-address=127.0.0.1".to_owned(),
            format!("--socket={}", socket.display()),
            format!("--pid-file={}", pid.display()),
            "--skip-name-resolve".to_owned(),
            "--innodb-buffer-pool-size=32M".to_owned(),
            "--performance-schema=OFF".to_owned(),
            "--max-connections=200".to_owned(),
        ];
        if root {
            args.push("--user=root".to_owned());
        }
        let server = ServerProcess::start(Launch {
            name: "mariadb".into(),
            serves: crate::process::Serves::Shared {
                engines: &["mysql"],
            },
            program: server_bin,
            args,
            log: services_dir.join("mariadb.log"),
            user: None,
            stop_signal: Signal::SIGTERM,
            port,
            socket: None,
        })
        .await?;
        Ok(Self {
            client,
            socket,
            admin_user: admin_user(),
            port,
            server: Some(server),
        })
    }

    /// The server as a running platform serves it, without starting or stopping anything
    /// (a backup beside a running server).
    pub async fn attach(services_dir: &Path) -> Result<Self, ServiceError> {
        let server = Self {
            client: find_program("mariadb", "mariadb-client")?,
            socket: services_dir.join(DIR).join("mysqld.sock"),
            admin_user: admin_user(),
            port: read_port(&services_dir.join("mariadb.port"))?,
            server: None,
        };
        server.sql("connect", "SELECT 1;").await?;
        Ok(server)
    }

    /// The administrator's connection arguments.
    fn admin_args(&self) -> [String; 3] {
        [
            "--no-defaults".to_owned(),
            format!("--socket={}", self.socket.display()),
            format!("--user={}", self.admin_user),
        ]
    }

    /// Runs SQL as the administrator; the rows as tab-separated lines.
    async fn sql(&self, action: &str, sql: &str) -> Result<String, ServiceError> {
        let [defaults, socket, user] = self.admin_args();
        run(
            &self.client,
            &[&defaults, &socket, &user, "--batch", "--skip-column-names"],
            Some(sql),
            None,
            &[],
        )
        .await
        .map_err(|reason| ServiceError::Refused {
            server: "mariadb",
            action: action.to_owned(),
            reason,
        })
    }

    /// Makes (or repairs) database `slug` and user `slug` with `password`, granted it alone.
    pub async fn provision(
        &self,
        slug: &str,
        password: String,
    ) -> Result<Credentials, ServiceError> {
        // The slug is [a-z0-9_] and the password hex: neither can break out of its quoting.
        self.sql(
            "create a database and its user",
            &format!(
                "CREATE DATABASE IF NOT EXISTS `{slug}`;\n\
                 CREATE USER IF NOT EXISTS '{slug}'@'%' IDENTIFIED BY '{password}';\n\
                 ALTER USER '{slug}'@'%' IDENTIFIED BY '{password}';\n\
                 GRANT ALL PRIVILEGES ON `{slug}`.* TO '{slug}'@'%';\n"
            ),
        )
        .await?;
        Ok(Credentials::database(
            Engine::Mysql,
            "127.0.0.1",
            self.port,
            slug,
            password,
        ))
    }

    /// Drops the database and its user.
    pub async fn destroy(&self, slug: &str) -> Result<(), ServiceError> {
        self.sql(
            "drop a database and its user",
            &format!("DROP DATABASE IF EXISTS `{slug}`;\nDROP USER IF EXISTS '{slug}'@'%';\n"),
        )
        .await
        .map(|_| ())
    }

    /// The database's size in bytes (its tables' data and indexes).
    pub async fn size(&self, slug: &str) -> Option<u64> {
        self.sql(
            "measure a database",
            &format!(
                "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = '{slug}';"
            ),
        )
        .await
        .ok()?
        .trim()
        .parse()
        .ok()
    }

    /// The resources' databases on the server (by their slugs): every database but the
    /// server's own, since the platform makes nothing else on it.
    pub async fn databases(&self) -> Result<Vec<String>, ServiceError> {
        const SYSTEM: &[&str] = &["information_schema", "mysql", "performance_schema", "sys"];
        let rows = self.sql("list the databases", "SHOW DATABASES;").await?;
        Ok(rows
            .lines()
            .filter(|db| !SYSTEM.contains(db))
            .map(str::to_owned)
            .collect())
    }

    /// Writes a consistent dump of database `slug` (one transaction's snapshot, while the
    /// app goes on writing) to `to`.
    pub async fn dump(&self, slug: &str, to: &Path) -> Result<(), ServiceError> {
        let dump = find_program("mariadb-dump", "mariadb-client")?;
        let file = format!("--result-file={}", to.display());
        let args = [
            "--single-transaction",
            "--routines",
            "--triggers",
            &file,
            slug,
        ];
        self.admin_run(&dump, &args, "dump a database").await
    }

    /// Loads a dump [`Mariadb::dump`] wrote into database `slug` (its tables are dropped
    /// and made again, so a load that stopped half way can be run again).
    pub async fn load(&self, slug: &str, from: &Path) -> Result<(), ServiceError> {
        let source = format!("--execute=source {}", from.display());
        self.admin_run(&self.client, &[&source, slug], "load a database's backup")
            .await
    }

    /// Runs one of MariaDB's client programs as the administrator with `args`.
    async fn admin_run(
        &self,
        program: &Path,
        args: &[&str],
        action: &str,
    ) -> Result<(), ServiceError> {
        let [defaults, socket, user] = self.admin_args();
        let mut all = vec![defaults.as_str(), socket.as_str(), user.as_str()];
        all.extend_from_slice(args);
        run(program, &all, None, None, &[])
            .await
            .map(|_| ())
            .map_err(|reason| ServiceError::Refused {
                server: "mariadb",
                action: action.to_owned(),
                reason,
            })
    }

    /// The server's process id, when this process runs it.
    pub fn pid(&self) -> u32 {
        self.server.as_ref().map_or(0, ServerProcess::pid)
    }

    /// Stops the server, when this process runs it.
    pub async fn stop(self) {
        if let Some(server) = self.server {
            server.stop().await;
        }
    }
}
