//! The `slipway://` links a person opens from an e-mail, a ticket or a chat: which screen
//! each one means. The desktop shell hands every link it receives (on the command line of a
//! first start, or forwarded from a second start) to [`parse`] and shows the UI the answer;
//! the grammar lives here, not in the shell or the UI, so every transport reads links alike.
//!
//! The links:
//! - `slipway://care/missing-info/<request UUID>`: that missing-information request's form;
//! - `slipway://apps/<app UUID>`: that app;
//! - `slipway://invite/<code>` or `slipway://invite/<code>?url=<platform URL>` (what
//!   `slipway people invite` prints): the join screen with the code and URL filled in.
//!
//! Anything else is refused with a [`LinkError`] that says what is wrong and which links
//! exist: a link is clicked by a person, who needs to know whether the link or the app is at
//! fault. The errors never repeat an invite code (it is a secret until used).

use reqwest::Url;
use serde::Serialize;

/// The links Slipway opens, as a person would read them (every [`LinkError`] ends with it).
pub const KNOWN_LINKS: &str = "slipway://care/missing-info/<request UUID>, \
     slipway://apps/<app UUID> and slipway://invite/<code>?url=<platform URL>";

/// A link's meaning. Serialised for the UI as `{"kind": "missing_info", "uuid": …}`,
/// `{"kind": "app", "app_id": …}` or `{"kind": "invite", "code": …, "url": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Link {
    /// The form of a missing-information request.
    MissingInfo {
        /// The request's UUID, in lowercase.
        uuid: String,
    },
    /// An app on the platform in use.
    App {
        /// The app's UUID, in lowercase.
        app_id: String,
    },
    /// An invite to a platform: the join screen, filled in.
    Invite {
        /// The invite code (a secret until it is used: never logged).
        code: String,
        /// The platform's base URL, when the link carries it.
        url: Option<String>,
    },
}

/// Why a link cannot be opened; its text names the fault and ends with [`KNOWN_LINKS`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem}. Slipway opens {KNOWN_LINKS}.")]
pub struct LinkError {
    problem: String,
}

impl LinkError {
    fn new(problem: impl Into<String>) -> Self {
        Self {
            problem: problem.into(),
        }
    }

    /// What is wrong with the link, without the list of known links.
    pub fn problem(&self) -> &str {
        &self.problem
    }
}

/// Reads a `slipway://` link (surrounding whitespace ignored).
///
/// # Errors
/// A [`LinkError`] when `link` is not one of [`KNOWN_LINKS`]: another scheme, an unknown
/// kind of link, a missing or malformed UUID or code, extra path segments, parameters the
/// link does not take, or an invite's `url` that is not an http(s) address.
pub fn parse(link: &str) -> Result<Link, LinkError> {
    let link = link.trim();
    if link.is_empty() {
        return Err(LinkError::new("The link is empty"));
    }
    // The text is not repeated: it may hold an invite code.
    let url =
        Url::parse(link).map_err(|e| LinkError::new(format!("The link cannot be read ({e})")))?;
    if url.scheme() != "slipway" {
        return Err(LinkError::new(format!(
            "A {}: link is not for Slipway",
            url.scheme()
        )));
    }
    if url.fragment().is_some() {
        return Err(LinkError::new("A slipway:// link has no #fragment"));
    }
    let kind = url.host_str().unwrap_or_default().to_ascii_lowercase();
    if !url.username().is_empty() || url.password().is_some() || url.port().is_some() {
        return Err(LinkError::new(
            "A slipway:// link has no user name, password or port",
        ));
    }
    let segments = segments(&url);
    match (kind.as_str(), segments.as_slice()) {
        ("care", ["missing-info", uuid]) => {
            no_parameters(&url, "slipway://care/missing-info/")?;
            Ok(Link::MissingInfo {
                uuid: uuid_segment(uuid, "a request")?,
            })
        }
        ("care", ["missing-info"]) => Err(LinkError::new(
            "slipway://care/missing-info/ needs the request's UUID after it",
        )),
        ("apps", [app_id]) => {
            no_parameters(&url, "slipway://apps/")?;
            Ok(Link::App {
                app_id: uuid_segment(app_id, "an app")?,
            })
        }
        ("apps", []) => Err(LinkError::new(
            "slipway://apps/ needs the app's UUID after it",
        )),
        ("invite", [code]) => invite(&url, code),
        ("invite", []) => Err(LinkError::new(
            "slipway://invite/ needs the invite code after it",
        )),
        ("invite", _) => Err(LinkError::new(
            "A slipway://invite/ link has only the code after it",
        )),
        ("care" | "apps", _) => Err(LinkError::new(format!(
            "{} is not a link Slipway knows",
            quoted(&format!("slipway://{kind}/{}", segments.join("/")), 80)
        ))),
        ("", _) => Err(LinkError::new(
            "The link names no screen (slipway://<screen>/…)",
        )),
        (other, _) => Err(LinkError::new(format!(
            "{} is not a screen Slipway knows",
            quoted(&format!("slipway://{other}/"), 60)
        ))),
    }
}

/// The link's path segments as written (a trailing slash is ignored).
fn segments(url: &Url) -> Vec<&str> {
    let mut parts: Vec<&str> = url
        .path_segments()
        .map(Iterator::collect)
        .unwrap_or_default();
    if parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
}

fn no_parameters(url: &Url, link: &str) -> Result<(), LinkError> {
    match url.query() {
        Some(q) if !q.is_empty() => Err(LinkError::new(format!(
            "A {link} link takes no ?parameters"
        ))),
        _ => Ok(()),
    }
}

/// A UUID in its 8-4-4-4-12 hexadecimal form, returned in lowercase.
pub fn uuid_segment(segment: &str, what: &str) -> Result<String, LinkError> {
    let groups: Vec<&str> = segment.split('-').collect();
    let shaped = groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()));
    if shaped {
        Ok(segment.to_ascii_lowercase())
    } else {
        Err(LinkError::new(format!(
            "{} is not {what} UUID (like 5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01)",
            quoted(segment, 60)
        )))
    }
}

fn invite(url: &Url, code: &str) -> Result<Link, LinkError> {
    if !code
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(LinkError::new(
            "The invite code in this link is damaged (a code has only letters, digits, _ and -; \
             copy the whole link again)",
        ));
    }
    let mut platform = None;
    for (key, value) in url.query_pairs() {
        match key.as_ref() {
            "url" if platform.is_none() => platform = Some(value.into_owned()),
            "url" => {
                return Err(LinkError::new(
                    "This invite link names its platform (url=) twice",
                ));
            }
            other => {
                return Err(LinkError::new(format!(
                    "An invite link takes only ?url=<platform URL>, not {}",
                    quoted(other, 40)
                )));
            }
        }
    }
    if let Some(address) = &platform {
        let parsed = Url::parse(address).ok();
        let web = parsed
            .as_ref()
            .is_some_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
        if !web {
            return Err(LinkError::new(format!(
                "The invite link's platform {} is not an http(s) address",
                quoted(address, 80)
            )));
        }
    }
    Ok(Link::Invite {
        code: code.to_owned(),
        url: platform,
    })
}

/// `text` in quotes, shortened to `max` characters (a pasted paragraph stays readable).
fn quoted(text: &str, max: usize) -> String {
    let shown: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        format!("\"{shown}…\"")
    } else {
        format!("\"{shown}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REQUEST: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01";

    fn refused(link: &str) -> String {
        let e = parse(link).expect_err(link);
        let text = e.to_string();
        assert!(
            text.ends_with(&format!("Slipway opens {KNOWN_LINKS}.")),
            "{text}"
        );
        e.problem().to_owned()
    }

    #[test]
    fn the_three_links_and_what_they_open() {
        assert_eq!(
            parse(&format!("slipway://care/missing-info/{REQUEST}")),
            Ok(Link::MissingInfo {
                uuid: REQUEST.into()
            })
        );
        // Case of the UUID and the screen, a trailing slash and whitespace do not matter.
        assert_eq!(
            parse(&format!(
                " slipway://Care/missing-info/{}/\n",
                REQUEST.to_uppercase()
            )),
            Ok(Link::MissingInfo {
                uuid: REQUEST.into()
            })
        );
        assert_eq!(
            parse("slipway://apps/0190a7c4-5b6e-7d8f-9a0b-1c2d3e4f5a6b"),
            Ok(Link::App {
                app_id: "0190a7c4-5b6e-7d8f-9a0b-1c2d3e4f5a6b".into()
            })
        );
        assert_eq!(
            parse("slipway://invite/slwi_Ab-9"),
            Ok(Link::Invite {
                code: "slwi_Ab-9".into(),
                url: None
            })
        );
    }

    #[test]
    fn an_invite_link_as_the_platform_prints_it_gives_its_code_and_platform() {
        let link = slipway_platform_client::people::invite_link(
            "slwi_Ab-9",
            "https://slipway.example.org:8443/base",
        )
        .unwrap();
        assert_eq!(
            parse(&link),
            Ok(Link::Invite {
                code: "slwi_Ab-9".into(),
                url: Some("https://slipway.example.org:8443/base".into())
            })
        );
    }

    #[test]
    fn the_ui_reads_a_link_by_its_kind() {
        let json = |l: &str| serde_json::to_value(parse(l).unwrap()).unwrap();
        assert_eq!(
            json(&format!("slipway://care/missing-info/{REQUEST}")),
            serde_json::json!({"kind": "missing_info", "uuid": REQUEST})
        );
        assert_eq!(
            json("slipway://apps/0190a7c4-5b6e-7d8f-9a0b-1c2d3e4f5a6b"),
            serde_json::json!({"kind": "app", "app_id": "0190a7c4-5b6e-7d8f-9a0b-1c2d3e4f5a6b"})
        );
        assert_eq!(
            json("slipway://invite/c?url=http%3A%2F%2F127.0.0.1%3A8700"),
            serde_json::json!({"kind": "invite", "code": "c", "url": "http://127.0.0.1:8700"})
        );
    }

    #[test]
    fn a_malformed_link_says_what_is_wrong() {
        let cases = [
            ("", "empty"),
            ("   ", "empty"),
            ("https://example.org/care", "https: link is not for Slipway"),
            ("slipway://[oops/x", "cannot be read"),
            ("slipway:care/missing-info/x", "names no screen"),
            ("slipway://care/missing-info", "needs the request's UUID"),
            ("slipway://care/missing-info/", "needs the request's UUID"),
            (
                "slipway://care/missing-info/1234",
                "\"1234\" is not a request UUID",
            ),
            (
                "slipway://care/missing-info/5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e0g",
                "is not a request UUID",
            ),
            (
                &format!("slipway://care/missing-info/{REQUEST}/fields"),
                "is not a link Slipway knows",
            ),
            (
                &format!("slipway://care/missing-info/{REQUEST}?x=1"),
                "takes no ?parameters",
            ),
            (
                &format!("slipway://care/missing-info/{REQUEST}#top"),
                "no #fragment",
            ),
            (
                "slipway://care/enroll",
                "\"slipway://care/enroll\" is not a link",
            ),
            ("slipway://apps/", "needs the app's UUID"),
            ("slipway://apps/desk-app", "\"desk-app\" is not an app UUID"),
            ("slipway://invite/", "needs the invite code"),
            ("slipway://invite/a/b", "only the code"),
            ("slipway://invite/slwi_a%20b", "damaged"),
            (
                "slipway://invite/slwi_a?url=ftp%3A%2F%2Fx",
                "not an http(s) address",
            ),
            ("slipway://invite/slwi_a?url=x&url=y", "twice"),
            ("slipway://invite/slwi_a?utm=1", "only ?url="),
            ("slipway://user@apps/x", "no user name"),
            (
                "slipway://settings/",
                "\"slipway://settings/\" is not a screen",
            ),
        ];
        for (link, says) in cases {
            let problem = refused(link);
            assert!(problem.contains(says), "{link:?}: {problem}");
        }
    }

    #[test]
    fn a_refusal_never_repeats_an_invite_code() {
        for link in [
            "slipway://invite/slwi_secret/x",
            "slipway://invite/slwi_secret%20x",
            "slipway://invite/slwi_secret?url=ftp%3A%2F%2Fx",
            "slipway://invite/slwi_secret?code=1",
            "slipway://invite:99999999/slwi_secret",
        ] {
            let text = parse(link).expect_err(link).to_string();
            assert!(!text.contains("secret"), "{link}: {text}");
        }
    }
}
