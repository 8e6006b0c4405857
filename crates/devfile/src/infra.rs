//! What a devfile asks the platform to keep for the app: its volumes (`volume` components)
//! and the backing resources of `metadata.platform.managedInfra`, typed. The validator holds
//! the rules; this is the reading the platform provisions from, for a devfile that passed.

use serde::{Deserialize, Serialize};

use crate::model::Devfile;
use crate::quantity;

/// A kind of managed resource, as `managedInfra` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ResourceKind {
    /// `objectStorage`: a bucket.
    ObjectStorage,
    /// `keyValueTable`: a DynamoDB-like table.
    KeyValueTable,
    /// `queue`: an SQS-like queue.
    Queue,
    /// `relationalDatabase`: a PostgreSQL or MySQL database.
    RelationalDatabase,
    /// `cache`: a Redis or memcached cache (evicts).
    Cache,
    /// `inMemoryDatabase`: a persistent Redis (never evicts).
    InMemoryDatabase,
}

impl ResourceKind {
    /// Every kind, in the spec's order.
    pub const ALL: [Self; 6] = [
        Self::ObjectStorage,
        Self::KeyValueTable,
        Self::Queue,
        Self::RelationalDatabase,
        Self::Cache,
        Self::InMemoryDatabase,
    ];

    /// The `managedInfra` key.
    pub fn key(self) -> &'static str {
        match self {
            Self::ObjectStorage => "objectStorage",
            Self::KeyValueTable => "keyValueTable",
            Self::Queue => "queue",
            Self::RelationalDatabase => "relationalDatabase",
            Self::Cache => "cache",
            Self::InMemoryDatabase => "inMemoryDatabase",
        }
    }

    /// The kind a `managedInfra` key names.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.key() == key)
    }

    /// The engine used when a resource names none.
    pub fn default_engine(self) -> Option<&'static str> {
        match self {
            Self::RelationalDatabase => Some("postgres"),
            Self::Cache | Self::InMemoryDatabase => Some("redis"),
            _ => None,
        }
    }
}

impl std::fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

/// One resource of `managedInfra`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDecl {
    /// Its kind.
    pub kind: ResourceKind,
    /// Its name: a DNS label, unique within its kind.
    pub name: String,
    /// Its engine (`postgres`, `redis`, …), the kind's default when not written; `None`
    /// for kinds without an engine choice.
    pub engine: Option<String>,
    /// `memoryMb`, for caches and in-memory databases.
    pub memory_mb: Option<u64>,
    /// `storageGb`, for databases.
    pub storage_gb: Option<u64>,
    /// `fifo: true`, for queues: delivered in send order.
    pub fifo: bool,
    /// `partitionKey`, for key-value tables: the hash key's attribute name.
    pub partition_key: Option<String>,
    /// `sortKey`, for key-value tables: the range key's attribute name.
    pub sort_key: Option<String>,
}

/// One `volume` component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeDecl {
    /// The component's name.
    pub name: String,
    /// `size` in bytes, when given.
    pub size_bytes: Option<u64>,
    /// `ephemeral: true`: empty on each deploy.
    pub ephemeral: bool,
}

impl Devfile {
    /// The volume components, in devfile order.
    pub fn volumes(&self) -> Vec<VolumeDecl> {
        self.components
            .iter()
            .filter_map(|c| {
                let v = c.volume.as_ref()?;
                Some(VolumeDecl {
                    name: c.name.clone(),
                    size_bytes: v
                        .size
                        .as_ref()
                        .and_then(|s| quantity::memory_bytes(&scalar(s))),
                    ephemeral: v.ephemeral.unwrap_or(false),
                })
            })
            .collect()
    }

    /// The managed resources, by kind (the spec's order) then as written; keys the platform
    /// does not know are left out (the validator refuses them).
    pub fn resources(&self) -> Vec<ResourceDecl> {
        let mut out = Vec::new();
        for kind in ResourceKind::ALL {
            let Some(list) = self.metadata.platform.managed_infra.get(kind.key()) else {
                continue;
            };
            for item in list {
                let Some(name) = item.get("name").and_then(|n| n.as_str()) else {
                    continue;
                };
                let number = |key: &str| item.get(key).and_then(serde_json::Value::as_u64);
                let text = |key: &str| item.get(key).and_then(|v| v.as_str()).map(str::to_owned);
                out.push(ResourceDecl {
                    kind,
                    name: name.to_owned(),
                    engine: item
                        .get("engine")
                        .and_then(|e| e.as_str())
                        .or(kind.default_engine())
                        .map(str::to_owned),
                    memory_mb: number("memoryMb"),
                    storage_gb: number("storageGb"),
                    fifo: item
                        .get("fifo")
                        .and_then(serde_json::Value::as_bool)
                        .unwrap_or(false),
                    partition_key: text("partitionKey"),
                    sort_key: text("sortKey"),
                });
            }
        }
        out
    }
}

/// A YAML scalar read by serde as JSON (`size: 1Gi` is a string, `size: 1000` a number).
fn scalar(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volumes_and_resources_are_read_with_their_defaults() {
        let devfile = Devfile::parse(
            "schemaVersion: 2.2.0
metadata:
  name: notes
  displayName: Notes
  platform:
    managedInfra:
      relationalDatabase:
        - name: main
      cache:
        - name: hot
          engine: memcached
          memoryMb: 64
components:
  - name: data
    volume:
      size: 2Gi
  - name: scratch
    volume:
  - name: api
    container:
      image: api
      volumeMounts:
        - name: data
          path: /data
",
        )
        .unwrap();
        let volumes = devfile.volumes();
        assert_eq!(volumes.len(), 2);
        assert_eq!(volumes[0].size_bytes, Some(2 << 30));
        assert!(!volumes[1].ephemeral && volumes[1].size_bytes.is_none());
        let resources = devfile.resources();
        assert_eq!(resources[0].kind, ResourceKind::RelationalDatabase);
        assert_eq!(resources[0].engine.as_deref(), Some("postgres"));
        assert_eq!(resources[1].engine.as_deref(), Some("memcached"));
        assert_eq!(resources[1].memory_mb, Some(64));
        let api = &devfile.services()[0];
        assert_eq!(api.volume_mounts[0].path, "/data");
    }
}
