//! `slipway resources` against a real platform process: an app built with a PostgreSQL
//! database and a Redis cache is listed with its variables and never a password; the
//! credentials revealed connect (`psql`, `redis-cli`); a viewer of the app may list but not
//! reveal; a rotation retires the old password; destroy asks for `--yes` when no one can be
//! asked and leaves the cache working, then with `--yes` stops it and drops it from the list.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::daily::{platform, slipway};
use crate::stateful_crash::{DEVFILE, SERVER, build, deployments, wait_status};

type Env = [(&'static str, String)];

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `slipway resources <args>` in `project`; asserts it succeeded; its standard output.
fn resources(project: &Path, env: &Env, args: &[&str]) -> String {
    let mut all = vec!["resources"];
    all.extend_from_slice(args);
    let out = slipway(project, env, &all);
    assert!(out.status.success(), "{args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `url:` and `password:` lines of `slipway resources credentials keeper <kind> <name>`.
fn revealed(project: &Path, env: &Env, kind: &str, name: &str) -> (String, String) {
    let out = resources(project, env, &["credentials", "keeper", kind, name]);
    let line = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("a {key} line in {out}"))
            .trim()
            .to_owned()
    };
    let (url, password) = (line("url:"), line("password:"));
    assert!(
        password.len() >= 16 && url.contains(&format!(":{password}@")),
        "{out}"
    );
    (url, password)
}

/// Whether `psql` connects with `url` and runs a query.
fn psql_connects(url: &str) -> bool {
    Command::new("psql")
        .args([url, "-tAc", "SELECT 1"])
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "1")
}

/// Whether `redis-cli` authenticates with the password of `url` (`redis://:password@host:port/0`)
/// and gets its PONG. (redis-cli 7.0 reads the empty user of such a URL as the user "", which
/// Redis refuses, so the URL's parts are passed on their own.)
fn redis_answers(url: &str) -> bool {
    let (password, rest) = url
        .strip_prefix("redis://:")
        .and_then(|r| r.split_once('@'))
        .unwrap_or_else(|| panic!("a redis URL with a password: {url}"));
    let (host, port) = rest.split('/').next().unwrap().split_once(':').unwrap();
    Command::new("redis-cli")
        .args([
            "--no-auth-warning",
            "-h",
            host,
            "-p",
            port,
            "-a",
            password,
            "PING",
        ])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "PONG")
}

/// `list` and `info` show both resources, their engines, states and variables, and never a
/// password; the revealed credentials connect. The database's and the cache's URLs.
fn listed_and_revealed(project: &Path, env: &Env) -> (String, String) {
    let list = resources(project, env, &["list", "keeper"]);
    for shown in [
        "KIND",
        "relationalDatabase",
        "main",
        "postgres",
        "cache",
        "hot",
        "redis",
        "attached",
        "DATABASE_URL",
        "MAIN_DATABASE_URL",
        "REDIS_URL",
        "HOT_CACHE_URL",
        "files",
    ] {
        assert!(list.contains(shown), "{shown} in {list}");
    }
    let json = resources(project, env, &["list", "keeper", "--json"]);
    let info = resources(project, env, &["info", "keeper", "cache", "hot"]);
    assert!(
        info.contains("cache hot (redis), attached") && info.contains("HOT_CACHE_URL"),
        "{info}"
    );

    let (db_url, db_password) = revealed(project, env, "relationalDatabase", "main");
    assert!(db_url.starts_with("postgresql://"), "{db_url}");
    assert!(psql_connects(&db_url), "the revealed credentials connect");
    let (cache_url, cache_password) = revealed(project, env, "cache", "hot");
    assert!(cache_url.starts_with("redis://"), "{cache_url}");
    assert!(
        redis_answers(&cache_url),
        "the revealed cache password works"
    );
    for shown in [&list, &json, &info] {
        assert!(
            !shown.contains(&db_password) && !shown.contains(&cache_password),
            "a password in {shown}"
        );
    }
    (db_url, cache_url)
}

/// Someone invited to the account and granted the viewer role on the app (through the
/// CLI: `people invite`, `login --invite`, `call grant_app_role`): their environment.
fn viewer(work: &Path, project: &Path, env: &Env, app_id: &str) -> [(&'static str, String); 2] {
    let email = "viewer@example.org";
    let out = slipway(project, env, &["people", "invite", email, "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let invite: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let code = invite["code"].as_str().expect("an invite code");
    let config = work.join("viewer-config");
    let login_env = [
        ("SLIPWAY_CONFIG_DIR", config.display().to_string()),
        ("SLIPWAY_TOKEN_STORE", "file".to_owned()),
    ];
    let url = env[0].1.clone();
    let out = slipway(
        project,
        &login_env,
        &["login", "--invite", code, "--url", &url],
    );
    assert!(out.status.success(), "{}", text(&out));
    let token = std::fs::read_to_string(config.join("tokens/production")).unwrap();
    let grant = serde_json::json!({"app_id": app_id, "user_id": email, "role": "viewer"});
    let out = slipway(
        project,
        env,
        &["call", "grant_app_role", &grant.to_string()],
    );
    assert!(out.status.success(), "{}", text(&out));
    [
        ("SLIPWAY_PLATFORM_URL", url),
        ("SLIPWAY_TOKEN", token.trim().to_owned()),
    ]
}

/// A viewer lists the resources but is refused their credentials, a rotation and a destroy.
fn viewer_cannot_reveal(project: &Path, viewer: &Env, db_url: &str) {
    let list = resources(project, viewer, &["list", "keeper"]);
    assert!(list.contains("DATABASE_URL"), "{list}");
    let password = db_url.split(':').nth(2).unwrap().split('@').next().unwrap();
    for args in [
        [
            "resources",
            "credentials",
            "keeper",
            "relationalDatabase",
            "main",
        ]
        .as_slice(),
        &[
            "resources",
            "rotate",
            "keeper",
            "relationalDatabase",
            "main",
        ],
        &["resources", "destroy", "keeper", "cache", "hot", "--yes"],
    ] {
        let out = slipway(project, viewer, args);
        assert!(!out.status.success(), "{args:?}: {}", text(&out));
        let said = text(&out);
        assert!(said.contains("role on the app; you are viewer"), "{said}");
        assert!(!said.contains(password), "{said}");
    }
    assert!(psql_connects(db_url), "the viewer changed nothing");
}

/// Waits for the deployment the rotation started: it runs (on the new password).
fn rotation_deployed(env: &Env, app_id: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let history = deployments(env, app_id);
        let newest = history.first().cloned().unwrap_or_default();
        if newest["cause"] == "rotate" && newest["status"] != "deploying" {
            assert_eq!(newest["status"], "RUNNING", "{newest}");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no rotation deployment: {history:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn resources_are_listed_revealed_rotated_and_destroyed_from_the_cli() {
    let work = tempfile::tempdir().unwrap();
    let (_server, _gateway, env) = platform(work.path());
    let project = work.path().join("keeper");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("devfile.yaml"), DEVFILE).unwrap();
    std::fs::write(project.join("server.py"), SERVER).unwrap();
    std::fs::write(project.join("Dockerfile"), "FROM scratch\nCOPY . /app\n").unwrap();
    let app_id = build(&project, &env);
    wait_status(&project, &env, &["RUNNING"]);

    let (url, cache_url) = listed_and_revealed(&project, &env);
    let viewer = viewer(work.path(), &project, &env, &app_id);
    viewer_cannot_reveal(&project, &viewer, &url);

    // A rotation: the old password stops working, the new one is revealed and works.
    let rotated = resources(
        &project,
        &env,
        &["rotate", "keeper", "relationalDatabase", "main"],
    );
    assert!(rotated.contains("Rotated"), "{rotated}");
    let (new_url, _) = revealed(&project, &env, "relationalDatabase", "main");
    assert_ne!(new_url, url);
    assert!(!psql_connects(&url), "the old password is refused");
    assert!(psql_connects(&new_url));
    rotation_deployed(&env, &app_id);

    // Destroy: refused without --yes when nobody can be asked, and nothing changes.
    let out = slipway(
        &project,
        &env,
        &["resources", "destroy", "keeper", "cache", "hot"],
    );
    assert!(!out.status.success());
    assert!(
        text(&out).contains("--yes") && text(&out).contains("nothing was destroyed"),
        "{}",
        text(&out)
    );
    assert!(resources(&project, &env, &["list", "keeper"]).contains("hot"));
    assert!(redis_answers(&cache_url), "the cache still answers");
    let destroyed = resources(
        &project,
        &env,
        &["destroy", "keeper", "cache", "hot", "--yes"],
    );
    assert!(destroyed.contains("destroyed"), "{destroyed}");
    let after = resources(&project, &env, &["list", "keeper"]);
    assert!(
        !after.contains("hot") && !after.contains("REDIS_URL") && after.contains("main"),
        "{after}"
    );
    assert!(!redis_answers(&cache_url), "the cache server is gone");
    assert!(psql_connects(&new_url), "the database is untouched");
    // An unknown resource: a clear error naming it.
    let out = slipway(
        &project,
        &env,
        &["resources", "info", "keeper", "cache", "hot"],
    );
    assert!(!out.status.success());
    assert!(text(&out).contains("hot"), "{}", text(&out));
}
