//! register_app, list_apps, get_app, get_app_status, get_app_logs, delete_app and
//! cancel_build, with the spec's argument names and result keys.

use serde_json::{Value, json};
use slipway_platform_client::{AppFile, Endpoint};
use slipway_toolkit::call_with;

use super::Platform;

fn call(p: &Platform, tool: &str, args: Value) -> Value {
    call_with(Some(&p.endpoint), tool, args).unwrap()
}

#[test]
fn register_list_get_status_delete() {
    let p = Platform::start();
    let project = tempfile::tempdir().unwrap();
    let out = call(
        &p,
        "register_app",
        json!({"name": "orders", "display_name": "Orders", "project_path": project.path(), "description": "Takes orders"}),
    );
    assert_eq!(out["success"], true, "{out}");
    let app_id = out["app_id"].as_str().unwrap().to_owned();
    let file: AppFile =
        serde_json::from_str(&std::fs::read_to_string(project.path().join(".app")).unwrap())
            .unwrap();
    assert_eq!(file.app_id, app_id);
    assert_eq!(file.platform_url, p.endpoint.url);

    let again = call(
        &p,
        "register_app",
        json!({"name": "orders", "display_name": "Orders"}),
    );
    assert_eq!(again["success"], false);
    assert!(
        again["error"].as_str().unwrap().contains("orders"),
        "{again}"
    );
    // The platform's 409 names its body field, which is this tool's argument.
    assert_eq!(again["field"], "name", "{again}");

    let bad = call(
        &p,
        "register_app",
        json!({"name": "Orders--1", "display_name": "x"}),
    );
    assert!(
        bad["error"].as_str().unwrap().starts_with("name: "),
        "{bad}"
    );
    assert_eq!(bad["field"], "name", "{bad}");

    for n in ["b-app", "c-app"] {
        assert_eq!(
            call(&p, "register_app", json!({"name": n, "display_name": n}))["success"],
            true
        );
    }
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut args = json!({"page_size": 2});
        if let Some(t) = &token {
            args["next_page_token"] = json!(t);
        }
        let page = call(&p, "list_apps", args);
        assert_eq!(page["success"], true, "{page}");
        for app in page["apps"].as_array().unwrap() {
            for key in [
                "app_id",
                "name",
                "status",
                "url",
                "created_at",
                "updated_at",
            ] {
                assert!(app.get(key).is_some(), "list entry lacks {key}: {app}");
            }
            seen.push(app["name"].as_str().unwrap().to_owned());
        }
        match page.get("next_page_token").and_then(Value::as_str) {
            Some(t) => token = Some(t.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, ["orders", "b-app", "c-app"]);

    let app = call(&p, "get_app", json!({"app_id": app_id}));
    for key in [
        "name",
        "description",
        "status",
        "url",
        "devfile",
        "enabled",
        "created_at",
        "updated_at",
    ] {
        assert!(app.get(key).is_some(), "get_app lacks {key}: {app}");
    }
    assert_eq!(app["description"], "Takes orders");
    let status = call(&p, "get_app_status", json!({"app_id": app_id}));
    assert_eq!(status["success"], true);
    assert_eq!(status["status"], "registered");
    assert!(status.get("app_url").is_some(), "{status}");
    let logs = call(&p, "get_app_logs", json!({"app_id": app_id}));
    assert_eq!(logs["logs"], json!([]), "{logs}");

    let deleted = call(&p, "delete_app", json!({"app_id": app_id}));
    assert_eq!(deleted["success"], true);
    assert!(
        deleted["message"].as_str().unwrap().contains(".app"),
        "{deleted}"
    );
    let gone = call(&p, "get_app", json!({"app_id": app_id}));
    assert_eq!(gone["success"], false);
    assert_eq!(gone["retryable"], false);
}

#[test]
fn argument_errors_name_the_field_and_send_nothing() {
    let p = Platform::start();
    let out = call(&p, "get_app", json!({"app_id": "not-a-uuid"}));
    assert_eq!(out["error"], "app_id: \"not-a-uuid\" is not a UUID");
    assert_eq!(out["field"], "app_id");
    let out = call(
        &p,
        "cancel_build",
        json!({"build_id": "00000000-0000-4000-8000-000000000000"}),
    );
    assert_eq!(out["success"], false);
    let out = call(&p, "list_apps", json!({"page_size": 1000}));
    assert!(
        out["error"].as_str().unwrap().contains("page_size"),
        "{out}"
    );
    // Checked by the platform (a 400 naming the query parameter), passed on as `field`.
    assert_eq!(out["field"], "page_size", "{out}");
    let out = call(
        &p,
        "get_app",
        json!({"app_id": "00000000-0000-4000-8000-000000000000", "colour": 1}),
    );
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("unknown field `colour`"),
        "{out}"
    );
    assert_eq!(out["field"], "colour", "{out}");
}

#[test]
fn an_unreachable_platform_is_retried_then_reported_as_retryable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = Endpoint::new(format!("http://127.0.0.1:{port}"), "t");
    let out = call_with(Some(&endpoint), "list_apps", json!({})).unwrap();
    assert_eq!(out["success"], false);
    assert_eq!(out["retryable"], true);
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("after 3 attempt(s)"),
        "{out}"
    );
}

#[test]
fn a_wrong_token_says_so() {
    let p = Platform::start();
    let endpoint = Endpoint::new(p.endpoint.url.clone(), "slw_wrong");
    let out = call_with(Some(&endpoint), "list_apps", json!({})).unwrap();
    assert_eq!(out["success"], false);
    assert!(
        out["error"].as_str().unwrap().contains("refused the token"),
        "{out}"
    );
}
