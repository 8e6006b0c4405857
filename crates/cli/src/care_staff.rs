//! `slipway care tasks` and `slipway care answer`: the care staff's worklist and an answered
//! request's contents from a terminal, through the same client as the desktop's worklist.
//! The service and the staff token come from `SLIPWAY_CARE_URL` and `SLIPWAY_CARE_TOKEN`
//! (`SLIPWAY_CARE_NAMESPACE` when it is not `care`), as for the desktop with a remote care
//! service: the token never goes on the command line, where `ps` shows it.

use std::process::ExitCode;

use clap::Args;
use serde::Serialize;
use serde_json::Value;
use slipway_care_client::worklist::{Query, Status};
use slipway_care_client::{Client, ENV_TOKEN, ENV_URL, Endpoint, Failure, configured};

use crate::table::table;

#[derive(Debug, Args)]
pub struct TasksArgs {
    /// Only these statuses, comma-separated: requested, in-progress, completed, cancelled,
    /// failed (default: all).
    #[arg(long, value_delimiter = ',')]
    status: Vec<String>,
    /// Only the requests you hold.
    #[arg(long)]
    mine: bool,
    /// Only answers corrected since they were submitted.
    #[arg(long)]
    amended: bool,
    /// At most this many (1 to 100).
    #[arg(long, default_value_t = 50)]
    count: u32,
    /// Print JSON (for scripts).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// The request's UUID.
    uuid: String,
    /// Print the service's answer as JSON (for scripts).
    #[arg(long)]
    json: bool,
}

/// The staff client of the configured care service.
fn client() -> Result<Client, Failure> {
    let Some((url, namespace, token, _)) = configured() else {
        return Err(Failure::unavailable(format!(
            "no care service is configured: set {ENV_URL} (its base URL) and {ENV_TOKEN}"
        )));
    };
    let token = token.ok_or_else(|| {
        Failure::unavailable(format!("{ENV_TOKEN} is not set (the care staff token)"))
    })?;
    Client::new(Endpoint::new(url, namespace, token))
}

fn fail(e: &Failure) -> ExitCode {
    eprintln!("error: {e}");
    for issue in &e.errors {
        if issue.message != e.message {
            eprintln!("  {}: {}", issue.code, issue.message);
        }
    }
    ExitCode::FAILURE
}

fn print_json<T: Serialize>(value: &T) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".to_owned())
    );
}

/// `slipway care tasks`.
pub fn tasks(args: &TasksArgs) -> ExitCode {
    let run = || -> Result<Vec<slipway_care_client::worklist::Task>, Failure> {
        let client = client()?;
        let mut statuses = args
            .status
            .iter()
            .map(|s| Status::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
        if args.amended && statuses.is_empty() {
            // Only an answered request can be amended.
            statuses.push(Status::Completed);
        }
        let owner = if args.mine {
            Some(client.me()?.id)
        } else {
            None
        };
        let page = client.tasks(&Query {
            statuses,
            owner,
            count: Some(args.count),
            total: false,
            next: None,
        })?;
        Ok(page
            .tasks
            .into_iter()
            .filter(|t| !args.amended || t.amended)
            .collect())
    };
    let tasks = match run() {
        Ok(tasks) => tasks,
        Err(e) => return fail(&e),
    };
    if args.json {
        print_json(&tasks);
        return ExitCode::SUCCESS;
    }
    if tasks.is_empty() {
        println!("No requests match.");
        return ExitCode::SUCCESS;
    }
    let rows: Vec<Vec<String>> = tasks
        .iter()
        .map(|t| {
            let dash = || "-".to_owned();
            vec![
                t.uuid.clone(),
                if t.amended {
                    format!("{} (amended)", t.status)
                } else {
                    t.status.clone()
                },
                t.expires.clone().unwrap_or_else(dash),
                t.patient
                    .clone()
                    .or_else(|| t.patient_id.clone())
                    .unwrap_or_else(dash),
                t.program.clone().unwrap_or_else(dash),
                t.owner.clone().unwrap_or_else(dash),
            ]
        })
        .collect();
    table(
        &[
            "REQUEST", "STATUS", "EXPIRES", "PATIENT", "PROGRAM", "HELD BY",
        ],
        &rows,
    );
    ExitCode::SUCCESS
}

/// `slipway care answer UUID`.
pub fn answer(args: &AnswerArgs) -> ExitCode {
    let answer = match client().and_then(|c| c.answer(&args.uuid)) {
        Ok(a) => a,
        Err(e) => return fail(&e),
    };
    if args.json {
        print_json(&answer);
        return ExitCode::SUCCESS;
    }
    let text = |v: &Value| v.as_str().unwrap_or("-").to_owned();
    let by = |v: &Value| {
        v["name"]
            .as_str()
            .map(|n| format!(" by {n}"))
            .unwrap_or_default()
    };
    println!(
        "{} · answered{} at {}{}",
        text(&answer["drugProgram"]),
        by(&answer["answeredBy"]),
        text(&answer["answeredAt"]),
        if answer["amended"] == true {
            " · amended"
        } else {
            ""
        }
    );
    let fields = answer["fields"].as_array().cloned().unwrap_or_default();
    let rows: Vec<Vec<String>> = fields
        .iter()
        .map(|f| vec![text(&f["label"]), text(&f["value"])])
        .collect();
    table(&["FIELD", "VALUE"], &rows);
    for a in answer["amendments"].as_array().into_iter().flatten() {
        let labels: Vec<String> = a["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(text)
            .collect();
        println!(
            "corrected{} at {}: {}",
            by(&a["by"]),
            text(&a["at"]),
            labels.join(", ")
        );
    }
    if answer["amendable"] == true {
        println!(
            "You can correct it until {} (in the desktop's Missing information view).",
            text(&answer["amendableUntil"])
        );
    }
    ExitCode::SUCCESS
}
