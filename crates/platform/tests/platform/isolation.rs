//! Tenancy: another account's token sees none of this account's apps (404, not 403, and an
//! empty list); within an account an app is visible through a role on its resource.

use reqwest::StatusCode;

use crate::support::{assert_error, backends, spawn_app};

#[tokio::test]
async fn another_account_gets_404_and_an_empty_list() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let mine = app.register(&app.owner, "mine").await;
        let id = mine["id"].as_str().unwrap();
        let other = app.add_account("other@example.org").await;
        let theirs = other.token.expose();

        assert_error(
            &app.get_app(theirs, id).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        assert_error(
            &app.delete_app(theirs, id).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        assert!(app.list_all(theirs).await.is_empty(), "{backend:?}");
        // The app survived the foreign delete.
        let (status, _) = app.get_app(&app.owner, id).await;
        assert_eq!(status, StatusCode::OK, "{backend:?}");
        // A foreign 404 looks exactly like a missing app.
        let missing = uuid::Uuid::new_v4().to_string();
        let (_, foreign) = app.get_app(theirs, id).await;
        let (_, absent) = app.get_app(theirs, &missing).await;
        assert_eq!(
            foreign["error"]["message"]
                .as_str()
                .unwrap()
                .replace(id, "X"),
            absent["error"]["message"]
                .as_str()
                .unwrap()
                .replace(&missing, "X"),
        );

        // Their own apps are theirs alone; names stay unique across the platform.
        app.register(theirs, "theirs").await;
        let reply = app
            .register_raw(
                theirs,
                &serde_json::json!({"name": "mine", "display_name": "M"}),
            )
            .await;
        assert_error(&reply, StatusCode::CONFLICT, "already_exists", Some("name"));
        assert_eq!(app.list_all(&app.owner).await, vec!["mine".to_owned()]);
        assert_eq!(app.list_all(theirs).await, vec!["theirs".to_owned()]);
        app.finish().await;
    }
}

#[tokio::test]
async fn a_member_without_a_role_on_the_app_does_not_see_it() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let owned = app.register(&app.owner, "owned").await;
        let member = app.add_user("member@example.org", "Member").await;
        let token = member.token.expose();
        let id = owned["id"].as_str().unwrap();
        assert_error(
            &app.get_app(token, id).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        assert!(app.list_all(token).await.is_empty(), "{backend:?}");
        // What the member registers, the member owns (and the first owner does not see).
        let own = app.register(token, "members-app").await;
        let (status, _) = app.delete_app(token, own["id"].as_str().unwrap()).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{backend:?}");
        app.finish().await;
    }
}
