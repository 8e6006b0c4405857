//! Why a message was not delivered: the words "send a test" and the delivery log show.

/// Why a message was not delivered. The text never holds a channel's secret (a webhook's
/// URL may carry one, so it is never quoted; its host is).
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    /// The receiver could not be reached.
    #[error("cannot connect to {host}: {reason}")]
    Connect {
        /// The host tried.
        host: String,
        /// What the network said.
        reason: String,
    },
    /// The receiver did not answer in time.
    #[error("{host} did not answer within {seconds} s")]
    Timeout {
        /// The host tried.
        host: String,
        /// The limit.
        seconds: u64,
    },
    /// The receiver answered with a status other than 2xx.
    #[error("{host} answered HTTP {status}")]
    Status {
        /// The host.
        host: String,
        /// Its status code.
        status: u16,
    },
    /// The mail server refused the message or the session (STARTTLS, sign-in, an address).
    #[error("the mail server {host} refused it: {reason}")]
    Smtp {
        /// The mail server.
        host: String,
        /// What it said.
        reason: String,
    },
    /// The channel's settings cannot make a message (a bad address, a bad certificate).
    #[error("the channel's settings are unusable: {0}")]
    Settings(String),
}
