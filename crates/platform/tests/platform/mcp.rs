//! `/mcp` through the real server, on SQLite and PostgreSQL, spoken as JSON-RPC over HTTP as
//! a client would (the official Python client's walk is tests/mcp/test_remote_mcp.py): the
//! 401 that names the metadata, Host and Origin checks, the tools a token's scope lists and
//! the 403 for a call beyond it, in-process tool calls whose results conform to their output
//! schemas, refused file arguments, toolsets, the audit of every call, a revoked token.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{TestApp, backends, spawn_app};

/// A protocol version before 2026-07-28's (an `initialize` exists) and 2026-07-28's own.
const OLDER: &str = "2025-11-25";
const STATELESS: &str = "2026-07-28";

struct Answer {
    status: StatusCode,
    headers: reqwest::header::HeaderMap,
    body: Value,
}

async fn post(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    body: &str,
    extra: &[(&str, &str)],
) -> Answer {
    let mut request = reqwest::Client::new()
        .request(Method::POST, format!("{}{path}", app.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_owned());
    if !extra
        .iter()
        .any(|(name, _)| *name == "mcp-protocol-version")
    {
        request = request.header("mcp-protocol-version", OLDER);
    }
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    Answer {
        status,
        headers,
        body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
    }
}

async fn rpc(app: &TestApp, token: &str, method: &str, params: Value) -> Answer {
    rpc_at(app, "/mcp", token, method, params).await
}

async fn rpc_at(app: &TestApp, path: &str, token: &str, method: &str, params: Value) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    post(app, path, Some(token), &body.to_string(), &[]).await
}

async fn tools(app: &TestApp, token: &str, path: &str) -> Vec<Value> {
    let a = rpc_at(app, path, token, "tools/list", json!({})).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.body["result"]["tools"].as_array().unwrap().clone()
}

fn names(tools: &[Value]) -> Vec<&str> {
    tools.iter().map(|t| t["name"].as_str().unwrap()).collect()
}

async fn call(app: &TestApp, token: &str, tool: &str, args: Value) -> Answer {
    rpc(
        app,
        token,
        "tools/call",
        json!({"name": tool, "arguments": args}),
    )
    .await
}

async fn new_token(app: &TestApp, body: Value) -> (String, String) {
    let (status, made) = app
        .send(
            Method::POST,
            "/v1/tokens",
            Some(&app.owner),
            Some(body.to_string()),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    (
        made["token"].as_str().unwrap().to_owned(),
        made["id"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test]
async fn assistants_reach_the_platforms_tools_as_their_token_allows() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let owner = app.owner.clone();
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": OLDER, "capabilities": {},
            "clientInfo": {"name": "test-assistant", "version": "1"}}})
        .to_string();

        // No token: 401 naming the protected resource metadata, which names /mcp.
        let a = post(&app, "/mcp", None, &initialize, &[]).await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED);
        let challenge = a.headers["www-authenticate"].to_str().unwrap();
        let metadata_url = format!("{}/.well-known/oauth-protected-resource/mcp", app.base);
        assert_eq!(
            challenge,
            format!(r#"Bearer resource_metadata="{metadata_url}""#)
        );
        let metadata: Value = reqwest::get(&metadata_url)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(metadata["resource"], format!("{}/mcp", app.base));
        // A name that is not the platform's (DNS rebinding), a foreign page: 403.
        let rebound = post(
            &app,
            "/mcp",
            Some(&owner),
            &initialize,
            &[("host", "evil.example")],
        )
        .await;
        assert_eq!(rebound.status, StatusCode::FORBIDDEN, "{}", rebound.body);
        let foreign = post(
            &app,
            "/mcp",
            Some(&owner),
            &initialize,
            &[("origin", "https://evil.example")],
        )
        .await;
        assert_eq!(foreign.status, StatusCode::FORBIDDEN);
        let local_page = post(
            &app,
            "/mcp",
            Some(&owner),
            &initialize,
            &[("origin", "http://localhost:5173")],
        )
        .await;
        assert_eq!(local_page.status, StatusCode::OK, "{}", local_page.body);
        // Not JSON-RPC: a 4xx, and nothing is run.
        let bad = post(&app, "/mcp", Some(&owner), "{not json", &[]).await;
        assert!(bad.status.is_client_error(), "{}", bad.status);
        let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).to_string();
        let wrong_version = post(
            &app,
            "/mcp",
            Some(&owner),
            &list,
            &[("mcp-protocol-version", "1999-01-01")],
        )
        .await;
        assert_eq!(
            wrong_version.status,
            StatusCode::BAD_REQUEST,
            "{}",
            wrong_version.body
        );
        let a = post(&app, "/mcp", Some(&owner), &initialize, &[]).await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        let instructions = a.body["result"]["instructions"].as_str().unwrap();
        assert!(
            instructions.contains("slipway mcp"),
            "the remote server says where file tools are"
        );

        // Every tool but the two that need the caller's files, each described.
        let all = tools(&app, &owner, "/mcp").await;
        let listed = names(&all);
        assert!(listed.contains(&"delete_app") && listed.contains(&"get_secret"));
        assert!(!listed.contains(&"build_app") && !listed.contains(&"scaffold_app"));
        for tool in &all {
            assert!(tool["title"].is_string(), "{tool}");
            assert!(tool["annotations"]["readOnlyHint"].is_boolean(), "{tool}");
            assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
        }
        // The same list for a client of 2026-07-28, with no initialize.
        let stateless =
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": STATELESS,
            "io.modelcontextprotocol/clientInfo": {"name": "stateless-assistant", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}})
            .to_string();
        let a = post(
            &app,
            "/mcp",
            Some(&owner),
            &stateless,
            &[
                ("mcp-protocol-version", STATELESS),
                ("mcp-method", "tools/list"),
            ],
        )
        .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        let mismatched = post(
            &app,
            "/mcp",
            Some(&owner),
            &stateless,
            &[("mcp-protocol-version", OLDER)],
        )
        .await;
        assert_eq!(
            mismatched.status,
            StatusCode::BAD_REQUEST,
            "the header and _meta disagree"
        );
        assert_eq!(
            a.body["result"]["tools"].as_array().map(Vec::len),
            Some(all.len())
        );

        // Calls run in-process as the caller; results conform to their output schemas.
        let app_made = call(
            &app,
            &owner,
            "register_app",
            json!({"name": "orders", "display_name": "Orders"}),
        )
        .await;
        let result = &app_made.body["result"];
        assert_eq!(result["isError"], false, "{}", app_made.body);
        let app_id = result["structuredContent"]["app_id"]
            .as_str()
            .unwrap()
            .to_owned();
        for (tool, args) in [
            ("list_apps", json!({})),
            ("get_app_status", json!({"app_id": app_id})),
            ("list_app_permissions", json!({"app_id": app_id})),
            (
                "validate_devfile",
                json!({"devfile_content": "schemaVersion: 2.2.0\n"}),
            ),
        ] {
            let a = call(&app, &owner, tool, args).await;
            let result = &a.body["result"];
            let schema = all.iter().find(|t| t["name"] == tool).unwrap()["outputSchema"].clone();
            let validator = jsonschema::validator_for(&schema).unwrap();
            let structured = &result["structuredContent"];
            assert!(
                validator.is_valid(structured),
                "{tool}: {structured} against {schema}"
            );
        }
        // A file on the caller's machine is refused by name.
        let a = call(
            &app,
            &owner,
            "validate_devfile",
            json!({"devfile_path": "/etc/passwd"}),
        )
        .await;
        assert_eq!(a.body["result"]["isError"], true);
        assert_eq!(
            a.body["result"]["structuredContent"]["field"],
            "devfile_path"
        );

        // Toolsets narrow the list; an unknown one is a 400 naming it.
        let logs = tools(&app, &owner, "/mcp?toolsets=logs").await;
        assert_eq!(names(&logs), ["get_app_logs"]);
        let a = rpc_at(&app, "/mcp?toolsets=nope", &owner, "tools/list", json!({})).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST);
        assert_eq!(a.body["error"]["field"], "toolsets");

        // A read-only token: no write tool listed; a write call is 403 before anything runs.
        let (reader, reader_id) =
            new_token(&app, json!({"name": "assistant", "read_only": true})).await;
        let read_tools = tools(&app, &reader, "/mcp").await;
        let listed = names(&read_tools);
        assert!(
            listed.contains(&"get_app_status") && !listed.contains(&"delete_app"),
            "{listed:?}"
        );
        assert!(
            read_tools.iter().all(
                |t| t["annotations"]["readOnlyHint"] == true || t["name"] == "generate_devfile"
            )
        );
        let a = call(&app, &reader, "delete_app", json!({"app_id": app_id})).await;
        assert_eq!(a.status, StatusCode::FORBIDDEN, "{}", a.body);
        assert!(
            a.headers["www-authenticate"]
                .to_str()
                .unwrap()
                .contains("insufficient_scope")
        );
        assert_eq!(
            app.get_app(&owner, &app_id).await.0,
            StatusCode::OK,
            "not deleted"
        );
        let a = call(&app, &reader, "get_app", json!({"app_id": app_id})).await;
        assert_eq!(a.body["result"]["isError"], false, "{}", a.body);
        // Calls at once: their entries are written together, none lost.
        let at_once = futures_util::future::join_all(
            (0..12).map(|_| call(&app, &reader, "get_app_status", json!({"app_id": app_id}))),
        )
        .await;
        assert!(at_once.iter().all(|a| a.status == StatusCode::OK));

        // Every call is in the account's audit: who, which client, which tool, the outcome
        // (a read's entry is written just after its answer, in the next batch).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let audit = loop {
            let (_, audit) = app
                .send(Method::GET, "/v1/account/audit", Some(&owner), None)
                .await;
            let written = audit["entries"].as_array().is_some_and(|entries| {
                entries
                    .iter()
                    .any(|e| e["action"] == "mcp.tool_called" && e["subject"] == "get_app")
                    && entries
                        .iter()
                        .filter(|e| e["subject"] == "get_app_status")
                        .count()
                        == 13
            });
            if written || std::time::Instant::now() > deadline {
                break audit;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        let calls: Vec<&Value> = audit["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["action"] == "mcp.tool_called")
            .collect();
        assert!(
            calls.iter().any(|e| e["subject"] == "register_app"),
            "{audit}"
        );
        assert_eq!(
            calls
                .iter()
                .filter(|e| e["subject"] == "get_app_status")
                .count(),
            13,
            "the 12 at once and the one before: {audit}"
        );
        let get = calls.iter().find(|e| e["subject"] == "get_app").unwrap();
        assert!(get["detail"].as_str().unwrap().contains(&app_id), "{get}");
        assert!(
            !calls.iter().any(|e| e["subject"] == "delete_app"),
            "refused before it ran"
        );

        // Revoked: the next request is 401.
        let (status, _) = app
            .send(
                Method::DELETE,
                &format!("/v1/tokens/{reader_id}"),
                Some(&owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let a = rpc(&app, &reader, "tools/list", json!({})).await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED);
        app.finish().await;
    }
}

/// The tools that are one API request run awaited on the caller's in-process endpoint (no
/// thread of their own): their results are the API's answers, and their failures name the
/// argument at fault and say what the API said, as the blocking path's do.
#[tokio::test]
async fn one_request_tools_answer_as_the_api_does() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let owner = app.owner.clone();
        let made = call(
            &app,
            &owner,
            "register_app",
            json!({"name": "ledger", "display_name": "Ledger"}),
        )
        .await;
        let app_id = made.body["result"]["structuredContent"]["app_id"]
            .as_str()
            .unwrap()
            .to_owned();

        // The result is the API's answer, plus `success`.
        let a = call(&app, &owner, "get_app_status", json!({"app_id": app_id})).await;
        let (status, rest) = app
            .send(
                Method::GET,
                &format!("/v1/apps/{app_id}/status"),
                Some(&owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let mut expected = rest.clone();
        expected["success"] = json!(true);
        assert_eq!(
            a.body["result"]["structuredContent"], expected,
            "{}",
            a.body
        );

        // A result the tool shapes: the logs carry the app's id, the roles the caller's own.
        let a = call(&app, &owner, "get_app_logs", json!({"app_id": app_id})).await;
        let logs = &a.body["result"]["structuredContent"];
        assert_eq!(logs["app_id"], app_id.as_str(), "{}", a.body);
        assert!(logs["logs"].is_array(), "{}", a.body);
        let a = call(
            &app,
            &owner,
            "list_grantable_roles",
            json!({"app_id": app_id}),
        )
        .await;
        let roles = &a.body["result"]["structuredContent"];
        assert_eq!(roles["your_role"], "owner", "{}", a.body);
        let a = call(&app, &owner, "list_apps", json!({"page_size": 5})).await;
        let apps = a.body["result"]["structuredContent"]["apps"]
            .as_array()
            .unwrap();
        assert!(
            apps.iter().any(|x| x["app_id"] == app_id.as_str()),
            "{}",
            a.body
        );

        // An argument the tool checks itself: refused before any request, named.
        let a = call(
            &app,
            &owner,
            "get_app_status",
            json!({"app_id": "not-a-uuid"}),
        )
        .await;
        assert_eq!(a.body["result"]["isError"], true, "{}", a.body);
        assert_eq!(a.body["result"]["structuredContent"]["field"], "app_id");
        let a = call(
            &app,
            &owner,
            "list_secrets",
            json!({"secret_type": "app", "app_id": app_id, "prefix": "/no//"}),
        )
        .await;
        assert_eq!(
            a.body["result"]["structuredContent"]["field"], "prefix",
            "{}",
            a.body
        );

        // What the API refuses: its words, not retryable.
        let unknown = "00000000-0000-4000-8000-000000000000";
        let a = call(&app, &owner, "get_app_status", json!({"app_id": unknown})).await;
        let failure = &a.body["result"]["structuredContent"];
        assert_eq!(a.body["result"]["isError"], true, "{}", a.body);
        assert_eq!(failure["retryable"], false, "{}", a.body);
        assert_eq!(failure["error"], format!("no app with id {unknown}"));
        let a = call(
            &app,
            &owner,
            "get_secret",
            json!({"secret_type": "app", "app_id": app_id, "secret_path": "db/password"}),
        )
        .await;
        assert_eq!(a.body["result"]["isError"], true, "{}", a.body);
        assert_eq!(
            a.body["result"]["structuredContent"]["error"],
            format!("no secret at path \"db/password\" in the secrets of app {app_id}")
        );
        app.finish().await;
    }
}
