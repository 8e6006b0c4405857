//! The MCP stdio tool server: every toolkit tool, described with its argument schema, and the
//! spec's workflow as the server's instructions. Logs go to stderr; stdout is the protocol.

use std::sync::Arc;

mod context;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

/// The workflow the assistant is asked to follow (the spec's recommended order).
pub const INSTRUCTIONS: &str = include_str!("instructions.md");

/// Why the server stopped.
#[derive(Debug, thiserror::Error)]
pub enum McpServerError {
    /// The stdio transport failed or the client broke the protocol.
    #[error("MCP server: {0}")]
    Transport(String),
}

/// The tool server: each call goes to the toolkit's runner, which finds the platform (or,
/// when none is configured, the embedded one this server starts on first use).
#[derive(Debug, Clone, Default)]
pub struct SlipwayServer {
    runner: Arc<slipway_toolkit::Runner>,
}

impl SlipwayServer {
    /// A server whose platform tools fall back to `embedded` when no platform is configured.
    pub fn with_embedded(embedded: Arc<slipway_platform::embedded::Lazy>) -> Self {
        let runner = slipway_toolkit::Runner::with_fallback(Box::new(move || {
            embedded
                .endpoint()
                .map(|(url, token)| slipway_platform_client::Endpoint::new(url, token))
                .map_err(slipway_toolkit::ToolError::Unavailable)
        }));
        Self {
            runner: Arc::new(runner),
        }
    }

    fn tools() -> Vec<Tool> {
        slipway_toolkit::all_tools()
            .map(|t| {
                let schema = match t.input_schema() {
                    Value::Object(map) => map,
                    _ => Default::default(),
                };
                Tool::new(t.name, t.description, Arc::new(schema))
            })
            .collect()
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
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(Self::tools()))
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
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let runner = Arc::clone(&self.runner);
        let args = request.arguments.unwrap_or_default();
        let name = request.name.clone();
        let result = tokio::task::spawn_blocking(move || {
            context::get_prompt(|| runner.client(), &name, &args)
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
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let runner = Arc::clone(&self.runner);
        let listed = tokio::task::spawn_blocking(move || {
            runner
                .client()
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
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let runner = Arc::clone(&self.runner);
        let uri = request.uri.clone();
        let read = tokio::task::spawn_blocking(move || {
            runner
                .client()
                .map_err(context::ContextError::from)
                .and_then(|c| context::read(&c, &uri))
        })
        .await
        .map_err(|e| McpError::internal_error(format!("the read stopped: {e}"), None))?;
        match read {
            Ok(contents) => Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
                vec![contents],
            ))),
            Err(context::ContextError::Unknown(m)) => Err(McpError::resource_not_found(m, None)),
            Err(e) => Err(McpError::invalid_params(e.to_string(), None)),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        tracing::info!(tool = %name, "tool call");
        let runner = Arc::clone(&self.runner);
        let outcome = tokio::task::spawn_blocking(move || runner.call_outcome(&name, args))
            .await
            .map_err(|e| McpError::internal_error(format!("the tool call stopped: {e}"), None))?
            .map_err(|e| McpError::invalid_params(e.to_string(), None))?;
        // The outcome says whether the tool failed; the rendered JSON is what the client reads.
        let failed = outcome.is_err();
        let result = slipway_toolkit::render(&outcome);
        let text = serde_json::to_string_pretty(&result).unwrap_or_else(|_| result.to_string());
        let mut reply = if failed {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        reply.structured_content = Some(result);
        Ok(CallToolResponse::Complete(reply))
    }
}

/// Serves MCP on stdin/stdout until the client disconnects. With no platform configured,
/// platform tools use an embedded one (data under
/// [`slipway_platform::embedded::default_data_dir`]), stopped with its apps when the client
/// disconnects.
pub async fn serve_stdio() -> Result<(), McpServerError> {
    let embedded = Arc::new(slipway_platform::embedded::Lazy::new(
        slipway_platform::embedded::default_data_dir(),
    ));
    let served = async {
        let service = SlipwayServer::with_embedded(Arc::clone(&embedded))
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| McpServerError::Transport(e.to_string()))?;
        service
            .waiting()
            .await
            .map_err(|e| McpServerError::Transport(e.to_string()))?;
        Ok(())
    }
    .await;
    // Stopping joins the platform's thread: do it off the async threads.
    let _ = tokio::task::spawn_blocking(move || embedded.shutdown()).await;
    served
}
