//! `slipway resources …`: an app's backing resources (`managedInfra`) and volumes: list and
//! inspect them, reveal a resource's credentials (editors and owners), rotate them, destroy
//! a resource and its data (owners, after a confirmation that names it). The app is given
//! by name or id.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use slipway_platform_client::resources::{self, Resources};
use slipway_platform_client::{self as platform, Client, ListAppsArgs, ToolError};

use crate::people::Output;
use crate::table::table;

#[derive(Debug, Args)]
pub struct ResourcesArgs {
    #[command(subcommand)]
    command: ResourcesCommand,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Subcommand)]
enum ResourcesCommand {
    /// List the app's resources (kind, name, engine, state, size, variables) and volumes.
    List {
        /// The app's name or id.
        app: String,
    },
    /// One resource in detail (never its password).
    Info {
        /// The app's name or id.
        app: String,
        /// relationalDatabase, cache, inMemoryDatabase, queue, objectStorage, keyValueTable or
        /// durable (the app's Restate server).
        kind: String,
        /// The resource's name.
        name: String,
    },
    /// Print a resource's credentials (editors and owners; each reveal is logged).
    Credentials {
        /// The app's name or id.
        app: String,
        /// relationalDatabase, cache, inMemoryDatabase, queue, objectStorage, keyValueTable or
        /// durable (the app's Restate server).
        kind: String,
        /// The resource's name.
        name: String,
    },
    /// New credentials: the old password stops working and the app restarts on the new one.
    Rotate {
        /// The app's name or id.
        app: String,
        /// relationalDatabase, cache, inMemoryDatabase, queue, objectStorage, keyValueTable or
        /// durable (the app's Restate server).
        kind: String,
        /// The resource's name.
        name: String,
    },
    /// Destroy a resource and its data for good (owners). Asks first on a terminal.
    Destroy {
        /// The app's name or id.
        app: String,
        /// relationalDatabase, cache, inMemoryDatabase, queue, objectStorage, keyValueTable or
        /// durable (the app's Restate server).
        kind: String,
        /// The resource's name.
        name: String,
        /// Do not ask (needed when standard input is not a terminal).
        #[arg(long)]
        yes: bool,
    },
}

pub fn run(args: ResourcesArgs) -> ExitCode {
    let client = match args.output.client() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let out = &args.output;
    match args.command {
        ResourcesCommand::List { app } => out.show(
            app_id(&client, &app).and_then(|id| resources::list_resources(&client, &id)),
            show_list,
        ),
        ResourcesCommand::Info { app, kind, name } => out.show(
            app_id(&client, &app).and_then(|id| {
                let all = resources::list_resources(&client, &id)?;
                all.resources
                    .into_iter()
                    .find(|r| r.kind == kind && r.name == name)
                    .ok_or_else(|| ToolError::invalid("name", format!("the app has no {kind} resource named {name:?}")))
            }),
            |r| {
                println!("{} {} ({}), {}", r.kind, r.name, r.engine, r.state);
                if let Some(mb) = r.memory_mb {
                    println!("memory cap: {mb} MiB");
                }
                println!("size: {}", r.size_bytes.map_or_else(|| "unknown (its server is not running)".to_owned(), platform::human_bytes));
                println!("variables: {}", if r.variables.is_empty() { "none (detached)".to_owned() } else { r.variables.join(", ") });
            },
        ),
        ResourcesCommand::Credentials { app, kind, name } => out.show(
            app_id(&client, &app)
                .and_then(|id| resources::reveal_credentials(&client, &id, &kind, &name)),
            |c| {
                println!("url:      {}", c.url);
                println!("host:     {}", c.host);
                println!("port:     {}", c.port);
                if !c.user.is_empty() {
                    println!("user:     {}", c.user);
                }
                println!("password: {}", c.password);
                if !c.database.is_empty() {
                    println!("database: {}", c.database);
                }
            },
        ),
        ResourcesCommand::Rotate { app, kind, name } => out.show(
            app_id(&client, &app)
                .and_then(|id| resources::rotate_credentials(&client, &id, &kind, &name)),
            |_| println!("Rotated the credentials of {kind} {name:?}; the app is being redeployed on them."),
        ),
        ResourcesCommand::Destroy { app, kind, name, yes } => {
            let id = match app_id(&client, &app) {
                Ok(id) => id,
                Err(e) => return out.show(Err::<(), _>(e), |()| {}),
            };
            if let Err(reason) = confirm_destroy(&app, &kind, &name, yes) {
                eprintln!("{reason}");
                return ExitCode::FAILURE;
            }
            out.show(resources::destroy_resource(&client, &id, &kind, &name), |d| {
                println!("{}.", d.message);
            })
        }
    }
}

/// The id of the app `app` names: an id as it is, else the app of that name.
/// The app `--app` names (its name or id), else the one in the project's `.app`.
pub(crate) fn the_app(client: &Client, app: Option<&str>) -> Result<String, ToolError> {
    match app {
        Some(app) => app_id(client, app),
        None => crate::daily::app_id(None).map_err(|e| ToolError::invalid("app", e)),
    }
}

pub(crate) fn app_id(client: &Client, app: &str) -> Result<String, ToolError> {
    let app = app.trim();
    if uuid_like(app) {
        return Ok(app.to_owned());
    }
    let mut token = None;
    loop {
        let page = client.run(platform::list_apps(&ListAppsArgs {
            page_size: Some(100),
            next_page_token: token,
            environment: None,
        })?)?;
        if let Some(found) = page.apps.iter().find(|a| a.listing.name == app) {
            return Ok(found.app_id.clone());
        }
        match page.next_page_token {
            Some(next) => token = Some(next),
            None => {
                return Err(ToolError::invalid(
                    "app",
                    format!(
                        "no app named {app:?} that you can see; `slipway call list_apps` lists them"
                    ),
                ));
            }
        }
    }
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}

/// Destroying is asked about on a terminal; a script must say `--yes`.
fn confirm_destroy(app: &str, kind: &str, name: &str, yes: bool) -> Result<(), String> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(format!(
            "destroying {kind} {name:?} needs --yes when standard input is not a terminal (nothing was destroyed)"
        ));
    }
    let question =
        format!("Destroy {kind} {name:?} of {app} and all its data? This cannot be undone.");
    if crate::prompt::yes(&question, false)? {
        Ok(())
    } else {
        Err(format!("{kind} {name:?} was not destroyed"))
    }
}

fn show_list(r: &Resources) {
    if r.resources.is_empty() && r.volumes.is_empty() {
        println!(
            "The app declares no resources or volumes (managedInfra and volume components in devfile.yaml)."
        );
        return;
    }
    if !r.resources.is_empty() {
        let rows: Vec<Vec<String>> = r
            .resources
            .iter()
            .map(|x| {
                vec![
                    x.kind.clone(),
                    x.name.clone(),
                    x.engine.clone(),
                    x.state.clone(),
                    x.size_bytes
                        .map_or_else(|| "-".to_owned(), platform::human_bytes),
                    x.variables.join(" "),
                ]
            })
            .collect();
        table(
            &["KIND", "NAME", "ENGINE", "STATE", "SIZE", "VARIABLES"],
            &rows,
        );
    }
    if !r.volumes.is_empty() {
        if !r.resources.is_empty() {
            println!();
        }
        let rows: Vec<Vec<String>> = r
            .volumes
            .iter()
            .map(|v| {
                vec![
                    v.name.clone(),
                    v.size.clone().unwrap_or_else(|| "-".into()),
                    platform::human_bytes(v.used_bytes),
                    if v.ephemeral { "yes" } else { "no" }.to_owned(),
                    v.mounts.join(" "),
                ]
            })
            .collect();
        table(&["VOLUME", "SIZE", "USED", "EPHEMERAL", "MOUNTS"], &rows);
    }
}
