//! What each tool is like, for the clients that choose and confirm tools: a title, the MCP
//! annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`), the
//! toolset it belongs to (an assistant that caps its tool count asks for some toolsets
//! only), whether it works with the caller's files (only a tool server on the caller's
//! machine can offer those), and whether it reaches secret values. One table, next to the
//! tools' own, so a new tool cannot be offered without saying what it does.

use std::str::FromStr;

/// A group of tools an assistant may ask for on its own (`?toolsets=apps,logs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Toolset {
    /// Templates, scaffolding and devfiles (no platform needed).
    Devfiles,
    /// Apps: registering, listing, status, enabling, disabling, deleting.
    Apps,
    /// Builds: building, scan reports, cancelling.
    Builds,
    /// Build and runtime logs.
    Logs,
    /// App and personal secrets.
    Secrets,
    /// Roles on apps and the account's people.
    Sharing,
    /// Custom domains.
    Domains,
    /// Git sources and pull-request previews.
    Git,
}

impl Toolset {
    /// Every toolset, in the order `slipway mcp --help` lists them.
    pub const ALL: [Toolset; 8] = [
        Toolset::Devfiles,
        Toolset::Apps,
        Toolset::Builds,
        Toolset::Logs,
        Toolset::Secrets,
        Toolset::Sharing,
        Toolset::Domains,
        Toolset::Git,
    ];

    /// Its name in `--toolsets` and `?toolsets=`.
    pub fn as_str(self) -> &'static str {
        match self {
            Toolset::Devfiles => "devfiles",
            Toolset::Apps => "apps",
            Toolset::Builds => "builds",
            Toolset::Logs => "logs",
            Toolset::Secrets => "secrets",
            Toolset::Sharing => "sharing",
            Toolset::Domains => "domains",
            Toolset::Git => "git",
        }
    }

    /// A comma-separated list of toolset names (blanks around names are ignored); an
    /// unknown name is refused, naming the known ones.
    pub fn parse_list(raw: &str) -> Result<Vec<Toolset>, String> {
        let mut sets = Vec::new();
        for name in raw.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let set = name.parse()?;
            if !sets.contains(&set) {
                sets.push(set);
            }
        }
        if sets.is_empty() {
            return Err(format!("name at least one toolset of {}", known()));
        }
        Ok(sets)
    }
}

fn known() -> String {
    Toolset::ALL.map(Toolset::as_str).join(", ")
}

impl FromStr for Toolset {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Toolset::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| format!("{s:?} is not a toolset; the toolsets are {}", known()))
    }
}

/// What one tool is like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// A short name for people.
    pub title: &'static str,
    /// It changes nothing (on the platform or on disk).
    pub read_only: bool,
    /// It may destroy or take away something that cannot simply be asked for again (data, a
    /// running app, someone's access); meaningful only when it is not read-only.
    pub destructive: bool,
    /// Calling it twice with the same arguments does no more than calling it once.
    pub idempotent: bool,
    /// It reaches beyond Slipway (a git host, a certificate authority, DNS).
    pub open_world: bool,
    /// Its toolset.
    pub toolset: Toolset,
    /// It reads or writes the caller's files and nothing else can stand in (a project
    /// directory): only a tool server on the caller's machine offers it.
    pub local_files: bool,
    /// It reads or writes a secret value.
    pub secret_values: bool,
}

/// Arguments that name the caller's files: a tool server that is not on the caller's machine
/// refuses a call that gives one.
pub const FILE_ARGUMENTS: [&str; 4] = [
    "project_path",
    "output_path",
    "output_directory",
    "devfile_path",
];

const fn read(title: &'static str, toolset: Toolset) -> Hints {
    Hints {
        title,
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
        toolset,
        local_files: false,
        secret_values: false,
    }
}

const fn change(title: &'static str, toolset: Toolset, idempotent: bool) -> Hints {
    Hints {
        title,
        read_only: false,
        destructive: false,
        idempotent,
        open_world: false,
        toolset,
        local_files: false,
        secret_values: false,
    }
}

const fn destroy(title: &'static str, toolset: Toolset) -> Hints {
    Hints {
        title,
        read_only: false,
        destructive: true,
        idempotent: true,
        open_world: false,
        toolset,
        local_files: false,
        secret_values: false,
    }
}

/// The hints of tool `name`; `None` for a name no tool has.
pub fn hints(name: &str) -> Option<Hints> {
    use Toolset::*;
    let secret = |h: Hints| Hints {
        secret_values: true,
        ..h
    };
    let local = |h: Hints| Hints {
        local_files: true,
        ..h
    };
    let outside = |h: Hints| Hints {
        open_world: true,
        ..h
    };
    Some(match name {
        "get_available_templates" => read("List app templates", Devfiles),
        // With `overwrite` it replaces files it finds.
        "scaffold_app" => local(Hints {
            destructive: true,
            ..change("Scaffold a project", Devfiles, false)
        }),
        "validate_devfile" => read("Validate a devfile", Devfiles),
        // Without `output_path` it only returns the text; with it, it never overwrites.
        "generate_devfile" => change("Generate a devfile", Devfiles, true),
        "register_app" => change("Register an app", Apps, false),
        "list_apps" => read("List apps", Apps),
        "get_app" => read("Get an app", Apps),
        "get_app_status" => read("Get an app's status", Apps),
        "get_app_logs" => read("Read an app's logs", Logs),
        "enable_app" => change("Enable an app", Apps, true),
        // It stops every running service of the app until enabled again.
        "disable_app" => destroy("Disable an app", Apps),
        "delete_app" => destroy("Delete an app", Apps),
        "build_app" => local(change("Build and deploy an app", Builds, false)),
        "get_build_scan_report" => read("Get a build's scan report", Builds),
        "cancel_build" => change("Cancel a build", Builds, true),
        "create_secret" => secret(change("Create a secret", Secrets, false)),
        "get_secret" => secret(read("Read a secret", Secrets)),
        "list_secrets" => read("List secret paths", Secrets),
        "update_secret" => secret(change("Update a secret", Secrets, false)),
        "delete_secret" => destroy("Delete a secret", Secrets),
        "share_secret" => secret(change("Share a secret", Secrets, false)),
        "list_grantable_roles" => read("List grantable roles", Sharing),
        "list_app_permissions" => read("List who holds a role", Sharing),
        "grant_app_role" => change("Grant a role on an app", Sharing, true),
        "revoke_app_role" => destroy("Revoke a role on an app", Sharing),
        "list_account_users" => read("List the account's people", Sharing),
        "list_domains" => read("List an app's domains", Domains),
        "add_domain" => outside(change("Add a custom domain", Domains, true)),
        "remove_domain" => destroy("Remove a custom domain", Domains),
        "get_git_source" => read("Get an app's git source", Git),
        "connect_git_source" => outside(change("Connect a git repository", Git, true)),
        "deploy_git_source" => outside(change("Deploy the branch's tip", Git, false)),
        "disconnect_git_source" => destroy("Disconnect the git source", Git),
        "list_previews" => read("List pull-request previews", Git),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_hints_and_only_tools_have_them() {
        for tool in crate::all_tools() {
            let h = hints(tool.name).unwrap_or_else(|| panic!("{} has no hints", tool.name));
            assert!(!h.title.is_empty());
            assert!(
                !(h.read_only && h.destructive),
                "{}: a read-only tool destroys nothing",
                tool.name
            );
            assert!(
                !h.local_files || !tool.needs_platform || tool.name == "build_app",
                "{}",
                tool.name
            );
        }
        assert!(hints("no_such_tool").is_none());
    }

    #[test]
    fn toolset_lists_parse_and_name_the_known_ones() {
        assert_eq!(
            Toolset::parse_list(" apps, logs,apps ").unwrap(),
            [Toolset::Apps, Toolset::Logs]
        );
        let e = Toolset::parse_list("apps,nope").unwrap_err();
        assert!(
            e.contains("\"nope\"") && e.contains("devfiles, apps"),
            "{e}"
        );
        assert!(Toolset::parse_list(" , ").is_err());
    }
}
