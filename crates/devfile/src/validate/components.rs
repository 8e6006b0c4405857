//! Rules for `components`: image and container components, endpoints, env, limits, and the
//! service graph (`attributes.dependsOn`).

use std::collections::BTreeMap;

use super::{
    Ctx, Service, UniqueNames, check_keys, join, mapping, non_empty_string, required, string,
    string_list,
};
use crate::diagnostics::Severity;
use crate::secret_path;
use crate::yaml::{Node, Value};

/// Devfile component names are DNS labels of at most 63 characters.
pub const COMPONENT_NAME_MAX: usize = 63;
/// Values of `endpoints[].exposure`.
pub const EXPOSURES: [&str; 3] = ["public", "internal", "none"];
/// Values of `endpoints[].protocol`.
pub const PROTOCOLS: [&str; 6] = ["http", "https", "ws", "wss", "tcp", "udp"];

const COMPONENT_TYPES: [&str; 6] = [
    "container",
    "image",
    "kubernetes",
    "openshift",
    "volume",
    "custom",
];

/// The keys of a component: its name, attributes and one type key.
const COMPONENT_KEYS: [&str; COMPONENT_TYPES.len() + 2] = {
    let mut keys = ["name"; COMPONENT_TYPES.len() + 2];
    keys[1] = "attributes";
    let mut i = 0;
    while i < COMPONENT_TYPES.len() {
        keys[i + 2] = COMPONENT_TYPES[i];
        i += 1;
    }
    keys
};

/// The keys of `container`.
const CONTAINER_KEYS: [&str; 14] = [
    "image",
    "env",
    "endpoints",
    "memoryLimit",
    "memoryRequest",
    "cpuLimit",
    "cpuRequest",
    "command",
    "args",
    "mountSources",
    "sourceMapping",
    "volumeMounts",
    "dedicatedPod",
    "annotation",
];

/// The keys of `image.dockerfile`.
const DOCKERFILE_KEYS: [&str; 6] = [
    "uri",
    "buildContext",
    "rootRequired",
    "args",
    "devfileRegistry",
    "git",
];

/// The keys of `endpoints[]`.
const ENDPOINT_KEYS: [&str; 8] = [
    "name",
    "targetPort",
    "exposure",
    "protocol",
    "path",
    "secure",
    "attributes",
    "annotation",
];

/// An image component as the services need it.
struct BuiltImage {
    /// The component's path, for messages.
    path: String,
    /// Its Dockerfile, relative to the project, when Slipway can build it.
    dockerfile: Option<String>,
    /// Whether a container component runs it.
    used: bool,
}

/// What reading the component list gathers for the rules that span components.
struct Components<'a> {
    /// Component names, unique in the devfile.
    names: UniqueNames,
    /// Endpoint names, unique in the devfile.
    endpoint_names: UniqueNames,
    /// Image components by `imageName`.
    images: BTreeMap<String, BuiltImage>,
    /// Container components.
    services: Vec<Service<'a>>,
    /// The kubernetes/openshift components, described for messages.
    manifests: Vec<String>,
    /// Volume components by name, with their paths.
    volumes: BTreeMap<String, String>,
}

/// Checks every component and returns the services (container components) for the rules that
/// read across the document.
pub(super) fn components<'a>(ctx: &mut Ctx, root: &'a Node) -> Vec<Service<'a>> {
    let parent = root.get("parent");
    let Some((list, items)) = component_list(ctx, root, parent) else {
        return Vec::new();
    };
    let mut found = Components {
        names: UniqueNames::new("component name", COMPONENT_NAME_MAX),
        endpoint_names: UniqueNames::new("endpoint name", ctx.release.endpoint_name_max)
            .limited_by(ctx.release)
            .duplicate_note("; endpoint names are unique in a devfile"),
        images: BTreeMap::new(),
        services: Vec::new(),
        manifests: Vec::new(),
        volumes: BTreeMap::new(),
    };
    for (i, comp) in items.iter().enumerate() {
        let path = format!("components[{i}]");
        if let Some(comp) = mapping(ctx, comp, &path) {
            component(ctx, comp, &path, &mut found);
        }
    }
    super::volumes::mounts(ctx, items, &found.volumes);
    link_images(ctx, &mut found.services, &mut found.images);
    unused_images(ctx, &found.images);
    something_to_deploy(ctx, list, items, &found, parent);
    public_endpoint(ctx, list, &found.services);
    found.services
}

/// The `components` list and its items. Without one, a devfile with a `parent` is only
/// warned about (the parent may have components, which Slipway does not resolve).
fn component_list<'a>(
    ctx: &mut Ctx,
    root: &'a Node,
    parent: Option<&Node>,
) -> Option<(&'a Node, &'a [Node])> {
    let Some(list) = root.get("components") else {
        if parent.is_some() {
            ctx.warn(
                "components",
                parent,
                "this devfile has no components of its own and Slipway does not resolve parent devfiles, so the platform has no service to deploy; copy the parent's container components here to deploy it",
            );
        } else {
            ctx.error(
                "components",
                None,
                "components is required: the app needs at least one container component (a service)",
            );
        }
        return None;
    };
    let Some(items) = list.items() else {
        ctx.error(
            "components",
            Some(list),
            format!("must be a list of components, got {}", list.kind()),
        );
        return None;
    };
    Some((list, items))
}

/// One component: its keys, its name, and the rules of its type.
fn component<'a>(ctx: &mut Ctx, comp: &'a Node, path: &str, found: &mut Components<'a>) {
    check_keys(ctx, comp, path, &COMPONENT_KEYS, Severity::Error);
    let mut comp_name = String::new();
    if let Some((raw, node)) = required(ctx, comp, path, "name")
        .and_then(|n| string(ctx, n, &join(path, "name")).map(|s| (s, n)))
    {
        found.names.check(ctx, raw, node, &join(path, "name"));
        comp_name = raw.to_owned();
    }
    let kinds: Vec<&str> = COMPONENT_TYPES
        .iter()
        .copied()
        .filter(|k| comp.get(k).is_some())
        .collect();
    match kinds.as_slice() {
        [] => ctx.error(
            path,
            Some(comp),
            format!(
                "a component needs exactly one of {}; found none",
                COMPONENT_TYPES.join(", ")
            ),
        ),
        [one] => typed_component(ctx, comp, path, one, comp_name, found),
        many => ctx.error(
            path,
            Some(comp),
            format!(
                "a component has exactly one type; this one has {}",
                many.join(" and ")
            ),
        ),
    }
}

/// The rules of a component of type `kind`: containers become services, images are recorded
/// by `imageName`, and the types the platform does not run draw a warning.
fn typed_component<'a>(
    ctx: &mut Ctx,
    comp: &'a Node,
    path: &str,
    kind: &str,
    comp_name: String,
    found: &mut Components<'a>,
) {
    match kind {
        "container" => {
            if let Some(service) = container(ctx, comp, path, comp_name, &mut found.endpoint_names)
            {
                found.services.push(service);
            }
        }
        "image" => {
            if let Some((image_name, dockerfile)) = image(ctx, comp, path) {
                record_image(ctx, comp, path, image_name, dockerfile, &mut found.images);
            }
        }
        "volume" => super::volumes::volume(ctx, comp, path, &comp_name, &mut found.volumes),
        "custom" => ctx.warn(
            join(path, "custom"),
            comp.get("custom"),
            "custom components are tool-specific; the Slipway platform ignores them",
        ),
        other => {
            found
                .manifests
                .push(format!("{other} component {comp_name:?}"));
            ctx.warn(
                join(path, other),
                comp.get(other),
                format!(
                    "the Slipway platform does not deploy {other} components: it runs container components only (on the process or the container runtime), so this manifest is not applied; the devfile stays valid for cluster tools such as odo"
                ),
            );
        }
    }
}

/// Records an image component; an `imageName` built by two components is an error.
fn record_image(
    ctx: &mut Ctx,
    comp: &Node,
    path: &str,
    image_name: String,
    dockerfile: Option<String>,
    images: &mut BTreeMap<String, BuiltImage>,
) {
    if let Some(first) = images.get(&image_name) {
        ctx.error(
            join(path, "image.imageName"),
            comp.get("image"),
            format!(
                "imageName {image_name:?} is already built by {}",
                first.path
            ),
        );
    } else {
        images.insert(
            image_name,
            BuiltImage {
                path: path.to_owned(),
                dockerfile,
                used: false,
            },
        );
    }
}

/// The image a container runs: the Dockerfile of the image component that builds it, else a
/// warning that it must be pullable.
fn link_images(
    ctx: &mut Ctx,
    services: &mut [Service<'_>],
    images: &mut BTreeMap<String, BuiltImage>,
) {
    for service in services {
        let image_node = service
            .node
            .and_then(|n| n.get("container"))
            .and_then(|c| c.get("image"));
        let image_ref = image_node.and_then(Node::as_str).unwrap_or_default();
        match images.get_mut(image_ref) {
            Some(built) => {
                built.used = true;
                service.dockerfile.clone_from(&built.dockerfile);
            }
            None if !image_ref.is_empty() => ctx.warn(
                join(&service.path, "container.image"),
                image_node,
                format!(
                    "{image_ref:?} is not the imageName of any image component, so the platform will not build it; it must be a pullable image reference"
                ),
            ),
            None => {}
        }
    }
}

/// An image no container runs is built for nothing.
fn unused_images(ctx: &mut Ctx, images: &BTreeMap<String, BuiltImage>) {
    for (image_name, built) in images {
        if !built.used {
            ctx.warn(
                join(&built.path, "image.imageName"),
                None,
                format!("image {image_name:?} is built but no container component uses it (container.image: {image_name})"),
            );
        }
    }
}

/// The app needs a service. With none, a devfile that deploys through manifests or its parent
/// is warned about (other tools deploy it); any other is an error.
fn something_to_deploy(
    ctx: &mut Ctx,
    list: &Node,
    items: &[Node],
    found: &Components<'_>,
    parent: Option<&Node>,
) {
    let manifests = &found.manifests;
    if found.services.is_empty() && (!manifests.is_empty() || parent.is_some()) {
        let through = if manifests.is_empty() {
            "its parent devfile, which Slipway does not resolve".to_owned()
        } else {
            manifests.join(", ")
        };
        ctx.warn(
            "components",
            Some(list),
            format!(
                "this devfile deploys only through {through}; the Slipway platform runs container components only, so it has no service to deploy here"
            ),
        );
    } else if found.services.is_empty() && !items.is_empty() {
        ctx.error(
            "components",
            Some(list),
            "the app needs at least one container component (a service)",
        );
    } else if items.is_empty() {
        ctx.error(
            "components",
            Some(list),
            "components is empty: the app needs at least one container component (a service)",
        );
    }
}

/// An app without a public endpoint has no URL: a warning.
fn public_endpoint(ctx: &mut Ctx, list: &Node, services: &[Service<'_>]) {
    let public = services.iter().any(|s| {
        s.node
            .and_then(|n| n.get("container"))
            .and_then(|c| c.get("endpoints"))
            .and_then(Node::items)
            .is_some_and(|eps| {
                eps.iter().any(|e| {
                    e.get("exposure").and_then(Node::as_str).unwrap_or("public") == "public"
                })
            })
    });
    if !services.is_empty() && !public {
        ctx.warn(
            "components",
            Some(list),
            "no service has a public endpoint, so the app will have no URL",
        );
    }
}

/// An image component: its keys, `attributes.imageUri`, `imageName` and Dockerfile. Returns
/// the `imageName` and the Dockerfile path when Slipway can build it.
fn image(ctx: &mut Ctx, comp: &Node, path: &str) -> Option<(String, Option<String>)> {
    let img_path = join(path, "image");
    let img = mapping(ctx, comp.get("image")?, &img_path)?;
    check_keys(
        ctx,
        img,
        &img_path,
        &["imageName", "autoBuild", "dockerfile"],
        Severity::Error,
    );
    if let Some(attrs) = comp.get("attributes") {
        let attrs_path = join(path, "attributes");
        if let Some(attrs) = mapping(ctx, attrs, &attrs_path)
            && let Some(uri) = attrs.get("imageUri")
        {
            string(ctx, uri, &join(&attrs_path, "imageUri"));
        }
    }
    if let Some(flag) = img.get("autoBuild") {
        boolean(ctx, flag, &join(&img_path, "autoBuild"));
    }
    let image_name = required(ctx, img, &img_path, "imageName")
        .and_then(|n| non_empty_string(ctx, n, &join(&img_path, "imageName")))
        .map(str::to_owned);
    let dockerfile_uri = required(ctx, img, &img_path, "dockerfile")
        .and_then(|df| dockerfile(ctx, df, &join(&img_path, "dockerfile")));
    image_name.map(|n| (n, dockerfile_uri))
}

/// `image.dockerfile`: its keys, where the Dockerfile comes from, and its paths. Returns the
/// Dockerfile's path relative to the project when it is one Slipway's builders can read.
fn dockerfile(ctx: &mut Ctx, df: &Node, df_path: &str) -> Option<String> {
    let df = mapping(ctx, df, df_path)?;
    check_keys(ctx, df, df_path, &DOCKERFILE_KEYS, Severity::Error);
    let uri = dockerfile_uri(ctx, df, df_path);
    let context = df
        .get("buildContext")
        .and_then(|n| non_empty_string(ctx, n, &join(df_path, "buildContext")).map(|s| (s, n)));
    if let Some((ctx_text, node)) = context {
        relative_path(ctx, ctx_text, node, &join(df_path, "buildContext"));
    }
    let usable = uri.and_then(|(text, node)| project_dockerfile(ctx, text, node, df_path));
    if let Some(flag) = df.get("rootRequired") {
        boolean(ctx, flag, &join(df_path, "rootRequired"));
    }
    if let Some(args) = df.get("args") {
        string_list(ctx, args, &join(df_path, "args"));
    }
    usable
}

/// A Dockerfile `uri` the builders can read: inside the project, not remote (a warning
/// otherwise). Returns it relative to the project.
fn project_dockerfile(ctx: &mut Ctx, uri: &str, node: &Node, df_path: &str) -> Option<String> {
    if uri.starts_with("http://") || uri.starts_with("https://") {
        ctx.warn(
            join(df_path, "uri"),
            Some(node),
            "a remote Dockerfile is not fetched by Slipway; the container runtime's buildah builder needs a Dockerfile inside the project, so it cannot build this image",
        );
        return None;
    }
    relative_path(ctx, uri, node, &join(df_path, "uri"))
        .then(|| crate::model::project_relative(uri))
}

/// `dockerfile.uri`, required unless the Dockerfile comes from a `git` or `devfileRegistry`
/// source (which Slipway does not fetch: a warning).
fn dockerfile_uri<'a>(ctx: &mut Ctx, df: &'a Node, df_path: &str) -> Option<(&'a str, &'a Node)> {
    let remote_source = ["git", "devfileRegistry"]
        .into_iter()
        .find(|k| df.get(k).is_some());
    let uri = match remote_source {
        Some(source) => {
            ctx.warn(
                join(df_path, source),
                df.get(source),
                format!(
                    "the Dockerfile comes from {source}, which Slipway does not fetch; the container runtime's buildah builder needs a Dockerfile inside the project (dockerfile.uri), so it cannot build this image"
                ),
            );
            df.get("uri")
        }
        None => required(ctx, df, df_path, "uri"),
    }?;
    non_empty_string(ctx, uri, &join(df_path, "uri")).map(|s| (s, uri))
}

/// Slipway builds from the project directory only: Dockerfile and build context are relative,
/// with no `..` segment. Anything else is legitimate for cluster tools, so it is a warning that
/// names the builder that cannot use it. Returns whether the path is usable.
fn relative_path(ctx: &mut Ctx, text: &str, node: &Node, path: &str) -> bool {
    let problem = if text.split(['/', '\\']).any(|seg| seg == "..") {
        "leaves the project (\"..\")"
    } else if text.get(1..2) == Some(":") || !super::commands::inside_project(text) {
        "is not a path inside the project (relative, or under ${PROJECT_SOURCE})"
    } else {
        return true;
    };
    ctx.warn(
        path,
        Some(node),
        format!(
            "{text:?} {problem}: the container runtime's buildah builder reads only files inside the project, so it cannot build this image"
        ),
    );
    false
}

fn boolean(ctx: &mut Ctx, node: &Node, path: &str) {
    if node.as_bool().is_none() {
        ctx.error(
            path,
            Some(node),
            format!("must be true or false, got {}", node.kind()),
        );
    }
}

/// A container component: its keys and fields. Returns it as a service.
fn container<'a>(
    ctx: &mut Ctx,
    comp: &'a Node,
    path: &str,
    name: String,
    endpoint_names: &mut UniqueNames,
) -> Option<Service<'a>> {
    let c_path = join(path, "container");
    let container = mapping(ctx, comp.get("container")?, &c_path)?;
    check_keys(ctx, container, &c_path, &CONTAINER_KEYS, Severity::Error);
    if let Some(image) = required(ctx, container, &c_path, "image") {
        non_empty_string(ctx, image, &join(&c_path, "image"));
    }
    container_fields(ctx, container, &c_path);
    let mut service = Service {
        name,
        path: path.to_owned(),
        node: Some(comp),
        ..Service::default()
    };
    if let Some(endpoints) = container.get("endpoints") {
        service.endpoints =
            endpoint_list(ctx, endpoints, &join(&c_path, "endpoints"), endpoint_names);
    }
    if let Some(attrs) = comp.get("attributes") {
        let a_path = join(path, "attributes");
        if let Some(attrs) = mapping(ctx, attrs, &a_path) {
            service.depends_on = service_attributes(ctx, attrs, &a_path);
        }
    }
    Some(service)
}

/// The container's typed fields: limits and requests, command and args, flags, env.
fn container_fields(ctx: &mut Ctx, container: &Node, c_path: &str) {
    for key in ["memoryLimit", "memoryRequest"] {
        if let Some(node) = container.get(key) {
            quantity(ctx, node, &join(c_path, key), true);
        }
    }
    for key in ["cpuLimit", "cpuRequest"] {
        if let Some(node) = container.get(key) {
            quantity(ctx, node, &join(c_path, key), false);
        }
    }
    for key in ["command", "args"] {
        if let Some(node) = container.get(key) {
            string_list(ctx, node, &join(c_path, key));
        }
    }
    for key in ["mountSources", "dedicatedPod"] {
        if let Some(node) = container.get(key) {
            boolean(ctx, node, &join(c_path, key));
        }
    }
    if let Some(env) = container.get("env") {
        env_list(ctx, env, &join(c_path, "env"));
    }
}

/// A service's Slipway attributes: `secrets` (the vault's path rule) and `healthPath`.
/// Returns its `dependsOn` list, checked later against the other services.
fn service_attributes<'a>(
    ctx: &mut Ctx,
    attrs: &'a Node,
    a_path: &str,
) -> Vec<(String, String, &'a Node)> {
    let depends_on = attrs
        .get("dependsOn")
        .map(|deps| string_list(ctx, deps, &join(a_path, "dependsOn")))
        .unwrap_or_default();
    if let Some(secrets) = attrs.get("secrets") {
        // The vault's own rule, so a path that validates here is one the platform
        // accepts at deploy time.
        for (secret, s_path, node) in string_list(ctx, secrets, &join(a_path, "secrets")) {
            if let Err(rule) = secret_path::check(&secret) {
                ctx.error(
                    s_path,
                    Some(node),
                    format!("{secret:?} is not a valid secret path: {rule}"),
                );
            }
        }
    }
    if let Some(health) = attrs.get("healthPath") {
        let h_path = join(a_path, "healthPath");
        if let Some(text) = non_empty_string(ctx, health, &h_path)
            && !text.starts_with('/')
        {
            ctx.error(
                h_path,
                Some(health),
                format!("{text:?} must be an HTTP path starting with \"/\""),
            );
        }
    }
    depends_on
}

fn quantity(ctx: &mut Ctx, node: &Node, path: &str, memory: bool) {
    let text = match &node.value {
        Value::Str(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) if !memory => f.to_string(),
        _ => {
            ctx.error(
                path,
                Some(node),
                format!("must be a quantity string, got {}", node.kind()),
            );
            return;
        }
    };
    let ok = if memory {
        crate::quantity::memory_bytes(&text).is_some()
    } else {
        crate::quantity::cpu_millis(&text).is_some()
    };
    if !ok {
        let example = if memory {
            "512Mi or 1Gi"
        } else {
            "500m or \"1\""
        };
        ctx.error(
            path,
            Some(node),
            format!("{text:?} is not a valid quantity (for example {example})"),
        );
    }
}

fn env_list(ctx: &mut Ctx, env: &Node, path: &str) {
    let Some(items) = env.items() else {
        ctx.error(
            path,
            Some(env),
            format!(
                "must be a list of {{name, value}} entries, got {}",
                env.kind()
            ),
        );
        return;
    };
    let mut seen: Vec<String> = Vec::new();
    for (i, entry) in items.iter().enumerate() {
        let e_path = format!("{path}[{i}]");
        let Some(entry) = mapping(ctx, entry, &e_path) else {
            continue;
        };
        check_keys(ctx, entry, &e_path, &["name", "value"], Severity::Error);
        if let Some(name) = required(ctx, entry, &e_path, "name")
            .and_then(|n| string(ctx, n, &join(&e_path, "name")).map(|s| (s, n)))
        {
            let (text, node) = name;
            if text.contains("{{") {
                ctx.warn(
                    join(&e_path, "name"),
                    Some(node),
                    format!(
                        "{text:?} uses a devfile variable, which Slipway does not substitute: both runtimes would set the name literally; write the name itself"
                    ),
                );
            }
            let valid = text
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid && !text.contains("{{") {
                ctx.error(
                    join(&e_path, "name"),
                    Some(node),
                    format!(
                        "{text:?} is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)"
                    ),
                );
            } else if seen.iter().any(|s| s == text) {
                ctx.error(
                    join(&e_path, "name"),
                    Some(node),
                    format!("environment variable {text:?} is set twice"),
                );
            }
            seen.push(text.to_owned());
        }
        if let Some(value) = required(ctx, entry, &e_path, "value")
            && value.as_str().is_none()
        {
            let hint = value
                .scalar_text()
                .map(|t| format!("; quote it: \"{t}\""))
                .unwrap_or_default();
            ctx.error(
                join(&e_path, "value"),
                Some(value),
                format!("must be a string, got {}{hint}", value.kind()),
            );
        }
    }
}

/// `endpoints`: each endpoint's keys, name, port and options. Returns each valid port with
/// its path and node.
fn endpoint_list<'a>(
    ctx: &mut Ctx,
    list: &'a Node,
    path: &str,
    names: &mut UniqueNames,
) -> Vec<(u16, String, &'a Node)> {
    let Some(items) = list.items() else {
        ctx.error(
            path,
            Some(list),
            format!("must be a list of endpoints, got {}", list.kind()),
        );
        return Vec::new();
    };
    let mut ports: Vec<(u16, String, &Node)> = Vec::new();
    for (i, ep) in items.iter().enumerate() {
        let e_path = format!("{path}[{i}]");
        let Some(ep) = mapping(ctx, ep, &e_path) else {
            continue;
        };
        check_keys(ctx, ep, &e_path, &ENDPOINT_KEYS, Severity::Error);
        if let Some((name, node)) = required(ctx, ep, &e_path, "name")
            .and_then(|n| string(ctx, n, &join(&e_path, "name")).map(|s| (s, n)))
        {
            names.check(ctx, name, node, &join(&e_path, "name"));
        }
        if let Some(port) = required(ctx, ep, &e_path, "targetPort") {
            target_port(ctx, port, &join(&e_path, "targetPort"), &mut ports);
        }
        endpoint_options(ctx, ep, &e_path);
    }
    ports
}

/// `targetPort` is an integer from 1 to 65535; a port two endpoints of the container share
/// draws a warning. A valid port is added to `ports`.
fn target_port<'a>(
    ctx: &mut Ctx,
    port: &'a Node,
    port_path: &str,
    ports: &mut Vec<(u16, String, &'a Node)>,
) {
    match port.as_int().map(u16::try_from) {
        Some(Ok(p)) if p != 0 => {
            if ports.iter().any(|(q, _, _)| *q == p) {
                ctx.warn(
                    port_path,
                    Some(port),
                    format!("port {p} is already used by another endpoint of this container"),
                );
            }
            ports.push((p, port_path.to_owned(), port));
        }
        Some(_) => ctx.error(
            port_path,
            Some(port),
            format!(
                "must be an integer between 1 and 65535, got {}",
                port.as_int().unwrap_or_default()
            ),
        ),
        None => ctx.error(
            port_path,
            Some(port),
            format!(
                "must be an integer between 1 and 65535, got {} {}",
                port.kind(),
                port.scalar_text()
                    .map(|t| format!("{t:?}"))
                    .unwrap_or_default()
            ),
        ),
    }
}

/// An endpoint's `exposure`, `protocol`, `path` and `secure`.
fn endpoint_options(ctx: &mut Ctx, ep: &Node, e_path: &str) {
    enum_value(ctx, ep, e_path, "exposure", &EXPOSURES);
    enum_value(ctx, ep, e_path, "protocol", &PROTOCOLS);
    if let Some(p) = ep.get("path")
        && let Some(text) = string(ctx, p, &join(e_path, "path"))
        && !text.starts_with('/')
    {
        ctx.error(
            join(e_path, "path"),
            Some(p),
            format!("{text:?} must start with \"/\""),
        );
    }
    if let Some(secure) = ep.get("secure") {
        boolean(ctx, secure, &join(e_path, "secure"));
    }
}

fn enum_value(ctx: &mut Ctx, parent: &Node, path: &str, key: &str, allowed: &[&str]) {
    let Some(node) = parent.get(key) else { return };
    let k_path = join(path, key);
    if let Some(text) = string(ctx, node, &k_path)
        && !allowed.contains(&text)
    {
        ctx.error(
            k_path,
            Some(node),
            format!("{text:?} is not allowed; use one of {}", allowed.join(", ")),
        );
    }
}

/// `dependsOn` must name other existing services and must not form a cycle.
pub(super) fn dependencies(ctx: &mut Ctx, services: &[Service<'_>]) {
    let names: Vec<&str> = services.iter().map(|s| s.name.as_str()).collect();
    for s in services {
        let mut seen: Vec<&str> = Vec::new();
        for (dep, path, node) in &s.depends_on {
            if dep == &s.name {
                ctx.error(
                    path,
                    Some(node),
                    format!("service {:?} cannot depend on itself", s.name),
                );
            } else if !names.contains(&dep.as_str()) {
                ctx.error(
                    path,
                    Some(node),
                    format!("dependsOn names {dep:?}, which is not a service (container component) of this devfile; services: {}", names.join(", ")),
                );
            } else if seen.contains(&dep.as_str()) {
                ctx.warn(path, Some(node), format!("{dep:?} is listed twice"));
            }
            seen.push(dep);
        }
    }
    if let Err(cycle) = crate::graph::deploy_order(services.iter().map(|s| {
        (
            s.name.as_str(),
            s.depends_on
                .iter()
                .map(|(d, _, _)| d.as_str())
                .collect::<Vec<_>>(),
        )
    })) {
        let first = services.iter().find(|s| s.name == cycle[0]);
        ctx.error(
            first
                .map(|s| join(&s.path, "attributes.dependsOn"))
                .unwrap_or_default(),
            first.and_then(|s| s.depends_on.first()).map(|(_, _, n)| *n),
            format!("dependsOn forms a cycle: {}", cycle.join(" -> ")),
        );
    }
}
