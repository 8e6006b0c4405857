//! Why a backing service could not be provisioned.

/// A provisioning failure: the deploy that needed the resource fails with it, and the next
/// deploy tries again.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The server's program is not on this machine.
    #[error("{program} is not installed on this machine; install Debian's {package} package")]
    NotInstalled {
        /// The program looked for.
        program: String,
        /// The Debian package that has it.
        package: &'static str,
    },
    /// The server's program is not on this machine, and no Debian package has it.
    #[error("{program} is not installed on this machine; {how}")]
    NotInstalledFrom {
        /// The program looked for.
        program: String,
        /// How to install it.
        how: &'static str,
    },
    /// The server did not come up.
    #[error("the {server} server did not start: {reason}")]
    Start {
        /// Which server.
        server: String,
        /// Why, with the end of its log.
        reason: String,
    },
    /// The server refused an administrative command.
    #[error("{server} refused to {action}: {reason}")]
    Refused {
        /// Which server.
        server: &'static str,
        /// What was asked.
        action: String,
        /// Its answer.
        reason: String,
    },
    /// The resource asks for something this platform cannot provide.
    #[error("{0}")]
    Unsupported(String),
    /// A file operation failed (a full disk, a permission).
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}
