//! A newcomer's first project with no platform configured: `slipway new` shows a clean path,
//! `slipway build` offers the local platform (and starts it with `--start-platform`), the
//! other daily commands find it, and `slipway platform local --stop` stops it.

use std::path::Path;

use crate::daily::{http_get, slipway};

/// Every place the CLI looks for a platform or keeps its data, inside `home`: no configured
/// platform, no keyring, no local platform of the machine's user.
fn isolated(home: &Path) -> Vec<(&'static str, String)> {
    let at = |sub: &str| home.join(sub).display().to_string();
    vec![
        ("HOME", at("home")),
        ("XDG_CONFIG_HOME", at("config")),
        ("XDG_DATA_HOME", at("data")),
        ("SLIPWAY_TOKEN_STORE", "file".to_owned()),
        ("RUST_LOG", "error".to_owned()),
    ]
}

fn url_file(home: &Path) -> std::path::PathBuf {
    home.join("data/slipway/embedded-platform/embedded-url")
}

/// Stops the local platform whatever the test's outcome.
struct StopLocal(Vec<(&'static str, String)>, std::path::PathBuf);

impl Drop for StopLocal {
    fn drop(&mut self) {
        let _ = slipway(&self.1, &self.0, &["platform", "local", "--stop"]);
    }
}

#[test]
fn new_shows_a_clean_path() {
    let work = tempfile::tempdir().unwrap();
    let env = isolated(work.path());
    let out = slipway(work.path(), &env, &["new", "orders"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.starts_with("Created ./orders ("), "{stdout}");
    assert!(
        stdout.contains("Next: cd ./orders && slipway build"),
        "{stdout}"
    );

    // Outside the current directory: the absolute path, without `.` or `..`.
    let sub = work.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let out = slipway(&sub, &env, &["new", "billing", "--dir", "./../."]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let expected = std::fs::canonicalize(work.path()).unwrap().join("billing");
    assert!(
        stdout.starts_with(&format!("Created {} (", expected.display())),
        "{stdout}"
    );
    assert!(expected.join("devfile.yaml").is_file());
}

#[test]
fn build_offers_and_starts_the_local_platform() {
    let work = tempfile::tempdir().unwrap();
    let env = isolated(work.path());
    let out = slipway(work.path(), &env, &["new", "first"]);
    assert!(out.status.success());
    let project = work.path().join("first");

    // Not on a terminal: nothing starts unasked; the error names the flag.
    let out = slipway(&project, &env, &["build"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("--start-platform"), "{stderr}");
    assert!(
        !url_file(work.path()).exists(),
        "a platform started unasked"
    );

    let _stop = StopLocal(env.clone(), work.path().to_path_buf());
    let out = slipway(&project, &env, &["build", "--start-platform"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("starting the local platform in the background"),
        "{stderr}"
    );
    assert!(stdout.contains("Built app "), "{stdout}");
    assert!(url_file(work.path()).exists());

    // The build's command has ended; the platform and the app go on, and `status` finds it.
    let out = slipway(&project, &env, &["status", "--watch"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("using the local platform at"), "{stderr}");
    let url = stdout
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("RUNNING  "))
        .unwrap_or_else(|| panic!("not RUNNING with a URL: {stdout}"))
        .trim()
        .to_owned();
    let health = format!("{}/health", url.trim_start_matches("http://"));
    let (addr, path) = health.split_once('/').unwrap();
    let answer = http_get(addr, addr, &format!("/{path}"));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // A half configuration (a URL without its token) is reported, not replaced by the local
    // platform.
    let mut half = env.clone();
    half.push(("SLIPWAY_PLATFORM_URL", "http://127.0.0.1:9".to_owned()));
    let out = slipway(&project, &half, &["status"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(!stderr.contains("using the local platform"), "{stderr}");
    assert!(stderr.contains("SLIPWAY_TOKEN"), "{stderr}");

    let out = slipway(work.path(), &env, &["platform", "local", "--stop"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !url_file(work.path()).exists(),
        "the URL file outlived the platform"
    );
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "the app still answers after its platform stopped"
    );
}
