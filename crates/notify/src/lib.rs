//! Slipway's notification channels: what a channel is and which settings it takes
//! ([`channel`]), what a message says ([`message`]), and how each kind sends one
//! ([`webhook`], [`email`], through [`send`]).
//!
//! Why a crate of its own: sending a message is a concern that stands alone (HTTP receivers,
//! SMTP with STARTTLS, signatures) with dependencies (lettre) the rest of the platform does
//! not need, and it knows nothing of the platform: the platform decides who hears what, keeps
//! the deliveries and retries them; this crate says and sends one message once.
//!
//! No message holds a secret or an app's data: [`slipway_api::notifications::Notification`]
//! carries only what happened, to which app, and the platform's one-line reason.

pub mod channel;
pub mod email;
mod error;
#[cfg(test)]
mod layers;
pub mod message;
mod send;
pub mod webhook;

pub use channel::{ChannelConfig, Draft, EmailConfig, Invalid};
pub use error::DeliveryError;
pub use send::Sender;
