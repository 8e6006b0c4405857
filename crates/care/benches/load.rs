//! Load benchmark of the care service: a real server on 127.0.0.1 (SQLite file, and
//! PostgreSQL when `SLIPWAY_TEST_PG_URL` is set), driven over HTTP by concurrent reqwest
//! clients. Reports requests/s and p50/p99 latency for a full enrollment (six parties,
//! several contacts, consents, insurances, prescriptions) and for the missing-information
//! GET. Bounded: at most `CARE_BENCH_REQUESTS` requests (default 2000) or
//! `CARE_BENCH_SECONDS` seconds (default 20) per scenario, loopback only.
//!
//! Run: `CARGO_TARGET_DIR=/work/target-care cargo bench -p slipway-care --bench load`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use slipway_care::{Backend, CareConfig};

const ACTIVE: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01";

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
    base: String,
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
        base: format!("http://{addr}"),
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
    make: Arc<dyn Fn(usize) -> reqwest::RequestBuilder + Send + Sync>,
) -> Outcome {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let next = next.clone();
        let make = make.clone();
        workers.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut errors = 0;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= max_requests || started.elapsed() > max_time {
                    break;
                }
                let t = Instant::now();
                match make(i).send().await {
                    Ok(r) if r.status().is_success() => {
                        let _ = r.bytes().await;
                        lat.push(t.elapsed());
                    }
                    _ => errors += 1,
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

fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx].as_secs_f64() * 1000.0
}

fn report(backend: Backend, name: &str, concurrency: usize, o: &Outcome) {
    println!(
        "{backend:?} | {name} | c={concurrency} | {} ok, {} errors in {:.1}s | {:.0} req/s | p50 {:.2} ms | p99 {:.2} ms",
        o.done,
        o.errors,
        o.elapsed.as_secs_f64(),
        o.done as f64 / o.elapsed.as_secs_f64(),
        pct(&o.latencies, 0.50),
        pct(&o.latencies, 0.99),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run a tiny smoke.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let max_requests = if smoke {
        20
    } else {
        env_usize("CARE_BENCH_REQUESTS", 2000)
    };
    let max_time = Duration::from_secs(env_usize("CARE_BENCH_SECONDS", 20) as u64);
    let concurrency = env_usize("CARE_BENCH_CONCURRENCY", 8);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mut backends = vec![Backend::Sqlite];
        if std::env::var("SLIPWAY_TEST_PG_URL").is_ok_and(|v| !v.is_empty()) {
            backends.push(Backend::Postgres);
        } else {
            println!("SLIPWAY_TEST_PG_URL not set: PostgreSQL skipped");
        }
        for backend in backends {
            let server = start(backend).await;
            let client = reqwest::Client::builder()
                .pool_max_idle_per_host(concurrency)
                .build()
                .expect("client");
            let bodies: Arc<Vec<String>> = Arc::new(
                (0..max_requests)
                    .map(|i| enrollment(i).to_string())
                    .collect(),
            );
            let url = format!("{}/care/eRxApi", server.base);
            let (c, b) = (client.clone(), bodies.clone());
            let enroll = drive(
                concurrency,
                max_requests,
                max_time,
                Arc::new(move |i| c.post(&url).bearer_auth("demo-staff").body(b[i].clone())),
            )
            .await;
            report(
                backend,
                "POST eRxApi (full enrollment)",
                concurrency,
                &enroll,
            );
            let url = format!("{}/care/missingInformationRequest/{ACTIVE}", server.base);
            let c = client.clone();
            let get = drive(
                concurrency,
                max_requests,
                max_time,
                Arc::new(move |_| c.get(&url).bearer_auth("demo-staff")),
            )
            .await;
            report(backend, "GET missingInformationRequest", concurrency, &get);
            assert_eq!(enroll.errors + get.errors, 0, "requests failed");
            let _ = server.stop.send(());
            let _ = server.task.await;
            drop(server.pg_database);
        }
    });
}
