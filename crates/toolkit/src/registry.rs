//! The tool table: every tool this build offers, with its description and argument schema,
//! and the dispatcher that runs a tool by name on JSON arguments.

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::ToolError;

/// What a transport needs to offer a tool.
#[derive(Debug, Clone, Copy)]
pub struct ToolInfo {
    /// The spec's tool name.
    pub name: &'static str,
    /// What it does and when to use it, for people and models.
    pub description: &'static str,
}

/// The tools of this build. Tools that need the platform arrive with the platform client.
pub const TOOLS: [ToolInfo; 4] = [
    ToolInfo {
        name: "get_available_templates",
        description: "List the app templates (name, description, language, default_port). Always call this first.",
    },
    ToolInfo {
        name: "scaffold_app",
        description: "Create a new project <output_directory>/<app_name> from a template: source, Dockerfile, devfile.yaml, README.md. Never overwrites existing files unless overwrite is true.",
    },
    ToolInfo {
        name: "validate_devfile",
        description: "Check a devfile.yaml (devfile_content or devfile_path): YAML syntax, required fields, components, endpoints, platform fields, app name, dependsOn, managedInfra, port mismatches. Returns {valid, errors, warnings}.",
    },
    ToolInfo {
        name: "generate_devfile",
        description: "Generate a single-service devfile.yaml; with output_path, write it (never over an existing file).",
    },
];

/// Why a call could not even be attempted (a usage error, exit code 2 in the CLI).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No tool has that name.
    #[error("unknown tool {0:?}; available tools: {1}")]
    UnknownTool(String, String),
    /// The arguments are not a JSON object.
    #[error("arguments must be a JSON object, got {0}")]
    NotAnObject(&'static str),
}

/// Runs tool `name` on `args`. Tool failures (bad argument values included) come back as the
/// spec's `{success: false, error, retryable}` object, not as `Err`.
pub fn call(name: &str, args: Value) -> Result<Value, CallError> {
    let args = match args {
        Value::Object(_) => args,
        Value::Null => json!({}),
        other => return Err(CallError::NotAnObject(kind(&other))),
    };
    let result = match name {
        "get_available_templates" => Ok(json!({
            "success": true,
            "templates": crate::templates::get_available_templates(),
        })),
        "scaffold_app" => parse(args)
            .and_then(|a| crate::scaffold::scaffold_app(&a))
            .and_then(to_value),
        "validate_devfile" => parse(args).and_then(|a| crate::devfile_tools::validate_devfile(&a)),
        "generate_devfile" => parse(args)
            .and_then(|a| crate::devfile_tools::generate_devfile(&a))
            .and_then(to_value),
        _ => {
            let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
            return Err(CallError::UnknownTool(name.to_owned(), names.join(", ")));
        }
    };
    Ok(result.unwrap_or_else(|e| e.to_json()))
}

fn parse<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args)
        .map_err(|e| ToolError::InvalidArgument(format!("invalid arguments: {e}")))
}

fn to_value<T: serde::Serialize>(v: T) -> Result<Value, ToolError> {
    serde_json::to_value(v).map_err(|e| ToolError::Internal(e.to_string()))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
