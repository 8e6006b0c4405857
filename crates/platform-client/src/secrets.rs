//! The secrets tools: create_secret, get_secret, list_secrets, update_secret, delete_secret,
//! share_secret. Arguments are checked here first (scope, `app_id` with scope `app`, the path
//! rule, `data`/`metadata` as JSON-encoded objects) so a bad call fails without a request;
//! the platform checks everything again.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::apps::{encode, uuid_arg};
use crate::client::Client;
use crate::error::ToolError;
use crate::one_call::OneCall;

/// `secret_type`: `user` (private to the caller), `app` (needs `app_id`), `shared` (readable
/// by every account member).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SecretType {
    /// Private to the caller.
    User,
    /// Tied to an app; needs `app_id`.
    App,
    /// Readable by every member of the account.
    Shared,
}

impl SecretType {
    /// How the tools and the platform spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            SecretType::User => "user",
            SecretType::App => "app",
            SecretType::Shared => "shared",
        }
    }
}

/// Declares the arguments of a secrets tool: deserialised refusing unknown fields (a
/// misspelt argument is an error, not ignored), described by a JSON Schema for the tool
/// listing, and ending with the `environment` every platform tool takes (the registry reads
/// it to choose the platform before the arguments are parsed).
macro_rules! secret_tool_args {
    ($(#[$attr:meta])* pub struct $name:ident { $($fields:tt)* }) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($fields)*
            /// Environment (default production).
            #[serde(default)]
            pub environment: Option<String>,
        }
    };
}

secret_tool_args! {
    /// Arguments of `create_secret` and `update_secret`.
    pub struct WriteSecretArgs {
        /// user, app or shared.
        pub secret_type: SecretType,
        /// Path such as `db/credentials`: no leading `/`, no `..`; letters, digits, `.`, `_`, `-`
        /// and `/` separators.
        pub secret_path: String,
        /// JSON-encoded object of key-value pairs, for example `{"password": "…"}` (an object is
        /// accepted too). Omit it at a tool server (`slipway mcp`, the platform's `/mcp`) and
        /// the person types the value on a Slipway page instead, so it never passes through the
        /// assistant: do that for passwords, keys and tokens the person has not given you.
        #[serde(default)]
        #[schemars(with = "Option<String>")]
        pub data: Option<Value>,
        /// Optional JSON-encoded object of key-value pairs describing the secret; on update,
        /// omitted keeps the previous metadata.
        #[serde(default)]
        #[schemars(with = "Option<String>")]
        pub metadata: Option<Value>,
        /// App UUID; required when secret_type is app.
        #[serde(default)]
        pub app_id: Option<String>,
    }
}

secret_tool_args! {
    /// Arguments of `get_secret`.
    pub struct GetSecretArgs {
        /// user, app or shared.
        pub secret_type: SecretType,
        /// The secret's path.
        pub secret_path: String,
        /// App UUID; required when secret_type is app.
        #[serde(default)]
        pub app_id: Option<String>,
        /// A kept version to read instead of the latest.
        #[serde(default)]
        pub version: Option<i64>,
    }
}

secret_tool_args! {
    /// Arguments of `delete_secret`.
    pub struct DeleteSecretArgs {
        /// user, app or shared.
        pub secret_type: SecretType,
        /// The secret's path.
        pub secret_path: String,
        /// App UUID; required when secret_type is app.
        #[serde(default)]
        pub app_id: Option<String>,
    }
}

secret_tool_args! {
    /// Arguments of `list_secrets`.
    pub struct ListSecretsArgs {
        /// user, app or shared.
        pub secret_type: SecretType,
        /// Only paths starting with this.
        #[serde(default)]
        pub prefix: Option<String>,
        /// From the previous page's result.
        #[serde(default)]
        pub next_token: Option<String>,
        /// App UUID; required when secret_type is app.
        #[serde(default)]
        pub app_id: Option<String>,
    }
}

secret_tool_args! {
    /// Arguments of `share_secret`.
    pub struct ShareSecretArgs {
        /// Scope of the source: user, app or shared.
        pub from_secret_type: SecretType,
        /// Path of the source.
        pub from_secret_path: String,
        /// Destination path in the shared namespace (must not exist yet).
        pub to_shared_path: String,
        /// App UUID when the source is an app secret.
        #[serde(default)]
        pub app_id: Option<String>,
        /// Copy the source's metadata too (default true).
        #[serde(default)]
        pub copy_metadata: Option<bool>,
    }
}

/// The path rule the platform applies ([`slipway_devfile::secret_path`]), checked here so
/// the error comes before any request.
pub fn check_path(field: &str, path: &str) -> Result<(), ToolError> {
    slipway_devfile::secret_path::check(path).map_err(|rule| ToolError::invalid(field, rule))
}

/// A JSON-encoded object (or an object) as an object; the error names the field.
fn pairs(field: &str, value: &Value) -> Result<Map<String, Value>, ToolError> {
    let parsed = match value {
        Value::String(text) => serde_json::from_str::<Value>(text).map_err(|e| {
            ToolError::invalid(
                field,
                format!(
                    "must be a JSON-encoded object such as {{\"password\": \"…\"}}; it is not valid JSON: {e}"
                ),
            )
        })?,
        other => other.clone(),
    };
    match parsed {
        Value::Object(map) => Ok(map),
        other => Err(ToolError::invalid(
            field,
            format!(
                "must be a JSON object of key-value pairs such as {{\"password\": \"…\"}}, not {}",
                slipway_server::json::kind(&other)
            ),
        )),
    }
}

/// The scope's part of a request: `secret_type` and, for app secrets, a checked `app_id`.
fn scope(
    kind: SecretType,
    app_id: Option<&str>,
    field: &str,
) -> Result<Vec<(&'static str, String)>, ToolError> {
    let mut out = vec![(field_name(field), kind.as_str().to_owned())];
    match (kind, app_id) {
        (SecretType::App, Some(id)) => out.push(("app_id", uuid_arg("app_id", id)?)),
        (SecretType::App, None) => {
            return Err(ToolError::invalid(
                "app_id",
                format!("is required when {field} is app"),
            ));
        }
        (_, Some(_)) => {
            return Err(ToolError::invalid(
                "app_id",
                format!("is only used when {field} is app"),
            ));
        }
        (_, None) => {}
    }
    Ok(out)
}

fn field_name(field: &str) -> &'static str {
    if field == "from_secret_type" {
        "from_secret_type"
    } else {
        "secret_type"
    }
}

fn query(pairs: &[(&str, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn body(pairs: Vec<(&'static str, String)>) -> Map<String, Value> {
    pairs
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Value::String(v)))
        .collect()
}

/// The secret a write names, and its metadata when given: what a write's body and an entry
/// request's share.
fn target_body(args: &WriteSecretArgs) -> Result<Map<String, Value>, ToolError> {
    check_path("secret_path", &args.secret_path)?;
    let mut out = body(scope(
        args.secret_type,
        args.app_id.as_deref(),
        "secret_type",
    )?);
    out.insert("secret_path".into(), json!(args.secret_path));
    if let Some(m) = &args.metadata {
        out.insert("metadata".into(), Value::Object(pairs("metadata", m)?));
    }
    Ok(out)
}

fn write_body(args: &WriteSecretArgs) -> Result<Value, ToolError> {
    let mut out = target_body(args)?;
    let data = args.data.as_ref().filter(|d| !d.is_null()).ok_or_else(|| {
        ToolError::invalid(
            "data",
            "is required here; a tool server (slipway mcp, the platform's /mcp) asks the person to type it when it is omitted",
        )
    })?;
    out.insert("data".into(), Value::Object(pairs("data", data)?));
    Ok(Value::Object(out))
}

/// A secret without its value, as the platform answers a write and lists secrets. The scope's
/// `app_id` is shown only for app secrets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretInfo {
    /// The scope.
    pub secret_type: SecretType,
    /// The app of an app secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_id: Option<String>,
    /// The path.
    pub secret_path: String,
    /// The latest version.
    pub version: i64,
    /// RFC 3339: when version 1 was written.
    pub created_at: String,
    /// RFC 3339: when the latest version was written.
    pub updated_at: String,
}

/// `create_secret`'s and `update_secret`'s result: the secret written, and what happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretWritten {
    /// The secret as it is now.
    #[serde(flatten)]
    pub secret: SecretInfo,
    /// What happened, in words.
    pub message: String,
}

/// `share_secret`'s result: the new shared secret, and its path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SharedSecret {
    /// The copy, in the shared namespace.
    #[serde(flatten)]
    pub written: SecretWritten,
    /// Where the copy is.
    pub to_shared_path: String,
}

/// `get_secret`'s result: one version's data and metadata with the secret's versions and
/// times, as the platform answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretValue {
    /// The scope.
    pub secret_type: SecretType,
    /// The app of an app secret, else null.
    pub app_id: Option<String>,
    /// The path.
    pub secret_path: String,
    /// The version returned.
    pub version: i64,
    /// The latest version.
    pub latest_version: i64,
    /// The versions still kept, oldest first.
    pub versions: Vec<i64>,
    /// The key-value pairs (any JSON value, as they were written).
    pub data: Map<String, Value>,
    /// Metadata key-value pairs (empty when none).
    pub metadata: Map<String, Value>,
    /// RFC 3339: when version 1 was written.
    pub created_at: String,
    /// RFC 3339: when the latest version was written.
    pub updated_at: String,
    /// RFC 3339: when the returned version was written.
    pub version_created_at: String,
}

/// One secret of `list_secrets`: its path, latest version and times (never a value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretEntry {
    /// The path.
    pub secret_path: String,
    /// The latest version.
    pub version: i64,
    /// RFC 3339: when version 1 was written.
    pub created_at: String,
    /// RFC 3339: when the latest version was written.
    pub updated_at: String,
}

/// `list_secrets`'s result: one page of a scope's secrets, in path order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretList {
    /// The scope listed.
    pub secret_type: SecretType,
    /// The secrets' paths, for a quick look.
    pub paths: Vec<String>,
    /// The secrets.
    pub secrets: Vec<SecretEntry>,
    /// Pass as `next_token` for the next page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

/// The platform's page of secrets.
#[derive(Debug, Deserialize)]
struct SecretPage {
    secrets: Vec<SecretEntry>,
    next_token: Option<String>,
}

/// `delete_secret`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeletedSecret {
    /// The scope.
    pub secret_type: SecretType,
    /// The path.
    pub secret_path: String,
    /// What happened, in words.
    pub message: String,
}

/// Where a page for the person's value stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryStatus {
    /// The page waits for the person.
    Waiting,
    /// The person saved a value.
    Written,
    /// The person declined, nobody typed in time, or saving failed (the message says).
    Declined,
}

/// A page where the person types a secret's value for `create_secret` or `update_secret`
/// called without `data` (the platform's `/v1/secrets/entry-requests`).
#[derive(Debug, Clone, Deserialize)]
pub struct EntryRequest {
    /// Its id.
    pub id: String,
    /// Where it stands.
    pub status: EntryStatus,
    /// The page, while it waits.
    pub url: Option<String>,
    /// RFC 3339: when the page stops taking a value.
    pub expires_at: String,
    /// The secret as written, once it is.
    pub secret: Option<SecretInfo>,
    /// Why it was declined.
    pub message: Option<String>,
}

/// Asks the platform for a page where the person types the value `create_secret` (`create`)
/// or `update_secret` would write with `args` (whose `data` is not given); `client_name` is
/// the assistant's, shown on the page.
pub fn ask_for_value(
    client: &Client,
    args: &WriteSecretArgs,
    create: bool,
    client_name: Option<&str>,
) -> Result<EntryRequest, ToolError> {
    let mut out = target_body(args)?;
    out.insert(
        "operation".into(),
        json!(if create { "create" } else { "update" }),
    );
    if let Some(name) = client_name {
        out.insert("client".into(), json!(name));
    }
    client.typed(
        Method::POST,
        "/v1/secrets/entry-requests",
        Some(&Value::Object(out)),
    )
}

/// Where entry request `id` stands.
pub fn entry_request(client: &Client, id: &str) -> Result<EntryRequest, ToolError> {
    client.typed(
        Method::GET,
        &format!("/v1/secrets/entry-requests/{}", encode(id)),
        None,
    )
}

/// Closes entry request `id`'s page: the person declined in the assistant.
pub fn cancel_entry_request(client: &Client, id: &str) -> Result<(), ToolError> {
    client
        .json(
            Method::DELETE,
            &format!("/v1/secrets/entry-requests/{}", encode(id)),
            None,
        )
        .map(|_| ())
}

/// What `create_secret` (`create`) or `update_secret` answers for `secret`, written from the
/// person's page.
pub fn typed_by_person(secret: SecretInfo, create: bool) -> SecretWritten {
    let message = if create {
        format!(
            "created {} secret {} (version 1) with the value the person typed on Slipway's page",
            secret.secret_type.as_str(),
            secret.secret_path
        )
    } else {
        format!(
            "updated {} secret {}: now version {}, with the value the person typed on Slipway's page; earlier versions are kept",
            secret.secret_type.as_str(),
            secret.secret_path,
            secret.version
        )
    };
    SecretWritten { secret, message }
}

/// `create_secret`: stores version 1 at a free path.
pub fn create_secret(client: &Client, args: &WriteSecretArgs) -> Result<SecretWritten, ToolError> {
    let body = write_body(args)?;
    Ok(SecretWritten {
        secret: client.typed(Method::POST, "/v1/secrets", Some(&body))?,
        message: format!(
            "created {} secret {} (version 1)",
            args.secret_type.as_str(),
            args.secret_path
        ),
    })
}

/// `update_secret`: replaces the data (and metadata when given) as a new version; earlier
/// versions are kept.
pub fn update_secret(client: &Client, args: &WriteSecretArgs) -> Result<SecretWritten, ToolError> {
    let body = write_body(args)?;
    let secret: SecretInfo = client.typed(Method::PUT, "/v1/secrets/entry", Some(&body))?;
    Ok(SecretWritten {
        message: format!(
            "updated {} secret {}: now version {}; earlier versions are kept",
            args.secret_type.as_str(),
            args.secret_path,
            secret.version
        ),
        secret,
    })
}

/// `get_secret`: the latest version's data and metadata (or `version`'s), with version
/// numbers and timestamps.
pub fn get_secret(args: &GetSecretArgs) -> Result<OneCall<SecretValue>, ToolError> {
    check_path("secret_path", &args.secret_path)?;
    let mut q = scope(args.secret_type, args.app_id.as_deref(), "secret_type")?;
    q.push(("secret_path", args.secret_path.clone()));
    if let Some(v) = args.version {
        if v < 1 {
            return Err(ToolError::invalid(
                "version",
                "must be a whole number from 1",
            ));
        }
        q.push(("version", v.to_string()));
    }
    Ok(OneCall::new(
        Method::GET,
        format!("/v1/secrets/entry?{}", query(&q)),
        None,
    ))
}

/// `delete_secret`: removes the secret and every version, permanently.
pub fn delete_secret(client: &Client, args: &DeleteSecretArgs) -> Result<DeletedSecret, ToolError> {
    check_path("secret_path", &args.secret_path)?;
    let mut q = scope(args.secret_type, args.app_id.as_deref(), "secret_type")?;
    q.push(("secret_path", args.secret_path.clone()));
    client.json(
        Method::DELETE,
        &format!("/v1/secrets/entry?{}", query(&q)),
        None,
    )?;
    Ok(DeletedSecret {
        secret_type: args.secret_type,
        secret_path: args.secret_path.clone(),
        message: format!(
            "deleted {} secret {} and every version, permanently",
            args.secret_type.as_str(),
            args.secret_path
        ),
    })
}

/// `list_secrets`: paths in the scope (no values), filtered by `prefix`, a page at a time.
pub fn list_secrets(args: &ListSecretsArgs) -> Result<OneCall<SecretList>, ToolError> {
    let mut q = scope(args.secret_type, args.app_id.as_deref(), "secret_type")?;
    if let Some(p) = args.prefix.as_deref().filter(|p| !p.is_empty()) {
        slipway_devfile::secret_path::check_prefix(p)
            .map_err(|rule| ToolError::invalid("prefix", rule))?;
        q.push(("prefix", p.to_owned()));
    }
    if let Some(t) = args.next_token.as_deref().filter(|t| !t.is_empty()) {
        q.push(("next_token", t.to_owned()));
    }
    let secret_type = args.secret_type;
    let path = format!("/v1/secrets?{}", query(&q));
    Ok(
        OneCall::<SecretPage>::new(Method::GET, path, None).map(move |page| SecretList {
            secret_type,
            paths: page.secrets.iter().map(|s| s.secret_path.clone()).collect(),
            secrets: page.secrets,
            next_token: page.next_token,
        }),
    )
}

/// `share_secret`: copies a secret the caller may read into the shared namespace; the source
/// is unchanged and an existing destination is an error, never overwritten.
pub fn share_secret(client: &Client, args: &ShareSecretArgs) -> Result<SharedSecret, ToolError> {
    check_path("from_secret_path", &args.from_secret_path)?;
    check_path("to_shared_path", &args.to_shared_path)?;
    let mut b = body(scope(
        args.from_secret_type,
        args.app_id.as_deref(),
        "from_secret_type",
    )?);
    b.insert("from_secret_path".into(), json!(args.from_secret_path));
    b.insert("to_shared_path".into(), json!(args.to_shared_path));
    b.insert(
        "copy_metadata".into(),
        json!(args.copy_metadata.unwrap_or(true)),
    );
    let secret = client.typed(Method::POST, "/v1/secrets/share", Some(&Value::Object(b)))?;
    Ok(SharedSecret {
        written: SecretWritten {
            secret,
            message: format!(
                "copied {} secret {} to shared secret {}; the original is unchanged",
                args.from_secret_type.as_str(),
                args.from_secret_path,
                args.to_shared_path
            ),
        },
        to_shared_path: args.to_shared_path.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_rule() {
        for good in ["a", "db/creds", "x_y-z.1/k"] {
            assert!(check_path("secret_path", good).is_ok(), "{good}");
        }
        for (bad, rule) in [
            ("/abs", "start with '/'"),
            ("a/../b", "'..'"),
            ("..", "'..'"),
            ("", "empty"),
            ("a b", "found ' '"),
            ("a//b", "empty"),
        ] {
            let err = check_path("secret_path", bad).unwrap_err().to_string();
            assert!(
                err.contains("secret_path") && err.contains(rule),
                "{bad:?}: {err}"
            );
        }
    }

    #[test]
    fn data_must_be_a_json_object() {
        assert!(pairs("data", &json!("{\"a\": 1}")).is_ok());
        assert!(pairs("data", &json!({"a": 1})).is_ok());
        for bad in [json!("not json"), json!("[1]"), json!(5), json!("\"s\"")] {
            let err = pairs("data", &bad).unwrap_err().to_string();
            assert!(err.contains("data:"), "{err}");
        }
    }

    #[test]
    fn app_scope_needs_an_app_id_and_others_refuse_one() {
        assert!(scope(SecretType::App, None, "secret_type").is_err());
        assert!(scope(SecretType::User, Some("x"), "secret_type").is_err());
        let id = "6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b".to_owned();
        assert_eq!(
            scope(SecretType::App, Some(&id), "secret_type").unwrap()[1],
            ("app_id", id)
        );
    }
}
