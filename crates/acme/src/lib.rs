//! Certificates for custom domains: the domain-name rule ([`name`]), what a certificate says
//! and when it renews ([`certificate`]), the HTTP-01 answers the gateway serves
//! ([`challenges`]), certificates chosen by SNI ([`sni`]) and issuing by ACME ([`issuer`]).
//!
//! Its own crate because it stands alone: it knows nothing of apps, accounts or storage (the
//! platform keeps the domains, their state and the sealed keys), and it brings the ACME
//! client. The crypto is ring's, as the servers' rustls is.

pub mod certificate;
pub mod challenges;
pub mod issuer;
mod layers;
pub mod name;
pub mod sni;

pub use certificate::{CertError, CertInfo};
pub use challenges::Challenges;
pub use issuer::{AcmeConfig, AcmeError, Issued, Issuer};
pub use name::{DomainName, NameError};
/// The rustls the certificates are served with (the gateway builds its listener on it).
pub use rustls;
pub use sni::Certificates;
