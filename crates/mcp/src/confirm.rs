//! The person's confirmation before a destructive tool runs (`destructiveHint: true` among the
//! platform's tools: deleting an app or a secret, disabling an app, revoking a role, removing a
//! domain, disconnecting a git source). The assistant cannot confirm for them: no argument
//! does; the question goes to the person through the client.
//!
//! - Protocol 2026-07-28: the call answers with an input-required result holding a form
//!   elicitation (`confirm: boolean`) and a sealed `requestState` naming the tool and a digest
//!   of its arguments (ten minutes); the client asks the person and calls again with their
//!   answer and the state, which must open and match the call.
//! - Older protocols, on a connection that can carry a server request (stdio, a client that
//!   declared the elicitation capability): an `elicitation/create` request, awaited.
//! - A client that can do neither gets a tool error saying so and naming the command that does
//!   the same with the person at the keyboard.

use std::sync::OnceLock;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, ProtocolVersion,
    RequestStateCodec, SealOptions,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The input request's key, and the form's field.
const KEY: &str = "confirm";
/// How long a question stays answerable.
const TTL: Duration = Duration::from_secs(600);

/// What to do with a destructive call.
#[derive(Debug)]
pub(crate) enum Confirmation {
    /// The person said yes: run it.
    Confirmed,
    /// Ask first (2026-07-28): answer the call with this.
    Ask(InputRequiredResult),
    /// Not run, and why (the person said no, or could not be asked).
    Refused(String),
}

/// What the sealed request state carries.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Asked {
    tool: String,
    digest: String,
}

/// The server's key for sealing request states (confirmations, secrets' pages): random per
/// process (a state outlives neither the process nor ten minutes).
pub(crate) fn codec() -> &'static RequestStateCodec {
    static CODEC: OnceLock<RequestStateCodec> = OnceLock::new();
    CODEC.get_or_init(|| {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the operating system gives randomness");
        RequestStateCodec::try_new(key.to_vec()).expect("a 32-byte key is long enough")
    })
}

/// SHA-256 of the arguments as sent (so an answer confirms this call and no other).
pub(crate) fn digest(args: &Value) -> String {
    let bytes = serde_json::to_vec(args).unwrap_or_default();
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The question, naming what would be destroyed.
pub(crate) fn question(tool: &str, args: &Value) -> String {
    let arg = |name: &str| args.get(name).and_then(Value::as_str).unwrap_or("?");
    match tool {
        "delete_app" => format!(
            "Delete app {} for good, with its databases, caches, buckets, volumes, secrets and history? This cannot be undone.",
            arg("app_id")
        ),
        "disable_app" => format!(
            "Disable app {}? Every service of it stops until it is enabled again.",
            arg("app_id")
        ),
        "delete_secret" => format!(
            "Delete the {} secret at {} (every version)? Apps that read it will not find it.",
            arg("secret_type"),
            arg("secret_path")
        ),
        "revoke_app_role" => format!(
            "Take the {} role on app {} away from {}?",
            arg("role"),
            arg("app_id"),
            arg("user_id")
        ),
        "remove_domain" => format!(
            "Stop serving app {} at {}? Its certificate goes with it.",
            arg("app_id"),
            arg("name")
        ),
        "disconnect_git_source" => format!(
            "Disconnect the git source of app {}? Its pull-request previews are deleted with their data.",
            arg("app_id")
        ),
        _ => format!("Run {tool}? It cannot be undone."),
    }
}

/// The command a person runs to do `tool` themselves.
fn by_hand(tool: &str) -> &'static str {
    match tool {
        "delete_app" => "slipway apps delete APP",
        "disable_app" => "slipway apps disable APP",
        "delete_secret" => "slipway secrets delete …",
        "revoke_app_role" => "slipway share revoke …",
        "remove_domain" => "slipway domains remove …",
        "disconnect_git_source" => "slipway git disconnect",
        _ => "the slipway CLI",
    }
}

/// Asks (or reads the answer) before `tool` runs with `args`.
pub(crate) async fn confirm(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    tool: &str,
    args: &Value,
) -> Result<Confirmation, McpError> {
    let message = question(tool, args);
    let stateless = context
        .meta
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    if stateless {
        return Ok(answered_or_ask(request, tool, args, message));
    }
    let can_ask = context
        .peer
        .peer_info()
        .is_some_and(|info| info.capabilities.elicitation.is_some());
    if !can_ask {
        return Ok(Confirmation::Refused(format!(
            "{tool} needs the person's confirmation, and this client cannot ask them (it offers no elicitation). Ask them to run `{}` themselves, or to use an assistant that can ask.",
            by_hand(tool)
        )));
    }
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema(),
    };
    match context.peer.create_elicitation(params).await {
        Ok(answer) => Ok(decide(&answer, tool)),
        Err(e) => Ok(Confirmation::Refused(format!(
            "{tool} needs the person's confirmation, and asking them failed ({e}); nothing was done"
        ))),
    }
}

fn schema() -> ElicitationSchema {
    ElicitationSchema::builder()
        .required_bool_property(KEY, |b| {
            b.title("Confirm")
                .description("Yes, do it. Nothing happens otherwise.")
                .with_default(false)
        })
        .build_unchecked()
}

/// The person's answer, read.
fn decide(answer: &ElicitResult, tool: &str) -> Confirmation {
    let yes = answer.action == ElicitationAction::Accept
        && answer
            .content
            .as_ref()
            .and_then(|c| c.get(KEY))
            .and_then(Value::as_bool)
            == Some(true);
    if yes {
        Confirmation::Confirmed
    } else {
        Confirmation::Refused(format!(
            "the person did not confirm {tool}; nothing was done"
        ))
    }
}

/// The person's answer to input request `key` that came with this call (2026-07-28), if any.
pub(crate) fn answer(request: &CallToolRequestParams, key: &str) -> Option<ElicitResult> {
    request
        .input_responses
        .as_ref()
        .and_then(|r| r.get(key))
        .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
}

/// 2026-07-28: the answer that came with this call, if it is one to this very call; else the
/// question.
fn answered_or_ask(
    request: &CallToolRequestParams,
    tool: &str,
    args: &Value,
    message: String,
) -> Confirmation {
    let expected = Asked {
        tool: tool.to_owned(),
        digest: digest(args),
    };
    let answer = answer(request, KEY);
    if let (Some(answer), Some(state)) = (answer, request.request_state.as_deref()) {
        let opened: Option<Asked> = codec().open_json(state).ok();
        if opened.as_ref() == Some(&expected) {
            return decide(&answer, tool);
        }
        // A state for another call, tampered with or too old: ask again.
    }
    let ask = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema(),
    });
    let mut requests = InputRequests::new();
    requests.insert(KEY.to_owned(), InputRequest::Elicitation(ask));
    let state = codec()
        .seal_json_with(&expected, &SealOptions::new().ttl(TTL))
        .ok();
    Confirmation::Ask(InputRequiredResult::new(Some(requests), state))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_name_what_would_be_destroyed() {
        let q = question("delete_app", &serde_json::json!({"app_id": "a1"}));
        assert!(q.contains("a1") && q.contains("cannot be undone"), "{q}");
        let q = question(
            "delete_secret",
            &serde_json::json!({"secret_type": "app", "secret_path": "db/pw"}),
        );
        assert!(q.contains("db/pw"), "{q}");
    }

    #[test]
    fn an_answer_confirms_only_the_call_it_was_asked_for() {
        let args = serde_json::json!({"app_id": "a1"});
        let Confirmation::Ask(asked) = answered_or_ask(
            &CallToolRequestParams::new("delete_app"),
            "delete_app",
            &args,
            "q".into(),
        ) else {
            panic!("it asks first");
        };
        let state = asked.request_state.clone().unwrap();
        let yes = serde_json::json!({"action": "accept", "content": {"confirm": true}});
        let answer = |state: &str| {
            let mut r = CallToolRequestParams::new("delete_app");
            let mut responses = rmcp::model::InputResponses::new();
            responses.insert(KEY.to_owned(), yes.clone());
            r.input_responses = Some(responses);
            r.request_state = Some(state.to_owned());
            r
        };
        assert!(matches!(
            answered_or_ask(&answer(&state), "delete_app", &args, "q".into()),
            Confirmation::Confirmed
        ));
        // The same answer for other arguments, or a state made up: asked again.
        let other = serde_json::json!({"app_id": "a2"});
        assert!(matches!(
            answered_or_ask(&answer(&state), "delete_app", &other, "q".into()),
            Confirmation::Ask(_)
        ));
        assert!(matches!(
            answered_or_ask(&answer("made-up"), "delete_app", &args, "q".into()),
            Confirmation::Ask(_)
        ));
        // A no is a no.
        let no = serde_json::json!({"action": "accept", "content": {"confirm": false}});
        let mut r = answer(&state);
        r.input_responses
            .as_mut()
            .unwrap()
            .insert(KEY.to_owned(), no);
        assert!(matches!(
            answered_or_ask(&r, "delete_app", &args, "q".into()),
            Confirmation::Refused(_)
        ));
    }
}
