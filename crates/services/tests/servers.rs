//! The backing servers for real: Debian's PostgreSQL, MariaDB, Redis and memcached, started
//! by `Services` in a temporary directory. Each test checks what an app relies on: it can
//! write with its credentials, another resource's credentials are refused, a repeated
//! `ensure` keeps the data, a rotation retires the old password, `destroy` removes the data.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

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
