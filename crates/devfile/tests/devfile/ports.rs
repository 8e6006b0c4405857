//! Port mismatches between endpoints, Dockerfiles and run commands.

use std::collections::HashMap;

use slipway_devfile::{ProjectFiles, validate};

use super::{BASE, mutate};

struct Files(HashMap<&'static str, &'static str>);

impl ProjectFiles for Files {
    fn read(&self, path: &str) -> Option<String> {
        self.0.get(path).map(|s| (*s).to_owned())
    }
}

fn files(api: &'static str) -> Files {
    Files(HashMap::from([
        ("api/Dockerfile", api),
        ("web/Dockerfile", "FROM python:3.12-slim\nEXPOSE 8000\n"),
    ]))
}

#[test]
fn matching_expose_is_clean() {
    let report = validate(
        BASE,
        Some(&files(
            "FROM python:3.12-slim\nEXPOSE 8001\nCMD [\"uvicorn\", \"main:app\", \"--port\", \"8001\"]\n",
        )),
    );
    assert!(report.valid(), "{:?}", report.errors());
    assert!(report.warnings().is_empty(), "{:?}", report.warnings());
}

#[test]
fn expose_mismatch_is_an_error() {
    let report = validate(BASE, Some(&files("FROM python:3.12-slim\nEXPOSE 9000\n")));
    assert!(!report.valid());
    let errors = report.errors();
    assert!(
        errors.iter().any(|e| e.starts_with("components[1].container.endpoints[0].targetPort (line 42): port mismatch: targetPort 8001 of service \"api\" is not a port its Dockerfile api/Dockerfile EXPOSEs (9000)")),
        "{errors:?}"
    );
}

#[test]
fn cmd_literal_mismatch_is_a_warning() {
    let report = validate(
        BASE,
        Some(&files(
            "FROM x\nEXPOSE 8001\nCMD uvicorn main:app --port 8009\n",
        )),
    );
    assert!(report.valid());
    assert!(
        report
            .warnings()
            .iter()
            .any(|w| w.contains("api/Dockerfile line 3 starts the app on port 8009")),
        "{:?}",
        report.warnings()
    );
}

#[test]
fn run_command_literal_mismatch_is_a_warning() {
    let text = mutate(
        "uvicorn main:app --port ${PORT}\n      workingDir: ${PROJECT_SOURCE}/web",
        "uvicorn main:app --port 8080\n      workingDir: ${PROJECT_SOURCE}/web",
    );
    let report = validate(&text, None);
    assert!(report.valid());
    assert!(
        report
            .warnings()
            .iter()
            .any(|w| w.starts_with("commands[1].exec.commandLine (line 72): port mismatch")),
        "{:?}",
        report.warnings()
    );
}
