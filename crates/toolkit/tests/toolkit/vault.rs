//! The 6 secrets tools and the 5 sharing tools against a real platform: argument names and
//! result keys as the spec has them, errors that name the field, and nothing sent for
//! arguments that break a rule.

use serde_json::{Value, json};
use slipway_platform_client::Endpoint;
use slipway_toolkit::call_with;

use super::Platform;

fn call(endpoint: &Endpoint, tool: &str, args: Value) -> Value {
    call_with(Some(endpoint), tool, args).unwrap()
}

#[test]
fn secrets_tools_create_read_version_list_share_delete() {
    let p = Platform::start();
    let e = &p.endpoint;
    let app = call(
        e,
        "register_app",
        json!({"name": "vaulty", "display_name": "V"}),
    );
    let app_id = app["app_id"].as_str().unwrap().to_owned();
    let target = json!({"secret_type": "app", "app_id": app_id, "secret_path": "db/creds"});
    let with = |extra: Value| {
        let mut v = target.clone();
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };

    let out = call(
        e,
        "create_secret",
        with(
            json!({"data": "{\"user\": \"u\", \"password\": \"p1\"}", "metadata": "{\"rotated\": false}"}),
        ),
    );
    assert_eq!(
        (out["success"].clone(), out["version"].clone()),
        (json!(true), json!(1)),
        "{out}"
    );
    let out = call(
        e,
        "update_secret",
        with(json!({"data": "{\"user\": \"u\", \"password\": \"p2\"}"})),
    );
    assert_eq!(out["version"], 2, "{out}");
    let got = call(e, "get_secret", target.clone());
    assert_eq!(got["success"], true, "{got}");
    assert_eq!(got["data"], json!({"user": "u", "password": "p2"}));
    assert_eq!(got["metadata"], json!({"rotated": false}));
    assert_eq!(got["versions"], json!([1, 2]));
    let old = call(e, "get_secret", with(json!({"version": 1})));
    assert_eq!(old["data"]["password"], "p1");

    let listed = call(
        e,
        "list_secrets",
        json!({"secret_type": "app", "app_id": app_id, "prefix": "db/"}),
    );
    assert_eq!(listed["paths"], json!(["db/creds"]), "{listed}");
    assert!(listed.get("next_token").is_none());

    let shared = call(
        e,
        "share_secret",
        json!({"from_secret_type": "app", "app_id": app_id, "from_secret_path": "db/creds",
               "to_shared_path": "team/db", "copy_metadata": false}),
    );
    assert_eq!(shared["success"], true, "{shared}");
    let copy = call(
        e,
        "get_secret",
        json!({"secret_type": "shared", "secret_path": "team/db"}),
    );
    assert_eq!(copy["data"]["password"], "p2");
    assert_eq!(copy["metadata"], json!({}));
    let clash = call(
        e,
        "share_secret",
        json!({"from_secret_type": "app", "app_id": app_id, "from_secret_path": "db/creds",
               "to_shared_path": "team/db"}),
    );
    assert_eq!(clash["success"], false);
    assert!(
        clash["error"]
            .as_str()
            .unwrap()
            .contains("never overwrites"),
        "{clash}"
    );

    let out = call(e, "delete_secret", target.clone());
    assert_eq!(out["success"], true, "{out}");
    let gone = call(e, "get_secret", target.clone());
    assert_eq!(gone["success"], false);
    assert_eq!(gone["retryable"], false);
}

#[test]
fn bad_secret_arguments_name_the_field_and_send_nothing() {
    // A platform that does not exist: a request would fail with "did not answer".
    let nowhere = Endpoint::new("http://127.0.0.1:9", "t");
    let cases = [
        (
            json!({"secret_type": "user", "secret_path": "/abs", "data": "{}"}),
            "secret_path",
        ),
        (
            json!({"secret_type": "user", "secret_path": "a/../b", "data": "{\"a\":1}"}),
            "secret_path",
        ),
        (
            json!({"secret_type": "user", "secret_path": "a", "data": "not json"}),
            "data",
        ),
        (
            json!({"secret_type": "user", "secret_path": "a", "data": "[1]"}),
            "data",
        ),
        (
            json!({"secret_type": "user", "secret_path": "a", "data": "{}", "metadata": "3"}),
            "metadata",
        ),
        (
            json!({"secret_type": "app", "secret_path": "a", "data": "{\"a\":1}"}),
            "app_id",
        ),
        (
            json!({"secret_type": "user", "app_id": "x", "secret_path": "a", "data": "{\"a\":1}"}),
            "app_id",
        ),
    ];
    for (args, field) in cases {
        let out = call(&nowhere, "create_secret", args.clone());
        assert_eq!(out["success"], false, "{args}");
        let error = out["error"].as_str().unwrap();
        assert!(error.starts_with(&format!("{field}: ")), "{args}: {error}");
        assert_eq!(out["field"], field, "{args}");
        assert!(!error.contains("did not answer"), "{error}");
    }
    let out = call(
        &nowhere,
        "create_secret",
        json!({"secret_type": "team", "secret_path": "a", "data": "{}"}),
    );
    assert!(
        out["error"].as_str().unwrap().contains("secret_type")
            || out["error"].as_str().unwrap().contains("unknown variant"),
        "{out}"
    );
}

#[test]
fn sharing_tools_grant_list_and_revoke() {
    let p = Platform::start();
    let e = &p.endpoint;
    let member = p.add_user("kim@example.org");
    let app = call(
        e,
        "register_app",
        json!({"name": "shared-one", "display_name": "S"}),
    );
    let app_id = app["app_id"].as_str().unwrap().to_owned();

    let users = call(e, "list_account_users", json!({}));
    assert_eq!(users["success"], true, "{users}");
    assert!(
        users["users"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["id"] == member.id.as_str())
    );
    let roles = call(e, "list_grantable_roles", json!({"app_id": app_id}));
    assert_eq!(roles["roles"], json!(["owner", "editor", "viewer"]));

    let granted = call(
        e,
        "grant_app_role",
        json!({"app_id": app_id, "role": "viewer", "user_id": "kim@example.org"}),
    );
    assert_eq!(granted["success"], true, "{granted}");
    assert!(granted["message"].as_str().unwrap().contains("viewer"));
    let as_member = Endpoint::new(e.url.clone(), member.token.expose());
    let theirs = call(
        &as_member,
        "list_grantable_roles",
        json!({"app_id": app_id}),
    );
    assert_eq!(theirs["roles"], json!([]), "a viewer grants nothing");
    let refused = call(
        &as_member,
        "grant_app_role",
        json!({"app_id": app_id, "role": "viewer", "user_id": member.id}),
    );
    assert_eq!(refused["success"], false);

    let perms = call(e, "list_app_permissions", json!({"app_id": app_id}));
    let pairs: Vec<(String, String)> = perms["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["user_id"].as_str().unwrap().to_owned(),
                u["role"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        pairs.contains(&(member.id.clone(), "viewer".to_owned())),
        "{perms}"
    );

    let revoked = call(
        e,
        "revoke_app_role",
        json!({"app_id": app_id, "role": "viewer", "user_id": member.id}),
    );
    assert_eq!(revoked["success"], true, "{revoked}");
    let bad_role = call(
        e,
        "grant_app_role",
        json!({"app_id": app_id, "role": "admin", "user_id": member.id}),
    );
    assert_eq!(bad_role["success"], false);
}
