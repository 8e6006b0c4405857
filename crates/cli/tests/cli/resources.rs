//! `slipway resources` against a real platform process: an app built with a PostgreSQL
//! database and a Redis cache is listed with its variables and never a password; its
//! database's credentials are revealed and connect; a rotation retires the old password;
//! destroy asks for `--yes` when no one can be asked, then removes the cache.

use std::path::Path;
use std::process::{Command, Output};

use crate::daily::{platform, slipway};
use crate::stateful_crash::{DEVFILE, SERVER, build, wait_status};

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `slipway resources <args>` in `project`; asserts it succeeded; its standard output.
fn resources(project: &Path, env: &[(&str, String)], args: &[&str]) -> String {
    let mut all = vec!["resources"];
    all.extend_from_slice(args);
    let out = slipway(project, env, &all);
    assert!(out.status.success(), "{args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `url:` line of `slipway resources credentials`.
fn revealed_url(project: &Path, env: &[(&str, String)]) -> String {
    resources(
        project,
        env,
        &["credentials", "keeper", "relationalDatabase", "main"],
    )
    .lines()
    .find_map(|l| l.strip_prefix("url:"))
    .expect("a url line")
    .trim()
    .to_owned()
}

/// Whether `psql` connects with `url`.
fn connects(url: &str) -> bool {
    Command::new("psql")
        .args([url, "-tAc", "SELECT 1"])
        .output()
        .is_ok_and(|o| o.status.success())
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
    build(&project, &env);
    wait_status(&project, &env, &["RUNNING"]);

    let list = resources(&project, &env, &["list", "keeper"]);
    for shown in [
        "relationalDatabase",
        "main",
        "postgres",
        "cache",
        "hot",
        "redis",
    ] {
        assert!(list.contains(shown), "{shown} in {list}");
    }
    assert!(
        list.contains("DATABASE_URL") && list.contains("REDIS_URL"),
        "{list}"
    );
    let info = resources(&project, &env, &["info", "keeper", "cache", "hot"]);
    assert!(
        info.contains("attached") && info.contains("HOT_CACHE_URL"),
        "{info}"
    );

    let url = revealed_url(&project, &env);
    assert!(url.starts_with("postgresql://"), "{url}");
    assert!(connects(&url), "the revealed credentials connect");
    let password = url.split(':').nth(2).unwrap().split('@').next().unwrap();
    assert!(!list.contains(password) && !info.contains(password));

    // A rotation: the old password stops working, the new one is revealed and works.
    let rotated = resources(
        &project,
        &env,
        &["rotate", "keeper", "relationalDatabase", "main"],
    );
    assert!(rotated.contains("Rotated"), "{rotated}");
    let new_url = revealed_url(&project, &env);
    assert_ne!(new_url, url);
    assert!(!connects(&url), "the old password is refused");
    assert!(connects(&new_url));
    wait_status(&project, &env, &["RUNNING"]);

    // Destroy: refused without --yes when nobody can be asked, and nothing changes.
    let out = slipway(
        &project,
        &env,
        &["resources", "destroy", "keeper", "cache", "hot"],
    );
    assert!(!out.status.success());
    assert!(text(&out).contains("--yes"), "{}", text(&out));
    assert!(resources(&project, &env, &["list", "keeper"]).contains("hot"));
    resources(
        &project,
        &env,
        &["destroy", "keeper", "cache", "hot", "--yes"],
    );
    let after = resources(&project, &env, &["list", "keeper"]);
    assert!(!after.contains("hot") && after.contains("main"), "{after}");
    // An unknown resource: a clear error naming it.
    let out = slipway(
        &project,
        &env,
        &["resources", "info", "keeper", "queue", "nope"],
    );
    assert!(!out.status.success());
    assert!(text(&out).contains("nope"), "{}", text(&out));
}
