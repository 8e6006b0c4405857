//! `slipway domains` against a real platform process that serves custom domains: `add` from
//! a project (its `.app`), `list` as a table that says why a domain waits and as JSON for
//! scripts, `show`, `remove`, and a refused name that names its rule. The certificates
//! themselves are tested against pebble in the platform's own tests.

use crate::daily::{free_port, serve_with, slipway};
use crate::stateful_crash::build;

const SERVER: &str = r#"import http.server, os
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

const DEVFILE: &str = r#"schemaVersion: 2.2.0
metadata:
  name: storefront
  displayName: Storefront
components:
  - name: web-image
    image:
      imageName: web
      dockerfile:
        uri: Dockerfile
        buildContext: .
  - name: web
    container:
      image: web
      endpoints:
        - name: http
          targetPort: 8005
commands:
  - id: build
    exec:
      component: web
      commandLine: "true"
      workingDir: ${PROJECT_SOURCE}
      group: { kind: build, isDefault: true }
  - id: run
    exec:
      component: web
      commandLine: python3 server.py
      workingDir: ${PROJECT_SOURCE}
      group: { kind: run, isDefault: true }
"#;

fn text(out: &std::process::Output) -> (bool, String, String) {
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn domains_are_added_listed_shown_and_removed_from_the_cli() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("platform");
    let (port, gateway, http) = (free_port(), free_port(), free_port());
    let http_listen = format!("127.0.0.1:{http}");
    let _server = serve_with(
        &data,
        None,
        port,
        gateway,
        &["--gateway-http-listen", &http_listen],
    );
    let token = loop {
        if let Ok(t) = std::fs::read_to_string(data.join("bootstrap-token")) {
            break t.trim().to_owned();
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let env = [
        ("SLIPWAY_PLATFORM_URL", format!("http://127.0.0.1:{port}")),
        ("SLIPWAY_TOKEN", token),
    ];
    let project = work.path().join("storefront");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("devfile.yaml"), DEVFILE).unwrap();
    std::fs::write(project.join("server.py"), SERVER).unwrap();
    std::fs::write(project.join("Dockerfile"), "FROM scratch\nCOPY . /app\n").unwrap();
    build(&project, &env);

    // Added from the project directory (its .app names the app).
    let (ok, out, err) = text(&slipway(
        &project,
        &env,
        &["domains", "add", "Shop.Example.org"],
    ));
    assert!(ok, "{out}{err}");
    assert!(out.contains("Added shop.example.org"), "{out}");

    // The name does not resolve here (no DNS for it on this machine): the list says so.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let listed = loop {
        let (ok, out, err) = text(&slipway(&project, &env, &["domains", "list", "--json"]));
        assert!(ok, "{out}{err}");
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        let d = &json["domains"][0];
        if d["reason"]
            .as_str()
            .is_some_and(|r| r.contains("DNS not pointing here"))
        {
            break json;
        }
        assert!(std::time::Instant::now() < deadline, "{out}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert_eq!(listed["success"], true);
    assert_eq!(listed["domains"][0]["name"], "shop.example.org");
    assert_eq!(listed["domains"][0]["state"], "pending");
    assert_eq!(
        listed["domains"][0]["url"],
        format!("http://shop.example.org:{http}")
    );
    let (ok, table, _) = text(&slipway(&project, &env, &["domains", "list"]));
    assert!(ok);
    for shown in [
        "DOMAIN",
        "STATE",
        "shop.example.org",
        "pending",
        "(primary service)",
        "DNS not pointing here",
    ] {
        assert!(table.contains(shown), "{shown} in {table}");
    }
    // Elsewhere, by --app name.
    let (ok, shown, err) = text(&slipway(
        work.path(),
        &env,
        &["domains", "show", "shop.example.org", "--app", "storefront"],
    ));
    assert!(ok, "{shown}{err}");
    assert!(
        shown.contains("state:    pending") && shown.contains("why:"),
        "{shown}"
    );

    // A wildcard is refused with the rule, and nothing is added.
    let (ok, _, err) = text(&slipway(
        &project,
        &env,
        &["domains", "add", "*.example.org"],
    ));
    assert!(!ok);
    assert!(err.contains("wildcard"), "{err}");
    let (ok, out, _) = text(&slipway(
        work.path(),
        &env,
        &["domains", "list", "--json", "--app", "storefront"],
    ));
    assert!(ok);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["domains"].as_array().unwrap().len(), 1, "{out}");

    let (ok, out, err) = text(&slipway(
        &project,
        &env,
        &["domains", "remove", "shop.example.org"],
    ));
    assert!(ok, "{out}{err}");
    assert!(out.contains("Removed shop.example.org"), "{out}");
    let (ok, out, _) = text(&slipway(&project, &env, &["domains", "list"]));
    assert!(ok);
    assert!(out.contains("no custom domains"), "{out}");
    // Outside a project and without --app: the error says what to give.
    let (ok, _, err) = text(&slipway(work.path(), &env, &["domains", "list"]));
    assert!(!ok);
    assert!(err.contains(".app"), "{err}");
}
