//! The HTTP-01 answers in flight: the gateway serves
//! `/.well-known/acme-challenge/{token}` from here while a CA validates a name, and the
//! platform's own reachability probe uses the same path (so a name that answers the probe
//! answers the CA).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// The path prefix HTTP-01 is served under (RFC 8555 §8.3).
pub const PATH_PREFIX: &str = "/.well-known/acme-challenge/";

/// Token → key authorization, shared by the issuer and the gateway.
#[derive(Debug, Clone, Default)]
pub struct Challenges {
    answers: Arc<RwLock<HashMap<String, String>>>,
}

impl Challenges {
    /// Serves `answer` for `token` until the returned guard is dropped.
    pub fn serve(&self, token: &str, answer: String) -> Served {
        self.answers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token.to_owned(), answer);
        Served {
            challenges: self.clone(),
            token: token.to_owned(),
        }
    }

    /// The answer for a request path, when it is a challenge path with a token in flight.
    pub fn answer(&self, path: &str) -> Option<String> {
        let token = path.strip_prefix(PATH_PREFIX)?;
        self.answers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(token)
            .cloned()
    }
}

/// Removes its token when dropped, so an answer never outlives its validation.
#[derive(Debug)]
pub struct Served {
    challenges: Challenges,
    token: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.challenges
            .answers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_lives_as_long_as_its_guard() {
        let challenges = Challenges::default();
        let path = format!("{PATH_PREFIX}tok1");
        assert_eq!(challenges.answer(&path), None);
        let guard = challenges.serve("tok1", "tok1.thumb".into());
        assert_eq!(challenges.answer(&path).as_deref(), Some("tok1.thumb"));
        assert_eq!(challenges.answer("/tok1"), None);
        assert_eq!(challenges.answer(&format!("{PATH_PREFIX}tok2")), None);
        drop(guard);
        assert_eq!(challenges.answer(&path), None);
    }
}
