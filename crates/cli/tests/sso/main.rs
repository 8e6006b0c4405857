//! Single sign-on end to end (docs/people.md, "Single sign-on"): a real OpenID provider (the
//! certified `oidc-provider` npm package with its development login form, started by
//! tests/oidc/provider.mjs), the real `slipway platform serve` as its relying party, and the
//! real `slipway login --sso --no-browser`, with this test as the person's browser. The
//! provider's login form is the only page typed into; everything else is redirects.
//!
//! One platform (SQLite, and PostgreSQL with `SLIPWAY_TEST_PG_URL`) with
//! `--oidc-allowed-domains example.com`:
//! - alice@example.org, invited by the admin, signs in through the CLI and is a member; the
//!   invite is used; she signs in again as the same person;
//! - bob@other.org, neither invited nor in an allowed domain, is refused: the CLI exits
//!   non-zero and says why, the browser's page says why, nobody is created;
//! - dave@example.com (allowed domain) joins as a member;
//! - carol+unverified@example.com (allowed domain, unverified e-mail) is refused.
//!
//! The audit has `sso.signed_in` and `sso.refused`; the platform's log (at debug) quotes no
//! client secret, authorization code, one-time code or token.
//!
//! The provider needs Node 20.19+ and `npm ci` in tests/oidc (.ci/run does it). Without
//! them the test fails under CI and is skipped loudly elsewhere.

#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one scenario; the 100-line limit is for production code"
)]

mod browser;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use slipway_server::testing::{Backend, TestDatabase, backends};

use browser::{Browser, Visit, query_param, request, unescape};

/// The client the provider knows the platform as.
const CLIENT_ID: &str = "slipway-sso-test";
/// What `slipway login --sso --no-browser` prints before the sign-in address.
const OPEN_LINE: &str = "Open this address in a browser to sign in:";

fn oidc_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/oidc")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// 32 random hex digits.
fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("/dev/urandom");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether the provider can run here. Under CI a missing piece fails the test: CI must not
/// pass with SSO untested.
fn provider_installed() -> bool {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let modules = oidc_dir().join("node_modules/oidc-provider/package.json");
    let missing = if !node {
        "`node` is not on PATH"
    } else if !modules.is_file() {
        "tests/oidc/node_modules is missing"
    } else {
        return true;
    };
    assert!(
        std::env::var_os("CI").is_none(),
        "{missing}: under CI the SSO end-to-end test must run (.ci/run installs it with \
         `npm ci` in tests/oidc)"
    );
    // Straight to the process's stderr: libtest captures `eprintln!` of a passing test.
    let _ = writeln!(
        std::io::stderr(),
        "\n!!!!!!!! SKIPPING the SSO end-to-end test: {missing}.\n\
         !!!!!!!! Install Node 20.19+ and run `npm ci --prefix tests/oidc` to include it.\n"
    );
    false
}

/// The OpenID provider process; it exits when its stdin closes, so dropping this (also in a
/// panic) ends it.
struct Provider {
    child: Child,
    stdin: Option<ChildStdin>,
    issuer: String,
}

impl Provider {
    fn start(redirect_uri: &str, secret: &str) -> Self {
        Self::start_with(redirect_uri, secret, &[])
    }

    /// Starts it with extra flags of provider.mjs (`--userinfo-claims`).
    fn start_with(redirect_uri: &str, secret: &str, flags: &[&str]) -> Self {
        let mut child = Command::new("node")
            .arg("provider.mjs")
            .args(["--client-id", CLIENT_ID, "--redirect-uri", redirect_uri])
            .args(flags)
            .env("OIDC_CLIENT_SECRET", secret)
            .current_dir(oidc_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node tests/oidc/provider.mjs starts");
        let stdin = child.stdin.take();
        let stderr = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            // Its notices and warnings (development adapter, login form, defaults) are expected.
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !line.starts_with("oidc-provider ") {
                    eprintln!("provider: {line}");
                }
            }
        });
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            let mut line = String::new();
            let _ = stdout.read_line(&mut line);
            let _ = tx.send(line);
            // Read on to the end: a closed pipe would kill a provider that writes again.
            let _ = std::io::copy(&mut stdout, &mut std::io::sink());
        });
        let mut provider = Self {
            child,
            stdin,
            issuer: String::new(),
        };
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the provider prints its issuer within a minute");
        let issuer: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the provider's first line is not JSON ({e}): {line:?}"));
        provider.issuer = issuer["issuer"]
            .as_str()
            .unwrap_or_else(|| panic!("no issuer in {line:?}"))
            .to_owned();
        provider
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `slipway platform serve` with SSO; stopped with SIGTERM when dropped.
struct Platform {
    child: Child,
    url: String,
    admin: String,
    log: PathBuf,
}

impl Platform {
    /// Serves on `port` as `url` (known before, since the provider needs the callback).
    fn serve(
        dir: &Path,
        port: u16,
        url: &str,
        issuer: &str,
        secret: &str,
        database: Option<&str>,
    ) -> Self {
        let data = dir.join("platform");
        let secret_file = dir.join("oidc-secret");
        std::fs::write(&secret_file, format!("{secret}\n")).expect("write the client secret");
        let log = dir.join("platform.log");
        let mut command = Command::new(env!("CARGO_BIN_EXE_slipway"));
        command
            .args(["platform", "serve", "--builder", "native", "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["--gateway-listen", "127.0.0.1:0", "--data-dir"])
            .arg(&data)
            .args(["--public-url", url, "--oidc-issuer", issuer])
            .args(["--oidc-client-id", CLIENT_ID, "--oidc-client-secret-file"])
            .arg(&secret_file)
            .args(["--oidc-allowed-domains", "example.com"]);
        if let Some(database) = database {
            command.args(["--database-url", database]);
        }
        let child = command
            .env("RUST_LOG", "debug")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("slipway platform serve starts");
        let mut platform = Self {
            child,
            url: url.to_owned(),
            admin: String::new(),
            log,
        };
        let token_file = data.join("bootstrap-token");
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            if let Ok(Some(status)) = platform.child.try_wait() {
                panic!(
                    "the platform exited ({status}) before it was ready:\n{}",
                    platform.log_text()
                );
            }
            let token = std::fs::read_to_string(&token_file).unwrap_or_default();
            if !token.trim().is_empty() && std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            {
                platform.admin = token.trim().to_owned();
                return platform;
            }
            assert!(Instant::now() < deadline, "the platform never became ready");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A JSON call with the bootstrap admin's token: (status, body).
    fn admin(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        call(&self.url, &self.admin, method, path, body)
    }

    fn people(&self) -> Vec<Value> {
        let (status, body) = self.admin("GET", "/v1/account/users", None);
        assert_eq!(status, 200, "{body}");
        body["users"].as_array().cloned().unwrap_or_default()
    }

    fn person(&self, email: &str) -> Option<Value> {
        self.people().into_iter().find(|p| {
            p["email"]
                .as_str()
                .is_some_and(|e| e.eq_ignore_ascii_case(email))
        })
    }

    fn audit(&self) -> Vec<Value> {
        let (status, body) = self.admin("GET", "/v1/account/audit?limit=500", None);
        assert_eq!(status, 200, "{body}");
        body["entries"].as_array().cloned().unwrap_or_default()
    }

    /// The audit entries with `action` about `subject`.
    fn audited(&self, action: &str, subject: &str) -> Vec<Value> {
        self.audit()
            .into_iter()
            .filter(|e| e["action"] == action && e["subject"] == subject)
            .collect()
    }
}

impl Drop for Platform {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A JSON request with a bearer token: (status, body or Null).
fn call(base: &str, token: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let auth = format!("Bearer {token}");
    let text = body.map(Value::to_string);
    let response = request(
        method,
        &format!("{base}{path}"),
        &[("Authorization", &auth), ("Accept", "application/json")],
        text.as_deref().map(|t| ("application/json", t)),
    );
    (
        response.status,
        serde_json::from_str(&response.body).unwrap_or(Value::Null),
    )
}

/// One person's machine: a home and config directory of its own, tokens kept in a file.
struct Machine {
    home: tempfile::TempDir,
}

impl Machine {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().expect("home"),
        }
    }

    fn slipway(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_slipway"));
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("SLIPWAY_") || key == "DBUS_SESSION_BUS_ADDRESS" {
                command.env_remove(key);
            }
        }
        let home = self.home.path();
        command
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("SLIPWAY_TOKEN_STORE", "file")
            .env("RUST_LOG", "error")
            .current_dir(home);
        command
    }

    /// The token `slipway login` kept for the default environment.
    fn saved_token(&self) -> Option<String> {
        let path = self.home.path().join(".config/slipway/tokens/production");
        std::fs::read_to_string(path)
            .ok()
            .map(|t| t.trim().to_owned())
    }

    /// `slipway whoami`: (success, stdout + stderr).
    fn whoami(&self) -> (bool, String) {
        let out = self
            .slipway()
            .arg("whoami")
            .output()
            .expect("slipway whoami");
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }

    /// `slipway login --sso --url <platform> --no-browser`, with this test as the browser that
    /// opens the printed address and signs in on the provider's form as `login`.
    fn sign_in(&self, platform: &str, login: &str) -> SignIn {
        let mut child = self
            .slipway()
            .args(["login", "--sso", "--url", platform, "--no-browser"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("slipway login --sso starts");
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().expect("stderr");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let mut printed = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        let address = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = lines.recv_timeout(left) else {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "slipway login --sso printed no sign-in address after {OPEN_LINE:?}:\n{}\n{}",
                    printed.join("\n"),
                    stderr.join().unwrap_or_default()
                );
            };
            let after_open = printed
                .last()
                .is_some_and(|l: &String| l.trim() == OPEN_LINE);
            printed.push(line.clone());
            if after_open {
                break line.trim().to_owned();
            }
        };
        assert!(
            address.starts_with(&format!("{platform}/auth/oidc/start?")),
            "the sign-in address is the platform's start route: {address}"
        );

        let mut browser = Browser::default();
        let form = browser.go("GET", &address, None);
        assert_eq!(
            form.response.status, 200,
            "the provider's login form: {form:?}"
        );
        let end = browser.submit_login(&form, login);

        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "slipway login --sso did not end after the browser came back ({}):\n{}",
                    end.url,
                    printed.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        printed.extend(lines.try_iter());
        let output = format!(
            "{}\n{}",
            printed.join("\n"),
            stderr.join().unwrap_or_default()
        );
        let mut hops = form.hops.clone();
        hops.extend(end.hops.iter().cloned());
        SignIn {
            status,
            output,
            end,
            hops,
        }
    }
}

/// What one `slipway login --sso` came to.
struct SignIn {
    status: ExitStatus,
    /// The CLI's standard output and error.
    output: String,
    /// The browser's last page: the CLI's loopback answer.
    end: Visit,
    /// Every address the browser visited.
    hops: Vec<String>,
}

impl SignIn {
    /// The address the platform sent the browser back to (the CLI's loopback `return_to`).
    fn callback(&self) -> &str {
        assert!(
            self.end.url.contains("/callback?"),
            "the browser ended at the CLI's loopback callback: {:?}",
            self.hops
        );
        &self.end.url
    }

    /// Every `code` that passed through the browser (the provider's and the platform's).
    fn codes(&self) -> Vec<String> {
        self.hops
            .iter()
            .filter_map(|h| query_param(h, "code"))
            .collect()
    }

    fn assert_signed_in(&self, email: &str) {
        assert!(
            self.status.success(),
            "slipway login --sso for {email} failed ({}):\n{}\nbrowser: {:?}",
            self.status,
            self.output,
            self.hops
        );
        let callback = self.callback();
        assert!(query_param(callback, "error").is_none(), "{callback}");
        assert!(query_param(callback, "code").is_some(), "{callback}");
        assert_eq!(self.end.response.status, 200, "{:?}", self.end.response);
        assert!(
            unescape(&self.end.response.body).contains(email),
            "the loopback page names who signed in: {}",
            self.end.response.body
        );
    }

    /// The refusal's reason, after checking the CLI and the browser's page both say it.
    fn assert_refused(&self, email: &str) -> String {
        assert!(
            !self.status.success(),
            "slipway login --sso for {email} must fail:\n{}",
            self.output
        );
        let callback = self.callback();
        assert_eq!(
            query_param(callback, "error").as_deref(),
            Some("access_denied"),
            "{callback}"
        );
        assert!(query_param(callback, "code").is_none(), "{callback}");
        let reason = query_param(callback, "error_description").unwrap_or_default();
        assert!(!reason.trim().is_empty(), "a refusal says why: {callback}");
        assert!(
            unescape(&self.end.response.body).contains(&reason),
            "the loopback page says why ({reason}): {}",
            self.end.response.body
        );
        assert_ne!(self.end.response.status, 200);
        assert!(
            self.output.contains(&reason),
            "the CLI says why ({reason}):\n{}",
            self.output
        );
        reason
    }
}

#[test]
fn sso_signs_in_invited_and_allowed_people_through_the_cli_and_refuses_others() {
    if !provider_installed() {
        return;
    }
    for backend in backends("SSO end-to-end") {
        scenario(backend);
    }
}

/// A provider that keeps the e-mail out of the ID token (as the spec allows for the code
/// flow) is asked at its userinfo endpoint, for the same subject.
#[test]
fn sso_reads_the_email_from_userinfo_when_the_id_token_has_none() {
    if !provider_installed() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let secret = random_hex();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let provider = Provider::start_with(
        &format!("{url}/auth/oidc/callback"),
        &secret,
        &["--userinfo-claims"],
    );
    let _platform = Platform::serve(dir.path(), port, &url, &provider.issuer, &secret, None);
    let erin = Machine::new();
    erin.sign_in(&url, "erin@example.com")
        .assert_signed_in("erin@example.com");
    let refused = Machine::new().sign_in(&url, "frank+unverified@example.com");
    let reason = refused.assert_refused("frank+unverified@example.com");
    assert!(reason.contains("verified"), "{reason}");
}

fn scenario(backend: Backend) {
    let dir = tempfile::tempdir().expect("tempdir");
    let database = (backend == Backend::Postgres).then(|| {
        tokio::runtime::Runtime::new()
            .expect("runtime")
            .block_on(TestDatabase::create("sso_test"))
    });
    let secret = random_hex();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let provider = Provider::start(&format!("{url}/auth/oidc/callback"), &secret);
    let platform = Platform::serve(
        dir.path(),
        port,
        &url,
        &provider.issuer,
        &secret,
        database.as_ref().map(TestDatabase::url),
    );
    let mut seen_secrets = vec![secret.clone(), platform.admin.clone()];

    let sso = request("GET", &format!("{url}/v1/auth/sso"), &[], None);
    let sso: Value = serde_json::from_str(&sso.body).expect("GET /v1/auth/sso answers JSON");
    assert_eq!(sso, json!({"enabled": true, "issuer": provider.issuer}));

    // alice is invited, signs in through the CLI, and is a member.
    let (status, invite) = platform.admin(
        "POST",
        "/v1/account/invites",
        Some(&json!({"email": "alice@example.org"})),
    );
    assert_eq!(status, 201, "{invite}");
    seen_secrets.extend(invite["code"].as_str().map(str::to_owned));
    let alice = Machine::new();
    let signed_in = alice.sign_in(&url, "alice@example.org");
    signed_in.assert_signed_in("alice@example.org");
    seen_secrets.extend(signed_in.codes());
    let token = alice.saved_token().expect("the CLI kept alice's token");
    seen_secrets.push(token.clone());
    let (ok, who) = alice.whoami();
    assert!(ok, "slipway whoami: {who}");
    assert!(who.contains("<alice@example.org>"), "slipway whoami: {who}");
    let person = platform
        .person("alice@example.org")
        .expect("alice is a person");
    assert_eq!(person["role"], "member", "{person}");
    let (_, invites) = platform.admin("GET", "/v1/account/invites", None);
    assert!(
        !invites.to_string().contains("alice@example.org"),
        "the sign-in used alice's invite: {invites}"
    );
    let (status, tokens) = call(&url, &token, "GET", "/v1/tokens", None);
    assert_eq!(status, 200, "{tokens}");
    let sso_token = tokens["tokens"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["current"] == true))
        .unwrap_or_else(|| panic!("the CLI's token is one of alice's: {tokens}"));
    assert_eq!(sso_token["name"], "SSO sign-in", "{sso_token}");
    assert!(sso_token["expires_at"].is_string(), "{sso_token}");
    assert_eq!(
        platform.audited("sso.signed_in", "alice@example.org").len(),
        1
    );

    // alice again, from another machine: the same person, a second sign-in.
    let alice_laptop = Machine::new();
    let again = alice_laptop.sign_in(&url, "alice@example.org");
    again.assert_signed_in("alice@example.org");
    seen_secrets.extend(again.codes());
    seen_secrets.extend(alice_laptop.saved_token());
    let same = platform.person("alice@example.org").expect("alice");
    assert_eq!(same["id"], person["id"], "the same person signs in again");
    assert_eq!(
        platform.audited("sso.signed_in", "alice@example.org").len(),
        2
    );

    // bob is neither invited nor in an allowed domain: refused, nothing created.
    let people_before = platform.people().len();
    let bob = Machine::new();
    let refused = bob.sign_in(&url, "bob@other.org");
    let reason = refused.assert_refused("bob@other.org");
    seen_secrets.extend(refused.codes());
    assert!(bob.saved_token().is_none(), "no token is kept for bob");
    assert!(
        platform.person("bob@other.org").is_none(),
        "bob was created"
    );
    assert_eq!(platform.people().len(), people_before);
    let entries = platform.audited("sso.refused", "bob@other.org");
    assert_eq!(entries.len(), 1, "{:?}", platform.audit());
    assert!(entries[0]["detail"].is_string(), "{}", entries[0]);
    eprintln!("bob@other.org was refused: {reason}");

    // dave's domain is allowed: he joins as a member.
    let dave = Machine::new();
    let joined = dave.sign_in(&url, "dave@example.com");
    joined.assert_signed_in("dave@example.com");
    seen_secrets.extend(joined.codes());
    seen_secrets.extend(dave.saved_token());
    let person = platform.person("dave@example.com").expect("dave joined");
    assert_eq!(person["role"], "member", "{person}");
    let (ok, who) = dave.whoami();
    assert!(ok && who.contains("<dave@example.com>"), "{who}");

    // carol's domain is allowed but the provider has not verified her address: refused.
    let carol = Machine::new();
    let refused = carol.sign_in(&url, "carol+unverified@example.com");
    let reason = refused.assert_refused("carol+unverified@example.com");
    seen_secrets.extend(refused.codes());
    assert!(
        reason.to_lowercase().contains("verif"),
        "the refusal names the unverified e-mail: {reason}"
    );
    assert!(platform.person("carol+unverified@example.com").is_none());
    assert_eq!(
        platform
            .audited("sso.refused", "carol+unverified@example.com")
            .len(),
        1
    );

    // Nothing secret reached the platform's log, even at debug.
    let log = platform.log_text();
    assert!(
        log.contains("/auth/oidc/callback"),
        "the platform logs its requests at debug, so the scan below covers the sign-ins"
    );
    for secret in seen_secrets.iter().filter(|s| s.len() >= 8) {
        assert!(
            !log.contains(secret.as_str()),
            "the platform's log quotes a secret, code or token ({}…)",
            &secret[..4]
        );
    }
    drop(platform);
    drop(provider);
    drop(database);
}
