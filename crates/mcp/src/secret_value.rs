//! A secret's value typed by the person, never by the model: `create_secret` or
//! `update_secret` called without `data` asks the platform for a page
//! (`POST /v1/secrets/entry-requests`), sends the person there through the client, and
//! answers with what the page wrote.
//!
//! - Protocol 2026-07-28: an input-required result holding a URL-mode elicitation and a sealed
//!   `requestState` naming the tool, a digest of its arguments and the page's request; the
//!   client opens the page, then calls again, and the call reads the outcome (a page still
//!   waiting is asked for again, with the same address).
//! - Older protocols, on a client that declared URL-mode elicitation: an `elicitation/create`
//!   request in URL mode; once the person accepted, the call waits for the page (ten minutes
//!   at most).
//! - Any other client: a tool error naming the page, for the assistant to pass on; the secret
//!   is written when the person saves it there.

use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitationAction, InputRequest,
    InputRequests, InputRequiredResult, ProtocolVersion, SealOptions,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use slipway_platform_client::{
    Client, EntryRequest, EntryStatus, ToolError, WriteSecretArgs, ask_for_value,
    cancel_entry_request, entry_request, typed_by_person,
};

/// The input request's key.
const KEY: &str = "secret_value";
/// How long an answer's state stays good (the page's own life).
const TTL: Duration = Duration::from_secs(600);
/// How often a waiting call looks at the page (older protocols).
const POLL: Duration = Duration::from_secs(1);

/// What the call does next.
#[derive(Debug)]
pub(crate) enum Typed {
    /// Send the person to the page (2026-07-28): answer the call with this.
    Ask(InputRequiredResult),
    /// The tool's outcome.
    Done(Result<Value, ToolError>),
}

/// What the sealed request state carries.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Asked {
    tool: String,
    digest: String,
    /// The platform's entry request.
    id: String,
}

/// Whether a call of `tool` with `args` is one the person types the value of.
pub(crate) fn wanted(tool: &str, args: &Value) -> Option<WriteSecretArgs> {
    if !matches!(tool, "create_secret" | "update_secret") {
        return None;
    }
    let parsed: WriteSecretArgs = serde_json::from_value(args.clone()).ok()?;
    parsed
        .data
        .as_ref()
        .is_none_or(Value::is_null)
        .then_some(parsed)
}

/// Runs `f` off the async threads (the platform client blocks).
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, McpError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| McpError::internal_error(format!("the secret's page stopped: {e}"), None))
}

/// The person's value for `tool` with `args` (parsed: `parsed`), asked of the platform that
/// `connect` reaches; `client_name` is shown on the page.
pub(crate) async fn typed(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    tool: &str,
    args: &Value,
    parsed: WriteSecretArgs,
    connect: impl Fn() -> Result<Client, ToolError> + Send + Sync + Clone + 'static,
    client_name: Option<String>,
) -> Result<Typed, McpError> {
    let create = tool == "create_secret";
    let stateless = context
        .meta
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    let digest = crate::confirm::digest(args);
    let expected = |id: &str| Asked {
        tool: tool.to_owned(),
        digest: digest.clone(),
        id: id.to_owned(),
    };
    if stateless
        && let Some(asked) = request
            .request_state
            .as_deref()
            .and_then(|s| crate::confirm::codec().open_json::<Asked>(s).ok())
        && asked == expected(&asked.id)
    {
        let answer = crate::confirm::answer(request, KEY);
        let id = asked.id.clone();
        let c = connect.clone();
        if answer.is_some_and(|a| a.action != ElicitationAction::Accept) {
            blocking(move || c().and_then(|c| cancel_entry_request(&c, &id)))
                .await?
                .ok();
            return Ok(Typed::Done(Err(declined(&parsed))));
        }
        let found = blocking(move || c().and_then(|c| entry_request(&c, &id))).await?;
        match found {
            Ok(entry) => {
                if let Some(done) = finished(&entry, create) {
                    return Ok(Typed::Done(done));
                }
                return Ok(Typed::Ask(ask(&entry, &parsed, &expected(&entry.id))));
            }
            // Gone (a restart, or long ago): a new page below.
            Err(ToolError::NotFound(_)) => {}
            Err(e) => return Ok(Typed::Done(Err(e))),
        }
    }
    let c = connect.clone();
    let args_for_page = parsed.clone();
    let asked = blocking(move || {
        c().and_then(|c| ask_for_value(&c, &args_for_page, create, client_name.as_deref()))
    })
    .await?;
    let entry = match asked {
        Ok(entry) => entry,
        Err(e) => return Ok(Typed::Done(Err(e))),
    };
    if stateless {
        return Ok(Typed::Ask(ask(&entry, &parsed, &expected(&entry.id))));
    }
    let can_open = context.peer.peer_info().is_some_and(|info| {
        info.capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.url.is_some())
    });
    if !can_open {
        return Ok(Typed::Done(Err(pass_on(&entry))));
    }
    match context
        .peer
        .create_elicitation(to_page(&entry, &parsed))
        .await
    {
        Ok(answer) if answer.action == ElicitationAction::Accept => {
            wait(connect, entry.id.clone(), create, context.ct.clone()).await
        }
        Ok(_) => {
            let id = entry.id.clone();
            blocking(move || connect().and_then(|c| cancel_entry_request(&c, &id)))
                .await?
                .ok();
            Ok(Typed::Done(Err(declined(&parsed))))
        }
        Err(_) => Ok(Typed::Done(Err(pass_on(&entry)))),
    }
}

/// The tool's outcome, once the page has one.
fn finished(entry: &EntryRequest, create: bool) -> Option<Result<Value, ToolError>> {
    match entry.status {
        EntryStatus::Waiting => None,
        EntryStatus::Written => Some(match &entry.secret {
            Some(secret) => serde_json::to_value(typed_by_person(secret.clone(), create))
                .map_err(|e| ToolError::Internal(e.to_string())),
            None => Err(ToolError::Internal(
                "the page wrote a secret and did not say which".into(),
            )),
        }),
        EntryStatus::Declined => Some(Err(ToolError::PermissionDenied(format!(
            "nothing was written: {}",
            entry.message.as_deref().unwrap_or("the person declined")
        )))),
    }
}

/// Waits (older protocols) for the person to save or decline on the page, looking once a
/// second; a call the client cancels closes the page.
async fn wait(
    connect: impl Fn() -> Result<Client, ToolError> + Send + Sync + Clone + 'static,
    id: String,
    create: bool,
    cancelled: tokio_util::sync::CancellationToken,
) -> Result<Typed, McpError> {
    let until = Instant::now() + TTL + POLL;
    while Instant::now() < until {
        let (c, asked) = (connect.clone(), id.clone());
        match blocking(move || c().and_then(|c| entry_request(&c, &asked))).await? {
            Ok(entry) => {
                if let Some(done) = finished(&entry, create) {
                    return Ok(Typed::Done(done));
                }
            }
            Err(e) => return Ok(Typed::Done(Err(e))),
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = cancelled.cancelled() => {
                blocking(move || connect().and_then(|c| cancel_entry_request(&c, &id)))
                    .await?
                    .ok();
                return Ok(Typed::Done(Err(ToolError::PermissionDenied(
                    "the call was cancelled; the page takes no value any more".into(),
                ))));
            }
        }
    }
    Ok(Typed::Done(Err(ToolError::PermissionDenied(
        "nobody typed the value in time; nothing was written".into(),
    ))))
}

/// What the person reads in their client.
fn message(args: &WriteSecretArgs) -> String {
    format!(
        "Type the value of the {} secret {} on Slipway's page. It goes to Slipway's vault, never through the assistant.",
        args.secret_type.as_str(),
        args.secret_path
    )
}

/// The URL-mode request sending the person to `entry`'s page.
fn to_page(entry: &EntryRequest, args: &WriteSecretArgs) -> ElicitRequestParams {
    ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message: message(args),
        url: entry.url.clone().unwrap_or_default(),
        elicitation_id: entry.id.clone(),
    }
}

/// The input-required result sending the person to `entry`'s page.
fn ask(entry: &EntryRequest, args: &WriteSecretArgs, asked: &Asked) -> InputRequiredResult {
    let ask = ElicitRequest::new(to_page(entry, args));
    let mut requests = InputRequests::new();
    requests.insert(KEY.to_owned(), InputRequest::Elicitation(ask));
    let state = crate::confirm::codec()
        .seal_json_with(asked, &SealOptions::new().ttl(TTL))
        .ok();
    InputRequiredResult::new(Some(requests), state)
}

/// The person said no in the client.
fn declined(args: &WriteSecretArgs) -> ToolError {
    ToolError::PermissionDenied(format!(
        "the person declined to type the value of {}; nothing was written",
        args.secret_path
    ))
}

/// For a client that cannot open pages: the assistant passes the address on.
fn pass_on(entry: &EntryRequest) -> ToolError {
    let url = entry.url.as_deref().unwrap_or_default();
    ToolError::invalid(
        "data",
        format!(
            "was not given, so the person types the value: ask them to open {url} (it works until {}) and save it there; the secret is written then (list_secrets shows it). Never ask them for the value itself.",
            entry.expires_at
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_secret_write_without_data_is_typed_by_the_person() {
        let target = serde_json::json!({"secret_type": "user", "secret_path": "api"});
        assert!(wanted("create_secret", &target).is_some());
        assert!(wanted("update_secret", &target).is_some());
        let mut null = target.clone();
        null["data"] = Value::Null;
        assert!(wanted("create_secret", &null).is_some());
        let mut given = target.clone();
        given["data"] = serde_json::json!("{\"K\": \"v\"}");
        assert!(
            wanted("create_secret", &given).is_none(),
            "the value came with the call"
        );
        assert!(wanted("get_secret", &target).is_none());
        // Arguments the tool would refuse are left to it, which names the field.
        assert!(wanted("create_secret", &serde_json::json!({"secret_path": 3})).is_none());
    }

    #[test]
    fn a_page_answers_the_call_once_it_has_an_outcome() {
        let entry = |status: &str, secret: Value| -> EntryRequest {
            serde_json::from_value(serde_json::json!({
                "id": "e1", "status": status, "url": null, "expires_at": "2026-11-29T10:00:00Z",
                "secret": secret, "message": "the person declined on Slipway's page"
            }))
            .unwrap()
        };
        assert!(finished(&entry("waiting", Value::Null), true).is_none());
        let secret = serde_json::json!({
            "secret_type": "app", "app_id": "a1", "secret_path": "stripe", "version": 2,
            "created_at": "2026-11-29T10:00:00Z", "updated_at": "2026-11-29T10:00:00Z"
        });
        let written = finished(&entry("written", secret), false).unwrap().unwrap();
        assert_eq!(written["version"], 2);
        assert!(written["message"].as_str().unwrap().contains("typed"));
        let declined = finished(&entry("declined", Value::Null), true).unwrap();
        assert!(declined.unwrap_err().to_string().contains("declined"));
    }
}
