//! App secrets reach a deployed service as environment variables: the service lists the
//! paths it wants in `attributes.secrets`, each key becomes a variable, and a listed path
//! that does not exist fails the deployment with a reason naming it.

use reqwest::StatusCode;
use serde_json::json;

use crate::deploy::wait_status;
use crate::secrets::create;
use crate::support::{TestApp, backends, python_server, spawn_app, tar_zst};

/// Answers `/` with the variables it was given (and `/health` the same way).
fn env_server() -> String {
    python_server(
        "os.environ[\"PORT_OK\"] = \"yes\" if os.environ[\"PORT\"].isdigit() else \"no\"\n",
        r#""|".join("%s=%s" % (k, os.environ.get(k, "-")) for k in ("password", "API_KEY", "PORT_OK"))"#,
    )
}

fn devfile(name: &str, secrets: &str) -> String {
    format!(
        r#"schemaVersion: 2.2.0
metadata:
  name: {name}
  displayName: Secret env test
components:
  - name: api-image
    image:
      imageName: api
      dockerfile:
        uri: Dockerfile
        buildContext: .
  - name: api
    attributes:
      healthPath: /health
      secrets: [{secrets}]
    container:
      image: api
      endpoints:
        - name: http
          targetPort: 8002
commands:
  - id: build
    exec:
      component: api
      commandLine: "true"
      workingDir: ${{PROJECT_SOURCE}}
      group: {{ kind: build, isDefault: true }}
  - id: run
    exec:
      component: api
      commandLine: python3 env_server.py
      workingDir: ${{PROJECT_SOURCE}}
      group: {{ kind: run, isDefault: true }}
"#
    )
}

async fn deploy(app: &TestApp, id: &str, devfile: &str) {
    let files = vec![
        ("devfile.yaml".to_owned(), devfile.as_bytes().to_vec()),
        ("env_server.py".to_owned(), env_server().into_bytes()),
        (
            "Dockerfile".to_owned(),
            b"FROM scratch\nCOPY . /app\n".to_vec(),
        ),
    ];
    let (status, body) = app
        .upload(&app.owner, id, "", "application/zstd", tar_zst(&files))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
}

#[tokio::test]
async fn app_secrets_become_the_services_environment() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let created = app.register(&app.owner, "envy").await;
        let id = created["id"].as_str().unwrap().to_owned();
        for (path, data) in [
            ("db", json!({"password": "s3cret-pw", "PORT": "1"})),
            ("api", json!({"api-key": "k-123"})),
            ("unlisted", json!({"password": "wrong"})),
        ] {
            let (status, body) = create(
                &app,
                &app.owner,
                json!({"secret_type": "app", "app_id": id, "secret_path": path, "data": data}),
            )
            .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        deploy(&app, &id, &devfile("envy", "db, api")).await;
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{backend:?}: {running}");
        let gateway = app.gateway.unwrap();
        let body = app
            .client
            .get(format!("http://{gateway}/"))
            .header("host", format!("envy.localhost:{}", gateway.port()))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        // The listed secrets only; `api-key` becomes API_KEY; PORT stays the platform's.
        assert_eq!(
            body, "password=s3cret-pw|API_KEY=k-123|PORT_OK=yes",
            "{backend:?}"
        );

        // A listed secret that does not exist fails the deployment, naming it.
        let other = app.register(&app.owner, "lacking").await;
        let other_id = other["id"].as_str().unwrap().to_owned();
        deploy(&app, &other_id, &devfile("lacking", "db")).await;
        let failed = wait_status(&app, &other_id, &["RUNNING", "FAILED"]).await;
        assert_eq!(failed["status"], "FAILED", "{failed}");
        let text = failed.to_string();
        assert!(
            text.contains("\\\"db\\\"") && text.contains("attributes.secrets"),
            "{backend:?}: the reason names the path: {text}"
        );

        // The deployer's reads are in the audit trail.
        let (_, audit) = app
            .send(
                reqwest::Method::GET,
                "/v1/secrets/audit",
                Some(&app.owner),
                None,
            )
            .await;
        let injected = audit["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["action"] == "inject" && e["user_id"] == "platform-deployer")
            .count();
        assert!(injected >= 2, "{audit}");
        app.finish().await;
    }
}
