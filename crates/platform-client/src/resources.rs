//! An app's backing resources (`managedInfra`) and volumes: list them, reveal one's
//! credentials (editors and owners), rotate them, destroy a resource and its data (owners).
//! `slipway resources` and the desktop's Resources tab call these.

use reqwest::Method;
use serde::{Deserialize, Serialize};
pub use slipway_api::{ResourceCredentials, ResourceInfo, VolumeInfo};

use crate::apps::uuid_arg;
use crate::client::Client;
use crate::error::ToolError;
use crate::model::App;
use crate::people::segment;

/// An app's resources and volumes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Resources {
    /// The app.
    pub app_id: String,
    /// Attached and detached resources.
    pub resources: Vec<ResourceInfo>,
    /// Its volumes.
    pub volumes: Vec<VolumeInfo>,
}

/// What a destroy did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DestroyedResource {
    /// The app.
    pub app_id: String,
    /// Its kind.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// In words.
    pub message: String,
}

#[derive(Deserialize)]
struct ResourceList {
    resources: Vec<ResourceInfo>,
}

/// The app's resources (from its record, which carries both lists).
pub fn list_resources(client: &Client, app_id: &str) -> Result<Resources, ToolError> {
    let id = uuid_arg("app_id", app_id)?;
    let app: App = client.typed(Method::GET, &format!("/v1/apps/{id}"), None)?;
    Ok(Resources {
        app_id: id,
        resources: app.details.resources,
        volumes: app.details.volumes,
    })
}

fn resource_path(app_id: &str, kind: &str, name: &str) -> Result<String, ToolError> {
    let id = uuid_arg("app_id", app_id)?;
    Ok(format!(
        "/v1/apps/{id}/resources/{}/{}",
        segment("kind", kind)?,
        segment("name", name)?
    ))
}

/// One resource's credentials (editor or owner role needed).
pub fn reveal_credentials(
    client: &Client,
    app_id: &str,
    kind: &str,
    name: &str,
) -> Result<ResourceCredentials, ToolError> {
    let path = format!("{}/credentials", resource_path(app_id, kind, name)?);
    client.typed(Method::GET, &path, None)
}

/// New credentials for a resource; the app is redeployed on them.
pub fn rotate_credentials(
    client: &Client,
    app_id: &str,
    kind: &str,
    name: &str,
) -> Result<Vec<ResourceInfo>, ToolError> {
    let path = format!("{}/rotate", resource_path(app_id, kind, name)?);
    let list: ResourceList = client.typed(Method::POST, &path, None)?;
    Ok(list.resources)
}

/// Destroys a resource and its data for good (owner role needed).
pub fn destroy_resource(
    client: &Client,
    app_id: &str,
    kind: &str,
    name: &str,
) -> Result<DestroyedResource, ToolError> {
    let path = resource_path(app_id, kind, name)?;
    client.json(Method::DELETE, &path, None)?;
    Ok(DestroyedResource {
        app_id: app_id.trim().to_owned(),
        kind: kind.to_owned(),
        name: name.to_owned(),
        message: format!("{kind} {name:?} and its data are destroyed"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_password() {
        let c = ResourceCredentials {
            kind: "cache".into(),
            name: "hot".into(),
            engine: "redis".into(),
            url: "redis://:pw@127.0.0.1:1/0".into(),
            host: "127.0.0.1".into(),
            port: 1,
            user: String::new(),
            password: "pw".into(),
            database: String::new(),
        };
        assert!(!format!("{c:?}").contains("pw"));
    }

    #[test]
    fn bad_ids_and_names_are_refused_before_anything_is_sent() {
        let e = resource_path("not-a-uuid", "cache", "hot").unwrap_err();
        assert!(e.to_string().contains("app_id"), "{e}");
        let e = resource_path("0b5e7c1a-93f2-4d6b-8a1e-2f3c4d5e6f70", "cache", " ").unwrap_err();
        assert!(e.to_string().contains("name"), "{e}");
        let ok = resource_path("0b5e7c1a-93f2-4d6b-8a1e-2f3c4d5e6f70", "cache", "a/b").unwrap();
        assert!(ok.ends_with("/resources/cache/a%2Fb"), "{ok}");
    }
}
