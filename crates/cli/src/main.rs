//! The `slipway` command: `main → run() → ExitCode`.

mod call;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Slipway: scaffold, validate, build and run apps; serve the platform and care services.
#[derive(Debug, Parser)]
#[command(name = "slipway", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one tool by name with JSON arguments and print its result as JSON.
    ///
    /// Exit status: 0 when the result's `success` is not false, 1 when it is, 2 for a usage
    /// error (unknown tool, arguments that are not a JSON object).
    Call {
        /// Tool name, for example get_available_templates.
        tool: String,
        /// Arguments as a JSON object; `-` reads them from standard input. Default `{}`.
        #[arg(default_value = "{}")]
        args: String,
    },
    /// List the tools this build offers.
    Tools,
}

fn main() -> ExitCode {
    run(Cli::parse())
}

fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Call { tool, args } => call::run(&tool, &args),
        Command::Tools => {
            for tool in slipway_toolkit::TOOLS {
                println!("{:<26} {}", tool.name, tool.description);
            }
            ExitCode::SUCCESS
        }
    }
}
