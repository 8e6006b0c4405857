//! `slipway git` against a real platform process: `connect` to an SSH address makes a
//! deploy key and prints it with the webhook to set up, `status --json` gives the owner the
//! webhook's secret and, once the first fetch failed, why (the host cannot be reached:
//! a failed deployment too), `deploy` asks again, a token is never taken from the command
//! line, `disconnect` ends it. Fetching and webhooks are tested end to end against
//! `git http-backend` in the platform's own tests.

use crate::daily::{free_port, serve_with, slipway};
use crate::stateful_crash::build;

const DEVFILE: &str = r#"schemaVersion: 2.2.0
metadata:
  name: gitcli
  displayName: Git CLI test
components:
  - name: web-image
    image:
      imageName: web
      dockerfile:
        uri: Dockerfile
        buildContext: .
  - name: web
    container:
      image: web
      endpoints:
        - name: http
          targetPort: 8006
commands:
  - id: build
    exec:
      component: web
      commandLine: "true"
      workingDir: ${PROJECT_SOURCE}
      group: { kind: build, isDefault: true }
  - id: run
    exec:
      component: web
      commandLine: python3 -m http.server 8006
      workingDir: ${PROJECT_SOURCE}
      group: { kind: run, isDefault: true }
"#;

fn text(out: &std::process::Output) -> (bool, String, String) {
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_git_source_is_connected_shown_deployed_and_disconnected_from_the_cli() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("platform");
    let (port, gateway) = (free_port(), free_port());
    let _server = serve_with(&data, None, port, gateway, &[]);
    let token = loop {
        if let Ok(t) = std::fs::read_to_string(data.join("bootstrap-token")) {
            break t.trim().to_owned();
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let env = [
        ("SLIPWAY_PLATFORM_URL", format!("http://127.0.0.1:{port}")),
        ("SLIPWAY_TOKEN", token),
    ];
    let project = work.path().join("gitcli");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("devfile.yaml"), DEVFILE).unwrap();
    std::fs::write(project.join("Dockerfile"), "FROM scratch\nCOPY . /app\n").unwrap();
    build(&project, &env);

    let (ok, out, err) = text(&slipway(
        &project,
        &env,
        &[
            "git",
            "connect",
            "--repo",
            "git@gitcli.invalid:acme/gitcli.git",
            "--path",
            "app",
        ],
    ));
    assert!(ok, "{out}{err}");
    for shown in [
        "Connected git@gitcli.invalid:acme/gitcli.git",
        "ssh-ed25519 ",
        "/v1/hooks/git/",
        "Secret:",
    ] {
        assert!(out.contains(shown), "{shown} in {out}");
    }

    // The host does not resolve: the first fetch fails, and says so.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        let (ok, out, err) = text(&slipway(&project, &env, &["git", "status", "--json"]));
        assert!(ok, "{out}{err}");
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        if json["last_error"].is_string() {
            break json;
        }
        assert!(std::time::Instant::now() < deadline, "{out}");
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    assert_eq!(status["success"], true);
    assert_eq!(status["auth"], "deploy_key");
    assert_eq!(status["path"], "app");
    assert!(
        status["webhook_secret"]
            .as_str()
            .unwrap()
            .starts_with("whsec_"),
        "{status}"
    );
    assert!(
        status["deploy_key"]
            .as_str()
            .unwrap()
            .starts_with("ssh-ed25519 "),
        "{status}"
    );
    let why = status["last_error"].as_str().unwrap();
    assert!(why.contains("cannot reach gitcli.invalid"), "{why}");
    let (ok, out, _) = text(&slipway(&project, &env, &["deployments"]));
    assert!(ok && out.contains("FAILED"), "{out}");
    let (ok, out, _) = text(&slipway(&project, &env, &["git", "status"]));
    assert!(
        ok && out.contains("failed:     cannot reach gitcli.invalid"),
        "{out}"
    );

    // A token never comes from the command line: an unset variable is refused by name.
    let (ok, out, err) = text(&slipway(
        &project,
        &env,
        &[
            "git",
            "connect",
            "--repo",
            "https://gitcli.invalid/x.git",
            "--token-env",
            "SLIPWAY_NO_SUCH_VAR",
        ],
    ));
    assert!(!ok, "{out}");
    assert!(
        err.contains("token_env") && err.contains("SLIPWAY_NO_SUCH_VAR"),
        "{err}"
    );
    // A rule broken names the field.
    let (ok, _, err) = text(&slipway(
        &project,
        &env,
        &["git", "connect", "--repo", "/srv/git/gitcli.git"],
    ));
    assert!(!ok);
    assert!(err.contains("repo_url"), "{err}");

    let (ok, out, err) = text(&slipway(&project, &env, &["previews"]));
    assert!(ok, "{out}{err}");
    assert!(out.contains("No previews"), "{out}");
    let (ok, out, err) = text(&slipway(&project, &env, &["previews", "--json"]));
    assert!(ok, "{out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["previews"], serde_json::json!([]));
    let (ok, out, err) = text(&slipway(&project, &env, &["git", "deploy"]));
    assert!(ok, "{out}{err}");
    assert!(out.contains("Deploying the tip of main"), "{out}");
    let (ok, out, err) = text(&slipway(&project, &env, &["git", "disconnect"]));
    assert!(ok, "{out}{err}");
    let (ok, _, err) = text(&slipway(&project, &env, &["git", "status"]));
    assert!(!ok);
    assert!(err.contains("no git source"), "{err}");
}
