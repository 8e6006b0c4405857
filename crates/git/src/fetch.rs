//! One commit of a repository, fetched into a bare cache kept per source (so the next push
//! fetches only what changed), and one of its directories packed as a build context: a
//! tar.zst exactly like the one `slipway build` uploads, so the platform builds it the same
//! way.

use std::path::{Path, PathBuf};

use crate::command::{Credential, Git, GitError, GitErrorKind};
use crate::remote::RemoteUrl;

/// A commit as deployments show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The full SHA-1 (or SHA-256) in hex.
    pub sha: String,
    /// The author's name.
    pub author: String,
    /// The first line of the message.
    pub subject: String,
    /// The commit time, epoch seconds.
    pub committed_at: i64,
}

/// Fetches for one source: its cache directory, its address and its credential.
pub struct Fetcher<'a> {
    cache: PathBuf,
    remote: &'a RemoteUrl,
    credential: &'a Credential,
}

/// The ref a fetched commit is kept under in the cache (one, replaced by every fetch).
const KEPT: &str = "refs/slipway/fetched";

impl<'a> Fetcher<'a> {
    /// Fetches of `remote` with `credential`, cached under `cache` (made on first use; it
    /// holds the bare repository, the SSH known hosts and a scratch directory).
    pub fn new(cache: &Path, remote: &'a RemoteUrl, credential: &'a Credential) -> Self {
        Self {
            cache: cache.to_path_buf(),
            remote,
            credential,
        }
    }

    fn repo(&self) -> PathBuf {
        self.cache.join("repo.git")
    }

    fn known_hosts(&self) -> PathBuf {
        self.cache.join("known_hosts")
    }

    /// Runs git with this source's settings, in a scratch directory of its own (removed
    /// after: it may hold the key file).
    async fn git(&self, dir: Option<&Path>, args: &[&str]) -> Result<Vec<u8>, GitError> {
        std::fs::create_dir_all(&self.cache).map_err(|e| io("make the cache", &e))?;
        let scratch =
            tempfile::tempdir_in(&self.cache).map_err(|e| io("make a scratch directory", &e))?;
        let known = self.known_hosts();
        let git = Git::new(
            Path::new("git"),
            scratch.path(),
            self.credential,
            Some(&known),
        );
        Ok(git.run(dir, args).await?.stdout)
    }

    /// The commit `branch` points at on the remote now (`git ls-remote`): what polling
    /// compares, without fetching anything.
    pub async fn head(&self, branch: &str) -> Result<String, GitError> {
        let wanted = format!("refs/heads/{branch}");
        let out = self
            .git(None, &["ls-remote", "--", self.remote.as_str(), &wanted])
            .await?;
        String::from_utf8_lossy(&out)
            .lines()
            .find_map(|line| {
                let (sha, name) = line.split_once('\t')?;
                (name == wanted).then(|| sha.to_owned())
            })
            .ok_or_else(|| no_branch(branch))
    }

    /// Fetches the tip of `refname` (`refs/heads/main`, `refs/pull/7/head`) with depth 1
    /// and returns its commit.
    pub async fn fetch(&self, refname: &str) -> Result<Commit, GitError> {
        let repo = self.repo();
        if !repo.join("HEAD").exists() {
            let path = repo.to_string_lossy().into_owned();
            self.git(None, &["init", "--quiet", "--bare", &path])
                .await?;
        }
        let refspec = format!("+{refname}:{KEPT}");
        self.git(
            Some(&repo),
            &[
                "fetch",
                "--quiet",
                "--depth",
                "1",
                "--no-tags",
                "--no-write-fetch-head",
                "--",
                self.remote.as_str(),
                &refspec,
            ],
        )
        .await
        .map_err(|e| {
            if e.kind == GitErrorKind::NoBranch {
                no_ref(refname)
            } else {
                e
            }
        })?;
        self.commit(KEPT).await
    }

    /// What deployments show of `rev` (already fetched).
    async fn commit(&self, rev: &str) -> Result<Commit, GitError> {
        let out = self
            .git(
                Some(&self.repo()),
                &["log", "-1", "--format=%H%x00%an%x00%ct%x00%s", rev, "--"],
            )
            .await?;
        let text = String::from_utf8_lossy(&out);
        let mut parts = text.trim_end_matches('\n').splitn(4, '\0');
        let (Some(sha), Some(author), Some(time), Some(subject)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(GitError::new(
                GitErrorKind::Failed,
                format!("git log printed an unexpected line: {text:?}"),
            ));
        };
        Ok(Commit {
            sha: sha.to_owned(),
            author: author.to_owned(),
            subject: subject.to_owned(),
            committed_at: time.parse().unwrap_or(0),
        })
    }

    /// Writes the directory `path` (`""`: the root) of the fetched commit `sha` to `out` as
    /// a tar.zst whose root is that directory. A commit without that directory is
    /// [`GitErrorKind::NoPath`].
    pub async fn archive(&self, sha: &str, path: &str, out: &Path) -> Result<(), GitError> {
        let tree = if path.is_empty() {
            sha.to_owned()
        } else {
            format!("{sha}:{path}")
        };
        let kind = self
            .git(Some(&self.repo()), &["cat-file", "-t", &tree])
            .await
            .map(|k| String::from_utf8_lossy(&k).trim().to_owned());
        if kind.as_deref().ok() != Some(if path.is_empty() { "commit" } else { "tree" }) {
            return Err(GitError::new(
                GitErrorKind::NoPath,
                format!(
                    "commit {} has no directory {path:?}",
                    &sha[..sha.len().min(12)]
                ),
            ));
        }
        let tar = self
            .git(Some(&self.repo()), &["archive", "--format=tar", &tree])
            .await?;
        let out = out.to_path_buf();
        tokio::task::spawn_blocking(move || {
            let file = std::fs::File::create(&out)?;
            let mut encoder = zstd::stream::Encoder::new(file, 3)?;
            std::io::copy(&mut tar.as_slice(), &mut encoder)?;
            encoder.finish()?.sync_all()
        })
        .await
        .map_err(|e| GitError::new(GitErrorKind::Failed, format!("packing the commit: {e}")))?
        .map_err(|e| io("pack the commit", &e))
    }
}

fn no_branch(branch: &str) -> GitError {
    GitError::new(
        GitErrorKind::NoBranch,
        format!("the repository has no branch {branch:?}"),
    )
}

fn no_ref(refname: &str) -> GitError {
    match refname.strip_prefix("refs/heads/") {
        Some(branch) => no_branch(branch),
        None => GitError::new(
            GitErrorKind::NoBranch,
            format!("the repository has no ref {refname:?}"),
        ),
    }
}

fn io(what: &str, e: &std::io::Error) -> GitError {
    GitError::new(GitErrorKind::Failed, format!("cannot {what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// A bare repository with one commit on `main` holding `app/devfile.yaml` and
    /// `README.md`, reached by a local path (allowed here only through the test's own
    /// remote, which the parse rules would refuse: the fetch code does not care).
    fn repository(dir: &Path) -> (PathBuf, String) {
        let work = dir.join("work");
        let bare = dir.join("origin.git");
        let git = |args: &[&str], cwd: &Path| {
            let out = Command::new("git")
                .args(args)
                .current_dir(cwd)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_AUTHOR_NAME", "Ada")
                .env("GIT_AUTHOR_EMAIL", "ada@example.com")
                .env("GIT_COMMITTER_NAME", "Ada")
                .env("GIT_COMMITTER_EMAIL", "ada@example.com")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        std::fs::create_dir_all(work.join("app")).unwrap();
        std::fs::write(work.join("app/devfile.yaml"), "schemaVersion: 2.2.0\n").unwrap();
        std::fs::write(work.join("README.md"), "hi\n").unwrap();
        git(&["init", "-q", "-b", "main"], &work);
        git(&["add", "."], &work);
        git(&["commit", "-q", "-m", "First page\n\nbody"], &work);
        git(&["init", "-q", "--bare", bare.to_str().unwrap()], dir);
        git(&["push", "-q", bare.to_str().unwrap(), "main"], &work);
        let sha = git(&["rev-parse", "HEAD"], &work);
        (bare, sha)
    }

    fn remote(path: &Path) -> RemoteUrl {
        // The parse rules refuse local paths; an http address of the same text shape is
        // made and its text swapped, since only the transport rules differ.
        let mut url = RemoteUrl::parse("https://example.invalid/x").unwrap();
        url.replace_text_for_tests(path.to_str().unwrap());
        url
    }

    #[tokio::test]
    async fn a_branch_is_fetched_and_a_directory_of_it_packed() {
        let dir = tempfile::tempdir().unwrap();
        let (bare, sha) = repository(dir.path());
        let url = remote(&bare);
        let cache = dir.path().join("cache");
        let fetcher = Fetcher::new(&cache, &url, &Credential::None);
        assert_eq!(fetcher.head("main").await.unwrap(), sha);
        let err = fetcher.head("nope").await.unwrap_err();
        assert_eq!(err.kind, GitErrorKind::NoBranch, "{err}");
        let commit = fetcher.fetch("refs/heads/main").await.unwrap();
        assert_eq!(commit.sha, sha);
        assert_eq!(commit.author, "Ada");
        assert_eq!(commit.subject, "First page");
        assert!(commit.committed_at > 1_700_000_000);
        let err = fetcher.fetch("refs/heads/nope").await.unwrap_err();
        assert_eq!(err.kind, GitErrorKind::NoBranch, "{err}");

        let out = dir.path().join("ctx.tar.zst");
        fetcher.archive(&sha, "app", &out).await.unwrap();
        let tar = zstd::decode_all(std::fs::File::open(&out).unwrap()).unwrap();
        let text = String::from_utf8_lossy(&tar);
        assert!(text.contains("devfile.yaml") && !text.contains("README.md"));
        let err = fetcher.archive(&sha, "nope", &out).await.unwrap_err();
        assert_eq!(err.kind, GitErrorKind::NoPath, "{err}");
        assert!(err.message.contains("nope"), "{err}");
        fetcher.archive(&sha, "", &out).await.unwrap();
        let tar = zstd::decode_all(std::fs::File::open(&out).unwrap()).unwrap();
        assert!(String::from_utf8_lossy(&tar).contains("README.md"));
    }

    #[tokio::test]
    async fn a_missing_repository_and_an_unreachable_host_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let url = remote(&dir.path().join("absent.git"));
        let err = Fetcher::new(&cache, &url, &Credential::None)
            .fetch("refs/heads/main")
            .await
            .unwrap_err();
        assert_eq!(err.kind, GitErrorKind::RepoNotFound, "{err}");
        let url = RemoteUrl::parse("http://127.0.0.1:9/shop.git").unwrap();
        let err = Fetcher::new(&cache, &url, &Credential::Token("t0k".into()))
            .head("main")
            .await
            .unwrap_err();
        assert_eq!(err.kind, GitErrorKind::Unreachable, "{err}");
        assert!(!err.message.contains("t0k"));
    }
}
