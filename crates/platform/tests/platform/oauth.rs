//! OAuth 2.1 sign-in for assistants through the real server, on SQLite and PostgreSQL: the
//! metadata documents, registration, the authorization request and its page, approval by the
//! signed-in person with the scope they choose, the code's exchange with PKCE (once), the
//! access token bound to `/mcp` (refused by the REST API), refresh with rotation, the grant
//! listed and revoked. The official Python client does the same walk in
//! tests/mcp/test_remote_mcp.py.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::{Method, StatusCode, redirect};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::{TestApp, backends, spawn_app};

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(redirect::Policy::none())
        .build()
        .unwrap()
}

fn location(response: &reqwest::Response) -> String {
    response.headers()["location"].to_str().unwrap().to_owned()
}

fn query_of(url: &str) -> std::collections::HashMap<String, String> {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
}

async fn token_request(app: &TestApp, form: &[(&str, &str)]) -> (StatusCode, Value) {
    let r = http()
        .post(format!("{}/oauth/token", app.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(form)
                .finish(),
        )
        .send()
        .await
        .unwrap();
    (r.status(), r.json().await.unwrap())
}

async fn tools_list(app: &TestApp, token: &str) -> (StatusCode, Value) {
    let r = http()
        .post(format!("{}/mcp", app.base))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn an_assistant_signs_in_with_the_scope_its_person_chose() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let base = app.base.clone();
        let resource = format!("{base}/mcp");
        let client = http();

        // Discovery: the resource names its authorization server, which describes itself.
        let prm: Value = client
            .get(format!("{base}/.well-known/oauth-protected-resource/mcp"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(prm["authorization_servers"], json!([base]));
        let asm: Value = client
            .get(format!("{base}/.well-known/oauth-authorization-server"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(asm["issuer"], base);
        assert_eq!(asm["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(asm["authorization_response_iss_parameter_supported"], true);

        // Registration: public clients with https or loopback redirects only.
        let bad = client
            .post(format!("{base}/oauth/register"))
            .json(&json!({"redirect_uris": ["http://evil.example/cb"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
        let redirect_uri = "http://127.0.0.1:33418/callback";
        let registered: Value = client
            .post(format!("{base}/oauth/register"))
            .json(&json!({"client_name": "Test Assistant", "redirect_uris": [redirect_uri]}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let client_id = registered["client_id"].as_str().unwrap().to_owned();

        // The authorization request, with PKCE, asking to read and write.
        let verifier = "a-verifier-of-enough-length-0123456789-abcdefghijklmnop";
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let authorize = |challenge: &str, resource: &str| {
            let mut url = url::Url::parse(&format!("{base}/oauth/authorize")).unwrap();
            url.query_pairs_mut()
                .append_pair("response_type", "code")
                .append_pair("client_id", &client_id)
                .append_pair("redirect_uri", redirect_uri)
                .append_pair("code_challenge", challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", "xyz")
                .append_pair("scope", "read write")
                .append_pair("resource", resource);
            url.to_string()
        };
        // Another resource: back to the client with invalid_target.
        let r = client
            .get(authorize(&challenge, "https://elsewhere.example/mcp"))
            .send()
            .await
            .unwrap();
        assert_eq!(query_of(&location(&r))["error"], "invalid_target");
        let r = client
            .get(authorize(&challenge, &resource))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::FOUND);
        let page_url = format!("{base}{}", location(&r));
        let page = client
            .get(&page_url)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(page.contains("Test Assistant"), "{page}");
        let code = page
            .split("data-code=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap()
            .to_owned();

        // The person sees the request and approves it read-only, as they choose.
        let (status, seen) = app
            .send(
                Method::GET,
                &format!("/v1/oauth/requests/{code}"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(seen["asked"]["read_only"], false, "{seen}");
        assert_eq!(seen["client_name"], "Test Assistant");
        let (status, _) = app
            .send(
                Method::POST,
                &format!("/v1/oauth/requests/{code}/approve"),
                Some(&app.owner),
                Some(json!({"read_only": true}).to_string()),
            )
            .await;
        assert_eq!(status, StatusCode::OK);

        // The page sends the browser back with the code, the state and the issuer.
        let r = client.get(&page_url).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::FOUND);
        let back = location(&r);
        assert!(back.starts_with(redirect_uri), "{back}");
        let q = query_of(&back);
        assert_eq!(
            (q["state"].as_str(), q["iss"].as_str()),
            ("xyz", base.as_str())
        );
        let auth_code = q["code"].clone();

        // The wrong verifier is refused; the right one gets tokens, once.
        let (status, e) = token_request(
            &app,
            &[
                ("grant_type", "authorization_code"),
                ("code", &auth_code),
                ("client_id", &client_id),
                ("redirect_uri", redirect_uri),
                (
                    "code_verifier",
                    "not-the-verifier-at-all-0123456789-abcdefghijk",
                ),
            ],
        )
        .await;
        assert_eq!(
            (status, e["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
        let exchange = [
            ("grant_type", "authorization_code"),
            ("code", auth_code.as_str()),
            ("client_id", client_id.as_str()),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
            ("resource", resource.as_str()),
        ];
        let (status, tokens) = token_request(&app, &exchange).await;
        assert_eq!(status, StatusCode::OK, "{tokens}");
        assert_eq!(tokens["token_type"], "Bearer");
        assert_eq!(
            tokens["scope"], "read",
            "read-only, no secrets: the person narrowed it"
        );
        let access = tokens["access_token"].as_str().unwrap().to_owned();
        let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
        let (status, e) = token_request(&app, &exchange).await;
        assert_eq!(
            (status, e["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant")),
            "once"
        );

        // The access token works at /mcp, with the grant's scope, and nowhere else.
        let (status, listed) = tools_list(&app, &access).await;
        assert_eq!(status, StatusCode::OK, "{listed}");
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"list_apps") && !names.contains(&"delete_app"),
            "{names:?}"
        );
        assert!(!names.contains(&"get_secret"), "no secrets");
        let (status, refused) = app.send(Method::GET, "/v1/apps", Some(&access), None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{refused}");
        assert_eq!(refused["error"]["code"], "invalid_token");
        // Its tools reach the API in-process, as the person.
        let call = http()
            .post(format!("{base}/mcp"))
            .bearer_auth(&access)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_apps","arguments":{}}}"#)
            .send()
            .await
            .unwrap();
        let answer: Value = call.json().await.unwrap();
        assert_eq!(answer["result"]["isError"], false, "{answer}");

        // Refresh: new tokens; the old refresh token stops working.
        let (status, renewed) = token_request(
            &app,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh),
                ("client_id", &client_id),
            ],
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{renewed}");
        let (status, e) = token_request(
            &app,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh),
                ("client_id", &client_id),
            ],
        )
        .await;
        assert_eq!(
            (status, e["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );

        // The grant is listed for its person, and revoking it stops its tokens at once.
        let (_, grants) = app
            .send(Method::GET, "/v1/grants", Some(&app.owner), None)
            .await;
        let grant = &grants["grants"][0];
        assert_eq!(grant["client_name"], "Test Assistant");
        assert_eq!(grant["scope"]["read_only"], true);
        let (status, _) = app
            .send(
                Method::DELETE,
                &format!("/v1/grants/{}", grant["id"].as_str().unwrap()),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let renewed_access = renewed["access_token"].as_str().unwrap();
        assert_eq!(
            tools_list(&app, renewed_access).await.0,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(tools_list(&app, &access).await.0, StatusCode::UNAUTHORIZED);

        // Declined: the browser goes back with access_denied.
        let r = client
            .get(authorize(&challenge, &resource))
            .send()
            .await
            .unwrap();
        let page_url = format!("{base}{}", location(&r));
        let page = client
            .get(&page_url)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let code = page
            .split("data-code=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap()
            .to_owned();
        let (status, _) = app
            .send(
                Method::POST,
                &format!("/v1/oauth/requests/{code}/deny"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let r = client.get(&page_url).send().await.unwrap();
        assert_eq!(query_of(&location(&r))["error"], "access_denied");

        // The audit names the approval and the revocation.
        let (_, audit) = app
            .send(Method::GET, "/v1/account/audit", Some(&app.owner), None)
            .await;
        let actions: Vec<&str> = audit["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["action"].as_str().unwrap())
            .collect();
        assert!(actions.contains(&"assistant.approved") && actions.contains(&"assistant.revoked"));
        app.finish().await;
    }
}
