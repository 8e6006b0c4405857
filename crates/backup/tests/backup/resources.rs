//! An app with a PostgreSQL database, an in-memory database (Redis, append-only), a queue
//! (pgmq), a bucket, a key-value table and a volume, backed up while it writes to all six, restored into a new data directory (and a
//! new platform database): every write the app acknowledged before the backup began is there,
//! and the restored app runs on the restored data.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use slipway_backup::platform::{Backup, Restore};

use crate::support::{Db, Platform, WORK, backends, passphrase};

/// `/write?v=X` stores X as a row (psql on `DATABASE_URL`), as a member of a Redis set (on
/// `STATE_INMEMORY_URL`), as a message of its queue (`QUEUE_URL`, `QUEUE_NAME`), as a line
/// of `/data/notes.txt` (its volume), as the object `notes/X` of its bucket and as the item
/// `{id: X}` of its table (boto3, Debian's), and answers `ok` only when all six are written;
/// `/read` answers the six as `rows|members|lines|messages|objects|items`, each sorted and
/// comma-separated.
const SERVER: &str = r#"import http.server, os, socket, subprocess, urllib.parse
import boto3
from botocore.config import Config

s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL_S3"], config=Config(s3={"addressing_style": "path"}))
BUCKET = os.environ["S3_BUCKET"]
table = boto3.resource("dynamodb", endpoint_url=os.environ["AWS_ENDPOINT_URL_DYNAMODB"]).Table(os.environ["DYNAMODB_TABLE"])

def objects():
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix="notes/")
    return sorted(o["Key"][len("notes/"):] for page in pages for o in page.get("Contents", []))

def items():
    found, more = [], {}
    while True:
        page = table.scan(**more)
        found += [i["id"] for i in page["Items"]]
        if "LastEvaluatedKey" not in page:
            return sorted(found)
        more = {"ExclusiveStartKey": page["LastEvaluatedKey"]}

def redis(*args):
    url = urllib.parse.urlparse(os.environ["STATE_INMEMORY_URL"])
    with socket.create_connection((url.hostname, url.port)) as s:
        f = s.makefile("rb")
        def cmd(*a):
            out = "*%d\r\n" % len(a) + "".join("$%d\r\n%s\r\n" % (len(x.encode()), x) for x in a)
            s.sendall(out.encode())
            line = f.readline().decode().strip()
            if line.startswith("*"):
                items = []
                for _ in range(int(line[1:])):
                    n = int(f.readline().decode().strip()[1:])
                    items.append(f.read(n + 2)[:n].decode())
                return items
            if line.startswith("-"):
                raise RuntimeError(line)
            return line
        cmd("AUTH", url.password)
        return cmd(*args)

def sql(q, url="DATABASE_URL"):
    return subprocess.run(["psql", os.environ[url], "-tAc", q], capture_output=True, text=True, check=True).stdout.strip()

QUEUE = os.environ["QUEUE_NAME"]

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
            redis("SADD", "notes", v)
            sql("SELECT pgmq.send('%s', jsonb_build_object('v', '%s'))" % (QUEUE, v), "QUEUE_URL")
            with open("/data/notes.txt", "a") as f:
                f.write(v + "\n")
                f.flush()
                os.fsync(f.fileno())
            s3.put_object(Bucket=BUCKET, Key="notes/" + v, Body=v.encode())
            table.put_item(Item={"id": v})
            return "ok"
        if url.path == "/read":
            lines = open("/data/notes.txt").read().split() if os.path.exists("/data/notes.txt") else []
            rows = sql("SELECT coalesce(string_agg(v, ',' ORDER BY v), '') FROM notes")
            messages = sql("SELECT coalesce(string_agg(message->>'v', ',' ORDER BY msg_id), '') FROM pgmq.q_%s" % QUEUE, "QUEUE_URL")
            return "%s|%s|%s|%s|%s|%s" % (rows, ",".join(sorted(redis("SMEMBERS", "notes"))), ",".join(sorted(lines)), messages, ",".join(objects()), ",".join(items()))
        return "ok"
    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

const DEVFILE: &str = r#"schemaVersion: 2.2.0
metadata:
  name: ledger
  displayName: Ledger
  platform:
    managedInfra:
      relationalDatabase:
        - name: main
          engine: postgres
      inMemoryDatabase:
        - name: state
          engine: redis
      queue:
        - name: work-items
          fifo: true
      objectStorage:
        - name: docs
      keyValueTable:
        - name: entries
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
          targetPort: 8003
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
      commandLine: /usr/bin/python3 server.py
      workingDir: ${PROJECT_SOURCE}
      group: { kind: run, isDefault: true }
"#;

/// The project as a tar.gz build context.
fn context() -> Vec<u8> {
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (name, body) in [
        ("devfile.yaml", DEVFILE),
        ("server.py", SERVER),
        ("Dockerfile", "FROM scratch\nCOPY . /app\n"),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(body.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, body.as_bytes())
            .expect("tar");
    }
    tar.into_inner().expect("tar").finish().expect("gzip")
}

/// Polls the app's status until RUNNING (120 s at most; FAILED fails at once).
async fn wait_running(platform: &Platform, token: &str, id: &str) -> Value {
    for _ in 0..1_200 {
        let (status, body) = platform
            .send(
                Method::GET,
                &format!("/v1/apps/{id}/status"),
                Some(token),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_ne!(body["status"], "FAILED", "{body}");
        if body["status"] == "RUNNING" {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{id} never became RUNNING");
}

/// Registers and builds the app; its id and URL once it runs.
async fn deploy(platform: &Platform, token: &str) -> (String, String) {
    let (status, app) = platform
        .send(
            Method::POST,
            "/v1/apps",
            Some(token),
            Some(&json!({"name": "ledger", "display_name": "Ledger"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{app}");
    let id = app["id"].as_str().unwrap().to_owned();
    let r = platform
        .client
        .post(format!("{}/v1/apps/{id}/builds", platform.base))
        .bearer_auth(token)
        .header("content-type", "application/gzip")
        .body(context())
        .send()
        .await
        .expect("upload");
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let running = wait_running(platform, token, &id).await;
    let url = running["app_url"].as_str().expect("app_url").to_owned();
    (id, url)
}

/// Asks the app to write `v1`, `v2`, … until `stop`, recording each value it acknowledged.
fn start_writer(
    client: reqwest::Client,
    url: String,
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<Vec<String>>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut n = 1;
        while !stop.load(Ordering::SeqCst) {
            let v = format!("v{n:04}");
            let r = client
                .get(format!("{url}/write?v={v}"))
                .send()
                .await
                .expect("write");
            let status = r.status();
            let body = r.text().await.unwrap_or_default();
            assert_eq!(status, StatusCode::OK, "{body}");
            acked.lock().unwrap().push(v);
            n += 1;
        }
    })
}

/// What the app reads back: its rows, its set's members, its volume's lines, its queued
/// messages, its bucket's objects and its table's items.
async fn read(client: &reqwest::Client, url: &str) -> [Vec<String>; 6] {
    let r = client
        .get(format!("{url}/read"))
        .send()
        .await
        .expect("read");
    let status = r.status();
    let body = r.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    let parts: Vec<Vec<String>> = body
        .split('|')
        .map(|p| {
            p.split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect();
    parts.try_into().expect("six parts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_while_the_app_writes_restores_its_databases_bucket_table_and_volume() {
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        let source_dir = dir.path().join("platform");
        let db = Db::new(backend, "backup_resources_source").await;
        let source = Platform::start(&source_dir, db.url.as_deref()).await;
        let owner = source.owner_token();
        let (id, url) = deploy(&source, &owner).await;

        let stop = Arc::new(AtomicBool::new(false));
        let acked = Arc::new(Mutex::new(Vec::new()));
        let writer = start_writer(
            source.client.clone(),
            url.clone(),
            stop.clone(),
            acked.clone(),
        );
        while acked.lock().unwrap().len() < 5 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Every write acknowledged now must be in the backup; later ones may be.
        let before: Vec<String> = acked.lock().unwrap().clone();
        let (_, pass) = passphrase(dir.path(), "pass", "resources passphrase");
        let archive = dir.path().join("platform.age");
        slipway_backup::platform::backup(Backup {
            data_dir: source_dir.clone(),
            database_url: db.url.clone(),
            vault_key_file: None,
            to: archive.clone(),
            passphrase: pass.clone(),
            work_factor: WORK,
        })
        .await
        .expect("backup");
        // The app went on writing while the backup ran.
        let during = acked.lock().unwrap().len();
        stop.store(true, Ordering::SeqCst);
        writer.await.expect("writer");
        assert!(during > before.len(), "no write during the backup");
        source.stop().await;

        let restored_dir = dir.path().join("restored");
        let target_db = Db::new(backend, "backup_resources_target").await;
        slipway_backup::platform::restore(Restore {
            from: archive,
            data_dir: restored_dir.clone(),
            database_url: target_db.url.clone(),
            passphrase: pass,
        })
        .await
        .expect("restore");
        let copy = Platform::start(&restored_dir, target_db.url.as_deref()).await;
        wait_running(&copy, &owner, &id).await;
        let [rows, members, lines, messages, objects, items] = read(&copy.client, &url).await;
        for v in &before {
            assert!(objects.contains(v), "{backend:?}: object {v} is lost");
            assert!(items.contains(v), "{backend:?}: item {v} is lost");
            assert!(rows.contains(v), "{backend:?}: row {v} is lost: {rows:?}");
            assert!(members.contains(v), "{backend:?}: key {v} is lost");
            assert!(lines.contains(v), "{backend:?}: line {v} is lost");
            assert!(messages.contains(v), "{backend:?}: message {v} is lost");
        }
        assert!(messages.is_sorted(), "queued in send order: {messages:?}");
        // The restored app writes on: its database is its own again.
        let r = copy
            .client
            .get(format!("{url}/write?v=after"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{}", r.text().await.unwrap());
        let [rows, members, _, _, _, items] = read(&copy.client, &url).await;
        assert!(
            items.contains(&"after".to_owned()),
            "the restored table takes writes"
        );
        assert!(rows.contains(&"after".to_owned()) && members.contains(&"after".to_owned()));
        // The dumps were loaded once and are gone.
        assert!(
            !restored_dir.join("services/restore").exists()
                || std::fs::read_dir(restored_dir.join("services/restore"))
                    .unwrap()
                    .next()
                    .is_none()
        );
        copy.stop().await;
    }
}
