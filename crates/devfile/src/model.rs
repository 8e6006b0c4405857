//! Typed devfile structs (serde), and the per-service view the platform and toolkit use.
//!
//! These types are lenient on purpose: [`crate::validate`] is where rules live; the model only
//! reads what the rest of Slipway needs from a devfile that has already been validated.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::name::{AppName, AppNameError};

/// A whole devfile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Devfile {
    /// devfile schema version, for example `2.2.0`.
    pub schema_version: String,
    /// Name, display name and the platform block.
    pub metadata: Metadata,
    /// Image, container and other components.
    #[serde(default)]
    pub components: Vec<Component>,
    /// Build/run commands.
    #[serde(default)]
    pub commands: Vec<Command>,
}

/// `metadata`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// The devfile's name as written (any string, by the devfile schema); the platform names
    /// the app by [`Metadata::app_name`], derived from it.
    pub name: String,
    /// The human-readable name.
    pub display_name: String,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Informative language name.
    #[serde(default)]
    pub language: Option<String>,
    /// The template the project came from.
    #[serde(default)]
    pub project_type: Option<String>,
    /// Semantic version of the app.
    #[serde(default)]
    pub version: Option<String>,
    /// Everything the platform reads.
    #[serde(default)]
    pub platform: Platform,
}

impl Metadata {
    /// The app name the platform uses: `name` itself when it is a valid app name, otherwise
    /// the name derived from it ([`AppName::derive`]; `validate` warns about the change).
    pub fn app_name(&self) -> Result<AppName, AppNameError> {
        AppName::derive(&self.name)
    }
}

/// `metadata.platform`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Platform {
    /// Network fabrics the app joins.
    #[serde(default)]
    pub fabrics: Vec<String>,
    /// Platform permissions the app's service principal receives.
    #[serde(default)]
    pub permissions: Vec<String>,
    /// Managed resources by kind; each resource is a free-form map with a `name`.
    #[serde(default)]
    pub managed_infra: BTreeMap<String, Vec<serde_json::Value>>,
    /// The durable-workflow block.
    #[serde(default)]
    pub durable: Option<Durable>,
}

/// `metadata.platform.durable`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Durable {
    /// Workflow engine (`restate`).
    pub engine: String,
    /// Service hosting the handlers.
    pub service: String,
    /// Port of the handlers' endpoint.
    pub port: u16,
    /// HTTP path of the handlers' endpoint (default `/`).
    #[serde(default)]
    pub path: Option<String>,
    /// Journal retention such as `24h`.
    #[serde(default)]
    pub retention: Option<String>,
}

/// One component; exactly one of the type fields is set in a valid devfile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Component {
    /// Component name (for a container: the service name).
    pub name: String,
    /// Free-form attributes (`imageUri`, `dependsOn`, `secrets`, `healthPath`).
    #[serde(default)]
    pub attributes: BTreeMap<String, serde_json::Value>,
    /// Set for container components.
    #[serde(default)]
    pub container: Option<Container>,
    /// Set for image components.
    #[serde(default)]
    pub image: Option<Image>,
    /// Set for volume components (`volume: {}` and a bare `volume:` read as the defaults).
    #[serde(default, deserialize_with = "volume_body")]
    pub volume: Option<Volume>,
}

/// `components[].volume`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Volume {
    /// Storage size as written (`1Gi`).
    #[serde(default)]
    pub size: Option<serde_json::Value>,
    /// Empty on each deploy.
    #[serde(default)]
    pub ephemeral: Option<bool>,
}

/// Reads a `volume` key that is present: a mapping, or null for "the defaults".
fn volume_body<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Volume>, D::Error> {
    Ok(Some(Option::<Volume>::deserialize(d)?.unwrap_or_default()))
}

/// `components[].container`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    /// An image component's `imageName`, or a pullable reference.
    pub image: String,
    /// Environment variables.
    #[serde(default)]
    pub env: Vec<EnvVar>,
    /// Network endpoints.
    #[serde(default)]
    pub endpoints: Vec<Endpoint>,
    /// Memory limit (Kubernetes quantity).
    #[serde(default)]
    pub memory_limit: Option<String>,
    /// CPU limit (Kubernetes quantity).
    #[serde(default)]
    pub cpu_limit: Option<serde_json::Value>,
    /// Volumes mounted into the service.
    #[serde(default)]
    pub volume_mounts: Vec<VolumeMount>,
}

/// One `volumeMounts[]` entry of a container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolumeMount {
    /// The volume component's name.
    pub name: String,
    /// Where the service sees it.
    pub path: String,
}

/// `env[]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvVar {
    /// Variable name.
    pub name: String,
    /// Variable value.
    pub value: String,
}

/// `endpoints[]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    /// Endpoint name.
    pub name: String,
    /// The port the service listens on.
    pub target_port: u16,
    /// public | internal | none (default public).
    #[serde(default)]
    pub exposure: Option<String>,
    /// http, https, ws, wss, tcp, udp (default http).
    #[serde(default)]
    pub protocol: Option<String>,
    /// URL path.
    #[serde(default)]
    pub path: Option<String>,
}

impl Endpoint {
    /// Whether it is reachable from outside the app (`exposure` public, the default).
    pub fn is_public(&self) -> bool {
        self.exposure.as_deref().unwrap_or("public") == "public"
    }
}

/// `components[].image`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// The name containers refer to.
    pub image_name: String,
    /// How to build it.
    pub dockerfile: Dockerfile,
}

/// `components[].image.dockerfile`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dockerfile {
    /// Dockerfile path relative to the project root; empty when the Dockerfile comes from a
    /// `git` or `devfileRegistry` source, which Slipway does not fetch.
    #[serde(default)]
    pub uri: String,
    /// Build context relative to the project root (default `.`).
    #[serde(default)]
    pub build_context: Option<String>,
}

/// `commands[]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Command {
    /// Command id.
    pub id: String,
    /// Free-form attributes (`schedule`, `timeZone`, `concurrency`, `runMissed` of a job).
    #[serde(default)]
    pub attributes: BTreeMap<String, serde_json::Value>,
    /// Set for exec commands.
    #[serde(default)]
    pub exec: Option<Exec>,
}

/// `commands[].exec`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Exec {
    /// Shell command line.
    pub command_line: String,
    /// The container component it runs in.
    pub component: String,
    /// `${PROJECT_SOURCE}` or a directory inside it.
    #[serde(default)]
    pub working_dir: Option<String>,
    /// Build/run/… group.
    #[serde(default)]
    pub group: Option<Group>,
}

/// `commands[].exec.group`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    /// build, run, test, debug, deploy.
    pub kind: String,
    /// The default command of its kind.
    #[serde(default)]
    pub is_default: Option<bool>,
}

/// Everything Slipway needs to build and run one service, gathered from its image component,
/// container component and commands.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServiceSpec {
    /// Service (container component) name.
    pub name: String,
    /// Name of the image component that builds it, if any.
    pub image_component: Option<String>,
    /// Dockerfile path relative to the project root.
    pub dockerfile: Option<String>,
    /// Build context relative to the project root.
    pub build_context: String,
    /// The last built image, as written by builds.
    pub image_uri: Option<String>,
    /// Endpoints.
    pub endpoints: Vec<Endpoint>,
    /// Services that must start first.
    pub depends_on: Vec<String>,
    /// App secret paths to inject.
    pub secrets: Vec<String>,
    /// Readiness probe path.
    pub health_path: String,
    /// Extra environment.
    pub env: Vec<EnvVar>,
    /// Build command line and working directory (relative to the project root).
    pub build_command: Option<(String, String)>,
    /// Run command line and working directory (relative to the project root).
    pub run_command: Option<(String, String)>,
    /// `memoryLimit` in bytes (validated: see [`crate::quantity`]).
    pub memory_limit: Option<u64>,
    /// `cpuLimit` in millicores.
    pub cpu_limit: Option<u64>,
    /// The volumes it mounts.
    pub volume_mounts: Vec<VolumeMount>,
}

impl ServiceSpec {
    /// Whether it has a public endpoint (the only services given URLs and gateway routes).
    pub fn is_public(&self) -> bool {
        self.endpoints.iter().any(Endpoint::is_public)
    }

    /// The port traffic goes to: the first public endpoint's, else the first endpoint's.
    pub fn port(&self) -> Option<u16> {
        self.endpoints
            .iter()
            .find(|e| e.is_public())
            .or_else(|| self.endpoints.first())
            .map(|e| e.target_port)
    }
}

impl Devfile {
    /// Parses devfile text with serde_yaml (no rule checks; run [`crate::validate`] first).
    pub fn parse(text: &str) -> Result<Self, serde_yaml::Error> {
        serde_yaml::from_str(text)
    }

    /// Every service in devfile order.
    pub fn services(&self) -> Vec<ServiceSpec> {
        self.components
            .iter()
            .filter_map(|c| {
                let container = c.container.as_ref()?;
                let image = self.components.iter().find(|i| {
                    i.image
                        .as_ref()
                        .is_some_and(|img| img.image_name == container.image)
                });
                let strings = |key: &str| -> Vec<String> {
                    c.attributes
                        .get(key)
                        .and_then(|v| v.as_array())
                        .map(|a| {
                            a.iter()
                                .filter_map(|s| s.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default()
                };
                Some(ServiceSpec {
                    name: c.name.clone(),
                    image_component: image.map(|i| i.name.clone()),
                    dockerfile: image
                        .and_then(|i| i.image.as_ref())
                        .filter(|i| !i.dockerfile.uri.is_empty())
                        .map(|i| project_relative(&i.dockerfile.uri)),
                    build_context: image
                        .and_then(|i| i.image.as_ref())
                        .and_then(|i| i.dockerfile.build_context.as_deref())
                        .map_or_else(|| ".".into(), project_relative),
                    image_uri: image
                        .and_then(|i| i.attributes.get("imageUri"))
                        .and_then(|v| v.as_str())
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned),
                    endpoints: container.endpoints.clone(),
                    depends_on: strings("dependsOn"),
                    secrets: strings("secrets"),
                    health_path: c
                        .attributes
                        .get("healthPath")
                        .and_then(|v| v.as_str())
                        .unwrap_or("/")
                        .to_owned(),
                    env: container.env.clone(),
                    build_command: self.command_for(&c.name, "build"),
                    run_command: self.command_for(&c.name, "run"),
                    memory_limit: container
                        .memory_limit
                        .as_deref()
                        .and_then(crate::quantity::memory_bytes),
                    cpu_limit: container.cpu_limit.as_ref().and_then(|v| match v {
                        serde_json::Value::String(s) => crate::quantity::cpu_millis(s),
                        other => crate::quantity::cpu_millis(&other.to_string()),
                    }),
                    volume_mounts: container.volume_mounts.clone(),
                })
            })
            .collect()
    }

    /// Service names in dependency order (dependencies first), or the cycle.
    pub fn deploy_order(&self) -> Result<Vec<String>, Vec<String>> {
        let services = self.services();
        crate::graph::deploy_order(
            services
                .iter()
                .map(|s| (s.name.as_str(), s.depends_on.iter().map(String::as_str))),
        )
    }

    fn command_for(&self, component: &str, kind: &str) -> Option<(String, String)> {
        let mut candidates: Vec<&Exec> = self
            .commands
            .iter()
            .filter_map(|c| c.exec.as_ref())
            .filter(|e| {
                e.component == component && e.group.as_ref().is_some_and(|g| g.kind == kind)
            })
            .collect();
        candidates.sort_by_key(|e| !e.group.as_ref().and_then(|g| g.is_default).unwrap_or(false));
        candidates.first().map(|e| {
            let dir = e
                .working_dir
                .as_deref()
                .map(|d| {
                    d.trim_start_matches("${PROJECT_SOURCE}")
                        .trim_start_matches("$PROJECT_SOURCE")
                        .trim_start_matches('/')
                })
                .filter(|d| !d.is_empty())
                .unwrap_or(".");
            (e.command_line.clone(), dir.to_owned())
        })
    }
}

/// A project path as the builders want it: `${PROJECT_SOURCE}` (the project root) and a leading
/// `./` dropped, so `${PROJECT_SOURCE}/api/Dockerfile` and `./api/Dockerfile` are both
/// `api/Dockerfile`, and `${PROJECT_SOURCE}` alone is `.`.
pub(crate) fn project_relative(path: &str) -> String {
    let rest = path
        .strip_prefix("${PROJECT_SOURCE}")
        .or_else(|| path.strip_prefix("$PROJECT_SOURCE"))
        .map_or(path, |r| r.trim_start_matches('/'));
    let rest = rest.trim_start_matches("./");
    if rest.is_empty() {
        ".".to_owned()
    } else {
        rest.to_owned()
    }
}
