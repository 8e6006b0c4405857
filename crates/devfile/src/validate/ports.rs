//! Port-mismatch rules: endpoint `targetPort` against the Dockerfile's `EXPOSE` (an error) and
//! against port literals in run commands and `CMD` lines (a warning, since those are heuristics).

use super::commands::ExecCommand;
use super::{Ctx, ProjectFiles, Service};

pub(super) fn check(
    ctx: &mut Ctx,
    services: &[Service<'_>],
    commands: &[ExecCommand<'_>],
    files: Option<&dyn ProjectFiles>,
) {
    for service in services {
        let Some((first_port, first_path, first_node)) = service.endpoints.first() else {
            continue;
        };
        let ports: Vec<u16> = service.endpoints.iter().map(|(p, _, _)| *p).collect();
        let listed = ports
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        if let (Some(files), Some(dockerfile)) = (files, &service.dockerfile)
            && let Some(text) = files.read(dockerfile)
        {
            let exposed = exposed_ports(&text);
            if !exposed.is_empty() && !exposed.iter().any(|p| ports.contains(p)) {
                let shown = exposed
                    .iter()
                    .map(u16::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
                ctx.error(
                        first_path,
                        Some(first_node),
                        format!(
                            "port mismatch: targetPort {first_port} of service {:?} is not a port its Dockerfile {dockerfile} EXPOSEs ({shown}); the platform sends traffic to targetPort, so the service would never answer. Make them equal",
                            service.name
                        ),
                    );
            }
            for (line_no, port) in literal_ports(&text, true) {
                if !ports.contains(&port) {
                    ctx.warn(
                            first_path,
                            Some(first_node),
                            format!("port mismatch: {dockerfile} line {line_no} starts the app on port {port}, but the endpoints of {:?} use {listed}", service.name),
                        );
                }
            }
        }
        for cmd in commands
            .iter()
            .filter(|c| c.component == service.name && c.kind.as_deref() != Some("build"))
        {
            for (_, port) in literal_ports(&cmd.command_line, false) {
                if !ports.contains(&port) {
                    ctx.warn(
                        &cmd.path,
                        Some(cmd.node),
                        format!("port mismatch: this command starts {:?} on port {port}, but its endpoints use {listed}; use ${{PORT}}", service.name),
                    );
                }
            }
        }
    }
}

/// Numeric ports of every `EXPOSE` instruction (`EXPOSE 80 443/tcp`); variables are skipped.
pub fn exposed_ports(dockerfile: &str) -> Vec<u16> {
    dockerfile
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let (word, rest) = l.split_once(char::is_whitespace)?;
            word.eq_ignore_ascii_case("EXPOSE").then_some(rest)
        })
        .flat_map(|rest| rest.split_whitespace())
        .filter_map(|tok| tok.split('/').next()?.parse().ok())
        .collect()
}

/// Port literals after `--port`, `-p`, `--server.port`, `--listen`, `listen` or a `:PORT`
/// bind (`0.0.0.0:8000`). With `only_cmd`, only Dockerfile `CMD`/`ENTRYPOINT` lines are read.
/// Returns (1-based line, port).
pub fn literal_ports(text: &str, only_cmd: bool) -> Vec<(usize, u16)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if only_cmd {
            let word = trimmed.split_whitespace().next().unwrap_or_default();
            if !word.eq_ignore_ascii_case("CMD") && !word.eq_ignore_ascii_case("ENTRYPOINT") {
                continue;
            }
        }
        let tokens: Vec<String> = trimmed
            .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | '[' | ']' | '='))
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect();
        for (j, tok) in tokens.iter().enumerate() {
            let flag = matches!(
                tok.as_str(),
                "--port" | "-p" | "--server.port" | "--listen" | "listen" | "--bind" | "-b"
            );
            if flag
                && let Some(port) = tokens
                    .get(j + 1)
                    .and_then(|t| t.rsplit(':').next())
                    .and_then(|t| t.parse::<u16>().ok())
            {
                out.push((i + 1, port));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_expose() {
        assert_eq!(
            exposed_ports("FROM x\nEXPOSE 8002\nexpose 80/tcp 443\nEXPOSE $PORT\n"),
            [8002, 80, 443]
        );
    }

    #[test]
    fn reads_literals_but_not_variables() {
        assert_eq!(
            literal_ports("uvicorn main:app --port 8003", false),
            [(1, 8003)]
        );
        assert!(literal_ports("uvicorn main:app --port ${PORT:-8002}", false).is_empty());
        assert_eq!(
            literal_ports(
                "CMD [\"streamlit\", \"run\", \"app.py\", \"--server.port=8501\"]",
                true
            ),
            [(1, 8501)]
        );
        assert_eq!(
            literal_ports("hypercorn app:app --bind 0.0.0.0:9080", false),
            [(1, 9080)]
        );
        assert!(literal_ports("RUN pip install -p 5", true).is_empty());
    }
}
