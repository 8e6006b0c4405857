//! Load benchmark of the care service against the storage limit, in one sitting.
//!
//! A real server on 127.0.0.1 (SQLite file, and PostgreSQL when `SLIPWAY_TEST_PG_URL` is set)
//! is driven over HTTP by concurrent clients (default 32, each with its own keep-alive
//! connection: `load/client.rs`) with a full enrollment
//! (six parties, six contacts, two consents, two insurances, two prescriptions) and with the
//! missing-information GET. Each is compared with a probe that does the same storage work
//! without the service (see `load/probe.rs`; the enrollment's rows, the GET's read and its
//! history row, and beside the GET its history row alone): on SQLite the native probe, one rusqlite connection with
//! prepared, cached statements against a copy of the same database (the storage's limit), and
//! beside it the same rows through sqlx with the same number of tasks; on PostgreSQL
//! `pgbench` with the same number of clients running the same transaction as a script. Prints throughput, p50/p99 and the
//! ratio service/probe. Then each scenario runs again open-loop, paced at half the probe's
//! throughput (the rate the throughput goals ask for), and its p50/p99 there are checked
//! against the latency goals (15 ms enrollment, 5 ms GET); its probe runs paced at the same
//! rate too, which gives the storage's own p99 at that rate: how far under a goal the
//! machine lets anything on top of that storage go. Bounded: at most `CARE_BENCH_REQUESTS`
//! enrollments (default 3000) and `CARE_BENCH_GET_REQUESTS` GETs (default 20,000) or
//! `CARE_BENCH_SECONDS` seconds (default 20) per closed loop, loopback only.
//!
//! Run: `cargo bench -p slipway-care --bench load`

#![allow(
    clippy::too_many_lines,
    reason = "a test or a bench reads as one scenario; the 100-line limit is for production code"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hyper::body::Bytes;
use serde_json::{Value, json};
use slipway_care::{Backend, CareConfig};

/// The allocator of the `slipway` binary that serves the care services in production.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "load/client.rs"]
mod client;
#[path = "load/probe.rs"]
mod probe;

const ACTIVE: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01";

/// The paced runs offer this share of the probe's throughput: the rate the throughput goals
/// ask the service to reach ("at least half of the storage limit"), at which the p99 goals
/// are checked.
const PACED_SHARE: f64 = 0.5;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A full enrollment of patient `n`.
fn enrollment(n: usize) -> Value {
    let p = format!("BENCH-{n}");
    json!({
        "vendorName": "DemoRx", "programName": "DemoCareProgram", "enrollmentDate": "2026-02-01",
        "patient": {
            "id": p, "firstName": "Ann", "lastName": "Lee", "gender": "F", "dateOfBirth": "1980-05-06",
            "addresses": [{ "id": format!("{p}-A1"), "addressLine1": "1 Main St", "city": "Springfld", "state": "IL",
                            "postalCode": "62701", "country": "US", "type": "home", "primary": true }],
            "phones": [{ "id": format!("{p}-PH1"), "countryCode": "+1", "phoneNumber": "5550101", "type": "mobile" },
                       { "id": format!("{p}-PH2"), "countryCode": "+1", "phoneNumber": "5550102", "type": "work" }],
            "emails": [{ "id": format!("{p}-E1"), "emailAddress": "ann@example.com", "type": "home" }],
            "faxes": [{ "id": format!("{p}-F1"), "countryCode": "+1", "faxNumber": "5550103", "type": "work" }]
        },
        "physician": { "id": format!("{p}-DR"), "firstName": "Bo", "lastName": "Kim", "specialty": "Oncology", "npi": "1234567890",
                       "phones": [{ "id": format!("{p}-DR-PH"), "countryCode": "+1", "phoneNumber": "5550200", "type": "work" }] },
        "staff": { "id": format!("{p}-ST"), "lastName": "Staff" },
        "caregiver": { "id": format!("{p}-CG"), "lastName": "Carer" },
        "pharmacy": { "id": format!("{p}-PHARM"), "name": "Corner Pharmacy", "npi": "999" },
        "organization": { "id": format!("{p}-ORG"), "name": "Clinic" },
        "consents": [{ "id": format!("{p}-C1"), "name": "DUP-TREATMENT", "effectiveDate": "2026-01-01" },
                     { "id": format!("{p}-C2"), "name": "DUP-MARKETING" }],
        "insurances": [{ "id": format!("{p}-I1"), "companyName": "Acme", "memberNumber": "M1",
                         "policyHolderFirstName": "Ann", "policyHolderLastName": "Lee" },
                       { "id": format!("{p}-I2"), "companyName": "Backup", "memberNumber": "M2" }],
        "prescriptions": [{ "id": format!("{p}-RX1"), "drugNdc": "PROD-1001", "quantity": "30", "numberOfRefills": 3 },
                          { "id": format!("{p}-RX2"), "drugNdc": "PROD-1002", "numberOfRefills": 1 }]
    })
}

struct Server {
    addr: std::net::SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
    _dir: Option<tempfile::TempDir>,
    /// Dropped after the server stops, also when the run panics.
    pg_database: Option<slipway_server::testing::TestDatabase>,
}

async fn start(backend: Backend) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let mut config = CareConfig::new(addr);
    config.demo = true;
    let mut dir = None;
    let mut pg_database = None;
    match backend {
        Backend::Sqlite => {
            let d = tempfile::tempdir().expect("tempdir");
            config.data_dir = d.path().to_path_buf();
            dir = Some(d);
        }
        Backend::Postgres => {
            let database = slipway_server::testing::TestDatabase::create("care_bench").await;
            config.database_url = Some(database.url().to_owned());
            pg_database = Some(database);
        }
    }
    let state = slipway_care::prepare(&config).await.expect("prepare");
    let (stop, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        slipway_care::spawn(listener, state, async {
            let _ = rx.await;
        })
        .await
        .expect("serve");
    });
    Server {
        addr,
        stop,
        task,
        _dir: dir,
        pg_database,
    }
}

struct Outcome {
    done: usize,
    errors: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

/// Runs `concurrency` workers until `max_requests` are sent or `max_time` passes.
async fn drive(
    concurrency: usize,
    max_requests: usize,
    max_time: Duration,
    addr: std::net::SocketAddr,
    make: client::Make,
) -> Outcome {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let next = next.clone();
        let make = make.clone();
        workers.push(tokio::spawn(async move {
            let mut conn = client::Conn::new(addr);
            let mut lat = Vec::new();
            let mut errors = 0;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= max_requests || started.elapsed() > max_time {
                    break;
                }
                let t = Instant::now();
                if conn.exchange(make(i)).await {
                    lat.push(t.elapsed());
                } else {
                    errors += 1;
                }
            }
            (lat, errors)
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = 0;
    for w in workers {
        let (l, e) = w.await.expect("worker");
        latencies.extend(l);
        errors += e;
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    Outcome {
        done: latencies.len(),
        errors,
        elapsed,
        latencies,
    }
}

/// The open loop's clock: transaction (or request) `i` is due at `i / per_second` after
/// `started`. Waits until it is due and answers when its latency counts from: when the timer
/// woke the waiter if it was on time (so the timer's own granularity, 1 ms, is not charged),
/// else when it was due (so time spent waiting for a free client is counted, and a slow
/// answer cannot hide the ones it held up: no coordinated omission).
async fn start_when_due(
    started: tokio::time::Instant,
    i: usize,
    per_second: f64,
) -> tokio::time::Instant {
    let due = started + Duration::from_secs_f64(i as f64 / per_second);
    if tokio::time::Instant::now() < due {
        tokio::time::sleep_until(due).await;
        tokio::time::Instant::now()
    } else {
        due
    }
}

/// Open loop: request `i` is due at `i / per_second` after the start, whether or not earlier
/// ones were answered, and is sent by the first of `concurrency` clients that is free. A
/// request sent late counts its latency from when it was due, so time spent waiting for a
/// free client is counted (no coordinated omission: a slow answer cannot hide
/// the requests it held up). This is how a latency goal at a given throughput is measured;
/// in the closed loop of [`drive`] every client sends again at once, so the latency there is
/// `clients / throughput` by Little's law and says nothing about a service that keeps up.
async fn paced(
    concurrency: usize,
    per_second: f64,
    count: usize,
    addr: std::net::SocketAddr,
    make: client::Make,
) -> Outcome {
    let next = Arc::new(AtomicUsize::new(0));
    let started = tokio::time::Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let next = next.clone();
        let make = make.clone();
        workers.push(tokio::spawn(async move {
            let mut conn = client::Conn::new(addr);
            let mut lat = Vec::new();
            let mut errors = 0;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    break;
                }
                let start = start_when_due(started, i, per_second).await;
                if conn.exchange(make(i)).await {
                    lat.push(start.elapsed());
                } else {
                    errors += 1;
                }
            }
            (lat, errors)
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = 0;
    for w in workers {
        let (l, e) = w.await.expect("worker");
        latencies.extend(l);
        errors += e;
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    Outcome {
        done: latencies.len(),
        errors,
        elapsed,
        latencies,
    }
}

/// How late a thread that sleeps 1 ms at a time wakes up: the machine's own scheduling
/// stalls (another guest on the host, the hypervisor), which no service can answer faster
/// than. Measured on the quiet machine before the runs and again during each paced run, so
/// that a missed p99 can be told apart from a stalled machine.
struct Stalls {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Vec<Duration>>,
    usage: Usage,
}

/// What this process (server, load generator and meter together) has used so far: context
/// switches of all its live threads and CPU time. Their difference over a run, per request,
/// compares two builds more steadily than a p99 does: each trip a request makes to another
/// thread is two switches. Read from `/proc` (Linux); zero elsewhere.
#[derive(Clone, Copy, Default)]
struct Usage {
    switches: u64,
    cpu: Duration,
}

impl Usage {
    fn now() -> Self {
        let mut switches = 0;
        for task in std::fs::read_dir("/proc/self/task").into_iter().flatten() {
            let Ok(task) = task else { continue };
            let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
            for line in status.lines() {
                if let Some(n) = line
                    .strip_prefix("voluntary_ctxt_switches:")
                    .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
                {
                    switches += n.trim().parse::<u64>().unwrap_or(0);
                }
            }
        }
        // utime and stime, fields 14 and 15 of /proc/self/stat, in clock ticks (100 per
        // second on Linux); the fields after the command name, which is in parentheses.
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let ticks: u64 = stat
            .rsplit_once(')')
            .map(|(_, rest)| {
                rest.split_whitespace()
                    .skip(11)
                    .take(2)
                    .filter_map(|t| t.parse::<u64>().ok())
                    .sum()
            })
            .unwrap_or(0);
        Self {
            switches,
            cpu: Duration::from_millis(ticks * 10),
        }
    }
}

impl Stalls {
    fn start() -> Self {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut late = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                let t = Instant::now();
                std::thread::sleep(Duration::from_millis(1));
                late.push(t.elapsed().saturating_sub(Duration::from_millis(1)));
            }
            late
        });
        Self {
            stop,
            thread,
            usage: Usage::now(),
        }
    }

    /// Stops the meter; says how often and how long it was woken late and, for a run of
    /// `requests`, what the process used per request.
    fn finish(self, requests: usize) -> String {
        let usage = Usage::now();
        self.stop.store(true, Ordering::Relaxed);
        let mut late = self.thread.join().expect("stall meter");
        late.sort_unstable();
        let over = |ms: u64| {
            late.iter()
                .filter(|d| **d > Duration::from_millis(ms))
                .count()
        };
        let mut said = format!(
            "a 1 ms sleeper woke over 2 ms late {} times, over 5 ms {} times, at most {:.1} ms late",
            over(2),
            over(5),
            late.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0)
        );
        if requests > 0 {
            let per = |n: f64| n / requests as f64;
            said += &format!(
                "; the process: {:.1} context switches and {:.0} µs of CPU per request",
                per(usage.switches.saturating_sub(self.usage.switches) as f64),
                per(usage.cpu.saturating_sub(self.usage.cpu).as_secs_f64() * 1e6),
            );
        }
        said
    }
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx].as_secs_f64() * 1000.0
}

fn rate(o: &Outcome) -> f64 {
    o.done as f64 / o.elapsed.as_secs_f64()
}

fn report(backend: Backend, name: &str, concurrency: usize, o: &Outcome) {
    println!(
        "| {backend:?} | {name} | c={concurrency} | {} ok, {} errors in {:.1}s | {:.0}/s | {:.2} ms | {:.2} ms |",
        o.done,
        o.errors,
        o.elapsed.as_secs_f64(),
        o.done as f64 / o.elapsed.as_secs_f64(),
        pct(&o.latencies, 0.50),
        pct(&o.latencies, 0.99),
    );
}

/// Ids of demo rows the probes refer to.
struct DemoIds {
    user: i64,
    purposes: [i64; 2],
    products: [i64; 2],
    data_request: i64,
}

async fn demo_ids(url: &str) -> DemoIds {
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(url).await.expect("connect");
    let id = |sql: &'static str, key: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>(sql)
                .bind(key)
                .fetch_one(&pool)
                .await
                .unwrap_or_else(|e| panic!("{sql} {key}: {e}"))
        }
    };
    let ids = DemoIds {
        user: sqlx::query_scalar::<_, i64>("SELECT MIN(id) FROM app_user")
            .fetch_one(&pool)
            .await
            .expect("user"),
        purposes: [
            id(
                "SELECT id FROM data_use_purpose WHERE external_id = $1",
                "DUP-TREATMENT",
            )
            .await,
            id(
                "SELECT id FROM data_use_purpose WHERE external_id = $1",
                "DUP-MARKETING",
            )
            .await,
        ],
        products: [
            id(
                "SELECT id FROM product WHERE product_code = $1",
                "PROD-1001",
            )
            .await,
            id(
                "SELECT id FROM product WHERE product_code = $1",
                "PROD-1002",
            )
            .await,
        ],
        data_request: id("SELECT id FROM data_request WHERE external_id = $1", ACTIVE).await,
    };
    pool.close().await;
    ids
}

/// A second database with the server's schema and demo rows, for the probes.
async fn probe_database(
    backend: Backend,
) -> (
    String,
    Option<tempfile::TempDir>,
    Option<slipway_server::testing::TestDatabase>,
) {
    let mut config = CareConfig::new("127.0.0.1:0".parse().expect("addr"));
    config.demo = true;
    let (mut dir, mut database) = (None, None);
    match backend {
        Backend::Sqlite => {
            let d = tempfile::tempdir().expect("tempdir");
            config.data_dir = d.path().to_path_buf();
            dir = Some(d);
        }
        Backend::Postgres => {
            let d = slipway_server::testing::TestDatabase::create("care_probe").await;
            config.database_url = Some(d.url().to_owned());
            database = Some(d);
        }
    }
    let url = config.effective_database_url();
    drop(
        slipway_care::prepare(&config)
            .await
            .expect("prepare probe database"),
    );
    (url, dir, database)
}

/// One scenario's figures on one backend.
struct Measured {
    backend: Backend,
    name: &'static str,
    /// The closed loop: the most the service does.
    service: Outcome,
    /// The storage's limit: on SQLite the native probe (one rusqlite connection), on
    /// PostgreSQL pgbench.
    probe: Outcome,
    /// On SQLite, the same rows through sqlx (8 connections, 32 tasks).
    sqlx_probe: Option<Outcome>,
    /// The probe in the open loop at the paced run's rate: the storage's own latency there,
    /// with no service in the way (what the machine allows a p99 goal at that rate).
    probe_paced: Outcome,
    /// A probe of the writes alone, where the limit above also reads (the GET's history
    /// record without its read): closed loop, and paced at the paced run's rate.
    write_probe: Option<(Outcome, Outcome)>,
    /// The open loop at [`PACED_SHARE`] of the probe's rate: the latency at the goal's rate.
    paced: Outcome,
    /// The machine's stalls during the paced run ([`Stalls`]).
    stalls: String,
    p99_goal_ms: f64,
}

fn compare(m: &Measured, concurrency: usize) {
    let (service, probe, paced) = (&m.service, &m.probe, &m.paced);
    let p99 = pct(&paced.latencies, 0.99);
    println!(
        "{:?} {}: service {:.0}/s (p50 {:.2} ms, p99 {:.2} ms) / probe {:.0}/s (p50 {:.2} ms, p99 {:.2} ms) = {:.0}% at {concurrency} clients; \
         paced at {:.0}/s ({:.0}% of the probe): p50 {:.2} ms, p99 {:.2} ms (goal {} ms: {})",
        m.backend,
        m.name,
        rate(service),
        pct(&service.latencies, 0.50),
        pct(&service.latencies, 0.99),
        rate(probe),
        pct(&probe.latencies, 0.50),
        pct(&probe.latencies, 0.99),
        100.0 * rate(service) / rate(probe),
        rate(paced),
        100.0 * PACED_SHARE,
        pct(&paced.latencies, 0.50),
        p99,
        m.p99_goal_ms,
        if p99 <= m.p99_goal_ms {
            "met"
        } else {
            "not met"
        },
    );
    if let Some(sqlx_probe) = &m.sqlx_probe {
        println!(
            "  the native probe above is one rusqlite connection; the sqlx probe did {:.0}/s \
             (service {:.0}% of it)",
            rate(sqlx_probe),
            100.0 * rate(service) / rate(sqlx_probe)
        );
    }
    if let Some((write, write_paced)) = &m.write_probe {
        let write_p99 = pct(&write_paced.latencies, 0.99);
        println!(
            "  its write alone (one history row a transaction): {:.0}/s (service {:.0}% of it); \
             paced at {:.0}/s: p50 {:.2} ms, p99 {:.2} ms (service's paced p99 {:.2}x it)",
            rate(write),
            100.0 * rate(service) / rate(write),
            rate(write_paced),
            pct(&write_paced.latencies, 0.50),
            write_p99,
            p99 / write_p99,
        );
    }
    let probe_p99 = pct(&m.probe_paced.latencies, 0.99);
    println!(
        "  the probe paced at {:.0}/s: p50 {:.2} ms, p99 {:.2} ms (service's paced p99 {:.2}x the \
         probe's); during the service's run {}",
        rate(&m.probe_paced),
        pct(&m.probe_paced.latencies, 0.50),
        probe_p99,
        p99 / probe_p99,
        m.stalls
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run a tiny smoke.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let max_requests = if smoke {
        20
    } else {
        env_usize("CARE_BENCH_REQUESTS", 3000)
    };
    // The GET's closed loops (service and probes) take this many: a GET is a tenth of an
    // enrollment's work, and 3,000 of them last a fraction of a second, mostly warm-up.
    let get_requests = if smoke {
        20
    } else {
        env_usize("CARE_BENCH_GET_REQUESTS", 20_000)
    };
    let max_time = Duration::from_secs(env_usize("CARE_BENCH_SECONDS", 20) as u64);
    let concurrency = env_usize("CARE_BENCH_CONCURRENCY", 32);
    // The paced runs last CARE_BENCH_PACED_SECONDS (10) at their rate; 20 requests in the smoke.
    let paced_seconds = env_usize("CARE_BENCH_PACED_SECONDS", 10) as f64;
    let paced_count = |per_second: f64| {
        if smoke {
            20
        } else {
            (per_second * paced_seconds).ceil() as usize
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        // CARE_BENCH_ONLY=sqlite|postgres runs one backend.
        let only = std::env::var("CARE_BENCH_ONLY").unwrap_or_default();
        let mut backends = Vec::new();
        if only != "postgres" {
            backends.push(Backend::Sqlite);
        }
        if only == "sqlite" {
        } else if std::env::var("SLIPWAY_TEST_PG_URL").is_ok_and(|v| !v.is_empty()) {
            backends.push(Backend::Postgres);
        } else {
            println!("SLIPWAY_TEST_PG_URL not set: PostgreSQL skipped");
        }
        let quiet_seconds = if smoke { 0 } else { 5 };
        let quiet = Stalls::start();
        tokio::time::sleep(Duration::from_secs(quiet_seconds)).await;
        println!(
            "The quiet machine, {quiet_seconds} s before the runs: {}.",
            quiet.finish(0)
        );
        let mut summary = Vec::new();
        println!("| Backend | Scenario | Clients | Requests | Throughput | p50 | p99 |");
        println!("|---|---|---|---|---|---|---|");
        for backend in backends {
            let (probe_url, _probe_dir, probe_db) = probe_database(backend).await;
            let ids = demo_ids(&probe_url).await;
            let payload = enrollment(0).to_string();
            let enroll_steps = || probe::enrollment(&payload, ids.user, ids.purposes, ids.products);
            let history_steps = || probe::history(ids.data_request, ids.user);
            // Closed loop (`pace` None): `max_requests` transactions numbered from 0. Paced:
            // the paced run's count, numbered after the closed loop's, so that every
            // enrollment is a new patient there too.
            // On SQLite the limit is the native probe (rusqlite, one connection); the sqlx
            // probe runs beside it closed-loop only, for comparison.
            let run_native = |steps: Vec<probe::Step>, pace: Option<f64>, closed: usize| {
                let path = probe_url.trim_start_matches("sqlite://").to_owned();
                let (requests, first) = match pace {
                    None => (closed, 0),
                    Some(per_second) => (paced_count(per_second), 2 * max_requests),
                };
                async move {
                    tokio::task::spawn_blocking(move || {
                        probe::native(
                            std::path::Path::new(&path),
                            &steps,
                            pace,
                            requests,
                            max_time,
                            first,
                        )
                    })
                    .await
                    .expect("native probe thread")
                }
            };
            // Numbered after both closed loops and the native paced run's.
            let run_probe = |steps: Vec<probe::Step>, pace: Option<f64>, closed: usize| {
                let probe_url = probe_url.clone();
                let (requests, first) = match pace {
                    None => (closed, max_requests),
                    Some(per_second) => (paced_count(per_second), 3 * max_requests),
                };
                async move {
                    match backend {
                        Backend::Sqlite => {
                            let path = probe_url.trim_start_matches("sqlite://").to_owned();
                            probe::sqlite(
                                std::path::Path::new(&path),
                                steps,
                                (concurrency, pace),
                                requests,
                                max_time,
                                first,
                            )
                            .await
                        }
                        Backend::Postgres => {
                            let script = probe::pgbench_script(&steps);
                            tokio::task::spawn_blocking(move || {
                                probe::pgbench(&probe_url, &script, (concurrency, pace), requests)
                            })
                            .await
                            .expect("pgbench task")
                        }
                    }
                }
            };

            let probe_clients = if backend == Backend::Sqlite {
                1
            } else {
                concurrency
            };
            // CARE_BENCH_SCENARIOS=get (or enrollment) runs one scenario, e.g. for a profile.
            let scenarios = std::env::var("CARE_BENCH_SCENARIOS").unwrap_or_default();
            let wants =
                |name: &str| scenarios.is_empty() || scenarios.split(',').any(|s| s == name);
            let server = start(backend).await;
            if wants("enrollment") {
                let (enroll_probe, enroll_sqlx_probe) = match backend {
                    Backend::Sqlite => {
                        let sqlx_probe = run_probe(enroll_steps(), None, max_requests).await;
                        report(
                            backend,
                            "probe: enrollment rows (sqlx, 8 connections)",
                            concurrency,
                            &sqlx_probe,
                        );
                        (
                            run_native(enroll_steps(), None, max_requests).await,
                            Some(sqlx_probe),
                        )
                    }
                    Backend::Postgres => {
                        (run_probe(enroll_steps(), None, max_requests).await, None)
                    }
                };
                let probe_name = match backend {
                    Backend::Sqlite => "probe: enrollment rows (native rusqlite)",
                    Backend::Postgres => "probe: enrollment rows (pgbench)",
                };
                report(backend, probe_name, probe_clients, &enroll_probe);
                let enroll_rate = PACED_SHARE * rate(&enroll_probe);
                let enroll_probe_paced = match backend {
                    Backend::Sqlite => {
                        run_native(enroll_steps(), Some(enroll_rate), max_requests).await
                    }
                    Backend::Postgres => {
                        run_probe(enroll_steps(), Some(enroll_rate), max_requests).await
                    }
                };
                report(
                    backend,
                    &format!("{probe_name}, paced at {enroll_rate:.0}/s"),
                    probe_clients,
                    &enroll_probe_paced,
                );

                // Closed-loop bodies first, then the paced run's: every enrollment a new patient.
                let enroll_paced_count = paced_count(enroll_rate);
                let bodies: Arc<Vec<Bytes>> = Arc::new(
                    (0..max_requests + enroll_paced_count)
                        .map(|i| Bytes::from(enrollment(i).to_string()))
                        .collect(),
                );
                let (addr, b) = (server.addr, bodies.clone());
                let enroll = drive(
                    concurrency,
                    max_requests,
                    max_time,
                    addr,
                    Arc::new(move |i| client::post(addr, "/care/eRxApi", b[i].clone())),
                )
                .await;
                report(
                    backend,
                    "POST eRxApi (full enrollment)",
                    concurrency,
                    &enroll,
                );
                let b = bodies.clone();
                let enroll_stalls = Stalls::start();
                let enroll_paced = paced(
                    concurrency,
                    enroll_rate,
                    enroll_paced_count,
                    addr,
                    Arc::new(move |i| {
                        client::post(addr, "/care/eRxApi", b[max_requests + i].clone())
                    }),
                )
                .await;
                let enroll_stalls = enroll_stalls.finish(enroll_paced.done + enroll_paced.errors);
                report(
                    backend,
                    &format!("POST eRxApi, paced at {enroll_rate:.0}/s"),
                    concurrency,
                    &enroll_paced,
                );

                summary.push(Measured {
                    backend,
                    name: "enrollment",
                    service: enroll,
                    probe: enroll_probe,
                    sqlx_probe: enroll_sqlx_probe,
                    probe_paced: enroll_probe_paced,
                    write_probe: None,
                    paced: enroll_paced,
                    stalls: enroll_stalls,
                    p99_goal_ms: 15.0,
                });
            }
            if wants("get") {
                // The GET's limit is its storage work: its read (the service's statement and
                // values) and its history record, one transaction each. The history record
                // alone, the write the GET leaves, is measured beside it.
                let get_steps = || {
                    probe::get(
                        probe::missing_info_read(backend, "demo-staff", ACTIVE),
                        ids.data_request,
                        ids.user,
                    )
                };
                let (get_probe, get_sqlx_probe) = match backend {
                    Backend::Sqlite => {
                        let sqlx_probe = run_probe(get_steps(), None, get_requests).await;
                        report(
                            backend,
                            "probe: a GET's read and history row (sqlx, 8 connections)",
                            concurrency,
                            &sqlx_probe,
                        );
                        (
                            run_native(get_steps(), None, get_requests).await,
                            Some(sqlx_probe),
                        )
                    }
                    Backend::Postgres => (run_probe(get_steps(), None, get_requests).await, None),
                };
                let probe_name = match backend {
                    Backend::Sqlite => "probe: a GET's read and history row (native rusqlite)",
                    Backend::Postgres => "probe: a GET's read and history row (pgbench)",
                };
                report(backend, probe_name, probe_clients, &get_probe);
                // CARE_BENCH_GET_RATE pins the paced GET's rate (requests per second), so that
                // builds compared in one sitting are offered the same load whatever their probes.
                let get_rate = std::env::var("CARE_BENCH_GET_RATE")
                    .ok()
                    .and_then(|v| v.parse::<f64>().ok())
                    .unwrap_or(PACED_SHARE * rate(&get_probe));
                let run_limit = |steps: Vec<probe::Step>, pace: Option<f64>| async move {
                    match backend {
                        Backend::Sqlite => run_native(steps, pace, get_requests).await,
                        Backend::Postgres => run_probe(steps, pace, get_requests).await,
                    }
                };
                let get_probe_paced = run_limit(get_steps(), Some(get_rate)).await;
                report(
                    backend,
                    &format!("{probe_name}, paced at {get_rate:.0}/s"),
                    probe_clients,
                    &get_probe_paced,
                );
                let history_name = match backend {
                    Backend::Sqlite => "probe: one history row alone (native rusqlite)",
                    Backend::Postgres => "probe: one history row alone (pgbench)",
                };
                let history_probe = run_limit(history_steps(), None).await;
                report(backend, history_name, probe_clients, &history_probe);
                let history_probe_paced = run_limit(history_steps(), Some(get_rate)).await;
                report(
                    backend,
                    &format!("{history_name}, paced at {get_rate:.0}/s"),
                    probe_clients,
                    &history_probe_paced,
                );

                let addr = server.addr;
                let path = format!("/care/missingInformationRequest/{ACTIVE}");
                let get_request: client::Make = Arc::new(move |_| client::get(addr, &path));
                let get = drive(
                    concurrency,
                    get_requests,
                    max_time,
                    addr,
                    get_request.clone(),
                )
                .await;
                report(backend, "GET missingInformationRequest", concurrency, &get);
                let get_stalls = Stalls::start();
                let get_paced = paced(
                    concurrency,
                    get_rate,
                    paced_count(get_rate),
                    addr,
                    get_request,
                )
                .await;
                let get_stalls = get_stalls.finish(get_paced.done + get_paced.errors);
                report(
                    backend,
                    &format!("GET missingInformationRequest, paced at {get_rate:.0}/s"),
                    concurrency,
                    &get_paced,
                );
                summary.push(Measured {
                    backend,
                    name: "missing-information GET",
                    service: get,
                    probe: get_probe,
                    sqlx_probe: get_sqlx_probe,
                    probe_paced: get_probe_paced,
                    write_probe: Some((history_probe, history_probe_paced)),
                    paced: get_paced,
                    stalls: get_stalls,
                    p99_goal_ms: 5.0,
                });
            }
            let _ = server.stop.send(());
            let _ = server.task.await;
            drop(server.pg_database);
            drop(probe_db);
        }
        println!();
        for m in &summary {
            compare(m, concurrency);
        }
        let errors: usize = summary
            .iter()
            .map(|m| {
                m.service.errors
                    + m.probe.errors
                    + m.paced.errors
                    + m.probe_paced.errors
                    + m.sqlx_probe.as_ref().map_or(0, |p| p.errors)
                    + m.write_probe
                        .as_ref()
                        .map_or(0, |(w, p)| w.errors + p.errors)
            })
            .sum();
        assert_eq!(errors, 0, "requests failed");
    });
}
