//! `slipway call build_app` answers the app's URLs against a real platform process (the
//! default `ports` gateway mode): `app_url` and one `service_urls` entry per service, each
//! answering a plain HTTP client once the app is RUNNING; `slipway build` prints the same
//! URLs on a rebuild.

use std::path::Path;

use serde_json::Value;

use super::daily::{platform, slipway};

/// A stdlib server on `$PORT` saying which service answered.
const SERVER: &str = "import http.server, os, sys\n\
class H(http.server.BaseHTTPRequestHandler):\n    \
def do_GET(self):\n        \
body = ('hello from %s' % sys.argv[1]).encode()\n        \
self.send_response(200); self.send_header('content-length', str(len(body))); self.end_headers()\n        \
self.wfile.write(body)\n    \
def log_message(self, *a):\n        pass\n\
http.server.HTTPServer(('127.0.0.1', int(os.environ['PORT'])), H).serve_forever()\n";

/// `web` and `api`, both public, each with an image, a build and a run command.
fn devfile() -> String {
    let mut out = String::from(
        "schemaVersion: 2.2.0\nmetadata:\n  name: urls\n  displayName: URLs\ncomponents:\n",
    );
    for (name, port) in [("web", 3000), ("api", 8002)] {
        out.push_str(&format!(
            "  - name: {name}-image\n    image:\n      imageName: {name}\n      dockerfile:\n        \
             uri: Dockerfile\n        buildContext: .\n  - name: {name}\n    container:\n      \
             image: {name}\n      endpoints:\n        - name: {name}-http\n          targetPort: {port}\n"
        ));
    }
    out.push_str("commands:\n");
    for name in ["web", "api"] {
        out.push_str(&format!(
            "  - id: build-{name}\n    exec:\n      component: {name}\n      commandLine: \"true\"\n      \
             workingDir: ${{PROJECT_SOURCE}}\n      group: {{ kind: build, isDefault: true }}\n  \
             - id: run-{name}\n    exec:\n      component: {name}\n      \
             commandLine: python3 server.py {name}\n      workingDir: ${{PROJECT_SOURCE}}\n      \
             group: {{ kind: run, isDefault: true }}\n"
        ));
    }
    out
}

/// The bodies of `GET` each of `urls` with Python's urllib (the system resolver, no browser
/// magic), in order.
fn urllib_bodies(urls: &[&str]) -> Vec<String> {
    let script = "import json, sys, urllib.request\n\
                  print(json.dumps([urllib.request.urlopen(u, timeout=10).read().decode() \
                  for u in sys.argv[1:]]))";
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(urls)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "urllib could not GET {urls:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON list of bodies")
}

fn write_project(project: &Path) {
    std::fs::create_dir_all(project).unwrap();
    std::fs::write(project.join("devfile.yaml"), devfile()).unwrap();
    std::fs::write(project.join("server.py"), SERVER).unwrap();
    std::fs::write(project.join("Dockerfile"), "FROM scratch\nCOPY . /app\n").unwrap();
}

#[test]
fn build_app_answers_urls_that_serve_once_running() {
    let work = tempfile::tempdir().unwrap();
    let (_server, _gateway, env) = platform(work.path());
    let project = work.path().join("urls");
    write_project(&project);

    let args = serde_json::json!({ "project_path": project }).to_string();
    let out = slipway(&project, &env, &["call", "build_app", &args]);
    let built: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(
        out.status.success() && built["success"] == true,
        "{built}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let app_url = built["app_url"].as_str().unwrap_or_default().to_owned();
    assert!(app_url.starts_with("http://127.0.0.1:"), "{built}");
    let service_urls = built["service_urls"].as_object().unwrap().clone();
    assert_eq!(
        service_urls.keys().collect::<Vec<_>>(),
        ["api", "web"],
        "{built}"
    );
    assert_eq!(service_urls["web"], app_url.as_str(), "web is listed first");

    // build_app wrote `.app` for the app it created, so status finds it.
    let out = slipway(&project, &env, &["status", "--watch"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.lines().last().unwrap().starts_with("RUNNING"),
        "{stdout}"
    );
    let urls: Vec<&str> = service_urls.values().filter_map(Value::as_str).collect();
    let greetings: Vec<String> = service_urls
        .keys()
        .map(|s| format!("hello from {s}"))
        .collect();
    assert_eq!(urllib_bodies(&urls), greetings);

    // A rebuild with `slipway build` prints the same URLs.
    let out = slipway(&project, &env, &["build"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains(&format!("  URL: {app_url}\n")), "{stdout}");
    for (service, url) in &service_urls {
        let line = format!("  {service}: {}\n", url.as_str().unwrap());
        assert!(stdout.contains(&line), "{stdout}");
    }
}
