//! Backing resources end to end on the process runtime: an app whose devfile declares a
//! PostgreSQL database and a Redis cache gets both at deploy, writes to them through the
//! variables the platform binds, and finds what it wrote after a redeploy and a platform
//! restart (its volume too, mounted at /data on the process runtime without touching the
//! host's /data); another app's credentials are refused on its database; a resource dropped from
//! the devfile is detached with its data kept; deleting the app destroys both.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;
use sqlx::Connection as _;

use crate::deploy::wait_status;
use crate::support::{TestApp, backends, spawn_app, tar_zst};

/// The app: `/write?v=X` stores X in its database (a row, through `psql` and
/// `DATABASE_URL`) and its cache (a key, through a raw Redis connection and `REDIS_URL`);
/// `/read` answers `<rows>|<key>|<the lines of /data/notes.txt>` (a file on its volume).
const SERVER: &str = r#"import http.server, os, socket, subprocess, urllib.parse

def redis(*args):
    url = urllib.parse.urlparse(os.environ["REDIS_URL"])
    with socket.create_connection((url.hostname, url.port)) as s:
        f = s.makefile("rb")
        def cmd(*a):
            out = "*%d\r\n" % len(a) + "".join("$%d\r\n%s\r\n" % (len(x.encode()), x) for x in a)
            s.sendall(out.encode())
            line = f.readline().decode().strip()
            if line.startswith("$"):
                n = int(line[1:])
                return "-" if n < 0 else f.read(n + 2)[:n].decode()
            return line
        cmd("AUTH", url.password)
        return cmd(*args)

def sql(q):
    return subprocess.run(["psql", os.environ["DATABASE_URL"], "-tAc", q], capture_output=True, text=True, check=True).stdout.strip()

class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        try:
            body, code = self.answer(), 200
        except Exception as e:
            body, code = repr(e) + " " + getattr(e, "stderr", ""), 500
        body = body.encode()
        self.send_response(code)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def answer(self):
        url = urllib.parse.urlparse(self.path)
        if url.path == "/write":
            v = urllib.parse.parse_qs(url.query)["v"][0]
            sql("CREATE TABLE IF NOT EXISTS notes (v text)")
            sql("INSERT INTO notes VALUES ('%s')" % v)
            redis("SET", "last", v)
            with open("/data/notes.txt", "a") as f:
                f.write(v + "\n")
            body = "ok"
        elif url.path == "/read":
            sql("CREATE TABLE IF NOT EXISTS notes (v text)")
            notes = open("/data/notes.txt").read().split() if os.path.exists("/data/notes.txt") else []
            body = "%s|%s|%s" % (sql("SELECT coalesce(string_agg(v, ',' ORDER BY v), '') FROM notes"), redis("GET", "last") if "REDIS_URL" in os.environ else "no cache", ",".join(notes))
        else:
            body = "ok"
        return body
    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

fn devfile(name: &str, infra: &str) -> String {
    format!(
        r#"schemaVersion: 2.2.0
metadata:
  name: {name}
  displayName: Stateful test app
  platform:
    managedInfra:
{infra}
components:
  - name: files
    volume:
      size: 1Gi
  - name: api-image
    image:
      imageName: api
      dockerfile:
        uri: Dockerfile
        buildContext: .
  - name: api
    attributes:
      healthPath: /health
    container:
      image: api
      volumeMounts:
        - name: files
          path: /data
      endpoints:
        - name: http
          targetPort: 8002
commands:
  - id: build
    exec:
      component: api
      commandLine: "true"
      workingDir: ${{PROJECT_SOURCE}}
      group: {{ kind: build, isDefault: true }}
  - id: run
    exec:
      component: api
      commandLine: python3 server.py
      workingDir: ${{PROJECT_SOURCE}}
      group: {{ kind: run, isDefault: true }}
"#
    )
}

const BOTH: &str = "      relationalDatabase:\n        - name: main\n          engine: postgres\n      cache:\n        - name: hot\n          memoryMb: 32";
const DB_ONLY: &str = "      relationalDatabase:\n        - name: main\n          engine: postgres";

/// Uploads the app and waits for the deployment this upload starts to run; the app's URL.
async fn deploy(app: &TestApp, id: &str, devfile: &str, round: u32) -> String {
    deploy_with(app, id, devfile, SERVER, round).await
}

/// [`deploy`] with another `server.py`.
async fn deploy_with(app: &TestApp, id: &str, devfile: &str, server: &str, round: u32) -> String {
    let files = vec![
        ("devfile.yaml".to_owned(), devfile.as_bytes().to_vec()),
        ("server.py".to_owned(), server.as_bytes().to_vec()),
        ("round.txt".to_owned(), round.to_string().into_bytes()),
        (
            "Dockerfile".to_owned(),
            b"FROM scratch\nCOPY . /app\n".to_vec(),
        ),
    ];
    let before = deployments(app, id).await;
    let (status, body) = app
        .upload(&app.owner, id, "", "application/zstd", tar_zst(&files))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let (_, list) = app
            .send(
                Method::GET,
                &format!("/v1/apps/{id}/deployments"),
                Some(&app.owner),
                None,
            )
            .await;
        let newest = &list["deployments"][0];
        if list["deployments"].as_array().map_or(0, Vec::len) > before
            && matches!(newest["status"].as_str(), Some("RUNNING" | "FAILED"))
        {
            assert_eq!(newest["status"], "RUNNING", "{newest}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no new deployment: {list}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let status = wait_status(app, id, &["RUNNING"]).await;
    status["app_url"].as_str().expect("app_url").to_owned()
}

async fn deployments(app: &TestApp, id: &str) -> usize {
    let (_, list) = app
        .send(
            Method::GET,
            &format!("/v1/apps/{id}/deployments"),
            Some(&app.owner),
            None,
        )
        .await;
    list["deployments"].as_array().map_or(0, Vec::len)
}

async fn get(url: &str) -> String {
    let r = reqwest::Client::new()
        .get(url)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .expect("the app answers");
    let status = r.status();
    let body = r.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{url}: {body}");
    body
}

async fn resources(app: &TestApp, id: &str) -> Vec<Value> {
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/apps/{id}/resources"),
            Some(&app.owner),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["resources"].as_array().unwrap().clone()
}

async fn reveal(app: &TestApp, id: &str, kind: &str, name: &str) -> Value {
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/apps/{id}/resources/{kind}/{name}/credentials"),
            Some(&app.owner),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

#[tokio::test]
async fn declared_databases_and_caches_are_provisioned_bound_kept_and_destroyed() {
    for backend in backends() {
        let mut app = spawn_app(backend).await;
        let id = app.register(&app.owner, "stateful").await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let url = deploy(&app, &id, &devfile("stateful", BOTH), 1).await;
        let first = crate::deploy::status_of(&app, &id).await["deployment_id"]
            .as_str()
            .unwrap()
            .to_owned();

        let listed = resources(&app, &id).await;
        assert_eq!(listed.len(), 2, "{listed:?}");
        let cache = listed.iter().find(|r| r["kind"] == "cache").unwrap();
        assert_eq!(cache["engine"], "redis");
        assert_eq!(cache["state"], "attached");
        assert_eq!(
            cache["variables"],
            serde_json::json!(["HOT_CACHE_URL", "REDIS_URL"])
        );
        let db = listed
            .iter()
            .find(|r| r["kind"] == "relationalDatabase")
            .unwrap();
        assert!(
            db["variables"]
                .as_array()
                .unwrap()
                .contains(&"DATABASE_URL".into())
        );
        assert!(db["size_bytes"].as_u64().unwrap() > 0);
        // get_app and the status report them too, and never a password.
        let got = app.get_app(&app.owner, &id).await.1;
        assert_eq!(got["resources"].as_array().unwrap().len(), 2);
        assert_eq!(got["volumes"][0]["name"], "files", "{got}");
        assert_eq!(got["volumes"][0]["size"], "1Gi");
        assert_eq!(
            got["volumes"][0]["mounts"],
            serde_json::json!(["api:/data"])
        );
        let revealed = reveal(&app, &id, "relationalDatabase", "main").await;
        let password = revealed["password"].as_str().unwrap().to_owned();
        assert!(!got.to_string().contains(&password));
        assert!(
            !crate::deploy::status_of(&app, &id)
                .await
                .to_string()
                .contains(&password)
        );

        assert_eq!(get(&format!("{url}/write?v=one")).await, "ok");
        assert_eq!(get(&format!("{url}/read")).await, "one|one|one");

        // A new build and deployment keep the data, and so does a platform restart.
        let url = deploy(&app, &id, &devfile("stateful", BOTH), 2).await;
        assert_eq!(get(&format!("{url}/read")).await, "one|one|one");
        app.restart().await;
        let status = wait_status(&app, &id, &["RUNNING"]).await;
        let url = status["app_url"].as_str().unwrap().to_owned();
        assert_eq!(get(&format!("{url}/write?v=two")).await, "ok");
        assert_eq!(get(&format!("{url}/read")).await, "one,two|two|one,two");
        // A rollback to the first deployment runs on the same data.
        let before = deployments(&app, &id).await;
        let (status, body) = crate::history::rollback(&app, &id, &first).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        loop {
            let (_, list) = app
                .send(
                    Method::GET,
                    &format!("/v1/apps/{id}/deployments"),
                    Some(&app.owner),
                    None,
                )
                .await;
            let newest = &list["deployments"][0];
            if list["deployments"].as_array().map_or(0, Vec::len) > before
                && newest["status"] != "deploying"
            {
                assert_eq!(newest["status"], "RUNNING", "{newest}");
                assert_eq!(newest["cause"], "rollback", "{newest}");
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the rollback never ran"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(get(&format!("{url}/read")).await, "one,two|two|one,two");

        // Another app's role, with its own valid password, is refused on this database.
        let other = app.register(&app.owner, "other").await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        deploy(&app, &other, &devfile("other", DB_ONLY), 1).await;
        let theirs = reveal(&app, &other, "relationalDatabase", "main").await;
        // Its volume of the same name is its own, and the host's /data was never made.
        let their_url = crate::deploy::status_of(&app, &other).await["app_url"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(get(&format!("{their_url}/read")).await, "|no cache|");
        assert!(!std::path::Path::new("/data/notes.txt").exists());
        let mine = reveal(&app, &id, "relationalDatabase", "main").await;
        assert_ne!(theirs["database"], mine["database"]);
        let wrong = format!(
            "postgresql://{}:{}@{}:{}/{}",
            theirs["user"].as_str().unwrap(),
            theirs["password"].as_str().unwrap(),
            mine["host"].as_str().unwrap(),
            mine["port"],
            mine["database"].as_str().unwrap()
        );
        let refused = sqlx::PgConnection::connect(&wrong).await.unwrap_err();
        assert!(
            refused.to_string().contains("permission denied"),
            "{refused}"
        );

        // Dropped from the devfile: detached, data kept, no variables.
        let url = deploy(&app, &id, &devfile("stateful", DB_ONLY), 3).await;
        let listed = resources(&app, &id).await;
        let cache = listed.iter().find(|r| r["kind"] == "cache").unwrap();
        assert_eq!(cache["state"], "detached");
        assert_eq!(cache["variables"], serde_json::json!([]));
        assert_eq!(
            get(&format!("{url}/read")).await,
            "one,two|no cache|one,two"
        );

        // Deleting the app destroys its resources with their data.
        let cache_port = reveal(&app, &id, "cache", "hot").await["port"]
            .as_u64()
            .unwrap();
        let db_url = mine["url"].as_str().unwrap().to_owned();
        let volume = app.data_dir().join("volumes").join(&id).join("files");
        assert!(volume.join("notes.txt").is_file());
        let (status, _) = app.delete_app(&app.owner, &id).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        assert!(!volume.exists());
        assert!(sqlx::PgConnection::connect(&db_url).await.is_err());
        assert!(std::net::TcpStream::connect(("127.0.0.1", cache_port as u16)).is_err());
        // The other app is untouched.
        let theirs_url = theirs["url"].as_str().unwrap();
        sqlx::PgConnection::connect(theirs_url)
            .await
            .unwrap()
            .close()
            .await
            .unwrap();
        app.finish().await;
    }
}

/// The other engines through a deploy: a MariaDB database (`engine: mysql`) and a memcached
/// cache. The app writes a row through `mariadb` and `DATABASE_URL`, and a key through
/// memcached's authenticated ASCII protocol and `MEMCACHED_URL`.
const OTHER_SERVER: &str = r#"import http.server, os, socket, subprocess, urllib.parse

def sql(q):
    u = urllib.parse.urlparse(os.environ["DATABASE_URL"])
    return subprocess.run(["mariadb", "--no-defaults", "--protocol=tcp", "-h", u.hostname, "-P", str(u.port), "-u", u.username, "-p" + u.password, "--batch", "--skip-column-names", u.path[1:], "-e", q], capture_output=True, text=True, check=True).stdout.strip()

def mc(command, lines):
    u = urllib.parse.urlparse(os.environ["MEMCACHED_URL"])
    with socket.create_connection((u.hostname, u.port)) as s:
        f = s.makefile("rb")
        token = "%s %s" % (u.username, u.password)
        s.sendall(("set auth x 0 %d\r\n%s\r\n" % (len(token), token)).encode())
        assert f.readline().strip() == b"STORED"
        s.sendall(command.encode())
        return "/".join(f.readline().decode().strip() for _ in range(lines))

class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        try:
            if url.path == "/write":
                v = urllib.parse.parse_qs(url.query)["v"][0]
                sql("CREATE TABLE IF NOT EXISTS notes (v TEXT); INSERT INTO notes VALUES ('%s')" % v)
                mc("set last 0 0 %d\r\n%s\r\n" % (len(v), v), 1)
                body = "ok"
            elif url.path == "/read":
                body = sql("CREATE TABLE IF NOT EXISTS notes (v TEXT); SELECT GROUP_CONCAT(v ORDER BY v) FROM notes") + "|" + mc("get last\r\n", 2)
            else:
                body = "ok"
            code = 200
        except Exception as e:
            body, code = repr(e) + " " + str(getattr(e, "stderr", "")), 500
        body = body.encode()
        self.send_response(code)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

#[tokio::test]
async fn mysql_databases_and_memcached_caches_work_through_a_deploy() {
    // One backend: the engines, not the platform's own database, are under test here.
    let backend = backends().remove(0);
    let app = spawn_app(backend).await;
    let infra = "      relationalDatabase:\n        - name: main\n          engine: mysql\n      cache:\n        - name: pages\n          engine: memcached";
    let devfile = devfile("ledger", infra).replace("python3 server.py", "python3 other.py");
    let id = app.register(&app.owner, "ledger").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let files = |round: u32| {
        vec![
            ("devfile.yaml".to_owned(), devfile.as_bytes().to_vec()),
            ("other.py".to_owned(), OTHER_SERVER.as_bytes().to_vec()),
            ("server.py".to_owned(), SERVER.as_bytes().to_vec()),
            ("round.txt".to_owned(), round.to_string().into_bytes()),
            (
                "Dockerfile".to_owned(),
                b"FROM scratch\nCOPY . /app\n".to_vec(),
            ),
        ]
    };
    for round in 1..=2 {
        let (status, body) = app
            .upload(
                &app.owner,
                &id,
                "",
                "application/zstd",
                tar_zst(&files(round)),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let build = body["build_ids"][0].as_str().unwrap().to_owned();
        let built = app.wait_build(&build, &["succeeded", "failed"]).await;
        assert_eq!(built["status"], "succeeded", "{built}");
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while deployments(&app, &id).await < round as usize {
            assert!(std::time::Instant::now() < deadline, "no deployment");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let status = wait_status(&app, &id, &["RUNNING"]).await;
        let url = status["app_url"].as_str().unwrap().to_owned();
        if round == 1 {
            let listed = resources(&app, &id).await;
            let db = listed.iter().find(|r| r["engine"] == "mysql").unwrap();
            assert!(
                db["variables"]
                    .as_array()
                    .unwrap()
                    .contains(&"DATABASE_URL".into())
            );
            let cache = listed.iter().find(|r| r["engine"] == "memcached").unwrap();
            assert_eq!(
                cache["variables"],
                serde_json::json!(["PAGES_CACHE_URL", "MEMCACHED_URL"])
            );
            assert_eq!(get(&format!("{url}/write?v=first")).await, "ok");
        }
        // The row and the key outlive the redeploy (the memcached server is the same one).
        assert_eq!(
            get(&format!("{url}/read")).await,
            "first|VALUE last 0 5/first"
        );
    }
    let url = reveal(&app, &id, "relationalDatabase", "main").await["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(url.starts_with("mysql://"), "{url}");
    let (status, _) = app.delete_app(&app.owner, &id).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    app.finish().await;
}

/// An `ephemeral: true` volume is a directory of the deployment's own: a redeploy starts on
/// an empty one and removes the one before, while the app's other volume keeps its files.
#[tokio::test]
async fn an_ephemeral_volume_starts_empty_on_each_deploy() {
    let backend = backends().remove(0);
    let app = spawn_app(backend).await;
    let id = app.register(&app.owner, "scratchy").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let devfile = devfile("scratchy", BOTH)
        .replace(
            "components:\n",
            "components:\n  - name: scratch\n    volume:\n      ephemeral: true\n",
        )
        .replace(
            "        - name: files\n          path: /data\n",
            "        - name: files\n          path: /data\n        - name: scratch\n          path: /scratch\n",
        );
    let url = deploy(&app, &id, &devfile, 1).await;
    assert_eq!(get(&format!("{url}/write?v=kept")).await, "ok");
    let volumes = app.data_dir().join("volumes").join(&id);
    let first = wait_status(&app, &id, &["RUNNING"]).await["deployment_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let first_scratch = volumes.join(".ephemeral").join(&first).join("scratch");
    assert!(first_scratch.is_dir(), "the deployment's own directory");
    std::fs::write(first_scratch.join("left-over"), "x").unwrap();

    let url = deploy(&app, &id, &devfile, 2).await;
    let second = wait_status(&app, &id, &["RUNNING"]).await["deployment_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(first, second);
    let second_scratch = volumes.join(".ephemeral").join(&second).join("scratch");
    assert_eq!(
        std::fs::read_dir(&second_scratch).unwrap().count(),
        0,
        "an ephemeral volume starts empty"
    );
    assert!(
        !volumes.join(".ephemeral").join(&first).exists(),
        "the earlier deployment's ephemeral volume is removed"
    );
    assert_eq!(get(&format!("{url}/read")).await, "kept|kept|kept");
    app.finish().await;
}

/// An app that answers `/env` with the variables its bucket gave it, as JSON.
const ENV_SERVER: &str = r#"import http.server, json, os

class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        names = [k for k in os.environ if k.startswith(("AWS_", "S3_", "FILES_"))]
        body = json.dumps({k: os.environ[k] for k in names}).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

/// A bucket through every door: provisioned at deploy, listed with its variables and never
/// its secret, bound to the app as the AWS SDKs' variables, revealed to the owner; the
/// revealed key writes and reads it; it outlives a redeploy and goes with the app.
#[tokio::test]
async fn a_bucket_is_bound_reachable_with_its_key_and_kept_across_deploys() {
    use rusty_s3::S3Action as _;
    for backend in backends() {
        let app = spawn_app(backend).await;
        let id = app.register(&app.owner, "bucketed").await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let devfile = devfile("bucketed", "      objectStorage:\n        - name: files");
        let url = deploy_with(&app, &id, &devfile, ENV_SERVER, 1).await;
        let listed = resources(&app, &id).await;
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0]["engine"], "seaweedfs");
        assert_eq!(
            listed[0]["variables"],
            serde_json::json!([
                "FILES_S3_ENDPOINT",
                "FILES_S3_BUCKET",
                "FILES_ACCESS_KEY_ID",
                "FILES_SECRET_ACCESS_KEY",
                "AWS_ENDPOINT_URL_S3",
                "AWS_ACCESS_KEY_ID",
                "AWS_SECRET_ACCESS_KEY",
                "AWS_REGION",
                "AWS_DEFAULT_REGION",
                "S3_BUCKET"
            ])
        );
        let revealed = reveal(&app, &id, "objectStorage", "files").await;
        let secret = revealed["password"].as_str().unwrap().to_owned();
        assert!(!listed[0].to_string().contains(&secret));
        let env: Value = serde_json::from_str(&get(&format!("{url}/env")).await).unwrap();
        assert_eq!(env["AWS_SECRET_ACCESS_KEY"], secret.as_str());
        assert_eq!(env["AWS_ACCESS_KEY_ID"], revealed["user"]);
        assert_eq!(env["S3_BUCKET"], revealed["database"]);
        assert_eq!(env["AWS_REGION"], "us-east-1");
        assert_eq!(env["FILES_S3_ENDPOINT"], env["AWS_ENDPOINT_URL_S3"]);

        let endpoint = env["AWS_ENDPOINT_URL_S3"].as_str().unwrap().to_owned();
        let bucket = rusty_s3::Bucket::new(
            endpoint.parse().unwrap(),
            rusty_s3::UrlStyle::Path,
            env["S3_BUCKET"].as_str().unwrap().to_owned(),
            "us-east-1",
        )
        .unwrap();
        let key =
            rusty_s3::Credentials::new(env["AWS_ACCESS_KEY_ID"].as_str().unwrap(), secret.clone());
        let client = reqwest::Client::new();
        let expires = Duration::from_secs(60);
        let put = bucket.put_object(Some(&key), "report.txt").sign(expires);
        let r = client
            .put(put.as_str())
            .body("quarterly")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK);

        // A redeploy keeps the bucket and its objects.
        deploy_with(&app, &id, &devfile, ENV_SERVER, 2).await;
        let read = bucket.get_object(Some(&key), "report.txt").sign(expires);
        let r = client.get(read.as_str()).send().await.unwrap();
        assert_eq!(r.text().await.unwrap(), "quarterly");

        // Deleting the app destroys the bucket with its objects.
        let (status, _) = app.delete_app(&app.owner, &id).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let r = client.get(read.as_str()).send().await.unwrap();
        assert!(matches!(r.status().as_u16(), 403 | 404), "{}", r.status());
        app.finish().await;
    }
}

/// The app of the issue's acceptance test: a bucket through boto3's S3 client, a table
/// through boto3's DynamoDB resource and a queue through psycopg and pgmq's SQL, each from
/// the variables the platform binds. `/write?v=X` puts object `notes/X`, item `{id: X}` and a
/// message `{"v": X}`; `/read` answers `<objects>|<items>|<messages>` (messages read with a
/// zero visibility timeout, so they stay queued). Debian's python3 has both libraries.
const AWS_SERVER: &str = r#"import http.server, json, os, urllib.parse
import boto3, psycopg
from botocore.config import Config
# Debian's boto3 predates AWS_ENDPOINT_URL_*: the endpoints are passed as newer SDKs read them.
s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL_S3"], config=Config(s3={"addressing_style": "path"}))
bucket = os.environ["S3_BUCKET"]
table = boto3.resource("dynamodb", endpoint_url=os.environ["AWS_ENDPOINT_URL_DYNAMODB"]).Table(os.environ["DYNAMODB_TABLE"])
def queue(sql, *args):
    with psycopg.connect(os.environ["QUEUE_URL"], autocommit=True) as c:
        return c.execute(sql, args).fetchall()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        try:
            body, code = self.answer(), 200
        except Exception as e:
            body, code = repr(e), 500
        body = body.encode()
        self.send_response(code)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def answer(self):
        url = urllib.parse.urlparse(self.path)
        if url.path == "/write":
            v = urllib.parse.parse_qs(url.query)["v"][0]
            s3.put_object(Bucket=bucket, Key="notes/" + v, Body=v.encode())
            table.put_item(Item={"id": v, "v": v})
            queue("SELECT pgmq.send(%s::text, %s::jsonb)", os.environ["QUEUE_NAME"], json.dumps({"v": v}))
            return "ok"
        if url.path == "/read":
            listed = s3.list_objects_v2(Bucket=bucket, Prefix="notes/").get("Contents", [])
            objects = sorted(s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read().decode() for o in listed)
            items = sorted(i["v"] for i in table.scan()["Items"])
            messages = sorted(m[0]["v"] for m in queue("SELECT message FROM pgmq.read(%s::text, 0, 100)", os.environ["QUEUE_NAME"]))
            return "|".join(",".join(x) for x in (objects, items, messages))
        return "ok"
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

const BUCKET_TABLE_QUEUE: &str = "      objectStorage:\n        - name: files\n      keyValueTable:\n        - name: notes\n          partitionKey: id\n      queue:\n        - name: events";

/// What another app's credentials get on `bucket`, `table` (boto3) and `queue_url`'s database:
/// `<S3 error>|<DynamoDB error>|<psycopg's>`.
/// Async: the platform under test runs on this test's runtime and must answer meanwhile.
async fn with_their_keys(theirs: &Value, ours: &Value) -> String {
    let script = r#"
import os, boto3, psycopg
from botocore.config import Config
from botocore.exceptions import ClientError
out = []
try:
    boto3.client("s3", endpoint_url=os.environ["S3"], config=Config(s3={"addressing_style": "path"})).get_object(Bucket=os.environ["BUCKET"], Key="notes/one")
    out.append("read")
except ClientError as e:
    out.append(e.response["Error"]["Code"])
try:
    boto3.resource("dynamodb", endpoint_url=os.environ["DYNAMO"]).Table(os.environ["TABLE"]).scan()
    out.append("read")
except ClientError as e:
    out.append(e.response["Error"]["Code"])
try:
    psycopg.connect(os.environ["QUEUE"]).close()
    out.append("connected")
except psycopg.OperationalError:
    out.append("refused")
print("|".join(out))
"#;
    let text = |v: &Value, k: &str| v[k].as_str().unwrap().to_owned();
    let queue = &ours["queue"];
    let out = tokio::process::Command::new("/usr/bin/python3")
        .args(["-c", script])
        .env("S3", text(&ours["bucket"], "url"))
        .env("BUCKET", text(&ours["bucket"], "database"))
        .env("DYNAMO", text(&ours["table"], "url"))
        .env("TABLE", text(&ours["table"], "database"))
        .env(
            "QUEUE",
            format!(
                "postgresql://{}:{}@{}:{}/{}",
                text(&theirs["queue"], "user"),
                text(&theirs["queue"], "password"),
                text(queue, "host"),
                queue["port"],
                text(queue, "database")
            ),
        )
        .env("AWS_ACCESS_KEY_ID", text(&theirs["bucket"], "user"))
        .env("AWS_SECRET_ACCESS_KEY", text(&theirs["bucket"], "password"))
        .env("AWS_DEFAULT_REGION", "us-east-1")
        .env("AWS_MAX_ATTEMPTS", "1")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{}",
        &stderr[stderr.len().saturating_sub(1500)..]
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// An app's bucket, table and queue credentials, as revealed.
async fn revealed_three(app: &TestApp, id: &str) -> Value {
    serde_json::json!({
        "bucket": reveal(app, id, "objectStorage", "files").await,
        "table": reveal(app, id, "keyValueTable", "notes").await,
        "queue": reveal(app, id, "queue", "events").await,
    })
}

/// The issue's acceptance test for the rest of managedInfra on the process runtime: an app
/// with a bucket, a table and a queue writes through boto3 and psycopg, keeps everything
/// across a redeploy, a platform restart and a rollback; another app's keys get AccessDenied
/// on its bucket, UnrecognizedClientException on its table and no connection to its queue.
/// One platform database (SQLite): the resources' own servers are what is under test.
#[tokio::test]
async fn a_bucket_a_table_and_a_queue_serve_an_app_through_boto3_and_psycopg() {
    let mut app = spawn_app(backends()[0]).await;
    let id = app.register(&app.owner, "aws-app").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let devfile = devfile("aws-app", BUCKET_TABLE_QUEUE).replace(
        "commandLine: python3 server.py",
        "commandLine: /usr/bin/python3 server.py",
    );
    let url = deploy_with(&app, &id, &devfile, AWS_SERVER, 1).await;
    let (_, history) = app
        .send(
            Method::GET,
            &format!("/v1/apps/{id}/deployments"),
            Some(&app.owner),
            None,
        )
        .await;
    let first = history["deployments"][0]["id"].as_str().unwrap().to_owned();
    let listed = resources(&app, &id).await;
    let engines: Vec<&str> = listed
        .iter()
        .map(|r| r["engine"].as_str().unwrap())
        .collect();
    assert_eq!(engines, ["dynalite", "seaweedfs", "pgmq"], "{listed:?}");
    assert!(
        listed[0]["variables"]
            .as_array()
            .unwrap()
            .contains(&Value::from("AWS_ENDPOINT_URL_DYNAMODB")),
        "{listed:?}"
    );
    assert_eq!(get(&format!("{url}/write?v=one")).await, "ok");
    assert_eq!(get(&format!("{url}/read")).await, "one|one|one");

    // A redeploy, a platform restart, a rollback: everything is still there.
    let url = deploy_with(&app, &id, &devfile, AWS_SERVER, 2).await;
    assert_eq!(get(&format!("{url}/read")).await, "one|one|one");
    app.restart().await;
    let url = wait_status(&app, &id, &["RUNNING"]).await["app_url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(get(&format!("{url}/write?v=two")).await, "ok");
    assert_eq!(get(&format!("{url}/read")).await, "one,two|one,two|one,two");
    let before = deployments(&app, &id).await;
    let (status, body) = crate::history::rollback(&app, &id, &first).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while deployments(&app, &id).await <= before
        || crate::deploy::status_of(&app, &id).await["status"] != "RUNNING"
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the rollback never ran"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let url = wait_status(&app, &id, &["RUNNING"]).await["app_url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(get(&format!("{url}/read")).await, "one,two|one,two|one,two");

    // Another app with the same three resources: its keys reach none of this app's.
    let other = app.register(&app.owner, "other-aws").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    deploy_with(
        &app,
        &other,
        &devfile.replace("aws-app", "other-aws"),
        AWS_SERVER,
        1,
    )
    .await;
    let ours = revealed_three(&app, &id).await;
    let theirs = revealed_three(&app, &other).await;
    assert_ne!(
        ours["table"]["port"], theirs["table"]["port"],
        "a table server per app"
    );
    assert_eq!(
        with_their_keys(&theirs, &ours).await,
        "AccessDenied|UnrecognizedClientException|refused"
    );
    assert_eq!(
        with_their_keys(&ours, &ours).await.split('|').next(),
        Some("read"),
        "the same script with the app's own keys reads its bucket"
    );
    app.finish().await;
}

/// The files under `dir` named `name`, at any depth.
fn find_named(dir: &std::path::Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(find_named(&path, name));
        } else if path.file_name().is_some_and(|n| n == name) {
            found.push(path);
        }
    }
    found
}

/// A backing server that goes down is told to the app's subscribers (`service.down`, with
/// how it ended) while the platform restarts it; the app's cache works again after.
#[tokio::test]
async fn a_backing_server_that_goes_down_is_told_and_restarted() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let id = app.register(&app.owner, "downcache").await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", closed.local_addr().unwrap());
        drop(closed);
        for (path, body) in [
            (
                "/v1/account/notifications/channels",
                serde_json::json!({"name": "ops", "kind": "webhook", "url": url}),
            ),
            (
                "/v1/account/notifications/subscriptions",
                serde_json::json!({"channel": "ops", "app_id": id, "events": ["service.down"]}),
            ),
        ] {
            let (status, answer) = app
                .send(Method::POST, path, Some(&app.owner), Some(body.to_string()))
                .await;
            assert_eq!(status, StatusCode::CREATED, "{answer}");
        }
        let cache_only = "      cache:\n        - name: hot\n          memoryMb: 32";
        deploy(&app, &id, &devfile("downcache", cache_only), 1).await;
        let pids = find_named(&app.data_dir().join("services"), "server.supervised.pid");
        assert_eq!(pids.len(), 1, "one Redis: {pids:?}");
        let pid: i32 = std::fs::read_to_string(&pids[0])
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();

        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let told = loop {
            let (status, body) = app
                .send(
                    Method::GET,
                    &format!("/v1/account/notifications/deliveries?app_id={id}"),
                    Some(&app.owner),
                    None,
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            if let Some(d) = body["deliveries"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["event"]["type"] == "service.down")
            {
                break d.clone();
            }
            assert!(std::time::Instant::now() < deadline, "never told: {body}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(
            told["event"]["summary"],
            "The cache hot server of downcache went down"
        );
        let reason = told["event"]["reason"].as_str().unwrap();
        assert!(
            reason.contains("signal: 9") && reason.contains("restarts it"),
            "{reason}"
        );
        // Restarted: a new process in its place.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let now: i32 = std::fs::read_to_string(&pids[0])
                .unwrap()
                .trim()
                .parse()
                .unwrap_or(pid);
            if now != pid {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "never restarted");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        app.finish().await;
    }
}
