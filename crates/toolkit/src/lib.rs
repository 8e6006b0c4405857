//! The spec's tools as one Rust API: typed arguments, typed results, and a name-based
//! dispatcher that the desktop shell, the MCP server and the CLI all call. A tool returns its
//! typed result or a [`ToolError`]; [`render`] alone turns either into the spec's JSON (adding
//! `success`), at the transport edge.
//!
//! Architecture invariant: transports only map arguments and results; every rule of a tool
//! lives here or in the crates it calls (the devfile engine, the platform client).

mod devfile_tools;
pub mod hints;
#[cfg(test)]
mod layers;
pub mod links;
mod registry;
mod runner;
mod scaffold;
pub mod templates;

pub use devfile_tools::{
    GenerateDevfileResult, ValidateDevfileArgs, ValidateDevfileResult, generate_devfile,
    validate_devfile,
};
pub use hints::{FILE_ARGUMENTS, Hints, Toolset, hints};
pub use registry::{
    CallError, PLATFORM_TOOLS, Planned, TOOLS, ToolInfo, all_tools, build_app_reporting, call,
    call_outcome, call_outcome_with, call_with, input_schema, output_schema, plan, render,
};
pub use runner::{Chooser, Fallback, Runner};
pub use scaffold::{ScaffoldArgs, ScaffoldResult, check_scaffold, scaffold_app};
pub use slipway_platform_client::{FailedBuilds, ToolCallReport, ToolError};
pub use templates::{Template, TemplateList, get_available_templates};
