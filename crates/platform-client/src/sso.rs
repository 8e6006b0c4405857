//! Single sign-on from a program on the user's machine (docs/people.md, "The client side"):
//! the platform is the OpenID Connect relying party; this side listens on a loopback port,
//! sends the browser to the platform with a random `state` and a PKCE challenge, and when the
//! browser comes back with a one-time code, trades it (with the verifier only this process
//! knows) for a platform token. A code seen by another program on the machine is useless
//! without the verifier; an answer with another `state` is not ours and is ignored.
//!
//! `slipway login --sso` and the desktop's sign-in both use [`begin`] then [`SsoSignIn::wait`].

use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::{Method, Url};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest as _, Sha256};
use slipway_server::token::Token;

use crate::client::Client;
use crate::error::ToolError;
use crate::join::{TokenAnswer, anonymous};

/// Whether a platform offers single sign-on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SsoStatus {
    /// Whether it does.
    pub enabled: bool,
    /// The identity provider it sends people to; null without single sign-on.
    pub issuer: Option<String>,
}

/// Whether the platform at `url` offers single sign-on.
pub fn sso_status(url: &str) -> Result<SsoStatus, ToolError> {
    anonymous(url)?.typed(Method::GET, "/v1/auth/sso", None)
}

/// A signed-in person and their new token (30 days, named `SSO sign-in`).
#[derive(Debug, Clone)]
pub struct SsoToken {
    /// The token (`Debug` hides it).
    pub token: Token,
    /// The person's id.
    pub user_id: String,
    /// Their e-mail.
    pub email: String,
    /// Their display name.
    pub name: String,
    /// When the token expires (RFC 3339).
    pub expires_at: String,
}

/// One sign-in attempt: the loopback listener, the `state` and the PKCE verifier.
pub struct SsoSignIn {
    server: tiny_http::Server,
    client: Client,
    state: String,
    /// Sent to the platform only with the code; never shown (left out of `Debug`).
    verifier: Token,
    sign_in_url: String,
}

impl std::fmt::Debug for SsoSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SsoSignIn")
            .field("platform", &self.client.base_url())
            .field("listening", &self.server.server_addr().to_ip())
            .finish_non_exhaustive()
    }
}

/// Starts a sign-in on the platform at `url`: binds `127.0.0.1:<any port>` and makes the
/// `state` and verifier. Open [`SsoSignIn::sign_in_url`] in a browser, then
/// [`SsoSignIn::wait`].
pub fn begin(url: &str) -> Result<SsoSignIn, ToolError> {
    let client = anonymous(url)?;
    let server = tiny_http::Server::http("127.0.0.1:0").map_err(|e| {
        ToolError::Unavailable(format!("cannot listen on 127.0.0.1 for the sign-in: {e}"))
    })?;
    let port = server
        .server_addr()
        .to_ip()
        .map(|a| a.port())
        .ok_or_else(|| ToolError::Internal("the loopback listener has no port".into()))?;
    let random = || {
        Token::generate("")
            .map_err(|e| ToolError::Internal(format!("no randomness for the sign-in: {e}")))
    };
    let state = random()?.expose().to_owned();
    let verifier = random()?;
    let mut start = Url::parse(&format!("{}/auth/oidc/start", client.base_url()))
        .map_err(|e| ToolError::invalid("url", e))?;
    start
        .query_pairs_mut()
        .append_pair("return_to", &format!("http://127.0.0.1:{port}/callback"))
        .append_pair("state", &state)
        .append_pair("challenge", &challenge(verifier.expose()));
    Ok(SsoSignIn {
        server,
        client,
        state,
        verifier,
        sign_in_url: start.into(),
    })
}

/// `timeout` as a sentence says it: "5 minutes", "90 seconds", "0.2 seconds".
fn spoken(timeout: Duration) -> String {
    let secs = timeout.as_secs();
    match (secs, timeout.subsec_nanos()) {
        (60, 0) => "1 minute".to_owned(),
        (s, 0) if s % 60 == 0 => format!("{} minutes", s / 60),
        (s, 0) => format!("{s} seconds"),
        _ => format!("{} seconds", timeout.as_secs_f32()),
    }
}

/// PKCE S256: BASE64URL-NOPAD(SHA-256(verifier)).
fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// What one request to the loopback listener is.
#[derive(Debug, PartialEq, Eq)]
enum Arrival {
    /// Not the callback (a favicon, a stray request): 404, keep waiting.
    Elsewhere,
    /// The callback of another attempt (or a forgery): keep waiting.
    OtherState,
    /// The platform refused the person: its reason.
    Refused(String),
    /// Signed in: the one-time code to exchange.
    Code(String),
    /// Our callback, but with neither a code nor an error.
    Malformed,
}

/// Sorts a request by its method and target (`/callback?code=…&state=…`).
fn arrival(method: &tiny_http::Method, target: &str, state: &str) -> Arrival {
    let Ok(url) = Url::parse("http://127.0.0.1/").and_then(|base| base.join(target)) else {
        return Arrival::Elsewhere;
    };
    if *method != tiny_http::Method::Get || url.path() != "/callback" {
        return Arrival::Elsewhere;
    }
    let param = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    if param("state").as_deref() != Some(state) {
        return Arrival::OtherState;
    }
    if let Some(error) = param("error") {
        return Arrival::Refused(param("error_description").unwrap_or(error));
    }
    match param("code").filter(|c| !c.is_empty()) {
        Some(code) => Arrival::Code(code),
        None => Arrival::Malformed,
    }
}

impl SsoSignIn {
    /// The address to open in a browser.
    pub fn sign_in_url(&self) -> &str {
        &self.sign_in_url
    }

    /// Waits up to `timeout` for the browser to come back, trades the code for a token and
    /// tells the browser how it went. Requests that are not this attempt's callback are
    /// answered and ignored. A refusal is an error carrying the platform's reason.
    pub fn wait(self, timeout: Duration) -> Result<SsoToken, ToolError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ToolError::Unavailable(format!(
                    "the sign-in timed out: no browser came back within {}",
                    spoken(timeout)
                )));
            }
            let Some(request) = self
                .server
                .recv_timeout(left)
                .map_err(|e| ToolError::Unavailable(format!("the sign-in listener failed: {e}")))?
            else {
                continue;
            };
            match arrival(request.method(), request.url(), &self.state) {
                Arrival::Elsewhere => respond(request, 404, "Not found", "Nothing is here."),
                Arrival::OtherState => respond(
                    request,
                    400,
                    "Not this sign-in",
                    "This answer belongs to another sign-in attempt; it was ignored.",
                ),
                Arrival::Malformed => {
                    respond(request, 400, "Sign-in failed", "The answer had no code.");
                    return Err(ToolError::Internal(
                        "the platform sent the browser back with neither a code nor an error"
                            .into(),
                    ));
                }
                Arrival::Refused(reason) => {
                    respond(request, 403, "Sign-in refused", &reason);
                    return Err(ToolError::PermissionDenied(format!(
                        "the sign-in was refused: {reason}"
                    )));
                }
                Arrival::Code(code) => {
                    return match self.exchange(&code) {
                        Ok(signed_in) => {
                            let text = format!(
                                "Signed in as {} <{}>; you can close this tab.",
                                signed_in.name, signed_in.email
                            );
                            respond(request, 200, "Signed in", &text);
                            Ok(signed_in)
                        }
                        Err(e) => {
                            respond(request, 502, "Sign-in failed", &e.to_string());
                            Err(e)
                        }
                    };
                }
            }
        }
    }

    /// `POST /auth/oidc/exchange {code, verifier}`.
    fn exchange(&self, code: &str) -> Result<SsoToken, ToolError> {
        let body = json!({ "code": code, "verifier": self.verifier.expose() });
        let answer: TokenAnswer =
            self.client
                .typed(Method::POST, "/auth/oidc/exchange", Some(&body))?;
        Ok(SsoToken {
            token: answer.token()?,
            user_id: answer.user_id,
            email: answer.email,
            name: answer.name,
            expires_at: answer.expires_at.unwrap_or_default(),
        })
    }
}

/// Answers the browser with a small page; a browser that went away is no error of ours.
fn respond(request: tiny_http::Request, status: u16, title: &str, text: &str) {
    let content_type =
        tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"text/html; charset=utf-8"[..]);
    let mut response = tiny_http::Response::from_string(page(title, text)).with_status_code(status);
    if let Ok(header) = content_type {
        response = response.with_header(header);
    }
    let _ = request.respond(response);
}

/// The page the browser shows: `title` and `text`, escaped (the refusal reason comes from
/// the provider through the URL, so it is anyone's text).
fn page(title: &str, text: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Slipway: {t}</title></head>\
         <body style=\"font-family: sans-serif; margin: 3em\"><h1>{t}</h1><p>{x}</p></body></html>\n",
        t = escape(title),
        x = escape(text)
    )
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_rfc_7636s_s256() {
        // RFC 7636, appendix B.
        assert_eq!(
            challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn only_this_attempts_callback_counts() {
        let get = tiny_http::Method::Get;
        assert_eq!(arrival(&get, "/favicon.ico", "s"), Arrival::Elsewhere);
        assert_eq!(
            arrival(&tiny_http::Method::Post, "/callback?code=c&state=s", "s"),
            Arrival::Elsewhere
        );
        assert_eq!(
            arrival(&get, "/callback?code=c&state=t", "s"),
            Arrival::OtherState
        );
        assert_eq!(arrival(&get, "/callback?code=c", "s"), Arrival::OtherState);
        assert_eq!(
            arrival(&get, "/callback?code=c%2B1&state=s", "s"),
            Arrival::Code("c+1".into())
        );
        assert_eq!(
            arrival(
                &get,
                "/callback?error=access_denied&error_description=not+invited&state=s",
                "s"
            ),
            Arrival::Refused("not invited".into())
        );
        assert_eq!(
            arrival(&get, "/callback?error=access_denied&state=s", "s"),
            Arrival::Refused("access_denied".into())
        );
        assert_eq!(arrival(&get, "/callback?state=s", "s"), Arrival::Malformed);
    }

    #[test]
    fn the_sign_in_url_carries_a_loopback_return_state_and_challenge() {
        let sign_in = begin("http://platform.example:8700/").unwrap();
        let url = Url::parse(sign_in.sign_in_url()).unwrap();
        assert_eq!(url.path(), "/auth/oidc/start");
        let q: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
        let port = sign_in.server.server_addr().to_ip().unwrap().port();
        assert_eq!(q["return_to"], format!("http://127.0.0.1:{port}/callback"));
        assert_eq!(q["state"], sign_in.state);
        assert!(sign_in.verifier.expose().len() >= 43);
        assert_eq!(q["challenge"], challenge(sign_in.verifier.expose()));
        assert!(!format!("{sign_in:?}").contains(sign_in.verifier.expose()));
        assert_eq!(begin("platform.example").unwrap_err().field(), Some("url"));
    }

    /// Plays the browser: a favicon and another attempt's answer are ignored; the refusal
    /// ends the wait with the provider's reason, which the page shows escaped.
    #[test]
    fn a_refusal_reaches_the_caller_and_the_page_escaped() {
        let sign_in = begin("http://127.0.0.1:9").unwrap();
        let start = Url::parse(sign_in.sign_in_url()).unwrap();
        let return_to = start
            .query_pairs()
            .find(|(k, _)| k == "return_to")
            .unwrap()
            .1
            .into_owned();
        let state = sign_in.state.clone();
        let waiting = std::thread::spawn(move || sign_in.wait(Duration::from_secs(30)));
        let http = reqwest::blocking::Client::new();
        let base = return_to.trim_end_matches("/callback").to_owned();
        let favicon = http.get(format!("{base}/favicon.ico")).send().unwrap();
        assert_eq!(favicon.status(), 404);
        let other = http
            .get(format!("{return_to}?code=c&state=other"))
            .send()
            .unwrap();
        assert_eq!(other.status(), 400);
        let mut refused = Url::parse(&return_to).unwrap();
        refused
            .query_pairs_mut()
            .append_pair("error", "access_denied")
            .append_pair("error_description", "<b>not invited</b> & not in a domain")
            .append_pair("state", &state);
        let page = http.get(refused).send().unwrap();
        assert_eq!(page.status(), 403);
        let html = page.text().unwrap();
        assert!(
            html.contains("&lt;b&gt;not invited&lt;/b&gt; &amp; not in a domain"),
            "{html}"
        );
        let e = waiting.join().unwrap().unwrap_err();
        assert!(matches!(e, ToolError::PermissionDenied(_)), "{e:?}");
        assert!(e.to_string().contains("<b>not invited</b>"), "{e}");
    }

    #[test]
    fn nobody_coming_back_times_out() {
        let sign_in = begin("http://127.0.0.1:9").unwrap();
        let e = sign_in.wait(Duration::from_millis(200)).unwrap_err();
        assert!(e.to_string().contains("timed out"), "{e}");
    }
}
