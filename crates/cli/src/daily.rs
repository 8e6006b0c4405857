//! The daily path in plain words: `slipway new`, `slipway build`, `slipway status`,
//! `slipway logs`. Each is a thin layer over the same toolkit functions `slipway call` uses.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::local_platform::WhenMissing;
use clap::Args;
use slipway_platform_client::history::{Deployment, Diagnosis};
use slipway_platform_client::{
    self as platform, AppIdArgs, AppStatus, BuildAppArgs, Client, Endpoint, GetLogsArgs,
};
use slipway_toolkit::{ScaffoldArgs, ToolError};

#[derive(Debug, Args)]
pub struct NewArgs {
    /// App name (lowercase letters, digits and hyphens; starts with a letter).
    name: String,
    /// Template; `slipway call get_available_templates` lists them.
    #[arg(long, short, default_value = "python-api")]
    template: String,
    /// Directory to create the project in.
    #[arg(long, default_value = ".")]
    dir: String,
    /// Port of the main service (default: the template's).
    #[arg(long)]
    port: Option<i64>,
    /// Add the durable-workflow (Restate) overlay.
    #[arg(long)]
    durable: bool,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Project directory.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Rebuild only this service.
    #[arg(long)]
    service: Option<String>,
    /// Build on this machine (BUILDER_HOST) and upload the image.
    #[arg(long)]
    local: bool,
    /// Print the build logs.
    #[arg(long, short)]
    verbose: bool,
    /// With no platform configured, start the local platform in the background without
    /// asking (on a terminal `slipway build` asks; elsewhere it says to pass this flag).
    #[arg(long)]
    start_platform: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// App id; default: the one in ./.app.
    app_id: Option<String>,
    /// Poll every 10 seconds until RUNNING or FAILED.
    #[arg(long, short)]
    watch: bool,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// App id; default: the one in ./.app.
    app_id: Option<String>,
    /// Only this service.
    #[arg(long)]
    service: Option<String>,
    /// Every build and deployment, not just the latest.
    #[arg(long, conflicts_with = "follow")]
    all: bool,
    /// Follow the logs live (build and runtime, new builds and deployments as they start),
    /// each line prefixed with its service; reconnects by itself. Ctrl-C stops.
    #[arg(long, short)]
    follow: bool,
    /// With --follow: lines of each log to start with.
    #[arg(long, default_value_t = 100, requires = "follow")]
    tail: u32,
}

#[derive(Debug, Args)]
pub struct DeploymentsArgs {
    /// App id; default: the one in ./.app.
    app_id: Option<String>,
    /// How many (newest first).
    #[arg(long, default_value_t = 20)]
    limit: u32,
}

#[derive(Debug, Args)]
pub struct RollbackArgs {
    /// The deployment to go back to; default: the newest earlier one that ran well.
    deployment: Option<String>,
    /// App id; default: the one in ./.app.
    #[arg(long)]
    app: Option<String>,
}

#[derive(Debug, Args)]
pub struct WhyArgs {
    /// App id; default: the one in ./.app.
    app_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The platform's base URL, for example http://127.0.0.1:8700 (an invite link carries
    /// it).
    #[arg(long, required_unless_present = "invite")]
    url: Option<String>,
    /// Read the token from this file (for a local platform: DATA_DIR/bootstrap-token);
    /// without it (and without --invite or --sso) the token is read from standard input.
    #[arg(long, conflicts_with_all = ["invite", "sso"])]
    token_file: Option<PathBuf>,
    /// Join with an invite code an admin gave you (`slwi_…`, or its slipway://invite link):
    /// creates your account and signs you in.
    #[arg(long, value_name = "CODE", conflicts_with = "sso")]
    invite: Option<String>,
    /// With --invite: your display name (default: your e-mail's local part).
    #[arg(long, requires = "invite")]
    name: Option<String>,
    /// Sign in through the company's identity provider (the platform's single sign-on) in a
    /// browser.
    #[arg(long)]
    sso: bool,
    /// With --sso: only print the address to open, do not start a browser.
    #[arg(long, requires = "sso")]
    no_browser: bool,
    /// The environment name tools select with their `environment` argument.
    #[arg(long, default_value = "production")]
    environment: String,
    /// A PEM bundle of the private certificate authority the platform's HTTPS certificate
    /// is signed by: trusted for this login and saved with the environment (for its URLs
    /// only). SLIPWAY_CA_FILE does the same for every server.
    #[arg(long, value_name = "FILE")]
    ca_file: Option<PathBuf>,
}

/// How long `slipway login --sso` waits for the browser to come back.
const SSO_WAIT: Duration = Duration::from_secs(300);

#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The environment (as given to `slipway login`).
    #[arg(long, default_value = "production")]
    environment: String,
}

fn fail(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

/// A client of the configured platform, else of the local platform when it runs.
pub(crate) fn client() -> Result<Client, String> {
    client_or(WhenMissing::Explain)
}

/// A client of the configured platform, else of the local platform (see
/// [`crate::local_platform`]): used when it runs; started when `missing` says so.
pub(crate) fn client_or(missing: WhenMissing) -> Result<Client, String> {
    crate::local_platform::endpoint(missing)
        .and_then(|endpoint| Client::new(endpoint).map_err(|e| e.to_string()))
}

/// `--start-platform` given: start the local platform unasked; else offer it.
pub(crate) fn when_missing(start_platform: bool) -> WhenMissing {
    if start_platform {
        WhenMissing::Start
    } else {
        WhenMissing::Offer
    }
}

pub(crate) fn app_id(arg: Option<String>) -> Result<String, String> {
    if let Some(id) = arg {
        return Ok(id);
    }
    let text = std::fs::read_to_string(platform::APP_FILE).map_err(|_| {
        "no app id given and no .app file here (run register_app or pass the app id)".to_owned()
    })?;
    serde_json::from_str::<platform::AppFile>(&text)
        .map(|f| f.app_id)
        .map_err(|e| format!(".app: {e}"))
}

/// Shows a tool's typed result with `ok`, or says why it failed, and returns the exit code.
fn finish<T>(outcome: Result<T, ToolError>, ok: impl FnOnce(&T)) -> ExitCode {
    match outcome {
        Ok(result) => {
            ok(&result);
            ExitCode::SUCCESS
        }
        Err(e) => tool_failed(&e),
    }
}

/// Says why a tool failed (with the devfile's errors when an invalid devfile was the reason).
fn tool_failed(e: &ToolError) -> ExitCode {
    eprintln!("error: {e}");
    if let ToolError::InvalidDevfile { errors, .. } = e {
        for error in errors {
            eprintln!("  {error}");
        }
    }
    ExitCode::FAILURE
}

pub fn new(args: NewArgs) -> ExitCode {
    let call = ScaffoldArgs {
        app_name: args.name,
        app_type: args.template,
        output_directory: args.dir,
        description: None,
        display_name: None,
        port: args.port,
        fabrics: None,
        permissions: None,
        overwrite: None,
        durable: Some(args.durable),
    };
    finish(slipway_toolkit::scaffold_app(&call), |r| {
        let project = PathBuf::from(&r.project_path);
        println!(
            "Created {} ({} files).",
            shown(&project).display(),
            r.files_created.len()
        );
        println!("Next: cd {} && slipway build", shown(&project).display());
    })
}

/// `path` as a user in the current directory types it: `./orders` for a project below it,
/// else the absolute path.
fn shown(path: &std::path::Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| std::fs::canonicalize(cwd).ok())
        .and_then(|cwd| {
            path.strip_prefix(cwd)
                .ok()
                .map(|p| PathBuf::from(".").join(p))
        })
        .filter(|p| p != &PathBuf::from("."))
        .unwrap_or_else(|| path.to_path_buf())
}

pub fn build(args: BuildArgs) -> ExitCode {
    let client = match client_or(when_missing(args.start_platform)) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let call = BuildAppArgs {
        project_path: args.path.display().to_string(),
        environment: None,
        verbose: Some(args.verbose),
        architecture: None,
        build_mode: Some(if args.local { "local" } else { "remote" }.into()),
        service_name: args.service,
    };
    let outcome = platform::build_app_with_progress(&client, &call, &|step| eprintln!("… {step}"));
    finish(outcome, |r| {
        for (service, log) in r.build_logs.iter().flatten() {
            println!(
                "--- build log of {service}\n{}",
                log.as_deref().unwrap_or_default()
            );
        }
        println!("Built app {}", r.app_id);
        // The URLs are known (and kept) from the first build on; they answer once it runs.
        match &r.app_url {
            Some(url) => println!("  URL: {url}"),
            None => println!("  (no URL: no public endpoint, or the platform runs no gateway)"),
        }
        for (service, url) in &r.service_urls {
            println!("  {service}: {url}");
        }
        println!("It is deploying (the URLs answer once it is RUNNING): slipway status --watch");
    })
}

pub fn status(args: StatusArgs) -> ExitCode {
    let (client, id) = match client().and_then(|c| app_id(args.app_id).map(|id| (c, id))) {
        Ok(v) => v,
        Err(e) => return fail(&e),
    };
    loop {
        let state = match platform::get_app_status(&AppIdArgs {
            app_id: id.clone(),
            environment: None,
        })
        .and_then(|call| client.run(call))
        {
            Ok(state) => state,
            Err(e) => return tool_failed(&e),
        };
        println!(
            "{}  {}",
            state.status.as_str(),
            state.app_url.as_deref().unwrap_or("")
        );
        if let Some(reason) = &state.reason {
            println!("  reason: {reason}");
        }
        if !args.watch || state.status.is_settled() {
            return if state.status == AppStatus::Failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
        std::thread::sleep(Duration::from_secs(10));
    }
}

pub fn logs(args: LogsArgs) -> ExitCode {
    let (client, id) = match client().and_then(|c| app_id(args.app_id).map(|id| (c, id))) {
        Ok(v) => v,
        Err(e) => return fail(&e),
    };
    if args.follow {
        let follow = platform::stream::Follow {
            service: args.service,
            tail: Some(args.tail),
        };
        let mut printer = crate::prefix::Printer::for_stdout();
        return match platform::stream::follow_logs(&client, &id, &follow, |line| {
            printer.print(line);
            std::ops::ControlFlow::Continue(())
        }) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(&e.to_string()),
        };
    }
    let call = GetLogsArgs {
        app_id: id,
        latest_only: Some(!args.all),
        service_name: args.service,
        environment: None,
    };
    let logs = platform::get_app_logs(&call).and_then(|call| client.run(call));
    finish(logs, |r| {
        for entry in &r.logs {
            println!(
                "=== {} {} ({} bytes)",
                entry.service,
                entry.kind.as_str(),
                entry.size
            );
            match platform::fetch_text(&entry.url) {
                Ok(text) => print!("{text}"),
                Err(e) => println!("(cannot fetch: {e})"),
            }
        }
    })
}

pub fn login(args: LoginArgs) -> ExitCode {
    // Trusted before the first request (an invite or SSO login talks to the server), saved
    // only once the login has succeeded.
    let ca_file = match args
        .ca_file
        .as_deref()
        .map(slipway_platform_client::trust::add_ca_file)
    {
        None => None,
        Some(Ok(path)) => Some(path),
        Some(Err(e)) => return fail(&e.to_string()),
    };
    let outcome = if let Some(code) = &args.invite {
        login_invite(&args, code)
    } else if args.sso {
        login_sso(&args)
    } else {
        login_token(&args)
    }
    .and_then(|()| match &ca_file {
        Some(path) => platform::credentials::set_ca_file(&args.environment, path)
            .map(|()| {
                println!(
                    "The certificate authority in {} is trusted for this environment.",
                    path.display()
                );
            })
            .map_err(|e| e.to_string()),
        None => Ok(()),
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

/// `--url` or, without it, the error saying it is needed for `what`.
fn url_for<'a>(args: &'a LoginArgs, what: &str) -> Result<&'a str, String> {
    args.url
        .as_deref()
        .ok_or_else(|| format!("--url is needed {what}"))
}

fn login_token(args: &LoginArgs) -> Result<(), String> {
    let url = url_for(args, "with a token")?;
    let token = match &args.token_file {
        Some(path) => std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display())),
        None => {
            let mut buf = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut buf)
                .map(|_| buf)
                .map_err(|e| e.to_string())
        }
    }
    .map_err(|e| format!("cannot read the token: {e}"))?;
    let store =
        platform::credentials::login(&args.environment, url, &token).map_err(|e| e.to_string())?;
    println!(
        "Logged in to {url} as environment {:?}; {}",
        args.environment,
        stored_in(&store)
    );
    Ok(())
}

/// Where the token went, in words.
fn stored_in(store: &platform::credentials::TokenStore) -> String {
    match store {
        platform::credentials::TokenStore::Keyring => "the token is in the OS keyring.".to_owned(),
        platform::credentials::TokenStore::File(path) => format!(
            "no OS keyring is available here (or SLIPWAY_TOKEN_STORE=file), so the token is in {} (readable by you only).",
            path.display()
        ),
    }
}

/// `--invite CODE`: accepts the invite, then stores the first token as a login does.
fn login_invite(args: &LoginArgs, code: &str) -> Result<(), String> {
    let (code, url) = match platform::join::parse_invite_link(code) {
        Some((code, url)) => (code, args.url.clone().unwrap_or(url)),
        None => (
            code.to_owned(),
            url_for(
                args,
                "with an invite code (a slipway://invite link carries it)",
            )?
            .to_owned(),
        ),
    };
    let joined =
        platform::accept_invite(&url, &code, args.name.as_deref()).map_err(|e| e.to_string())?;
    let store = platform::credentials::login(&args.environment, &url, joined.token.expose())
        .map_err(|e| e.to_string())?;
    println!(
        "Joined {url} as {} <{}> ({}), environment {:?}.",
        joined.name, joined.email, joined.role, args.environment
    );
    println!(
        "Your token expires at {}; {}",
        joined.expires_at,
        stored_in(&store)
    );
    Ok(())
}

/// `--sso`: the browser signs in at the company's identity provider; the platform's token
/// comes back to a loopback listener and is stored as a login does.
fn login_sso(args: &LoginArgs) -> Result<(), String> {
    let url = url_for(args, "with --sso")?;
    let status = platform::sso_status(url).map_err(|e| e.to_string())?;
    if !status.enabled {
        return Err(format!(
            "the platform at {url} has no single sign-on (it was started without --oidc-issuer); \
             sign in with an invite (`slipway login --invite CODE --url {url}`) or a token (`--token-file`)"
        ));
    }
    let sign_in = platform::sso::begin(url).map_err(|e| e.to_string())?;
    // Tests and scripts read the address: it is alone on its line, on stdout.
    println!("Open this address in a browser to sign in:");
    println!("{}", sign_in.sign_in_url());
    let _ = std::io::Write::flush(&mut std::io::stdout());
    if !args.no_browser
        && let Err(e) = open::that_detached(sign_in.sign_in_url())
    {
        eprintln!("(could not open a browser: {e}; open the address above yourself)");
    }
    eprintln!(
        "Waiting for the browser to come back from {} (up to 5 minutes)…",
        status.issuer.as_deref().unwrap_or("the identity provider")
    );
    let signed_in = sign_in.wait(SSO_WAIT).map_err(|e| e.to_string())?;
    let store = platform::credentials::login(&args.environment, url, signed_in.token.expose())
        .map_err(|e| e.to_string())?;
    println!(
        "Signed in to {url} as {} <{}>, environment {:?}.",
        signed_in.name, signed_in.email, args.environment
    );
    println!(
        "Your token expires at {}; {}",
        signed_in.expires_at,
        stored_in(&store)
    );
    Ok(())
}

pub fn logout(args: LogoutArgs) -> ExitCode {
    match platform::credentials::sign_out(&args.environment) {
        Ok(()) => {
            println!(
                "Logged out of environment {:?}: its tokens are gone from the keyring and the token files.",
                args.environment
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e.to_string()),
    }
}

pub fn whoami(args: LogoutArgs) -> ExitCode {
    let who = Endpoint::from_env(Some(&args.environment))
        .and_then(Client::new)
        .and_then(|c| platform::whoami(&c).map(|me| (c.base_url().to_owned(), me)));
    match who {
        Ok((url, me)) => {
            println!(
                "{} <{}>, {} on {url} (environment {:?})",
                me.name,
                me.email,
                me.role.as_str(),
                args.environment
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e.to_string()),
    }
}

/// The first line of a deployment in `slipway deployments`.
fn deployment_line(d: &Deployment) -> String {
    let secrets: Vec<String> = d
        .services
        .iter()
        .flat_map(|s| &s.secrets)
        .map(|s| format!("{}@v{}", s.path, s.version))
        .collect();
    format!(
        "{}  {:<10} {:<8} {}{}{}",
        d.id,
        d.status.as_str(),
        d.cause.as_str(),
        d.created_at,
        d.commit.as_ref().map(commit_words).unwrap_or_default(),
        if secrets.is_empty() {
            String::new()
        } else {
            format!("  secrets {}", secrets.join(", "))
        }
    )
}

/// A commit as one line shows it: `  abc123def456 (main) Subject — Author`.
fn commit_words(c: &slipway_platform_client::git::GitCommit) -> String {
    format!(
        "  {} ({}) {} — {}",
        &c.sha[..c.sha.len().min(12)],
        c.branch,
        c.subject,
        c.author
    )
}

pub fn deployments(args: DeploymentsArgs) -> ExitCode {
    let (client, id) = match client().and_then(|c| app_id(args.app_id).map(|id| (c, id))) {
        Ok(v) => v,
        Err(e) => return fail(&e),
    };
    let outcome = platform::history::deployments(&client, &id, args.limit.clamp(1, 100));
    finish(outcome, |r| {
        for d in &r.deployments {
            println!("{}", deployment_line(d));
            for s in &d.services {
                println!("    {:<12} {}", s.service, s.image_digest);
            }
            if let Some(reason) = &d.reason {
                println!("    reason: {reason}");
            }
        }
    })
}

pub fn rollback(args: RollbackArgs) -> ExitCode {
    let (client, id) = match client().and_then(|c| app_id(args.app).map(|id| (c, id))) {
        Ok(v) => v,
        Err(e) => return fail(&e),
    };
    let outcome = platform::history::rollback(&client, &id, args.deployment.as_deref());
    finish(outcome, |r| {
        println!("rolling back to {}: {}", r.rollback_of, r.message);
        println!("follow it with: slipway status --watch {id}");
    })
}

pub fn why(args: WhyArgs) -> ExitCode {
    let (client, id) = match client().and_then(|c| app_id(args.app_id).map(|id| (c, id))) {
        Ok(v) => v,
        Err(e) => return fail(&e),
    };
    finish(platform::history::diagnosis(&client, &id), |r| {
        show_diagnosis(r, &id);
    })
}

/// `slipway why`'s report: the status and reason, each failing service's and a failed
/// build's log tail, the devfile's errors, and what changed since the app last ran well.
fn show_diagnosis(r: &Diagnosis, id: &str) {
    println!("status: {}", r.status.as_str());
    if let Some(reason) = &r.reason {
        println!("reason: {reason}");
    }
    if let Some(c) = &r.commit {
        println!("commit:{}", commit_words(c));
    }
    for s in &r.failing_services {
        println!(
            "\nservice {} is {}; its log ends:",
            s.service,
            s.status.as_str()
        );
        for line in s.log_tail.lines() {
            println!("  | {line}");
        }
    }
    if let Some(b) = &r.failed_build {
        println!(
            "\nthe newest build ({}) failed: {}",
            b.service,
            b.error.as_deref().unwrap_or("")
        );
        for line in b.log_tail.lines() {
            println!("  | {line}");
        }
    }
    for e in r.devfile.iter().flat_map(|d| &d.errors) {
        println!("devfile error: {e}");
    }
    if let Some(good) = &r.last_good_deployment_id {
        println!("\nsince the last deployment that ran well ({good}):");
        if let Some(changes) = &r.changes_since_last_good {
            for i in &changes.images {
                println!("  image of {} changed", i.service);
            }
            let version = |v: Option<i64>| v.map_or_else(|| "null".to_owned(), |v| v.to_string());
            for s in &changes.secrets {
                println!(
                    "  secret {} of {}: version {} -> {}",
                    s.path,
                    s.service,
                    version(s.from_version),
                    version(s.to_version)
                );
            }
            if changes.devfile.changed {
                print!("{}", changes.devfile.diff);
            }
        }
        println!("roll back with: slipway rollback {good} --app {id}");
    }
}
