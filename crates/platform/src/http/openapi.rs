//! `GET /v1/openapi.json`: the hand-written OpenAPI 3.1 document of the API, served as is.
//! It is public (no token needed) so tools can read it before they have a token.
//!
//! The document is exact: its request schemas accept what the handlers accept. The tests
//! below hold it to the parsers' own constants (secret path, app name, page size, role and
//! scope values, field lists, size limits) and run its patterns against the parsers on
//! exhaustive tables; `scripts/platform-schemathesis.sh` checks it against a live server.

use axum::http::header;
use axum::response::IntoResponse;

/// The document, embedded at compile time.
pub const DOCUMENT: &str = include_str!("../openapi.json");

/// Serves [`DOCUMENT`].
pub async fn serve() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT)
}

#[cfg(test)]
#[allow(
    clippy::too_many_lines,
    reason = "a test reads as one scenario; the 100-line limit is for production code"
)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn document_is_json_and_lists_exactly_the_routes() {
        let doc: Value = serde_json::from_str(DOCUMENT).expect("openapi.json is valid JSON");
        assert!(doc["openapi"].as_str().unwrap_or("").starts_with("3."));
        let mut documented = Vec::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for method in item.as_object().expect("path item").keys() {
                if method != "parameters" {
                    documented.push((method.clone(), path.clone()));
                }
            }
        }
        documented.sort();
        let mut routes: Vec<(String, String)> = crate::http::ROUTES
            .iter()
            .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
            .collect();
        routes.sort();
        assert_eq!(documented, routes);
    }

    use crate::http::{apps, secrets};
    use crate::model::Role;
    use crate::pagination::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};
    use crate::vault::path as secret_path;
    use crate::vault::payload::{
        self, DATA_MAX_BYTES, KEY_MAX, MAX_KEYS, METADATA_MAX_BYTES, Part,
    };
    use serde_json::json;
    use slipway_devfile::{APP_NAME_MAX, AppName};

    fn doc() -> Value {
        serde_json::from_str(DOCUMENT).expect("openapi.json is valid JSON")
    }

    fn schema<'a>(doc: &'a Value, name: &str) -> &'a Value {
        let s = &doc["components"]["schemas"][name];
        assert!(s.is_object(), "components.schemas.{name} is missing");
        s
    }

    /// A validator for `schema`, whose `$ref`s resolve inside the document.
    fn validator(doc: &Value, schema: &Value) -> jsonschema::Validator {
        let mut root = schema.clone();
        root["components"] = doc["components"].clone();
        jsonschema::options()
            .should_validate_formats(true)
            .build(&root)
            .expect("the schema compiles")
    }

    fn strings(v: &Value) -> Vec<String> {
        v.as_array()
            .expect("an array")
            .iter()
            .map(|s| s.as_str().expect("a string").to_owned())
            .collect()
    }

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }

    fn owned(v: &[&str]) -> Vec<String> {
        sorted(v.iter().map(|s| (*s).to_owned()).collect())
    }

    /// Every operation's parameters (path-level ones included), by operationId.
    fn parameters(doc: &Value, operation_id: &str) -> Vec<Value> {
        for item in doc["paths"].as_object().expect("paths").values() {
            for (method, op) in item.as_object().expect("path item") {
                if method != "parameters" && op["operationId"] == operation_id {
                    let mut out: Vec<Value> =
                        item["parameters"].as_array().cloned().unwrap_or_default();
                    out.extend(op["parameters"].as_array().cloned().unwrap_or_default());
                    return out;
                }
            }
        }
        panic!("no operation {operation_id}");
    }

    /// The query parameter names an operation's parameters put on the wire (an exploded
    /// object parameter contributes its properties).
    fn query_names(doc: &Value, operation_id: &str) -> Vec<String> {
        let mut names = Vec::new();
        for p in parameters(doc, operation_id) {
            if p["in"] != "query" {
                continue;
            }
            if p["explode"] == true {
                let name = p["schema"]["$ref"]
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/components/schemas/"))
                    .expect("an exploded parameter names a component schema");
                let props = schema(doc, name)["properties"].as_object().expect("props");
                names.extend(props.keys().cloned());
            } else {
                names.push(p["name"].as_str().expect("name").to_owned());
            }
        }
        sorted(names)
    }

    /// Rust's `char::is_whitespace`, the set `str::trim` strips, as a regex class body.
    const WHITESPACE: &str =
        r"\t\n\u000b\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000";

    /// A string whose trimmed form has `min` (0 or 1) to `max` characters.
    fn trimmed_pattern(min: usize, max: usize) -> String {
        let w = WHITESPACE;
        let core = format!(r"[^{w}](?:[\s\S]{{0,{}}}[^{w}])?", max - 2);
        let core = if min == 0 {
            format!("(?:{core})?")
        } else {
            core
        };
        format!("^[{w}]*{core}[{w}]*$")
    }

    fn secret_path_body() -> String {
        let seg = format!("[A-Za-z0-9._-]{{1,{}}}", secret_path::SEGMENT_MAX);
        format!(r"(?!.*\.\.)(?!\.(?:/|$))(?!.*/\.(?:/|$)){seg}(?:/{seg})*")
    }

    fn all_roles() -> Vec<String> {
        let all = [Role::Owner, Role::Editor, Role::Viewer];
        for r in all {
            // A new role fails to compile here until the document lists it.
            match r {
                Role::Owner | Role::Editor | Role::Viewer => {}
            }
        }
        all.iter().map(|r| r.as_str().to_owned()).collect()
    }

    fn all_scopes() -> Vec<String> {
        for s in crate::vault::access::Scope::ALL {
            match s {
                crate::vault::access::Scope::User
                | crate::vault::access::Scope::App
                | crate::vault::access::Scope::Shared => {}
            }
        }
        crate::vault::access::Scope::ALL
            .iter()
            .map(|s| s.as_str().to_owned())
            .collect()
    }

    #[test]
    fn request_rules_equal_the_parsers_constants() {
        let doc = doc();

        let path = schema(&doc, "SecretPath");
        assert_eq!(path["maxLength"], secret_path::PATH_MAX);
        assert_eq!(path["pattern"], format!("^{}$", secret_path_body()));
        let prefix = schema(&doc, "SecretPrefix");
        assert_eq!(prefix["maxLength"], secret_path::PATH_MAX + 1);
        assert_eq!(
            prefix["pattern"],
            format!(
                "^(?!.{{{}}}[^/])(?:{}/?)?$",
                secret_path::PATH_MAX,
                secret_path_body()
            )
        );

        let register = schema(&doc, "RegisterApp");
        assert_eq!(register["additionalProperties"], false);
        let fields: Vec<String> = register["properties"]
            .as_object()
            .expect("props")
            .keys()
            .cloned()
            .collect();
        assert_eq!(sorted(fields), owned(apps::REGISTER_FIELDS));
        let props = &register["properties"];
        assert_eq!(props["name"]["maxLength"], APP_NAME_MAX);
        assert_eq!(
            props["display_name"]["pattern"],
            trimmed_pattern(1, apps::DISPLAY_NAME_MAX)
        );
        assert_eq!(
            props["description"]["pattern"],
            trimmed_pattern(0, apps::DESCRIPTION_MAX)
        );

        for (name, min, max_bytes) in [
            ("SecretData", Some(1), DATA_MAX_BYTES),
            ("SecretMetadata", None, METADATA_MAX_BYTES),
        ] {
            let s = schema(&doc, name);
            assert_eq!(s["maxProperties"], MAX_KEYS, "{name}");
            assert_eq!(s["minProperties"].as_u64(), min, "{name}");
            assert_eq!(s["propertyNames"]["maxLength"], KEY_MAX, "{name}");
            let kib = format!("at most {} KiB", max_bytes / 1024);
            assert!(
                s["description"].as_str().unwrap_or("").contains(&kib),
                "{name}: {kib}"
            );
        }

        for (name, fields, scope_field) in [
            ("WriteSecret", secrets::CREATE_FIELDS, "secret_type"),
            ("ShareSecret", secrets::SHARE_FIELDS, "from_secret_type"),
        ] {
            let s = schema(&doc, name);
            assert_eq!(s["additionalProperties"], false, "{name}");
            let keys: Vec<String> = s["properties"]
                .as_object()
                .expect("props")
                .keys()
                .cloned()
                .collect();
            assert_eq!(sorted(keys), owned(fields), "{name}");
            assert_eq!(
                s["properties"][scope_field]["$ref"],
                "#/components/schemas/SecretType"
            );
        }
        assert_eq!(strings(&schema(&doc, "SecretType")["enum"]), all_scopes());

        let scope_ops = [
            ("listSecrets", secrets::LIST_FIELDS),
            ("getSecret", secrets::TARGET_FIELDS),
            ("deleteSecret", &secrets::TARGET_FIELDS[..3]),
            ("secretAudit", secrets::AUDIT_FIELDS),
            ("listApps", &["page_size", "next_page_token"][..]),
        ];
        for (op, fields) in scope_ops {
            assert_eq!(query_names(&doc, op), owned(fields), "{op}");
        }

        let mut page_sizes = 0;
        for item in doc["paths"].as_object().expect("paths").values() {
            for op in item.as_object().expect("item").values() {
                for p in op["parameters"].as_array().into_iter().flatten() {
                    if p["name"] == "page_size" {
                        page_sizes += 1;
                        let s = &p["schema"];
                        assert_eq!(s["minimum"], 1);
                        assert_eq!(s["maximum"], MAX_PAGE_SIZE);
                        assert_eq!(s["default"], DEFAULT_PAGE_SIZE);
                    }
                }
            }
        }
        assert_eq!(
            page_sizes, 5,
            "listApps, listSecrets, secretAudit, listDeployments and listBuilds take page_size"
        );

        let roles = all_roles();
        assert_eq!(
            strings(&schema(&doc, "RoleRequest")["properties"]["role"]["enum"]),
            roles
        );
        let grantable = &schema(&doc, "GrantableRoles")["properties"];
        assert_eq!(strings(&grantable["your_role"]["enum"]), roles);
        assert_eq!(strings(&grantable["roles"]["items"]["enum"]), roles);
        let permission = &schema(&doc, "Permissions")["properties"]["users"]["items"];
        assert_eq!(strings(&permission["properties"]["role"]["enum"]), roles);

        let too_large = doc["components"]["responses"]["TooLarge"]["description"]
            .as_str()
            .unwrap_or("");
        let limit = format!("{} KiB", crate::http::MAX_BODY_BYTES / 1024);
        assert!(too_large.contains(&limit), "TooLarge says {limit}");
        let upload = format!("{} MiB", crate::http::builds::MAX_UPLOAD_BYTES >> 20);
        let builds = &doc["paths"]["/v1/apps/{app_id}/builds"]["post"];
        assert!(
            builds["description"]
                .as_str()
                .unwrap_or("")
                .contains(&upload)
        );
    }

    /// Every string of up to `len` characters from `alphabet`.
    fn all_strings(alphabet: &[char], len: usize) -> Vec<String> {
        let mut out = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..len {
            last = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            out.extend(last.iter().cloned());
        }
        out
    }

    /// Asserts the schema accepts exactly the strings `parser` accepts.
    fn agree(doc: &Value, schema: &Value, cases: &[String], parser: impl Fn(&str) -> bool) {
        let v = validator(doc, schema);
        for s in cases {
            assert_eq!(
                v.is_valid(&json!(s)),
                parser(s),
                "{s:?}: the document and the parser disagree"
            );
        }
    }

    fn edges(unit: &str, around: usize) -> Vec<String> {
        (around.saturating_sub(2)..=around + 2)
            .map(|n| unit.repeat(n))
            .collect()
    }

    #[test]
    fn patterns_accept_exactly_what_the_parsers_accept() {
        let doc = doc();
        let r = |name: &str| json!({ "$ref": format!("#/components/schemas/{name}") });

        let mut paths = all_strings(&['a', 'Z', '0', '.', '-', '_', '/', ' ', 'é', '\n'], 4);
        let seg = "abcdefgh".repeat(8);
        paths.extend(edges("a", secret_path::SEGMENT_MAX));
        for n in 3..=5 {
            let long = vec![seg.as_str(); n].join("/");
            paths.push(long.clone());
            paths.push(format!("{long}/"));
            paths.push(long[..long.len() - 1].to_owned());
            paths.push(format!("{}/", &long[..long.len() - 1]));
        }
        agree(&doc, &r("SecretPath"), &paths, |s| {
            secret_path::check(s).is_ok()
        });
        agree(&doc, &r("SecretPrefix"), &paths, |s| {
            secret_path::check_prefix(s).is_ok()
        });

        let mut names = all_strings(&['a', 'z', '0', '-', 'A', '_'], 5);
        names.extend(edges("a", APP_NAME_MAX));
        let name = &schema(&doc, "RegisterApp")["properties"]["name"];
        agree(&doc, name, &names, |s| AppName::parse(s).is_ok());

        // Trimmed fields: every char of the Basic Multilingual Plane's first blocks, alone
        // and padded, then the length bounds.
        let mut texts: Vec<String> = (0u32..0x3100)
            .filter_map(char::from_u32)
            .flat_map(|c| [c.to_string(), format!(" {c}x"), format!("x{c}")])
            .collect();
        texts.extend(all_strings(
            &[' ', 'a', '\t', '\u{a0}', '\u{1c}', '\u{3000}'],
            3,
        ));
        for n in [apps::DISPLAY_NAME_MAX, apps::DESCRIPTION_MAX] {
            texts.extend(edges("a", n));
            texts.extend(edges("a", n).into_iter().map(|s| format!(" {s}\n")));
        }
        let register = |field: &str, s: &str| {
            let mut body = json!({"name": "ok", "display_name": "D"});
            body[field] = json!(s);
            apps::parse_register(body.as_object().expect("object")).is_ok()
        };
        let props = &schema(&doc, "RegisterApp")["properties"];
        agree(&doc, &props["display_name"], &texts, |s| {
            register("display_name", s)
        });
        agree(&doc, &props["description"], &texts, |s| {
            register("description", s)
        });
        let user_id = &schema(&doc, "RoleRequest")["properties"]["user_id"];
        agree(&doc, user_id, &texts, |s| !s.trim().is_empty());

        let keys: Vec<String> = (0u32..0x200)
            .filter_map(char::from_u32)
            .map(|c| format!("k{c}"))
            .chain(edges("k", KEY_MAX))
            .collect();
        for (name, part) in [
            ("SecretData", Part::Data),
            ("SecretMetadata", Part::Metadata),
        ] {
            let v = validator(&doc, &r(name));
            for key in &keys {
                let value = json!({ key.as_str(): "v" });
                assert_eq!(
                    v.is_valid(&value),
                    payload::check(part, &value).is_ok(),
                    "{name} key {key:?}"
                );
            }
            let many: serde_json::Map<String, Value> = (0..=MAX_KEYS)
                .map(|i| (format!("k{i}"), json!(i)))
                .collect();
            let mut fewer = many.clone();
            fewer.remove("k0");
            for (value, ok) in [
                (Value::Object(many), false),
                (Value::Object(fewer), true),
                (json!({}), part == Part::Metadata),
                (json!({"a": null}), false),
                (json!({"a": [1]}), false),
                (json!({"a": 1.5, "b": true, "c": "s"}), true),
            ] {
                assert_eq!(v.is_valid(&value), ok, "{name} {value}");
                assert_eq!(payload::check(part, &value).is_ok(), ok, "{name} {value}");
            }
        }
    }

    #[test]
    fn secret_scope_makes_app_id_depend_on_secret_type() {
        let doc = doc();
        let id = "7d65cd28-90a8-44f5-9e85-a266723c601a";
        let scope = validator(&doc, schema(&doc, "SecretScope"));
        let write = validator(&doc, schema(&doc, "WriteSecret"));
        let share = validator(&doc, schema(&doc, "ShareSecret"));
        for secret_type in all_scopes() {
            let app = secret_type == "app";
            let q = |app_id: Option<&str>| match app_id {
                Some(a) => json!({"secret_type": secret_type, "app_id": a}),
                None => json!({"secret_type": secret_type}),
            };
            assert_eq!(
                scope.is_valid(&q(Some(id))),
                app,
                "{secret_type} with app_id"
            );
            assert_eq!(
                scope.is_valid(&q(None)),
                !app,
                "{secret_type} without app_id"
            );
            assert!(!scope.is_valid(&q(Some("not-a-uuid"))));
            let body = |app_id: Value| json!({"secret_type": secret_type, "secret_path": "a", "data": {"k": "v"}, "app_id": app_id});
            assert_eq!(write.is_valid(&body(json!(id))), app, "{secret_type}");
            assert_eq!(
                write.is_valid(&body(Value::Null)),
                !app,
                "{secret_type} null"
            );
            let share_body = |app_id: Value| {
                json!({"from_secret_type": secret_type, "from_secret_path": "a",
                       "to_shared_path": "b", "app_id": app_id})
            };
            assert_eq!(share.is_valid(&share_body(json!(id))), app, "{secret_type}");
            assert_eq!(
                share.is_valid(&share_body(Value::Null)),
                !app,
                "{secret_type}"
            );
        }
    }

    /// The identity requests' rules are the identity crate's own constants.
    #[test]
    fn identity_rules_equal_the_identity_constants() {
        use slipway_identity::rules;
        let doc = doc();
        let w = WHITESPACE;
        let invite = schema(&doc, "InviteRequest");
        assert_eq!(invite["properties"]["email"]["maxLength"], rules::EMAIL_MAX);
        assert_eq!(
            invite["properties"]["email"]["pattern"],
            format!("^[^{w}@]+@[^{w}@]+$")
        );
        assert_eq!(
            invite["properties"]["expires_in_days"]["maximum"],
            rules::INVITE_DAYS.max
        );
        let token = schema(&doc, "TokenRequest");
        assert_eq!(
            token["properties"]["expires_in_days"]["maximum"],
            rules::TOKEN_DAYS.max
        );
        assert_eq!(
            token["properties"]["name"]["pattern"],
            trimmed_pattern(1, rules::TOKEN_NAME_MAX)
        );
        let accept = schema(&doc, "AcceptInvite");
        assert_eq!(
            accept["properties"]["name"]["pattern"],
            trimmed_pattern(1, rules::USER_NAME_MAX)
        );
        let email = validator(&doc, &invite["properties"]["email"]);
        for (raw, ok) in [
            ("ada@example.org", true),
            (" ada@example.org", false),
            ("a b@c", false),
            ("a@b@c", false),
            ("@c", false),
        ] {
            assert_eq!(email.is_valid(&json!(raw)), ok, "{raw:?}");
            assert_eq!(rules::parse_email(raw).is_ok(), ok, "{raw:?}");
        }
    }

    /// A channel's rules are `slipway_notify`'s patterns, written once.
    #[test]
    fn channel_rules_are_the_notify_crates_patterns() {
        use slipway_notify::channel::{ADDRESS_PATTERN, HOST_PATTERN, NAME_PATTERN, URL_PATTERN};
        let doc = doc();
        let branches = schema(&doc, "NotificationChannelRequest")["oneOf"]
            .as_array()
            .expect("one branch per kind");
        let kinds: Vec<&str> = branches
            .iter()
            .map(|b| b["properties"]["kind"]["const"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["webhook", "slack", "email"]);
        for b in branches {
            assert_eq!(b["properties"]["name"]["pattern"], NAME_PATTERN);
        }
        assert_eq!(branches[0]["properties"]["url"]["pattern"], URL_PATTERN);
        assert_eq!(branches[1]["properties"]["url"]["pattern"], URL_PATTERN);
        let email = &branches[2]["properties"];
        assert_eq!(email["host"]["pattern"], HOST_PATTERN);
        assert_eq!(email["from"]["pattern"], ADDRESS_PATTERN);
        assert_eq!(email["to"]["items"]["pattern"], ADDRESS_PATTERN);
    }

    #[test]
    fn domain_names_follow_the_acme_crates_rule() {
        let doc = doc();
        let request = &schema(&doc, "DomainRequest")["properties"];
        for field in ["name", "redirect_to"] {
            assert_eq!(
                request[field]["pattern"],
                slipway_acme::name::PATTERN,
                "{field}"
            );
            assert_eq!(
                request[field]["maxLength"],
                slipway_acme::name::MAX_NAME,
                "{field}"
            );
        }
    }

    #[test]
    fn git_sources_follow_the_git_crates_rules() {
        let doc = doc();
        let request = schema(&doc, "GitConnectRequest");
        let mut fields = strings(&Value::Array(
            request["properties"]
                .as_object()
                .expect("properties")
                .keys()
                .map(|k| Value::String(k.clone()))
                .collect(),
        ));
        fields.sort();
        let mut wanted: Vec<String> = crate::http::git::CONNECT_FIELDS
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        wanted.sort();
        assert_eq!(fields, wanted);
        let p = &request["properties"];
        assert_eq!(p["repo_url"]["pattern"], slipway_git::remote::PATTERN);
        assert_eq!(p["repo_url"]["maxLength"], slipway_git::remote::MAX_LEN);
        assert_eq!(p["branch"]["pattern"], slipway_git::remote::BRANCH_PATTERN);
        assert_eq!(p["path"]["pattern"], slipway_git::remote::PATH_PATTERN);
        assert_eq!(p["path"]["maxLength"], slipway_git::remote::MAX_PATH);
        assert_eq!(
            p["token"]["pattern"],
            crate::gitsource::credentials::TOKEN_PATTERN
        );
        assert_eq!(
            p["token"]["maxLength"],
            crate::gitsource::credentials::MAX_TOKEN
        );
        let range = crate::gitsource::credentials::POLL_RANGE;
        assert_eq!(p["poll_interval_seconds"]["minimum"], *range.start());
        assert_eq!(p["poll_interval_seconds"]["maximum"], *range.end());
        let previews = crate::gitsource::credentials::PREVIEWS_RANGE;
        assert_eq!(p["max_previews"]["minimum"], *previews.start());
        assert_eq!(p["max_previews"]["maximum"], *previews.end());
        // What the document accepts, the rules accept, and the other way round.
        let valid = validator(&doc, request);
        for (body, accepted) in [
            (
                serde_json::json!({"repo_url": "https://github.com/a/b.git"}),
                true,
            ),
            (
                serde_json::json!({"repo_url": "https://github.com/a/b", "token": "ghp_x"}),
                true,
            ),
            (
                serde_json::json!({"repo_url": "git@github.com:a/b.git"}),
                true,
            ),
            (
                serde_json::json!({"repo_url": "git@github.com:a/b.git", "auth": "deploy_key", "path": "svc/api", "branch": "release/1"}),
                true,
            ),
            (
                serde_json::json!({"repo_url": "https://h/a", "auth": "token"}),
                false,
            ),
            (
                serde_json::json!({"repo_url": "git@h:a", "token": "t"}),
                false,
            ),
            (
                serde_json::json!({"repo_url": "git@h:a", "auth": "none"}),
                false,
            ),
            (
                serde_json::json!({"repo_url": "https://h/a", "auth": "deploy_key"}),
                false,
            ),
            (
                serde_json::json!({"repo_url": "https://h/a", "auth": "none", "token": "t"}),
                false,
            ),
            (serde_json::json!({"repo_url": "https://u:p@h/a"}), false),
            (
                serde_json::json!({"repo_url": "https://h/a", "path": "../x"}),
                false,
            ),
        ] {
            assert_eq!(valid.is_valid(&body), accepted, "document: {body}");
            let o = body.as_object().expect("object");
            let text = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_owned);
            let checked = crate::gitsource::credentials::check(
                crate::gitsource::credentials::ConnectRequest {
                    repo_url: text("repo_url").unwrap_or_default(),
                    branch: text("branch"),
                    path: text("path"),
                    auth: text("auth").and_then(|a| slipway_api::git::GitAuth::parse(&a)),
                    token: text("token"),
                    poll_interval_seconds: None,
                    max_previews: None,
                },
            );
            assert_eq!(checked.is_ok(), accepted, "rules: {body}");
        }
    }

    /// Only inputs no schema can describe are marked opaque (the schemathesis hooks excuse
    /// the server's rejections of exactly these).
    #[test]
    fn opaque_inputs_are_the_tokens_signatures_and_uploads() {
        let doc = doc();
        let mut opaque = Vec::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("item") {
                if method == "parameters" {
                    continue;
                }
                let params = item["parameters"].as_array().into_iter().flatten();
                for p in params.chain(op["parameters"].as_array().into_iter().flatten()) {
                    if p["x-opaque"] == true {
                        opaque.push(format!(
                            "{method} {path} {}",
                            p["name"].as_str().unwrap_or("")
                        ));
                    }
                }
                if op["requestBody"]["x-opaque"] == true {
                    opaque.push(format!("{method} {path} body"));
                }
            }
        }
        assert_eq!(
            sorted(opaque),
            owned(&[
                "get /v1/account/audit page_token",
                "get /v1/apps next_page_token",
                "get /v1/apps/{app_id}/builds next_page_token",
                "get /v1/apps/{app_id}/deployments next_page_token",
                "get /v1/secrets next_token",
                "get /v1/secrets/audit next_token",
                "get /v1/logs/builds/{build_id} signature",
                "get /v1/logs/deployments/{deployment_id}/{service} signature",
                "post /v1/apps/{app_id}/builds body",
                "post /v1/builds body",
            ])
        );
    }
}
