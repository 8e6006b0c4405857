//! The server subcommands' own output contracts.

use std::process::Command;

#[test]
fn platform_user_add_prints_one_json_object_with_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let run = |email: &str| {
        Command::new(env!("CARGO_BIN_EXE_slipway"))
            .args([
                "platform",
                "user",
                "add",
                "--email",
                email,
                "--name",
                "Ann Lee",
                "--data-dir",
            ])
            .arg(dir.path())
            .env("RUST_LOG", "error")
            .output()
            .unwrap()
    };
    let out = run("ann@example.com");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let user: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys: Vec<&String> = user.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["email", "id", "name", "token"]);
    assert_eq!(user["email"], "ann@example.com");
    assert!(user["token"].as_str().unwrap().len() >= 40);
    let again = run("ann@example.com");
    assert!(!again.status.success(), "the same e-mail twice must fail");
    assert!(again.stdout.is_empty());
}

#[test]
fn care_serve_rejects_a_bad_namespace_before_listening() {
    let out = Command::new(env!("CARGO_BIN_EXE_slipway"))
        .args([
            "care",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--namespace",
            "a/b",
            "--data-dir",
        ])
        .arg(tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("namespace"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn platform_serve_with_an_engine_that_cannot_run_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let serve = |runtime: &str| {
        Command::new(env!("CARGO_BIN_EXE_slipway"))
            .args([
                "platform",
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--gateway-listen",
                "127.0.0.1:0",
                "--runtime",
                runtime,
                "--container-engine",
                "/nonexistent/podman",
                "--data-dir",
            ])
            .arg(dir.path())
            .env("RUST_LOG", "error")
            .output()
            .unwrap()
    };
    let out = serve("container");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--runtime container"), "{stderr}");
    assert!(
        stderr.contains("`/nonexistent/podman --version` could not run"),
        "{stderr}"
    );
    let out = serve("kubernetes");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--runtime must be auto, process or container"),
        "{stderr}"
    );
    let help = Command::new(env!("CARGO_BIN_EXE_slipway"))
        .args(["platform", "serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--runtime <RUNTIME>"), "{help}");
    assert!(help.contains("--container-engine <PROGRAM>"), "{help}");
}

#[test]
fn platform_prune_prints_its_report_and_refuses_keep_zero() {
    let dir = tempfile::tempdir().unwrap();
    let run = |keep: &str| {
        Command::new(env!("CARGO_BIN_EXE_slipway"))
            .args([
                "platform",
                "prune",
                "--dry-run",
                "--keep",
                keep,
                "--data-dir",
            ])
            .arg(dir.path())
            .env("RUST_LOG", "error")
            .output()
            .unwrap()
    };
    let out = run("3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["keep"], 3);
    assert_eq!(report["dry_run"], true);
    assert_eq!(report["images_removed"], serde_json::json!([]));
    assert_eq!(report["secret_versions_removed"], serde_json::json!([]));

    let zero = run("0");
    assert!(!zero.status.success());
    let message = String::from_utf8_lossy(&zero.stderr);
    assert!(
        message.contains("keep") && message.contains("at least 1"),
        "{message}"
    );
}
