//! A tool runner for long-lived transports (the MCP server, the desktop app): like
//! [`crate::call`], but when a platform tool finds no platform configured for the default
//! environment, it asks a fallback for one — the transport passes a function that starts an
//! embedded platform in-process — so everything works out of the box. `slipway call` does not
//! use a fallback: it says how to start or configure a platform instead.

use serde_json::Value;

use crate::registry::{CallError, ToolInfo, call_outcome, call_outcome_with, render};
use slipway_platform_client::Endpoint;
use slipway_platform_client::ToolError;

/// Supplies a platform when none is configured.
pub type Fallback = Box<dyn Fn() -> Result<Endpoint, ToolError> + Send + Sync>;

/// Picks the platform before the process environment and the fallback are asked: the
/// desktop's chosen remote environment, which can change while the window runs. `Ok(None)`
/// leaves the choice to them.
pub type Chooser = Box<dyn Fn() -> Result<Option<Endpoint>, ToolError> + Send + Sync>;

/// Runs tools, with an optional fallback platform.
pub struct Runner {
    fallback: Option<Fallback>,
    chooser: Option<Chooser>,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("fallback", &self.fallback.is_some())
            .field("chooser", &self.chooser.is_some())
            .finish()
    }
}

impl Runner {
    /// A runner that only uses configured platforms.
    pub fn new() -> Self {
        Self {
            fallback: None,
            chooser: None,
        }
    }

    /// A runner that asks `fallback` for a platform when none is configured.
    pub fn with_fallback(fallback: Fallback) -> Self {
        Self {
            fallback: Some(fallback),
            chooser: None,
        }
    }

    /// This runner, asking `chooser` first for every platform call.
    #[must_use]
    pub fn with_chooser(mut self, chooser: Chooser) -> Self {
        self.chooser = Some(chooser);
        self
    }

    fn chosen(&self) -> Result<Option<Endpoint>, ToolError> {
        match &self.chooser {
            Some(chooser) => chooser(),
            None => Ok(None),
        }
    }

    /// A client of the default environment's platform, or of the fallback when none is
    /// configured (for what is not a tool: the MCP server's prompts and resources).
    pub fn client(&self) -> Result<slipway_platform_client::Client, ToolError> {
        if let Some(endpoint) = self.chosen()? {
            return slipway_platform_client::Client::new(endpoint);
        }
        let endpoint = match (Endpoint::from_env(None), &self.fallback) {
            (Err(ToolError::NotConfigured(_)), Some(fallback)) => fallback()?,
            (other, _) => other?,
        };
        slipway_platform_client::Client::new(endpoint)
    }

    /// Runs tool `name` on `args` and renders the outcome (see [`crate::call`]).
    pub fn call(&self, name: &str, args: Value) -> Result<Value, CallError> {
        self.call_outcome(name, args)
            .map(|outcome| render(&outcome))
    }

    /// Runs tool `name` on `args` and gives the outcome unrendered (see
    /// [`crate::call_outcome`]): a transport learns whether the call failed from the `Result`,
    /// never by reading `success` back.
    pub fn call_outcome(
        &self,
        name: &str,
        args: Value,
    ) -> Result<Result<Value, ToolError>, CallError> {
        if ToolInfo::find(name).is_none_or(|t| !t.needs_platform) {
            return call_outcome(name, args);
        }
        match self.endpoint_for(&args) {
            Ok(endpoint) => call_outcome_with(endpoint.as_ref(), name, args),
            Err(e) => Ok(Err(e)),
        }
    }

    /// `build_app` on `args`, telling `progress` each long step as it starts (see
    /// [`crate::build_app_reporting`]).
    pub fn build_app_reporting(
        &self,
        args: Value,
        progress: &dyn Fn(&str),
    ) -> Result<Value, ToolError> {
        let endpoint = self.endpoint_for(&args)?;
        crate::registry::build_app_reporting(endpoint.as_ref(), args, progress)
    }

    /// Records a tool call made with `args` in the audit of the platform it went to (see
    /// [`slipway_platform_client::report_tool_call`]).
    pub fn report_tool_call(
        &self,
        args: &Value,
        report: &slipway_platform_client::ToolCallReport,
    ) -> Result<(), ToolError> {
        let endpoint = match self.endpoint_for(args)? {
            Some(endpoint) => endpoint,
            None => Endpoint::from_env(args.get("environment").and_then(Value::as_str))?,
        };
        slipway_platform_client::report_tool_call(
            &slipway_platform_client::Client::new(endpoint)?,
            report,
        )
    }

    /// A client of the platform a call with `args` goes to (as [`Self::report_tool_call`]
    /// finds it): for what a transport asks the platform beside a tool (a secret's page).
    pub fn platform_client(
        &self,
        args: &Value,
    ) -> Result<slipway_platform_client::Client, ToolError> {
        let endpoint = match self.endpoint_for(args)? {
            Some(endpoint) => endpoint,
            None => Endpoint::from_env(args.get("environment").and_then(Value::as_str))?,
        };
        slipway_platform_client::Client::new(endpoint)
    }

    /// The platform a call with `args` goes to: the chooser's, else (`None`) the one the
    /// call's environment names, else the fallback when the default environment names none.
    fn endpoint_for(&self, args: &Value) -> Result<Option<Endpoint>, ToolError> {
        if let Some(endpoint) = self.chosen()? {
            return Ok(Some(endpoint));
        }
        let Some(fallback) = &self.fallback else {
            return Ok(None);
        };
        let environment = args.get("environment").and_then(Value::as_str);
        let default_env = environment.is_none_or(|e| e == "production");
        match Endpoint::from_env(environment) {
            Err(ToolError::NotConfigured(_)) if default_env => fallback().map(Some),
            _ => Ok(None),
        }
    }
}

impl Default for Runner {
    fn default() -> Self {
        Self::new()
    }
}
