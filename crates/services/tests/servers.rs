//! The backing servers for real: Debian's PostgreSQL, MariaDB, Redis and memcached, started
//! by `Services` in a temporary directory. Each test checks what an app relies on: it can
//! write with its credentials, another resource's credentials are refused, a repeated
//! `ensure` keeps the data, a rotation retires the old password, `destroy` removes the data.

#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one scenario; the 100-line limit is for production code"
)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use sqlx::Connection as _;

use slipway_services::{Credentials, Engine, ResourceKey, ResourceSpec, Services, ServicesConfig};

fn spec(app: &str, kind: &str, name: &str, engine: Engine) -> ResourceSpec {
    ResourceSpec {
        key: ResourceKey {
            app_id: app.into(),
            kind: kind.into(),
            name: name.into(),
        },
        engine,
        memory_mb: Some(16),
        fifo: false,
        table_keys: slipway_services::TableKeys::default(),
        retention: None,
    }
}

/// A temporary data directory the `postgres` user can reach, so the cluster lives inside
/// it and goes with it (under a directory only root can enter, it would live in
/// `/var/lib/slipway`).
fn data_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn services(dir: &tempfile::TempDir) -> Services {
    Services::new(ServicesConfig {
        dir: dir.path().join("services"),
        postgres_url: None,
    })
}

/// One RESP command to a Redis server; the reply's first line.
fn redis(stream: &mut TcpStream, args: &[&str]) -> String {
    try_redis(stream, args).expect("a reply")
}

/// The same, or `None` when the connection fails (a server still starting).
fn try_redis(stream: &mut TcpStream, args: &[&str]) -> Option<String> {
    let mut out = format!("*{}\r\n", args.len());
    for a in args {
        out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    stream.write_all(out.as_bytes()).ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    if let Some(len) = line
        .strip_prefix('$')
        .and_then(|l| l.trim().parse::<usize>().ok())
    {
        let mut body = vec![0; len + 2];
        reader.read_exact(&mut body).ok()?;
        return Some(String::from_utf8_lossy(&body[..len]).into_owned());
    }
    Some(line.trim().to_owned())
}

fn redis_as(c: &Credentials, password: &str) -> (TcpStream, String) {
    let mut s = TcpStream::connect((c.host.as_str(), c.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let answer = redis(&mut s, &["AUTH", password]);
    (s, answer)
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_databases_are_private_durable_rotatable_and_destroyable() {
    use sqlx::{Connection as _, Row as _};
    let dir = data_dir();
    let services = services(&dir);
    let a = spec(
        "app-one-0001",
        "relationalDatabase",
        "main",
        Engine::Postgres,
    );
    let b = spec(
        "app-two-0002",
        "relationalDatabase",
        "main",
        Engine::Postgres,
    );
    let ca = services.ensure(&a, None).await.unwrap();
    let cb = services.ensure(&b, None).await.unwrap();
    assert_ne!(ca.database, cb.database);

    let mut conn = sqlx::PgConnection::connect(&ca.url()).await.unwrap();
    sqlx::raw_sql("CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')")
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();

    // Another app's role, with its own correct password, is refused on this database.
    let theirs = Credentials {
        database: ca.database.clone(),
        ..cb.clone()
    };
    let refused = sqlx::PgConnection::connect(&theirs.url())
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("permission denied"),
        "{refused}"
    );

    // Ensuring again with the kept credentials changes nothing.
    let again = services.ensure(&a, Some(&ca)).await.unwrap();
    assert_eq!(again, ca);
    let mut conn = sqlx::PgConnection::connect(&ca.url()).await.unwrap();
    let row = sqlx::query("SELECT body FROM notes")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(row.get::<String, _>(0), "kept");
    conn.close().await.unwrap();

    // A rotation retires the old password.
    let rotated = services.rotate(&a, Some(&ca)).await.unwrap();
    assert_ne!(rotated.password, ca.password);
    assert!(sqlx::PgConnection::connect(&ca.url()).await.is_err());
    sqlx::PgConnection::connect(&rotated.url())
        .await
        .unwrap()
        .close()
        .await
        .unwrap();
    assert!(services.size(&a).await.unwrap() > 0);

    services.destroy(&a).await.unwrap();
    assert!(sqlx::PgConnection::connect(&rotated.url()).await.is_err());
    // A platform started again on the same directory finds the other database as it was.
    services.shutdown().await;
    let services = self::services(&dir);
    let cb2 = services.ensure(&b, Some(&cb)).await.unwrap();
    sqlx::PgConnection::connect(&cb2.url())
        .await
        .unwrap()
        .close()
        .await
        .unwrap();
    services.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_caches_evict_and_in_memory_databases_survive_kill_9() {
    let dir = data_dir();
    let services = services(&dir);
    let cache = spec("app-one-0001", "cache", "hot", Engine::Redis);
    let db = spec("app-one-0001", "inMemoryDatabase", "state", Engine::Redis);
    let cc = services.ensure(&cache, None).await.unwrap();
    let cd = services.ensure(&db, None).await.unwrap();
    assert_ne!(cc.port, cd.port);

    // The wrong password (the other resource's) is refused.
    let (_, answer) = redis_as(&cc, &cd.password);
    assert!(answer.starts_with("-WRONGPASS"), "{answer}");
    let (mut s, answer) = redis_as(&cc, &cc.password);
    assert_eq!(answer, "+OK");
    assert_eq!(redis(&mut s, &["CONFIG", "GET", "maxmemory-policy"]), "*2");
    assert_eq!(redis(&mut s, &["SET", "warm", "yes"]), "+OK");
    drop(s);
    // A cache keeps its keys across a stop of its server (a platform restart).
    services.shutdown().await;
    let services = self::services(&dir);
    assert_eq!(services.ensure(&cache, Some(&cc)).await.unwrap(), cc);
    services.ensure(&db, Some(&cd)).await.unwrap();
    let (mut s, _) = redis_as(&cc, &cc.password);
    assert_eq!(redis(&mut s, &["GET", "warm"]), "yes");

    let (mut s, _) = redis_as(&cd, &cd.password);
    assert_eq!(redis(&mut s, &["SET", "visits", "41"]), "+OK");
    drop(s);
    let pids_before = services.pids().await;
    // kill -9 of the in-memory database's server: the supervisor starts it again and the
    // acknowledged write is there.
    let pid = std::fs::read_to_string(
        dir.path()
            .join("services/redis")
            .join(db.key.slug())
            .join("redis.pid"),
    )
    .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid.trim().parse().unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let value = loop {
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", cd.port)) {
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            if try_redis(&mut s, &["AUTH", &cd.password]).as_deref() == Some("+OK")
                && let Some(value) = try_redis(&mut s, &["GET", "visits"])
            {
                break value;
            }
        }
        assert!(Instant::now() < deadline, "the server was not restarted");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(value, "41");
    assert_ne!(services.pids().await, pids_before);
    assert!(services.size(&db).await.unwrap() > 0);

    services.destroy(&cache).await.unwrap();
    assert!(TcpStream::connect(("127.0.0.1", cc.port)).is_err());
    services.shutdown().await;
    assert!(TcpStream::connect(("127.0.0.1", cd.port)).is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn memcached_requires_its_own_credentials() {
    let dir = data_dir();
    let services = services(&dir);
    let a = services
        .ensure(
            &spec("app-one-0001", "cache", "pages", Engine::Memcached),
            None,
        )
        .await
        .unwrap();
    let b = services
        .ensure(
            &spec("app-two-0002", "cache", "pages", Engine::Memcached),
            None,
        )
        .await
        .unwrap();
    let auth = |user: &str, password: &str| {
        let mut s = TcpStream::connect(("127.0.0.1", a.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let token = format!("{user} {password}");
        write!(s, "set auth x 0 {}\r\n{token}\r\n", token.len()).unwrap();
        let mut line = String::new();
        BufReader::new(s.try_clone().unwrap())
            .read_line(&mut line)
            .unwrap();
        (s, line.trim().to_owned())
    };
    let (_, refused) = auth(&b.user, &b.password);
    assert!(refused.starts_with("CLIENT_ERROR"), "{refused}");
    let (mut s, ok) = auth(&a.user, &a.password);
    assert_eq!(ok, "STORED");
    write!(s, "set k 0 0 2\r\nhi\r\n").unwrap();
    let mut line = String::new();
    BufReader::new(s.try_clone().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "STORED");
    services.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn mariadb_databases_are_private() {
    let dir = data_dir();
    let services = services(&dir);
    let a = services
        .ensure(
            &spec("app-one-0001", "relationalDatabase", "main", Engine::Mysql),
            None,
        )
        .await
        .unwrap();
    let b = services
        .ensure(
            &spec("app-two-0002", "relationalDatabase", "main", Engine::Mysql),
            None,
        )
        .await
        .unwrap();
    let client = |c: &Credentials, database: &str, sql: &str| {
        std::process::Command::new("mariadb")
            .args([
                "--no-defaults",
                "--protocol=tcp",
                "-h",
                &c.host,
                "-P",
                &c.port.to_string(),
                "-u",
                &c.user,
                &format!("-p{}", c.password),
                "--batch",
                "--skip-column-names",
                database,
                "-e",
                sql,
            ])
            .output()
            .unwrap()
    };
    let out = client(
        &a,
        &a.database,
        "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('kept'); SELECT v FROM t;",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "kept");
    let out = client(&b, &a.database, "SELECT v FROM t;");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Access denied"));
    services.shutdown().await;
}

/// `mariadb` as the client of database `c.database` with credentials `c`: its output.
fn mariadb_client(c: &Credentials, sql: &str) -> String {
    let out = std::process::Command::new("mariadb")
        .args([
            "--no-defaults",
            "--protocol=tcp",
            "-h",
            &c.host,
            "-P",
            &c.port.to_string(),
            "-u",
            &c.user,
            &format!("-p{}", c.password),
            "--batch",
            "--skip-column-names",
            &c.database,
            "-e",
            sql,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Copies the tree `from` into `to` (what a restore's unpacking does with the dumps).
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// The backup's dumps of a running platform's servers, unpacked into a new services
/// directory, come back when the resources are ensured there with their kept credentials:
/// the rows, the keys. Then a stopped platform's servers are dumped too (started for it).
#[tokio::test(flavor = "multi_thread")]
async fn dumps_taken_while_apps_write_come_back_in_a_new_directory() {
    use slipway_services::backup::{Servers, dump};
    use sqlx::Row as _;
    let source = data_dir();
    let services_a = services(&source);
    let app = "0123456789ab-0001";
    let pg = spec(app, "relationalDatabase", "main", Engine::Postgres);
    let my = spec(app, "relationalDatabase", "legacy", Engine::Mysql);
    let mem = spec(app, "inMemoryDatabase", "state", Engine::Redis);
    let cache = spec(app, "cache", "hot", Engine::Redis);
    let [pg_c, my_c, mem_c] = fill(&services_a, [&pg, &my, &mem]).await;
    services_a.ensure(&cache, None).await.unwrap();
    let files = spec(app, "objectStorage", "files", Engine::Seaweedfs);
    let files_c = services_a.ensure(&files, None).await.unwrap();
    assert_eq!(
        s3(&files_c, reqwest::Method::PUT, "docs/a.txt", "kept").await,
        (200, String::new())
    );

    let out = tempfile::tempdir().unwrap();
    let written = dump(
        &source.path().join("services"),
        out.path(),
        Servers::Running,
    )
    .await
    .expect("dumps of the running servers");
    assert_eq!(
        names_of(&written),
        [
            format!(
                "redis/{}/appendonlydir/appendonly.aof.1.base.rdb",
                mem.key.slug()
            ),
            format!(
                "redis/{}/appendonlydir/appendonly.aof.manifest",
                mem.key.slug()
            ),
            format!("restore/{}.sql", my.key.slug()),
            format!("restore/{}.pgdump", pg.key.slug()),
            format!("restore/s3/{}/docs/a.txt", files_c.database),
        ],
        "a dump per database, the in-memory database's snapshot and the bucket's objects; \
         nothing of the cache"
    );
    // Written after the dump: not in it.
    let mut conn = sqlx::PgConnection::connect(&pg_c.url()).await.unwrap();
    sqlx::raw_sql("INSERT INTO notes VALUES ('late')")
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();

    let target = data_dir();
    copy_tree(out.path(), &target.path().join("services"));
    let services_b = services(&target);
    let pg_b = services_b.ensure(&pg, Some(&pg_c)).await.unwrap();
    let my_b = services_b.ensure(&my, Some(&my_c)).await.unwrap();
    let mem_b = services_b.ensure(&mem, Some(&mem_c)).await.unwrap();
    let mut conn = sqlx::PgConnection::connect(&pg_b.url()).await.unwrap();
    let rows: Vec<String> = sqlx::query("SELECT body FROM notes ORDER BY body")
        .fetch_all(&mut conn)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(rows, ["first", "second"]);
    // The app's role owns what was restored: it can write to it.
    sqlx::raw_sql("INSERT INTO notes VALUES ('third')")
        .execute(&mut conn)
        .await
        .expect("the restored table is the app's");
    conn.close().await.unwrap();
    assert_eq!(mariadb_client(&my_b, "SELECT v FROM t;"), "kept");
    let (mut r, _) = redis_as(&mem_b, &mem_b.password);
    assert_eq!(redis(&mut r, &["GET", "visits"]), "41");
    let files_b = services_b.ensure(&files, Some(&files_c)).await.unwrap();
    assert_eq!(
        s3(&files_b, reqwest::Method::GET, "docs/a.txt", "").await,
        (200, "kept".into())
    );
    // Loaded once: a second ensure does not load the dumps again (each is removed once
    // loaded, with the directories it emptied).
    let mut left = Vec::new();
    let mut stack = vec![target.path().join("services/restore")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .map(Result::unwrap)
        {
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                left.push(entry.path());
            }
        }
    }
    assert!(left.is_empty(), "{left:?}");
    services_b.ensure(&pg, Some(&pg_b)).await.unwrap();
    services_b.shutdown().await;

    // The source platform stopped: the backup starts its servers and stops them again.
    services_a.shutdown().await;
    let out = tempfile::tempdir().unwrap();
    let written = dump(
        &source.path().join("services"),
        out.path(),
        Servers::Stopped,
    )
    .await
    .expect("dumps of the stopped servers");
    // The in-memory database's server is not running: its files are copied as they are.
    let names = names_of(&written);
    for wanted in [
        format!("restore/{}.pgdump", pg.key.slug()),
        format!("restore/{}.sql", my.key.slug()),
        format!(
            "redis/{}/appendonlydir/appendonly.aof.manifest",
            mem.key.slug()
        ),
    ] {
        assert!(names.contains(&wanted), "{wanted} in {names:?}");
    }
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", pg_c.port)).is_err(),
        "the servers started for the backup are stopped"
    );
}

/// One presigned S3 request for `key` in the credentials' bucket, with their key: its
/// status and body.
async fn s3(
    c: &Credentials,
    method: reqwest::Method,
    key: &str,
    body: &'static str,
) -> (u16, String) {
    use rusty_s3::S3Action as _;
    let bucket = rusty_s3::Bucket::new(
        c.url().parse().unwrap(),
        rusty_s3::UrlStyle::Path,
        c.database.clone(),
        slipway_services::S3_REGION,
    )
    .unwrap();
    let signing = rusty_s3::Credentials::new(c.user.clone(), c.password.clone());
    let expires = Duration::from_secs(60);
    let url = if method == reqwest::Method::PUT {
        bucket.put_object(Some(&signing), key).sign(expires)
    } else {
        bucket.get_object(Some(&signing), key).sign(expires)
    };
    let answer = reqwest::Client::new()
        .request(method, url.as_str())
        .body(body)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    let text = answer.text().await.unwrap();
    (status, if status == 200 { text } else { String::new() })
}

/// The paths of written files, sorted.
fn names_of(written: &[std::path::PathBuf]) -> Vec<String> {
    let mut names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    names.sort();
    names
}

/// Ensures a PostgreSQL database, a MariaDB database and an in-memory database, and writes
/// to each as an app would: two rows, one row, one key.
async fn fill(services: &Services, [pg, my, mem]: [&ResourceSpec; 3]) -> [Credentials; 3] {
    let pg_c = services.ensure(pg, None).await.unwrap();
    let my_c = services.ensure(my, None).await.unwrap();
    let mem_c = services.ensure(mem, None).await.unwrap();
    let mut conn = sqlx::PgConnection::connect(&pg_c.url()).await.unwrap();
    sqlx::raw_sql("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('first'), ('second')")
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    mariadb_client(
        &my_c,
        "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('kept');",
    );
    let (mut r, ok) = redis_as(&mem_c, &mem_c.password);
    assert_eq!(ok, "+OK");
    assert_eq!(redis(&mut r, &["SET", "visits", "41"]), "+OK");
    [pg_c, my_c, mem_c]
}

/// A queue: pgmq in a database of the resource's own, used as an app would with plain SQL.
/// A message read but not deleted comes back after its visibility timeout; a FIFO queue hands
/// out 1,000 messages in send order, never one while an earlier one is being processed;
/// another app's role cannot connect; `ensure` again keeps the messages; destroy drops it.
#[tokio::test(flavor = "multi_thread")]
async fn queues_redeliver_after_their_visibility_timeout_and_fifo_keeps_send_order() {
    use sqlx::Row as _;
    let dir = data_dir();
    let services = services(&dir);
    let mut jobs = spec("0123456789ab-0001", "queue", "jobs", Engine::Pgmq);
    let mut ordered = spec("0123456789ab-0001", "queue", "order-events", Engine::Pgmq);
    ordered.fifo = true;
    let other = spec("ba9876543210-0002", "queue", "jobs", Engine::Pgmq);
    let jc = services.ensure(&jobs, None).await.unwrap();
    let oc = services.ensure(&ordered, None).await.unwrap();
    let xc = services.ensure(&other, None).await.unwrap();
    assert_eq!(jc.engine, Engine::Pgmq);
    assert!(jc.url().starts_with("postgresql://"));

    let mut conn = sqlx::PgConnection::connect(&jc.url()).await.unwrap();
    for body in ["a", "b"] {
        sqlx::query("SELECT pgmq.send('jobs', jsonb_build_object('body', $1::text))")
            .bind(body)
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let read = |vt: i32| {
        sqlx::query("SELECT msg_id, read_ct, message->>'body' FROM pgmq.read('jobs', $1, 1)")
            .bind(vt)
    };
    let first = read(1).fetch_one(&mut conn).await.unwrap();
    assert_eq!(first.get::<String, _>(2), "a");
    let second = read(1).fetch_one(&mut conn).await.unwrap();
    assert_eq!(
        second.get::<String, _>(2),
        "b",
        "a is invisible while it is processed"
    );
    assert!(read(1).fetch_optional(&mut conn).await.unwrap().is_none());
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    let again = read(30).fetch_one(&mut conn).await.unwrap();
    assert_eq!(
        again.get::<String, _>(2),
        "a",
        "not deleted: delivered again"
    );
    assert_eq!(again.get::<i32, _>(1), 2);
    let deleted: bool = sqlx::query_scalar("SELECT pgmq.delete('jobs', $1::bigint)")
        .bind(again.get::<i64, _>(0))
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert!(deleted);
    conn.close().await.unwrap();

    // FIFO: 1,000 messages, read ten at a time while the first batch is still being
    // processed, then in order as each batch is deleted.
    let mut conn = sqlx::PgConnection::connect(&oc.url()).await.unwrap();
    sqlx::query(
        "SELECT pgmq.send_batch('order_events', \
         ARRAY(SELECT jsonb_build_object('n', n) FROM generate_series(1, 1000) n))",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let mut seen = Vec::new();
    loop {
        let batch: Vec<i64> = sqlx::query_scalar(
            "SELECT (message->>'n')::bigint FROM pgmq.read_grouped('order_events', 30, 10)",
        )
        .fetch_all(&mut conn)
        .await
        .unwrap();
        if batch.is_empty() {
            break;
        }
        if seen.is_empty() {
            let held: Vec<i64> = sqlx::query_scalar(
                "SELECT (message->>'n')::bigint FROM pgmq.read_grouped('order_events', 30, 10)",
            )
            .fetch_all(&mut conn)
            .await
            .unwrap();
            assert!(
                held.is_empty(),
                "nothing while earlier messages are processed: {held:?}"
            );
        }
        sqlx::query(
            "SELECT pgmq.delete('order_events', msg_id) FROM pgmq.q_order_events \
             WHERE (message->>'n')::bigint = ANY($1)",
        )
        .bind(&batch)
        .execute(&mut conn)
        .await
        .unwrap();
        seen.extend(batch);
    }
    assert_eq!(seen, (1..=1000).collect::<Vec<i64>>());
    conn.close().await.unwrap();

    // Another app's role is refused on this queue's database.
    let wrong = format!(
        "postgresql://{}:{}@{}:{}/{}",
        xc.user, xc.password, jc.host, jc.port, jc.database
    );
    let refused = sqlx::PgConnection::connect(&wrong).await.unwrap_err();
    assert!(
        refused.to_string().contains("permission denied"),
        "{refused}"
    );

    // Ensured again (a redeploy): pgmq is not reinstalled over the messages.
    let mut conn = sqlx::PgConnection::connect(&jc.url()).await.unwrap();
    sqlx::query("SELECT pgmq.send('jobs', '{\"body\": \"kept\"}')")
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    jobs.fifo = true;
    assert_eq!(services.ensure(&jobs, Some(&jc)).await.unwrap(), jc);
    let mut conn = sqlx::PgConnection::connect(&jc.url()).await.unwrap();
    let left: i64 = sqlx::query_scalar("SELECT queue_length FROM pgmq.metrics('jobs')")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(left, 2, "b (still invisible) and kept");
    conn.close().await.unwrap();

    services.destroy(&jobs).await.unwrap();
    assert!(sqlx::PgConnection::connect(&jc.url()).await.is_err());
    services.shutdown().await;
}

/// A bucket on the platform's S3 server (SeaweedFS), used with presigned requests as an S3
/// client would: its own key reads and writes it; another app's key and anonymous requests
/// are refused; a repeated `ensure` keeps the objects; a rotation retires the old secret;
/// destroy removes the bucket and leaves the other app's alone.
#[tokio::test(flavor = "multi_thread")]
async fn buckets_are_private_to_their_key_and_refuse_anonymous_requests() {
    use rusty_s3::S3Action as _;
    let dir = data_dir();
    let services = services(&dir);
    let mine = spec(
        "0123456789ab-0001",
        "objectStorage",
        "assets",
        Engine::Seaweedfs,
    );
    let theirs = spec(
        "ba9876543210-0002",
        "objectStorage",
        "assets",
        Engine::Seaweedfs,
    );
    let a = services.ensure(&mine, None).await.unwrap();
    let b = services.ensure(&theirs, None).await.unwrap();
    assert_eq!(a.engine, Engine::Seaweedfs);
    assert_ne!(a.database, b.database);
    assert_ne!(a.user, b.user);
    let http = reqwest::Client::new();
    let bucket = |c: &Credentials| {
        rusty_s3::Bucket::new(
            c.url().parse().unwrap(),
            rusty_s3::UrlStyle::Path,
            c.database.clone(),
            slipway_services::S3_REGION,
        )
        .unwrap()
    };
    let key = |c: &Credentials| rusty_s3::Credentials::new(c.user.clone(), c.password.clone());
    let expires = Duration::from_secs(60);
    let put = |c: &Credentials, as_key: &Credentials, body: &'static str| {
        let url = bucket(c)
            .put_object(Some(&key(as_key)), "notes/one.txt")
            .sign(expires);
        http.put(url.as_str()).body(body).send()
    };
    let get = |c: &Credentials, as_key: Option<&Credentials>| {
        let signing = as_key.map(key);
        let url = bucket(c)
            .get_object(signing.as_ref(), "notes/one.txt")
            .sign(expires);
        http.get(url.as_str()).send()
    };
    assert_eq!(put(&a, &a, "kept").await.unwrap().status(), 200);
    let r = get(&a, Some(&a)).await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "kept");
    // The other app's key, on this bucket: refused both ways.
    assert_eq!(put(&a, &b, "theirs").await.unwrap().status(), 403);
    assert_eq!(get(&a, Some(&b)).await.unwrap().status(), 403);
    // No key at all: refused.
    assert_eq!(get(&a, None).await.unwrap().status(), 403);
    assert!(services.size(&mine).await.unwrap() >= 4);

    // Ensured again (a redeploy): the same key, the same objects.
    assert_eq!(services.ensure(&mine, Some(&a)).await.unwrap(), a);
    assert_eq!(
        get(&a, Some(&a)).await.unwrap().text().await.unwrap(),
        "kept"
    );
    // Rotated: the old secret stops working, the new one reads the same object.
    let rotated = services.rotate(&mine, Some(&a)).await.unwrap();
    assert_eq!(rotated.user, a.user);
    assert_ne!(rotated.password, a.password);
    assert_eq!(get(&a, Some(&a)).await.unwrap().status(), 403);
    assert_eq!(get(&rotated, Some(&rotated)).await.unwrap().status(), 200);

    services.destroy(&mine).await.unwrap();
    let gone = get(&rotated, Some(&rotated)).await.unwrap().status();
    assert!(gone == 403 || gone == 404, "{gone}");
    assert_eq!(services.size(&mine).await, None, "no bucket to list");
    assert_eq!(put(&b, &b, "still mine").await.unwrap().status(), 200);
    services.shutdown().await;
}

/// One DynamoDB call as an app makes it, with boto3 (Debian's, so `/usr/bin/python3`):
/// `code` runs with `t`, the table resource of `c` signed with `key`; what it prints, or
/// `ERROR <code>` for a refusal.
fn dynamo(c: &Credentials, key: (&str, &str), code: &str) -> String {
    let script = r#"
import os, sys, boto3
from botocore.exceptions import ClientError
db = boto3.resource("dynamodb", endpoint_url=os.environ["AWS_ENDPOINT_URL_DYNAMODB"])
t = db.Table(os.environ["DYNAMODB_TABLE"])
try:
    exec(sys.argv[1])
except ClientError as e:
    print("ERROR", e.response["Error"]["Code"])
"#;
    let out = std::process::Command::new("/usr/bin/python3")
        .args(["-c", script, code])
        .env("AWS_ENDPOINT_URL_DYNAMODB", c.url())
        .env("DYNAMODB_TABLE", &c.database)
        .env("AWS_ACCESS_KEY_ID", key.0)
        .env("AWS_SECRET_ACCESS_KEY", key.1)
        .env("AWS_REGION", slipway_services::S3_REGION)
        .env("AWS_DEFAULT_REGION", slipway_services::S3_REGION)
        // One attempt: a refusal is the answer, not something to retry.
        .env("AWS_MAX_ATTEMPTS", "1")
        .output()
        .expect("python3 with boto3 (scripts/dev installs python3-boto3)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A key-value table: made with its key schema on the app's own dynalite, reached only with
/// a request signed by one of the app's keys (its table's, its bucket's): another app's key,
/// a wrong secret and no signature are refused as DynamoDB refuses them; the items survive
/// a redeploy, a rotation retires the old secret, a backup's dump comes back in a new
/// directory, and destroying the app's last table stops its server.
#[tokio::test(flavor = "multi_thread")]
async fn tables_take_only_their_apps_signed_requests_and_keep_their_items() {
    use slipway_services::backup::{Servers, dump};
    let dir = data_dir();
    let services = services(&dir);
    let app = "0123456789ab-0001";
    let mut items = spec(app, "keyValueTable", "items", Engine::Dynalite);
    items.table_keys.partition_key = Some("pk".into());
    let a = services.ensure(&items, None).await.unwrap();
    assert_eq!((a.engine, a.database.as_str()), (Engine::Dynalite, "items"));
    let mine = (a.user.as_str(), a.password.as_str());
    assert_eq!(
        dynamo(
            &a,
            mine,
            "t.put_item(Item={'pk': 'a', 'v': 'kept'}); print('ok')"
        ),
        "ok"
    );
    assert_eq!(
        dynamo(&a, mine, "print(t.get_item(Key={'pk': 'a'})['Item']['v'])"),
        "kept"
    );
    assert_eq!(
        dynamo(&a, mine, "print(t.key_schema[0]['AttributeName'])"),
        "pk",
        "the devfile's partitionKey"
    );
    assert_eq!(
        dynamo(
            &a,
            (mine.0, "not-the-secret"),
            "t.get_item(Key={'pk': 'a'})"
        ),
        "ERROR InvalidSignatureException"
    );
    // Another app, with a table of the same name on its own server.
    let other = spec(
        "ba9876543210-0002",
        "keyValueTable",
        "items",
        Engine::Dynalite,
    );
    let b = services.ensure(&other, None).await.unwrap();
    assert_ne!(a.port, b.port);
    let theirs = (b.user.as_str(), b.password.as_str());
    assert_eq!(
        dynamo(&a, theirs, "t.get_item(Key={'pk': 'a'})"),
        "ERROR UnrecognizedClientException"
    );
    assert_eq!(
        dynamo(&b, theirs, "print('Item' in t.get_item(Key={'id': 'a'}))"),
        "False",
        "the other app's table is its own"
    );
    // No signature at all.
    let anonymous = reqwest::Client::new()
        .post(a.url())
        .header("x-amz-target", "DynamoDB_20120810.ListTables")
        .header("content-type", "application/x-amz-json-1.0")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 403);
    assert!(
        anonymous
            .text()
            .await
            .unwrap()
            .contains("MissingAuthenticationToken")
    );
    // The app's bucket key signs for its tables too (one AWS_ACCESS_KEY_ID per app); another
    // app's bucket key does not.
    let files = spec(app, "objectStorage", "files", Engine::Seaweedfs);
    let f = services.ensure(&files, None).await.unwrap();
    let their_files = spec(
        "ba9876543210-0002",
        "objectStorage",
        "files",
        Engine::Seaweedfs,
    );
    let tf = services.ensure(&their_files, None).await.unwrap();
    assert_eq!(
        dynamo(&a, (&tf.user, &tf.password), "t.scan()"),
        "ERROR UnrecognizedClientException"
    );
    assert_eq!(
        dynamo(
            &a,
            (&f.user, &f.password),
            "print(t.get_item(Key={'pk': 'a'})['Item']['v'])"
        ),
        "kept"
    );

    // A redeploy keeps the key and the items; a rotation retires the old secret.
    assert_eq!(services.ensure(&items, Some(&a)).await.unwrap(), a);
    let rotated = services.rotate(&items, Some(&a)).await.unwrap();
    assert_eq!(
        (rotated.user.as_str(), rotated.port),
        (a.user.as_str(), a.port)
    );
    assert_eq!(
        dynamo(&a, mine, "t.get_item(Key={'pk': 'a'})"),
        "ERROR InvalidSignatureException"
    );
    let now = (rotated.user.as_str(), rotated.password.as_str());
    assert_eq!(
        dynamo(&a, now, "print(t.get_item(Key={'pk': 'a'})['Item']['v'])"),
        "kept"
    );
    assert!(services.size(&items).await.unwrap() > 0);

    // A backup's dump, loaded by a new platform's first ensure.
    let out = tempfile::tempdir().unwrap();
    let written = dump(&dir.path().join("services"), out.path(), Servers::Running)
        .await
        .unwrap();
    let table_dump = format!("restore/dynalite/{}/items.jsonl", items.key.app_slug());
    assert!(
        names_of(&written).contains(&table_dump),
        "{:?}",
        names_of(&written)
    );
    // The app's last table destroyed: its server stops, its directory goes.
    services.destroy(&items).await.unwrap();
    let app_dir = dir
        .path()
        .join("services/dynalite")
        .join(items.key.app_slug());
    assert!(!app_dir.exists());
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", a.port)).is_err(),
        "the gate is closed"
    );
    services.shutdown().await;

    // Restored on a new platform (the old one stopped: the same port is free again).
    let restored = data_dir();
    copy_tree(
        &out.path().join("restore"),
        &restored.path().join("services/restore"),
    );
    let services_b = self::services(&restored);
    let back = services_b.ensure(&items, Some(&rotated)).await.unwrap();
    assert_eq!(
        dynamo(
            &back,
            now,
            "print(t.get_item(Key={'pk': 'a'})['Item']['v'])"
        ),
        "kept"
    );
    assert!(!restored.path().join("services").join(&table_dump).exists());

    services_b.shutdown().await;
}

/// The durable block's Restate server: its admin API and ingress answer on their own ports,
/// a `kill -9` of it is restarted by its supervisor, and destroy removes its data.
#[tokio::test(flavor = "multi_thread")]
async fn restate_servers_are_supervised_per_app() {
    let dir = data_dir();
    let services = services(&dir);
    let durable = spec("0123456789ab-0001", "durable", "agent", Engine::Restate);
    let r = services.ensure(&durable, None).await.unwrap();
    let http = reqwest::Client::new();
    let healthy = async || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            let admin = http.get(format!("{}/health", r.admin_url())).send().await;
            let ingress = http.get(format!("{}/restate/health", r.url())).send().await;
            if admin.is_ok_and(|a| a.status() == 200) && ingress.is_ok_and(|i| i.status() == 200) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        false
    };
    assert!(healthy().await);
    let pids = services.pids().await;
    assert_eq!(pids.len(), 1);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pids[0]).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(healthy().await, "restarted after kill -9");
    assert_eq!(services.ensure(&durable, Some(&r)).await.unwrap(), r);
    assert!(services.size(&durable).await.unwrap() > 0);
    services.destroy(&durable).await.unwrap();
    assert!(
        http.get(format!("{}/health", r.admin_url()))
            .send()
            .await
            .is_err()
    );
    services.shutdown().await;
}
