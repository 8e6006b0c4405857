//! The PostgreSQL cluster the platform runs (Debian's postgresql), or an external server the
//! operator names (`--services-postgres-url`): each relational database resource gets a
//! database and a login role of its own on it. `CONNECT` on the database is revoked from
//! `PUBLIC` and granted to its role only, so another app's role is refused at connection.
//!
//! PostgreSQL refuses to run as root: a platform running as root runs the cluster as the
//! `postgres` user the package creates, in a directory that user can reach.

use std::path::{Path, PathBuf};
use std::str::FromStr as _;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use sqlx::ConnectOptions as _;
use sqlx::postgres::{PgConnectOptions, PgConnection};

use crate::error::ServiceError;
use crate::process::{
    Launch, ServerProcess, find_program, free_port, read_port, run, secret_file, stop_leftover,
};
use crate::spec::{Credentials, Engine, new_password};

/// The cluster's administrator role.
const ADMIN: &str = "slipway";

/// Where the databases live.
#[derive(Debug)]
pub(crate) struct Postgres {
    /// How the platform signs in as an administrator.
    admin: PgConnectOptions,
    /// The host and port apps connect to.
    host: String,
    port: u16,
    /// The cluster's server, when this process runs it.
    server: Option<ServerProcess>,
    /// The platform's own cluster: where its programs are (`pg_dump` of the server's
    /// version) and the administrator's password, for the dumps of a backup.
    own: Option<(PathBuf, String)>,
}

/// The administrator's password and the cluster's port, kept in the services directory.
const ADMIN_FILE: &str = "postgres.admin";
const PORT_FILE: &str = "postgres.port";

/// Whether the platform has made its own cluster under `services_dir`.
pub(crate) fn has_cluster(services_dir: &Path) -> bool {
    services_dir.join(ADMIN_FILE).is_file()
}

impl Postgres {
    /// An external server: `url` names a role that may create roles and databases.
    pub async fn external(url: &str) -> Result<Self, ServiceError> {
        let admin = PgConnectOptions::from_str(url).map_err(|e| {
            ServiceError::Unsupported(format!(
                "--services-postgres-url is not a PostgreSQL URL: {e}"
            ))
        })?;
        let pg = Self {
            host: admin.get_host().to_owned(),
            port: admin.get_port(),
            admin,
            server: None,
            own: None,
        };
        pg.connect().await?;
        Ok(pg)
    }

    /// The platform's own cluster as a running platform serves it, without starting or
    /// stopping anything (a backup beside a running server).
    pub async fn attach(services_dir: &Path) -> Result<Self, ServiceError> {
        let bin = find_program("postgres", "postgresql")?;
        let pg = Self::own(services_dir, bin, None)?;
        pg.connect().await?;
        Ok(pg)
    }

    /// The cluster under `services_dir` as reached on loopback, with `server` when this
    /// process runs it.
    fn own(
        services_dir: &Path,
        bin: PathBuf,
        server: Option<ServerProcess>,
    ) -> Result<Self, ServiceError> {
        let password = std::fs::read_to_string(services_dir.join(ADMIN_FILE))?
            .trim()
            .to_owned();
        let port = read_port(&services_dir.join(PORT_FILE))?;
        // A link in PATH to the server's program: its siblings are beside the target.
        let bin = std::fs::canonicalize(&bin).unwrap_or(bin);
        Ok(Self {
            admin: PgConnectOptions::new()
                .host("127.0.0.1")
                .port(port)
                .username(ADMIN)
                .password(&password)
                .database("postgres"),
            host: "127.0.0.1".into(),
            port,
            server,
            own: Some((bin, password)),
        })
    }

    /// The platform's own cluster under `services_dir`, made on first use, then started.
    pub async fn local(services_dir: &Path) -> Result<Self, ServiceError> {
        let bin = find_program("postgres", "postgresql")?;
        let initdb = bin.with_file_name("initdb");
        let dir = cluster_dir(services_dir);
        let user = run_as()?;
        let password_file = services_dir.join(ADMIN_FILE);
        let port_file = services_dir.join(PORT_FILE);
        if !dir.join("PG_VERSION").exists() {
            init(&initdb, &dir, user, &password_file, &port_file).await?;
        }
        let port = read_port(&port_file)?;
        stop_leftover(&dir.join("postmaster.pid"), "postgres", Signal::SIGINT).await;
        let server = ServerProcess::start(Launch {
            name: "postgres".into(),
            serves: crate::process::Serves::Shared {
                engines: &["postgres", "pgmq"],
            },
            program: bin.clone(),
            args: [
                "-D",
                &dir.display().to_string(),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                &format!("port={port}"),
                "-c",
                "unix_socket_directories=",
                "-c",
                "shared_buffers=16MB",
                "-c",
                "max_connections=200",
            ]
            .map(str::to_owned)
            .to_vec(),
            log: services_dir.join("postgres.log"),
            user,
            stop_signal: Signal::SIGINT,
            port,
            socket: None,
        })
        .await?;
        let pg = Self::own(services_dir, bin, Some(server))?;
        pg.connect().await?;
        Ok(pg)
    }

    /// An administrator's connection, waiting out a server that is still starting.
    async fn connect(&self) -> Result<PgConnection, ServiceError> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self
                .admin
                .clone()
                .disable_statement_logging()
                .connect()
                .await
            {
                Ok(conn) => return Ok(conn),
                Err(e) if Instant::now() < deadline && e.to_string().contains("starting up") => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(refused("connect", &e)),
            }
        }
    }

    /// Makes (or repairs) the database `slug` owned by the role `slug` with `password`.
    pub async fn provision(
        &self,
        slug: &str,
        password: String,
    ) -> Result<Credentials, ServiceError> {
        let mut conn = self.connect().await?;
        let role_exists: Option<i32> =
            sqlx::query_scalar("SELECT 1 FROM pg_roles WHERE rolname = $1")
                .bind(slug)
                .fetch_optional(&mut conn)
                .await
                .map_err(|e| refused("look up a role", &e))?;
        let verb = if role_exists.is_some() {
            "ALTER"
        } else {
            "CREATE"
        };
        // The slug is [a-z0-9_] and the password hex: neither can break out of its quoting.
        exec(
            &mut conn,
            &format!("{verb} ROLE {slug} WITH LOGIN PASSWORD '{password}'"),
        )
        .await?;
        let db_exists: Option<i32> =
            sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = $1")
                .bind(slug)
                .fetch_optional(&mut conn)
                .await
                .map_err(|e| refused("look up a database", &e))?;
        if db_exists.is_none() {
            exec(&mut conn, &format!("CREATE DATABASE {slug} OWNER {slug}")).await?;
        }
        exec(
            &mut conn,
            &format!("REVOKE ALL ON DATABASE {slug} FROM PUBLIC"),
        )
        .await?;
        exec(
            &mut conn,
            &format!("GRANT CONNECT, TEMPORARY ON DATABASE {slug} TO {slug}"),
        )
        .await?;
        Ok(Credentials::database(
            Engine::Postgres,
            &self.host,
            self.port,
            slug,
            password,
        ))
    }

    /// Drops the database (closing its connections) and its role.
    pub async fn destroy(&self, slug: &str) -> Result<(), ServiceError> {
        let mut conn = self.connect().await?;
        exec(
            &mut conn,
            &format!("DROP DATABASE IF EXISTS {slug} WITH (FORCE)"),
        )
        .await?;
        exec(&mut conn, &format!("DROP ROLE IF EXISTS {slug}")).await
    }

    /// The database's size in bytes.
    pub async fn size(&self, slug: &str) -> Option<u64> {
        let mut conn = self.connect().await.ok()?;
        let size: Option<i64> = sqlx::query_scalar(
            "SELECT pg_database_size(datname) FROM pg_database WHERE datname = $1",
        )
        .bind(slug)
        .fetch_optional(&mut conn)
        .await
        .ok()?;
        size.and_then(|s| u64::try_from(s).ok())
    }

    /// The resources' databases on the server (by their slugs): every database but the
    /// cluster's own, since the platform makes nothing else on it.
    pub async fn databases(&self) -> Result<Vec<String>, ServiceError> {
        let mut conn = self.connect().await?;
        sqlx::query_scalar(
            "SELECT datname FROM pg_database WHERE NOT datistemplate AND datname <> 'postgres' \
             ORDER BY datname",
        )
        .fetch_all(&mut conn)
        .await
        .map_err(|e| refused("list the databases", &e))
    }

    /// Writes a consistent dump of database `slug` (pg_dump's custom format: one snapshot,
    /// however long it takes, while the app goes on writing) to `to`.
    pub async fn dump(&self, slug: &str, to: &Path) -> Result<(), ServiceError> {
        let to = to.display().to_string();
        self.client(
            "pg_dump",
            "dump a database",
            |db| {
                vec![
                    "--format=custom".into(),
                    "--no-owner".into(),
                    "--no-acl".into(),
                    format!("--dbname={db}"),
                    format!("--file={to}"),
                ]
            },
            slug,
        )
        .await
    }

    /// Loads a dump [`Postgres::dump`] wrote into database `slug`, in one transaction, its
    /// objects owned by the resource's role.
    pub async fn load(&self, slug: &str, from: &Path) -> Result<(), ServiceError> {
        let from = from.display().to_string();
        self.client(
            "pg_restore",
            "load a database's backup",
            |db| {
                vec![
                    "--no-owner".into(),
                    "--no-acl".into(),
                    format!("--role={slug}"),
                    "--single-transaction".into(),
                    "--exit-on-error".into(),
                    format!("--dbname={db}"),
                    from.clone(),
                ]
            },
            slug,
        )
        .await
    }

    /// Runs one of the cluster's client programs as the administrator on database `slug`.
    async fn client(
        &self,
        program: &str,
        action: &str,
        args: impl FnOnce(&str) -> Vec<String>,
        slug: &str,
    ) -> Result<(), ServiceError> {
        let Some((bin, password)) = &self.own else {
            return Err(ServiceError::Unsupported(format!(
                "{action}: the databases on the external server (--services-postgres-url) are \
                 backed up and restored by that server's own tools"
            )));
        };
        let mut all = vec![
            format!("--host={}", self.host),
            format!("--port={}", self.port),
            format!("--username={ADMIN}"),
            "--no-password".to_owned(),
        ];
        all.extend(args(slug));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        run(
            &bin.with_file_name(program),
            &all,
            None,
            None,
            &[("PGPASSWORD", password.as_str())],
        )
        .await
        .map(|_| ())
        .map_err(|reason| ServiceError::Refused {
            server: "postgres",
            action: action.to_owned(),
            reason,
        })
    }

    /// The server's process id, when the platform runs it.
    pub fn pid(&self) -> Option<u32> {
        self.server.as_ref().map(ServerProcess::pid)
    }

    /// Stops the cluster's server (fast shutdown), if the platform runs it.
    pub async fn stop(self) {
        if let Some(server) = self.server {
            server.stop().await;
        }
    }
}

async fn exec(conn: &mut PgConnection, sql: &str) -> Result<(), ServiceError> {
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(&mut *conn)
        .await
        .map(|_| ())
        .map_err(|e| refused(sql.split(" WITH LOGIN").next().unwrap_or(sql), &e))
}

fn refused(action: &str, e: &sqlx::Error) -> ServiceError {
    ServiceError::Refused {
        server: "postgres",
        action: action.to_owned(),
        reason: e.to_string(),
    }
}

/// `initdb` of a new cluster with a random administrator password and a free port.
async fn init(
    initdb: &Path,
    dir: &Path,
    user: Option<(u32, u32)>,
    password_file: &Path,
    port_file: &Path,
) -> Result<(), ServiceError> {
    if dir.exists() {
        // A cluster directory without PG_VERSION is an initdb that did not finish.
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    let password = new_password();
    let pw_in_cluster = dir.join(".pwfile");
    secret_file(&pw_in_cluster, &password)?;
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(dir, Some(uid), Some(gid))?;
        std::os::unix::fs::chown(&pw_in_cluster, Some(uid), Some(gid))?;
    }
    // initdb wants an empty directory: the password file sits beside it while it runs.
    let pw_beside = dir.with_extension("pwfile");
    std::fs::rename(&pw_in_cluster, &pw_beside)?;
    let args = [
        "-D".to_owned(),
        dir.display().to_string(),
        format!("--username={ADMIN}"),
        format!("--pwfile={}", pw_beside.display()),
        "--auth=scram-sha-256".to_owned(),
        "--encoding=UTF8".to_owned(),
        "--locale=C.UTF-8".to_owned(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = run(initdb, &args, None, user, &[]).await;
    let _ = std::fs::remove_file(&pw_beside);
    result.map_err(|reason| ServiceError::Start {
        server: "postgres".into(),
        reason: format!("initdb failed: {reason}"),
    })?;
    secret_file(password_file, &password)?;
    secret_file(port_file, &free_port()?.to_string())?;
    Ok(())
}

/// Whom the cluster runs as: the platform's own user, or `postgres` when that is root.
fn run_as() -> Result<Option<(u32, u32)>, ServiceError> {
    if !nix::unistd::geteuid().is_root() {
        return Ok(None);
    }
    let user = nix::unistd::User::from_name("postgres")
        .ok()
        .flatten()
        .ok_or_else(|| ServiceError::NotInstalled {
            program: "the postgres user".into(),
            package: "postgresql",
        })?;
    Ok(Some((user.uid.as_raw(), user.gid.as_raw())))
}

/// The cluster's directory: `services_dir/postgres`, unless the platform runs as root and
/// the `postgres` user cannot reach that (a data directory under `/root`); then a directory
/// of this data directory's own under `/var/lib/slipway`.
pub(crate) fn cluster_dir(services_dir: &Path) -> PathBuf {
    let inside = services_dir.join("postgres");
    if !nix::unistd::geteuid().is_root() || reachable_by_others(services_dir) {
        return inside;
    }
    let key = services_dir.display().to_string();
    // FNV-1a: a stable name per data directory, with no extra dependency.
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    PathBuf::from(format!("/var/lib/slipway/postgres-{hash:016x}"))
}

/// Whether every directory above `dir` lets other users through.
fn reachable_by_others(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    absolute
        .ancestors()
        .skip(1)
        .all(|a| std::fs::metadata(a).map_or(true, |m| m.permissions().mode() & 0o001 != 0))
}
