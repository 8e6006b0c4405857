//! The MCP stdio tool server: every toolkit tool, described with its argument schema, and the
//! spec's workflow as the server's instructions. Logs go to stderr; stdout is the protocol.

use std::sync::Arc;

mod confirm;
mod context;
pub mod remote;
mod secret_value;
pub mod tools;

pub use slipway_platform_client::{Endpoint, Sending, Transport};
pub use slipway_toolkit::Toolset;
pub use tools::{Door, Offer, Withheld};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use slipway_platform_client::{Client, ToolError};

/// The workflow the assistant is asked to follow (the spec's recommended order).
pub const INSTRUCTIONS: &str = include_str!("instructions.md");

/// What the platform's server adds to them: what it cannot do, and where that is done.
pub const REMOTE_INSTRUCTIONS: &str = include_str!("remote_instructions.md");

/// Why the server stopped.
#[derive(Debug, thiserror::Error)]
pub enum McpServerError {
    /// The stdio transport failed or the client broke the protocol.
    #[error("MCP server: {0}")]
    Transport(String),
}

/// The tool server. On the caller's machine ([`Door::Local`]) each call goes to the toolkit's
/// runner, which finds the platform (or the fallback the CLI gives, an embedded one); on the
/// platform ([`Door::Remote`]) each request brings its [`RemoteCaller`], and the call is the
/// caller's own API request, carried in-process.
#[derive(Debug, Clone)]
pub struct SlipwayServer {
    runner: Arc<slipway_toolkit::Runner>,
    door: Door,
    /// `--toolsets` of `slipway mcp` (the remote door reads `?toolsets=` per request).
    toolsets: Option<Vec<Toolset>>,
}

impl Default for SlipwayServer {
    fn default() -> Self {
        Self::local(slipway_toolkit::Runner::new(), None)
    }
}

/// Who calls the remote door, put into each request's extensions by the platform after it
/// authenticated the bearer token.
#[derive(Clone)]
pub struct RemoteCaller {
    /// The platform with the caller's token, carried in-process.
    pub endpoint: slipway_platform_client::Endpoint,
    /// What the caller's token may do.
    pub scope: slipway_api::TokenScope,
    /// The toolsets the client asked for (`?toolsets=`); `None` for all.
    pub toolsets: Option<Vec<Toolset>>,
    /// Told of every tool call, for the platform's audit; the answer waits for it.
    pub audit: Option<Audit>,
}

impl std::fmt::Debug for RemoteCaller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteCaller")
            .field("endpoint", &self.endpoint)
            .field("scope", &self.scope)
            .field("toolsets", &self.toolsets)
            .finish_non_exhaustive()
    }
}

/// Records a tool call (the platform writes it into the account's audit).
pub type Audit = Arc<
    dyn Fn(ToolCallRecord) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>
        + Send
        + Sync,
>;

/// One tool call as the audit records it: never an argument's value beyond the app it
/// named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallRecord {
    /// The tool.
    pub tool: String,
    /// The app it named (`app_id`), if any.
    pub app_id: Option<String>,
    /// The client, as it named itself.
    pub client: Option<String>,
    /// `None` on success, else the error's code (`permission_denied`, `not_found`, …).
    pub error: Option<String>,
    /// Whether the tool only reads (its annotation): the record of a read may be written
    /// after the answer, that of a change before it.
    pub read_only: bool,
}

impl SlipwayServer {
    /// A server on the caller's machine, offering `toolsets` (all when `None`).
    pub fn local(runner: slipway_toolkit::Runner, toolsets: Option<Vec<Toolset>>) -> Self {
        Self {
            runner: Arc::new(runner),
            door: Door::Local,
            toolsets,
        }
    }

    /// The platform's server: every request must carry a [`RemoteCaller`].
    pub fn remote() -> Self {
        Self {
            runner: Arc::new(slipway_toolkit::Runner::new()),
            door: Door::Remote,
            toolsets: None,
        }
    }

    /// The remote caller of a request, when this is the remote door.
    fn caller(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<RemoteCaller>, McpError> {
        if self.door == Door::Local {
            return Ok(None);
        }
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<RemoteCaller>())
            .cloned()
            .map(Some)
            .ok_or_else(|| McpError::internal_error("the request was not authenticated", None))
    }

    fn offer(&self, caller: Option<&RemoteCaller>) -> Offer {
        match caller {
            Some(c) => Offer {
                door: Door::Remote,
                toolsets: c.toolsets.clone(),
                scope: Some(c.scope.clone()),
            },
            None => Offer {
                door: self.door,
                toolsets: self.toolsets.clone(),
                scope: None,
            },
        }
    }

    /// A platform client: the remote caller's, or the runner's.
    fn client(
        &self,
        caller: Option<&RemoteCaller>,
    ) -> Result<slipway_platform_client::Client, slipway_toolkit::ToolError> {
        match caller {
            Some(c) => slipway_platform_client::Client::new(c.endpoint.clone()),
            None => self.runner.client(),
        }
    }
}

/// The client's name, as it introduced itself (older protocol versions) or per request.
fn client_name(context: &RequestContext<RoleServer>) -> Option<String> {
    if let Some(info) = context.meta.client_info() {
        return Some(info.name);
    }
    if let Some(info) = context.peer.peer_info() {
        return Some(info.client_info.name.clone());
    }
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.headers.get(http::header::USER_AGENT))
        .and_then(|v| v.to_str().ok())
        .map(|v| v.chars().take(100).collect())
}

impl SlipwayServer {
    /// The tool `name` as this client is offered it, or the answer refusing the call.
    #[allow(
        clippy::type_complexity,
        reason = "the refusal is the protocol's answer itself"
    )]
    fn admit(
        &self,
        caller: Option<&RemoteCaller>,
        name: &str,
        args: &Value,
    ) -> Result<
        Result<(slipway_toolkit::ToolInfo, slipway_toolkit::Hints), CallToolResponse>,
        McpError,
    > {
        // A tool this client is not offered is an error of the call, naming why (the
        // platform's HTTP layer answers a scope's refusal 403 before it gets here).
        let offered = match self.offer(caller).check(name) {
            Ok(offered) => offered,
            Err(tools::Withheld::Unknown) => {
                return Err(McpError::invalid_params(
                    format!("unknown tool {name:?}"),
                    None,
                ));
            }
            Err(withheld) => {
                return Ok(Err(CallToolResponse::Complete(failure(
                    &slipway_toolkit::ToolError::PermissionDenied(format!(
                        "{name} is not offered here: {withheld}"
                    )),
                ))));
            }
        };
        if caller.is_some()
            && let Some(field) = tools::file_argument(args)
        {
            return Ok(Err(CallToolResponse::Complete(failure(
                &slipway_toolkit::ToolError::invalid(
                    field,
                    "names a file on your machine, which the platform cannot reach: give the content instead, or run `slipway mcp` on your machine",
                ),
            ))));
        }
        Ok(Ok(offered))
    }
}

/// Runs tool `tool`: its outcome, or why it could not even be attempted.
async fn run(
    runner: Arc<slipway_toolkit::Runner>,
    endpoint: Option<Endpoint>,
    tool: String,
    args: Value,
) -> Result<Result<Value, ToolError>, McpError> {
    // On the platform, a tool that is one API request is awaited on the caller's in-process
    // endpoint: no thread of its own, no hand-offs (measured: BENCHMARKS.md).
    if let Some(endpoint) = endpoint.as_ref().filter(|e| e.transport.is_some())
        && let Some(planned) = slipway_toolkit::plan(&tool, &args)
    {
        return Ok(match planned {
            Ok(planned) => planned.send_in_process(endpoint).await,
            Err(e) => Err(e),
        });
    }
    tokio::task::spawn_blocking(move || match endpoint {
        Some(endpoint) => slipway_toolkit::call_outcome_with(Some(&endpoint), &tool, args),
        None => runner.call_outcome(&tool, args),
    })
    .await
    .map_err(|e| McpError::internal_error(format!("the tool call stopped: {e}"), None))?
    .map_err(|e| McpError::invalid_params(e.to_string(), None))
}

/// What reaches the platform of a call with `args` beside its tool: the caller's endpoint at
/// the remote door, the runner's choice at the local one.
fn connector(
    runner: Arc<slipway_toolkit::Runner>,
    endpoint: Option<Endpoint>,
    args: &Value,
) -> impl Fn() -> Result<Client, ToolError> + Send + Sync + Clone + 'static {
    let args = args.clone();
    move || match &endpoint {
        Some(endpoint) => Client::new(endpoint.clone()),
        None => runner.platform_client(&args),
    }
}

impl ServerHandler for SlipwayServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("slipway", env!("CARGO_PKG_VERSION")))
        .with_instructions(match self.door {
            Door::Local => INSTRUCTIONS.to_owned(),
            Door::Remote => format!("{INSTRUCTIONS}{REMOTE_INSTRUCTIONS}"),
        })
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let caller = self.caller(&context)?;
        Ok(ListToolsResult::with_all_items(
            self.offer(caller.as_ref()).tools(),
        ))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(context::prompts()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let caller = self.caller(&context)?;
        let server = self.clone();
        let args = request.arguments.unwrap_or_default();
        let name = request.name.clone();
        let result = tokio::task::spawn_blocking(move || {
            context::get_prompt(|| server.client(caller.as_ref()), &name, &args)
        })
        .await
        .map_err(|e| McpError::internal_error(format!("the prompt stopped: {e}"), None))?;
        result
            .map(GetPromptResponse::Complete)
            .map_err(|e| McpError::invalid_params(e.to_string(), None))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(
            context::resource_templates(),
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let caller = self.caller(&context)?;
        let server = self.clone();
        let listed = tokio::task::spawn_blocking(move || {
            server
                .client(caller.as_ref())
                .map_err(context::ContextError::from)
                .and_then(|c| context::resources(&c))
        })
        .await
        .map_err(|e| McpError::internal_error(format!("the listing stopped: {e}"), None))?;
        // Without a reachable platform there is nothing to list (the templates still say
        // what can be read).
        let listed = listed.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "cannot list the apps' resources");
            Vec::new()
        });
        Ok(ListResourcesResult::with_all_items(listed))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let caller = self.caller(&context)?;
        let server = self.clone();
        let uri = request.uri.clone();
        let asked = request.uri.clone();
        let read = tokio::task::spawn_blocking(move || {
            server
                .client(caller.as_ref())
                .map_err(context::ContextError::from)
                .and_then(|c| context::read(&c, &uri))
        })
        .await
        .map_err(|e| McpError::internal_error(format!("the read stopped: {e}"), None))?;
        match read {
            Ok(contents) => Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
                vec![contents],
            ))),
            // SEP-2164: the error names the resource asked for.
            Err(context::ContextError::Unknown(m)) => Err(McpError::resource_not_found(
                m,
                Some(serde_json::json!({"uri": asked})),
            )),
            Err(e) => Err(McpError::invalid_params(e.to_string(), None)),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = self.caller(&context)?;
        let name = request.name.to_string();
        let request_params = request.clone();
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        // On the platform, the request's own log line and the audit entry say as much.
        if caller.is_none() {
            tracing::info!(tool = %name, "tool call");
        } else {
            tracing::debug!(tool = %name, "tool call");
        }
        let (info, hints) = match self.admit(caller.as_ref(), &name, &args)? {
            Ok(offered) => offered,
            Err(refused) => return Ok(refused),
        };
        // What destroys something on the platform runs only once the person said yes.
        if hints.destructive && info.needs_platform {
            match confirm::confirm(&request_params, &context, &name, &args).await? {
                confirm::Confirmation::Confirmed => {}
                confirm::Confirmation::Ask(question) => {
                    return Ok(CallToolResponse::InputRequired(question));
                }
                confirm::Confirmation::Refused(why) => {
                    return Ok(CallToolResponse::Complete(failure(
                        &slipway_toolkit::ToolError::PermissionDenied(why),
                    )));
                }
            }
        }
        let app_id = args
            .get("app_id")
            .and_then(Value::as_str)
            .map(|s| s.chars().take(64).collect());
        let runner = Arc::clone(&self.runner);
        let endpoint = caller.as_ref().map(|c| c.endpoint.clone());
        let tool = name.clone();
        // What the local door reports to the platform's audit once the call is done.
        let report_args = (caller.is_none() && info.needs_platform).then(|| args.clone());
        // A secret's value the call does not carry is typed by the person, on the platform.
        let typed_value = info
            .needs_platform
            .then(|| secret_value::wanted(&name, &args))
            .flatten();
        let outcome = match (typed_value, context.meta.get_progress_token()) {
            (Some(parsed), _) => {
                let connect = connector(runner, endpoint, &args);
                let typed = secret_value::typed(
                    &request_params,
                    &context,
                    &name,
                    &args,
                    parsed,
                    connect,
                    client_name(&context),
                )
                .await?;
                match typed {
                    secret_value::Typed::Ask(question) => {
                        return Ok(CallToolResponse::InputRequired(question));
                    }
                    secret_value::Typed::Done(outcome) => outcome,
                }
            }
            // A client that asked for progress hears each of a build's long steps.
            (None, Some(token)) if name == "build_app" && caller.is_none() => {
                build_reporting(runner, args, token, context.peer.clone()).await?
            }
            _ => run(runner, endpoint, tool, args).await?,
        };
        // A call that found no platform has nowhere to be recorded.
        let unreached = outcome
            .as_ref()
            .is_err_and(|e| matches!(e.code(), "not_configured" | "unavailable"));
        if let Some(args) = report_args.filter(|_| !unreached) {
            report_local_call(
                Arc::clone(&self.runner),
                args,
                slipway_toolkit::ToolCallReport {
                    tool: name.clone(),
                    app_id: app_id.clone(),
                    client: client_name(&context),
                    error: outcome.as_ref().err().map(|e| e.code().to_owned()),
                },
            );
        }
        if let Some(audit) = caller.as_ref().and_then(|c| c.audit.clone()) {
            audit(ToolCallRecord {
                tool: name,
                app_id,
                client: client_name(&context),
                error: outcome.as_ref().err().map(|e| e.code().to_owned()),
                read_only: hints.read_only,
            })
            .await;
        }
        Ok(CallToolResponse::Complete(reply(&outcome)))
    }
}

/// The tool's answer: the rendered JSON as text and as structured content, an error when the
/// outcome is one.
fn reply(outcome: &Result<Value, ToolError>) -> CallToolResult {
    // The outcome says whether the tool failed; the rendered JSON is what the client reads.
    let result = slipway_toolkit::render(outcome);
    // Compact: the text is for a model, whose context each space costs.
    let text = result.to_string();
    let mut reply = if outcome.is_err() {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    reply.structured_content = Some(result);
    reply
}

/// Reports a platform tool call of the local door to that platform's audit, beside the
/// answer (the person's own `slipway mcp` vouches for it; the remote door records its own).
/// A platform that cannot be reached loses the record, never the call: it is logged.
fn report_local_call(
    runner: Arc<slipway_toolkit::Runner>,
    args: Value,
    mut report: slipway_toolkit::ToolCallReport,
) {
    // What the platform's rules take: a malformed id or name would get the report refused,
    // and the call go unrecorded.
    report.app_id = report.app_id.filter(|id| uuid::Uuid::parse_str(id).is_ok());
    report.client = report
        .client
        .map(|n| n.chars().filter(|c| !c.is_control()).take(100).collect())
        .filter(|n: &String| !n.is_empty());
    tokio::task::spawn_blocking(move || {
        if let Err(e) = runner.report_tool_call(&args, &report) {
            tracing::warn!(tool = %report.tool, error = %e, "the tool call could not be recorded in the platform's audit");
        }
    });
}

/// `build_app` on the caller's machine, sending `notifications/progress` for `token` as each
/// long step (packing, uploading, building) starts; the steps are counted, with no total (how
/// many there are depends on the project).
async fn build_reporting(
    runner: Arc<slipway_toolkit::Runner>,
    args: Value,
    token: rmcp::model::ProgressToken,
    peer: rmcp::Peer<RoleServer>,
) -> Result<Result<Value, slipway_toolkit::ToolError>, McpError> {
    let (steps, mut told) = tokio::sync::mpsc::unbounded_channel::<String>();
    let forward = tokio::spawn(async move {
        let mut done = 0.0;
        while let Some(step) = told.recv().await {
            done += 1.0;
            let note =
                rmcp::model::ProgressNotificationParam::new(token.clone(), done).with_message(step);
            // A client that went away misses the rest; the build goes on.
            let _ = peer.notify_progress(note).await;
        }
    });
    let outcome = tokio::task::spawn_blocking(move || {
        runner.build_app_reporting(args, &|step| {
            let _ = steps.send(step.to_owned());
        })
    })
    .await
    .map_err(|e| McpError::internal_error(format!("the tool call stopped: {e}"), None));
    // Every step told before the answer (the sender went with the closure).
    let _ = forward.await;
    outcome
}

/// A failed call as the client reads it: `isError`, with the failure's JSON.
fn failure(error: &slipway_toolkit::ToolError) -> CallToolResult {
    let body = error.to_json();
    let text = serde_json::to_string_pretty(&body).unwrap_or_else(|_| body.to_string());
    let mut reply = CallToolResult::error(vec![ContentBlock::text(text)]);
    reply.structured_content = Some(body);
    reply
}

/// Serves MCP on stdin/stdout until the client disconnects, offering `toolsets` (all when
/// `None`); platform tools use `runner`'s platform (the CLI gives it an embedded one as its
/// fallback).
pub async fn serve_stdio(
    runner: slipway_toolkit::Runner,
    toolsets: Option<Vec<Toolset>>,
) -> Result<(), McpServerError> {
    let service = SlipwayServer::local(runner, toolsets)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| McpServerError::Transport(e.to_string()))?;
    service
        .waiting()
        .await
        .map_err(|e| McpServerError::Transport(e.to_string()))?;
    Ok(())
}
