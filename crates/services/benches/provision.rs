//! What backing resources cost a deploy and the machine (BENCHMARKS.md, "Backing
//! services"): the time `ensure` adds for a new PostgreSQL database and a new Redis cache
//! when the shared cluster already runs (the part a first deploy with resources pays over
//! one without), the cluster's cold start, and the proportional resident memory (PSS) of every backing server
//! with twenty apps, each with a database and a cache.
//!
//! Then the per-app servers of #42: a key-value table's dynalite and the durable block's
//! restate-server, ten apps each.
//!
//! Run: `cargo bench -p slipway-services --bench provision` (real servers; about a minute).

use std::time::{Duration, Instant};

use slipway_services::{Engine, ResourceKey, ResourceSpec, Services, ServicesConfig};

const APPS: usize = 20;

fn spec(app: usize, kind: &str, engine: Engine) -> ResourceSpec {
    ResourceSpec {
        key: ResourceKey {
            app_id: format!("bench{app:04}-0000-0000-0000-000000000000"),
            kind: kind.into(),
            name: "main".into(),
        },
        engine,
        memory_mb: Some(16),
        fifo: false,
        table_keys: slipway_services::TableKeys::default(),
        retention: None,
    }
}

/// Proportional resident memory (PSS: shared pages split among their users, so
/// PostgreSQL's shared buffers count once, not once per backend) of `pid` and its children,
/// in KiB.
fn rss_kib(pid: u32) -> u64 {
    let own = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Pss:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0);
    let children: u64 = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|c| c.parse().ok())
        .map(rss_kib)
        .sum();
    own + children
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let services = Services::new(ServicesConfig {
        dir: dir.path().join("services"),
        postgres_url: None,
    });
    let cold = Instant::now();
    services
        .ensure(&spec(0, "relationalDatabase", Engine::Postgres), None)
        .await
        .unwrap();
    let cold = cold.elapsed();
    let mut db_times = Vec::new();
    let mut cache_times = Vec::new();
    for app in 1..=APPS {
        let t = Instant::now();
        services
            .ensure(&spec(app, "relationalDatabase", Engine::Postgres), None)
            .await
            .unwrap();
        db_times.push(t.elapsed());
        let t = Instant::now();
        services
            .ensure(&spec(app, "cache", Engine::Redis), None)
            .await
            .unwrap();
        cache_times.push(t.elapsed());
    }
    let both: Vec<Duration> = db_times
        .iter()
        .zip(&cache_times)
        .map(|(a, b)| *a + *b)
        .collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let pids = services.pids().await;
    let total: u64 = pids.iter().map(|p| rss_kib(*p)).sum();
    println!("postgres cluster cold start (initdb, start, first database): {cold:.2?}");
    println!(
        "new database, cluster running: median {:.0?}, max {:.0?}",
        median(db_times.clone()),
        db_times.iter().max().unwrap()
    );
    println!(
        "new redis cache: median {:.0?}, max {:.0?}",
        median(cache_times.clone()),
        cache_times.iter().max().unwrap()
    );
    println!(
        "database + cache (what a deploy adds): median {:.0?}",
        median(both)
    );
    println!(
        "proportional resident memory (PSS) of every backing server, {APPS} apps with a database and a cache ({} servers): {:.1} MiB",
        pids.len(),
        total as f64 / 1024.0
    );
    queues_and_buckets(&services).await;
    tables_and_restate(&services).await;
    services.shutdown().await;
}

/// Times `ensure` of `kind` for apps 1..=10 (each the app's first of its kind: a server of
/// its own starts), then the memory (PSS) of the servers it started, idle.
async fn per_app_servers(services: &Services, kind: &str, engine: Engine, what: &str) {
    let before = services.pids().await;
    let mut times = Vec::new();
    for app in 1..=10 {
        let t = Instant::now();
        services
            .ensure(&spec(app, kind, engine), None)
            .await
            .unwrap();
        times.push(t.elapsed());
    }
    println!(
        "{what}, first of its app (its server started): median {:.0?}, max {:.0?}",
        median(times.clone()),
        times.iter().max().unwrap()
    );
    tokio::time::sleep(Duration::from_secs(5)).await;
    let started: Vec<u64> = services
        .pids()
        .await
        .into_iter()
        .filter(|p| !before.contains(p))
        .map(rss_kib)
        .collect();
    let total: u64 = started.iter().sum();
    println!(
        "{what} servers' memory (PSS), idle: one {:.1} MiB (smallest {:.1}, largest {:.1}); ten apps {:.1} MiB",
        total as f64 / 1024.0 / started.len() as f64,
        *started.iter().min().unwrap() as f64 / 1024.0,
        *started.iter().max().unwrap() as f64 / 1024.0,
        total as f64 / 1024.0
    );
}

/// #42's per-app servers: a key-value table (dynalite and its gate) and the durable block's
/// Restate server, for ten apps each.
async fn tables_and_restate(services: &Services) {
    per_app_servers(
        services,
        "keyValueTable",
        Engine::Dynalite,
        "table (dynalite)",
    )
    .await;
    per_app_servers(
        services,
        "durable",
        Engine::Restate,
        "durable (restate-server)",
    )
    .await;
}

/// The other kinds of #42: a queue (pgmq installed in a new database) and a bucket (the S3
/// server's cold start, then a bucket and key per app), and the S3 server's memory, idle and
/// with ten buckets.
async fn queues_and_buckets(services: &Services) {
    let mut queue_times = Vec::new();
    for app in 1..=10 {
        let t = Instant::now();
        services
            .ensure(&spec(app, "queue", Engine::Pgmq), None)
            .await
            .unwrap();
        queue_times.push(t.elapsed());
    }
    println!(
        "new queue (database, pgmq installed, queue made): median {:.0?}, max {:.0?}",
        median(queue_times.clone()),
        queue_times.iter().max().unwrap()
    );
    let before = services.pids().await;
    let cold = Instant::now();
    services
        .ensure(&spec(0, "objectStorage", Engine::Seaweedfs), None)
        .await
        .unwrap();
    println!(
        "S3 server cold start (first bucket): {:.2?}",
        cold.elapsed()
    );
    let weed = services
        .pids()
        .await
        .into_iter()
        .find(|p| !before.contains(p))
        .expect("the S3 server's pid");
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!(
        "S3 server memory (PSS) with one bucket: {:.1} MiB",
        rss_kib(weed) as f64 / 1024.0
    );
    let mut bucket_times = Vec::new();
    for app in 1..=10 {
        let t = Instant::now();
        services
            .ensure(&spec(app, "objectStorage", Engine::Seaweedfs), None)
            .await
            .unwrap();
        bucket_times.push(t.elapsed());
    }
    println!(
        "new bucket and key, server running: median {:.0?}, max {:.0?}",
        median(bucket_times.clone()),
        bucket_times.iter().max().unwrap()
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!(
        "S3 server memory (PSS) with eleven buckets: {:.1} MiB",
        rss_kib(weed) as f64 / 1024.0
    );
}
