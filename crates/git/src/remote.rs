//! Repository addresses: what `slipway git connect --repo` accepts, and why anything else is
//! refused. Only the network transports a forge serves (`https://`, `http://`, `ssh://` and
//! scp-like `user@host:path`); never a local path, `file://` or git's `ext::` helpers, which
//! would let whoever connects a repository read the platform's own disk or run a command on
//! it. A token belongs in the credential, never in the address: an address is shown to
//! every viewer of the app and written in logs.

use std::fmt;

/// How git reaches the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Smart HTTP(S): a token for private repositories.
    Http,
    /// SSH: a deploy key.
    Ssh,
}

impl Transport {
    /// `http` or `ssh`, as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Ssh => "ssh",
        }
    }
}

/// A repository address that passed [`RemoteUrl::parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUrl {
    text: String,
    transport: Transport,
    host: String,
}

/// Why an address is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    /// Not a network transport git and forges share.
    #[error(
        "must be an https://, http://, ssh:// or user@host:path address (local paths, file://, git:// and ext:: are refused)"
    )]
    Scheme,
    /// A password or token inside the address.
    #[error(
        "must not carry a user, password or token (give the token as the credential: it is sealed, the address is shown to every viewer)"
    )]
    Secret,
    /// Anything else the pattern refuses.
    #[error(
        "must be a repository address of at most {MAX_LEN} characters: a host of letters, digits, dots and hyphens, an optional port, and a path of letters, digits and ._~%+/- (the pattern the API documents)"
    )]
    Shape,
}

/// The longest address accepted.
pub const MAX_LEN: usize = 2048;

/// A host name or IPv4 address, as the pattern takes it.
macro_rules! host {
    () => {
        "[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?"
    };
}

/// The rule of an address, as the API documents it: `http(s)://host[:port][/path]`,
/// `ssh://[user@]host[:port]/path` or `user@host:path`, without a password or token.
pub const PATTERN: &str = concat!(
    "^(https?://",
    host!(),
    "(:[0-9]{1,5})?(/[A-Za-z0-9._~%+/-]*)?|ssh://([A-Za-z0-9._-]{1,64}@)?",
    host!(),
    "(:[0-9]{1,5})?/[A-Za-z0-9._~%+/-]+|[A-Za-z0-9._-]{1,64}@",
    host!(),
    ":[A-Za-z0-9._~+][A-Za-z0-9._~%+/-]*)$"
);

fn pattern() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(PATTERN).expect("the address pattern compiles"))
}

impl RemoteUrl {
    /// Checks `text` against [`PATTERN`] (and [`MAX_LEN`]); a refusal says which rule.
    pub fn parse(text: &str) -> Result<Self, RemoteError> {
        if text.chars().count() > MAX_LEN || !pattern().is_match(text) {
            return Err(Self::why(text));
        }
        let transport = if text.starts_with("http") {
            Transport::Http
        } else {
            Transport::Ssh
        };
        let authority = match text.split_once("://") {
            Some((_, rest)) => rest.split('/').next().unwrap_or(""),
            None => text.split(':').next().unwrap_or(""),
        };
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
        Ok(Self {
            text: text.to_owned(),
            transport,
            host,
        })
    }

    /// Which rule a refused address breaks.
    fn why(text: &str) -> RemoteError {
        let Some((scheme, rest)) = text.split_once("://") else {
            return if text.contains("::") || !text.contains('@') {
                RemoteError::Scheme
            } else {
                RemoteError::Shape
            };
        };
        let authority = rest.split('/').next().unwrap_or("");
        let userinfo = authority.rsplit_once('@').map(|(u, _)| u);
        match (scheme, userinfo) {
            ("http" | "https", Some(_)) => RemoteError::Secret,
            ("ssh", Some(u)) if u.contains(':') => RemoteError::Secret,
            ("http" | "https" | "ssh", _) => RemoteError::Shape,
            _ => RemoteError::Scheme,
        }
    }

    /// The address as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// How git reaches it.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// The host, lowercase (for messages: "cannot reach github.com").
    pub fn host(&self) -> &str {
        &self.host
    }

    /// A local path in place of the address, for this crate's tests (which fetch from a
    /// bare repository on disk; the rules above refuse that to everyone else).
    #[cfg(test)]
    pub(crate) fn replace_text_for_tests(&mut self, text: &str) {
        text.clone_into(&mut self.text);
    }
}

impl fmt::Display for RemoteUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The rule of a branch name as the API documents it: letters, digits and `_.+@/-`, not
/// starting with `-` or `/`, at most 255 characters. (What else git refuses in a ref name
/// cannot name a branch that exists, so it is git's "no such branch" at the fetch.)
pub const BRANCH_PATTERN: &str = "^[A-Za-z0-9_.+@][A-Za-z0-9_.+@/-]{0,254}$";

/// A branch name against [`BRANCH_PATTERN`].
pub fn check_branch(name: &str) -> Result<(), &'static str> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(BRANCH_PATTERN).expect("compiles"));
    if re.is_match(name) {
        Ok(())
    } else {
        Err(
            "must be a branch name: letters, digits and _.+@/-, not starting with - or /, at most 255 characters",
        )
    }
}

/// One directory name of a path: not `.` or `..`, not starting with `-`.
macro_rules! segment {
    () => {
        r"([A-Za-z0-9_+@][A-Za-z0-9_.+@-]*|\.[A-Za-z0-9_+@-][A-Za-z0-9_.+@-]*|\.\.[A-Za-z0-9_.+@-]+)"
    };
}

/// The rule of the devfile's directory as the API documents it: empty (the root), or
/// `/`-separated names of letters, digits and `_.+@-` that are not `.` or `..` and do not
/// start with `-`, without a leading or trailing `/`, at most 1024 characters.
pub const PATH_PATTERN: &str = concat!("^(", segment!(), "(/", segment!(), ")*)?$");

/// The longest path accepted.
pub const MAX_PATH: usize = 1024;

/// A directory of the repository against [`PATH_PATTERN`] and [`MAX_PATH`].
pub fn check_path(path: &str) -> Result<(), &'static str> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(PATH_PATTERN).expect("compiles"));
    if path.chars().count() <= MAX_PATH && re.is_match(path) {
        Ok(())
    } else {
        Err(
            "must be a directory of the repository: empty for the root, or /-separated names of letters, digits and _.+@- (not . or .., not starting with -), without a leading or trailing /, at most 1024 characters",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forge_addresses_are_taken_with_their_transport() {
        for (text, transport, host) in [
            (
                "https://github.com/acme/shop.git",
                Transport::Http,
                "github.com",
            ),
            (
                "http://127.0.0.1:9418/shop.git",
                Transport::Http,
                "127.0.0.1",
            ),
            ("https://Gitea.Example", Transport::Http, "gitea.example"),
            (
                "ssh://git@gitlab.example:2222/a/b.git",
                Transport::Ssh,
                "gitlab.example",
            ),
            ("ssh://host/a", Transport::Ssh, "host"),
            ("git@github.com:acme/shop.git", Transport::Ssh, "github.com"),
        ] {
            let url = RemoteUrl::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(url.transport(), transport, "{text}");
            assert_eq!(url.host(), host, "{text}");
            assert_eq!(url.as_str(), text);
        }
    }

    #[test]
    fn local_and_helper_transports_and_inline_secrets_are_refused() {
        for (text, want) in [
            ("", RemoteError::Scheme),
            ("https://github.com/a b", RemoteError::Shape),
            (" https://github.com/a", RemoteError::Scheme),
            ("/srv/git/shop.git", RemoteError::Scheme),
            ("./shop", RemoteError::Scheme),
            ("gitea.local:team/app", RemoteError::Scheme),
            ("file:///etc", RemoteError::Scheme),
            ("ext::sh -c touch% /tmp/pwned", RemoteError::Scheme),
            ("git://github.com/a/b", RemoteError::Scheme),
            ("-uploadpack=evil@x:y", RemoteError::Shape),
            ("git@host:-upload-pack=x", RemoteError::Shape),
            (
                "https://user:ghp_secret@github.com/a/b",
                RemoteError::Secret,
            ),
            ("https://ghp_secret@github.com/a/b", RemoteError::Secret),
            ("ssh://git:pw@host/a", RemoteError::Secret),
            ("ssh://host", RemoteError::Shape),
        ] {
            assert_eq!(RemoteUrl::parse(text), Err(want.clone()), "{text}");
        }
        let long = format!("https://h/{}", "a".repeat(MAX_LEN));
        assert_eq!(RemoteUrl::parse(&long), Err(RemoteError::Shape));
    }

    #[test]
    fn branch_names_follow_the_pattern() {
        for ok in [
            "main",
            "release/1.2",
            "feature/x-y_z",
            "v1",
            "dependabot/npm/a@1.2",
        ] {
            assert!(check_branch(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-x", "/a", "a b", "a~1", "a:b", "a*", "a[1]", "a\\b"] {
            assert!(check_branch(bad).is_err(), "{bad}");
        }
        assert!(check_branch(&"a".repeat(256)).is_err());
    }

    #[test]
    fn paths_are_relative_directories() {
        for ok in ["", "services/api", ".config", "...", "a.b/c-d", "..x"] {
            assert!(check_path(ok).is_ok(), "{ok}");
        }
        for bad in [
            "/", ".", "..", "a/../b", "a//b", "./a", "a\\b", "-x", "/a", "a/",
        ] {
            assert!(check_path(bad).is_err(), "{bad}");
        }
    }
}
