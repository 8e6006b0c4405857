//! `scaffold_app`: a new project from an embedded template, with the durable overlay when
//! asked. Everything is rendered and checked in memory first; files are written only when
//! the whole project is known to be good, and never over existing files unless `overwrite`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use include_dir::Dir;
use serde::{Deserialize, Serialize};
use slipway_devfile::{AppName, Devfile, append_mapping_entry, validate};

use crate::templates::{self, TEMPLATES, Template};
use slipway_platform_client::ToolError;
use slipway_platform_client::fsutil::atomic_write;

/// Arguments of `scaffold_app` (names exactly as the spec).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScaffoldArgs {
    /// The app name (app-name rule).
    pub app_name: String,
    /// One of the six template names.
    pub app_type: String,
    /// The directory in which the project directory `<app_name>` is created.
    pub output_directory: String,
    /// Devfile description (defaults to the template's).
    #[serde(default)]
    pub description: Option<String>,
    /// Human-readable name (defaults to the app name in title case).
    #[serde(default)]
    pub display_name: Option<String>,
    /// Port of the primary service (defaults to the template's).
    #[serde(default)]
    pub port: Option<i64>,
    /// Devfile fabrics.
    #[serde(default)]
    pub fabrics: Option<Vec<String>>,
    /// Devfile permissions.
    #[serde(default)]
    pub permissions: Option<Vec<String>>,
    /// Replace files that exist already (default false).
    #[serde(default)]
    pub overwrite: Option<bool>,
    /// Apply the durable-workflow overlay (always applied for durable-agent).
    #[serde(default)]
    pub durable: Option<bool>,
}

/// Result of `scaffold_app`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScaffoldResult {
    /// Absolute path of the new project.
    pub project_path: String,
    /// Files written, relative to `project_path`, sorted.
    pub files_created: Vec<String>,
    /// Whether the durable-workflow overlay was applied.
    pub durable: bool,
}

const OVERLAY_DIR: &str = "_overlays/durable/python";

/// A project rendered in memory, not yet written.
struct Prepared {
    project: PathBuf,
    files: BTreeMap<String, Vec<u8>>,
    durable: bool,
}

/// Scaffolds a project. See the module docs for the guarantees.
pub fn scaffold_app(args: &ScaffoldArgs) -> Result<ScaffoldResult, ToolError> {
    let prepared = prepare(args)?;
    write_project(
        &prepared.project,
        &prepared.files,
        args.overwrite.unwrap_or(false),
    )?;
    Ok(ScaffoldResult {
        project_path: prepared.project.display().to_string(),
        files_created: prepared.files.keys().cloned().collect(),
        durable: prepared.durable,
    })
}

/// Every check `scaffold_app` makes before it writes, and nothing written: the desktop runs
/// it as the user types, so each rule's message appears under the field it names, and the
/// rules stay in one place. Returns the project path the scaffold would create.
pub fn check_scaffold(args: &ScaffoldArgs) -> Result<PathBuf, ToolError> {
    let prepared = prepare(args)?;
    if prepared.project.exists() {
        conflicts(
            &prepared.project,
            &prepared.files,
            args.overwrite.unwrap_or(false),
        )?;
    }
    Ok(prepared.project)
}

/// Checks the arguments and renders the project in memory.
fn prepare(args: &ScaffoldArgs) -> Result<Prepared, ToolError> {
    let name = AppName::parse(&args.app_name).map_err(|e| ToolError::invalid("app_name", e))?;
    let template = templates::find(&args.app_type).ok_or_else(|| {
        let names: Vec<&str> = templates::catalog()
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        ToolError::invalid(
            "app_type",
            format!(
                "unknown template {:?}; use one of {}",
                args.app_type,
                names.join(", ")
            ),
        )
    })?;
    let port = match args.port {
        None => template.default_port,
        Some(p) => u16::try_from(p).ok().filter(|p| *p > 0).ok_or_else(|| {
            ToolError::invalid("port", format!("must be between 1 and 65535, got {p}"))
        })?,
    };
    let display_name = match &args.display_name {
        Some(d) if d.trim().is_empty() => {
            return Err(ToolError::invalid("display_name", "must not be empty"));
        }
        Some(d) if d.chars().count() > 100 => {
            return Err(ToolError::invalid(
                "display_name",
                format!(
                    "is {} characters long; at most 100 are allowed",
                    d.chars().count()
                ),
            ));
        }
        Some(d) => d.clone(),
        None => title_case(name.as_str()),
    };
    let description = args
        .description
        .clone()
        .unwrap_or_else(|| template.description.clone());
    let fabrics = list_arg("fabrics", args.fabrics.as_deref())?;
    let permissions = list_arg("permissions", args.permissions.as_deref())?;
    if args.output_directory.trim().is_empty() {
        return Err(ToolError::invalid("output_directory", "must not be empty"));
    }
    let durable = args.durable.unwrap_or(false) || template.name == "durable-agent";
    let vars = Vars {
        app_name: name.as_str(),
        display_name: &display_name,
        description: &description,
        port,
        fabrics,
        permissions,
    };

    let template_dir = TEMPLATES.get_dir(&template.name).ok_or_else(|| {
        ToolError::Internal(format!("template {} is not embedded", template.name))
    })?;
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    collect(template_dir, &template.name, &vars, &mut files);
    if durable {
        apply_durable(template, &mut files, &vars)?;
    }
    let devfile = files
        .get("devfile.yaml")
        .and_then(|b| std::str::from_utf8(b).ok())
        .ok_or_else(|| {
            ToolError::Internal(format!("template {} has no devfile.yaml", template.name))
        })?;
    let report = validate(devfile, Some(&MemoryFiles(&files)));
    if !report.valid() {
        return Err(ToolError::Internal(format!(
            "the scaffolded devfile does not validate: {}",
            report.errors().join("; ")
        )));
    }

    let output = absolute(Path::new(&args.output_directory))?;
    Ok(Prepared {
        project: output.join(name.as_str()),
        files,
        durable,
    })
}

struct Vars<'a> {
    app_name: &'a str,
    display_name: &'a str,
    description: &'a str,
    port: u16,
    fabrics: String,
    permissions: String,
}

fn list_arg(field: &str, items: Option<&[String]>) -> Result<String, ToolError> {
    let items = items.unwrap_or_default();
    if let Some(i) = items.iter().position(|s| s.trim().is_empty()) {
        return Err(
            ToolError::invalid_args(format!("{field}[{i}]: must be a non-empty string"))
                .with_field(field),
        );
    }
    Ok(serde_json::to_string(items).unwrap_or_else(|_| "[]".into()))
}

fn title_case(name: &str) -> String {
    name.split('-')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Substitutes the placeholders with the escaping the file's type needs (templates/README.md).
fn render(path: &str, text: &str, v: &Vars<'_>) -> String {
    let ext = path.rsplit('.').next().unwrap_or_default();
    let json_inner = |s: &str| {
        let quoted = serde_json::to_string(s).unwrap_or_default();
        quoted[1..quoted.len() - 1].to_owned()
    };
    let (display, description) = match ext {
        "yaml" | "yml" => (
            serde_json::to_string(v.display_name).unwrap_or_default(),
            serde_json::to_string(v.description).unwrap_or_default(),
        ),
        "json" | "py" | "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" => {
            (json_inner(v.display_name), json_inner(v.description))
        }
        "html" | "htm" => (html_escape(v.display_name), html_escape(v.description)),
        _ => (v.display_name.to_owned(), v.description.to_owned()),
    };
    text.replace("__APP_NAME__", v.app_name)
        .replace("__DISPLAY_NAME__", &display)
        .replace("__DESCRIPTION__", &description)
        .replace("__PORT__", &v.port.to_string())
        .replace("__FABRICS__", &v.fabrics)
        .replace("__PERMISSIONS__", &v.permissions)
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn collect(dir: &Dir<'_>, root: &str, vars: &Vars<'_>, out: &mut BTreeMap<String, Vec<u8>>) {
    for file in dir.files() {
        let rel = file
            .path()
            .strip_prefix(root)
            .unwrap_or(file.path())
            .to_string_lossy()
            .into_owned();
        let bytes = match file.contents_utf8() {
            Some(text) => render(&rel, text, vars).into_bytes(),
            None => file.contents().to_vec(),
        };
        out.insert(rel, bytes);
    }
    for sub in dir.dirs() {
        collect(sub, root, vars, out);
    }
}

fn apply_durable(
    template: &Template,
    files: &mut BTreeMap<String, Vec<u8>>,
    vars: &Vars<'_>,
) -> Result<(), ToolError> {
    let target = template.scaffold.durable.as_ref().ok_or_else(|| {
        let hosts: Vec<&str> = templates::catalog().iter().filter(|t| t.scaffold.durable.is_some()).map(|t| t.name.as_str()).collect();
        ToolError::invalid(
            "durable",
            format!(
                "the durable-workflow overlay needs a Python ASGI service to host the Restate endpoint, and {} has none; use one of {}",
                template.name,
                hosts.join(", ")
            ),
        )
    })?;
    let prefix = if target.dir == "." {
        String::new()
    } else {
        format!("{}/", target.dir.trim_end_matches('/'))
    };
    if target.copy_overlay {
        let overlay = TEMPLATES
            .get_dir(OVERLAY_DIR)
            .ok_or_else(|| ToolError::Internal("the durable overlay is not embedded".into()))?;
        let mut overlay_files = BTreeMap::new();
        collect(overlay, OVERLAY_DIR, vars, &mut overlay_files);
        for (rel, bytes) in overlay_files {
            if rel == "requirements.txt" {
                let req_path = format!("{prefix}requirements.txt");
                let existing = files
                    .get(&req_path)
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .unwrap_or_default();
                let mut merged = existing.clone();
                if !merged.is_empty() && !merged.ends_with('\n') {
                    merged.push('\n');
                }
                for line in String::from_utf8_lossy(&bytes).lines() {
                    if !line.trim().is_empty() && !existing.lines().any(|l| l.trim() == line.trim())
                    {
                        merged.push_str(line);
                        merged.push('\n');
                    }
                }
                files.insert(req_path, merged.into_bytes());
            } else {
                files.insert(format!("{prefix}{rel}"), bytes);
            }
        }
    }
    let devfile = files
        .get("devfile.yaml")
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .ok_or_else(|| ToolError::Internal("template has no devfile.yaml".into()))?;
    let model = Devfile::parse(&devfile)
        .map_err(|e| ToolError::Internal(format!("template devfile: {e}")))?;
    let port = model
        .services()
        .into_iter()
        .find(|s| s.name == target.service)
        .and_then(|s| s.port())
        .ok_or_else(|| {
            ToolError::Internal(format!(
                "durable service {} has no endpoint",
                target.service
            ))
        })?;
    let block = format!(
        "\n  # Added by the durable-workflow overlay: handlers are served by {service} at {path}.\n  engine: restate\n  service: {service}\n  port: {port}\n  path: {path}\n  retention: 24h",
        service = target.service,
        path = target.path,
    );
    let edited = append_mapping_entry(&devfile, &["metadata", "platform"], "durable", &block)
        .map_err(|e| ToolError::Internal(format!("durable overlay: {e}")))?;
    files.insert("devfile.yaml".into(), edited.into_bytes());
    Ok(())
}

struct MemoryFiles<'a>(&'a BTreeMap<String, Vec<u8>>);

impl slipway_devfile::ProjectFiles for MemoryFiles<'_> {
    fn read(&self, path: &str) -> Option<String> {
        self.0
            .get(path)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }
}

/// `path` made absolute and normalised, so the project path a user is shown has no `.`
/// (`/tmp/x/./orders`) and, for a directory that exists, no `..` or symbolic link either.
fn absolute(path: &Path) -> Result<PathBuf, ToolError> {
    let absolute = std::path::absolute(path)
        .map_err(|e| ToolError::io("read the current directory", path, &e))?;
    Ok(std::fs::canonicalize(&absolute).unwrap_or_else(|_| absolute.components().collect()))
}

/// Refuses an existing project path that is not a directory, or (without `overwrite`) one
/// that already holds any of the template's files.
fn conflicts(
    project: &Path,
    files: &BTreeMap<String, Vec<u8>>,
    overwrite: bool,
) -> Result<(), ToolError> {
    if !project.is_dir() {
        return Err(ToolError::conflict(format!(
            "{} exists and is not a directory",
            project.display()
        ))
        .with_field("app_name"));
    }
    if !overwrite {
        let existing: Vec<&str> = files
            .keys()
            .filter(|rel| project.join(rel).exists())
            .map(String::as_str)
            .collect();
        if !existing.is_empty() {
            return Err(ToolError::conflict(format!(
                "{} already has {} of the template's files ({}); nothing was written. Pass overwrite: true to replace them, or choose another app_name or output_directory",
                project.display(),
                existing.len(),
                existing
                    .iter()
                    .take(5)
                    .copied()
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .with_field("app_name"));
        }
    }
    Ok(())
}

/// Writes the project. A new project is assembled in a hidden sibling directory and renamed
/// into place, so it appears whole or not at all. Into an existing directory, every file is
/// written atomically, after checking that none exists (unless `overwrite`).
fn write_project(
    project: &Path,
    files: &BTreeMap<String, Vec<u8>>,
    overwrite: bool,
) -> Result<(), ToolError> {
    if project.exists() {
        conflicts(project, files, overwrite)?;
        for (rel, bytes) in files {
            let path = project.join(rel);
            atomic_write(&path, bytes).map_err(|e| ToolError::io("write", &path, &e))?;
        }
        return Ok(());
    }
    let parent = project.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| ToolError::io("create", parent, &e))?;
    let staging = tempfile::Builder::new()
        .prefix(".slipway-scaffold-")
        .tempdir_in(parent)
        .map_err(|e| ToolError::io("create a staging directory in", parent, &e))?;
    for (rel, bytes) in files {
        let path = staging.path().join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| ToolError::io("create", dir, &e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| ToolError::io("write", &path, &e))?;
    }
    let staged = staging.keep();
    std::fs::rename(&staged, project).map_err(|e| {
        let _ = std::fs::remove_dir_all(&staged);
        ToolError::io("move the new project into", project, &e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(name: &str, dir: &Path) -> ScaffoldArgs {
        ScaffoldArgs {
            app_name: name.into(),
            app_type: "python-api".into(),
            output_directory: dir.display().to_string(),
            description: None,
            display_name: None,
            port: None,
            fabrics: None,
            permissions: None,
            overwrite: None,
            durable: None,
        }
    }

    #[test]
    fn check_names_the_field_of_the_broken_rule_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let err = check_scaffold(&args("Orders", dir.path())).unwrap_err();
        assert_eq!(err.field(), Some("app_name"));
        assert!(err.to_string().contains("lowercase"), "{err}");
        let mut bad_port = args("orders", dir.path());
        bad_port.port = Some(70000);
        assert_eq!(check_scaffold(&bad_port).unwrap_err().field(), Some("port"));
        let mut no_dir = args("orders", dir.path());
        no_dir.output_directory = " ".into();
        assert_eq!(
            check_scaffold(&no_dir).unwrap_err().field(),
            Some("output_directory")
        );
        let project = check_scaffold(&args("orders", dir.path())).unwrap();
        assert_eq!(project, dir.path().join("orders"));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn check_refuses_what_scaffold_would_refuse() {
        let dir = tempfile::tempdir().unwrap();
        scaffold_app(&args("orders", dir.path())).unwrap();
        let err = check_scaffold(&args("orders", dir.path())).unwrap_err();
        assert_eq!(err.field(), Some("app_name"));
        assert!(err.to_string().contains("already has"), "{err}");
        let mut again = args("orders", dir.path());
        again.overwrite = Some(true);
        check_scaffold(&again).unwrap();
    }

    #[test]
    fn title_case_names() {
        assert_eq!(title_case("my-cool-app"), "My Cool App");
        assert_eq!(title_case("a"), "A");
    }

    #[test]
    fn escaping_follows_file_type() {
        let v = Vars {
            app_name: "a",
            display_name: "Tom's \"App\" <1>",
            description: "d",
            port: 1,
            fabrics: "[]".into(),
            permissions: "[]".into(),
        };
        assert_eq!(
            render("x.yaml", "n: __DISPLAY_NAME__", &v),
            "n: \"Tom's \\\"App\\\" <1>\""
        );
        assert_eq!(
            render("x.py", "t = \"__DISPLAY_NAME__\"", &v),
            "t = \"Tom's \\\"App\\\" <1>\""
        );
        assert_eq!(
            render("x.html", "<h1>__DISPLAY_NAME__</h1>", &v),
            "<h1>Tom&#39;s &quot;App&quot; &lt;1&gt;</h1>"
        );
        assert_eq!(
            render("README.md", "# __DISPLAY_NAME__", &v),
            "# Tom's \"App\" <1>"
        );
    }
}
