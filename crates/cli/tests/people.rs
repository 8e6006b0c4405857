//! `slipway people`, `slipway tokens` and `slipway login --invite` end to end: the real
//! `slipway` binary against a real `slipway platform serve`, on SQLite and, with
//! `SLIPWAY_TEST_PG_URL`, on PostgreSQL. The bootstrap admin invites people; each invited
//! person signs in from a home directory of their own (file token store); roles change,
//! tokens are made and revoked, a person is removed, and the audit tells it all without a
//! code or a token in it.

#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one scenario; the 100-line limit is for production code"
)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::Value;
use slipway_server::testing::{Backend, TestDatabase, backends};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `slipway platform serve` process, stopped on drop.
struct Platform {
    child: Child,
    url: String,
    data: PathBuf,
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

fn serve(data: &Path, database_url: Option<&str>) -> Platform {
    let (port, gateway) = (free_port(), free_port());
    let mut command = Command::new(env!("CARGO_BIN_EXE_slipway"));
    command
        .args(["platform", "serve", "--builder", "native", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--gateway-listen")
        .arg(format!("127.0.0.1:{gateway}"))
        .arg("--data-dir")
        .arg(data)
        .env("RUST_LOG", "error");
    if let Some(url) = database_url {
        command.args(["--database-url", url]);
    }
    let mut platform = Platform {
        child: command.spawn().unwrap(),
        url: format!("http://127.0.0.1:{port}"),
        data: data.to_owned(),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err()
        || !data.join("bootstrap-token").exists()
    {
        assert!(
            platform.child.try_wait().unwrap().is_none(),
            "the platform exited before it listened"
        );
        assert!(Instant::now() < deadline, "the platform never listened");
        std::thread::sleep(Duration::from_millis(100));
    }
    platform
}

/// Someone at a machine of their own: a home and config directory nobody else uses, tokens
/// in files (no keyring in a test).
struct Person {
    home: tempfile::TempDir,
}

/// One run of `slipway`: whether it succeeded, and what it printed.
#[derive(Debug)]
struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl Run {
    #[track_caller]
    fn succeeded(self) -> Self {
        assert!(self.ok, "{self:?}");
        self
    }

    #[track_caller]
    fn failed(self) -> Self {
        assert!(!self.ok, "{self:?}");
        self
    }

    #[track_caller]
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }
}

impl Person {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn token_file(&self) -> PathBuf {
        self.home.path().join("config/slipway/tokens/production")
    }

    fn slipway_with(&self, extra_env: &[(&str, &str)], args: &[&str]) -> Run {
        let home = self.home.path();
        let mut command = Command::new(env!("CARGO_BIN_EXE_slipway"));
        command
            .args(args)
            .current_dir(home)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env("SLIPWAY_TOKEN_STORE", "file")
            .env_remove("SLIPWAY_CONFIG_DIR")
            .env_remove("SLIPWAY_PLATFORM_URL")
            .env_remove("SLIPWAY_TOKEN");
        for (k, v) in extra_env {
            command.env(k, v);
        }
        let out = command.output().unwrap();
        Run {
            ok: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn slipway(&self, args: &[&str]) -> Run {
        self.slipway_with(&[], args)
    }
}

/// The entry of `list` whose `key` is `value`.
fn find<'a>(list: &'a Value, key: &str, value: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|v| v[key] == value)
}

fn invite_code(admin: &Person, email: &str, extra: &[&str]) -> (String, Value) {
    let mut args = vec!["people", "invite", email, "--json"];
    args.extend_from_slice(extra);
    let invite = admin.slipway(&args).succeeded().json();
    let code = invite["code"].as_str().unwrap().to_owned();
    assert!(code.starts_with("slwi_"), "{invite}");
    (code, invite)
}

/// The admin's part: sign in with the bootstrap token, invite, list and revoke invites.
/// Returns Bob's invite code.
fn admin_invites(platform: &Platform, admin: &Person) -> String {
    let bootstrap = platform.data.join("bootstrap-token");
    let url = platform.url.as_str();
    admin
        .slipway(&[
            "login",
            "--url",
            url,
            "--token-file",
            bootstrap.to_str().unwrap(),
        ])
        .succeeded();
    let me = admin.slipway(&["whoami"]).succeeded();
    assert!(me.stdout.contains("admin"), "{me:?}");

    // The plain rules are checked before anything is sent, naming the flag's field.
    let bad = admin
        .slipway(&[
            "people",
            "invite",
            "x@example.org",
            "--expires-in-days",
            "31",
        ])
        .failed();
    assert!(bad.stderr.contains("expires_in_days"), "{bad:?}");
    let bad = admin
        .slipway(&["people", "invite", "not-an-address"])
        .failed();
    assert!(bad.stderr.contains("email"), "{bad:?}");

    // A first invite for Bob, replaced by a second: the first code stops working.
    let (replaced, _) = invite_code(admin, "bob@example.org", &[]);
    let (code, invite) = invite_code(admin, "bob@example.org", &["--expires-in-days", "3"]);
    assert_ne!(code, replaced);
    assert_eq!(invite["role"], "member");
    assert_eq!(invite["email"], "bob@example.org");
    let link = invite["link"].as_str().unwrap();
    assert!(
        link.starts_with(&format!(
            "slipway://invite/{code}?url=http%3A%2F%2F127.0.0.1%3A"
        )),
        "{link}"
    );
    let stranger = Person::new();
    stranger
        .slipway(&["login", "--invite", &replaced, "--url", url])
        .failed();

    // The human form prints the code, the link, that it works once, and how to join.
    let carol = admin
        .slipway(&["people", "invite", "carol@example.org", "--role", "admin"])
        .succeeded();
    for part in [
        "Code (shown only now): slwi_",
        "slipway://invite/slwi_",
        "works once",
        "slipway login --invite slwi_",
    ] {
        assert!(carol.stdout.contains(part), "{part}: {carol:?}");
    }

    // Pending invites never show a code; a revoked one cannot be used.
    let pending = admin.slipway(&["people", "invites", "--json"]).succeeded();
    let invites = &pending.json()["invites"];
    assert!(!pending.stdout.contains("slwi_"), "{pending:?}");
    let carol_invite = find(invites, "email", "carol@example.org").expect("carol is pending");
    assert_eq!(carol_invite["role"], "admin");
    assert_eq!(
        find(invites, "email", "bob@example.org").unwrap()["id"],
        invite["id"]
    );
    let carol_id = carol_invite["id"].as_str().unwrap();
    admin
        .slipway(&["people", "revoke-invite", carol_id])
        .succeeded();
    let carol_code = carol
        .stdout
        .split_whitespace()
        .find(|w| w.starts_with("slwi_"))
        .unwrap();
    Person::new()
        .slipway(&["login", "--invite", carol_code, "--url", url])
        .failed();
    let pending = admin.slipway(&["people", "invites"]).succeeded();
    assert!(pending.stdout.contains("bob@example.org"), "{pending:?}");
    assert!(!pending.stdout.contains("carol@example.org"), "{pending:?}");
    code
}

/// Bob's and the admin's part after Bob joined: roles, tokens, and Bob's removal.
fn roles_tokens_removal(platform: &Platform, admin: &Person, bob: &Person) {
    let url = platform.url.as_str();
    let people = admin
        .slipway(&["people", "list", "--json"])
        .succeeded()
        .json();
    let owner = find(&people["users"], "email", "owner@localhost").expect("the owner");
    assert_eq!(owner["role"], "admin");
    let bob_entry = find(&people["users"], "email", "bob@example.org").expect("bob");
    assert_eq!(bob_entry["role"], "member");
    assert_eq!(bob_entry["name"], "Bob B");
    let table = admin.slipway(&["people", "list"]).succeeded();
    assert!(table.stdout.starts_with("EMAIL"), "{table:?}");
    for line in ["owner@localhost", "bob@example.org"] {
        let row = table.stdout.lines().find(|l| l.contains(line)).unwrap();
        let role = if line == "owner@localhost" {
            "admin"
        } else {
            "member"
        };
        assert!(row.contains(role), "{row}");
    }

    // A member manages no one; promoted, Bob may; demoted again, not.
    bob.slipway(&["people", "invite", "dave@example.org"])
        .failed();
    bob.slipway(&["people", "audit"]).failed();
    let promoted = admin
        .slipway(&["people", "role", "bob@example.org", "admin"])
        .succeeded();
    assert!(promoted.stdout.contains("is now admin"), "{promoted:?}");
    bob.slipway(&["people", "audit"]).succeeded();
    let demoted = admin
        .slipway(&["people", "role", "bob@example.org", "member", "--json"])
        .succeeded();
    assert_eq!(demoted.json()["role"], "member");
    bob.slipway(&["people", "audit"]).failed();
    // The last admin stays one.
    admin
        .slipway(&["people", "role", "owner@localhost", "member"])
        .failed();
    let me = admin.slipway(&["whoami"]).succeeded();
    assert!(me.stdout.contains("admin"), "{me:?}");

    // Bob's own tokens: made (shown once, alone on the last line), listed, used, revoked.
    bob.slipway(&["tokens", "create", "ci", "--expires-in-days", "400"])
        .failed();
    let created = bob
        .slipway(&["tokens", "create", "ci", "--expires-in-days", "10"])
        .succeeded();
    let secret = created.stdout.lines().last().unwrap().trim().to_owned();
    assert!(secret.len() >= 32 && !secret.contains(' '), "{created:?}");
    let tokens = bob.slipway(&["tokens", "list", "--json"]).succeeded();
    assert!(
        !tokens.stdout.contains(&secret),
        "a list never shows a secret"
    );
    let tokens = tokens.json();
    let ci = find(&tokens["tokens"], "name", "ci").expect("the ci token");
    assert_eq!(ci["current"], false);
    assert!(ci["expires_at"].is_string(), "{ci}");
    let current: Vec<&Value> = tokens["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["current"] == true)
        .collect();
    assert_eq!(current.len(), 1, "{tokens}");
    let ci_id = ci["id"].as_str().unwrap().to_owned();
    let listed = bob.slipway(&["tokens", "list"]).succeeded();
    assert!(listed.stdout.contains(&ci_id), "{listed:?}");

    let elsewhere = Person::new();
    let with_ci = [
        ("SLIPWAY_PLATFORM_URL", url),
        ("SLIPWAY_TOKEN", secret.as_str()),
    ];
    let who = elsewhere.slipway_with(&with_ci, &["whoami"]).succeeded();
    assert!(who.stdout.contains("bob@example.org"), "{who:?}");
    // Nobody revokes another's token: it is not found.
    admin.slipway(&["tokens", "revoke", &ci_id]).failed();
    elsewhere.slipway_with(&with_ci, &["whoami"]).succeeded();
    let revoked = bob.slipway(&["tokens", "revoke", &ci_id]).succeeded();
    assert!(revoked.stdout.contains(&ci_id), "{revoked:?}");
    elsewhere.slipway_with(&with_ci, &["whoami"]).failed();
    let tokens = bob
        .slipway(&["tokens", "list", "--json"])
        .succeeded()
        .json();
    assert!(find(&tokens["tokens"], "id", &ci_id).is_none(), "{tokens}");

    // A least-privilege token: it reads, and nothing it asks to change is done.
    let monitor = bob
        .slipway(&["tokens", "create", "monitor", "--read-only", "--no-secrets"])
        .succeeded();
    assert!(
        monitor.stdout.contains("read-only, all apps, no secrets"),
        "{monitor:?}"
    );
    let monitor_secret = monitor.stdout.lines().last().unwrap().trim().to_owned();
    let with_monitor = [
        ("SLIPWAY_PLATFORM_URL", url),
        ("SLIPWAY_TOKEN", monitor_secret.as_str()),
    ];
    elsewhere
        .slipway_with(&with_monitor, &["whoami"])
        .succeeded();
    let refused = elsewhere
        .slipway_with(&with_monitor, &["tokens", "create", "more"])
        .failed();
    assert!(refused.stderr.contains("read-only"), "{refused:?}");
    let listed = bob.slipway(&["tokens", "list"]).succeeded();
    assert!(listed.stdout.contains("SCOPE"), "{listed:?}");
    // No assistant yet; an unknown sign-in code is said so.
    let grants = bob
        .slipway(&["grants", "list", "--json"])
        .succeeded()
        .json();
    assert_eq!(grants["grants"], serde_json::json!([]), "{grants}");
    let unknown = bob.slipway(&["grants", "approve", "ABCD-EFGH"]).failed();
    assert!(unknown.stderr.contains("ABCD-EFGH"), "{unknown:?}");

    // Removing asks; a script must say --yes. Then Bob's tokens stop working at once.
    let asked = admin
        .slipway(&["people", "remove", "bob@example.org"])
        .failed();
    assert!(asked.stderr.contains("--yes"), "{asked:?}");
    bob.slipway(&["whoami"]).succeeded();
    let removed = admin
        .slipway(&["people", "remove", "bob@example.org", "--yes"])
        .succeeded();
    assert!(removed.stdout.contains("Removed"), "{removed:?}");
    bob.slipway(&["whoami"]).failed();
    let people = admin
        .slipway(&["people", "list", "--json"])
        .succeeded()
        .json();
    assert!(find(&people["users"], "email", "bob@example.org").is_none());
}

fn scenario(backend: Backend) {
    let work = tempfile::tempdir().unwrap();
    let database = match backend {
        Backend::Sqlite => None,
        Backend::Postgres => Some(
            tokio::runtime::Runtime::new()
                .unwrap()
                .block_on(TestDatabase::create("people_cli")),
        ),
    };
    let platform = serve(
        &work.path().join("platform"),
        database.as_ref().map(TestDatabase::url),
    );
    let url = platform.url.as_str();
    let admin = Person::new();
    let code = admin_invites(&platform, &admin);

    // Bob joins from his own machine; the token goes to his 0600 file.
    let bob = Person::new();
    let joined = bob
        .slipway(&["login", "--invite", &code, "--url", url, "--name", "Bob B"])
        .succeeded();
    assert!(
        joined.stdout.contains("Bob B <bob@example.org> (member)"),
        "{joined:?}"
    );
    assert!(!joined.stdout.contains(&code), "{joined:?}");
    let mode = std::fs::metadata(bob.token_file())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let who = bob.slipway(&["whoami"]).succeeded();
    assert!(
        who.stdout.contains("Bob B <bob@example.org>, member"),
        "{who:?}"
    );
    // The code worked once.
    let again = Person::new()
        .slipway(&["login", "--invite", &code, "--url", url])
        .failed();
    assert!(!again.stderr.is_empty(), "{again:?}");

    // The printed link alone is enough to join.
    let (_, erin) = invite_code(&admin, "erin@example.org", &[]);
    let erin_home = Person::new();
    let joined = erin_home
        .slipway(&["login", "--invite", erin["link"].as_str().unwrap()])
        .succeeded();
    assert!(joined.stdout.contains("erin@example.org"), "{joined:?}");
    erin_home.slipway(&["people", "list"]).succeeded();

    roles_tokens_removal(&platform, &admin, &bob);

    // The audit tells what happened, without a code or a token.
    let audit = admin.slipway(&["people", "audit", "--json"]).succeeded();
    assert!(!audit.stdout.contains("slwi_"), "{audit:?}");
    let bootstrap = std::fs::read_to_string(platform.data.join("bootstrap-token")).unwrap();
    assert!(!audit.stdout.contains(bootstrap.trim()));
    let actions: Vec<String> = audit.json()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect();
    for action in [
        "invite.created",
        "invite.accepted",
        "invite.revoked",
        "person.role_changed",
        "person.removed",
        "token.created",
        "token.revoked",
    ] {
        assert!(actions.iter().any(|a| a == action), "{action}: {actions:?}");
    }
    let table = admin.slipway(&["people", "audit"]).succeeded();
    assert!(table.stdout.starts_with("AT (UTC)"), "{table:?}");
    assert!(table.stdout.contains("person.removed"), "{table:?}");
    drop(platform);
    drop(database);
}

#[test]
fn an_admin_invites_promotes_and_removes_and_people_manage_their_tokens() {
    for backend in backends("people CLI") {
        eprintln!("backend: {backend:?}");
        scenario(backend);
    }
}
