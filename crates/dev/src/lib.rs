//! The development loop (`slipway dev`, the desktop's Watch switch): build and deploy a
//! project, then watch it and bring the running app up to date on every save.
//!
//! One round: the devfile is validated first (an invalid one is reported and nothing is
//! built until it changes again); the services whose inputs changed are found by
//! [`fingerprint`]; a service whose dependency manifests, Dockerfile and devfile are
//! unchanged and whose files were only edited or added is **synced** (the new sources as a
//! layer over its last image, no build command), any other change is a **full build**; then
//! the loop waits for the platform's health-gated deployment: the new instance takes traffic
//! only once healthy, and a failed one leaves the old one serving, which the loop reports with
//! the platform's diagnosis.
//!
//! Every rebuild goes through the platform's ordinary builds and deployments, so a dev round
//! is in the history and can be rolled back to like any other.

pub mod devfile_watch;
pub mod fingerprint;
#[cfg(test)]
mod layers;
mod round;
pub mod session;
pub mod watch;

pub use round::*;
