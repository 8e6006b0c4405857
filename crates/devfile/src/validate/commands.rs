//! Rules for `commands`: ids, exec commands, their component and group.

use super::{Ctx, Service, check_keys, join, mapping, non_empty_string, required, string};
use crate::diagnostics::Severity;
use crate::name::dns_label_problem;
use crate::yaml::Node;

/// Values of `commands[].exec.group.kind`.
pub const GROUP_KINDS: [&str; 5] = ["build", "run", "test", "debug", "deploy"];

/// An exec command as the port check needs it.
pub(crate) struct ExecCommand<'a> {
    pub component: String,
    pub kind: Option<String>,
    pub command_line: String,
    pub path: String,
    pub node: &'a Node,
}

pub(super) fn commands<'a>(
    ctx: &mut Ctx,
    root: &'a Node,
    services: &[Service<'_>],
) -> Vec<ExecCommand<'a>> {
    let Some(list) = root.get("commands") else {
        return Vec::new();
    };
    let Some(items) = list.items() else {
        ctx.error(
            "commands",
            Some(list),
            format!("must be a list of commands, got {}", list.kind()),
        );
        return Vec::new();
    };
    let mut ids: Vec<(String, String)> = Vec::new();
    let mut defaults: Vec<(String, String, String)> = Vec::new();
    let mut out = Vec::new();
    for (i, cmd) in items.iter().enumerate() {
        let path = format!("commands[{i}]");
        let Some(cmd) = mapping(ctx, cmd, &path) else {
            continue;
        };
        check_keys(
            ctx,
            cmd,
            &path,
            &["id", "exec", "apply", "composite", "attributes"],
            Severity::Error,
        );
        if let Some((id, node)) = required(ctx, cmd, &path, "id")
            .and_then(|n| string(ctx, n, &join(&path, "id")).map(|s| (s, n)))
        {
            if let Some(problem) = dns_label_problem(id, 63) {
                ctx.error(
                    join(&path, "id"),
                    Some(node),
                    format!("command id {id:?} {problem}"),
                );
            }
            if let Some((_, first)) = ids.iter().find(|(i, _)| i == id) {
                ctx.error(
                    join(&path, "id"),
                    Some(node),
                    format!("duplicate command id {id:?} (also used by {first})"),
                );
            }
            ids.push((id.to_owned(), path.clone()));
        }
        let kinds: Vec<&str> = ["exec", "apply", "composite"]
            .into_iter()
            .filter(|k| cmd.get(k).is_some())
            .collect();
        if kinds.len() != 1 {
            ctx.error(
                &path,
                Some(cmd),
                format!(
                    "a command needs exactly one of exec, apply, composite; found {}",
                    if kinds.is_empty() {
                        "none".into()
                    } else {
                        kinds.join(" and ")
                    }
                ),
            );
            continue;
        }
        let Some(exec) = cmd.get("exec") else {
            continue;
        };
        let e_path = join(&path, "exec");
        let Some(exec) = mapping(ctx, exec, &e_path) else {
            continue;
        };
        check_keys(
            ctx,
            exec,
            &e_path,
            &[
                "commandLine",
                "component",
                "workingDir",
                "env",
                "group",
                "label",
                "hotReloadCapable",
            ],
            Severity::Error,
        );
        let line = required(ctx, exec, &e_path, "commandLine")
            .and_then(|n| non_empty_string(ctx, n, &join(&e_path, "commandLine")));
        let component = required(ctx, exec, &e_path, "component")
            .and_then(|n| non_empty_string(ctx, n, &join(&e_path, "component")).map(|s| (s, n)));
        if let Some((name, node)) = component
            && !services.iter().any(|s| s.name == name)
        {
            let names: Vec<&str> = services.iter().map(|s| s.name.as_str()).collect();
            ctx.error(
                join(&e_path, "component"),
                Some(node),
                format!(
                    "{name:?} is not a container component of this devfile; containers: {}",
                    names.join(", ")
                ),
            );
        }
        let mut kind = None;
        if let Some(group) = exec.get("group") {
            let g_path = join(&e_path, "group");
            if let Some(group) = mapping(ctx, group, &g_path) {
                check_keys(ctx, group, &g_path, &["kind", "isDefault"], Severity::Error);
                if let Some(k) = required(ctx, group, &g_path, "kind")
                    && let Some(text) = string(ctx, k, &join(&g_path, "kind"))
                {
                    if GROUP_KINDS.contains(&text) {
                        kind = Some(text.to_owned());
                    } else {
                        ctx.error(
                            join(&g_path, "kind"),
                            Some(k),
                            format!(
                                "{text:?} is not a command group kind; use one of {}",
                                GROUP_KINDS.join(", ")
                            ),
                        );
                    }
                }
                if let Some(d) = group.get("isDefault") {
                    match d.as_bool() {
                        None => ctx.error(
                            join(&g_path, "isDefault"),
                            Some(d),
                            format!("must be true or false, got {}", d.kind()),
                        ),
                        Some(true) => {
                            if let (Some(k), Some((c, _))) = (&kind, component) {
                                if let Some((_, _, first)) =
                                    defaults.iter().find(|(dk, dc, _)| dk == k && dc == c)
                                {
                                    ctx.error(
                                        join(&g_path, "isDefault"),
                                        Some(d),
                                        format!(
                                            "{first} is already the default {k} command of {c:?}"
                                        ),
                                    );
                                }
                                defaults.push((k.clone(), c.to_owned(), path.clone()));
                            }
                        }
                        Some(false) => {}
                    }
                }
            }
        }
        if let Some(dir) = exec.get("workingDir")
            && let Some(text) = string(ctx, dir, &join(&e_path, "workingDir"))
            && !inside_project(text)
        {
            let consequence = match kind.as_deref() {
                Some(k @ ("build" | "run")) => {
                    format!(
                        "; the process runtime's native build uses this {k} command and fails with this path"
                    )
                }
                _ => String::new(),
            };
            ctx.warn(
                join(&e_path, "workingDir"),
                Some(dir),
                format!(
                    "{text:?} is a path in the container: fine for the container runtime, but the process runtime runs commands in the project directory and needs ${{PROJECT_SOURCE}} or a directory inside it{consequence}"
                ),
            );
        }
        if let (Some(line), Some((component, _))) = (line, component) {
            out.push(ExecCommand {
                component: component.to_owned(),
                kind,
                command_line: line.to_owned(),
                path: join(&e_path, "commandLine"),
                node: exec.get("commandLine").unwrap_or(exec),
            });
        }
    }
    out
}

/// True when a `workingDir` names the project directory or a directory inside it:
/// `${PROJECT_SOURCE}`, `${PROJECT_SOURCE}/<dir>` or a relative path, never leaving it with `..`.
/// Anything else (`/projects/app`, `${PROJECTS_ROOT}`, `/home/user`) is a path in the container,
/// which only the container runtime can honour.
pub(crate) fn inside_project(dir: &str) -> bool {
    let rel = dir
        .strip_prefix("${PROJECT_SOURCE}")
        .or_else(|| dir.strip_prefix("$PROJECT_SOURCE"))
        .map_or(Some(dir), |rest| {
            (rest.is_empty() || rest.starts_with('/')).then(|| rest.trim_start_matches('/'))
        });
    rel.is_some_and(|rel| {
        !rel.starts_with('/')
            && !rel.starts_with('$')
            && !rel.contains('\\')
            && !rel.split('/').any(|seg| seg == "..")
    })
}

#[cfg(test)]
mod tests {
    use super::inside_project;

    #[test]
    fn working_dirs_inside_the_project() {
        for ok in [
            "${PROJECT_SOURCE}",
            "$PROJECT_SOURCE",
            "${PROJECT_SOURCE}/api",
            "$PROJECT_SOURCE/a/b",
            "api",
            ".",
        ] {
            assert!(inside_project(ok), "{ok}");
        }
        for container in [
            "/projects",
            "/projects/app",
            "${PROJECTS_ROOT}",
            "$PROJECTS_ROOT/x",
            "/home/user",
            "${PROJECT_SOURCE}/../x",
            "${PROJECT_SOURCEX}",
            "../x",
            "/",
        ] {
            assert!(!inside_project(container), "{container}");
        }
    }
}
