//! A desktop sign-in's care URL and tokens, checked against a real care service (the
//! embedded one, demo data): each wrong value is refused on its own field, and checking
//! writes nothing. Servers that are not care services (a proxy failing, a redirect, another
//! server's 400) are small fixed-answer listeners here: the one double, at that edge.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;

use slipway_care::embedded::{Embedded, tokens};
use slipway_care_client::sign_in::check;
use slipway_platform_client::credentials::RemoteEnvironment;

fn env(
    url: &str,
    namespace: Option<&str>,
    staff: Option<&str>,
    admin: Option<&str>,
) -> RemoteEnvironment {
    RemoteEnvironment {
        name: "staging".into(),
        platform_url: "http://127.0.0.1:1".into(),
        platform_token: "t".into(),
        care_url: Some(url.into()),
        care_namespace: namespace.map(str::to_owned),
        care_token: staff.map(str::to_owned),
        care_admin_token: admin.map(str::to_owned),
    }
    .checked()
    .expect("well-formed")
}

/// The field a refused check names.
fn refused_on(env: &RemoteEnvironment) -> String {
    let e = check(env).expect_err("refused");
    e.field()
        .unwrap_or_else(|| panic!("no field: {e}"))
        .to_owned()
}

/// The service's row counts (every table, the request history included).
fn stats(url: &str) -> serde_json::Value {
    let answer = reqwest::blocking::Client::new()
        .get(format!("{url}/admin/stats"))
        .bearer_auth(tokens::ADMIN)
        .send()
        .expect("stats");
    assert_eq!(answer.status(), 200);
    answer.json().expect("stats JSON")
}

#[test]
fn care_tokens_are_checked_on_their_fields_and_checking_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut care = Embedded::start(dir.path()).expect("embedded care service");
    let url = care.url().to_owned();
    let before = stats(&url);

    // Known tokens, with and without the namespace spelled out; no token at all.
    check(&env(&url, None, Some(tokens::STAFF), Some(tokens::ADMIN))).expect("known tokens");
    check(&env(&url, Some("care"), Some(tokens::RESTRICTED), None))
        .expect("a restricted staff token");
    check(&env(&url, None, None, None)).expect("a care URL alone");

    // Each wrong value on its field.
    assert_eq!(
        refused_on(&env(&url, None, Some("not-a-token"), None)),
        "care_token"
    );
    assert_eq!(
        refused_on(&env(&url, None, Some(tokens::STAFF), Some("not-a-token"))),
        "care_admin_token"
    );
    let not_admin =
        check(&env(&url, None, None, Some(tokens::STAFF))).expect_err("a staff token as admin");
    assert_eq!(not_admin.field(), Some("care_admin_token"));
    assert!(
        not_admin.to_string().contains("not an admin"),
        "{not_admin}"
    );
    assert_eq!(
        refused_on(&env(&url, Some("elsewhere"), Some(tokens::STAFF), None)),
        "care_namespace"
    );

    // Nothing listening: the URL.
    let free = TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://{}", free.local_addr().unwrap());
    drop(free);
    let e = check(&env(&nowhere, None, Some(tokens::STAFF), None)).expect_err("nothing there");
    assert_eq!(e.field(), Some("care_url"));
    assert!(e.to_string().contains("no care service answered"), "{e}");
    assert!(e.to_string().contains("refused"), "the cause: {e}");

    // Servers that are not a care service: the URL, saying what they answered.
    for (answer, says) in [
        ("400 Bad Request\r\nContent-Length: 0", "answered 400"),
        ("401 Unauthorized\r\nContent-Length: 0", "answered 401"),
        ("502 Bad Gateway\r\nContent-Length: 0", "failing (502)"),
        (
            "302 Found\r\nLocation: https://care.example.org/\r\nContent-Length: 0",
            "redirects to https://care.example.org/",
        ),
    ] {
        let other = answering(answer);
        let e = check(&env(&other, None, Some(tokens::STAFF), None)).expect_err(answer);
        assert_eq!(e.field(), Some("care_url"), "{answer}: {e}");
        assert!(e.to_string().contains(says), "{answer}: {e}");
    }

    // No history record, no user, nothing else: the counts are as they were.
    assert_eq!(stats(&url), before);
    care.stop();
}

/// The base URL of a listener that answers every request with `HTTP/1.1 {answer}` and closes.
fn answering(answer: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = Vec::new();
            let mut buf = [0; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let _ = write!(stream, "HTTP/1.1 {answer}\r\nConnection: close\r\n\r\n");
        }
    });
    url
}
