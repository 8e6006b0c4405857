//! What a resource is (its app, kind, name and engine) and what an app connects to it with.

use serde::{Deserialize, Serialize};

/// The region the S3 server answers for (SeaweedFS accepts any; the SDKs want one).
pub const S3_REGION: &str = "us-east-1";

/// The server software behind a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// A database and role on the shared PostgreSQL cluster.
    Postgres,
    /// A database and user on the shared MariaDB server.
    Mysql,
    /// A redis-server of the resource's own.
    Redis,
    /// A memcached of the resource's own.
    Memcached,
    /// A queue: a database of the resource's own on the shared PostgreSQL cluster, with
    /// pgmq's SQL installed in it and the queue made.
    Pgmq,
    /// A bucket and a key of its own on the shared S3 server (SeaweedFS).
    Seaweedfs,
    /// A table on the app's own DynamoDB-compatible server (dynalite), reached through a
    /// gate that checks each request's signature against the app's keys.
    Dynalite,
    /// The app's own Restate server, for its `durable` block.
    Restate,
}

impl Engine {
    /// The engine a devfile names (`postgres`, `mysql`, `redis`, `memcached`).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "postgres" => Some(Self::Postgres),
            "mysql" => Some(Self::Mysql),
            "redis" => Some(Self::Redis),
            "memcached" => Some(Self::Memcached),
            "pgmq" => Some(Self::Pgmq),
            "seaweedfs" => Some(Self::Seaweedfs),
            "dynalite" => Some(Self::Dynalite),
            "restate" => Some(Self::Restate),
            _ => None,
        }
    }

    /// The devfile's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Postgres => "postgres",
            Self::Mysql => "mysql",
            Self::Redis => "redis",
            Self::Memcached => "memcached",
            Self::Pgmq => "pgmq",
            Self::Seaweedfs => "seaweedfs",
            Self::Dynalite => "dynalite",
            Self::Restate => "restate",
        }
    }

    /// The URL scheme of its connection string.
    pub fn scheme(self) -> &'static str {
        match self {
            Self::Postgres | Self::Pgmq => "postgresql",
            Self::Seaweedfs | Self::Dynalite | Self::Restate => "http",
            Self::Mysql => "mysql",
            Self::Redis => "redis",
            Self::Memcached => "memcached",
        }
    }
}

/// Which resource: the app, the `managedInfra` kind and the name. Never a release: a
/// resource outlives every deploy and rollback.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ResourceKey {
    /// The app's UUID.
    pub app_id: String,
    /// `relationalDatabase`, `cache` or `inMemoryDatabase`.
    pub kind: String,
    /// The resource's name (a DNS label).
    pub name: String,
}

impl ResourceKey {
    /// A name for the resource's database, role or directory: unique per key, at most 63
    /// characters of `[a-z0-9_]`, so it is a valid PostgreSQL and MariaDB identifier and a
    /// file name without quoting.
    pub fn slug(&self) -> String {
        let app = self.app_slug();
        let kind = match self.kind.as_str() {
            "relationalDatabase" => "db",
            "cache" => "cache",
            "inMemoryDatabase" => "mem",
            "queue" => "queue",
            "objectStorage" => "bucket",
            "keyValueTable" => "table",
            other => other,
        };
        let name: String = self
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(40)
            .collect();
        format!("{app}_{kind}_{name}").to_ascii_lowercase()
    }

    /// The slug's first part, the app's: the name of a server every resource of the app
    /// shares (its tables' dynalite, its Restate server).
    pub fn app_slug(&self) -> String {
        let app: String = self
            .app_id
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(12)
            .collect::<String>()
            .to_ascii_lowercase();
        format!("a{app}")
    }
}

/// One resource as the platform asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceSpec {
    /// Which one.
    pub key: ResourceKey,
    /// Its server software.
    pub engine: Engine,
    /// The memory cap of a cache or in-memory database, in MiB (`memoryMb`; 64 when unset).
    pub memory_mb: Option<u64>,
    /// A queue that delivers in send order (`fifo: true`).
    pub fifo: bool,
    /// A table's hash key and range key (`partitionKey`, `sortKey`), string attributes.
    pub table_keys: TableKeys,
    /// The durable block's `retention` (`24h`, `7d`): how long a Restate server keeps a
    /// finished invocation's journal and a workflow's result; Restate's default (a day) when
    /// unset.
    pub retention: Option<String>,
}

/// The key schema of a `keyValueTable`, read at its making only (like a queue's `fifo`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TableKeys {
    /// The hash key's attribute name; `id` when unset.
    pub partition_key: Option<String>,
    /// The range key's attribute name, when the table has one.
    pub sort_key: Option<String>,
}

impl TableKeys {
    /// The hash key's attribute name.
    pub fn partition_key(&self) -> &str {
        self.partition_key.as_deref().unwrap_or("id")
    }
}

impl ResourceSpec {
    /// A cache evicts; an in-memory database persists every write and never evicts.
    pub fn is_cache(&self) -> bool {
        self.key.kind == "cache"
    }

    /// The memory cap in MiB.
    pub fn memory_mb(&self) -> u64 {
        self.memory_mb.unwrap_or(64)
    }
}

/// How an app reaches its resource. `Debug` leaves the password out.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    /// The engine.
    pub engine: Engine,
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// User or role (empty for redis, which has a password only).
    pub user: String,
    /// The password.
    pub password: String,
    /// The database (empty for caches); a bucket's or a table's name; the port of a Restate
    /// server's admin API.
    pub database: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("engine", &self.engine)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("database", &self.database)
            .finish_non_exhaustive()
    }
}

impl Credentials {
    /// A Restate server's admin API URL (its ingress is [`Credentials::url`]).
    pub fn admin_url(&self) -> String {
        format!("http://{}:{}", self.host, self.database)
    }

    /// A database's: the role or user and the database are both named `slug`.
    pub(crate) fn database(
        engine: Engine,
        host: &str,
        port: u16,
        slug: &str,
        password: String,
    ) -> Self {
        Self {
            engine,
            host: host.to_owned(),
            port,
            user: slug.to_owned(),
            password,
            database: slug.to_owned(),
        }
    }

    /// The connection URL (`postgresql://user:password@host:port/database`, `redis://:password@host:port/0`, …).
    pub fn url(&self) -> String {
        let scheme = self.engine.scheme();
        let (host, port) = (&self.host, self.port);
        match self.engine {
            Engine::Postgres | Engine::Mysql | Engine::Pgmq => format!(
                "{scheme}://{}:{}@{host}:{port}/{}",
                self.user, self.password, self.database
            ),
            Engine::Redis => format!("{scheme}://:{}@{host}:{port}/0", self.password),
            Engine::Memcached => {
                format!("{scheme}://{}:{}@{host}:{port}", self.user, self.password)
            }
            // The endpoint: the key and the bucket or table travel in variables of their own;
            // Restate's is its ingress (its admin API is on `database`'s port).
            Engine::Seaweedfs | Engine::Dynalite | Engine::Restate => {
                format!("{scheme}://{host}:{port}")
            }
        }
    }

    /// The same credentials reached at another host (a container reaches the host's
    /// loopback servers through its network's gateway).
    pub fn at_host(&self, host: &str) -> Self {
        Self {
            host: host.to_owned(),
            ..self.clone()
        }
    }
}

/// A new password: 122 random bits as 32 hex digits (safe in URLs and config files).
pub(crate) fn new_password() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_identifiers_and_unique_per_key() {
        let key = |kind: &str, name: &str| ResourceKey {
            app_id: "0b5e7c1a-93f2-4d6b-8a1e-2f3c4d5e6f70".into(),
            kind: kind.into(),
            name: name.into(),
        };
        let a = key("relationalDatabase", "main-db").slug();
        assert_eq!(a, "a0b5e7c1a93f2_db_main_db");
        assert_ne!(a, key("cache", "main-db").slug());
        let long = key("inMemoryDatabase", &"x".repeat(63)).slug();
        assert!(long.len() <= 63, "{long}");
    }

    #[test]
    fn debug_hides_the_password_and_urls_carry_it() {
        let c = Credentials {
            engine: Engine::Postgres,
            host: "127.0.0.1".into(),
            port: 5432,
            user: "u".into(),
            password: "s3cret".into(),
            database: "d".into(),
        };
        assert!(!format!("{c:?}").contains("s3cret"));
        assert_eq!(c.url(), "postgresql://u:s3cret@127.0.0.1:5432/d");
    }
}
