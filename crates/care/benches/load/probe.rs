//! The storage-limit probes: the rows a request writes, written without the service.
//!
//! A probe transaction is a list of [`Step`]s, rendered three ways from the same list so the
//! comparison stays honest: bound and run by sqlx's native SQLite driver against a copy of
//! the service's database (same migrations, so the same indexes; same demo rows; WAL with
//! `synchronous = NORMAL`; writers queued in-process then `BEGIN IMMEDIATE`, as the service
//! does), run natively on one rusqlite connection with prepared, cached statements (the
//! storage's limit on SQLite: no driver in the way), and as a `pgbench` script (`\gset`
//! carries the returned row ids).

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use slipway_server::db::native::rusqlite;
use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use super::{Outcome, start_when_due};

/// One bound value of a step.
#[derive(Clone)]
pub enum Arg {
    /// Text in which `{n}` is the transaction's unique number.
    Text(String),
    /// SQL NULL.
    Null,
    /// An integer.
    Int(i64),
    /// The row id an earlier step returned.
    Ref(usize),
}

/// What a step's statement answers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Answers {
    /// Nothing (a plain insert).
    Nothing,
    /// One row id (it ends in `RETURNING id`), which later steps may bind ([`Arg::Ref`]).
    Id,
    /// Rows, each read in full (every column decoded) and dropped: a read's work.
    Rows,
}

/// One statement.
pub struct Step {
    sql: String,
    args: Vec<Arg>,
    answers: Answers,
}

fn t(s: &str) -> Arg {
    Arg::Text(s.to_owned())
}

fn insert(table: &str, cols: &[(&str, Arg)], now: i64) -> Step {
    let mut names: Vec<&str> = cols.iter().map(|(n, _)| *n).collect();
    names.extend(["created_at", "updated_at"]);
    let placeholders: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
    let mut args: Vec<Arg> = cols.iter().map(|(_, a)| a.clone()).collect();
    args.extend([Arg::Int(now), Arg::Int(now)]);
    Step {
        sql: format!(
            "INSERT INTO {table} ({}) VALUES ({}) ON CONFLICT (external_id) DO NOTHING RETURNING id",
            names.join(", "),
            placeholders.join(", ")
        ),
        args,
        answers: Answers::Id,
    }
}

/// The rows of one full enrollment of the load benchmark (its `enrollment(n)` body), one
/// statement per row: the eRX request record (with its outcome, as the service writes it),
/// six accounts, the care plan, six contact points, two consents, two member plans and two
/// prescriptions.
pub fn enrollment(
    payload: &str,
    user_id: i64,
    purposes: [i64; 2],
    products: [i64; 2],
) -> Vec<Step> {
    let now = 1_790_000_000;
    let p = "DemoRx:patient:BENCH-{n}";
    let mut s = vec![Step {
        sql: "INSERT INTO erx_request (external_id, user_id, received_at, payload, outcome, \
              errors, care_plan_external_id) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id"
            .into(),
        args: vec![
            t("req-{n}"),
            Arg::Int(user_id),
            Arg::Int(now),
            Arg::Text(payload.replace('{', "{{")),
            t("success"),
            t("[]"),
            t(&format!("{p}:DemoCareProgram")),
        ],
        answers: Answers::Id,
    }];
    let account = |kind: &str, src: &str, name: Arg, first: Arg, last: Arg, extra: [Arg; 4]| {
        let [gender, birthdate, specialty, npi] = extra;
        insert(
            "account",
            &[
                ("external_id", t(&format!("DemoRx:{kind}:{src}"))),
                ("kind", t(kind)),
                ("vendor_api_name", t("DemoRx")),
                ("source_id", t(src)),
                ("name", name),
                ("first_name", first),
                ("last_name", last),
                ("gender", gender),
                ("birthdate", birthdate),
                ("specialty", specialty),
                ("npi", npi),
            ],
            now,
        )
    };
    let none = || [Arg::Null, Arg::Null, Arg::Null, Arg::Null];
    s.push(account(
        "patient",
        "BENCH-{n}",
        Arg::Null,
        t("Ann"),
        t("Lee"),
        [t("F"), t("1980-05-06"), Arg::Null, Arg::Null],
    ));
    s.push(account(
        "physician",
        "BENCH-{n}-DR",
        Arg::Null,
        t("Bo"),
        t("Kim"),
        [Arg::Null, Arg::Null, t("Oncology"), t("1234567890")],
    ));
    s.push(account(
        "staff",
        "BENCH-{n}-ST",
        Arg::Null,
        Arg::Null,
        t("Staff"),
        none(),
    ));
    s.push(account(
        "caregiver",
        "BENCH-{n}-CG",
        Arg::Null,
        Arg::Null,
        t("Carer"),
        none(),
    ));
    s.push(account(
        "pharmacy",
        "BENCH-{n}-PHARM",
        t("Corner Pharmacy"),
        Arg::Null,
        Arg::Null,
        [Arg::Null, Arg::Null, Arg::Null, t("999")],
    ));
    s.push(account(
        "organization",
        "BENCH-{n}-ORG",
        t("Clinic"),
        Arg::Null,
        Arg::Null,
        none(),
    ));
    let (patient, physician, staff, caregiver, pharmacy, org) = (1, 2, 3, 4, 5, 6);
    s.push(insert(
        "care_plan",
        &[
            ("external_id", t(&format!("{p}:DemoCareProgram"))),
            ("vendor_api_name", t("DemoRx")),
            ("program_api_name", t("DemoCareProgram")),
            ("enrollment_date", t("2026-02-01")),
            ("patient_account_id", Arg::Ref(patient)),
            ("physician_account_id", Arg::Ref(physician)),
            ("staff_account_id", Arg::Ref(staff)),
            ("caregiver_account_id", Arg::Ref(caregiver)),
            ("pharmacy_account_id", Arg::Ref(pharmacy)),
            ("organization_account_id", Arg::Ref(org)),
        ],
        now,
    ));
    let plan = 7;
    let contact = |account: usize, kind: &str, id: &str, ty: &str, number: Arg, email: Arg| {
        let address = kind == "address";
        let text = |v: &str| if address { t(v) } else { Arg::Null };
        insert(
            "contact_point",
            &[
                ("external_id", t(&format!("DemoRx:{kind}:{id}"))),
                ("account_id", Arg::Ref(account)),
                ("kind", t(kind)),
                ("contact_type", t(ty)),
                ("is_primary", if address { Arg::Int(1) } else { Arg::Null }),
                ("address_line1", text("1 Main St")),
                ("city", text("Springfld")),
                ("state", text("IL")),
                ("postal_code", text("62701")),
                ("country", text("US")),
                ("number", number),
                ("email", email),
            ],
            now,
        )
    };
    s.push(contact(
        patient,
        "address",
        "BENCH-{n}-A1",
        "home",
        Arg::Null,
        Arg::Null,
    ));
    s.push(contact(
        patient,
        "phone",
        "BENCH-{n}-PH1",
        "mobile",
        t("+1 5550101"),
        Arg::Null,
    ));
    s.push(contact(
        patient,
        "phone",
        "BENCH-{n}-PH2",
        "work",
        t("+1 5550102"),
        Arg::Null,
    ));
    s.push(contact(
        patient,
        "email",
        "BENCH-{n}-E1",
        "home",
        Arg::Null,
        t("ann@example.com"),
    ));
    s.push(contact(
        patient,
        "fax",
        "BENCH-{n}-F1",
        "work",
        t("+1 5550103"),
        Arg::Null,
    ));
    s.push(contact(
        physician,
        "phone",
        "BENCH-{n}-DR-PH",
        "work",
        t("+1 5550200"),
        Arg::Null,
    ));
    for (i, (name, purpose, from)) in [
        ("DUP-TREATMENT", purposes[0], t("2026-01-01")),
        ("DUP-MARKETING", purposes[1], Arg::Null),
    ]
    .into_iter()
    .enumerate()
    {
        s.push(insert(
            "consent",
            &[
                (
                    "external_id",
                    t(&format!("DemoRx:consent:BENCH-{{n}}-C{}", i + 1)),
                ),
                ("care_plan_id", Arg::Ref(plan)),
                ("patient_account_id", Arg::Ref(patient)),
                ("data_use_purpose_id", Arg::Int(purpose)),
                ("name", t(name)),
                ("effective_from", from),
            ],
            now,
        ));
    }
    for (i, (payer, member, holder)) in [("Acme", "M1", t("Ann Lee")), ("Backup", "M2", Arg::Null)]
        .into_iter()
        .enumerate()
    {
        s.push(insert(
            "member_plan",
            &[
                (
                    "external_id",
                    t(&format!("DemoRx:insurance:BENCH-{{n}}-I{}", i + 1)),
                ),
                ("care_plan_id", Arg::Ref(plan)),
                ("patient_account_id", Arg::Ref(patient)),
                ("payer_name", t(payer)),
                ("member_number", t(member)),
                ("cardholder_name", holder),
            ],
            now,
        ));
    }
    for (i, (ndc, product, quantity, refills)) in [
        ("PROD-1001", products[0], t("30"), 3),
        ("PROD-1002", products[1], Arg::Null, 1),
    ]
    .into_iter()
    .enumerate()
    {
        s.push(insert(
            "prescription",
            &[
                (
                    "external_id",
                    t(&format!("DemoRx:prescription:BENCH-{{n}}-RX{}", i + 1)),
                ),
                ("care_plan_id", Arg::Ref(plan)),
                ("patient_account_id", Arg::Ref(patient)),
                ("pharmacy_account_id", Arg::Ref(pharmacy)),
                ("product_id", Arg::Int(product)),
                ("drug_ndc", t(ndc)),
                ("quantity", quantity),
                ("refills", Arg::Int(refills)),
            ],
            now,
        ));
    }
    s
}

/// The read of a missing-information GET, the service's own statement
/// (`slipway_care::probes::missing_info_read`) with the values the bench's GETs bind: the
/// caller `token`'s hash and the request `uuid`; one row, each column decoded.
pub fn missing_info_read(backend: slipway_care::Backend, token: &str, uuid: &str) -> Step {
    Step {
        sql: slipway_care::probes::missing_info_read(backend).to_owned(),
        args: vec![t(&slipway_care::probes::token_hash(token)), t(uuid)],
        answers: Answers::Rows,
    }
}

/// A missing-information GET's storage work: its read (`read`, [`missing_info_read`]), then
/// the history record it writes ([`history`]), in one transaction.
pub fn get(read: Step, data_request_id: i64, user_id: i64) -> Vec<Step> {
    let mut steps = vec![read];
    steps.extend(history(data_request_id, user_id));
    steps
}

/// The row a missing-information GET writes: one history record.
pub fn history(data_request_id: i64, user_id: i64) -> Vec<Step> {
    vec![Step {
        sql: "INSERT INTO data_request_history (data_request_id, at, user_id, method, status_code, submitted_fields) \
              VALUES ($1, $2, $3, $4, $5, $6)"
            .into(),
        args: vec![
            Arg::Int(data_request_id),
            Arg::Int(1_790_000_000),
            Arg::Int(user_id),
            t("GET"),
            Arg::Int(200),
            t("[]"),
        ],
        answers: Answers::Nothing,
    }]
}

fn text(template: &str, n: usize) -> String {
    template.replace("{n}", &n.to_string()).replace("{{", "{")
}

/// Runs `steps` as transaction number `n` on `conn`.
async fn run_once(
    conn: &mut sqlx::SqliteConnection,
    steps: &[Step],
    n: usize,
) -> Result<(), sqlx::Error> {
    let mut ids: Vec<i64> = vec![0; steps.len()];
    for (i, step) in steps.iter().enumerate() {
        let mut q = sqlx::query(sqlx::AssertSqlSafe(step.sql.as_str()));
        for a in &step.args {
            q = match a {
                Arg::Text(s) => q.bind(text(s, n)),
                Arg::Null => q.bind(None::<String>),
                Arg::Int(v) => q.bind(*v),
                Arg::Ref(k) => q.bind(ids[*k]),
            };
        }
        match step.answers {
            Answers::Id => ids[i] = q.fetch_one(&mut *conn).await?.try_get(0)?,
            Answers::Nothing => {
                q.execute(&mut *conn).await?;
            }
            Answers::Rows => {
                for row in q.fetch_all(&mut *conn).await? {
                    for c in 0..row.len() {
                        std::hint::black_box(row.try_get_raw(c)?);
                    }
                }
            }
        }
    }
    Ok(())
}

/// Runs the steps as `requests` transactions (or for `max_time`) from `concurrency` tasks
/// against the SQLite file at `path`, numbering transactions from `first`: in a closed loop
/// (each task starts its next at once), or paced at `pace` transactions per second (the open
/// loop of [`start_when_due`], as the service's paced runs are).
pub async fn sqlite(
    path: &std::path::Path,
    steps: Vec<Step>,
    (concurrency, pace): (usize, Option<f64>),
    requests: usize,
    max_time: Duration,
    first: usize,
) -> Outcome {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(10));
    // No ping before each acquire (sqlx's default), as the service's pool does not ping a
    // connection in steady use either.
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .test_before_acquire(false)
        .connect_with(options)
        .await
        .expect("probe pool");
    let queue = Arc::new(tokio::sync::Mutex::new(()));
    let steps = Arc::new(steps);
    let next = Arc::new(AtomicUsize::new(0));
    let started = tokio::time::Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (pool, queue, steps, next) = (pool.clone(), queue.clone(), steps.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let (mut lat, mut errors) = (Vec::new(), 0);
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= requests || started.elapsed() > max_time {
                    break;
                }
                let t0 = match pace {
                    Some(per_second) => start_when_due(started, i, per_second).await,
                    None => tokio::time::Instant::now(),
                };
                let _turn = queue.lock().await;
                let result = async {
                    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
                    run_once(&mut tx, &steps, first + i).await?;
                    tx.commit().await
                }
                .await;
                drop(_turn);
                match result {
                    Ok(()) => lat.push(t0.elapsed()),
                    Err(e) => {
                        if errors == 0 {
                            eprintln!("probe error: {e}");
                        }
                        errors += 1;
                    }
                }
            }
            (lat, errors)
        }));
    }
    let (mut latencies, mut errors) = (Vec::new(), 0);
    for task in tasks {
        let (l, e) = task.await.expect("probe task");
        latencies.extend(l);
        errors += e;
    }
    let elapsed = started.elapsed();
    pool.close().await;
    latencies.sort_unstable();
    Outcome {
        done: latencies.len(),
        errors,
        elapsed,
        latencies,
    }
}

/// The steps' statement with SQLite's numbered placeholders (`?1`) instead of `$1`: the
/// same statement (SQLite reads `$1` as a *named* parameter, numbered by first appearance).
fn native_sql(step: &Step) -> String {
    let mut sql = step.sql.clone();
    // Highest placeholder first so `$1` does not match inside `$10`.
    for k in (1..=step.args.len()).rev() {
        sql = sql.replace(&format!("${k}"), &format!("?{k}"));
    }
    sql
}

/// Runs `steps` as transaction number `n` on the native connection: `BEGIN IMMEDIATE`, each
/// step on its prepared, cached statement, `COMMIT`.
fn run_native(
    conn: &mut rusqlite::Connection,
    steps: &[(String, &Step)],
    n: usize,
) -> rusqlite::Result<()> {
    use rusqlite::types::Value as Sql;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut ids: Vec<i64> = vec![0; steps.len()];
    for (i, (sql, step)) in steps.iter().enumerate() {
        let args = step.args.iter().map(|a| match a {
            Arg::Text(s) => Sql::Text(text(s, n)),
            Arg::Null => Sql::Null,
            Arg::Int(v) => Sql::Integer(*v),
            Arg::Ref(k) => Sql::Integer(ids[*k]),
        });
        let mut stmt = tx.prepare_cached(sql)?;
        match step.answers {
            Answers::Id => {
                ids[i] = stmt.query_row(rusqlite::params_from_iter(args), |r| r.get(0))?;
            }
            Answers::Nothing => {
                stmt.execute(rusqlite::params_from_iter(args))?;
            }
            Answers::Rows => {
                let columns = stmt.column_count();
                let mut rows = stmt.query(rusqlite::params_from_iter(args))?;
                while let Some(row) = rows.next()? {
                    for c in 0..columns {
                        std::hint::black_box(row.get::<_, Sql>(c)?);
                    }
                }
            }
        }
    }
    tx.commit()
}

/// The native probe: the steps as `requests` transactions (or for `max_time`) on **one**
/// rusqlite connection on this thread (bundled SQLite, the same library sqlx links; WAL,
/// `synchronous = NORMAL`, prepared and cached statements, a transaction each), numbered
/// from `first`: back to back (`pace` None: the most one writer gets out of this storage),
/// or paced at `pace` per second, each transaction's latency counted from when it fell due
/// (a queue of one server, as the open loop of the service's paced runs). Blocking: run it
/// on a thread of its own.
pub fn native(
    path: &std::path::Path,
    steps: &[Step],
    pace: Option<f64>,
    requests: usize,
    max_time: Duration,
    first: usize,
) -> Outcome {
    let mut conn = rusqlite::Connection::open(path).expect("native probe connection");
    conn.pragma_update(None, "journal_mode", "WAL")
        .expect("WAL");
    conn.pragma_update(None, "synchronous", "NORMAL")
        .expect("synchronous");
    conn.busy_timeout(Duration::from_secs(10)).expect("busy");
    let prepared: Vec<(String, &Step)> = steps.iter().map(|s| (native_sql(s), s)).collect();
    let started = Instant::now();
    let (mut latencies, mut errors) = (Vec::with_capacity(requests), 0);
    for i in 0..requests {
        if started.elapsed() > max_time {
            break;
        }
        let t0 = match pace {
            Some(per_second) => {
                let due = started + Duration::from_secs_f64(i as f64 / per_second);
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
                due
            }
            None => Instant::now(),
        };
        match run_native(&mut conn, &prepared, first + i) {
            Ok(()) => latencies.push(t0.elapsed()),
            Err(e) => {
                if errors == 0 {
                    eprintln!("native probe error: {e}");
                }
                errors += 1;
            }
        }
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

fn pg_literal(arg: &Arg) -> String {
    match arg {
        Arg::Null => "NULL".into(),
        Arg::Int(v) => v.to_string(),
        Arg::Ref(k) => format!(":s{k}_id"),
        Arg::Text(s) => {
            // pgbench reads `:word` as a variable even inside a literal: spell ':' out.
            let quoted = |v: &str| {
                format!(
                    "'{}'",
                    v.replace('\'', "''").replace(':', "' || chr(58) || '")
                )
            };
            match s.split_once("{n}") {
                // `:n` is random per transaction: unique enough for the run.
                Some((a, b)) => format!(
                    "({} || CAST(:n AS text) || {})",
                    quoted(&a.replace("{{", "{")),
                    quoted(&b.replace("{{", "{"))
                ),
                None => quoted(&s.replace("{{", "{")),
            }
        }
    }
}

/// The steps as a pgbench script (one transaction per run of the script).
pub fn pgbench_script(steps: &[Step]) -> String {
    let mut out = String::from("\\set n random(1, 1000000000000)\nBEGIN;\n");
    for (i, step) in steps.iter().enumerate() {
        let mut sql = step.sql.clone();
        // Highest placeholder first so `$1` does not match inside `$10`.
        for (k, a) in step.args.iter().enumerate().rev() {
            sql = sql.replace(&format!("${}", k + 1), &pg_literal(a));
        }
        if step.answers == Answers::Id {
            let _ = writeln!(out, "{sql} \\gset s{i}_");
        } else {
            let _ = writeln!(out, "{sql};");
        }
    }
    out.push_str("COMMIT;\n");
    out
}

/// Runs `script` with pgbench: `clients` clients, `requests` transactions in all, in a
/// closed loop or paced at `pace` transactions per second (`--rate`, whose logged latency
/// counts from when a transaction was due, as [`start_when_due`] does).
pub fn pgbench(
    url: &str,
    script: &str,
    (clients, pace): (usize, Option<f64>),
    requests: usize,
) -> Outcome {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("txn.sql");
    std::fs::write(&file, script).expect("write script");
    let prefix = dir.path().join("log");
    let started = Instant::now();
    let out = std::process::Command::new("pgbench")
        .args(["-n", "-M", "prepared", "-j", "2", "-l"])
        .args(pace.map(|per_second| format!("--rate={per_second:.1}")))
        .arg(format!("--log-prefix={}", prefix.display()))
        .arg(format!("-c{clients}"))
        .arg(format!("-t{}", requests.div_ceil(clients)))
        .arg("-f")
        .arg(&file)
        .arg(url)
        .output()
        .expect("pgbench runs (apt-get install postgresql-contrib)");
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pgbench failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let failed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of failed transactions: "))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    let tps: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("pgbench prints tps");
    let mut latencies = Vec::new();
    for entry in std::fs::read_dir(dir.path()).expect("read logs") {
        let path = entry.expect("entry").path();
        if !path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("log"))
        {
            continue;
        }
        for line in std::fs::read_to_string(&path).expect("read log").lines() {
            if let Some(us) = line
                .split_whitespace()
                .nth(2)
                .and_then(|v| v.parse::<u64>().ok())
            {
                latencies.push(Duration::from_micros(us));
            }
        }
    }
    latencies.sort_unstable();
    // pgbench's own tps excludes connection set-up; express it as an elapsed time.
    let done = latencies.len();
    let elapsed = if tps > 0.0 {
        Duration::from_secs_f64(done as f64 / tps)
    } else {
        elapsed
    };
    Outcome {
        done,
        errors: failed,
        elapsed,
        latencies,
    }
}
