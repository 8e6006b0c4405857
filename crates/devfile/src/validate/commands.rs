//! Rules for `commands`: ids, exec commands, their component and group.

use super::{
    Ctx, Service, UniqueNames, check_keys, join, mapping, non_empty_string, required, string,
};
use crate::diagnostics::Severity;
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

/// Command ids are DNS labels of at most 63 characters.
const COMMAND_ID_MAX: usize = 63;

/// The command types of devfile 2.x; a command has exactly one.
const COMMAND_TYPES: [&str; 3] = ["exec", "apply", "composite"];

/// The keys of `exec`.
const EXEC_KEYS: [&str; 7] = [
    "commandLine",
    "component",
    "workingDir",
    "env",
    "group",
    "label",
    "hotReloadCapable",
];

/// A command marked `isDefault` for its group kind and component.
struct DefaultCommand {
    kind: String,
    component: String,
    /// The command's path, for messages.
    path: String,
}

/// What the rules across commands remember: ids seen and the default of each kind.
struct CommandScope<'s> {
    ids: UniqueNames,
    defaults: Vec<DefaultCommand>,
    services: &'s [Service<'s>],
}

/// Checks every command and returns the exec commands the port check reads.
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
    let mut scope = CommandScope {
        ids: UniqueNames::new("command id", COMMAND_ID_MAX),
        defaults: Vec::new(),
        services,
    };
    let mut out = Vec::new();
    for (i, cmd) in items.iter().enumerate() {
        let path = format!("commands[{i}]");
        if let Some(cmd) = mapping(ctx, cmd, &path)
            && let Some(exec) = command(ctx, cmd, &path, &mut scope)
        {
            out.push(exec);
        }
    }
    out
}

/// One command: its keys, id and type; an exec command is returned when complete.
fn command<'a>(
    ctx: &mut Ctx,
    cmd: &'a Node,
    path: &str,
    scope: &mut CommandScope<'_>,
) -> Option<ExecCommand<'a>> {
    check_keys(
        ctx,
        cmd,
        path,
        &["id", "exec", "apply", "composite", "attributes"],
        Severity::Error,
    );
    if let Some((id, node)) = required(ctx, cmd, path, "id")
        .and_then(|n| string(ctx, n, &join(path, "id")).map(|s| (s, n)))
    {
        scope.ids.check(ctx, id, node, &join(path, "id"));
    }
    if !single_type(ctx, cmd, path) {
        return None;
    }
    let e_path = join(path, "exec");
    let job = cmd
        .get("attributes")
        .and_then(|attrs| job_attributes(ctx, attrs, &join(path, "attributes")));
    let exec = mapping(ctx, cmd.get("exec")?, &e_path)?;
    let exec = exec_command(ctx, exec, path, &e_path, scope)?;
    if let Some(schedule) = job
        && exec
            .kind
            .as_deref()
            .is_some_and(|k| k == "build" || k == "run")
    {
        ctx.error(
            join(path, "attributes.schedule"),
            Some(schedule),
            "a scheduled job cannot be a build or run command: give it its own command \
             without a build or run group",
        );
    }
    Some(exec)
}

/// A scheduled job's attributes: `schedule` (cron, five fields or six with seconds),
/// `timeZone` (IANA), `concurrency` (forbid or allow), `runMissed` (a boolean). Returns the
/// schedule's node when there is one.
fn job_attributes<'a>(ctx: &mut Ctx, attrs: &'a Node, path: &str) -> Option<&'a Node> {
    let schedule = attrs.get("schedule");
    if let Some(node) = schedule
        && let Some(text) = non_empty_string(ctx, node, &join(path, "schedule"))
        && let Err(e) = crate::jobs::parse_schedule(text)
    {
        ctx.error(
            join(path, "schedule"),
            Some(node),
            format!(
                "{text:?} is not a cron schedule ({e}); use five fields (minute hour \
                 day-of-month month day-of-week, e.g. \"*/15 * * * *\") or six with seconds first"
            ),
        );
    }
    if let Some(node) = attrs.get("timeZone")
        && let Some(text) = non_empty_string(ctx, node, &join(path, "timeZone"))
        && let Err(e) = crate::jobs::parse_zone(text)
    {
        ctx.error(
            join(path, "timeZone"),
            Some(node),
            format!("{e}, such as Europe/Paris or UTC"),
        );
    }
    if let Some(node) = attrs.get("concurrency")
        && let Some(text) = non_empty_string(ctx, node, &join(path, "concurrency"))
        && !["forbid", "allow"].contains(&text)
    {
        ctx.error(
            join(path, "concurrency"),
            Some(node),
            format!("must be forbid or allow, got {text:?}"),
        );
    }
    if let Some(node) = attrs.get("runMissed")
        && node.as_bool().is_none()
    {
        ctx.error(
            join(path, "runMissed"),
            Some(node),
            format!("must be true or false, got {}", node.kind()),
        );
    }
    if schedule.is_none() {
        for key in ["timeZone", "concurrency", "runMissed"] {
            if let Some(node) = attrs.get(key) {
                ctx.warn(
                    join(path, key),
                    Some(node),
                    "has no effect without attributes.schedule",
                );
            }
        }
    }
    schedule
}

/// A command has exactly one of exec, apply, composite.
fn single_type(ctx: &mut Ctx, cmd: &Node, path: &str) -> bool {
    let kinds: Vec<&str> = COMMAND_TYPES
        .into_iter()
        .filter(|k| cmd.get(k).is_some())
        .collect();
    if kinds.len() == 1 {
        return true;
    }
    ctx.error(
        path,
        Some(cmd),
        format!(
            "a command needs exactly one of {}; found {}",
            COMMAND_TYPES.join(", "),
            if kinds.is_empty() {
                "none".into()
            } else {
                kinds.join(" and ")
            }
        ),
    );
    false
}

/// An exec command: its keys, command line, component, group and working directory.
fn exec_command<'a>(
    ctx: &mut Ctx,
    exec: &'a Node,
    path: &str,
    e_path: &str,
    scope: &mut CommandScope<'_>,
) -> Option<ExecCommand<'a>> {
    check_keys(ctx, exec, e_path, &EXEC_KEYS, Severity::Error);
    let line = required(ctx, exec, e_path, "commandLine")
        .and_then(|n| non_empty_string(ctx, n, &join(e_path, "commandLine")));
    let component = exec_component(ctx, exec, e_path, scope.services);
    let kind = exec
        .get("group")
        .and_then(|group| group_kind(ctx, group, path, &join(e_path, "group"), component, scope));
    working_dir(ctx, exec, e_path, kind.as_deref());
    Some(ExecCommand {
        component: component?.to_owned(),
        kind,
        command_line: line?.to_owned(),
        path: join(e_path, "commandLine"),
        node: exec.get("commandLine").unwrap_or(exec),
    })
}

/// `exec.component` is required and names a container component.
fn exec_component<'a>(
    ctx: &mut Ctx,
    exec: &'a Node,
    e_path: &str,
    services: &[Service<'_>],
) -> Option<&'a str> {
    let node = required(ctx, exec, e_path, "component")?;
    let name = non_empty_string(ctx, node, &join(e_path, "component"))?;
    if !services.iter().any(|s| s.name == name) {
        let names: Vec<&str> = services.iter().map(|s| s.name.as_str()).collect();
        ctx.error(
            join(e_path, "component"),
            Some(node),
            format!(
                "{name:?} is not a container component of this devfile; containers: {}",
                names.join(", ")
            ),
        );
    }
    Some(name)
}

/// `exec.group`: a known `kind` and a boolean `isDefault`, with one default command per kind
/// and component. Returns the kind when it is known.
fn group_kind(
    ctx: &mut Ctx,
    group: &Node,
    path: &str,
    g_path: &str,
    component: Option<&str>,
    scope: &mut CommandScope<'_>,
) -> Option<String> {
    let group = mapping(ctx, group, g_path)?;
    check_keys(ctx, group, g_path, &["kind", "isDefault"], Severity::Error);
    let mut kind = None;
    if let Some(k) = required(ctx, group, g_path, "kind")
        && let Some(text) = string(ctx, k, &join(g_path, "kind"))
    {
        if GROUP_KINDS.contains(&text) {
            kind = Some(text.to_owned());
        } else {
            ctx.error(
                join(g_path, "kind"),
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
                join(g_path, "isDefault"),
                Some(d),
                format!("must be true or false, got {}", d.kind()),
            ),
            Some(true) => {
                if let (Some(k), Some(c)) = (&kind, component) {
                    one_default(ctx, d, path, g_path, k, c, scope);
                }
            }
            Some(false) => {}
        }
    }
    kind
}

/// Only one command is the default `kind` command of a component.
fn one_default(
    ctx: &mut Ctx,
    flag: &Node,
    path: &str,
    g_path: &str,
    kind: &str,
    component: &str,
    scope: &mut CommandScope<'_>,
) {
    if let Some(first) = scope
        .defaults
        .iter()
        .find(|d| d.kind == kind && d.component == component)
    {
        ctx.error(
            join(g_path, "isDefault"),
            Some(flag),
            format!(
                "{} is already the default {kind} command of {component:?}",
                first.path
            ),
        );
    }
    scope.defaults.push(DefaultCommand {
        kind: kind.to_owned(),
        component: component.to_owned(),
        path: path.to_owned(),
    });
}

/// A `workingDir` outside the project works on the container runtime only: a warning that says
/// what fails on the process runtime.
fn working_dir(ctx: &mut Ctx, exec: &Node, e_path: &str, kind: Option<&str>) {
    let Some(dir) = exec.get("workingDir") else {
        return;
    };
    let Some(text) = string(ctx, dir, &join(e_path, "workingDir")) else {
        return;
    };
    if inside_project(text) {
        return;
    }
    let consequence = match kind {
        Some(k @ ("build" | "run")) => {
            format!(
                "; the process runtime's native build uses this {k} command and fails with this path"
            )
        }
        _ => String::new(),
    };
    ctx.warn(
        join(e_path, "workingDir"),
        Some(dir),
        format!(
            "{text:?} is a path in the container: fine for the container runtime, but the process runtime runs commands in the project directory and needs ${{PROJECT_SOURCE}} or a directory inside it{consequence}"
        ),
    );
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
