//! Benchmark of the care staff's worklist at scale: 100,000 missing-information requests of
//! which 20,000 are open (1,000 of those claimed), on SQLite and (with
//! `SLIPWAY_TEST_PG_URL`) PostgreSQL.
//!
//! Over real HTTP on 127.0.0.1, `CARE_BENCH_CLIENTS` clients (default 4) each read
//! - the first page of the open worklist (`status=requested,in-progress&_count=20`, with and
//!   without its `_total`), and of the unfiltered, the ended and one holder's lists;
//! - `next` pages: every page of the open worklist, following the links from the first
//!   (1,000 pages of 20), so pages deep in the list are measured as well as early ones;
//!
//! and prints p50/p99/max per kind (the goal: p99 ≤ 20 ms). Then 100 listeners subscribe to
//! `GET /care/events`, requests are created through the admin API one after another, and the
//! time from each PUT's answer until the last of the 100 listeners has the event is printed
//! (the goal: within a second).
//!
//! Run: `cargo bench -p slipway-care --bench worklist`

#![allow(
    clippy::too_many_lines,
    reason = "a test or a bench reads as one scenario; the 100-line limit is for production code"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use slipway_care::{Backend, CareConfig};
use sqlx::{Connection, Executor};

const ACTIVE: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01";
const STAFF: &str = "demo-staff";
const ADMIN: &str = "demo-admin";
const TOTAL: usize = 100_000;
const OPEN: usize = 20_000;
const CLAIMED: usize = 1_000;
const LISTENERS: usize = 100;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Server {
    base: String,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
    _dir: Option<tempfile::TempDir>,
    pg_database: Option<slipway_server::testing::TestDatabase>,
}

/// The statuses and expiries of the bench's requests: `OPEN` active ones (the first
/// `CLAIMED` held by the demo staff user), then answered, cancelled, ended and expired ones.
fn row(n: usize) -> (String, &'static str, String, bool) {
    let uuid = format!("00000000-0000-4000-8000-{n:012}");
    // Expiries spread over four years of days, in an order unrelated to creation.
    let day = (n * 7_919) % 1_460;
    let date = time::Date::from_calendar_date(2097, time::Month::January, 1).unwrap()
        + time::Duration::days(day as i64);
    let expires = format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        u8::from(date.month()),
        date.day()
    );
    if n < OPEN {
        return (uuid, "Active", expires, n < CLAIMED);
    }
    match n % 4 {
        0 => (uuid, "Completed", expires, false),
        1 => (uuid, "Cancelled", expires, false),
        2 => (uuid, "Ended", expires, false),
        _ => (uuid, "Active", "2020-01-01".into(), false),
    }
}

/// Writes the bench's requests straight into the prepared database, 500 to a statement.
async fn fill(url: &str) {
    let mut conn = sqlx::AnyConnection::connect(url).await.expect("connect");
    let (plan, group, staff): (String, String, i64) = {
        let r: (String, String) = sqlx::query_as(
            "SELECT care_plan_external_id, group_external_id FROM data_request WHERE external_id = $1",
        )
        .bind(ACTIVE)
        .fetch_one(&mut conn)
        .await
        .expect("the demo request");
        let staff: (i64,) =
            sqlx::query_as("SELECT id FROM app_user WHERE name = 'Demo care staff'")
                .fetch_one(&mut conn)
                .await
                .expect("the demo staff user");
        (r.0, r.1, staff.0)
    };
    conn.execute("BEGIN").await.unwrap();
    for chunk in (0..TOTAL).collect::<Vec<_>>().chunks(500) {
        let mut sql = String::from(
            "INSERT INTO data_request (external_id, care_plan_external_id, group_external_id, \
             status, expiration_date, created_at, updated_at, claimed_by, claimed_at, expiry_announced) VALUES ",
        );
        let values: Vec<String> = chunk
            .iter()
            .map(|&n| {
                let (uuid, status, expires, claimed) = row(n);
                let holder = if claimed { staff.to_string() } else { "NULL".into() };
                format!(
                    "('{uuid}', '{plan}', '{group}', '{status}', '{expires}', {t}, {t}, {holder}, NULL, 1)",
                    t = 1_700_000_000 + n
                )
            })
            .collect();
        sql.push_str(&values.join(", "));
        conn.execute(sqlx::AssertSqlSafe(sql))
            .await
            .expect("insert");
    }
    conn.execute("COMMIT").await.unwrap();
    // What autovacuum leaves behind on a database in use: statistics, and on PostgreSQL a
    // visibility map (without it a count reads the table's pages, not just the index's).
    let analyze = if url.starts_with("postgres") {
        "VACUUM ANALYZE data_request"
    } else {
        "ANALYZE"
    };
    conn.execute(analyze).await.unwrap();
    conn.close().await.unwrap();
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
            let database = slipway_server::testing::TestDatabase::create("care_worklist").await;
            config.database_url = Some(database.url().to_owned());
            pg_database = Some(database);
        }
    }
    // Migrate and load the demo once, fill, then serve a fresh state over the filled database.
    drop(slipway_care::prepare(&config).await.expect("prepare"));
    let started = Instant::now();
    sqlx::any::install_default_drivers();
    fill(&config.effective_database_url()).await;
    println!(
        "  filled {TOTAL} requests in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    config.demo = false;
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

async fn get(client: &reqwest::Client, url: &str) -> (Duration, Value) {
    let started = Instant::now();
    let r = client
        .get(url)
        .bearer_auth(STAFF)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200, "{url}");
    let body: Value = r.json().await.expect("json");
    (started.elapsed(), body)
}

fn next_link(bundle: &Value) -> Option<String> {
    bundle["link"]
        .as_array()?
        .iter()
        .find(|l| l["relation"] == "next")
        .and_then(|l| l["url"].as_str().map(str::to_owned))
}

fn report(label: &str, mut latencies: Vec<Duration>) {
    latencies.sort();
    let at = |q: f64| {
        let i = ((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len()) - 1;
        latencies[i].as_secs_f64() * 1e3
    };
    println!(
        "  {label:<34} n={:>5}  p50 {:>6.2} ms  p99 {:>6.2} ms  max {:>6.2} ms  {}",
        latencies.len(),
        at(0.50),
        at(0.99),
        at(1.0),
        if at(0.99) <= 20.0 {
            "(p99 ≤ 20 ms: met)"
        } else {
            "(p99 ≤ 20 ms: NOT met)"
        }
    );
}

async fn pages(server: &Server, clients: usize) {
    let client = reqwest::Client::new();
    let firsts = [
        (
            "first page, open, with _total",
            "/fhir/Task?status=requested,in-progress&_count=20&_total=accurate",
        ),
        (
            "first page, open",
            "/fhir/Task?status=requested,in-progress&_count=20",
        ),
        ("first page, all", "/fhir/Task?_count=20"),
        (
            "first page, ended",
            "/fhir/Task?status=completed,cancelled&_count=20",
        ),
        (
            "first page, one holder's",
            "/fhir/Task?owner=demo-staff-user&_count=20",
        ),
    ];
    // The demo staff user's ID, for the holder's list.
    let (_, me) = {
        let r = client
            .get(format!("{}/care/me", server.base))
            .bearer_auth(STAFF)
            .send()
            .await
            .unwrap();
        ((), r.json::<Value>().await.unwrap())
    };
    let me = me["id"].as_str().unwrap().to_owned();
    for (label, path) in firsts {
        let url = format!("{}{}", server.base, path.replace("demo-staff-user", &me));
        let per_client = env_usize("CARE_BENCH_FIRST_PAGES", 500);
        let mut tasks = Vec::new();
        for _ in 0..clients {
            let (client, url) = (client.clone(), url.clone());
            tasks.push(tokio::spawn(async move {
                let mut out = Vec::with_capacity(per_client);
                for _ in 0..per_client {
                    out.push(get(&client, &url).await.0);
                }
                out
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        report(label, all);
    }
    // Every page of the open list, each client walking the whole list.
    let first = format!(
        "{}/fhir/Task?status=requested,in-progress&_count=20",
        server.base
    );
    let (_, counted) = get(&client, &format!("{first}&_total=accurate")).await;
    // The bench's open requests and the demo's.
    assert_eq!(counted["total"], OPEN + 1, "the open worklist");
    let walks = clients.min(env_usize("CARE_BENCH_WALKS", 2));
    let mut tasks = Vec::new();
    for _ in 0..walks {
        let (client, first) = (client.clone(), first.clone());
        tasks.push(tokio::spawn(async move {
            let (_, mut bundle) = get(&client, &first).await;
            let mut seen = bundle["entry"].as_array().unwrap().len();
            let mut out = Vec::new();
            while let Some(next) = next_link(&bundle) {
                let (took, b) = get(&client, &next).await;
                out.push(took);
                seen += b["entry"].as_array().unwrap().len();
                bundle = b;
            }
            assert_eq!(seen, OPEN + 1, "a walk sees every open request once");
            out
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    report(&format!("next pages ({walks} walks of the list)"), all);
}

/// One SSE listener: resolves each time it has an event about `uuid` sent to it.
async fn listener(
    base: String,
    ready: Arc<tokio::sync::Barrier>,
    got: tokio::sync::mpsc::UnboundedSender<String>,
) {
    let client = reqwest::Client::new();
    let mut r = client
        .get(format!("{base}/care/events"))
        .bearer_auth(STAFF)
        .send()
        .await
        .expect("subscribe");
    assert_eq!(r.status(), 200);
    ready.wait().await;
    let mut buffer = String::new();
    while let Ok(Some(chunk)) = r.chunk().await {
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            if let Some(data) = block.lines().find_map(|l| l.strip_prefix("data:")) {
                let v: Value = serde_json::from_str(data.trim()).unwrap();
                let _ = got.send(v["uuid"].as_str().unwrap_or_default().to_owned());
            }
        }
    }
}

async fn events(server: &Server) {
    let ready = Arc::new(tokio::sync::Barrier::new(LISTENERS + 1));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut listeners = Vec::new();
    for _ in 0..LISTENERS {
        listeners.push(tokio::spawn(listener(
            server.base.clone(),
            ready.clone(),
            tx.clone(),
        )));
    }
    ready.wait().await;
    let client = reqwest::Client::new();
    let existing: Value = client
        .get(format!("{}/admin/data-requests/{ACTIVE}", server.base))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut latencies = Vec::new();
    for _ in 0..env_usize("CARE_BENCH_EVENTS", 20) {
        let uuid = uuid::Uuid::new_v4().to_string();
        let r = client
            .put(format!("{}/admin/data-requests/{uuid}", server.base))
            .bearer_auth(ADMIN)
            .json(&json!({
                "carePlanExternalId": existing["carePlanExternalId"],
                "groupId": existing["groupId"],
                "status": "Active",
                "expirationDate": "2099-06-01"
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let answered = Instant::now();
        let mut reached = 0;
        while reached < LISTENERS {
            let got = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await
                .expect("every listener gets the event within 10 s")
                .unwrap();
            if got == uuid {
                reached += 1;
            }
        }
        latencies.push(answered.elapsed());
    }
    latencies.sort();
    let worst = latencies.last().unwrap().as_secs_f64() * 1e3;
    println!(
        "  event to all {LISTENERS} listeners       n={:>5}  p50 {:>6.2} ms  max {:>6.2} ms  {}",
        latencies.len(),
        latencies[latencies.len() / 2].as_secs_f64() * 1e3,
        worst,
        if worst <= 1000.0 {
            "(within a second: met)"
        } else {
            "(within a second: NOT met)"
        }
    );
    for l in listeners {
        l.abort();
    }
}

#[tokio::main]
async fn main() {
    let clients = env_usize("CARE_BENCH_CLIENTS", 4);
    let mut backends = vec![Backend::Sqlite];
    if std::env::var_os(slipway_server::testing::PG_URL_VAR).is_some() {
        backends.push(Backend::Postgres);
    }
    for backend in backends {
        println!("worklist, {backend:?}: {TOTAL} requests, {OPEN} open, {clients} clients");
        let server = start(backend).await;
        pages(&server, clients).await;
        events(&server).await;
        let _ = server.stop.send(());
        let _ = server.task.await;
        drop(server.pg_database);
    }
}
