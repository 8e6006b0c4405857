//! `slipway domains add|list|show|remove`: an app's custom domains and their certificates
//! (docs/domains.md). The app is `--app` (its name or id), else the project's `.app`;
//! `list --json` gives each domain's state for scripts. Adding and removing take the editor
//! or owner role.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use slipway_platform_client::domains::{self, Domain, NewDomain};

use crate::people::Output;
use crate::resources::the_app;
use crate::table::{table, when};

#[derive(Debug, Args)]
pub struct DomainsArgs {
    #[command(subcommand)]
    command: DomainsCommand,
    /// The app's name or id; default: the one in ./.app.
    #[arg(long, global = true)]
    app: Option<String>,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Subcommand)]
enum DomainsCommand {
    /// Serve the app on a domain of its own. Point the name's A/AAAA record at the platform;
    /// the certificate is issued once it resolves here (`list` shows why while it waits).
    Add {
        /// The name, for example orders.example.org.
        name: String,
        /// The service to serve (default: the app's first public service).
        #[arg(long)]
        service: Option<String>,
        /// Redirect to this other domain of the app instead (www.example.org → example.org).
        #[arg(long, value_name = "DOMAIN", conflicts_with = "service")]
        redirect_to: Option<String>,
    },
    /// The app's domains: state (pending, issued, renewing, failed), why, expiry.
    List,
    /// One domain in full: its certificate, what the platform is waiting for.
    Show {
        /// The name.
        name: String,
    },
    /// Stop serving the app on a domain (its certificate and key are deleted).
    Remove {
        /// The name.
        name: String,
    },
}

pub fn run(args: DomainsArgs) -> ExitCode {
    let client = match args.output.client() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let out = &args.output;
    let app = args.app.as_deref();
    match args.command {
        DomainsCommand::Add {
            name,
            service,
            redirect_to,
        } => out.show(
            the_app(&client, app).and_then(|id| {
                domains::add_domain(
                    &client,
                    &id,
                    &NewDomain {
                        name,
                        service,
                        redirect_to,
                    },
                )
            }),
            |d| {
                println!("Added {} ({}).", d.name, d.url);
                println!(
                    "Point its DNS (an A or AAAA record) at this platform; the certificate is \
                     issued once the name resolves here. `slipway domains list` shows its state."
                );
            },
        ),
        DomainsCommand::List => out.show(
            the_app(&client, app).and_then(|id| domains::list_domains(&client, &id)),
            |list| {
                if list.domains.is_empty() {
                    println!("The app has no custom domains (`slipway domains add NAME`).");
                    return;
                }
                let rows: Vec<Vec<String>> = list.domains.iter().map(row).collect();
                table(&["DOMAIN", "STATE", "SERVES", "EXPIRES", "WHY"], &rows);
            },
        ),
        DomainsCommand::Show { name } => out.show(
            the_app(&client, app).and_then(|id| domains::get_domain(&client, &id, &name)),
            show,
        ),
        DomainsCommand::Remove { name } => out.show(
            the_app(&client, app).and_then(|id| domains::remove_domain(&client, &id, &name)),
            |r| println!("Removed {}: it is no longer served.", r.removed),
        ),
    }
}

fn serves(d: &Domain) -> String {
    match (&d.redirect_to, &d.service) {
        (Some(target), _) => format!("→ {target}"),
        (None, Some(service)) => service.clone(),
        (None, None) => "(primary service)".into(),
    }
}

fn row(d: &Domain) -> Vec<String> {
    vec![
        d.name.clone(),
        d.state.as_str().to_owned(),
        serves(d),
        when(d.certificate.as_ref().map(|c| c.expires_at.as_str()), "-"),
        d.reason.clone().unwrap_or_default(),
    ]
}

fn show(d: &Domain) {
    println!("{}  {}", d.name, d.url);
    println!("  state:    {}", d.state.as_str());
    println!("  serves:   {}", serves(d));
    if let Some(reason) = &d.reason {
        println!("  why:      {reason}");
    }
    if let Some(next) = &d.next_attempt_at {
        println!("  retrying: {}", when(Some(next), "-"));
    }
    if let Some(c) = &d.certificate {
        println!("  issuer:   {} ({})", c.issuer, c.source);
        println!("  expires:  {}", when(Some(&c.expires_at), "-"));
        if let Some(renews) = &c.renews_at {
            println!("  renews:   {}", when(Some(renews), "-"));
        }
    }
}
