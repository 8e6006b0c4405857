//! The certificates the gateway's HTTPS listener serves, chosen by the name the client asks
//! for (SNI): the issued certificate of a custom domain, else the operator's certificate
//! (`--tls-cert`, for the platform's own names and `--public-domain`'s wildcard), else none
//! (the handshake fails rather than showing a certificate for another name).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// Where the certificates not issued here come from: called for each handshake whose name
/// has no issued certificate (the operator's certificate can be reloaded while serving).
pub type Fallback = Arc<dyn Fn() -> Option<Arc<dyn ResolvesServerCert>> + Send + Sync>;

/// Name → certificate, replaceable while serving; a handshake takes the one current then.
#[derive(Clone)]
pub struct Certificates {
    by_name: Arc<RwLock<HashMap<String, Arc<CertifiedKey>>>>,
    fallback: Option<Fallback>,
    provider: Arc<CryptoProvider>,
}

impl std::fmt::Debug for Certificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self
            .by_name
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect();
        f.debug_struct("Certificates")
            .field("names", &names)
            .finish()
    }
}

/// Why a certificate and key cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the certificate and key cannot be served: {0}")]
pub struct KeyError(pub String);

impl Certificates {
    /// No certificates yet; names without one go to `fallback`.
    pub fn new(fallback: Option<Fallback>) -> Self {
        Self {
            by_name: Arc::default(),
            fallback,
            provider: Arc::new(rustls::crypto::ring::default_provider()),
        }
    }

    /// Serves `chain_pem` with `key_pem` for `name` from the next handshake on.
    pub fn install(&self, name: &str, chain_pem: &str, key_pem: &str) -> Result<(), KeyError> {
        let chain = CertificateDer::pem_slice_iter(chain_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| KeyError(e.to_string()))?;
        if chain.is_empty() {
            return Err(KeyError("no certificate in the chain".into()));
        }
        let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
            .map_err(|e| KeyError(e.to_string()))?;
        let certified = CertifiedKey::from_der(chain, key, &self.provider)
            .map_err(|e| KeyError(e.to_string()))?;
        self.by_name
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_ascii_lowercase(), Arc::new(certified));
        Ok(())
    }

    /// Stops serving `name`'s certificate.
    pub fn remove(&self, name: &str) {
        self.by_name
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&name.to_ascii_lowercase());
    }

    /// Whether an issued certificate is served for `name`.
    pub fn has(&self, name: &str) -> bool {
        self.by_name
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(&name.to_ascii_lowercase())
    }

    /// A server configuration that resolves through this set, speaking HTTP/2 and HTTP/1.1.
    pub fn server_config(&self) -> Result<rustls::ServerConfig, KeyError> {
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::clone(&self.provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| KeyError(e.to_string()))?
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(self.clone()));
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(config)
    }
}

impl ResolvesServerCert for Certificates {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        if let Some(name) = hello.server_name() {
            let issued = self
                .by_name
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .get(&name.to_ascii_lowercase())
                .cloned();
            if issued.is_some() {
                return issued;
            }
        }
        let fallback = self.fallback.as_ref()?;
        fallback()?.resolve(hello)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_installs_and_a_mismatch_does_not() {
        let certs = Certificates::new(None);
        let key = rcgen::KeyPair::generate().unwrap();
        let other = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["a.example.org".to_owned()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        assert!(
            certs
                .install("a.example.org", &cert.pem(), &other.serialize_pem())
                .is_err()
        );
        assert!(!certs.has("a.example.org"));
        certs
            .install("A.example.org", &cert.pem(), &key.serialize_pem())
            .unwrap();
        assert!(certs.has("a.example.org"));
        assert!(
            certs
                .install("b.example.org", "", &key.serialize_pem())
                .is_err()
        );
        certs.remove("a.example.org");
        assert!(!certs.has("a.example.org"));
        let config = certs.server_config().unwrap();
        assert_eq!(config.alpn_protocols[0], b"h2");
    }
}
