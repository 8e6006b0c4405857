//! `slipway call <tool> '<json>'`: argument parsing and exit codes around the toolkit.

use std::io::Read;
use std::process::ExitCode;

use serde_json::Value;

/// Exit code for a usage error (as clap uses for its own).
const USAGE: u8 = 2;

pub fn run(tool: &str, raw_args: &str) -> ExitCode {
    let raw = if raw_args == "-" {
        let mut buf = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut buf) {
            eprintln!("error: cannot read arguments from standard input: {e}");
            return ExitCode::from(USAGE);
        }
        buf
    } else {
        raw_args.to_owned()
    };
    let args: Value = match serde_json::from_str(&raw) {
        Ok(v) => v,
        Err(e) => {
            eprintln!(
                "error: arguments are not valid JSON ({e}); example: slipway call scaffold_app '{{\"app_name\":\"demo\",\"app_type\":\"python-api\",\"output_directory\":\".\"}}'"
            );
            return ExitCode::from(USAGE);
        }
    };
    match slipway_toolkit::call_outcome(tool, args) {
        Ok(outcome) => {
            let result = slipway_toolkit::render(&outcome);
            println!(
                "{}",
                serde_json::to_string_pretty(&result).unwrap_or_else(|_| result.to_string())
            );
            if outcome.is_err() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(USAGE)
        }
    }
}
