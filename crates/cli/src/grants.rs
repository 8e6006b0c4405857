//! `slipway grants …`: assistants you let act for you (docs/mcp.md). An assistant that
//! connects to the platform's `/mcp` sends you to a page showing a code; approve it here,
//! where you are signed in, choosing what it may do. List what you allowed, and revoke it.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use slipway_platform_client::grants::{self, Grants, SignInRequest, TokenScope};

use crate::people::Output;
use crate::table::{table, when};

#[derive(Debug, Args)]
pub struct GrantsArgs {
    #[command(subcommand)]
    command: GrantsCommand,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Subcommand)]
enum GrantsCommand {
    /// The assistants you allowed, with what each may do and when it last acted.
    List,
    /// Approve the sign-in whose code an assistant's page shows. Without flags it gets what
    /// the page asked for.
    Approve {
        /// The code on the page, for example K7QP-3MZD.
        code: String,
        /// It only reads.
        #[arg(long, conflicts_with = "read_write")]
        read_only: bool,
        /// It reads and changes (build, deploy, delete).
        #[arg(long)]
        read_write: bool,
        /// It reaches only this app (a name or an id); repeat for more.
        #[arg(long = "app", value_name = "APP")]
        apps: Vec<String>,
        /// It reads and writes no secret value.
        #[arg(long, conflicts_with = "secrets")]
        no_secrets: bool,
        /// It may read and write secret values.
        #[arg(long)]
        secrets: bool,
        /// Do not ask: approve (scripts; a terminal is asked after the request is shown).
        #[arg(long)]
        yes: bool,
    },
    /// Decline the sign-in whose code an assistant's page shows.
    Deny {
        /// The code on the page.
        code: String,
    },
    /// Revoke a grant: the assistant's next request is refused.
    Revoke {
        /// The grant's id (`slipway grants list` shows it).
        id: String,
    },
}

pub fn run(args: GrantsArgs) -> ExitCode {
    let client = match args.output.client() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let out = &args.output;
    match args.command {
        GrantsCommand::List => out.show(grants::list_grants(&client), show_grants),
        GrantsCommand::Approve {
            code,
            read_only,
            read_write,
            apps,
            no_secrets,
            secrets,
            yes,
        } => {
            // The request first: who asks, to return where, for what; an unknown code ends here.
            let request = match grants::find_request(&client, &code) {
                Ok(request) => request,
                Err(e) => return out.show(Err::<SignInRequest, _>(e), |_| {}),
            };
            let chosen = read_only || read_write || !apps.is_empty() || no_secrets || secrets;
            let scope = chosen.then(|| {
                // What was not given stays as the page asked.
                let asked = request.asked.clone();
                TokenScope {
                    read_only: if read_only || read_write {
                        read_only
                    } else {
                        asked.read_only
                    },
                    apps: if apps.is_empty() {
                        asked.apps
                    } else {
                        Some(apps)
                    },
                    secrets: if no_secrets || secrets {
                        secrets
                    } else {
                        asked.secrets
                    },
                }
            });
            let granted = scope.as_ref().unwrap_or(&request.asked);
            if let Err(e) = confirm(&request, &granted.describe(), yes) {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
            out.show(
                grants::approve_request(&client, &code, scope.as_ref()),
                |r: &SignInRequest| {
                    println!(
                        "Approved {:?} ({}): its page now sends it back, and it may act for you ({}).",
                        r.client_name, r.client_id, r.asked.describe()
                    );
                },
            )
        }
        GrantsCommand::Deny { code } => out.show(grants::deny_request(&client, &code), |d| {
            println!("Declined {}: the assistant is told so.", d.user_code);
        }),
        GrantsCommand::Revoke { id } => out.show(grants::revoke_grant(&client, &id), |r| {
            println!(
                "Revoked grant {}: the assistant's next request is refused.",
                r.id
            );
        }),
    }
}

/// Approving is asked about on a terminal, after the request is shown; a script must say
/// `--yes`. An assistant names itself: the address it returns to is what can be trusted.
fn confirm(request: &SignInRequest, scope: &str, yes: bool) -> Result<(), String> {
    use std::io::IsTerminal as _;
    let back = request
        .redirect_uri
        .split('/')
        .nth(2)
        .unwrap_or(&request.redirect_uri);
    eprintln!(
        "{:?} (client {}) asks to act for you; your browser returns to {back}. It would get: {scope}.",
        request.client_name, request.client_id
    );
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(
            "approving needs --yes when standard input is not a terminal (nothing was approved)"
                .into(),
        );
    }
    if crate::prompt::yes("Approve?", false)? {
        Ok(())
    } else {
        Err("not approved (the request still waits; slipway grants deny CODE declines it)".into())
    }
}

fn show_grants(r: &Grants) {
    let rows: Vec<Vec<String>> = r
        .grants
        .iter()
        .map(|g| {
            vec![
                g.id.clone(),
                g.client_name.clone(),
                g.scope.describe(),
                when(Some(&g.created_at), ""),
                when(g.last_used_at.as_deref(), "never"),
            ]
        })
        .collect();
    table(
        &[
            "ID",
            "ASSISTANT",
            "SCOPE",
            "ALLOWED (UTC)",
            "LAST USED (UTC)",
        ],
        &rows,
    );
}
