//! The git CLI as the platform runs it: never prompting (no terminal, no askpass), never
//! reading the machine's or a user's git configuration, only the network transports a forge
//! serves, and a credential passed through the environment (an `http.extraHeader` for a
//! token, an `ssh -i` key file for a deploy key), so it is in no argument list `ps` shows and
//! in no message: what git prints is cleaned of it before anyone reads it. Every run has a
//! deadline.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt as _;

/// How the platform proves itself to the repository's host.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// A public repository.
    None,
    /// HTTPS: a personal, project or app access token (sent as HTTP Basic with the user
    /// `x-access-token`, which GitHub, GitLab and Gitea/Forgejo all accept with a token).
    Token(String),
    /// SSH: a deploy key's private half (OpenSSH format).
    SshKey(String),
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::None => "None",
            Self::Token(_) => "Token(…)",
            Self::SshKey(_) => "SshKey(…)",
        })
    }
}

/// What went wrong, in the words a person acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitErrorKind {
    /// The host answered that there is no such repository (or hides it from this credential).
    RepoNotFound,
    /// The host refused the credential.
    Unauthorized,
    /// The host could not be reached (name, connection, TLS, timeout).
    Unreachable,
    /// The repository has no such branch.
    NoBranch,
    /// The commit has no such directory.
    NoPath,
    /// git is not installed.
    NotInstalled,
    /// Anything else git refused (its message says what).
    Failed,
}

/// A git run that failed: the kind, and what git said (cleaned of the credential).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct GitError {
    /// What kind of failure.
    pub kind: GitErrorKind,
    /// A sentence for people.
    pub message: String,
}

impl GitError {
    pub(crate) fn new(kind: GitErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// The longest any one git run may take (a fetch of a large repository over a slow link).
pub const DEADLINE: Duration = Duration::from_secs(600);

/// One git invocation with the platform's settings.
pub(crate) struct Git<'a> {
    program: &'a Path,
    /// A directory for the run's own files (the key file, known hosts, an empty HOME).
    scratch: &'a Path,
    credential: &'a Credential,
    /// SSH's known-hosts file (trust on first use, then pinned).
    known_hosts: Option<&'a Path>,
}

/// What a finished run printed.
pub(crate) struct Output {
    pub stdout: Vec<u8>,
}

impl<'a> Git<'a> {
    pub(crate) fn new(
        program: &'a Path,
        scratch: &'a Path,
        credential: &'a Credential,
        known_hosts: Option<&'a Path>,
    ) -> Self {
        Self {
            program,
            scratch,
            credential,
            known_hosts,
        }
    }

    /// The environment every run gets: no prompts, no system or global configuration, the
    /// transports allowed, and the credential.
    fn environment(&self) -> Result<Vec<(OsString, OsString)>, GitError> {
        let mut config: Vec<(&str, String)> = vec![
            ("protocol.allow", "never".into()),
            ("protocol.https.allow", "always".into()),
            ("protocol.http.allow", "always".into()),
            ("protocol.ssh.allow", "always".into()),
            // A repository's own hooks and filters never run here (an archive applies
            // export-subst and attributes only).
            ("core.hooksPath", "/dev/null".into()),
            ("advice.detachedHead", "false".into()),
            // A transfer slower than 1 KB/s for a minute is a dead one: give up instead of
            // holding the worker until the deadline.
            ("http.lowSpeedLimit", "1000".into()),
            ("http.lowSpeedTime", "60".into()),
        ];
        if cfg!(test) {
            // This crate's tests fetch from bare repositories on disk.
            config.push(("protocol.file.allow", "always".into()));
        }
        let mut env: Vec<(OsString, OsString)> = vec![
            ("GIT_TERMINAL_PROMPT".into(), "0".into()),
            ("GIT_ASKPASS".into(), "true".into()),
            ("SSH_ASKPASS".into(), "true".into()),
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
            ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
            ("HOME".into(), self.scratch.as_os_str().to_owned()),
            ("LC_ALL".into(), "C".into()),
        ];
        if let Credential::Token(token) = self.credential {
            config.push((
                "http.extraHeader",
                format!("Authorization: Basic {}", basic(token)),
            ));
        }
        let mut ssh = String::from(
            "ssh -o BatchMode=yes -o ConnectTimeout=20 -o ServerAliveInterval=15 \
             -o ServerAliveCountMax=4",
        );
        if let Some(known) = self.known_hosts {
            ssh.push_str(&format!(
                " -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile={}",
                shell_quote(known)
            ));
        }
        if let Credential::SshKey(key) = self.credential {
            let path = self.scratch.join("deploy-key");
            write_private(&path, key)?;
            ssh.push_str(&format!(" -o IdentitiesOnly=yes -i {}", shell_quote(&path)));
        }
        env.push(("GIT_SSH_COMMAND".into(), ssh.into()));
        env.push(("GIT_CONFIG_COUNT".into(), config.len().to_string().into()));
        for (i, (key, value)) in config.into_iter().enumerate() {
            env.push((format!("GIT_CONFIG_KEY_{i}").into(), key.into()));
            env.push((format!("GIT_CONFIG_VALUE_{i}").into(), value.into()));
        }
        Ok(env)
    }

    /// Runs `git args…` (in `dir` when given) to its end or the deadline; a failure is
    /// classified from what git printed.
    pub(crate) async fn run(&self, dir: Option<&Path>, args: &[&str]) -> Result<Output, GitError> {
        let mut command = tokio::process::Command::new(self.program);
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(self.environment()?)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        let mut child = command.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                GitError::new(
                    GitErrorKind::NotInstalled,
                    "git is not installed on the platform's machine (apt-get install git)",
                )
            } else {
                GitError::new(GitErrorKind::Failed, format!("cannot run git: {e}"))
            }
        })?;
        let (mut out, mut err) = (
            child.stdout.take().expect("piped"),
            child.stderr.take().expect("piped"),
        );
        let run = async {
            let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
            let (a, b) = tokio::join!(out.read_to_end(&mut stdout), err.read_to_end(&mut stderr));
            a.and(b)?;
            let status = child.wait().await?;
            Ok::<_, std::io::Error>((status, stdout, stderr))
        };
        let (status, stdout, stderr) = match tokio::time::timeout(DEADLINE, run).await {
            Ok(Ok(done)) => done,
            Ok(Err(e)) => {
                return Err(GitError::new(GitErrorKind::Failed, format!("git: {e}")));
            }
            Err(_) => {
                return Err(GitError::new(
                    GitErrorKind::Unreachable,
                    format!("git {} took longer than {} s", args[0], DEADLINE.as_secs()),
                ));
            }
        };
        if status.success() {
            return Ok(Output { stdout });
        }
        let said = self.clean(&String::from_utf8_lossy(&stderr));
        Err(GitError::new(classify(&said), said))
    }

    /// `text` with the credential (and its Basic encoding) removed, trimmed to its last
    /// lines (git's hints and progress say nothing a person needs).
    fn clean(&self, text: &str) -> String {
        let mut text = text.to_owned();
        match self.credential {
            Credential::Token(token) if !token.is_empty() => {
                text = text.replace(token.as_str(), "[token]");
                text = text.replace(&basic(token), "[token]");
            }
            Credential::SshKey(key) => {
                for line in key.lines().filter(|l| l.len() > 16) {
                    text = text.replace(line, "[key]");
                }
            }
            _ => {}
        }
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("hint:"))
            .collect();
        let start = lines.len().saturating_sub(6);
        lines[start..].join("\n")
    }
}

/// The kind of failure git's message (in the C locale) describes.
fn classify(said: &str) -> GitErrorKind {
    let lower = said.to_ascii_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|n| lower.contains(n));
    if has(&[
        "couldn't find remote ref",
        "remote branch",
        "not found in upstream",
    ]) {
        GitErrorKind::NoBranch
    } else if has(&[
        "authentication failed",
        "could not read username",
        "could not read password",
        "permission denied (publickey",
        "the requested url returned error: 401",
        "the requested url returned error: 403",
        "invalid username or password",
        "access denied",
        "host key verification failed",
    ]) {
        GitErrorKind::Unauthorized
    } else if has(&[
        "repository not found",
        "the requested url returned error: 404",
        "does not appear to be a git repository",
        "not a git repository",
        "project you were looking for could not be found",
    ]) {
        GitErrorKind::RepoNotFound
    } else if has(&[
        "could not resolve host",
        "could not resolve hostname",
        "connection refused",
        "failed to connect",
        "connection timed out",
        "operation timed out",
        "network is unreachable",
        "no route to host",
        "ssl certificate problem",
        "unable to access",
        "connection closed by",
        "could not read from remote repository",
    ]) {
        GitErrorKind::Unreachable
    } else {
        GitErrorKind::Failed
    }
}

/// The Basic credentials a token is sent as.
fn basic(token: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{token}"))
}

/// Writes a private key readable only by the platform's user (ssh refuses any other).
fn write_private(path: &Path, key: &str) -> Result<(), GitError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let write = || {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)?;
        file.write_all(key.trim_end().as_bytes())?;
        file.write_all(b"\n")
    };
    write().map_err(|e| {
        GitError::new(
            GitErrorKind::Failed,
            format!("cannot write the deploy key: {e}"),
        )
    })
}

/// A path as one word of `GIT_SSH_COMMAND` (which git hands to a shell).
fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// The git program: `git` on the PATH.
pub fn program() -> PathBuf {
    PathBuf::from("git")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_told_apart_from_gits_messages() {
        for (said, kind) in [
            (
                "fatal: couldn't find remote ref refs/heads/nope",
                GitErrorKind::NoBranch,
            ),
            (
                "fatal: Authentication failed for 'https://x/'",
                GitErrorKind::Unauthorized,
            ),
            (
                "fatal: could not read Username for 'https://x': terminal prompts disabled",
                GitErrorKind::Unauthorized,
            ),
            (
                "git@x: Permission denied (publickey).",
                GitErrorKind::Unauthorized,
            ),
            ("remote: Repository not found.", GitErrorKind::RepoNotFound),
            (
                "fatal: unable to access 'https://nohost/': Could not resolve host: nohost",
                GitErrorKind::Unreachable,
            ),
            (
                "fatal: unable to access 'http://127.0.0.1:1/': Failed to connect",
                GitErrorKind::Unreachable,
            ),
            ("fatal: bad object", GitErrorKind::Failed),
        ] {
            assert_eq!(classify(said), kind, "{said}");
        }
    }

    #[test]
    fn the_token_never_survives_in_a_message() {
        let dir = tempfile::tempdir().unwrap();
        let cred = Credential::Token("ghp_abc123secret".into());
        let git = Git::new(Path::new("git"), dir.path(), &cred, None);
        let basic = basic("ghp_abc123secret");
        let said = git.clean(&format!(
            "hint: try again\nfatal: ghp_abc123secret refused\n> Authorization: Basic {basic}\n"
        ));
        assert!(
            !said.contains("ghp_abc123secret") && !said.contains(&basic),
            "{said}"
        );
        assert!(!said.contains("hint:"), "{said}");
        assert!(format!("{cred:?}").find("ghp").is_none());
    }
}
