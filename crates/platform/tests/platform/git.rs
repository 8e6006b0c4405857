//! Deploys from git over real HTTP: a bare repository served by Debian's `git http-backend`
//! (behind a token, as a forge serves it), an app connected to it deploying its branch at
//! once, a signed push event deploying the next commit, and everything a forge's delivery
//! log would show: a push to another branch ignored with the reason, a tampered delivery
//! refused with 401 and nothing queued, a redelivery deploying nothing again. Then the
//! failures a person must be told: a refused token, a commit without the devfile's
//! directory. Then polling, with no webhook at all.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, Response, StatusCode as AxumStatus};
use base64::Engine as _;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::deploy::{Service, devfile, project, through_gateway};
use crate::support::{TestApp, backends, spawn_app};

const TOKEN: &str = "forge-token-42";

/// A git smart-HTTP server: every request goes to `git http-backend` as CGI, after the
/// token check a forge makes (Basic credentials whose password is the token).
struct GitServer {
    addr: std::net::SocketAddr,
    root: tempfile::TempDir,
}

impl GitServer {
    async fn start() -> Self {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().to_path_buf();
        let app = axum::Router::new().fallback(move |req: Request<Body>| cgi(req, dir.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { addr, root }
    }

    fn url(&self, repo: &str) -> String {
        format!("http://{}/{repo}", self.addr)
    }

    fn bare(&self, repo: &str) -> PathBuf {
        self.root.path().join(repo)
    }
}

async fn cgi(req: Request<Body>, root: PathBuf) -> Response<Body> {
    let wanted = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{TOKEN}"))
    );
    let given = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if given != wanted {
        return Response::builder()
            .status(AxumStatus::UNAUTHORIZED)
            .header("www-authenticate", "Basic realm=\"git\"")
            .body(Body::from("Authentication failed"))
            .unwrap();
    }
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let mut child = tokio::process::Command::new("git")
        .arg("http-backend")
        .env("GIT_PROJECT_ROOT", &root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("PATH_INFO", parts.uri.path())
        .env("QUERY_STRING", parts.uri.query().unwrap_or(""))
        .env("REQUEST_METHOD", parts.method.as_str())
        .env("CONTENT_TYPE", header("content-type"))
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("HTTP_CONTENT_ENCODING", header("content-encoding"))
        .env("GIT_PROTOCOL", header("git-protocol"))
        .env("REMOTE_USER", "x-access-token")
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use tokio::io::AsyncWriteExt as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&body).await.unwrap();
    }
    let out = child.wait_with_output().await.unwrap();
    let split = out
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| {
            out.stdout
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|i| (i, 2))
        })
        .expect("CGI headers");
    let head = String::from_utf8_lossy(&out.stdout[..split.0]).into_owned();
    let mut response = Response::builder();
    for line in head.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        if name.eq_ignore_ascii_case("status") {
            let code: u16 = value.trim()[..3].parse().unwrap();
            response = response.status(code);
        } else {
            response = response.header(name.trim(), value.trim());
        }
    }
    response
        .body(Body::from(out.stdout[split.0 + split.1..].to_vec()))
        .unwrap()
}

/// `git args…` in `dir` as a developer would run it; its trimmed stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Ada Lovelace")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada Lovelace")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A working copy pushing to the served bare repository `repo` (by path: the developer's
/// side needs no token here).
struct Checkout {
    dir: tempfile::TempDir,
    bare: PathBuf,
}

impl Checkout {
    fn new(server: &GitServer, repo: &str) -> Self {
        let bare = server.bare(repo);
        git(
            server.root.path(),
            &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
        );
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]);
        Self { dir, bare }
    }

    /// Writes the app's project under `sub` with the service answering as `name`, commits
    /// with `subject` and pushes `branch`; the commit's id.
    fn commit(&self, sub: &str, name: &str, subject: &str, branch: &str) -> String {
        let df = devfile(
            "gitapp",
            "echo built > BUILT",
            &[Service {
                name: "api",
                port: 8002,
                run: &format!("python3 server.py {name}"),
                depends_on: &[],
            }],
        );
        for (path, data) in project(&df) {
            let file = self.dir.path().join(sub).join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, data).unwrap();
        }
        let dir = self.dir.path();
        git(dir, &["checkout", "-q", "-B", branch]);
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "--allow-empty", "-m", subject]);
        git(
            dir,
            &[
                "push",
                "-q",
                "-f",
                self.bare.to_str().unwrap(),
                &format!("{branch}:{branch}"),
            ],
        );
        git(dir, &["rev-parse", "HEAD"])
    }

    /// Publishes the checkout's HEAD as `refname` (a forge's pull request ref).
    fn publish(&self, refname: &str) {
        git(
            self.dir.path(),
            &[
                "push",
                "-q",
                "-f",
                self.bare.to_str().unwrap(),
                &format!("HEAD:{refname}"),
            ],
        );
    }
}

async fn register(app: &TestApp, name: &str) -> String {
    app.register(&app.owner, name).await["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn connect(app: &TestApp, id: &str, body: &Value) -> (StatusCode, Value) {
    app.send(
        Method::PUT,
        &format!("/v1/apps/{id}/git"),
        Some(&app.owner),
        Some(body.to_string()),
    )
    .await
}

/// The app's deployments, newest first.
async fn deployments(app: &TestApp, id: &str) -> Vec<Value> {
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/apps/{id}/deployments"),
            Some(&app.owner),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["deployments"].as_array().unwrap().clone()
}

/// Waits (120 s at most) for a deployment of commit `sha` that is RUNNING or FAILED.
async fn wait_deployment(app: &TestApp, id: &str, sha: Option<&str>) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let all = deployments(app, id).await;
        if let Some(d) = all.iter().find(|d| {
            sha.is_none_or(|s| d["commit"]["sha"] == s)
                && (d["status"] == "RUNNING" || d["status"] == "FAILED")
        }) {
            return d.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no finished deployment of {sha:?}: {all:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Posts a GitHub delivery of `event` signed with `secret`.
async fn deliver(
    app: &TestApp,
    id: &str,
    event: &str,
    delivery: &str,
    body: &Value,
    secret: &str,
) -> (StatusCode, Value) {
    let text = body.to_string();
    let signature = format!(
        "sha256={}",
        slipway_git::hooks::sign(secret, text.as_bytes())
    );
    let r = app
        .client
        .post(format!("{}/v1/hooks/git/{id}", app.base))
        .header("content-type", "application/json")
        .header("x-github-event", event)
        .header("x-github-delivery", delivery)
        .header("x-hub-signature-256", signature)
        .body(text)
        .send()
        .await
        .unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn builds_of(app: &TestApp, id: &str) -> usize {
    let (_, body) = app
        .send(
            Method::GET,
            &format!("/v1/apps/{id}/builds"),
            Some(&app.owner),
            None,
        )
        .await;
    body["builds"].as_array().map_or(0, Vec::len)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_push_deploys_the_new_commit_and_nothing_else_does() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let server = GitServer::start().await;
        let repo = Checkout::new(&server, "shop.git");
        let first = repo.commit("", "api-v1", "First version", "main");
        let id = register(&app, "gitapp").await;

        let (status, source) = connect(
            &app,
            &id,
            &json!({"repo_url": server.url("shop.git"), "token": TOKEN}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{source}");
        assert_eq!(source["auth"], "token");
        assert_eq!(source["branch"], "main");
        assert!(
            source["webhook_url"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/v1/hooks/git/{id}")),
            "{source}"
        );
        let secret = source["webhook_secret"].as_str().unwrap().to_owned();
        assert!(
            !source.to_string().contains(TOKEN),
            "the token is never shown"
        );

        // Connecting deploys the branch's tip.
        let d = wait_deployment(&app, &id, Some(&first)).await;
        assert_eq!(d["status"], "RUNNING", "{backend:?}: {d}");
        assert_eq!(d["commit"]["branch"], "main");
        assert_eq!(d["commit"]["author"], "Ada Lovelace");
        assert_eq!(d["commit"]["subject"], "First version");
        let (_, body) = through_gateway(&app, "gitapp.localhost").await;
        assert!(body.starts_with("hello from api-v1"), "{body}");

        // A push, then its signed event: the new commit deploys.
        let second = repo.commit("", "api-v2", "Second version", "main");
        let push = json!({"ref": "refs/heads/main", "after": second, "deleted": false});
        let (status, answer) = deliver(&app, &id, "push", "d-1", &push, &secret).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
        assert!(
            answer["queued"].as_str().unwrap().contains(&second[..12]),
            "{answer}"
        );
        let d = wait_deployment(&app, &id, Some(&second)).await;
        assert_eq!(d["status"], "RUNNING", "{backend:?}: {d}");
        let (_, body) = through_gateway(&app, "gitapp.localhost").await;
        assert!(body.starts_with("hello from api-v2"), "{body}");
        let built = builds_of(&app, &id).await;

        // The same delivery again: nothing new.
        let (status, answer) = deliver(&app, &id, "push", "d-1", &push, &secret).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert!(
            answer["ignored"]
                .as_str()
                .unwrap()
                .contains("received before"),
            "{answer}"
        );
        // A push to another branch: ignored with the reason.
        let other = json!({"ref": "refs/heads/feature/x", "after": second});
        let (status, answer) = deliver(&app, &id, "push", "d-2", &other, &secret).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(
            answer["ignored"], "push to feature/x; this app deploys main",
            "{answer}"
        );
        // A push of many commits is larger than the API's 64 KiB JSON bodies: still read.
        let big = json!({"ref": "refs/heads/feature/big", "after": second,
            "commits": vec![json!({"message": "x".repeat(1000)}); 200]});
        let (status, answer) = deliver(&app, &id, "push", "d-big", &big, &secret).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert!(
            answer["ignored"].as_str().unwrap().contains("feature/big"),
            "{answer}"
        );
        // GitLab's and Gitea's deliveries, verified their way (the shared token; the HMAC
        // without a prefix).
        let gitlab = |token: &str| {
            app.client
                .post(format!("{}/v1/hooks/git/{id}", app.base))
                .header("x-gitlab-event", "Push Hook")
                .header("x-gitlab-token", token.to_owned())
                .header("idempotency-key", format!("gl-{token}"))
                .body(json!({"ref": "refs/heads/release", "after": second}).to_string())
        };
        let r = gitlab(&secret).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        let answer: Value = r.json().await.unwrap();
        assert_eq!(answer["ignored"], "push to release; this app deploys main");
        assert_eq!(
            gitlab("a-guess").send().await.unwrap().status(),
            StatusCode::UNAUTHORIZED
        );
        let ping = json!({"zen": "hi"}).to_string();
        let r = app
            .client
            .post(format!("{}/v1/hooks/git/{id}", app.base))
            .header("x-gitea-event", "push")
            .header("x-gitea-delivery", "gt-1")
            .header(
                "x-gitea-signature",
                slipway_git::hooks::sign(&secret, ping.as_bytes()),
            )
            .body(ping)
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.status(),
            StatusCode::BAD_REQUEST,
            "signed, but not a push payload"
        );
        // A tampered delivery (signed for another body) and an unsigned one: 401, nothing queued.
        let text = push.to_string();
        let signature = format!(
            "sha256={}",
            slipway_git::hooks::sign(&secret, text.as_bytes())
        );
        let tampered = text.replace("main", "mainx");
        for (body, sig) in [
            (tampered.as_str(), Some(signature.as_str())),
            (text.as_str(), None),
        ] {
            let mut req = app
                .client
                .post(format!("{}/v1/hooks/git/{id}", app.base))
                .header("x-github-event", "push")
                .header("x-github-delivery", "d-3")
                .body(body.to_owned());
            if let Some(sig) = sig {
                req = req.header("x-hub-signature-256", sig);
            }
            let r = req.send().await.unwrap();
            assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
            let answer: Value = r.json().await.unwrap();
            assert!(
                answer["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("X-Hub-Signature-256"),
                "{answer}"
            );
        }
        let (_, source) = app
            .send(
                Method::GET,
                &format!("/v1/apps/{id}/git"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(source["pending"], Value::Null, "{source}");
        assert_eq!(source["last_commit"]["sha"], second.as_str());
        assert_eq!(source["last_error"], Value::Null);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(builds_of(&app, &id).await, built, "nothing was built again");
        // A hook for an app without a source, and a hook for no app.
        let (status, _) = deliver(
            &app,
            &uuid::Uuid::new_v4().to_string(),
            "push",
            "x",
            &push,
            &secret,
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND);

        // A pull request into main: an app of its own, rebuilt on a push, gone when closed.
        let head = repo.commit("", "api-pr", "Try a change", "feature/x");
        repo.publish("refs/pull/1/head");
        let pr = |action: &str, sha: &str, base: &str| {
            json!({"action": action, "number": 1, "pull_request": {
                "title": "Try a change",
                "head": {"sha": sha, "ref": "feature/x", "repo": {"full_name": "acme/shop"}},
                "base": {"ref": base, "repo": {"full_name": "acme/shop"}}}})
        };
        let (status, answer) = deliver(
            &app,
            &id,
            "pull_request",
            "p-0",
            &pr("opened", &head, "release"),
            &secret,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert!(
            answer["ignored"].as_str().unwrap().contains("into release"),
            "{answer}"
        );
        // From a fork: its code is anyone's, so no preview.
        let mut forked = pr("opened", &head, "main");
        forked["pull_request"]["head"]["repo"]["full_name"] = json!("mallory/shop");
        let (status, answer) = deliver(&app, &id, "pull_request", "p-f", &forked, &secret).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert!(
            answer["ignored"].as_str().unwrap().contains("fork"),
            "{answer}"
        );
        let (status, answer) = deliver(
            &app,
            &id,
            "pull_request",
            "p-1",
            &pr("opened", &head, "main"),
            &secret,
        )
        .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
        assert!(
            answer["queued"].as_str().unwrap().contains("gitapp-pr-1"),
            "{answer}"
        );
        let (status, listed) = app
            .send(
                Method::GET,
                &format!("/v1/apps/{id}/previews"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{listed}");
        assert_eq!(listed["previews"][0]["number"], 1, "{listed}");
        assert_eq!(listed["previews"][0]["app_name"], "gitapp-pr-1");
        let preview = listed["previews"][0]["app_id"].as_str().unwrap().to_owned();
        let d = wait_deployment(&app, &preview, Some(&head)).await;
        assert_eq!(d["status"], "RUNNING", "{backend:?}: {d}");
        let (_, body) = through_gateway(&app, "gitapp-pr-1.localhost").await;
        assert!(body.starts_with("hello from api-pr"), "{body}");
        let (_, body) = through_gateway(&app, "gitapp.localhost").await;
        assert!(
            body.starts_with("hello from api-v2"),
            "the app itself is unchanged: {body}"
        );
        let newer = repo.commit("", "api-pr2", "Address review", "feature/x");
        repo.publish("refs/pull/1/head");
        let (status, answer) = deliver(
            &app,
            &id,
            "pull_request",
            "p-2",
            &pr("synchronize", &newer, "main"),
            &secret,
        )
        .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
        let d = wait_deployment(&app, &preview, Some(&newer)).await;
        assert_eq!(d["status"], "RUNNING", "{backend:?}: {d}");
        let (_, body) = through_gateway(&app, "gitapp-pr-1.localhost").await;
        assert!(body.starts_with("hello from api-pr2"), "{body}");
        let (status, answer) = deliver(
            &app,
            &id,
            "pull_request",
            "p-3",
            &pr("closed", &newer, "main"),
            &secret,
        )
        .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
        assert!(
            answer["queued"].as_str().unwrap().contains("deleted"),
            "{answer}"
        );
        let (status, _) = app.get_app(&app.owner, &preview).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, listed) = app
            .send(
                Method::GET,
                &format!("/v1/apps/{id}/previews"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(listed["previews"], json!([]));
        let deadline = Instant::now() + Duration::from_secs(30);
        while through_gateway(&app, "gitapp-pr-1.localhost").await.0 != StatusCode::NOT_FOUND {
            assert!(Instant::now() < deadline, "the preview still answers");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }

        // Disconnected: the app keeps serving, its hook is gone.
        let (status, _) = app
            .send(
                Method::DELETE,
                &format!("/v1/apps/{id}/git"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let (status, _) = deliver(&app, &id, "push", "d-4", &push, &secret).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, body) = through_gateway(&app, "gitapp.localhost").await;
        assert!(body.starts_with("hello from api-v2"), "{body}");
        app.finish().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn failures_are_failed_deployments_with_the_reason_and_polling_needs_no_hook() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let server = GitServer::start().await;
        let repo = Checkout::new(&server, "mono.git");
        let first = repo.commit("services/api", "poll-v1", "In a subdirectory", "main");

        // A token the forge refuses.
        let wrong = register(&app, "wrongtoken").await;
        let (status, body) = connect(
            &app,
            &wrong,
            &json!({"repo_url": server.url("mono.git"), "token": "not-the-token"}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let d = wait_deployment(&app, &wrong, None).await;
        assert_eq!(d["status"], "FAILED", "{d}");
        let reason = d["reason"].as_str().unwrap();
        assert!(reason.contains("refused the credential"), "{reason}");
        assert!(!reason.contains("not-the-token"), "{reason}");
        assert_eq!(d["services"], json!([]));

        // A commit without the devfile's directory.
        let nodir = register(&app, "nodir").await;
        let (status, body) = connect(
            &app,
            &nodir,
            &json!({"repo_url": server.url("mono.git"), "token": TOKEN, "path": "services/web"}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let d = wait_deployment(&app, &nodir, Some(&first)).await;
        assert_eq!(d["status"], "FAILED", "{d}");
        assert!(
            d["reason"].as_str().unwrap().contains("services/web"),
            "{d}"
        );
        let (_, source) = app
            .send(
                Method::GET,
                &format!("/v1/apps/{nodir}/git"),
                Some(&app.owner),
                None,
            )
            .await;
        assert!(
            source["last_error"]
                .as_str()
                .unwrap()
                .contains("services/web"),
            "{source}"
        );

        // Bad requests name the field and change nothing.
        for (body, field) in [
            (json!({"repo_url": "/srv/git/mono.git"}), "repo_url"),
            (json!({"repo_url": "https://u:p@h/a"}), "repo_url"),
            (
                json!({"repo_url": server.url("mono.git"), "auth": "token"}),
                "token",
            ),
            (
                json!({"repo_url": server.url("mono.git"), "path": "../etc"}),
                "path",
            ),
            (
                json!({"repo_url": server.url("mono.git"), "poll_interval_seconds": 1}),
                "poll_interval_seconds",
            ),
        ] {
            let (status, answer) = connect(&app, &nodir, &body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
            assert_eq!(answer["error"]["field"], field, "{answer}");
        }

        // Polling: the new commit deploys with no webhook.
        let polled = register(&app, "polled").await;
        let (status, body) = connect(
            &app,
            &polled,
            &json!({"repo_url": server.url("mono.git"), "token": TOKEN, "path": "services/api", "poll_interval_seconds": 10}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let d = wait_deployment(&app, &polled, Some(&first)).await;
        assert_eq!(d["status"], "RUNNING", "{backend:?}: {d}");
        let second = repo.commit("services/api", "poll-v2", "Polled", "main");
        let d = wait_deployment(&app, &polled, Some(&second)).await;
        assert_eq!(d["status"], "RUNNING", "{backend:?}: {d}");
        let (_, body) = through_gateway(&app, "polled.localhost").await;
        assert!(body.starts_with("hello from poll-v2"), "{body}");
        app.finish().await;
    }
}

/// An OpenSSH server on a loopback port for this test alone: its own host key, and the
/// keys `authorized_keys` lists (empty at first), for the user running the test.
struct SshServer {
    port: u16,
    dir: tempfile::TempDir,
    child: std::process::Child,
}

impl SshServer {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let host_key = dir.path().join("host_ed25519");
        let out = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(&host_key)
            .output()
            .unwrap();
        assert!(out.status.success());
        std::fs::write(dir.path().join("authorized_keys"), "").unwrap();
        // sshd refuses to start without its privilege separation directory.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = dir.path().join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                 PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nStrictModes no\n\
                 UsePAM no\nPidFile {}\n",
                host_key.display(),
                dir.path().join("authorized_keys").display(),
                dir.path().join("sshd.pid").display(),
            ),
        )
        .unwrap();
        let child = std::process::Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("sshd (openssh-server) runs");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "sshd never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { port, dir, child }
    }

    fn authorize(&self, public_key: &str) {
        std::fs::write(
            self.dir.path().join("authorized_keys"),
            format!("{public_key}\n"),
        )
        .unwrap();
    }
}

impl Drop for SshServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deploy_key_reads_a_repository_over_ssh_once_it_is_added() {
    let backend = backends().remove(0);
    let app = spawn_app(backend).await;
    let server = GitServer::start().await;
    let repo = Checkout::new(&server, "keyed.git");
    let sha = repo.commit("", "api-ssh", "Over SSH", "main");
    let ssh = SshServer::start();
    let user = String::from_utf8(
        std::process::Command::new("id")
            .arg("-un")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let url = format!(
        "ssh://{}@127.0.0.1:{}{}",
        user.trim(),
        ssh.port,
        server.bare("keyed.git").display()
    );
    let id = register(&app, "keyed").await;
    let (status, source) = connect(&app, &id, &json!({"repo_url": url})).await;
    assert_eq!(status, StatusCode::OK, "{source}");
    assert_eq!(source["auth"], "deploy_key");
    let key = source["deploy_key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("ssh-ed25519 "), "{key}");

    // Not added to the repository yet: the server refuses it, and the deployment says so.
    let d = wait_deployment(&app, &id, None).await;
    assert_eq!(d["status"], "FAILED", "{d}");
    assert!(
        d["reason"]
            .as_str()
            .unwrap()
            .contains("refused the credential"),
        "{d}"
    );

    // Added: deploying again reads the repository with it.
    ssh.authorize(&key);
    let (status, answer) = app
        .send(
            Method::POST,
            &format!("/v1/apps/{id}/git/deploy"),
            Some(&app.owner),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    let d = wait_deployment(&app, &id, Some(&sha)).await;
    assert_eq!(d["status"], "RUNNING", "{d}");
    let (_, body) = through_gateway(&app, "keyed.localhost").await;
    assert!(body.starts_with("hello from api-ssh"), "{body}");
    app.finish().await;
}
