//! `slipway git connect|status|deploy|disconnect` and `slipway previews`: deploy an app from a branch of its
//! repository (docs/git.md). The app is `--app` (its name or id), else the project's `.app`.
//! A token is read from an environment variable (`--token-env`) or standard input
//! (`--token-stdin`), never from the command line, where `ps` and the shell's history keep
//! it. `status --json` shows owners the webhook URL and its secret, for scripts that set up
//! the forge's hook.

use std::io::BufRead as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use slipway_platform_client::ToolError;
use slipway_platform_client::git::{self, GitAuth, GitConnect, GitSource};

use crate::people::Output;
use crate::resources::the_app;
use crate::table::when;

/// `slipway previews`: the app's pull requests' previews.
#[derive(Debug, Args)]
pub struct PreviewsArgs {
    /// The app's name or id; default: the one in ./.app.
    #[arg(long)]
    app: Option<String>,
    #[command(flatten)]
    output: Output,
}

pub fn previews(args: PreviewsArgs) -> ExitCode {
    let client = match args.output.client() {
        Ok(c) => c,
        Err(code) => return code,
    };
    args.output.show(
        the_app(&client, args.app.as_deref()).and_then(|id| git::list_previews(&client, &id)),
        |list| {
            if list.previews.is_empty() {
                println!(
                    "No previews: a pull request into the deployed branch gets one (`slipway git status` shows the hook to set up)."
                );
                return;
            }
            let rows: Vec<Vec<String>> = list
                .previews
                .iter()
                .map(|p| {
                    vec![
                        format!("#{}", p.number),
                        p.app_name.clone(),
                        p.status.as_str().to_owned(),
                        p.commit
                            .as_ref()
                            .map(|c| c.sha[..c.sha.len().min(12)].to_owned())
                            .unwrap_or_default(),
                        p.url.clone().unwrap_or_default(),
                        p.last_error.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            crate::table::table(&["PR", "APP", "STATUS", "COMMIT", "URL", "WHY"], &rows);
        },
    )
}

#[derive(Debug, Args)]
pub struct GitArgs {
    #[command(subcommand)]
    command: GitCommand,
    /// The app's name or id; default: the one in ./.app.
    #[arg(long, global = true)]
    app: Option<String>,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Subcommand)]
enum GitCommand {
    /// Deploy the app from a branch of a repository: its tip deploys at once, later pushes
    /// through the forge's webhook (or `--poll`).
    Connect {
        /// The repository: https://host/owner/repo.git, ssh://git@host/owner/repo.git or
        /// git@host:owner/repo.git.
        #[arg(long)]
        repo: String,
        /// The branch that deploys.
        #[arg(long, default_value = "main")]
        branch: String,
        /// The repository's directory holding the devfile (default: its root).
        #[arg(long, value_name = "DIR")]
        path: Option<String>,
        /// Read the access token from this environment variable (for a private https
        /// repository).
        #[arg(long, value_name = "VAR", conflicts_with = "token_stdin")]
        token_env: Option<String>,
        /// Read the access token from standard input (one line).
        #[arg(long)]
        token_stdin: bool,
        /// Also ask the repository for a new commit this often (10s to 24h), for
        /// repositories that cannot reach the platform: 30s, 2m, 1h.
        #[arg(long, value_name = "INTERVAL", value_parser = humantime::parse_duration)]
        poll: Option<Duration>,
        /// How many pull requests may have a preview app at once (default 5; 0: none).
        #[arg(long, value_name = "N")]
        max_previews: Option<u32>,
    },
    /// The app's source: repository, branch, the commit last built, why the last attempt
    /// failed, the webhook to set up.
    Status,
    /// Fetch the branch's tip now and deploy it.
    Deploy,
    /// Stop deploying from the repository (the running deployment keeps serving).
    Disconnect,
}

/// The token `--token-env` or `--token-stdin` names, if any.
fn token(env: Option<&str>, stdin: bool) -> Result<Option<String>, ToolError> {
    if let Some(var) = env {
        return std::env::var(var)
            .map(|t| Some(t.trim().to_owned()))
            .map_err(|_| ToolError::invalid("token_env", format!("${var} is not set")));
    }
    if stdin {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| ToolError::invalid("token_stdin", e.to_string()))?;
        return Ok(Some(line.trim().to_owned()));
    }
    Ok(None)
}

pub fn run(args: GitArgs) -> ExitCode {
    let client = match args.output.client() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let out = &args.output;
    let app = args.app.as_deref();
    match args.command {
        GitCommand::Connect {
            repo,
            branch,
            path,
            token_env,
            token_stdin,
            poll,
            max_previews,
        } => out.show(
            token(token_env.as_deref(), token_stdin).and_then(|token| {
                let id = the_app(&client, app)?;
                let source = GitConnect {
                    repo_url: repo,
                    branch: Some(branch),
                    path,
                    auth: token.as_ref().map(|_| GitAuth::Token),
                    token,
                    poll_interval_seconds: poll.map(|p| p.as_secs()),
                    max_previews,
                };
                git::connect_git(&client, &id, &source)
            }),
            connected,
        ),
        GitCommand::Status => out.show(
            the_app(&client, app).and_then(|id| git::get_git(&client, &id)),
            status,
        ),
        GitCommand::Deploy => out.show(
            the_app(&client, app).and_then(|id| git::deploy_git(&client, &id)),
            |o| match o {
                git::HookOutcome::Queued(what) | git::HookOutcome::Ignored(what) => {
                    println!("Deploying {what}. `slipway git status` and the app's deployments show how it went.");
                }
            },
        ),
        GitCommand::Disconnect => out.show(
            the_app(&client, app).and_then(|id| git::disconnect_git(&client, &id)),
            |_| println!("Disconnected: pushes no longer deploy; the running deployment keeps serving."),
        ),
    }
}

fn connected(s: &GitSource) {
    println!(
        "Connected {} ({}{}). Its tip is being deployed now.",
        s.repo_url,
        s.branch,
        if s.path.is_empty() {
            String::new()
        } else {
            format!(", {}", s.path)
        }
    );
    if let Some(key) = &s.deploy_key {
        println!("\nAdd this deploy key to the repository (read-only is enough):\n  {key}");
    }
    println!("\nTo deploy on every push, add a webhook to the repository:");
    println!("  URL:     {}", s.webhook_url);
    if let Some(secret) = &s.webhook_secret {
        println!("  Secret:  {secret}   (shown to the app's owners only from now on)");
    }
    println!(
        "  Content type application/json; events: push (GitHub, Gitea, Forgejo) or Push events (GitLab, the secret as its token)."
    );
}

fn status(s: &GitSource) {
    println!("{}  branch {}", s.repo_url, s.branch);
    if !s.path.is_empty() {
        println!("  path:       {}", s.path);
    }
    println!("  auth:       {}", s.auth.as_str());
    if let Some(key) = &s.deploy_key {
        println!("  deploy key: {key}");
    }
    match &s.last_commit {
        Some(c) => println!(
            "  last built: {} {} ({})",
            &c.sha[..c.sha.len().min(12)],
            c.subject,
            c.author
        ),
        None => println!("  last built: nothing yet"),
    }
    if let Some(e) = &s.last_error {
        println!("  failed:     {e}");
    }
    if let Some(p) = &s.pending {
        println!("  waiting:    {p}");
    }
    if let Some(p) = s.poll_interval_seconds {
        println!("  polling:    every {p} s");
    }
    println!("  webhook:    {}", s.webhook_url);
    if let Some(secret) = &s.webhook_secret {
        println!("  secret:     {secret}");
    }
    println!(
        "  connected:  {} by {}",
        when(Some(&s.connected_at), "-"),
        s.connected_by
    );
}
