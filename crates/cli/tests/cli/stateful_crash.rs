//! `kill -9` of a real `slipway platform serve` while it deploys an app with a PostgreSQL
//! database, a Redis cache and a volume: the backing servers and the service it started
//! outlive it; the next start stops them (the cache saving its keys as its server stops),
//! brings the app back on the same data, and everything written before is there.

use std::path::Path;
use std::time::{Duration, Instant};

use slipway_server::testing::{TestDatabase, backends};

use crate::daily::{free_port, http_get, serve_on, slipway};

/// `/write?v=X` stores X as a row (psql on `DATABASE_URL`), as the cache's key `last` (on
/// `REDIS_URL`) and as a line of `/data/notes.txt` (its volume); `/read` answers
/// `rows|last|lines`. A `slow` file in the project delays its start by 4 s: a deployment of
/// that round stays DEPLOYING long enough to be interrupted.
pub(crate) const SERVER: &str = r#"import http.server, os, socket, subprocess, time, urllib.parse

if os.path.exists("slow"):
    time.sleep(4)

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
            body, code = repr(e) + " " + str(getattr(e, "stderr", "")), 500
        body = body.encode()
        self.send_response(code)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def answer(self):
        url = urllib.parse.urlparse(self.path)
        sql("CREATE TABLE IF NOT EXISTS notes (v text)")
        if url.path == "/write":
            v = urllib.parse.parse_qs(url.query)["v"][0]
            sql("INSERT INTO notes VALUES ('%s')" % v)
            redis("SET", "last", v)
            with open("/data/notes.txt", "a") as f:
                f.write(v + "\n")
            return "ok"
        if url.path == "/read":
            lines = open("/data/notes.txt").read().split() if os.path.exists("/data/notes.txt") else []
            rows = sql("SELECT coalesce(string_agg(v, ',' ORDER BY v), '') FROM notes")
            return "%s|%s|%s" % (rows, redis("GET", "last"), ",".join(lines))
        return "ok"
    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

pub(crate) const DEVFILE: &str = r#"schemaVersion: 2.2.0
metadata:
  name: keeper
  displayName: Keeper
  platform:
    managedInfra:
      relationalDatabase:
        - name: main
          engine: postgres
      cache:
        - name: hot
          engine: redis
components:
  - name: files
    volume:
      size: 256Mi
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
      workingDir: ${PROJECT_SOURCE}
      group: { kind: build, isDefault: true }
  - id: run
    exec:
      component: api
      commandLine: python3 server.py
      workingDir: ${PROJECT_SOURCE}
      group: { kind: run, isDefault: true }
"#;

/// `GET path` of the app through the platform's gateway: (status line, body).
fn app_get(gateway: u16, path: &str) -> (String, String) {
    let answer = http_get(
        &format!("127.0.0.1:{gateway}"),
        &format!("keeper.localhost:{gateway}"),
        path,
    );
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (
        head.lines().next().unwrap_or_default().to_owned(),
        body.to_owned(),
    )
}

/// `slipway status` until its first word is one of `wanted` (120 s at most).
pub(crate) fn wait_status(project: &Path, env: &[(&str, String)], wanted: &[&str]) -> String {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let out = slipway(project, env, &["status"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if wanted.iter().any(|w| text.starts_with(w)) {
            return text;
        }
        assert!(
            !text.starts_with("FAILED"),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(Instant::now() < deadline, "never {wanted:?}: {text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `slipway build`; the app's id it prints.
pub(crate) fn build(project: &Path, env: &[(&str, String)]) -> String {
    let out = slipway(project, env, &["build"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("Built app "))
        .expect("the app's id")
        .trim()
        .to_owned()
}

/// The app's deployments, newest first (`GET /v1/apps/{id}/deployments`).
pub(crate) fn deployments(env: &[(&str, String)], id: &str) -> Vec<serde_json::Value> {
    let history: serde_json::Value = reqwest::blocking::Client::new()
        .get(format!("{}/v1/apps/{id}/deployments", env[0].1))
        .bearer_auth(&env[1].1)
        .send()
        .and_then(reqwest::blocking::Response::json)
        .expect("the history");
    history["deployments"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_platform_killed_during_a_deploy_keeps_the_apps_database_cache_and_volume() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for backend in backends("stateful_crash") {
        let db = match backend {
            slipway_server::testing::Backend::Sqlite => None,
            slipway_server::testing::Backend::Postgres => {
                Some(runtime.block_on(TestDatabase::create("stateful_crash")))
            }
        };
        killed_during_a_deploy(db.as_ref().map(TestDatabase::url));
        // Dropped here: the database goes with it.
        drop(db);
    }
}

/// The scenario on one platform database (`None`: SQLite in the data directory).
fn killed_during_a_deploy(database_url: Option<&str>) {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("platform");
    let (port, gateway) = (free_port(), free_port());
    let mut server = serve_on(&data, database_url, port, gateway);
    let env = [
        ("SLIPWAY_PLATFORM_URL", format!("http://127.0.0.1:{port}")),
        (
            "SLIPWAY_TOKEN",
            std::fs::read_to_string(data.join("bootstrap-token"))
                .unwrap()
                .trim()
                .to_owned(),
        ),
    ];
    let project = work.path().join("keeper");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("devfile.yaml"), DEVFILE).unwrap();
    std::fs::write(project.join("server.py"), SERVER).unwrap();
    std::fs::write(project.join("Dockerfile"), "FROM scratch\nCOPY . /app\n").unwrap();
    let id = build(&project, &env);
    wait_status(&project, &env, &["RUNNING"]);
    let (status, body) = app_get(gateway, "/write?v=one");
    assert!(status.contains("200"), "{status}: {body}");
    assert_eq!(app_get(gateway, "/read").1, "one|one|one");

    // A source edit whose deployment starts slowly; killed outright while it deploys.
    std::fs::write(project.join("slow"), "").unwrap();
    build(&project, &env);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let history = deployments(&env, &id);
        if history.len() == 2 && history[0]["status"] == "deploying" {
            break;
        }
        assert!(Instant::now() < deadline, "{:?}", deployments(&env, &id));
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = server.0.kill();
    let _ = server.0.wait();

    // The next start brings the app back (the slow round, started again) on the same data.
    let _server = serve_on(&data, database_url, port, gateway);
    wait_status(&project, &env, &["RUNNING"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    let read = loop {
        let (status, body) = app_get(gateway, "/read");
        if status.contains("200") {
            break body;
        }
        assert!(Instant::now() < deadline, "{status}: {body}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(read, "one|one|one", "what was written before the kill");
    let history = deployments(&env, &id);
    assert!(
        history.iter().any(|d| d["status"] == "FAILED"
            && d["reason"]
                .as_str()
                .is_some_and(|r| r.contains("restarted"))),
        "the interrupted deployment is recorded as such: {history:?}"
    );
    let (status, body) = app_get(gateway, "/write?v=two");
    assert!(status.contains("200"), "{status}: {body}");
    assert_eq!(app_get(gateway, "/read").1, "one,two|two|one,two");
}
