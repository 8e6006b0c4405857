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
//! `S3_BUCKET` (per bucket always: `<NAME>_S3_ENDPOINT`, `<NAME>_S3_BUCKET`,
//! `<NAME>_ACCESS_KEY_ID`, `<NAME>_SECRET_ACCESS_KEY`).
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
            "S3_BUCKET",
        ],
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
        _ if var.ends_with("S3_BUCKET") => c.database.clone(),
        _ if var.ends_with("ACCESS_KEY_ID") => c.user.clone(),
        _ if var.ends_with("SECRET_ACCESS_KEY") => c.password.clone(),
        "AWS_REGION" => crate::spec::S3_REGION.to_owned(),
        _ => c.url(),
    }
}

/// The conventional names `me` wins among `bound`: those no other resource claims too.
fn won<'a>(bound: &'a [Bound<'_>], me: &Bound<'_>) -> impl Iterator<Item = &'static str> + 'a {
    conventional(me.kind, me.credentials.engine)
        .iter()
        .copied()
        .filter(move |name| {
            bound
                .iter()
                .filter(|o| conventional(o.kind, o.credentials.engine).contains(name))
                .count()
                == 1
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
