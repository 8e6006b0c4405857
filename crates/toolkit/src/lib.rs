//! The spec's tools as one Rust API: typed arguments, typed results, and a name-based
//! dispatcher that the desktop shell, the MCP server and the CLI all call.
//!
//! Architecture invariant: transports only map arguments and results; every rule of a tool
//! lives here or in the crates it calls (the devfile engine, later the platform client).

pub mod dev;
mod devfile_tools;
mod error;
pub mod fsutil;
pub mod links;
pub mod platform;
mod registry;
mod runner;
mod scaffold;
pub mod templates;
pub mod trust;

pub use devfile_tools::{
    GenerateDevfileResult, ValidateDevfileArgs, generate_devfile, validate_devfile,
};
pub use error::ToolError;
pub use registry::{CallError, TOOLS, ToolInfo, call, call_with, input_schema};
pub use runner::{Chooser, Fallback, Runner};
pub use scaffold::{ScaffoldArgs, ScaffoldResult, check_scaffold, scaffold_app};
pub use templates::{Template, get_available_templates};
