//! The `slipway` command: `main → run() → ExitCode`.

mod backup;
mod call;
mod care;
mod care_staff;
mod daily;
mod data_dir;
mod dev;
mod domains;
mod git;
mod grants;
mod jobs;
#[cfg(test)]
mod layers;
mod local_platform;
mod logging;
mod notify;
mod people;
mod platform;
mod prefix;
mod prompt;
mod resources;
mod table;
mod tls_args;
mod tokens;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc rather than glibc's malloc. The servers allocate on one thread and free on another
/// (a request's buffers on a runtime worker, the rows and answers of a SQLite write on the
/// writer thread), which glibc serves with arena locks and consolidation: in the care bench
/// its malloc and free were an eighth of all the CPU of a missing-information GET.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Sign in to a platform: with a token, an invite code (--invite) or single sign-on
    /// (--sso). The URL is saved for the tools, the token in the OS keyring (or a 0600 file
    /// when there is none).
    Login(daily::LoginArgs),
    /// Forget an environment's stored tokens (keyring and file); its URLs stay for the next login.
    Logout(daily::LogoutArgs),
    /// Show who the environment's token belongs to.
    Whoami(daily::LogoutArgs),
    /// The account's people: list them, invite, change roles, remove; pending invites and the
    /// audit (admins manage, everyone lists).
    People(people::PeopleArgs),
    /// Your own API tokens: list, create (shown once), revoke.
    Tokens(tokens::TokensArgs),
    /// Assistants you let act for you through the platform's /mcp: approve a sign-in by the
    /// code its page shows, list them, revoke one.
    Grants(grants::GrantsArgs),
    /// An app's backing resources (databases, caches) and volumes: list, info, credentials
    /// (editors and owners), rotate, destroy (owners).
    Resources(resources::ResourcesArgs),
    /// An app's scheduled jobs (a devfile command's attributes.schedule): list, runs,
    /// run-now, log.
    Jobs(jobs::JobsArgs),
    /// Notifications: channels (webhook, Slack, e-mail; admins), subscriptions to an app's or
    /// the account's events, deliveries with their retries, and "send a test".
    Notify(notify::NotifyArgs),
    /// An app's custom domains with certificates issued and renewed by ACME: add (a name to
    /// serve, or --redirect-to another), list (each one's state and why), show, remove.
    Domains(domains::DomainsArgs),
    /// Deploy an app from a branch of its repository: connect (a token or a deploy key),
    /// status (the webhook to set up, the last commit built), deploy now, disconnect.
    Git(git::GitArgs),
    /// The previews of an app's pull requests (each an app of its own, <app>-pr-<n>).
    Previews(git::PreviewsArgs),
    /// Create a new app project from a template.
    New(daily::NewArgs),
    /// Build and deploy the project (validates first; shows progress).
    Build(daily::BuildArgs),
    /// Build and deploy the project, then watch it: every save syncs or rebuilds what changed
    /// and redeploys (health-gated), with the app's logs. Ctrl-C stops.
    Dev(dev::DevArgs),
    /// Show an app's status; --watch polls until RUNNING or FAILED.
    Status(daily::StatusArgs),
    /// Print an app's latest build and runtime logs.
    Logs(daily::LogsArgs),
    /// List an app's deployments: what each ran (images, secret versions), why, how it ended.
    Deployments(daily::DeploymentsArgs),
    /// Deploy an earlier deployment again with its images and secret versions (default: the
    /// newest earlier one that ran well).
    Rollback(daily::RollbackArgs),
    /// Explain why an app is where it is: failing services' logs, a failed build, the
    /// devfile's findings, what changed since the last good deployment.
    Why(daily::WhyArgs),
    /// Serve the tools to an AI assistant over MCP (stdio). Logs go to stderr. The platform
    /// serves the same tools at its /mcp (less the ones that need your files).
    Mcp {
        /// Offer only these toolsets, comma-separated (devfiles, apps, builds, logs, secrets,
        /// sharing, domains, git), for assistants that cap how many tools they take.
        #[arg(long, value_name = "LIST", value_parser = parse_toolsets)]
        toolsets: Option<Vec<slipway_mcp::Toolset>>,
    },
    /// The platform server that apps are registered, built and deployed on.
    Platform {
        #[command(subcommand)]
        command: platform::PlatformCommand,
    },
    /// The care program's REST services (enrollment and missing information).
    Care {
        #[command(subcommand)]
        command: care::CareCommand,
    },
}

fn main() -> ExitCode {
    run(Cli::parse())
}

fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Call { tool, args } => call::run(&tool, &args),
        Command::Tools => {
            for tool in slipway_toolkit::all_tools() {
                println!("{:<26} {}", tool.name, tool.description);
            }
            ExitCode::SUCCESS
        }
        Command::Care { command } => care::run(command),
        Command::Login(args) => daily::login(args),
        Command::Logout(args) => daily::logout(args),
        Command::Whoami(args) => daily::whoami(args),
        Command::People(args) => people::run(args),
        Command::Tokens(args) => tokens::run(args),
        Command::Grants(args) => grants::run(args),
        Command::Resources(args) => resources::run(args),
        Command::Jobs(args) => jobs::run(args),
        Command::Notify(args) => notify::run(args),
        Command::Domains(args) => domains::run(args),
        Command::Git(args) => git::run(args),
        Command::Previews(args) => git::previews(args),
        Command::New(args) => daily::new(args),
        Command::Build(args) => daily::build(args),
        Command::Dev(args) => dev::dev(args),
        Command::Status(args) => daily::status(args),
        Command::Logs(args) => daily::logs(args),
        Command::Deployments(args) => daily::deployments(args),
        Command::Rollback(args) => daily::rollback(args),
        Command::Why(args) => daily::why(args),
        Command::Mcp { toolsets } => {
            logging::init_tracing();
            match tokio::runtime::Runtime::new().map(|rt| rt.block_on(serve_mcp(toolsets))) {
                Ok(Ok(())) => ExitCode::SUCCESS,
                Ok(Err(e)) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
                Err(e) => {
                    eprintln!("error: cannot start the async runtime: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Platform { command } => platform::run(command),
    }
}

/// `--toolsets`: a comma-separated list of toolset names.
fn parse_toolsets(raw: &str) -> Result<Vec<slipway_mcp::Toolset>, String> {
    slipway_mcp::Toolset::parse_list(raw)
}

/// `slipway mcp`: the stdio server, whose platform tools fall back to an embedded platform
/// (data under [`slipway_platform::embedded::default_data_dir`]) when none is configured,
/// stopped with its apps when the client disconnects.
async fn serve_mcp(
    toolsets: Option<Vec<slipway_mcp::Toolset>>,
) -> Result<(), slipway_mcp::McpServerError> {
    use std::sync::Arc;
    let embedded = Arc::new(slipway_platform::embedded::Lazy::new(
        slipway_platform::embedded::default_data_dir(),
    ));
    let fallback = Arc::clone(&embedded);
    let runner = slipway_toolkit::Runner::with_fallback(Box::new(move || {
        fallback
            .endpoint()
            .map(|(url, token)| slipway_platform_client::Endpoint::new(url, token))
            .map_err(slipway_toolkit::ToolError::Unavailable)
    }));
    let served = slipway_mcp::serve_stdio(runner, toolsets).await;
    // Stopping joins the platform's thread: do it off the async threads.
    let _ = tokio::task::spawn_blocking(move || embedded.shutdown()).await;
    served
}
