//! The environment variables an app's services receive for its resources.
//!
//! Every resource gets a variable of its own, always: `<NAME>_DATABASE_URL` for a
//! relational database, `<NAME>_CACHE_URL` for a cache and `<NAME>_INMEMORY_URL` for an
//! in-memory database, where `<NAME>` is the resource name upper-cased with `-` as `_`.
//! On top, the ecosystem's conventional names go to the one resource that can claim them:
//! `DATABASE_URL` (and libpq's `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE` for
//! postgres) when the app has one relational database, `REDIS_URL` when it has one Redis
//! resource (a cache or an in-memory database), `MEMCACHED_URL` when it has one memcached.
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

/// The resource's own variable, which it always gets.
pub fn own_variable(kind: &str, name: &str) -> String {
    let suffix = match kind {
        "relationalDatabase" => "DATABASE_URL",
        "cache" => "CACHE_URL",
        "inMemoryDatabase" => "INMEMORY_URL",
        _ => "URL",
    };
    format!("{}_{suffix}", upper_snake(name))
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
        (_, Engine::Redis) => &["REDIS_URL"],
        (_, Engine::Memcached) => &["MEMCACHED_URL"],
        _ => &[],
    }
}

/// The value of variable `name` for a resource.
fn value(name: &str, c: &Credentials) -> String {
    match name {
        "PGHOST" => c.host.clone(),
        "PGPORT" => c.port.to_string(),
        "PGUSER" => c.user.clone(),
        "PGPASSWORD" => c.password.clone(),
        "PGDATABASE" => c.database.clone(),
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
        out.insert(own_variable(b.kind, b.name), b.credentials.url());
        for name in won(bound, b) {
            out.insert(name.to_owned(), value(name, b.credentials));
        }
    }
    out
}

/// The names of the variables one resource provides among `bound` (its own and the
/// conventional ones it won), for the resource listings: names only, never values.
pub fn names_for(bound: &[Bound<'_>], kind: &str, name: &str) -> Vec<String> {
    let mut names = vec![own_variable(kind, name)];
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
}
