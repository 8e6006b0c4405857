//! `validate_devfile` and `generate_devfile`: the devfile engine with file access added.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use slipway_devfile::{GenerateParams, ProjectFiles, validate};

use slipway_platform_client::ToolError;
use slipway_platform_client::fsutil::atomic_write;

/// Arguments of `validate_devfile`: exactly one of the two.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateDevfileArgs {
    /// Raw YAML.
    #[serde(default)]
    pub devfile_content: Option<String>,
    /// Path to a devfile.yaml (its Dockerfiles are read for the port check).
    #[serde(default)]
    pub devfile_path: Option<String>,
}

/// Reads project files relative to a devfile's directory, refusing paths that leave it.
struct DirFiles(PathBuf);

impl ProjectFiles for DirFiles {
    fn read(&self, rel: &str) -> Option<String> {
        if rel.starts_with('/') || rel.split('/').any(|s| s == "..") {
            return None;
        }
        std::fs::read_to_string(self.0.join(rel)).ok()
    }
}

/// Result of `validate_devfile`: the spec's `{valid, errors, warnings}`. An invalid devfile is
/// a result, not a failure: the call succeeded in finding what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ValidateDevfileResult {
    /// No errors.
    pub valid: bool,
    /// Each error with its path and line.
    pub errors: Vec<String>,
    /// Each warning, likewise.
    pub warnings: Vec<String>,
}

/// `validate_devfile`: `{valid, errors, warnings}`.
pub fn validate_devfile(args: &ValidateDevfileArgs) -> Result<ValidateDevfileResult, ToolError> {
    let report = match (&args.devfile_content, &args.devfile_path) {
        (Some(_), Some(_)) => {
            return Err(ToolError::invalid_args(
                "provide devfile_content or devfile_path, not both",
            ));
        }
        (None, None) => {
            return Err(ToolError::invalid_args(
                "devfile_content or devfile_path is required",
            ));
        }
        (Some(content), None) => validate(content, None),
        (None, Some(path)) => {
            let path = Path::new(path);
            let path = if path.is_dir() {
                path.join("devfile.yaml")
            } else {
                path.to_path_buf()
            };
            let text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    ToolError::NotFound(format!("devfile_path: {} does not exist", path.display()))
                }
                _ => ToolError::io("read", &path, &e),
            })?;
            let dir = path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from("."));
            validate(&text, Some(&DirFiles(dir)))
        }
    };
    Ok(ValidateDevfileResult {
        valid: report.valid(),
        errors: report.errors(),
        warnings: report.warnings(),
    })
}

/// Result of `generate_devfile`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GenerateDevfileResult {
    /// The devfile text.
    pub content: String,
    /// Where it was written, when `output_path` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_path: Option<String>,
}

/// `generate_devfile`: renders a devfile and, with `output_path`, writes it atomically. An
/// existing file is never replaced: generating over a devfile someone edited would lose work.
pub fn generate_devfile(params: &GenerateParams) -> Result<GenerateDevfileResult, ToolError> {
    let content = slipway_devfile::generate_devfile(params)
        .map_err(|e| ToolError::invalid_args(e.to_string()).with_field(e.field()))?;
    let output_path = match &params.output_path {
        None => None,
        Some(p) if p.trim().is_empty() => {
            return Err(ToolError::invalid("output_path", "must not be empty"));
        }
        Some(p) => {
            let mut path = PathBuf::from(p);
            if path.is_dir() {
                path = path.join("devfile.yaml");
            }
            if path.exists() {
                return Err(ToolError::conflict(format!(
                    "output_path: {} exists already; nothing was written. Remove it or choose another path",
                    path.display()
                ))
                .with_field("output_path"));
            }
            atomic_write(&path, content.as_bytes())
                .map_err(|e| ToolError::io("write", &path, &e))?;
            Some(path.display().to_string())
        }
    };
    Ok(GenerateDevfileResult {
        content,
        output_path,
    })
}
