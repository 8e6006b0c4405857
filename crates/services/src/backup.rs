//! The backing servers' part of `slipway platform backup` and `restore`: a consistent dump
//! of every resource that keeps data, written while the apps go on using it, in a layout the
//! restored platform picks up by itself.
//!
//! - A PostgreSQL or MariaDB database: a dump (one snapshot) as `restore/<slug>.pgdump` or
//!   `restore/<slug>.sql`. The restored platform makes the database again on its first
//!   deploy of the app and loads the dump into it before the app starts, then removes it
//!   ([`load_pending`]).
//! - An in-memory database (Redis, append-only): a snapshot taken by the server itself
//!   (`redis-cli --rdb`) stored as the base of its append-only file, so the restored server
//!   loads it on start. A server that is not running has its files copied as they are.
//! - A bucket (the S3 server's): every object, by its key, under `restore/s3/<bucket>/`,
//!   put back by the restored platform once it has made the bucket again.
//! - A key-value table: every item, one DynamoDB-typed JSON object per line, as
//!   `restore/dynalite/<app slug>/<table>.jsonl`, put back once the table is made again.
//! - Caches keep nothing worth restoring and are left out; so are Restate's journals (the
//!   workflows in flight when the backup is taken; an app's durable state belongs in its
//!   database).
//!
//! The paths are relative to the services directory (`DATA_DIR/services`).

use std::path::{Path, PathBuf};

use crate::error::ServiceError;
use crate::mariadb::{self, Mariadb};
use crate::postgres::{self, Postgres};
use crate::process::run;
use crate::seaweed::{self, Seaweed};
use crate::spec::Engine;

/// Where the dumps of the shared servers wait, after a restore, to be loaded.
const RESTORE_DIR: &str = "restore";

/// The file a database's dump is kept in until it is loaded (a bucket's: a directory).
fn pending_file(engine: Engine, slug: &str) -> PathBuf {
    let name = match engine {
        Engine::Postgres | Engine::Pgmq => format!("{slug}.pgdump"),
        Engine::Seaweedfs => {
            return Path::new(RESTORE_DIR)
                .join("s3")
                .join(seaweed::bucket_name(slug));
        }
        // `<app slug>/<table>`: a table's items, one JSON object per line.
        Engine::Dynalite => {
            return Path::new(RESTORE_DIR)
                .join(Engine::Dynalite.as_str())
                .join(format!("{slug}.jsonl"));
        }
        _ => format!("{slug}.sql"),
    };
    Path::new(RESTORE_DIR).join(name)
}

/// Whether the platform's servers are running (a backup beside a running platform only
/// connects to them) or not (the backup starts them for itself, and stops them after;
/// the caller holds the data directory's lock, so no platform starts meanwhile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Servers {
    /// A platform serves the data directory.
    Running,
    /// No platform does.
    Stopped,
}

/// Writes the dump of every resource that keeps data on the platform's own servers under
/// `services_dir` into `out` (in the layout above); returns the files written, relative to
/// `out`. A database on an external server (`--services-postgres-url`) is that server's to
/// back up.
pub async fn dump(
    services_dir: &Path,
    out: &Path,
    servers: Servers,
) -> Result<Vec<PathBuf>, ServiceError> {
    let mut written = Vec::new();
    std::fs::create_dir_all(out.join(RESTORE_DIR))?;
    if postgres::has_cluster(services_dir) {
        let pg = match servers {
            Servers::Running => Postgres::attach(services_dir).await?,
            Servers::Stopped => Postgres::local(services_dir).await?,
        };
        let dumped = async {
            for slug in pg.databases().await? {
                let file = pending_file(Engine::Postgres, &slug);
                pg.dump(&slug, &out.join(&file)).await?;
                written.push(file);
            }
            Ok::<_, ServiceError>(())
        }
        .await;
        pg.stop().await;
        dumped?;
    }
    if mariadb::has_server(services_dir) {
        let db = match servers {
            Servers::Running => Mariadb::attach(services_dir).await?,
            Servers::Stopped => Mariadb::local(services_dir).await?,
        };
        let dumped = async {
            for slug in db.databases().await? {
                let file = pending_file(Engine::Mysql, &slug);
                db.dump(&slug, &out.join(&file)).await?;
                written.push(file);
            }
            Ok::<_, ServiceError>(())
        }
        .await;
        db.stop().await;
        dumped?;
    }
    if seaweed::has_server(services_dir) {
        let s3 = match servers {
            Servers::Running => Seaweed::attach(services_dir).await?,
            Servers::Stopped => Seaweed::local(services_dir).await?,
        };
        let dumped = async {
            for bucket in s3.buckets() {
                let rel = Path::new(RESTORE_DIR).join("s3").join(&bucket);
                for key in s3.dump(&bucket, &out.join(&rel)).await? {
                    written.push(rel.join(key));
                }
            }
            Ok::<_, ServiceError>(())
        }
        .await;
        s3.stop().await;
        dumped?;
    }
    written.extend(dump_tables(services_dir, out).await?);
    for (slug, dir) in crate::redis::persistent(services_dir) {
        let rel = Path::new(Engine::Redis.as_str()).join(&slug);
        written.extend(
            snapshot_redis(&dir, &out.join(&rel))
                .await?
                .into_iter()
                .map(|f| rel.join(f)),
        );
    }
    Ok(written)
}

/// Every app's tables: read through the app's running dynalite, or one started for the
/// dump (no platform runs, or the app's server is down) and stopped after.
async fn dump_tables(services_dir: &Path, out: &Path) -> Result<Vec<PathBuf>, ServiceError> {
    let mut written = Vec::new();
    let Ok(apps) = std::fs::read_dir(services_dir.join(Engine::Dynalite.as_str())) else {
        return Ok(written);
    };
    for app in apps.filter_map(Result::ok) {
        let dir = app.path();
        let socket = crate::dynalite::socket_of(&dir);
        let running = tokio::net::UnixStream::connect(&socket).await.is_ok();
        let started = if running {
            None
        } else {
            let port = crate::process::free_port()?;
            Some(crate::dynalite::AppTables::start(&dir, "", port, Default::default()).await?)
        };
        let dumped = async {
            for table in crate::dynalite::tables(&socket).await? {
                let name = format!("{}/{table}", app.file_name().display());
                let file = pending_file(Engine::Dynalite, &name);
                crate::dynalite::dump(&socket, &table, &out.join(&file)).await?;
                written.push(file);
            }
            Ok::<_, ServiceError>(())
        }
        .await;
        if let Some(server) = started {
            server.stop().await;
        }
        dumped?;
    }
    Ok(written)
}

/// The append-only files of one in-memory database into `to`: the server's own snapshot
/// when it runs, else its files as they are (no server writes them); returns the files
/// written, relative to `to`.
async fn snapshot_redis(dir: &Path, to: &Path) -> Result<Vec<PathBuf>, ServiceError> {
    let aof = Path::new(crate::redis::AOF_DIR);
    std::fs::create_dir_all(to.join(aof))?;
    if let Some((port, password)) = crate::redis::reach(dir)
        && tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
    {
        let cli = crate::process::find_program("redis-cli", "redis-tools")?;
        let base = aof.join(crate::redis::RESTORED_BASE);
        let target = to.join(&base).display().to_string();
        let port = port.to_string();
        run(
            &cli,
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "--no-auth-warning",
                "--rdb",
                &target,
            ],
            None,
            None,
            &[("REDISCLI_AUTH", password.as_str())],
        )
        .await
        .map_err(|reason| ServiceError::Refused {
            server: "redis",
            action: "take a snapshot".into(),
            reason,
        })?;
        let manifest = aof.join(crate::redis::MANIFEST);
        std::fs::write(to.join(&manifest), crate::redis::restored_manifest())?;
        return Ok(vec![base, manifest]);
    }
    let mut copied = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir.join(aof)) else {
        return Ok(copied);
    };
    for entry in entries.filter_map(Result::ok) {
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            let file = aof.join(entry.file_name());
            std::fs::copy(entry.path(), to.join(&file))?;
            copied.push(file);
        }
    }
    copied.sort();
    Ok(copied)
}

/// Loads the dump a restore left for resource `slug` (a database's file, a bucket's
/// directory), if there is one, and removes it once loaded. A load that fails keeps the dump, so the next deploy tries again.
pub(crate) async fn load_pending(
    services_dir: &Path,
    engine: Engine,
    slug: &str,
    load: impl AsyncFnOnce(&Path) -> Result<(), ServiceError>,
) -> Result<(), ServiceError> {
    let file = services_dir.join(pending_file(engine, slug));
    if !file.exists() {
        return Ok(());
    }
    load(&file).await?;
    tracing::info!(resource = slug, "a resource's backup is loaded");
    if file.is_dir() {
        std::fs::remove_dir_all(&file)?;
    } else {
        std::fs::remove_file(&file)?;
    }
    // The directories that held only it go too (`restore/s3`, `restore/dynalite/<app>`), so
    // an empty `restore` says every dump is loaded.
    let restore = services_dir.join(RESTORE_DIR);
    let mut dir = file.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(&restore)) {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}
