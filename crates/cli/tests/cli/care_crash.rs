//! Crash safety of the care service: `kill -9` of a real `slipway care serve` process while
//! clients post enrollments, then a restart on the same database. Every enrollment answered
//! 200 must be there in full, and nothing may be there in part: no care plan without its
//! parties, consents, insurances or prescriptions; no account or contact without the
//! enrollment that wrote it; no eRX request record left `processing` or saying `success`
//! without its care plan. Runs on SQLite and, with `SLIPWAY_TEST_PG_URL`, on PostgreSQL.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use slipway_server::testing::{Backend, TestDatabase, backends};

const CLIENTS: usize = 8;

pub(crate) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

fn serve(port: u16, dir: &Path, url: Option<&str>) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_slipway"));
    cmd.args(["care", "serve", "--demo", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--data-dir")
        .arg(dir);
    if let Some(url) = url {
        cmd.args(["--database-url", url]);
    }
    cmd.env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("slipway care serve starts")
}

/// One HTTP/1.1 request on a fresh connection; (status, whole response).
pub(crate) fn request(
    port: u16,
    method: &str,
    path: &str,
    body: &str,
) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer demo-staff\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut out = String::new();
    stream.read_to_string(&mut out)?;
    let status = out
        .split(' ')
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    Ok((status, out))
}

pub(crate) fn wait_ready(port: u16, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "the server exited before it was ready"
        );
        if matches!(request(port, "GET", "/health", ""), Ok((200, _))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the server did not become ready");
}

/// A full enrollment: six parties, six contacts, two consents, two insurances, two
/// prescriptions (the load benchmark's body).
fn enrollment(n: usize) -> String {
    let p = format!("CRASH-{n}");
    serde_json::json!({
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
        "insurances": [{ "id": format!("{p}-I1"), "companyName": "Acme", "memberNumber": "M1" },
                       { "id": format!("{p}-I2"), "companyName": "Backup", "memberNumber": "M2" }],
        "prescriptions": [{ "id": format!("{p}-RX1"), "drugNdc": "PROD-1001", "quantity": "30", "numberOfRefills": 3 },
                          { "id": format!("{p}-RX2"), "drugNdc": "PROD-1002", "numberOfRefills": 1 }]
    })
    .to_string()
}

fn plan_of(n: usize) -> String {
    format!("DemoRx:DemoCareProgram:CRASH-{n}:2026-02-01")
}

/// Posts enrollments from `CLIENTS` threads until the server stops answering; returns the
/// numbers of those answered 200, and how many were sent in all.
struct Load {
    answered: Arc<Mutex<Vec<usize>>>,
    sent: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

fn start_load(port: u16) -> Load {
    let answered = Arc::new(Mutex::new(Vec::new()));
    let sent = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let threads = (0..CLIENTS)
        .map(|_| {
            let (answered, sent, stop) = (answered.clone(), sent.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let n = sent.fetch_add(1, Ordering::Relaxed);
                    match request(port, "POST", "/care/eRxApi", &enrollment(n)) {
                        Ok((200, _)) => answered.lock().expect("lock").push(n),
                        Ok((status, body)) if status != 0 => {
                            panic!("enrollment {n} answered {status}: {body}")
                        }
                        // The connection broke: the server is gone.
                        _ => break,
                    }
                }
            })
        })
        .collect();
    Load {
        answered,
        sent,
        stop,
        threads,
    }
}

async fn count(pool: &sqlx::AnyPool, sql: &'static str) -> i64 {
    sqlx::query_scalar::<_, i64>(sql)
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Parties of a care plan, as a SQL list of its account columns.
const PARTIES: &str = "cp.patient_account_id, cp.physician_account_id, cp.staff_account_id, \
                       cp.caregiver_account_id, cp.pharmacy_account_id, cp.organization_account_id";

async fn check(url: &str, answered: &[usize]) -> usize {
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(url).await.expect("connect");
    // Every answered enrollment is there.
    for n in answered {
        let found =
            sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM care_plan WHERE external_id = $1")
                .bind(plan_of(*n))
                .fetch_one(&pool)
                .await
                .expect("care plan lookup");
        assert_eq!(found, 1, "enrollment {n} was answered 200 but is gone");
    }
    let plans = count(
        &pool,
        "SELECT COUNT(*) FROM care_plan WHERE external_id LIKE 'DemoRx:DemoCareProgram:CRASH-%'",
    )
    .await;
    // Nothing is there in part. Each query counts the records that break one rule.
    let incomplete = [
        (
            "care plans without all six parties",
            format!(
                "SELECT COUNT(*) FROM care_plan cp WHERE cp.external_id LIKE 'DemoRx:DemoCareProgram:CRASH-%' \
                 AND (SELECT COUNT(*) FROM account a WHERE a.id IN ({PARTIES})) <> 6"
            ),
        ),
        (
            "care plans without two consents, two insurances and two prescriptions",
            "SELECT COUNT(*) FROM care_plan cp WHERE cp.external_id LIKE 'DemoRx:DemoCareProgram:CRASH-%' \
             AND ((SELECT COUNT(*) FROM consent c WHERE c.care_plan_id = cp.id) <> 2 \
               OR (SELECT COUNT(*) FROM member_plan m WHERE m.care_plan_id = cp.id) <> 2 \
               OR (SELECT COUNT(*) FROM prescription r WHERE r.care_plan_id = cp.id) <> 2)"
                .into(),
        ),
        (
            "care plans without their six contact points",
            "SELECT COUNT(*) FROM care_plan cp WHERE cp.external_id LIKE 'DemoRx:DemoCareProgram:CRASH-%' \
             AND (SELECT COUNT(*) FROM contact_point k \
                  WHERE k.account_id IN (cp.patient_account_id, cp.physician_account_id)) <> 6"
                .into(),
        ),
        (
            "care plans without a successful eRX request record",
            "SELECT COUNT(*) FROM care_plan cp WHERE cp.external_id LIKE 'DemoRx:DemoCareProgram:CRASH-%' \
             AND NOT EXISTS (SELECT 1 FROM erx_request r \
                             WHERE r.care_plan_external_id = cp.external_id AND r.outcome = 'success')"
                .into(),
        ),
        (
            "accounts of no care plan",
            format!(
                "SELECT COUNT(*) FROM account a WHERE a.source_id LIKE 'CRASH-%' \
                 AND NOT EXISTS (SELECT 1 FROM care_plan cp WHERE a.id IN ({PARTIES}))"
            ),
        ),
        (
            "contact points without their account",
            "SELECT COUNT(*) FROM contact_point k \
             WHERE NOT EXISTS (SELECT 1 FROM account a WHERE a.id = k.account_id)"
                .into(),
        ),
        (
            "consents, insurances or prescriptions without their care plan",
            "SELECT (SELECT COUNT(*) FROM consent c WHERE NOT EXISTS (SELECT 1 FROM care_plan cp WHERE cp.id = c.care_plan_id)) \
                  + (SELECT COUNT(*) FROM member_plan m WHERE NOT EXISTS (SELECT 1 FROM care_plan cp WHERE cp.id = m.care_plan_id)) \
                  + (SELECT COUNT(*) FROM prescription r WHERE NOT EXISTS (SELECT 1 FROM care_plan cp WHERE cp.id = r.care_plan_id))"
                .into(),
        ),
        (
            "eRX request records saying success without their care plan",
            "SELECT COUNT(*) FROM erx_request r WHERE r.outcome = 'success' \
             AND NOT EXISTS (SELECT 1 FROM care_plan cp WHERE cp.external_id = r.care_plan_external_id)"
                .into(),
        ),
        (
            "eRX request records left processing",
            "SELECT COUNT(*) FROM erx_request WHERE outcome = 'processing'".into(),
        ),
    ];
    for (what, sql) in incomplete {
        let n = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql))
            .fetch_one(&pool)
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(n, 0, "{what}: {n}");
    }
    pool.close().await;
    usize::try_from(plans).expect("count")
}

async fn crash_and_restart(backend: Backend) {
    let dir = tempfile::tempdir().expect("tempdir");
    let database = match backend {
        Backend::Sqlite => None,
        Backend::Postgres => Some(TestDatabase::create("care_crash").await),
    };
    let url = database.as_ref().map(|d| d.url().to_owned());
    let port = free_port();
    let mut server = serve(port, dir.path(), url.as_deref());
    wait_ready(port, &mut server);

    let load = start_load(port);
    // Kill in the middle of the load: after some enrollments were answered.
    let deadline = Instant::now() + Duration::from_secs(60);
    while load.answered.lock().expect("lock").len() < 100 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    server.kill().expect("kill -9"); // SIGKILL on Unix
    server.wait().expect("wait");
    load.stop.store(true, Ordering::Relaxed);
    for t in load.threads {
        t.join().expect("client thread");
    }
    let answered = load.answered.lock().expect("lock").clone();
    let sent = load.sent.load(Ordering::Relaxed);
    assert!(
        answered.len() >= 100,
        "{backend:?}: too few answered before the kill"
    );

    // Restart on the same database: it opens, recovers and serves.
    let port = free_port();
    let mut server = serve(port, dir.path(), url.as_deref());
    wait_ready(port, &mut server);
    let (status, _) = request(port, "POST", "/care/eRxApi", &enrollment(usize::MAX / 2))
        .expect("post after restart");
    assert_eq!(status, 200, "{backend:?}: an enrollment after the restart");
    server.kill().expect("stop");
    server.wait().expect("wait");

    let check_url =
        url.unwrap_or_else(|| format!("sqlite://{}", dir.path().join("care.sqlite3").display()));
    let plans = check(&check_url, &answered).await;
    eprintln!(
        "{backend:?}: {} answered 200 before kill -9, {} sent; {} enrollments after restart (incl. one new), none partial",
        answered.len(),
        sent,
        plans
    );
    assert!(
        plans > answered.len(),
        "the enrollment after the restart is there too"
    );
    drop(database);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_enrollments_loses_no_answered_one_and_leaves_none_in_part() {
    for backend in backends("care crash") {
        crash_and_restart(backend).await;
    }
}
