//! The command's log set-up, shared by `main` (the MCP server) and the servers' commands
//! (`platform`, `care`, `backup`). A module of its own rather than a function of `main.rs`:
//! the crate root uses every module, so a module that used the root back would make a circle.

/// `info`, but the MCP library's own lines only from `warn`: at `info` it writes three per
/// request to `/mcp` (a session made, its input ended, served), which the request's own log
/// line and the tool call's audit entry already say, at a cost measured per call.
const DEFAULT: &str = "info,rmcp=warn";

/// Logs go to stderr (stdout carries results), filtered by `RUST_LOG` (default [`DEFAULT`]).
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
}
