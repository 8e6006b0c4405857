//! `slipway notify …`: notifications (docs/notifications.md). Admins add channels (a signed
//! webhook, a Slack-compatible incoming webhook, e-mail over SMTP with STARTTLS), test and
//! remove them; an app's owners subscribe channels to its events (admins to the whole
//! account's); everyone lists channels and reads the deliveries of the apps they can see.
//! Secrets never go on the command line (where `ps` shows them): a Slack URL is read from
//! standard input with `-`, an SMTP password from a file.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{Value, json};
use slipway_platform_client::notifications as api;
use slipway_platform_client::{Client, ToolError};

use crate::people::Output;
use crate::resources::app_id;
use crate::table::table;

#[derive(Debug, Args)]
pub struct NotifyArgs {
    #[command(subcommand)]
    command: NotifyCommand,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Subcommand)]
enum NotifyCommand {
    /// The events a subscription can name.
    Events,
    /// The account's channels, and whether each one's newest delivery failed.
    Channels,
    /// Add a generic webhook (admins): each event is POSTed as JSON, signed with
    /// HMAC-SHA256 in `Slipway-Signature`; the signing secret is printed once.
    AddWebhook {
        /// The channel's name.
        name: String,
        /// Where to POST (http:// or https://).
        url: String,
    },
    /// Add a Slack-compatible incoming webhook (Slack, Mattermost, Rocket.Chat; admins).
    AddSlack {
        /// The channel's name.
        name: String,
        /// The incoming webhook's URL, or `-` to read it from standard input (it is a secret).
        url: String,
    },
    /// Add an e-mail channel: SMTP submission with STARTTLS required (admins).
    AddEmail {
        /// The channel's name.
        name: String,
        /// The mail server.
        #[arg(long)]
        host: String,
        /// Its submission port.
        #[arg(long, default_value_t = 587)]
        port: u16,
        /// The sender address.
        #[arg(long)]
        from: String,
        /// A recipient (repeat for more).
        #[arg(long, required = true)]
        to: Vec<String>,
        /// The sign-in name, when the server wants one (with --password-file).
        #[arg(long, requires = "password_file")]
        username: Option<String>,
        /// A file holding the password.
        #[arg(long, requires = "username")]
        password_file: Option<PathBuf>,
        /// A PEM certificate to trust besides the system's (the mail server's private CA).
        #[arg(long)]
        ca_file: Option<PathBuf>,
    },
    /// Send a test message now and say whether it arrived (admins).
    Test {
        /// The channel's name or id.
        channel: String,
    },
    /// Delete a channel with its subscriptions and deliveries (admins).
    Remove {
        /// The channel's name or id.
        channel: String,
    },
    /// The subscriptions you can see.
    Subscriptions,
    /// Subscribe a channel to events of an app (its owners) or of the whole account (admins).
    Subscribe {
        /// The channel's name or id.
        channel: String,
        /// The app's name or id; without it, the whole account.
        #[arg(long)]
        app: Option<String>,
        /// Event names separated by commas, or `all` (`slipway notify events` lists them).
        #[arg(long, default_value = "all")]
        events: String,
    },
    /// End a subscription.
    Unsubscribe {
        /// The subscription's id (`sub_…`).
        id: String,
    },
    /// The newest deliveries with their attempts: an app's, a channel's, or all (admins).
    Deliveries {
        /// Only those about this app (name or id).
        #[arg(long)]
        app: Option<String>,
        /// Only this channel's.
        #[arg(long)]
        channel: Option<String>,
        /// How many (1–500).
        #[arg(long)]
        limit: Option<u32>,
    },
}

pub fn run(args: NotifyArgs) -> ExitCode {
    let client = match args.output.client() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let out = &args.output;
    match args.command {
        NotifyCommand::Events => out.show(api::list_events(&client), show_events),
        NotifyCommand::Channels => out.show(api::list_channels(&client), show_channels),
        NotifyCommand::AddWebhook { name, url } => add(
            out,
            &client,
            json!({"name": name, "kind": "webhook", "url": url}),
        ),
        NotifyCommand::AddSlack { name, url } => match secret_arg(&url) {
            Ok(url) => add(
                out,
                &client,
                json!({"name": name, "kind": "slack", "url": url}),
            ),
            Err(e) => out.show::<Value>(Err(e), |_| {}),
        },
        NotifyCommand::AddEmail {
            name,
            host,
            port,
            from,
            to,
            username,
            password_file,
            ca_file,
        } => {
            let body = email_body(name, host, port, from, to, username, password_file, ca_file);
            match body {
                Ok(body) => add(out, &client, body),
                Err(e) => out.show::<Value>(Err(e), |_| {}),
            }
        }
        NotifyCommand::Test { channel } => out.show(api::test_channel(&client, &channel), |r| {
            if r.delivered {
                println!("Delivered: the test message reached {channel}.");
            } else {
                println!(
                    "Not delivered: {}",
                    r.error.as_deref().unwrap_or("no reason given")
                );
            }
        }),
        NotifyCommand::Remove { channel } => {
            out.show(api::delete_channel(&client, &channel), |_| {
                println!("Removed {channel}, its subscriptions and its deliveries.");
            })
        }
        NotifyCommand::Subscriptions => {
            out.show(api::list_subscriptions(&client), show_subscriptions)
        }
        NotifyCommand::Subscribe {
            channel,
            app,
            events,
        } => {
            let events: Vec<String> = events
                .split(',')
                .map(|e| e.trim().to_owned())
                .filter(|e| !e.is_empty())
                .collect();
            let result = match app {
                Some(app) => app_id(&client, &app)
                    .and_then(|id| api::subscribe(&client, &channel, Some(&id), &events)),
                None => api::subscribe(&client, &channel, None, &events),
            };
            out.show(result, show_subscribed)
        }
        NotifyCommand::Unsubscribe { id } => {
            out.show(api::unsubscribe(&client, &id), |_| println!("Ended {id}."))
        }
        NotifyCommand::Deliveries {
            app,
            channel,
            limit,
        } => {
            let result = match app {
                Some(app) => app_id(&client, &app).and_then(|id| {
                    api::list_deliveries(&client, Some(&id), channel.as_deref(), limit)
                }),
                None => api::list_deliveries(&client, None, channel.as_deref(), limit),
            };
            out.show(result, show_deliveries)
        }
    }
}

fn add(out: &Output, client: &Client, body: Value) -> ExitCode {
    out.show(api::add_channel(client, &body), |made| {
        println!("Added {} ({}) to {}.", made.channel.name, made.channel.kind, made.channel.target);
        if let Some(secret) = &made.signing_secret {
            println!("Signing secret (shown only now; receivers check Slipway-Signature with it): {secret}");
        }
        println!("Check it with `slipway notify test {}`.", made.channel.name);
    })
}

/// `-` reads the value from standard input (a secret kept off the command line).
fn secret_arg(raw: &str) -> Result<String, ToolError> {
    if raw != "-" {
        return Ok(raw.to_owned());
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| ToolError::invalid("url", format!("cannot read standard input: {e}")))?;
    Ok(text.trim().to_owned())
}

fn read_file(field: &str, path: &PathBuf) -> Result<String, ToolError> {
    std::fs::read_to_string(path)
        .map_err(|e| ToolError::invalid(field, format!("cannot read {}: {e}", path.display())))
}

#[allow(clippy::too_many_arguments)]
fn email_body(
    name: String,
    host: String,
    port: u16,
    from: String,
    to: Vec<String>,
    username: Option<String>,
    password_file: Option<PathBuf>,
    ca_file: Option<PathBuf>,
) -> Result<Value, ToolError> {
    let mut body =
        json!({"name": name, "kind": "email", "host": host, "port": port, "from": from, "to": to});
    if let (Some(user), Some(file)) = (username, password_file) {
        body["username"] = json!(user);
        body["password"] = json!(read_file("password_file", &file)?.trim_end_matches(['\r', '\n']));
    }
    if let Some(file) = ca_file {
        body["ca_certificate"] = json!(read_file("ca_file", &file)?);
    }
    Ok(body)
}

fn show_channels(list: &api::ChannelList) {
    if list.channels.is_empty() {
        println!(
            "No channels yet: an admin adds one with `slipway notify add-webhook|add-slack|add-email`."
        );
        return;
    }
    let rows: Vec<Vec<String>> = list
        .channels
        .iter()
        .map(|c| {
            let last = match c.last_delivery_failed {
                None => "-",
                Some(true) => "failed",
                Some(false) => "delivered",
            };
            vec![
                c.name.clone(),
                c.kind.clone(),
                c.target.clone(),
                last.into(),
            ]
        })
        .collect();
    table(&["CHANNEL", "KIND", "TARGET", "LAST DELIVERY"], &rows);
}

fn show_subscriptions(list: &api::SubscriptionList) {
    let rows: Vec<Vec<String>> = list
        .subscriptions
        .iter()
        .map(|s| {
            vec![
                s.id.clone(),
                s.channel_name.clone(),
                s.app_name
                    .clone()
                    .unwrap_or_else(|| "(whole account)".into()),
                s.events
                    .iter()
                    .map(|e| e.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
            ]
        })
        .collect();
    table(&["ID", "CHANNEL", "APP", "EVENTS"], &rows);
}

fn show_deliveries(list: &api::DeliveryList) {
    let rows: Vec<Vec<String>> = list
        .deliveries
        .iter()
        .map(|d| {
            let last_error = d
                .attempts
                .last()
                .and_then(|a| a.error.clone())
                .unwrap_or_default();
            vec![
                d.event.occurred_at.clone(),
                d.event.kind.to_string(),
                d.channel_name.clone(),
                d.status.clone(),
                d.attempts.len().to_string(),
                d.next_attempt_at.clone().unwrap_or_default(),
                last_error,
            ]
        })
        .collect();
    table(
        &[
            "AT",
            "EVENT",
            "CHANNEL",
            "STATUS",
            "TRIES",
            "NEXT TRY",
            "LAST ERROR",
        ],
        &rows,
    );
}

fn show_events(v: &Value) {
    let rows: Vec<Vec<String>> = v["events"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            vec![
                e["name"].as_str().unwrap_or("").into(),
                e["description"].as_str().unwrap_or("").into(),
            ]
        })
        .collect();
    table(&["EVENT", "MEANING"], &rows);
}

fn show_subscribed(s: &api::Subscription) {
    println!(
        "Subscribed {} to {} of {} ({}).",
        s.channel_name,
        s.events
            .iter()
            .map(|e| e.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        s.app_name.as_deref().unwrap_or("the whole account"),
        s.id
    );
}
