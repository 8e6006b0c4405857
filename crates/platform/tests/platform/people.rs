//! People, invites, tokens and the audit through the real server (docs/people.md), on SQLite
//! and PostgreSQL: invite → accept → promote → demote → remove, each refusal with its status
//! and code, and nothing changed by a refused request.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{Reply, TestApp, backends, spawn_app};

async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Value,
) -> Reply {
    let body = (!body.is_null()).then(|| body.to_string());
    app.send(method, path, token, body).await
}

async fn get(app: &TestApp, path: &str, token: &str) -> Reply {
    call(app, Method::GET, path, Some(token), Value::Null).await
}

fn code(reply: &Reply) -> &str {
    reply.1["error"]["code"].as_str().unwrap_or("")
}

async fn pending_invites(app: &TestApp) -> usize {
    let (status, body) = get(app, "/v1/account/invites", &app.owner).await;
    assert_eq!(status, StatusCode::OK);
    body["invites"].as_array().unwrap().len()
}

/// Bad input is a 400 naming the field, and creates nothing.
async fn invite_refusals(app: &TestApp) {
    let before = pending_invites(app).await;
    for (body, field) in [
        (json!({"email": "not-an-address"}), "email"),
        (json!({"email": " ada@example.org"}), "email"),
        (json!({"email": "x@example.org", "role": "owner"}), "role"),
        (
            json!({"email": "x@example.org", "expires_in_days": 31}),
            "expires_in_days",
        ),
        (
            json!({"email": "x@example.org", "expires_in_days": 0}),
            "expires_in_days",
        ),
        (
            json!({"email": "x@example.org", "expires_in_days": 1.5}),
            "expires_in_days",
        ),
        (json!({"email": "x@example.org", "colour": "red"}), "colour"),
    ] {
        let r = call(
            app,
            Method::POST,
            "/v1/account/invites",
            Some(&app.owner),
            body,
        )
        .await;
        assert_eq!(r.0, StatusCode::BAD_REQUEST, "{r:?}");
        assert_eq!(r.1["error"]["field"], field, "{r:?}");
    }
    let taken = call(
        app,
        Method::POST,
        "/v1/account/invites",
        Some(&app.owner),
        json!({"email": "OWNER@localhost"}),
    )
    .await;
    assert_eq!(
        (taken.0, code(&taken)),
        (StatusCode::CONFLICT, "already_member")
    );
    assert_eq!(
        pending_invites(app).await,
        before,
        "refusals create nothing"
    );
}

async fn invite(app: &TestApp, email: &str, role: &str) -> Value {
    let (status, body) = call(
        app,
        Method::POST,
        "/v1/account/invites",
        Some(&app.owner),
        json!({"email": email, "role": role, "expires_in_days": 3}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert!(body["code"].as_str().unwrap().starts_with("slwi_"));
    body
}

async fn accept(app: &TestApp, code: &str, name: Option<&str>) -> Reply {
    call(
        app,
        Method::POST,
        "/v1/invites/accept",
        None,
        json!({"code": code, "name": name}),
    )
    .await
}

/// The whole path: invite, accept, promote, demote, remove, with the app Ada alone owned
/// passing to the admin who removed her.
#[tokio::test]
async fn invite_accept_promote_demote_remove() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (_, me) = get(&app, "/v1/account/me", &app.owner).await;
        assert_eq!(
            me["role"], "admin",
            "{backend:?}: the bootstrap person is an admin"
        );
        invite_refusals(&app).await;

        let made = invite(&app, "ada@example.org", "member").await;
        let code_text = made["code"].as_str().unwrap().to_owned();
        let (_, list) = get(&app, "/v1/account/invites", &app.owner).await;
        assert_eq!(list["invites"][0]["email"], "ada@example.org");
        assert!(
            list["invites"][0].get("code").is_none(),
            "never the code again"
        );

        let unknown = accept(&app, "slwi_nope", None).await;
        assert_eq!(
            (unknown.0, code(&unknown)),
            (StatusCode::NOT_FOUND, "invite_not_found")
        );
        let joined = accept(&app, &code_text, Some("Ada Lovelace")).await;
        assert_eq!(joined.0, StatusCode::CREATED, "{joined:?}");
        assert_eq!(joined.1["role"], "member");
        let ada = joined.1["token"].as_str().unwrap().to_owned();
        let ada_id = joined.1["user_id"].as_str().unwrap().to_owned();
        let again = accept(&app, &code_text, None).await;
        assert_eq!((again.0, code(&again)), (StatusCode::GONE, "invite_used"));
        assert_eq!(pending_invites(&app).await, 0);

        let (_, people) = get(&app, "/v1/account/users", &ada).await;
        let roles: Vec<(&str, &str)> = people["users"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["email"].as_str().unwrap(), p["role"].as_str().unwrap()))
            .collect();
        assert_eq!(
            roles,
            [("ada@example.org", "member"), ("owner@localhost", "admin")]
        );

        // A member manages nobody.
        let r = call(
            &app,
            Method::POST,
            "/v1/account/invites",
            Some(&ada),
            json!({"email": "b@x.org"}),
        )
        .await;
        assert_eq!((r.0, code(&r)), (StatusCode::FORBIDDEN, "admin_only"));
        let r = call(
            &app,
            Method::PATCH,
            "/v1/account/users/owner@localhost",
            Some(&ada),
            json!({"role": "member"}),
        )
        .await;
        assert_eq!((r.0, code(&r)), (StatusCode::FORBIDDEN, "admin_only"));
        let r = get(&app, "/v1/account/audit", &ada).await;
        assert_eq!((r.0, code(&r)), (StatusCode::FORBIDDEN, "admin_only"));

        // The last admin stays.
        let r = call(
            &app,
            Method::PATCH,
            "/v1/account/users/owner@localhost",
            Some(&app.owner),
            json!({"role": "member"}),
        )
        .await;
        assert_eq!(
            (r.0, code(&r)),
            (StatusCode::CONFLICT, "last_admin"),
            "{backend:?}"
        );
        let r = call(
            &app,
            Method::DELETE,
            "/v1/account/users/owner@localhost",
            Some(&app.owner),
            Value::Null,
        )
        .await;
        assert_eq!((r.0, code(&r)), (StatusCode::CONFLICT, "last_admin"));

        let path = format!("/v1/account/users/{ada_id}");
        let r = call(
            &app,
            Method::PATCH,
            &path,
            Some(&app.owner),
            json!({"role": "admin"}),
        )
        .await;
        assert_eq!((r.0, r.1["role"].as_str()), (StatusCode::OK, Some("admin")));
        let (_, me) = get(&app, "/v1/account/me", &ada).await;
        assert_eq!(
            me["role"], "admin",
            "the promotion holds from the next request"
        );
        let r = call(
            &app,
            Method::PATCH,
            "/v1/account/users/ADA@example.org",
            Some(&app.owner),
            json!({"role": "member"}),
        )
        .await;
        assert_eq!(
            (r.0, r.1["role"].as_str()),
            (StatusCode::OK, Some("member"))
        );
        let r = call(
            &app,
            Method::PATCH,
            &path,
            Some(&app.owner),
            json!({"role": "boss"}),
        )
        .await;
        assert_eq!(
            (r.0, r.1["error"]["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some("role"))
        );

        // Ada keeps a private secret; it must never pass to a later person with her address.
        let r = call(
            &app,
            Method::POST,
            "/v1/secrets",
            Some(&ada),
            json!({"secret_type": "user", "secret_path": "diary", "data": {"v": "x"}}),
        )
        .await;
        assert_eq!(r.0, StatusCode::CREATED, "{r:?}");
        // A pending invite Ada made as an admin dies with her admin rights.
        let r = call(
            &app,
            Method::PATCH,
            &path,
            Some(&app.owner),
            json!({"role": "admin"}),
        )
        .await;
        assert_eq!(r.0, StatusCode::OK);
        let (_, hers) = call(
            &app,
            Method::POST,
            "/v1/account/invites",
            Some(&ada),
            json!({"email": "friend@example.org"}),
        )
        .await;
        let r = call(
            &app,
            Method::PATCH,
            &path,
            Some(&app.owner),
            json!({"role": "member"}),
        )
        .await;
        assert_eq!(r.0, StatusCode::OK);
        let r = accept(&app, hers["code"].as_str().unwrap(), None).await;
        assert_eq!((r.0, code(&r)), (StatusCode::GONE, "invite_revoked"));

        // Ada alone owns an app; removing her hands it to the admin who removes her.
        let ada_app = app.register(&ada, "adas-app").await;
        let app_id = ada_app["id"].as_str().unwrap().to_owned();
        let (status, removed) =
            call(&app, Method::DELETE, &path, Some(&app.owner), Value::Null).await;
        assert_eq!(status, StatusCode::OK, "{removed}");
        assert_eq!(removed["transferred_apps"][0]["app_id"], app_id.as_str());
        let r = get(&app, "/v1/account/me", &ada).await;
        assert_eq!(r.0, StatusCode::UNAUTHORIZED, "her token stops at once");
        let (status, _) = app.get_app(&app.owner, &app_id).await;
        assert_eq!(status, StatusCode::OK, "the admin now owns her app");
        let (_, perms) = get(&app, &format!("/v1/apps/{app_id}/permissions"), &app.owner).await;
        let holders: Vec<&str> = perms["users"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["email"].as_str().unwrap())
            .collect();
        assert_eq!(holders, ["owner@localhost"]);
        let (_, people) = get(&app, "/v1/account/users", &app.owner).await;
        assert_eq!(
            people["users"].as_array().unwrap().len(),
            1,
            "removed people are not listed"
        );
        let r = call(&app, Method::DELETE, &path, Some(&app.owner), Value::Null).await;
        assert_eq!((r.0, code(&r)), (StatusCode::NOT_FOUND, "user_not_found"));

        // Invited again, she is a new person who inherits nothing of the removed one.
        let back = invite(&app, "ada@example.org", "admin").await;
        let joined = accept(&app, back["code"].as_str().unwrap(), None).await;
        assert_eq!(joined.0, StatusCode::CREATED);
        assert_ne!(joined.1["user_id"], ada_id.as_str());
        assert_eq!(joined.1["role"], "admin");
        let new_ada = joined.1["token"].as_str().unwrap().to_owned();
        let (_, mine) = get(&app, "/v1/secrets?secret_type=user", &new_ada).await;
        assert!(!mine.to_string().contains("diary"), "{mine}");

        // An admin cannot remove themselves; another admin can.
        let r = call(
            &app,
            Method::DELETE,
            "/v1/account/users/owner@localhost",
            Some(&app.owner),
            Value::Null,
        )
        .await;
        assert_eq!(
            (r.0, code(&r)),
            (StatusCode::CONFLICT, "cannot_remove_self")
        );
        let r = call(
            &app,
            Method::DELETE,
            "/v1/account/users/ada@example.org",
            Some(&new_ada),
            Value::Null,
        )
        .await;
        assert_eq!(
            (r.0, code(&r)),
            (StatusCode::CONFLICT, "cannot_remove_self")
        );

        audit_names_everything(&app, &[&code_text, &ada]).await;
        app.finish().await;
    }
}

async fn audit_names_everything(app: &TestApp, secrets: &[&str]) {
    let (status, page) = get(app, "/v1/account/audit?limit=3", &app.owner).await;
    assert_eq!(status, StatusCode::OK);
    let mut entries = page["entries"].as_array().unwrap().clone();
    let mut token = page["next_page_token"].as_str().map(str::to_owned);
    while let Some(t) = token {
        let (_, next) = get(
            app,
            &format!("/v1/account/audit?limit=3&page_token={t}"),
            &app.owner,
        )
        .await;
        entries.extend(next["entries"].as_array().unwrap().iter().cloned());
        token = next["next_page_token"].as_str().map(str::to_owned);
    }
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    for wanted in [
        "invite.created",
        "invite.accepted",
        "person.role_changed",
        "person.removed",
        "app.ownership_transferred",
    ] {
        assert!(actions.contains(&wanted), "{wanted} in {actions:?}");
    }
    let text = serde_json::to_string(&entries).unwrap();
    for secret in secrets {
        assert!(!text.contains(secret), "the audit holds no code or token");
    }
    let r = get(app, "/v1/account/audit?page_token=garbage", &app.owner).await;
    assert_eq!(r.1["error"]["field"], "page_token");
}

/// Personal tokens: made with a lifetime, listed without the secret, revoked at once, and an
/// expired one refused with the moment it expired.
#[tokio::test]
async fn personal_tokens_expire_and_revoke() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        for body in [
            json!({"name": "ci", "expires_in_days": 366}),
            json!({"name": "  "}),
            json!({}),
        ] {
            let r = call(&app, Method::POST, "/v1/tokens", Some(&app.owner), body).await;
            assert_eq!(r.0, StatusCode::BAD_REQUEST, "{r:?}");
        }
        let (status, made) = call(
            &app,
            Method::POST,
            "/v1/tokens",
            Some(&app.owner),
            json!({"name": "ci"}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        let ci = made["token"].as_str().unwrap().to_owned();
        let (_, me) = get(&app, "/v1/account/me", &ci).await;
        assert_eq!(me["email"], "owner@localhost");
        let (_, list) = get(&app, "/v1/tokens", &app.owner).await;
        let tokens = list["tokens"].as_array().unwrap();
        assert_eq!(tokens.len(), 2, "{list}");
        assert!(!list.to_string().contains(&ci), "never the secret");
        let current: Vec<bool> = tokens
            .iter()
            .map(|t| t["current"].as_bool().unwrap())
            .collect();
        assert_eq!(
            current,
            [false, true],
            "the bootstrap token is this request's"
        );
        let expires = tokens[0]["expires_at"].as_str().unwrap();
        assert!(expires > tokens[0]["created_at"].as_str().unwrap());

        // Expired: set its end in the past, as the clock would.
        let id = made["id"].as_str().unwrap();
        let db = slipway_server::db::Db::connect(
            &database_url(&app),
            slipway_server::db::Options {
                sqlite_foreign_keys: true,
            },
        )
        .await
        .unwrap();
        sqlx::query("UPDATE api_token SET expires_at = 1000 WHERE id = $1")
            .bind(id.to_owned())
            .execute(db.pool())
            .await
            .unwrap();
        db.close().await;
        let r = get(&app, "/v1/account/me", &ci).await;
        assert_eq!(
            (r.0, code(&r)),
            (StatusCode::UNAUTHORIZED, "token_expired"),
            "{backend:?}"
        );
        assert!(
            r.1["error"]["message"]
                .as_str()
                .unwrap()
                .contains("1970-01-01")
        );

        let (_, second) = call(
            &app,
            Method::POST,
            "/v1/tokens",
            Some(&app.owner),
            json!({"name": "laptop", "expires_in_days": 1}),
        )
        .await;
        let laptop = second["token"].as_str().unwrap().to_owned();
        let path = format!("/v1/tokens/{}", second["id"].as_str().unwrap());
        let r = call(&app, Method::DELETE, &path, Some(&laptop), Value::Null).await;
        assert_eq!(r.0, StatusCode::OK);
        let r = get(&app, "/v1/tokens", &laptop).await;
        assert_eq!(
            (r.0, code(&r)),
            (StatusCode::UNAUTHORIZED, "unauthenticated")
        );
        let r = call(&app, Method::DELETE, &path, Some(&app.owner), Value::Null).await;
        assert_eq!((r.0, code(&r)), (StatusCode::NOT_FOUND, "token_not_found"));
        app.finish().await;
    }
}

/// A revoked or expired invite creates nothing.
#[tokio::test]
async fn revoked_and_expired_invites_create_nothing() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let made = invite(&app, "bob@example.org", "member").await;
        let path = format!("/v1/account/invites/{}", made["id"].as_str().unwrap());
        let r = call(&app, Method::DELETE, &path, Some(&app.owner), Value::Null).await;
        assert_eq!(r.0, StatusCode::OK);
        let r = accept(&app, made["code"].as_str().unwrap(), None).await;
        assert_eq!((r.0, code(&r)), (StatusCode::GONE, "invite_revoked"));
        let r = call(&app, Method::DELETE, &path, Some(&app.owner), Value::Null).await;
        assert_eq!((r.0, code(&r)), (StatusCode::NOT_FOUND, "invite_not_found"));

        // A second invite to one address replaces the first.
        let first = invite(&app, "eve@example.org", "member").await;
        let second = invite(&app, "eve@example.org", "admin").await;
        let r = accept(&app, first["code"].as_str().unwrap(), None).await;
        assert_eq!((r.0, code(&r)), (StatusCode::GONE, "invite_revoked"));
        let db = slipway_server::db::Db::connect(
            &database_url(&app),
            slipway_server::db::Options {
                sqlite_foreign_keys: true,
            },
        )
        .await
        .unwrap();
        sqlx::query("UPDATE account_invite SET expires_at = 1000 WHERE id = $1")
            .bind(second["id"].as_str().unwrap().to_owned())
            .execute(db.pool())
            .await
            .unwrap();
        db.close().await;
        let r = accept(&app, second["code"].as_str().unwrap(), None).await;
        assert_eq!((r.0, code(&r)), (StatusCode::GONE, "invite_expired"));
        let (_, people) = get(&app, "/v1/account/users", &app.owner).await;
        assert_eq!(
            people["users"].as_array().unwrap().len(),
            1,
            "nobody joined"
        );
        app.finish().await;
    }
}

fn database_url(app: &TestApp) -> String {
    app.config.database_url.clone().unwrap_or_else(|| {
        format!(
            "sqlite://{}",
            app.data_dir().join(slipway_platform::SQLITE_FILE).display()
        )
    })
}

/// Two people using one code at once: exactly one joins. Two admins demoting each other at
/// once: one admin is left.
#[tokio::test]
async fn races_leave_one_winner() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let made = invite(&app, "twice@example.org", "admin").await;
        let code_text = made["code"].as_str().unwrap();
        let (a, b) = tokio::join!(accept(&app, code_text, None), accept(&app, code_text, None));
        let mut statuses = [a.0, b.0];
        statuses.sort();
        assert_eq!(
            statuses,
            [StatusCode::CREATED, StatusCode::GONE],
            "{backend:?}: {a:?} {b:?}"
        );
        let second = if a.0 == StatusCode::CREATED { a } else { b };
        let other = second.1["token"].as_str().unwrap().to_owned();
        let other_id = second.1["user_id"].as_str().unwrap().to_owned();
        let (_, me) = get(&app, "/v1/account/me", &app.owner).await;
        let owner_id = me["id"].as_str().unwrap().to_owned();
        for _ in 0..5 {
            let demote_other = format!("/v1/account/users/{other_id}");
            let demote_owner = format!("/v1/account/users/{owner_id}");
            let (x, y) = tokio::join!(
                call(
                    &app,
                    Method::PATCH,
                    &demote_other,
                    Some(&app.owner),
                    json!({"role": "member"})
                ),
                call(
                    &app,
                    Method::PATCH,
                    &demote_owner,
                    Some(&other),
                    json!({"role": "member"})
                ),
            );
            let (_, people) = get(&app, "/v1/account/users", &app.owner).await;
            let admins = people["users"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["role"] == "admin")
                .count();
            assert_eq!(admins, 1, "{backend:?}: {x:?} {y:?}");
            // Both admins again for the next round.
            let (_, people) = get(&app, "/v1/account/users", &app.owner).await;
            let admin_token = if people["users"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["id"] == owner_id.as_str() && p["role"] == "admin")
            {
                app.owner.clone()
            } else {
                other.clone()
            };
            for id in [&other_id, &owner_id] {
                let r = call(
                    &app,
                    Method::PATCH,
                    &format!("/v1/account/users/{id}"),
                    Some(&admin_token),
                    json!({"role": "admin"}),
                )
                .await;
                assert_eq!(r.0, StatusCode::OK, "{r:?}");
            }
        }
        app.finish().await;
    }
}
