//! Scan reports: the SBOM lists the Python and npm packages of an image, and an OSV
//! directory written by the test flags the one it names; without an advisory database the
//! result says so and carries the SBOM, never a clean report.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::prebuilt::{archive, make_layout_with, upload_prebuilt};
use crate::support::{assert_error, backends, python_devfile, python_project, spawn_app};

const METADATA: &str = "Metadata-Version: 2.1\nName: demo_pkg\nVersion: 1.1.0\n\nA demo.\n";
const PACKAGE_JSON: &str = r#"{"name": "left-pad", "version": "1.3.0"}"#;

#[tokio::test]
async fn scans_list_the_image_packages_and_flag_advisories_from_an_osv_directory() {
    for backend in backends() {
        let mut app = spawn_app(backend).await;
        let created = app.register(&app.owner, "scanned").await;
        let id = created["id"].as_str().unwrap().to_owned();
        let first = app
            .build_one(&id, &python_project(&python_devfile("scanned", "true")))
            .await;
        app.wait_build(&first, &["succeeded", "failed"]).await;
        let local = tempfile::tempdir().unwrap();
        make_layout_with(
            local.path(),
            &[
                (
                    ".venv/lib/python3.12/site-packages/demo_pkg-1.1.0.dist-info/METADATA",
                    METADATA,
                ),
                ("node_modules/left-pad/package.json", PACKAGE_JSON),
            ],
        );
        let (status, build) = upload_prebuilt(
            &app,
            &id,
            "service_name=api",
            archive(&local.path().join("images"), &[]),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{build}");
        let build_id = build["build_id"].as_str().unwrap().to_owned();
        let path = format!("/v1/builds/{build_id}/scan");

        // No advisory database: an error and the SBOM, no report.
        let (status, scan) = app.send(Method::GET, &path, Some(&app.owner), None).await;
        assert_eq!(status, StatusCode::OK, "{scan}");
        assert!(scan["report"].is_null(), "{scan}");
        assert!(
            scan["error"]
                .as_str()
                .unwrap()
                .starts_with("no advisory database configured"),
            "{scan}"
        );
        let packages = scan["sbom"]["packages"].as_array().unwrap();
        assert!(
            packages.contains(&json!({"name": "demo_pkg", "version": "1.1.0",
            "ecosystem": "PyPI", "purl": "pkg:pypi/demo-pkg@1.1.0"})),
            "{scan}"
        );
        assert!(
            packages
                .iter()
                .any(|p| p["name"] == "left-pad" && p["ecosystem"] == "npm")
        );

        // With an OSV directory: the advisory on demo-pkg < 1.2.0 matches, the one on a
        // fixed left-pad does not.
        let osv = tempfile::tempdir().unwrap();
        std::fs::write(
            osv.path().join("PYSEC-0001.json"),
            json!({"id": "PYSEC-0001", "summary": "demo-pkg runs arbitrary code",
                   "database_specific": {"severity": "HIGH"},
                   "affected": [{"package": {"ecosystem": "PyPI", "name": "demo-pkg"},
                                 "ranges": [{"type": "ECOSYSTEM",
                                             "events": [{"introduced": "0"}, {"fixed": "1.2.0"}]}]}]})
            .to_string(),
        )
        .unwrap();
        std::fs::write(
            osv.path().join("GHSA-npm.json"),
            json!({"id": "GHSA-xxxx", "summary": "old left-pad",
                   "affected": [{"package": {"ecosystem": "npm", "name": "left-pad"},
                                 "ranges": [{"type": "SEMVER",
                                             "events": [{"introduced": "0"}, {"fixed": "1.1.0"}]}]}]})
            .to_string(),
        )
        .unwrap();
        app.config.advisory_db = Some(osv.path().to_path_buf());
        app.restart().await;
        let (status, scan) = app
            .send(
                Method::GET,
                &format!("{path}?refresh=true"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{scan}");
        assert!(scan["error"].is_null(), "{scan}");
        let report = &scan["report"];
        assert_eq!(report["advisory_db"]["advisories"], 2, "{scan}");
        let vulns: &Vec<Value> = report["vulnerabilities"].as_array().unwrap();
        assert_eq!(vulns.len(), 1, "{scan}");
        assert_eq!(vulns[0]["id"], "PYSEC-0001");
        assert_eq!(vulns[0]["package"], "demo_pkg");
        assert_eq!(vulns[0]["version"], "1.1.0");
        assert_eq!(vulns[0]["severity"], "HIGH");
        assert_eq!(vulns[0]["fixed"], "1.2.0");
        // Stored: asking again without refresh returns the same report.
        let (_, again) = app.send(Method::GET, &path, Some(&app.owner), None).await;
        assert_eq!(again["report"]["scanned_at"], report["scanned_at"]);

        // A failed or unknown build has nothing to scan.
        let reply = app
            .send(
                Method::GET,
                &format!("/v1/builds/{}/scan", uuid::Uuid::new_v4()),
                Some(&app.owner),
                None,
            )
            .await;
        assert_error(&reply, StatusCode::NOT_FOUND, "not_found", None);
        app.finish().await;
    }
}
