//! An app's key-value tables: one dynalite (a DynamoDB-compatible server on LevelDB) per app,
//! holding every table the app declares, and a gate in front of it.
//!
//! dynalite checks no credentials, so it listens only on a Unix socket in a directory only
//! the platform's user may enter; apps reach it through the gate, an HTTP server on a
//! loopback port that checks each request's AWS signature against the app's keys
//! ([`crate::sigv4`]) and refuses it, in DynamoDB's own words, otherwise. The app's keys are
//! its tables' and its buckets' (an app whose one bucket sets `AWS_ACCESS_KEY_ID` signs its
//! DynamoDB requests with that key too). Another app's key, or none, gets
//! `UnrecognizedClientException`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use nix::sys::signal::Signal;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::{TcpListener, UnixStream};
use tokio::task::JoinHandle;

use crate::error::ServiceError;
use crate::process::{Launch, ServerProcess, Serves, find_program, pid_file, stop_leftover};
use crate::sigv4::{self, Refusal, Signed};
use crate::spec::{ResourceKey, TableKeys};

/// The largest request the gate takes (DynamoDB's own limit is 16 MiB for a batch).
const MAX_REQUEST: usize = 16 << 20;

/// The socket's file name in the app's directory (short: a socket path has 107 bytes).
const SOCKET: &str = "dynalite.sock";

/// The keys an app's gate accepts: key id → secret, per resource that holds a key.
pub(crate) type AppKeys = Arc<RwLock<HashMap<String, HashMap<ResourceKey, (String, String)>>>>;

/// One app's dynalite and its gate.
#[derive(Debug)]
pub(crate) struct AppTables {
    server: ServerProcess,
    gate: JoinHandle<()>,
    /// The gate's loopback port.
    pub port: u16,
    socket: PathBuf,
}

impl AppTables {
    /// Starts the app's dynalite on its directory `dir` and the gate on `port`.
    pub async fn start(
        dir: &Path,
        app_id: &str,
        port: u16,
        keys: AppKeys,
    ) -> Result<Self, ServiceError> {
        let program = find_program("dynalite", "scripts/dev installs it (npm dynalite)")?;
        let data = dir.join("data");
        std::fs::create_dir_all(&data)?;
        restrict(dir)?;
        // Bound first: a port that is taken fails before a server is started for nothing.
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let socket = dir.join(SOCKET);
        let log = dir.join("server.log");
        stop_leftover(&pid_file(&log), "dynalite", Signal::SIGTERM).await;
        if socket.exists() {
            std::fs::remove_file(&socket)?;
        }
        let server = ServerProcess::start(Launch {
            name: format!("dynalite {}", dir.file_name().unwrap_or_default().display()),
            serves: Serves::App(app_id.to_owned()),
            program,
            args: vec![
                "--port".into(),
                socket.display().to_string(),
                "--path".into(),
                data.display().to_string(),
                // Tables are ACTIVE at once: nothing here is a real cluster to wait for.
                "--createTableMs".into(),
                "0".into(),
                "--deleteTableMs".into(),
                "0".into(),
                "--updateTableMs".into(),
                "0".into(),
            ],
            log,
            user: None,
            stop_signal: Signal::SIGTERM,
            port,
            socket: Some(socket.clone()),
        })
        .await?;
        let gate = tokio::spawn(serve_gate(
            listener,
            socket.clone(),
            app_id.to_owned(),
            keys,
        ));
        Ok(Self {
            server,
            gate,
            port,
            socket,
        })
    }

    /// Makes the table with `keys` as its key schema, unless it is there.
    pub async fn create_table(&self, table: &str, keys: &TableKeys) -> Result<(), ServiceError> {
        let mut attributes =
            vec![json!({"AttributeName": keys.partition_key(), "AttributeType": "S"})];
        let mut schema = vec![json!({"AttributeName": keys.partition_key(), "KeyType": "HASH"})];
        if let Some(sort) = &keys.sort_key {
            attributes.push(json!({"AttributeName": sort, "AttributeType": "S"}));
            schema.push(json!({"AttributeName": sort, "KeyType": "RANGE"}));
        }
        let made = call(
            &self.socket,
            "CreateTable",
            &json!({
                "TableName": table,
                "AttributeDefinitions": attributes,
                "KeySchema": schema,
                "BillingMode": "PAY_PER_REQUEST",
            }),
        )
        .await;
        match made {
            Ok(_) => {}
            Err(ServiceError::Refused { reason, .. }) if reason.contains("ResourceInUse") => {}
            Err(e) => return Err(e),
        }
        wait_active(&self.socket, table).await
    }

    /// Removes the table and its items, and returns once it is gone from the server's list:
    /// dynalite answers while the table is still DELETING and drops it a moment later, so a
    /// caller asking "was that the last table?" straight after would still see it.
    pub async fn delete_table(&self, table: &str) -> Result<(), ServiceError> {
        match call(&self.socket, "DeleteTable", &json!({"TableName": table})).await {
            Ok(_) => {}
            Err(ServiceError::Refused { reason, .. }) if reason.contains("ResourceNotFound") => {
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        wait_gone(&self.socket, table).await
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.server.pid()
    }

    /// Stops the gate and the server.
    pub async fn stop(self) {
        self.gate.abort();
        self.server.stop().await;
    }
}

/// The table a `keyValueTable` resource is: its name, which DynamoDB wants 3 characters long
/// at least (the app's server holds only the app's tables, so the name needs no prefix).
pub(crate) fn table_name(resource: &str) -> String {
    if resource.len() >= 3 {
        resource.to_owned()
    } else {
        format!("table-{resource}")
    }
}

/// The app's directory may be entered by the platform's user only: the socket in it is the
/// unchecked way in.
fn restrict(dir: &Path) -> Result<(), ServiceError> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    Ok(())
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Described {
    table: TableDescription,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct TableDescription {
    table_status: String,
}

async fn describe(socket: &Path, table: &str) -> Result<TableDescription, ServiceError> {
    let answer = call(socket, "DescribeTable", &json!({"TableName": table})).await?;
    let d: Described = serde_json::from_slice(&answer).map_err(|e| refused("read a table", e))?;
    Ok(d.table)
}

async fn wait_active(socket: &Path, table: &str) -> Result<(), ServiceError> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = describe(socket, table).await?.table_status;
        if status == "ACTIVE" {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(refused(
                "make a table",
                format!("{table} is still {status} after 30s"),
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until `table` is no longer described (a deletion finished).
async fn wait_gone(socket: &Path, table: &str) -> Result<(), ServiceError> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match describe(socket, table).await {
            Err(ServiceError::Refused { reason, .. }) if reason.contains("ResourceNotFound") => {
                return Ok(());
            }
            Err(e) => return Err(e),
            Ok(_) if Instant::now() > deadline => {
                return Err(refused(
                    "delete a table",
                    format!("{table} is still listed after 30s"),
                ));
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

fn refused(action: &str, reason: impl std::fmt::Display) -> ServiceError {
    ServiceError::Refused {
        server: "dynalite",
        action: action.to_owned(),
        reason: reason.to_string(),
    }
}

/// One DynamoDB call straight to the server's socket (the platform's own: unsigned, though
/// dynalite wants an `Authorization` of the right shape). The answer's body, or its error.
pub(crate) async fn call(socket: &Path, target: &str, body: &Value) -> Result<Bytes, ServiceError> {
    let request = Request::post("/")
        .header("host", "dynalite")
        .header("content-type", "application/x-amz-json-1.0")
        .header("x-amz-target", format!("DynamoDB_20120810.{target}"))
        .header("x-amz-date", "20000101T000000Z")
        .header(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=platform/20000101/us-east-1/dynamodb/aws4_request, \
             SignedHeaders=host, Signature=0",
        )
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| refused(target, e))?;
    let response = send(socket, request)
        .await
        .map_err(|e| refused(target, e))?;
    let status = response.status();
    let body = response.into_body();
    if status.is_success() {
        Ok(body)
    } else {
        Err(refused(target, String::from_utf8_lossy(&body)))
    }
}

/// Sends one request over a new connection to the socket; the response, body read.
async fn send(socket: &Path, request: Request<Full<Bytes>>) -> Result<Response<Bytes>, String> {
    let stream = UnixStream::connect(socket)
        .await
        .map_err(|e| format!("cannot reach the server: {e}"))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    let driver = tokio::spawn(connection);
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let (parts, body) = response.into_parts();
    let body = body.collect().await.map_err(|e| e.to_string())?.to_bytes();
    driver.abort();
    Ok(Response::from_parts(parts, body))
}

/// Accepts the app's connections until aborted.
async fn serve_gate(listener: TcpListener, socket: PathBuf, app_id: String, keys: AppKeys) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let (socket, app_id, keys) = (socket.clone(), app_id.clone(), keys.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let (socket, app_id, keys) = (socket.clone(), app_id.clone(), keys.clone());
                async move {
                    Ok::<_, std::convert::Infallible>(gate(request, &socket, &app_id, &keys).await)
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// One request through the gate: checked, then passed to the server as it came.
async fn gate(
    request: Request<Incoming>,
    socket: &Path,
    app_id: &str,
    keys: &AppKeys,
) -> Response<Full<Bytes>> {
    let (parts, body) = request.into_parts();
    let Ok(body) = Limited::new(body, MAX_REQUEST)
        .collect()
        .await
        .map(|b| b.to_bytes())
    else {
        return answer(
            StatusCode::PAYLOAD_TOO_LARGE,
            "com.amazon.coral.service#SerializationException",
            "The request is larger than 16 MiB.",
        );
    };
    let headers: Vec<(String, String)> = parts
        .headers
        .iter()
        .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect();
    let signed = Signed {
        method: parts.method.as_str(),
        path: parts.uri.path(),
        query: parts.uri.query().unwrap_or(""),
        headers,
        body: &body,
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let checked = sigv4::verify(&signed, now, |id| {
        let keys = keys.read().ok()?;
        keys.get(app_id)?
            .values()
            .find(|(key_id, _)| key_id == id)
            .map(|(_, secret)| secret.clone())
    });
    if let Err(refusal) = checked {
        tracing::info!(app_id, reason = ?refusal, "a DynamoDB request refused at the gate");
        let (kind, message) = refusal.answer();
        let status = if refusal == Refusal::MissingToken {
            StatusCode::FORBIDDEN
        } else {
            StatusCode::BAD_REQUEST
        };
        return answer(status, kind, message);
    }
    let mut forward = Request::builder().method(parts.method).uri(parts.uri);
    for (k, v) in &parts.headers {
        forward = forward.header(k, v);
    }
    let Ok(forward) = forward.body(Full::new(body)) else {
        return answer(
            StatusCode::BAD_REQUEST,
            "com.amazon.coral.service#SerializationException",
            "The request cannot be read.",
        );
    };
    match send(socket, forward).await {
        Ok(response) => response.map(Full::new),
        Err(e) => {
            tracing::warn!(app_id, error = %e, "the app's dynalite did not answer");
            answer(
                StatusCode::SERVICE_UNAVAILABLE,
                "com.amazonaws.dynamodb.v20120810#ServiceUnavailable",
                "The table server is restarting; retry.",
            )
        }
    }
}

fn answer(status: StatusCode, kind: &str, message: &str) -> Response<Full<Bytes>> {
    let body = json!({"__type": kind, "message": message}).to_string();
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/x-amz-json-1.0"),
    );
    response
}

/// The socket of the app whose directory is `dir`.
pub(crate) fn socket_of(dir: &Path) -> PathBuf {
    dir.join(SOCKET)
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ScanPage {
    #[serde(default)]
    items: Vec<serde_json::Map<String, Value>>,
    #[serde(default)]
    last_evaluated_key: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct TableList {
    #[serde(default)]
    table_names: Vec<String>,
}

/// The tables on the server at `socket`.
pub(crate) async fn tables(socket: &Path) -> Result<Vec<String>, ServiceError> {
    let answer = call(socket, "ListTables", &json!({})).await?;
    let list: TableList = serde_json::from_slice(&answer).map_err(|e| refused("list tables", e))?;
    Ok(list.table_names)
}

/// Every item of `table` into `out`, one DynamoDB-typed JSON object per line (a consistent
/// read of each page; items written meanwhile may or may not be in it).
pub(crate) async fn dump(socket: &Path, table: &str, out: &Path) -> Result<u64, ServiceError> {
    use std::io::Write as _;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::io::BufWriter::new(std::fs::File::create(out)?);
    let mut start: Option<Value> = None;
    let mut count = 0;
    loop {
        let mut request = json!({"TableName": table, "ConsistentRead": true});
        if let Some(key) = start.take() {
            request["ExclusiveStartKey"] = key;
        }
        let answer = call(socket, "Scan", &request).await?;
        let page: ScanPage = serde_json::from_slice(&answer).map_err(|e| refused("scan", e))?;
        for item in page.items {
            writeln!(file, "{}", Value::Object(item))?;
            count += 1;
        }
        match page.last_evaluated_key {
            Some(key) => start = Some(key),
            None => break,
        }
    }
    file.into_inner()
        .map_err(std::io::IntoInnerError::into_error)?
        .sync_all()?;
    Ok(count)
}

/// Puts every item of a [`dump`] back into `table`.
pub(crate) async fn load(socket: &Path, table: &str, from: &Path) -> Result<(), ServiceError> {
    let text = std::fs::read_to_string(from)?;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let item: Value =
            serde_json::from_str(line).map_err(|e| refused("read a dumped item", e))?;
        call(
            socket,
            "PutItem",
            &json!({"TableName": table, "Item": item}),
        )
        .await?;
    }
    Ok(())
}
