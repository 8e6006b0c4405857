//! `slipway people …`: the account's people, invites and audit, for admins who run a team
//! without a shell on the server (docs/people.md). Tables for people, `--json` (the
//! platform's typed answer, rendered as `slipway call` renders a tool's) for scripts. The
//! output and client helpers here are shared with `slipway tokens`.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde::Serialize;
use serde_json::Value;
use slipway_platform_client::people::{AuditPage, InviteMade, Invites, People, Removed};
use slipway_platform_client::{self as platform, Client, Endpoint};
use slipway_toolkit::ToolError;

use crate::table::{table, when};

#[derive(Debug, Args)]
pub struct PeopleArgs {
    #[command(subcommand)]
    command: PeopleCommand,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Subcommand)]
enum PeopleCommand {
    /// List the account's people with their roles.
    List,
    /// Invite someone (admins): prints a code that works once, and its link for the desktop.
    Invite {
        /// Their e-mail address.
        email: String,
        /// Their account role once they join.
        #[arg(long, default_value = "member", value_parser = ["admin", "member"])]
        role: String,
        /// How long the code works (1-30 days; the platform's default is 7).
        #[arg(long, value_name = "N")]
        expires_in_days: Option<u32>,
    },
    /// Change someone's account role (admins). The last admin cannot be demoted.
    Role {
        /// Their e-mail (or id).
        email: String,
        /// The new role.
        #[arg(value_parser = ["admin", "member"])]
        role: String,
    },
    /// Remove someone from the account (admins): their tokens stop working at once and the
    /// apps they alone own pass to you. Asks first on a terminal.
    Remove {
        /// Their e-mail (or id).
        email: String,
        /// Do not ask (needed when standard input is not a terminal).
        #[arg(long)]
        yes: bool,
    },
    /// List the pending invites (admins).
    Invites,
    /// Revoke a pending invite (admins): its code stops working.
    RevokeInvite {
        /// The invite's id (`slipway people invites` lists them).
        id: String,
    },
    /// Show what happened in the account, newest first (admins).
    Audit {
        /// The page after the one that printed this token.
        #[arg(long)]
        page_token: Option<String>,
    },
}

/// The flags every `people` and `tokens` command takes.
#[derive(Debug, Args)]
pub(crate) struct Output {
    /// Print the platform's answer as JSON (for scripts) instead of a table.
    #[arg(long, global = true)]
    json: bool,
    /// The environment (as given to `slipway login`); default: the configured platform, else
    /// the local one when it runs.
    #[arg(long, global = true)]
    environment: Option<String>,
}

impl Output {
    /// A client of the chosen environment, as the daily commands find one; when there is
    /// none, the reason is said on stderr and the exit code to end with is the error.
    pub(crate) fn client(&self) -> Result<Client, ExitCode> {
        match &self.environment {
            Some(env) => Endpoint::from_env(Some(env))
                .and_then(Client::new)
                .map_err(|e| e.to_string()),
            None => crate::daily::client(),
        }
        .map_err(|e| {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        })
    }

    /// Prints `result`: rendered as JSON with `--json` (a failure too, as `slipway call`
    /// does), else through `human`; a failure is also said on stderr.
    pub(crate) fn show<T: Serialize>(
        &self,
        result: Result<T, ToolError>,
        human: impl FnOnce(&T),
    ) -> ExitCode {
        if self.json {
            println!("{}", pretty(&slipway_toolkit::render(&result)));
        }
        match result {
            Ok(value) => {
                if !self.json {
                    human(&value);
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

pub fn run(args: PeopleArgs) -> ExitCode {
    let client = match args.output.client() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let out = &args.output;
    match args.command {
        PeopleCommand::List => out.show(platform::list_people(&client), show_people),
        PeopleCommand::Invite {
            email,
            role,
            expires_in_days,
        } => out.show(
            platform::invite(&client, &email, Some(&role), expires_in_days),
            |r| show_invite(r, client.base_url()),
        ),
        PeopleCommand::Role { email, role } => {
            out.show(platform::set_role(&client, &email, &role), |r| {
                println!("{} is now {}.", r.email, r.role);
            })
        }
        PeopleCommand::Remove { email, yes } => {
            if let Err(e) = confirm_removal(&email, yes) {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
            out.show(platform::remove_person(&client, &email), show_removed)
        }
        PeopleCommand::Invites => out.show(platform::list_invites(&client), show_invites),
        PeopleCommand::RevokeInvite { id } => {
            out.show(platform::people::revoke_invite(&client, &id), |r| {
                println!("Revoked invite {}: its code no longer works.", r.id);
            })
        }
        PeopleCommand::Audit { page_token } => {
            out.show(platform::audit(&client, page_token.as_deref()), show_audit)
        }
    }
}

fn show_people(r: &People) {
    let rows: Vec<Vec<String>> = r
        .users
        .iter()
        .map(|p| {
            vec![
                p.email.clone(),
                p.name.clone(),
                p.role.to_string(),
                when(Some(&p.joined_at), ""),
                when(p.last_active_at.as_deref(), "never"),
            ]
        })
        .collect();
    table(
        &["EMAIL", "NAME", "ROLE", "JOINED (UTC)", "LAST ACTIVE (UTC)"],
        &rows,
    );
}

fn show_invite(r: &InviteMade, base_url: &str) {
    let code = r.code.expose();
    println!(
        "Invited {} as {} (invite {}).",
        r.invite.email, r.invite.role, r.invite.id
    );
    println!("Code (shown only now): {code}");
    println!("Link for the desktop app: {}", r.link);
    println!(
        "The code works once and expires at {}. Send it privately; from the CLI they join with:",
        r.invite.expires_at
    );
    println!("  slipway login --invite {code} --url {base_url}");
}

fn show_removed(r: &Removed) {
    println!(
        "Removed {} <{}>: their tokens no longer work.",
        r.removed.name, r.removed.email
    );
    for app in &r.transferred_apps {
        println!("  app {} ({}) is yours now", app.name, app.app_id);
    }
}

fn show_invites(r: &Invites) {
    let rows: Vec<Vec<String>> = r
        .invites
        .iter()
        .map(|i| {
            vec![
                i.id.clone(),
                i.email.clone(),
                i.role.to_string(),
                when(Some(&i.expires_at), ""),
                i.invited_by.email.clone(),
            ]
        })
        .collect();
    if rows.is_empty() {
        println!("No pending invites.");
        return;
    }
    table(
        &["ID", "EMAIL", "ROLE", "EXPIRES (UTC)", "INVITED BY"],
        &rows,
    );
}

fn show_audit(r: &AuditPage) {
    let rows: Vec<Vec<String>> = r
        .entries
        .iter()
        .map(|e| {
            vec![
                when(Some(&e.at), ""),
                e.actor
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), |a| a.email.clone()),
                e.action.clone(),
                e.subject.clone(),
                e.detail.clone(),
            ]
        })
        .collect();
    table(&["AT (UTC)", "BY", "ACTION", "SUBJECT", "DETAIL"], &rows);
    if let Some(next) = &r.next_page_token {
        println!("More: slipway people audit --page-token {next}");
    }
}

/// Removing is asked about on a terminal; a script must say `--yes`.
fn confirm_removal(email: &str, yes: bool) -> Result<(), String> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(format!(
            "removing {email} needs --yes when standard input is not a terminal (nothing was removed)"
        ));
    }
    let question = format!(
        "Remove {email} from the account? Their tokens stop working at once and the apps they alone own pass to you."
    );
    if crate::prompt::yes(&question, false)? {
        Ok(())
    } else {
        Err(format!("{email} was not removed"))
    }
}
