//! The browser of the SSO test: plain HTTP/1.1 over loopback with a cookie jar, redirects
//! followed one hop at a time (each hop kept, so the test can read the codes and the refusal
//! the URLs carry), and the provider's login form filled in from its HTML. Every address it
//! visits must be on 127.0.0.1: the test reaches nothing else.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

/// One HTTP answer.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// `http://host:port/path?query` as (`host:port`, `/path?query`).
fn split(url: &str) -> (&str, &str) {
    let rest = url
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("the browser only speaks http: {url}"));
    match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    }
}

/// One request on a fresh connection (`Connection: close`); the whole answer.
pub fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<(&str, &str)>,
) -> Response {
    let (authority, target) = split(url);
    assert!(
        authority.starts_with("127.0.0.1:"),
        "the test only visits loopback addresses, not {url}"
    );
    let mut stream = TcpStream::connect(authority).unwrap_or_else(|e| panic!("{url}: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("read timeout");
    let mut head =
        format!("{method} {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let (content_type, body) = body.unwrap_or(("", ""));
    if !content_type.is_empty() || method != "GET" {
        if !content_type.is_empty() {
            head.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body.as_bytes()))
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .unwrap_or_else(|e| panic!("{method} {url}: reading the answer: {e}"));
    parse(&raw).unwrap_or_else(|| {
        panic!(
            "{method} {url}: not an HTTP answer: {:?}",
            String::from_utf8_lossy(&raw)
        )
    })
}

fn parse(raw: &[u8]) -> Option<Response> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    let chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    if chunked {
        body = dechunk(&body)?;
    }
    Some(Response {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size = std::str::from_utf8(&rest[..line_end]).ok()?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

/// `application/x-www-form-urlencoded` / query component encoding.
pub fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The decoded value of query parameter `name` of `url`.
pub fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (decode(k) == name).then(|| decode(v))
    })
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[i], escaped) {
            (_, Some(b)) => {
                out.push(b);
                i += 3;
                continue;
            }
            (b'+', None) => out.push(b' '),
            (b, None) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The five entities HTML escaping makes (enough for attribute values and short texts).
pub fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// A cookie the browser keeps.
#[derive(Debug)]
struct Cookie {
    name: String,
    value: String,
    path: String,
}

/// Where a redirect chain ended: the last address and its answer, and every address visited
/// on the way (the first included).
#[derive(Debug)]
pub struct Visit {
    pub url: String,
    pub response: Response,
    pub hops: Vec<String>,
}

/// A browser with its own cookies (one person's browser).
#[derive(Debug, Default)]
pub struct Browser {
    cookies: Vec<Cookie>,
}

impl Browser {
    /// The cookies for `url`'s path. Cookies are kept per host, not per port, as browsers
    /// do; everything here is on 127.0.0.1, so the jar is one host's.
    fn cookie_header(&self, url: &str) -> String {
        let path = split(url).1.split('?').next().unwrap_or("/");
        self.cookies
            .iter()
            .filter(|c| path.starts_with(&c.path))
            .map(|c| format!("{}={}", c.name, c.value))
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn keep_cookies(&mut self, response: &Response) {
        for (_, line) in response
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie"))
        {
            let mut parts = line.split(';').map(str::trim);
            let Some((name, value)) = parts.next().and_then(|p| p.split_once('=')) else {
                continue;
            };
            let mut path = "/".to_owned();
            let mut expired = value.is_empty();
            for attribute in parts {
                let (key, val) = attribute.split_once('=').unwrap_or((attribute, ""));
                match key.to_ascii_lowercase().as_str() {
                    "path" => val.clone_into(&mut path),
                    "max-age" => expired |= val.trim().starts_with('-') || val.trim() == "0",
                    "expires" => expired |= val.contains("1970"),
                    _ => {}
                }
            }
            self.cookies.retain(|c| !(c.name == name && c.path == path));
            if !expired {
                self.cookies.push(Cookie {
                    name: name.to_owned(),
                    value: value.to_owned(),
                    path,
                });
            }
        }
    }

    /// `method url` with this browser's cookies, then every redirect with GET, as browsers
    /// follow 302 and 303.
    pub fn go(&mut self, method: &str, url: &str, form: Option<&str>) -> Visit {
        let (mut method, mut url, mut form) = (method.to_owned(), url.to_owned(), form);
        let mut hops = Vec::new();
        for _ in 0..20 {
            hops.push(url.clone());
            let cookies = self.cookie_header(&url);
            let mut headers = vec![("Accept", "text/html")];
            if !cookies.is_empty() {
                headers.push(("Cookie", &cookies));
            }
            let body = form.map(|f| ("application/x-www-form-urlencoded", f));
            let response = request(&method, &url, &headers, body);
            self.keep_cookies(&response);
            let location = match response.status {
                301 | 302 | 303 | 307 | 308 => response.header("location").map(str::to_owned),
                _ => None,
            };
            let Some(location) = location else {
                return Visit {
                    url,
                    response,
                    hops,
                };
            };
            url = resolve(&url, &location);
            if response.status != 307 && response.status != 308 {
                method = "GET".to_owned();
                form = None;
            }
        }
        panic!("more than 20 redirects: {hops:?}");
    }

    /// Signs in on the provider's development login form that `page` shows (a `<form>` with
    /// hidden fields and `login`/`password` inputs) as `login`; where the redirects end.
    pub fn submit_login(&mut self, page: &Visit, login: &str) -> Visit {
        let html = &page.response.body;
        let form = html
            .find("<form")
            .map(|i| &html[i..])
            .unwrap_or_else(|| panic!("no form on {}: {html}", page.url));
        let form = &form[..form.find("</form>").unwrap_or(form.len())];
        let tag_end = form.find('>').unwrap_or(form.len());
        let action = attribute(&form[..tag_end], "action")
            .unwrap_or_else(|| panic!("the form on {} has no action: {form}", page.url));
        let mut fields: Vec<(String, String)> = form
            .match_indices("<input")
            .map(|(i, _)| &form[i..i + form[i..].find('>').unwrap_or(form.len() - i)])
            .filter(|tag| attribute(tag, "type").as_deref() == Some("hidden"))
            .filter_map(|tag| Some((attribute(tag, "name")?, attribute(tag, "value")?)))
            .collect();
        for input in ["login", "password"] {
            assert!(
                form.contains(&format!("name=\"{input}\"")),
                "the login form has no {input} input: {form}"
            );
        }
        fields.push(("login".into(), login.into()));
        fields.push(("password".into(), "anything".into()));
        let body = fields
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        self.go("POST", &resolve(&page.url, &action), Some(&body))
    }
}

/// The value of `name="…"` in an HTML tag, unescaped.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = tag[start..].find('"')?;
    Some(unescape(&tag[start..start + len]))
}

/// `location` (absolute, or absolute-path) against `base`.
fn resolve(base: &str, location: &str) -> String {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.to_owned();
    }
    let (authority, path) = split(base);
    if location.starts_with('/') {
        return format!("http://{authority}{location}");
    }
    let dir = &path[..=path
        .split('?')
        .next()
        .unwrap_or("/")
        .rfind('/')
        .unwrap_or(0)];
    format!("http://{authority}{dir}{location}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_params_are_decoded() {
        let url =
            "http://127.0.0.1:1/cb?state=s&error_description=no+invite%20for%20bob%40other.org&x";
        assert_eq!(
            query_param(url, "error_description").as_deref(),
            Some("no invite for bob@other.org")
        );
        assert_eq!(query_param(url, "x").as_deref(), Some(""));
        assert_eq!(query_param(url, "code"), None);
    }

    #[test]
    fn chunked_bodies_are_joined() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse(raw).unwrap().body, "abcde");
    }

    #[test]
    fn locations_resolve_against_the_current_address() {
        let base = "http://127.0.0.1:5/a/b?c=d";
        assert_eq!(resolve(base, "/x"), "http://127.0.0.1:5/x");
        assert_eq!(resolve(base, "y?z"), "http://127.0.0.1:5/a/y?z");
        assert_eq!(resolve(base, "http://127.0.0.1:6/"), "http://127.0.0.1:6/");
    }
}
