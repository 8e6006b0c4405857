//! Which tools a server offers, and how each is described: the toolkit's table, narrowed by
//! where the server runs (the caller's machine or the platform), the toolsets the client
//! asked for, and the scope of the caller's token; each with its title, annotations and
//! output schema.

use std::sync::{Arc, OnceLock};

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::Value;
use slipway_api::TokenScope;
use slipway_toolkit::{FILE_ARGUMENTS, Hints, ToolInfo, Toolset, all_tools, hints};

/// Where a tool server runs, which decides what it can reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// `slipway mcp` on the caller's machine: their files and any platform they configured.
    Local,
    /// `/mcp` on the platform: the platform, as the caller's token allows; no files.
    Remote,
}

/// What a client is offered: by [`Door`], by toolset (none: all), and by token scope (the
/// remote door's callers).
#[derive(Debug, Clone)]
pub struct Offer {
    /// Where the server runs.
    pub door: Door,
    /// The toolsets asked for; `None` is every toolset.
    pub toolsets: Option<Vec<Toolset>>,
    /// The caller's token's scope (the remote door's); `None` asks nothing of it.
    pub scope: Option<TokenScope>,
}

/// Why a tool is not offered to this client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Withheld {
    /// No tool has the name.
    Unknown,
    /// It works with the caller's files, which only `slipway mcp` on their machine has.
    NeedsFiles,
    /// Its toolset was not asked for.
    Toolset(Toolset),
    /// The caller's token's scope does not allow it; the text says what it lacks.
    Scope(String),
}

impl std::fmt::Display for Withheld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Withheld::Unknown => write!(f, "no tool has this name"),
            Withheld::NeedsFiles => write!(
                f,
                "it works with your project's files, which the platform cannot reach: run `slipway mcp` on your machine for it"
            ),
            Withheld::Toolset(set) => write!(
                f,
                "its toolset {:?} was not asked for (toolsets=…)",
                set.as_str()
            ),
            Withheld::Scope(why) => write!(f, "this token's scope does not allow it: {why}"),
        }
    }
}

impl Offer {
    /// `Ok` when tool `name` is offered, else why not.
    pub fn check(&self, name: &str) -> Result<(ToolInfo, Hints), Withheld> {
        let (Some(info), Some(h)) = (ToolInfo::find(name), hints(name)) else {
            return Err(Withheld::Unknown);
        };
        if self.door == Door::Remote && h.local_files {
            return Err(Withheld::NeedsFiles);
        }
        if let Some(sets) = &self.toolsets
            && !sets.contains(&h.toolset)
        {
            return Err(Withheld::Toolset(h.toolset));
        }
        if let Some(scope) = &self.scope
            && info.needs_platform
        {
            if scope.read_only && !h.read_only {
                return Err(Withheld::Scope(
                    "it is read-only, and this tool changes something".into(),
                ));
            }
            if !scope.secrets && h.secret_values {
                return Err(Withheld::Scope(
                    "it was made without secrets, and this tool reaches a secret value".into(),
                ));
            }
            if scope.apps.is_some() && name == "register_app" {
                return Err(Withheld::Scope(
                    "it is limited to some apps, and this tool makes a new one".into(),
                ));
            }
        }
        Ok((info, h))
    }

    /// The tools offered, described for `tools/list`.
    pub fn tools(&self) -> Vec<Tool> {
        described(self.door)
            .iter()
            .filter(|t| self.check(&t.name).is_ok())
            .cloned()
            .collect()
    }
}

/// Every tool described for `door`, made once: the schemas are generated from the tools'
/// types, which takes longer than answering the rest of a request.
fn described(door: Door) -> &'static [Tool] {
    static LOCAL: OnceLock<Vec<Tool>> = OnceLock::new();
    static REMOTE: OnceLock<Vec<Tool>> = OnceLock::new();
    let cell = match door {
        Door::Local => &LOCAL,
        Door::Remote => &REMOTE,
    };
    cell.get_or_init(|| {
        all_tools()
            .filter_map(|info| hints(info.name).map(|h| describe(door, &info, &h)))
            .collect()
    })
}

/// The `tools/list` entry of one tool: on the remote door, without the arguments that name
/// files (it refuses them).
fn describe(door: Door, info: &ToolInfo, h: &Hints) -> Tool {
    let mut input = match info.input_schema() {
        Value::Object(map) => map,
        _ => Default::default(),
    };
    if door == Door::Remote {
        if let Some(Value::Object(props)) = input.get_mut("properties") {
            for name in FILE_ARGUMENTS {
                props.remove(name);
            }
        }
        if let Some(Value::Array(required)) = input.get_mut("required") {
            required.retain(|r| r.as_str().is_none_or(|r| !FILE_ARGUMENTS.contains(&r)));
        }
    }
    let output = match info.output_schema() {
        Value::Object(map) => map,
        _ => Default::default(),
    };
    let annotations = ToolAnnotations::new()
        .read_only(h.read_only)
        .destructive(h.destructive)
        .idempotent(h.idempotent)
        .open_world(h.open_world);
    Tool::new(info.name, info.description, Arc::new(input))
        .with_title(h.title)
        .with_raw_output_schema(Arc::new(output))
        .with_annotations(annotations)
}

/// The first argument of `args` that names a file, which the remote door refuses.
pub fn file_argument(args: &Value) -> Option<&'static str> {
    let map = args.as_object()?;
    FILE_ARGUMENTS
        .into_iter()
        .find(|name| map.get(*name).is_some_and(|v| !v.is_null()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(door: Door, scope: Option<TokenScope>) -> Offer {
        Offer {
            door,
            toolsets: None,
            scope,
        }
    }

    fn names(o: &Offer) -> Vec<String> {
        o.tools().into_iter().map(|t| t.name.to_string()).collect()
    }

    #[test]
    fn the_remote_door_offers_no_file_tools_and_hides_file_arguments() {
        let local = names(&offer(Door::Local, None));
        let remote = names(&offer(Door::Remote, None));
        assert!(local.contains(&"build_app".to_owned()));
        assert!(!remote.contains(&"build_app".to_owned()));
        assert!(!remote.contains(&"scaffold_app".to_owned()));
        assert_eq!(local.len(), remote.len() + 2);
        let validate = offer(Door::Remote, None)
            .tools()
            .into_iter()
            .find(|t| t.name == "validate_devfile")
            .unwrap();
        let props = validate.input_schema["properties"].as_object().unwrap();
        assert!(props.contains_key("devfile_content"));
        assert!(!props.contains_key("devfile_path"));
        assert_eq!(
            offer(Door::Remote, None).check("scaffold_app").unwrap_err(),
            Withheld::NeedsFiles
        );
    }

    #[test]
    fn a_scope_narrows_the_platform_tools() {
        let read_only = TokenScope {
            read_only: true,
            ..TokenScope::FULL
        };
        let o = offer(Door::Remote, Some(read_only));
        let listed = names(&o);
        assert!(listed.contains(&"get_app_status".to_owned()));
        assert!(listed.contains(&"get_secret".to_owned()));
        assert!(!listed.contains(&"delete_app".to_owned()));
        assert!(
            listed.contains(&"generate_devfile".to_owned()),
            "no platform"
        );
        assert!(matches!(o.check("delete_app"), Err(Withheld::Scope(_))));
        let blind = offer(
            Door::Remote,
            Some(TokenScope {
                secrets: false,
                ..TokenScope::FULL
            }),
        );
        let listed = names(&blind);
        assert!(!listed.contains(&"get_secret".to_owned()));
        assert!(listed.contains(&"list_secrets".to_owned()));
        assert!(listed.contains(&"delete_secret".to_owned()));
    }

    #[test]
    fn toolsets_pick_groups_and_every_tool_says_what_it_does() {
        let o = Offer {
            door: Door::Local,
            toolsets: Some(vec![Toolset::Logs]),
            scope: None,
        };
        assert_eq!(names(&o), ["get_app_logs"]);
        assert_eq!(
            o.check("delete_app").unwrap_err(),
            Withheld::Toolset(Toolset::Apps)
        );
        for tool in offer(Door::Local, None).tools() {
            let a = tool.annotations.as_ref().unwrap();
            assert!(tool.title.is_some(), "{}", tool.name);
            assert!(a.read_only_hint.is_some() && a.destructive_hint.is_some());
            let out = tool.output_schema.as_ref().unwrap();
            assert_eq!(out["type"], "object", "{}", tool.name);
        }
        let delete = offer(Door::Local, None)
            .tools()
            .into_iter()
            .find(|t| t.name == "delete_app")
            .unwrap();
        assert_eq!(delete.annotations.unwrap().destructive_hint, Some(true));
    }

    #[test]
    fn file_arguments_are_found() {
        assert_eq!(
            file_argument(&serde_json::json!({"devfile_path": "x", "a": 1})),
            Some("devfile_path")
        );
        assert_eq!(
            file_argument(&serde_json::json!({"devfile_path": null})),
            None
        );
        assert_eq!(file_argument(&Value::Null), None);
    }
}
