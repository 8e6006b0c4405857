//! `slipway notify` against a real platform process: a webhook channel is added (its signing
//! secret printed once), a bad e-mail setting is refused naming the field, "send a test" to a
//! receiver that is down says why, a whole-account subscription is made and listed, the
//! test's delivery is listed with its failed try (`--json` for scripts), and the channel is
//! removed.

use crate::daily::{free_port, platform, slipway};

fn run(dir: &std::path::Path, env: &[(&str, String)], args: &[&str]) -> String {
    let out = slipway(dir, env, args);
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn channels_are_added_tested_subscribed_and_removed_from_the_cli() {
    let work = tempfile::tempdir().unwrap();
    let (_server, _gateway, env) = platform(work.path());
    let dir = work.path();
    let url = format!("http://127.0.0.1:{}/hook", free_port());

    let events = run(dir, &env, &["notify", "events"]);
    assert!(
        events.contains("service.down") && events.contains("job.failed"),
        "{events}"
    );
    let added = run(dir, &env, &["notify", "add-webhook", "ops", &url]);
    assert!(
        added.contains("Added ops (webhook)") && added.contains("Signing secret (shown only now"),
        "{added}"
    );
    assert!(added.contains("whsec_"), "{added}");

    let password = dir.join("smtp-password");
    std::fs::write(&password, "s3cret\n").unwrap();
    let refused = slipway(
        dir,
        &env,
        &[
            "notify",
            "add-email",
            "mail",
            "--host",
            "smtp.example.com",
            "--from",
            "slipway@example.com",
            "--to",
            "not an address",
            "--username",
            "slipway",
            "--password-file",
            password.to_str().unwrap(),
        ],
    );
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("to") && err.contains("not an e-mail address"),
        "{err}"
    );
    assert!(!err.contains("s3cret"), "the password never shows: {err}");

    let listed = run(dir, &env, &["notify", "channels", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed["channels"][0]["name"], "ops", "{listed}");
    assert_eq!(
        listed["channels"].as_array().unwrap().len(),
        1,
        "the refused one is not there: {listed}"
    );

    let tested = run(dir, &env, &["notify", "test", "ops"]);
    assert!(
        tested.contains("Not delivered: cannot connect to 127.0.0.1"),
        "{tested}"
    );

    let subscribed = run(
        dir,
        &env,
        &[
            "notify",
            "subscribe",
            "ops",
            "--events",
            "job.failed,backup.failed",
        ],
    );
    assert!(
        subscribed.contains("job.failed, backup.failed of the whole account"),
        "{subscribed}"
    );
    let subs = run(dir, &env, &["notify", "subscriptions", "--json"]);
    let subs: serde_json::Value = serde_json::from_str(&subs).unwrap();
    let sub_id = subs["subscriptions"][0]["id"].as_str().unwrap().to_owned();
    assert!(subs["subscriptions"][0]["app_id"].is_null(), "{subs}");

    let deliveries = run(dir, &env, &["notify", "deliveries", "--json"]);
    let deliveries: serde_json::Value = serde_json::from_str(&deliveries).unwrap();
    let test = &deliveries["deliveries"][0];
    assert_eq!(test["event"]["type"], "test", "{deliveries}");
    assert_eq!(test["status"], "failed", "{deliveries}");
    assert!(
        test["attempts"][0]["error"]
            .as_str()
            .unwrap()
            .contains("cannot connect"),
        "{deliveries}"
    );
    let table = run(dir, &env, &["notify", "deliveries"]);
    assert!(
        table.contains("LAST ERROR") && table.contains("failed"),
        "{table}"
    );

    run(dir, &env, &["notify", "unsubscribe", &sub_id]);
    let removed = run(dir, &env, &["notify", "remove", "ops"]);
    assert!(removed.contains("Removed ops"), "{removed}");
    let empty = run(dir, &env, &["notify", "channels"]);
    assert!(empty.contains("No channels yet"), "{empty}");
}
