//! The environment variables an app's services receive for its resources.
//!
//! Every resource gets variables of its own, always: `<NAME>_DATABASE_URL` for a
//! relational database, `<NAME>_CACHE_URL` for a cache, `<NAME>_INMEMORY_URL` for an
//! in-memory database, `<NAME>_QUEUE_URL` and `<NAME>_QUEUE_NAME` for a queue, where
//! `<NAME>` is the resource name upper-cased with `-` as `_`.
//! On top, the ecosystem's conventional names go to the one resource that can claim them:
//! `DATABASE_URL` (and libpq's `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE` for
//! postgres) when the app has one relational database, `REDIS_URL` when it has one Redis
//! resource (a cache or an in-memory database), `MEMCACHED_URL` when it has one memcached,
//! `QUEUE_URL` and `QUEUE_NAME` when it has one queue; for one bucket, the AWS SDKs' own
//! `AWS_ENDPOINT_URL_S3`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION` and
//! `S3_BUCKET` (and `AWS_DEFAULT_REGION`, which SDKs older than `AWS_REGION` read; per bucket always: `<NAME>_S3_ENDPOINT`, `<NAME>_S3_BUCKET`,
//! `<NAME>_ACCESS_KEY_ID`, `<NAME>_SECRET_ACCESS_KEY`).
//! A key-value table gets `<NAME>_DYNAMODB_ENDPOINT`, `<NAME>_DYNAMODB_TABLE`,
//! `<NAME>_ACCESS_KEY_ID` and `<NAME>_SECRET_ACCESS_KEY`, and, when it is the app's one,
//! `DYNAMODB_TABLE`; `AWS_ENDPOINT_URL_DYNAMODB` and `AWS_REGION` go to every table (they are
//! the same for all of them). The SDK's `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` are
//! one bucket's when the app has buckets (the tables' gate accepts the app's bucket keys
//! too), else the one table's. The `durable` block gets `RESTATE_INGRESS_URL` and
//! `RESTATE_ADMIN_URL`.
//! Two resources that could claim a conventional name leave it unset rather than pick one.

use std::collections::BTreeMap;

use crate::spec::{Credentials, Engine};

/// One attached resource and its credentials.
#[derive(Debug, Clone)]
pub struct Bound<'a> {
    /// Its `managedInfra` kind.
    pub kind: &'a str,
    /// Its name.
    pub name: &'a str,
    /// How to reach it.
    pub credentials: &'a Credentials,
}

/// The resource's own variables, which it always gets (its URL's first).
pub fn own_variables(kind: &str, name: &str) -> Vec<String> {
    let suffixes: &[&str] = match kind {
        "relationalDatabase" => &["DATABASE_URL"],
        "cache" => &["CACHE_URL"],
        "inMemoryDatabase" => &["INMEMORY_URL"],
        "queue" => &["QUEUE_URL", "QUEUE_NAME"],
        "objectStorage" => &[
            "S3_ENDPOINT",
            "S3_BUCKET",
            "ACCESS_KEY_ID",
            "SECRET_ACCESS_KEY",
        ],
        "keyValueTable" => &[
            "DYNAMODB_ENDPOINT",
            "DYNAMODB_TABLE",
            "ACCESS_KEY_ID",
            "SECRET_ACCESS_KEY",
        ],
        // One per app: its names are the conventional ones only.
        "durable" => &[],
        _ => &["URL"],
    };
    let prefix = upper_snake(name);
    suffixes.iter().map(|s| format!("{prefix}_{s}")).collect()
}

/// The name of the queue a `queue` resource holds in its database: its resource name as an
/// identifier (`order-events` → `order_events`).
pub fn queue_name(name: &str) -> String {
    upper_snake(name).to_ascii_lowercase()
}

/// `hot-keys` → `HOT_KEYS`: letters and digits upper-cased, everything else `_` (the one
/// spelling of a name as a variable's; the vault's secret keys use it too).
pub fn upper_snake(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// The conventional names a resource would claim, before conflicts are settled.
fn conventional(kind: &str, engine: Engine) -> &'static [&'static str] {
    match (kind, engine) {
        ("relationalDatabase", Engine::Postgres) => &[
            "DATABASE_URL",
            "PGHOST",
            "PGPORT",
            "PGUSER",
            "PGPASSWORD",
            "PGDATABASE",
        ],
        ("relationalDatabase", _) => &["DATABASE_URL"],
        ("queue", _) => &["QUEUE_URL", "QUEUE_NAME"],
        ("objectStorage", _) => &[
            "AWS_ENDPOINT_URL_S3",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_REGION",
            "AWS_DEFAULT_REGION",
            "S3_BUCKET",
        ],
        ("keyValueTable", _) => &[
            "AWS_ENDPOINT_URL_DYNAMODB",
            "DYNAMODB_TABLE",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_REGION",
            "AWS_DEFAULT_REGION",
        ],
        ("durable", _) => &["RESTATE_INGRESS_URL", "RESTATE_ADMIN_URL"],
        (_, Engine::Redis) => &["REDIS_URL"],
        (_, Engine::Memcached) => &["MEMCACHED_URL"],
        _ => &[],
    }
}

/// The value of variable `var` for resource `b`.
fn value(var: &str, b: &Bound<'_>) -> String {
    let c = b.credentials;
    match var {
        "PGHOST" => c.host.clone(),
        "PGPORT" => c.port.to_string(),
        "PGUSER" => c.user.clone(),
        "PGPASSWORD" => c.password.clone(),
        "PGDATABASE" => c.database.clone(),
        _ if var.ends_with("QUEUE_NAME") => queue_name(b.name),
        _ if var.ends_with("S3_BUCKET") || var.ends_with("DYNAMODB_TABLE") => c.database.clone(),
        "RESTATE_ADMIN_URL" => c.admin_url(),
        _ if var.ends_with("ACCESS_KEY_ID") => c.user.clone(),
        _ if var.ends_with("SECRET_ACCESS_KEY") => c.password.clone(),
        "AWS_REGION" | "AWS_DEFAULT_REGION" => crate::spec::S3_REGION.to_owned(),
        _ => c.url(),
    }
}

/// The SDKs' key variables, which a bucket claims before a table.
const AWS_KEYS: [&str; 2] = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"];

/// Conventional names every claimant may share when they agree on the value.
const SHARED: [&str; 3] = [
    "AWS_ENDPOINT_URL_DYNAMODB",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
];

/// The conventional names `me` wins among `bound`: those no other resource claims too (for
/// [`AWS_KEYS`], no other of the resources that claim them first; for [`SHARED`], none
/// with another value).
fn won<'a>(bound: &'a [Bound<'_>], me: &'a Bound<'_>) -> impl Iterator<Item = &'static str> + 'a {
    conventional(me.kind, me.credentials.engine)
        .iter()
        .copied()
        .filter(move |name| {
            let buckets_first =
                AWS_KEYS.contains(name) && bound.iter().any(|o| o.kind == "objectStorage");
            if buckets_first && me.kind != "objectStorage" {
                return false;
            }
            let mut claimants = bound.iter().filter(|o| {
                conventional(o.kind, o.credentials.engine).contains(name)
                    && (!buckets_first || o.kind == "objectStorage")
            });
            if SHARED.contains(name) {
                let mine = value(name, me);
                claimants.all(|o| value(name, o) == mine)
            } else {
                claimants.count() == 1
            }
        })
}

/// Every variable of the app's attached resources, by name.
pub fn variables(bound: &[Bound<'_>]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for b in bound {
        for var in own_variables(b.kind, b.name) {
            let v = value(&var, b);
            out.insert(var, v);
        }
        for name in won(bound, b) {
            out.insert(name.to_owned(), value(name, b));
        }
    }
    out
}

/// The names of the variables one resource provides among `bound` (its own and the
/// conventional ones it won), for the resource listings: names only, never values.
pub fn names_for(bound: &[Bound<'_>], kind: &str, name: &str) -> Vec<String> {
    let mut names = own_variables(kind, name);
    if let Some(me) = bound.iter().find(|b| b.kind == kind && b.name == name) {
        names.extend(won(bound, me).map(str::to_owned));
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds(engine: Engine, port: u16) -> Credentials {
        Credentials {
            engine,
            host: "127.0.0.1".into(),
            port,
            user: "u".into(),
            password: "p".into(),
            database: "d".into(),
        }
    }

    #[test]
    fn one_resource_of_a_kind_gets_the_conventional_names() {
        let pg = creds(Engine::Postgres, 5432);
        let cache = creds(Engine::Redis, 6379);
        let bound = [
            Bound {
                kind: "relationalDatabase",
                name: "main",
                credentials: &pg,
            },
            Bound {
                kind: "cache",
                name: "hot-keys",
                credentials: &cache,
            },
        ];
        let vars = variables(&bound);
        assert_eq!(vars["DATABASE_URL"], "postgresql://u:p@127.0.0.1:5432/d");
        assert_eq!(vars["MAIN_DATABASE_URL"], vars["DATABASE_URL"]);
        assert_eq!(vars["PGPORT"], "5432");
        assert_eq!(vars["PGPASSWORD"], "p");
        assert_eq!(vars["REDIS_URL"], "redis://:p@127.0.0.1:6379/0");
        assert_eq!(vars["HOT_KEYS_CACHE_URL"], vars["REDIS_URL"]);
        assert_eq!(
            names_for(&bound, "cache", "hot-keys"),
            ["HOT_KEYS_CACHE_URL", "REDIS_URL"]
        );
    }

    #[test]
    fn two_claimants_leave_the_conventional_name_unset() {
        let a = creds(Engine::Redis, 1);
        let b = creds(Engine::Redis, 2);
        let bound = [
            Bound {
                kind: "cache",
                name: "a",
                credentials: &a,
            },
            Bound {
                kind: "inMemoryDatabase",
                name: "b",
                credentials: &b,
            },
        ];
        let vars = variables(&bound);
        assert!(!vars.contains_key("REDIS_URL"));
        assert!(vars.contains_key("A_CACHE_URL") && vars.contains_key("B_INMEMORY_URL"));
    }

    #[test]
    fn tables_share_the_endpoint_and_a_bucket_keeps_the_sdk_keys() {
        let table = |port, key: &str| Credentials {
            engine: Engine::Dynalite,
            host: "127.0.0.1".into(),
            port,
            user: key.into(),
            password: format!("{key}-secret"),
            database: "t".into(),
        };
        let (a, b) = (table(7000, "KA"), table(7000, "KB"));
        let bucket = creds(Engine::Seaweedfs, 8333);
        let one = [Bound {
            kind: "keyValueTable",
            name: "items",
            credentials: &a,
        }];
        let vars = variables(&one);
        assert_eq!(vars["AWS_ENDPOINT_URL_DYNAMODB"], "http://127.0.0.1:7000");
        assert_eq!(vars["DYNAMODB_TABLE"], "t");
        assert_eq!(vars["AWS_ACCESS_KEY_ID"], "KA");
        assert_eq!(vars["AWS_SECRET_ACCESS_KEY"], "KA-secret");
        assert_eq!(vars["ITEMS_DYNAMODB_ENDPOINT"], "http://127.0.0.1:7000");
        let two = [
            one[0].clone(),
            Bound {
                kind: "keyValueTable",
                name: "other",
                credentials: &b,
            },
        ];
        let vars = variables(&two);
        assert_eq!(vars["AWS_ENDPOINT_URL_DYNAMODB"], "http://127.0.0.1:7000");
        assert!(!vars.contains_key("DYNAMODB_TABLE") && !vars.contains_key("AWS_ACCESS_KEY_ID"));
        assert_eq!(vars["OTHER_ACCESS_KEY_ID"], "KB");
        let with_bucket = [
            one[0].clone(),
            Bound {
                kind: "objectStorage",
                name: "files",
                credentials: &bucket,
            },
        ];
        let vars = variables(&with_bucket);
        assert_eq!(vars["AWS_ACCESS_KEY_ID"], "u", "the bucket's key");
        assert_eq!(vars["DYNAMODB_TABLE"], "t");
        assert_eq!(vars["AWS_REGION"], crate::spec::S3_REGION);
    }

    #[test]
    fn the_durable_block_gets_restates_urls() {
        let restate = Credentials {
            engine: Engine::Restate,
            host: "10.89.0.1".into(),
            port: 18080,
            user: String::new(),
            password: String::new(),
            database: "19070".into(),
        };
        let bound = [Bound {
            kind: "durable",
            name: "agent",
            credentials: &restate,
        }];
        let vars = variables(&bound);
        assert_eq!(vars["RESTATE_INGRESS_URL"], "http://10.89.0.1:18080");
        assert_eq!(vars["RESTATE_ADMIN_URL"], "http://10.89.0.1:19070");
        assert_eq!(vars.len(), 2);
    }

    #[test]
    fn a_queue_gets_its_url_and_its_name() {
        let q = creds(Engine::Pgmq, 5432);
        let bound = [Bound {
            kind: "queue",
            name: "order-events",
            credentials: &q,
        }];
        let vars = variables(&bound);
        assert_eq!(vars["QUEUE_URL"], "postgresql://u:p@127.0.0.1:5432/d");
        assert_eq!(vars["QUEUE_NAME"], "order_events");
        assert_eq!(vars["ORDER_EVENTS_QUEUE_NAME"], "order_events");
        assert_eq!(vars["ORDER_EVENTS_QUEUE_URL"], vars["QUEUE_URL"]);
        assert!(
            !vars.contains_key("DATABASE_URL"),
            "a queue is not the app's database"
        );
        assert_eq!(
            names_for(&bound, "queue", "order-events"),
            [
                "ORDER_EVENTS_QUEUE_URL",
                "ORDER_EVENTS_QUEUE_NAME",
                "QUEUE_URL",
                "QUEUE_NAME"
            ]
        );
    }
}
