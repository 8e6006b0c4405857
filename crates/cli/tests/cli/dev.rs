//! `slipway dev` against a real platform process: an edit of `main.py` is synced and served,
//! an invalid devfile is reported and builds nothing until fixed, a `requirements.txt` edit
//! is a full rebuild, and SIGTERM stops the loop leaving the app running (or, with `--down`,
//! disabled).

use std::path::Path;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use crate::daily::{platform, slipway, spawn_lines, through_gateway};

/// Lines of the loop's output, read on a thread.
struct Output {
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Output {
    /// Waits for a line that satisfies `wanted`; returns it. Fails after `within`.
    fn until(&mut self, within: Duration, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if wanted(&line) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "no such line within {within:?}; output:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Like [`Output::until`], but a line already seen counts.
    fn seen_or_until(&mut self, within: Duration, wanted: impl Fn(&str) -> bool) {
        if !self.seen.iter().any(|l| wanted(l)) {
            self.until(within, wanted);
        }
    }

    /// The loop lines (`==> …`) that arrive within `within`.
    fn quiet_for(&mut self, within: Duration) -> Vec<String> {
        let deadline = Instant::now() + within;
        let mut lines = Vec::new();
        while let Ok(line) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            self.seen.push(line.clone());
            if line.starts_with("==>") {
                lines.push(line);
            }
        }
        lines
    }
}

fn running(line: &str) -> bool {
    line.starts_with("==> RUNNING ")
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    // Save the way editors do: a temporary file renamed over the original.
    let temp = path.with_extension("tmp~");
    std::fs::write(&temp, text.replacen(from, to, 1)).unwrap();
    std::fs::rename(&temp, path).unwrap();
}

#[test]
fn dev_syncs_an_edit_holds_an_invalid_devfile_and_rebuilds_a_dependency_change() {
    let work = tempfile::tempdir().unwrap();
    let (_server, gateway, env) = platform(work.path());
    let out = slipway(
        work.path(),
        &env,
        &["new", "devloop", "--template", "python-api"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let project = work.path().join("devloop");

    let (mut dev, lines) = spawn_lines(&project, &env, &["dev"]);
    let mut output = Output {
        lines,
        seen: Vec::new(),
    };

    // The first round builds in full and serves.
    output.until(Duration::from_secs(300), running);
    let host = "devloop.localhost";
    assert!(through_gateway(gateway, host).contains("\"app\":\"devloop\""));
    output.until(Duration::from_secs(10), |l| l.starts_with("==> watching"));

    // A source edit is synced (no build command) and served.
    edit(
        &project.join("main.py"),
        "\"docs\": \"/docs\"",
        "\"docs\": \"/docs\", \"edited\": \"yes\"",
    );
    output.until(Duration::from_secs(30), |l| l == "==> updating api (sync)");
    output.until(Duration::from_secs(120), running);
    assert!(
        through_gateway(gateway, host).contains("\"edited\":\"yes\""),
        "{}",
        output.seen.join("\n")
    );
    // The build log of the sync and the runtime log of the new instance are followed, each
    // line prefixed by its service.
    output.seen_or_until(Duration::from_secs(30), |l| {
        l.starts_with("api build | ") && l.contains("with the sync builder")
    });
    output.until(Duration::from_secs(30), |l| {
        l.starts_with("api ") && l.contains(" | ")
    });

    // An invalid devfile is reported, with its line, and nothing is built.
    let devfile = project.join("devfile.yaml");
    edit(&devfile, "schemaVersion: 2.2.0", "schemaVersion: 9.9.9");
    output.until(Duration::from_secs(30), |l| {
        l.starts_with("==> devfile.yaml is invalid")
    });
    let after = output.quiet_for(Duration::from_secs(2));
    assert!(
        after.iter().all(|l| !l.starts_with("==> updating")),
        "nothing is built while the devfile is invalid: {after:?}"
    );
    assert!(
        output
            .seen
            .iter()
            .any(|l| l.contains("error:") && l.contains("schemaVersion")),
        "{}",
        output.seen.join("\n")
    );
    // Fixed (to another released schema version): the devfile changed, so the service is
    // built in full.
    edit(&devfile, "schemaVersion: 9.9.9", "schemaVersion: 2.2.2");
    output.until(Duration::from_secs(30), |l| {
        l.starts_with("==> updating api")
    });
    output.until(Duration::from_secs(300), running);

    // A dependency manifest change is a full rebuild.
    edit(
        &project.join("requirements.txt"),
        "uvicorn",
        "# the server\nuvicorn",
    );
    output.until(Duration::from_secs(30), |l| l == "==> updating api (full)");
    output.until(Duration::from_secs(300), running);
    assert!(through_gateway(gateway, host).contains("\"edited\":\"yes\""));

    // SIGTERM stops watching and leaves the app running.
    dev.terminate();
    output.until(Duration::from_secs(30), |l| {
        l == "==> stopped; the app keeps running"
    });
    assert!(through_gateway(gateway, host).contains("\"edited\":\"yes\""));

    // With --down, stopping the loop disables the app.
    let (mut dev, lines) = spawn_lines(&project, &env, &["dev", "--down", "--no-logs"]);
    let mut output = Output {
        lines,
        seen: Vec::new(),
    };
    output.until(Duration::from_secs(300), running);
    output.until(Duration::from_secs(10), |l| l.starts_with("==> watching"));
    dev.terminate();
    output.until(Duration::from_secs(30), |l| {
        l == "==> stopped; the app is disabled"
    });
    let status = slipway(&project, &env, &["status"]);
    assert!(
        String::from_utf8_lossy(&status.stdout).starts_with("suspended"),
        "{}",
        String::from_utf8_lossy(&status.stdout)
    );
}
