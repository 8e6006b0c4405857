//! The tool table: every tool this build offers, listed once with its description, its
//! argument schema, its result schema and its runner; the dispatcher that runs a tool by name
//! on JSON arguments; and [`render`], the one place where a tool's outcome becomes the spec's
//! JSON (`"success": true` added to the typed result, or the failure shape). Tools return
//! typed results and know nothing of `success`.

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use slipway_platform_client::ToolError;
use slipway_platform_client::{self as p, Client, Endpoint, OneCall};

/// The key every rendered outcome carries: `true` on a result, `false` on a failure (which
/// [`ToolError::to_json`] writes).
const SUCCESS: &str = "success";

/// One tool: what a transport needs to offer it, and how to run it.
#[derive(Debug, Clone, Copy)]
pub struct ToolInfo {
    /// The spec's tool name.
    pub name: &'static str,
    /// What it does and when to use it, for people and models.
    pub description: &'static str,
    /// Whether it talks to a platform (`false`: templates, scaffolding and devfiles, which
    /// work offline).
    pub needs_platform: bool,
    /// Its schemas and its runner.
    imp: Imp,
}

/// A tool's argument schema, result schema and runner. The macros `platform!`, `one_call!`
/// and `local!` make all three from the tool's one Rust function, so neither schema can describe another
/// type than the one the tool parses or returns.
#[derive(Debug, Clone, Copy)]
struct Imp {
    /// The JSON Schema of its arguments.
    input: fn() -> Value,
    /// The JSON Schema of its typed result (without `success`).
    output: fn() -> Value,
    /// Runs it on arguments already known to be a JSON object: its typed result as a JSON
    /// object (without `success`), or its failure.
    run: fn(Option<&Endpoint>, Value) -> Result<Value, ToolError>,
    /// For a tool that is one API request: that request, made of arguments known to be a
    /// JSON object (see [`plan`]).
    plan: Option<fn(Value) -> Result<Planned, ToolError>>,
}

/// A platform tool's Rust function.
type PlatformFn<A, R> = fn(&Client, &A) -> Result<R, ToolError>;

/// A platform tool's Rust function when the tool is one API request.
type OneCallFn<A, R> = fn(&A) -> Result<OneCall<R>, ToolError>;

/// A Rust function of a tool that needs no platform.
type LocalFn<A, R> = fn(&A) -> Result<R, ToolError>;

/// The [`Imp`] of platform tool `$tool`.
macro_rules! platform {
    ($tool:path) => {
        Imp {
            input: || platform_input($tool),
            output: || platform_output($tool),
            run: |endpoint, args| platform_tool(endpoint, args, $tool),
            plan: None,
        }
    };
}

/// The [`Imp`] of platform tool `$tool`, which is one API request.
macro_rules! one_call {
    ($tool:path) => {
        Imp {
            input: || one_call_input($tool),
            output: || one_call_output($tool),
            run: |endpoint, args| one_call_tool(endpoint, args, $tool),
            plan: Some(|args| plan_one_call(args, $tool)),
        }
    };
}

/// The [`Imp`] of `$tool`, which needs no platform.
macro_rules! local {
    ($tool:path) => {
        Imp {
            input: || local_input($tool),
            output: || local_output($tool),
            run: |_, args| local(args, $tool),
            plan: None,
        }
    };
}

impl ToolInfo {
    /// The tool called `name`, if this build has one.
    pub fn find(name: &str) -> Option<ToolInfo> {
        all_tools().find(|t| t.name == name)
    }

    /// The JSON Schema of the tool's arguments, generated from the same types the tool
    /// parses, so what a client is told and what the tool accepts cannot drift apart.
    pub fn input_schema(&self) -> Value {
        (self.imp.input)()
    }

    /// The JSON Schema of the tool's result as [`render`] shows it: the schema of the typed
    /// result the tool returns (so a field cannot be described and not returned, or the other
    /// way round), with the `success` key that rendering adds. It is what an MCP server
    /// publishes as a tool's `outputSchema`; a failure is the separate shape of
    /// [`ToolError::to_json`], which MCP marks `isError` instead.
    pub fn output_schema(&self) -> Value {
        let mut schema = (self.imp.output)();
        if let Some(object) = schema.as_object_mut() {
            if let Value::Object(properties) = object
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()))
            {
                properties.insert(
                    SUCCESS.into(),
                    json!({
                        "description": "Always true on a result; a failure is {success: false, error, retryable} (plus field when one argument is at fault).",
                        "type": "boolean",
                        "const": true,
                    }),
                );
            }
            if let Value::Array(required) = object
                .entry("required")
                .or_insert_with(|| Value::Array(Vec::new()))
            {
                required.push(json!(SUCCESS));
            }
        }
        schema
    }
}

/// The tools of this build, in the spec's order: the one list every transport offers and
/// [`call`] dispatches on.
pub const TOOLS: [ToolInfo; 26] = [
    ToolInfo {
        name: "get_available_templates",
        description: "List the app templates (name, description, language, default_port). Always call this first.",
        needs_platform: false,
        imp: Imp {
            input: no_arguments,
            output: result_schema::<crate::templates::TemplateList>,
            // It takes no arguments and, as ever, ignores any it is given.
            run: |_, _| {
                to_object(&crate::templates::TemplateList {
                    templates: crate::templates::get_available_templates(),
                })
                .map(Value::Object)
            },
            plan: None,
        },
    },
    ToolInfo {
        name: "scaffold_app",
        description: "Create a new project <output_directory>/<app_name> from a template: source, Dockerfile, devfile.yaml, README.md. Never overwrites existing files unless overwrite is true.",
        needs_platform: false,
        imp: local!(crate::scaffold::scaffold_app),
    },
    ToolInfo {
        name: "validate_devfile",
        description: "Check a devfile.yaml (devfile_content or devfile_path): YAML syntax, required fields, components, endpoints, platform fields, app name, dependsOn, managedInfra, port mismatches. Returns {valid, errors, warnings}.",
        needs_platform: false,
        imp: local!(crate::devfile_tools::validate_devfile),
    },
    ToolInfo {
        name: "generate_devfile",
        description: "Generate a single-service devfile.yaml; with output_path, write it (never over an existing file).",
        needs_platform: false,
        imp: local!(crate::devfile_tools::generate_devfile),
    },
    ToolInfo {
        name: "register_app",
        description: "Reserve an app name on the platform, create its service principal and access control; with project_path, write the .app file holding app_id. Required before build_app when the app uses secrets.",
        needs_platform: true,
        imp: platform!(p::register_app),
    },
    ToolInfo {
        name: "list_apps",
        description: "List apps (name, status, url, timestamps), page_size (default 20) at a time; pass next_page_token for the next page.",
        needs_platform: true,
        imp: one_call!(p::list_apps),
    },
    ToolInfo {
        name: "get_app",
        description: "An app's name, description, status, URL, devfile, enabled state and timestamps.",
        needs_platform: true,
        imp: one_call!(p::get_app),
    },
    ToolInfo {
        name: "get_app_status",
        description: "An app's status (RUNNING, FAILED, deploying, suspended, registered) and app_url. Poll only when the user asks, every 10-15 s, until RUNNING or FAILED; on FAILED call get_app_logs.",
        needs_platform: true,
        imp: one_call!(p::get_app_status),
    },
    ToolInfo {
        name: "get_app_logs",
        description: "Build and runtime log entries with presigned URLs; latest_only (default true), service_name to filter.",
        needs_platform: true,
        imp: one_call!(p::get_app_logs),
    },
    ToolInfo {
        name: "enable_app",
        description: "Resume a suspended app; then poll get_app_status until RUNNING.",
        needs_platform: true,
        imp: platform!(p::enable_app),
    },
    ToolInfo {
        name: "disable_app",
        description: "Suspend a running app without deleting it.",
        needs_platform: true,
        imp: platform!(p::disable_app),
    },
    ToolInfo {
        name: "delete_app",
        description: "Delete an app permanently; the caller must then delete the project's .app file.",
        needs_platform: true,
        imp: platform!(p::delete_app),
    },
    ToolInfo {
        name: "build_app",
        description: "Build and deploy the app in project_path (needs devfile.yaml and its Dockerfiles; the devfile is validated first and nothing is uploaded when it is invalid). Uses .app when present, else creates the app from the devfile. remote (default) builds on the platform; local builds here with BUILDER_HOST and uploads the image. Writes imageUri into devfile.yaml. Afterwards print app_id and every service URL, then ask before polling get_app_status.",
        needs_platform: true,
        imp: platform!(p::build_app),
    },
    ToolInfo {
        name: "get_build_scan_report",
        description: "The vulnerability scan of a build's image (build_id from build_app): SBOM and advisories found; error when the platform has no advisory database.",
        needs_platform: true,
        imp: one_call!(p::get_build_scan_report),
    },
    ToolInfo {
        name: "cancel_build",
        description: "Cancel a queued or in-progress image build job; a running deployment is not stopped.",
        needs_platform: true,
        imp: platform!(p::cancel_build),
    },
    ToolInfo {
        name: "create_secret",
        description: "Store a new secret (version 1) at secret_path in scope secret_type: user (private to you), app (needs app_id; register_app first), shared (readable by every account member). data is a JSON-encoded object of key-value pairs; metadata optional. App secrets become environment variables of the app's services at deploy time. Fails if the path exists (use update_secret). Omit data at a tool server and the user types the value on a Slipway page instead (never through you).",
        needs_platform: true,
        imp: platform!(p::create_secret),
    },
    ToolInfo {
        name: "get_secret",
        description: "Read a secret's data and metadata (the latest version, or version), with its version numbers and timestamps. App secrets need the editor or owner role.",
        needs_platform: true,
        imp: one_call!(p::get_secret),
    },
    ToolInfo {
        name: "list_secrets",
        description: "List secret paths in a scope (no values), filtered by prefix; pass next_token for the next page. App viewers may list app secret paths.",
        needs_platform: true,
        imp: one_call!(p::list_secrets),
    },
    ToolInfo {
        name: "update_secret",
        description: "Replace a secret's data (and metadata when given) as a new version; earlier versions are kept and stay readable with get_secret version. Omit data at a tool server and the user types the value on a Slipway page instead (never through you).",
        needs_platform: true,
        imp: platform!(p::update_secret),
    },
    ToolInfo {
        name: "delete_secret",
        description: "Delete a secret and every version permanently. Confirm with the user first.",
        needs_platform: true,
        imp: platform!(p::delete_secret),
    },
    ToolInfo {
        name: "share_secret",
        description: "Copy a user, app or shared secret into the shared namespace at to_shared_path (copy_metadata default true). The original is unchanged; an existing destination is an error, never overwritten.",
        needs_platform: true,
        imp: platform!(p::share_secret),
    },
    ToolInfo {
        name: "list_grantable_roles",
        description: "The roles you may grant on an app: an owner grants owner, editor, viewer; an editor editor and viewer; a viewer none. Use only when the user asks about access.",
        needs_platform: true,
        imp: one_call!(p::list_grantable_roles),
    },
    ToolInfo {
        name: "list_app_permissions",
        description: "Who has access to an app: users with user_id, email, name, role. Use only when the user asks about access.",
        needs_platform: true,
        imp: platform!(p::list_app_permissions),
    },
    ToolInfo {
        name: "grant_app_role",
        description: "Give an account member (user_id: UUID or e-mail) the role owner, editor or viewer on an app, replacing their earlier role. Only roles you may grant (list_grantable_roles). Use only when the user asks.",
        needs_platform: true,
        imp: platform!(p::grant_app_role),
    },
    ToolInfo {
        name: "revoke_app_role",
        description: "Take a role away from a user (UUID or e-mail) on an app. The app's last owner can never be removed. Use only when the user asks.",
        needs_platform: true,
        imp: platform!(p::revoke_app_role),
    },
    ToolInfo {
        name: "list_account_users",
        description: "Members of your account (id, email, name): who can be given a role on an app.",
        needs_platform: true,
        imp: one_call!(p::list_account_users),
    },
];

/// The platform's own operations beyond the spec's 26, offered by every door as the spec's
/// are (MCP, `slipway call`): an app's custom domains and its git source. A table of their
/// own so [`TOOLS`] stays exactly the spec's.
pub const PLATFORM_TOOLS: [ToolInfo; 8] = [
    ToolInfo {
        name: "list_domains",
        description: "An app's custom domains, each with its certificate's state: pending (and why, such as DNS not pointing at the platform yet), issued (issuer, expiry), renewing, failed (with the CA's message).",
        needs_platform: true,
        imp: platform!(p::domains::list_domains_tool),
    },
    ToolInfo {
        name: "add_domain",
        description: "Serve an app on a domain of its own (editors and owners): name such as orders.example.org, optionally service, or redirect_to another of the app's domains (www. to the apex). The certificate is issued by ACME once the name's DNS points at the platform: tell the user to add the A/AAAA record, then check list_domains. Refused with the rule for a wildcard, an IP address, a name under the platform's own domains or one another app has.",
        needs_platform: true,
        imp: platform!(p::domains::add_domain_tool),
    },
    ToolInfo {
        name: "remove_domain",
        description: "Stop serving an app on a domain; its certificate and key are deleted. Confirm with the user first.",
        needs_platform: true,
        imp: platform!(p::domains::remove_domain_tool),
    },
    ToolInfo {
        name: "get_git_source",
        description: "The repository an app deploys from: address, branch, directory, the commit last built (sha, author, subject), why the last attempt failed, the webhook URL to add to the repository (and its secret, for the app's owners), the deploy key to add for an SSH address.",
        needs_platform: true,
        imp: platform!(p::git::get_git_tool),
    },
    ToolInfo {
        name: "connect_git_source",
        description: "Deploy an app from a branch of its repository (editors and owners): repo_url (a public https address, or an ssh address read with a deploy key the platform makes: show the user the returned deploy_key to add to the repository, read-only), branch (default main), path (the devfile's directory). The branch's tip deploys at once; tell the user to add the returned webhook (webhook_url, webhook_secret) for pushes. Never ask the user for a token: for a private https repository they run `slipway git connect --token-env VAR` themselves.",
        needs_platform: true,
        imp: platform!(p::git::connect_git_tool),
    },
    ToolInfo {
        name: "deploy_git_source",
        description: "Fetch the tip of an app's git branch now and deploy it (editors and owners); get_app_status and get_git_source show how it went.",
        needs_platform: true,
        imp: platform!(p::git::deploy_git_tool),
    },
    ToolInfo {
        name: "disconnect_git_source",
        description: "Stop deploying an app from its repository (editors and owners); the running deployment keeps serving, and its pull requests' preview apps are deleted with their data. Confirm with the user first.",
        needs_platform: true,
        imp: platform!(p::git::disconnect_git_tool),
    },
    ToolInfo {
        name: "list_previews",
        description: "The preview apps of an app's pull requests (<app>-pr-<n>): each one's number, app, status, URL, the commit built and why it failed.",
        needs_platform: true,
        imp: platform!(p::git::list_previews_tool),
    },
];

/// Every tool of this build: the spec's 26, then the platform's own.
pub fn all_tools() -> impl Iterator<Item = ToolInfo> {
    TOOLS.into_iter().chain(PLATFORM_TOOLS)
}

/// The JSON Schema of tool `name`'s arguments (see [`ToolInfo::input_schema`]).
pub fn input_schema(name: &str) -> Option<Value> {
    ToolInfo::find(name).map(|t| t.input_schema())
}

/// The JSON Schema of tool `name`'s result (see [`ToolInfo::output_schema`]).
pub fn output_schema(name: &str) -> Option<Value> {
    ToolInfo::find(name).map(|t| t.output_schema())
}

/// The schema of arguments of type `T`, as serde reads them.
fn schema<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or_else(|_| no_arguments())
}

/// The schema of a result of type `T`, as serde writes it: an `Option` field that is skipped
/// when empty is not required, one that is written as null is required and nullable, and the
/// names are the written ones.
fn result_schema<T: JsonSchema>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    serde_json::to_value(schema).unwrap_or_else(|_| json!({"type": "object"}))
}

fn platform_input<A: JsonSchema, R>(_: PlatformFn<A, R>) -> Value {
    schema::<A>()
}

fn platform_output<A, R: JsonSchema>(_: PlatformFn<A, R>) -> Value {
    result_schema::<R>()
}

fn one_call_input<A: JsonSchema, R>(_: OneCallFn<A, R>) -> Value {
    schema::<A>()
}

fn one_call_output<A, R: JsonSchema>(_: OneCallFn<A, R>) -> Value {
    result_schema::<R>()
}

fn local_input<A: JsonSchema, R>(_: LocalFn<A, R>) -> Value {
    schema::<A>()
}

fn local_output<A, R: JsonSchema>(_: LocalFn<A, R>) -> Value {
    result_schema::<R>()
}

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

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

/// Renders a tool's outcome as the spec's JSON: the typed result with `"success": true`, or
/// the failure shape of [`ToolError::to_json`]. Every transport (the dispatcher, and the CLI
/// and desktop commands that show a typed result as JSON) renders here, so `success` is added
/// in one place and nothing else writes or reads it.
pub fn render<T: Serialize>(outcome: &Result<T, ToolError>) -> Value {
    let result = match outcome {
        Ok(result) => result,
        Err(e) => return e.to_json(),
    };
    match to_object(result) {
        Ok(mut object) => {
            object.insert(SUCCESS.into(), Value::Bool(true));
            Value::Object(object)
        }
        Err(e) => e.to_json(),
    }
}

/// A typed result as a JSON object; a result that is not one is a fault in Slipway.
fn to_object<T: Serialize>(result: &T) -> Result<Map<String, Value>, ToolError> {
    match serde_json::to_value(result) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(ToolError::Internal(format!(
            "a tool result must be a JSON object, not {}",
            slipway_server::json::kind(&other)
        ))),
        Err(e) => Err(ToolError::Internal(format!(
            "the result could not be written as JSON: {e}"
        ))),
    }
}

/// Runs tool `name` on `args`, finding the platform from the environment (see
/// [`Endpoint::from_env`]), and renders the outcome ([`render`]): tool failures (bad argument
/// values included) come back as the spec's `{success: false, error, retryable}` object, not
/// as `Err`.
pub fn call(name: &str, args: Value) -> Result<Value, CallError> {
    call_with(None, name, args)
}

/// [`call`] with an explicit platform endpoint (tests, embedded platforms).
pub fn call_with(endpoint: Option<&Endpoint>, name: &str, args: Value) -> Result<Value, CallError> {
    call_outcome_with(endpoint, name, args).map(|outcome| render(&outcome))
}

/// Runs tool `name` on `args` like [`call`], but gives the outcome unrendered: `Ok` with the
/// typed result as a JSON object (without `success`) or `Err` with the failure, for a
/// transport that treats the two differently (MCP marks failures `isError`, the CLI exits
/// non-zero) without reading either back out of JSON.
pub fn call_outcome(name: &str, args: Value) -> Result<Result<Value, ToolError>, CallError> {
    call_outcome_with(None, name, args)
}

/// [`call_outcome`] with an explicit platform endpoint.
pub fn call_outcome_with(
    endpoint: Option<&Endpoint>,
    name: &str,
    args: Value,
) -> Result<Result<Value, ToolError>, CallError> {
    let args = match args {
        Value::Object(_) => args,
        Value::Null => json!({}),
        other => return Err(CallError::NotAnObject(slipway_server::json::kind(&other))),
    };
    let Some(tool) = ToolInfo::find(name) else {
        let names: Vec<&str> = all_tools().map(|t| t.name).collect();
        return Err(CallError::UnknownTool(name.to_owned(), names.join(", ")));
    };
    Ok((tool.imp.run)(endpoint, args))
}

/// `build_app` with `endpoint` (or the call's environment's), telling `progress` each long
/// step (packing, uploading, building) as it starts: what an MCP client shows while it waits.
pub fn build_app_reporting(
    endpoint: Option<&Endpoint>,
    args: Value,
    progress: &dyn Fn(&str),
) -> Result<Value, ToolError> {
    let client = with_client(endpoint, &args);
    let parsed: p::BuildAppArgs = parse(args)?;
    let result = p::build_app_with_progress(&client?, &parsed, progress)
        .map_err(only_own_field::<p::BuildAppArgs>)?;
    to_object(&result).map(Value::Object)
}

/// A client for the call's `environment` (explicit endpoint first, else the process environment).
fn with_client(endpoint: Option<&Endpoint>, args: &Value) -> Result<Client, ToolError> {
    let endpoint = match endpoint {
        Some(e) => e.clone(),
        None => Endpoint::from_env(args.get("environment").and_then(Value::as_str))?,
    };
    Client::new(endpoint)
}

/// Parses the arguments first (so argument errors never wait for the network), then runs
/// `tool` with a client for the call's environment.
fn platform_tool<A: DeserializeOwned + JsonSchema, R: Serialize>(
    endpoint: Option<&Endpoint>,
    args: Value,
    tool: PlatformFn<A, R>,
) -> Result<Value, ToolError> {
    let client = with_client(endpoint, &args);
    let parsed: A = parse(args)?;
    let result = tool(&client?, &parsed).map_err(only_own_field::<A>)?;
    to_object(&result).map(Value::Object)
}

/// Parses the arguments, makes the tool's request (as [`plan`] does), then sends it with a
/// client for the call's environment.
fn one_call_tool<A: DeserializeOwned + JsonSchema, R: Serialize + 'static>(
    endpoint: Option<&Endpoint>,
    args: Value,
    tool: OneCallFn<A, R>,
) -> Result<Value, ToolError> {
    let client = with_client(endpoint, &args);
    plan_one_call(args, tool)?.run(&client?)
}

/// A call of a tool that is one API request, made and not yet sent.
#[derive(Debug)]
pub struct Planned {
    call: OneCall<Map<String, Value>>,
    /// What keeps a platform error's `field` only when it is the tool's argument.
    own_field: fn(ToolError) -> ToolError,
}

impl Planned {
    /// Sends it with `client` (blocking, with its retries).
    fn run(self, client: &Client) -> Result<Value, ToolError> {
        client
            .run(self.call)
            .map(Value::Object)
            .map_err(self.own_field)
    }

    /// Sends it through `endpoint`'s in-process transport, awaited, where a blocking thread
    /// for the call would cost more than the request: the outcome [`call_outcome_with`] gives.
    pub async fn send_in_process(self, endpoint: &Endpoint) -> Result<Value, ToolError> {
        self.call
            .send_in_process(endpoint)
            .await
            .map(Value::Object)
            .map_err(self.own_field)
    }
}

/// The call of `name` on `args` as the one API request it is, when the tool is one (`None`:
/// run it with [`call_outcome_with`], on a thread that may block). An argument error is the
/// outcome, as [`call_outcome_with`] gives it.
pub fn plan(name: &str, args: &Value) -> Option<Result<Planned, ToolError>> {
    let plan = ToolInfo::find(name)?.imp.plan?;
    let args = match args {
        Value::Object(_) => args.clone(),
        Value::Null => json!({}),
        _ => return None,
    };
    Some(plan(args))
}

fn plan_one_call<A: DeserializeOwned + JsonSchema, R: Serialize + 'static>(
    args: Value,
    tool: OneCallFn<A, R>,
) -> Result<Planned, ToolError> {
    let parsed: A = parse(args)?;
    let call = tool(&parsed).map_err(only_own_field::<A>)?;
    Ok(Planned {
        call: call.and_then(|result| to_object(&result)),
        own_field: only_own_field::<A>,
    })
}

/// Keeps an error's `field` only when it is one of the tool's arguments: the platform names
/// its own request fields, which are usually, not always, the tool's.
fn only_own_field<T: JsonSchema>(mut e: ToolError) -> ToolError {
    if let ToolError::InvalidArgument { field, .. } | ToolError::Conflict { field, .. } = &mut e
        && let Some(name) = field.as_deref()
        && schema::<T>()["properties"].get(name).is_none()
    {
        *field = None;
    }
    e
}

/// Parses then runs a tool that needs no platform.
fn local<A: DeserializeOwned, R: Serialize>(
    args: Value,
    tool: LocalFn<A, R>,
) -> Result<Value, ToolError> {
    let result = tool(&parse(args)?)?;
    to_object(&result).map(Value::Object)
}

/// Deserialises a tool's arguments; the error names the argument when serde's error is about
/// one (a wrong type or value, a missing or unknown argument).
fn parse<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let field = match e.path().iter().next() {
            Some(serde_path_to_error::Segment::Map { key }) => Some(key.clone()),
            _ => quoted_argument(&e.inner().to_string()),
        };
        ToolError::InvalidArgument {
            message: format!("invalid arguments: {}", e.inner()),
            field,
        }
    })
}

/// The argument serde's "missing field `x`" / "unknown field `x`, expected …" names.
fn quoted_argument(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("missing field `")
        .or_else(|| message.strip_prefix("unknown field `"))?;
    rest.split_once('`').map(|(name, _)| name.to_owned())
}

#[cfg(test)]
#[allow(
    clippy::too_many_lines,
    reason = "a test reads as one scenario; the 100-line limit is for production code"
)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_with_the_spec_argument_names() {
        for tool in TOOLS {
            let schema =
                input_schema(tool.name).unwrap_or_else(|| panic!("{} has no schema", tool.name));
            assert_eq!(schema["type"], "object", "{}", tool.name);
        }
        let build = input_schema("build_app").unwrap();
        let mut props: Vec<&String> = build["properties"].as_object().unwrap().keys().collect();
        props.sort();
        assert_eq!(
            props,
            [
                "architecture",
                "build_mode",
                "environment",
                "project_path",
                "service_name",
                "verbose"
            ]
        );
        assert_eq!(build["required"], json!(["project_path"]));
    }

    #[test]
    fn every_tool_has_an_object_output_schema_that_requires_success() {
        for tool in TOOLS {
            let schema = output_schema(tool.name)
                .unwrap_or_else(|| panic!("{} has no output schema", tool.name));
            assert_eq!(schema["type"], "object", "{}: {schema}", tool.name);
            assert_eq!(
                schema["properties"][SUCCESS]["const"], true,
                "{}: {schema}",
                tool.name
            );
            let required = schema["required"].as_array().unwrap();
            assert!(
                required.contains(&json!(SUCCESS)),
                "{}: {schema}",
                tool.name
            );
            // A result schema names the fields as written: the app id is `app_id`, never
            // the platform's `id`.
            if ["register_app", "get_app"].contains(&tool.name) {
                assert!(schema["properties"].get("app_id").is_some(), "{schema}");
                assert!(schema["properties"].get("id").is_none(), "{schema}");
            }
        }
        // A key skipped when empty is not required; one written as null is required.
        let generated = output_schema("generate_devfile").unwrap();
        let required = generated["required"].as_array().unwrap();
        assert!(required.contains(&json!("content")), "{generated}");
        assert!(!required.contains(&json!("output_path")), "{generated}");
        let status = output_schema("get_app_status").unwrap();
        assert!(
            status["required"]
                .as_array()
                .unwrap()
                .contains(&json!("app_url")),
            "{status}"
        );
    }

    #[test]
    fn an_offline_result_has_only_keys_its_output_schema_names() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("get_available_templates", json!({})),
            (
                "scaffold_app",
                json!({"app_name": "shop", "app_type": "python-api", "output_directory": dir.path()}),
            ),
            (
                "validate_devfile",
                json!({"devfile_content": "schemaVersion: 2.2.0\nmetadata: {}\n"}),
            ),
            (
                "generate_devfile",
                json!({"app_name": "ok", "display_name": "Ok", "description": ""}),
            ),
        ];
        for (tool, args) in cases {
            let out = call(tool, args).unwrap();
            assert_eq!(out[SUCCESS], true, "{tool}: {out}");
            let schema = output_schema(tool).unwrap();
            for key in out.as_object().unwrap().keys() {
                assert!(
                    schema["properties"].get(key).is_some(),
                    "{tool}: {key} is not in {schema}"
                );
            }
            for key in schema["required"].as_array().unwrap() {
                assert!(out.get(key.as_str().unwrap()).is_some(), "{tool}: {key}");
            }
        }
    }

    #[test]
    fn rendering_adds_success_to_a_result_and_gives_a_failure_its_shape() {
        let ok: Result<crate::GenerateDevfileResult, ToolError> =
            Ok(crate::GenerateDevfileResult {
                content: "c".into(),
                output_path: None,
            });
        assert_eq!(render(&ok), json!({"success": true, "content": "c"}));
        let failed: Result<crate::GenerateDevfileResult, ToolError> =
            Err(ToolError::invalid("port", "must be between 1 and 65535"));
        assert_eq!(
            render(&failed),
            ToolError::invalid("port", "must be between 1 and 65535").to_json()
        );
        let not_an_object: Result<Vec<u8>, ToolError> = Ok(vec![1]);
        assert_eq!(render(&not_an_object)[SUCCESS], false);
        // The unrendered outcome says which it is; nothing reads `success` to know.
        assert!(
            call_outcome("validate_devfile", json!({}))
                .unwrap()
                .is_err()
        );
        let listed = call_outcome("get_available_templates", json!({}))
            .unwrap()
            .unwrap();
        assert!(listed.get(SUCCESS).is_none(), "{listed}");
    }

    #[test]
    fn the_table_lists_each_tool_once_and_only_offline_tools_need_no_platform() {
        let mut names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TOOLS.len());
        let offline: Vec<&str> = TOOLS
            .iter()
            .filter(|t| !t.needs_platform)
            .map(|t| t.name)
            .collect();
        assert_eq!(
            offline,
            [
                "get_available_templates",
                "scaffold_app",
                "validate_devfile",
                "generate_devfile"
            ]
        );
        assert!(matches!(
            call("no_such_tool", json!({})),
            Err(CallError::UnknownTool(..))
        ));
    }

    /// Calls that fail before any request: a platform nobody listens on.
    fn fail(tool: &str, args: Value) -> Value {
        let nowhere = Endpoint::new("http://127.0.0.1:9", "t");
        let out = call_with(Some(&nowhere), tool, args.clone()).unwrap();
        assert_eq!(out["success"], false, "{tool} {args}: {out}");
        assert!(
            !out["error"].as_str().unwrap().contains("did not answer"),
            "{out}"
        );
        out
    }

    #[test]
    fn argument_failures_name_the_field() {
        let uuid = "0b6f3f38-4f8e-4c57-9f0e-3a1f1d9a2b7c";
        let cases = [
            // serde: a wrong type, a wrong enum value, a missing and an unknown argument.
            (
                "scaffold_app",
                json!({"app_name": 3, "app_type": "python-api", "output_directory": "/tmp"}),
                "app_name",
            ),
            (
                "create_secret",
                json!({"secret_type": "team", "secret_path": "a", "data": "{}"}),
                "secret_type",
            ),
            (
                "grant_app_role",
                json!({"app_id": uuid, "role": "admin", "user_id": "a@b.c"}),
                "role",
            ),
            ("get_app", json!({}), "app_id"),
            (
                "get_app",
                json!({"app_id": uuid, "colour": "red"}),
                "colour",
            ),
            ("list_apps", json!({"page_size": "ten"}), "page_size"),
            (
                "scaffold_app",
                json!({"app_name": "x", "app_type": "python-api", "output_directory": "/tmp", "permissions": ["a", 1]}),
                "permissions",
            ),
            // The tools' own checks.
            (
                "scaffold_app",
                json!({"app_name": "Bad_Name", "app_type": "python-api", "output_directory": "/tmp"}),
                "app_name",
            ),
            (
                "scaffold_app",
                json!({"app_name": "ok", "app_type": "cobol", "output_directory": "/tmp"}),
                "app_type",
            ),
            (
                "scaffold_app",
                json!({"app_name": "ok", "app_type": "python-api", "output_directory": "/tmp", "permissions": ["a", " "]}),
                "permissions",
            ),
            (
                "generate_devfile",
                json!({"app_name": "ok", "display_name": "Ok", "description": "", "port": 0}),
                "port",
            ),
            (
                "generate_devfile",
                json!({"app_name": "ok", "display_name": "Ok", "description": "", "build_context": "../x"}),
                "build_context",
            ),
            (
                "register_app",
                json!({"name": "-bad", "display_name": "Bad"}),
                "name",
            ),
            ("get_app_status", json!({"app_id": "not-a-uuid"}), "app_id"),
            ("cancel_build", json!({"build_id": "7"}), "build_id"),
            (
                "create_secret",
                json!({"secret_type": "user", "secret_path": "a/../b", "data": "{}"}),
                "secret_path",
            ),
            (
                "create_secret",
                json!({"secret_type": "app", "secret_path": "a", "data": "{}"}),
                "app_id",
            ),
            (
                "create_secret",
                json!({"secret_type": "user", "secret_path": "a", "data": "[1]"}),
                "data",
            ),
            (
                "list_secrets",
                json!({"secret_type": "user", "prefix": "/x"}),
                "prefix",
            ),
            (
                "share_secret",
                json!({"from_secret_type": "user", "from_secret_path": "a", "to_shared_path": "/b"}),
                "to_shared_path",
            ),
            (
                "revoke_app_role",
                json!({"app_id": uuid, "role": "viewer", "user_id": " "}),
                "user_id",
            ),
            (
                "build_app",
                json!({"project_path": "/nonexistent/slipway"}),
                "project_path",
            ),
        ];
        for (tool, args, field) in cases {
            let out = fail(tool, args.clone());
            assert_eq!(out["field"], field, "{tool} {args}: {out}");
            assert_eq!(out["retryable"], false, "{out}");
        }
    }

    #[test]
    fn failures_without_one_argument_at_fault_have_no_field() {
        let out = fail("validate_devfile", json!({}));
        assert_eq!(
            out,
            json!({"success": false, "error": "devfile_content or devfile_path is required", "retryable": false})
        );
    }

    #[test]
    fn a_platform_field_is_kept_only_when_it_is_an_argument_of_the_tool() {
        let own = ToolError::invalid("project_path", "x");
        assert_eq!(
            only_own_field::<p::BuildAppArgs>(own).field(),
            Some("project_path")
        );
        let platform_side = ToolError::invalid("devfile", "x");
        let kept = only_own_field::<p::BuildAppArgs>(platform_side);
        assert_eq!(kept.field(), None);
        assert_eq!(kept.to_string(), "devfile: x");
    }
}
