//! Git sources for Slipway's apps: the rules a repository address follows ([`remote`]), the
//! git CLI run without prompts, foreign configuration or secrets in its arguments
//! ([`command`]), deploy keys ([`keys`]), one commit fetched and one of its directories
//! packed as a build context ([`fetch`]), and the webhooks of GitHub, GitLab and
//! Gitea/Forgejo, verified the way each sender signs them ([`hooks`]).
//!
//! Its own crate because it stands alone: it knows nothing of apps, builds or storage (the
//! platform keeps the sources, queues the deploys and seals the credentials). It drives
//! Debian's `git` and `ssh` rather than a git library: the CLI is what every forge tests
//! against (smart HTTP, SSH, shallow fetches), and its messages are what users search for.

pub mod command;
pub mod fetch;
pub mod hooks;
pub mod keys;
mod layers;
pub mod remote;

pub use command::{Credential, GitError, GitErrorKind};
pub use fetch::{Commit, Fetcher};
pub use hooks::{Delivery, Event, HookError, PullAction, Sender};
pub use keys::DeployKey;
pub use remote::{RemoteError, RemoteUrl, Transport};
