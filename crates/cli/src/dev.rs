//! `slipway dev [PATH]`: the development loop of the toolkit (`slipway_dev`) on a
//! terminal: what it does on stderr-free plain lines, the app's logs prefixed by service.
//! Ctrl-C (or SIGTERM) stops watching and leaves the app running (`--down` disables it).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::Args;
use slipway_dev::{DevEvent, DevOptions, Emit, StopHandle, run};

#[derive(Debug, Args)]
pub struct DevArgs {
    /// The project directory (default: the current one).
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Disable the app when the loop stops.
    #[arg(long)]
    down: bool,
    /// Do not print the app's logs.
    #[arg(long)]
    no_logs: bool,
    /// With no platform configured, start the local platform in the background without
    /// asking.
    #[arg(long)]
    start_platform: bool,
}

pub fn dev(args: DevArgs) -> ExitCode {
    let client = match super::daily::client_or(super::daily::when_missing(args.start_platform)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let stop = StopHandle::new();
    stop_on_signals(stop.clone());
    let printer = Mutex::new(crate::prefix::Printer::for_stdout());
    let emit: Emit = Arc::new(move |event| print(&printer, event));
    let options = DevOptions {
        project: args.path,
        down: args.down,
        logs: !args.no_logs,
    };
    match run(&client, &options, &stop, &emit) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One line (or a few) per event; log lines through the service printer.
fn print(printer: &Mutex<crate::prefix::Printer>, event: DevEvent) {
    let text = match event {
        DevEvent::Log { line } => {
            if let Ok(mut p) = printer.lock() {
                p.print(&line);
            }
            return;
        }
        DevEvent::Progress { message } => format!("==> {message}"),
        DevEvent::Invalid { errors, warnings } => {
            let mut text =
                String::from("==> devfile.yaml is invalid; nothing is built until it is fixed:");
            for e in errors {
                text.push_str(&format!("\n    error: {e}"));
            }
            for w in warnings {
                text.push_str(&format!("\n    warning: {w}"));
            }
            text
        }
        DevEvent::Changed { files } => format!("==> changed: {}", files.join(", ")),
        DevEvent::Rebuilding { services } => format!(
            "==> updating {}",
            services
                .iter()
                .map(|(s, m)| format!(
                    "{s} ({})",
                    serde_json::to_value(m)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        DevEvent::Running {
            url,
            seconds,
            deployment_id,
        } => format!(
            "==> RUNNING {} ({seconds:.1} s after the change; deployment {deployment_id})",
            url.unwrap_or_default()
        ),
        DevEvent::Failed { message } => format!("==> FAILED: {message}"),
        DevEvent::Watching => "==> watching for changes (Ctrl-C stops)".to_owned(),
        DevEvent::Stopped { disabled } => format!(
            "==> stopped{}",
            if disabled {
                "; the app is disabled"
            } else {
                "; the app keeps running"
            }
        ),
    };
    println!("{text}");
}

/// Ctrl-C and SIGTERM ask the loop to stop.
fn stop_on_signals(stop: StopHandle) {
    std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        runtime.block_on(async {
            let Ok(mut term) =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            else {
                return;
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        });
        stop.stop();
    });
}
