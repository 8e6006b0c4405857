//! build_app against a real platform with the native builder: validation first, inline app
//! creation, imageUri written back, multi-service results, service_name, stale `.app`.

use std::path::Path;

use serde_json::{Value, json};
use slipway_toolkit::call_with;

use super::Platform;

const SERVER: &str = "import http.server, os\n\nclass H(http.server.BaseHTTPRequestHandler):\n    def do_GET(self):\n        self.send_response(200)\n        self.end_headers()\n        self.wfile.write(b'ok')\n\nhttp.server.HTTPServer(('0.0.0.0', int(os.environ['PORT'])), H).serve_forever()\n";

fn service_yaml(name: &str, port: u16, deps: &str) -> String {
    format!(
        "  # image of {name}\n  - name: {name}-image\n    image:\n      imageName: {name}\n      dockerfile:\n        uri: {name}/Dockerfile\n        buildContext: .\n  - name: {name}\n    attributes:\n      healthPath: /health\n{deps}    container:\n      image: {name}\n      endpoints:\n        - name: {name}-http\n          targetPort: {port}\n"
    )
}

fn command_yaml(name: &str) -> String {
    format!(
        "  - id: build-{name}\n    exec:\n      component: {name}\n      commandLine: python3 -c 'print(\"built\")'\n      workingDir: ${{PROJECT_SOURCE}}/{name}\n      group: {{ kind: build }}\n  - id: run-{name}\n    exec:\n      component: {name}\n      commandLine: python3 server.py\n      workingDir: ${{PROJECT_SOURCE}}/{name}\n      group: {{ kind: run }}\n"
    )
}

/// Writes a project with the given services (`(name, port, depends_on)`).
fn project(dir: &Path, app: &str, services: &[(&str, u16, Option<&str>)]) -> String {
    let mut devfile = format!(
        "# keep this comment\nschemaVersion: 2.2.0\nmetadata:\n  name: {app}\n  displayName: {app}\ncomponents:\n"
    );
    let mut commands = String::from("commands:\n");
    for (name, port, dep) in services {
        let deps = dep
            .map(|d| format!("      dependsOn: [{d}]\n"))
            .unwrap_or_default();
        devfile.push_str(&service_yaml(name, *port, &deps));
        commands.push_str(&command_yaml(name));
        std::fs::create_dir_all(dir.join(name)).unwrap();
        std::fs::write(dir.join(name).join("server.py"), SERVER).unwrap();
        std::fs::write(dir.join(name).join("Dockerfile"), format!("FROM python:3.12-slim\nCOPY {name}/ /app\nEXPOSE {port}\nCMD [\"python3\", \"/app/server.py\"]\n")).unwrap();
    }
    devfile.push_str(&commands);
    std::fs::write(dir.join("devfile.yaml"), &devfile).unwrap();
    devfile
}

fn build(p: &Platform, args: Value) -> Value {
    call_with(Some(&p.endpoint), "build_app", args).unwrap()
}

fn app_count(p: &Platform) -> usize {
    call_with(Some(&p.endpoint), "list_apps", json!({})).unwrap()["apps"]
        .as_array()
        .unwrap()
        .len()
}

#[test]
fn invalid_devfile_uploads_nothing() {
    let p = Platform::start();
    let dir = tempfile::tempdir().unwrap();
    let text = project(dir.path(), "broken", &[("api", 8001, None)]);
    std::fs::write(
        dir.path().join("devfile.yaml"),
        text.replace("targetPort: 8001", "targetPort: 0"),
    )
    .unwrap();
    let out = build(&p, json!({"project_path": dir.path()}));
    assert_eq!(out["success"], false);
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("nothing was uploaded"),
        "{out}"
    );
    assert!(
        out["errors"][0].as_str().unwrap().contains("targetPort"),
        "{out}"
    );
    assert_eq!(app_count(&p), 0, "no app may be created");
}

#[test]
fn single_service_builds_inline_and_writes_image_uri() {
    let p = Platform::start();
    let dir = tempfile::tempdir().unwrap();
    let before = project(dir.path(), "solo", &[("api", 8001, None)]);
    let out = build(&p, json!({"project_path": dir.path(), "verbose": true}));
    assert_eq!(out["success"], true, "{out}");
    for key in ["app_id", "app_url", "build_id", "image_uri"] {
        assert!(out.get(key).is_some(), "missing {key}: {out}");
    }
    let uri = out["image_uri"].as_str().unwrap();
    assert!(uri.contains("@sha256:"), "{uri}");
    assert!(
        out["build_logs"]["api"].as_str().unwrap().contains("built"),
        "{out}"
    );
    let after = std::fs::read_to_string(dir.path().join("devfile.yaml")).unwrap();
    assert!(after.contains(&format!("imageUri: {uri}")), "{after}");
    let kept = before
        .lines()
        .filter(|l| after.lines().any(|a| a == *l))
        .count();
    assert_eq!(kept, before.lines().count(), "every original line stays");
    assert_eq!(after.lines().count(), before.lines().count() + 2);

    // The inline-created app got its .app file, so the next build updates the same app.
    let file: slipway_platform_client::AppFile =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(".app")).unwrap()).unwrap();
    assert_eq!(file.app_id, out["app_id"].as_str().unwrap());
    assert_eq!(file.name, "solo");
    assert_eq!(
        out["app_file"],
        dir.path().join(".app").display().to_string()
    );
    let again = build(&p, json!({"project_path": dir.path()}));
    assert_eq!(again["app_id"], out["app_id"], "{again}");
    assert!(
        again.get("app_file").is_none(),
        "an existing .app is kept: {again}"
    );

    let scan = call_with(
        Some(&p.endpoint),
        "get_build_scan_report",
        json!({"build_id": out["build_id"]}),
    )
    .unwrap();
    assert_eq!(scan["success"], true, "{scan}");
    assert_eq!(scan["build_id"], out["build_id"]);
    assert!(
        scan["error"].as_str().unwrap().contains("advisory"),
        "no advisory database is configured: {scan}"
    );
}

#[test]
fn multi_service_build_order_and_single_service_rebuild() {
    let p = Platform::start();
    let dir = tempfile::tempdir().unwrap();
    project(
        dir.path(),
        "duo",
        &[("web", 8000, Some("api")), ("api", 8001, None)],
    );
    let reg = call_with(
        Some(&p.endpoint),
        "register_app",
        json!({"name": "duo", "display_name": "Duo", "project_path": dir.path()}),
    )
    .unwrap();
    assert_eq!(reg["success"], true, "{reg}");
    let out = build(&p, json!({"project_path": dir.path()}));
    assert_eq!(out["success"], true, "{out}");
    assert_eq!(out["app_id"], reg["app_id"], "the .app file's app is built");
    assert_eq!(out["deploy_order"], json!(["api", "web"]));
    assert_eq!(out["build_ids"].as_array().unwrap().len(), 2);
    assert_eq!(out["rollout_waited"], false);
    let uris = out["image_uris"].as_object().unwrap();
    assert!(
        uris.contains_key("api") && uris.contains_key("web"),
        "{out}"
    );
    assert!(out["service_urls"].is_object());

    let again = build(
        &p,
        json!({"project_path": dir.path(), "service_name": "web"}),
    );
    assert_eq!(again["success"], true, "{again}");
    assert_eq!(again["build_ids"].as_array().unwrap().len(), 1);
    assert_eq!(
        again["image_uris"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["web"]
    );
    let bad = build(
        &p,
        json!({"project_path": dir.path(), "service_name": "db"}),
    );
    assert!(
        bad["error"].as_str().unwrap().starts_with("service_name:"),
        "{bad}"
    );
}

#[test]
fn stale_app_file_after_delete_is_a_clear_404() {
    let p = Platform::start();
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "gone", &[("api", 8001, None)]);
    let reg = call_with(
        Some(&p.endpoint),
        "register_app",
        json!({"name": "gone", "display_name": "Gone", "project_path": dir.path()}),
    )
    .unwrap();
    let del = call_with(
        Some(&p.endpoint),
        "delete_app",
        json!({"app_id": reg["app_id"]}),
    )
    .unwrap();
    assert_eq!(del["success"], true);
    let out = build(&p, json!({"project_path": dir.path()}));
    assert_eq!(out["success"], false);
    let error = out["error"].as_str().unwrap();
    assert!(
        error.starts_with("404")
            && error.contains("Delete the .app file")
            && error.contains("register_app"),
        "{error}"
    );
}

#[test]
fn local_mode_without_builder_host_fails_fast() {
    if std::env::var_os("BUILDER_HOST").is_some() {
        eprintln!(
            "SKIPPED local_mode_without_builder_host_fails_fast: BUILDER_HOST is set in this environment (CI leaves it unset)"
        );
        return;
    }
    let p = Platform::start();
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "local", &[("api", 8001, None)]);
    let out = build(
        &p,
        json!({"project_path": dir.path(), "build_mode": "local"}),
    );
    assert_eq!(out["success"], false);
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("BUILDER_HOST is not set"),
        "{out}"
    );
    assert_eq!(app_count(&p), 0);
}

/// Every tool's `output_schema` describes what it really returns: one scenario on a real
/// platform (a real build with the native builder) calls each of the 26 tools so that it
/// succeeds, and validates the rendered result against the tool's schema. A failed build's
/// result, which carries its logs, is checked on the way.
#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one scenario through every tool; the 100-line limit is for production code"
)]
fn every_tool_result_matches_its_output_schema() {
    let p = Platform::start();
    let mut checked = std::collections::BTreeSet::new();
    let mut ok = |tool: &str, args: Value| -> Value {
        let out = call_with(Some(&p.endpoint), tool, args.clone()).unwrap();
        assert_eq!(out["success"], true, "{tool} {args}: {out}");
        let schema = slipway_toolkit::output_schema(tool).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let problems: Vec<String> = validator
            .iter_errors(&out)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(problems.is_empty(), "{tool}: {problems:?}\n{out}");
        checked.insert(tool.to_owned());
        out
    };
    let work = tempfile::tempdir().unwrap();
    ok("get_available_templates", json!({}));
    ok(
        "scaffold_app",
        json!({"app_name": "scaffolded", "app_type": "python-api", "output_directory": work.path()}),
    );
    ok(
        "validate_devfile",
        json!({"devfile_content": "schemaVersion: 2.2.0\nmetadata: {}\n"}),
    );
    ok(
        "generate_devfile",
        json!({"app_name": "gen", "display_name": "Gen", "description": "", "output_path": work.path().join("gen.yaml")}),
    );

    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "typed", &[("api", 8001, None)]);
    let reg = ok(
        "register_app",
        json!({"name": "typed", "display_name": "Typed", "project_path": dir.path()}),
    );
    let app = json!({"app_id": reg["app_id"]});
    let built = ok(
        "build_app",
        json!({"project_path": dir.path(), "verbose": true}),
    );
    ok(
        "get_build_scan_report",
        json!({"build_id": built["build_id"]}),
    );
    ok("list_apps", json!({"page_size": 1}));
    ok("get_app", app.clone());
    ok("get_app_status", app.clone());
    ok(
        "get_app_logs",
        json!({"app_id": reg["app_id"], "latest_only": false}),
    );
    ok("disable_app", app.clone());
    ok("enable_app", app.clone());

    let secret = json!({"secret_type": "app", "app_id": reg["app_id"], "secret_path": "db/creds"});
    let with = |extra: Value| {
        let mut v = secret.clone();
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };
    ok(
        "create_secret",
        with(json!({"data": "{\"password\": \"p1\"}", "metadata": "{\"owner\": \"ops\"}"})),
    );
    ok("update_secret", with(json!({"data": "{\"password\": 2}"})));
    ok("get_secret", secret.clone());
    ok(
        "list_secrets",
        json!({"secret_type": "app", "app_id": reg["app_id"]}),
    );
    ok(
        "share_secret",
        json!({"from_secret_type": "app", "app_id": reg["app_id"], "from_secret_path": "db/creds", "to_shared_path": "team/db"}),
    );
    ok("delete_secret", secret.clone());

    p.add_user("bob@example.org");
    ok("list_account_users", json!({}));
    ok("list_grantable_roles", app.clone());
    let role = json!({"app_id": reg["app_id"], "role": "viewer", "user_id": "bob@example.org"});
    ok("grant_app_role", role.clone());
    ok("list_app_permissions", app.clone());
    ok("revoke_app_role", role);

    // A build that runs long enough to be cancelled: its build_app fails, with the logs.
    let slow = tempfile::tempdir().unwrap();
    let text = project(slow.path(), "slow", &[("api", 8001, None)]);
    std::fs::write(
        slow.path().join("devfile.yaml"),
        text.replace("python3 -c 'print(\"built\")'", "sleep 60"),
    )
    .unwrap();
    let slow_app = ok(
        "register_app",
        json!({"name": "slow", "display_name": "Slow", "project_path": slow.path()}),
    );
    let slow_id = slow_app["app_id"].as_str().unwrap().to_owned();
    let endpoint = p.endpoint.clone();
    let slow_path = slow.path().to_path_buf();
    let building = std::thread::spawn(move || {
        call_with(
            Some(&endpoint),
            "build_app",
            json!({"project_path": slow_path}),
        )
        .unwrap()
    });
    let client = slipway_platform_client::Client::new(p.endpoint.clone()).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let running = loop {
        let page = slipway_platform_client::builds::list(&client, &slow_id, 5, None).unwrap();
        if let Some(b) = page.builds.iter().find(|b| !b.status.is_finished()) {
            break b.build_id.clone();
        }
        assert!(std::time::Instant::now() < deadline, "no build started");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    ok("cancel_build", json!({"build_id": running}));
    let failed = building.join().unwrap();
    assert_eq!(failed["success"], false, "{failed}");
    assert_eq!(failed["build_ids"], json!([running]), "{failed}");
    assert!(failed["build_logs"].get("api").is_some(), "{failed}");

    // The platform's own tools: custom domains (the test platform serves them; the name
    // resolves nowhere here, so it stays pending).
    let domain = ok(
        "add_domain",
        json!({"app_id": slow_id, "name": "slow.example.org"}),
    );
    assert_eq!(domain["state"], "pending", "{domain}");
    ok("list_domains", json!({"app_id": slow_id}));
    ok(
        "remove_domain",
        json!({"app_id": slow_id, "name": "slow.example.org"}),
    );
    // Its git source, over SSH with a deploy key (the host resolves nowhere here).
    let source = ok(
        "connect_git_source",
        json!({"app_id": slow_id, "repo_url": "git@git.invalid:acme/slow.git"}),
    );
    assert!(
        source["deploy_key"]
            .as_str()
            .unwrap()
            .starts_with("ssh-ed25519 "),
        "{source}"
    );
    ok("get_git_source", json!({"app_id": slow_id}));
    ok("deploy_git_source", json!({"app_id": slow_id}));
    ok("list_previews", json!({"app_id": slow_id}));
    ok("disconnect_git_source", json!({"app_id": slow_id}));
    ok("delete_app", json!({"app_id": slow_id}));
    ok("delete_app", app);
    let all: std::collections::BTreeSet<String> = slipway_toolkit::all_tools()
        .map(|t| t.name.to_owned())
        .collect();
    assert_eq!(checked, all, "every tool's result is checked");
}
