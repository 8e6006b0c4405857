//! Deploy keys: an Ed25519 key pair per app, made by `ssh-keygen` (the same OpenSSH the
//! fetches run), whose public half the person adds to the repository as a read-only deploy
//! key and whose private half the platform seals in its vault.

use std::path::Path;

use crate::command::{GitError, GitErrorKind};

/// A new key pair.
pub struct DeployKey {
    /// The private key, OpenSSH format (sealed by the caller; never shown).
    pub private: String,
    /// The public key line (`ssh-ed25519 AAAA… comment`), to add to the repository.
    pub public: String,
}

impl std::fmt::Debug for DeployKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeployKey")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

impl DeployKey {
    /// Makes a key pair commented `comment` (for example `slipway deploy key for shop`), in
    /// a scratch directory removed at once.
    pub async fn generate(comment: &str) -> Result<Self, GitError> {
        let dir = tempfile::tempdir().map_err(|e| failed(&e))?;
        let path = dir.path().join("key");
        let out = tokio::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f"])
            .arg(&path)
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    GitError::new(
                        GitErrorKind::NotInstalled,
                        "ssh-keygen is not installed on the platform's machine (apt-get install openssh-client)",
                    )
                } else {
                    failed(&e)
                }
            })?;
        if !out.status.success() {
            return Err(GitError::new(
                GitErrorKind::Failed,
                format!(
                    "ssh-keygen failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            ));
        }
        Ok(Self {
            private: read(&path)?,
            public: read(&path.with_extension("pub"))?.trim().to_owned(),
        })
    }
}

fn read(path: &Path) -> Result<String, GitError> {
    std::fs::read_to_string(path).map_err(|e| failed(&e))
}

fn failed(e: &std::io::Error) -> GitError {
    GitError::new(
        GitErrorKind::Failed,
        format!("cannot make a deploy key: {e}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_key_pair_is_an_openssh_ed25519_pair() {
        let key = DeployKey::generate("slipway deploy key for shop")
            .await
            .unwrap();
        assert!(
            key.private
                .starts_with("-----BEGIN OPENSSH PRIVATE KEY-----"),
            "{}",
            &key.private[..40]
        );
        assert!(key.public.starts_with("ssh-ed25519 "), "{}", key.public);
        assert!(key.public.ends_with("slipway deploy key for shop"));
        assert!(!format!("{key:?}").contains("PRIVATE"));
        let other = DeployKey::generate("x").await.unwrap();
        assert_ne!(other.private, key.private);
    }
}
