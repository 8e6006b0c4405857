//! The backing resources of apps (`managedInfra`): reconciled on every deploy, bound to the
//! app's services through a versioned app secret, reported, rotated and destroyed.
//!
//! Each resource's credentials are the app secret `slipway/resources/<kind>/<name>` (the
//! platform is their only writer; they survive a detach, so a resource declared again gets
//! its data and credentials back). The variables every service of the app receives are the
//! app secret `slipway/binding` ([`slipway_services::binding`] names them); a deployment
//! records the version it ran with. A rollback runs with the current binding, since the
//! credentials an older deployment used may have been rotated away.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use serde_json::{Map, Value};
use slipway_devfile::{Devfile, ResourceKind};
use slipway_runtime::runtime::Runtime;
use slipway_services::binding::{self, Bound};
use slipway_services::{Credentials, Engine, ResourceKey, ResourceSpec, Services, TableKeys};

use crate::db::{Db, Tx};
use crate::store::resources::ResourceRow;
use crate::store::{apps, resources};
use crate::vault::{Vault, owned};

/// The app secret holding the variables the app's services receive.
pub const BINDING_PATH: &str = "slipway/binding";

/// The app secret holding one resource's credentials.
pub fn credentials_path(kind: &str, name: &str) -> String {
    format!("slipway/resources/{kind}/{name}")
}

/// What a deployment's services receive for the app's resources.
#[derive(Debug, Clone, Default)]
pub struct Binding {
    /// `(variable, value)` pairs.
    pub env: Vec<(String, String)>,
    /// The version of [`BINDING_PATH`] they came from; `None` when the app has no resource.
    pub version: Option<i64>,
}

/// The platform's resources: its backing servers, and the records and secrets about them.
#[derive(Debug, Clone)]
pub struct Resources {
    db: Db,
    vault: Vault,
    services: Arc<Services>,
    /// Where the apps run: it says at which address they reach the backing servers.
    runtime: Arc<dyn Runtime>,
}

/// The kinds this platform provisions now, and their engines.
fn provisionable(kind: ResourceKind, engine: Option<&str>) -> Result<Engine, String> {
    let engine_name = engine.unwrap_or("");
    match kind {
        ResourceKind::RelationalDatabase | ResourceKind::Cache | ResourceKind::InMemoryDatabase => {
            let parsed = Engine::parse(engine_name).filter(|e| match kind {
                ResourceKind::RelationalDatabase => matches!(e, Engine::Postgres | Engine::Mysql),
                ResourceKind::Cache => matches!(e, Engine::Redis | Engine::Memcached),
                _ => *e == Engine::Redis,
            });
            parsed.ok_or_else(|| {
                format!(
                    "{kind} engine {engine_name:?} is not one this platform runs; use {}",
                    match kind {
                        ResourceKind::RelationalDatabase => "postgres or mysql",
                        ResourceKind::Cache => "redis or memcached",
                        _ => "redis (valkey is not packaged for this platform)",
                    }
                )
            })
        }
        ResourceKind::ObjectStorage => match engine {
            None | Some("seaweedfs" | "s3") => Ok(Engine::Seaweedfs),
            Some(other) => Err(format!(
                "objectStorage engine {other:?} is not one this platform runs; leave engine \
                 out (buckets are on the platform's S3 server)"
            )),
        },
        ResourceKind::Queue => match engine {
            None | Some("pgmq") => Ok(Engine::Pgmq),
            Some(other) => Err(format!(
                "queue engine {other:?} is not one this platform runs; leave engine out \
                 (queues are pgmq on the platform's PostgreSQL)"
            )),
        },
        ResourceKind::KeyValueTable => match engine {
            None | Some("dynalite" | "dynamodb") => Ok(Engine::Dynalite),
            Some(other) => Err(format!(
                "keyValueTable engine {other:?} is not one this platform runs; leave engine \
                 out (tables are on the app's own DynamoDB-compatible server)"
            )),
        },
    }
}

/// The resource kind the devfile's `durable` block is recorded as (one per app, named after
/// its service): the app's Restate server.
pub const DURABLE_KIND: &str = "durable";

impl Resources {
    /// Resources on `services`, for apps on `runtime`.
    pub fn new(db: Db, vault: Vault, services: Arc<Services>, runtime: Arc<dyn Runtime>) -> Self {
        Self {
            db,
            vault,
            services,
            runtime,
        }
    }

    /// The address the app's services reach the backing servers at: loopback (`None`) for
    /// processes on this host, the gateway of the app's network for containers.
    async fn host_address(&self, app_id: &str) -> Result<Option<IpAddr>, String> {
        let runtime = Arc::clone(&self.runtime);
        let id = app_id.to_owned();
        tokio::task::spawn_blocking(move || runtime.host_address(&id))
            .await
            .map_err(|e| format!("cannot ask the runtime for the app's network: {e}"))?
            .map_err(|e| format!("cannot reach the app's network: {e}"))
    }

    /// Credentials as the app's services use them: at `on` when they do not share this
    /// host's loopback, where a relay to the server listens ([`Services::expose`]).
    async fn as_seen_at(
        &self,
        app_id: &str,
        on: Option<IpAddr>,
        credentials: Credentials,
    ) -> Result<Credentials, String> {
        let Some(on) = on else {
            return Ok(credentials);
        };
        self.services
            .expose(app_id, on, &credentials)
            .await
            .map_err(|e| format!("cannot relay a backing server to {on}: {e}"))?;
        Ok(Credentials {
            host: on.to_string(),
            ..credentials
        })
    }

    /// The backing servers.
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// Makes every resource `devfile` declares exist (keeping those that do), records them
    /// attached and the others detached, and returns the binding. Idempotent; the error is
    /// the reason the deployment fails (nothing is detached then, and the serving
    /// deployment keeps serving).
    pub async fn reconcile(&self, app_id: &str, devfile: &Devfile) -> Result<Binding, String> {
        let declared = devfile.resources();
        let mut specs = Vec::new();
        for decl in &declared {
            let engine = provisionable(decl.kind, decl.engine.as_deref()).map_err(|e| {
                format!(
                    "metadata.platform.managedInfra.{}: {} ({e})",
                    decl.kind, decl.name
                )
            })?;
            specs.push(ResourceSpec {
                key: ResourceKey {
                    app_id: app_id.to_owned(),
                    kind: decl.kind.key().to_owned(),
                    name: decl.name.clone(),
                },
                engine,
                memory_mb: decl.memory_mb,
                fifo: decl.fifo,
                table_keys: TableKeys {
                    partition_key: decl.partition_key.clone(),
                    sort_key: decl.sort_key.clone(),
                },
                retention: None,
            });
        }
        if let Some(durable) = &devfile.metadata.platform.durable {
            specs.push(ResourceSpec {
                key: ResourceKey {
                    app_id: app_id.to_owned(),
                    kind: DURABLE_KIND.to_owned(),
                    name: durable.service.clone(),
                },
                engine: Engine::Restate,
                memory_mb: None,
                fifo: false,
                table_keys: TableKeys::default(),
                retention: durable.retention.clone(),
            });
        }
        let failure = |e: sqlx::Error| format!("cannot record the app's resources: {e}");
        let reach = if specs.is_empty() {
            None
        } else {
            self.host_address(app_id).await?
        };
        self.services.unexpose(app_id, reach).await;
        let (mut tx, account_id) = self.begin(app_id, failure).await?;
        let mut bound_credentials = Vec::new();
        for spec in &specs {
            let path = credentials_path(&spec.key.kind, &spec.key.name);
            let known = owned::read(&mut tx, &self.vault, app_id, &path)
                .await?
                .and_then(|(data, _)| credentials_of(&data))
                .filter(|c| c.engine == spec.engine);
            let credentials = self
                .services
                .ensure(spec, known.as_ref())
                .await
                .map_err(|e| {
                    format!(
                        "cannot provision {} {:?}: {e}",
                        spec.key.kind, spec.key.name
                    )
                })?;
            if known.as_ref() != Some(&credentials) {
                self.keep(&mut tx, &account_id, app_id, &path, &credentials)
                    .await?;
            }
            resources::attach(
                &mut tx,
                app_id,
                &spec.key.kind,
                &spec.key.name,
                spec.engine.as_str(),
                spec.memory_mb.and_then(|m| i64::try_from(m).ok()),
            )
            .await
            .map_err(failure)?;
            let seen = self.as_seen_at(app_id, reach, credentials).await?;
            bound_credentials.push((spec.key.kind.clone(), spec.key.name.clone(), seen));
        }
        for row in resources::of_app(&mut tx, app_id).await.map_err(failure)? {
            let still = specs
                .iter()
                .any(|s| s.key.kind == row.kind && s.key.name == row.name);
            if !still && row.state == resources::ATTACHED {
                resources::detach(&mut tx, app_id, &row.kind, &row.name)
                    .await
                    .map_err(failure)?;
                tracing::info!(app_id, kind = %row.kind, name = %row.name, "resource detached; its data is kept");
            }
        }
        let binding = self
            .write_binding(&mut tx, &account_id, app_id, &bound_credentials)
            .await?;
        tx.commit().await.map_err(failure)?;
        Ok(binding)
    }

    /// Writes `credentials` as the next version of the resource's credentials secret.
    async fn keep(
        &self,
        tx: &mut Tx,
        account_id: &str,
        app_id: &str,
        path: &str,
        credentials: &Credentials,
    ) -> Result<i64, String> {
        owned::write(
            tx,
            &self.vault,
            account_id,
            app_id,
            path,
            data_of(credentials),
        )
        .await
    }

    /// A write transaction and the id of the account that owns the app.
    async fn begin(
        &self,
        app_id: &str,
        failure: impl Fn(sqlx::Error) -> String,
    ) -> Result<(Tx, String), String> {
        let mut tx = self.db.begin_write().await.map_err(&failure)?;
        let account_id = apps::account_of(&mut tx, app_id)
            .await
            .map_err(&failure)?
            .ok_or_else(|| "the app was deleted".to_owned())?;
        Ok((tx, account_id))
    }

    /// Writes a new version of the binding when its variables changed.
    async fn write_binding(
        &self,
        tx: &mut Tx,
        account_id: &str,
        app_id: &str,
        bound: &[(String, String, Credentials)],
    ) -> Result<Binding, String> {
        let refs = bound_refs(bound);
        let vars = binding::variables(&refs);
        let current = owned::read(tx, &self.vault, app_id, BINDING_PATH).await?;
        if vars.is_empty() {
            if current.is_some() {
                owned::remove(tx, app_id, BINDING_PATH).await?;
            }
            return Ok(Binding::default());
        }
        let data: Map<String, Value> = vars
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let version = match current {
            Some((old, version)) if old == data => version,
            _ => owned::write(tx, &self.vault, account_id, app_id, BINDING_PATH, data).await?,
        };
        Ok(Binding {
            env: vars.into_iter().collect(),
            version: Some(version),
        })
    }

    /// The app's resources as the API shows them (never a credential).
    pub async fn describe(
        &self,
        tx: &mut Tx,
        app_id: &str,
    ) -> Result<Vec<slipway_api::ResourceInfo>, sqlx::Error> {
        let rows = resources::of_app(tx, app_id).await?;
        let mut attached = Vec::new();
        for row in rows.iter().filter(|r| r.state == resources::ATTACHED) {
            if let Ok(Some(c)) = self.credentials(tx, app_id, &row.kind, &row.name).await {
                attached.push((row.kind.clone(), row.name.clone(), c));
            }
        }
        let bound = bound_refs(&attached);
        let mut out = Vec::new();
        for row in &rows {
            let size_bytes = match spec_of(row) {
                Some(spec) => self.services.size(&spec).await,
                None => None,
            };
            let variables = if row.state == resources::ATTACHED {
                binding::names_for(&bound, &row.kind, &row.name)
            } else {
                Vec::new()
            };
            out.push(slipway_api::ResourceInfo {
                kind: row.kind.clone(),
                name: row.name.clone(),
                engine: row.engine.clone(),
                state: row.state.clone(),
                memory_mb: row.memory_mb.and_then(|m| u64::try_from(m).ok()),
                size_bytes,
                variables,
            });
        }
        Ok(out)
    }

    /// The credentials of one resource (for its reveal), `None` when it has none.
    pub async fn credentials(
        &self,
        tx: &mut Tx,
        app_id: &str,
        kind: &str,
        name: &str,
    ) -> Result<Option<Credentials>, String> {
        Ok(
            owned::read(tx, &self.vault, app_id, &credentials_path(kind, name))
                .await?
                .and_then(|(data, _)| credentials_of(&data)),
        )
    }

    /// New credentials for one attached resource: the old password stops working, a new
    /// version of its credentials and of the binding is written. The caller redeploys.
    pub async fn rotate(&self, app_id: &str, kind: &str, name: &str) -> Result<(), String> {
        let failure = |e: sqlx::Error| format!("cannot rotate: {e}");
        let reach = self.host_address(app_id).await?;
        let (mut tx, account_id) = self.begin(app_id, failure).await?;
        let rows = resources::of_app(&mut tx, app_id).await.map_err(failure)?;
        let row = rows
            .iter()
            .find(|r| r.kind == kind && r.name == name)
            .ok_or_else(|| format!("the app has no {kind} resource named {name:?}"))?;
        let spec = spec_of(row).ok_or_else(|| format!("unknown engine {:?}", row.engine))?;
        let path = credentials_path(kind, name);
        let known = owned::read(&mut tx, &self.vault, app_id, &path)
            .await?
            .and_then(|(data, _)| credentials_of(&data));
        let fresh = self
            .services
            .rotate(&spec, known.as_ref())
            .await
            .map_err(|e| e.to_string())?;
        self.keep(&mut tx, &account_id, app_id, &path, &fresh)
            .await?;
        let mut bound = Vec::new();
        for r in rows.iter().filter(|r| r.state == resources::ATTACHED) {
            let c = if r.kind == kind && r.name == name {
                Some(fresh.clone())
            } else {
                self.credentials(&mut tx, app_id, &r.kind, &r.name).await?
            };
            if let Some(c) = c {
                let seen = self.as_seen_at(app_id, reach, c).await?;
                bound.push((r.kind.clone(), r.name.clone(), seen));
            }
        }
        self.write_binding(&mut tx, &account_id, app_id, &bound)
            .await?;
        tx.commit().await.map_err(failure)
    }

    /// Registers `uri` (the app's durable service, just started) with the app's Restate
    /// server; the error is the reason the deployment fails.
    pub async fn register_durable(
        &self,
        app_id: &str,
        service: &str,
        uri: &str,
    ) -> Result<slipway_services::restate::Registered, String> {
        let failure = |e: sqlx::Error| format!("cannot read the app's Restate server: {e}");
        let mut tx = self.db.begin_read().await.map_err(failure)?;
        let credentials = self
            .credentials(&mut tx, app_id, DURABLE_KIND, service)
            .await?
            .ok_or_else(|| "the app's Restate server is not provisioned".to_owned())?;
        drop(tx);
        self.services
            .register_durable(&credentials, uri)
            .await
            .map_err(|e| format!("metadata.platform.durable: {e}"))
    }

    /// Destroys one resource and its data, and forgets it. `false` when there is none.
    pub async fn destroy(&self, app_id: &str, kind: &str, name: &str) -> Result<bool, String> {
        let failure = |e: sqlx::Error| format!("cannot destroy: {e}");
        let mut tx = self.db.begin_write().await.map_err(failure)?;
        let rows = resources::of_app(&mut tx, app_id).await.map_err(failure)?;
        let Some(row) = rows.into_iter().find(|r| r.kind == kind && r.name == name) else {
            return Ok(false);
        };
        if let Some(spec) = spec_of(&row) {
            self.services
                .destroy(&spec)
                .await
                .map_err(|e| e.to_string())?;
        }
        owned::remove(&mut tx, app_id, &credentials_path(kind, name)).await?;
        resources::delete(&mut tx, app_id, kind, name)
            .await
            .map_err(failure)?;
        tx.commit().await.map_err(failure)?;
        tracing::info!(app_id, kind, name, "resource destroyed with its data");
        Ok(true)
    }

    /// Destroys every resource of an app that is being deleted (its rows and secrets go
    /// with the app's). Failures are logged: the app is deleted either way.
    pub async fn destroy_app(&self, rows: &[ResourceRow]) {
        for row in rows {
            self.services.unexpose(&row.app_id, None).await;
            if let Some(spec) = spec_of(row)
                && let Err(e) = self.services.destroy(&spec).await
            {
                tracing::warn!(app_id = %row.app_id, kind = %row.kind, name = %row.name, error = %e, "cannot destroy a deleted app's resource");
            }
        }
    }
}

/// `(kind, name, credentials)` triples as the binding rules read them.
fn bound_refs(bound: &[(String, String, Credentials)]) -> Vec<Bound<'_>> {
    bound
        .iter()
        .map(|(kind, name, credentials)| Bound {
            kind,
            name,
            credentials,
        })
        .collect()
}

/// The services crate's view of a stored resource.
fn spec_of(row: &ResourceRow) -> Option<ResourceSpec> {
    Some(ResourceSpec {
        key: ResourceKey {
            app_id: row.app_id.clone(),
            kind: row.kind.clone(),
            name: row.name.clone(),
        },
        engine: Engine::parse(&row.engine)?,
        memory_mb: row.memory_mb.and_then(|m| u64::try_from(m).ok()),
        // Only a queue's or a table's making reads these, and a deploy makes them from the
        // devfile.
        fifo: false,
        table_keys: TableKeys::default(),
        retention: None,
    })
}

/// Credentials as a secret's data.
fn data_of(c: &Credentials) -> Map<String, Value> {
    let fields: BTreeMap<&str, String> = BTreeMap::from([
        ("engine", c.engine.as_str().to_owned()),
        ("host", c.host.clone()),
        ("port", c.port.to_string()),
        ("user", c.user.clone()),
        ("password", c.password.clone()),
        ("database", c.database.clone()),
    ]);
    fields
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Value::String(v)))
        .collect()
}

/// Credentials from a secret's data written by [`data_of`].
fn credentials_of(data: &Map<String, Value>) -> Option<Credentials> {
    let text = |k: &str| data.get(k).and_then(Value::as_str).map(str::to_owned);
    Some(Credentials {
        engine: Engine::parse(&text("engine")?)?,
        host: text("host")?,
        port: text("port")?.parse().ok()?,
        user: text("user")?,
        password: text("password")?,
        database: text("database")?,
    })
}

/// The volumes `devfile` (the app's last built one) declares, with the bytes each takes in
/// `data_dir` now.
pub fn volumes(
    data_dir: &std::path::Path,
    app_id: &str,
    devfile: Option<&str>,
) -> Vec<slipway_api::VolumeInfo> {
    let Some(devfile) = devfile.and_then(|t| Devfile::parse(t).ok()) else {
        return Vec::new();
    };
    let services = devfile.services();
    let sizes: BTreeMap<String, Option<String>> = devfile
        .components
        .iter()
        .filter_map(|c| {
            let v = c.volume.as_ref()?;
            let size = v.size.as_ref().map(|s| match s {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            Some((c.name.clone(), size))
        })
        .collect();
    devfile
        .volumes()
        .into_iter()
        .map(|v| slipway_api::VolumeInfo {
            used_bytes: slipway_services::disk_usage(
                &data_dir
                    .join(crate::data_dir::VOLUMES_DIR)
                    .join(app_id)
                    .join(&v.name),
            ),
            size: sizes.get(&v.name).cloned().flatten(),
            ephemeral: v.ephemeral,
            mounts: services
                .iter()
                .flat_map(|s| {
                    s.volume_mounts
                        .iter()
                        .filter(|m| m.name == v.name)
                        .map(|m| format!("{}:{}", s.name, m.path))
                })
                .collect(),
            name: v.name,
        })
        .collect()
}
