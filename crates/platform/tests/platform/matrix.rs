//! The authorization matrix: every endpoint that acts on an app (or a build of it, or its
//! secrets and roles) × every kind of caller gives the documented answer. The expected
//! answers are written out here by hand, from the role matrix in docs/platform.md — not
//! computed from the server's policy — so a change of policy has to change this table too.
//!
//! "allowed" means the request got past authorization: any status but 401, 403 and 404
//! (some allowed calls end in 400, 409 or 415 because the request itself is incomplete —
//! an empty upload, a build that already finished).

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::sharing::grant;
use crate::support::{TestApp, backends, python_devfile, python_project, spawn_app};

/// What a caller should get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// Past authorization.
    Allowed,
    /// 403: sees the app, role too low.
    Forbidden,
    /// 404: cannot see the app.
    Hidden,
    /// 401: no token.
    Unauthenticated,
}

use Answer::{Allowed as A, Forbidden as F};

/// Callers, in the order of the expectation columns.
const CALLERS: [&str; 6] = [
    "owner",
    "editor",
    "viewer",
    "member",
    "foreign",
    "anonymous",
];

struct Case {
    name: &'static str,
    method: Method,
    /// The path; `{app}`, `{build}`, `{caller}` are filled in.
    path: &'static str,
    /// The JSON body, same placeholders.
    body: Option<&'static str>,
    /// Answers for owner, editor, viewer (members without a role and other accounts get
    /// 404, requests without a token 401).
    roles: [Answer; 3],
}

fn cases() -> Vec<Case> {
    let c = |name, method, path, body, roles| Case {
        name,
        method,
        path,
        body,
        roles,
    };
    vec![
        c("get app", Method::GET, "/v1/apps/{app}", None, [A, A, A]),
        c(
            "status",
            Method::GET,
            "/v1/apps/{app}/status",
            None,
            [A, A, A],
        ),
        c("logs", Method::GET, "/v1/apps/{app}/logs", None, [A, A, A]),
        c(
            "get build",
            Method::GET,
            "/v1/builds/{build}",
            None,
            [A, A, A],
        ),
        c(
            "scan report",
            Method::GET,
            "/v1/builds/{build}/scan",
            None,
            [A, A, A],
        ),
        c(
            "upload build",
            Method::POST,
            "/v1/apps/{app}/builds",
            Some(""),
            [A, A, F],
        ),
        c(
            "upload prebuilt",
            Method::POST,
            "/v1/apps/{app}/builds/prebuilt?service_name=api",
            Some(""),
            [A, A, F],
        ),
        c(
            "cancel build",
            Method::POST,
            "/v1/builds/{build}/cancel",
            None,
            [A, A, F],
        ),
        c(
            "disable",
            Method::POST,
            "/v1/apps/{app}/disable",
            None,
            [A, A, F],
        ),
        c(
            "enable",
            Method::POST,
            "/v1/apps/{app}/enable",
            None,
            [A, A, F],
        ),
        c(
            "grantable roles",
            Method::GET,
            "/v1/apps/{app}/grantable-roles",
            None,
            [A, A, A],
        ),
        c(
            "list permissions",
            Method::GET,
            "/v1/apps/{app}/permissions",
            None,
            [A, A, A],
        ),
        c(
            "grant role",
            Method::POST,
            "/v1/apps/{app}/permissions",
            Some(r#"{"user_id": "spare@example.org", "role": "viewer"}"#),
            [A, A, F],
        ),
        c(
            "revoke role",
            Method::POST,
            "/v1/apps/{app}/permissions/revoke",
            Some(r#"{"user_id": "spare@example.org", "role": "viewer"}"#),
            [A, A, F],
        ),
        c(
            "list app secrets",
            Method::GET,
            "/v1/secrets?secret_type=app&app_id={app}",
            None,
            [A, A, A],
        ),
        c(
            "create app secret",
            Method::POST,
            "/v1/secrets",
            Some(
                r#"{"secret_type": "app", "app_id": "{app}", "secret_path": "new-{caller}", "data": {"k": "v"}}"#,
            ),
            [A, A, F],
        ),
        c(
            "read app secret",
            Method::GET,
            "/v1/secrets/entry?secret_type=app&app_id={app}&secret_path=fixture",
            None,
            [A, A, F],
        ),
        c(
            "update app secret",
            Method::PUT,
            "/v1/secrets/entry",
            Some(
                r#"{"secret_type": "app", "app_id": "{app}", "secret_path": "fixture", "data": {"k": "{caller}"}}"#,
            ),
            [A, A, F],
        ),
        c(
            "share app secret",
            Method::POST,
            "/v1/secrets/share",
            Some(
                r#"{"from_secret_type": "app", "app_id": "{app}", "from_secret_path": "fixture", "to_shared_path": "from-{caller}"}"#,
            ),
            [A, A, F],
        ),
        c(
            "delete app secret",
            Method::DELETE,
            "/v1/secrets/entry?secret_type=app&app_id={app}&secret_path=doomed",
            None,
            [A, A, F],
        ),
    ]
}

fn expected(case_roles: [Answer; 3], caller: usize) -> Answer {
    match caller {
        0..=2 => case_roles[caller],
        3 | 4 => Answer::Hidden,
        _ => Answer::Unauthenticated,
    }
}

fn classify(status: StatusCode) -> Answer {
    match status {
        StatusCode::UNAUTHORIZED => Answer::Unauthenticated,
        StatusCode::FORBIDDEN => Answer::Forbidden,
        StatusCode::NOT_FOUND => Answer::Hidden,
        _ => Answer::Allowed,
    }
}

async fn call(
    app: &TestApp,
    token: Option<&str>,
    case: &Case,
    fill: &dyn Fn(&str) -> String,
) -> (StatusCode, String) {
    let path = fill(case.path);
    let mut req = app
        .client
        .request(case.method.clone(), format!("{}{path}", app.base));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(body) = case.body {
        let content_type = if body.is_empty() {
            "application/zstd"
        } else {
            "application/json"
        };
        req = req.header("content-type", content_type).body(fill(body));
    }
    let r = req.send().await.expect("request");
    let status = r.status();
    (status, r.text().await.unwrap_or_default())
}

#[tokio::test]
async fn every_endpoint_answers_every_caller_as_documented() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let owner = app.owner.clone();
        let editor = app.add_user("editor@example.org", "Editor").await;
        let viewer = app.add_user("viewer@example.org", "Viewer").await;
        let member = app.add_user("member@example.org", "Member").await;
        app.add_user("spare@example.org", "Spare").await;
        let foreign = app.add_account("foreign@example.org").await;
        let created = app.register(&owner, "matrix").await;
        let id = created["id"].as_str().unwrap().to_owned();
        for (who, role) in [(&editor.email, "editor"), (&viewer.email, "viewer")] {
            assert_eq!(grant(&app, &owner, &id, who, role).await.0, StatusCode::OK);
        }
        // A build that fails at once gives the build endpoints something to act on.
        let build = app
            .build_one(&id, &python_project(&python_devfile("matrix", "false")))
            .await;
        app.wait_build(&build, &["failed"]).await;
        let tokens: [Option<String>; 6] = [
            Some(owner.clone()),
            Some(editor.token.expose().to_owned()),
            Some(viewer.token.expose().to_owned()),
            Some(member.token.expose().to_owned()),
            Some(foreign.token.expose().to_owned()),
            None,
        ];
        let secret = |path: &str| json!({"secret_type": "app", "app_id": id, "secret_path": path, "data": {"k": "v"}});
        crate::secrets::create(&app, &owner, secret("fixture")).await;

        let mut wrong = Vec::new();
        for case in cases() {
            for (i, caller) in CALLERS.iter().enumerate() {
                // Put back what an allowed call may have changed.
                crate::secrets::create(&app, &owner, secret("doomed")).await;
                grant(&app, &owner, &id, "spare@example.org", "viewer").await;
                let fill = |s: &str| {
                    s.replace("{app}", &id)
                        .replace("{build}", &build)
                        .replace("{caller}", caller)
                };
                let (status, body) = call(&app, tokens[i].as_deref(), &case, &fill).await;
                let want = expected(case.roles, i);
                if classify(status) != want {
                    wrong.push(format!(
                        "{} as {caller}: expected {want:?}, got {status} {body}",
                        case.name
                    ));
                }
            }
        }
        assert!(wrong.is_empty(), "{backend:?}:\n{}", wrong.join("\n"));

        // Account-wide endpoints: any member, never without a token.
        for path in [
            "/v1/apps",
            "/v1/account/users",
            "/v1/account/me",
            "/v1/secrets?secret_type=user",
            "/v1/secrets?secret_type=shared",
            "/v1/secrets/audit",
        ] {
            for (i, token) in tokens.iter().enumerate() {
                let (status, body) = app.send(Method::GET, path, token.as_deref(), None).await;
                let want = if i == 5 {
                    StatusCode::UNAUTHORIZED
                } else {
                    StatusCode::OK
                };
                assert_eq!(status, want, "{path} as {}: {body}", CALLERS[i]);
            }
        }

        // Delete last: only the owner, and then the app is gone for everyone.
        for (i, token) in tokens.iter().enumerate().rev() {
            let (status, body) = app
                .send(
                    Method::DELETE,
                    &format!("/v1/apps/{id}"),
                    token.as_deref(),
                    None,
                )
                .await;
            let want = match i {
                0 => StatusCode::NO_CONTENT,
                1 | 2 => StatusCode::FORBIDDEN,
                3 | 4 => StatusCode::NOT_FOUND,
                _ => StatusCode::UNAUTHORIZED,
            };
            assert_eq!(status, want, "delete as {}: {body}", CALLERS[i]);
        }
        app.finish().await;
    }
}
