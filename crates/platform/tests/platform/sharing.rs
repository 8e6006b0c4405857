//! App sharing over real HTTP: grantable roles per role, grants by e-mail or UUID, rank
//! rules, the last-owner guard, and the permission and account-user lists.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{Reply, TestApp, assert_error, backends, spawn_app};

/// `POST /v1/apps/{id}/permissions` (grant).
pub async fn grant(app: &TestApp, token: &str, id: &str, user: &str, role: &str) -> Reply {
    app.send(
        Method::POST,
        &format!("/v1/apps/{id}/permissions"),
        Some(token),
        Some(json!({"user_id": user, "role": role}).to_string()),
    )
    .await
}

/// `POST /v1/apps/{id}/permissions/revoke`.
pub async fn revoke(app: &TestApp, token: &str, id: &str, user: &str, role: &str) -> Reply {
    app.send(
        Method::POST,
        &format!("/v1/apps/{id}/permissions/revoke"),
        Some(token),
        Some(json!({"user_id": user, "role": role}).to_string()),
    )
    .await
}

async fn grantable(app: &TestApp, token: &str, id: &str) -> Reply {
    app.send(
        Method::GET,
        &format!("/v1/apps/{id}/grantable-roles"),
        Some(token),
        None,
    )
    .await
}

async fn permissions(app: &TestApp, token: &str, id: &str) -> Vec<(String, String)> {
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/apps/{id}/permissions"),
            Some(token),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            let keys: Vec<&String> = u.as_object().unwrap().keys().collect();
            assert_eq!(keys, ["email", "name", "role", "user_id"]);
            (
                u["email"].as_str().unwrap().to_owned(),
                u["role"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[tokio::test]
async fn roles_are_granted_and_revoked_within_rank() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let owner = app.owner.clone();
        let ed = app.add_user("ed@example.org", "Ed").await;
        let vi = app.add_user("vi@example.org", "Vi").await;
        let mo = app.add_user("mo@example.org", "Mo").await;
        let foreign = app.add_account("far@example.org").await;
        let created = app.register(&owner, "shared-app").await;
        let id = created["id"].as_str().unwrap().to_owned();

        // The owner grants by e-mail (any case) and by UUID.
        let (status, body) = grant(&app, &owner, &id, "ED@example.org", "editor").await;
        assert_eq!(status, StatusCode::OK, "{backend:?}: {body}");
        assert!(
            body["message"].as_str().unwrap().contains("editor"),
            "{body}"
        );
        assert_eq!(body["user_id"], ed.id);
        let (status, _) = grant(&app, &owner, &id, &vi.id, "viewer").await;
        assert_eq!(status, StatusCode::OK);

        let (_, roles) = grantable(&app, &owner, &id).await;
        assert_eq!(roles["roles"], json!(["owner", "editor", "viewer"]));
        let (_, roles) = grantable(&app, ed.token.expose(), &id).await;
        assert_eq!(roles["roles"], json!(["editor", "viewer"]));
        let (_, roles) = grantable(&app, vi.token.expose(), &id).await;
        assert_eq!(roles["roles"], json!([]));
        assert_eq!(roles["your_role"], "viewer");
        assert_error(
            &grantable(&app, mo.token.expose(), &id).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );

        // An editor may grant editor and viewer, never owner, and not touch an owner.
        assert_error(
            &grant(&app, ed.token.expose(), &id, &mo.email, "owner").await,
            StatusCode::FORBIDDEN,
            "permission_denied",
            None,
        );
        let (status, _) = grant(&app, ed.token.expose(), &id, &mo.email, "viewer").await;
        assert_eq!(status, StatusCode::OK);
        let (owner_id, _) = {
            let (_, users) = app
                .send(Method::GET, "/v1/account/users", Some(&owner), None)
                .await;
            let me = users["users"]
                .as_array()
                .unwrap()
                .iter()
                .find(|u| {
                    u["email"] != "ed@example.org"
                        && u["email"] != "vi@example.org"
                        && u["email"] != "mo@example.org"
                })
                .cloned()
                .unwrap();
            (me["id"].as_str().unwrap().to_owned(), me)
        };
        // Each token says whose it is.
        let (status, who) = app
            .send(Method::GET, "/v1/account/me", Some(ed.token.expose()), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{who}");
        assert_eq!(who["email"], "ed@example.org", "{who}");
        let (_, owner_me) = app
            .send(Method::GET, "/v1/account/me", Some(&owner), None)
            .await;
        assert_eq!(owner_me["id"], owner_id.as_str(), "{owner_me}");
        assert_eq!(owner_me["account_id"], who["account_id"], "{owner_me}");
        assert_error(
            &revoke(&app, ed.token.expose(), &id, &owner_id, "owner").await,
            StatusCode::FORBIDDEN,
            "permission_denied",
            None,
        );
        assert_error(
            &grant(&app, ed.token.expose(), &id, &owner_id, "viewer").await,
            StatusCode::FORBIDDEN,
            "permission_denied",
            None,
        );
        // A viewer grants nothing.
        assert_error(
            &grant(&app, vi.token.expose(), &id, &mo.email, "viewer").await,
            StatusCode::FORBIDDEN,
            "permission_denied",
            None,
        );
        // Only account members can be named; another account's user is unknown here.
        assert_error(
            &grant(&app, &owner, &id, &foreign.email, "viewer").await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        assert_error(
            &grant(&app, &owner, &id, &mo.email, "admin").await,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("role"),
        );

        let owner_email = app
            .send(Method::GET, "/v1/account/users", Some(&owner), None)
            .await
            .1["users"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["id"] == owner_id.as_str())
            .map(|u| u["email"].as_str().unwrap().to_owned())
            .unwrap();
        assert_eq!(
            permissions(&app, vi.token.expose(), &id).await,
            pairs(&[
                (&owner_email, "owner"),
                ("ed@example.org", "editor"),
                ("mo@example.org", "viewer"),
                ("vi@example.org", "viewer"),
            ]),
            "{backend:?}"
        );

        // Revoking takes the role away; the app disappears for that user.
        let (status, body) = revoke(&app, ed.token.expose(), &id, &mo.id, "viewer").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["role"], Value::Null);
        assert_error(
            &app.get_app(mo.token.expose(), &id).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        assert_error(
            &revoke(&app, &owner, &id, &mo.id, "viewer").await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn the_last_owner_can_never_be_removed() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let owner = app.owner.clone();
        let other = app.add_user("second@example.org", "Second").await;
        let created = app.register(&owner, "guarded").await;
        let id = created["id"].as_str().unwrap().to_owned();
        let (_, users) = app
            .send(Method::GET, "/v1/account/users", Some(&owner), None)
            .await;
        let me = users["users"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["id"] != other.id.as_str())
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();

        for reply in [
            revoke(&app, &owner, &id, &me, "owner").await,
            grant(&app, &owner, &id, &me, "editor").await,
        ] {
            assert_error(&reply, StatusCode::CONFLICT, "failed_precondition", None);
            assert!(
                reply.1["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("last owner"),
                "{}",
                reply.1
            );
        }
        // With a second owner, the first may step down.
        let (status, _) = grant(&app, &owner, &id, &other.email, "owner").await;
        assert_eq!(status, StatusCode::OK);
        let (status, body) = grant(&app, &owner, &id, &me, "viewer").await;
        assert_eq!(status, StatusCode::OK, "{backend:?}: {body}");
        // Now the second owner is the last one, and even they cannot leave.
        assert_error(
            &revoke(&app, other.token.expose(), &id, &other.id, "owner").await,
            StatusCode::CONFLICT,
            "failed_precondition",
            None,
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn account_users_lists_members_only() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        app.add_user("b@example.org", "B").await;
        let foreign = app.add_account("x@example.org").await;
        let (status, body) = app
            .send(Method::GET, "/v1/account/users", Some(&app.owner), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let users = body["users"].as_array().unwrap();
        assert_eq!(users.len(), 2, "{backend:?}: {body}");
        for u in users {
            let keys: Vec<&String> = u.as_object().unwrap().keys().collect();
            assert_eq!(
                keys,
                ["email", "id", "joined_at", "last_active_at", "name", "role"]
            );
        }
        assert!(!body.to_string().contains("x@example.org"));
        let (_, theirs) = app
            .send(
                Method::GET,
                "/v1/account/users",
                Some(foreign.token.expose()),
                None,
            )
            .await;
        assert_eq!(theirs["users"].as_array().unwrap().len(), 1);
        let (status, _) = app.send(Method::GET, "/v1/account/users", None, None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        app.finish().await;
    }
}

#[tokio::test]
async fn two_owners_removing_each_other_at_once_leave_one() {
    for backend in backends() {
        let app = std::sync::Arc::new(spawn_app(backend).await);
        let owner = app.owner.clone();
        let other = app.add_user("duel@example.org", "Duelist").await;
        let (_, users) = app
            .send(Method::GET, "/v1/account/users", Some(&owner), None)
            .await;
        let me = users["users"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["id"] != other.id.as_str())
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        for round in 0..5 {
            let created = app.register(&owner, &format!("duel-{round}")).await;
            let id = created["id"].as_str().unwrap().to_owned();
            assert_eq!(
                grant(&app, &owner, &id, &other.email, "owner").await.0,
                StatusCode::OK
            );
            let first = {
                let (app, token, id, target) = (
                    std::sync::Arc::clone(&app),
                    owner.clone(),
                    id.clone(),
                    other.id.clone(),
                );
                tokio::spawn(async move { revoke(&app, &token, &id, &target, "owner").await.0 })
            };
            let second = {
                let (app, token, id, target) = (
                    std::sync::Arc::clone(&app),
                    other.token.expose().to_owned(),
                    id.clone(),
                    me.clone(),
                );
                tokio::spawn(async move { revoke(&app, &token, &id, &target, "owner").await.0 })
            };
            let mut outcomes = [first.await.unwrap(), second.await.unwrap()];
            outcomes.sort();
            // One wins; the other finds itself either the last owner (409) or, having just
            // lost its role, unable to see the app at all (404).
            assert_eq!(outcomes[0], StatusCode::OK, "{backend:?}: round {round}");
            assert!(
                matches!(outcomes[1], StatusCode::CONFLICT | StatusCode::NOT_FOUND),
                "{backend:?}: round {round}: {outcomes:?}"
            );
            let owners: Vec<(String, String)> = app
                .send(
                    Method::GET,
                    &format!("/v1/apps/{id}/permissions"),
                    Some(&owner),
                    None,
                )
                .await
                .1["users"]
                .as_array()
                .map(|users| {
                    users
                        .iter()
                        .filter(|u| u["role"] == "owner")
                        .map(|u| (u["email"].to_string(), u["role"].to_string()))
                        .collect()
                })
                .unwrap_or_default();
            let owners = if owners.is_empty() {
                // The bootstrap owner may be the one removed: ask as the other.
                permissions(&app, other.token.expose(), &id)
                    .await
                    .into_iter()
                    .filter(|(_, role)| role == "owner")
                    .collect()
            } else {
                owners
            };
            assert_eq!(owners.len(), 1, "{backend:?}: round {round}: {owners:?}");
        }
        std::sync::Arc::try_unwrap(app).ok().unwrap().finish().await;
    }
}
