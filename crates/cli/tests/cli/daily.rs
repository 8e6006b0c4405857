//! The daily path against a real platform process: new → build → status --watch → logs; and
//! a platform process killed outright leaves no service running twice after its restart.

use std::path::Path;
use std::process::{Child, Command, Output};

pub(crate) struct Server(pub(crate) Child);

impl Server {
    /// SIGTERM, as a service manager stops it: the server stops its deployed services first.
    pub(crate) fn terminate(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.terminate();
    }
}

pub(crate) fn serve(data: &Path, port: u16, gateway: u16) -> Server {
    serve_on(data, None, port, gateway)
}

/// [`serve`] with its state in `database_url` (PostgreSQL) when given.
pub(crate) fn serve_on(data: &Path, database_url: Option<&str>, port: u16, gateway: u16) -> Server {
    serve_with(data, database_url, port, gateway, &[])
}

/// [`serve_on`] with more flags.
pub(crate) fn serve_with(
    data: &Path,
    database_url: Option<&str>,
    port: u16,
    gateway: u16,
    extra: &[&str],
) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_slipway"));
    command
        .args(["platform", "serve", "--builder", "native", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--gateway-listen")
        .arg(format!("127.0.0.1:{gateway}"))
        .arg("--data-dir")
        .arg(data)
        .env("RUST_LOG", "error")
        .args(extra);
    if let Some(url) = database_url {
        command.args(["--database-url", url]);
    }
    let server = Server(command.spawn().unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the platform never listened"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    server
}

/// A plain HTTP/1.1 `GET path` to `addr` with the `Host` header `host`; the whole answer.
pub(crate) fn http_get(addr: &str, host: &str, path: &str) -> String {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

/// `GET /` through the gateway for `host`; the body.
pub(crate) fn through_gateway(gateway: u16, host: &str) -> String {
    http_get(
        &format!("127.0.0.1:{gateway}"),
        &format!("{host}:{gateway}"),
        "/",
    )
    .split_once("\r\n\r\n")
    .map(|(_, body)| body.to_owned())
    .unwrap_or_default()
}

const PID_SERVER: &str = "import http.server, os\n\
class H(http.server.BaseHTTPRequestHandler):\n    \
def do_GET(self):\n        \
body = ('pid %d' % os.getpid()).encode()\n        \
self.send_response(200); self.send_header('content-length', str(len(body))); self.end_headers()\n        \
self.wfile.write(body)\n    \
def log_message(self, *a):\n        pass\n\
http.server.HTTPServer(('127.0.0.1', int(os.environ['PORT'])), H).serve_forever()\n";

const PID_DEVFILE: &str = r#"schemaVersion: 2.2.0
metadata:
  name: orphans
  displayName: Orphans
components:
  - name: api-image
    image:
      imageName: api
      dockerfile:
        uri: Dockerfile
        buildContext: .
  - name: api
    container:
      image: api
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

#[test]
fn a_killed_platform_leaves_no_service_running_twice() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("platform");
    let (port, gateway) = (free_port(), free_port());
    let mut server = serve(&data, port, gateway);
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
    let project = work.path().join("orphans");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("devfile.yaml"), PID_DEVFILE).unwrap();
    std::fs::write(project.join("server.py"), PID_SERVER).unwrap();
    std::fs::write(
        project.join("Dockerfile"),
        "FROM scratch\nCOPY . /app\nEXPOSE 8002\n",
    )
    .unwrap();
    let out = slipway(&project, &env, &["build"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = slipway(&project, &env, &["status", "--watch"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("RUNNING"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let first = through_gateway(gateway, "orphans.localhost");
    let pid = first.trim_start_matches("pid ").to_owned();
    assert!(pid.parse::<u32>().is_ok(), "{first}");
    let alive = |pid: &str| std::path::Path::new(&format!("/proc/{pid}")).exists();

    // Killed outright, the server cannot stop its services: they outlive it.
    let _ = server.0.kill();
    let _ = server.0.wait();
    assert!(alive(&pid), "the service outlives a killed server");

    // The next start stops them before bringing the app back: one instance, a new one.
    let mut server = serve(&data, port, gateway);
    let out = slipway(&project, &env, &["status", "--watch"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("RUNNING"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while alive(&pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!alive(&pid), "the orphan of the killed server was stopped");
    let second = through_gateway(gateway, "orphans.localhost");
    let new_pid = second.trim_start_matches("pid ").to_owned();
    assert_ne!(new_pid, pid, "{second}");

    // A polite stop takes the services with it.
    server.terminate();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while alive(&new_pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        !alive(&new_pid),
        "SIGTERM stops the services too: {}",
        std::fs::read_to_string(format!("/proc/{new_pid}/status")).unwrap_or_default()
    );
}

/// A platform serving `work/platform` (native builder); its gateway port and the
/// `SLIPWAY_PLATFORM_URL`/`SLIPWAY_TOKEN` environment of its owner.
pub(crate) fn platform(work: &Path) -> (Server, u16, [(&'static str, String); 2]) {
    let data = work.join("platform");
    let (port, gateway) = (free_port(), free_port());
    let server = serve(&data, port, gateway);
    let token_file = data.join("bootstrap-token");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !token_file.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let token = std::fs::read_to_string(&token_file)
        .unwrap()
        .trim()
        .to_owned();
    let env = [
        ("SLIPWAY_PLATFORM_URL", format!("http://127.0.0.1:{port}")),
        ("SLIPWAY_TOKEN", token),
    ];
    (server, gateway, env)
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) fn slipway(dir: &Path, env: &[(&str, String)], args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_slipway"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("BUILDER_HOST")
        .env_remove("SLIPWAY_PLATFORM_URL")
        .env_remove("SLIPWAY_TOKEN");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// Starts `slipway <args>` in `dir` (with `NO_COLOR`) and reads its standard output on a
/// thread, a line at a time.
pub(crate) fn spawn_lines(
    dir: &Path,
    env: &[(&str, String)],
    args: &[&str],
) -> (Server, std::sync::mpsc::Receiver<String>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_slipway"));
    command
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .env("NO_COLOR", "1");
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = Server(command.spawn().unwrap());
    let stdout = child.0.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    (child, received)
}

#[test]
fn new_build_status_logs() {
    let work = tempfile::tempdir().unwrap();
    let (_server, _gateway, env) = platform(work.path());

    let out = slipway(
        work.path(),
        &env,
        &["new", "daily", "--template", "python-api"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Next: cd"));
    let project = work.path().join("daily");

    let out = slipway(&project, &env, &["build"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for step in [
        "packing the build context",
        "uploading",
        "building 1 service(s)",
    ] {
        assert!(stderr.contains(step), "progress lacks {step:?}: {stderr}");
    }
    assert!(stdout.contains("Built app "), "{stdout}");
    let app_id = stdout
        .split("Built app ")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .trim()
        .to_owned();
    std::fs::write(
        project.join(".app"),
        format!("{{\"app_id\":\"{app_id}\",\"name\":\"daily\",\"platform_url\":\"x\"}}"),
    )
    .unwrap();
    assert!(
        std::fs::read_to_string(project.join("devfile.yaml"))
            .unwrap()
            .contains("imageUri: ")
    );

    let out = slipway(&project, &env, &["status", "--watch"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout
            .lines()
            .last()
            .unwrap()
            .starts_with("RUNNING  http://127.0.0.1:"),
        "{stdout}"
    );

    let out = slipway(&project, &env, &["logs"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("=== api build") && stdout.contains("=== api runtime"),
        "{stdout}"
    );

    // `logs -f` follows both logs live, each line prefixed with its service.
    let (mut follower, received) = spawn_lines(&project, &env, &["logs", "-f", "--tail", "50"]);
    let (mut build_line, mut runtime_line) = (false, false);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !(build_line && runtime_line) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = received
            .recv_timeout(left)
            .expect("logs -f prints a build line and a runtime line");
        build_line |= line.starts_with("api build | ");
        runtime_line |= line.starts_with("api       | ");
    }
    follower.terminate();

    // The history shows the one deployment (started by the build), and `why` explains a
    // healthy app without inventing a failure; a rollback with nothing earlier says so.
    let out = slipway(&project, &env, &["deployments"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert_eq!(
        stdout.lines().filter(|l| l.contains(" RUNNING ")).count(),
        1,
        "{stdout}"
    );
    assert!(stdout.contains(" build "), "{stdout}");
    let out = slipway(&project, &env, &["why"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.starts_with("status: RUNNING"), "{stdout}");
    assert!(!stdout.contains("log ends"), "{stdout}");
    let out = slipway(&project, &env, &["rollback"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no earlier deployment that ran well"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = slipway(
        work.path(),
        &[],
        &["status", "00000000-0000-4000-8000-000000000000"],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("SLIPWAY_PLATFORM_URL"));
}

/// Without a keyring service (forced here with SLIPWAY_TOKEN_STORE=file, as on a headless
/// machine) `login` keeps the token in a 0600 file; `whoami` shows whose it is; `logout`
/// forgets it, after which the tools say to log in again.
#[test]
fn login_whoami_logout_with_the_file_store() {
    use std::os::unix::fs::PermissionsExt;
    let work = tempfile::tempdir().unwrap();
    let (_server, _gateway, env) = platform(work.path());
    let config = work.path().join("config");
    let token_file = work.path().join("token");
    std::fs::write(&token_file, format!("{}\n", env[1].1)).unwrap();
    let store = [
        ("SLIPWAY_CONFIG_DIR", config.display().to_string()),
        ("SLIPWAY_TOKEN_STORE", "file".to_owned()),
    ];
    let run = |args: &[&str]| {
        let out = slipway(work.path(), &store, args);
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let url = env[0].1.as_str();
    let (ok, stdout, stderr) = run(&[
        "login",
        "--url",
        url,
        "--token-file",
        token_file.to_str().unwrap(),
        "--environment",
        "staging",
    ]);
    assert!(ok, "{stderr}");
    let stored = config.join("tokens").join("staging");
    assert!(stdout.contains(&stored.display().to_string()), "{stdout}");
    let mode = std::fs::metadata(&stored).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    let (ok, stdout, stderr) = run(&["whoami", "--environment", "staging"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains(url) && stdout.contains('@'), "{stdout}");

    let (ok, stdout, stderr) = run(&["call", "list_apps", r#"{"environment": "staging"}"#]);
    assert!(ok, "{stdout}{stderr}");

    let (ok, _, stderr) = run(&["logout", "--environment", "staging"]);
    assert!(ok, "{stderr}");
    assert!(!stored.exists());
    let (ok, _, stderr) = run(&["whoami", "--environment", "staging"]);
    assert!(!ok);
    assert!(stderr.contains("slipway login"), "{stderr}");
    let (ok, _, stderr) = run(&["logout", "--environment", "bad name"]);
    assert!(!ok);
    assert!(stderr.contains("environment"), "{stderr}");
}
