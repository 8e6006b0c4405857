//! An app's custom domains: list them with their certificates' state, add one (a name to
//! serve, or a redirect to another of the app's domains), remove one. `slipway domains`, the
//! desktop's Domains section and the MCP server's domain tools call these.

use reqwest::Method;
use serde::{Deserialize, Serialize};
pub use slipway_api::domains::{Domain, DomainCertificate, DomainList, DomainState, NewDomain};

use crate::apps::uuid_arg;
use crate::client::Client;
use crate::error::ToolError;
use crate::people::segment;

/// What removing a domain answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RemovedDomain {
    /// The app.
    pub app_id: String,
    /// The name no longer served.
    pub removed: String,
}

fn domains_path(app_id: &str) -> Result<String, ToolError> {
    Ok(format!("/v1/apps/{}/domains", uuid_arg("app_id", app_id)?))
}

/// The app's domains, by name.
pub fn list_domains(client: &Client, app_id: &str) -> Result<DomainList, ToolError> {
    client.typed(Method::GET, &domains_path(app_id)?, None)
}

/// One domain.
pub fn get_domain(client: &Client, app_id: &str, name: &str) -> Result<Domain, ToolError> {
    let path = format!(
        "{}/{}",
        domains_path(app_id)?,
        segment("name", &normalize(name))?
    );
    client.typed(Method::GET, &path, None)
}

/// A name as DNS compares it: what people type (`Orders.Example.org.`) is what the platform
/// takes (`orders.example.org`), which refuses any other spelling.
pub fn normalize(name: &str) -> String {
    let name = name.trim();
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

/// Adds a domain (its names normalised first); its certificate is issued once the name
/// points at the platform.
pub fn add_domain(client: &Client, app_id: &str, domain: &NewDomain) -> Result<Domain, ToolError> {
    let domain = NewDomain {
        name: normalize(&domain.name),
        service: domain.service.clone(),
        redirect_to: domain.redirect_to.as_deref().map(normalize),
    };
    let body = serde_json::to_value(&domain)
        .map_err(|e| ToolError::Internal(format!("the domain cannot be sent: {e}")))?;
    client.typed(Method::POST, &domains_path(app_id)?, Some(&body))
}

/// Stops serving the app on `name`.
pub fn remove_domain(
    client: &Client,
    app_id: &str,
    name: &str,
) -> Result<RemovedDomain, ToolError> {
    let name = normalize(name);
    let path = format!("{}/{}", domains_path(app_id)?, segment("name", &name)?);
    client.json(Method::DELETE, &path, None)?;
    Ok(RemovedDomain {
        app_id: app_id.trim().to_owned(),
        removed: name,
    })
}

/// Arguments of the `add_domain` tool.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddDomainArgs {
    /// App UUID.
    pub app_id: String,
    /// The domain, for example orders.example.org (not a wildcard, not under the platform's
    /// own domains).
    pub name: String,
    /// The service to serve (default: the app's first public service).
    #[serde(default)]
    pub service: Option<String>,
    /// Redirect to this other domain of the app instead of serving it (www. to the apex).
    #[serde(default)]
    pub redirect_to: Option<String>,
    /// Environment (default production).
    #[serde(default)]
    pub environment: Option<String>,
}

/// Arguments of the `remove_domain` tool.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DomainArgs {
    /// App UUID.
    pub app_id: String,
    /// The domain.
    pub name: String,
    /// Environment (default production).
    #[serde(default)]
    pub environment: Option<String>,
}

/// The `list_domains` tool.
pub fn list_domains_tool(
    client: &Client,
    args: &crate::apps::AppIdArgs,
) -> Result<DomainList, ToolError> {
    list_domains(client, &args.app_id)
}

/// The `add_domain` tool.
pub fn add_domain_tool(client: &Client, args: &AddDomainArgs) -> Result<Domain, ToolError> {
    add_domain(
        client,
        &args.app_id,
        &NewDomain {
            name: args.name.clone(),
            service: args.service.clone(),
            redirect_to: args.redirect_to.clone(),
        },
    )
}

/// The `remove_domain` tool.
pub fn remove_domain_tool(client: &Client, args: &DomainArgs) -> Result<RemovedDomain, ToolError> {
    remove_domain(client, &args.app_id, &args.name)
}
