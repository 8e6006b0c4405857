//! `slipway care serve`: flags → `CareConfig` → `slipway_care::serve`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum CareCommand {
    /// Serve POST {base}/{ns}/eRxApi and GET|POST {base}/{ns}/missingInformationRequest/{uuid}.
    Serve(ServeArgs),
    /// Write an encrypted archive (age, passphrase) of the database while the service goes on
    /// serving; prints its size and how long it took.
    Backup(crate::backup::CareBackupArgs),
    /// Restore an archive into a new SQLite file or an empty PostgreSQL database, after
    /// checking all of it; a refusal writes nothing.
    Restore(crate::backup::CareRestoreArgs),
    /// The worklist: missing-information requests with their status (answers corrected
    /// since are marked amended). Reads SLIPWAY_CARE_URL and SLIPWAY_CARE_TOKEN.
    Tasks(crate::care_staff::TasksArgs),
    /// What an answered request holds: who answered it, its values now, its corrections, and
    /// until when it can be corrected.
    Answer(crate::care_staff::AnswerArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8787")]
    listen: SocketAddr,
    /// `postgres://…` for PostgreSQL; default is a SQLite file in --data-dir.
    #[arg(long)]
    database_url: Option<String>,
    /// Namespace path segment of both services.
    #[arg(long, default_value = "care")]
    namespace: String,
    /// Prefix both services are mounted under, for example /services/apexrest.
    #[arg(long, default_value = "")]
    base_path: String,
    /// Load the documented demo data set (users demo-admin, demo-staff, demo-restricted) into an empty database.
    #[arg(long)]
    demo: bool,
    /// Where the default SQLite database lives (default: the user's data directory).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Allowed contact `type` values, comma-separated (default: the documented list).
    #[arg(long, value_delimiter = ',')]
    contact_types: Option<Vec<String>>,
    /// Allowed `gender` values, comma-separated (default: F,M,O,U).
    #[arg(long, value_delimiter = ',')]
    genders: Option<Vec<String>>,
    /// How long after its answer the person who answered a request (or a care admin) may
    /// correct it, for example 24h, 90m or 2d; 0s turns correcting off.
    #[arg(long, default_value = "24h", value_parser = humantime::parse_duration)]
    amend_window: std::time::Duration,
    #[command(flatten)]
    tls: crate::tls_args::TlsArgs,
}

pub fn run(command: CareCommand) -> ExitCode {
    let args = match command {
        CareCommand::Serve(args) => args,
        CareCommand::Backup(args) => {
            return crate::backup::on_new_runtime(crate::backup::care_backup(args));
        }
        CareCommand::Restore(args) => {
            return crate::backup::on_new_runtime(crate::backup::care_restore(args));
        }
        CareCommand::Tasks(args) => return crate::care_staff::tasks(&args),
        CareCommand::Answer(args) => return crate::care_staff::answer(&args),
    };
    crate::logging::init_tracing();
    let mut config = slipway_care::CareConfig::new(args.listen);
    config.database_url = args.database_url;
    config.tls = args.tls.files();
    config.namespace = args.namespace;
    config.base_path = args.base_path;
    config.demo = args.demo;
    config.amend_window = args.amend_window;
    config.data_dir = crate::data_dir::care_data_dir(args.data_dir);
    if let Some(types) = args.contact_types {
        config.contact_types = types;
    }
    if let Some(genders) = args.genders {
        config.genders = genders;
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(slipway_care::serve(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
