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
    server: ServerProcess,
}

impl Mariadb {
    /// The platform's server under `services_dir`, made on first use, then started.
    pub async fn local(services_dir: &Path) -> Result<Self, ServiceError> {
        let server_bin = find_program("mariadbd", "mariadb-server")?;
        let install = find_program("mariadb-install-db", "mariadb-server")?;
        let client = find_program("mariadb", "mariadb-client")?;
        let dir = services_dir.join("mariadb");
        let port_file = services_dir.join("mariadb.port");
        let root = nix::unistd::geteuid().is_root();
        let admin_user = if root {
            "root".to_owned()
        } else {
            nix::unistd::User::from_uid(nix::unistd::geteuid())
                .ok()
                .flatten()
                .map_or_else(|| "root".to_owned(), |u| u.name)
        };
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
            run(&install, &args, None, None)
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
            program: server_bin,
            args,
            log: services_dir.join("mariadb.log"),
            user: None,
            stop_signal: Signal::SIGTERM,
            port,
        })
        .await?;
        Ok(Self {
            client,
            socket,
            admin_user,
            port,
            server,
        })
    }

    /// Runs SQL as the administrator; the rows as tab-separated lines.
    async fn sql(&self, action: &str, sql: &str) -> Result<String, ServiceError> {
        let socket = format!("--socket={}", self.socket.display());
        let user = format!("--user={}", self.admin_user);
        run(
            &self.client,
            &[
                "--no-defaults",
                &socket,
                &user,
                "--batch",
                "--skip-column-names",
            ],
            Some(sql),
            None,
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

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.server.pid()
    }

    /// Stops the server.
    pub async fn stop(self) {
        self.server.stop().await;
    }
}
