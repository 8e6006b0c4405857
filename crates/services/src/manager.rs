//! [`Services`]: the platform's handle on every backing server. The shared servers start on
//! the first resource that needs them; a Redis or memcached server per resource starts when
//! its resource is ensured (each deploy, and when the platform starts again).

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;

use tokio::sync::{Mutex, MutexGuard};

use crate::backup::load_pending;
use crate::error::ServiceError;
use crate::forward::Relays;
use crate::mariadb::Mariadb;
use crate::postgres::Postgres;
use crate::process::{ServerProcess, disk_usage, free_port};
use crate::seaweed::Seaweed;
use crate::spec::{Credentials, Engine, ResourceKey, ResourceSpec, new_password};

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
    started_with: (Credentials, u64),
}

/// Every backing server of one platform.
#[derive(Debug)]
pub struct Services {
    config: ServicesConfig,
    postgres: Mutex<Option<Postgres>>,
    mariadb: Mutex<Option<Mariadb>>,
    seaweed: Mutex<Option<Seaweed>>,
    own: Mutex<HashMap<ResourceKey, Own>>,
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
                Ok(credentials)
            }
            Engine::Redis | Engine::Memcached => self.ensure_own(spec, known).await,
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
        self.relays.open(app_id, on, credentials.port).await
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
        let wanted = (credentials.clone(), spec.memory_mb());
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
                guard.as_ref().expect("started").destroy(&slug).await
            }
            Engine::Redis | Engine::Memcached => {
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
            Engine::Redis => Some(disk_usage(&self.own_dir(spec).ok()?)),
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

    fn own_dir(&self, spec: &ResourceSpec) -> Result<PathBuf, ServiceError> {
        Ok(self.dir()?.join(spec.engine.as_str()).join(spec.key.slug()))
    }
}
