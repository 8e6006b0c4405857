//! `slipway tokens …`: your own API tokens (for CI, scripts, another machine). The secret of
//! a new token is printed once, on a line of its own; lists never show one.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use slipway_platform_client::{self as platform, TokenScope, Tokens};

use crate::people::Output;
use crate::table::{table, when};

#[derive(Debug, Args)]
pub struct TokensArgs {
    #[command(subcommand)]
    command: TokensCommand,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Subcommand)]
enum TokensCommand {
    /// List your tokens (never their secrets); the one this command uses is marked.
    List,
    /// Create a token and print it once.
    Create {
        /// What it is for, for example "CI" (at most 100 characters).
        name: String,
        /// How long it works (1-365 days; the platform's default is 90).
        #[arg(long, value_name = "N")]
        expires_in_days: Option<u32>,
        /// It only reads: no build, deploy, change, sharing or deletion.
        #[arg(long)]
        read_only: bool,
        /// It reaches only this app (a name or an id); repeat for more. Without it, every app
        /// you can reach; with it, nothing of the account beyond those apps.
        #[arg(long = "app", value_name = "APP")]
        apps: Vec<String>,
        /// It reads and writes no secret value (app, personal and shared secrets, resource
        /// credentials); it still lists secret paths.
        #[arg(long)]
        no_secrets: bool,
    },
    /// Revoke one of your tokens: it stops working at once.
    Revoke {
        /// The token's id (`slipway tokens list` shows it).
        id: String,
    },
}

pub fn run(args: TokensArgs) -> ExitCode {
    let client = match args.output.client() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let out = &args.output;
    match args.command {
        TokensCommand::List => out.show(platform::list_tokens(&client), show_tokens),
        TokensCommand::Create {
            name,
            expires_in_days,
            read_only,
            apps,
            no_secrets,
        } => out.show(
            platform::create_token(
                &client,
                &name,
                expires_in_days,
                &TokenScope {
                    read_only,
                    apps: (!apps.is_empty()).then_some(apps),
                    secrets: !no_secrets,
                },
            ),
            |r| {
                println!(
                    "Created token {:?} (id {}, scope {}); it expires at {}.",
                    r.name,
                    r.id,
                    r.scope.describe(),
                    r.expires_at.as_deref().unwrap_or("never")
                );
                println!("It is shown only now; keep it somewhere safe:");
                println!("{}", r.token.expose());
            },
        ),
        TokensCommand::Revoke { id } => out.show(platform::revoke_token(&client, &id), |r| {
            println!("Revoked token {}: it no longer works.", r.id);
        }),
    }
}

fn show_tokens(r: &Tokens) {
    let rows: Vec<Vec<String>> = r
        .tokens
        .iter()
        .map(|t| {
            vec![
                t.id.clone(),
                t.name.clone(),
                when(Some(&t.created_at), ""),
                when(t.expires_at.as_deref(), "never"),
                when(t.last_used_at.as_deref(), "never"),
                t.scope.describe(),
                if t.current { "← this one" } else { "" }.to_owned(),
            ]
        })
        .collect();
    table(
        &[
            "ID",
            "NAME",
            "CREATED (UTC)",
            "EXPIRES (UTC)",
            "LAST USED (UTC)",
            "SCOPE",
            "",
        ],
        &rows,
    );
}
