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
    /// Empty, too long, or with control characters.
    #[error("must be a repository address of at most {MAX_LEN} characters without spaces")]
    Shape,
    /// Not a network transport git and forges share.
    #[error(
        "must be an https://, http://, ssh:// or user@host:path address (local paths, file:// and ext:: are refused)"
    )]
    Scheme,
    /// A password or token inside the address.
    #[error(
        "must not carry a password or token (give the token as the credential: it is sealed, the address is shown to every viewer)"
    )]
    Secret,
    /// No host.
    #[error("names no host")]
    NoHost,
}

/// The longest address accepted.
pub const MAX_LEN: usize = 2048;

impl RemoteUrl {
    /// Checks `text` against the rules above.
    pub fn parse(text: &str) -> Result<Self, RemoteError> {
        let text = text.trim();
        if text.is_empty()
            || text.len() > MAX_LEN
            || text.chars().any(|c| c.is_control() || c.is_whitespace())
        {
            return Err(RemoteError::Shape);
        }
        if text.contains("::") || text.starts_with('-') {
            return Err(RemoteError::Scheme);
        }
        if let Some((scheme, _)) = text.split_once("://") {
            let parsed = url::Url::parse(text).map_err(|_| RemoteError::Shape)?;
            let transport = match scheme.to_ascii_lowercase().as_str() {
                "https" | "http" => Transport::Http,
                "ssh" => Transport::Ssh,
                _ => return Err(RemoteError::Scheme),
            };
            if parsed.password().is_some()
                || (transport == Transport::Http && !parsed.username().is_empty())
            {
                return Err(RemoteError::Secret);
            }
            let host = parsed
                .host_str()
                .filter(|h| !h.is_empty())
                .ok_or(RemoteError::NoHost)?
                .to_ascii_lowercase();
            return Ok(Self {
                text: text.to_owned(),
                transport,
                host,
            });
        }
        // scp-like: [user@]host:path, the host without a slash before the colon (git's own
        // rule for telling it from a local path).
        let (authority, path) = text.split_once(':').ok_or(RemoteError::Scheme)?;
        if authority.contains('/') || path.is_empty() {
            return Err(RemoteError::Scheme);
        }
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        if host.is_empty() {
            return Err(RemoteError::NoHost);
        }
        Ok(Self {
            text: text.to_owned(),
            transport: Transport::Ssh,
            host: host.to_ascii_lowercase(),
        })
    }

    /// The address as given (trimmed).
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

/// A branch name as git's `check-ref-format --branch` allows it (the subset forges accept:
/// no `..`, no control characters or spaces, none of `~^:?*[\`, no leading `-` or `/`, no
/// trailing `/`, `.` or `.lock`), at most 255 bytes.
pub fn check_branch(name: &str) -> Result<(), &'static str> {
    let bad = name.is_empty()
        || name.len() > 255
        || name.starts_with(['-', '/', '.'])
        || name.ends_with(['/', '.'])
        || name.ends_with(".lock")
        || name.contains("..")
        || name.contains("//")
        || name.contains("@{")
        || name == "@"
        || name
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || "~^:?*[\\".contains(c));
    if bad {
        Err("must be a git branch name (no spaces, `..`, `~^:?*[\\`, leading `-` or trailing `/`), at most 255 bytes")
    } else {
        Ok(())
    }
}

/// A directory inside the repository: relative, `/`-separated, without `.`/`..` parts; the
/// empty string (or `.`) is the root. Returned without leading or trailing slashes.
pub fn check_path(path: &str) -> Result<String, &'static str> {
    let trimmed = path.trim().trim_matches('/');
    if trimmed.is_empty() || trimmed == "." {
        return Ok(String::new());
    }
    let ok = trimmed.len() <= 1024
        && !trimmed.contains('\\')
        && trimmed.split('/').all(|part| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && !part.chars().any(|c| c.is_control())
                && !part.starts_with('-')
        });
    if ok {
        Ok(trimmed.to_owned())
    } else {
        Err("must be a directory of the repository, relative and /-separated, without `.` or `..` parts")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forge_addresses_are_taken_with_their_transport() {
        for (text, transport, host) in [
            ("https://github.com/acme/shop.git", Transport::Http, "github.com"),
            ("http://127.0.0.1:9418/shop.git", Transport::Http, "127.0.0.1"),
            ("ssh://git@gitlab.example:2222/a/b.git", Transport::Ssh, "gitlab.example"),
            ("git@github.com:acme/shop.git", Transport::Ssh, "github.com"),
            ("  gitea.local:team/app  ", Transport::Ssh, "gitea.local"),
        ] {
            let url = RemoteUrl::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(url.transport(), transport, "{text}");
            assert_eq!(url.host(), host, "{text}");
            assert_eq!(url.as_str(), text.trim());
        }
    }

    #[test]
    fn local_and_helper_transports_and_inline_secrets_are_refused() {
        for (text, want) in [
            ("", RemoteError::Shape),
            ("https://github.com/a b", RemoteError::Shape),
            ("/srv/git/shop.git", RemoteError::Scheme),
            ("./shop", RemoteError::Scheme),
            ("file:///etc", RemoteError::Scheme),
            ("ext::sh -c touch% /tmp/pwned", RemoteError::Shape),
            ("ext::ssh", RemoteError::Scheme),
            ("git://github.com/a/b", RemoteError::Scheme),
            ("-uploadpack=evil:x", RemoteError::Scheme),
            ("https://user:ghp_secret@github.com/a/b", RemoteError::Secret),
            ("https://ghp_secret@github.com/a/b", RemoteError::Secret),
            ("ssh://git:pw@host/a", RemoteError::Secret),
            ("@:path", RemoteError::NoHost),
        ] {
            assert_eq!(RemoteUrl::parse(text), Err(want.clone()), "{text}");
        }
    }

    #[test]
    fn branch_names_follow_git() {
        for ok in ["main", "release/1.2", "feature/x-y_z", "v1"] {
            assert!(check_branch(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-x", "a..b", "a b", "x.lock", "a/", "/a", "a~1", "a:b", "@", "a@{1}"] {
            assert!(check_branch(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn paths_are_relative_directories() {
        assert_eq!(check_path("").unwrap(), "");
        assert_eq!(check_path("/").unwrap(), "");
        assert_eq!(check_path(".").unwrap(), "");
        assert_eq!(check_path("/services/api/").unwrap(), "services/api");
        for bad in ["..", "a/../b", "a//b", "./a", "a\\b", "-x"] {
            assert!(check_path(bad).is_err(), "{bad}");
        }
    }
}
