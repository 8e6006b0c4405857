//! [`Services`]: the platform's handle on every backing server. The shared servers start on
//! the first resource that needs them; a Redis or memcached server per resource starts when
//! its resource is ensured (each deploy, and when the platform starts again).

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;

use tokio::sync::{Mutex, MutexGuard};

use crate::backup::load_pending;
use crate::dynalite::{AppKeys, AppTables, table_name};
use crate::error::ServiceError;
use crate::forward::Relays;
use crate::mariadb::Mariadb;
use crate::postgres::Postgres;
use crate::process::{ServerProcess, disk_usage, free_port};
use crate::seaweed::Seaweed;
use crate::spec::{Credentials, Engine, ResourceKey, ResourceSpec, new_password};

/// A table's access key id: `SLW` and 17 upper-case hex digits, the shape of an AWS key id
/// (20 characters), so tools that check the shape take it.
fn new_key_id() -> String {
    format!("SLW{}", &new_password()[..17]).to_ascii_uppercase()
}

/// Where the servers keep their data, and which PostgreSQL to use.
#[derive(Debug, Clone)]
pub struct ServicesConfig {
    /// `DATA_DIR/services`: the servers' data, configuration and logs.
    pub dir: PathBuf,
    /// An external PostgreSQL server (`--services-postgres-url`, a role that may create
    /// roles and databases) instead of the platform's own cluster.
    pub postgres_url: Option<String>,
}

/// A per-resource server, with the configuration it was started with (a changed one
/// restarts it).
#[derive(Debug)]
struct Own {
    server: ServerProcess,
    started_with: (Credentials, u64, Option<String>),
}

/// Every backing server of one platform.
#[derive(Debug)]
pub struct Services {
    config: ServicesConfig,
    postgres: Mutex<Option<Postgres>>,
    mariadb: Mutex<Option<Mariadb>>,
    seaweed: Mutex<Option<Seaweed>>,
    own: Mutex<HashMap<ResourceKey, Own>>,
    /// Each app's dynalite and its gate, by app id.
    tables: Mutex<HashMap<String, AppTables>>,
    /// The keys each app's gate accepts (its tables' and its buckets').
    keys: AppKeys,
    relays: Relays,
}

impl Services {
    /// A handle that starts nothing until a resource needs it.
    pub fn new(config: ServicesConfig) -> Self {
        Self {
            config,
            postgres: Mutex::new(None),
            mariadb: Mutex::new(None),
            seaweed: Mutex::new(None),
            own: Mutex::new(HashMap::new()),
            tables: Mutex::new(HashMap::new()),
            keys: AppKeys::default(),
            relays: Relays::default(),
        }
    }

    /// Makes the resource exist and accept `known` credentials (the ones the platform
    /// keeps for it), or new ones when there are none; returns the credentials in force.
    /// Idempotent: a resource that is there already is only repaired.
    pub async fn ensure(
        &self,
        spec: &ResourceSpec,
        known: Option<&Credentials>,
    ) -> Result<Credentials, ServiceError> {
        let slug = spec.key.slug();
        // The password kept for it, or a new one for a new resource.
        let password = known.map_or_else(new_password, |c| c.password.clone());
        match spec.engine {
            // A database a restore brought back is loaded before the app starts on it.
            Engine::Postgres => {
                let guard = self.postgres().await?;
                let pg = guard.as_ref().expect("started");
                let credentials = pg.provision(&slug, password).await?;
                load_pending(&self.config.dir, spec.engine, &slug, async |dump| {
                    pg.load(&slug, dump).await
                })
                .await?;
                Ok(credentials)
            }
            // A queue's database, then pgmq and the queue in it (as the resource's role).
            Engine::Pgmq => {
                let guard = self.postgres().await?;
                let pg = guard.as_ref().expect("started");
                let credentials = Credentials {
                    engine: Engine::Pgmq,
                    ..pg.provision(&slug, password).await?
                };
                load_pending(&self.config.dir, Engine::Postgres, &slug, async |dump| {
                    pg.load(&slug, dump).await
                })
                .await?;
                drop(guard);
                crate::queue::ensure(
                    &credentials,
                    &crate::binding::queue_name(&spec.key.name),
                    spec.fifo,
                )
                .await?;
                Ok(credentials)
            }
            Engine::Mysql => {
                let guard = self.mariadb().await?;
                let db = guard.as_ref().expect("started");
                let credentials = db.provision(&slug, password).await?;
                load_pending(&self.config.dir, spec.engine, &slug, async |dump| {
                    db.load(&slug, dump).await
                })
                .await?;
                Ok(credentials)
            }
            Engine::Seaweedfs => {
                let guard = self.seaweed().await?;
                let s3 = guard.as_ref().expect("started");
                let credentials = s3.provision(&slug, known, password).await?;
                load_pending(&self.config.dir, spec.engine, &slug, async |objects| {
                    s3.load(&credentials.database, objects).await
                })
                .await?;
                self.allow_key(&spec.key, &credentials);
                Ok(credentials)
            }
            Engine::Dynalite => self.ensure_table(spec, known, password).await,
            Engine::Redis | Engine::Memcached | Engine::Restate => {
                self.ensure_own(spec, known).await
            }
        }
    }

    /// Makes a server reachable for `app_id` at `on` (the gateway of the app's container
    /// network) on the port it has on loopback: a relay ([`crate::forward`]), so the server
    /// itself never listens beyond loopback. Idempotent.
    pub async fn expose(
        &self,
        app_id: &str,
        on: IpAddr,
        credentials: &Credentials,
    ) -> Result<(), ServiceError> {
        self.relays.open(app_id, on, credentials.port).await?;
        if credentials.engine == Engine::Restate
            && let Ok(admin) = credentials.database.parse()
        {
            self.relays.open(app_id, on, admin).await?;
        }
        Ok(())
    }

    /// Registers the endpoint `uri` of the app's durable service with the app's Restate
    /// server (whose credentials are `credentials`), after each deploy.
    pub async fn register_durable(
        &self,
        credentials: &Credentials,
        uri: &str,
    ) -> Result<crate::restate::Registered, ServiceError> {
        crate::restate::register(&credentials.admin_url(), uri).await
    }

    /// Lets the app's gate accept the key in `credentials` (a table's or a bucket's).
    fn allow_key(&self, key: &ResourceKey, credentials: &Credentials) {
        if let Ok(mut keys) = self.keys.write() {
            keys.entry(key.app_id.clone()).or_default().insert(
                key.clone(),
                (credentials.user.clone(), credentials.password.clone()),
            );
        }
    }

    /// Takes back the key of a destroyed resource.
    fn forget_key(&self, key: &ResourceKey) {
        if let Ok(mut keys) = self.keys.write()
            && let Some(app) = keys.get_mut(&key.app_id)
        {
            app.remove(key);
        }
    }

    /// A table on the app's dynalite (started, with its gate, for the app's first table),
    /// with a key of its own that the gate accepts.
    async fn ensure_table(
        &self,
        spec: &ResourceSpec,
        known: Option<&Credentials>,
        secret: String,
    ) -> Result<Credentials, ServiceError> {
        let key_id = known.map_or_else(new_key_id, |c| c.user.clone());
        let table = table_name(&spec.key.name);
        let mut tables = self.tables.lock().await;
        let server = self
            .app_tables(&mut tables, &spec.key, known.map(|c| c.port))
            .await?;
        server.create_table(&table, &spec.table_keys).await?;
        let socket = crate::dynalite::socket_of(&self.tables_dir(&spec.key)?);
        let pending = format!("{}/{table}", spec.key.app_slug());
        load_pending(
            &self.config.dir,
            Engine::Dynalite,
            &pending,
            async |items| crate::dynalite::load(&socket, &table, items).await,
        )
        .await?;
        let credentials = Credentials {
            engine: Engine::Dynalite,
            host: "127.0.0.1".into(),
            port: server.port,
            user: key_id,
            password: secret,
            database: table,
        };
        self.allow_key(&spec.key, &credentials);
        Ok(credentials)
    }

    /// Stops the relays of `app_id` anywhere but at `on` (every one of them for `None`).
    pub async fn unexpose(&self, app_id: &str, on: Option<IpAddr>) {
        self.relays.keep_only(app_id, on).await;
    }

    /// The same resource with a new password: the old one stops working.
    pub async fn rotate(
        &self,
        spec: &ResourceSpec,
        known: Option<&Credentials>,
    ) -> Result<Credentials, ServiceError> {
        if spec.engine == Engine::Restate {
            return Err(ServiceError::Unsupported(
                "a Restate server has no password to rotate: it listens on loopback and the \
                 app's network only"
                    .into(),
            ));
        }
        let fresh = known.map(|c| Credentials {
            password: new_password(),
            ..c.clone()
        });
        self.ensure(spec, fresh.as_ref()).await
    }

    async fn ensure_own(
        &self,
        spec: &ResourceSpec,
        known: Option<&Credentials>,
    ) -> Result<Credentials, ServiceError> {
        let credentials = match known {
            Some(c) => c.clone(),
            None if spec.engine == Engine::Restate => crate::restate::new_credentials()?,
            None => Credentials {
                engine: spec.engine,
                host: "127.0.0.1".into(),
                port: free_port()?,
                user: if spec.engine == Engine::Memcached {
                    spec.key.slug()
                } else {
                    String::new()
                },
                password: new_password(),
                database: String::new(),
            },
        };
        let wanted = (
            credentials.clone(),
            spec.memory_mb(),
            spec.retention.clone(),
        );
        let mut own = self.own.lock().await;
        if let Some(running) = own.get(&spec.key) {
            if running.started_with == wanted {
                return Ok(credentials);
            }
            let previous = own.remove(&spec.key).expect("present");
            previous.server.stop().await;
        }
        let dir = self.own_dir(spec)?;
        let server = match spec.engine {
            Engine::Redis => crate::redis::start(&dir, spec, &credentials).await?,
            Engine::Restate => crate::restate::start(&dir, spec, &credentials).await?,
            _ => crate::memcached::start(&dir, spec, &credentials).await?,
        };
        own.insert(
            spec.key.clone(),
            Own {
                server,
                started_with: wanted,
            },
        );
        Ok(credentials)
    }

    /// Removes the resource and its data for good.
    pub async fn destroy(&self, spec: &ResourceSpec) -> Result<(), ServiceError> {
        let slug = spec.key.slug();
        match spec.engine {
            // A server that is not running yet is started: the data is on its disk.
            Engine::Postgres | Engine::Pgmq => {
                let guard = self.postgres().await?;
                guard.as_ref().expect("started").destroy(&slug).await
            }
            Engine::Mysql => {
                let guard = self.mariadb().await?;
                guard.as_ref().expect("started").destroy(&slug).await
            }
            Engine::Seaweedfs => {
                let guard = self.seaweed().await?;
                guard.as_ref().expect("started").destroy(&slug).await?;
                self.forget_key(&spec.key);
                Ok(())
            }
            Engine::Dynalite => self.destroy_table(spec).await,
            Engine::Redis | Engine::Memcached | Engine::Restate => {
                if let Some(own) = self.own.lock().await.remove(&spec.key) {
                    own.server.stop().await;
                }
                let dir = self.own_dir(spec)?;
                if dir.exists() {
                    std::fs::remove_dir_all(&dir)?;
                }
                Ok(())
            }
        }
    }

    /// The PostgreSQL server, started (or connected to, when external) on first use.
    async fn postgres(&self) -> Result<MutexGuard<'_, Option<Postgres>>, ServiceError> {
        let mut guard = self.postgres.lock().await;
        if guard.is_none() {
            *guard = Some(match &self.config.postgres_url {
                Some(url) => Postgres::external(url).await?,
                None => Postgres::local(&self.dir()?).await?,
            });
        }
        Ok(guard)
    }

    /// The MariaDB server, started on first use.
    async fn mariadb(&self) -> Result<MutexGuard<'_, Option<Mariadb>>, ServiceError> {
        let mut guard = self.mariadb.lock().await;
        if guard.is_none() {
            *guard = Some(Mariadb::local(&self.dir()?).await?);
        }
        Ok(guard)
    }

    /// The S3 server, started on first use.
    async fn seaweed(&self) -> Result<MutexGuard<'_, Option<Seaweed>>, ServiceError> {
        let mut guard = self.seaweed.lock().await;
        if guard.is_none() {
            *guard = Some(Seaweed::local(&self.dir()?).await?);
        }
        Ok(guard)
    }

    /// How much data the resource holds, in bytes, when it can be measured without
    /// starting a server: a database's size, a Redis server's files on disk.
    pub async fn size(&self, spec: &ResourceSpec) -> Option<u64> {
        let slug = spec.key.slug();
        match spec.engine {
            Engine::Postgres | Engine::Pgmq => {
                self.postgres.lock().await.as_ref()?.size(&slug).await
            }
            Engine::Mysql => self.mariadb.lock().await.as_ref()?.size(&slug).await,
            Engine::Seaweedfs => self.seaweed.lock().await.as_ref()?.size(&slug).await,
            Engine::Redis | Engine::Restate => Some(disk_usage(&self.own_dir(spec).ok()?)),
            // DynamoDB's own TableSizeBytes is an estimate dynalite never updates: the bytes
            // of the app's table server on disk instead (all its tables).
            Engine::Dynalite => Some(disk_usage(&self.tables_dir(&spec.key).ok()?.join("data"))),
            Engine::Memcached => None,
        }
    }

    /// The process ids of every backing server running now (for the memory figures).
    pub async fn pids(&self) -> Vec<u32> {
        let mut pids = Vec::new();
        if let Some(pid) = self.postgres.lock().await.as_ref().and_then(Postgres::pid) {
            pids.push(pid);
        }
        if let Some(m) = self.mariadb.lock().await.as_ref() {
            pids.push(m.pid());
        }
        if let Some(s) = self.seaweed.lock().await.as_ref() {
            pids.push(s.pid());
        }
        pids.extend(self.own.lock().await.values().map(|o| o.server.pid()));
        pids.extend(self.tables.lock().await.values().map(AppTables::pid));
        pids.retain(|p| *p != 0);
        pids
    }

    /// Stops every server (on platform shutdown).
    pub async fn shutdown(&self) {
        self.relays.close_all().await;
        let own: Vec<Own> = self.own.lock().await.drain().map(|(_, o)| o).collect();
        for o in own {
            o.server.stop().await;
        }
        let tables: Vec<AppTables> = self.tables.lock().await.drain().map(|(_, t)| t).collect();
        for t in tables {
            t.stop().await;
        }
        if let Some(pg) = self.postgres.lock().await.take() {
            pg.stop().await;
        }
        if let Some(m) = self.mariadb.lock().await.take() {
            m.stop().await;
        }
        if let Some(s) = self.seaweed.lock().await.take() {
            s.stop().await;
        }
    }

    fn dir(&self) -> Result<PathBuf, ServiceError> {
        std::fs::create_dir_all(&self.config.dir)?;
        Ok(self.config.dir.clone())
    }

    /// The directory of the app's dynalite (`services/dynalite/<app slug>`).
    fn tables_dir(&self, key: &ResourceKey) -> Result<PathBuf, ServiceError> {
        let dir = self
            .dir()?
            .join(Engine::Dynalite.as_str())
            .join(key.app_slug());
        std::fs::create_dir_all(&dir)?;
        Ok(dir)
    }

    /// The app's dynalite and gate, started when not running: on `port` (the one its tables'
    /// credentials name), or a free one when there is none or it is taken (a restore onto
    /// another machine: the credentials returned, and so the binding, carry the new one).
    async fn app_tables<'a>(
        &self,
        tables: &'a mut HashMap<String, AppTables>,
        key: &ResourceKey,
        port: Option<u16>,
    ) -> Result<&'a AppTables, ServiceError> {
        if !tables.contains_key(&key.app_id) {
            let dir = self.tables_dir(key)?;
            let port = match port {
                Some(p) => p,
                None => free_port()?,
            };
            let started = match AppTables::start(&dir, &key.app_id, port, self.keys.clone()).await {
                Err(ServiceError::Io(e)) if e.kind() == std::io::ErrorKind::AddrInUse => {
                    AppTables::start(&dir, &key.app_id, free_port()?, self.keys.clone()).await?
                }
                other => other?,
            };
            tables.insert(key.app_id.clone(), started);
        }
        Ok(tables.get(&key.app_id).expect("started above"))
    }

    /// Deletes the table; the app's last table takes its server and directory with it.
    async fn destroy_table(&self, spec: &ResourceSpec) -> Result<(), ServiceError> {
        let dir = self.tables_dir(&spec.key)?;
        let mut tables = self.tables.lock().await;
        // A server that is not running is started to reach the data it holds.
        let server = self.app_tables(&mut tables, &spec.key, None).await?;
        server.delete_table(&table_name(&spec.key.name)).await?;
        self.forget_key(&spec.key);
        let socket = crate::dynalite::socket_of(&dir);
        if crate::dynalite::tables(&socket).await?.is_empty() {
            let server = tables.remove(&spec.key.app_id).expect("started");
            server.stop().await;
            std::fs::remove_dir_all(&dir)?;
        }
        Ok(())
    }

    fn own_dir(&self, spec: &ResourceSpec) -> Result<PathBuf, ServiceError> {
        Ok(self.dir()?.join(spec.engine.as_str()).join(spec.key.slug()))
    }
}
