//! The embedded templates and their catalogue (`templates/catalog.json`).

use std::sync::OnceLock;

use include_dir::{Dir, include_dir};
use serde::{Deserialize, Serialize};

/// Every template folder, embedded at compile time so scaffolding works from any directory.
pub static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../templates");

/// One entry of `get_available_templates`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Template {
    /// Template identifier (`app_type`).
    pub name: String,
    /// One sentence for a picker.
    pub description: String,
    /// `Python` or `JavaScript`.
    pub language: String,
    /// The primary service's port.
    pub default_port: u16,
    /// Scaffolding details that `get_available_templates` does not show.
    #[serde(flatten, skip_serializing)]
    #[schemars(skip)]
    pub scaffold: ScaffoldInfo,
}

/// What scaffolding needs beyond the public fields.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct ScaffoldInfo {
    /// The service whose port `port` overrides.
    #[serde(default)]
    pub primary_service: String,
    /// Where the durable-workflow overlay goes; None when the template cannot host it.
    #[serde(default)]
    pub durable: Option<DurableTarget>,
}

/// Where the durable-workflow overlay attaches.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DurableTarget {
    /// The service that serves the Restate endpoint.
    pub service: String,
    /// The service's source directory, relative to the project root.
    pub dir: String,
    /// HTTP path of the Restate endpoint within the service.
    pub path: String,
    /// Whether the overlay's files are copied (false when the template already is an agent).
    pub copy_overlay: bool,
}

#[derive(Deserialize)]
struct Catalog {
    templates: Vec<Template>,
}

/// The catalogue, parsed once.
pub fn catalog() -> &'static [Template] {
    static CATALOG: OnceLock<Vec<Template>> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let text = TEMPLATES
            .get_file("catalog.json")
            .and_then(|f| f.contents_utf8())
            .expect("templates/catalog.json is embedded");
        serde_json::from_str::<Catalog>(text)
            .expect("templates/catalog.json is valid (checked by tests)")
            .templates
    })
}

/// Result of `get_available_templates`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TemplateList {
    /// Every template, in the catalogue's order.
    pub templates: Vec<Template>,
}

/// `get_available_templates`: the six templates with name, description, language and
/// default_port.
pub fn get_available_templates() -> Vec<Template> {
    catalog().to_vec()
}

/// A template by name.
pub fn find(name: &str) -> Option<&'static Template> {
    catalog().iter().find(|t| t.name == name)
}
